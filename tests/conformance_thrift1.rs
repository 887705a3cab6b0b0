//! The store conformance suite against a real HBase through its original
//! Thrift gateway (Thrift1, `hbase thrift start`; `scripts/hbase/hbase
//! start` runs one next to the Thrift2 gateways and prints its address as
//! `HMAP_THRIFT1`), on [`Thrift1Store`](hmap::store::Thrift1Store).
//!
//! The cases Thrift1 cannot express are listed, with the feature that
//! stops each, in `hmap_suite::conformance::THRIFT1_SKIPS`: their tests
//! check that the store refuses that feature with `StoreError::Unsupported`
//! and print that they were skipped. Every other case runs as on any
//! backend.

use hmap_suite::conformance::{CASES, THRIFT1_SKIPS};

hmap_suite::for_each_case!(
    hmap_suite::thrift1_cases,
    "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT1=host:port"
);

/// Needs no HBase: every skipped case is a case of the suite, listed once.
#[test]
fn skipped_cases_are_cases_of_the_suite() {
    for (i, (case, feature)) in THRIFT1_SKIPS.iter().enumerate() {
        assert!(CASES.contains(case), "THRIFT1_SKIPS lists `{case}`, which is no case");
        assert!(!feature.is_empty());
        assert!(
            THRIFT1_SKIPS[..i].iter().all(|(c, _)| c != case),
            "THRIFT1_SKIPS lists `{case}` twice"
        );
    }
}
