//! The storage layer: raw bytes in, raw bytes out.
//!
//! [`Store`] is the interface the typed layer runs on. It knows rows,
//! families, qualifiers, timestamps and values as bytes, nothing of Rust
//! types. Four backends implement it: [`MemoryStore`], in memory with
//! HBase's semantics, for tests and examples; (with the `thrift` feature) a
//! client of HBase's Thrift2 gateway (`ThriftStore`) and one of its original
//! Thrift1 gateway (`Thrift1Store`, which refuses what Thrift1 cannot
//! express with [`StoreError::Unsupported`]); and (with the `native`
//! feature) `native::NativeStore`, which speaks HBase's own RPC to the
//! master and the region servers; and (with the `bigtable` feature)
//! `bigtable::BigtableStore`, on Cloud Bigtable's gRPC APIs (tested against
//! its emulator). [`Backend`] names one of the real ones at
//! run time, from a command line or the environment (`HMAP_THRIFT`,
//! `HMAP_NATIVE`, ...).
//!
//! ```
//! use hmap::schema::{FamilySchema, TableSchema};
//! use hmap::store::{Get, MemoryStore, RowMutation, Store};
//!
//! # #[tokio::main] async fn main() -> Result<(), hmap::store::StoreError> {
//! let store = MemoryStore::new();
//! store.create_table(&TableSchema::new("user").family(FamilySchema::new("i"))).await?;
//! store.mutate("user", &[RowMutation::new("u1").put("i", "name", "Ann")]).await?;
//! let row = store.get("user", &Get::new("u1")).await?.expect("the row exists");
//! assert_eq!(row.value("i", "name").as_deref(), Some(&b"Ann"[..]));
//! # Ok(()) }
//! ```

#[cfg(any(feature = "thrift", feature = "native"))]
pub mod backend;
#[cfg(feature = "bigtable")]
pub mod bigtable;
mod check;
mod error;
#[cfg(feature = "testing")]
mod faulty;
pub mod filter;
pub(crate) mod load;
mod memory;
pub mod metrics;
#[cfg(feature = "native")]
pub mod native;
mod options;
pub(crate) mod outcome;
#[cfg(any(feature = "thrift", feature = "native"))]
mod prefetch;
#[cfg(any(feature = "thrift", feature = "native"))]
pub(crate) mod probe;
#[cfg(feature = "thrift")]
mod thrift;
// TLS serves a backend: alone, the feature has nothing to do.
mod trace;

use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use futures_core::Stream;

use bytes::Bytes;

#[cfg(any(feature = "thrift", feature = "native"))]
pub use backend::{Backend, BackendError};
#[cfg(feature = "bigtable")]
pub use bigtable::BigtableStore;
pub use error::StoreError;
pub(crate) use error::show_row;
#[cfg(feature = "testing")]
pub use faulty::{FaultPlan, FaultPoint, FaultyStore};
pub use filter::Filter;
pub use load::{
    DEFAULT_LOAD_BYTES, DEFAULT_LOAD_ROWS, FailedRow, LoadBatch, LoadCell, LoadError, LoadRow, LoadRowWriter, Loader,
    LoaderRow,
};
pub use memory::{MemoryStore, MemoryStoreConfig};
#[cfg(any(feature = "thrift", feature = "native", feature = "bigtable"))]
pub(crate) use options::call_timeout;
pub use options::{CallOptions, WithOptions};
pub use outcome::{BatchOutcome, RowOutcome};
#[cfg(feature = "thrift")]
pub use thrift::{
    DEFAULT_MAX_REQUEST_BYTES, Thrift1Store, ThriftConfig, ThriftHttp, ThriftProtocol, ThriftStore,
    thrift1_unsupported, unsupported as thrift_unsupported,
};
pub(crate) use trace::traced;
pub use trace::{TraceContext, TraceContextSource};
// For the fuzz target only (`fuzz/fuzz_targets/decode_reply.rs`).
#[cfg(feature = "thrift")]
#[doc(hidden)]
pub use thrift::fuzz_reply as __fuzz_thrift_reply;

use crate::schema::{FamilySchema, TableSchema};

/// `Result` with [`StoreError`].
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// HBase's limit on row keys: `Short.MAX_VALUE` bytes (`HConstants.MAX_ROW_LENGTH`).
///
/// A table's rows are shorter still; see [`max_row_length`].
pub const MAX_ROW_LENGTH: usize = i16::MAX as usize;

/// The longest row key `table` can hold: [`MAX_ROW_LENGTH`] less the table
/// name and 16 bytes.
///
/// HBase's client finds a row's region by a `hbase:meta` key of the form
/// `<table>,<row>,99999999999999`, which is itself a row key and so at most
/// [`MAX_ROW_LENGTH`] bytes: a longer row is refused by every read and write
/// (`IllegalArgumentException` in `locateRegionInMeta`), though `Put` itself
/// accepts it. Both backends refuse such rows with
/// [`StoreError::InvalidRow`].
///
/// ```
/// assert_eq!(hmap::store::max_row_length("user"), 32_747);
/// ```
pub fn max_row_length(table: &str) -> usize {
    MAX_ROW_LENGTH.saturating_sub(table.len() + META_KEY_OVERHEAD)
}

/// The two commas and the 14-digit region id of a `hbase:meta` key.
const META_KEY_OVERHEAD: usize = 16;

/// One version of one cell. `#[non_exhaustive]`: a backend builds one
/// with [`Cell::new`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Cell {
    /// The column family.
    pub family: Bytes,
    /// The qualifier (may be empty).
    pub qualifier: Bytes,
    /// Milliseconds since the epoch, unless the application chose otherwise.
    pub timestamp: i64,
    /// The value.
    pub value: Bytes,
}

impl Cell {
    /// A cell's version.
    pub fn new(family: impl Into<Bytes>, qualifier: impl Into<Bytes>, timestamp: i64, value: impl Into<Bytes>) -> Self {
        Cell {
            family: family.into(),
            qualifier: qualifier.into(),
            timestamp,
            value: value.into(),
        }
    }
}

/// A row as read: its cells sorted by family, qualifier, then timestamp
/// newest first, as HBase returns them.
/// `#[non_exhaustive]`: a backend builds one with [`RowResult::new`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct RowResult {
    /// The row key.
    pub row: Bytes,
    /// The cells.
    pub cells: Vec<Cell>,
}

impl RowResult {
    /// A row and its cells (sorted as the type says).
    pub fn new(row: impl Into<Bytes>, cells: Vec<Cell>) -> Self {
        RowResult { row: row.into(), cells }
    }

    /// About how many bytes the row takes on the wire: its key, and each
    /// cell's family, qualifier, value and timestamp. What scans sized by
    /// bytes count.
    pub fn wire_size(&self) -> usize {
        self.row.len()
            + self
                .cells
                .iter()
                .map(|c| c.family.len() + c.qualifier.len() + c.value.len() + 8)
                .sum::<usize>()
    }

