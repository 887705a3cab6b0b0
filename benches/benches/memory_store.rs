//! MemoryStore against a plain `BTreeMap<Vec<u8>, Vec<u8>>` doing the same
//! work, on 1M rows of one 32-byte cell: batched puts, point gets, and
//! 1000-row prefix scans. Both sides return owned data.
//!
//! Then one column taken to 100,000 versions, one put each: a put's cost
//! must not grow with the versions the column already holds.
//!
//! Run with `cargo bench -p hmap-bench --bench memory_store`.

use std::collections::BTreeMap;
use std::hint::black_box;

use bytes::Bytes;
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use futures_util::{FutureExt, TryStreamExt};
use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::Store;
use hmap::store::{Get, MemoryStore, RowMutation, Scan};

const ROWS: u64 = 1_000_000;

/// Row `i`: 1000 prefixes of 1000 rows each, so that a prefix scan reads 1000 rows.
fn row_key(i: u64) -> Vec<u8> {
    format!("p{:04}/row{:08}", i / 1000, i).into_bytes()
}

fn value(i: u64) -> Vec<u8> {
    format!("{i:032}").into_bytes()
}

fn loaded_store() -> hmap::blocking::Store<MemoryStore> {
    let store = hmap::blocking::Store::new(MemoryStore::new());
    store
        .create_table(&TableSchema::new("t").family(FamilySchema::new("f")))
        .unwrap();
    for chunk in (0..ROWS).collect::<Vec<_>>().chunks(10_000) {
        let rows: Vec<RowMutation> = chunk
            .iter()
            .map(|&i| RowMutation::new(row_key(i)).put_at("f", "q", 1, value(i)))
            .collect();
        store.mutate("t", &rows).unwrap();
    }
    store
}

fn loaded_map() -> BTreeMap<Vec<u8>, Vec<u8>> {
    (0..ROWS).map(|i| (row_key(i), value(i))).collect()
}

fn memory_store(c: &mut Criterion) {
    let store = loaded_store();
    let map = loaded_map();
    // Keys spread over the table, looked up in a fixed pseudo-random order.
    let probes: Vec<Bytes> = (0..4096u64)
        .map(|i| Bytes::from(row_key(i.wrapping_mul(2_654_435_761) % ROWS)))
        .collect();

    let mut group = c.benchmark_group("point_get_1m_rows");
    let mut n = 0;
    group.bench_function("memory_store", |b| {
        b.iter(|| {
            n = (n + 1) % probes.len();
            black_box(store.get("t", &Get::new(probes[n].clone())).unwrap())
        })
    });
    // The same store through the async API, its futures polled once here
    // (an in-memory call is ready at once): the blocking hop left out.
    let mut n = 0;
    group.bench_function("memory_store_async", |b| {
        b.iter(|| {
            n = (n + 1) % probes.len();
            let get = Get::new(probes[n].clone());
            black_box(store.as_async().get("t", &get).now_or_never().unwrap().unwrap())
        })
    });
    let mut n = 0;
    group.bench_function("btreemap", |b| {
        b.iter(|| {
            n = (n + 1) % probes.len();
            black_box(map.get(&probes[n][..]).cloned())
        })
    });
    group.finish();

    let mut group = c.benchmark_group("prefix_scan_1000_rows_of_1m");
    group.throughput(Throughput::Elements(1000));
    let mut p = 0u64;
    group.bench_function("memory_store", |b| {
        b.iter(|| {
            p = (p + 7) % 1000;
            let rows: Vec<_> = store
                .scan("t", &Scan::prefix(format!("p{p:04}/")).batch_size(1000))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(rows.len(), 1000);
            black_box(rows)
        })
    });
    let mut p = 0u64;
    group.bench_function("memory_store_async", |b| {
        b.iter(|| {
            p = (p + 7) % 1000;
            let scan = Scan::prefix(format!("p{p:04}/")).batch_size(1000);
            let rows: Vec<_> = async {
                let stream = store.as_async().scan("t", &scan).await.unwrap();
                stream.try_collect::<Vec<_>>().await
            }
            .now_or_never()
            .unwrap()
            .unwrap();
            assert_eq!(rows.len(), 1000);
            black_box(rows)
        })
    });
    let mut p = 0u64;
    group.bench_function("btreemap", |b| {
        b.iter(|| {
            p = (p + 7) % 1000;
            let start = format!("p{p:04}/").into_bytes();
            let stop = format!("p{p:04}0").into_bytes();
            let rows: Vec<(Vec<u8>, Vec<u8>)> = map.range(start..stop).map(|(k, v)| (k.clone(), v.clone())).collect();
            assert_eq!(rows.len(), 1000);
            black_box(rows)
        })
    });
    group.finish();

    let mut group = c.benchmark_group("put_batch_of_1000");
    group.throughput(Throughput::Elements(1000));
    group.sample_size(20);
    let batch: Vec<(Vec<u8>, Vec<u8>)> = (0..1000u64).map(|i| (row_key(i * 997 % ROWS), value(i))).collect();
    group.bench_function("memory_store", |b| {
        b.iter_batched(
            || {
                batch
                    .iter()
                    .map(|(k, v)| RowMutation::new(k.clone()).put_at("f", "q", 2, v.clone()))
                    .collect::<Vec<_>>()
            },
            |rows| store.mutate("t", &rows).unwrap(),
            BatchSize::SmallInput,
        )
    });
    let mut map = map;
    group.bench_function("btreemap", |b| {
        b.iter_batched(
            || batch.clone(),
            |rows| {
                for (k, v) in rows {
                    map.insert(k, v);
                }
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

/// Versions of the one column in `versions_of_one_column`.
const VERSIONS: u32 = 100_000;

/// 100,000 puts of one column, each a row mutation of its own, into a family
/// that keeps every version (so nothing is pruned): the whole run costs
/// `VERSIONS` times the first put if a put's cost does not depend on the
/// versions already stored.
fn versions_of_one_column(c: &mut Criterion) {
    let mut group = c.benchmark_group("versions_of_one_column");
    group.throughput(Throughput::Elements(u64::from(VERSIONS)));
    group.sample_size(10);
    let puts: Vec<RowMutation> = (1..=i64::from(VERSIONS))
        .map(|ts| RowMutation::new("row").put_at("f", "q", ts, value(ts.unsigned_abs())))
        .collect();
    group.bench_function("put_100k_versions", |b| {
        b.iter_batched(
            || {
                let store = hmap::blocking::Store::new(MemoryStore::new());
                store
                    .create_table(&TableSchema::new("t").family(FamilySchema::new("f").versions(VERSIONS)))
                    .unwrap();
                store
            },
            |store| {
                for put in &puts {
                    store.mutate("t", std::slice::from_ref(put)).unwrap();
                }
                store
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = memory_store, versions_of_one_column
}
criterion_main!(benches);
