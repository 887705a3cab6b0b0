//! No library code: the package holds the derive's compile-error cases
//! (`tests/ui.rs`); see its Cargo.toml for why it is a package of its own.
