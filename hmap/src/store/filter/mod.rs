//! Server-side filters: HBase's `org.apache.hadoop.hbase.filter` as data.
//!
//! A [`Filter`] rides on a [`Get`](super::Get) or a [`Scan`](super::Scan)
//! (`.filter(...)`) and is applied where the data is: NativeStore sends
//! HBase's `Filter` protobuf, ThriftStore and Thrift1Store the filter
//! language's string (`ParseFilter`), MemoryStore evaluates it as a region
//! server does, and BigtableStore maps it to Bigtable's `RowFilter` where
//! Google's HBase adapter can, refusing the rest with
//! [`StoreError::Unsupported`](super::StoreError::Unsupported).
//!
//! Every comparison reads **stored op given**: `Filter::value(CompareOp::Less,
//! Comparator::binary("m"))` keeps cells whose value sorts below `"m"`, as
//! HBase's `ValueFilter(LESS, ...)` does. Bytes compare as unsigned bytes,
//! lexicographically.
//!
//! ```
//! use hmap::store::filter::{CompareOp, Comparator, Filter};
//! use hmap::store::Scan;
//!
//! // Rows whose `o:status` is "paid", and only their `o` family's columns
//! // starting with "amount".
//! let paid = Filter::single_column_value("o", "status", CompareOp::Equal, Comparator::binary("paid"))
//!     .filter_if_missing(true);
//! let scan = Scan::prefix("cust42|").filter(Filter::all([paid.into(), Filter::column_prefix("amount")]));
//! assert!(scan.filter.is_some());
//! ```

use bytes::Bytes;

pub(crate) mod eval;

/// How a stored value is compared to a given one (HBase's
/// `CompareOperator`): the stored value is on the left, `stored < given`
/// for [`Less`](CompareOp::Less).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CompareOp {
    /// `stored < given` (`LESS`).
    Less,
    /// `stored <= given` (`LESS_OR_EQUAL`).
    LessOrEqual,
    /// `stored == given` (`EQUAL`).
    Equal,
    /// `stored != given` (`NOT_EQUAL`).
    NotEqual,
    /// `stored >= given` (`GREATER_OR_EQUAL`).
    GreaterOrEqual,
    /// `stored > given` (`GREATER`).
    Greater,
    /// Never true (`NO_OP`): a filter with it drops everything it compares.
    NoOp,
}

impl CompareOp {
    /// HBase's name of the operator (`CompareOperator.name()`), as its
    /// protobufs and its filter language's long form spell it.
    pub const fn hbase_name(self) -> &'static str {
        match self {
            CompareOp::Less => "LESS",
            CompareOp::LessOrEqual => "LESS_OR_EQUAL",
            CompareOp::Equal => "EQUAL",
            CompareOp::NotEqual => "NOT_EQUAL",
            CompareOp::GreaterOrEqual => "GREATER_OR_EQUAL",
            CompareOp::Greater => "GREATER",
            CompareOp::NoOp => "NO_OP",
        }
    }

    /// The operator with its sides swapped: `a op b` is `b op.mirrored() a`.
    ///
    /// HBase's `checkAndMutate` reads its operator as `given op stored`;
    /// hmap's reads `stored op given` everywhere, so a backend sends the
    /// mirror of a condition's operator.
    pub const fn mirrored(self) -> CompareOp {
        match self {
            CompareOp::Less => CompareOp::Greater,
            CompareOp::LessOrEqual => CompareOp::GreaterOrEqual,
            CompareOp::GreaterOrEqual => CompareOp::LessOrEqual,
            CompareOp::Greater => CompareOp::Less,
            other => other,
        }
    }

    /// Whether `stored op given` holds, given `stored.cmp(given)`.
    pub fn holds(self, ordering: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            CompareOp::Less => ordering == Less,
            CompareOp::LessOrEqual => ordering != Greater,
            CompareOp::Equal => ordering == Equal,
            CompareOp::NotEqual => ordering != Equal,
            CompareOp::GreaterOrEqual => ordering != Less,
            CompareOp::Greater => ordering == Greater,
            CompareOp::NoOp => false,
        }
    }
}

