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

pub mod clock;
mod error;
pub mod key;
pub mod relation;
pub mod schema;
pub mod store;
pub mod table;
pub mod value;

pub use error::{Error, Result};
#[doc = include_str!("../../docs/derive.md")]
pub use hmap_derive::HTable;
pub use table::{Cursor, FieldInfo, FieldRole, HTable, Page, Query, Rows, Table};
pub use value::Versioned;

/// What `#[derive(HTable)]` expands to refers to these, and only these.
/// Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private {
    pub use std::borrow::Cow;
    pub use std::vec::Vec;

    pub use crate::error::{Error, Result};
    pub use crate::key::{
        FromKeyPart, KeyError, KeyFormat, KeyPart, KeySchema, Order, PartKind, PartSpec, Segment, Width,
    };
    pub use crate::schema::{BloomType, Compression, FamilySchema};
    pub use crate::table::{FieldInfo, FieldRole, HTable, RowReader, RowWriter};
    pub use crate::value::{CellValue, Codec, Json, Native, Text, Versioned};

    /// Checks at compile time that a field's type has a default cell
    /// encoding, with the error at the field.
    pub const fn assert_cell_value<T: CellValue>() {}

    /// Checks at compile time that a key field's type is a key part.
    pub const fn assert_key_part<T: KeyPart>() {}
}

// The README's examples compile and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

// So do the guide's and the derive reference's.
#[cfg(doctest)]
#[doc = include_str!("../../docs/rowkeys.md")]
struct RowkeysGuideDoctests;
#[cfg(doctest)]
#[doc = include_str!("../../docs/families.md")]
struct FamiliesGuideDoctests;
#[cfg(doctest)]
#[doc = include_str!("../../docs/dynamic-columns.md")]
struct DynamicColumnsGuideDoctests;
#[cfg(doctest)]
#[doc = include_str!("../../docs/versions.md")]
struct VersionsGuideDoctests;
#[cfg(doctest)]
#[doc = include_str!("../../docs/scans.md")]
struct ScansGuideDoctests;
#[cfg(doctest)]
#[doc = include_str!("../../docs/relations.md")]
struct RelationsGuideDoctests;
#[cfg(doctest)]
#[doc = include_str!("../../docs/guide.md")]
struct GettingStartedDoctests;