    /// The newest version of a column.
    pub fn latest(&self, family: impl AsRef<[u8]>, qualifier: impl AsRef<[u8]>) -> Option<&Cell> {
        let (family, qualifier) = (family.as_ref(), qualifier.as_ref());
        self.cells
            .iter()
            .find(|c| c.family == family && c.qualifier == qualifier)
    }

    /// The newest value of a column.
    pub fn value(&self, family: impl AsRef<[u8]>, qualifier: impl AsRef<[u8]>) -> Option<Bytes> {
        self.latest(family, qualifier).map(|c| c.value.clone())
    }

    /// Every version of a column, newest first.
    pub fn versions<'a>(&'a self, family: &'a [u8], qualifier: &'a [u8]) -> impl Iterator<Item = &'a Cell> + 'a {
        self.cells
            .iter()
            .filter(move |c| c.family == family && c.qualifier == qualifier)
    }

    /// Every cell of a family.
    pub fn family<'a>(&'a self, family: &'a [u8]) -> impl Iterator<Item = &'a Cell> + 'a {
        self.cells.iter().filter(move |c| c.family == family)
    }
}

/// A column selection: a whole family, or one column.
///
/// A read's columns are a set: it returns every cell that any of them
/// selects. A whole family therefore includes every single column of it
/// listed beside it, whatever the order. (HBase's Java `Get` and `Scan`, and
/// so its Thrift gateway, depend on the order instead: `addColumn` after
/// `addFamily` narrows the family to that column, `addFamily` after
/// `addColumn` widens it again. [`Get::family`], [`Get::column`] and their
/// [`Scan`] twins keep the list free of such pairs, and
/// [`selected_columns`] removes them from a list built by hand, so that
/// every backend reads the same cells.)
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Column {
    /// Every column of a family.
    Family(Bytes),
    /// One column.
    Qualifier(Bytes, Bytes),
}

impl Column {
    /// The family selected from.
    pub fn family(&self) -> &Bytes {
        match self {
            Column::Family(f) | Column::Qualifier(f, _) => f,
        }
    }
}

/// A read's columns as the set they select: without a column named twice
/// (the first kept) and without the single columns of a family that is
/// also selected whole. The same cells, in a form that every backend reads
/// alike (see [`Column`]; HBase's `Get` keeps each family's qualifiers in a
/// set). Borrows when there is nothing to remove.
///
/// ```
/// use hmap::store::{Column, selected_columns};
///
/// let columns = [
///     Column::Family("a".into()),
///     Column::Qualifier("a".into(), "r".into()),
///     Column::Qualifier("b".into(), "s".into()),
///     Column::Qualifier("b".into(), "s".into()),
/// ];
/// assert_eq!(
///     selected_columns(&columns)[..],
///     [Column::Family("a".into()), Column::Qualifier("b".into(), "s".into())]
/// );
/// ```
pub fn selected_columns(columns: &[Column]) -> std::borrow::Cow<'_, [Column]> {
    let whole = |family: &Bytes| columns.iter().any(|c| matches!(c, Column::Family(f) if f == family));
    // Kept: neither a qualifier of a family read whole nor a repeat of an
    // earlier column (quadratic, as a read names a handful of columns).
    let kept =
        |(i, c): &(usize, &Column)| !matches!(c, Column::Qualifier(f, _) if whole(f)) && !columns[..*i].contains(c);
    if columns.iter().enumerate().all(|ic| kept(&ic)) {
        return std::borrow::Cow::Borrowed(columns);
    }
    std::borrow::Cow::Owned(
        columns
            .iter()
            .enumerate()
            .filter(kept)
            .map(|(_, c)| c.clone())
            .collect(),
    )
}

/// Timestamps from `min` (inclusive) to `max` (exclusive), as HBase's
/// `TimeRange`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimeRange {
    /// The first timestamp included.
    pub min: i64,
    /// The first timestamp excluded.
    pub max: i64,
}

impl TimeRange {
    /// Every timestamp.
    pub const ALL: TimeRange = TimeRange { min: 0, max: i64::MAX };

    /// `[min, max)`.
    pub const fn new(min: i64, max: i64) -> Self {
        TimeRange { min, max }
    }

    /// Exactly one timestamp.
    pub const fn at(timestamp: i64) -> Self {
        TimeRange {
            min: timestamp,
            max: timestamp.saturating_add(1),
        }
    }

    /// Whether `timestamp` is in the range.
    pub const fn contains(&self, timestamp: i64) -> bool {
        self.min <= timestamp && timestamp < self.max
    }

    /// Whether the range includes every timestamp.
    pub const fn is_all(&self) -> bool {
        self.min <= 0 && self.max == i64::MAX
    }
}

impl Default for TimeRange {
    fn default() -> Self {
        TimeRange::ALL
    }
}

/// The read options [`Get`] and [`Scan`] share: which columns, how many
/// versions, which time range.
macro_rules! read_options {
    () => {
        /// Also read this family: every column of it, also those selected
        /// one by one before or after (see [`Column`]).
        pub fn family(mut self, family: impl Into<Bytes>) -> Self {
            let family = family.into();
            self.columns
                .retain(|c| !matches!(c, Column::Qualifier(f, _) if *f == family));
            if !self.columns.contains(&Column::Family(family.clone())) {
                self.columns.push(Column::Family(family));
            }
            self
        }

        /// Also read this column; nothing changes if its family is selected
        /// whole (see [`Column`]).
        pub fn column(mut self, family: impl Into<Bytes>, qualifier: impl Into<Bytes>) -> Self {
            let family = family.into();
            if !self.columns.contains(&Column::Family(family.clone())) {
                self.columns.push(Column::Qualifier(family, qualifier.into()));
            }
            self
        }

        /// Read up to `n` versions per column.
        pub fn max_versions(mut self, n: u32) -> Self {
            self.max_versions = n;
            self
        }

        /// Read only cells in this time range.
        pub fn time_range(mut self, range: TimeRange) -> Self {
            self.time_range = range;
            self
        }

        /// Apply this filter where the data is (see [`filter`](crate::store::filter)).
        pub fn filter(mut self, filter: impl Into<Filter>) -> Self {
            self.filter = Some(filter.into());
            self
        }
    };
}

/// Reads one row. Built with [`Get::new`] and the builder methods
/// (`#[non_exhaustive]`: read options will be added).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Get {
    /// The row key.
    pub row: Bytes,
    /// The columns to read, a set (see [`Column`]); empty reads every family.
    pub columns: Vec<Column>,
    /// Versions per column, at most the family's `VERSIONS` (default 1).
    pub max_versions: u32,
    /// Only cells with timestamps in this range.
    pub time_range: TimeRange,
    /// A server-side filter (see [`filter`]).
    pub filter: Option<Filter>,
}