/// What a stored value (or row, family or qualifier) is compared with
/// (HBase's `ByteArrayComparable` subclasses).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Comparator {
    /// The bytes, compared as unsigned bytes (`BinaryComparator`,
    /// `binary:` in the filter language).
    Binary(Bytes),
    /// The bytes, compared with as many leading bytes of the stored value
    /// (`BinaryPrefixComparator`, `binaryprefix:`).
    BinaryPrefix(Bytes),
    /// A Java regular expression, found anywhere in the stored bytes read as
    /// UTF-8 (malformed bytes as U+FFFD), with `DOTALL`
    /// (`RegexStringComparator` with its defaults, `regexstring:`).
    /// Only [`CompareOp::Equal`] and [`CompareOp::NotEqual`] make sense with it.
    Regex(String),
    /// A substring, case-insensitively, of the stored bytes read as UTF-8
    /// (`SubstringComparator`, `substring:`). Only `Equal` and `NotEqual`.
    Substring(String),
    /// HBase's `NullComparator`: a stored value is never null, not even an
    /// empty one, so [`CompareOp::Equal`] passes no cell and
    /// [`CompareOp::NotEqual`] every one (`NullComparator.compareTo` is 1
    /// for any value). Not in the filter language.
    Null,
    /// A bitwise test against a value of the same length (`BitComparator`,
    /// `bit:`): equal when any byte of `stored op value` is not zero
    /// (`XOR`: when the values differ).
    Bit {
        /// The mask.
        value: Bytes,
        /// The operation.
        op: BitOp,
    },
}

/// The bitwise operation of [`Comparator::Bit`] (`BitComparator.BitwiseOp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BitOp {
    /// `AND`.
    And,
    /// `OR`.
    Or,
    /// `XOR`.
    Xor,
}

impl Comparator {
    /// [`Comparator::Binary`].
    pub fn binary(value: impl Into<Bytes>) -> Self {
        Comparator::Binary(value.into())
    }

    /// [`Comparator::BinaryPrefix`].
    pub fn binary_prefix(value: impl Into<Bytes>) -> Self {
        Comparator::BinaryPrefix(value.into())
    }

    /// [`Comparator::Regex`].
    pub fn regex(pattern: impl Into<String>) -> Self {
        Comparator::Regex(pattern.into())
    }

    /// [`Comparator::Substring`].
    pub fn substring(value: impl Into<String>) -> Self {
        Comparator::Substring(value.into())
    }

    /// [`Comparator::Bit`].
    pub fn bit(value: impl Into<Bytes>, op: BitOp) -> Self {
        Comparator::Bit {
            value: value.into(),
            op,
        }
    }
}

/// How a [`Filter::List`] combines its filters (`FilterList.Operator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ListOp {
    /// Every filter must pass (`MUST_PASS_ALL`, `AND`).
    All,
    /// At least one filter must pass (`MUST_PASS_ONE`, `OR`).
    One,
}

/// A row range of [`Filter::MultiRowRange`] (`MultiRowRangeFilter.RowRange`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct RowRange {
    /// The lowest row; empty for the table's start.
    pub start: Bytes,
    /// Whether `start` itself is in the range.
    pub start_inclusive: bool,
    /// The highest row; empty for the table's end.
    pub stop: Bytes,
    /// Whether `stop` itself is in the range.
    pub stop_inclusive: bool,
}

impl RowRange {
    /// Whether HBase takes the range (`RowRange.isValid`): an open end, or
    /// a start before the stop (or equal to an inclusive stop).
    pub fn is_valid(&self) -> bool {
        self.start.is_empty()
            || self.stop.is_empty()
            || self.start < self.stop
            || (self.start == self.stop && self.stop_inclusive)
    }

