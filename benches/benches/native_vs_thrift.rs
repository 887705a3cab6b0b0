//! NativeStore against ThriftStore, side by side on one HBase in one run:
//! a bulk load of 100,000 rows (100 `mutate` calls of 1,000 rows), a full
//! scan of them (1,000 rows per round trip), 10,000 point gets one at a time,
//! and 10,000 point gets with 64 in flight. Each store has a table of its
//! own with the same rows; both run on one tokio runtime of 2 workers.
//!
//! Needs HBase with its Thrift2 gateway and the master's address:
//! `scripts/hbase/hbase start`, `eval $(scripts/hbase/hbase address)`, then
//! `HMAP_THRIFT=127.0.0.1:9091 HMAP_NATIVE=... cargo bench -p hmap-bench --bench native_vs_thrift`.
//! Without both variables it says so and measures nothing.

mod side_by_side;

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use hmap::store::native::{NativeConfig, NativeStore};
use hmap::store::{Store, ThriftConfig, ThriftStore};
use side_by_side::{IN_FLIGHT, Stores};

fn setup() -> Option<Stores> {
    let (Ok(thrift), Ok(native)) = (std::env::var("HMAP_THRIFT"), std::env::var("HMAP_NATIVE")) else {
        eprintln!(
            "native_vs_thrift: HMAP_THRIFT and HMAP_NATIVE must both be set \
             (scripts/hbase/hbase start; eval $(scripts/hbase/hbase address))"
        );
        return None;
    };
    let prefix = side_by_side::table_prefix("native_vs_thrift");
    let runtime = side_by_side::runtime();
    let mut thrift_config = ThriftConfig::new(thrift);
    thrift_config.table_prefix = format!("{prefix}thrift_");
    // One pooled connection per call in flight, as benches/concurrency.rs.
    thrift_config.pool_size = IN_FLIGHT;
    let thrift: Arc<dyn Store> = Arc::new(ThriftStore::with_config(thrift_config));
    let native: Arc<dyn Store> = Arc::new(
        runtime
            .block_on(NativeStore::connect(
                NativeConfig::new([native]).table_prefix(format!("{prefix}native_")),
            ))
            .expect("NativeStore connects"),
    );
    Some(Stores::loaded(runtime, vec![("thrift", thrift), ("native", native)]))
}

fn native_vs_thrift(c: &mut Criterion) {
    let Some(stores) = setup() else {
        return;
    };
    side_by_side::groups(c, &stores);
    stores.drop_tables();
}

criterion_group!(benches, native_vs_thrift);
criterion_main!(benches);