impl Get {
    /// The newest version of every column of a row.
    pub fn new(row: impl Into<Bytes>) -> Self {
        Get {
            row: row.into(),
            columns: Vec::new(),
            max_versions: 1,
            time_range: TimeRange::ALL,
            filter: None,
        }
    }

    read_options!();
}

/// Reads a range of rows.
///
/// Rows from `start` (inclusive) to `stop` (exclusive), ascending, or
/// descending when `reversed`. The range is always given low to high, also for
/// reversed scans (unlike HBase's Java API, where a reversed scan starts at its
/// high end): `Scan::prefix(p).reversed()` reads every row with prefix `p`,
/// last first.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Scan {
    /// The lowest row included; empty is the table's start.
    pub start: Bytes,
    /// The first row past the range; empty is the table's end. A stop at or
    /// below the start makes the range empty (see [`Scan::range`]).
    pub stop: Bytes,
    /// Newest rows first.
    pub reversed: bool,
    /// The columns to read, a set (see [`Column`]); empty reads every family.
    pub columns: Vec<Column>,
    /// Versions per column, at most the family's `VERSIONS` (default 1).
    pub max_versions: u32,
    /// Only cells with timestamps in this range.
    pub time_range: TimeRange,
    /// A server-side filter (see [`filter`]).
    pub filter: Option<Filter>,
    /// At most this many rows.
    pub limit: Option<usize>,
    /// Rows fetched per round trip (HBase's scanner caching), at least 1.
    /// `None`, the default, sizes each round trip by bytes instead: about
    /// [`batch_bytes`](Self::batch_bytes) of rows, as HBase's own client
    /// sizes its batches by `hbase.client.scanner.max.result.size`.
    pub batch_size: Option<usize>,
    /// With no `batch_size`: about how many bytes of rows one round trip
    /// fetches. `None`, the default, leaves it to the backend:
    /// [`DEFAULT_BATCH_BYTES`] (2 MiB, HBase's) on NativeStore,
    /// [`GATEWAY_BATCH_BYTES`] (128 KiB) through a Thrift gateway.
    pub batch_bytes: Option<usize>,
}

/// How many bytes of rows a scan fetches from a region server per round
/// trip unless told otherwise: 2 MiB, the default
/// `hbase.client.scanner.max.result.size` of HBase's own client.
pub const DEFAULT_BATCH_BYTES: usize = 2 * 1024 * 1024;

/// How many bytes of rows a scan fetches from a Thrift gateway per round
/// trip unless told otherwise: 128 KiB. The gateway reads each batch from
/// the region servers before it answers, so smaller batches keep both
/// sides busy: a full scan of 100,000 rows of 180 bytes took 0.84 s with
/// 2 MiB batches and 0.61-0.67 s with 128 KiB ones, as fast as 1,000 rows
/// a call (docs/benchmarks.md).
pub const GATEWAY_BATCH_BYTES: usize = 128 * 1024;

/// The rows of the first round trip of a scan sized by bytes, before any
/// row was seen: small, so that a scan of large rows does not start with a
/// huge batch.
pub const FIRST_SIZED_BATCH_ROWS: usize = 100;

/// The most rows a round trip sized by bytes asks for, however small the
/// rows: a gateway holds a whole batch in memory before it answers.
pub const MAX_SIZED_BATCH_ROWS: usize = 10_000;

impl Default for Scan {
    fn default() -> Self {
        Scan {
            start: Bytes::new(),
            stop: Bytes::new(),
            reversed: false,
            columns: Vec::new(),
            max_versions: 1,
            time_range: TimeRange::ALL,
            filter: None,
            limit: None,
            batch_size: None,
            batch_bytes: None,
        }
    }
}

impl Scan {
    /// Every row.
    pub fn all() -> Self {
        Scan::default()
    }

    /// Rows from `start` (inclusive) to `stop` (exclusive; empty for no end).
    ///
    /// The range is half-open however it is given: a stop equal to the
    /// start, or below it, reads nothing, forward and reversed, as HBase's
    /// `Scan.withStopRow` (exclusive) reads it. (HBase's Thrift gateway sets
    /// the stop with the deprecated `Scan.setStopRow` instead, which keeps
    /// "the old behavior that a scan with the same start and stop row is a
    /// get scan"; backends do not send such a scan, see
    /// [`Scan::is_empty_range`].) Code that pages through a range can thus
    /// move either bound to the last row read, and read nothing once they
    /// meet.
    ///
    /// ```
    /// use hmap::store::Scan;
    ///
    /// assert!(Scan::range("b", "b").is_empty_range());
    /// assert!(!Scan::range("b", "b\0").is_empty_range());
    /// ```
    pub fn range(start: impl Into<Bytes>, stop: impl Into<Bytes>) -> Self {
        Scan {
            start: start.into(),
            stop: stop.into(),
            ..Scan::default()
        }
    }

    /// Rows whose key starts with `prefix`.
    pub fn prefix(prefix: impl Into<Bytes>) -> Self {
        let prefix = prefix.into();
        let stop = prefix_end(&prefix);
        Scan {
            start: prefix,
            stop,
            ..Scan::default()
        }
    }

    /// Last row first.
    pub fn reversed(mut self) -> Self {
        self.reversed = true;
        self
    }

    read_options!();

    /// Return at most `n` rows.
    pub fn limit(mut self, n: usize) -> Self {
        self.limit = Some(n);
        self
    }

    /// Fetch `n` rows per round trip (at least 1), rather than sizing each
    /// round trip by bytes.
    pub fn batch_size(mut self, n: usize) -> Self {
        self.batch_size = Some(n.max(1));
        self
    }

    /// Size each round trip to about `bytes` of rows (at least 1 row), when
    /// no [`batch_size`](Self::batch_size) is set.
    pub fn batch_bytes(mut self, bytes: usize) -> Self {
        self.batch_bytes = Some(bytes.max(1));
        self
    }

