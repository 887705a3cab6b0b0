//! [`Filter`]s for the Thrift gateways: HBase's filter language, the string
//! `ParseFilter.parseFilterString` reads (`TGet.filterString`,
//! `TScan.filterString` of Thrift2, `TScan.filterString` of Thrift1), and
//! for what the language cannot say, Thrift2's `filterBytes` (the
//! `FilterProtos.Filter` message `ThriftUtilities.filterFromThrift` reads,
//! encoded by NativeStore's encoder, feature `native`).
//!
//! The string is written so that `ParseFilter` builds exactly the filter
//! given: every byte string is a quoted argument, `'` doubled inside it
//! (`ParseFilter.createUnescapdArgument`), every other byte passed through
//! as it is (the language has no escapes: `\x00` is four bytes, and a
//! Thrift `binary` field carries any byte); lists are parenthesised, so
//! that `ParseFilter`'s operator stack builds one `FilterList` per list,
//! nested as given.
//!
//! What the language cannot express (`ParseFilter.createComparator` knows
//! `binary`, `binaryprefix`, `regexstring`, `regexstringnocase` and
//! `substring` only; `createCompareOperator` has no `NO_OP`; the filters'
//! `createFilterFromArguments` take fewer options than their constructors)
//! is named by [`filter_string`]'s error.

use crate::store::filter::{ColumnOffset, Comparator, CompareOp, Filter, ListOp, SingleColumnValue};

/// What the filter language cannot express, as [`StoreError::Unsupported`]'s
/// `feature` names it.
///
/// [`StoreError::Unsupported`]: crate::store::StoreError::Unsupported
pub mod inexpressible {
    /// `MultiRowRangeFilter` is not in `ParseFilter`'s registry.
    pub const MULTI_ROW_RANGE: &str = "MultiRowRangeFilter (not in HBase's filter language)";
    /// `FuzzyRowFilter` is not in `ParseFilter`'s registry.
    pub const FUZZY_ROW: &str = "FuzzyRowFilter (not in HBase's filter language)";
    /// `createCompareOperator` has no `NO_OP`.
    pub const NO_OP: &str = "a NO_OP comparison (not in HBase's filter language)";
    /// `createComparator` makes no `NullComparator`.
    pub const NULL_COMPARATOR: &str = "NullComparator (not in HBase's filter language)";
    /// `createComparator` makes no `BitComparator`.
    pub const BIT_COMPARATOR: &str = "BitComparator (not in HBase's filter language)";
    /// `CompareFilter.extractArguments` refuses them.
    pub const SUBSTRING_ORDER: &str = "a SubstringComparator or RegexStringComparator with other than EQUAL or NOT_EQUAL (HBase's filter language refuses it)";
    /// `ColumnPaginationFilter.createFilterFromArguments` takes a count.
    pub const PAGINATION_FROM: &str = "ColumnPaginationFilter from a qualifier (not in HBase's filter language)";
    /// A list is written `a AND b`: none of no filters.
    pub const EMPTY_LIST: &str = "an empty FilterList (not in HBase's filter language)";
    /// `ColumnRangeFilter.createFilterFromArguments` reads `''` as no bound.
    pub const EMPTY_BOUND: &str = "ColumnRangeFilter with an empty qualifier as its upper bound, or excluded as its lower (HBase's filter language reads '' as no bound)";
    /// `ParseFilter` builds no list of one filter, and a list of one does
    /// not always filter as its filter does (a `ColumnCountGetFilter` ends
    /// a scan alone, not in a `MUST_PASS_ONE` list).
    pub const LIST_OF_ONE: &str = "a FilterList of one filter (HBase's filter language writes the filter alone)";
    /// `TimestampsFilter(ts)` has `canHint` false, and in a reversed scan a
    /// `MUST_PASS_ONE` list remembers a hint for the rest of the row.
    pub const TIMESTAMPS_HINT_REVERSED: &str = "a TimestampsFilter with can_hint in a MUST_PASS_ONE list of a reversed scan (HBase's filter language has no can_hint, and there it changes what the list returns)";
}

