//! A typed bulk load: rows of `T` encoded by the derive's codecs into one
//! buffer, written in batches, as [`Loader`](crate::store::Loader) writes
//! raw bytes.

use bytes::Bytes;

use super::{HTable, RowWriter, Table};
use crate::clock::{RowSet, next_timestamp};
use crate::error::{Error, Result};
use crate::store::load::write_each;
use crate::store::{
    DEFAULT_LOAD_BYTES, DEFAULT_LOAD_ROWS, FailedRow, LoadBatch, LoadError, Mutation, RowMutation, Store, StoreError,
};
use crate::table::FieldRole;

/// The timestamp a row is encoded with until its batch is stamped: no
/// version field can hold it (negative timestamps are refused).
const UNSTAMPED: i64 = i64::MIN / 2;

/// Loads many rows of `T` fast: from [`Table::loader`]. Each row is encoded
/// by the derive's codecs straight into one buffer, and the buffer is
/// written (by [`Store::load`]) when it reaches its budget of rows or
/// bytes, at [`flush`](Self::flush) and at [`finish`](Self::finish).
///
/// What is written is what [`Table::put_many`] writes for the same rows:
/// every cell of a batch at one timestamp, taken when the batch is written
/// (later than any earlier write of those rows by this process, never
/// ahead of the wall clock); a `None` field deletes its stored cell and a
/// dynamic map replaces its family. Rows that delete as well as put (those
/// `None` fields, dynamic maps) cannot go in a load batch of puts: they
/// are gathered beside it and written with [`Store::mutate`] in the same
/// flush, after it. Give each row once per batch, as for `put_many`. A type
/// with a `version` field is written row by row, as [`Table::put`] checks
/// each version.
///
/// A failed flush keeps its rows, to flush again; a failed
/// [`finish`](Self::finish) hands the batch's rows of puts back in its
/// [`LoadError`] (the rows that delete too are reported by count).
///
/// ```
/// # use hmap::{HTable, Table};
/// # use hmap::store::MemoryStore;
/// #[derive(HTable, Debug, PartialEq)]
/// #[hmap(table = "order", family(name = "p"))]
/// struct Order { #[hmap(key)] id: u32, item: String, qty: u32 }
///
/// # #[tokio::main] async fn main() -> hmap::Result<()> {
/// let orders = Table::<Order, _>::new(MemoryStore::new());
/// orders.create().await?;
/// let mut loader = orders.loader();
/// for id in 0..1_000 {
///     loader.add(&Order { id, item: format!("item-{id}"), qty: id % 9 }).await?;
/// }
/// assert_eq!(loader.finish().await?, 1_000);
/// assert_eq!(orders.get(42u32).await?.map(|o| o.qty), Some(6));
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "rows are written by `flush` or `finish`"]
pub struct TableLoader<'t, T, S> {
    table: &'t Table<T, S>,
    /// The rows of puts only.
    batch: LoadBatch,
    /// The rows that delete too, unstamped.
    mixed: Vec<RowMutation>,
    /// The bytes `mixed` holds, for the budget.
    mixed_bytes: usize,
    max_rows: usize,
    max_bytes: usize,
    written: u64,
    /// The key of the row being added, reused.
    key: Vec<u8>,
    /// Whether `T` has a version field (written row by row).
    versioned: bool,
    /// Rows that fail do not stop the load ([`keep_going`](Self::keep_going)).
    keep_going: bool,
    failed: Vec<FailedRow<Error>>,
}

impl<T: HTable, S: Store> Table<T, S> {
    /// A typed bulk loader into this table: see [`TableLoader`].
    pub fn loader(&self) -> TableLoader<'_, T, S> {
        TableLoader {
            table: self,
            batch: LoadBatch::new(),
            mixed: Vec::new(),
            mixed_bytes: 0,
            max_rows: DEFAULT_LOAD_ROWS,
            max_bytes: DEFAULT_LOAD_BYTES,
            written: 0,
            key: Vec::new(),
            versioned: T::fields().iter().any(|f| f.role == FieldRole::Version),
            keep_going: false,
            failed: Vec::new(),
        }
    }
}