    /// `[start, stop)`, as [`Scan::range`](super::Scan::range) reads a range.
    pub fn new(start: impl Into<Bytes>, stop: impl Into<Bytes>) -> Self {
        RowRange {
            start: start.into(),
            start_inclusive: true,
            stop: stop.into(),
            stop_inclusive: false,
        }
    }

    /// Any inclusiveness at either end.
    pub fn with_bounds(
        start: impl Into<Bytes>,
        start_inclusive: bool,
        stop: impl Into<Bytes>,
        stop_inclusive: bool,
    ) -> Self {
        RowRange {
            start: start.into(),
            start_inclusive,
            stop: stop.into(),
            stop_inclusive,
        }
    }
}

/// A row pattern of [`Filter::FuzzyRow`]: the row's bytes where `mask` is 0
/// must equal `row`'s, where it is 1 are any (`FuzzyRowFilter`'s
/// `Pair<row, mask>`). Rows longer than the pattern match on its length.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct FuzzyPattern {
    /// The fixed bytes (any value where the mask is 1).
    pub row: Bytes,
    /// 0 for a fixed byte, 1 for any; as long as `row`.
    pub mask: Bytes,
}

impl FuzzyPattern {
    /// A pattern; `row` and `mask` must be as long as each other (checked
    /// when the filter is used: [`Filter::check`]).
    pub fn new(row: impl Into<Bytes>, mask: impl Into<Bytes>) -> Self {
        FuzzyPattern {
            row: row.into(),
            mask: mask.into(),
        }
    }

    /// The pattern of consecutive pieces of a key, each `(bytes, fixed)`:
    /// a fixed piece must match, the bytes of one that is not are any (only
    /// their length counts).
    ///
    /// ```
    /// use hmap::store::filter::FuzzyPattern;
    /// // Any 2-byte salt, then "2026-11-28|".
    /// let p = FuzzyPattern::from_parts([(&b"??"[..], false), (&b"2026-11-28|"[..], true)]);
    /// assert_eq!(&p.mask[..3], &[1, 1, 0]);
    /// ```
    pub fn from_parts<'a>(parts: impl IntoIterator<Item = (&'a [u8], bool)>) -> Self {
        let mut row = Vec::new();
        let mut mask = Vec::new();
        for (bytes, fixed) in parts {
            if fixed {
                row.extend_from_slice(bytes);
            } else {
                row.extend(std::iter::repeat_n(0u8, bytes.len()));
            }
            mask.extend(std::iter::repeat_n(u8::from(!fixed), bytes.len()));
        }
        FuzzyPattern::new(row, mask)
    }

    /// `len` bytes of any value followed by `fixed`, as a salted or hashed
    /// key's prefix is matched.
    pub fn any_then(len: usize, fixed: &[u8]) -> Self {
        let mut row = vec![0u8; len];
        row.extend_from_slice(fixed);
        let mut mask = vec![1u8; len];
        mask.extend(std::iter::repeat_n(0u8, fixed.len()));
        FuzzyPattern::new(row, mask)
    }
}

/// What [`Filter::SingleColumnValue`] and
/// [`Filter::SingleColumnValueExclude`] test: one column's value
/// (`SingleColumnValueFilter`).
///
/// A row passes when the column's newest value (every version's, with
/// `latest_version_only(false)`) satisfies `stored op given`; a row without
/// the column passes unless `filter_if_missing`. Built with
/// [`Filter::single_column_value`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct SingleColumnValue {
    /// The column's family.
    pub family: Bytes,
    /// The column's qualifier.
    pub qualifier: Bytes,
    /// The comparison.
    pub op: CompareOp,
    /// The value compared with.
    pub comparator: Comparator,
    /// Drop rows without the column (default: keep them).
    pub filter_if_missing: bool,
    /// Test only the newest version (default `true`); `false` passes a row
    /// when any version read satisfies the comparison.
    pub latest_version_only: bool,
}

impl SingleColumnValue {
    /// Drop rows that do not have the column.
    pub fn filter_if_missing(mut self, yes: bool) -> Self {
        self.filter_if_missing = yes;
        self
    }

