//! [`Filter`]s as Bigtable `RowFilter`s, where Bigtable can express the
//! filter exactly; every other filter is refused with
//! [`StoreError::Unsupported`](crate::store::StoreError::Unsupported)
//! naming it, never imitated on the client.
//!
//! A read's filter is a chain per family of its column selection, its time
//! range and a per-column version limit (`read_filter`).
//! HBase runs a filter on each cell after the column and time tests and
//! before it counts versions (`UserScanQueryMatcher.matchColumn`), so a
//! cell-level filter goes into each family's chain before the limit: the
//! versions counted are those the filter kept, as on HBase. Mapped, as
//! Google's HBase adapter (`bigtable-hbase`'s `FilterAdapter`) maps them
//! where it is exact:
//!
//! - `ValueFilter` with a binary comparator: a `value_range_filter` (two,
//!   interleaved, for `NOT_EQUAL`; they never both pass a cell);
//! - `QualifierFilter` with a binary comparator, `ColumnPrefixFilter`,
//!   `MultipleColumnPrefixFilter`, `ColumnRangeFilter`: a
//!   `column_range_filter` of the family (ranges, never regular
//!   expressions, so that any byte is matched as itself);
//! - `FamilyFilter` with a binary or binary-prefix comparator: decided per
//!   family, as the family's name is known where its chain is built;
//! - `TimestampsFilter`: an interleave of one-millisecond
//!   `timestamp_range_filter`s (disjoint);
//! - `KeyOnlyFilter` (without lengths): the `strip_value_transformer`,
//!   after the version limit (HBase transforms a cell after every filter of
//!   a list has passed it);
//! - a `FilterList` of `MUST_PASS_ALL` of these: their chain;
//! - `SingleColumnValueFilter` with a binary comparator, at the top or in
//!   top `MUST_PASS_ALL` lists: a `condition` filter ahead of the read's
//!   selection (`row_conditions`), as Google's adapter maps it (an
//!   interleave with a second condition that passes rows without the
//!   column, when `filterIfMissing` is off). Its predicate sees what
//!   HBase's filter sees of the row: the column only if the read selects
//!   it, in the read's time range and the family's TTL, after the cell
//!   filters before it in its list (HBase's `FilterListWithAND` stops
//!   asking at the first filter that leaves a cell out), every version or
//!   the newest.
//!
//! Refused: the other row-level filters (Bigtable's row filters see cells
//! in its own family order, and its regular expressions are not
//! byte-exact for arbitrary keys), `SingleColumnValueExcludeFilter`,
//! `MUST_PASS_ONE` lists (an interleave repeats a cell that several
//! branches pass), regular-expression, substring, null and bit
//! comparators (RE2 is not Java's regex; Bigtable has no substring or
//! bitwise test).

use googleapis_tonic_google_bigtable_v2::google::bigtable::v2;
use v2::row_filter::{Chain, Filter as F, Interleave};

use super::convert::time_range;
use super::read::filter;
use crate::store::filter::{ColumnRange, Comparator, CompareOp, Filter, ListOp, SingleColumnValue};

/// What BigtableStore cannot express, as `StoreError::Unsupported`'s `feature`.
pub mod refused {
    /// Filters that see a whole row (`PrefixFilter`, `RowFilter`,
    /// `PageFilter`, ...; a `SingleColumnValueFilter` but at the top or in
    /// top `MUST_PASS_ALL` lists).
    pub const ROW_FILTER: &str = "a row-level filter (PrefixFilter, RowFilter, SingleColumnValueExcludeFilter, \
         ColumnCountGetFilter, ColumnPaginationFilter, FirstKeyOnlyFilter, InclusiveStopFilter, PageFilter, \
         DependentColumnFilter, SkipFilter, WhileMatchFilter, MultiRowRangeFilter or FuzzyRowFilter, or a \
         SingleColumnValueFilter inside another filter than MUST_PASS_ALL) on Bigtable";
    /// A `SingleColumnValueFilter` testing every version, followed in its
    /// list by a cell filter of its family: HBase's filter sees versions
    /// until the read's limit of them passes the whole list.
    pub const ALL_VERSIONS_THEN_CELLS: &str = "a SingleColumnValueFilter testing every version (latest_version_only \
         off) followed in its MUST_PASS_ALL list by a cell filter of its family, on Bigtable";
    /// `MUST_PASS_ONE` as an interleave repeats a cell several branches pass.
    pub const OR_LIST: &str = "a FilterList of MUST_PASS_ONE on Bigtable";
    /// RE2, not Java's regular expressions; no substring, null or bit test.
    pub const COMPARATOR: &str = "a regex, substring, null or bit comparator (or a binary prefix on a \
         qualifier) on Bigtable";
    /// A `KeyOnlyFilter` with lengths, or inside another filter than a
    /// `MUST_PASS_ALL` list.
    pub const KEY_ONLY: &str = "KeyOnlyFilter with value lengths, or inside a filter other than MUST_PASS_ALL";
}