    /// The rows of the next round trip of a scan sized by bytes, after a
    /// round trip that fetched `rows` rows of `bytes` bytes in all: as many
    /// rows of that average size as fit in the budget (the scan's, else
    /// `default_budget`), from 1 to [`MAX_SIZED_BATCH_ROWS`]. Backends whose
    /// server cannot size batches by bytes use it.
    ///
    /// ```
    /// use hmap::store::{FIRST_SIZED_BATCH_ROWS, MAX_SIZED_BATCH_ROWS, Scan};
    ///
    /// let scan = Scan::all().batch_bytes(2000);
    /// assert_eq!(scan.next_sized_batch(0, 0, 1 << 20), FIRST_SIZED_BATCH_ROWS);
    /// assert_eq!(scan.next_sized_batch(100, 10_000, 1 << 20), 20); // 100-byte rows
    /// assert_eq!(scan.next_sized_batch(1, 1_000_000, 1 << 20), 1); // a huge row
    /// assert_eq!(scan.next_sized_batch(10, 10, 1 << 20), MAX_SIZED_BATCH_ROWS.min(2000));
    /// assert_eq!(Scan::all().next_sized_batch(100, 10_000, 5_000), 50); // the default budget
    /// assert_eq!(Scan::all().batch_size(7).next_sized_batch(100, 10, 1 << 20), 7);
    /// ```
    pub fn next_sized_batch(&self, rows: usize, bytes: usize, default_budget: usize) -> usize {
        match self.batch_size {
            Some(n) => n,
            None if rows == 0 => FIRST_SIZED_BATCH_ROWS,
            None => {
                let average = (bytes / rows).max(1);
                (self.batch_bytes.unwrap_or(default_budget) / average).clamp(1, MAX_SIZED_BATCH_ROWS)
            }
        }
    }

    /// Whether `row` is in the scan's range.
    pub fn contains(&self, row: &[u8]) -> bool {
        row >= &self.start[..] && (self.stop.is_empty() || row < &self.stop[..])
    }

    /// Whether the range holds no row at all: its stop is at or below its
    /// start. Every backend answers such a scan with no rows without asking
    /// storage: HBase's Thrift gateway would read a stop equal to the start
    /// as a one-row get (see [`Scan::range`]).
    pub fn is_empty_range(&self) -> bool {
        !self.stop.is_empty() && self.start >= self.stop
    }
}

/// The first key after every key that starts with `prefix`: the prefix with
/// its last byte below 0xFF incremented and what follows dropped. Empty (no
/// end) when the prefix is empty or all 0xFF.
pub fn prefix_end(prefix: &[u8]) -> Bytes {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return Bytes::from(end);
        }
    }
    Bytes::new()
}

/// One change to a row. `#[non_exhaustive]`: kinds of change will be
/// added, so a `match` needs a wildcard arm.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Mutation {
    /// Writes a cell, at `timestamp` or the current time.
    Put {
        /// The family.
        family: Bytes,
        /// The qualifier.
        qualifier: Bytes,
        /// The value.
        value: Bytes,
        /// The version's timestamp; `None` for the current time.
        timestamp: Option<i64>,
    },
    /// Deletes one version of a column: the one at `timestamp`, or the newest.
    DeleteCell {
        /// The family.
        family: Bytes,
        /// The qualifier.
        qualifier: Bytes,
        /// The version; `None` for the newest.
        timestamp: Option<i64>,
    },
    /// Deletes every version of a column up to `up_to` (inclusive), or up to now.
    DeleteColumn {
        /// The family.
        family: Bytes,
        /// The qualifier.
        qualifier: Bytes,
        /// The newest timestamp deleted; `None` for now.
        up_to: Option<i64>,
    },
    /// Deletes every cell of a family up to `up_to` (inclusive), or up to now.
    DeleteFamily {
        /// The family.
        family: Bytes,
        /// The newest timestamp deleted; `None` for now.
        up_to: Option<i64>,
    },
    /// Deletes every cell of the row up to `up_to` (inclusive), or up to now.
    DeleteRow {
        /// The newest timestamp deleted; `None` for now.
        up_to: Option<i64>,
    },
}

impl Mutation {
    /// The family the mutation touches (none for a row delete).
    pub fn family(&self) -> Option<&Bytes> {
        match self {
            Mutation::Put { family, .. }
            | Mutation::DeleteCell { family, .. }
            | Mutation::DeleteColumn { family, .. }
            | Mutation::DeleteFamily { family, .. } => Some(family),
            Mutation::DeleteRow { .. } => None,
        }
    }
}

/// What [`RowMutation::wire_size`] and [`LoadRow::wire_size`] count for each
/// change besides its family, qualifier and value: a Thrift2
/// `TColumnValue`'s field headers, timestamp and end take 33 bytes at most.
pub const MUTATION_FRAMING: usize = 33;

/// Changes to one row, applied atomically: readers see all of them or none.
/// Built with [`RowMutation::new`] and the builder methods, or
/// [`RowMutation::with`] (`#[non_exhaustive]`: options such as durability
/// will be added).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct RowMutation {
    /// The row key.
    pub row: Bytes,
    /// The changes, in order. Cells without a timestamp all get the same
    /// current time.
    pub mutations: Vec<Mutation>,
}

impl RowMutation {
    /// A row's changes, given whole.
    pub fn with(row: impl Into<Bytes>, mutations: Vec<Mutation>) -> Self {
        RowMutation {
            row: row.into(),
            mutations,
        }
    }

    /// No changes yet.
    pub fn new(row: impl Into<Bytes>) -> Self {
        RowMutation {
            row: row.into(),
            mutations: Vec::new(),
        }
    }

    /// No changes yet, with room for `mutations` of them: a row built with
    /// a known number of cells then grows its list once, not by doubling.
    ///
    /// ```
    /// use hmap::store::RowMutation;
    ///
    /// let row = RowMutation::with_capacity("u0001", 2)
    ///     .put("p", "item", "book")
    ///     .put("p", "shop", "north");
    /// assert_eq!(row.mutations.len(), 2);
    /// ```
    pub fn with_capacity(row: impl Into<Bytes>, mutations: usize) -> Self {
        RowMutation {
            row: row.into(),
            mutations: Vec::with_capacity(mutations),
        }
    }

    /// Writes a cell at the current time.
    pub fn put(self, family: impl Into<Bytes>, qualifier: impl Into<Bytes>, value: impl Into<Bytes>) -> Self {
        self.push(Mutation::Put {
            family: family.into(),
            qualifier: qualifier.into(),
            value: value.into(),
            timestamp: None,
        })
    }

    /// Writes a cell at a chosen timestamp.
    pub fn put_at(
        self,
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        timestamp: i64,
        value: impl Into<Bytes>,
    ) -> Self {
        self.push(Mutation::Put {
            family: family.into(),
            qualifier: qualifier.into(),
            value: value.into(),
            timestamp: Some(timestamp),
        })
    }

    /// Deletes the newest version of a column.
    pub fn delete_latest(self, family: impl Into<Bytes>, qualifier: impl Into<Bytes>) -> Self {
        self.push(Mutation::DeleteCell {
            family: family.into(),
            qualifier: qualifier.into(),
            timestamp: None,
        })
    }

    /// Deletes the version of a column at `timestamp`.
    pub fn delete_version(self, family: impl Into<Bytes>, qualifier: impl Into<Bytes>, timestamp: i64) -> Self {
        self.push(Mutation::DeleteCell {
            family: family.into(),
            qualifier: qualifier.into(),
            timestamp: Some(timestamp),
        })
    }