    /// Test only the newest version (`true`, the default) or every version.
    pub fn latest_version_only(mut self, yes: bool) -> Self {
        self.latest_version_only = yes;
        self
    }

    /// The `SingleColumnValueFilter` testing this.
    pub fn keep(self) -> Filter {
        Filter::SingleColumnValue(self)
    }

    /// The `SingleColumnValueExcludeFilter` testing this: the tested
    /// column is left out of the rows returned.
    pub fn exclude(self) -> Filter {
        Filter::SingleColumnValueExclude(self)
    }
}

impl From<SingleColumnValue> for Filter {
    fn from(test: SingleColumnValue) -> Filter {
        Filter::SingleColumnValue(test)
    }
}

/// A column range of [`Filter::ColumnRange`] (`ColumnRangeFilter`):
/// qualifiers between `min` and `max`, each bound optional.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ColumnRange {
    /// The lowest qualifier; `None` for no lower bound.
    pub min: Option<Bytes>,
    /// Whether `min` itself is kept.
    pub min_inclusive: bool,
    /// The highest qualifier; `None` for no upper bound.
    pub max: Option<Bytes>,
    /// Whether `max` itself is kept.
    pub max_inclusive: bool,
}

/// Where [`Filter::ColumnPagination`] starts.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ColumnOffset {
    /// After this many columns.
    Count(u32),
    /// At this qualifier (or the first after it).
    Qualifier(Bytes),
}

/// A dependent column of [`Filter::DependentColumn`] (`DependentColumnFilter`):
/// a row keeps only the cells whose timestamp is one of the reference
/// column's.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct DependentColumn {
    /// The reference column's family.
    pub family: Bytes,
    /// The reference column's qualifier.
    pub qualifier: Bytes,
    /// Leave the reference column out of the rows returned.
    pub drop_reference: bool,
    /// Also require the reference column's value to satisfy this.
    pub value: Option<(CompareOp, Comparator)>,
}

/// A server-side filter: one of HBase's filters, as data. Build one with
/// the functions below; see the [module](self) for how backends apply it.
///
/// The names are HBase's class names without `Filter`; [`Filter::hbase_name`]
/// gives the class.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Filter {
    /// Rows whose key starts with the bytes (`PrefixFilter`).
    Prefix(Bytes),
    /// Rows whose key satisfies the comparison (`RowFilter`).
    Row(CompareOp, Comparator),
    /// Cells whose family satisfies the comparison (`FamilyFilter`).
    Family(CompareOp, Comparator),
    /// Cells whose qualifier satisfies the comparison (`QualifierFilter`).
    Qualifier(CompareOp, Comparator),
    /// Cells whose value satisfies the comparison (`ValueFilter`).
    Value(CompareOp, Comparator),
    /// Rows whose column satisfies the comparison
    /// (`SingleColumnValueFilter`).
    SingleColumnValue(SingleColumnValue),
    /// As [`SingleColumnValue`](Filter::SingleColumnValue), without the
    /// tested column in the rows returned (`SingleColumnValueExcludeFilter`).
    SingleColumnValueExclude(SingleColumnValue),
    /// Cells whose qualifier starts with the bytes (`ColumnPrefixFilter`).
    ColumnPrefix(Bytes),
    /// Cells whose qualifier starts with any of the prefixes
    /// (`MultipleColumnPrefixFilter`).
    MultipleColumnPrefix(Vec<Bytes>),
    /// Cells whose qualifier is in a range (`ColumnRangeFilter`).
    ColumnRange(ColumnRange),
    /// The first `n` columns of a row (`ColumnCountGetFilter`, meant for a
    /// get).
    ColumnCountGet(u32),
    /// `limit` columns per row from an offset (`ColumnPaginationFilter`).
    ColumnPagination {
        /// At most this many columns per row.
        limit: u32,
        /// Where to start.
        offset: ColumnOffset,
    },
    /// Cells without their values (`KeyOnlyFilter`); with `value_length`,
    /// each value replaced by its length as a 4-byte big-endian integer.
    KeyOnly {
        /// Replace each value by its length instead of nothing.
        value_length: bool,
    },
    /// Only the first cell of each row (`FirstKeyOnlyFilter`).
    FirstKeyOnly,
    /// Rows up to and including this one, then the scan ends
    /// (`InclusiveStopFilter`).
    InclusiveStop(Bytes),
    /// At most this many rows per region server's share of the scan
    /// (`PageFilter`: a scan across regions may return more; combine with
    /// [`Scan::limit`](super::Scan::limit)).
    Page(u64),
    /// Cells with one of these timestamps (`TimestampsFilter`).
    Timestamps {
        /// The timestamps.
        timestamps: Vec<i64>,
        /// Let the server seek to the next timestamp (a speed setting,
        /// same results; `canHint`).
        can_hint: bool,
    },
    /// Cells whose timestamp is one of a reference column's
    /// (`DependentColumnFilter`).
    DependentColumn(DependentColumn),
    /// Rows none of whose cells the inner filter drops (`SkipFilter`).
    Skip(Box<Filter>),
    /// Rows until the inner filter first drops something, then the scan ends
    /// (`WhileMatchFilter`).
    WhileMatch(Box<Filter>),
    /// Several filters, all or any of which must pass (`FilterList`).
    List(ListOp, Vec<Filter>),
    /// Rows in any of these ranges (`MultiRowRangeFilter`; not in the
    /// filter language, sent as a protobuf through Thrift2).
    MultiRowRange(Vec<RowRange>),
    /// Rows matching any of these patterns (`FuzzyRowFilter`; not in the
    /// filter language, sent as a protobuf through Thrift2).
    FuzzyRow(Vec<FuzzyPattern>),
}

