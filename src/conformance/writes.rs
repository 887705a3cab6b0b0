//! Conformance cases of writes: a put reads back as written, stamped with
//! the server's time when it names none; a batch is applied row by row in
//! order, or not at all when a row is refused, by `mutate` as by a
//! `Loader`, however large; empty and binary bytes are kept.

use bytes::Bytes;
use hmap::store::{Cell, Get, LoadBatch, Loader, RowMutation, Scan, StoreError};

use super::{Target, ab_table, cell, get_cells, now_millis, put, scan_keys, scan_rows};

/// A put cell reads back exactly: family, qualifier, timestamp and value.
/// (RG "Data Model": a cell is {row, column, version} -> value.)
pub async fn put_then_get(t: &dyn Target) {
    let tt = ab_table(t, "put_then_get").await;
    put(&tt, vec![RowMutation::new("r1").put_at("a", "name", 100, "Ann")]).await;
    let row = t.store().get(&tt.name, &Get::new("r1")).await.unwrap().unwrap();
    assert_eq!(row.row, Bytes::from_static(b"r1"));
    assert_eq!(row.cells, vec![cell("a", "name", 100, "Ann")]);
}

/// Without a timestamp, a put is stamped with the server's current time in
/// milliseconds, the same for every cell of the mutation.
/// (RG "Versions": "the version is the current time in milliseconds";
/// `HRegion.doMiniBatchMutate` stamps a batch with one `now`.)
pub async fn put_default_timestamp_is_now(t: &dyn Target) {
    let tt = ab_table(t, "put_default_timestamp_is_now").await;
    let before = now_millis();
    put(&tt, vec![RowMutation::new("r").put("a", "x", "1").put("b", "y", "2")]).await;
    let after = now_millis();
    let cells = get_cells(&tt, Get::new("r")).await;
    assert_eq!(cells.len(), 2);
    assert_eq!(cells[0].timestamp, cells[1].timestamp);
    // Allow for a server clock a second apart from ours.
    assert!(
        before - 1000 <= cells[0].timestamp && cells[0].timestamp <= after + 1000,
        "{before} <= {} <= {after}",
        cells[0].timestamp
    );
}

/// A batch with a refused row writes none of its rows.
/// (hmap's contract: every row is checked before any is written.)
pub async fn refused_batch_writes_nothing(t: &dyn Target) {
    let tt = ab_table(t, "refused_batch_writes_nothing").await;
    let err = t
        .store()
        .mutate(
            &tt.name,
            &[
                RowMutation::new("good").put_at("a", "q", 1, "v"),
                RowMutation::new("bad").put_at("zz", "q", 1, "v"),
            ],
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NoSuchFamily { .. }), "{err}");
    assert_eq!(scan_rows(&tt, Scan::all()).await, vec![]);
}

/// A batch applies its rows in order: of two puts to one cell at one
/// timestamp the later wins, a delete row removes what earlier rows wrote,
/// and a row mixing puts and deletes is applied as a whole.
/// (RG "Versions": a put at an existing timestamp overwrites it;
/// `Table.batch` leaves the order of two actions on one row undefined, so a
/// backend must not send them in one batch.)
pub async fn batch_applies_rows_in_order(t: &dyn Target) {
    let tt = ab_table(t, "batch_applies_rows_in_order").await;
    put(
        &tt,
        vec![
            RowMutation::new("r1").put_at("a", "q", 1, "first"),
            RowMutation::new("r2")
                .put_at("a", "q", 1, "x")
                .put_at("a", "q", 2, "x2"),
            RowMutation::new("r1").put_at("a", "q", 1, "second"),
            RowMutation::new("r2").delete_version("a", "q", 2),
            RowMutation::new("r4").delete_row(),
            RowMutation::new("r3")
                .put_at("a", "q", 1, "m")
                .put_at("b", "q", 1, "n")
                .delete_family_up_to("b", 1),
            RowMutation::new("r5"),
        ],
    )
    .await;
    let rows = scan_rows(&tt, Scan::all().max_versions(3)).await;
    let got: Vec<(Bytes, Vec<Cell>)> = rows.into_iter().map(|r| (r.row, r.cells)).collect();
    assert_eq!(
        got,
        vec![
            (Bytes::from("r1"), vec![cell("a", "q", 1, "second")]),
            (Bytes::from("r2"), vec![cell("a", "q", 1, "x")]),
            (Bytes::from("r3"), vec![cell("a", "q", 1, "m")]),
        ]
    );
}

