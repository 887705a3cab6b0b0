//! Bulk loading: rows of puts gathered into one buffer as the application
//! adds them ([`LoadBatch`]), and sent in batches by a [`Loader`].
//!
//! A [`RowMutation`] holds each row key, family, qualifier and value in a
//! [`Bytes`] of its own; a bulk load of small cells spends more of the
//! client's time making and freeing those than sending them. A
//! [`LoadBatch`] copies every row's bytes into one buffer instead, from
//! borrowed slices, so an application can build its values in one reused
//! buffer, and a backend encodes its request straight from that buffer
//! ([`Store::load`]).

use std::fmt;
use std::ops::Range;

use bytes::Bytes;

use super::{Mutation, Result, RowMutation, RowOutcome, Store, StoreError};
use crate::key::Printable;

/// Rows of puts in one buffer, as a [`Loader`] gathers them: each row's key
/// and each cell's family, qualifier and value copied in one after the
/// other. A backend writes the batch with [`Store::load`].
///
/// ```
/// use hmap::store::LoadBatch;
///
/// let mut batch = LoadBatch::new();
/// batch.row("u0001").put("p", "item", "book").put("p", "qty", 2i32.to_be_bytes());
/// batch.row("u0002").put_at("p", "item", 1_700_000_000_000, "pen");
/// assert_eq!(batch.len(), 2);
/// let first = batch.rows().next().unwrap();
/// assert_eq!(first.key(), b"u0001");
/// let cells: Vec<_> = first.cells().map(|c| (c.qualifier(), c.value())).collect();
/// assert_eq!(cells, [(&b"item"[..], &b"book"[..]), (&b"qty"[..], &[0, 0, 0, 2][..])]);
/// ```
#[derive(Clone, Default)]
pub struct LoadBatch {
    /// Every row key, family, qualifier and value, in the order added.
    data: Vec<u8>,
    rows: Vec<RowSpan>,
    cells: Vec<CellSpan>,
}

/// The counts, not the bytes (a batch holds megabytes).
impl fmt::Debug for LoadBatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadBatch")
            .field("rows", &self.len())
            .field("cells", &self.cell_count())
            .field("bytes", &self.byte_size())
            .finish()
    }
}

/// Where a row is in a [`LoadBatch`]: its key in `data` and its first cell
/// in `cells` (its cells run to the next row's first).
#[derive(Clone, Debug)]
struct RowSpan {
    key: Range<usize>,
    first_cell: usize,
}

/// Where a cell is in a [`LoadBatch`]'s `data`: its family from `start`,
/// then its qualifier, then its value, each ending where the next begins.
#[derive(Clone, Debug)]
struct CellSpan {
    start: usize,
    family_end: usize,
    qualifier_end: usize,
    value_end: usize,
    timestamp: Option<i64>,
}

impl LoadBatch {
    /// No rows yet.
    pub fn new() -> Self {
        LoadBatch::default()
    }

