//! Conformance cases of conditional writes, `check_and_mutate`: puts and
//! deletes applied when a column holds the expected value or is absent,
//! and every comparison, "absent or empty", a time range and a filter as
//! the condition. Each case of the latter groups related checks on one
//! table, to keep a run of the suite on a real cluster short.
//!
//! What HBase does was asked of its own Java client (HBase 2.6.1,
//! `CheckAndMutate.newBuilder(row).ifMatches(family, qualifier, op, value)`):
//! its operator reads `given op stored`
//! (`HRegion.checkAndMutateInternal`: `matches(op, comparator.compareTo(cell))`),
//! hmap's `stored op given`, which backends send mirrored.
//!
//! A backend that documents a condition it cannot express (Thrift2 and
//! Thrift1 gateways lack time ranges and filters in their calls, Thrift1's
//! `checkAndPut` compares for equality only) refuses it with that
//! [`StoreError::Unsupported`], listed in [`DOCUMENTED_REFUSALS`]; the cases
//! accept exactly those, check that a refused call wrote nothing, and check
//! everything else as on HBase. (BigtableStore's refusals are listed with
//! its suite's, in `suite-extra/tests/conformance_bigtable.rs`.)

use bytes::Bytes;
use hmap::store::filter::{Comparator, CompareOp};
use hmap::store::{CheckAndMutate, Filter, Get, RowMutation, StoreError, TimeRange};

use super::{Target, TestTable, ab_table, cell, get_cells, now_millis, put};

/// The six comparisons, each with what it answers for a stored value
/// below, equal to and above the expected one (`stored op expected`).
const COMPARISONS: [(CompareOp, [bool; 3]); 6] = [
    (CompareOp::Less, [true, false, false]),
    (CompareOp::LessOrEqual, [true, true, false]),
    (CompareOp::Equal, [false, true, false]),
    (CompareOp::NotEqual, [true, false, true]),
    (CompareOp::GreaterOrEqual, [false, true, true]),
    (CompareOp::Greater, [false, false, true]),
];

/// The refusals a backend documents for conditional writes: `(backend,
/// feature)` of its [`StoreError::Unsupported`]. Nothing else is accepted.
pub const DOCUMENTED_REFUSALS: &[(&str, &str)] = &[
    ("ThriftStore", hmap::store::thrift_unsupported::CHECK_TIME_RANGE),
    ("ThriftStore", hmap::store::thrift_unsupported::CHECK_FILTER),
    ("Thrift1Store", hmap::store::thrift1_unsupported::CHECK_COMPARE),
    ("Thrift1Store", hmap::store::thrift1_unsupported::CHECK_TIME_RANGE),
    ("Thrift1Store", hmap::store::thrift1_unsupported::CHECK_FILTER),
];

/// Runs a check-and-mutate: `Some(applied)`, or `None` when the backend
/// refused it with one of its [`DOCUMENTED_REFUSALS`] (said on stdout).
async fn check(tt: &TestTable<'_>, op: &CheckAndMutate) -> Option<bool> {
    match tt.store.check_and_mutate(&tt.name, op).await {
        Ok(applied) => Some(applied),
        Err(StoreError::Unsupported { backend, feature, .. }) if DOCUMENTED_REFUSALS.contains(&(backend, feature)) => {
            println!("{}: {backend} refuses {feature}, as it documents", tt.name);
            None
        }
        Err(e) => panic!("check_and_mutate {op:?}: {e}"),
    }
}

/// The columns `hit_*` of `row`, the marks the passing checks left.
async fn hits(tt: &TestTable<'_>, row: &str) -> Vec<String> {
    get_cells(tt, Get::new(row.to_owned()).family("b"))
        .await
        .into_iter()
        .filter(|c| c.qualifier.starts_with(b"hit_"))
        .map(|c| String::from_utf8_lossy(&c.qualifier).into_owned())
        .collect()
}

