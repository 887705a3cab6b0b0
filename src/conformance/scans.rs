//! Conformance cases of scans: ranges, prefixes, reversed scans, limits and
//! batch sizes, chosen columns, time ranges and versions, and the scanner
//! itself (what it reads, its release when dropped, its end).

use bytes::Bytes;
use futures_util::StreamExt;
use hmap::store::{RowMutation, RowResult, Scan, TimeRange};

use super::{Target, ab_table, cell, keys, numbered_rows, put, scan_keys, scan_rows};

/// A full scan returns every row in key order, each with its cells.
/// (RG "Scans"; rows sorted by key.)
pub async fn scan_all_in_order(t: &dyn Target) {
    let tt = ab_table(t, "scan_all_in_order").await;
    put(
        &tt,
        vec![
            RowMutation::new("c").put_at("a", "q", 1, "3"),
            RowMutation::new("a").put_at("a", "q", 1, "1").put_at("b", "z", 1, "1b"),
            RowMutation::new("b").put_at("a", "q", 1, "2"),
        ],
    )
    .await;
    let rows = scan_rows(&tt, Scan::all()).await;
    assert_eq!(
        rows,
        vec![
            RowResult::new(
                Bytes::from_static(b"a"),
                vec![cell("a", "q", 1, "1"), cell("b", "z", 1, "1b")]
            ),
            RowResult::new(Bytes::from_static(b"b"), vec![cell("a", "q", 1, "2")]),
            RowResult::new(Bytes::from_static(b"c"), vec![cell("a", "q", 1, "3")]),
        ]
    );
}

/// Start row is inclusive, stop row exclusive.
/// (HBase: `Scan.withStartRow` inclusive, `withStopRow` exclusive by default.)
pub async fn scan_range_bounds(t: &dyn Target) {
    let tt = ab_table(t, "scan_range_bounds").await;
    numbered_rows(&tt, 6).await;
    assert_eq!(
        scan_keys(&tt, Scan::range("r001", "r004")).await,
        keys(&["r001", "r002", "r003"])
    );
    assert_eq!(scan_keys(&tt, Scan::range("r004", "")).await, keys(&["r004", "r005"]));
}

/// A prefix scan returns exactly the rows that start with the prefix: a
/// partial row scan. (HBase: `Scan.setRowPrefixFilter`.)
pub async fn scan_prefix(t: &dyn Target) {
    let tt = ab_table(t, "scan_prefix").await;
    put(
        &tt,
        ["u1", "u1_a", "u1_b", "u10", "u2", "u0"]
            .iter()
            .map(|k| RowMutation::new(*k).put_at("a", "q", 1, "v"))
            .collect(),
    )
    .await;
    assert_eq!(scan_keys(&tt, Scan::prefix("u1_")).await, keys(&["u1_a", "u1_b"]));
    assert_eq!(
        scan_keys(&tt, Scan::prefix("u1")).await,
        keys(&["u1", "u10", "u1_a", "u1_b"])
    );
}

/// A prefix ending in 0xFF bytes still bounds the scan correctly.
/// (HBase: `ClientUtil.calculateTheClosestNextRowKeyForPrefix` skips 0xFF.)
pub async fn scan_prefix_with_ff(t: &dyn Target) {
    let tt = ab_table(t, "scan_prefix_with_ff").await;
    let rows: [&[u8]; 5] = [b"a\xff", b"a\xff\x00", b"a\xff\xff", b"b", b"a\xfe"];
    put(
        &tt,
        rows.iter()
            .map(|k| RowMutation::new(Bytes::copy_from_slice(k)).put_at("a", "q", 1, "v"))
            .collect(),
    )
    .await;
    let got = scan_keys(&tt, Scan::prefix(Bytes::from_static(b"a\xff"))).await;
    let expected: Vec<Bytes> = [&b"a\xff"[..], b"a\xff\x00", b"a\xff\xff"]
        .iter()
        .map(|k| Bytes::copy_from_slice(k))
        .collect();
    assert_eq!(got, expected);
}

/// A reversed scan returns rows last first.
/// (HBase: `Scan.setReversed`; Thrift2 `TScan.reversed`.)
pub async fn scan_reversed(t: &dyn Target) {
    let tt = ab_table(t, "scan_reversed").await;
    numbered_rows(&tt, 4).await;
    assert_eq!(
        scan_keys(&tt, Scan::all().reversed()).await,
        keys(&["r003", "r002", "r001", "r000"])
    );
}

/// A reversed scan over a range keeps the range's bounds (start inclusive,
/// stop exclusive) and reads it last first.
pub async fn scan_reversed_range(t: &dyn Target) {
    let tt = ab_table(t, "scan_reversed_range").await;
    numbered_rows(&tt, 6).await;
    assert_eq!(
        scan_keys(&tt, Scan::range("r001", "r004").reversed()).await,
        keys(&["r003", "r002", "r001"])
    );
}

