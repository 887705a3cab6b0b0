//! Typed tables: [`HTable`] (what `#[derive(HTable)]` implements) and
//! [`Table`], the typed API over any [`Store`].

use std::fmt;
use std::marker::PhantomData;

use bytes::Bytes;

use crate::clock::RowSet;
use crate::error::{Error, Result};
use crate::key::{FromKeyTuple, KeyError, KeyInspection, KeySchema, KeyTuple, Order, Printable, Segment, Transform};
use crate::schema::{FamilySchema, KEY_LAYOUT_ATTRIBUTE, SchemaDiff, SchemaDifference, TableSchema};
use crate::store::{
    CheckAndMutate, Get, Increment, Mutation, RowMutation, RowResult, RowScanner, Scan, Store, StoreError, TimeRange,
    prefix_end,
};
use crate::value::{Codec, Native, Versioned};

/// What a field of a mapped struct is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FieldRole {
    /// A part of the rowkey.
    Key,
    /// One cell (an `Option` field may be absent).
    Cell,
    /// A map whose keys are the qualifiers of a family (`item:<item_id>=type`).
    Dynamic,
    /// A dynamic family that a relation helper owns (`#[hmap(dynamic,
    /// relation)]`): read like [`Dynamic`](Self::Dynamic), but written only
    /// by the relation (its `link`, `unlink`, deletes and repair). A put of
    /// the entity leaves it alone, an update refuses it, and a delete of a
    /// row whose relation family is not empty is refused.
    Relation,
    /// The newest versions of one cell, with their timestamps.
    Versions,
    /// The optimistic-concurrency version: writes check it.
    Version,
    /// A counter, changed by atomic increments only.
    Counter,
}

/// A field of a mapped struct: where it is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FieldInfo {
    /// The Rust field name.
    pub name: &'static str,
    /// The column family (empty for key fields).
    pub family: &'static str,
    /// The qualifier (empty for key and dynamic fields).
    pub qualifier: &'static str,
    /// What the field is.
    pub role: FieldRole,
}

/// A Rust type mapped to an HBase table. Implement it with
/// `#[derive(HTable)]`; see the derive's documentation for the attributes.
pub trait HTable: Sized {
    /// The key parts' owned values, in key order: a tuple, or the type of a
    /// single-part key.
    type Key: FromKeyTuple;

    /// The table's name.
    const TABLE: &'static str;

    /// The rowkey layout.
    fn key_schema() -> &'static KeySchema;

    /// The column families and their options.
    fn families() -> Vec<FamilySchema>;

    /// Every field, in declaration order.
    fn fields() -> &'static [FieldInfo];

    /// Appends this row's key.
    fn encode_key(&self, out: &mut Vec<u8>) -> Result<(), KeyError>;