/// Whether the filter is one Bigtable can express (see the module): checks
/// before anything is sent.
pub(crate) fn check(f: &Filter) -> Result<(), &'static str> {
    family_cells(f, "", true).map(|_| ())
}

/// Whether the filter strips values (a `KeyOnlyFilter` at its top, or in
/// its top `MUST_PASS_ALL` lists).
pub(crate) fn strips_values(f: &Filter) -> bool {
    match f {
        Filter::KeyOnly { value_length: false } => true,
        Filter::List(ListOp::All, parts) => parts.iter().any(strips_values),
        _ => false,
    }
}

/// The cell-level filter for `family`'s chain: `None` for none (every cell
/// passes), or what Bigtable cannot express. `top` is whether the filter
/// is at the top or in a top `MUST_PASS_ALL` list (where a `KeyOnlyFilter`
/// may be).
pub(crate) fn family_cells(f: &Filter, family: &str, top: bool) -> Result<Option<v2::RowFilter>, &'static str> {
    let range = |start, end| {
        Some(filter(F::ColumnRangeFilter(v2::ColumnRange {
            family_name: family.to_owned(),
            start_qualifier: start,
            end_qualifier: end,
        })))
    };
    use v2::column_range::{EndQualifier as E, StartQualifier as S};
    Ok(match f {
        Filter::Value(op, Comparator::BinaryPrefix(p)) => Some(value_prefix(*op, p)),
        Filter::Value(op, c) => {
            let Comparator::Binary(v) = c else {
                return Err(refused::COMPARATOR);
            };
            use v2::value_range::{EndValue as VE, StartValue as VS};
            let values = |start, end| {
                filter(F::ValueRangeFilter(v2::ValueRange {
                    start_value: start,
                    end_value: end,
                }))
            };
            Some(match op {
                CompareOp::Less => values(None, Some(VE::EndValueOpen(v.clone()))),
                CompareOp::LessOrEqual => values(None, Some(VE::EndValueClosed(v.clone()))),
                CompareOp::Equal => values(
                    Some(VS::StartValueClosed(v.clone())),
                    Some(VE::EndValueClosed(v.clone())),
                ),
                CompareOp::GreaterOrEqual => values(Some(VS::StartValueClosed(v.clone())), None),
                CompareOp::Greater => values(Some(VS::StartValueOpen(v.clone())), None),
                CompareOp::NotEqual => filter(F::Interleave(Interleave {
                    filters: vec![
                        values(None, Some(VE::EndValueOpen(v.clone()))),
                        values(Some(VS::StartValueOpen(v.clone())), None),
                    ],
                })),
                CompareOp::NoOp => filter(F::BlockAllFilter(true)),
            })
        }
        Filter::Qualifier(op, c) => {
            let Comparator::Binary(q) = c else {
                return Err(refused::COMPARATOR);
            };
            match op {
                CompareOp::Less => range(None, Some(E::EndQualifierOpen(q.clone()))),
                CompareOp::LessOrEqual => range(None, Some(E::EndQualifierClosed(q.clone()))),
                CompareOp::Equal => range(
                    Some(S::StartQualifierClosed(q.clone())),
                    Some(E::EndQualifierClosed(q.clone())),
                ),
                CompareOp::GreaterOrEqual => range(Some(S::StartQualifierClosed(q.clone())), None),
                CompareOp::Greater => range(Some(S::StartQualifierOpen(q.clone())), None),
                CompareOp::NotEqual => Some(filter(F::Interleave(Interleave {
                    filters: [
                        range(None, Some(E::EndQualifierOpen(q.clone()))),
                        range(Some(S::StartQualifierOpen(q.clone())), None),
                    ]
                    .into_iter()
                    .flatten()
                    .collect(),
                }))),
                CompareOp::NoOp => Some(filter(F::BlockAllFilter(true))),
            }
        }
        Filter::Family(op, c) => {
            let pass = match c {
                Comparator::Binary(v) => op.holds(family.as_bytes().cmp(v)),
                // As many leading bytes of the family as the prefix has.
                Comparator::BinaryPrefix(v) => {
                    let head = &family.as_bytes()[..family.len().min(v.len())];
                    op.holds(head.cmp(v))
                }
                _ => return Err(refused::COMPARATOR),
            };
            (!pass).then(|| filter(F::BlockAllFilter(true)))
        }
        Filter::ColumnPrefix(p) => {
            prefix_range(p).and_then(|(s, e)| range(Some(S::StartQualifierClosed(s)), e.map(E::EndQualifierOpen)))
        }
        Filter::MultipleColumnPrefix(prefixes) => {
            // HBase keeps a qualifier that starts with the largest prefix
            // at or below it (`MultipleColumnPrefixFilter.filterColumn`):
            // with prefixes p1 < p2 < ..., the qualifiers in
            // [pi, min(end of pi's run, p(i+1))), so that "" and "ab" keep
            // "" and "ab..." but not "b", and "a" and "ab" not "ac".
            let mut sorted: Vec<&bytes::Bytes> = prefixes.iter().collect();
            sorted.sort();
            sorted.dedup();
            let branches: Vec<_> = sorted
                .iter()
                .enumerate()
                .filter_map(|(i, p)| {
                    let run_end = prefix_range(p).and_then(|(_, end)| end);
                    let end = match (run_end, sorted.get(i + 1)) {
                        (Some(end), Some(next)) => Some(end.min((*next).clone())),
                        (None, Some(next)) => Some((*next).clone()),
                        (end, None) => end,
                    };
                    let start = Some(S::StartQualifierClosed((*p).clone()));
                    range(start, end.map(E::EndQualifierOpen))
                })
                .collect();
            Some(match branches.len() {
                0 => filter(F::BlockAllFilter(true)),
                1 => branches.into_iter().next().unwrap_or_default(),
                _ => filter(F::Interleave(Interleave { filters: branches })),
            })
        }
        Filter::ColumnRange(ColumnRange {
            min,
            min_inclusive,
            max,
            max_inclusive,
        }) => range(
            min.clone().map(|m| {
                if *min_inclusive {
                    S::StartQualifierClosed(m)
                } else {
                    S::StartQualifierOpen(m)
                }
            }),
            max.clone().map(|m| {
                if *max_inclusive {
                    E::EndQualifierClosed(m)
                } else {
                    E::EndQualifierOpen(m)
                }
            }),
        ),
        Filter::Timestamps { timestamps, .. } => {
            let mut ts: Vec<i64> = timestamps
                .iter()
                .copied()
                .filter(|t| *t >= 0 && *t < i64::MAX)
                .collect();
            ts.sort_unstable();
            ts.dedup();
            let branches: Vec<_> = ts
                .into_iter()
                .map(|t| filter(F::TimestampRangeFilter(time_range(t, t + 1))))
                .collect();
            Some(match branches.len() {
                0 => filter(F::BlockAllFilter(true)),
                1 => branches.into_iter().next().unwrap_or_default(),
                _ => filter(F::Interleave(Interleave { filters: branches })),
            })
        }
        Filter::KeyOnly { value_length: false } if top => None,
        // A row-level test (`row_conditions`): every cell passes it.
        Filter::SingleColumnValue(test) if top => {
            column_value(test, family)?;
            None
        }
        Filter::KeyOnly { .. } => return Err(refused::KEY_ONLY),
        Filter::List(ListOp::All, parts) => {
            let mut chain = Vec::new();
            for part in parts {
                chain.extend(family_cells(part, family, top)?);
            }
            match chain.len() {
                0 => None,
                1 => chain.pop(),
                _ => Some(filter(F::Chain(Chain { filters: chain }))),
            }
        }
        // Row-level tests only (`row_conditions`): every cell passes them.
        Filter::List(ListOp::One, _) if top && is_row_test(f) => {
            row_test_parts(f, family)?;
            None
        }
        Filter::List(ListOp::One, _) => return Err(refused::OR_LIST),
        _ => return Err(refused::ROW_FILTER),
    })
}

