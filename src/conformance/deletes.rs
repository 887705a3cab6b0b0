//! Conformance cases of deletes: of a version, a column, a family or a row,
//! the latest version or up to a timestamp, and how delete markers mask
//! puts.

use std::thread;

use bytes::Bytes;
use hmap::store::{CheckAndMutate, Get, RowMutation, Scan};

use super::{Target, ab_table, cell, get_cells, keys, put, scan_keys, scan_rows};

/// Deleting the latest version of a column reveals the one before.
/// (HBase: `Delete.addColumn` without timestamp; RG "Delete": "Delete the
/// latest version of the specified column".)
pub async fn delete_latest_reveals_previous(t: &dyn Target) {
    let tt = ab_table(t, "delete_latest_reveals_previous").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 100, "v1")
                .put_at("a", "q", 200, "v2"),
        ],
    )
    .await;
    put(&tt, vec![RowMutation::new("r").delete_latest("a", "q")]).await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)).await,
        vec![cell("a", "q", 100, "v1")]
    );
}

/// Deleting a column's only version leaves no cell.
/// (HBase: `HRegion.updateDeleteLatestVersionTimestamp` stamps the marker
/// with the newest version's timestamp.)
pub async fn delete_latest_of_single_version(t: &dyn Target) {
    let tt = ab_table(t, "delete_latest_of_single_version").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("b", "q", 100, "v")
                .put_at("b", "k", 100, "keep"),
        ],
    )
    .await;
    put(&tt, vec![RowMutation::new("r").delete_latest("b", "q")]).await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("b", "k", 100, "keep")]);
}

/// Deleting one version by timestamp leaves the others.
/// (HBase: `Delete.addColumn(family, qualifier, ts)`, type `Delete`.)
pub async fn delete_one_version(t: &dyn Target) {
    let tt = ab_table(t, "delete_one_version").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "v1")
                .put_at("a", "q", 2, "v2")
                .put_at("a", "q", 3, "v3"),
        ],
    )
    .await;
    put(&tt, vec![RowMutation::new("r").delete_version("a", "q", 2)]).await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)).await,
        vec![cell("a", "q", 3, "v3"), cell("a", "q", 1, "v1")]
    );
}

/// Deleting a column removes all its versions.
/// (HBase: `Delete.addColumns`, type `DeleteColumn`.)
pub async fn delete_column_all_versions(t: &dyn Target) {
    let tt = ab_table(t, "delete_column_all_versions").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "v1")
                .put_at("a", "q", 2, "v2")
                .put_at("a", "other", 1, "o"),
        ],
    )
    .await;
    put(&tt, vec![RowMutation::new("r").delete_column("a", "q")]).await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)).await,
        vec![cell("a", "other", 1, "o")]
    );
}

/// Deleting a column up to a timestamp keeps the newer versions.
/// (HBase: `Delete.addColumns(family, qualifier, ts)`: "all versions with a
/// timestamp less than or equal to ts".)
pub async fn delete_column_up_to(t: &dyn Target) {
    let tt = ab_table(t, "delete_column_up_to").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "v1")
                .put_at("a", "q", 2, "v2")
                .put_at("a", "q", 3, "v3"),
        ],
    )
    .await;
    put(&tt, vec![RowMutation::new("r").delete_column_up_to("a", "q", 2)]).await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)).await,
        vec![cell("a", "q", 3, "v3")]
    );
}

/// Deleting a family removes its cells and leaves the other families.
/// (HBase: `Delete.addFamily`, type `DeleteFamily`.)
pub async fn delete_family(t: &dyn Target) {
    let tt = ab_table(t, "delete_family").await;
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
    put(&tt, vec![RowMutation::new("r").delete_family("a")]).await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("b", "z", 1, "3")]);
}

/// Deleting a family up to a timestamp keeps newer cells.
/// (HBase: `Delete.addFamily(family, ts)`.)
pub async fn delete_family_up_to(t: &dyn Target) {
    let tt = ab_table(t, "delete_family_up_to").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "x", 5, "old")
                .put_at("a", "edge", 10, "at the marker")
                .put_at("a", "y", 15, "new"),
        ],
    )
    .await;
    put(&tt, vec![RowMutation::new("r").delete_family_up_to("a", 10)]).await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("a", "y", 15, "new")]);
}

/// Deleting a row removes every family's cells.
/// (HBase: `new Delete(row)`: a DeleteFamily marker for each family.)
pub async fn delete_row(t: &dyn Target) {
    let tt = ab_table(t, "delete_row").await;
    put(
        &tt,
        vec![
            RowMutation::new("r").put_at("a", "x", 1, "1").put_at("b", "y", 1, "2"),
            RowMutation::new("s").put_at("a", "x", 1, "keep"),
        ],
    )
    .await;
    put(&tt, vec![RowMutation::new("r").delete_row()]).await;
    assert_eq!(t.store().get(&tt.name, &Get::new("r")).await.unwrap(), None);
    assert_eq!(scan_keys(&tt, Scan::all()).await, keys(&["s"]));
}

/// A delete marker also hides a put written *after* it with an older
/// timestamp. (RG "Deletes mask Puts": "Deletes mask Puts, even Puts that
/// happened after the Delete was entered", until a major compaction.)
pub async fn delete_masks_later_older_put(t: &dyn Target) {
    let tt = ab_table(t, "delete_masks_later_older_put").await;
    put(&tt, vec![RowMutation::new("r").delete_column_up_to("a", "q", 100)]).await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 50, "hidden")]).await;
    assert_eq!(t.store().get(&tt.name, &Get::new("r")).await.unwrap(), None);
}