/// A reversed prefix scan returns the prefix's rows last first: the newest
/// first when the key ends in a timestamp.
pub async fn scan_reversed_prefix(t: &dyn Target) {
    let tt = ab_table(t, "scan_reversed_prefix").await;
    put(
        &tt,
        ["p1", "p1_1", "p1_2", "p2_1", "p0"]
            .iter()
            .map(|k| RowMutation::new(*k).put_at("a", "q", 1, "v"))
            .collect(),
    )
    .await;
    assert_eq!(
        scan_keys(&tt, Scan::prefix("p1").reversed()).await,
        keys(&["p1_2", "p1_1", "p1"])
    );
}

/// A limit stops the scan after that many rows.
/// (HBase: `Scan.setLimit`; Thrift2 `TScan.limit`.)
pub async fn scan_limit(t: &dyn Target) {
    let tt = ab_table(t, "scan_limit").await;
    numbered_rows(&tt, 10).await;
    assert_eq!(
        scan_keys(&tt, Scan::all().limit(3)).await,
        keys(&["r000", "r001", "r002"])
    );
    assert_eq!(
        scan_keys(&tt, Scan::all().reversed().limit(2)).await,
        keys(&["r009", "r008"])
    );
}

/// Small batch sizes return the same rows as one big batch, and so do
/// batches sized by bytes, however small the budget.
/// (HBase: `Scan.setCaching` and `setMaxResultSize` change round trips, not
/// results.)
pub async fn scan_batch_sizes_agree(t: &dyn Target) {
    let tt = ab_table(t, "scan_batch_sizes_agree").await;
    numbered_rows(&tt, 25).await;
    let all = scan_keys(&tt, Scan::all()).await;
    assert_eq!(all.len(), 25);
    for batch in [1, 2, 7, 25, 1000] {
        assert_eq!(
            scan_keys(&tt, Scan::all().batch_size(batch)).await,
            all,
            "batch {batch}"
        );
        assert_eq!(
            scan_keys(&tt, Scan::all().batch_size(batch).limit(11)).await,
            all[..11].to_vec()
        );
    }
    for bytes in [1, 40, 100, 1 << 20] {
        assert_eq!(
            scan_keys(&tt, Scan::all().batch_bytes(bytes)).await,
            all,
            "{bytes} bytes"
        );
        assert_eq!(
            scan_keys(&tt, Scan::all().batch_bytes(bytes).limit(11).reversed()).await,
            all.iter().rev().take(11).cloned().collect::<Vec<_>>(),
            "{bytes} bytes, reversed"
        );
    }
}

/// A scan of chosen columns returns only them, and skips rows that have none.
/// (HBase: `Scan.addColumn`; rows with no matching cell are not returned.)
pub async fn scan_chosen_columns(t: &dyn Target) {
    let tt = ab_table(t, "scan_chosen_columns").await;
    put(
        &tt,
        vec![
            RowMutation::new("r1").put_at("a", "x", 1, "1").put_at("b", "y", 1, "2"),
            RowMutation::new("r2").put_at("a", "x", 1, "3"),
            RowMutation::new("r3").put_at("b", "y", 1, "4"),
        ],
    )
    .await;
    let rows = scan_rows(&tt, Scan::all().column("b", "y")).await;
    assert_eq!(
        rows,
        vec![
            RowResult::new(Bytes::from_static(b"r1"), vec![cell("b", "y", 1, "2")]),
            RowResult::new(Bytes::from_static(b"r3"), vec![cell("b", "y", 1, "4")]),
        ]
    );
}

/// A scan with a time range returns only cells in range, and skips rows
/// with none. (HBase: `Scan.setTimeRange`.)
pub async fn scan_time_range(t: &dyn Target) {
    let tt = ab_table(t, "scan_time_range").await;
    put(
        &tt,
        vec![
            RowMutation::new("r1").put_at("a", "q", 10, "early"),
            RowMutation::new("r2")
                .put_at("a", "q", 20, "mid")
                .put_at("a", "q", 30, "late"),
        ],
    )
    .await;
    let rows = scan_rows(&tt, Scan::all().time_range(TimeRange::new(15, 25))).await;
    assert_eq!(
        rows,
        vec![RowResult::new(
            Bytes::from_static(b"r2"),
            vec![cell("a", "q", 20, "mid")]
        )]
    );
}

/// A scan returns several versions per column when asked.
/// (HBase: `Scan.readVersions`; Thrift2 `TScan.maxVersions`.)
pub async fn scan_max_versions(t: &dyn Target) {
    let tt = ab_table(t, "scan_max_versions").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "1")
                .put_at("a", "q", 2, "2")
                .put_at("a", "q", 3, "3"),
        ],
    )
    .await;
    let rows = scan_rows(&tt, Scan::all().max_versions(2)).await;
    assert_eq!(rows[0].cells, vec![cell("a", "q", 3, "3"), cell("a", "q", 2, "2")]);
}