/// A value test with a binary-prefix comparator: HBase compares the
/// value's first bytes (as many as the prefix has) with the prefix, which
/// orders the values as the ranges `[p, end)` of the values starting with
/// `p` (`end` the first value after them, none for a prefix of 0xff bytes).
fn value_prefix(op: CompareOp, p: &bytes::Bytes) -> v2::RowFilter {
    use v2::value_range::{EndValue as VE, StartValue as VS};
    let values = |start, end| {
        filter(F::ValueRangeFilter(v2::ValueRange {
            start_value: start,
            end_value: end,
        }))
    };
    if p.is_empty() {
        // Every value starts with nothing: it compares equal.
        let pass = op.holds(std::cmp::Ordering::Equal);
        return filter(if pass {
            F::PassAllFilter(true)
        } else {
            F::BlockAllFilter(true)
        });
    }
    let end = prefix_range(p).and_then(|(_, end)| end);
    let below = || values(None, Some(VE::EndValueOpen(p.clone())));
    let after = |end: &Option<bytes::Bytes>| match end {
        Some(e) => values(Some(VS::StartValueClosed(e.clone())), None),
        None => filter(F::BlockAllFilter(true)),
    };
    let starting =
        |end: &Option<bytes::Bytes>| values(Some(VS::StartValueClosed(p.clone())), end.clone().map(VE::EndValueOpen));
    match op {
        CompareOp::Less => below(),
        CompareOp::LessOrEqual => match &end {
            Some(e) => values(None, Some(VE::EndValueOpen(e.clone()))),
            None => filter(F::PassAllFilter(true)),
        },
        CompareOp::Equal => starting(&end),
        CompareOp::NotEqual => filter(F::Interleave(Interleave {
            filters: vec![below(), after(&end)],
        })),
        CompareOp::GreaterOrEqual => values(Some(VS::StartValueClosed(p.clone())), None),
        CompareOp::Greater => after(&end),
        CompareOp::NoOp => filter(F::BlockAllFilter(true)),
    }
}