/// A [`Loader`] writes what `mutate` writes for the same rows: in batches
/// of its row budget (here 4 rows), a repeated row's puts in order (the later of two at
/// one timestamp wins), rows without puts write nothing, binary bytes
/// intact, and puts without a timestamp at the server's current time, one
/// per row. (hmap's contract for `Store::load`; `Table.batch` leaves the
/// order of two actions on one row undefined, so a batch must not hold
/// both.)
pub async fn loader_writes_rows_as_mutate_does(t: &dyn Target) {
    let tt = ab_table(t, "loader_writes_rows_as_mutate_does").await;
    let before = now_millis();
    let mut loader = Loader::new(t.store(), tt.name.clone()).max_rows(4);
    let binary: Vec<u8> = (0..=255).collect();
    for i in 0..7 {
        loader
            .row(format!("r{i}"))
            .put_at("a", "q", 1, format!("v{i}"))
            .put_at("b", &binary[..], 1, &binary[..])
            .end()
            .await
            .expect("load a row");
    }
    loader
        .row("r1")
        .put_at("a", "q", 1, "again")
        .end()
        .await
        .expect("load a row");
    // One batch of 4: r3 twice, apart (the second must be sent after the first).
    loader
        .row("r3")
        .put_at("a", "q", 1, "x")
        .end()
        .await
        .expect("load a row");
    loader.row("empty").end().await.expect("load a row");
    loader
        .row("r3")
        .put_at("a", "q", 1, "y")
        .end()
        .await
        .expect("load a row");
    loader
        .row("now")
        .put("a", "x", "1")
        .put("b", "y", "2")
        .end()
        .await
        .expect("load a row");
    assert_eq!(loader.finish().await.expect("finish the load"), 11);
    let after = now_millis();

    let rows = scan_rows(&tt, Scan::all()).await;
    let keys: Vec<&[u8]> = rows.iter().map(|r| &r.row[..]).collect();
    assert_eq!(keys, [&b"now"[..], b"r0", b"r1", b"r2", b"r3", b"r4", b"r5", b"r6"]);
    let value = |row: &str| {
        let r = rows.iter().find(|r| r.row == row.as_bytes()).expect("the row");
        (r.value("a", "q"), r.value("b", &binary[..]))
    };
    let binary = Bytes::from(binary.clone());
    assert_eq!(value("r0"), (Some(Bytes::from("v0")), Some(binary.clone())));
    assert_eq!(value("r1").0, Some(Bytes::from("again")));
    assert_eq!(value("r3").0, Some(Bytes::from("y")));
    assert_eq!(value("r6"), (Some(Bytes::from("v6")), Some(binary)));
    let now = &rows[0].cells;
    assert_eq!(now.len(), 2);
    assert_eq!(now[0].timestamp, now[1].timestamp);
    // Allow for a server clock a second apart from ours.
    assert!(
        before - 1000 <= now[0].timestamp && now[0].timestamp <= after + 1000,
        "{before} <= {} <= {after}",
        now[0].timestamp
    );
}

/// A load batch with a refused row writes none of its rows, and the error
/// names what is wrong: an unknown family, a negative timestamp, a value
/// over the cell size limit, an empty row key. (As `mutate`:
/// `refused_batch_writes_nothing`, `negative_timestamp_rejected`,
/// `oversized_value_rejected`, `empty_row_rejected`.)
pub async fn refused_load_writes_nothing(t: &dyn Target) {
    let tt = ab_table(t, "refused_load_writes_nothing").await;
    let limit = t.max_value_size();
    let oversized = vec![0u8; limit + 1];
    let mut batch = LoadBatch::new();
    batch.row("good").put_at("a", "q", 1, "v");
    for (bad, expected) in [
        (0, "NoSuchFamily"),
        (1, "NegativeTimestamp"),
        (2, "CellTooLarge"),
        (3, "InvalidRow"),
    ] {
        let mut refused = batch.clone();
        match bad {
            0 => refused.row("bad").put_at("zz", "q", 1, "v"),
            1 => refused.row("bad").put_at("a", "q", -1, "v"),
            2 => refused.row("bad").put("a", "q", &oversized),
            _ => refused.row("").put("a", "q", "v"),
        };
        let err = t.store().load(&tt.name, &refused).await.unwrap_err();
        let kind = match err {
            StoreError::NoSuchFamily { .. } => "NoSuchFamily",
            StoreError::NegativeTimestamp { timestamp: -1, .. } => "NegativeTimestamp",
            StoreError::CellTooLarge { size, limit: l, .. } if size > limit && l == limit => "CellTooLarge",
            StoreError::InvalidRow { .. } => "InvalidRow",
            _ => "another error",
        };
        assert_eq!(kind, expected, "{err}");
        assert_eq!(scan_rows(&tt, Scan::all()).await, vec![]);
    }
    t.store().load(&tt.name, &batch).await.expect("load the good row");
    assert_eq!(get_cells(&tt, Get::new("good")).await, vec![cell("a", "q", 1, "v")]);
}

