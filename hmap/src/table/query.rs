//! What to read from a table ([`Query`]), where a page ends ([`Cursor`],
//! [`Page`]) and which scans a query becomes.

use std::fmt;

use bytes::Bytes;

use std::marker::PhantomData;

use super::HTable;
use super::filter::{Where, WhereError};
use crate::error::{Error, Result};
use crate::key::{KeyError, KeyPattern, KeySchema, KeyTuple, Order, Segment, Transform};
use crate::store::filter::FuzzyPattern;
use crate::store::{Filter, Scan, TimeRange, prefix_end};

/// A position in a scan: the key of the last row a page returned. Opaque;
/// its text form (hex) can travel in a URL and be parsed back.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cursor(pub(crate) Bytes);

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
#[non_exhaustive]
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
///
/// A query that [filters](Query::filter) on a table's fields is a query of
/// that table, `Query<'k, T>`: passing it to another table's `scan` does
/// not compile.
pub struct Query<'k, T = ()> {
    pub(crate) prefix: Box<dyn KeyTuple + 'k>,
    pub(crate) range: Option<(Box<dyn KeyTuple + 'k>, Box<dyn KeyTuple + 'k>)>,
    pub(crate) time_range: TimeRange,
    pub(crate) reversed: bool,
    pub(crate) offset: usize,
    pub(crate) limit: Option<usize>,
    pub(crate) after: Option<Cursor>,
    pub(crate) batch_size: Option<usize>,
    pub(crate) batch_bytes: Option<usize>,
    /// The server-side filter, or why it could not be built.
    pub(crate) filter: Option<std::result::Result<Filter, WhereError>>,
    /// Key patterns a row's key must match one of (none: every key).
    pub(crate) patterns: Vec<Box<dyn KeyPattern + 'k>>,
    pub(crate) of: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for Query<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Query")
            .field("prefix_parts", &self.prefix.arity())
            .field("range", &self.range.is_some())
            .field("time_range", &self.time_range)
            .field("reversed", &self.reversed)
            .field("offset", &self.offset)
            .field("limit", &self.limit)
            .field("after", &self.after)
            .field("filter", &self.filter)
            .field("patterns", &self.patterns.len())
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
            batch_size: None,
            batch_bytes: None,
            filter: None,
            patterns: Vec::new(),
            of: PhantomData,
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

    /// The rows whose key matches a pattern of its parts, each a value or
    /// [`Any`](crate::key::Any), checked on the server (HBase's
    /// `FuzzyRowFilter`): `Query::matching((Any, day))` finds every
    /// customer's rows of `day` in a key of `(customer, day, ...)`, salted
    /// or not. The parts of any value before a given one must have a fixed
    /// width (numbers, timestamps, UUIDs, `[u8; N]`; a string only in a
    /// text key with a fixed width), else the scan fails with
    /// [`KeyError::Pattern`](crate::key::KeyError::Pattern). HBase seeks
    /// from match to match, so such a scan reads far fewer rows than the
    /// table holds; BigtableStore and Thrift1Store refuse it
    /// (`StoreError::Unsupported`).
    ///
    /// ```
    /// use hmap::key::Any;
    /// use hmap::store::MemoryStore;
    /// use hmap::{HTable, Query, Table};
    ///
    /// #[derive(HTable, Debug)]
    /// #[hmap(table = "visit", family(name = "v"), salt(buckets = 4, by = [shop]))]
    /// struct Visit {
    ///     #[hmap(key)]
    ///     shop: u32,
    ///     #[hmap(key)]
    ///     day: u32,
    ///     #[hmap(key)]
    ///     seq: u32,
    ///     #[hmap(family = "v")]
    ///     who: String,
    /// }
    ///
    /// # #[tokio::main] async fn main() -> hmap::Result<()> {
    /// let visits = Table::<Visit, _>::new(MemoryStore::new());
    /// visits.create().await?;
    /// for (shop, day, seq) in [(1, 20261127, 1), (1, 20261128, 1), (2, 20261128, 1), (3, 20261128, 2)] {
    ///     visits.put(&Visit { shop, day, seq, who: format!("v{shop}{seq}") }).await?;
    /// }
    /// let today = visits.scan(Query::matching((Any, 20261128u32))).await?.into_vec().await?;
    /// let mut shops: Vec<u32> = today.iter().map(|v| v.shop).collect();
    /// shops.sort();
    /// assert_eq!(shops, [1, 2, 3]);
    /// # Ok(()) }
    /// ```
    pub fn matching(pattern: impl KeyPattern + 'k) -> Self {
        Query {
            patterns: vec![Box::new(pattern)],
            ..Query::all()
        }
    }

    /// Only the rows that pass a typed filter on `T`'s fields, applied on
    /// the server (see [`Where`]): the query becomes one of `T`'s table.
    pub fn filter<T: HTable>(self, filter: Where<T>) -> Query<'k, T> {
        Query {
            prefix: self.prefix,
            range: self.range,
            time_range: self.time_range,
            reversed: self.reversed,
            offset: self.offset,
            limit: self.limit,
            after: self.after,
            batch_size: self.batch_size,
            batch_bytes: self.batch_bytes,
            filter: Some(filter.into_filter()),
            patterns: self.patterns,
            of: PhantomData,
        }
    }
}

impl<'k, T: HTable> Query<'k, T> {
    /// Also only the rows that pass `filter` (both filters apply).
    pub fn and_filter(mut self, filter: Where<T>) -> Self {
        let both = match self.filter.take() {
            None => filter.into_filter(),
            Some(Err(e)) => Err(e),
            Some(Ok(first)) => filter.into_filter().map(|second| Filter::all([first, second])),
        };
        self.filter = Some(both);
        self
    }
}