    /// Deletes every version of a column.
    pub fn delete_column(self, family: impl Into<Bytes>, qualifier: impl Into<Bytes>) -> Self {
        self.push(Mutation::DeleteColumn {
            family: family.into(),
            qualifier: qualifier.into(),
            up_to: None,
        })
    }

    /// Deletes every version of a column up to `timestamp`.
    pub fn delete_column_up_to(self, family: impl Into<Bytes>, qualifier: impl Into<Bytes>, timestamp: i64) -> Self {
        self.push(Mutation::DeleteColumn {
            family: family.into(),
            qualifier: qualifier.into(),
            up_to: Some(timestamp),
        })
    }

    /// Deletes every cell of a family.
    pub fn delete_family(self, family: impl Into<Bytes>) -> Self {
        self.push(Mutation::DeleteFamily {
            family: family.into(),
            up_to: None,
        })
    }

    /// Deletes every cell of a family up to `timestamp`.
    pub fn delete_family_up_to(self, family: impl Into<Bytes>, timestamp: i64) -> Self {
        self.push(Mutation::DeleteFamily {
            family: family.into(),
            up_to: Some(timestamp),
        })
    }

    /// Deletes the whole row.
    pub fn delete_row(self) -> Self {
        self.push(Mutation::DeleteRow { up_to: None })
    }

    /// About how many bytes the row's changes take in a request: its key,
    /// and each mutation's family, qualifier and value, plus
    /// [`MUTATION_FRAMING`] for the rest (field headers, timestamp, type).
    /// What write calls sized by bytes count.
    pub fn wire_size(&self) -> usize {
        let cells: usize = self
            .mutations
            .iter()
            .map(|m| {
                let (family, qualifier, value) = match m {
                    Mutation::Put {
                        family,
                        qualifier,
                        value,
                        ..
                    } => (family.len(), qualifier.len(), value.len()),
                    Mutation::DeleteCell { family, qualifier, .. }
                    | Mutation::DeleteColumn { family, qualifier, .. } => (family.len(), qualifier.len(), 0),
                    Mutation::DeleteFamily { family, .. } => (family.len(), 0, 0),
                    Mutation::DeleteRow { .. } => (0, 0, 0),
                };
                family + qualifier + value + MUTATION_FRAMING
            })
            .sum();
        self.row.len() + cells
    }

    /// Adds any mutation.
    pub fn push(mut self, mutation: Mutation) -> Self {
        self.mutations.push(mutation);
        self
    }
}

/// Applies mutations to a row only if a condition on it holds: one
/// column's newest value compared with a given one, or a filter (HBase's
/// `CheckAndMutate`, whose fields these are). Built with
/// [`CheckAndMutate::new`] or [`CheckAndMutate::when_filter`] and the
/// builder methods.
///
/// The comparison reads `stored op given`, as filters do
/// ([`filter`]): `.compare(CompareOp::Less)` passes
/// when the stored value sorts below `expected`. (HBase's own
/// `checkAndMutate` reads `given op stored`; backends send the mirrored
/// operator.)
///
/// ```
/// use hmap::store::filter::CompareOp;
/// use hmap::store::{CheckAndMutate, RowMutation};
///
/// // Lower the price only if the stored one is higher.
/// let op = CheckAndMutate::new(RowMutation::new("item1").put("p", "price", "0042"), "p", "price", Some("0042".into()))
///     .compare(CompareOp::Greater);
/// assert_eq!(op.compare, CompareOp::Greater);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct CheckAndMutate {
    /// The row checked and changed.
    pub row: Bytes,
    /// The family of the checked column (unused with a [`filter`](Self::filter)).
    pub family: Bytes,
    /// The qualifier of the checked column (unused with a [`filter`](Self::filter)).
    pub qualifier: Bytes,
    /// How the column's newest value in [`time_range`](Self::time_range) is
    /// compared with `expected`: `stored op expected`. Default
    /// [`CompareOp::Equal`](filter::CompareOp::Equal).
    /// [`CompareOp::NoOp`](filter::CompareOp::NoOp) compares nothing and is
    /// refused with [`StoreError::InvalidRequest`] (HBase's region fails on
    /// it, "Unknown Compare op", once a value is compared).
    pub compare: filter::CompareOp,
    /// The value compared with; `None` tests for absence.
    ///
    /// An empty value and `None` mean the same, as in HBase: "absent or
    /// empty". A check for `Some("")` passes when the column is absent, and
    /// a check for `None` passes when it holds an empty value
    /// (`HRegion.checkAndMutateInternal`: `valueIsNull` is a null *or empty*
    /// comparator value, and then an empty cell matches). With `None` (or
    /// empty), [`CompareOp::NotEqual`](filter::CompareOp::NotEqual) passes
    /// when the column holds a non-empty value, and every other operator
    /// when it does not. With a non-empty value expected, an absent column
    /// fails every operator, `NotEqual` included, and an empty one compares
    /// as the empty value, below any other (all checked on HBase 2.6.1).
    ///
    /// When the check passes, puts without a timestamp are stamped no older
    /// than the checked cell, `max(now, checked cell's timestamp)`, so that a
    /// checked cell from the future does not hide the write (HBase: "ensure
    /// write is not eclipsed", HBASE-14054).
    pub expected: Option<Bytes>,
    /// Only the versions in this range are looked at (default: all).
    pub time_range: TimeRange,
    /// The condition is this filter instead of a column: it passes when the
    /// filter leaves any cell of the row (in [`time_range`](Self::time_range)),
    /// HBase 2.4's `CheckAndMutate.Builder.ifMatches(Filter)`.
    pub filter: Option<Filter>,
    /// The changes applied, atomically, when the check passes.
    pub mutations: Vec<Mutation>,
}

impl CheckAndMutate {
    /// Applies `mutation` if the column holds `expected` (or is absent, for `None`).
    pub fn new(
        mutation: RowMutation,
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        expected: Option<Bytes>,
    ) -> Self {
        CheckAndMutate {
            row: mutation.row,
            family: family.into(),
            qualifier: qualifier.into(),
            compare: filter::CompareOp::Equal,
            expected,
            time_range: TimeRange::ALL,
            filter: None,
            mutations: mutation.mutations,
        }
    }

    /// Applies `mutation` if `filter` leaves any cell of its row.
    pub fn when_filter(mutation: RowMutation, filter: impl Into<Filter>) -> Self {
        CheckAndMutate {
            filter: Some(filter.into()),
            ..CheckAndMutate::new(mutation, Bytes::new(), Bytes::new(), None)
        }
    }

    /// Compares with `op` instead of equality: `stored op expected`.
    pub fn compare(mut self, op: filter::CompareOp) -> Self {
        self.compare = op;
        self
    }

    /// Looks only at versions in `range`.
    pub fn time_range(mut self, range: TimeRange) -> Self {
        self.time_range = range;
        self
    }
}