/// What a read shows a row-level test of a row: the read's columns (all
/// the table's families when it names none) and each family's window of
/// time (its time range within the family's TTL).
pub(crate) struct ReadView<'a> {
    pub(crate) schema: &'a crate::schema::TableSchema,
    pub(crate) columns: &'a [crate::store::Column],
    pub(crate) window: &'a dyn Fn(&crate::schema::FamilySchema) -> Option<v2::RowFilter>,
    /// The read's versions (before the family's own limit).
    pub(crate) max_versions: u32,
}

/// The row-level tests of `f` (its `SingleColumnValueFilter`s, and lists
/// of them, at its top or in its top `MUST_PASS_ALL` lists) as Bigtable
/// `condition` filters, in order: each passes a row whole or drops it, to
/// be chained ahead of the read's selection (a chain of them passes a row
/// all of them pass).
pub(crate) fn row_conditions(f: &Filter, view: &ReadView<'_>) -> Result<Vec<v2::RowFilter>, &'static str> {
    let mut flat = Vec::new();
    flatten_all(f, &mut flat);
    let mut conditions = Vec::new();
    for (i, part) in flat.iter().enumerate() {
        if !is_row_test(part) {
            continue;
        }
        if let Some(predicate) = row_predicate(part, &flat[..i], &flat[i + 1..], view)? {
            conditions.push(condition(predicate, Some(pass_all()), None));
        }
    }
    Ok(conditions)
}

/// `f` with its top `MUST_PASS_ALL` lists flattened, in order.
fn flatten_all<'f>(f: &'f Filter, out: &mut Vec<&'f Filter>) {
    match f {
        Filter::List(ListOp::All, parts) => parts.iter().for_each(|p| flatten_all(p, out)),
        other => out.push(other),
    }
}