    /// Writes this row's cells (every field but key and counter fields).
    /// The derive's plumbing, not part of the documented API.
    #[doc(hidden)]
    fn write_cells(&self, cells: &mut RowWriter<'_>) -> Result<()>;

    /// Builds a row from its decoded key and its cells. The derive's
    /// plumbing, not part of the documented API.
    #[doc(hidden)]
    fn read_row(key: Self::Key, cells: &RowReader<'_>) -> Result<Self>;

    /// The optimistic-concurrency version, for types that have one.
    fn version(&self) -> Option<u64> {
        None
    }

    /// Sets the optimistic-concurrency version.
    fn set_version(&mut self, _version: u64) {}

    /// The schema that creates the table: its families, split points at
    /// each salt bucket for a salted key, and the key layout's
    /// [fingerprint](KeySchema::fingerprint) in the metadata (under
    /// [`KEY_LAYOUT_ATTRIBUTE`]).
    fn table_schema() -> TableSchema {
        let mut schema = TableSchema::new(Self::TABLE);
        schema.families = Self::families();
        schema.split_keys = salt_split_keys(Self::key_schema());
        schema
            .metadata
            .insert(KEY_LAYOUT_ATTRIBUTE.into(), Self::key_schema().fingerprint());
        schema
    }

    /// How many versions reads fetch: the largest `VERSIONS` among the
    /// families of multi-version fields, else 1.
    fn read_versions() -> u32 {
        let families = Self::families();
        Self::fields()
            .iter()
            .filter(|f| f.role == FieldRole::Versions)
            .filter_map(|f| families.iter().find(|fam| fam.name == f.family))
            .map(|fam| fam.versions)
            .max()
            .unwrap_or(1)
    }
}

/// The region split points of a salted key: the first key of each bucket
/// but the first.
pub fn salt_split_keys(schema: &KeySchema) -> Vec<Bytes> {
    let Some((buckets, _)) = schema.salt() else {
        return Vec::new();
    };
    if !matches!(schema.segments().first(), Some(Segment::Salt { .. })) {
        return Vec::new();
    }
    (1..buckets)
        .filter_map(|b| schema.encode_prefix_in_bucket(&(), b).ok())
        .map(Bytes::from)
        .collect()
}

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
    only: Option<&'a [&'a str]>,
    /// The table's key layout, to show a row's parts in errors.
    key: Option<&'static KeySchema>,
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
            source,
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
                source,
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
    table: &'static str,
    result: &'a RowResult,
    /// The table's key layout, to show the row's parts in errors.
    key: Option<&'static KeySchema>,
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
    /// compile time), as a [`Store`] returns cells; the result holds, for
    /// each column, the range of its cells (empty if absent). Were a store to
    /// return cells out of order, columns could read as absent, never as
    /// another column's cells.
    pub fn locate<const N: usize>(&self, columns: &[(&str, &str); N]) -> [(u32, u32); N] {
        let cells = &self.result.cells;
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
                    let run = cells[i..]
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
            source,
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
fn show_typed_row(key: Option<&KeySchema>, row: &[u8]) -> String {
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
/// are: a `memcmp` call per comparison was a third of a row's decoding.
#[inline]
fn short_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.len() <= 16 {
        a.iter().zip(b).all(|(x, y)| x == y)
    } else {
        a == b
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

/// A position in a scan: the key of the last row a page returned. Opaque;
/// its text form (hex) can travel in a URL and be parsed back.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cursor(Bytes);

impl Cursor {
    /// The cursor after `row`.
    pub fn after(row: impl Into<Bytes>) -> Self {
        Cursor(row.into())
    }

    /// The last row key returned.
    pub fn row(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl std::str::FromStr for Cursor {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        if !s.len().is_multiple_of(2) || !s.bytes().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!("{s:?} is not a cursor (even-length hex)"));
        }
        let bytes = (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| e.to_string()))
            .collect::<std::result::Result<Vec<u8>, String>>()?;
        Ok(Cursor(Bytes::from(bytes)))
    }
}

/// One page of a paginated query.
#[derive(Debug, Clone)]
pub struct Page<T> {
    /// The rows, in scan order.
    pub rows: Vec<T>,
    /// Where the next page starts; `None` when this was the last page.
    pub next: Option<Cursor>,
}

/// Two key tuples one after the other: a query's prefix and its range part.
struct Chain<'a>(&'a dyn KeyTuple, &'a dyn KeyTuple);

impl KeyTuple for Chain<'_> {
    fn arity(&self) -> usize {
        self.0.arity() + self.1.arity()
    }
    fn encode_part(
        &self,
        index: usize,
        spec: &crate::key::PartSpec,
        format: crate::key::KeyFormat,
        out: &mut Vec<u8>,
    ) -> Result<(), KeyError> {
        match index.checked_sub(self.0.arity()) {
            None => self.0.encode_part(index, spec, format, out),
            Some(i) => self.1.encode_part(i, spec, format, out),
        }
    }
    fn write_plain(
        &self,
        index: usize,
        spec: &crate::key::PartSpec,
        format: crate::key::KeyFormat,
        out: &mut Vec<u8>,
    ) -> Result<(), KeyError> {
        match index.checked_sub(self.0.arity()) {
            None => self.0.write_plain(index, spec, format, out),
            Some(i) => self.1.write_plain(i, spec, format, out),
        }
    }
}

/// What to read from a table: a key prefix, a range on the part after it,
/// a time range, direction, offset and limit.
///
/// ```
/// use chrono::{DateTime, Utc};
/// use hmap::Query;
///
/// // A user's purchases in November, 20 at most; on a key of (user,
/// // reverse_ts time, product) they come newest first.
/// let nov_1: DateTime<Utc> = "2026-11-01T00:00:00Z".parse().unwrap();
/// let dec_1: DateTime<Utc> = "2026-12-01T00:00:00Z".parse().unwrap();
/// let november = Query::prefix("u42").between(nov_1, dec_1).limit(20);
/// # let _ = november;
/// ```
///
/// See the [scans chapter](https://github.com/hmap-rs/hmap/blob/main/docs/scans.md) of the guide.
pub struct Query<'k> {
    prefix: Box<dyn KeyTuple + 'k>,
    range: Option<(Box<dyn KeyTuple + 'k>, Box<dyn KeyTuple + 'k>)>,
    time_range: TimeRange,
    reversed: bool,
    offset: usize,
    limit: Option<usize>,
    after: Option<Cursor>,
    batch_size: usize,
}

impl fmt::Debug for Query<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Query")
            .field("prefix_parts", &self.prefix.arity())
            .field("range", &self.range.is_some())
            .field("time_range", &self.time_range)
            .field("reversed", &self.reversed)
            .field("offset", &self.offset)
            .field("limit", &self.limit)
            .field("after", &self.after)
            .finish()
    }
}

impl Default for Query<'_> {
    fn default() -> Self {
        Query::all()
    }
}

impl<'k> Query<'k> {
    /// Every row, in key order.
    pub fn all() -> Self {
        Query {
            prefix: Box::new(()),
            range: None,
            time_range: TimeRange::ALL,
            reversed: false,
            offset: 0,
            limit: None,
            after: None,
            batch_size: 100,
        }
    }

    /// The rows whose leading key parts are these values (a tuple of any
    /// number of leading parts, or a single value for the first).
    pub fn prefix(parts: impl KeyTuple + 'k) -> Self {
        Query {
            prefix: Box::new(parts),
            ..Query::all()
        }
    }

    /// Of those, the rows whose next key part is in `[from, to)`, in the
    /// part's own value order, whether it is stored ascending, `desc` or
    /// `reverse_ts`.
    pub fn between(mut self, from: impl KeyTuple + 'k, to: impl KeyTuple + 'k) -> Self {
        self.range = Some((Box::new(from), Box::new(to)));
        self
    }

    /// Only cells whose timestamps are in the range (fields whose cells
    /// fall outside read as absent).
    pub fn time_range(mut self, range: TimeRange) -> Self {
        self.time_range = range;
        self
    }

    /// Last row first.
    pub fn reversed(mut self) -> Self {
        self.reversed = true;
        self
    }

