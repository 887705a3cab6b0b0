//! The derive's plumbing: one row's cells written from and read into a struct.

use bytes::Bytes;

use crate::clock::RowSet;
use crate::error::{Error, Result};
use crate::key::{KeySchema, Printable};
use crate::store::{Mutation, RowResult};
use crate::value::{Codec, Native, Versioned};

/// Collects one row's cells as mutations; generated `write_cells` code calls
/// it. The derive's plumbing, reached through `hmap::__private` and free to
/// change (not `#[doc(hidden)]`: rustc would then print its full path in the
/// derive's compile errors).
#[derive(Debug)]
pub struct RowWriter<'a> {
    table: &'static str,
    row: &'a [u8],
    /// The timestamp of every cell written (but versions, which carry their own).
    timestamp: i64,
    mutations: Vec<Mutation>,
    /// Only these fields, for partial updates.
    pub(crate) only: Option<&'a [&'a str]>,
    /// The table's key layout, to show a row's parts in errors.
    pub(crate) key: Option<&'static KeySchema>,
}

impl<'a> RowWriter<'a> {
    /// A writer for one row, stamping its cells with
    /// [`next_timestamp`](crate::clock::next_timestamp) for this row. To
    /// write several rows in one call, take one timestamp for all of them
    /// (a [`RowSet`] of every row) and use [`at`](Self::at) for each.
    pub fn new(table: &'static str, row: &'a [u8]) -> Self {
        Self::at(table, row, crate::clock::next_timestamp(&RowSet::of(table, row)))
    }

    /// A writer for one row, stamping its cells with `timestamp`.
    pub fn at(table: &'static str, row: &'a [u8], timestamp: i64) -> Self {
        RowWriter {
            table,
            row,
            timestamp,
            mutations: Vec::new(),
            only: None,
            key: None,
        }
    }

    /// Makes room for `cells` more mutations.
    pub(crate) fn reserve(&mut self, cells: usize) {
        self.mutations.reserve(cells);
    }

    /// The mutations collected.
    pub fn into_mutations(self) -> Vec<Mutation> {
        self.mutations
    }

    /// Whether a field is written (all are, except in a partial update).
    pub fn writes(&self, field: &str) -> bool {
        self.only.is_none_or(|only| only.contains(&field))
    }

    fn encode<C: Codec<T>, T>(&self, family: &str, qualifier: &[u8], value: &T) -> Result<Bytes> {
        C::encode(value).map_err(|source| Error::Encode {
            table: self.table,
            row: show_typed_row(self.key, self.row),
            column: format!("{family}:{}", Printable(qualifier)),
            cause: source,
        })
    }

    /// Writes one cell.
    pub fn cell<C: Codec<T>, T>(&mut self, family: &'static str, qualifier: &'static str, value: &T) -> Result<()> {
        let value = self.encode::<C, T>(family, qualifier.as_bytes(), value)?;
        self.mutations.push(Mutation::Put {
            family: Bytes::from_static(family.as_bytes()),
            qualifier: Bytes::from_static(qualifier.as_bytes()),
            value,
            timestamp: Some(self.timestamp),
        });
        Ok(())
    }

    /// Writes an optional cell: `None` deletes the stored cell, or, with
    /// `keep_on_none`, leaves it as it is.
    pub fn optional<C: Codec<T>, T>(
        &mut self,
        family: &'static str,
        qualifier: &'static str,
        value: &Option<T>,
        keep_on_none: bool,
    ) -> Result<()> {
        match value {
            Some(v) => self.cell::<C, T>(family, qualifier, v),
            None if keep_on_none => Ok(()),
            None => {
                self.mutations.push(Mutation::DeleteColumn {
                    family: Bytes::from_static(family.as_bytes()),
                    qualifier: Bytes::from_static(qualifier.as_bytes()),
                    up_to: Some(self.timestamp),
                });
                Ok(())
            }
        }
    }

