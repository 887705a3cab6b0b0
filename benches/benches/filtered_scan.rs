//! A scan that keeps 1% of 100,000 rows: the filter applied by the region
//! server (a `SingleColumnValueFilter` sent with the scan) against the same
//! scan read whole and filtered by the client, side by side in one run on
//! NativeStore, with rows of about 130 bytes and of about 1 KiB.
//!
//! Needs an HBase master's address: `scripts/hbase/hbase start`,
//! `eval $(scripts/hbase/hbase address)`, then
//! `HMAP_NATIVE=... cargo bench -p hmap-bench --bench filtered_scan`.
//! Without it, it says so and measures nothing.

use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::StreamExt;
use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::filter::{Comparator, CompareOp, Filter};
use hmap::store::native::{NativeConfig, NativeStore};
use hmap::store::{RowMutation, Scan, Store};

const ROWS: usize = 100_000;
/// One row in this many is kept.
const KEEP_ONE_IN: usize = 100;
/// The payload sizes, each in a table of its own.
const PAYLOADS: [usize; 2] = [100, 1_000];

fn table(payload: usize) -> String {
    format!("events_{payload}")
}

/// Each row: a kind (`rare` for 1%, `common` otherwise) and a payload.
async fn load(store: &NativeStore, payload: usize) {
    let table = table(payload);
    let _ = store.delete_table(&table).await;
    store
        .create_table(&TableSchema::new(table.as_str()).family(FamilySchema::new("e")))
        .await
        .expect("create the table");
    let payload = Bytes::from(vec![b'x'; payload]);
    for chunk in (0..ROWS).collect::<Vec<_>>().chunks(1_000) {
        let rows: Vec<RowMutation> = chunk
            .iter()
            .map(|&i| {
                let kind = if i % KEEP_ONE_IN == 0 { "rare" } else { "common" };
                RowMutation::new(format!("ev{i:08}"))
                    .put("e", "kind", kind)
                    .put("e", "payload", payload.clone())
            })
            .collect();
        store.mutate(&table, &rows).await.expect("load a batch");
    }
}

fn rare() -> Filter {
    Filter::single_column_value("e", "kind", CompareOp::Equal, Comparator::binary("rare"))
        .filter_if_missing(true)
        .into()
}

async fn count(store: &NativeStore, table: &str, scan: Scan, on_client: bool) -> usize {
    let mut rows = store.scan(table, &scan).await.expect("open the scan");
    let mut kept = 0;
    while let Some(row) = rows.next().await {
        let row = row.expect("a row");
        if !on_client || row.value("e", "kind").as_deref() == Some(&b"rare"[..]) {
            kept += 1;
        }
    }
    kept
}

fn filtered_scan(c: &mut Criterion) {
    let Ok(address) = std::env::var("HMAP_NATIVE") else {
        eprintln!(
            "filtered_scan: HMAP_NATIVE must be set (scripts/hbase/hbase start; eval $(scripts/hbase/hbase address))"
        );
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let prefix = format!(
        "{}hmap_bench_filtered_scan_",
        std::env::var("HMAP_TEST_PREFIX").unwrap_or_default()
    );
    let store = runtime
        .block_on(NativeStore::connect(NativeConfig::new([address]).table_prefix(prefix)))
        .expect("NativeStore connects");
    let expected = ROWS / KEEP_ONE_IN;
    for payload in PAYLOADS {
        runtime.block_on(load(&store, payload));
        let table = table(payload);
        let mut group = c.benchmark_group(format!("scan keeping 1% of 100,000 rows, {payload}-byte payloads"));
        group.sample_size(10);
        group.bench_function("filter on the server", |b| {
            b.iter(|| {
                let kept = runtime.block_on(count(&store, &table, Scan::all().filter(rare()), false));
                assert_eq!(kept, expected);
            })
        });
        group.bench_function("filter on the client", |b| {
            b.iter(|| {
                let kept = runtime.block_on(count(&store, &table, Scan::all(), true));
                assert_eq!(kept, expected);
            })
        });
        group.finish();
        let _ = runtime.block_on(store.delete_table(&table));
    }
}

criterion_group!(benches, filtered_scan);
criterion_main!(benches);