/// Checks `row`'s column `b:q` with `op` against `expected`, and marks a
/// pass with a put of `b:<mark>`; returns what the store answered and
/// notes the mark in `marks` when it applied.
async fn check_marked(
    tt: &TestTable<'_>,
    row: &str,
    op: CompareOp,
    expected: Option<&'static str>,
    mark: String,
    marks: &mut Vec<String>,
) -> Option<bool> {
    let write = RowMutation::new(row.to_owned()).put("b", mark.clone(), "x");
    let expected = expected.map(|v| Bytes::from_static(v.as_bytes()));
    let applied = check(tt, &CheckAndMutate::new(write, "b", "q", expected).compare(op)).await;
    if applied == Some(true) {
        marks.push(mark);
    }
    applied
}

/// Every comparison, passing and failing, with the stored value below,
/// equal to and above the expected one, compared as unsigned bytes (HBase's
/// `BinaryComparator`, `Bytes.compareTo`: `0x80` sorts after `0x7f`). The
/// operator reads `stored op expected`: HBase's own `checkAndMutate`, which
/// reads `given op stored`, answered `LESS` true for a stored `5` and a
/// given `3` (checked on HBase 2.6.1).
pub async fn check_compares_every_way(t: &dyn Target) {
    let tt = ab_table(t, "check_compares_every_way").await;
    put(
        &tt,
        vec![
            RowMutation::new("r").put_at("b", "q", 1, "5"),
            RowMutation::new("bin").put_at("b", "q", 1, "\u{7f}"),
        ],
    )
    .await;
    let mut marks = Vec::new();
    let mut refused = 0;
    // Stored "5" against "7" (stored below), "5" (equal), "3" (stored above).
    for (op, answers) in COMPARISONS {
        for (expected, want) in ["7", "5", "3"].into_iter().zip(answers) {
            let mark = format!("hit_{}_{expected}", op.hbase_name());
            match check_marked(&tt, "r", op, Some(expected), mark, &mut marks).await {
                Some(applied) => assert_eq!(applied, want, "stored 5 {op:?} {expected}"),
                None => refused += 1,
            }
        }
    }
    assert_eq!(
        hits(&tt, "r").await,
        sorted(marks.clone()),
        "the passing checks' writes"
    );
    // Unsigned bytes: 0x7f sorts below 0x80 (a signed comparison would put
    // 0x80, -128, first).
    marks.clear();
    let bin = |op| {
        CheckAndMutate::new(
            RowMutation::new("bin").put("b", format!("hit_{op:?}"), "x"),
            "b",
            "q",
            Some(Bytes::from_static(&[0x80])),
        )
        .compare(op)
    };
    for (op, want) in [(CompareOp::Less, true), (CompareOp::Greater, false)] {
        match check(&tt, &bin(op)).await {
            Some(applied) => {
                assert_eq!(applied, want, "stored 0x7f {op:?} 0x80");
                if applied {
                    marks.push(format!("hit_{op:?}"));
                }
            }
            None => refused += 1,
        }
    }
    assert_eq!(hits(&tt, "bin").await, sorted(marks));
    // Only Thrift1 refuses comparisons, and then every one but equality.
    assert!(refused == 0 || refused == 15 + 2, "{refused} comparisons refused");
}