/// Appends bytes to the values of columns of one row atomically (HBase's
/// `Append`): a missing column starts empty. Answers with the new values.
///
/// Sent with a nonce where the backend has one (NativeStore), so that a
/// retry after a lost reply is applied once.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Append {
    /// The row.
    pub row: Bytes,
    /// `(family, qualifier, bytes appended)` for each column.
    pub columns: Vec<(Bytes, Bytes, Bytes)>,
}

impl Append {
    /// No columns yet.
    pub fn new(row: impl Into<Bytes>) -> Self {
        Append {
            row: row.into(),
            columns: Vec::new(),
        }
    }

    /// Appends `value` to a column.
    pub fn add(mut self, family: impl Into<Bytes>, qualifier: impl Into<Bytes>, value: impl Into<Bytes>) -> Self {
        self.columns.push((family.into(), qualifier.into(), value.into()));
        self
    }

    /// The get that reads the appended columns back: for a server that
    /// applied the append and answered without their values (see
    /// [`Increment::read_back`]).
    #[cfg(any(feature = "thrift", feature = "native"))]
    pub(crate) fn read_back(&self) -> Get {
        read_back(&self.row, self.columns.iter().map(|(f, q, _)| (f, q)))
    }

    /// Whether `row`, a server's answer to the append, holds a value for
    /// each column.
    #[cfg(any(feature = "thrift", feature = "native"))]
    pub(crate) fn answered_by(&self, row: Option<&RowResult>) -> bool {
        answered_by(row, self.columns.iter().map(|(f, q, _)| (f, q)))
    }

    /// The answer to the append: the newest cell of each appended column
    /// that `row` holds, sorted as HBase sorts a row's cells.
    #[cfg(any(feature = "thrift", feature = "native", feature = "bigtable"))]
    pub(crate) fn answer(&self, row: Option<RowResult>) -> RowResult {
        let mut cells: Vec<Cell> = self
            .columns
            .iter()
            .filter_map(|(family, qualifier, _)| row.as_ref()?.latest(family, qualifier).cloned())
            .collect();
        cells.sort_by(|a, b| (&a.family, &a.qualifier).cmp(&(&b.family, &b.qualifier)));
        RowResult::new(self.row.clone(), cells)
    }
}

/// Adds to counter columns of one row atomically. A counter is an 8-byte
/// big-endian `i64` cell, as HBase stores it; a missing one starts at 0.
///
/// Each column may appear once: an increment naming a column twice is
/// refused with [`StoreError::InvalidRequest`] before anything is sent.
/// (HBase adds each amount to the same old value, keeps the last sum, and
/// answers with a cell per amount.)
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Increment {
    /// The row.
    pub row: Bytes,
    /// `(family, qualifier, amount)` for each counter.
    pub columns: Vec<(Bytes, Bytes, i64)>,
}

impl Increment {
    /// No counters yet.
    pub fn new(row: impl Into<Bytes>) -> Self {
        Increment {
            row: row.into(),
            columns: Vec::new(),
        }
    }

    /// Adds `amount` to a counter.
    pub fn add(mut self, family: impl Into<Bytes>, qualifier: impl Into<Bytes>, amount: i64) -> Self {
        self.columns.push((family.into(), qualifier.into(), amount));
        self
    }

    /// The get that reads the counters back: for a server that applied the
    /// increment and answered without their values (HBase answers so when
    /// a retry of it, sent again after a lost reply, is recognised by its
    /// nonce on some paths; seen through a Thrift gateway).
    #[cfg(any(feature = "thrift", feature = "native"))]
    pub(crate) fn read_back(&self) -> Get {
        read_back(&self.row, self.columns.iter().map(|(f, q, _)| (f, q)))
    }

    /// Whether `row`, a server's answer to the increment, holds a value
    /// for each counter.
    #[cfg(any(feature = "thrift", feature = "native"))]
    pub(crate) fn answered_by(&self, row: Option<&RowResult>) -> bool {
        answered_by(row, self.columns.iter().map(|(f, q, _)| (f, q)))
    }
}

/// The get of these columns of `row`: how an increment or an append is
/// read back when the server applied it without answering its values.
#[cfg(any(feature = "thrift", feature = "native"))]
fn read_back<'a>(row: &Bytes, columns: impl Iterator<Item = (&'a Bytes, &'a Bytes)>) -> Get {
    columns.fold(Get::new(row.clone()), |get, (family, qualifier)| {
        get.column(family.clone(), qualifier.clone())
    })
}

/// Whether `row`, a server's answer to an increment or an append, holds a
/// value of each of these columns.
#[cfg(any(feature = "thrift", feature = "native"))]
fn answered_by<'a>(row: Option<&RowResult>, mut columns: impl Iterator<Item = (&'a Bytes, &'a Bytes)>) -> bool {
    columns.all(|(family, qualifier)| row.is_some_and(|r| r.latest(family, qualifier).is_some()))
}

/// The rows of a scan, a [`Stream`] fetched in batches; a server-side
/// scanner fetches the next batch while the caller works through the
/// current one. Dropping it releases the scanner (on a server, closes it).
pub type RowStream<'a> = Pin<Box<dyn Stream<Item = Result<RowResult>> + Send + 'a>>;

/// A storage backend with HBase's data model.
///
/// Asynchronous (on tokio) and thread-safe: share one store between tasks
/// and threads (it is `Send + Sync`; wrap it in an [`Arc`] or borrow it). The
/// trait is object-safe (`Arc<dyn Store>`): its futures are boxed, through
/// [`async_trait`](https://docs.rs/async-trait), which costs one allocation
/// per call, small beside a round trip to a server. Every method names the
/// table it works on; errors name the table, row and column involved. A
/// synchronous API over it is in [`hmap::blocking`](crate::blocking).
#[async_trait]
pub trait Store: Send + Sync {
    /// Creates a table. Fails if it exists or the schema is invalid.
    async fn create_table(&self, schema: &TableSchema) -> Result<()>;

    /// Deletes a table and its data.
    async fn delete_table(&self, table: &str) -> Result<()>;

    /// Deletes every row of a table, keeping the table, its schema and its
    /// split points (HBase: `truncate_preserve`). Fails with
    /// [`StoreError::TableNotFound`] if it does not exist.
    ///
    /// The default recreates the table from [`describe_table`](Self::describe_table),
    /// which keeps the split points only if it reports them; backends
    /// override it.
    async fn truncate_table(&self, table: &str) -> Result<()> {
        let schema = self.describe_table(table).await?;
        self.delete_table(table).await?;
        self.create_table(&schema).await
    }

    /// Changes one column family of a live table: adds it, replaces its
    /// options, or deletes it with every cell it holds (HBase:
    /// `Admin.addColumnFamily`, `modifyColumnFamily`, `deleteColumnFamily`).
    /// The change is checked against the table first, the same way on every
    /// backend: adding a family that exists, changing or deleting one that
    /// does not, or deleting a table's only family is
    /// [`StoreError::InvalidSchema`] and changes nothing.
    async fn alter_table(&self, table: &str, change: &FamilyChange) -> Result<()>;

