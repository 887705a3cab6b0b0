//! Conformance cases of altering a live table: adding, changing and deleting
//! a family, refusing a change that does not fit, and a family another
//! client changed.

use hmap::schema::{BloomType, Compression, FamilySchema};
use hmap::store::{FamilyChange, Get, RowMutation, Scan, StoreError};

use super::{Target, ab_table, cell, get_cells, keys, put, scan_keys, table};

/// Adding a family to a live table: it is described with its options,
/// takes writes, and the other families keep their cells. (HBase:
/// `Admin.addColumnFamily`; Thrift2 `addColumnFamily`.)
pub async fn alter_adds_a_family(t: &dyn Target) {
    let tt = ab_table(t, "alter_adds_a_family").await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 1, "old")]).await;
    let c = FamilySchema::new("c")
        .versions(4)
        .block_size(32_768)
        .bloom(BloomType::RowCol)
        .compression(Compression::Gz);
    t.store()
        .alter_table(&tt.name, &FamilyChange::Add(c.clone()))
        .await
        .unwrap();
    let described = t.store().describe_table(&tt.name).await.unwrap();
    let names: Vec<&str> = described.families.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(described.find_family(b"c"), Some(&c));
    put(
        &tt,
        vec![RowMutation::new("r").put_at("c", "q", 1, "1").put_at("c", "q", 2, "2")],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(5)).await,
        vec![cell("a", "q", 1, "old"), cell("c", "q", 2, "2"), cell("c", "q", 1, "1")]
    );
}

/// Changing a family's options keeps its cells; raising VERSIONS keeps
/// more versions of what is written afterwards. The table's regions reopen,
/// which flushes what was written before under the old VERSIONS. (HBase:
/// `Admin.modifyColumnFamily`, then `ReopenTableRegionsProcedure`.)
pub async fn alter_modifies_a_family(t: &dyn Target) {
    let tt = ab_table(t, "alter_modifies_a_family").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("b", "q", 1, "1")
                .put_at("b", "q", 2, "2")
                .put_at("a", "q", 1, "a1"),
        ],
    )
    .await;
    let wider = FamilySchema::new("b").versions(5).in_memory(true);
    t.store()
        .alter_table(&tt.name, &FamilyChange::Modify(wider.clone()))
        .await
        .unwrap();
    assert_eq!(
        t.store().describe_table(&tt.name).await.unwrap().find_family(b"b"),
        Some(&wider)
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").family("b").max_versions(5)).await,
        vec![cell("b", "q", 2, "2")]
    );
    put(
        &tt,
        vec![RowMutation::new("r").put_at("b", "q", 3, "3").put_at("b", "q", 4, "4")],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(5)).await,
        vec![
            cell("a", "q", 1, "a1"),
            cell("b", "q", 4, "4"),
            cell("b", "q", 3, "3"),
            cell("b", "q", 2, "2"),
        ]
    );
}

/// Deleting a family deletes its cells; rows that held nothing else are
/// gone from scans. (HBase: `Admin.deleteColumnFamily`.)
pub async fn alter_deletes_a_family(t: &dyn Target) {
    let tt = ab_table(t, "alter_deletes_a_family").await;
    put(
        &tt,
        vec![
            RowMutation::new("r1").put_at("a", "q", 1, "1").put_at("b", "q", 1, "x"),
            RowMutation::new("r2").put_at("b", "q", 1, "y"),
        ],
    )
    .await;
    let deleted = t.store().alter_table(&tt.name, &FamilyChange::Delete("b".into())).await;
    if t.framed_gateway() {
        assert!(matches!(deleted, Err(StoreError::InvalidRequest { .. })), "{deleted:?}");
        assert_eq!(get_cells(&tt, Get::new("r2")).await, vec![cell("b", "q", 1, "y")]);
        return;
    }
    deleted.unwrap();
    let names: Vec<String> = t
        .store()
        .describe_table(&tt.name)
        .await
        .unwrap()
        .families
        .into_iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(names, ["a"]);
    assert_eq!(scan_keys(&tt, Scan::all()).await, keys(&["r1"]));
    assert_eq!(get_cells(&tt, Get::new("r1")).await, vec![cell("a", "q", 1, "1")]);
    put(&tt, vec![RowMutation::new("r3").put_at("a", "q", 1, "3")]).await;
    assert_eq!(scan_keys(&tt, Scan::all()).await, keys(&["r1", "r3"]));
}