    /// Starts a row: the puts added through the returned writer are the
    /// row's, applied atomically when the batch is written. A row with no
    /// puts writes nothing.
    pub fn row(&mut self, key: impl AsRef<[u8]>) -> LoadRowWriter<'_> {
        self.start_row(key.as_ref());
        LoadRowWriter { batch: self }
    }

    pub(crate) fn start_row(&mut self, key: &[u8]) {
        let start = self.data.len();
        self.data.extend_from_slice(key);
        self.rows.push(RowSpan {
            key: start..self.data.len(),
            first_cell: self.cells.len(),
        });
    }

    /// Adds a put to the last row started.
    pub(crate) fn push_cell(&mut self, family: &[u8], qualifier: &[u8], timestamp: Option<i64>, value: &[u8]) {
        let start = self.data.len();
        self.data.extend_from_slice(family);
        let family_end = self.data.len();
        self.data.extend_from_slice(qualifier);
        let qualifier_end = self.data.len();
        self.data.extend_from_slice(value);
        self.cells.push(CellSpan {
            start,
            family_end,
            qualifier_end,
            value_end: self.data.len(),
            timestamp,
        });
    }

    /// Gives every cell added without a timestamp this one: a typed load
    /// stamps its batch when it writes it, once, as `put_many` does.
    pub(crate) fn stamp_unstamped(&mut self, timestamp: i64) {
        for cell in &mut self.cells {
            cell.timestamp.get_or_insert(timestamp);
        }
    }

    /// The number of rows, those without puts included.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether no row has been started.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The number of puts, in every row.
    pub fn cell_count(&self) -> usize {
        self.cells.len()
    }

    /// The bytes of every row key, family, qualifier and value held.
    pub fn byte_size(&self) -> usize {
        self.data.len()
    }

    /// Forgets every row, keeping the memory for the next ones.
    pub fn clear(&mut self) {
        self.data.clear();
        self.rows.clear();
        self.cells.clear();
    }

    /// The row at `index`, in the order added.
    pub fn get(&self, index: usize) -> Option<LoadRow<'_>> {
        (index < self.rows.len()).then_some(LoadRow { batch: self, index })
    }

    /// The rows, in the order added.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = LoadRow<'_>> + '_ {
        (0..self.rows.len()).map(|index| LoadRow { batch: self, index })
    }

    /// The rows as [`RowMutation`]s, for a backend that writes them with
    /// [`Store::mutate`]. Every key, family, qualifier and value is a slice
    /// of one copy of the batch's buffer.
    pub fn to_row_mutations(&self) -> Vec<RowMutation> {
        let data = Bytes::copy_from_slice(&self.data);
        self.rows()
            .map(|row| {
                let span = &self.rows[row.index];
                let mutations = row
                    .spans()
                    .iter()
                    .map(|c| Mutation::Put {
                        family: data.slice(c.start..c.family_end),
                        qualifier: data.slice(c.family_end..c.qualifier_end),
                        value: data.slice(c.qualifier_end..c.value_end),
                        timestamp: c.timestamp,
                    })
                    .collect();
                RowMutation::with(data.slice(span.key.clone()), mutations)
            })
            .collect()
    }
}

/// Adds puts to a row of a [`LoadBatch`], from [`LoadBatch::row`].
#[derive(Debug)]
pub struct LoadRowWriter<'a> {
    batch: &'a mut LoadBatch,
}

impl LoadRowWriter<'_> {
    /// Writes a cell at the current time (the server's, when it applies the
    /// row; every put of the row without a timestamp gets the same one).
    pub fn put(self, family: impl AsRef<[u8]>, qualifier: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Self {
        self.batch
            .push_cell(family.as_ref(), qualifier.as_ref(), None, value.as_ref());
        self
    }

    /// Writes a cell at a chosen timestamp (milliseconds since the epoch,
    /// unless the application chose otherwise; a negative one is refused
    /// when the batch is written).
    pub fn put_at(
        self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        timestamp: i64,
        value: impl AsRef<[u8]>,
    ) -> Self {
        self.batch
            .push_cell(family.as_ref(), qualifier.as_ref(), Some(timestamp), value.as_ref());
        self
    }
}

/// One row of a [`LoadBatch`].
#[derive(Clone, Copy)]
pub struct LoadRow<'a> {
    batch: &'a LoadBatch,
    index: usize,
}

impl<'a> LoadRow<'a> {
    /// The row key.
    pub fn key(&self) -> &'a [u8] {
        &self.batch.data[self.batch.rows[self.index].key.clone()]
    }

    /// The number of puts.
    pub fn cell_count(&self) -> usize {
        self.spans().len()
    }

    /// About how many bytes the row takes in a request, as
    /// [`RowMutation::wire_size`] counts the same row.
    pub fn wire_size(&self) -> usize {
        let spans = self.spans();
        let bytes = match (spans.first(), spans.last()) {
            (Some(first), Some(last)) => last.value_end - first.start,
            _ => 0,
        };
        self.key().len() + bytes + spans.len() * super::MUTATION_FRAMING
    }

    /// The puts, in the order added.
    pub fn cells(&self) -> impl ExactSizeIterator<Item = LoadCell<'a>> + 'a {
        let data = &self.batch.data[..];
        self.spans().iter().map(move |span| LoadCell { data, span })
    }

    fn spans(&self) -> &'a [CellSpan] {
        let batch = self.batch;
        let first = batch.rows[self.index].first_cell;
        let end = batch
            .rows
            .get(self.index + 1)
            .map_or(batch.cells.len(), |r| r.first_cell);
        &batch.cells[first..end]
    }
}

