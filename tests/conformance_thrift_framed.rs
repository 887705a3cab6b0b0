//! The store conformance suite against a real HBase through a Thrift2
//! gateway with framed transport (`hbase thrift2 -f`; `scripts/hbase/hbase
//! start` runs one next to the unframed one and prints its address as
//! `HMAP_THRIFT_FRAMED`), with `ThriftConfig::framed` set.

use hmap::store::{Store, ThriftConfig, ThriftStore};
use hmap_suite::conformance::{self, Target};

struct Framed(ThriftStore, String);

impl Target for Framed {
    fn store(&self) -> &dyn Store {
        &self.0
    }

    fn table_prefix(&self) -> &str {
        &self.1
    }

    fn open_scanners(&self) -> Option<usize> {
        Some(self.0.open_scanners())
    }

    fn framed_gateway(&self) -> bool {
        true
    }

    /// A framed gateway takes frames of at most 2 MiB by default
    /// (`hbase.regionserver.thrift.framed.max_frame_size_in_mb`).
    fn max_value_size(&self) -> usize {
        FRAMED_MAX_VALUE
    }
}

const FRAMED_MAX_VALUE: usize = 1024 * 1024;

/// The framed gateway under test; panics without one.
async fn target() -> Framed {
    let address = hmap_suite::required_env("HMAP_THRIFT_FRAMED");
    let mut config = ThriftConfig::new(address.clone());
    config.framed = true;
    config.max_value_size = FRAMED_MAX_VALUE;
    let store = ThriftStore::with_config(config);
    if let Err(e) = store.ping().await {
        panic!("HMAP_THRIFT_FRAMED={address} is set but the gateway does not answer: {e}");
    }
    Framed(store, hmap_suite::test_table_prefix("hmap_framed_conformance_"))
}

macro_rules! framed_cases {
    ($($case:ident,)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT_FRAMED=host:port"]
        async fn $case() {
            conformance::$case(&target().await).await;
        }
    )*};
}

hmap_suite::for_each_case!(framed_cases);

/// Each kind of client against the other kind of gateway: the first call
/// fails with an error that names the mismatch, not a hang.
#[tokio::test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT and HMAP_THRIFT_FRAMED"]
async fn a_mismatched_transport_is_a_clear_error() {
    let framed_gateway = hmap_suite::required_env("HMAP_THRIFT_FRAMED");
    let unframed_gateway = hmap_suite::required_env("HMAP_THRIFT");
    for (address, framed) in [(framed_gateway, false), (unframed_gateway, true)] {
        let mut config = ThriftConfig::new(address.clone());
        config.framed = framed;
        config.call_timeout = std::time::Duration::from_secs(5);
        let err = ThriftStore::with_config(config)
            .ping()
            .await
            .expect_err("a mismatched transport fails");
        let text = err.to_string();
        assert!(
            text.contains("framed transport (") && text.contains("hmap speaks"),
            "framed={framed} against {address}: {text}"
        );
    }
}
