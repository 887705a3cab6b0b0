//! # hmap: a typed object mapper for Apache HBase
//!
//! Plain Rust structs mapped to HBase tables: composite rowkeys whose byte
//! order is the tuple order, column families with their options, typed
//! reads, writes and scans, and helpers for the relations HBase has no joins
//! for.
//!
//! This release holds the rowkey layer, [`key`]:
//!
//! ```
//! use hmap::key::{KeyFormat, KeySchema, PartKind, PartSpec, Segment};
//!
//! // The weibo post table of the seeds: <uid>_<Long.MAX_VALUE - millis>, as text.
//! let posts = KeySchema::new(KeyFormat::text(), vec![
//!     Segment::Part(PartSpec::new("uid", PartKind::Str)),
//!     Segment::Part(PartSpec::new("posted_at", PartKind::I64).reverse_ts()),
//! ])?;
//! let key = posts.encode(&("u001", 1_700_000_000_000i64))?;
//! assert_eq!(key, b"u001_9223370336854775807");
//! # Ok::<(), hmap::key::KeyError>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod key;
pub mod schema;
pub mod store;

// The README's examples compile and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

// So do the guide's.
#[cfg(doctest)]
#[doc = include_str!("../../docs/rowkeys.md")]
struct RowkeysGuideDoctests;