impl fmt::Debug for LoadRow<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadRow")
            .field("key", &Printable(self.key()))
            .field("cells", &self.cells().collect::<Vec<_>>())
            .finish()
    }
}

/// One put of a [`LoadRow`].
#[derive(Clone, Copy)]
pub struct LoadCell<'a> {
    data: &'a [u8],
    span: &'a CellSpan,
}

impl<'a> LoadCell<'a> {
    /// The family.
    pub fn family(&self) -> &'a [u8] {
        &self.data[self.span.start..self.span.family_end]
    }

    /// The qualifier.
    pub fn qualifier(&self) -> &'a [u8] {
        &self.data[self.span.family_end..self.span.qualifier_end]
    }

    /// The value.
    pub fn value(&self) -> &'a [u8] {
        &self.data[self.span.qualifier_end..self.span.value_end]
    }

    /// The timestamp chosen, or `None` for the current time.
    pub fn timestamp(&self) -> Option<i64> {
        self.span.timestamp
    }
}

impl fmt::Debug for LoadCell<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadCell")
            .field("family", &Printable(self.family()))
            .field("qualifier", &Printable(self.qualifier()))
            .field("timestamp", &self.timestamp())
            .field("value", &Printable(self.value()))
            .finish()
    }
}

/// The bytes a [`Loader`] gathers before it writes them, by default: 1 MiB,
/// half of HBase's client write buffer (`hbase.client.write.buffer`,
/// 2 MiB). (A backend may still send one batch as several calls:
/// `ThriftConfig::max_request_bytes`.)
pub const DEFAULT_LOAD_BYTES: usize = 1024 * 1024;

/// The rows a [`Loader`] gathers before it writes them, by default.
pub const DEFAULT_LOAD_ROWS: usize = 10_000;

/// Writes many rows of puts fast: rows are copied into one buffer as they
/// are added, and written with [`Store::load`] each time the buffer reaches
/// its budget of rows or bytes ([`max_rows`](Self::max_rows),
/// [`max_bytes`](Self::max_bytes)), and by [`flush`](Self::flush) and
/// [`finish`](Self::finish). Keys, families, qualifiers and values are
/// borrowed slices: build them in buffers of your own and reuse those.
///
/// Each row is applied atomically, rows independently, as by
/// [`Store::mutate`]; a row is written (acknowledged) only once a flush
/// that holds it returns `Ok`. Every row of a batch is checked before any is
/// sent (row key, families, cell size, timestamps), and the error names the
/// row and column. A failed flush keeps its rows, and so does one whose
/// future is dropped before it ends (a failed [`finish`](Self::finish)
/// hands them back in its [`LoadError`]): flush again to retry them (a refused
/// check will refuse them again; rows the server applied before a failure
/// are written again, a put at the server's time as one more version), or
/// [`discard`](Self::discard) them. A row key may come more than once; its
/// puts are applied in the order added.
///
/// ```
/// use std::fmt::Write;
/// use hmap::schema::{FamilySchema, TableSchema};
/// use hmap::store::{Get, Loader, MemoryStore, Store};
///
/// # #[tokio::main] async fn main() -> Result<(), hmap::store::StoreError> {
/// let store = MemoryStore::new();
/// store.create_table(&TableSchema::new("order").family(FamilySchema::new("p"))).await?;
/// let mut loader = Loader::new(&store, "order");
/// let mut item = String::new();
/// for i in 0..1_000u32 {
///     item.clear();
///     write!(item, "item-{i:06}").unwrap();
///     loader
///         .row(format!("o{i:05}"))
///         .put("p", "item", &item)
///         .put("p", "qty", (i % 9).to_be_bytes())
///         .end()
///         .await?;
/// }
/// assert_eq!(loader.finish().await?, 1_000);
/// let row = store.get("order", &Get::new("o00042")).await?.expect("loaded");
/// assert_eq!(row.value("p", "item").as_deref(), Some(&b"item-000042"[..]));
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Loader<S> {
    store: S,
    table: String,
    batch: LoadBatch,
    max_rows: usize,
    max_bytes: usize,
    written: u64,
    /// Rows that fail do not stop the load ([`keep_going`](Self::keep_going)).
    keep_going: bool,
    failed: Vec<FailedRow>,
}

