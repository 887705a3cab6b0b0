//! Server-side filters (issue 37): one case per filter and per comparator,
//! each asserting the exact cells HBase 2.6.1 returns (checked on a real
//! HBase through NativeStore, HBase's own RPC).
//!
//! CI time matters: the cases share one fixture table per target,
//! `{prefix}filter_fixture`, created when absent and filled idempotently
//! (explicit timestamps: writing it again changes nothing), and only read.
//!
//! A backend that cannot express a filter exactly must refuse it with
//! [`StoreError::Unsupported`] before sending anything; [`REFUSALS`] lists
//! which backend refuses which case, and a refusal of any other case fails.

use bytes::Bytes;
use futures_util::TryStreamExt;
use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::filter::{BitOp, Comparator, CompareOp, Filter, FuzzyPattern, RowRange};
use hmap::store::{Get, RowMutation, RowResult, Scan, StoreError};

use super::Target;

/// The cases a backend refuses, by the backend's name as its
/// `StoreError::Unsupported` gives it: every other case must pass there.
pub const REFUSALS: &[(&str, &[&str])] = &[
    (
        // The filter language has no NullComparator, BitComparator,
        // NO_OP, MultiRowRangeFilter, FuzzyRowFilter, qualifier offset, and
        // Thrift1 has no filterBytes.
        "Thrift1Store",
        &[
            "filter_null_comparator",
            "filter_bit_comparator",
            "filter_no_op",
            "filter_column_pagination_from",
            "filter_multi_row_range",
            "filter_fuzzy_row",
        ],
    ),
    (
        // Bigtable expresses cell-level filters and SingleColumnValueFilter
        // only (see hmap::store::bigtable::filter).
        "BigtableStore",
        &[
            "filter_prefix",
            "filter_row",
            "filter_regex",
            "filter_substring",
            "filter_null_comparator",
            "filter_bit_comparator",
            "filter_single_column_value_exclude",
            "filter_column_count_get",
            "filter_column_pagination",
            "filter_column_pagination_from",
            "filter_key_only_lengths",
            "filter_first_key_only",
            "filter_inclusive_stop",
            "filter_page",
            "filter_dependent_column",
            "filter_skip",
            "filter_while_match",
            "filter_list_or",
            "filter_list_nested",
            "filter_multi_row_range",
            "filter_fuzzy_row",
        ],
    ),
];

/// The bytes of a value with a quote, brackets, a comma, a space, a zero
/// byte and one that is not UTF-8: what the filter language must quote.
const TRICKY: &[u8] = b"\0\xff'(,) ";

/// The fixture table, created when absent and written (idempotently).
async fn fixture(t: &dyn Target) -> String {
    static CREATE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let store = t.store();
    let name = format!("{}filter_fixture", t.table_prefix());
    {
        // One creator at a time in this process: a case must not write to a
        // table another is still creating.
        let _one = CREATE.lock().await;
        if !store.table_exists(&name).await.expect("table_exists") {
            let mut schema = TableSchema::new(name.clone());
            schema.families = vec![FamilySchema::new("a").versions(3), FamilySchema::new("b")];
            match store.create_table(&schema).await {
                Ok(()) | Err(StoreError::TableExists { .. }) => {}
                Err(e) => panic!("create {name}: {e}"),
            }
        }
    }
    let row = |key: &[u8], cells: &[(&str, &str, i64, &[u8])]| {
        cells
            .iter()
            .fold(RowMutation::new(Bytes::copy_from_slice(key)), |m, (f, q, ts, v)| {
                m.put_at(
                    Bytes::copy_from_slice(f.as_bytes()),
                    Bytes::copy_from_slice(q.as_bytes()),
                    *ts,
                    Bytes::copy_from_slice(v),
                )
            })
    };
    let rows = vec![
        row(
            b"r1",
            &[
                ("a", "q1", 10, b"v1"),
                ("a", "q2", 10, b"apple"),
                ("a", "q3", 10, b""),
                ("b", "x", 10, b"10"),
            ],
        ),
        row(
            b"r2",
            &[
                ("a", "q1", 10, b"v2old"),
                ("a", "q1", 20, b"v2"),
                ("a", "q2", 20, b"banana"),
                ("b", "y", 20, b"It's"),
            ],
        ),
        row(
            b"r3",
            &[
                ("a", "q1", 30, b"v3"),
                ("a", "q2", 30, b"cherry"),
                ("a", "q4", 31, b"z"),
                ("a", "ref", 30, b"on"),
                ("b", "x", 30, TRICKY),
            ],
        ),
        row(b"r4", &[("b", "x", 40, b"\x0f")]),
        row(b"row'q", &[("a", "q1", 70, b"quote")]),
        row(b"s1", &[("a", "q1", 50, b"s"), ("a", "status", 50, b"paid")]),
        row(b"s2", &[("a", "q1", 60, b"t"), ("a", "status", 60, b"open")]),
    ];
    store.mutate(&name, &rows).await.expect("fill the filter fixture");
    name
}

