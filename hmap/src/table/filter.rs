//! Typed server-side filters on a table's fields: [`Where`].
//!
//! A filter is built from a field's handle (`Order::STATUS`) and takes the
//! field's own Rust type, encoded with the field's own codec, so that the
//! bytes compared on the server are the bytes stored. Orderings (`<`, `>`,
//! ...) compile only for fields whose stored bytes sort as their values do
//! ([`SortedCodec`]); a signed number, whose big-endian two's complement
//! puts negatives after positives, does not compile.
//!
//! ```
//! use hmap::{HTable, Query, Table, Where};
//! use hmap::store::MemoryStore;
//!
//! #[derive(HTable, Debug)]
//! #[hmap(table = "order", family(name = "o"))]
//! struct Order {
//!     #[hmap(key)]
//!     customer: String,
//!     #[hmap(key)]
//!     id: u32,
//!     status: String,
//!     cents: u64,
//! }
//!
//! # #[tokio::main] async fn main() -> hmap::Result<()> {
//! let orders = Table::<Order, _>::new(MemoryStore::new());
//! orders.create().await?;
//! for (id, status, cents) in [(1, "paid", 500), (2, "open", 900), (3, "paid", 2500)] {
//!     orders.put(&Order { customer: "c42".into(), id, status: status.into(), cents }).await?;
//! }
//! let big_paid = Order::STATUS.equals("paid").and(Order::CENTS.at_least(1000u64));
//! let rows = orders.scan(Query::prefix("c42").filter(big_paid)).await?.into_vec().await?;
//! assert_eq!(rows.iter().map(|o| o.id).collect::<Vec<_>>(), [3]);
//! # Ok(()) }
//! ```

use std::marker::PhantomData;

use bytes::Bytes;

use super::{Field, FieldRole, HTable};
use crate::error::Error;
use crate::store::filter::{Comparator, CompareOp, Filter, SingleColumnValue};
use crate::value::{Codec, Native, Text, ValueError};

/// A filter on the rows of `T`, built from its fields' handles, for
/// [`Query::filter`](crate::Query::filter). Rows without the field do not
/// pass a test of it (as SQL's `WHERE` drops `NULL`s).
pub struct Where<T> {
    filter: std::result::Result<Filter, WhereError>,
    of: PhantomData<fn() -> T>,
}

