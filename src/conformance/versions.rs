//! Conformance cases of versions: how many a read returns (the family's
//! VERSIONS, the read's own), which one is the latest, and time ranges.

use hmap::schema::FamilySchema;
use hmap::store::{Get, RowMutation, TimeRange};

use super::{Target, ab_table, cell, get_cells, put, table};

/// Reads return at most the family's VERSIONS, newest first, however many
/// are asked for. (RG "Versions": "max versions"; `ScanQueryMatcher` uses
/// `min(scan.getMaxVersions(), family.getMaxVersions())`.)
pub async fn versions_capped_by_family(t: &dyn Target) {
    let tt = ab_table(t, "versions_capped_by_family").await;
    let mut m = RowMutation::new("r");
    for ts in 1..=5 {
        m = m.put_at("a", "q", ts, format!("v{ts}"));
    }
    put(&tt, vec![m]).await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(10)).await,
        vec![
            cell("a", "q", 5, "v5"),
            cell("a", "q", 4, "v4"),
            cell("a", "q", 3, "v3")
        ]
    );
}

/// A get asks for fewer versions than the family keeps.
/// (HBase: `Get.readVersions`.)
pub async fn get_fewer_versions(t: &dyn Target) {
    let tt = ab_table(t, "get_fewer_versions").await;
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
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(2)).await,
        vec![cell("a", "q", 3, "v3"), cell("a", "q", 2, "v2")]
    );
}

/// By default a get returns the newest version only. (RG "Versions > Get":
/// "by default only the latest version is returned".)
pub async fn get_latest_by_default(t: &dyn Target) {
    let tt = ab_table(t, "get_latest_by_default").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "old")
                .put_at("a", "q", 2, "new"),
        ],
    )
    .await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("a", "q", 2, "new")]);
}

/// Two puts at the same timestamp leave one version: the later write.
/// (RG "Versions": "doing a put always creates a new version ... at the same
/// version overwrites"; column trackers skip `sameAsPreviousTSAndType`.)
pub async fn same_timestamp_overwrites(t: &dyn Target) {
    let tt = ab_table(t, "same_timestamp_overwrites").await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 7, "first")]).await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 7, "second")]).await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)).await,
        vec![cell("a", "q", 7, "second")]
    );
}

/// A put with an older timestamp does not become the latest version.
/// (RG "Versions": versions are sorted by timestamp, not by write order.)
pub async fn older_put_is_not_latest(t: &dyn Target) {
    let tt = ab_table(t, "older_put_is_not_latest").await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 200, "new")]).await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 100, "old")]).await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("a", "q", 200, "new")]);
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)).await,
        vec![cell("a", "q", 200, "new"), cell("a", "q", 100, "old")]
    );
}

/// A family kept at VERSIONS=1000 (the seeds' weibo inbox) returns a
/// thousand versions, newest first. (RG "Versions".)
pub async fn thousand_versions(t: &dyn Target) {
    let tt = table(t, "thousand_versions", vec![FamilySchema::new("i").versions(1000)]).await;
    let mut m = RowMutation::new("inbox");
    for ts in 1..=1100 {
        m = m.put_at("i", "sq", ts, format!("w{ts}"));
    }
    put(&tt, vec![m]).await;
    let cells = get_cells(&tt, Get::new("inbox").max_versions(1000)).await;
    assert_eq!(cells.len(), 1000);
    assert_eq!(cells[0], cell("i", "sq", 1100, "w1100"));
    assert_eq!(cells[999], cell("i", "sq", 101, "w101"));
    assert!(cells.windows(2).all(|w| w[0].timestamp > w[1].timestamp));
}

// ---------------------------------------------------------------------------
// Time ranges

/// A time range `[min, max)` includes min and excludes max.
/// (HBase: `TimeRange`, "minStamp inclusive, maxStamp exclusive"; Thrift2 `TTimeRange`.)
pub async fn time_range_is_half_open(t: &dyn Target) {
    let tt = ab_table(t, "time_range_is_half_open").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 10, "10")
                .put_at("a", "q", 20, "20")
                .put_at("a", "q", 30, "30"),
        ],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3).time_range(TimeRange::new(10, 30))).await,
        vec![cell("a", "q", 20, "20"), cell("a", "q", 10, "10")]
    );
}

/// Versions are counted inside the time range: the newest N in range.
/// (HBase: `UserScanQueryMatcher` skips cells outside the range before the
/// column tracker counts versions.)
pub async fn time_range_then_versions(t: &dyn Target) {
    let tt = ab_table(t, "time_range_then_versions").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 10, "10")
                .put_at("a", "q", 20, "20")
                .put_at("a", "q", 30, "30"),
        ],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").time_range(TimeRange::new(0, 25))).await,
        vec![cell("a", "q", 20, "20")]
    );
}

/// One exact timestamp reads that version only. (HBase: `Get.setTimestamp`.)
pub async fn exact_timestamp(t: &dyn Target) {
    let tt = ab_table(t, "exact_timestamp").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 10, "10")
                .put_at("a", "q", 20, "20"),
        ],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").time_range(TimeRange::at(10))).await,
        vec![cell("a", "q", 10, "10")]
    );
}

/// A range that holds no version reads as nothing.
pub async fn time_range_without_versions(t: &dyn Target) {
    let tt = ab_table(t, "time_range_without_versions").await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 10, "10")]).await;
    assert_eq!(
        t.store()
            .get(&tt.name, &Get::new("r").time_range(TimeRange::new(11, 20)))
            .await
            .unwrap(),
        None
    );
}

// ---------------------------------------------------------------------------
// Where the backends used to disagree (issues 10 and 17)

/// Versions beyond VERSIONS written in one row mutation are all there until
/// the mutation ends: twelve versions of a VERSIONS 1 column, written newest
/// first, then the newest deleted, shows the second newest. (HBase keeps
/// them in the memstore until a flush, which never splits a mutation; after
/// a flush it would show nothing, never the oldest.)
pub async fn surplus_versions_survive_the_mutation(t: &dyn Target) {
    let tt = ab_table(t, "surplus_versions_survive_the_mutation").await;
    let mut m = RowMutation::new("r");
    for ts in (1..=12).rev() {
        m = m.put_at("b", "q", ts, format!("v{ts}"));
    }
    put(&tt, vec![m]).await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("b", "q", 12, "v12")]);
    put(&tt, vec![RowMutation::new("r").delete_latest("b", "q")]).await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("b", "q", 11, "v11")]);
}