impl Filter {
    /// [`Filter::Prefix`].
    pub fn prefix(prefix: impl Into<Bytes>) -> Self {
        Filter::Prefix(prefix.into())
    }

    /// [`Filter::Row`].
    pub fn row(op: CompareOp, comparator: Comparator) -> Self {
        Filter::Row(op, comparator)
    }

    /// [`Filter::Family`].
    pub fn family(op: CompareOp, comparator: Comparator) -> Self {
        Filter::Family(op, comparator)
    }

    /// [`Filter::Qualifier`].
    pub fn qualifier(op: CompareOp, comparator: Comparator) -> Self {
        Filter::Qualifier(op, comparator)
    }

    /// [`Filter::Value`].
    pub fn value(op: CompareOp, comparator: Comparator) -> Self {
        Filter::Value(op, comparator)
    }

    /// A test of one column's value, for [`Filter::SingleColumnValue`] (or,
    /// with [`exclude`](SingleColumnValue::exclude),
    /// [`Filter::SingleColumnValueExclude`]). Rows without the column pass
    /// unless [`filter_if_missing`](SingleColumnValue::filter_if_missing).
    pub fn single_column_value(
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        op: CompareOp,
        comparator: Comparator,
    ) -> SingleColumnValue {
        SingleColumnValue {
            family: family.into(),
            qualifier: qualifier.into(),
            op,
            comparator,
            filter_if_missing: false,
            latest_version_only: true,
        }
    }

    /// [`Filter::ColumnPrefix`].
    pub fn column_prefix(prefix: impl Into<Bytes>) -> Self {
        Filter::ColumnPrefix(prefix.into())
    }

    /// [`Filter::MultipleColumnPrefix`].
    pub fn multiple_column_prefix<B: Into<Bytes>>(prefixes: impl IntoIterator<Item = B>) -> Self {
        Filter::MultipleColumnPrefix(prefixes.into_iter().map(Into::into).collect())
    }

    /// [`Filter::ColumnRange`]: qualifiers from `min` to `max`, `None` for
    /// an open end.
    pub fn column_range(min: Option<Bytes>, min_inclusive: bool, max: Option<Bytes>, max_inclusive: bool) -> Self {
        Filter::ColumnRange(ColumnRange {
            min,
            min_inclusive,
            max,
            max_inclusive,
        })
    }

