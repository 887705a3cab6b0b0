//! Secondary indexes: a table from a field's value to the rows that hold it.

use futures_util::StreamExt;

use bytes::Bytes;

use super::{CheckOptions, Checkpoint, Progress, Report};
use crate::clock::{RowSet, next_timestamp};
use crate::error::{Error, Result};
use crate::key::{
    FromKeyPart, KeyError, KeyFormat, KeyPart, KeySchema, PartArg, PartKind, PartSpec, Printable, Segment,
};
use crate::schema::{FamilySchema, SchemaDiff, TableSchema};
use crate::store::{Get, Mutation, RowMutation, Scan, Store};
use crate::table::{Cursor, HTable, Query, Table, lifecycle};

const FAMILY: &str = "x";

/// A secondary index of `T` on one value per row (a field, or anything
/// computed from the row), kept in a table of its own: rowkey
/// `<value><primary rowkey>`, binary, so a lookup is one prefix scan.
///
/// **The primary table is authoritative.** Writing through the index:
/// 1. writes the new index entry,
/// 2. writes the row,
/// 3. removes the old entry if the value changed.
///
/// A failure leaves at worst an entry pointing at a row that does not hold
/// its value (stale): lookups check each row and skip those, and
/// [`repair`](Index::repair) removes them, and adds entries a row lacks.
pub struct Index<T: HTable, V, S> {
    table: Table<T, S>,
    index_table: &'static str,
    value_of: fn(&T) -> V,
    /// The entries' key layout: the value, then the row. (A value kind the
    /// layout refuses is the error of the first call that needs it.)
    key: std::result::Result<KeySchema, KeyError>,
}

impl<T: HTable, V, S> std::fmt::Debug for Index<T, V, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("table", &T::TABLE)
            .field("index_table", &self.index_table)
            .finish()
    }
}

