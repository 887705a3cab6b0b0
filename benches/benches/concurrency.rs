//! 10,000 point gets on one ThriftStore against a real HBase: with 64 in
//! flight on the async API, against 8 threads on the blocking facade (each
//! thread a call at a time), both on the same gateway in one run.
//!
//! Needs a gateway: `scripts/hbase/hbase start`, then
//! `HMAP_THRIFT=127.0.0.1:9091 cargo bench -p hmap-bench --bench concurrency`.
//! Without `HMAP_THRIFT` it says so and measures nothing.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures_util::StreamExt;
use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::{Get, RowMutation, Store, ThriftConfig, ThriftStore};

const ROWS: usize = 1_000;
const GETS: usize = 10_000;

fn key(i: usize) -> String {
    format!("row{:06}", i % ROWS)
}

fn concurrency(c: &mut Criterion) {
    let Ok(address) = std::env::var("HMAP_THRIFT") else {
        eprintln!("concurrency: HMAP_THRIFT is not set; start HBase with scripts/hbase/hbase start");
        return;
    };
    let mut config = ThriftConfig::new(address);
    config.table_prefix = "hmap_bench_concurrency__".into();
    config.pool_size = 64;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let store = Arc::new(ThriftStore::with_config(config.clone()));
    runtime.block_on(async {
        if store.table_exists("t").await.unwrap() {
            store.delete_table("t").await.unwrap();
        }
        store
            .create_table(&TableSchema::new("t").family(FamilySchema::new("f")))
            .await
            .unwrap();
        let rows: Vec<RowMutation> = (0..ROWS)
            .map(|i| RowMutation::new(key(i)).put_at("f", "q", 1, format!("{i:032}")))
            .collect();
        store.mutate("t", &rows).await.unwrap();
    });

    let mut group = c.benchmark_group("thrift_10000_point_gets");
    group.sample_size(10).measurement_time(Duration::from_secs(30));
    group.throughput(Throughput::Elements(GETS as u64));
    group.bench_function("async_64_in_flight", |b| {
        b.iter_custom(|iterations| {
            let started = Instant::now();
            for _ in 0..iterations {
                runtime.block_on(async {
                    let found = futures_util::stream::iter(0..GETS)
                        .map(|i| {
                            let store = Arc::clone(&store);
                            async move { store.get("t", &Get::new(key(i))).await.unwrap().is_some() }
                        })
                        .buffer_unordered(64)
                        .filter(|found| std::future::ready(*found))
                        .count()
                        .await;
                    assert_eq!(found, GETS);
                });
            }
            started.elapsed()
        })
    });
    let mut blocking_config = config.clone();
    blocking_config.pool_size = 8;
    let blocking = hmap::blocking::Store::new(ThriftStore::with_config(blocking_config));
    group.bench_function("blocking_8_threads", |b| {
        b.iter_custom(|iterations| {
            let started = Instant::now();
            for _ in 0..iterations {
                std::thread::scope(|s| {
                    for t in 0..8 {
                        let blocking = &blocking;
                        s.spawn(move || {
                            for i in (t..GETS).step_by(8) {
                                assert!(blocking.get("t", &Get::new(key(i))).unwrap().is_some());
                            }
                        });
                    }
                });
            }
            started.elapsed()
        })
    });
    group.finish();
    runtime.block_on(store.delete_table("t")).unwrap();
}

criterion_group!(benches, concurrency);
criterion_main!(benches);