impl<S: Store> Loader<S> {
    /// A loader of rows into `table` (any [`Store`]: pass `&store` to keep
    /// the store).
    pub fn new(store: S, table: impl Into<String>) -> Self {
        Loader {
            store,
            table: table.into(),
            batch: LoadBatch::new(),
            max_rows: DEFAULT_LOAD_ROWS,
            max_bytes: DEFAULT_LOAD_BYTES,
            written: 0,
            keep_going: false,
            failed: Vec::new(),
        }
    }

    /// Rows that fail do not stop the load: each flush writes its rows
    /// each on its own ([`Store::mutate_each`]), the rows written are
    /// counted, and the rows refused or unknown leave the batch and are
    /// kept, with why, in [`failed`](Self::failed) (take them with
    /// [`take_failed`](Self::take_failed)). A flush still fails as a whole
    /// for what concerns every row (the table does not exist), keeping its
    /// rows; [`finish`](Self::finish) fails if any row failed, handing the
    /// failed rows back in [`LoadError::failed`]. Such a flush writes the
    /// rows as [`Store::mutate`] would, without a backend's load path.
    ///
    /// ```
    /// use hmap::schema::{FamilySchema, TableSchema};
    /// use hmap::store::{Loader, MemoryStore, RowOutcome, Store};
    ///
    /// # #[tokio::main] async fn main() -> Result<(), hmap::store::StoreError> {
    /// let store = MemoryStore::new();
    /// store.create_table(&TableSchema::new("t").family(FamilySchema::new("f"))).await?;
    /// let mut loader = Loader::new(&store, "t").keep_going();
    /// loader.row("a").put("f", "q", "1").end().await?;
    /// loader.row("b").put("g", "q", "2").end().await?; // no family g
    /// loader.row("c").put("f", "q", "3").end().await?;
    /// loader.flush().await?;
    /// assert_eq!(loader.written(), 2);
    /// let failed = loader.take_failed();
    /// assert_eq!(failed.len(), 1);
    /// assert_eq!(&failed[0].row[..], b"b");
    /// assert!(matches!(failed[0].outcome, RowOutcome::Refused(_)));
    /// assert_eq!(loader.finish().await?, 2);
    /// # Ok(()) }
    /// ```
    pub fn keep_going(mut self) -> Self {
        self.keep_going = true;
        self
    }

    /// The rows that failed so far, with why (only with
    /// [`keep_going`](Self::keep_going)), in the order written.
    pub fn failed(&self) -> &[FailedRow] {
        &self.failed
    }

    /// The rows that failed so far, taken out of the loader.
    pub fn take_failed(&mut self) -> Vec<FailedRow> {
        std::mem::take(&mut self.failed)
    }

    /// Writes a batch once it holds this many rows (at least 1; by default
    /// [`DEFAULT_LOAD_ROWS`]).
    pub fn max_rows(mut self, rows: usize) -> Self {
        self.max_rows = rows.max(1);
        self
    }