fn show(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| match b {
            b' '..=b'~' if b != b'\\' => (b as char).to_string(),
            _ => format!("\\x{b:02x}"),
        })
        .collect()
}

/// Each cell as `row family:qualifier@timestamp=value`.
fn lines(rows: &[RowResult]) -> Vec<String> {
    rows.iter()
        .flat_map(|r| {
            r.cells.iter().map(move |c| {
                format!(
                    "{} {}:{}@{}={}",
                    show(&r.row),
                    show(&c.family),
                    show(&c.qualifier),
                    c.timestamp,
                    show(&c.value)
                )
            })
        })
        .collect()
}

/// Whether the error is a refusal `REFUSALS` lists for `case`; panics on
/// any other error.
fn refused(case: &str, e: StoreError) -> bool {
    match &e {
        StoreError::Unsupported { backend, feature, .. } => {
            let listed = REFUSALS.iter().any(|(b, cases)| b == backend && cases.contains(&case));
            assert!(
                listed,
                "{case}: {backend} refused `{feature}`, which REFUSALS does not list"
            );
            println!("{case}: refused by {backend}: it cannot express {feature}");
            true
        }
        _ => panic!("{case}: {e}"),
    }
}

/// Scans the fixture with `scan`; `None` if the backend refused (as listed).
async fn scan(t: &dyn Target, case: &str, scan: Scan) -> Option<Vec<RowResult>> {
    let table = fixture(t).await;
    let rows = match t.store().scan(&table, &scan).await {
        Ok(stream) => stream.try_collect::<Vec<_>>().await,
        Err(e) => Err(e),
    };
    match rows {
        Ok(rows) => Some(rows),
        Err(e) => {
            assert!(refused(case, e));
            None
        }
    }
}

/// Asserts the cells a scan of the whole fixture through `filter` returns.
async fn expect_scan(t: &dyn Target, case: &str, filter: Filter, want: &[&str]) {
    if let Some(rows) = scan(t, case, Scan::all().filter(filter)).await {
        assert_eq!(lines(&rows), want, "{case}");
    }
}

/// Asserts the rows a scan of the whole fixture through `filter` returns.
async fn expect_keys(t: &dyn Target, case: &str, filter: Filter, want: &[&str]) {
    if let Some(rows) = scan(t, case, Scan::all().filter(filter)).await {
        let keys: Vec<String> = rows.iter().map(|r| show(&r.row)).collect();
        assert_eq!(keys, want, "{case}");
    }
}

/// Asserts the cells a get of `row` through `filter` returns.
async fn expect_get(t: &dyn Target, case: &str, row: &str, filter: Filter, want: &[&str]) {
    let table = fixture(t).await;
    match t.store().get(&table, &Get::new(row.to_owned()).filter(filter)).await {
        Ok(found) => assert_eq!(lines(&found.into_iter().collect::<Vec<_>>()), want, "{case}"),
        Err(e) => assert!(refused(case, e)),
    }
}

fn bin(v: &str) -> Comparator {
    Comparator::binary(v.to_owned())
}

