//! Many-to-many links kept in two tables (person/role, shop/item).

use crate::store::{BatchOutcome, RowOutcome};
use std::collections::{BTreeMap, BTreeSet, HashMap};

use bytes::Bytes;

use super::index::{IndexOf, delete_index_entries, index_entries};
use super::{CheckOptions, Checkpoint, Progress, Report, Side, is_unreadable};
use crate::clock::{RowSet, next_timestamp};
use crate::error::{Error, Result};
use crate::key::{KeyArg, KeyTuple};
use crate::schema::SchemaDiff;
use crate::store::{Get, Mutation, RowMutation, RowResult, Scan, Store};
use crate::table::{FieldRole, HTable, KeyCall, Table};
use crate::value::CellValue;

/// A many-to-many relation stored twice: each left row lists its right ids
/// in a dynamic family (`roles:<rid>=name` on a person), each right row its
/// left ids (`persons:<pid>=name` on a role).
///
/// **The left side is authoritative.** Every operation takes one timestamp
/// from [`next_timestamp`] for all the rows it writes, and writes the left
/// row first, then the right rows, both at that timestamp (puts at it,
/// deletes up to it). So:
/// - concurrent operations on one pair converge: each row ends with the
///   operation of the later timestamp, whatever order they reached it in;
/// - an operation cut off half-way leaves the left side written and the
///   right side not; [`verify`](Self::verify) reports the difference and
///   [`repair`](Self::repair) makes the right side mirror the left.
///
/// Deleting a right entity is the one exception to "left first": it removes
/// the entity from the left lists first, then deletes its row, so that a
/// repair after a failure never resurrects part of a deleted row.
///
/// Ids are the tables' single-part keys, stored as qualifiers with their
/// cell encoding (a `String` id is its UTF-8). Values are strings: either
/// labels copied from the other entity (a role's name on the person's row,
/// the person's name on the role's), computed by the functions given to
/// [`with_labels`](Self::with_labels); or data of the link itself (a
/// shop/item link's type), the same on both rows.
pub struct ManyToMany<L: HTable, R: HTable, S> {
    left: Table<L, S>,
    right: Table<R, S>,
    left_family: &'static str,
    right_family: &'static str,
    left_label: Option<fn(&L) -> String>,
    right_label: Option<fn(&R) -> String>,
}

impl<L, R, S> std::fmt::Debug for ManyToMany<L, R, S>
where
    L: HTable,
    R: HTable,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManyToMany")
            .field("left", &L::TABLE)
            .field("left_family", &self.left_family)
            .field("right", &R::TABLE)
            .field("right_family", &self.right_family)
            .finish()
    }
}

