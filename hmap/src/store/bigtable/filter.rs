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
//! - a `FilterList` of `MUST_PASS_ALL` of these: their chain.
//!
//! Refused: row-level filters (Bigtable's row filters see cells in its own
//! family order, and its regular expressions are not byte-exact for
//! arbitrary keys), `MUST_PASS_ONE` lists (an interleave repeats a cell
//! that several branches pass), regular-expression, substring, null and
//! bit comparators (RE2 is not Java's regex; Bigtable has no substring or
//! bitwise test).

use googleapis_tonic_google_bigtable_v2::google::bigtable::v2;
use v2::row_filter::{Chain, Filter as F, Interleave};

use super::convert::time_range;
use super::read::filter;
use crate::store::filter::{ColumnRange, Comparator, CompareOp, Filter, ListOp};

/// What BigtableStore cannot express, as `StoreError::Unsupported`'s `feature`.
pub mod refused {
    /// Filters that see a whole row (`PrefixFilter`, `RowFilter`,
    /// `SingleColumnValueFilter`, `PageFilter`, ...).
    pub const ROW_FILTER: &str = "a row-level filter (PrefixFilter, RowFilter, SingleColumnValueFilter, \
         SingleColumnValueExcludeFilter, ColumnCountGetFilter, ColumnPaginationFilter, FirstKeyOnlyFilter, \
         InclusiveStopFilter, PageFilter, DependentColumnFilter, SkipFilter, WhileMatchFilter, \
         MultiRowRangeFilter or FuzzyRowFilter) on Bigtable";
    /// `MUST_PASS_ONE` as an interleave repeats a cell several branches pass.
    pub const OR_LIST: &str = "a FilterList of MUST_PASS_ONE on Bigtable";
    /// RE2, not Java's regular expressions; no substring, null or bit test.
    pub const COMPARATOR: &str = "a regex, substring, null or bit comparator (or a binary prefix but on \
         a family) on Bigtable";
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
            // Disjoint ranges: a prefix another one extends is covered by it.
            let mut kept: Vec<&bytes::Bytes> = Vec::new();
            let mut sorted: Vec<&bytes::Bytes> = prefixes.iter().collect();
            sorted.sort();
            sorted.dedup();
            for p in sorted {
                if !kept.iter().any(|k| p.starts_with(k)) {
                    kept.push(p);
                }
            }
            if kept.iter().any(|p| p.is_empty()) {
                None
            } else {
                let branches: Vec<_> = kept
                    .into_iter()
                    .filter_map(|p| {
                        prefix_range(p)
                            .and_then(|(s, e)| range(Some(S::StartQualifierClosed(s)), e.map(E::EndQualifierOpen)))
                    })
                    .collect();
                Some(match branches.len() {
                    0 => filter(F::BlockAllFilter(true)),
                    1 => branches.into_iter().next().unwrap_or_default(),
                    _ => filter(F::Interleave(Interleave { filters: branches })),
                })
            }
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
        Filter::List(ListOp::One, _) => return Err(refused::OR_LIST),
        _ => return Err(refused::ROW_FILTER),
    })
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
}
