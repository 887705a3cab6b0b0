//! # hmap: a typed object mapper for Apache HBase
//!
//! Plain Rust structs mapped to HBase tables: composite rowkeys whose byte
//! order is the tuple order, column families with their options, typed
//! reads, writes and scans, and helpers for the relations HBase has no joins
//! for. The package is `hmap-hbase` (the name `hmap` on crates.io belongs to
//! another crate); the library is `hmap`.
//!
//! hmap is async, on tokio: stores, tables and relation helpers return
//! futures, scans are `Stream`s, one connection pool serves every task, and
//! each call has one deadline. [`blocking`] wraps the same API for programs
//! without a runtime.
//!
//! ```
//! use chrono::{DateTime, Utc};
//! use hmap::store::MemoryStore;
//! use hmap::{HTable, Query, Table};
//!
//! /// The seeds' purchase records: one user's purchases are one prefix scan,
//! /// newest first. Rowkey: <user_id><Long.MAX_VALUE - millis><product_id>.
//! #[derive(HTable, Debug, PartialEq)]
//! #[hmap(table = "sale", family(name = "n", compression = "snappy"))]
//! struct Sale {
//!     #[hmap(key)]
//!     user_id: String,
//!     #[hmap(key, reverse_ts)]
//!     at: DateTime<Utc>,
//!     #[hmap(key)]
//!     product_id: u64,
//!     #[hmap(column = "p")] // short qualifiers, readable field names
//!     product: String,
//!     #[hmap(column = "q")]
//!     quantity: u32,
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), hmap::Error> {
//!     // What hmap creates, in the HBase shell's words:
//!     assert_eq!(
//!         Sale::table_schema().to_string(),
//!         "create 'sale', {NAME => 'n', VERSIONS => 1, COMPRESSION => 'SNAPPY'}, \
//!          METADATA => {'hmap.key' => 'binary: user_id: string + at: datetime reverse_ts + product_id: u64'}"
//!     );
//!     let sales = Table::<Sale, _>::new(MemoryStore::new());
//!     sales.create().await?;
//!     let day = |d: i64| DateTime::from_timestamp_millis(1_700_000_000_000 + d * 86_400_000).unwrap();
//!     for (d, product) in [(0, "tea"), (1, "cups"), (2, "kettle")] {
//!         sales.put(&Sale { user_id: "u42".into(), at: day(d), product_id: 7, product: product.into(), quantity: 1 }).await?;
//!     }
//!     sales.put(&Sale { user_id: "u43".into(), at: day(0), product_id: 8, product: "rice".into(), quantity: 5 }).await?;
//!
//!     // One user's purchases, newest first.
//!     let products: Vec<String> = sales
//!         .scan(Query::prefix("u42")).await?
//!         .into_vec().await?
//!         .into_iter()
//!         .map(|s| s.product)
//!         .collect();
//!     assert_eq!(products, ["kettle", "cups", "tea"]);
//!
//!     // One purchase by its whole key, and the key read back part by part.
//!     let rice = sales.get(("u43", day(0), 8u64)).await?.expect("stored");
//!     assert_eq!(rice.quantity, 5);
//!     let key = sales.row_key(("u43", day(0), 8u64))?;
//!     assert_eq!(
//!         sales.inspect_key(&key)?.to_string(),
//!         r#"user_id="u43" at=2023-11-14T22:13:20.000Z product_id=8"#
//!     );
//!     Ok(())
//! }
//! ```
//!
//! ## What it offers
//!
//! - [`HTable`](macro@HTable), the derive: key fields, families and their
//!   options (`VERSIONS`, `TTL`, `COMPRESSION`...), cell codecs (Java's
//!   `Bytes.toBytes`, JSON, text), dynamic columns, multi-version cells,
//!   counters, optimistic versions. Its documentation lists every attribute.
//! - [`Table`]: `create`, `create_if_missing` and `check_schema` (the
//!   struct checked against the live table: families, options, the key
//!   layout hmap records with the table), `truncate`, `drop`, `put`,
//!   `update`, `get`, `get_many`, `delete`,
//!   `scan` over a [`Query`] (prefixes, ranges, time ranges, reversed,
//!   pages with a [`Cursor`], fan-out over salt buckets), `increment`.
//! - [`key`]: the rowkey codec on its own: binary and readable text formats,
//!   descending parts, reverse timestamps, salts, MD5 prefixes, and a key
//!   inspector for debugging.
//! - [`store`]: the [`Store`](store::Store) trait and its backends:
//!   [`MemoryStore`](store::MemoryStore), in memory with HBase's semantics
//!   (versions, TTL, delete markers), for tests and development; and three
//!   backends for a real cluster, every one behind the same trait:
//!   `NativeStore` (`store::native`, feature `native`, on by default),
//!   HBase's own RPC to the masters and region servers with no gateway, the
//!   fastest; `ThriftStore`, a pooled client of HBase's Thrift2 gateway
//!   (feature `thrift`, on by default), every wire the gateway runs; and
//!   `Thrift1Store`, for clusters that run only the original Thrift1
//!   gateway (what it cannot express is a typed `Unsupported` error). The
//!   README's table says which to pick for which cluster. `FaultyStore`
//!   (feature `testing`) fails chosen calls, to test what happens when a
//!   write fails half-way.
//! - [`security`]: TLS (`security::Tls`, feature `tls`) and Kerberos
//!   (`security::Kerberos`, feature `kerberos`) for every backend that
//!   speaks them, and [`security::SecurityError`], how a refused handshake
//!   reads whichever backend ran it.
//! - [`blocking`]: the same API without an async runtime, each call waiting
//!   for its answer.
//! - [`relation`]: many-to-many lists, trees, inbox fan-out and secondary
//!   indexes kept across rows, with `verify` and `repair`.
//!
//! The guides in the repository's `docs/` cover the design topics (rowkeys,
//! families, dynamic columns, versions, scans, relations); their code is
//! compiled and run as doctests of this crate; `docs/schemas.md` says what
//! is checked when a table is opened; `docs/observability.md` lists the
//! spans, the metrics ([`store::metrics`], feature `metrics`) and how a
//! trace goes on into HBase ([`store::TraceContext`]).

// docs.rs (nightly rustdoc, `--cfg docsrs`) marks each item with the
// features it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
// No unsafe code, but for one module of the `kerberos` feature
// (`security::kerberos::gssapi`, the calls into MIT Kerberos'
// GSSAPI): there `deny`, which that module alone allows.
#![cfg_attr(not(feature = "kerberos"), forbid(unsafe_code))]
#![cfg_attr(feature = "kerberos", deny(unsafe_code))]
#![warn(missing_docs)]

pub mod blocking;
pub mod clock;
mod error;
pub mod key;
pub mod migrate;
pub mod relation;
pub mod schema;
pub mod security;
pub mod store;
pub mod table;
pub mod value;

pub use error::{Error, Result};
#[doc = include_str!("../docs/derive.md")]
pub use hmap_derive::HTable;
pub use table::{Cursor, Field, FieldInfo, FieldRole, Fields, HTable, Page, Query, Rows, Table, TableLoader, Where};
pub use value::Versioned;

/// What `#[derive(HTable)]` expands to refers to these, and only these.
/// Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private {
    pub use std::borrow::Cow;
    pub use std::vec::Vec;

    /// An alias, not a `use`: a re-export would change how the compiler
    /// names `bytes::Bytes` in the derive's error messages.
    pub type Bytes = bytes::Bytes;

    pub use crate::error::{Error, Result};
    pub use crate::key::{
        FromKeyPart, KeyArg, KeyError, KeyFormat, KeyOf, KeyPart, KeySchema, Order, PartKind, PartSpec, Segment, Width,
    };
    pub use crate::relation::TreeMapped;
    pub use crate::schema::{BloomType, Compression, FamilySchema};
    pub use crate::table::{Field, FieldInfo, FieldRole, HTable, RowReader, RowWriter};
    pub use crate::value::{CellValue, Codec, Json, Native, Text, ValueError, Versioned};

    /// Checks at compile time that a field's type has a default cell
    /// encoding, with the error at the field.
    pub const fn assert_cell_value<T: CellValue>() {}

    /// Checks at compile time that a key field's type is a key part.
    pub const fn assert_key_part<T: KeyPart>() {}
}