    /// [`Filter::ColumnCountGet`].
    pub fn column_count_get(n: u32) -> Self {
        Filter::ColumnCountGet(n)
    }

    /// [`Filter::ColumnPagination`] from a count of columns.
    pub fn column_pagination(limit: u32, offset: u32) -> Self {
        Filter::ColumnPagination {
            limit,
            offset: ColumnOffset::Count(offset),
        }
    }

    /// [`Filter::ColumnPagination`] from a qualifier.
    pub fn column_pagination_from(limit: u32, qualifier: impl Into<Bytes>) -> Self {
        Filter::ColumnPagination {
            limit,
            offset: ColumnOffset::Qualifier(qualifier.into()),
        }
    }

    /// [`Filter::KeyOnly`] without the values' lengths.
    pub fn key_only() -> Self {
        Filter::KeyOnly { value_length: false }
    }

    /// [`Filter::FirstKeyOnly`].
    pub fn first_key_only() -> Self {
        Filter::FirstKeyOnly
    }

    /// [`Filter::InclusiveStop`].
    pub fn inclusive_stop(row: impl Into<Bytes>) -> Self {
        Filter::InclusiveStop(row.into())
    }

    /// [`Filter::Page`].
    pub fn page(rows: u64) -> Self {
        Filter::Page(rows)
    }

    /// [`Filter::Timestamps`].
    pub fn timestamps(timestamps: impl IntoIterator<Item = i64>) -> Self {
        Filter::Timestamps {
            timestamps: timestamps.into_iter().collect(),
            can_hint: true,
        }
    }

    /// [`Filter::DependentColumn`] with no test of the reference's value.
    pub fn dependent_column(family: impl Into<Bytes>, qualifier: impl Into<Bytes>, drop_reference: bool) -> Self {
        Filter::DependentColumn(DependentColumn {
            family: family.into(),
            qualifier: qualifier.into(),
            drop_reference,
            value: None,
        })
    }

    /// [`Filter::Skip`].
    pub fn skip(inner: Filter) -> Self {
        Filter::Skip(Box::new(inner))
    }

    /// [`Filter::WhileMatch`].
    pub fn while_match(inner: Filter) -> Self {
        Filter::WhileMatch(Box::new(inner))
    }

    /// [`Filter::List`] of [`ListOp::All`].
    pub fn all(filters: impl IntoIterator<Item = Filter>) -> Self {
        Filter::List(ListOp::All, filters.into_iter().collect())
    }

    /// [`Filter::List`] of [`ListOp::One`].
    pub fn any(filters: impl IntoIterator<Item = Filter>) -> Self {
        Filter::List(ListOp::One, filters.into_iter().collect())
    }

    /// [`Filter::MultiRowRange`].
    pub fn multi_row_range(ranges: impl IntoIterator<Item = RowRange>) -> Self {
        Filter::MultiRowRange(ranges.into_iter().collect())
    }

    /// [`Filter::FuzzyRow`].
    pub fn fuzzy_row(patterns: impl IntoIterator<Item = FuzzyPattern>) -> Self {
        Filter::FuzzyRow(patterns.into_iter().collect())
    }

