//! Helpers shared by hmap's examples, integration tests and benchmarks.
//!
//! Nothing here is part of hmap's API: the library is the `hmap` crate.

pub mod conformance;