/// A `mutate`, and a load, of more bytes than one request may carry are
/// written whole: 6 MiB of rows each, where a framed gateway takes frames of
/// 2 MiB (`hbase.regionserver.thrift.framed.max_frame_size_in_mb`) and a
/// gateway reads each call whole into its heap. (HBase's own client splits
/// a batch into requests of at most 4 MiB:
/// `hbase.client.max.perrequest.heapsize`.)
pub async fn large_writes_are_written_whole(t: &dyn Target) {
    let tt = ab_table(t, "large_writes_are_written_whole").await;
    let value = vec![b'v'; 100 * 1024];
    let rows = (0..60)
        .map(|i| RowMutation::new(format!("m{i:03}")).put_at("b", "q", 1, value.clone()))
        .collect();
    put(&tt, rows).await;
    let mut loader = Loader::new(t.store(), tt.name.clone())
        .max_rows(usize::MAX)
        .max_bytes(usize::MAX);
    for i in 0..60 {
        loader
            .row(format!("l{i:03}"))
            .put_at("b", "q", 1, &value)
            .end()
            .await
            .expect("load a row");
    }
    assert_eq!(loader.finish().await.expect("finish the load"), 60);
    let rows = scan_rows(&tt, Scan::all()).await;
    assert_eq!(rows.len(), 120);
    for row in &rows {
        assert_eq!(row.value("b", "q").as_deref(), Some(&value[..]), "row {:?}", row.row);
    }
}

/// Empty qualifiers and empty values are legal.
/// (RG "Data Model": a qualifier is any byte array, possibly empty.)
pub async fn empty_qualifier_and_value(t: &dyn Target) {
    let tt = ab_table(t, "empty_qualifier_and_value").await;
    put(
        &tt,
        vec![RowMutation::new("r").put_at("a", "", 1, "v").put_at("a", "e", 1, "")],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r")).await,
        vec![cell("a", "", 1, "v"), cell("a", "e", 1, "")]
    );
}

/// Rows, qualifiers and values are raw bytes, 0x00 and 0xFF included, and
/// rows sort by unsigned bytes. (RG "Rows": "sorted lexicographically by row
/// key", `Bytes.compareTo` is unsigned.)
pub async fn binary_bytes_round_trip(t: &dyn Target) {
    let tt = ab_table(t, "binary_bytes_round_trip").await;
    let row_ff = Bytes::from_static(b"\xff\x00r");
    let row_00 = Bytes::from_static(b"\x00\xffr");
    let qualifier = Bytes::from_static(b"\x00q\xff");
    let value = Bytes::from_static(b"\xff\x00\x01");
    put(
        &tt,
        vec![
            RowMutation::new(row_ff.clone()).put_at("a", qualifier.clone(), 1, value.clone()),
            RowMutation::new(row_00.clone()).put_at("a", "q", 1, "v"),
        ],
    )
    .await;
    let got = get_cells(&tt, Get::new(row_ff.clone())).await;
    assert_eq!(got, vec![Cell::new(Bytes::from_static(b"a"), qualifier, 1, value)]);
    assert_eq!(scan_keys(&tt, Scan::all()).await, vec![row_00, row_ff]);
}

// ---------------------------------------------------------------------------
// Where the backends used to disagree (issues 10 and 17)

/// A row named several times in one `mutate` gets its changes in the order
/// given, as if each were a call of its own, whatever their kinds: a later
/// put at the same timestamp wins, and a delete of the latest version
/// sees the puts before it. (hmap's contract for `Store::mutate`, kept on
/// every backend; HBase's `Table.batch` leaves the order of two actions on
/// one row undefined, so a backend that batches must not send them
/// together.)
pub async fn repeated_row_in_one_batch_applies_in_order(t: &dyn Target) {
    let tt = ab_table(t, "repeated_row_in_one_batch_applies_in_order").await;
    put(
        &tt,
        vec![
            RowMutation::new("r").put_at("a", "q", 300, "first"),
            RowMutation::new("r")
                .put_at("a", "q", 500, "second")
                .delete_column_up_to("b", "z", 500),
            RowMutation::new("other").put_at("a", "q", 1, "x"),
            RowMutation::new("r").put_at("a", "q", 500, "third"),
        ],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").column("a", "q").max_versions(3)).await,
        vec![cell("a", "q", 500, "third"), cell("a", "q", 300, "first")]
    );
    put(&tt, vec![RowMutation::new("s").put_at("a", "q", 100, "old")]).await;
    put(
        &tt,
        vec![
            RowMutation::new("s").put_at("a", "q", 200, "new"),
            RowMutation::new("s").delete_latest("a", "q"),
        ],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("s").column("a", "q").max_versions(3)).await,
        vec![cell("a", "q", 100, "old")]
    );
    assert_eq!(get_cells(&tt, Get::new("other")).await, vec![cell("a", "q", 1, "x")]);
}