/// Whether `f` tests whole rows only: a `SingleColumnValueFilter`, or a
/// `MUST_PASS_ONE` list of such tests (with `MUST_PASS_ALL` lists of them
/// inside). Its cells all pass (HBase's filter answers `INCLUDE` for every
/// cell of a row it keeps).
fn is_row_test(f: &Filter) -> bool {
    match f {
        Filter::SingleColumnValue(_) => true,
        Filter::List(ListOp::One, parts) => !parts.is_empty() && parts.iter().all(is_nested_row_test),
        _ => false,
    }
}

fn is_nested_row_test(f: &Filter) -> bool {
    match f {
        Filter::List(_, parts) => !parts.is_empty() && parts.iter().all(is_nested_row_test),
        other => is_row_test(other),
    }
}

/// Checks a row test's comparators (as [`check`] does, before anything is
/// sent).
fn row_test_parts(f: &Filter, family: &str) -> Result<(), &'static str> {
    match f {
        Filter::SingleColumnValue(test) => column_value(test, family).map(drop),
        Filter::List(_, parts) => parts.iter().try_for_each(|p| row_test_parts(p, family)),
        _ => Err(refused::ROW_FILTER),
    }
}

/// The test of a column's value as a cell filter of `family` (a binary or
/// binary-prefix comparator).
fn column_value(test: &SingleColumnValue, family: &str) -> Result<Option<v2::RowFilter>, &'static str> {
    family_cells(&Filter::Value(test.op, test.comparator.clone()), family, false)
}

/// A row test as a predicate: a filter that leaves a cell of a row (some
/// cell, not necessarily one HBase's filter would keep) exactly when the
/// test passes the row; `None` when it passes every row. `before`: the
/// cell filters ahead of it in its top list, which HBase asks first
/// (`FilterListWithAND` stops at the first that leaves a cell out).
fn row_predicate(
    f: &Filter,
    before: &[&Filter],
    after: &[&Filter],
    view: &ReadView<'_>,
) -> Result<Option<v2::RowFilter>, &'static str> {
    match f {
        Filter::SingleColumnValue(test) => column_predicate(test, before, after, view),
        // All: each predicate gates the next.
        Filter::List(ListOp::All, parts) => {
            let mut predicates = Vec::new();
            for part in parts {
                predicates.extend(row_predicate(part, before, after, view)?);
            }
            Ok(predicates
                .into_iter()
                .rev()
                .reduce(|then, when| condition(when, Some(then), None)))
        }
        // One: any predicate leaves a cell.
        Filter::List(ListOp::One, parts) => {
            let mut predicates = Vec::with_capacity(parts.len());
            for part in parts {
                match row_predicate(part, before, after, view)? {
                    Some(p) => predicates.push(p),
                    None => return Ok(None),
                }
            }
            Ok(Some(match predicates.len() {
                1 => predicates.pop().unwrap_or_default(),
                _ => filter(F::Interleave(Interleave { filters: predicates })),
            }))
        }
        _ => Err(refused::ROW_FILTER),
    }
}

