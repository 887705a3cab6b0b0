//! The store conformance suite (`hmap_suite::conformance`) on every
//! backend, in one test binary so that `cargo test` links hmap once for
//! them all: a module per backend and gateway mode. The cases on
//! `MemoryStore` run in every `cargo test`; the others need a real HBase
//! and are `#[ignore]`d (`-- --include-ignored` runs them, with the
//! addresses `scripts/hbase/hbase start` and `address` print). A filter
//! picks one backend: `cargo test --test conformance -- --include-ignored
//! native::`.

mod memory;
mod native;
mod thrift;
mod thrift1;
mod thrift1_compact;
mod thrift_compact;
mod thrift_framed;