/// Nothing (or the empty value) expected means "absent or empty" for every
/// operator but `NotEqual`, which means "holds a non-empty value"; with a
/// value expected, an absent column fails every operator, `NotEqual`
/// included, and an empty one compares as the empty value (below any
/// other). Checked on HBase 2.6.1 for each operator, each stored state
/// (absent, empty, `5`) and each expected value (`None`, empty, `3`, `5`,
/// `7`).
pub async fn check_absent_or_empty_every_way(t: &dyn Target) {
    let tt = ab_table(t, "check_absent_or_empty_every_way").await;
    put(
        &tt,
        vec![
            RowMutation::new("empty").put_at("b", "q", 1, ""),
            RowMutation::new("full").put_at("b", "q", 1, "5"),
        ],
    )
    .await;
    let mut refused = 0;
    let mut checked = 0;
    for row in ["absent", "empty", "full"] {
        let mut marks = Vec::new();
        for (op, answers) in COMPARISONS {
            for expected in [None, Some(""), Some("3")] {
                let want = match (row, expected) {
                    ("full", None | Some("")) => op == CompareOp::NotEqual,
                    (_, None | Some("")) => op != CompareOp::NotEqual,
                    ("absent", _) => false,
                    // "" against "3": stored below.
                    ("empty", _) => answers[0],
                    // "5" against "3": stored above.
                    _ => answers[2],
                };
                let mark = format!(
                    "hit_{}_{}",
                    op.hbase_name(),
                    expected.map_or("none", |v| if v.is_empty() { "empty" } else { v })
                );
                match check_marked(&tt, row, op, expected, mark, &mut marks).await {
                    Some(applied) => {
                        checked += 1;
                        assert_eq!(applied, want, "row {row}: stored {op:?} {expected:?}");
                    }
                    None => refused += 1,
                }
            }
        }
        assert_eq!(
            hits(&tt, row).await,
            sorted(marks),
            "row {row}: the passing checks' writes"
        );
    }
    // Thrift1 refuses what `checkAndPut` cannot say: every comparison of a
    // value but equality (5 operators x 3 rows) and `NotEqual` to nothing
    // (2 x 3 rows).
    assert!(refused == 0 || refused == 21, "{refused} checks refused, {checked} run");
    // NO_OP compares nothing: HBase's region fails on it once a value is
    // compared ("Unknown Compare op"); every backend refuses it first.
    let no_op = CheckAndMutate::new(
        RowMutation::new("full").put("b", "hit_noop", "x"),
        "b",
        "q",
        Some(Bytes::from_static(b"5")),
    )
    .compare(CompareOp::NoOp);
    match t.store().check_and_mutate(&tt.name, &no_op).await {
        Err(StoreError::InvalidRequest { .. }) => {}
        other => panic!("a check with NO_OP: {other:?}"),
    }
}

/// A time range limits the versions the check looks at: the newest version
/// in the range is compared, and a range holding no version reads as
/// absent. (HBase: `CheckAndMutate.Builder.timeRange`; the region reads
/// the column with `Get.setTimeRange`, one version.)
pub async fn check_time_range(t: &dyn Target) {
    let tt = ab_table(t, "check_time_range").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1000, "old")
                .put_at("a", "q", 2000, "new"),
        ],
    )
    .await;
    let mut marks = Vec::new();
    let cases: [(TimeRange, CompareOp, Option<&'static str>, bool); 7] = [
        (TimeRange::new(0, 1500), CompareOp::Equal, Some("old"), true),
        (TimeRange::new(0, 1500), CompareOp::Equal, Some("new"), false),
        (TimeRange::new(1500, 3000), CompareOp::Equal, Some("new"), true),
        (TimeRange::new(1500, 3000), CompareOp::Equal, Some("old"), false),
        (TimeRange::new(3000, 4000), CompareOp::Equal, None, true),
        (TimeRange::new(3000, 4000), CompareOp::NotEqual, Some("new"), false),
        // `[1000, 2000)` holds only "old": "old" < "older".
        (TimeRange::new(1000, 2000), CompareOp::Less, Some("older"), true),
    ];
    let mut refused = 0;
    for (i, (range, op, expected, want)) in cases.into_iter().enumerate() {
        let mark = format!("hit_{i}");
        let write = RowMutation::new("r").put("b", mark.clone(), "x");
        let expected = expected.map(|v| Bytes::from_static(v.as_bytes()));
        let op_ = CheckAndMutate::new(write, "a", "q", expected)
            .compare(op)
            .time_range(range);
        match check(&tt, &op_).await {
            Some(applied) => {
                assert_eq!(applied, want, "{range:?}: stored {op:?} {:?}", op_.expected);
                if applied {
                    marks.push(mark);
                }
            }
            None => refused += 1,
        }
    }
    assert!(refused == 0 || refused == cases.len(), "{refused} refused");
    assert_eq!(hits(&tt, "r").await, sorted(marks));
}