    /// Whether the table exists.
    async fn table_exists(&self, table: &str) -> Result<bool>;

    /// Every table's name, sorted.
    async fn list_tables(&self) -> Result<Vec<String>>;

    /// The table's schema, families sorted by name, as the backend reports
    /// it, with its metadata and its split points as they are now (the
    /// start keys of its regions but the first: a table splits as it grows).
    async fn describe_table(&self, table: &str) -> Result<TableSchema>;

    /// Reads one row; `None` if it has no cell that the get selects.
    async fn get(&self, table: &str, get: &Get) -> Result<Option<RowResult>>;

    /// Reads many rows in one call; results in the order of `gets`.
    async fn get_many(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<RowResult>>> {
        let mut rows = Vec::with_capacity(gets.len());
        for get in gets {
            rows.push(self.get(table, get).await?);
        }
        Ok(rows)
    }

    /// Reads many rows as [`get_many`](Self::get_many) does, each on its
    /// own: for each get, in order, its row or the error that failed it (a
    /// region the call's deadline did not let it reach, a family deleted
    /// since), the other rows read all the same. `Err` is for the call as
    /// a whole: a table that does not exist, an invalid get.
    ///
    /// The default answers [`get_many`](Self::get_many)'s rows, or its
    /// error for the whole call; NativeStore reads each row of its `Multi`
    /// calls on its own.
    async fn get_each(&self, table: &str, gets: &[Get]) -> Result<Vec<Result<Option<RowResult>>>> {
        Ok(self.get_many(table, gets).await?.into_iter().map(Ok).collect())
    }

    /// Applies mutations to rows: each row's changes atomically, in the
    /// order given, rows independently. A row named several times gets its
    /// changes in the order given, as if each were a call of its own (a
    /// later put at the same timestamp wins; a delete of the latest version
    /// sees the puts before it): every backend keeps this, sending such a
    /// row's later changes after its earlier ones are applied. Every row is
    /// checked before any is written, so a request the store refuses writes
    /// nothing.
    async fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()>;

    /// Applies mutations to rows as [`mutate`](Self::mutate) does (each
    /// row atomically, rows independently, a repeated row's changes in the
    /// order given), but a row that cannot be written does not stop the
    /// others: the answer says, for each row in the order given, whether
    /// it was applied, refused (not written, with the typed reason: a
    /// family the table lacks, a cell too large, an invalid row key) or
    /// unknown (sent, and the call failed before its answer). HBase's
    /// `Table.batch` with its per-action results.
    ///
    /// `Err` is for the call as a whole, before any row is written: a
    /// table that does not exist, an invalid table name.
    /// [`BatchOutcome::into_result`] gives back the all-or-first-error
    /// form (with this difference from `mutate`: the valid rows are
    /// written).
    ///
    /// The default writes the rows one by one with `mutate`; every backend
    /// of hmap overrides it to send them in one batch.
    async fn mutate_each(&self, table: &str, rows: &[RowMutation]) -> Result<BatchOutcome> {
        let mut outcome = Vec::with_capacity(rows.len());
        for (i, row) in rows.iter().enumerate() {
            outcome.push(match self.mutate(table, std::slice::from_ref(row)).await {
                Ok(()) => RowOutcome::Applied,
                Err(e @ StoreError::TableNotFound { .. }) if i == 0 => return Err(e),
                Err(e) => outcome::failed(e),
            });
        }
        Ok(BatchOutcome::new(outcome))
    }

    /// Writes the rows of puts a [`Loader`] gathered, as
    /// [`mutate`](Self::mutate) writes the same rows: each row atomically,
    /// rows independently, a repeated row's puts in order, every row checked
    /// before any is written.
    ///
    /// The default writes [`LoadBatch::to_row_mutations`] with `mutate`;
    /// a backend overrides it to encode its request straight from the
    /// batch's buffer (`ThriftStore` does).
    async fn load(&self, table: &str, batch: &LoadBatch) -> Result<()> {
        self.mutate(table, &batch.to_row_mutations()).await
    }

    /// Scans rows. The scanner fetches `batch_size` rows at a time.
    async fn scan<'a>(&'a self, table: &str, scan: &Scan) -> Result<RowStream<'a>>;

    /// Applies the mutations if the check passes; returns whether it did.
    ///
    /// The check compares the column's newest value (in the op's time
    /// range) with the expected one as `stored op expected`, byte by byte
    /// as unsigned bytes (HBase's `BinaryComparator`), or is a filter that
    /// must leave a cell of the row; see [`CheckAndMutate`] for what nothing
    /// or an empty value expected means.
    ///
    /// ```
    /// use hmap::schema::{FamilySchema, TableSchema};
    /// use hmap::store::filter::CompareOp;
    /// use hmap::store::{CheckAndMutate, Get, MemoryStore, RowMutation, Store};
    ///
    /// # #[tokio::main] async fn main() -> Result<(), hmap::store::StoreError> {
    /// let store = MemoryStore::new();
    /// store.create_table(&TableSchema::new("item").family(FamilySchema::new("p"))).await?;
    /// store.mutate("item", &[RowMutation::new("i1").put("p", "price", "0050")]).await?;
    /// // Lower the price to 0042 only if the stored one is higher.
    /// let lower = |to: &'static str| {
    ///     CheckAndMutate::new(RowMutation::new("i1").put("p", "price", to), "p", "price", Some(to.into()))
    ///         .compare(CompareOp::Greater)
    /// };
    /// assert!(store.check_and_mutate("item", &lower("0042")).await?);
    /// assert!(!store.check_and_mutate("item", &lower("0045")).await?); // 0042 is not above 0045
    /// let row = store.get("item", &Get::new("i1")).await?.expect("the row exists");
    /// assert_eq!(row.value("p", "price").as_deref(), Some(&b"0042"[..]));
    /// # Ok(()) }
    /// ```
    ///
    /// What a backend cannot send is refused with
    /// [`StoreError::Unsupported`] before anything is sent: a time range or
    /// a filter through a Thrift2 gateway (its `checkAndMutate` takes a
    /// column, an operator and a value), any comparison but equality, a time
    /// range or a filter through a Thrift1 gateway (`checkAndPut`), a filter
    /// on Bigtable. [`CompareOp::NoOp`](filter::CompareOp::NoOp) is refused
    /// everywhere with [`StoreError::InvalidRequest`].
    async fn check_and_mutate(&self, table: &str, op: &CheckAndMutate) -> Result<bool>;

    /// Adds to counters; returns their new values, in order.
    async fn increment(&self, table: &str, op: &Increment) -> Result<Vec<i64>>;