/// `PrefixFilter`: rows starting with the bytes (a quote among them).
pub async fn filter_prefix(t: &dyn Target) {
    expect_scan(t, "filter_prefix", Filter::prefix("row'"), &["row'q a:q1@70=quote"]).await;
}

/// `RowFilter` with a binary comparator: rows below `r3`.
pub async fn filter_row(t: &dyn Target) {
    expect_keys(t, "filter_row", Filter::row(CompareOp::Less, bin("r3")), &["r1", "r2"]).await;
}

/// `FamilyFilter`: family `b`'s cells only.
pub async fn filter_family(t: &dyn Target) {
    expect_scan(
        t,
        "filter_family",
        Filter::family(CompareOp::Equal, bin("b")),
        &[
            "r1 b:x@10=10",
            "r2 b:y@20=It's",
            "r3 b:x@30=\\x00\\xff'(,) ",
            "r4 b:x@40=\\x0f",
        ],
    )
    .await;
}

/// `QualifierFilter`: qualifiers at or above `q4` (stored op given).
pub async fn filter_qualifier(t: &dyn Target) {
    expect_scan(
        t,
        "filter_qualifier",
        Filter::qualifier(CompareOp::GreaterOrEqual, bin("q4")),
        &[
            "r1 b:x@10=10",
            "r2 b:y@20=It's",
            "r3 a:q4@31=z",
            "r3 a:ref@30=on",
            "r3 b:x@30=\\x00\\xff'(,) ",
            "r4 b:x@40=\\x0f",
            "s1 a:status@50=paid",
            "s2 a:status@60=open",
        ],
    )
    .await;
}

/// `ValueFilter` with a binary comparator: values above `t`.
pub async fn filter_value(t: &dyn Target) {
    expect_scan(
        t,
        "filter_value",
        Filter::value(CompareOp::Greater, bin("t")),
        &["r1 a:q1@10=v1", "r2 a:q1@20=v2", "r3 a:q1@30=v3", "r3 a:q4@31=z"],
    )
    .await;
}

/// A filter runs before versions are counted: a one-version read through
/// a filter passing only an older version returns that version.
pub async fn filter_runs_before_versions(t: &dyn Target) {
    expect_scan(
        t,
        "filter_runs_before_versions",
        Filter::value(CompareOp::Equal, bin("v2old")),
        &["r2 a:q1@10=v2old"],
    )
    .await;
}

/// `BinaryPrefixComparator`.
pub async fn filter_binary_prefix(t: &dyn Target) {
    expect_scan(
        t,
        "filter_binary_prefix",
        Filter::value(CompareOp::Equal, Comparator::binary_prefix("ch")),
        &["r3 a:q2@30=cherry"],
    )
    .await;
}

/// `RegexStringComparator`: found anywhere, `.` one byte.
pub async fn filter_regex(t: &dyn Target) {
    expect_scan(
        t,
        "filter_regex",
        Filter::value(CompareOp::Equal, Comparator::regex("^v.$")),
        &["r1 a:q1@10=v1", "r2 a:q1@20=v2", "r3 a:q1@30=v3"],
    )
    .await;
}

/// `SubstringComparator`: without case.
pub async fn filter_substring(t: &dyn Target) {
    expect_scan(
        t,
        "filter_substring",
        Filter::value(CompareOp::Equal, Comparator::substring("AN")),
        &["r2 a:q2@20=banana"],
    )
    .await;
}

/// `NullComparator`: HBase compares a cell's value, never null (even
/// empty), as above the comparator's (`NullComparator.compareTo` is 1 for
/// any value): `EQUAL` passes no cell, `NOT_EQUAL` every one.
pub async fn filter_null_comparator(t: &dyn Target) {
    let case = "filter_null_comparator";
    let null = |op| Filter::value(op, Comparator::Null);
    expect_get(t, case, "r1", null(CompareOp::Equal), &[]).await;
    expect_get(
        t,
        case,
        "r1",
        null(CompareOp::NotEqual),
        &["r1 a:q1@10=v1", "r1 a:q2@10=apple", "r1 a:q3@10=", "r1 b:x@10=10"],
    )
    .await;
}