/// One `SingleColumnValueFilter` as a predicate (see [`row_predicate`]).
fn column_predicate(
    test: &SingleColumnValue,
    before: &[&Filter],
    after: &[&Filter],
    view: &ReadView<'_>,
) -> Result<Option<v2::RowFilter>, &'static str> {
    let shown = view.schema.find_family(&test.family).filter(|_| {
        view.columns.is_empty()
            || view.columns.iter().any(|c| match c {
                crate::store::Column::Family(f) => *f == test.family,
                crate::store::Column::Qualifier(f, q) => *f == test.family && *q == test.qualifier,
            })
    });
    let Some(family) = shown else {
        // HBase's filter never sees the column: the row lacks it.
        return Ok(test.filter_if_missing.then(|| filter(F::BlockAllFilter(true))));
    };
    use v2::column_range::{EndQualifier as E, StartQualifier as S};
    let mut seen = vec![filter(F::ColumnRangeFilter(v2::ColumnRange {
        family_name: family.name.clone(),
        start_qualifier: Some(S::StartQualifierClosed(test.qualifier.clone())),
        end_qualifier: Some(E::EndQualifierClosed(test.qualifier.clone())),
    }))];
    seen.extend((view.window)(family));
    // HBase's matcher checks a column's versions against the family's
    // VERSIONS before the filters (`checkVersions` with
    // `maxVersionToCheck`): the versions Bigtable has not collected yet
    // beyond them are not seen.
    let limit = |n: u32| filter(F::CellsPerColumnLimitFilter(n.clamp(1, i32::MAX as u32) as i32));
    seen.push(limit(family.versions));
    for earlier in before {
        seen.extend(family_cells(earlier, &family.name, true)?);
    }
    let mut matched = seen.clone();
    // Then it counts the versions the filters kept against the read's
    // limit (`mergeFilterResponse`) and seeks to the next column once one
    // more is kept: a test that keeps every version sees one more than
    // the read's limit (the newest alone when it tests only that). A cell
    // filter after it in its list could keep fewer, which Bigtable's chain
    // cannot count so.
    let seen_versions = if test.latest_version_only {
        1
    } else {
        for later in after {
            if family_cells(later, &family.name, true)?.is_some() {
                return Err(refused::ALL_VERSIONS_THEN_CELLS);
            }
        }
        view.max_versions.min(family.versions).saturating_add(1)
    };
    matched.push(limit(seen_versions));
    matched.extend(column_value(test, &family.name)?);
    // Bigtable refuses a chain of fewer than two filters.
    let chain = |mut filters: Vec<v2::RowFilter>| match filters.len() {
        1 => filters.pop().unwrap_or_default(),
        _ => filter(F::Chain(Chain { filters })),
    };
    if test.filter_if_missing {
        return Ok(Some(chain(matched)));
    }
    // Seen: matched or not; not seen: the row passes (as Google's adapter
    // does, with conditions).
    Ok(Some(condition(chain(seen), Some(chain(matched)), Some(pass_all()))))
}

/// Bigtable's `condition`: `then` for a row `predicate` leaves a cell of,
/// `otherwise` for the others (nothing for `None`).
fn condition(predicate: v2::RowFilter, then: Option<v2::RowFilter>, otherwise: Option<v2::RowFilter>) -> v2::RowFilter {
    filter(F::Condition(Box::new(v2::row_filter::Condition {
        predicate_filter: Some(Box::new(predicate)),
        true_filter: then.map(Box::new),
        false_filter: otherwise.map(Box::new),
    })))
}

fn pass_all() -> v2::RowFilter {
    filter(F::PassAllFilter(true))
}