/// A filter as the condition: the changes apply when the filter leaves any
/// cell of the row, read as HBase's region reads it (the row's newest
/// versions, in the time range). (HBase 2.4: `CheckAndMutate.Builder.ifMatches(Filter)`;
/// checked on HBase 2.6.1 with `ValueFilter` and `SingleColumnValueFilter`.)
pub async fn check_filter_condition(t: &dyn Target) {
    let tt = ab_table(t, "check_filter_condition").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1000, "a")
                .put_at("a", "other", 1000, "b"),
        ],
    )
    .await;
    let value = |v: &'static str| Filter::value(CompareOp::Equal, Comparator::binary(v));
    let cases: Vec<(&str, Filter, TimeRange, bool)> = vec![
        ("value a", value("a"), TimeRange::ALL, true),
        ("value z", value("z"), TimeRange::ALL, false),
        ("value a, before its version", value("a"), TimeRange::new(0, 500), false),
        ("value a, at its version", value("a"), TimeRange::new(1000, 1001), true),
        // Last: a row-level filter (on Bigtable a condition filter).
        (
            "column q equals a",
            Filter::single_column_value("a", "q", CompareOp::Equal, Comparator::binary("a"))
                .filter_if_missing(true)
                .keep(),
            TimeRange::ALL,
            true,
        ),
        (
            "column q equals b",
            Filter::single_column_value("a", "q", CompareOp::Equal, Comparator::binary("b"))
                .filter_if_missing(true)
                .keep(),
            TimeRange::ALL,
            false,
        ),
    ];
    let mut marks = Vec::new();
    let mut refused = 0;
    for (i, (what, filter, range, want)) in cases.iter().cloned().enumerate() {
        let mark = format!("hit_{i}");
        let write = RowMutation::new("r").put("b", mark.clone(), "x");
        match check(&tt, &CheckAndMutate::when_filter(write, filter).time_range(range)).await {
            Some(applied) => {
                assert_eq!(applied, want, "{what}");
                if applied {
                    marks.push(mark);
                }
            }
            None => refused += 1,
        }
    }
    // A row with no cell leaves the filter nothing: the check fails.
    let missing = CheckAndMutate::when_filter(RowMutation::new("nobody").put("b", "hit", "x"), Filter::key_only());
    match check(&tt, &missing).await {
        Some(applied) => assert!(!applied, "a filter on a missing row"),
        None => refused += 1,
    }
    assert!(refused == 0 || refused == cases.len() + 1, "{refused} refused");
    assert_eq!(hits(&tt, "r").await, sorted(marks));
    assert_eq!(get_cells(&tt, Get::new("nobody")).await, vec![]);
}

// ---------------------------------------------------------------------------
// Check-and-mutate

/// The mutation applies when the column holds the expected value.
/// (HBase: `Table.checkAndMutate(...).ifEquals`; Thrift2 `checkAndPut`.)
pub async fn check_and_put_when_equal(t: &dyn Target) {
    let tt = ab_table(t, "check_and_put_when_equal").await;
    put(&tt, vec![RowMutation::new("r").put_at("b", "ver", 1, "1")]).await;
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(
                RowMutation::new("r")
                    .put_at("b", "ver", 2, "2")
                    .put_at("b", "data", 2, "new"),
                "b",
                "ver",
                Some(Bytes::from_static(b"1")),
            ),
        )
        .await
        .unwrap();
    assert!(applied);
    assert_eq!(
        get_cells(&tt, Get::new("r")).await,
        vec![cell("b", "data", 2, "new"), cell("b", "ver", 2, "2")]
    );
}