/// The filter in HBase's filter language, bytes `ParseFilter` reads back as
/// exactly this filter; or what the language cannot express (one of
/// [`inexpressible`]).
///
/// A [`Filter::List`] of one filter cannot be written: `ParseFilter` builds
/// no list of one, and a `FilterList` of one filter does not always filter
/// as the filter does (found by the filter differential through Thrift2).
/// [`Filter::Timestamps`]'s `can_hint` is not written (`TimestampsFilter(ts)`
/// has it false). It changes how the server seeks, and what it returns in
/// one place only: a `MUST_PASS_ONE` list of a `reversed` scan, which keeps
/// the hint for the rest of the row (`FilterListWithOR` compares the row's
/// later cells with it in reverse, so they all fall before it). There the
/// filter is refused (found by the filter differential through Thrift2).
///
/// ```ignore
/// // (crate-private)
/// let f = Filter::value(CompareOp::Equal, Comparator::binary("it's"));
/// assert_eq!(filter_string(&f, false).unwrap(), b"ValueFilter(=, 'binary:it''s')");
/// ```
pub(crate) fn filter_string(filter: &Filter, reversed: bool) -> Result<Vec<u8>, &'static str> {
    if reversed && hinted_timestamps_in_any_list(filter, false) {
        return Err(inexpressible::TIMESTAMPS_HINT_REVERSED);
    }
    let mut out = Vec::new();
    write(&mut out, filter)?;
    Ok(out)
}

/// Whether a [`Filter::Timestamps`] with `can_hint` lies in a
/// [`ListOp::One`] list (`in_any`: the caller is in one).
fn hinted_timestamps_in_any_list(filter: &Filter, in_any: bool) -> bool {
    match filter {
        Filter::Timestamps { can_hint, .. } => in_any && *can_hint,
        Filter::Skip(inner) | Filter::WhileMatch(inner) => hinted_timestamps_in_any_list(inner, in_any),
        Filter::List(op, filters) => {
            let in_any = in_any || *op == ListOp::One;
            filters.iter().any(|f| hinted_timestamps_in_any_list(f, in_any))
        }
        _ => false,
    }
}

/// `'bytes'`, each `'` doubled.
fn quoted(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'\'');
    for &b in bytes {
        out.push(b);
        if b == b'\'' {
            out.push(b'\'');
        }
    }
    out.push(b'\'');
}

fn operator(op: CompareOp) -> Result<&'static str, &'static str> {
    Ok(match op {
        CompareOp::Less => "<",
        CompareOp::LessOrEqual => "<=",
        CompareOp::Equal => "=",
        CompareOp::NotEqual => "!=",
        CompareOp::GreaterOrEqual => ">=",
        CompareOp::Greater => ">",
        CompareOp::NoOp => return Err(inexpressible::NO_OP),
    })
}

/// `op, 'type:value'`.
fn comparison(out: &mut Vec<u8>, op: CompareOp, comparator: &Comparator) -> Result<(), &'static str> {
    out.extend_from_slice(operator(op)?.as_bytes());
    out.extend_from_slice(b", ");
    let (kind, value): (&[u8], &[u8]) = match comparator {
        Comparator::Binary(v) => (b"binary:", v),
        Comparator::BinaryPrefix(v) => (b"binaryprefix:", v),
        Comparator::Substring(s) => {
            if !matches!(op, CompareOp::Equal | CompareOp::NotEqual) {
                return Err(inexpressible::SUBSTRING_ORDER);
            }
            (b"substring:", s.as_bytes())
        }
        Comparator::Regex(pattern) => {
            if !matches!(op, CompareOp::Equal | CompareOp::NotEqual) {
                return Err(inexpressible::SUBSTRING_ORDER);
            }
            (b"regexstring:", pattern.as_bytes())
        }
        Comparator::Null => return Err(inexpressible::NULL_COMPARATOR),
        Comparator::Bit { .. } => return Err(inexpressible::BIT_COMPARATOR),
    };
    let mut arg = kind.to_vec();
    arg.extend_from_slice(value);
    quoted(out, &arg);
    Ok(())
}

fn boolean(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

/// `'family', 'qualifier', op, 'type:value', filterIfMissing, latestVersionOnly`.
fn single_column_value(out: &mut Vec<u8>, t: &SingleColumnValue) -> Result<(), &'static str> {
    quoted(out, &t.family);
    out.extend_from_slice(b", ");
    quoted(out, &t.qualifier);
    out.extend_from_slice(b", ");
    comparison(out, t.op, &t.comparator)?;
    out.extend_from_slice(format!(", {}, {}", boolean(t.filter_if_missing), boolean(t.latest_version_only)).as_bytes());
    Ok(())
}