// The README's examples compile and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

// So do the guide's and the derive reference's.
#[cfg(doctest)]
#[doc = include_str!("../docs/rowkeys.md")]
struct RowkeysGuideDoctests;
#[cfg(doctest)]
#[doc = include_str!("../docs/families.md")]
struct FamiliesGuideDoctests;
#[cfg(doctest)]
#[doc = include_str!("../docs/dynamic-columns.md")]
struct DynamicColumnsGuideDoctests;
#[cfg(doctest)]
#[doc = include_str!("../docs/versions.md")]
struct VersionsGuideDoctests;
#[cfg(doctest)]
#[doc = include_str!("../docs/scans.md")]
struct ScansGuideDoctests;
#[cfg(doctest)]
#[doc = include_str!("../docs/relations.md")]
struct RelationsGuideDoctests;
#[cfg(doctest)]
#[doc = include_str!("../docs/guide.md")]
struct GettingStartedDoctests;
#[cfg(doctest)]
#[doc = include_str!("../docs/schemas.md")]
struct SchemasGuideDoctests;
#[cfg(doctest)]
#[doc = include_str!("../docs/migrations.md")]
struct MigrationsGuideDoctests;
#[cfg(doctest)]
#[doc = include_str!("../docs/observability.md")]
struct ObservabilityGuideDoctests;