    /// Appends to columns' values; returns the row's new values of those
    /// columns (HBase's `Append`), one cell per column, sorted by column.
    /// A missing column starts empty; the old value stays as an older
    /// version, as after a put. A column named twice in one append is
    /// refused with [`StoreError::InvalidRequest`], as for an
    /// [`Increment`] (HBase would append each value to the same old one
    /// and keep the last), and a family the table lacks with the
    /// [`StoreError::NoSuchFamily`] every write gives.
    ///
    /// ```
    /// use hmap::schema::{FamilySchema, TableSchema};
    /// use hmap::store::{Append, MemoryStore, Store};
    ///
    /// # #[tokio::main] async fn main() -> Result<(), hmap::store::StoreError> {
    /// let store = MemoryStore::new();
    /// store.create_table(&TableSchema::new("log").family(FamilySchema::new("l"))).await?;
    /// store.append("log", &Append::new("day1").add("l", "events", "a;")).await?;
    /// let row = store.append("log", &Append::new("day1").add("l", "events", "b;")).await?;
    /// assert_eq!(row.value("l", "events").as_deref(), Some(&b"a;b;"[..]));
    /// # Ok(()) }
    /// ```
    ///
    /// NativeStore sends it with a nonce, so that a retry after a lost
    /// reply is applied once; through a gateway, the gateway's own client
    /// does, and a call that fails after it was sent is not sent again
    /// (nor on Bigtable, whose `ReadModifyWriteRow` has no nonce).
    ///
    /// Every backend of hmap implements it; the default, for a store of
    /// your own that does not, refuses with [`StoreError::Unsupported`].
    async fn append(&self, table: &str, op: &Append) -> Result<RowResult> {
        let _ = op;
        Err(StoreError::Unsupported {
            backend: std::any::type_name::<Self>(),
            feature: "Append",
            table: table.to_owned(),
        })
    }

    /// Forgets what the store keeps about the table between calls (the
    /// remote backends keep its families, to check requests before they
    /// are sent), so that the next call reads it afresh from the server.
    ///
    /// Rarely needed: a remote store reads the table again by itself when a
    /// request names a family its copy lacks, and forgets its copy when the
    /// server answers that the table or a family is missing, or when the
    /// store itself creates, alters or deletes the table. See
    /// `docs/schemas.md`. The default keeps nothing, so does nothing.
    fn forget_schema(&self, table: &str) {
        let _ = table;
    }

    /// The family options this store keeps, the ones a schema check
    /// compares (`Table::check_schema`, `create_if_missing`, migrations):
    /// every one by default. A store that drops some on purpose
    /// (`BigtableStore` with `ignore_storage_options`, which has no
    /// compression, bloom filter or block setting) leaves them out, so
    /// that a table it created as declared does not differ from its
    /// declaration in options it cannot keep.
    fn kept_family_options(&self) -> &'static [crate::schema::FamilyOption] {
        &crate::schema::FamilyOption::ALL
    }
}

/// A change to one column family of a live table, for
/// [`Store::alter_table`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FamilyChange {
    /// Adds a family (HBase shell: `alter 't', {NAME => 'f', ...}` for a new
    /// family).
    Add(FamilySchema),
    /// Replaces a family's options with these (every option hmap models;
    /// the family keeps its cells).
    Modify(FamilySchema),
    /// Deletes a family and every cell it holds (HBase shell:
    /// `alter 't', 'delete' => 'f'`).
    Delete(String),
}

impl FamilyChange {
    /// The family the change is about.
    pub fn family(&self) -> &str {
        match self {
            FamilyChange::Add(f) | FamilyChange::Modify(f) => &f.name,
            FamilyChange::Delete(name) => name,
        }
    }
}

/// `Store` for a type that dereferences to a store, each call forwarded
/// (`sized`: for a wrapper whose store must be `Sized`).
macro_rules! forward_store {
    ($($ty:ty),*) => {$(
        $crate::store::forward_store!(@impl [S: $crate::store::Store + ?Sized] $ty);
    )*};
    (sized $($ty:ty),*) => {$(
        $crate::store::forward_store!(@impl [S: $crate::store::Store] $ty);
    )*};
    (@impl [$($bound:tt)*] $ty:ty) => {
        #[async_trait::async_trait]
        impl<$($bound)*> $crate::store::Store for $ty {
            async fn create_table(&self, schema: &TableSchema) -> Result<()> {
                (**self).create_table(schema).await
            }
            async fn delete_table(&self, table: &str) -> Result<()> {
                (**self).delete_table(table).await
            }
            async fn truncate_table(&self, table: &str) -> Result<()> {
                (**self).truncate_table(table).await
            }
            async fn alter_table(&self, table: &str, change: &FamilyChange) -> Result<()> {
                (**self).alter_table(table, change).await
            }
            async fn table_exists(&self, table: &str) -> Result<bool> {
                (**self).table_exists(table).await
            }
            async fn list_tables(&self) -> Result<Vec<String>> {
                (**self).list_tables().await
            }
            async fn describe_table(&self, table: &str) -> Result<TableSchema> {
                (**self).describe_table(table).await
            }
            async fn get(&self, table: &str, get: &Get) -> Result<Option<RowResult>> {
                (**self).get(table, get).await
            }
            async fn get_many(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<RowResult>>> {
                (**self).get_many(table, gets).await
            }
            async fn get_each(&self, table: &str, gets: &[Get]) -> Result<Vec<Result<Option<RowResult>>>> {
                (**self).get_each(table, gets).await
            }
            async fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
                (**self).mutate(table, rows).await
            }
            async fn mutate_each(&self, table: &str, rows: &[RowMutation]) -> Result<$crate::store::BatchOutcome> {
                (**self).mutate_each(table, rows).await
            }
            async fn load(&self, table: &str, batch: &$crate::store::LoadBatch) -> Result<()> {
                (**self).load(table, batch).await
            }
            async fn scan<'a>(&'a self, table: &str, scan: &Scan) -> Result<RowStream<'a>> {
                (**self).scan(table, scan).await
            }
            async fn check_and_mutate(&self, table: &str, op: &CheckAndMutate) -> Result<bool> {
                (**self).check_and_mutate(table, op).await
            }
            async fn increment(&self, table: &str, op: &Increment) -> Result<Vec<i64>> {
                (**self).increment(table, op).await
            }
            async fn append(&self, table: &str, op: &$crate::store::Append) -> Result<RowResult> {
                (**self).append(table, op).await
            }
            fn forget_schema(&self, table: &str) {
                (**self).forget_schema(table)
            }
            fn kept_family_options(&self) -> &'static [$crate::schema::FamilyOption] {
                (**self).kept_family_options()
            }
        }
    };
}

forward_store!(&S, Box<S>, Arc<S>);
pub(crate) use forward_store;