fn write(out: &mut Vec<u8>, filter: &Filter) -> Result<(), &'static str> {
    let call = |out: &mut Vec<u8>, name: &str| {
        out.extend_from_slice(name.as_bytes());
        out.push(b'(');
    };
    match filter {
        Filter::Prefix(p) => {
            call(out, "PrefixFilter");
            quoted(out, p);
        }
        Filter::Row(op, c) | Filter::Family(op, c) | Filter::Qualifier(op, c) | Filter::Value(op, c) => {
            call(out, filter.hbase_name());
            comparison(out, *op, c)?;
        }
        Filter::SingleColumnValue(t) | Filter::SingleColumnValueExclude(t) => {
            call(out, filter.hbase_name());
            single_column_value(out, t)?;
        }
        Filter::ColumnPrefix(p) => {
            call(out, "ColumnPrefixFilter");
            quoted(out, p);
        }
        Filter::MultipleColumnPrefix(prefixes) => {
            call(out, "MultipleColumnPrefixFilter");
            for (i, p) in prefixes.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                quoted(out, p);
            }
        }
        Filter::ColumnRange(r) => {
            // `''` is read as no bound: an empty bound is the same only
            // as an included lower one (every qualifier is at or above "").
            fn bound(b: &Option<bytes::Bytes>, lower_included: bool) -> Result<&[u8], &'static str> {
                match b {
                    Some(b) if b.is_empty() && !lower_included => Err(inexpressible::EMPTY_BOUND),
                    Some(b) => Ok(b),
                    None => Ok(b""),
                }
            }
            let (min, max) = (bound(&r.min, r.min_inclusive)?, bound(&r.max, false)?);
            call(out, "ColumnRangeFilter");
            quoted(out, min);
            out.extend_from_slice(format!(", {}, ", boolean(r.min_inclusive)).as_bytes());
            quoted(out, max);
            out.extend_from_slice(format!(", {}", boolean(r.max_inclusive)).as_bytes());
        }
        Filter::ColumnCountGet(n) => {
            call(out, "ColumnCountGetFilter");
            out.extend_from_slice(n.to_string().as_bytes());
        }
        Filter::ColumnPagination { limit, offset } => {
            let ColumnOffset::Count(offset) = offset else {
                return Err(inexpressible::PAGINATION_FROM);
            };
            call(out, "ColumnPaginationFilter");
            out.extend_from_slice(format!("{limit}, {offset}").as_bytes());
        }
        Filter::KeyOnly { value_length } => {
            call(out, "KeyOnlyFilter");
            out.extend_from_slice(boolean(*value_length).as_bytes());
        }
        Filter::FirstKeyOnly => call(out, "FirstKeyOnlyFilter"),
        Filter::InclusiveStop(row) => {
            call(out, "InclusiveStopFilter");
            quoted(out, row);
        }
        Filter::Page(n) => {
            call(out, "PageFilter");
            out.extend_from_slice(n.to_string().as_bytes());
        }
        Filter::Timestamps { timestamps, .. } => {
            call(out, "TimestampsFilter");
            let list: Vec<String> = timestamps.iter().map(i64::to_string).collect();
            out.extend_from_slice(list.join(", ").as_bytes());
        }
        Filter::DependentColumn(d) => {
            call(out, "DependentColumnFilter");
            quoted(out, &d.family);
            out.extend_from_slice(b", ");
            quoted(out, &d.qualifier);
            out.extend_from_slice(format!(", {}", boolean(d.drop_reference)).as_bytes());
            if let Some((op, c)) = &d.value {
                out.extend_from_slice(b", ");
                comparison(out, *op, c)?;
            }
        }
        Filter::Skip(inner) | Filter::WhileMatch(inner) => {
            out.extend_from_slice(if matches!(filter, Filter::Skip(_)) {
                b"(SKIP "
            } else {
                b"(WHILE "
            });
            write(out, inner)?;
            out.push(b')');
            return Ok(());
        }
        Filter::List(op, filters) => {
            match &filters[..] {
                [] => return Err(inexpressible::EMPTY_LIST),
                [_] => return Err(inexpressible::LIST_OF_ONE),
                _ => {}
            }
            let joint: &[u8] = match op {
                ListOp::All => b" AND ",
                ListOp::One => b" OR ",
            };
            out.push(b'(');
            for (i, f) in filters.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(joint);
                }
                write(out, f)?;
            }
            out.push(b')');
            return Ok(());
        }
        Filter::MultiRowRange(_) => return Err(inexpressible::MULTI_ROW_RANGE),
        Filter::FuzzyRow(_) => return Err(inexpressible::FUZZY_ROW),
    }
    out.push(b')');
    Ok(())
}

/// How a Thrift2 request carries a filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Thrift2Filter {
    /// `filterString` (TGet field 6, TScan field 7).
    String(Vec<u8>),
    /// `filterBytes` (TGet field 15, TScan field 18): the serialized
    /// `FilterProtos.Filter`, for what the language cannot express (with
    /// the `native` feature, whose encoder writes it).
    #[cfg(feature = "native")]
    Bytes(bytes::Bytes),
}

