//! The store conformance suite against a real HBase through a Thrift2
//! gateway that speaks the compact protocol (`hbase thrift2 -c`;
//! `scripts/hbase/hbase start` runs one next to the others and prints its
//! address as `HMAP_THRIFT_COMPACT`), with `ThriftConfig::protocol` set to
//! `ThriftProtocol::Compact`.

use futures_util::StreamExt;
use hmap::store::{Get, Scan, Store, ThriftConfig, ThriftProtocol, ThriftStore};
use hmap_suite::conformance::ThriftTarget;

/// The compact gateway under test; panics without one.
async fn target() -> ThriftTarget {
    ThriftTarget::from_env("HMAP_THRIFT_COMPACT", "hmap_compact_conformance_", |config| {
        config.protocol = ThriftProtocol::Compact;
    })
    .await
}

hmap_suite::for_each_case!(
    hmap_suite::hbase_cases,
    target,
    "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT_COMPACT=host:port"
);

/// Each protocol against the other's gateway, framed or not: the first
/// call fails within its deadline with an error that names the mismatch.
#[tokio::test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT, HMAP_THRIFT_FRAMED and HMAP_THRIFT_COMPACT"]
async fn a_mismatched_protocol_is_a_clear_error() {
    let compact_gateway = hmap_suite::required_env("HMAP_THRIFT_COMPACT");
    let binary_gateway = hmap_suite::required_env("HMAP_THRIFT");
    let framed_gateway = hmap_suite::required_env("HMAP_THRIFT_FRAMED");
    let cases = [
        (&compact_gateway, ThriftProtocol::Binary, false),
        (&compact_gateway, ThriftProtocol::Binary, true),
        (&binary_gateway, ThriftProtocol::Compact, false),
        (&framed_gateway, ThriftProtocol::Compact, false),
        (&framed_gateway, ThriftProtocol::Compact, true),
    ];
    for (address, protocol, framed) in cases {
        let mut config = ThriftConfig::new(address.as_str());
        config.protocol = protocol;
        config.framed = framed;
        config.call_timeout = std::time::Duration::from_secs(5);
        // The first call on a fresh store, whichever it is, gets the hint.
        for call in ["ping", "get", "scan"] {
            let store = ThriftStore::with_config(config.clone());
            let started = std::time::Instant::now();
            let err = match call {
                "ping" => store.ping().await.expect_err("a mismatched protocol fails"),
                "get" => store
                    .get("t1", &Get::new("row"))
                    .await
                    .expect_err("a mismatched protocol fails"),
                _ => match store.scan("t1", &Scan::all()).await {
                    Ok(mut rows) => rows
                        .next()
                        .await
                        .expect("a scan that fails yields its error")
                        .expect_err("a mismatched protocol fails"),
                    Err(err) => err,
                },
            };
            let text = err.to_string();
            // It names the gateway's protocol, and what the client speaks.
            let other = match protocol {
                ThriftProtocol::Binary => "the compact protocol (`-c`",
                _ => "the binary protocol (the default",
            };
            assert!(
                text.contains(other) && text.contains("hmap speaks"),
                "{call}, {protocol:?} framed={framed} against {address}: {text}"
            );
            assert!(
                started.elapsed() < std::time::Duration::from_secs(6),
                "{call}, {protocol:?} framed={framed} against {address}: took {:?}",
                started.elapsed()
            );
        }
    }
}