/// The mutation is skipped when the value differs, and nothing is written.
pub async fn check_and_put_when_different(t: &dyn Target) {
    let tt = ab_table(t, "check_and_put_when_different").await;
    put(&tt, vec![RowMutation::new("r").put_at("b", "ver", 1, "1")]).await;
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(
                RowMutation::new("r").put_at("b", "data", 2, "new"),
                "b",
                "ver",
                Some(Bytes::from_static(b"0")),
            ),
        )
        .await
        .unwrap();
    assert!(!applied);
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("b", "ver", 1, "1")]);
}

/// Expecting absence passes for a missing column, creating the row.
/// (HBase: `checkAndMutate(...).ifNotExists()`; Thrift2 `checkAndPut` with
/// no value: "the value is expected to be absent".)
pub async fn check_absent_when_missing(t: &dyn Target) {
    let tt = ab_table(t, "check_absent_when_missing").await;
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(RowMutation::new("r").put_at("b", "lock", 1, "me"), "b", "lock", None),
        )
        .await
        .unwrap();
    assert!(applied);
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("b", "lock", 1, "me")]);
}

/// Expecting absence fails when the column is there.
pub async fn check_absent_when_present(t: &dyn Target) {
    let tt = ab_table(t, "check_absent_when_present").await;
    put(&tt, vec![RowMutation::new("r").put_at("b", "lock", 1, "them")]).await;
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(RowMutation::new("r").put_at("b", "lock", 2, "me"), "b", "lock", None),
        )
        .await
        .unwrap();
    assert!(!applied);
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("b", "lock", 1, "them")]);
}

/// A check can guard a delete. (Thrift2 IDL: `checkAndDelete`.)
pub async fn check_and_delete(t: &dyn Target) {
    let tt = ab_table(t, "check_and_delete").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("b", "state", 1, "done")
                .put_at("b", "data", 1, "x"),
        ],
    )
    .await;
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(
                RowMutation::new("r").delete_column("b", "data"),
                "b",
                "state",
                Some(Bytes::from_static(b"done")),
            ),
        )
        .await
        .unwrap();
    assert!(applied);
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("b", "state", 1, "done")]);
}

/// The check compares the newest version only.
/// (HBase: `CheckAndMutate` reads the column with one version.)
pub async fn check_compares_latest_version(t: &dyn Target) {
    let tt = ab_table(t, "check_compares_latest_version").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "old")
                .put_at("a", "q", 2, "new"),
        ],
    )
    .await;
    let check = async |expected: &'static [u8]| {
        t.store()
            .check_and_mutate(
                &tt.name,
                &CheckAndMutate::new(
                    RowMutation::new("r").put_at("a", "hit", 3, "x"),
                    "a",
                    "q",
                    Some(Bytes::from_static(expected)),
                ),
            )
            .await
            .unwrap()
    };
    assert!(!check(b"old").await);
    assert!(check(b"new").await);
}

/// A deleted column counts as absent for a check.
pub async fn check_absent_after_delete(t: &dyn Target) {
    let tt = ab_table(t, "check_absent_after_delete").await;
    put(&tt, vec![RowMutation::new("r").put_at("b", "lock", 1, "x")]).await;
    put(&tt, vec![RowMutation::new("r").delete_column("b", "lock")]).await;
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(RowMutation::new("r").put("b", "lock", "y"), "b", "lock", None),
        )
        .await
        .unwrap();
    assert!(applied);
}

// ---------------------------------------------------------------------------
// Where the backends used to disagree (issues 10 and 17)