impl<T: HTable, S: Store> TableLoader<'_, T, S> {
    /// Writes a batch once it holds this many rows (at least 1; by default
    /// [`DEFAULT_LOAD_ROWS`]).
    pub fn max_rows(mut self, rows: usize) -> Self {
        self.max_rows = rows.max(1);
        self
    }

    /// Writes a batch once its keys, families, qualifiers and values come to
    /// this many bytes (by default [`DEFAULT_LOAD_BYTES`]).
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// Rows that fail do not stop the load, as with
    /// [`Loader::keep_going`](crate::store::Loader::keep_going): each flush
    /// writes its rows each on its own, and the rows refused or unknown
    /// leave the loader and are kept, with why, in
    /// [`failed`](Self::failed). A versioned row that conflicts is one of
    /// them, refused with the conflict ([`Error::Conflict`]'s message);
    /// [`add`](Self::add) still fails at once on a row that does not
    /// encode. [`finish`](Self::finish) fails if any row failed, handing
    /// them back in [`LoadError::failed`](crate::store::LoadError::failed)
    /// (where an error that is not the store's, a conflict, is an
    /// [`StoreError::InvalidRequest`] with its message: take them with
    /// [`take_failed`](Self::take_failed) first to keep them typed).
    pub fn keep_going(mut self) -> Self {
        self.keep_going = true;
        self
    }

    /// The rows that failed so far, with why (only with
    /// [`keep_going`](Self::keep_going)), in the order written.
    pub fn failed(&self) -> &[FailedRow<Error>] {
        &self.failed
    }

    /// The rows that failed so far, taken out of the loader.
    pub fn take_failed(&mut self) -> Vec<FailedRow<Error>> {
        std::mem::take(&mut self.failed)
    }

    /// The rows added and not written yet.
    pub fn pending(&self) -> usize {
        self.batch.len() + self.mixed.len()
    }

    /// The rows written so far, by every successful flush.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Adds a row, and writes the batch if it has reached its budget. A row
    /// that does not encode (a key part, a cell) is the error naming it, and
    /// nothing of it is added.
    pub async fn add(&mut self, row: &T) -> Result<()> {
        self.table.refuse_around_index().await?;
        if self.versioned {
            match self.table.put(row).await {
                Ok(()) => self.written += 1,
                Err(e) if self.keep_going && !matches!(e, Error::Key { .. } | Error::Encode { .. }) => {
                    let row = self.table.row_key_of(row)?;
                    self.failed.push(FailedRow::new(row, crate::table::row_failed(e)));
                }
                Err(e) => return Err(e),
            }
            return Ok(());
        }
        self.key.clear();
        row.encode_key(&mut self.key).map_err(|source| Error::Key {
            table: T::TABLE,
            cause: source,
        })?;
        let mut writer = RowWriter::at(T::TABLE, &self.key, UNSTAMPED);
        writer.key = Some(T::key_schema());
        writer.reserve(T::fields().len());
        row.write_cells(&mut writer)?;
        let mutations = writer.into_mutations();
        if mutations.iter().all(|m| matches!(m, Mutation::Put { .. })) {
            self.batch.start_row(&self.key);
            for m in &mutations {
                if let Mutation::Put {
                    family,
                    qualifier,
                    value,
                    timestamp,
                } = m
                {
                    let timestamp = timestamp.filter(|&ts| ts != UNSTAMPED);
                    self.batch.push_cell(family, qualifier, timestamp, value);
                }
            }
        } else {
            self.mixed_bytes += self.key.len() + mutations.iter().map(mutation_bytes).sum::<usize>();
            self.mixed.push(RowMutation {
                row: Bytes::copy_from_slice(&self.key),
                mutations,
            });
        }
        if self.pending() >= self.max_rows || self.batch.byte_size() + self.mixed_bytes >= self.max_bytes {
            self.flush().await?;
        }
        Ok(())
    }

    /// Writes the rows gathered, at one timestamp. On an error they stay in
    /// the loader, to flush again (rows the server applied before the
    /// failure are written again: the same cells at the same timestamp).
    pub async fn flush(&mut self) -> Result<()> {
        Ok(self.write().await?)
    }

    async fn write(&mut self) -> std::result::Result<(), StoreError> {
        if self.batch.is_empty() && self.mixed.is_empty() {
            return Ok(());
        }
        let mut rows = RowSet::of_rows(T::TABLE, self.batch.rows().map(|r| r.key()));
        for m in &self.mixed {
            rows.insert(T::TABLE, &m.row);
        }
        let ts = next_timestamp(&rows);
        if self.keep_going {
            // Stamped once: a retry writes the same timestamp.
            self.batch.stamp_unstamped(ts);
            for m in &mut self.mixed {
                stamp(m, ts);
            }
            let mut rows = self.batch.to_row_mutations();
            rows.append(&mut self.mixed.clone());
            write_each(self.table.store(), T::TABLE, &rows, &mut self.written, &mut self.failed).await?;
            self.batch.clear();
            self.mixed.clear();
            self.mixed_bytes = 0;
            return Ok(());
        }
        if !self.batch.is_empty() {
            // Stamped once: a retry writes the same timestamp.
            self.batch.stamp_unstamped(ts);
            self.table.store().load(T::TABLE, &self.batch).await?;
            self.written += self.batch.rows().filter(|r| r.cell_count() > 0).count() as u64;
            self.batch.clear();
        }
        if !self.mixed.is_empty() {
            for m in &mut self.mixed {
                stamp(m, ts);
            }
            self.table.store().mutate(T::TABLE, &self.mixed).await?;
            self.written += self.mixed.len() as u64;
            self.mixed.clear();
            self.mixed_bytes = 0;
        }
        Ok(())
    }

    /// Drops the rows gathered and not written; returns how many there were.
    pub fn discard(&mut self) -> usize {
        let rows = self.pending();
        self.batch.clear();
        self.mixed.clear();
        self.mixed_bytes = 0;
        rows
    }

    /// Writes the rows left and returns the number of rows written in all.
    /// On an error the [`LoadError`] says how many were written and hands
    /// back the batch's rows of puts (those that delete too are counted in
    /// its message, not handed back).
    pub async fn finish(mut self) -> std::result::Result<u64, LoadError> {
        match self.write().await {
            Ok(()) => match self.failed.first().and_then(|f| f.outcome.error()) {
                None => Ok(self.written),
                Some(Error::Store(e)) => {
                    let cause = e.duplicate();
                    Err(self.refused(cause))
                }
                Some(other) => {
                    let cause = StoreError::InvalidRequest {
                        table: T::TABLE.to_owned(),
                        reason: other.to_string(),
                    };
                    Err(self.refused(cause))
                }
            },
            Err(source) => Err(self.refused(source)),
        }
    }

    /// The loader's rows of puts handed back, with `source` as the reason.
    pub(crate) fn refused(mut self, source: StoreError) -> LoadError {
        LoadError {
            table: T::TABLE.to_owned(),
            written: self.written,
            unwritten: std::mem::take(&mut self.batch),
            failed: untyped(T::TABLE, std::mem::take(&mut self.failed)),
            cause: source,
        }
    }
}

