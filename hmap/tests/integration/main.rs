//! hmap's integration tests, one binary: each file was a test binary of its
//! own, compiled and linked apart (six links, and hmap's generic code
//! instantiated six times over); as modules of one crate they build once.

mod dynamic_codecs;
mod key_errors;
mod key_props;
mod key_vectors;
mod memory_store;
mod native_hbase;
