//! The store conformance suite against a real HBase through a Thrift1
//! gateway that speaks the compact protocol over framed transport (`hbase
//! thrift start -c -f`; `scripts/hbase/hbase start` runs one next to the
//! others and prints its address as `HMAP_THRIFT1_COMPACT`), on
//! [`Thrift1Store`](hmap::store::Thrift1Store) with
//! `ThriftConfig::protocol` set to `ThriftProtocol::Compact` and
//! `ThriftConfig::framed` on. The cases Thrift1 cannot express are skipped
//! as in `tests/conformance/thrift1.rs`.

use hmap::store::ThriftProtocol;
use hmap_suite::conformance::Thrift1Target;

/// A framed gateway takes frames of at most 2 MiB by default
/// (`hbase.regionserver.thrift.framed.max_frame_size_in_mb`).
const FRAMED_MAX_VALUE: usize = 1024 * 1024;

/// The compact, framed Thrift1 gateway under test; panics without one.
async fn target() -> Thrift1Target {
    Thrift1Target::from_env("HMAP_THRIFT1_COMPACT", "t1c_conformance_", |config| {
        config.protocol = ThriftProtocol::Compact;
        config.framed = true;
        config.max_value_size = FRAMED_MAX_VALUE;
    })
    .await
}

hmap_suite::for_each_case!(
    hmap_suite::thrift1_cases,
    target,
    "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT1_COMPACT=host:port"
);