impl<T, V, S> Index<T, V, S>
where
    T: HTable,
    V: KeyPart + FromKeyPart + PartialEq + Send + Sync,
    S: Store,
{
    /// An index of `T` by `value_of`, stored in `index_table`. Nothing is
    /// read or written until it is used: [`create`](Self::create),
    /// [`create_if_missing`](Self::create_if_missing) or
    /// [`check_schema`](Self::check_schema) the index table at startup, as
    /// every helper's own tables.
    pub fn new(store: S, index_table: &'static str, value_of: fn(&T) -> V) -> Self {
        let key = KeySchema::new(
            KeyFormat::Binary,
            vec![
                Segment::Part(PartSpec::new("value", V::KIND)),
                Segment::Part(PartSpec::new("row", PartKind::Bytes)),
            ],
        );
        crate::table::register_index(T::TABLE, index_table);
        Index {
            table: Table::new(store),
            index_table,
            value_of,
            key,
        }
    }

    /// The entries' key layout.
    fn key(&self) -> Result<&KeySchema> {
        self.key.as_ref().map_err(|source| Error::Key {
            table: self.index_table,
            cause: source.clone(),
        })
    }

    /// The indexed table.
    pub fn table(&self) -> &Table<T, S> {
        &self.table
    }

    /// The index table's schema: one family, `x`.
    fn schema(&self) -> TableSchema {
        TableSchema::new(self.index_table).family(FamilySchema::new(FAMILY))
    }

    /// Creates the index table (the indexed table is `T`'s: create it
    /// through [`table`](Self::table)).
    pub async fn create(&self) -> Result<()> {
        self.key()?;
        self.table.store().create_table(&self.schema()).await?;
        Ok(())
    }

    /// Creates the index table unless it exists, and returns whether it
    /// did; one that exists is checked as [`check_schema`](Self::check_schema)
    /// checks it.
    pub async fn create_if_missing(&self) -> Result<bool> {
        self.key()?;
        lifecycle::create_if_missing(self.table.store(), self.index_table, &self.schema()).await
    }

    /// Checks that the index table has the index's family, reading only, as
    /// [`Table::check_schema`] checks a table: [`Error::SchemaMismatch`] if
    /// not, else the informational differences.
    pub async fn check_schema(&self) -> Result<SchemaDiff> {
        lifecycle::check_schema(self.table.store(), self.index_table, &self.schema()).await
    }

    fn entry_key(&self, value: &V, row: &[u8]) -> Result<Bytes> {
        self.key()?
            .encode(&(value, row))
            .map(Bytes::from)
            .map_err(|source| Error::Key {
                table: self.index_table,
                cause: source,
            })
    }

    /// An entry as a finding names it: its value and its row's key, each
    /// decoded into named parts (`value="cancelled" of row customer="c2"
    /// at=...`); the printable bytes of one that does not decode.
    fn describe_entry(&self, entry: &[u8]) -> String {
        let decoded = self.key().ok().and_then(|key| {
            let value = key.inspect(entry).ok()?.part("value")?.to_string();
            let (_, primary): (V, Bytes) = key.decode(entry).ok()?;
            Some((value, primary))
        });
        match decoded {
            Some((value, primary)) => match T::key_schema().inspect(&primary) {
                Ok(row) => format!("value={value} of row {row}"),
                Err(_) => format!("value={value} of row {}", Printable(&primary)),
            },
            None => Printable(entry).to_string(),
        }
    }

    fn put_entry(&self, key: Bytes, ts: i64) -> RowMutation {
        RowMutation::new(key).put_at(FAMILY, "", ts, Bytes::new())
    }

    fn delete_entry(&self, key: Bytes, ts: i64) -> RowMutation {
        RowMutation::new(key).push(Mutation::DeleteRow { up_to: Some(ts) })
    }

    /// Writes a row and keeps its index entry current. A type with a
    /// `version` field is written only if the stored version is the row's
    /// (else [`Error::Conflict`], and the entry written for a new value is
    /// taken back), as by [`Table::put`].
    pub async fn put(&self, row: &T) -> Result<()> {
        self.write(row).await.map(drop)
    }

    /// [`put`](Self::put), then sets the row's version field to the version
    /// now stored, as [`Table::save`] does.
    pub async fn save(&self, row: &mut T) -> Result<()> {
        if let Some(version) = self.write(row).await? {
            row.set_version(version);
        }
        Ok(())
    }

    /// Writes a row and its entry; the version stored, for versioned types.
    async fn write(&self, row: &T) -> Result<Option<u64>> {
        let primary = self.table.row_key_of(row)?;
        let old = self.table.get_row(primary.clone()).await?;
        let value = (self.value_of)(row);
        let entry = self.entry_key(&value, &primary)?;
        let stale = match old {
            Some(old) => {
                let old_value = (self.value_of)(&old);
                (old_value != value)
                    .then(|| self.entry_key(&old_value, &primary))
                    .transpose()?
            }
            None => None,
        };
        let mut rows = RowSet::of(T::TABLE, &primary).with(self.index_table, &entry);
        if let Some(stale) = &stale {
            rows.insert(self.index_table, stale);
        }
        let ts = next_timestamp(&rows);
        let store = self.table.store();
        store
            .mutate(self.index_table, &[self.put_entry(entry.clone(), ts)])
            .await?;
        let version = match self.table.save_at(row, primary, ts).await {
            Ok(version) => version,
            Err(e @ Error::Conflict { .. }) => {
                // Not written: the new value's entry goes (the old one
                // stays, its row unchanged); a failure to remove it leaves
                // a stale entry, which lookups skip and `repair` removes.
                if stale.is_some() {
                    let _ = store.mutate(self.index_table, &[self.delete_entry(entry, ts)]).await;
                }
                return Err(e);
            }
            Err(e) => return Err(e),
        };
        if let Some(stale) = stale {
            store.mutate(self.index_table, &[self.delete_entry(stale, ts)]).await?;
        }
        Ok(version)
    }

    /// Updates chosen fields of a row and keeps its index entry current.
    pub async fn update(&self, row: &T, fields: impl crate::table::Fields<T>) -> Result<()> {
        let fields = fields.names();
        let primary = self.table.row_key_of(row)?;
        let old = self.table.get_row(primary.clone()).await?;
        let store = self.table.store();
        // Which fields the value depends on is not known here, so: write an
        // entry for the row's value first (the new value, if the update
        // changes it), update, read the row back, then remove whichever of
        // the old and the speculative entries does not match it. The
        // timestamp covers the row and both entries.
        let value = (self.value_of)(row);
        let entry = self.entry_key(&value, &primary)?;
        let old = old
            .map(|old| {
                let old_value = (self.value_of)(&old);
                self.entry_key(&old_value, &primary)
                    .map(|old_entry| (old_value, old_entry))
            })
            .transpose()?;
        let mut rows = RowSet::of(T::TABLE, &primary).with(self.index_table, &entry);
        if let Some((_, old_entry)) = &old {
            rows.insert(self.index_table, old_entry);
        }
        let ts = next_timestamp(&rows);
        store
            .mutate(self.index_table, &[self.put_entry(entry.clone(), ts)])
            .await?;
        self.table.update_at(row, primary.clone(), &fields, ts).await?;
        let now = self.table.get_row(primary).await?;
        if let (Some((old_value, old_entry)), Some(now)) = (old, now) {
            let new_value = (self.value_of)(&now);
            if old_value != new_value {
                store
                    .mutate(self.index_table, &[self.delete_entry(old_entry, ts)])
                    .await?;
            }
            if new_value != value {
                // The update did not touch the value's fields after all.
                store.mutate(self.index_table, &[self.delete_entry(entry, ts)]).await?;
            }
        }
        Ok(())
    }

    /// Deletes a row (by key) and its index entry: the row first. A row a
    /// relation links is refused, as by [`Table::delete`].
    pub async fn delete(&self, key: impl crate::key::KeyArg<T::Key>) -> Result<()> {
        let primary = self.table.row_key(key)?;
        let Some(old) = self.table.get_row(primary.clone()).await? else {
            return Ok(());
        };
        self.table.refuse_linked(std::slice::from_ref(&primary)).await?;
        let entry = self.entry_key(&(self.value_of)(&old), &primary)?;
        let ts = next_timestamp(&RowSet::of(T::TABLE, &primary).with(self.index_table, &entry));
        self.table.delete_rows_at([primary], ts).await?;
        self.table
            .store()
            .mutate(self.index_table, &[self.delete_entry(entry, ts)])
            .await?;
        Ok(())
    }

    async fn entries(&self, value: Option<&V>) -> Result<Vec<(Bytes, V, Bytes)>> {
        let scan = match value {
            Some(v) => Scan::prefix(self.key()?.encode_prefix(&(v,)).map_err(|source| Error::Key {
                table: self.index_table,
                cause: source,
            })?),
            None => Scan::all(),
        };
        let mut scanned = self.table.store().scan(self.index_table, &scan).await?;
        let mut entries = Vec::new();
        while let Some(r) = scanned.next().await {
            let r = r?;
            let (v, primary): (V, Bytes) = self.key()?.decode(&r.row).map_err(|source| Error::Key {
                table: self.index_table,
                cause: source,
            })?;
            entries.push((r.row, v, primary));
        }
        Ok(entries)
    }

    /// The rows whose value is `value` (a `&str` for a `String` value), in
    /// primary key order within the
    /// index: one prefix scan and one batched get. Entries whose row no
    /// longer holds the value (left by a failed write) are skipped.
    pub async fn lookup(&self, value: impl PartArg<V>) -> Result<Vec<T>> {
        let value = value.into_part();
        let entries = self.entries(Some(&value)).await?;
        let rows = self
            .table
            .get_many_rows(entries.into_iter().map(|(_, _, primary)| primary))
            .await?;
        let mut found = Vec::with_capacity(rows.len());
        for row in rows {
            if let Some(row) = row?
                && (self.value_of)(&row) == value
            {
                found.push(row);
            }
        }
        Ok(found)
    }

    /// Compares the index with the table: rows without an entry (`missing`),
    /// entries whose row holds another value (`dangling`), entries whose
    /// row is gone (`absent`), and rows that do not read as `T`
    /// (`unreadable`, once each: their entries are kept, and the check goes
    /// on).
    pub async fn verify(&self) -> Result<Report> {
        self.check(false, &CheckOptions::new()).await
    }

    /// Adds the missing entries and removes the dangling and absent ones.
    pub async fn repair(&self) -> Result<Report> {
        self.check(true, &CheckOptions::new()).await
    }

    /// [`verify`](Self::verify) or (with `fix`) [`repair`](Self::repair) in
    /// batches: the table's rows a batch at a time (their entries in one
    /// batched get), then the index's entries likewise (their rows in one
    /// batched get), reporting [`Progress`] after each batch and resuming
    /// from [`CheckOptions::from`]. A repair writes each batch's fixes
    /// before it reads the next.
    pub async fn check(&self, fix: bool, options: &CheckOptions) -> Result<Report> {
        let mut report = Report::default();
        let mut read = 0u64;
        let store = self.table.store();
        if let Some(start) = Checkpoint::start_of(options.from.as_ref(), 1) {
            let mut rows = self.rows_from(options, &start).await?;
            let mut done = false;
            while !done {
                // A batch of rows; one that does not read as `T` is
                // reported and the pass goes on.
                let mut batch = Vec::with_capacity(options.batch.min(10_000));
                let mut seen = 0;
                while seen < options.batch {
                    seen += 1;
                    match rows.next().await {
                        Some(Ok(row)) => batch.push(row),
                        Some(Err(e)) if super::is_unreadable(&e) => note_unreadable(&mut report, &e),
                        Some(Err(e)) => return Err(e),
                        None => {
                            done = true;
                            break;
                        }
                    }
                }
                let mut expected = Vec::with_capacity(batch.len());
                for row in &batch {
                    let primary = self.table.row_key_of(row)?;
                    expected.push((self.entry_key(&(self.value_of)(row), &primary)?, primary));
                }
                let Some(last) = expected.last().map(|(_, primary)| primary.clone()) else {
                    // Nothing that read: no checkpoint to report.
                    continue;
                };
                let gets: Vec<Get> = expected.iter().map(|(entry, _)| Get::new(entry.clone())).collect();
                let stored = store.get_many(self.index_table, &gets).await?;
                let mut to_put = Vec::new();
                for ((entry, _), stored) in expected.into_iter().zip(stored) {
                    if stored.is_none() {
                        report.missing.push(format!("no entry {}", self.describe_entry(&entry)));
                        to_put.push(entry);
                    }
                }
                if fix {
                    self.write_entries(to_put, Vec::new()).await?;
                }
                read += batch.len() as u64;
                options.report(&progress("table rows", read, &report, Checkpoint::new(1, last)));
                tokio::task::yield_now().await;
            }
        }
        if let Some(start) = Checkpoint::start_of(options.from.as_ref(), 2) {
            let mut entries = store.scan(self.index_table, &Scan::range(start, Bytes::new())).await?;
            loop {
                let batch = super::pass::next_batch(&mut entries, options.batch).await?;
                let Some(last) = batch.last().map(|e| e.row.clone()) else {
                    break;
                };
                let mut named = Vec::with_capacity(batch.len());
                for entry in &batch {
                    let (_, primary): (V, Bytes) = self.key()?.decode(&entry.row).map_err(|source| Error::Key {
                        table: self.index_table,
                        cause: source,
                    })?;
                    named.push((entry.row.clone(), primary));
                }
                let rows = self
                    .table
                    .get_many_rows(named.iter().map(|(_, primary)| primary.clone()))
                    .await?;
                let mut to_delete = Vec::new();
                for ((entry, primary), row) in named.into_iter().zip(rows) {
                    let row = match row {
                        Ok(row) => row,
                        Err(e) if super::is_unreadable(&e) => {
                            // Its value cannot be known: the entry stays.
                            note_unreadable(&mut report, &e);
                            continue;
                        }
                        Err(e) => return Err(e),
                    };
                    match row {
                        None => report
                            .absent
                            .push(format!("entry {}: the row is gone", self.describe_entry(&entry))),
                        Some(row) if self.entry_key(&(self.value_of)(&row), &primary)? != entry => {
                            report.dangling.push(format!(
                                "entry {}: the row holds another value",
                                self.describe_entry(&entry)
                            ))
                        }
                        Some(_) => continue,
                    }
                    to_delete.push(entry);
                }
                if fix {
                    self.write_entries(Vec::new(), to_delete).await?;
                }
                read += batch.len() as u64;
                options.report(&progress("index entries", read, &report, Checkpoint::new(2, last)));
                tokio::task::yield_now().await;
            }
        }
        Ok(report)
    }

    /// Puts and deletes entries at one timestamp.
    async fn write_entries(&self, to_put: Vec<Bytes>, to_delete: Vec<Bytes>) -> Result<()> {
        if to_put.is_empty() && to_delete.is_empty() {
            return Ok(());
        }
        let ts = next_timestamp(&RowSet::of_rows(
            self.index_table,
            to_put.iter().chain(&to_delete).map(|k| &k[..]),
        ));
        let writes: Vec<RowMutation> = to_put
            .into_iter()
            .map(|key| self.put_entry(key, ts))
            .chain(to_delete.into_iter().map(|key| self.delete_entry(key, ts)))
            .collect();
        self.table.store().mutate(self.index_table, &writes).await?;
        Ok(())
    }

    /// Deletes every entry and indexes the table afresh.
    pub async fn rebuild(&self) -> Result<()> {
        self.rebuild_with(&CheckOptions::new()).await
    }

    /// [`rebuild`](Self::rebuild) in batches: the entries deleted a batch
    /// at a time, then the table's rows indexed a batch at a time,
    /// reporting [`Progress`] after each batch and resuming from
    /// [`CheckOptions::from`]. (Between the passes the index is empty.)
    pub async fn rebuild_with(&self, options: &CheckOptions) -> Result<()> {
        let store = self.table.store();
        let nothing = Report::default();
        let mut read = 0u64;
        if let Some(start) = Checkpoint::start_of(options.from.as_ref(), 1) {
            let entries = store.scan(self.index_table, &Scan::range(start, Bytes::new())).await?;
            let mut batches = entries.chunks(options.batch);
            while let Some(batch) = batches.next().await {
                let stale: Vec<Bytes> = batch
                    .into_iter()
                    .map(|e| e.map(|e| e.row))
                    .collect::<std::result::Result<_, _>>()?;
                let Some(last) = stale.last().cloned() else { break };
                read += stale.len() as u64;
                self.write_entries(Vec::new(), stale).await?;
                options.report(&progress("stale entries", read, &nothing, Checkpoint::new(1, last)));
                tokio::task::yield_now().await;
            }
        }
        if let Some(start) = Checkpoint::start_of(options.from.as_ref(), 2) {
            // Entries are stamped after the deletes' timestamps (the clock
            // orders calls on a common row), so they show.
            let rows = self.rows_from(options, &start).await?;
            let mut batches = rows.chunks(options.batch);
            while let Some(batch) = batches.next().await {
                let mut fresh = Vec::with_capacity(batch.len());
                let mut last = None;
                for row in batch {
                    let row = row?;
                    let primary = self.table.row_key_of(&row)?;
                    fresh.push(self.entry_key(&(self.value_of)(&row), &primary)?);
                    last = Some(primary);
                }
                let Some(last) = last else { break };
                read += fresh.len() as u64;
                self.write_entries(fresh, Vec::new()).await?;
                options.report(&progress("table rows", read, &nothing, Checkpoint::new(2, last)));
                tokio::task::yield_now().await;
            }
        }
        Ok(())
    }

    /// The table's rows from `start` (the first row, or the one after a
    /// checkpoint's).
    async fn rows_from(&self, options: &CheckOptions, start: &[u8]) -> Result<crate::Rows<'_, T>> {
        // The query (whose parts need not be `Send`) ends before the wait.
        let scan = {
            let mut query = Query::all().batch_size(options.batch.min(10_000));
            if let Some(from) = options.from.as_ref().filter(|_| !start.is_empty()) {
                query = query.after(Cursor::after(Bytes::copy_from_slice(from.after())));
            }
            self.table.scan(query)
        };
        scan.await
    }
}

