//! Secondary indexes: a table from a field's value to the rows that hold it.

use futures_util::StreamExt;
use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;

use super::Report;
use crate::clock::{RowSet, next_timestamp};
use crate::error::{Error, Result};
use crate::key::{FromKeyPart, KeyFormat, KeyPart, KeySchema, PartKind, PartSpec, Printable, Segment};
use crate::schema::{FamilySchema, TableSchema};
use crate::store::{Mutation, RowMutation, Scan, Store};
use crate::table::{HTable, Query, Table};

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
    key: KeySchema,
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
    /// An index of `T` by `value_of`, stored in `index_table`.
    pub fn new(store: S, index_table: &'static str, value_of: fn(&T) -> V) -> Result<Self> {
        let key = KeySchema::new(
            KeyFormat::Binary,
            vec![
                Segment::Part(PartSpec::new("value", V::KIND)),
                Segment::Part(PartSpec::new("row", PartKind::Bytes)),
            ],
        )
        .map_err(|source| Error::Key {
            table: index_table,
            source,
        })?;
        Ok(Index {
            table: Table::new(store),
            index_table,
            value_of,
            key,
        })
    }

    /// The indexed table.
    pub fn table(&self) -> &Table<T, S> {
        &self.table
    }

    /// Creates the index table.
    pub async fn create(&self) -> Result<()> {
        self.table
            .store()
            .create_table(&TableSchema::new(self.index_table).family(FamilySchema::new(FAMILY)))
            .await?;
        Ok(())
    }

    fn entry_key(&self, value: &V, row: &[u8]) -> Result<Bytes> {
        self.key
            .encode(&(value, row))
            .map(Bytes::from)
            .map_err(|source| Error::Key {
                table: self.index_table,
                source,
            })
    }

    fn put_entry(&self, key: Bytes, ts: i64) -> RowMutation {
        RowMutation::new(key).put_at(FAMILY, "", ts, Bytes::new())
    }

    fn delete_entry(&self, key: Bytes, ts: i64) -> RowMutation {
        RowMutation::new(key).push(Mutation::DeleteRow { up_to: Some(ts) })
    }

    /// Writes a row and keeps its index entry current.
    pub async fn put(&self, row: &T) -> Result<()> {
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
        store.mutate(self.index_table, &[self.put_entry(entry, ts)]).await?;
        self.table.put_at(row, primary, ts).await?;
        if let Some(stale) = stale {
            store.mutate(self.index_table, &[self.delete_entry(stale, ts)]).await?;
        }
        Ok(())
    }

    /// Updates chosen fields of a row and keeps its index entry current.
    pub async fn update(&self, row: &T, fields: &[crate::Field<T>]) -> Result<()> {
        let fields = crate::table::field_names(fields);
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
    pub async fn delete(&self, key: impl crate::key::KeyTuple) -> Result<()> {
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
            Some(v) => Scan::prefix(self.key.encode_prefix(&(v,)).map_err(|source| Error::Key {
                table: self.index_table,
                source,
            })?),
            None => Scan::all(),
        };
        let mut scanned = self.table.store().scan(self.index_table, &scan).await?;
        let mut entries = Vec::new();
        while let Some(r) = scanned.next().await {
            let r = r?;
            let (v, primary): (V, Bytes) = self.key.decode(&r.row).map_err(|source| Error::Key {
                table: self.index_table,
                source,
            })?;
            entries.push((r.row, v, primary));
        }
        Ok(entries)
    }

    /// The rows whose value is `value`, in primary key order within the
    /// index: one prefix scan and one batched get. Entries whose row no
    /// longer holds the value (left by a failed write) are skipped.
    pub async fn lookup(&self, value: &V) -> Result<Vec<T>> {
        let entries = self.entries(Some(value)).await?;
        let rows = self
            .table
            .get_many_rows(entries.into_iter().map(|(_, _, primary)| primary))
            .await?;
        Ok(rows
            .into_iter()
            .flatten()
            .filter(|row| (self.value_of)(row) == *value)
            .collect())
    }

    /// Compares the index with the table: rows without an entry (`missing`),
    /// entries whose row holds another value (`dangling`) and entries whose
    /// row is gone (`absent`).
    pub async fn verify(&self) -> Result<Report> {
        self.check(false).await
    }

    /// Adds the missing entries and removes the dangling and absent ones.
    pub async fn repair(&self) -> Result<Report> {
        self.check(true).await
    }

    async fn check(&self, fix: bool) -> Result<Report> {
        let mut report = Report::default();
        let mut expected = BTreeSet::new();
        let mut rows = BTreeSet::new();
        let mut scanned = self.table.scan(Query::all()).await?;
        while let Some(row) = scanned.next().await {
            let row = row?;
            let primary = self.table.row_key_of(&row)?;
            expected.insert(self.entry_key(&(self.value_of)(&row), &primary)?);
            rows.insert(primary);
        }
        let stored: BTreeMap<Bytes, Bytes> = self
            .entries(None)
            .await?
            .into_iter()
            .map(|(k, _, primary)| (k, primary))
            .collect();
        let mut to_put = Vec::new();
        let mut to_delete = Vec::new();
        for key in expected.iter().filter(|k| !stored.contains_key(*k)) {
            report.missing.push(format!("no entry {}", Printable(key)));
            to_put.push(key.clone());
        }
        for (key, primary) in stored.iter().filter(|(k, _)| !expected.contains(*k)) {
            if rows.contains(primary) {
                report
                    .dangling
                    .push(format!("entry {}: its row holds another value", Printable(key)));
            } else {
                report
                    .absent
                    .push(format!("entry {}: row {} is gone", Printable(key), Printable(primary)));
            }
            to_delete.push(key.clone());
        }
        if fix && !(to_put.is_empty() && to_delete.is_empty()) {
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
        }
        Ok(report)
    }

    /// Deletes every entry and indexes the table afresh.
    pub async fn rebuild(&self) -> Result<()> {
        let stale: Vec<Bytes> = self.entries(None).await?.into_iter().map(|(k, _, _)| k).collect();
        let store = self.table.store();
        if !stale.is_empty() {
            let ts = next_timestamp(&RowSet::of_rows(self.index_table, stale.iter().map(|k| &k[..])));
            let deletes: Vec<RowMutation> = stale.into_iter().map(|k| self.delete_entry(k, ts)).collect();
            store.mutate(self.index_table, &deletes).await?;
        }
        // Entries are stamped after the deletes' timestamp (the clock orders
        // calls on a common row), so they show.
        let mut fresh = Vec::new();
        let mut scanned = self.table.scan(Query::all()).await?;
        while let Some(row) = scanned.next().await {
            let row = row?;
            let primary = self.table.row_key_of(&row)?;
            fresh.push(self.entry_key(&(self.value_of)(&row), &primary)?);
        }
        if !fresh.is_empty() {
            let ts = next_timestamp(&RowSet::of_rows(self.index_table, fresh.iter().map(|k| &k[..])));
            let puts: Vec<RowMutation> = fresh.into_iter().map(|k| self.put_entry(k, ts)).collect();
            store.mutate(self.index_table, &puts).await?;
        }
        Ok(())
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
    async fn rebuild(&self) -> Option<Result<()>> {
        Some(Index::rebuild(self).await)
    }
}