/// Why a [`Where`] could not be built: kept until the query runs, where it
/// becomes an [`Error`] naming the table.
#[derive(Debug, Clone)]
pub(crate) enum WhereError {
    Encode { field: &'static str, cause: ValueError },
    NotACell { field: &'static str, role: FieldRole },
    DropsCells { filter: &'static str },
}

/// Whether a filter keeps or drops whole rows, never some of a row's cells.
fn keeps_whole_rows(filter: &Filter) -> bool {
    match filter {
        Filter::Prefix(_)
        | Filter::Row(..)
        | Filter::InclusiveStop(_)
        | Filter::Page(_)
        | Filter::MultiRowRange(_)
        | Filter::FuzzyRow(_)
        | Filter::SingleColumnValue(_)
        | Filter::Skip(_) => true,
        Filter::WhileMatch(inner) => keeps_whole_rows(inner),
        Filter::List(_, filters) => filters.iter().all(keeps_whole_rows),
        _ => false,
    }
}

impl<T> Clone for Where<T> {
    fn clone(&self) -> Self {
        Where {
            filter: self.filter.clone(),
            of: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for Where<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Where").field(&self.filter).finish()
    }
}

impl<T: HTable> Where<T> {
    /// Rows that pass both.
    pub fn and(self, other: Where<T>) -> Where<T> {
        Where::combine(self, other, Filter::all)
    }

    /// Rows that pass either.
    pub fn or(self, other: Where<T>) -> Where<T> {
        Where::combine(self, other, Filter::any)
    }

    /// Rows that pass every one (every row, for none).
    pub fn all(filters: impl IntoIterator<Item = Where<T>>) -> Where<T> {
        Where::collect(filters, Filter::all)
    }

    /// Rows that pass any one (no row, for none: HBase's empty
    /// `MUST_PASS_ONE` list would pass every row, so none becomes a
    /// `RowFilter` with `NO_OP`, which passes none).
    pub fn any(filters: impl IntoIterator<Item = Where<T>>) -> Where<T> {
        Where::collect(filters, |filters| {
            if filters.is_empty() {
                Filter::row(CompareOp::NoOp, Comparator::Binary(Bytes::new()))
            } else {
                Filter::any(filters)
            }
        })
    }

    /// A filter of the store's ([`Filter`]) on the rows of `T`, for what
    /// the typed forms do not say: `Where::<Order>::raw(...)`. Its bytes are
    /// compared as they are stored.
    ///
    /// It must keep or drop whole rows, since a typed row needs its cells:
    /// a row filter (`Prefix`, `Row`, `InclusiveStop`, `Page`,
    /// `MultiRowRange`, `FuzzyRow`), a `SingleColumnValue` test, a `Skip` of
    /// anything, or a `WhileMatch` or list of those. Another (a `Value`
    /// filter, say, which drops cells) is refused with [`Error::Query`] when
    /// the query runs.
    pub fn raw(filter: Filter) -> Where<T> {
        if keeps_whole_rows(&filter) {
            Where::of(Ok(filter))
        } else {
            Where::of(Err(WhereError::DropsCells {
                filter: filter.hbase_name(),
            }))
        }
    }

    fn of(filter: std::result::Result<Filter, WhereError>) -> Where<T> {
        Where {
            filter,
            of: PhantomData,
        }
    }

    fn combine(a: Where<T>, b: Where<T>, list: fn(Vec<Filter>) -> Filter) -> Where<T> {
        Where::collect([a, b], list)
    }

    /// The filters as a list; one alone as itself (a `FilterList` of one
    /// does not always filter as its filter does, and HBase's filter
    /// language has no list of one).
    fn collect(filters: impl IntoIterator<Item = Where<T>>, list: fn(Vec<Filter>) -> Filter) -> Where<T> {
        let filters: std::result::Result<Vec<Filter>, WhereError> = filters.into_iter().map(|w| w.filter).collect();
        Where::of(filters.map(|mut filters| match filters.len() {
            1 => filters.remove(0),
            _ => list(filters),
        }))
    }

    /// The store's filter, or what building it met.
    pub(crate) fn into_filter(self) -> std::result::Result<Filter, WhereError> {
        self.filter
    }
}

/// A conditional write of `mutation` when `condition` holds: a compare of
/// one column where the condition is one (a single-column test of a
/// non-empty value, its newest version, rows without the column failing:
/// what `CheckAndMutate` compares exactly, and every backend sends), else
/// the condition as a filter (`CheckAndMutate.Builder.ifMatches(Filter)`).
pub(crate) fn conditional(mutation: crate::store::RowMutation, condition: Filter) -> crate::store::CheckAndMutate {
    use crate::store::CheckAndMutate;
    let Filter::SingleColumnValue(test) = condition else {
        return CheckAndMutate::when_filter(mutation, condition);
    };
    let one_column = test.filter_if_missing && test.latest_version_only && test.op != CompareOp::NoOp;
    match test.comparator {
        Comparator::Binary(value) if one_column && !value.is_empty() => {
            CheckAndMutate::new(mutation, test.family, test.qualifier, Some(value)).compare(test.op)
        }
        comparator => CheckAndMutate::when_filter(
            mutation,
            Filter::SingleColumnValue(SingleColumnValue { comparator, ..test }),
        ),
    }
}

impl WhereError {
    /// The error of a query of `table` with this filter.
    pub(crate) fn error(&self, table: &'static str) -> Error {
        match self {
            WhereError::Encode { field, cause } => Error::Encode {
                table,
                row: "(a filter)".to_owned(),
                column: (*field).to_owned(),
                cause: cause.clone(),
            },
            WhereError::NotACell { field, role } => Error::Query {
                table,
                reason: format!(
                    "the field `{field}` ({role:?}) is not one cell; only a cell's field can be filtered on"
                ),
            },
            WhereError::DropsCells { filter } => Error::Query {
                table,
                reason: format!(
                    "a {filter} drops some of a row's cells, and a typed row needs them all: filter rows (a row filter, a SingleColumnValue test, a Skip), or read through the store"
                ),
            },
        }
    }
}

/// A codec whose bytes sort, as unsigned bytes, in the order of the values
/// they encode, so that a server's byte comparison orders values rightly:
/// unsigned integers, `bool`, strings and byte strings in the native
/// codec, strings as text.
#[diagnostic::on_unimplemented(
    message = "the stored bytes of `{V}` (codec `{Self}`) do not sort as its values, so HBase cannot order them",
    label = "`<`, `<=`, `>=` and `>` need bytes that sort as the values",
    note = "signed numbers and floats are stored big-endian (negatives sort after positives); compare them with `equals`/`not_equals`, or store them in a field of an unsigned type"
)]
pub trait SortedCodec<V>: Codec<V> {}

macro_rules! sorted_native {
    ($($t:ty),*) => {$(impl SortedCodec<$t> for Native {})*};
}
sorted_native!(u8, u16, u32, u64, u128, bool, String, Vec<u8>, Bytes);
impl<const N: usize> SortedCodec<[u8; N]> for Native {}
#[cfg(feature = "uuid")]
impl SortedCodec<uuid::Uuid> for Native {}
impl SortedCodec<String> for Text {}

impl<T: HTable, V, C: Codec<V>> Field<T, V, C> {
    /// Where the field's value equals `value`.
    pub fn equals(self, value: impl Into<V>) -> Where<T> {
        self.compare(CompareOp::Equal, value.into())
    }

    /// Where the field holds a value other than `value` (rows without the
    /// field do not pass).
    pub fn not_equals(self, value: impl Into<V>) -> Where<T> {
        self.compare(CompareOp::NotEqual, value.into())
    }

    /// Where the row holds the field (any value).
    pub fn is_present(self) -> Where<T> {
        // Every value, the empty one too, is at least the empty one.
        self.test(CompareOp::GreaterOrEqual, Comparator::Binary(Bytes::new()), true)
    }

    /// Where the row does not hold the field.
    pub fn is_missing(self) -> Where<T> {
        // No value is below the empty one: only rows without the column pass.
        self.test(CompareOp::Less, Comparator::Binary(Bytes::new()), false)
    }

    /// Where the field's value is below `value`.
    pub fn less_than(self, value: impl Into<V>) -> Where<T>
    where
        C: SortedCodec<V>,
    {
        self.compare(CompareOp::Less, value.into())
    }

    /// Where the field's value is `value` or below.
    pub fn at_most(self, value: impl Into<V>) -> Where<T>
    where
        C: SortedCodec<V>,
    {
        self.compare(CompareOp::LessOrEqual, value.into())
    }

    /// Where the field's value is above `value`.
    pub fn greater_than(self, value: impl Into<V>) -> Where<T>
    where
        C: SortedCodec<V>,
    {
        self.compare(CompareOp::Greater, value.into())
    }

    /// Where the field's value is `value` or above.
    pub fn at_least(self, value: impl Into<V>) -> Where<T>
    where
        C: SortedCodec<V>,
    {
        self.compare(CompareOp::GreaterOrEqual, value.into())
    }

    fn compare(self, op: CompareOp, value: V) -> Where<T> {
        match C::encode(&value) {
            Ok(bytes) => self.test(op, Comparator::Binary(bytes), true),
            Err(cause) => Where::of(Err(WhereError::Encode {
                field: self.name(),
                cause,
            })),
        }
    }

    /// A `SingleColumnValueFilter` on the field's column, on its newest
    /// version.
    fn test(self, op: CompareOp, comparator: Comparator, filter_if_missing: bool) -> Where<T> {
        let name = self.name();
        let info = T::fields().iter().find(|f| f.name == name);
        Where::of(match info {
            Some(f)
                if matches!(
                    f.role,
                    FieldRole::Cell | FieldRole::Versions | FieldRole::Version | FieldRole::Counter
                ) =>
            {
                Ok(Filter::single_column_value(f.family, f.qualifier, op, comparator)
                    .filter_if_missing(filter_if_missing)
                    .into())
            }
            Some(f) => Err(WhereError::NotACell {
                field: name,
                role: f.role,
            }),
            None => Err(WhereError::NotACell {
                field: name,
                role: FieldRole::Key,
            }),
        })
    }
}

impl<T: HTable, C: SortedCodec<String>> Field<T, String, C> {
    /// Where the field's text starts with `prefix`.
    pub fn starts_with(self, prefix: &str) -> Where<T> {
        self.test(
            CompareOp::Equal,
            Comparator::BinaryPrefix(Bytes::copy_from_slice(prefix.as_bytes())),
            true,
        )
    }

    /// Where a Java regular expression finds a match in the field's text
    /// (HBase's `RegexStringComparator`; see [`Comparator::Regex`]).
    pub fn matches(self, pattern: &str) -> Where<T> {
        self.test(CompareOp::Equal, Comparator::Regex(pattern.to_owned()), true)
    }
}

/// What a query's type parameter may be for a scan of `T`'s table: `()`, a
/// query without a typed filter, or `T`, one that filters on `T`'s fields.
#[diagnostic::on_unimplemented(
    message = "this query filters on the fields of `{Self}`, not of `{T}`",
    label = "a query of `{Self}`'s table",
    note = "a `Where` built from one table's fields filters only that table's rows"
)]
pub trait QueryOf<T> {}

impl<T: HTable> QueryOf<T> for () {}
impl<T: HTable> QueryOf<T> for T {}
