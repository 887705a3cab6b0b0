//! Conformance cases of reads by row: a get's cells and their order, the
//! families and columns it chooses (a set), missing rows and columns, and
//! `get_many`'s answers in order.

use bytes::Bytes;
use hmap::store::{Cell, Column, Get, RowMutation, Scan};

use super::{Target, ab_table, cell, get_cells, put, scan_rows};

/// A row that was never written reads as nothing.
/// (HBase: `Result.isEmpty()` for a missing row; Thrift2 returns an empty TResult.)
pub async fn get_missing_row(t: &dyn Target) {
    let tt = ab_table(t, "get_missing_row").await;
    assert_eq!(t.store().get(&tt.name, &Get::new("nobody")).await.unwrap(), None);
}

/// Cells come sorted by family, then qualifier bytes.
/// (RG "Data Model > Sort Order"; `CellComparatorImpl`.)
pub async fn cells_sorted_by_family_and_qualifier(t: &dyn Target) {
    let tt = ab_table(t, "cells_sorted_by_family_and_qualifier").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("b", "z", 1, "5")
                .put_at("a", "y", 1, "3")
                .put_at("b", "a", 1, "4")
                .put_at("a", "Y", 1, "1")
                .put_at("a", "x", 1, "2"),
        ],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r")).await,
        vec![
            cell("a", "Y", 1, "1"),
            cell("a", "x", 1, "2"),
            cell("a", "y", 1, "3"),
            cell("b", "a", 1, "4"),
            cell("b", "z", 1, "5"),
        ]
    );
}

/// A get of one family returns only that family's cells.
/// (HBase: `Get.addFamily`; Thrift2 `TColumn` without qualifier.)
pub async fn get_one_family(t: &dyn Target) {
    let tt = ab_table(t, "get_one_family").await;
    put(
        &tt,
        vec![RowMutation::new("r").put_at("a", "x", 1, "1").put_at("b", "y", 1, "2")],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").family("b")).await,
        vec![cell("b", "y", 1, "2")]
    );
}

/// A get of chosen columns returns only those columns.
/// (HBase: `Get.addColumn`; Thrift2 `TColumn` with qualifier.)
pub async fn get_chosen_columns(t: &dyn Target) {
    let tt = ab_table(t, "get_chosen_columns").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "x", 1, "1")
                .put_at("a", "y", 1, "2")
                .put_at("b", "z", 1, "3"),
        ],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").column("a", "y").column("b", "z")).await,
        vec![cell("a", "y", 1, "2"), cell("b", "z", 1, "3")]
    );
}

/// A get selecting a row's columns that do not exist reads as nothing.
pub async fn get_absent_column(t: &dyn Target) {
    let tt = ab_table(t, "get_absent_column").await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "x", 1, "1")]).await;
    assert_eq!(
        t.store()
            .get(&tt.name, &Get::new("r").column("a", "nope"))
            .await
            .unwrap(),
        None
    );
}

/// `get_many` answers each get in order, `None` for missing rows, and a row
/// asked for twice twice. (Thrift2 IDL: `getMultiple` returns one TResult
/// per TGet, in order; `Table.get(List<Get>)` one `Result` per `Get`.)
pub async fn get_many_in_order(t: &dyn Target) {
    let tt = ab_table(t, "get_many_in_order").await;
    put(
        &tt,
        vec![
            RowMutation::new("r1").put_at("a", "q", 1, "1"),
            RowMutation::new("r3").put_at("a", "q", 1, "3"),
        ],
    )
    .await;
    let got = t
        .store()
        .get_many(
            &tt.name,
            &[Get::new("r3"), Get::new("r2"), Get::new("r1"), Get::new("r3")],
        )
        .await
        .unwrap();
    let values: Vec<Option<Vec<Cell>>> = got.into_iter().map(|r| r.map(|r| r.cells)).collect();
    assert_eq!(
        values,
        vec![
            Some(vec![cell("a", "q", 1, "3")]),
            None,
            Some(vec![cell("a", "q", 1, "1")]),
            Some(vec![cell("a", "q", 1, "3")])
        ]
    );
}