    /// HBase's class of the filter (`"SingleColumnValueFilter"`, ...).
    pub const fn hbase_name(&self) -> &'static str {
        match self {
            Filter::Prefix(_) => "PrefixFilter",
            Filter::Row(..) => "RowFilter",
            Filter::Family(..) => "FamilyFilter",
            Filter::Qualifier(..) => "QualifierFilter",
            Filter::Value(..) => "ValueFilter",
            Filter::SingleColumnValue(_) => "SingleColumnValueFilter",
            Filter::SingleColumnValueExclude(_) => "SingleColumnValueExcludeFilter",
            Filter::ColumnPrefix(_) => "ColumnPrefixFilter",
            Filter::MultipleColumnPrefix(_) => "MultipleColumnPrefixFilter",
            Filter::ColumnRange(_) => "ColumnRangeFilter",
            Filter::ColumnCountGet(_) => "ColumnCountGetFilter",
            Filter::ColumnPagination { .. } => "ColumnPaginationFilter",
            Filter::KeyOnly { .. } => "KeyOnlyFilter",
            Filter::FirstKeyOnly => "FirstKeyOnlyFilter",
            Filter::InclusiveStop(_) => "InclusiveStopFilter",
            Filter::Page(_) => "PageFilter",
            Filter::Timestamps { .. } => "TimestampsFilter",
            Filter::DependentColumn(_) => "DependentColumnFilter",
            Filter::Skip(_) => "SkipFilter",
            Filter::WhileMatch(_) => "WhileMatchFilter",
            Filter::List(..) => "FilterList",
            Filter::MultiRowRange(_) => "MultiRowRangeFilter",
            Filter::FuzzyRow(_) => "FuzzyRowFilter",
        }
    }

    /// Checks what HBase would refuse when it builds the filter, so that
    /// every backend refuses it alike, before anything is sent: a fuzzy
    /// pattern whose mask is not as long as its row or holds other bytes
    /// than 0 and 1, a regular expression that does not compile, a bit
    /// mask that is empty, a list nested deeper than [`MAX_DEPTH`], more
    /// than `i32::MAX` of a count HBase keeps in an `int`.
    ///
    /// Returns the reason, for [`StoreError::InvalidRequest`](super::StoreError::InvalidRequest).
    pub fn check(&self) -> Result<(), String> {
        self.check_at(0)
    }

    fn check_at(&self, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!("filters nested deeper than {MAX_DEPTH}"));
        }
        let int = |what: &str, n: u64| {
            if n > i32::MAX as u64 {
                Err(format!(
                    "{} {what} {n} is over HBase's limit {}",
                    self.hbase_name(),
                    i32::MAX
                ))
            } else {
                Ok(())
            }
        };
        match self {
            Filter::Row(_, c) | Filter::Family(_, c) | Filter::Qualifier(_, c) | Filter::Value(_, c) => {
                check_comparator(c)
            }
            Filter::SingleColumnValue(t) | Filter::SingleColumnValueExclude(t) => {
                if t.op == CompareOp::NoOp {
                    // `CompareFilter.compare` throws "Unknown Compare op
                    // NO_OP" on the server once the column is met.
                    return Err(format!("{} cannot compare with NO_OP", self.hbase_name()));
                }
                check_comparator(&t.comparator)
            }
            Filter::MultipleColumnPrefix(prefixes) => {
                let mut sorted: Vec<&Bytes> = prefixes.iter().collect();
                sorted.sort();
                if sorted.windows(2).any(|w| w[0] == w[1]) {
                    // `MultipleColumnPrefixFilter(byte[][])`.
                    Err("MultipleColumnPrefixFilter prefixes must be distinct".to_owned())
                } else {
                    Ok(())
                }
            }
            Filter::Timestamps { timestamps, .. } => match timestamps.iter().find(|t| **t < 0) {
                // `TimestampsFilter(List, boolean)`.
                Some(t) => Err(format!("TimestampsFilter timestamp {t} must be positive")),
                None => Ok(()),
            },
            Filter::MultiRowRange(ranges) => {
                // `MultiRowRangeFilter.sortAndMerge`.
                if ranges.is_empty() {
                    Err("MultiRowRangeFilter: No ranges found.".to_owned())
                } else if let Some(r) = ranges.iter().find(|r| !r.is_valid()) {
                    Err(format!(
                        "MultiRowRangeFilter: invalid range, its start {} is after its stop {}",
                        crate::key::Printable(&r.start),
                        crate::key::Printable(&r.stop)
                    ))
                } else {
                    Ok(())
                }
            }
            Filter::DependentColumn(d) => d.value.as_ref().map_or(Ok(()), |(_, c)| check_comparator(c)),
            Filter::ColumnCountGet(n) => int("count", u64::from(*n)),
            Filter::ColumnPagination { limit, offset } => {
                int("limit", u64::from(*limit))?;
                match offset {
                    ColumnOffset::Count(n) => int("offset", u64::from(*n)),
                    ColumnOffset::Qualifier(_) => Ok(()),
                }
            }
            Filter::Page(n) => {
                if *n > i64::MAX as u64 {
                    Err(format!("PageFilter size {n} is over HBase's limit {}", i64::MAX))
                } else {
                    Ok(())
                }
            }
            Filter::Skip(inner) | Filter::WhileMatch(inner) => inner.check_at(depth + 1),
            Filter::List(_, filters) => filters.iter().try_for_each(|f| f.check_at(depth + 1)),
            Filter::FuzzyRow(patterns) => patterns.iter().try_for_each(|p| {
                if p.row.len() != p.mask.len() {
                    Err(format!(
                        "FuzzyRowFilter pattern of {} bytes has a mask of {}",
                        p.row.len(),
                        p.mask.len()
                    ))
                } else if p.mask.iter().any(|&m| m > 1) {
                    Err("FuzzyRowFilter mask bytes are 0 (fixed) or 1 (any)".to_owned())
                } else {
                    Ok(())
                }
            }),
            _ => Ok(()),
        }
    }
}

