//! The store conformance suite against a real HBase through a Thrift2
//! gateway that speaks the compact protocol (`hbase thrift2 -c`;
//! `scripts/hbase/hbase start` runs one next to the others and prints its
//! address as `HMAP_THRIFT_COMPACT`), with `ThriftConfig::protocol` set to
//! `ThriftProtocol::Compact`.

use hmap::store::{Store, ThriftConfig, ThriftProtocol, ThriftStore};
use hmap_suite::conformance::{self, Target};

struct Compact(ThriftStore, String);

impl Target for Compact {
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

/// A store on the compact gateway.
fn compact_store(address: &str) -> ThriftStore {
    let mut config = ThriftConfig::new(address);
    config.protocol = ThriftProtocol::Compact;
    ThriftStore::with_config(config)
}

/// The compact gateway under test; panics without one.
async fn target() -> Compact {
    let address = hmap_suite::required_env("HMAP_THRIFT_COMPACT");
    let store = compact_store(&address);
    if let Err(e) = store.ping().await {
        panic!("HMAP_THRIFT_COMPACT={address} is set but the gateway does not answer: {e}");
    }
    Compact(store, hmap_suite::test_table_prefix("hmap_compact_conformance_"))
}

macro_rules! compact_cases {
    ($($case:ident,)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT_COMPACT=host:port"]
        async fn $case() {
            conformance::$case(&target().await).await;
        }
    )*};
}

hmap_suite::for_each_case!(compact_cases);

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
        let started = std::time::Instant::now();
        let err = ThriftStore::with_config(config)
            .ping()
            .await
            .expect_err("a mismatched protocol fails");
        let text = err.to_string();
        // It names the gateway's protocol, and what the client speaks.
        let other = match protocol {
            ThriftProtocol::Binary => "the compact protocol (`-c`",
            _ => "the binary protocol (the default",
        };
        assert!(
            text.contains(other) && text.contains("hmap speaks"),
            "{protocol:?} framed={framed} against {address}: {text}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(6),
            "{protocol:?} framed={framed} against {address}: took {:?}",
            started.elapsed()
        );
    }
}