/// A `get_many` of many rows, more than a backend reads in one call,
/// answers every get in order: rows found, rows missing, rows asked for
/// twice far apart. (`Table.get(List<Get>)`: one `Result` per `Get`, in
/// order, however the client splits the batch.)
pub async fn get_many_of_many_rows_in_order(t: &dyn Target) {
    let tt = ab_table(t, "get_many_of_many_rows_in_order").await;
    let rows = (0..300)
        .filter(|i| i % 3 != 0)
        .map(|i| RowMutation::new(format!("r{i:04}")).put_at("b", "q", 1, format!("v{i}")))
        .collect();
    put(&tt, rows).await;
    // 0..300, then 299 down to 0 again: 600 gets, each row asked twice.
    let order: Vec<usize> = (0..300).chain((0..300).rev()).collect();
    let gets: Vec<Get> = order.iter().map(|i| Get::new(format!("r{i:04}"))).collect();
    let got = t.store().get_many(&tt.name, &gets).await.expect("get_many");
    assert_eq!(got.len(), gets.len());
    for (i, row) in order.iter().zip(&got) {
        let expected = (i % 3 != 0).then(|| Bytes::from(format!("v{i}")));
        assert_eq!(row.as_ref().and_then(|r| r.value("b", "q")), expected, "row r{i:04}");
        if let Some(row) = row {
            assert_eq!(row.row, format!("r{i:04}").as_bytes());
        }
    }
}

// ---------------------------------------------------------------------------
// Where the backends used to disagree (issues 10 and 17)

/// A column selection is a set: a whole family includes single columns of
/// it listed before or after, so `family("a").column("a", "r")` reads all
/// of `a`. (hmap's meaning, see `Column`. HBase's `Get.addColumn` after
/// `addFamily` narrows the family to that column, as its Thrift gateway
/// shows: `ThriftUtilities.getFromThrift` calls them in list order; the
/// request builders keep such pairs out of the list.)
pub async fn family_includes_its_named_columns(t: &dyn Target) {
    let tt = ab_table(t, "family_includes_its_named_columns").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "r", 1, "1")
                .put_at("a", "x", 1, "2")
                .put_at("b", "y", 1, "3"),
        ],
    )
    .await;
    let family_a = vec![cell("a", "r", 1, "1"), cell("a", "x", 1, "2")];
    assert_eq!(
        get_cells(&tt, Get::new("r").family("a").column("a", "r")).await,
        family_a
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").column("a", "r").family("a")).await,
        family_a
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").family("a").column("a", "r").column("b", "y")).await,
        [family_a.clone(), vec![cell("b", "y", 1, "3")]].concat()
    );
    let scanned = scan_rows(&tt, Scan::all().family("a").column("a", "r")).await;
    assert_eq!(scanned.len(), 1);
    assert_eq!(scanned[0].cells, family_a);
}

/// The same meaning for a request whose column list is built by hand:
/// `[Family(a), Qualifier(a, r)]` reads all of `a`. (A backend passes the
/// list through `hmap::store::selected_columns` before HBase sees it.)
pub async fn hand_built_columns_read_as_a_set(t: &dyn Target) {
    let tt = ab_table(t, "hand_built_columns_read_as_a_set").await;
    put(
        &tt,
        vec![RowMutation::new("r").put_at("a", "r", 1, "1").put_at("a", "x", 1, "2")],
    )
    .await;
    let mut get = Get::new("r");
    get.columns = vec![
        Column::Family(Bytes::from_static(b"a")),
        Column::Qualifier(Bytes::from_static(b"a"), Bytes::from_static(b"r")),
    ];
    let family_a = vec![cell("a", "r", 1, "1"), cell("a", "x", 1, "2")];
    assert_eq!(get_cells(&tt, get.clone()).await, family_a);
    let mut scan = Scan::all();
    scan.columns = get.columns;
    assert_eq!(
        scan_rows(&tt, scan)
            .await
            .into_iter()
            .flat_map(|r| r.cells)
            .collect::<Vec<_>>(),
        family_a
    );
}

/// A column named twice in a read is read once: its versions, as when it
/// is named once. (HBase's `Get.addColumn` keeps a family's qualifiers in
/// a set.)
pub async fn column_named_twice_reads_once(t: &dyn Target) {
    let tt = ab_table(t, "column_named_twice_reads_once").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "v1")
                .put_at("a", "q", 2, "v2")
                .put_at("a", "q", 3, "v3")
                .put_at("a", "other", 1, "o"),
        ],
    )
    .await;
    let versions = vec![
        cell("a", "q", 3, "v3"),
        cell("a", "q", 2, "v2"),
        cell("a", "q", 1, "v1"),
    ];
    assert_eq!(
        get_cells(&tt, Get::new("r").column("a", "q").column("a", "q").max_versions(3)).await,
        versions
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").column("a", "q").max_versions(3)).await,
        versions
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").column("a", "q").column("a", "q")).await,
        vec![cell("a", "q", 3, "v3")]
    );
}
