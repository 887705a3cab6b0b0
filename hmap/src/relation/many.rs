//! Many-to-many links kept in two tables (person/role, shop/item).

use futures_util::StreamExt;
use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;

use super::{Report, Side};
use crate::clock::{RowSet, next_timestamp};
use crate::error::{Error, Result};
use crate::key::KeyTuple;
use crate::store::{Get, Mutation, RowMutation, Scan, Store};
use crate::table::{FieldRole, HTable, Table};
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

/// One link as stored on one side: `(left id, right id) -> value`.
type Links<LK, RK> = BTreeMap<(LK, RK), String>;

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
    pub async fn link(&self, left: &L::Key, right: &R::Key) -> Result<()> {
        self.link_many_with(&[(left.clone(), right.clone())], None).await
    }

    /// Links a left and a right entity with a value of the link itself (a
    /// shop/item link's type), stored in both lists. Both must exist, as
    /// for [`link`](Self::link).
    pub async fn link_with(&self, left: &L::Key, right: &R::Key, value: &str) -> Result<()> {
        self.link_many_with(&[(left.clone(), right.clone())], Some(value)).await
    }

    /// Links many pairs at once, as [`link`](Self::link) does one: every
    /// entity's existence (and, with labels, its label) is read in one
    /// batched get per side, then all the left rows are written in one
    /// call and all the right rows in another, at one timestamp. If an
    /// entity does not exist nothing is written. Give each pair once.
    pub async fn link_many(&self, pairs: &[(L::Key, R::Key)]) -> Result<()> {
        self.link_many_with(pairs, None).await
    }

    async fn link_many_with(&self, pairs: &[(L::Key, R::Key)], value: Option<&str>) -> Result<()> {
        self.check_owned().await?;
        if pairs.is_empty() {
            return Ok(());
        }
        let lefts: Vec<&L::Key> = pairs
            .iter()
            .map(|(l, _)| l)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let rights: Vec<&R::Key> = pairs
            .iter()
            .map(|(_, r)| r)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        Self::require(&self.left, &lefts).await?;
        Self::require(&self.right, &rights).await?;
        let labels = match (value, self.left_label, self.right_label) {
            (None, Some(label_left), Some(label_right)) => {
                let l = self.left.get_many(lefts.iter().map(|k| (*k).clone())).await?;
                let r = self.right.get_many(rights.iter().map(|k| (*k).clone())).await?;
                let l: BTreeMap<&L::Key, String> = lefts
                    .iter()
                    .zip(l)
                    .filter_map(|(k, e)| Some((*k, label_left(&e?))))
                    .collect();
                let r: BTreeMap<&R::Key, String> = rights
                    .iter()
                    .zip(r)
                    .filter_map(|(k, e)| Some((*k, label_right(&e?))))
                    .collect();
                Some((l, r))
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
        let on_left: Vec<RowMutation> = on_left.into_values().collect();
        let on_right: Vec<RowMutation> = on_right.into_values().collect();
        self.store().mutate(L::TABLE, &on_left).await?;
        self.store().mutate(R::TABLE, &on_right).await?;
        Ok(())
    }

    /// The rows of a left and a right entity.
    fn pair_rows(&self, left: &L::Key, right: &R::Key) -> Result<(Bytes, Bytes)> {
        Ok((self.left.row_key(left.clone())?, self.right.row_key(right.clone())?))
    }

    /// Removes a link. Removing a missing link is harmless.
    pub async fn unlink(&self, left: &L::Key, right: &R::Key) -> Result<()> {
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
    pub async fn rights_of(&self, left: &L::Key) -> Result<Vec<(R::Key, String)>> {
        self.list(L::TABLE, self.left.row_key(left.clone())?, self.left_family)
            .await
    }

    /// The left ids a right entity lists, with their values, in id order.
    pub async fn lefts_of(&self, right: &R::Key) -> Result<Vec<(L::Key, String)>> {
        self.list(R::TABLE, self.right.row_key(right.clone())?, self.right_family)
            .await
    }

    /// The right entities a left entity lists, read in one batched get
    /// (ids whose row is gone are left out).
    pub async fn load_rights(&self, left: &L::Key) -> Result<Vec<R>> {
        let ids = self.rights_of(left).await?;
        Ok(self
            .right
            .get_many(ids.into_iter().map(|(id, _)| id))
            .await?
            .into_iter()
            .flatten()
            .collect())
    }

    /// The left entities a right entity lists, read in one batched get.
    pub async fn load_lefts(&self, right: &R::Key) -> Result<Vec<L>> {
        let ids = self.lefts_of(right).await?;
        Ok(self
            .left
            .get_many(ids.into_iter().map(|(id, _)| id))
            .await?
            .into_iter()
            .flatten()
            .collect())
    }

    /// Deletes a left entity and removes it from every right list that
    /// names it: the left row first, then the lists.
    pub async fn delete_left(&self, left: &L::Key) -> Result<()> {
        let left_row = self.left.row_key(left.clone())?;
        let right_rows = self.right_rows(self.rights_of(left).await?).await?;
        let mut rows = RowSet::of_rows(R::TABLE, right_rows.iter().map(|r| &r[..]));
        rows.insert(L::TABLE, &left_row);
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
        Ok(())
    }

    /// Deletes a right entity and removes it from every left list that names
    /// it: the lists first, then the row.
    pub async fn delete_right(&self, right: &R::Key) -> Result<()> {
        let right_row = self.right.row_key(right.clone())?;
        let left_rows = self.left_rows(self.lefts_of(right).await?).await?;
        let mut rows = RowSet::of_rows(L::TABLE, left_rows.iter().map(|r| &r[..]));
        rows.insert(R::TABLE, &right_row);
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
        Ok(())
    }

    /// Rewrites a left entity's label in every right list that names it,
    /// after the entity changed (a person renamed).
    pub async fn relabel_left(&self, left: &L::Key) -> Result<()> {
        let Some(label) = self.left_label else { return Ok(()) };
        let Some(entity) = self.left.get(left.clone()).await? else {
            return Ok(());
        };
        let rows = self.right_rows(self.rights_of(left).await?).await?;
        self.write_label(R::TABLE, self.right_family, rows, left.to_cell(), label(&entity))
            .await
    }

    /// Rewrites a right entity's label in every left list that names it.
    pub async fn relabel_right(&self, right: &R::Key) -> Result<()> {
        let Some(label) = self.right_label else { return Ok(()) };
        let Some(entity) = self.right.get(right.clone()).await? else {
            return Ok(());
        };
        let rows = self.left_rows(self.lefts_of(right).await?).await?;
        self.write_label(L::TABLE, self.left_family, rows, right.to_cell(), label(&entity))
            .await
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

    /// Every link as one side stores it, `(left, right) -> value`.
    async fn scan_side(&self, table: &'static str, family: &'static str, swap: bool) -> Result<Links<L::Key, R::Key>> {
        let mut links = BTreeMap::new();
        let mut scanned = self.store().scan(table, &Scan::all().family(family)).await?;
        while let Some(row) = scanned.next().await {
            let row = row?;
            let reader = crate::table::RowReader::new(table, &row);
            if swap {
                let right: R::Key = R::key_schema()
                    .decode(&row.row)
                    .map_err(|source| Error::Key { table, source })?;
                let entries: Vec<(L::Key, String)> =
                    reader.dynamic::<crate::value::Native, crate::value::Native, L::Key, String, Vec<_>>(family)?;
                for (left, value) in entries {
                    links.insert((left, right.clone()), value);
                }
            } else {
                let left: L::Key = L::key_schema()
                    .decode(&row.row)
                    .map_err(|source| Error::Key { table, source })?;
                let entries: Vec<(R::Key, String)> =
                    reader.dynamic::<crate::value::Native, crate::value::Native, R::Key, String, Vec<_>>(family)?;
                for (right, value) in entries {
                    links.insert((left.clone(), right), value);
                }
            }
        }
        Ok(links)
    }

    /// The keys of every row of a table that holds an entity (a cell
    /// outside its relation families); `None` for a type that is nothing
    /// but its relation lists, whose existence cannot be told.
    async fn entity_keys<T: HTable>(&self) -> Result<Option<BTreeSet<T::Key>>>
    where
        T::Key: Ord,
    {
        let families = Table::<T, S>::entity_families();
        if families.is_empty() {
            return Ok(None);
        }
        let scan = families.into_iter().fold(Scan::all(), Scan::family);
        let mut keys = BTreeSet::new();
        let mut scanned = self.store().scan(T::TABLE, &scan).await?;
        while let Some(row) = scanned.next().await {
            let row = row?;
            let key = T::key_schema().decode(&row.row).map_err(|source| Error::Key {
                table: T::TABLE,
                source,
            })?;
            keys.insert(key);
        }
        Ok(Some(keys))
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

    /// The value the right side should hold for a link: the left entity's
    /// label with labels (empty if the entity is gone), else the link's
    /// value, the same on both sides.
    async fn expected_right_value(&self, left: &L::Key, left_value: &str) -> Result<String> {
        match self.left_label {
            Some(label) => Ok(self
                .left
                .get(left.clone())
                .await?
                .map(|l| label(&l))
                .unwrap_or_default()),
            None => Ok(left_value.to_string()),
        }
    }

    /// The value the left side should hold for a link, from the right
    /// side's: the right entity's label with labels, else the link's value.
    async fn expected_left_value(&self, right: &R::Key, right_value: &str) -> Result<String> {
        match self.right_label {
            Some(label) => Ok(self
                .right
                .get(right.clone())
                .await?
                .map(|r| label(&r))
                .unwrap_or_default()),
            None => Ok(right_value.to_string()),
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
        let left = self.scan_side(L::TABLE, self.left_family, false).await?;
        let right = self.scan_side(R::TABLE, self.right_family, true).await?;
        let left_entities = self.entity_keys::<L>().await?;
        let right_entities = self.entity_keys::<R>().await?;
        let listed: BTreeSet<&L::Key> = left.keys().map(|(l, _)| l).collect();
        let left_exists = |l: &L::Key| left_entities.as_ref().is_none_or(|e| e.contains(l));
        let right_exists = |r: &R::Key| right_entities.as_ref().is_none_or(|e| e.contains(r));
        let gone = |(l, r): &(L::Key, R::Key)| !left_exists(l) || !right_exists(r);
        let absent = |(l, r): &(L::Key, R::Key), side: Side| {
            if left_exists(l) {
                format!("{} -> {}: no right entity {} ({side} side)", show(l), show(r), show(r))
            } else {
                format!("{} -> {}: no left entity {} ({side} side)", show(l), show(r), show(l))
            }
        };
        let mut report = Report::default();
        // The fixes, as (row, qualifier, the value to write or `None` to
        // remove) per side; stamped once all their rows are known.
        let mut left_fixes: Vec<Fix> = Vec::new();
        let mut right_fixes: Vec<Fix> = Vec::new();
        for pair in left.keys().filter(|p| gone(p)) {
            report.absent.push(absent(pair, Side::Left));
            left_fixes.push((self.left.row_key(pair.0.clone())?, pair.1.to_cell(), None));
        }
        for pair in right.keys().filter(|p| gone(p)) {
            report.absent.push(absent(pair, Side::Right));
            right_fixes.push(self.unmirror(pair).await?);
        }
        for (pair, value) in left.iter().filter(|(p, _)| !gone(p)) {
            let expected = self.expected_right_value(&pair.0, value).await?;
            match right.get(pair) {
                None => report.missing.push(describe(pair, Side::Right)),
                Some(mirror) if *mirror != expected => report.stale.push(describe(pair, Side::Right)),
                Some(_) => continue,
            }
            right_fixes.push((self.right.row_key(pair.1.clone())?, pair.0.to_cell(), Some(expected)));
        }
        // Right entries per left entity whose list is empty: one is what an
        // unlink or a `delete_right` cut off half-way leaves; more is a list
        // that was wiped. (A left type that is nothing but its lists has no
        // put that could wipe one, and its `delete_left` cut off half-way
        // looks the same: never held.)
        let mut unlisted: BTreeMap<&L::Key, usize> = BTreeMap::new();
        if left_entities.is_some() {
            for (l, _) in right.keys().filter(|p| !gone(p) && !listed.contains(&p.0)) {
                *unlisted.entry(l).or_default() += 1;
            }
        }
        for (pair, value) in right.iter().filter(|(p, _)| !gone(p) && !left.contains_key(p)) {
            if unlisted.get(&pair.0).is_none_or(|n| *n < 2) {
                report.dangling.push(describe(pair, Side::Right));
                right_fixes.push(self.unmirror(pair).await?);
                continue;
            }
            match emptied {
                Emptied::Hold => report.held.push(format!(
                    "{}: the left list of {} is empty but the right side names it; repair_with(Emptied::Restore) copies the link back, repair_with(Emptied::Drop) removes it",
                    describe(pair, Side::Right),
                    show(&pair.0)
                )),
                Emptied::Drop => {
                    report.dangling.push(describe(pair, Side::Right));
                    right_fixes.push(self.unmirror(pair).await?);
                }
                Emptied::Restore => {
                    report.missing.push(describe(pair, Side::Left));
                    left_fixes.push((
                        self.left.row_key(pair.0.clone())?,
                        pair.1.to_cell(),
                        Some(self.expected_left_value(&pair.1, value).await?),
                    ));
                }
            }
        }
        if fix && !(left_fixes.is_empty() && right_fixes.is_empty()) {
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
        }
        Ok(report)
    }

    /// The fix that removes a link's entry from the right side.
    async fn unmirror(&self, pair: &(L::Key, R::Key)) -> Result<Fix> {
        Ok((self.right.row_key(pair.1.clone())?, pair.0.to_cell(), None))
    }
}

/// A repair's fix of one list entry: row, qualifier, and the value to write
/// (`None` removes the entry).
type Fix = (Bytes, Bytes, Option<String>);

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
}
