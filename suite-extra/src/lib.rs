//! hmap's integration tests that need proptest or TLS, in `tests/`: a
//! package of their own so that the examples of the root package build
//! without those crates (see this package's `Cargo.toml`).
