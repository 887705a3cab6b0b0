//! ThriftStore on a real HBase: what batching buys. 1000 rows written in one
//! `mutate` (one `putMultiple`) against 1000 one-row `mutate`s (1000 calls),
//! and 100 rows read by one `get_many` (one `getMultiple`) against 100 `get`s.
//! Both sides of each pair run in the same process against the same gateway.
//!
//! Needs a gateway: `scripts/hbase/hbase start`, then
//! `HMAP_THRIFT=127.0.0.1:9091 cargo bench -p hmap-bench --bench thrift_store`. Without
//! `HMAP_THRIFT` it says so and measures nothing.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::{Get, RowMutation, ThriftConfig, ThriftStore};

fn rows(n: usize) -> Vec<RowMutation> {
    (0..n)
        .map(|i| RowMutation::new(format!("row{i:06}")).put_at("f", "q", 1, format!("{i:032}")))
        .collect()
}

fn thrift(c: &mut Criterion) {
    let Ok(address) = std::env::var("HMAP_THRIFT") else {
        eprintln!("thrift_store: HMAP_THRIFT is not set; start HBase with scripts/hbase/hbase start");
        return;
    };
    let mut config = ThriftConfig::new(address);
    config.table_prefix = "hmap_bench__".into();
    let store = hmap::blocking::Store::new(ThriftStore::with_config(config));
    if store.table_exists("t").unwrap() {
        store.delete_table("t").unwrap();
    }
    store
        .create_table(&TableSchema::new("t").family(FamilySchema::new("f")))
        .unwrap();
    let batch = rows(1000);

    let mut group = c.benchmark_group("thrift_put_1000_rows");
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Elements(1000));
    group.bench_function("one_mutate_call", |b| {
        b.iter(|| store.mutate("t", black_box(&batch)).unwrap())
    });
    group.bench_function("a_call_per_row", |b| {
        b.iter(|| {
            for row in &batch {
                store.mutate("t", std::slice::from_ref(black_box(row))).unwrap();
            }
        })
    });
    group.finish();

    let gets: Vec<Get> = (0..100).map(|i| Get::new(format!("row{:06}", i * 10))).collect();
    let mut group = c.benchmark_group("thrift_get_100_rows");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(100));
    group.bench_function("get_many", |b| {
        b.iter(|| assert_eq!(store.get_many("t", black_box(&gets)).unwrap().len(), 100))
    });
    group.bench_function("a_get_per_row", |b| {
        b.iter(|| {
            for get in &gets {
                assert!(store.get("t", black_box(get)).unwrap().is_some());
            }
        })
    });
    group.finish();
    store.delete_table("t").unwrap();
}

criterion_group!(benches, thrift);
criterion_main!(benches);