/// A put with a timestamp newer than the delete is visible.
/// (RG "Deletes mask Puts": only versions at or below the marker are masked.)
pub async fn newer_put_after_delete_visible(t: &dyn Target) {
    let tt = ab_table(t, "newer_put_after_delete_visible").await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 50, "old")]).await;
    put(&tt, vec![RowMutation::new("r").delete_column_up_to("a", "q", 100)]).await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 150, "new")]).await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)).await,
        vec![cell("a", "q", 150, "new")]
    );
}

/// A default-timestamp delete hides what is there and not a later
/// default-timestamp put (a later millisecond).
/// (RG "Deletes mask Puts": a put after the delete's time is visible.)
pub async fn delete_then_put_again(t: &dyn Target) {
    let tt = ab_table(t, "delete_then_put_again").await;
    put(&tt, vec![RowMutation::new("r").put("b", "q", "one")]).await;
    put(&tt, vec![RowMutation::new("r").delete_column("b", "q")]).await;
    // A later millisecond than the delete's.
    thread::sleep(std::time::Duration::from_millis(5));
    put(&tt, vec![RowMutation::new("r").put("b", "q", "two")]).await;
    let cells = get_cells(&tt, Get::new("r")).await;
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0].value, Bytes::from_static(b"two"));
}

/// Deleting from a row that does not exist is harmless.
/// (HBase: deletes are markers; no existence check.)
pub async fn delete_missing_row_harmless(t: &dyn Target) {
    let tt = ab_table(t, "delete_missing_row_harmless").await;
    put(&tt, vec![RowMutation::new("ghost").delete_row()]).await;
    put(&tt, vec![RowMutation::new("ghost2").delete_column("a", "q")]).await;
    assert_eq!(scan_rows(&tt, Scan::all()).await, vec![]);
}

/// One row mutation deletes one column and writes another, atomically.
/// (Thrift2 IDL: `mutateRow(TRowMutations)`, "atomically".)
pub async fn delete_and_put_in_one_mutation(t: &dyn Target) {
    let tt = ab_table(t, "delete_and_put_in_one_mutation").await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "old", 1, "x")]).await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .delete_column("a", "old")
                .put_at("a", "new", 2, "y"),
        ],
    )
    .await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("a", "new", 2, "y")]);
}

// ---------------------------------------------------------------------------
// Where the backends used to disagree (issues 10 and 17)

/// Two deletes of a column's latest version in one row mutation delete one
/// version: each resolves against the row as it was. (Each is its own
/// `Delete` in HBase's `RowMutations`; `HRegion.prepareDeleteTimestamps`
/// counts the versions to skip per `Delete`, before any is applied.)
pub async fn two_delete_latest_in_one_mutation(t: &dyn Target) {
    let tt = ab_table(t, "two_delete_latest_in_one_mutation").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "v1")
                .put_at("a", "q", 2, "v2")
                .put_at("a", "q", 3, "v3"),
        ],
    )
    .await;
    put(
        &tt,
        vec![RowMutation::new("r").delete_latest("a", "q").delete_latest("a", "q")],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)).await,
        vec![cell("a", "q", 2, "v2"), cell("a", "q", 1, "v1")]
    );
}

/// Every delete of a row mutation counts, also when a delete of the whole
/// family follows another delete of that family. (HBase's
/// `Delete.addFamily` clears the family's earlier deletes in the same
/// `Delete` message, so a client must not pack them into one; separate
/// `Delete`s of one `RowMutations` each count.)
pub async fn family_delete_after_deletes_of_its_family(t: &dyn Target) {
    let tt = ab_table(t, "family_delete_after_deletes_of_its_family").await;
    let rows = ["column", "family", "version"];
    let cells = |row: &'static str| {
        RowMutation::new(row)
            .put_at("a", "q", 1000, "x")
            .put_at("a", "p", 100, "old")
            .put_at("b", "q", 1000, "kept")
    };
    put(&tt, rows.iter().map(|r| cells(r)).collect()).await;
    put(
        &tt,
        vec![
            RowMutation::new("column")
                .delete_column_up_to("a", "q", 2000)
                .delete_family_up_to("a", 300),
            RowMutation::new("family")
                .delete_family_up_to("a", 2000)
                .delete_family_up_to("a", 300),
            RowMutation::new("version")
                .delete_version("a", "q", 1000)
                .delete_family_up_to("a", 300),
        ],
    )
    .await;
    for row in rows {
        assert_eq!(
            get_cells(&tt, Get::new(row).max_versions(3)).await,
            vec![cell("b", "q", 1000, "kept")],
            "row {row}"
        );
    }
    // One row alone, and under a check.
    put(&tt, vec![cells("alone"), cells("checked")]).await;
    put(
        &tt,
        vec![
            RowMutation::new("alone")
                .delete_family_up_to("a", 2000)
                .delete_family_up_to("a", 300),
        ],
    )
    .await;
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(
                RowMutation::new("checked")
                    .delete_version("a", "q", 1000)
                    .delete_family_up_to("a", 300),
                "b",
                "q",
                Some(Bytes::from_static(b"kept")),
            ),
        )
        .await
        .unwrap();
    assert!(applied);
    for row in ["alone", "checked"] {
        assert_eq!(
            get_cells(&tt, Get::new(row).max_versions(3)).await,
            vec![cell("b", "q", 1000, "kept")],
            "row {row}"
        );
    }
}