/// `BitComparator`: one-byte values with any of the mask's bits.
pub async fn filter_bit_comparator(t: &dyn Target) {
    expect_scan(
        t,
        "filter_bit_comparator",
        Filter::value(CompareOp::Equal, Comparator::bit(vec![0x0fu8], BitOp::And)),
        &["r3 a:q4@31=z", "r4 b:x@40=\\x0f", "s1 a:q1@50=s", "s2 a:q1@60=t"],
    )
    .await;
}

/// `NO_OP` passes nothing.
pub async fn filter_no_op(t: &dyn Target) {
    expect_scan(t, "filter_no_op", Filter::value(CompareOp::NoOp, bin("x")), &[]).await;
}

/// Quotes, brackets, commas, spaces and bytes that are not UTF-8 in a
/// comparator's value.
pub async fn filter_tricky_bytes(t: &dyn Target) {
    expect_scan(
        t,
        "filter_tricky_bytes",
        Filter::value(CompareOp::Equal, Comparator::binary(TRICKY)),
        &["r3 b:x@30=\\x00\\xff'(,) "],
    )
    .await;
}

/// `SingleColumnValueFilter`, with and without `filterIfMissing`.
pub async fn filter_single_column_value(t: &dyn Target) {
    let case = "filter_single_column_value";
    let paid = || Filter::single_column_value("a", "status", CompareOp::Equal, bin("paid"));
    expect_scan(
        t,
        case,
        paid().filter_if_missing(true).keep(),
        &["s1 a:q1@50=s", "s1 a:status@50=paid"],
    )
    .await;
    expect_keys(t, case, paid().keep(), &["r1", "r2", "r3", "r4", "row'q", "s1"]).await;
}

/// `SingleColumnValueExcludeFilter`: the tested column left out.
pub async fn filter_single_column_value_exclude(t: &dyn Target) {
    expect_scan(
        t,
        "filter_single_column_value_exclude",
        Filter::single_column_value("a", "status", CompareOp::Equal, bin("paid"))
            .filter_if_missing(true)
            .exclude(),
        &["s1 a:q1@50=s"],
    )
    .await;
}

/// `ColumnPrefixFilter`.
pub async fn filter_column_prefix(t: &dyn Target) {
    expect_scan(
        t,
        "filter_column_prefix",
        Filter::column_prefix("q"),
        &[
            "r1 a:q1@10=v1",
            "r1 a:q2@10=apple",
            "r1 a:q3@10=",
            "r2 a:q1@20=v2",
            "r2 a:q2@20=banana",
            "r3 a:q1@30=v3",
            "r3 a:q2@30=cherry",
            "r3 a:q4@31=z",
            "row'q a:q1@70=quote",
            "s1 a:q1@50=s",
            "s2 a:q1@60=t",
        ],
    )
    .await;
}

/// `MultipleColumnPrefixFilter`.
pub async fn filter_multiple_column_prefix(t: &dyn Target) {
    expect_scan(
        t,
        "filter_multiple_column_prefix",
        Filter::multiple_column_prefix(["st", "ref"]),
        &["r3 a:ref@30=on", "s1 a:status@50=paid", "s2 a:status@60=open"],
    )
    .await;
}

/// `ColumnRangeFilter`: `[q2, q4)`.
pub async fn filter_column_range(t: &dyn Target) {
    expect_scan(
        t,
        "filter_column_range",
        Filter::column_range(Some(Bytes::from("q2")), true, Some(Bytes::from("q4")), false),
        &[
            "r1 a:q2@10=apple",
            "r1 a:q3@10=",
            "r2 a:q2@20=banana",
            "r3 a:q2@30=cherry",
        ],
    )
    .await;
}

/// `ColumnCountGetFilter`, in a get.
pub async fn filter_column_count_get(t: &dyn Target) {
    expect_get(
        t,
        "filter_column_count_get",
        "r3",
        Filter::column_count_get(2),
        &["r3 a:q1@30=v3", "r3 a:q2@30=cherry"],
    )
    .await;
}