    /// Skip this many rows first.
    pub fn offset(mut self, n: usize) -> Self {
        self.offset = n;
        self
    }

    /// Return at most this many rows.
    pub fn limit(mut self, n: usize) -> Self {
        self.limit = Some(n);
        self
    }

    /// Resume after a cursor from a previous page.
    pub fn after(mut self, cursor: Cursor) -> Self {
        self.after = Some(cursor);
        self
    }

    /// Rows fetched per round trip.
    pub fn batch_size(mut self, n: usize) -> Self {
        self.batch_size = n.max(1);
        self
    }
}

/// A typed table over a store.
///
/// ```
/// use hmap::{HTable, Table};
/// use hmap::store::MemoryStore;
///
/// #[derive(HTable, Debug, PartialEq)]
/// #[hmap(table = "user", family(name = "i"))]
/// struct User {
///     #[hmap(key)]
///     id: String,
///     #[hmap(family = "i", column = "n")]
///     name: String,
///     #[hmap(family = "i")]
///     city: Option<String>,
/// }
///
/// let users = Table::<User, _>::new(MemoryStore::new());
/// users.create()?;
/// users.put(&User { id: "u1".into(), name: "Ann".into(), city: None })?;
/// let ann = users.get("u1")?.expect("stored");
/// assert_eq!(ann.name, "Ann");
/// # Ok::<(), hmap::Error>(())
/// ```
pub struct Table<T, S> {
    store: S,
    row: PhantomData<fn() -> T>,
}

impl<T, S: fmt::Debug> fmt::Debug for Table<T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Table").field("store", &self.store).finish()
    }
}

impl<T: HTable, S: Store> Table<T, S> {
    /// The table of `T` in `store`.
    pub fn new(store: S) -> Self {
        Table {
            store,
            row: PhantomData,
        }
    }