    /// Writes a batch once its keys, families, qualifiers and values come to
    /// this many bytes (by default [`DEFAULT_LOAD_BYTES`]; a row is never
    /// split, so one row larger than this is a batch of its own).
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// Starts a row: add its puts to the returned writer, then
    /// [`end`](LoaderRow::end) it.
    pub fn row(&mut self, key: impl AsRef<[u8]>) -> LoaderRow<'_, S> {
        self.batch.start_row(key.as_ref());
        LoaderRow { loader: self }
    }

    /// The rows added and not written yet.
    pub fn pending(&self) -> usize {
        self.batch.len()
    }

    /// The rows with puts written so far, by every successful flush.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Writes the rows gathered. On an error they stay in the loader.
    pub async fn flush(&mut self) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        if self.keep_going {
            let rows = self.batch.to_row_mutations();
            write_each(&self.store, &self.table, &rows, &mut self.written, &mut self.failed).await?;
            self.batch.clear();
            return Ok(());
        }
        self.store.load(&self.table, &self.batch).await?;
        self.written += self.batch.rows().filter(|r| r.cell_count() > 0).count() as u64;
        self.batch.clear();
        Ok(())
    }

    /// Drops the rows gathered and not written (after a failed flush, say);
    /// returns how many there were.
    pub fn discard(&mut self) -> usize {
        let rows = self.batch.len();
        self.batch.clear();
        rows
    }

    /// Writes the rows left and returns the number of rows with puts
    /// written by the loader in all.
    ///
    /// On an error the loader is gone, but nothing is hidden: the
    /// [`LoadError`] says how many rows were written (acknowledged by
    /// earlier flushes) and hands back the rows that were not, as a
    /// [`LoadBatch`] to write again with [`Store::load`] (or to give up
    /// on). To keep the loader instead, [`flush`](Self::flush) first: a
    /// failed flush keeps its rows in the loader.
    pub async fn finish(mut self) -> std::result::Result<u64, LoadError> {
        match self.flush().await {
            Ok(()) => match first_failure(&self.failed) {
                None => Ok(self.written),
                Some(cause) => Err(self.refused(cause)),
            },
            Err(source) => Err(self.refused(source)),
        }
    }

    /// The loader's rows handed back, with `source` as the reason: what a
    /// `finish` that could not run answers.
    pub(crate) fn refused(self, source: StoreError) -> LoadError {
        LoadError {
            table: self.table,
            written: self.written,
            unwritten: self.batch,
            failed: self.failed,
            cause: source,
        }
    }

    async fn flush_if_full(&mut self) -> Result<()> {
        if self.batch.len() >= self.max_rows || self.batch.byte_size() >= self.max_bytes {
            self.flush().await?;
        }
        Ok(())
    }
}

/// A row a load did not write, and why: refused, or unknown (see
/// [`RowOutcome`]), from a loader that keeps going
/// ([`Loader::keep_going`], [`TableLoader::keep_going`](crate::TableLoader::keep_going)).
#[derive(Debug)]
#[non_exhaustive]
pub struct FailedRow<E = StoreError> {
    /// The row's key.
    pub row: Bytes,
    /// What became of it: never [`RowOutcome::Applied`].
    pub outcome: RowOutcome<E>,
}

impl<E> FailedRow<E> {
    pub(crate) fn new(row: Bytes, outcome: RowOutcome<E>) -> Self {
        FailedRow { row, outcome }
    }
}

/// Writes `rows` each on its own ([`Store::mutate_each`]): counts in
/// `written` the rows applied that change something, and keeps the others
/// in `failed`. `Err` only for the call as a whole.
pub(crate) async fn write_each<S: Store + ?Sized, E: From<StoreError>>(
    store: &S,
    table: &str,
    rows: &[RowMutation],
    written: &mut u64,
    failed: &mut Vec<FailedRow<E>>,
) -> Result<()> {
    let outcome = store.mutate_each(table, rows).await?;
    for (row, outcome) in rows.iter().zip(outcome) {
        if !outcome.is_applied() {
            failed.push(FailedRow::new(row.row.clone(), outcome.map_err(E::from)));
        } else if !row.mutations.is_empty() {
            *written += 1;
        }
    }
    Ok(())
}

/// The error a finished load that kept going fails with: its first failed
/// row's, if any row failed.
pub(crate) fn first_failure(failed: &[FailedRow]) -> Option<StoreError> {
    failed
        .first()
        .and_then(|f| f.outcome.error())
        .map(StoreError::duplicate)
}