/// Reports a row that does not read, once (both passes may meet it).
fn note_unreadable(report: &mut Report, e: &Error) {
    let found = e.to_string();
    if !report.unreadable.contains(&found) {
        report.unreadable.push(found);
    }
}

#[async_trait::async_trait]
impl<T, V, S> super::Checked for Index<T, V, S>
where
    T: HTable,
    V: KeyPart + FromKeyPart + PartialEq + Send + Sync,
    S: Store,
{
    async fn verify(&self) -> Result<Report> {
        Index::verify(self).await
    }
    async fn repair(&self) -> Result<Report> {
        Index::repair(self).await
    }
    fn table(&self) -> &'static str {
        self.index_table
    }
    fn own_tables(&self) -> Vec<TableSchema> {
        vec![self.schema()]
    }
    async fn rebuild(&self) -> Option<Result<()>> {
        Some(Index::rebuild(self).await)
    }
    async fn rebuild_with(&self, options: &CheckOptions) -> Option<Result<()>> {
        Some(Index::rebuild_with(self, options).await)
    }
    async fn check(&self, fix: bool, options: &CheckOptions) -> Result<Report> {
        Index::check(self, fix, options).await
    }
}

/// A batched check's progress, from what it has read and found.
pub(super) fn progress(pass: &'static str, rows: u64, report: &Report, checkpoint: Checkpoint) -> Progress {
    Progress {
        pass,
        rows,
        found: report.len(),
        checkpoint,
    }
}