/// `ColumnPaginationFilter` from a count of columns.
pub async fn filter_column_pagination(t: &dyn Target) {
    expect_scan(
        t,
        "filter_column_pagination",
        Filter::column_pagination(2, 1),
        &[
            "r1 a:q2@10=apple",
            "r1 a:q3@10=",
            "r2 a:q2@20=banana",
            "r2 b:y@20=It's",
            "r3 a:q2@30=cherry",
            "r3 a:q4@31=z",
            "s1 a:status@50=paid",
            "s2 a:status@60=open",
        ],
    )
    .await;
}

/// `ColumnPaginationFilter` from a qualifier.
pub async fn filter_column_pagination_from(t: &dyn Target) {
    expect_scan(
        t,
        "filter_column_pagination_from",
        Filter::column_pagination_from(2, "q3"),
        &[
            "r1 a:q3@10=",
            "r1 b:x@10=10",
            "r2 b:y@20=It's",
            "r3 a:q4@31=z",
            "r3 a:ref@30=on",
            "r4 b:x@40=\\x0f",
            "s1 a:status@50=paid",
            "s2 a:status@60=open",
        ],
    )
    .await;
}

/// `KeyOnlyFilter`: the values left out.
pub async fn filter_key_only(t: &dyn Target) {
    expect_get(
        t,
        "filter_key_only",
        "r1",
        Filter::key_only(),
        &["r1 a:q1@10=", "r1 a:q2@10=", "r1 a:q3@10=", "r1 b:x@10="],
    )
    .await;
}

/// `KeyOnlyFilter(true)`: each value replaced by its length.
pub async fn filter_key_only_lengths(t: &dyn Target) {
    expect_get(
        t,
        "filter_key_only_lengths",
        "r3",
        Filter::KeyOnly { value_length: true },
        &[
            "r3 a:q1@30=\\x00\\x00\\x00\\x02",
            "r3 a:q2@30=\\x00\\x00\\x00\\x06",
            "r3 a:q4@31=\\x00\\x00\\x00\\x01",
            "r3 a:ref@30=\\x00\\x00\\x00\\x02",
            "r3 b:x@30=\\x00\\x00\\x00\\x07",
        ],
    )
    .await;
}

/// `FirstKeyOnlyFilter`: each row's first cell.
pub async fn filter_first_key_only(t: &dyn Target) {
    expect_scan(
        t,
        "filter_first_key_only",
        Filter::first_key_only(),
        &[
            "r1 a:q1@10=v1",
            "r2 a:q1@20=v2",
            "r3 a:q1@30=v3",
            "r4 b:x@40=\\x0f",
            "row'q a:q1@70=quote",
            "s1 a:q1@50=s",
            "s2 a:q1@60=t",
        ],
    )
    .await;
}

/// `InclusiveStopFilter`.
pub async fn filter_inclusive_stop(t: &dyn Target) {
    expect_keys(
        t,
        "filter_inclusive_stop",
        Filter::inclusive_stop("r3"),
        &["r1", "r2", "r3"],
    )
    .await;
}

/// `PageFilter` (the fixture is one region).
pub async fn filter_page(t: &dyn Target) {
    expect_keys(t, "filter_page", Filter::page(2), &["r1", "r2"]).await;
}

/// `TimestampsFilter`, before versions are counted.
pub async fn filter_timestamps(t: &dyn Target) {
    expect_scan(
        t,
        "filter_timestamps",
        Filter::timestamps([31, 10]),
        &[
            "r1 a:q1@10=v1",
            "r1 a:q2@10=apple",
            "r1 a:q3@10=",
            "r1 b:x@10=10",
            "r2 a:q1@10=v2old",
            "r3 a:q4@31=z",
        ],
    )
    .await;
}

/// `DependentColumnFilter`: the cells at the reference column's
/// timestamps, the reference dropped.
pub async fn filter_dependent_column(t: &dyn Target) {
    expect_scan(
        t,
        "filter_dependent_column",
        Filter::dependent_column("a", "ref", true),
        &["r3 a:q1@30=v3", "r3 a:q2@30=cherry", "r3 b:x@30=\\x00\\xff'(,) "],
    )
    .await;
}