impl<L, R, S> ManyToMany<L, R, S>
where
    L: HTable,
    R: HTable,
    L::Key: CellValue + KeyTuple + Clone + Ord,
    R::Key: CellValue + KeyTuple + Clone + Ord,
    S: Store + Clone,
{
    /// The relation between `L` rows, listing right ids in `left_family`,
    /// and `R` rows, listing left ids in `right_family`.
    pub fn new(store: S, left_family: &'static str, right_family: &'static str) -> Self {
        ManyToMany {
            left: Table::new(store.clone()),
            right: Table::new(store),
            left_family,
            right_family,
            left_label: None,
            right_label: None,
        }
    }

    /// The labels copied into the other side's list: `left` labels a left
    /// entity on right rows (a person's name on a role), `right` a right
    /// entity on left rows. [`link`](Self::link) reads both entities to
    /// write them, and [`repair`](Self::repair) and
    /// [`relabel_left`](Self::relabel_left) keep them current.
    pub fn with_labels(mut self, left: fn(&L) -> String, right: fn(&R) -> String) -> Self {
        self.left_label = Some(left);
        self.right_label = Some(right);
        self
    }

    /// The left table.
    pub fn left(&self) -> &Table<L, S> {
        &self.left
    }

    /// The right table.
    pub fn right(&self) -> &Table<R, S> {
        &self.right
    }

    fn store(&self) -> &S {
        self.left.store()
    }

    /// Creates both tables, as `L` and `R` declare them (their families
    /// hold the lists).
    pub async fn create(&self) -> Result<()> {
        self.left.create().await?;
        self.right.create().await
    }

    /// Creates each table unless it exists, as
    /// [`Table::create_if_missing`] does; returns whether it created one.
    pub async fn create_if_missing(&self) -> Result<bool> {
        let left = self.left.create_if_missing().await?;
        let right = self.right.create_if_missing().await?;
        Ok(left || right)
    }

    /// Checks both tables against `L` and `R`, as
    /// [`Table::check_schema`] does; the left table's differences first.
    pub async fn check_schema(&self) -> Result<(SchemaDiff, SchemaDiff)> {
        Ok((self.left.check_schema().await?, self.right.check_schema().await?))
    }

    /// [`Error::Field`] if a family of this relation is a plain dynamic
    /// field of its type: a put of the entity would replace the list.
    async fn check_owned(&self) -> Result<()> {
        fn plain<T: HTable>(family: &str) -> Result<()> {
            match T::fields()
                .iter()
                .find(|f| f.family == family && f.role == FieldRole::Dynamic)
            {
                Some(f) => Err(Error::Field {
                    table: T::TABLE,
                    field: f.name.into(),
                    reason: "holds a relation's list but is a plain dynamic field, which a put of the entity replaces: mark it `#[hmap(dynamic, relation)]`",
                }),
                None => Ok(()),
            }
        }
        plain::<L>(self.left_family)?;
        plain::<R>(self.right_family)
    }

    /// [`Error::NoSuchEntity`] for the first of these keys whose entity does
    /// not exist (one batched get).
    async fn require<T: HTable>(table: &Table<T, S>, keys: &[&T::Key]) -> Result<()>
    where
        T::Key: KeyTuple + CellValue + Clone,
    {
        let rows = keys
            .iter()
            .map(|k| table.row_key((*k).clone()))
            .collect::<Result<Vec<_>>>()?;
        match keys
            .iter()
            .zip(table.rows_exist(&rows).await?)
            .find(|(_, exists)| !exists)
        {
            Some((key, _)) => Err(Error::NoSuchEntity {
                table: T::TABLE,
                key: show(*key),
            }),
            None => Ok(()),
        }
    }

    /// Links a left and a right entity, with the labels of
    /// [`with_labels`](Self::with_labels) (empty without them). Both must
    /// exist, else [`Error::NoSuchEntity`] names the table and the row.
    /// Linking twice is harmless.
    pub fn link<'a>(&'a self, left: impl KeyArg<L::Key>, right: impl KeyArg<R::Key>) -> KeyCall<'a, ()> {
        let left = left.into_key();
        let right = right.into_key();
        Box::pin(async move {
            let left = &left;
            let right = &right;
            self.link_many_with(&[(left.clone(), right.clone())], None).await
        })
    }

    /// Links a left and a right entity with a value of the link itself (a
    /// shop/item link's type), stored in both lists. Both must exist, as
    /// for [`link`](Self::link).
    pub fn link_with<'a>(
        &'a self,
        left: impl KeyArg<L::Key>,
        right: impl KeyArg<R::Key>,
        value: &'a str,
    ) -> KeyCall<'a, ()> {
        let left = left.into_key();
        let right = right.into_key();
        Box::pin(async move {
            let left = &left;
            let right = &right;
            self.link_many_with(&[(left.clone(), right.clone())], Some(value)).await
        })
    }

    /// Links many pairs at once, as [`link`](Self::link) does one: every
    /// entity's existence (and, with labels, its label) is read in one
    /// batched get per side, then all the left rows are written in one
    /// call and all the right rows in another, at one timestamp. If an
    /// entity does not exist nothing is written. Give each pair once.
    pub async fn link_many(&self, pairs: &[(L::Key, R::Key)]) -> Result<()> {
        self.link_many_with(pairs, None).await
    }

    /// Links many pairs as [`link_many`](Self::link_many) does, each pair on
    /// its own: what became of each pair, in order. A pair whose entity
    /// does not exist is refused ([`Error::NoSuchEntity`]) and the others
    /// are linked; a pair whose left or right row failed is that row's
    /// outcome (refused or unknown). A pair whose left row was written and
    /// whose right row was not is linked on one side only, which
    /// [`verify`](Self::verify) reports and [`repair`](Self::repair)
    /// completes. `Err` is for the call as a whole.
    pub async fn link_each(&self, pairs: &[(L::Key, R::Key)]) -> Result<BatchOutcome<Error>> {
        self.check_owned().await?;
        let exists = |table: &'static str, key: String| Error::NoSuchEntity { table, key };
        let left_rows: Vec<Bytes> = pairs
            .iter()
            .map(|(l, _)| self.left.row_key(l.clone()))
            .collect::<Result<_>>()?;
        let right_rows: Vec<Bytes> = pairs
            .iter()
            .map(|(_, r)| self.right.row_key(r.clone()))
            .collect::<Result<_>>()?;
        let left_exist = self.left.rows_exist(&left_rows).await?;
        let right_exist = self.right.rows_exist(&right_rows).await?;
        let mut outcome: Vec<Option<RowOutcome<Error>>> = Vec::with_capacity(pairs.len());
        let mut linked = Vec::with_capacity(pairs.len());
        for (i, (left, right)) in pairs.iter().enumerate() {
            if !left_exist[i] {
                outcome.push(Some(RowOutcome::Refused(exists(L::TABLE, show(left)))));
            } else if !right_exist[i] {
                outcome.push(Some(RowOutcome::Refused(exists(R::TABLE, show(right)))));
            } else {
                outcome.push(None);
                linked.push(i);
            }
        }
        let chosen: Vec<(L::Key, R::Key)> = linked.iter().map(|&i| pairs[i].clone()).collect();
        let (on_left, on_right) = self.link_rows(&chosen, None).await?;
        let left_done = self.store().mutate_each(L::TABLE, &on_left).await?;
        let right_done = self.store().mutate_each(R::TABLE, &on_right).await?;
        // A row's outcome, for each pair that wrote it.
        let at_left: HashMap<&Bytes, usize> = on_left.iter().enumerate().map(|(i, m)| (&m.row, i)).collect();
        let at_right: HashMap<&Bytes, usize> = on_right.iter().enumerate().map(|(i, m)| (&m.row, i)).collect();
        let of_row = |at: &HashMap<&Bytes, usize>, done: &BatchOutcome, row: &Bytes| -> Option<RowOutcome<Error>> {
            Some(match done.get(*at.get(row)?)? {
                RowOutcome::Refused(e) => RowOutcome::Refused(Error::Store(e.duplicate())),
                RowOutcome::Unknown(e) => RowOutcome::Unknown(Error::Store(e.duplicate())),
                _ => RowOutcome::Applied,
            })
        };
        for i in linked {
            let left = of_row(&at_left, &left_done, &left_rows[i]).unwrap_or(RowOutcome::Applied);
            let both = match left {
                RowOutcome::Applied => of_row(&at_right, &right_done, &right_rows[i]).unwrap_or(RowOutcome::Applied),
                failed => failed,
            };
            outcome[i] = Some(both);
        }
        Ok(outcome.into_iter().map(|o| o.unwrap_or(RowOutcome::Applied)).collect())
    }

    async fn link_many_with(&self, pairs: &[(L::Key, R::Key)], value: Option<&str>) -> Result<()> {
        self.check_owned().await?;
        if pairs.is_empty() {
            return Ok(());
        }
        let (lefts, rights) = distinct_sides(pairs);
        Self::require(&self.left, &lefts).await?;
        Self::require(&self.right, &rights).await?;
        let (on_left, on_right) = self.link_rows(pairs, value).await?;
        self.store().mutate(L::TABLE, &on_left).await?;
        self.store().mutate(R::TABLE, &on_right).await?;
        Ok(())
    }

    /// The left and right rows that link `pairs` (entities known to
    /// exist), one mutation a row, at one timestamp, with `value` or the
    /// entities' labels.
    async fn link_rows(
        &self,
        pairs: &[(L::Key, R::Key)],
        value: Option<&str>,
    ) -> Result<(Vec<RowMutation>, Vec<RowMutation>)> {
        let (lefts, rights) = distinct_sides(pairs);
        let labels = match (value, self.left_label, self.right_label) {
            (None, Some(label_left), Some(label_right)) => {
                let l = self.left.get_many(lefts.iter().map(|k| (*k).clone())).await?;
                let r = self.right.get_many(rights.iter().map(|k| (*k).clone())).await?;
                // An entity whose row does not read has no label: the link
                // fails with the error naming its row.
                let mut l_labels: BTreeMap<&L::Key, String> = BTreeMap::new();
                for (k, e) in lefts.iter().zip(l) {
                    if let Some(e) = e? {
                        l_labels.insert(*k, label_left(&e));
                    }
                }
                let mut r_labels: BTreeMap<&R::Key, String> = BTreeMap::new();
                for (k, e) in rights.iter().zip(r) {
                    if let Some(e) = e? {
                        r_labels.insert(*k, label_right(&e));
                    }
                }
                Some((l_labels, r_labels))
            }
            _ => None,
        };
        let value = value.unwrap_or_default();
        let rows = pairs
            .iter()
            .map(|(left, right)| Ok((self.left.row_key(left.clone())?, self.right.row_key(right.clone())?)))
            .collect::<Result<Vec<(Bytes, Bytes)>>>()?;
        let mut stamped = RowSet::new();
        for (left_row, right_row) in &rows {
            stamped.insert(L::TABLE, left_row);
            stamped.insert(R::TABLE, right_row);
        }
        let ts = next_timestamp(&stamped);
        // One mutation per row, however many pairs name it.
        let mut on_left: BTreeMap<Bytes, RowMutation> = BTreeMap::new();
        let mut on_right: BTreeMap<Bytes, RowMutation> = BTreeMap::new();
        for ((left, right), (left_row, right_row)) in pairs.iter().zip(rows) {
            let (lv, rv) = match &labels {
                Some((l, r)) => (
                    r.get(right).map_or(value, String::as_str),
                    l.get(left).map_or(value, String::as_str),
                ),
                None => (value, value),
            };
            let m = on_left
                .remove(&left_row)
                .unwrap_or_else(|| RowMutation::new(left_row.clone()));
            on_left.insert(
                left_row,
                m.put_at(self.left_family, right.to_cell(), ts, lv.to_string()),
            );
            let m = on_right
                .remove(&right_row)
                .unwrap_or_else(|| RowMutation::new(right_row.clone()));
            on_right.insert(
                right_row,
                m.put_at(self.right_family, left.to_cell(), ts, rv.to_string()),
            );
        }
        Ok((on_left.into_values().collect(), on_right.into_values().collect()))
    }

    /// The rows of a left and a right entity.
    fn pair_rows(&self, left: &L::Key, right: &R::Key) -> Result<(Bytes, Bytes)> {
        Ok((self.left.row_key(left.clone())?, self.right.row_key(right.clone())?))
    }

    /// Removes a link. Removing a missing link is harmless.
    pub fn unlink<'a>(&'a self, left: impl KeyArg<L::Key>, right: impl KeyArg<R::Key>) -> KeyCall<'a, ()> {
        let left = left.into_key();
        let right = right.into_key();
        Box::pin(async move {
            let left = &left;
            let right = &right;
            let (left_row, right_row) = self.pair_rows(left, right)?;
            let ts = next_timestamp(&RowSet::of(L::TABLE, &left_row).with(R::TABLE, &right_row));
            self.store()
                .mutate(
                    L::TABLE,
                    &[RowMutation::new(left_row).delete_column_up_to(self.left_family, right.to_cell(), ts)],
                )
                .await?;
            self.store()
                .mutate(
                    R::TABLE,
                    &[RowMutation::new(right_row).delete_column_up_to(self.right_family, left.to_cell(), ts)],
                )
                .await?;
            Ok(())
        })
    }

    async fn list<K: CellValue>(
        &self,
        table: &'static str,
        row: Bytes,
        family: &'static str,
    ) -> Result<Vec<(K, String)>> {
        let Some(result) = self.store().get(table, &Get::new(row).family(family)).await? else {
            return Ok(Vec::new());
        };
        let reader = crate::table::RowReader::new(table, &result);
        reader.dynamic::<crate::value::Native, crate::value::Native, K, String, Vec<(K, String)>>(family)
    }

    /// The right ids a left entity lists, with their values, in id order.
    pub fn rights_of<'a>(&'a self, left: impl KeyArg<L::Key>) -> KeyCall<'a, Vec<(R::Key, String)>> {
        let left = left.into_key();
        Box::pin(async move {
            let left = &left;
            self.list(L::TABLE, self.left.row_key(left.clone())?, self.left_family)
                .await
        })
    }

    /// The left ids a right entity lists, with their values, in id order.
    pub fn lefts_of<'a>(&'a self, right: impl KeyArg<R::Key>) -> KeyCall<'a, Vec<(L::Key, String)>> {
        let right = right.into_key();
        Box::pin(async move {
            let right = &right;
            self.list(R::TABLE, self.right.row_key(right.clone())?, self.right_family)
                .await
        })
    }

    /// The right entities a left entity lists, read in one batched get
    /// (ids whose row is gone are left out; a row that does not read as `R`
    /// is the error naming it).
    pub fn load_rights<'a>(&'a self, left: impl KeyArg<L::Key>) -> KeyCall<'a, Vec<R>> {
        let left = left.into_key();
        Box::pin(async move {
            let left = &left;
            let ids = self.rights_of(left.clone()).await?;
            let rows = self.right.get_many(ids.into_iter().map(|(id, _)| id)).await?;
            rows.into_iter().filter_map(Result::transpose).collect()
        })
    }

    /// The left entities a right entity lists, read in one batched get, as
    /// [`load_rights`](Self::load_rights) reads the right ones.
    pub fn load_lefts<'a>(&'a self, right: impl KeyArg<R::Key>) -> KeyCall<'a, Vec<L>> {
        let right = right.into_key();
        Box::pin(async move {
            let right = &right;
            let ids = self.lefts_of(right.clone()).await?;
            let rows = self.left.get_many(ids.into_iter().map(|(id, _)| id)).await?;
            rows.into_iter().filter_map(Result::transpose).collect()
        })
    }

    /// Deletes a left entity and removes it from every right list that names
    /// it: the left row first, then the lists.
    pub fn delete_left<'a>(&'a self, left: impl KeyArg<L::Key>) -> KeyCall<'a, ()> {
        let left = left.into_key();
        Box::pin(async move { self.delete_left_indexed(left, &[]).await })
    }

    /// Deletes a left entity that [`Index`](super::Index)es also list, as
    /// [`delete_left`](Self::delete_left) does, and its entry in each of
    /// `indexes`, at the same timestamp: one call that leaves the relation
    /// and the indexes consistent (an index's own
    /// [`delete`](super::Index::delete) refuses a linked row). The row goes
    /// first, then the lists, then the entries: cut off half-way, what is
    /// left is what the relation's and the indexes' `repair` remove.
    pub fn delete_left_indexed<'a>(
        &'a self,
        left: impl KeyArg<L::Key>,
        indexes: &'a [&'a dyn IndexOf<L>],
    ) -> KeyCall<'a, ()> {
        let left = left.into_key();
        Box::pin(async move {
            let left = &left;
            let left_row = self.left.row_key(left.clone())?;
            let entries = index_entries(&self.left, &left_row, indexes).await?;
            let right_rows = self.right_rows(self.rights_of(left.clone()).await?).await?;
            let mut rows = RowSet::of_rows(R::TABLE, right_rows.iter().map(|r| &r[..]));
            rows.insert(L::TABLE, &left_row);
            for (table, entry) in &entries {
                rows.insert(table, entry);
            }
            let ts = next_timestamp(&rows);
            self.store()
                .mutate(
                    L::TABLE,
                    &[RowMutation::new(left_row).push(Mutation::DeleteRow { up_to: Some(ts) })],
                )
                .await?;
            let qualifier = left.to_cell();
            let mirrors: Vec<RowMutation> = right_rows
                .into_iter()
                .map(|r| RowMutation::new(r).delete_column_up_to(self.right_family, qualifier.clone(), ts))
                .collect();
            self.store().mutate(R::TABLE, &mirrors).await?;
            delete_index_entries(self.store(), entries, ts).await
        })
    }

    /// Deletes a right entity and removes it from every left list that names
    /// it: the lists first, then the row.
    pub fn delete_right<'a>(&'a self, right: impl KeyArg<R::Key>) -> KeyCall<'a, ()> {
        let right = right.into_key();
        Box::pin(async move { self.delete_right_indexed(right, &[]).await })
    }

    /// Deletes a right entity that indexes also list, as
    /// [`delete_right`](Self::delete_right) does, and its entry in each of
    /// `indexes`, as [`delete_left_indexed`](Self::delete_left_indexed)
    /// does on the left: the lists first, then the row, then the entries.
    pub fn delete_right_indexed<'a>(
        &'a self,
        right: impl KeyArg<R::Key>,
        indexes: &'a [&'a dyn IndexOf<R>],
    ) -> KeyCall<'a, ()> {
        let right = right.into_key();
        Box::pin(async move {
            let right = &right;
            let right_row = self.right.row_key(right.clone())?;
            let index_rows = index_entries(&self.right, &right_row, indexes).await?;
            let left_rows = self.left_rows(self.lefts_of(right.clone()).await?).await?;
            let mut rows = RowSet::of_rows(L::TABLE, left_rows.iter().map(|r| &r[..]));
            rows.insert(R::TABLE, &right_row);
            for (table, entry) in &index_rows {
                rows.insert(table, entry);
            }
            let ts = next_timestamp(&rows);
            let qualifier = right.to_cell();
            let entries: Vec<RowMutation> = left_rows
                .into_iter()
                .map(|l| RowMutation::new(l).delete_column_up_to(self.left_family, qualifier.clone(), ts))
                .collect();
            self.store().mutate(L::TABLE, &entries).await?;
            self.store()
                .mutate(
                    R::TABLE,
                    &[RowMutation::new(right_row).push(Mutation::DeleteRow { up_to: Some(ts) })],
                )
                .await?;
            delete_index_entries(self.store(), index_rows, ts).await
        })
    }

    /// Rewrites a left entity's label in every right list that names it,
    /// after the entity changed (a person renamed).
    pub fn relabel_left<'a>(&'a self, left: impl KeyArg<L::Key>) -> KeyCall<'a, ()> {
        let left = left.into_key();
        Box::pin(async move {
            let left = &left;
            let Some(label) = self.left_label else { return Ok(()) };
            let Some(entity) = self.left.get(left.clone()).await? else {
                return Ok(());
            };
            let rows = self.right_rows(self.rights_of(left.clone()).await?).await?;
            self.write_label(R::TABLE, self.right_family, rows, left.to_cell(), label(&entity))
                .await
        })
    }

    /// Rewrites a right entity's label in every left list that names it.
    pub fn relabel_right<'a>(&'a self, right: impl KeyArg<R::Key>) -> KeyCall<'a, ()> {
        let right = right.into_key();
        Box::pin(async move {
            let right = &right;
            let Some(label) = self.right_label else { return Ok(()) };
            let Some(entity) = self.right.get(right.clone()).await? else {
                return Ok(());
            };
            let rows = self.left_rows(self.lefts_of(right.clone()).await?).await?;
            self.write_label(L::TABLE, self.left_family, rows, right.to_cell(), label(&entity))
                .await
        })
    }

    /// Writes `value` as the entry `qualifier` of `family` in each of `rows`
    /// of `table`, at one timestamp: a relabelling.
    async fn write_label(
        &self,
        table: &'static str,
        family: &'static str,
        rows: Vec<Bytes>,
        qualifier: Bytes,
        value: String,
    ) -> Result<()> {
        let ts = next_timestamp(&RowSet::of_rows(table, rows.iter().map(|r| &r[..])));
        let rows: Vec<RowMutation> = rows
            .into_iter()
            .map(|r| RowMutation::new(r).put_at(family, qualifier.clone(), ts, value.clone()))
            .collect();
        self.store().mutate(table, &rows).await?;
        Ok(())
    }

    /// The rows of the right entities a list names.
    async fn right_rows(&self, listed: Vec<(R::Key, String)>) -> Result<Vec<Bytes>> {
        listed.into_iter().map(|(r, _)| self.right.row_key(r)).collect()
    }

    /// The rows of the left entities a list names.
    async fn left_rows(&self, listed: Vec<(L::Key, String)>) -> Result<Vec<Bytes>> {
        listed.into_iter().map(|(l, _)| self.left.row_key(l)).collect()
    }

    /// Compares both sides: links the right side lacks (`missing`), links
    /// only the right side has (`dangling`), labels that differ from the
    /// entities' (`stale`), entries naming an entity that does not exist
    /// and rows holding only a list (`absent`), and left entities whose
    /// list is empty while two or more right rows still name them (`held`:
    /// see [`Emptied`]). Reads both tables whole: a maintenance task, not a
    /// request path.
    pub async fn verify(&self) -> Result<Report> {
        self.examine(Emptied::Hold, false).await
    }

    /// The value the left side should hold for a link, from the right
    /// side's: the right entity's label with labels, else the link's value;
    /// `None` if the right entity's row does not read (reported in `run`).
    async fn expected_left_value(
        &self,
        right: &R::Key,
        right_value: &str,
        run: &mut Run<L::Key, R::Key>,
    ) -> Result<Option<String>> {
        let Some(label) = self.right_label else {
            return Ok(Some(right_value.to_string()));
        };
        match self.right.get(right.clone()).await {
            Ok(entity) => Ok(Some(entity.map(|r| label(&r)).unwrap_or_default())),
            Err(e) if is_unreadable(&e) => {
                run.unreadable(&self.right.row_key(right.clone())?, &e);
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Makes the right side mirror the left: writes the links it lacks,
    /// removes those the left does not have, rewrites stale labels, and
    /// removes (from both sides) entries naming an entity that does not
    /// exist, which also removes rows holding only a list. A left entity
    /// whose whole list is empty while two or more right rows name it is
    /// left as it is and reported in `held`: an operation cut off half-way
    /// leaves at most one such entry per entity, so its list was probably
    /// wiped (by a put of the entity before its family was marked
    /// `relation`, or a raw family delete), and copying the empty list would
    /// make the loss permanent. Choose with
    /// [`repair_with`](Self::repair_with). Returns what it found (and
    /// fixed).
    pub async fn repair(&self) -> Result<Report> {
        self.examine(Emptied::Hold, true).await
    }

    /// [`repair`](Self::repair), doing `emptied` with left entities whose
    /// list is empty while right rows name them.
    pub async fn repair_with(&self, emptied: Emptied) -> Result<Report> {
        self.examine(emptied, true).await
    }

    async fn examine(&self, emptied: Emptied, fix: bool) -> Result<Report> {
        self.check(emptied, fix, &CheckOptions::new()).await
    }

    /// [`verify`](Self::verify) or (with `fix`) [`repair_with`](Self::repair_with)
    /// in batches: the left rows a batch at a time (each batch's right rows
    /// in one batched get), then the right rows likewise, reporting
    /// [`Progress`] after each batch and resuming from
    /// [`CheckOptions::from`]. Memory holds one batch, not the tables. A
    /// repair writes each batch's fixes before reading the next, so a run
    /// cut off resumes from its last checkpoint. (Right entries naming a left
    /// entity whose list is empty are decided at the end of the run, once
    /// they are counted: a run cut off in the second pass leaves those it
    /// saw for the next full run.)
    pub async fn check(&self, emptied: Emptied, fix: bool, options: &CheckOptions) -> Result<Report> {
        let mut run = Run::default();
        if let Some(start) = Checkpoint::start_of(options.from.as_ref(), 1) {
            self.check_left(start, fix, options, &mut run).await?;
        }
        if let Some(start) = Checkpoint::start_of(options.from.as_ref(), 2) {
            self.check_right(start, fix, options, &mut run).await?;
            self.decide_emptied(emptied, fix, &mut run).await?;
        }
        Ok(run.report)
    }

    /// Pass 1: each left row's links against the right rows they name:
    /// the right side's copy of each link and, with labels, the label the
    /// left row holds of each right entity.
    async fn check_left(
        &self,
        start: Bytes,
        fix: bool,
        options: &CheckOptions,
        run: &mut Run<L::Key, R::Key>,
    ) -> Result<()> {
        let scan = Self::side_scan::<L>(start, self.left_family);
        let mut rows = self.store().scan(L::TABLE, &scan).await?;
        loop {
            let batch = super::pass::next_batch(&mut rows, options.batch).await?;
            let Some(last) = batch.last().map(|r| r.row.clone()) else {
                break;
            };
            let mut links = Vec::new();
            for row in &batch {
                let left: L::Key = L::key_schema().decode(&row.row).map_err(|source| Error::Key {
                    table: L::TABLE,
                    cause: source,
                })?;
                let exists = Self::holds_entity::<L>(row);
                // What the right side should hold: the entity's label (read
                // from the row at hand, once per row), else the link's value.
                let label = match self.left_label {
                    Some(label) if exists => match Table::<L, S>::decode(row) {
                        Ok(entity) => Some(label(&entity)),
                        Err(e) if is_unreadable(&e) => {
                            // Its label cannot be known: its links are not
                            // compared until the row is fixed.
                            run.unreadable(&row.row, &e);
                            continue;
                        }
                        Err(e) => return Err(e),
                    },
                    _ => None,
                };
                for (right, value) in Self::entries::<R::Key>(L::TABLE, row, self.left_family)? {
                    let expected = label.clone().unwrap_or_else(|| value.clone());
                    links.push((exists, (left.clone(), right), expected, value));
                }
            }
            let rights: BTreeSet<R::Key> = links.iter().map(|(_, (_, r), _, _)| r.clone()).collect();
            let mirrors = self
                .side_rows::<R, L::Key>(rights, self.right_family, self.right_label)
                .await?;
            let (mut left_fixes, mut right_fixes) = (Vec::new(), Vec::new());
            for (left_exists, pair, expected, held) in links {
                let mirror = mirrors.get(&pair.1);
                if !left_exists || mirror.is_none_or(|m| !m.exists) {
                    run.report.absent.push(absent(&pair, left_exists, Side::Left));
                    left_fixes.push((self.left.row_key(pair.0.clone())?, pair.1.to_cell(), None));
                    continue;
                }
                // The right side's copy of the link, with the left label.
                let rewrite = match mirror.and_then(|m| m.list.get(&pair.0)) {
                    None => Some(&mut run.report.missing),
                    Some(m) if *m != expected => Some(&mut run.report.stale),
                    Some(_) => None,
                };
                if let Some(findings) = rewrite {
                    findings.push(describe(&pair, Side::Right));
                    right_fixes.push((self.right.row_key(pair.1.clone())?, pair.0.to_cell(), Some(expected)));
                }
                // The right entity's label on the left row.
                match mirror.and_then(|m| m.label.as_ref()) {
                    Some(Ok(label)) if *label != held => {
                        run.report.stale.push(describe(&pair, Side::Left));
                        left_fixes.push((
                            self.left.row_key(pair.0.clone())?,
                            pair.1.to_cell(),
                            Some(label.clone()),
                        ));
                    }
                    Some(Err((row, e))) => run.unreadable(row, e),
                    _ => {}
                }
            }
            if fix {
                self.apply(left_fixes, right_fixes).await?;
            }
            run.rows += batch.len() as u64;
            options.report(&run.progress("left rows", Checkpoint::new(1, last)));
            // A long check shares its runtime: let other tasks run.
            tokio::task::yield_now().await;
        }
        Ok(())
    }

    /// Pass 2: each right row's entries against the left rows they name.
    async fn check_right(
        &self,
        start: Bytes,
        fix: bool,
        options: &CheckOptions,
        run: &mut Run<L::Key, R::Key>,
    ) -> Result<()> {
        let scan = Self::side_scan::<R>(start, self.right_family);
        let mut rows = self.store().scan(R::TABLE, &scan).await?;
        // A left type that is nothing but its lists has no put that could
        // wipe one: its entries are never held.
        let lists_can_be_wiped = !Table::<L, S>::entity_families().is_empty();
        loop {
            let batch = super::pass::next_batch(&mut rows, options.batch).await?;
            let Some(last) = batch.last().map(|r| r.row.clone()) else {
                break;
            };
            let mut entries = Vec::new();
            for row in &batch {
                let right: R::Key = R::key_schema().decode(&row.row).map_err(|source| Error::Key {
                    table: R::TABLE,
                    cause: source,
                })?;
                let exists = Self::holds_entity::<R>(row);
                for (left, value) in Self::entries::<L::Key>(R::TABLE, row, self.right_family)? {
                    entries.push((exists, (left, right.clone()), value));
                }
            }
            let lefts: BTreeSet<L::Key> = entries.iter().map(|(_, (l, _), _)| l.clone()).collect();
            let lists = self.side_rows::<L, R::Key>(lefts, self.left_family, None).await?;
            let mut right_fixes = Vec::new();
            for (right_exists, pair, value) in entries {
                let list = lists.get(&pair.0);
                let left_exists = list.is_some_and(|l| l.exists);
                if !left_exists || !right_exists {
                    run.report.absent.push(absent(&pair, left_exists, Side::Right));
                    right_fixes.push(self.unmirror(&pair).await?);
                    continue;
                }
                let list = list.map(|l| &l.list);
                if list.is_some_and(|l| l.contains_key(&pair.1)) {
                    continue; // pass 1 compared it
                }
                if lists_can_be_wiped && list.is_none_or(BTreeMap::is_empty) {
                    // Decided once every right row naming it is counted.
                    run.emptied.entry(pair.0.to_cell()).or_default().push((pair, value));
                    continue;
                }
                run.report.dangling.push(describe(&pair, Side::Right));
                right_fixes.push(self.unmirror(&pair).await?);
            }
            if fix {
                self.apply(Vec::new(), right_fixes).await?;
            }
            run.rows += batch.len() as u64;
            options.report(&run.progress("right rows", Checkpoint::new(2, last)));
            // A long check shares its runtime: let other tasks run.
            tokio::task::yield_now().await;
        }
        Ok(())
    }

    /// Right entries naming a left entity whose list is empty: one is what
    /// an unlink or a `delete_right` cut off half-way leaves (dangling);
    /// more is a list that was wiped, done with as `emptied` says.
    async fn decide_emptied(&self, emptied: Emptied, fix: bool, run: &mut Run<L::Key, R::Key>) -> Result<()> {
        let (mut left_fixes, mut right_fixes) = (Vec::new(), Vec::new());
        for entries in std::mem::take(&mut run.emptied).into_values() {
            let wiped = entries.len() >= 2;
            for (pair, value) in entries {
                match (wiped, emptied) {
                    (false, _) | (true, Emptied::Drop) => {
                        run.report.dangling.push(describe(&pair, Side::Right));
                        right_fixes.push(self.unmirror(&pair).await?);
                    }
                    (true, Emptied::Hold) => run.report.held.push(format!(
                        "{}: the left list of {} is empty but the right side names it; repair_with(Emptied::Restore) copies the link back, repair_with(Emptied::Drop) removes it",
                        describe(&pair, Side::Right),
                        show(&pair.0)
                    )),
                    (true, Emptied::Restore) => {
                        run.report.missing.push(describe(&pair, Side::Left));
                        if let Some(value) = self.expected_left_value(&pair.1, &value, run).await? {
                            left_fixes.push((self.left.row_key(pair.0.clone())?, pair.1.to_cell(), Some(value)));
                        }
                    }
                }
            }
        }
        if fix {
            self.apply(left_fixes, right_fixes).await?;
        }
        Ok(())
    }

    /// A side's rows from `start`: its entity families and its list.
    fn side_scan<T: HTable>(start: Bytes, family: &'static str) -> Scan {
        Table::<T, S>::entity_families()
            .into_iter()
            .fold(Scan::range(start, Bytes::new()), Scan::family)
            .family(family)
    }

    /// Whether a row holds an entity: a cell outside its relation families
    /// (a type that is nothing but its lists always does).
    fn holds_entity<T: HTable>(row: &RowResult) -> bool {
        let families = Table::<T, S>::entity_families();
        families.is_empty()
            || row
                .cells
                .iter()
                .any(|c| families.iter().any(|f| c.family == f.as_bytes()))
    }

    /// The entries of a row's list.
    fn entries<K: CellValue>(table: &'static str, row: &RowResult, family: &'static str) -> Result<Vec<(K, String)>> {
        crate::table::RowReader::new(table, row)
            .dynamic::<crate::value::Native, crate::value::Native, K, String, Vec<_>>(family)
    }

    /// For each key, in one batched get: whether its row holds an entity,
    /// its list, and (given `label`) the entity's label, or why its row
    /// does not read.
    async fn side_rows<T, K>(
        &self,
        keys: BTreeSet<T::Key>,
        family: &'static str,
        label: Option<fn(&T) -> String>,
    ) -> Result<BTreeMap<T::Key, Listed<K>>>
    where
        T: HTable,
        T::Key: KeyTuple + Clone + Ord,
        K: CellValue + Ord,
    {
        let keys: Vec<T::Key> = keys.into_iter().collect();
        let mut gets = Vec::with_capacity(keys.len());
        for key in &keys {
            let row = T::key_schema()
                .encode(key)
                .map(Bytes::from)
                .map_err(|source| Error::Key {
                    table: T::TABLE,
                    cause: source,
                })?;
            let get = Table::<T, S>::entity_families()
                .into_iter()
                .fold(Get::new(row), Get::family)
                .family(family);
            gets.push(get);
        }
        let rows = if gets.is_empty() {
            Vec::new()
        } else {
            self.store().get_many(T::TABLE, &gets).await?
        };
        let mut sides = BTreeMap::new();
        for (key, row) in keys.into_iter().zip(rows) {
            let side = match row {
                Some(row) => {
                    let exists = Self::holds_entity::<T>(&row);
                    let label = match label {
                        Some(label) if exists => match Table::<T, S>::decode(&row) {
                            Ok(entity) => Some(Ok(label(&entity))),
                            Err(e) if is_unreadable(&e) => Some(Err((row.row.clone(), e))),
                            Err(e) => return Err(e),
                        },
                        _ => None,
                    };
                    Listed {
                        exists,
                        list: Self::entries::<K>(T::TABLE, &row, family)?.into_iter().collect(),
                        label,
                    }
                }
                None => Listed {
                    exists: Table::<T, S>::entity_families().is_empty(),
                    list: BTreeMap::new(),
                    label: None,
                },
            };
            sides.insert(key, side);
        }
        Ok(sides)
    }

    /// Writes fixes to both sides at one timestamp.
    async fn apply(&self, left_fixes: Vec<Fix>, right_fixes: Vec<Fix>) -> Result<()> {
        if left_fixes.is_empty() && right_fixes.is_empty() {
            return Ok(());
        }
        let mut rows = RowSet::new();
        for (row, _, _) in &left_fixes {
            rows.insert(L::TABLE, row);
        }
        for (row, _, _) in &right_fixes {
            rows.insert(R::TABLE, row);
        }
        let ts = next_timestamp(&rows);
        let writes = |family: &'static str, fixes: Vec<Fix>| -> Vec<RowMutation> {
            fixes
                .into_iter()
                .map(|(row, qualifier, value)| match value {
                    Some(value) => RowMutation::new(row).put_at(family, qualifier, ts, value),
                    None => RowMutation::new(row).delete_column_up_to(family, qualifier, ts),
                })
                .collect()
        };
        if !left_fixes.is_empty() {
            self.store()
                .mutate(L::TABLE, &writes(self.left_family, left_fixes))
                .await?;
        }
        if !right_fixes.is_empty() {
            self.store()
                .mutate(R::TABLE, &writes(self.right_family, right_fixes))
                .await?;
        }
        Ok(())
    }

    /// The fix that removes a link's entry from the right side.
    async fn unmirror(&self, pair: &(L::Key, R::Key)) -> Result<Fix> {
        Ok((self.right.row_key(pair.1.clone())?, pair.0.to_cell(), None))
    }
}

/// A repair's fix of one list entry: row, qualifier, and the value to write
/// (`None` removes the entry).
type Fix = (Bytes, Bytes, Option<String>);

/// A side's row as a check reads it: whether it holds an entity, its list
/// and, when the other side copies its label, that label, or the row and
/// why it does not read.
struct Listed<K> {
    exists: bool,
    list: BTreeMap<K, String>,
    label: Option<std::result::Result<String, (Bytes, Error)>>,
}

/// A link and its value, as one side stores it.
type Entry<LK, RK> = ((LK, RK), String);

/// What a batched check has found and read so far.
struct Run<LK, RK> {
    report: Report,
    /// The rows reported in `unreadable`, each once.
    unreadable: BTreeSet<Bytes>,
    rows: u64,
    /// Right entries naming a left entity whose list is empty, by that
    /// entity's id, decided once all are counted.
    emptied: BTreeMap<Bytes, Vec<Entry<LK, RK>>>,
}

impl<LK, RK> Default for Run<LK, RK> {
    fn default() -> Self {
        Run {
            report: Report::default(),
            unreadable: BTreeSet::new(),
            rows: 0,
            emptied: BTreeMap::new(),
        }
    }
}

impl<LK, RK> Run<LK, RK> {
    /// Reports a row that does not read as its entity, once a run.
    fn unreadable(&mut self, row: &Bytes, e: &Error) {
        if self.unreadable.insert(row.clone()) {
            self.report.unreadable.push(e.to_string());
        }
    }

    fn progress(&self, pass: &'static str, checkpoint: Checkpoint) -> Progress {
        super::index::progress(pass, self.rows, &self.report, checkpoint)
    }
}

/// An entry naming an entity that does not exist.
fn absent<LK: CellValue, RK: CellValue>((l, r): &(LK, RK), left_exists: bool, side: Side) -> String {
    if left_exists {
        format!("{} -> {}: no right entity {} ({side} side)", show(l), show(r), show(r))
    } else {
        format!("{} -> {}: no left entity {} ({side} side)", show(l), show(r), show(l))
    }
}

/// What [`ManyToMany::repair_with`] does with a left entity whose list is
/// empty while two or more right rows still name it (one is what an
/// operation cut off half-way leaves, and is repaired as `dangling`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Emptied {
    /// Leave both sides as they are and report the links in
    /// [`Report::held`](super::Report::held) (what [`ManyToMany::repair`] does).
    #[default]
    Hold,
    /// The empty list is right: remove the entity from the right lists.
    Drop,
    /// The list was wiped by mistake: copy the links the right side holds
    /// back into it (with labels, the right entities' current labels).
    Restore,
}

