//! The typed API, the relation helpers, the examples, the seed designs,
//! migrations and schema checks, and a few checks against a real HBase (a
//! Python client, the Thrift store, op-by-op comparisons), in one test
//! binary so that `cargo test` links hmap once for them all: each module is
//! what was a test file of its own. They run on `MemoryStore`, or on a real
//! HBase when `HMAP_THRIFT` or `HMAP_NATIVE` is set (see the README).
//!
//! Kept apart, as binaries of their own: `native_regions` (moves and splits
//! regions under load), `thrift_faults` (restarts the gateway mid-run),
//! `thrift_reply_memory` (a counting global allocator), `native_zookeeper`
//! and the conformance suite.

mod batch_outcomes;
mod call_options;
mod differential;
mod error_chains;
mod examples;
mod filter_differential;
mod happybase;
mod load_faults;
mod migrate;
mod missing_family;
mod relations;
mod schema_check;
mod seed_designs;
mod thrift_store;
mod tree_of;
mod typed_filters;
mod typed_load;