/// `SkipFilter`: rows with an empty value are left out whole.
pub async fn filter_skip(t: &dyn Target) {
    expect_keys(
        t,
        "filter_skip",
        Filter::skip(Filter::value(CompareOp::NotEqual, bin(""))),
        &["r2", "r3", "r4", "row'q", "s1", "s2"],
    )
    .await;
}

/// `WhileMatchFilter`: the scan ends at the first row it drops.
pub async fn filter_while_match(t: &dyn Target) {
    expect_keys(
        t,
        "filter_while_match",
        Filter::while_match(Filter::row(CompareOp::Less, bin("r3"))),
        &["r1", "r2"],
    )
    .await;
}

/// `FilterList` of `MUST_PASS_ALL`.
pub async fn filter_list_and(t: &dyn Target) {
    expect_scan(
        t,
        "filter_list_and",
        Filter::all([
            Filter::family(CompareOp::Equal, bin("a")),
            Filter::value(CompareOp::Less, bin("c")),
        ]),
        &["r1 a:q2@10=apple", "r1 a:q3@10=", "r2 a:q2@20=banana"],
    )
    .await;
}

/// `FilterList` of `MUST_PASS_ONE`.
pub async fn filter_list_or(t: &dyn Target) {
    expect_scan(
        t,
        "filter_list_or",
        Filter::any([
            Filter::qualifier(CompareOp::Equal, bin("q4")),
            Filter::value(CompareOp::Equal, bin("paid")),
        ]),
        &["r3 a:q4@31=z", "s1 a:status@50=paid"],
    )
    .await;
}

/// Lists nested, with row filters inside.
pub async fn filter_list_nested(t: &dyn Target) {
    expect_scan(
        t,
        "filter_list_nested",
        Filter::any([
            Filter::all([Filter::prefix("s"), Filter::qualifier(CompareOp::Equal, bin("status"))]),
            Filter::row(CompareOp::Equal, bin("r4")),
        ]),
        &["r4 b:x@40=\\x0f", "s1 a:status@50=paid", "s2 a:status@60=open"],
    )
    .await;
}

/// `MultiRowRangeFilter`.
pub async fn filter_multi_row_range(t: &dyn Target) {
    expect_keys(
        t,
        "filter_multi_row_range",
        Filter::multi_row_range([RowRange::new("r2", "r3"), RowRange::new("s2", "")]),
        &["r2", "s2"],
    )
    .await;
}

/// `FuzzyRowFilter`: any first byte, then `2`.
pub async fn filter_fuzzy_row(t: &dyn Target) {
    expect_keys(
        t,
        "filter_fuzzy_row",
        Filter::fuzzy_row([FuzzyPattern::any_then(1, b"2")]),
        &["r2", "s2"],
    )
    .await;
}

/// A filtered get: the cells the filter keeps, or no row.
pub async fn filter_get(t: &dyn Target) {
    let q4 = || Filter::qualifier(CompareOp::Equal, bin("q4"));
    expect_get(t, "filter_get", "r3", q4(), &["r3 a:q4@31=z"]).await;
    expect_get(t, "filter_get", "r1", q4(), &[]).await;
}

/// A filter HBase would refuse to build is an `InvalidRequest` everywhere.
pub async fn filter_invalid_refused(t: &dyn Target) {
    let table = fixture(t).await;
    let bad = Filter::fuzzy_row([FuzzyPattern::new("ab", vec![0u8])]);
    let scanned = t.store().scan(&table, &Scan::all().filter(bad.clone())).await.err();
    assert!(
        matches!(scanned, Some(StoreError::InvalidRequest { .. })),
        "{scanned:?}"
    );
    let got = t.store().get(&table, &Get::new("r1").filter(bad)).await.err();
    assert!(matches!(got, Some(StoreError::InvalidRequest { .. })), "{got:?}");
}
