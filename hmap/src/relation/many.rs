//! Many-to-many links kept in two tables (person/role, shop/item).

use std::collections::BTreeMap;

use bytes::Bytes;

use super::{Report, Side};
use crate::clock::{RowSet, next_timestamp};
use crate::error::{Error, Result};
use crate::key::KeyTuple;
use crate::store::{Get, Mutation, RowMutation, Scan, Store};
use crate::table::{HTable, Table};
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

    fn missing_entity(&self, table: &'static str, id: String) -> Error {
        Error::Query {
            table,
            reason: format!("no row with id {id}: link existing entities"),
        }
    }

    /// Links a left and a right entity, with the labels of
    /// [`with_labels`](Self::with_labels) (empty without them). Both must
    /// exist. Linking twice is harmless.
    pub fn link(&self, left: &L::Key, right: &R::Key) -> Result<()> {
        let (on_left, on_right) = match (self.left_label, self.right_label) {
            (Some(label_left), Some(label_right)) => {
                let l = self
                    .left
                    .get(left.clone())?
                    .ok_or_else(|| self.missing_entity(L::TABLE, show(left)))?;
                let r = self
                    .right
                    .get(right.clone())?
                    .ok_or_else(|| self.missing_entity(R::TABLE, show(right)))?;
                (label_right(&r), label_left(&l))
            }
            _ => (String::new(), String::new()),
        };
        self.write_link(left, right, &on_left, &on_right)
    }

    /// Links a left and a right entity with a value of the link itself (a
    /// shop/item link's type), stored in both lists.
    pub fn link_with(&self, left: &L::Key, right: &R::Key, value: &str) -> Result<()> {
        self.write_link(left, right, value, value)
    }

    fn write_link(&self, left: &L::Key, right: &R::Key, on_left: &str, on_right: &str) -> Result<()> {
        let (left_row, right_row) = self.pair_rows(left, right)?;
        let ts = next_timestamp(&RowSet::of(L::TABLE, &left_row).with(R::TABLE, &right_row));
        let put = |family: &'static str, qualifier: Bytes, value: &str| Mutation::Put {
            family: Bytes::from_static(family.as_bytes()),
            qualifier,
            value: Bytes::copy_from_slice(value.as_bytes()),
            timestamp: Some(ts),
        };
        self.store().mutate(
            L::TABLE,
            &[RowMutation::new(left_row).push(put(self.left_family, right.to_cell(), on_left))],
        )?;
        self.store().mutate(
            R::TABLE,
            &[RowMutation::new(right_row).push(put(self.right_family, left.to_cell(), on_right))],
        )?;
        Ok(())
    }

    /// The rows of a left and a right entity.
    fn pair_rows(&self, left: &L::Key, right: &R::Key) -> Result<(Bytes, Bytes)> {
        Ok((self.left.row_key(left.clone())?, self.right.row_key(right.clone())?))
    }

    /// Removes a link. Removing a missing link is harmless.
    pub fn unlink(&self, left: &L::Key, right: &R::Key) -> Result<()> {
        let (left_row, right_row) = self.pair_rows(left, right)?;
        let ts = next_timestamp(&RowSet::of(L::TABLE, &left_row).with(R::TABLE, &right_row));
        self.store().mutate(
            L::TABLE,
            &[RowMutation::new(left_row).delete_column_up_to(self.left_family, right.to_cell(), ts)],
        )?;
        self.store().mutate(
            R::TABLE,
            &[RowMutation::new(right_row).delete_column_up_to(self.right_family, left.to_cell(), ts)],
        )?;
        Ok(())
    }

    fn list<K: CellValue>(&self, table: &'static str, row: Bytes, family: &'static str) -> Result<Vec<(K, String)>> {
        let Some(result) = self.store().get(table, &Get::new(row).family(family))? else {
            return Ok(Vec::new());
        };
        let reader = crate::table::RowReader::new(table, &result);
        reader.dynamic::<crate::value::Native, crate::value::Native, K, String, Vec<(K, String)>>(family)
    }

    /// The right ids a left entity lists, with their values, in id order.
    pub fn rights_of(&self, left: &L::Key) -> Result<Vec<(R::Key, String)>> {
        self.list(L::TABLE, self.left.row_key(left.clone())?, self.left_family)
    }

    /// The left ids a right entity lists, with their values, in id order.
    pub fn lefts_of(&self, right: &R::Key) -> Result<Vec<(L::Key, String)>> {
        self.list(R::TABLE, self.right.row_key(right.clone())?, self.right_family)
    }

    /// The right entities a left entity lists, read in one batched get
    /// (ids whose row is gone are left out).
    pub fn load_rights(&self, left: &L::Key) -> Result<Vec<R>> {
        let ids = self.rights_of(left)?;
        Ok(self
            .right
            .get_many(ids.into_iter().map(|(id, _)| id))?
            .into_iter()
            .flatten()
            .collect())
    }

    /// The left entities a right entity lists, read in one batched get.
    pub fn load_lefts(&self, right: &R::Key) -> Result<Vec<L>> {
        let ids = self.lefts_of(right)?;
        Ok(self
            .left
            .get_many(ids.into_iter().map(|(id, _)| id))?
            .into_iter()
            .flatten()
            .collect())
    }

    /// Deletes a left entity and removes it from every right list that
    /// names it: the left row first, then the lists.
    pub fn delete_left(&self, left: &L::Key) -> Result<()> {
        let left_row = self.left.row_key(left.clone())?;
        let right_rows = self.right_rows(self.rights_of(left)?)?;
        let mut rows = RowSet::of_rows(R::TABLE, right_rows.iter().map(|r| &r[..]));
        rows.insert(L::TABLE, &left_row);
        let ts = next_timestamp(&rows);
        self.store().mutate(
            L::TABLE,
            &[RowMutation::new(left_row).push(Mutation::DeleteRow { up_to: Some(ts) })],
        )?;
        let qualifier = left.to_cell();
        let mirrors: Vec<RowMutation> = right_rows
            .into_iter()
            .map(|r| RowMutation::new(r).delete_column_up_to(self.right_family, qualifier.clone(), ts))
            .collect();
        self.store().mutate(R::TABLE, &mirrors)?;
        Ok(())
    }

    /// Deletes a right entity and removes it from every left list that names
    /// it: the lists first, then the row.
    pub fn delete_right(&self, right: &R::Key) -> Result<()> {
        let right_row = self.right.row_key(right.clone())?;
        let left_rows = self.left_rows(self.lefts_of(right)?)?;
        let mut rows = RowSet::of_rows(L::TABLE, left_rows.iter().map(|r| &r[..]));
        rows.insert(R::TABLE, &right_row);
        let ts = next_timestamp(&rows);
        let qualifier = right.to_cell();
        let entries: Vec<RowMutation> = left_rows
            .into_iter()
            .map(|l| RowMutation::new(l).delete_column_up_to(self.left_family, qualifier.clone(), ts))
            .collect();
        self.store().mutate(L::TABLE, &entries)?;
        self.store().mutate(
            R::TABLE,
            &[RowMutation::new(right_row).push(Mutation::DeleteRow { up_to: Some(ts) })],
        )?;
        Ok(())
    }

    /// Rewrites a left entity's label in every right list that names it,
    /// after the entity changed (a person renamed).
    pub fn relabel_left(&self, left: &L::Key) -> Result<()> {
        let Some(label) = self.left_label else { return Ok(()) };
        let Some(entity) = self.left.get(left.clone())? else {
            return Ok(());
        };
        let value = label(&entity);
        let right_rows = self.right_rows(self.rights_of(left)?)?;
        let ts = next_timestamp(&RowSet::of_rows(R::TABLE, right_rows.iter().map(|r| &r[..])));
        let qualifier = left.to_cell();
        let rows: Vec<RowMutation> = right_rows
            .into_iter()
            .map(|r| RowMutation::new(r).put_at(self.right_family, qualifier.clone(), ts, value.clone()))
            .collect();
        self.store().mutate(R::TABLE, &rows)?;
        Ok(())
    }

    /// Rewrites a right entity's label in every left list that names it.
    pub fn relabel_right(&self, right: &R::Key) -> Result<()> {
        let Some(label) = self.right_label else { return Ok(()) };
        let Some(entity) = self.right.get(right.clone())? else {
            return Ok(());
        };
        let value = label(&entity);
        let left_rows = self.left_rows(self.lefts_of(right)?)?;
        let ts = next_timestamp(&RowSet::of_rows(L::TABLE, left_rows.iter().map(|r| &r[..])));
        let qualifier = right.to_cell();
        let rows: Vec<RowMutation> = left_rows
            .into_iter()
            .map(|l| RowMutation::new(l).put_at(self.left_family, qualifier.clone(), ts, value.clone()))
            .collect();
        self.store().mutate(L::TABLE, &rows)?;
        Ok(())
    }

    /// The rows of the right entities a list names.
    fn right_rows(&self, listed: Vec<(R::Key, String)>) -> Result<Vec<Bytes>> {
        listed.into_iter().map(|(r, _)| self.right.row_key(r)).collect()
    }

    /// The rows of the left entities a list names.
    fn left_rows(&self, listed: Vec<(L::Key, String)>) -> Result<Vec<Bytes>> {
        listed.into_iter().map(|(l, _)| self.left.row_key(l)).collect()
    }

    /// Every link as one side stores it, `(left, right) -> value`.
    fn scan_side(&self, table: &'static str, family: &'static str, swap: bool) -> Result<Links<L::Key, R::Key>> {
        let mut links = BTreeMap::new();
        for row in self.store().scan(table, &Scan::all().family(family))? {
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

    /// Compares both sides: links the right side lacks, links only the right
    /// side has, and (with labels) labels that differ from the entities'.
    /// Reads both tables whole: a maintenance task, not a request path.
    pub fn verify(&self) -> Result<Report> {
        let left = self.scan_side(L::TABLE, self.left_family, false)?;
        let right = self.scan_side(R::TABLE, self.right_family, true)?;
        let mut report = Report::default();
        for (pair, value) in &left {
            match right.get(pair) {
                None => report.missing.push(describe(pair, Side::Right)),
                Some(mirror) => {
                    let expected = self.expected_right_value(&pair.0, value)?;
                    if expected != *mirror {
                        report.stale.push(describe(pair, Side::Right));
                    }
                }
            }
        }
        for pair in right.keys() {
            if !left.contains_key(pair) {
                report.dangling.push(describe(pair, Side::Right));
            }
        }
        Ok(report)
    }

    /// The value the right side should hold for a link: the left entity's
    /// label with labels (empty if the entity is gone), else the link's
    /// value, the same on both sides.
    fn expected_right_value(&self, left: &L::Key, left_value: &str) -> Result<String> {
        match self.left_label {
            Some(label) => Ok(self.left.get(left.clone())?.map(|l| label(&l)).unwrap_or_default()),
            None => Ok(left_value.to_string()),
        }
    }

    /// Makes the right side mirror the left: writes the links it lacks,
    /// removes those the left does not have, and rewrites stale labels.
    /// Returns what it found (and fixed).
    pub fn repair(&self) -> Result<Report> {
        let left = self.scan_side(L::TABLE, self.left_family, false)?;
        let right = self.scan_side(R::TABLE, self.right_family, true)?;
        let mut report = Report::default();
        // The fixes, as (right row, left id, the value to write or `None`
        // to remove); stamped once all their rows are known.
        let mut fixes = Vec::new();
        for (pair, value) in &left {
            let expected = self.expected_right_value(&pair.0, value)?;
            let fix = match right.get(pair) {
                None => {
                    report.missing.push(describe(pair, Side::Right));
                    true
                }
                Some(mirror) if *mirror != expected => {
                    report.stale.push(describe(pair, Side::Right));
                    true
                }
                Some(_) => false,
            };
            if fix {
                fixes.push((self.right.row_key(pair.1.clone())?, pair.0.to_cell(), Some(expected)));
            }
        }
        for pair in right.keys() {
            if !left.contains_key(pair) {
                report.dangling.push(describe(pair, Side::Right));
                fixes.push((self.right.row_key(pair.1.clone())?, pair.0.to_cell(), None));
            }
        }
        let ts = next_timestamp(&RowSet::of_rows(R::TABLE, fixes.iter().map(|(row, _, _)| &row[..])));
        let writes: Vec<RowMutation> = fixes
            .into_iter()
            .map(|(row, qualifier, value)| match value {
                Some(value) => RowMutation::new(row).put_at(self.right_family, qualifier, ts, value),
                None => RowMutation::new(row).delete_column_up_to(self.right_family, qualifier, ts),
            })
            .collect();
        if !writes.is_empty() {
            self.store().mutate(R::TABLE, &writes)?;
        }
        Ok(report)
    }
}

fn show<K: CellValue>(id: &K) -> String {
    crate::key::Printable(&id.to_cell()).to_string()
}

fn describe<LK: CellValue, RK: CellValue>(pair: &(LK, RK), side: Side) -> String {
    format!("{} -> {} ({side} side)", show(&pair.0), show(&pair.1))
}