/// A [`Loader::finish`] that failed: how many rows were written, and the
/// rows that were not, handed back.
///
/// `written` counts the rows with puts that earlier flushes wrote (the
/// server acknowledged them). `unwritten` holds every row of the last batch,
/// none of which is acknowledged; some may have been applied before the
/// failure (a connection lost after the server wrote them): writing them
/// again puts the same cells again (a put at the server's time as one more
/// version). Write them again with [`Store::load`]`(&table, &unwritten)`.
///
/// Converts into the [`StoreError`] it carries (`?` in a function that
/// returns a `StoreError` or an [`Error`](crate::Error)), dropping the rows.
#[derive(Debug, thiserror::Error)]
#[error(
    "loading into table `{table}`: {written} rows written, {} rows not written (handed back): {cause}",
    unwritten.len() + failed.len()
)]
#[non_exhaustive]
pub struct LoadError {
    /// The table loaded.
    pub table: String,
    /// The rows with puts written before the failure.
    pub written: u64,
    /// The rows not written (not acknowledged), in the order added.
    pub unwritten: LoadBatch,
    /// The rows refused or unknown, each with why, of a loader that kept
    /// going ([`Loader::keep_going`]); empty otherwise.
    pub failed: Vec<FailedRow>,
    /// Why the last batch failed.
    /// Already part of this error's message, so not its
    /// [`source`](std::error::Error::source): a chain printer shows it once.
    pub cause: StoreError,
}

impl From<LoadError> for StoreError {
    fn from(e: LoadError) -> StoreError {
        e.cause
    }
}

impl From<LoadError> for crate::Error {
    fn from(e: LoadError) -> crate::Error {
        crate::Error::Store(e.cause)
    }
}

/// Adds puts to a row of a [`Loader`], from [`Loader::row`]; [`end`](Self::end)
/// ends the row (a row writer dropped without it leaves the row in the
/// loader, to be written by the next flush).
#[derive(Debug)]
#[must_use = "end the row with `.end().await`, which writes the batch when it is full"]
pub struct LoaderRow<'a, S> {
    loader: &'a mut Loader<S>,
}