/// How deep filters may nest ([`Filter::List`], [`Filter::Skip`],
/// [`Filter::WhileMatch`]): decoders on the server and the wire's own
/// limits (protobuf's 100 levels of recursion) bound it; 32 is far past
/// any real query.
pub const MAX_DEPTH: usize = 32;

fn check_comparator(comparator: &Comparator) -> Result<(), String> {
    match comparator {
        Comparator::Bit { value, .. } if value.is_empty() => Err("BitComparator needs a non-empty mask".to_owned()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    #[test]
    fn compare_op_reads_stored_op_given() {
        assert!(CompareOp::Less.holds(Ordering::Less));
        assert!(!CompareOp::Less.holds(Ordering::Equal));
        assert!(CompareOp::LessOrEqual.holds(Ordering::Equal));
        assert!(CompareOp::NotEqual.holds(Ordering::Greater));
        assert!(!CompareOp::NoOp.holds(Ordering::Equal));
        assert_eq!(CompareOp::Less.mirrored(), CompareOp::Greater);
        assert_eq!(CompareOp::Equal.mirrored(), CompareOp::Equal);
    }

    #[test]
    fn check_refuses_what_hbase_refuses() {
        assert!(Filter::fuzzy_row([FuzzyPattern::new("ab", vec![0u8])]).check().is_err());
        assert!(
            Filter::fuzzy_row([FuzzyPattern::new("ab", vec![0u8, 2])])
                .check()
                .is_err()
        );
        assert!(Filter::fuzzy_row([FuzzyPattern::any_then(2, b"x")]).check().is_ok());
        assert!(
            Filter::value(CompareOp::Equal, Comparator::bit(Bytes::new(), BitOp::And))
                .check()
                .is_err()
        );
        let mut deep = Filter::key_only();
        for _ in 0..=MAX_DEPTH {
            deep = Filter::skip(deep);
        }
        assert!(deep.check().is_err());
        assert!(Filter::column_count_get(u32::MAX).check().is_err());
        // What HBase's constructors refuse.
        assert!(Filter::multiple_column_prefix(["a", "b", "a"]).check().is_err());
        assert!(Filter::timestamps([3, -1]).check().is_err());
        assert!(Filter::multi_row_range([]).check().is_err());
        assert!(Filter::multi_row_range([RowRange::new("b", "a")]).check().is_err());
        assert!(Filter::multi_row_range([RowRange::new("a", "")]).check().is_ok());
        let no_op = Filter::single_column_value("f", "q", CompareOp::NoOp, Comparator::binary("x"));
        assert!(Filter::from(no_op).check().is_err());
    }
}