/// TGet's and TScan's fields: `filterString`, and `filterBytes`.
pub(crate) const TGET_FILTER_STRING: i16 = 6;
/// TGet's `filterBytes`.
#[cfg(feature = "native")]
pub(crate) const TGET_FILTER_BYTES: i16 = 15;
/// TScan's `filterString`.
pub(crate) const TSCAN_FILTER_STRING: i16 = 7;
/// TScan's `filterBytes`.
#[cfg(feature = "native")]
pub(crate) const TSCAN_FILTER_BYTES: i16 = 18;

/// The filter as ThriftStore sends it: the language where it can, else the
/// protobuf (feature `native`); without that feature, what the language
/// cannot express.
pub(crate) fn thrift2_filter(filter: &Filter, reversed: bool) -> Result<Thrift2Filter, &'static str> {
    match filter_string(filter, reversed) {
        Ok(s) => Ok(Thrift2Filter::String(s)),
        #[cfg(feature = "native")]
        Err(_) => Ok(Thrift2Filter::Bytes(crate::store::native::filter::filter_to_bytes(
            filter,
        ))),
        #[cfg(not(feature = "native"))]
        Err(feature) => Err(feature),
    }
}

/// Writes `filter` into a TGet (`get`) or TScan (`!get`, `reversed` or
/// not) as [`thrift2_filter`] chooses; nothing when it cannot be expressed
/// (the caller refused it before: [`thrift2_filter`]).
pub(crate) fn write_thrift2(e: &mut super::codec::Encoder, filter: Option<&Filter>, get: bool, reversed: bool) {
    let Some(filter) = filter else { return };
    match thrift2_filter(filter, reversed) {
        Ok(Thrift2Filter::String(s)) => e.binary_field(if get { TGET_FILTER_STRING } else { TSCAN_FILTER_STRING }, &s),
        #[cfg(feature = "native")]
        Ok(Thrift2Filter::Bytes(b)) => e.binary_field(if get { TGET_FILTER_BYTES } else { TSCAN_FILTER_BYTES }, &b),
        Err(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::filter::{BitOp, CompareOp::*, FuzzyPattern, RowRange};
    use bytes::Bytes;

    fn s(f: &Filter) -> String {
        String::from_utf8_lossy(&filter_string(f, false).expect("expressible")).into_owned()
    }

    #[test]
    fn filters_in_the_language() {
        assert_eq!(s(&Filter::prefix("ab")), "PrefixFilter('ab')");
        assert_eq!(
            s(&Filter::value(Equal, Comparator::binary("it's"))),
            "ValueFilter(=, 'binary:it''s')"
        );
        assert_eq!(
            s(&Filter::row(LessOrEqual, Comparator::binary_prefix("r"))),
            "RowFilter(<=, 'binaryprefix:r')"
        );
        assert_eq!(
            s(&Filter::qualifier(NotEqual, Comparator::substring("Ab"))),
            "QualifierFilter(!=, 'substring:Ab')"
        );
        assert_eq!(
            s(
                &Filter::single_column_value("cf", "q", Greater, Comparator::binary("v"))
                    .filter_if_missing(true)
                    .keep()
            ),
            "SingleColumnValueFilter('cf', 'q', >, 'binary:v', true, true)"
        );
        assert_eq!(
            s(&Filter::single_column_value("cf", "q", Less, Comparator::binary("v"))
                .latest_version_only(false)
                .exclude()),
            "SingleColumnValueExcludeFilter('cf', 'q', <, 'binary:v', false, false)"
        );
        assert_eq!(
            s(&Filter::multiple_column_prefix(["a", "b"])),
            "MultipleColumnPrefixFilter('a', 'b')"
        );
        assert_eq!(
            s(&Filter::column_range(None, false, Some(Bytes::from("d")), true)),
            "ColumnRangeFilter('', false, 'd', true)"
        );
        assert_eq!(s(&Filter::column_count_get(2)), "ColumnCountGetFilter(2)");
        assert_eq!(s(&Filter::column_pagination(2, 1)), "ColumnPaginationFilter(2, 1)");
        assert_eq!(s(&Filter::key_only()), "KeyOnlyFilter(false)");
        assert_eq!(s(&Filter::KeyOnly { value_length: true }), "KeyOnlyFilter(true)");
        assert_eq!(s(&Filter::first_key_only()), "FirstKeyOnlyFilter()");
        assert_eq!(s(&Filter::inclusive_stop("r5")), "InclusiveStopFilter('r5')");
        assert_eq!(s(&Filter::page(3)), "PageFilter(3)");
        assert_eq!(s(&Filter::timestamps([10, -1])), "TimestampsFilter(10, -1)");
        assert_eq!(
            s(&Filter::dependent_column("cf", "r", true)),
            "DependentColumnFilter('cf', 'r', true)"
        );
        assert_eq!(
            s(&Filter::skip(Filter::value(NotEqual, Comparator::binary("0")))),
            "(SKIP ValueFilter(!=, 'binary:0'))"
        );
        assert_eq!(
            s(&Filter::any([
                Filter::prefix("a"),
                Filter::all([Filter::prefix("b"), Filter::first_key_only()]),
                Filter::while_match(Filter::prefix("c")),
            ])),
            "(PrefixFilter('a') OR (PrefixFilter('b') AND FirstKeyOnlyFilter()) OR (WHILE PrefixFilter('c')))"
        );
    }

    #[test]
    fn bytes_pass_through_quoted() {
        let f = Filter::prefix(Bytes::from_static(b"a'b\0\xff(,) '"));
        assert_eq!(
            filter_string(&f, false).unwrap(),
            b"PrefixFilter('a''b\0\xff(,) ''')".to_vec()
        );
    }

    /// `TimestampsFilter(ts)` has no hint: the same filter everywhere but in
    /// an OR list of a reversed scan (seed 1795874066014256309 of the filter
    /// differential through Thrift2: `(FirstKeyOnlyFilter() OR
    /// TimestampsFilter(4, 1))` returned the row's later cells at 1).
    #[test]
    fn a_hinted_timestamps_filter_in_a_reversed_or_list_is_not_written() {
        let hinted = Filter::timestamps([4, 1]);
        let unhinted = Filter::Timestamps {
            timestamps: vec![4, 1],
            can_hint: false,
        };
        let or = |t: &Filter| Filter::any([Filter::first_key_only(), t.clone()]);
        let nested = Filter::all([Filter::prefix("a"), Filter::skip(or(&hinted))]);
        for reversed in [false, true] {
            assert_eq!(s(&hinted), "TimestampsFilter(4, 1)");
            assert!(filter_string(&hinted, reversed).is_ok());
            assert!(filter_string(&Filter::all([hinted.clone(), Filter::first_key_only()]), reversed).is_ok());
            assert!(filter_string(&or(&unhinted), reversed).is_ok());
            let refused = reversed.then_some(inexpressible::TIMESTAMPS_HINT_REVERSED);
            assert_eq!(filter_string(&or(&hinted), reversed).err(), refused);
            assert_eq!(filter_string(&nested, reversed).err(), refused);
        }
    }

    #[test]
    fn what_the_language_cannot_say_is_named() {
        let e = |f: Filter| filter_string(&f, false).unwrap_err();
        assert_eq!(
            e(Filter::multi_row_range([RowRange::new("a", "b")])),
            inexpressible::MULTI_ROW_RANGE
        );
        assert_eq!(
            e(Filter::fuzzy_row([FuzzyPattern::any_then(1, b"x")])),
            inexpressible::FUZZY_ROW
        );
        assert_eq!(e(Filter::value(NoOp, Comparator::binary("x"))), inexpressible::NO_OP);
        assert_eq!(
            e(Filter::value(Equal, Comparator::Null)),
            inexpressible::NULL_COMPARATOR
        );
        assert_eq!(
            e(Filter::value(Equal, Comparator::bit("x", BitOp::And))),
            inexpressible::BIT_COMPARATOR
        );
        assert_eq!(
            e(Filter::value(Less, Comparator::substring("a"))),
            inexpressible::SUBSTRING_ORDER
        );
        assert_eq!(
            e(Filter::column_pagination_from(1, "b")),
            inexpressible::PAGINATION_FROM
        );
        assert_eq!(e(Filter::all([])), inexpressible::EMPTY_LIST);
        assert_eq!(
            e(Filter::column_range(Some(Bytes::new()), false, None, false)),
            inexpressible::EMPTY_BOUND
        );
        assert_eq!(
            e(Filter::column_range(None, false, Some(Bytes::new()), true)),
            inexpressible::EMPTY_BOUND
        );
        assert_eq!(
            e(Filter::all([Filter::column_count_get(1)])),
            inexpressible::LIST_OF_ONE
        );
        // Nested, it is named too.
        assert_eq!(
            e(Filter::all([
                Filter::prefix("a"),
                Filter::skip(Filter::value(Equal, Comparator::Null))
            ])),
            inexpressible::NULL_COMPARATOR
        );
    }
}
