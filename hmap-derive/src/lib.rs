//! The `#[derive(HTable)]` macro of [hmap](https://docs.rs/hmap).
//!
//! This crate is an implementation detail: depend on `hmap`, which re-exports the
//! derive. It is filled in by the typed-table work; for now it only reserves the name.