/// The qualifiers starting with `p`: `[p, end)`, `end` `None` for no end
/// (a prefix of 0xff bytes only); `None` for every qualifier (empty `p`).
fn prefix_range(p: &bytes::Bytes) -> Option<(bytes::Bytes, Option<bytes::Bytes>)> {
    if p.is_empty() {
        return None;
    }
    let mut end = p.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some((p.clone(), Some(end.into())));
        }
    }
    Some((p.clone(), None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::filter::FuzzyPattern;

    #[test]
    fn what_bigtable_cannot_express_is_refused() {
        assert_eq!(check(&Filter::prefix("a")), Err(refused::ROW_FILTER));
        assert_eq!(
            check(&Filter::fuzzy_row([FuzzyPattern::any_then(1, b"x")])),
            Err(refused::ROW_FILTER)
        );
        assert_eq!(check(&Filter::any([Filter::key_only()])), Err(refused::OR_LIST));
        assert_eq!(
            check(&Filter::value(CompareOp::Equal, Comparator::regex("a"))),
            Err(refused::COMPARATOR)
        );
        assert_eq!(check(&Filter::skip(Filter::key_only())), Err(refused::ROW_FILTER));
        assert_eq!(check(&Filter::KeyOnly { value_length: true }), Err(refused::KEY_ONLY));
        assert!(check(&Filter::all([Filter::key_only(), Filter::column_prefix("a")])).is_ok());
    }

    #[test]
    fn prefixes_become_ranges() {
        assert_eq!(prefix_range(&"ab".into()), Some(("ab".into(), Some("ac".into()))));
        assert_eq!(
            prefix_range(&bytes::Bytes::from_static(b"a\xff")),
            Some((bytes::Bytes::from_static(b"a\xff"), Some("b".into())))
        );
        assert_eq!(
            prefix_range(&bytes::Bytes::from_static(b"\xff")),
            Some((bytes::Bytes::from_static(b"\xff"), None))
        );
        assert_eq!(prefix_range(&bytes::Bytes::new()), None);
    }

    fn paid() -> crate::store::filter::SingleColumnValue {
        Filter::single_column_value("a", "status", CompareOp::Equal, Comparator::binary("paid"))
    }

    #[test]
    fn single_column_value_tests_are_expressed_at_the_top_and_in_lists_of_tests() {
        let scvf = || Filter::from(paid().filter_if_missing(true));
        assert_eq!(check(&scvf()), Ok(()));
        assert_eq!(check(&Filter::all([Filter::column_prefix("q"), scvf()])), Ok(()));
        assert_eq!(check(&Filter::any([scvf(), Filter::all([scvf(), scvf()])])), Ok(()));
        // Beside a cell filter in a MUST_PASS_ONE list, or under a wrapper:
        // refused.
        assert_eq!(
            check(&Filter::any([scvf(), Filter::column_prefix("q")])),
            Err(refused::OR_LIST)
        );
        assert_eq!(check(&Filter::skip(scvf())), Err(refused::ROW_FILTER));
        assert_eq!(check(&paid().exclude()), Err(refused::ROW_FILTER));
        let regex = Filter::single_column_value("a", "s", CompareOp::Equal, Comparator::regex("p.*"));
        assert_eq!(check(&regex.into()), Err(refused::COMPARATOR));
    }

    #[test]
    fn a_column_the_read_does_not_show_is_missing() {
        let schema = crate::schema::TableSchema::new("t")
            .family(crate::schema::FamilySchema::new("a"))
            .family(crate::schema::FamilySchema::new("b"));
        let only_b = [crate::store::Column::Family("b".into())];
        let view = ReadView {
            schema: &schema,
            columns: &only_b,
            window: &|_| None,
            max_versions: 1,
        };
        // filterIfMissing: no row passes; without it: every row does.
        let kept = row_conditions(&paid().filter_if_missing(true).into(), &view).unwrap();
        assert_eq!(kept, [condition_of(filter(F::BlockAllFilter(true)))]);
        assert!(row_conditions(&paid().into(), &view).unwrap().is_empty());
        // Shown: one condition, its predicate a chain on the column.
        let view = ReadView { columns: &[], ..view };
        let kept = row_conditions(&paid().filter_if_missing(true).into(), &view).unwrap();
        let [one] = &kept[..] else { panic!("{kept:?}") };
        let Some(F::Condition(c)) = &one.filter else {
            panic!("{one:?}")
        };
        let Some(F::Chain(chain)) = c.predicate_filter.as_ref().and_then(|p| p.filter.as_ref()) else {
            panic!("{c:?}")
        };
        // The column, the family's versions, the newest version, the value.
        assert_eq!(chain.filters.len(), 4, "{chain:?}");
    }

    fn condition_of(predicate: v2::RowFilter) -> v2::RowFilter {
        condition(predicate, Some(pass_all()), None)
    }

    #[test]
    fn a_binary_prefix_orders_values_as_ranges() {
        use v2::value_range::{EndValue as VE, StartValue as VS};
        let range = |start, end| {
            filter(F::ValueRangeFilter(v2::ValueRange {
                start_value: start,
                end_value: end,
            }))
        };
        let p = bytes::Bytes::from_static(b"ab");
        assert_eq!(
            value_prefix(CompareOp::Equal, &p),
            range(
                Some(VS::StartValueClosed(p.clone())),
                Some(VE::EndValueOpen("ac".into()))
            )
        );
        assert_eq!(
            value_prefix(CompareOp::Less, &p),
            range(None, Some(VE::EndValueOpen(p.clone())))
        );
        assert_eq!(
            value_prefix(CompareOp::Greater, &p),
            range(Some(VS::StartValueClosed("ac".into())), None)
        );
        assert_eq!(
            value_prefix(CompareOp::Greater, &bytes::Bytes::from_static(b"\xff")),
            filter(F::BlockAllFilter(true))
        );
        assert_eq!(
            value_prefix(CompareOp::Equal, &bytes::Bytes::new()),
            filter(F::PassAllFilter(true))
        );
        assert_eq!(
            value_prefix(CompareOp::Less, &bytes::Bytes::new()),
            filter(F::BlockAllFilter(true))
        );
    }
}
