//! BigtableStore against MemoryStore and NativeStore, side by side in one
//! run on the same loads (`side_by_side`): a bulk load of 100,000 rows, a
//! full scan of them, 10,000 point gets one at a time and 10,000 with 64
//! in flight.
//!
//! BigtableStore runs against the Bigtable emulator, an in-memory Go
//! server on this machine: its figures measure hmap's gRPC path and the
//! emulator, not Cloud Bigtable (whose calls cross a network to a
//! replicated service). NativeStore runs against the HBase that
//! `scripts/hbase/hbase start` starts on this machine; MemoryStore is the
//! floor (no I/O at all).
//!
//! `export $(scripts/bigtable/emulator start)`, `scripts/hbase/hbase
//! start`, `eval $(scripts/hbase/hbase address)`, then `cargo bench -p
//! hmap-bench --features bigtable --bench bigtable`. Without `HMAP_BIGTABLE`
//! it says so and measures nothing; without `HMAP_NATIVE` it leaves
//! NativeStore out.

mod side_by_side;

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use hmap::store::bigtable::{BigtableConfig, BigtableStore};
use hmap::store::native::{NativeConfig, NativeStore};
use hmap::store::{MemoryStore, Store};
use side_by_side::Stores;

fn setup() -> Option<Stores> {
    let Ok(emulator) = std::env::var("HMAP_BIGTABLE") else {
        eprintln!("bigtable: HMAP_BIGTABLE must be set (export $(scripts/bigtable/emulator start))");
        return None;
    };
    let prefix = side_by_side::table_prefix("bigtable");
    let runtime = side_by_side::runtime();
    let mut stores: Vec<(&'static str, Arc<dyn Store>)> = vec![("memory", Arc::new(MemoryStore::new()))];
    let bigtable = runtime
        .block_on(BigtableStore::connect(
            BigtableConfig::emulator(emulator).table_prefix(format!("{prefix}bigtable_")),
        ))
        .expect("BigtableStore connects");
    stores.push(("bigtable", Arc::new(bigtable)));
    match std::env::var("HMAP_NATIVE") {
        Ok(native) => {
            let native = runtime
                .block_on(NativeStore::connect(
                    NativeConfig::new([native]).table_prefix(format!("{prefix}native_")),
                ))
                .expect("NativeStore connects");
            stores.push(("native", Arc::new(native)));
        }
        Err(_) => eprintln!("bigtable: HMAP_NATIVE is not set; NativeStore is left out"),
    }
    Some(Stores::loaded(runtime, stores))
}

fn bigtable(c: &mut Criterion) {
    let Some(stores) = setup() else {
        return;
    };
    side_by_side::groups(c, &stores);
    stores.drop_tables();
}

criterion_group!(benches, bigtable);
criterion_main!(benches);