/// A change that does not fit the table is refused, naming the table, and
/// changes nothing: adding a family that exists, changing or deleting one
/// that does not, deleting the only family, an invalid option; on a missing
/// table, `TableNotFound`. (HBase's master refuses the same:
/// `InvalidFamilyOperationException`, `TableDescriptorChecker`; hmap checks
/// before the call, the same way on every backend.)
pub async fn alter_refuses_what_does_not_fit(t: &dyn Target) {
    let tt = table(t, "alter_refuses_what_does_not_fit", vec![FamilySchema::new("a")]).await;
    let refused = async |change: FamilyChange, why: &str| match t.store().alter_table(&tt.name, &change).await {
        Err(StoreError::InvalidSchema { table, reason }) => {
            assert_eq!(table, tt.name);
            assert!(reason.contains(why), "{reason}");
        }
        other => panic!("expected {change:?} to be refused, got {other:?}"),
    };
    refused(FamilyChange::Add(FamilySchema::new("a")), "exists already").await;
    refused(FamilyChange::Modify(FamilySchema::new("x")), "no family `x`").await;
    refused(FamilyChange::Delete("x".into()), "no family `x`").await;
    refused(FamilyChange::Delete("a".into()), "only family").await;
    refused(FamilyChange::Add(FamilySchema::new("c").versions(0)), "VERSIONS").await;
    let before = t.store().describe_table(&tt.name).await.unwrap();
    assert_eq!(before.families, vec![FamilySchema::new("a")]);
    let missing = format!("{}alter_refuses_what_does_not_fit_never_created", t.table_prefix());
    let _ = t.store().delete_table(&missing).await;
    let err = t
        .store()
        .alter_table(&missing, &FamilyChange::Add(FamilySchema::new("c")))
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::TableNotFound { ref table } if *table == missing),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// Where the backends used to disagree (issues 10 and 17)

/// A family another client added is writable and readable through a store
/// that had read the table before, and one it deleted is
/// [`StoreError::NoSuchFamily`] there, every time. (HBase checks families on
/// the region server: `NoSuchColumnFamilyException`.)
pub async fn family_changed_behind_the_store(t: &dyn Target) {
    let tt = ab_table(t, "family_changed_behind_the_store").await;
    let s = t.store();
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 1, "x")]).await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("a", "q", 1, "x")]);
    let other = t.other_client().unwrap_or(s);
    other
        .alter_table(&tt.name, &FamilyChange::Add(FamilySchema::new("m")))
        .await
        .unwrap();
    put(&tt, vec![RowMutation::new("r").put_at("m", "q", 1, "new")]).await;
    assert_eq!(
        get_cells(&tt, Get::new("r").family("m")).await,
        vec![cell("m", "q", 1, "new")]
    );
    if t.framed_gateway() {
        // A framed gateway cannot delete a family (see `framed_gateway`).
        return;
    }
    other
        .alter_table(&tt.name, &FamilyChange::Delete("b".into()))
        .await
        .unwrap();
    for attempt in 0..2 {
        match s
            .mutate(&tt.name, &[RowMutation::new("r").put_at("b", "q", 1, "gone")])
            .await
        {
            Err(StoreError::NoSuchFamily { ref table, ref family }) if *table == tt.name && family == "b" => {}
            other => panic!("put {attempt} to a deleted family: expected NoSuchFamily, got {other:?}"),
        }
    }
    assert_eq!(
        get_cells(&tt, Get::new("r")).await,
        vec![cell("a", "q", 1, "x"), cell("m", "q", 1, "new")]
    );
}
