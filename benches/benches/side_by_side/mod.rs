//! What the side-by-side benchmarks of stores on a real HBase share
//! (`native_vs_thrift`, `secured`, `bigtable`): the rows, the keys, and the four
//! groups, each timing every store in turn within one run: a bulk load of
//! 100,000 rows (100 `mutate` calls of 1,000 rows), a full scan of them
//! (1,000 rows per round trip), 10,000 point gets one at a time, and 10,000
//! point gets with 64 in flight. Each store has a table `t` of its own
//! (by its table prefix) with the same rows.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkGroup, Criterion, Throughput, measurement::WallTime};
use futures_util::{StreamExt, TryStreamExt};
use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::{Get, RowMutation, Scan, Store};
use tokio::runtime::Runtime;

const ROWS: usize = 100_000;
const LOAD_BATCH: usize = 1_000;
const GETS: usize = 10_000;
pub const IN_FLIGHT: usize = 64;

fn key(i: usize) -> String {
    format!("row{:06}", i % ROWS)
}

/// The rows every load writes (the same each time: a load overwrites).
fn rows() -> Vec<RowMutation> {
    (0..ROWS)
        .map(|i| RowMutation::new(key(i)).put_at("f", "q", 1, format!("{i:032}")))
        .collect()
}

/// The keys of the point gets: spread over the table, in a fixed order.
fn get_keys() -> Vec<String> {
    (0..GETS).map(|i| key(i.wrapping_mul(7_919) % ROWS)).collect()
}

pub struct Stores {
    pub runtime: Runtime,
    /// (name, store), in the order the groups time them.
    pub stores: Vec<(&'static str, Arc<dyn Store>)>,
}

/// The runtime every store of a benchmark runs on: 2 workers.
pub fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// The table prefix of the benchmark `name`, after `HMAP_TEST_PREFIX`.
pub fn table_prefix(name: &str) -> String {
    format!(
        "{}hmap_bench_{name}_",
        std::env::var("HMAP_TEST_PREFIX").unwrap_or_default()
    )
}

impl Stores {
    /// The stores, each with table `t` created afresh and loaded.
    pub fn loaded(runtime: Runtime, stores: Vec<(&'static str, Arc<dyn Store>)>) -> Stores {
        let rows = rows();
        runtime.block_on(async {
            for (_, store) in &stores {
                if store.table_exists("t").await.unwrap() {
                    store.delete_table("t").await.unwrap();
                }
                store
                    .create_table(&TableSchema::new("t").family(FamilySchema::new("f")))
                    .await
                    .unwrap();
                for chunk in rows.chunks(LOAD_BATCH) {
                    store.mutate("t", chunk).await.unwrap();
                }
            }
        });
        Stores { runtime, stores }
    }

    /// Drops every store's table.
    pub fn drop_tables(&self) {
        self.runtime.block_on(async {
            for (_, store) in &self.stores {
                store.delete_table("t").await.unwrap();
            }
        });
    }
}

/// Times `run` on each store, `iterations` times per sample.
fn each_store<F, Fut>(group: &mut BenchmarkGroup<'_, WallTime>, stores: &Stores, run: F)
where
    F: Fn(Arc<dyn Store>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for (name, store) in &stores.stores {
        group.bench_function(*name, |b| {
            b.iter_custom(|iterations| {
                let started = Instant::now();
                for _ in 0..iterations {
                    stores.runtime.block_on(run(Arc::clone(store)));
                }
                started.elapsed()
            })
        });
    }
}

/// The four groups, every store in each.
pub fn groups(c: &mut Criterion, stores: &Stores) {
    let rows = Arc::new(rows());
    let keys = Arc::new(get_keys());

    let mut group = c.benchmark_group("load_100000_rows");
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Elements(ROWS as u64));
    each_store(&mut group, stores, |store| {
        let rows = Arc::clone(&rows);
        async move {
            for chunk in rows.chunks(LOAD_BATCH) {
                store.mutate("t", chunk).await.unwrap();
            }
        }
    });
    group.finish();

    let mut group = c.benchmark_group("scan_100000_rows");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(ROWS as u64));
    each_store(&mut group, stores, |store| async move {
        let n = store
            .scan("t", &Scan::all().batch_size(1_000))
            .await
            .unwrap()
            .try_fold(0usize, |n, _| std::future::ready(Ok(n + 1)))
            .await
            .unwrap();
        assert_eq!(n, ROWS);
    });
    group.finish();

    let mut group = c.benchmark_group("get_10000_one_at_a_time");
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Elements(GETS as u64));
    each_store(&mut group, stores, |store| {
        let keys = Arc::clone(&keys);
        async move {
            for key in keys.iter() {
                assert!(store.get("t", &Get::new(key.clone())).await.unwrap().is_some());
            }
        }
    });
    group.finish();

    let mut group = c.benchmark_group("get_10000_64_in_flight");
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Elements(GETS as u64));
    each_store(&mut group, stores, |store| {
        let keys = Arc::clone(&keys);
        async move {
            let found = futures_util::stream::iter(0..GETS)
                .map(|i| {
                    let (store, keys) = (Arc::clone(&store), Arc::clone(&keys));
                    async move { store.get("t", &Get::new(keys[i].clone())).await.unwrap().is_some() }
                })
                .buffer_unordered(IN_FLIGHT)
                .filter(|found| std::future::ready(*found))
                .count()
                .await;
            assert_eq!(found, GETS);
        }
    });
    group.finish();
}