    /// Replaces a dynamic family with the entries of a map: the stored
    /// family is deleted up to the millisecond before this write's, and every
    /// entry is written at this write's, so the family holds exactly the map
    /// afterwards.
    pub fn dynamic<'m, KC, VC, K, V>(
        &mut self,
        family: &'static str,
        entries: impl IntoIterator<Item = (&'m K, &'m V)>,
    ) -> Result<()>
    where
        KC: Codec<K>,
        VC: Codec<V>,
        K: 'm,
        V: 'm,
    {
        let now = self.timestamp;
        let family_bytes = Bytes::from_static(family.as_bytes());
        self.mutations.push(Mutation::DeleteFamily {
            family: family_bytes.clone(),
            up_to: Some(now - 1),
        });
        for (k, v) in entries {
            let qualifier = KC::encode(k).map_err(|source| Error::Encode {
                table: self.table,
                row: show_typed_row(self.key, self.row),
                column: format!("{family}:<key>"),
                cause: source,
            })?;
            let value = self.encode::<VC, V>(family, &qualifier, v)?;
            self.mutations.push(Mutation::Put {
                family: family_bytes.clone(),
                qualifier,
                value,
                timestamp: Some(now),
            });
        }
        Ok(())
    }

    /// Writes each version at its timestamp (writing a version again
    /// overwrites it: it is idempotent).
    pub fn versions<C: Codec<T>, T>(
        &mut self,
        family: &'static str,
        qualifier: &'static str,
        versions: &[Versioned<T>],
    ) -> Result<()> {
        for v in versions {
            let value = self.encode::<C, T>(family, qualifier.as_bytes(), &v.value)?;
            self.mutations.push(Mutation::Put {
                family: Bytes::from_static(family.as_bytes()),
                qualifier: Bytes::from_static(qualifier.as_bytes()),
                value,
                timestamp: Some(v.timestamp),
            });
        }
        Ok(())
    }
}

/// Reads one row's cells; generated `read_row` code calls it. The derive's
/// plumbing, reached through `hmap::__private` and free to change.
#[derive(Debug)]
pub struct RowReader<'a> {
    pub(crate) table: &'static str,
    pub(crate) result: &'a RowResult,
    /// The table's key layout, to show the row's parts in errors.
    pub(crate) key: Option<&'static KeySchema>,
}

impl<'a> RowReader<'a> {
    /// A reader over a stored row.
    pub fn new(table: &'static str, result: &'a RowResult) -> Self {
        RowReader {
            table,
            result,
            key: None,
        }
    }

    /// The row key.
    pub fn row(&self) -> &[u8] {
        &self.result.row
    }

