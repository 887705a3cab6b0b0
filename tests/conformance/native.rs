//! The store conformance suite against a real HBase, through `NativeStore`:
//! HBase's own RPC to the master and the region servers, no gateway.
//!
//! Every case is `#[ignore]`d, so that `cargo test` needs no HBase;
//! `cargo test -- --include-ignored` runs them with `HMAP_NATIVE` naming a
//! master (`host:port`), as `scripts/hbase/hbase address` prints it, and
//! fails when it is unset.

use hmap::store::native::{NativeConfig, NativeStore};

use hmap_suite::conformance::NativeTarget as Native;

/// The cluster under test; panics without one.
async fn target() -> Native {
    let address = hmap_suite::required_env("HMAP_NATIVE");
    let connect = || async {
        NativeStore::connect(NativeConfig::new([address.clone()]))
            .await
            .unwrap_or_else(|e| panic!("HMAP_NATIVE={address} is set but HBase does not answer: {e}"))
    };
    let store = connect().await;
    Native {
        store,
        prefix: hmap_suite::test_table_prefix("hmap_native_conformance_"),
        other: connect().await,
    }
}

hmap_suite::for_each_case!(
    hmap_suite::hbase_cases,
    target,
    "needs a real HBase: scripts/hbase/hbase start, then HMAP_NATIVE=host:port (scripts/hbase/hbase address)"
);
