//! The store conformance suite against a real HBase through a Thrift2
//! gateway with framed transport (`hbase thrift2 -f`; `scripts/hbase/hbase
//! start` runs one next to the unframed one and prints its address as
//! `HMAP_THRIFT_FRAMED`), with `ThriftConfig::framed` set.

use hmap::store::{ThriftConfig, ThriftStore};
use hmap_suite::conformance::ThriftTarget;

/// A framed gateway takes frames of at most 2 MiB by default
/// (`hbase.regionserver.thrift.framed.max_frame_size_in_mb`).
const FRAMED_MAX_VALUE: usize = 1024 * 1024;

/// The framed gateway under test; panics without one.
async fn target() -> ThriftTarget {
    ThriftTarget::from_env("HMAP_THRIFT_FRAMED", "hmap_framed_conformance_", |config| {
        config.framed = true;
        config.max_value_size = FRAMED_MAX_VALUE;
    })
    .await
}

hmap_suite::for_each_case!(
    hmap_suite::hbase_cases,
    target,
    "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT_FRAMED=host:port"
);

/// Each kind of client against the other kind of gateway: the first call
/// (a ping, or any other) fails at once with an error that names the
/// mismatch, not at the end of its deadline.
#[tokio::test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT, HMAP_THRIFT_FRAMED and HMAP_THRIFT1"]
async fn a_mismatched_transport_is_a_clear_error() {
    use hmap::store::Store;
    use std::time::{Duration, Instant};
    let framed_gateway = hmap_suite::required_env("HMAP_THRIFT_FRAMED");
    let unframed_gateway = hmap_suite::required_env("HMAP_THRIFT");
    for (address, framed) in [(framed_gateway, false), (unframed_gateway, true)] {
        for ping in [true, false] {
            let mut config = ThriftConfig::new(address.clone());
            config.framed = framed;
            config.call_timeout = Duration::from_secs(30);
            let store = ThriftStore::with_config(config);
            let started = Instant::now();
            let err = if ping {
                store.ping().await.expect_err("a mismatched transport fails")
            } else {
                store.table_exists("t").await.expect_err("a mismatched transport fails")
            };
            let text = err.to_string();
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "framed={framed} against {address}: {:?}: {text}",
                started.elapsed()
            );
            assert!(
                text.contains("framed transport (") && text.contains("hmap speaks"),
                "framed={framed} against {address}: {text}"
            );
        }
    }
    // Thrift1Store shares the transport: framed on the unframed Thrift1
    // gateway, the same.
    let mut config = ThriftConfig::new(hmap_suite::required_env("HMAP_THRIFT1"));
    config.framed = true;
    config.call_timeout = Duration::from_secs(30);
    let started = Instant::now();
    let err = hmap::store::Thrift1Store::with_config(config)
        .list_tables()
        .await
        .expect_err("a mismatched transport fails");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}: {err}",
        started.elapsed()
    );
    assert!(err.to_string().contains("unframed transport ("), "{err}");
}

/// A request over the framed gateway's frame limit: the gateway drops the
/// connection, and the error says why and what to change, within the
/// call's deadline.
#[tokio::test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT_FRAMED"]
async fn a_request_over_the_frame_limit_says_so() {
    use hmap::schema::{FamilySchema, TableSchema};
    use hmap::store::{RowMutation, Store, StoreError};
    let mut config = ThriftConfig::new(hmap_suite::required_env("HMAP_THRIFT_FRAMED"));
    config.framed = true;
    config.call_timeout = std::time::Duration::from_secs(30);
    let store = ThriftStore::with_config(config);
    let table = format!("{}framed_frame_limit", hmap_suite::test_table_prefix(""));
    if store.table_exists(&table).await.unwrap() {
        store.delete_table(&table).await.unwrap();
    }
    store
        .create_table(&TableSchema::new(table.clone()).family(FamilySchema::new("a")))
        .await
        .unwrap();
    let big = RowMutation::new("r").put("a", "q", vec![b'x'; 3 * 1024 * 1024]);
    let err = store
        .mutate(&table, &[big])
        .await
        .expect_err("a 3 MiB frame is refused");
    let text = err.to_string();
    assert!(matches!(err, StoreError::Connection { .. }), "{text}");
    assert!(text.contains("max_frame_size_in_mb"), "{text}");
    // The store goes on with requests within the limit.
    store
        .mutate(&table, &[RowMutation::new("r").put("a", "q", "small")])
        .await
        .unwrap();
    store.delete_table(&table).await.unwrap();
}
