//! The store conformance suite against a real HBase, through `ThriftStore`.
//!
//! Every case is `#[ignore]`d, so that `cargo test` needs no HBase;
//! `cargo test -- --include-ignored` runs them with `HMAP_THRIFT` naming a
//! Thrift2 gateway (`host:port`), as `scripts/hbase/hbase start` prints it,
//! and fails when it is unset.

use hmap::store::{Store, ThriftConfig, ThriftStore};
use hmap_suite::conformance::{self, Target};

struct Thrift(ThriftStore, String);

impl Target for Thrift {
    fn store(&self) -> &dyn Store {
        &self.0
    }

    fn table_prefix(&self) -> &str {
        &self.1
    }

    fn open_scanners(&self) -> Option<usize> {
        Some(self.0.open_scanners())
    }
}

/// The gateway under test; panics without one.
async fn target() -> Thrift {
    let address = hmap_suite::required_env("HMAP_THRIFT");
    let store = ThriftStore::with_config(ThriftConfig::new(address.clone()));
    if let Err(e) = store.ping().await {
        panic!("HMAP_THRIFT={address} is set but the gateway does not answer: {e}");
    }
    Thrift(store, hmap_suite::test_table_prefix("hmap_thrift_conformance_"))
}

macro_rules! thrift_cases {
    ($($case:ident,)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT=host:port"]
        async fn $case() {
            conformance::$case(&target().await).await;
        }
    )*};
}

hmap_suite::for_each_case!(thrift_cases);