    /// The cells of one column, newest first.
    ///
    /// Rows of a few dozen cells (most rows) are searched linearly,
    /// comparing lengths before bytes; a binary search, two slice
    /// comparisons per probe, cost 4x more for a 10-field struct. Larger rows
    /// (dynamic families) are searched by bisection: cells are sorted by
    /// family, qualifier and timestamp.
    fn column(&self, family: &str, qualifier: &[u8]) -> &'a [crate::store::Cell] {
        let (start, len) = self.column_range(family, qualifier);
        &self.result.cells[start..start + len]
    }

    fn column_range(&self, family: &str, qualifier: &[u8]) -> (usize, usize) {
        let cells = &self.result.cells;
        let family = family.as_bytes();
        let is_column = |c: &crate::store::Cell| short_eq(&c.qualifier, qualifier) && short_eq(&c.family, family);
        let start = if cells.len() <= 32 {
            match cells.iter().position(is_column) {
                Some(i) => i,
                None => return (0, 0),
            }
        } else {
            cells.partition_point(|c| (&c.family[..], &c.qualifier[..]) < (family, qualifier))
        };
        (start, cells[start..].iter().take_while(|c| is_column(c)).count())
    }

    /// Finds the cells of many columns in one pass over the row. `columns`
    /// must be sorted by family, then qualifier (the derive sorts them at
    /// compile time), as a [`Store`](crate::store::Store) returns cells; the result holds, for
    /// each column, the range of its cells (empty if absent). Were a store to
    /// return cells out of order, columns could read as absent, never as
    /// another column's cells.
    pub fn locate<const N: usize>(&self, columns: &[(&str, &str); N]) -> [(u32, u32); N] {
        let cells = &self.result.cells;
        // The usual row: every column once, nothing else. One comparison a
        // cell confirms it.
        if cells.len() == N && Self::one_cell_per_column(cells, columns) {
            return std::array::from_fn(|j| (j as u32, 1));
        }
        let mut slots = [(0u32, 0u32); N];
        let (mut i, mut j) = (0, 0);
        while i < cells.len() && j < N {
            let (family, qualifier) = columns[j];
            let cell = &cells[i];
            // Usually every field is present once, so cell i is column j:
            // test equality first, which fails fast on the lengths.
            let order = if short_eq(&cell.qualifier, qualifier.as_bytes()) && short_eq(&cell.family, family.as_bytes())
            {
                std::cmp::Ordering::Equal
            } else {
                short_cmp(&cell.family, family.as_bytes())
                    .then_with(|| short_cmp(&cell.qualifier, qualifier.as_bytes()))
            };
            match order {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    // Cell i is the column's; more versions may follow.
                    let run = 1 + cells[i + 1..]
                        .iter()
                        .take_while(|c| {
                            short_eq(&c.qualifier, qualifier.as_bytes()) && short_eq(&c.family, family.as_bytes())
                        })
                        .count();
                    slots[j] = (i as u32, run as u32);
                    i += run;
                    j += 1;
                }
            }
        }
        slots
    }

    /// Whether cell `j` is column `j`, for each `j`. A family is compared
    /// once per run of cells that share it (the same bytes, as stores hand
    /// them out, and the same name among the columns).
    #[inline]
    fn one_cell_per_column(cells: &[crate::store::Cell], columns: &[(&str, &str)]) -> bool {
        let mut checked: Option<(*const u8, *const u8)> = None;
        for (c, (f, q)) in cells.iter().zip(columns) {
            if !short_eq(&c.qualifier, q.as_bytes()) {
                return false;
            }
            let pair = (c.family.as_ptr(), f.as_ptr());
            if checked != Some(pair) {
                if !short_eq(&c.family, f.as_bytes()) {
                    return false;
                }
                checked = Some(pair);
            }
        }
        true
    }

    fn slot(&self, slot: (u32, u32)) -> &'a [crate::store::Cell] {
        let (start, len) = (slot.0 as usize, slot.1 as usize);
        self.result.cells.get(start..start + len).unwrap_or_default()
    }

    /// A required cell, from a slot found by [`locate`](Self::locate).
    pub fn cell_at<C: Codec<T>, T>(&self, slot: (u32, u32), family: &str, qualifier: &str) -> Result<T> {
        match self.slot(slot).first() {
            Some(c) => self.decode::<C, T>(family, qualifier.as_bytes(), &c.value),
            None => Err(self.missing(family, qualifier)),
        }
    }

    /// An optional cell, from a slot found by [`locate`](Self::locate).
    pub fn optional_at<C: Codec<T>, T>(&self, slot: (u32, u32), family: &str, qualifier: &str) -> Result<Option<T>> {
        self.slot(slot)
            .first()
            .map(|c| self.decode::<C, T>(family, qualifier.as_bytes(), &c.value))
            .transpose()
    }

    /// The versions of a cell, from a slot found by [`locate`](Self::locate).
    pub fn versions_at<C: Codec<T>, T>(
        &self,
        slot: (u32, u32),
        family: &str,
        qualifier: &str,
    ) -> Result<Vec<Versioned<T>>> {
        self.slot(slot)
            .iter()
            .map(|c| {
                Ok(Versioned {
                    timestamp: c.timestamp,
                    value: self.decode::<C, T>(family, qualifier.as_bytes(), &c.value)?,
                })
            })
            .collect()
    }

    /// A counter (0 if absent), from a slot found by [`locate`](Self::locate).
    pub fn counter_at(&self, slot: (u32, u32), family: &str, qualifier: &str) -> Result<i64> {
        Ok(self.optional_at::<Native, i64>(slot, family, qualifier)?.unwrap_or(0))
    }

    /// The optimistic version (0 if absent), from a slot found by [`locate`](Self::locate).
    pub fn version_at(&self, slot: (u32, u32), family: &str, qualifier: &str) -> Result<u64> {
        Ok(self.optional_at::<Native, u64>(slot, family, qualifier)?.unwrap_or(0))
    }

    #[cold]
    fn missing(&self, family: &str, qualifier: &str) -> Error {
        Error::MissingCell {
            table: self.table,
            row: show_typed_row(self.key, &self.result.row),
            column: format!("{family}:{qualifier}"),
        }
    }

    fn decode<C: Codec<T>, T>(&self, family: &str, qualifier: &[u8], bytes: &[u8]) -> Result<T> {
        C::decode(bytes).map_err(|source| Error::Decode {
            table: self.table,
            row: show_typed_row(self.key, &self.result.row),
            column: format!("{family}:{}", Printable(qualifier)),
            cause: source,
        })
    }

    /// A required cell's newest value.
    pub fn cell<C: Codec<T>, T>(&self, family: &str, qualifier: &str) -> Result<T> {
        match self.column(family, qualifier.as_bytes()).first() {
            Some(c) => self.decode::<C, T>(family, qualifier.as_bytes(), &c.value),
            None => Err(self.missing(family, qualifier)),
        }
    }

    /// An optional cell's newest value.
    pub fn optional<C: Codec<T>, T>(&self, family: &str, qualifier: &str) -> Result<Option<T>> {
        self.column(family, qualifier.as_bytes())
            .first()
            .map(|c| self.decode::<C, T>(family, qualifier.as_bytes(), &c.value))
            .transpose()
    }

    /// Every column of a dynamic family, newest value of each.
    pub fn dynamic<KC, VC, K, V, M>(&self, family: &str) -> Result<M>
    where
        KC: Codec<K>,
        VC: Codec<V>,
        M: FromIterator<(K, V)>,
    {
        let mut previous: Option<&[u8]> = None;
        self.result
            .family(family.as_bytes())
            .filter(|c| {
                // Newest version of each qualifier only.
                let first = previous != Some(&c.qualifier[..]);
                previous = Some(&c.qualifier[..]);
                first
            })
            .map(|c| {
                let k = self.decode::<KC, K>(family, &c.qualifier, &c.qualifier)?;
                let v = self.decode::<VC, V>(family, &c.qualifier, &c.value)?;
                Ok((k, v))
            })
            .collect()
    }

    /// The versions of a multi-version cell, newest first.
    pub fn versions<C: Codec<T>, T>(&self, family: &str, qualifier: &str) -> Result<Vec<Versioned<T>>> {
        self.column(family, qualifier.as_bytes())
            .iter()
            .map(|c| {
                Ok(Versioned {
                    timestamp: c.timestamp,
                    value: self.decode::<C, T>(family, qualifier.as_bytes(), &c.value)?,
                })
            })
            .collect()
    }

    /// A counter; 0 if absent.
    pub fn counter(&self, family: &str, qualifier: &str) -> Result<i64> {
        Ok(self.optional::<Native, i64>(family, qualifier)?.unwrap_or(0))
    }

    /// The optimistic version; 0 if absent.
    pub fn version(&self, family: &str, qualifier: &str) -> Result<u64> {
        Ok(self.optional::<Native, u64>(family, qualifier)?.unwrap_or(0))
    }
}