/// Deleted rows do not appear in scans.
pub async fn scan_skips_deleted_rows(t: &dyn Target) {
    let tt = ab_table(t, "scan_skips_deleted_rows").await;
    numbered_rows(&tt, 4).await;
    put(
        &tt,
        vec![
            RowMutation::new("r001").delete_row(),
            RowMutation::new("r002").delete_family("b"),
        ],
    )
    .await;
    assert_eq!(scan_keys(&tt, Scan::all()).await, keys(&["r000", "r003"]));
}

/// Scanning an empty table, or an empty range, yields nothing.
pub async fn scan_empty(t: &dyn Target) {
    let tt = ab_table(t, "scan_empty").await;
    assert_eq!(scan_rows(&tt, Scan::all()).await, vec![]);
    numbered_rows(&tt, 3).await;
    assert_eq!(scan_rows(&tt, Scan::range("x", "y")).await, vec![]);
    assert_eq!(scan_rows(&tt, Scan::prefix("zzz")).await, vec![]);
}

/// A scanner reads the table as it was when it was opened: rows written
/// while it runs, past its first batch, are not returned.
/// (HBase: a region scanner reads at the MVCC read point of its opening,
/// `HRegion.RegionScannerImpl`; one region here.)
pub async fn scanner_reads_at_open(t: &dyn Target) {
    let tt = ab_table(t, "scanner_reads_at_open").await;
    numbered_rows(&tt, 4).await;
    let mut scanner = t.store().scan(&tt.name, &Scan::all().batch_size(1)).await.unwrap();
    let first = scanner.next().await.unwrap().unwrap();
    assert_eq!(first.row, Bytes::from_static(b"r000"));
    put(&tt, vec![RowMutation::new("r002a").put_at("b", "q", 1, "late")]).await;
    let rest: Vec<Bytes> = scanner.map(|r| r.unwrap().row).collect().await;
    assert_eq!(rest, keys(&["r001", "r002", "r003"]));
}

/// Dropping a scanner before its end releases it: at once in memory, within
/// moments on a server (the scanner's task closes it when it sees the
/// stream gone). (Thrift2 IDL: `closeScanner`.)
pub async fn scanner_released_on_drop(t: &dyn Target) {
    let tt = ab_table(t, "scanner_released_on_drop").await;
    numbered_rows(&tt, 5).await;
    let before = t.open_scanners();
    {
        let mut scanner = t.store().scan(&tt.name, &Scan::all().batch_size(2)).await.unwrap();
        assert!(scanner.next().await.is_some());
        if let (Some(b), Some(during)) = (before, t.open_scanners()) {
            assert_eq!(during, b + 1);
        }
    }
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while t.open_scanners() != before && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(t.open_scanners(), before);
}

/// A scanner asked for more after its last row keeps answering none (a
/// `Stream` that ended stays ended). (Java client: `ResultScanner.next()`
/// returns null after the end, every time.)
pub async fn scanner_ends_for_good(t: &dyn Target) {
    let tt = ab_table(t, "scanner_ends_for_good").await;
    numbered_rows(&tt, 3).await;
    let mut scanner = t.store().scan(&tt.name, &Scan::all().batch_size(2)).await.unwrap();
    let mut rows = 0;
    while let Some(row) = scanner.next().await {
        row.unwrap();
        rows += 1;
    }
    assert_eq!(rows, 3);
    assert!(scanner.next().await.is_none());
    assert!(scanner.next().await.is_none());
}

// ---------------------------------------------------------------------------
// Where the backends used to disagree (issues 10 and 17)

/// A range is half-open: a stop equal to the start reads nothing, forward
/// and reversed, as does a stop below the start. (hmap's meaning, that of
/// HBase's `Scan.withStopRow`. HBase's Thrift gateway sets the stop with the
/// deprecated `Scan.setStopRow`, which turns an equal start and stop into a
/// one-row "get scan" (`includeStopRow`): a backend must not send such a
/// scan, see `Scan::is_empty_range`.)
pub async fn scan_range_start_equals_stop(t: &dyn Target) {
    let tt = ab_table(t, "scan_range_start_equals_stop").await;
    put(
        &tt,
        ["a", "b", "b\0", "c"]
            .iter()
            .map(|k| RowMutation::new(*k).put_at("a", "q", 1, "v"))
            .collect(),
    )
    .await;
    assert_eq!(scan_keys(&tt, Scan::range("b", "b")).await, keys(&[]));
    assert_eq!(scan_keys(&tt, Scan::range("b", "b").reversed()).await, keys(&[]));
    assert_eq!(scan_keys(&tt, Scan::range("c", "b")).await, keys(&[]));
    assert_eq!(scan_keys(&tt, Scan::range("c", "b").reversed()).await, keys(&[]));
    assert_eq!(scan_keys(&tt, Scan::range("b", "b\0")).await, keys(&["b"]));
    assert_eq!(scan_keys(&tt, Scan::range("b", "b\0").reversed()).await, keys(&["b"]));
}