/// An empty expected value means "absent or empty", like no value: a check
/// for `""` passes on an absent column and on an empty one, a check for
/// absence passes on an empty one, and neither passes on another value.
/// (`HRegion.checkAndMutateInternal`: `valueIsNull` is a null or empty
/// comparator value; then an empty result matches, and a cell matches when
/// its value is empty.)
pub async fn check_empty_means_absent_or_empty(t: &dyn Target) {
    let tt = ab_table(t, "check_empty_means_absent_or_empty").await;
    put(
        &tt,
        vec![
            RowMutation::new("empty").put_at("b", "q", 1, ""),
            RowMutation::new("full").put_at("b", "q", 1, "z"),
        ],
    )
    .await;
    let check = async |row: &'static str, expected: Option<Bytes>| {
        t.store()
            .check_and_mutate(
                &tt.name,
                &CheckAndMutate::new(RowMutation::new(row).put_at("b", "hit", 1, "x"), "b", "q", expected),
            )
            .await
            .unwrap()
    };
    assert!(check("absent", Some(Bytes::new())).await);
    assert!(check("empty", None).await);
    assert!(check("empty", Some(Bytes::new())).await);
    assert!(!check("full", Some(Bytes::new())).await);
    assert!(!check("full", None).await);
    assert_eq!(get_cells(&tt, Get::new("absent")).await, vec![cell("b", "hit", 1, "x")]);
    assert_eq!(get_cells(&tt, Get::new("full")).await, vec![cell("b", "q", 1, "z")]);
}

/// A passing check-and-mutate stamps its puts without a timestamp no older
/// than the checked cell, so a checked cell from the future does not hide
/// them. (`HRegion.checkAndMutateInternal`: `ts = max(now, cellTs)`,
/// "ensure write is not eclipsed", HBASE-14054; the same timestamp
/// overwrites.)
pub async fn check_and_mutate_put_not_older_than_checked(t: &dyn Target) {
    let tt = ab_table(t, "check_and_mutate_put_not_older_than_checked").await;
    let future = now_millis() + 3_600_000;
    put(&tt, vec![RowMutation::new("r").put_at("b", "q", future, "x")]).await;
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(
                RowMutation::new("r").put("b", "q", "y").put("b", "o", "z"),
                "b",
                "q",
                Some(Bytes::from_static(b"x")),
            ),
        )
        .await
        .unwrap();
    assert!(applied);
    assert_eq!(
        get_cells(&tt, Get::new("r")).await,
        vec![cell("b", "o", future, "z"), cell("b", "q", future, "y")]
    );
}

/// A check for absence guards deletes as well as puts, all applied at once:
/// how hmap's typed layer saves a new row of a versioned type, deleting its
/// `None` columns and replacing its dynamic families. (HBase:
/// `Table.checkAndMutate(row, family).qualifier(q).ifNotExists().thenMutate(RowMutations)`;
/// over Thrift2, `checkAndMutate` with the empty value, which HBase's region
/// reads as "absent", `HRegion.checkAndMutateInternal`.)
pub async fn check_absent_guards_deletes(t: &dyn Target) {
    let tt = ab_table(t, "check_absent_guards_deletes").await;
    // Leftovers of an earlier life of the row: an optional column, and an
    // entry of a dynamic family.
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "opt", 5, "stale")
                .put_at("b", "k1", 5, "x"),
        ],
    )
    .await;
    let save = |version: &'static str| {
        RowMutation::new("r")
            .delete_column_up_to("a", "opt", 10)
            .delete_family_up_to("b", 9)
            .put_at("b", "k2", 10, "y")
            .put_at("b", "ver", 10, version)
    };
    let applied = t
        .store()
        .check_and_mutate(&tt.name, &CheckAndMutate::new(save("1"), "b", "ver", None))
        .await
        .unwrap();
    assert!(applied);
    let saved = vec![cell("b", "k2", 10, "y"), cell("b", "ver", 10, "1")];
    assert_eq!(get_cells(&tt, Get::new("r")).await, saved);
    // Saved once: a second "new row" finds the version column and changes nothing.
    let applied = t
        .store()
        .check_and_mutate(&tt.name, &CheckAndMutate::new(save("2"), "b", "ver", None))
        .await
        .unwrap();
    assert!(!applied);
    assert_eq!(get_cells(&tt, Get::new("r")).await, saved);
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}