impl<S: Store> LoaderRow<'_, S> {
    /// Writes a cell at the current time (the server's, when it applies the
    /// row; every put of the row without a timestamp gets the same one).
    pub fn put(self, family: impl AsRef<[u8]>, qualifier: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Self {
        self.loader
            .batch
            .push_cell(family.as_ref(), qualifier.as_ref(), None, value.as_ref());
        self
    }

    /// Writes a cell at a chosen timestamp (milliseconds since the epoch,
    /// unless the application chose otherwise; a negative one is refused).
    pub fn put_at(
        self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        timestamp: i64,
        value: impl AsRef<[u8]>,
    ) -> Self {
        self.loader
            .batch
            .push_cell(family.as_ref(), qualifier.as_ref(), Some(timestamp), value.as_ref());
        self
    }

    /// Ends the row, and writes the batch if it has reached its budget of
    /// rows or bytes.
    pub async fn end(self) -> Result<()> {
        self.loader.flush_if_full().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{FamilySchema, TableSchema};
    use crate::store::{Get, MemoryStore, StoreError};

    fn batch() -> LoadBatch {
        let mut batch = LoadBatch::new();
        batch.row("a").put("f", "q1", "v1").put_at("f", "q2", 7, "");
        batch.row("b");
        batch.row("").put("", "", "x");
        batch
    }

    #[test]
    fn a_batch_hands_back_what_was_added() {
        let batch = batch();
        assert_eq!((batch.len(), batch.cell_count()), (3, 3));
        let rows: Vec<_> = batch.rows().collect();
        assert_eq!(rows[0].key(), b"a");
        let cells: Vec<_> = rows[0]
            .cells()
            .map(|c| (c.family(), c.qualifier(), c.value(), c.timestamp()))
            .collect();
        assert_eq!(
            cells,
            [
                (&b"f"[..], &b"q1"[..], &b"v1"[..], None),
                (&b"f"[..], &b"q2"[..], &b""[..], Some(7))
            ]
        );
        assert_eq!((rows[1].key(), rows[1].cell_count()), (&b"b"[..], 0));
        assert_eq!(rows[2].key(), b"");
        assert_eq!(rows[2].cells().next().map(|c| c.value()), Some(&b"x"[..]));
        assert!(batch.get(3).is_none());
        assert_eq!(batch.get(1).map(|r| r.key()), Some(&b"b"[..]));
    }

    #[test]
    fn a_batch_becomes_row_mutations() {
        let batch = batch();
        let rows = batch.to_row_mutations();
        let sizes: Vec<_> = batch.rows().map(|r| r.wire_size()).collect();
        assert_eq!(sizes, rows.iter().map(RowMutation::wire_size).collect::<Vec<_>>());
        let framing = crate::store::MUTATION_FRAMING;
        assert_eq!(sizes, [1 + (1 + 2 + 2) + (1 + 2) + 2 * framing, 1, 1 + framing]);
        assert_eq!(
            rows,
            [
                RowMutation::new("a").put("f", "q1", "v1").put_at("f", "q2", 7, ""),
                RowMutation::new("b"),
                RowMutation::new("").put("", "", "x"),
            ]
        );
    }

    #[test]
    fn a_cleared_batch_is_empty() {
        let mut batch = batch();
        batch.clear();
        assert!(batch.is_empty());
        assert_eq!((batch.cell_count(), batch.byte_size()), (0, 0));
        assert_eq!(batch.rows().count(), 0);
    }

    async fn store() -> MemoryStore {
        let store = MemoryStore::new();
        store
            .create_table(&TableSchema::new("t").family(FamilySchema::new("f")))
            .await
            .unwrap();
        store
    }

    #[tokio::test]
    async fn a_loader_writes_when_a_budget_is_reached() {
        let store = store().await;
        let mut loader = Loader::new(&store, "t").max_rows(3);
        for i in 0..7 {
            loader.row(format!("r{i}")).put("f", "q", "v").end().await.unwrap();
        }
        // Two batches of 3 written, one row waiting.
        assert_eq!((loader.written(), loader.pending()), (6, 1));
        assert!(store.get("t", &Get::new("r5")).await.unwrap().is_some());
        assert!(store.get("t", &Get::new("r6")).await.unwrap().is_none());
        assert_eq!(loader.finish().await.unwrap(), 7);
        assert!(store.get("t", &Get::new("r6")).await.unwrap().is_some());

        let mut loader = Loader::new(&store, "t").max_bytes(10);
        loader.row("x").put("f", "q", "12345678").end().await.unwrap();
        assert_eq!((loader.written(), loader.pending()), (1, 0));
    }

    #[tokio::test]
    async fn a_refused_flush_keeps_its_rows_until_discarded() {
        let store = store().await;
        let mut loader = Loader::new(&store, "t");
        loader.row("ok").put("f", "q", "v").end().await.unwrap();
        loader.row("bad").put("nope", "q", "v").end().await.unwrap();
        let refused = loader.flush().await.unwrap_err();
        assert!(matches!(refused, StoreError::NoSuchFamily { .. }), "{refused:?}");
        // Checked before anything was written: neither row is there.
        assert!(store.get("t", &Get::new("ok")).await.unwrap().is_none());
        assert_eq!((loader.pending(), loader.written()), (2, 0));
        assert_eq!(loader.discard(), 2);
        assert_eq!(loader.finish().await.unwrap(), 0);
    }

    #[tokio::test]
    async fn a_repeated_row_applies_its_puts_in_order() {
        let store = store().await;
        let mut loader = Loader::new(&store, "t");
        loader.row("r").put_at("f", "q", 5, "first").end().await.unwrap();
        loader.row("r").put_at("f", "q", 5, "second").end().await.unwrap();
        loader.row("e").end().await.unwrap();
        assert_eq!(loader.finish().await.unwrap(), 2);
        let row = store.get("t", &Get::new("r")).await.unwrap().unwrap();
        assert_eq!(row.value("f", "q").as_deref(), Some(&b"second"[..]));
        assert!(store.get("t", &Get::new("e")).await.unwrap().is_none());
    }
}