    /// The store underneath.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// A store error about one of `rows`, with that row's key parts shown
    /// next to its bytes.
    #[cold]
    fn store_error<'r>(mut e: StoreError, rows: impl IntoIterator<Item = &'r [u8]>) -> Error {
        if let StoreError::InvalidRow { row: shown, .. }
        | StoreError::CellTooLarge { row: shown, .. }
        | StoreError::NegativeTimestamp { row: shown, .. }
        | StoreError::NotACounter { row: shown, .. } = &mut e
            && let Some(row) = rows.into_iter().find(|r| crate::store::show_row(r) == *shown)
        {
            *shown = show_typed_row(Some(T::key_schema()), row);
        }
        Error::Store(e)
    }

    fn key_error(source: KeyError) -> Error {
        Error::Key {
            table: T::TABLE,
            source,
        }
    }

    /// Creates the table from `T`'s schema (families, options, salt splits).
    pub fn create(&self) -> Result<()> {
        T::key_schema().validate().map_err(Self::key_error)?;
        self.store.create_table(&T::table_schema())?;
        Ok(())
    }

    /// Creates the table unless it exists; returns whether it created it.
    ///
    /// A table that exists is checked as [`check_schema`](Self::check_schema)
    /// does: if it lacks a family of `T`, has other family options, or was
    /// created for another key layout, the result is
    /// [`Error::SchemaMismatch`] listing every difference.
    pub fn create_if_missing(&self) -> Result<bool> {
        if !self.store.table_exists(T::TABLE)? {
            match self.create() {
                Ok(()) => return Ok(true),
                // Created by someone else in between: check theirs.
                Err(Error::Store(StoreError::TableExists { .. })) => {}
                Err(e) => return Err(e),
            }
        }
        self.check_schema()?;
        Ok(false)
    }

    /// Plans the [`Migration`](crate::migrate::Migration) that brings the
    /// live table in line with `T`'s schema (creating it if it does not
    /// exist), reading only. Print it to see the HBase shell statements;
    /// [`apply`](crate::migrate::Migration::apply) it, or call
    /// [`migrate`](Self::migrate).
    pub fn migration(&self, options: &crate::migrate::MigrateOptions) -> Result<crate::migrate::Migration> {
        let live = match self.store.describe_table(T::TABLE) {
            Ok(live) => Some(live),
            Err(StoreError::TableNotFound { .. }) => None,
            Err(e) => return Err(e.into()),
        };
        Ok(crate::migrate::Migration::plan(
            &T::table_schema(),
            live.as_ref(),
            options,
        ))
    }

    /// Plans and applies the migration that brings the live table in line
    /// with `T`'s schema (families the table alone has are kept); returns
    /// what it applied. Migrating again does nothing. A table created for
    /// another key layout is [`Error::MigrationBlocked`], and nothing
    /// changes.
    pub fn migrate(&self) -> Result<crate::migrate::Migration> {
        T::key_schema().validate().map_err(Self::key_error)?;
        let migration = self.migration(&crate::migrate::MigrateOptions::new())?;
        migration.apply(&self.store)?;
        Ok(migration)
    }

    /// Compares `T`'s schema with the live table's, reading only: every
    /// difference, errors and informational ones alike (see
    /// [`SchemaDiff`]). Fails only if the table cannot be described.
    pub fn schema_diff(&self) -> Result<SchemaDiff> {
        let live = self.store.describe_table(T::TABLE)?;
        Ok(SchemaDiff::between(&T::table_schema(), &live))
    }

    /// Checks that the live table fits `T`, reading only, as an application
    /// may at startup: [`Error::SchemaMismatch`] lists every difference if
    /// any is an error (a family missing, a family option that differs,
    /// another key layout); otherwise the diff is returned, holding the
    /// informational differences (families only the table has, no recorded
    /// key layout). A table whose key layout hmap did not record opens, with
    /// a warning logged through `tracing`.
    ///
    /// ```
    /// use hmap::schema::{FamilySchema, TableSchema};
    /// use hmap::store::{MemoryStore, Store};
    /// use hmap::{Error, HTable, Table};
    ///
    /// #[derive(HTable)]
    /// #[hmap(table = "user", family(name = "i", versions = 3))]
    /// struct User {
    ///     #[hmap(key)]
    ///     id: String,
    ///     #[hmap(family = "i")]
    ///     name: String,
    /// }
    ///
    /// let store = MemoryStore::new();
    /// // Made by hand, with one version and no recorded key layout.
    /// store.create_table(&TableSchema::new("user").family(FamilySchema::new("i")))?;
    /// let users = Table::<User, _>::new(&store);
    /// let err = users.check_schema().unwrap_err();
    /// assert!(matches!(err, Error::SchemaMismatch { .. }));
    /// assert_eq!(
    ///     err.to_string(),
    ///     "table `user` does not match its struct: family `i`: VERSIONS is 1 in the table, 3 in the struct"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check_schema(&self) -> Result<SchemaDiff> {
        let diff = self.schema_diff()?;
        if !diff.is_compatible() {
            return Err(Error::SchemaMismatch {
                table: T::TABLE,
                diff: Box::new(diff),
            });
        }
        for d in &diff.differences {
            if let SchemaDifference::KeyLayoutNotRecorded { declared } = d {
                tracing::warn!(
                    table = T::TABLE,
                    "table `{}` records no key layout (hmap did not create it); rows are read as `{declared}`",
                    T::TABLE
                );
            }
        }
        Ok(diff)
    }

    /// Whether the table exists.
    pub fn exists(&self) -> Result<bool> {
        Ok(self.store.table_exists(T::TABLE)?)
    }

    /// Deletes the table and every row in it (on HBase: disables, then
    /// deletes it).
    pub fn drop(&self) -> Result<()> {
        Ok(self.store.delete_table(T::TABLE)?)
    }

    /// Deletes every row, keeping the table, its schema and its split
    /// points ([`Store::truncate_table`]).
    pub fn truncate(&self) -> Result<()> {
        Ok(self.store.truncate_table(T::TABLE)?)
    }

    /// The rowkey of a key value (a tuple of every key part).
    pub fn row_key(&self, key: impl KeyTuple) -> Result<Bytes> {
        T::key_schema().encode(&key).map(Bytes::from).map_err(Self::key_error)
    }

    /// The rowkey of a row.
    pub fn row_key_of(&self, row: &T) -> Result<Bytes> {
        let mut out = Vec::new();
        row.encode_key(&mut out).map_err(Self::key_error)?;
        Ok(Bytes::from(out))
    }

    /// Decodes a rowkey into its named parts, to read salted or binary keys
    /// while debugging. Accepts raw bytes.
    pub fn inspect_key(&self, row_key: &[u8]) -> Result<KeyInspection> {
        T::key_schema().inspect(row_key).map_err(Self::key_error)
    }

    /// The families `T`'s fields are stored in, each once. Reads name them,
    /// as HBase clients do: only these cells are fetched, and a family the
    /// table lacks is the store's [`StoreError::NoSuchFamily`] naming table
    /// and family (HBase's `NoSuchColumnFamilyException`), as for a put,
    /// rather than a missing cell.
    ///
    /// [`StoreError::NoSuchFamily`]: crate::store::StoreError::NoSuchFamily
    fn read_families() -> impl Iterator<Item = &'static str> {
        let fields = T::fields();
        fields
            .iter()
            .enumerate()
            .filter(move |(i, f)| !f.family.is_empty() && !fields.iter().take(*i).any(|g| g.family == f.family))
            .map(|(_, f)| f.family)
    }

    fn get_request(row: Bytes) -> Get {
        Self::read_families().fold(Get::new(row).max_versions(T::read_versions()), Get::family)
    }

    fn decode(result: &RowResult) -> Result<T> {
        let key: T::Key = T::key_schema().decode(&result.row).map_err(Self::key_error)?;
        let reader = RowReader {
            key: Some(T::key_schema()),
            ..RowReader::new(T::TABLE, result)
        };
        T::read_row(key, &reader)
    }

    /// Reads the row with this key (a tuple of every key part). Only the
    /// families of `T`'s fields are read: a row with no cells in them reads
    /// as `None`, and a family the table lacks is an error naming it.
    pub fn get(&self, key: impl KeyTuple) -> Result<Option<T>> {
        let row = self.row_key(key)?;
        self.get_row(row)
    }

    /// Reads a row by its raw rowkey.
    pub fn get_row(&self, row_key: impl Into<Bytes>) -> Result<Option<T>> {
        self.store
            .get(T::TABLE, &Self::get_request(row_key.into()))?
            .map(|r| Self::decode(&r))
            .transpose()
    }

    /// Reads many rows in one call; results in the order of `keys`.
    pub fn get_many<K: KeyTuple>(&self, keys: impl IntoIterator<Item = K>) -> Result<Vec<Option<T>>> {
        let gets = keys
            .into_iter()
            .map(|k| self.row_key(k).map(Self::get_request))
            .collect::<Result<Vec<_>>>()?;
        self.get_rows(gets)
    }

    /// Reads many rows by raw rowkey in one call.
    pub fn get_many_rows(&self, row_keys: impl IntoIterator<Item = Bytes>) -> Result<Vec<Option<T>>> {
        self.get_rows(row_keys.into_iter().map(Self::get_request).collect())
    }

    fn get_rows(&self, gets: Vec<Get>) -> Result<Vec<Option<T>>> {
        self.store
            .get_many(T::TABLE, &gets)?
            .iter()
            .map(|r| r.as_ref().map(Self::decode).transpose())
            .collect()
    }

    /// A row's cells as one mutation of the row `key` (its
    /// [`row_key_of`](Self::row_key_of), computed by the caller before it
    /// took `timestamp` for that row).
    fn mutation_of(&self, row: &T, key: Bytes, only: Option<&[&str]>, timestamp: i64) -> Result<RowMutation> {
        let mut writer = RowWriter::at(T::TABLE, &key, timestamp);
        writer.only = only;
        writer.key = Some(T::key_schema());
        row.write_cells(&mut writer)?;
        let mutations = writer.into_mutations();
        Ok(RowMutation { row: key, mutations })
    }

    /// Writes a row: every cell of its fields, stamped with
    /// [`next_timestamp`](crate::clock::next_timestamp), so that within a
    /// process a later write always wins, also over a delete of the same row
    /// in the same millisecond (which a server-stamped put would lose). That
    /// clock never runs ahead of the wall clock (a second write of the row in
    /// one millisecond waits for the next), so a delete the server stamps
    /// afterwards removes what this wrote. An `Option` field that is
    /// `None` deletes its stored cell (unless marked `keep_on_none`); a
    /// dynamic map replaces its family; counters are left alone. A type with
    /// a `version` field writes only if the stored version is the row's
    /// (else [`Error::Conflict`]), and stores the next version.
    pub fn put(&self, row: &T) -> Result<()> {
        let key = self.row_key_of(row)?;
        let ts = self.next_timestamp_of(&key);
        self.write(row, key, None, ts).map(|_| ())
    }

    /// [`put`](Self::put) of the row `key` (its
    /// [`row_key_of`](Self::row_key_of)) at a timestamp the caller took for
    /// it (a relation operation writing several rows at one timestamp).
    pub(crate) fn put_at(&self, row: &T, key: Bytes, timestamp: i64) -> Result<()> {
        self.write(row, key, None, timestamp).map(|_| ())
    }

    /// A timestamp for a call writing the row `key` of this table.
    fn next_timestamp_of(&self, key: &[u8]) -> i64 {
        crate::clock::next_timestamp(&RowSet::of(T::TABLE, key))
    }

    /// [`put`](Self::put), then sets the row's version field to the version
    /// now stored.
    pub fn save(&self, row: &mut T) -> Result<()> {
        let key = self.row_key_of(row)?;
        let ts = self.next_timestamp_of(&key);
        if let Some(version) = self.write(row, key, None, ts)? {
            row.set_version(version);
        }
        Ok(())
    }

    /// Writes only the named fields of a row (by Rust field name).
    pub fn update(&self, row: &T, fields: &[&str]) -> Result<()> {
        self.check_update_fields(fields)?;
        let key = self.row_key_of(row)?;
        let ts = self.next_timestamp_of(&key);
        self.write(row, key, Some(fields), ts).map(|_| ())
    }

    /// [`update`](Self::update) of the row `key` (its
    /// [`row_key_of`](Self::row_key_of)) at a timestamp the caller took for it.
    pub(crate) fn update_at(&self, row: &T, key: Bytes, fields: &[&str], timestamp: i64) -> Result<()> {
        self.check_update_fields(fields)?;
        self.write(row, key, Some(fields), timestamp).map(|_| ())
    }

    /// Checks that `fields` name fields an update may write.
    fn check_update_fields(&self, fields: &[&str]) -> Result<()> {
        for name in fields {
            match T::fields().iter().find(|f| f.name == *name) {
                None => return Err(self.field_error(name, "is not a field of this table")),
                Some(f) if f.role == FieldRole::Key => {
                    return Err(self.field_error(name, "is part of the key; write the row under its new key instead"));
                }
                Some(f) if f.role == FieldRole::Counter => {
                    return Err(self.field_error(name, "is a counter; use `increment`"));
                }
                Some(f) if f.role == FieldRole::Relation => {
                    return Err(self.field_error(
                        name,
                        "is a relation's list; change it with the relation's `link` and `unlink`",
                    ));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    fn field_error(&self, field: &str, reason: &'static str) -> Error {
        Error::Field {
            table: T::TABLE,
            field: field.into(),
            reason,
        }
    }

    /// Writes a row; returns the version stored for versioned types.
    fn write(&self, row: &T, key: Bytes, only: Option<&[&str]>, ts: i64) -> Result<Option<u64>> {
        let mut mutation = self.mutation_of(row, key, only, ts)?;
        let (Some(version), Some(field)) = (row.version(), T::fields().iter().find(|f| f.role == FieldRole::Version))
        else {
            self.store
                .mutate(T::TABLE, std::slice::from_ref(&mutation))
                .map_err(|e| Self::store_error(e, [&mutation.row[..]]))?;
            return Ok(None);
        };
        let next = version + 1;
        mutation.mutations.push(Mutation::Put {
            family: Bytes::from_static(field.family.as_bytes()),
            qualifier: Bytes::from_static(field.qualifier.as_bytes()),
            value: Bytes::copy_from_slice(&next.to_be_bytes()),
            timestamp: Some(ts),
        });
        let expected = (version > 0).then(|| Bytes::copy_from_slice(&version.to_be_bytes()));
        let row_key = mutation.row.clone();
        let applied = self
            .store
            .check_and_mutate(
                T::TABLE,
                &CheckAndMutate::new(mutation, field.family, field.qualifier, expected),
            )
            .map_err(|e| Self::store_error(e, [&row_key[..]]))?;
        if applied {
            return Ok(Some(next));
        }
        let stored = self
            .store
            .get(
                T::TABLE,
                &Get::new(row_key.clone()).column(field.family, field.qualifier),
            )?
            .and_then(|r| r.value(field.family, field.qualifier))
            .and_then(|v| <[u8; 8]>::try_from(&v[..]).ok())
            .map(u64::from_be_bytes);
        Err(Error::Conflict {
            table: T::TABLE,
            row: show_typed_row(Some(T::key_schema()), &row_key),
            expected: version,
            found: stored.map_or_else(|| "absent".into(), |v| v.to_string()),
        })
    }

    /// Writes many rows in one call (each row atomically, rows independently),
    /// all stamped with one timestamp: give each row once per call (two
    /// writes of a row at one timestamp are one version, and two maps of a
    /// dynamic family merge). Versioned types are written one by one, each
    /// checked.
    pub fn put_many<'r>(&self, rows: impl IntoIterator<Item = &'r T>) -> Result<()>
    where
        T: 'r,
    {
        if T::fields().iter().any(|f| f.role == FieldRole::Version) {
            return rows.into_iter().try_for_each(|r| self.put(r));
        }
        let rows = rows
            .into_iter()
            .map(|r| Ok((r, self.row_key_of(r)?)))
            .collect::<Result<Vec<_>>>()?;
        let ts = crate::clock::next_timestamp(&RowSet::of_rows(T::TABLE, rows.iter().map(|(_, k)| &k[..])));
        let mutations = rows
            .into_iter()
            .map(|(r, key)| self.mutation_of(r, key, None, ts))
            .collect::<Result<Vec<_>>>()?;
        self.store
            .mutate(T::TABLE, &mutations)
            .map_err(|e| Self::store_error(e, mutations.iter().map(|m| &m.row[..])))?;
        Ok(())
    }

    /// Deletes the row with this key. A row that a relation links (one of
    /// its `#[hmap(dynamic, relation)]` families is not empty) is not
    /// deleted: [`Error::Linked`] names the family, and the relation's
    /// delete (`ManyToMany::delete_left`/`delete_right`) removes the row
    /// and its id from the partners' lists.
    pub fn delete(&self, key: impl KeyTuple) -> Result<()> {
        let row = self.row_key(key)?;
        self.delete_rows([row])
    }

    /// Deletes rows by raw rowkey, in one call; refuses (deleting none) if
    /// a relation links any of them, as [`delete`](Self::delete) does. For
    /// a type with relation families that check is one batched get before
    /// the delete.
    pub fn delete_rows(&self, row_keys: impl IntoIterator<Item = Bytes>) -> Result<()> {
        let rows: Vec<Bytes> = row_keys.into_iter().collect();
        self.refuse_linked(&rows)?;
        let ts = crate::clock::next_timestamp(&RowSet::of_rows(T::TABLE, rows.iter().map(|k| &k[..])));
        self.delete_rows_at(rows, ts)
    }

    /// The families that relation helpers own (`#[hmap(dynamic, relation)]`).
    pub(crate) fn relation_families() -> impl Iterator<Item = &'static str> {
        T::fields()
            .iter()
            .filter(|f| f.role == FieldRole::Relation)
            .map(|f| f.family)
    }

    /// [`Error::Linked`] if a relation family of one of these rows holds an
    /// entry (one batched get; none for a type without relation families).
    pub(crate) fn refuse_linked(&self, rows: &[Bytes]) -> Result<()> {
        let families: Vec<&'static str> = Self::relation_families().collect();
        if families.is_empty() || rows.is_empty() {
            return Ok(());
        }
        let gets: Vec<Get> = rows
            .iter()
            .map(|row| families.iter().fold(Get::new(row.clone()), |g, f| g.family(*f)))
            .collect();
        for (row, result) in rows.iter().zip(self.store.get_many(T::TABLE, &gets)?) {
            let Some(result) = result else { continue };
            if let Some(family) = families.iter().find(|f| result.family(f.as_bytes()).next().is_some()) {
                return Err(Error::Linked {
                    table: T::TABLE,
                    row: Printable(row).to_string(),
                    family,
                });
            }
        }
        Ok(())
    }

    /// The families that hold an entity's own fields: those of `T`'s fields
    /// but its relation families. Empty for a type that is nothing but its
    /// lists, whose existence cannot be told.
    pub(crate) fn entity_families() -> Vec<&'static str> {
        let mut families: Vec<&'static str> = T::fields()
            .iter()
            .filter(|f| !matches!(f.role, FieldRole::Key | FieldRole::Relation))
            .map(|f| f.family)
            .collect();
        families.sort_unstable();
        families.dedup();
        families
    }

    /// Which of these rows hold an entity: a cell in a family of `T`'s
    /// fields other than its relation families (a row holding only a
    /// relation's list is no entity). One batched get. Every row of a type
    /// that is nothing but its relation lists counts as existing.
    pub(crate) fn rows_exist(&self, rows: &[Bytes]) -> Result<Vec<bool>> {
        let families = Self::entity_families();
        if families.is_empty() {
            return Ok(vec![true; rows.len()]);
        }
        let gets: Vec<Get> = rows
            .iter()
            .map(|row| families.iter().fold(Get::new(row.clone()), |g, f| g.family(*f)))
            .collect();
        Ok(self
            .store
            .get_many(T::TABLE, &gets)?
            .iter()
            .map(|r| r.as_ref().is_some_and(|r| !r.cells.is_empty()))
            .collect())
    }

    /// [`delete_rows`](Self::delete_rows) up to a timestamp the caller took.
    pub(crate) fn delete_rows_at(&self, row_keys: impl IntoIterator<Item = Bytes>, ts: i64) -> Result<()> {
        let mutations: Vec<RowMutation> = row_keys
            .into_iter()
            .map(|k| RowMutation::new(k).push(Mutation::DeleteRow { up_to: Some(ts) }))
            .collect();
        self.store
            .mutate(T::TABLE, &mutations)
            .map_err(|e| Self::store_error(e, mutations.iter().map(|m| &m.row[..])))?;
        Ok(())
    }

    /// Adds `amount` to a counter field; returns its new value.
    pub fn increment(&self, key: impl KeyTuple, field: &str, amount: i64) -> Result<i64> {
        let info = T::fields()
            .iter()
            .find(|f| f.name == field)
            .ok_or_else(|| self.field_error(field, "is not a field of this table"))?;
        if info.role != FieldRole::Counter {
            return Err(self.field_error(field, "is not a counter (mark it #[hmap(counter)])"));
        }
        let row = self.row_key(key)?;
        let values = self
            .store
            .increment(
                T::TABLE,
                &Increment::new(row.clone()).add(info.family, info.qualifier, amount),
            )
            .map_err(|e| Self::store_error(e, [&row[..]]))?;
        Ok(values.first().copied().unwrap_or_default())
    }

    /// The scans a query needs: one range, or one per salt bucket.
    fn plan(&self, query: &Query<'_>) -> Result<Vec<Scan>> {
        let schema = T::key_schema();
        let query_error = |reason: String| Error::Query {
            table: T::TABLE,
            reason,
        };
        let given = query.prefix.arity() + usize::from(query.range.is_some());
        if given > schema.part_count() {
            return Err(query_error(format!(
                "the query names {given} key parts, the key has {}",
                schema.part_count()
            )));
        }
        // A hash prefix must be computable from the parts given, or the
        // query would scan rows of every prefix.
        let mut parts_before = 0;
        for seg in schema.segments() {
            match seg {
                Segment::Part(_) => parts_before += 1,
                Segment::HashPrefix { of, .. } if given > parts_before && *of >= query.prefix.arity() => {
                    return Err(query_error(format!(
                        "the key's hash prefix is computed from part {of}; give it in the prefix"
                    )));
                }
                _ => {}
            }
        }
        let salted = schema
            .salt()
            .is_some_and(|(_, by)| by.iter().any(|&i| i >= query.prefix.arity()));
        if salted && !matches!(schema.segments().first(), Some(Segment::Salt { .. })) {
            return Err(query_error(
                "fanning out over salt buckets needs the salt first in the key".into(),
            ));
        }
        let buckets: Vec<Option<u16>> = if salted {
            (0..schema.salt().map_or(1, |(b, _)| b)).map(Some).collect()
        } else {
            vec![None]
        };
        let encode = |parts: &dyn KeyTuple, bucket: Option<u16>| -> Result<Vec<u8>> {
            match bucket {
                Some(b) => schema.encode_prefix_in_bucket(parts, b),
                None => schema.encode_prefix(parts),
            }
            .map_err(Self::key_error)
        };
        let mut scans = Vec::with_capacity(buckets.len());
        for bucket in buckets {
            let (mut start, mut stop) = match &query.range {
                None => {
                    let p = encode(&*query.prefix, bucket)?;
                    let stop = prefix_end(&p);
                    (Bytes::from(p), stop)
                }
                Some((from, to)) => {
                    let a = encode(&Chain(&*query.prefix, &**from), bucket)?;
                    let b = encode(&Chain(&*query.prefix, &**to), bucket)?;
                    if range_part_descends(schema, query.prefix.arity()) {
                        (prefix_end(&b), prefix_end(&a))
                    } else {
                        (Bytes::from(a), Bytes::from(b))
                    }
                }
            };
            if let Some(cursor) = &query.after {
                let resume = match bucket {
                    // The cursor's key without its bucket, in this bucket.
                    Some(b) => {
                        let head = schema.encode_prefix_in_bucket(&(), b).map_err(Self::key_error)?;
                        let mut k = head.clone();
                        k.extend_from_slice(cursor.row().get(head.len()..).unwrap_or_default());
                        Bytes::from(k)
                    }
                    None => Bytes::copy_from_slice(cursor.row()),
                };
                if query.reversed {
                    if stop.is_empty() || resume < stop {
                        stop = resume;
                    }
                } else {
                    let mut after = resume.to_vec();
                    after.push(0);
                    if after[..] > start[..] {
                        start = Bytes::from(after);
                    }
                }
            }
            let mut scan = Self::read_families()
                .fold(Scan::range(start, stop), Scan::family)
                .max_versions(T::read_versions())
                .time_range(query.time_range)
                .batch_size(query.batch_size);
            scan.reversed = query.reversed;
            if let Some(limit) = query.limit {
                scan.limit = Some(limit.saturating_add(query.offset));
            }
            scans.push(scan);
        }
        Ok(scans)
    }

    /// Reads the rows a query selects, in key order (reversed if asked),
    /// fetching in batches as the iterator advances. On a salted table a
    /// query that does not give the salt's parts reads every bucket and
    /// merges them in key order.
    pub fn scan<'a>(&'a self, query: Query<'_>) -> Result<Rows<'a, T>> {
        let scans = self.plan(&query)?;
        let salted = scans.len() > 1;
        let skip = if salted {
            T::key_schema()
                .encode_prefix_in_bucket(&(), 0)
                .map_err(Self::key_error)?
                .len()
        } else {
            0
        };
        let scanners = scans
            .iter()
            .map(|s| self.store.scan(T::TABLE, s))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(Rows {
            heads: Vec::new(),
            pending_error: None,
            failed: false,
            scanners,
            reversed: query.reversed,
            skip_salt: skip,
            offset: query.offset,
            remaining: query.limit,
            row: PhantomData,
        })
    }

    /// One page of a query: at most `limit` rows after `cursor`, and the
    /// cursor of the next page if there are more rows.
    pub fn page(&self, query: Query<'_>, limit: usize, cursor: Option<&Cursor>) -> Result<Page<T>> {
        let mut query = query.limit(limit + 1);
        if let Some(c) = cursor {
            query = query.after(c.clone());
        }
        let mut rows = Vec::with_capacity(limit);
        let mut last = None;
        let mut more = false;
        let mut scan = self.scan(query)?;
        while let Some(next) = scan.next_raw() {
            let raw = next?;
            if rows.len() == limit {
                more = true;
                break;
            }
            rows.push(Self::decode(&raw)?);
            last = Some(raw.row);
        }
        Ok(Page {
            rows,
            next: if more { last.map(Cursor) } else { None },
        })
    }
}

