//! The store conformance suite against a real HBase, through `ThriftStore`.
//!
//! Runs when `HMAP_THRIFT` names a Thrift2 gateway (`host:port`), as
//! `scripts/hbase/hbase start` prints it; without it each case says it was
//! skipped and passes, so that `cargo test` needs no HBase.

use hmap::store::{Store, ThriftStore};
use hmap_suite::conformance::{self, Target};

struct Thrift(ThriftStore);

impl Target for Thrift {
    fn store(&self) -> &dyn Store {
        &self.0
    }

    fn table_prefix(&self) -> &str {
        "hmap_thrift_conformance_"
    }
}

/// The gateway under test, or `None` (and a note on stderr) without one.
fn target(case: &str) -> Option<Thrift> {
    match std::env::var("HMAP_THRIFT") {
        Ok(address) if !address.is_empty() => {
            let store = ThriftStore::new(address.clone());
            if let Err(e) = store.ping() {
                panic!("HMAP_THRIFT={address} is set but the gateway does not answer: {e}");
            }
            Some(Thrift(store))
        }
        _ => {
            eprintln!("{case}: skipped, HMAP_THRIFT is not set (scripts/hbase/hbase start prints it)");
            None
        }
    }
}

macro_rules! thrift_cases {
    ($($case:ident,)*) => {$(
        #[test]
        fn $case() {
            if let Some(t) = target(stringify!($case)) {
                conformance::$case(&t);
            }
        }
    )*};
}

hmap_suite::for_each_case!(thrift_cases);