/// A row for an error message: printable (cut after 64 bytes), then its
/// key parts when the table's key layout decodes them:
/// `u1\x00\x7F... (uid="u1", ts=2026-11-22T10:00:00.000Z, pid=7)`. Called on
/// error paths only.
#[cold]
pub(crate) fn show_typed_row(key: Option<&KeySchema>, row: &[u8]) -> String {
    let mut shown = crate::store::show_row(row);
    if let Some(parts) = key.and_then(|k| k.inspect(row).ok()) {
        shown.push_str(" (");
        let parts = parts.0.iter().filter_map(|seg| match seg {
            crate::key::InspectedSegment::Part { name, value } => Some(format!("{name}={value}")),
            _ => None,
        });
        shown.push_str(&parts.collect::<Vec<_>>().join(", "));
        shown.push(')');
    }
    shown
}

/// Slice equality, inlined for the short slices qualifiers and families
/// are: a `memcmp` call per comparison was a third of a row's decoding, and a
/// byte loop half of it. Up to 16 bytes, two overlapping word loads per side
/// compare the whole slice.
#[inline]
fn short_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    #[inline(always)]
    fn word<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
        let mut w = [0u8; N];
        w.copy_from_slice(&s[at..at + N]);
        w
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, n - 4) == word::<4>(b, n - 4),
        8..=16 => word::<8>(a, 0) == word::<8>(b, 0) && word::<8>(a, n - 8) == word::<8>(b, n - 8),
        _ => a == b,
    }
}

/// Slice order, inlined for short slices (see [`short_eq`]).
#[inline]
fn short_cmp(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    if a.len() <= 16 && b.len() <= 16 {
        for (x, y) in a.iter().zip(b) {
            if x != y {
                return x.cmp(y);
            }
        }
        a.len().cmp(&b.len())
    } else {
        a.cmp(b)
    }
}

#[cfg(test)]
mod short_compare_tests {
    use super::short_eq;

    /// `short_eq` is `==` for every length around its word sizes, with the
    /// slices differing at each position in turn.
    #[test]
    fn short_eq_is_slice_equality() {
        for n in 0..=24usize {
            let a: Vec<u8> = (0..n as u8).map(|b| b.wrapping_mul(37).wrapping_add(1)).collect();
            assert!(short_eq(&a, &a.clone()), "len {n}");
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x40;
                assert!(!short_eq(&a, &b), "len {n}, differing at {at}");
            }
            assert!(!short_eq(&a, &a[..n.saturating_sub(1)]) || n == 0);
        }
    }
}