impl<'k, T> Query<'k, T> {
    /// Also the rows whose key matches this pattern (see
    /// [`Query::matching`]): a row is kept when its key matches any of the
    /// query's patterns.
    pub fn or_matching(mut self, pattern: impl KeyPattern + 'k) -> Self {
        self.patterns.push(Box::new(pattern));
        self
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

    /// Rows fetched per round trip. Without it, each round trip fetches a
    /// budget of bytes (see [`batch_bytes`](Self::batch_bytes)), as HBase's
    /// own client does, which suits most scans: set it for a scan that stops
    /// early (a page).
    pub fn batch_size(mut self, n: usize) -> Self {
        self.batch_size = Some(n.max(1));
        self
    }

    /// Without a [`batch_size`](Self::batch_size): about how many bytes of
    /// rows each round trip fetches (by default 2 MiB from a region server,
    /// 128 KiB from a Thrift gateway; see [`Scan::batch_bytes`]).
    pub fn batch_bytes(mut self, bytes: usize) -> Self {
        self.batch_bytes = Some(bytes.max(1));
        self
    }
}

impl<Q> Query<'_, Q> {
    /// The scans a query needs: one range, or one per salt bucket.
    pub(crate) fn plan<T: HTable>(&self) -> Result<Vec<Scan>> {
        let filter = match &self.filter {
            None => None,
            Some(Ok(filter)) => Some(filter.clone()),
            Some(Err(e)) => return Err(e.error(T::TABLE)),
        };
        let schema = T::key_schema();
        let filter = match self.key_filter(schema).map_err(|source| Error::Key {
            table: T::TABLE,
            cause: source,
        })? {
            None => filter,
            Some(keys) => Some(match filter {
                None => keys,
                // The keys first: a row whose key does not match is left
                // before its cells are looked at.
                Some(filter) => Filter::all([keys, filter]),
            }),
        };
        let query_error = |reason: String| Error::Query {
            table: T::TABLE,
            reason,
        };
        let given = self.prefix.arity() + usize::from(self.range.is_some());
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
                Segment::HashPrefix { of, .. } if given > parts_before && *of >= self.prefix.arity() => {
                    return Err(query_error(format!(
                        "the key's hash prefix is computed from part {of}; give it in the prefix"
                    )));
                }
                _ => {}
            }
        }
        let salted = schema
            .salt()
            .is_some_and(|(_, by)| by.iter().any(|&i| i >= self.prefix.arity()));
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
            .map_err(|source| Error::Key {
                table: T::TABLE,
                cause: source,
            })
        };
        let mut scans = Vec::with_capacity(buckets.len());
        for bucket in buckets {
            let (mut start, mut stop) = match &self.range {
                None => {
                    let p = encode(&*self.prefix, bucket)?;
                    let stop = prefix_end(&p);
                    (Bytes::from(p), stop)
                }
                Some((from, to)) => {
                    let a = encode(&Chain(&*self.prefix, &**from), bucket)?;
                    let b = encode(&Chain(&*self.prefix, &**to), bucket)?;
                    if range_part_descends(schema, self.prefix.arity()) {
                        (prefix_end(&b), prefix_end(&a))
                    } else {
                        (Bytes::from(a), Bytes::from(b))
                    }
                }
            };
            if let Some(cursor) = &self.after {
                let resume = match bucket {
                    // The cursor's key without its bucket, in this bucket.
                    Some(b) => {
                        let head = schema.encode_prefix_in_bucket(&(), b).map_err(|source| Error::Key {
                            table: T::TABLE,
                            cause: source,
                        })?;
                        let mut k = head.clone();
                        k.extend_from_slice(cursor.row().get(head.len()..).unwrap_or_default());
                        Bytes::from(k)
                    }
                    None => Bytes::copy_from_slice(cursor.row()),
                };
                if self.reversed {
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
            let mut scan = super::read_families::<T>()
                .fold(Scan::range(start, stop), Scan::family)
                .max_versions(T::read_versions())
                .time_range(self.time_range);
            scan.batch_size = self.batch_size;
            scan.batch_bytes = self.batch_bytes;
            scan.reversed = self.reversed;
            if let Some(limit) = self.limit {
                scan.limit = Some(limit.saturating_add(self.offset));
            }
            scan.filter = filter.clone();
            scans.push(scan);
        }
        Ok(scans)
    }
}

impl<Q> Query<'_, Q> {
    /// The query's key patterns as a `FuzzyRowFilter`: `None` without
    /// patterns, or when one of them matches every key.
    fn key_filter(&self, schema: &KeySchema) -> std::result::Result<Option<Filter>, KeyError> {
        let mut fuzzy = Vec::with_capacity(self.patterns.len());
        for pattern in &self.patterns {
            match schema.fuzzy(&**pattern)? {
                Some(pieces) => fuzzy.push(FuzzyPattern::from_parts(
                    pieces.iter().map(|(bytes, fixed)| (&bytes[..], *fixed)),
                )),
                None => return Ok(None),
            }
        }
        Ok((!fuzzy.is_empty()).then(|| Filter::fuzzy_row(fuzzy)))
    }
}

/// Whether the part after `prefix_len` parts sorts against its values.
fn range_part_descends(schema: &KeySchema, prefix_len: usize) -> bool {
    schema
        .parts()
        .nth(prefix_len)
        .is_some_and(|p| (p.order == Order::Desc) != (p.transform == Transform::ReverseTs))
}
