//! The store conformance suite against a real HBase, through `ThriftStore`.
//!
//! Every case is `#[ignore]`d, so that `cargo test` needs no HBase;
//! `cargo test -- --include-ignored` runs them with `HMAP_THRIFT` naming a
//! Thrift2 gateway (`host:port`), as `scripts/hbase/hbase start` prints it,
//! and fails when it is unset.

use hmap_suite::conformance::ThriftTarget;

/// The gateway under test; panics without one.
async fn target() -> ThriftTarget {
    ThriftTarget::from_env("HMAP_THRIFT", "hmap_thrift_conformance_", |_| {}).await
}

hmap_suite::for_each_case!(
    hmap_suite::hbase_cases,
    target,
    "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT=host:port"
);