/// An index of `T`'s rows, as seen by a delete that keeps it current: the
/// entry a row has. [`Index`] is one; a relation's
/// [`delete_left_indexed`](super::ManyToMany::delete_left_indexed) takes
/// several.
pub trait IndexOf<T: HTable>: Send + Sync {
    /// The index table.
    fn index_table(&self) -> &'static str;

    /// The rowkey of `row`'s entry in the index table; `primary` is the
    /// row's key.
    fn entry_of(&self, row: &T, primary: &[u8]) -> Result<Bytes>;
}

impl<T, V, S> IndexOf<T> for Index<T, V, S>
where
    T: HTable,
    V: KeyPart + FromKeyPart + PartialEq + Send + Sync,
    S: Store,
{
    fn index_table(&self) -> &'static str {
        self.index_table
    }

    fn entry_of(&self, row: &T, primary: &[u8]) -> Result<Bytes> {
        self.entry_key(&(self.value_of)(row), primary)
    }
}

/// The entries the row at `primary` has in `indexes` (none when the row
/// does not exist), each with its index table.
pub(super) async fn index_entries<T: HTable, S: Store>(
    table: &Table<T, S>,
    primary: &Bytes,
    indexes: &[&dyn IndexOf<T>],
) -> Result<Vec<(&'static str, Bytes)>> {
    if indexes.is_empty() {
        return Ok(Vec::new());
    }
    let Some(row) = table.get_row(primary.clone()).await? else {
        return Ok(Vec::new());
    };
    indexes
        .iter()
        .map(|index| Ok((index.index_table(), index.entry_of(&row, primary)?)))
        .collect()
}

/// Deletes index entries up to `ts`, one call per index table.
pub(super) async fn delete_index_entries<S: Store>(
    store: &S,
    entries: Vec<(&'static str, Bytes)>,
    ts: i64,
) -> Result<()> {
    let mut by_table: Vec<(&'static str, Vec<RowMutation>)> = Vec::new();
    for (table, entry) in entries {
        let delete = RowMutation::new(entry).push(Mutation::DeleteRow { up_to: Some(ts) });
        match by_table.iter_mut().find(|(t, _)| *t == table) {
            Some((_, rows)) => rows.push(delete),
            None => by_table.push((table, vec![delete])),
        }
    }
    for (table, rows) in by_table {
        store.mutate(table, &rows).await?;
    }
    Ok(())
}