/// A table loader's failed rows as a [`LoadError`] hands them back: an
/// error that is not the store's (a version conflict) as an
/// [`StoreError::InvalidRequest`] with its message.
fn untyped(table: &str, failed: Vec<FailedRow<Error>>) -> Vec<FailedRow> {
    failed
        .into_iter()
        .map(|f| {
            let outcome = f.outcome.map_err(|e| match e {
                Error::Store(e) => e,
                other => StoreError::InvalidRequest {
                    table: table.to_owned(),
                    reason: other.to_string(),
                },
            });
            FailedRow::new(f.row, outcome)
        })
        .collect()
}

/// The bytes a mutation carries, for the batch budget.
fn mutation_bytes(m: &Mutation) -> usize {
    match m {
        Mutation::Put {
            family,
            qualifier,
            value,
            ..
        } => family.len() + qualifier.len() + value.len(),
        Mutation::DeleteCell { family, qualifier, .. } | Mutation::DeleteColumn { family, qualifier, .. } => {
            family.len() + qualifier.len()
        }
        Mutation::DeleteFamily { family, .. } => family.len(),
        _ => 0,
    }
}

/// Stamps `m`'s unstamped timestamps with `ts`: puts and column deletes at
/// `ts`, a dynamic family's replacement up to the millisecond before.
/// (Stamped once: a retry writes the same timestamps.)
fn stamp(m: &mut RowMutation, ts: i64) {
    let at = |t: &mut Option<i64>| match *t {
        Some(UNSTAMPED) => *t = Some(ts),
        Some(before) if before == UNSTAMPED - 1 => *t = Some(ts - 1),
        _ => {}
    };
    for mutation in &mut m.mutations {
        match mutation {
            Mutation::Put { timestamp, .. } => at(timestamp),
            Mutation::DeleteColumn { up_to, .. } | Mutation::DeleteFamily { up_to, .. } => at(up_to),
            Mutation::DeleteCell { .. } | Mutation::DeleteRow { .. } => {}
        }
    }
}