/// Whether the part after `prefix_len` parts sorts against its values.
fn range_part_descends(schema: &KeySchema, prefix_len: usize) -> bool {
    schema
        .parts()
        .nth(prefix_len)
        .is_some_and(|p| (p.order == Order::Desc) != (p.transform == Transform::ReverseTs))
}

/// The rows of a query, decoded as they are fetched.
///
/// A scan that meets an error (a bucket's scanner failing, on a salted
/// table) returns it and ends: rows after it would be a partial merge.
pub struct Rows<'a, T> {
    scanners: Vec<RowScanner<'a>>,
    /// The next row of each bucket's scanner, when merging buckets.
    heads: Vec<Option<RowResult>>,
    /// An error met while refilling a head, returned on the next call.
    pending_error: Option<Error>,
    /// An error was returned: the scan is over.
    failed: bool,
    reversed: bool,
    /// Bytes of salt at the start of each key, ignored when merging buckets.
    skip_salt: usize,
    offset: usize,
    remaining: Option<usize>,
    row: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for Rows<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rows")
            .field("scanners", &self.scanners.len())
            .field("reversed", &self.reversed)
            .field("remaining", &self.remaining)
            .finish()
    }
}

impl<T: HTable> Rows<'_, T> {
    /// The next stored row, not yet decoded.
    fn next_raw(&mut self) -> Option<Result<RowResult>> {
        loop {
            if self.remaining == Some(0) {
                return None;
            }
            let row = self.next_merged()?;
            if self.offset > 0 {
                self.offset -= 1;
                if row.is_ok() {
                    continue;
                }
            }
            if let Some(r) = &mut self.remaining {
                *r -= 1;
            }
            return Some(row);
        }
    }

    /// The next row across the bucket scanners, in key order ignoring the
    /// salt; after an error, none.
    fn next_merged(&mut self) -> Option<Result<RowResult>> {
        if self.failed {
            return None;
        }
        let next = self.merge_step();
        if matches!(next, Some(Err(_))) {
            // Every bucket is part of the answer: without the failed one,
            // the rest would be a partial merge. Drop the scanners (closing
            // them on a server) and end.
            self.failed = true;
            self.scanners.clear();
            self.heads.clear();
        }
        next
    }

    fn merge_step(&mut self) -> Option<Result<RowResult>> {
        if self.scanners.len() == 1 {
            return self.scanners[0].next().map(|r| r.map_err(Error::from));
        }
        if let Some(e) = self.pending_error.take() {
            return Some(Err(e));
        }
        if self.heads.is_empty() {
            for scanner in &mut self.scanners {
                match scanner.next() {
                    Some(Err(e)) => return Some(Err(e.into())),
                    Some(Ok(row)) => self.heads.push(Some(row)),
                    None => self.heads.push(None),
                }
            }
        }
        let skip = self.skip_salt;
        let candidates = self
            .heads
            .iter()
            .enumerate()
            .filter_map(|(i, h)| h.as_ref().map(|r| (i, r.row.get(skip..).unwrap_or_default())));
        let best = if self.reversed {
            candidates.max_by(|a, b| a.1.cmp(b.1))
        } else {
            candidates.min_by(|a, b| a.1.cmp(b.1))
        }?
        .0;
        let row = self.heads[best].take()?;
        match self.scanners[best].next() {
            Some(Err(e)) => self.pending_error = Some(e.into()),
            head => self.heads[best] = head.and_then(std::result::Result::ok),
        }
        Some(Ok(row))
    }
}

impl<T: HTable> Iterator for Rows<'_, T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        self.next_raw()
            .map(|r| r.and_then(|row| Table::<T, &dyn Store>::decode(&row)))
    }
}