fn show<K: CellValue>(id: &K) -> String {
    crate::key::Printable(&id.to_cell()).to_string()
}

fn describe<LK: CellValue, RK: CellValue>(pair: &(LK, RK), side: Side) -> String {
    format!("{} -> {} ({side} side)", show(&pair.0), show(&pair.1))
}

#[async_trait::async_trait]
impl<L, R, S> super::Checked for ManyToMany<L, R, S>
where
    L: HTable,
    R: HTable,
    L::Key: CellValue + KeyTuple + Clone + Ord,
    R::Key: CellValue + KeyTuple + Clone + Ord,
    S: Store + Clone,
{
    async fn verify(&self) -> Result<Report> {
        ManyToMany::verify(self).await
    }
    async fn repair(&self) -> Result<Report> {
        ManyToMany::repair(self).await
    }
    fn table(&self) -> &'static str {
        L::TABLE
    }
    /// Nothing to rebuild, from any checkpoint.
    async fn rebuild_with(&self, _options: &CheckOptions) -> Option<Result<()>> {
        None
    }
    async fn check(&self, fix: bool, options: &CheckOptions) -> Result<Report> {
        ManyToMany::check(self, Emptied::Hold, fix, options).await
    }
}

/// The distinct left and right keys of `pairs`, each sorted.
fn distinct_sides<A: Ord, B: Ord>(pairs: &[(A, B)]) -> (Vec<&A>, Vec<&B>) {
    let lefts: BTreeSet<&A> = pairs.iter().map(|(l, _)| l).collect();
    let rights: BTreeSet<&B> = pairs.iter().map(|(_, r)| r).collect();
    (lefts.into_iter().collect(), rights.into_iter().collect())
}
