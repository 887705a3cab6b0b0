//! Conformance cases of expiry: a family's TTL hides old cells, and its
//! MIN_VERSIONS keeps some past it.

use hmap::schema::FamilySchema;
use hmap::store::{Get, RowMutation, Scan};

use super::{Target, cell, get_cells, keys, now_millis, put, scan_keys, scan_rows, table};

/// Cells older than the family's TTL are not returned; fresh ones are.
/// (RG "Time To Live (TTL)": "expired rows ... are not returned".)
pub async fn ttl_hides_expired(t: &dyn Target) {
    let tt = table(t, "ttl_hides_expired", vec![FamilySchema::new("t").ttl_secs(60)]).await;
    let now = now_millis();
    put(
        &tt,
        vec![
            RowMutation::new("old").put_at("t", "q", now - 3_600_000, "stale"),
            RowMutation::new("new").put_at("t", "q", now, "fresh"),
        ],
    )
    .await;
    assert_eq!(t.store().get(&tt.name, &Get::new("old")).await.unwrap(), None);
    assert_eq!(
        get_cells(&tt, Get::new("new")).await,
        vec![cell("t", "q", now, "fresh")]
    );
    assert_eq!(scan_keys(&tt, Scan::all()).await, keys(&["new"]));
}

/// With MIN_VERSIONS, the newest versions outlive the TTL.
/// (RG "Minimum Number of Versions": "keep at least MIN_VERSIONS ... even if
/// older than TTL"; `ScanWildcardColumnTracker.checkVersion`.) A read that
/// names the column gets one expired version more, until a major
/// compaction: see `min_versions_named_column_keeps_one_expired`.
pub async fn min_versions_outlive_ttl(t: &dyn Target) {
    let tt = table(
        t,
        "min_versions_outlive_ttl",
        vec![FamilySchema::new("t").versions(5).min_versions(1).ttl_secs(60)],
    )
    .await;
    let now = now_millis();
    put(
        &tt,
        vec![RowMutation::new("r").put_at("t", "q", now - 7_200_000, "older").put_at(
            "t",
            "q",
            now - 3_600_000,
            "newest",
        )],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(5)).await,
        vec![cell("t", "q", now - 3_600_000, "newest")]
    );
}

/// Fresh versions count towards MIN_VERSIONS: with MIN_VERSIONS 2 and one
/// fresh version, one expired version is still returned, not two.
/// (`ScanWildcardColumnTracker.checkVersion`: keep if `count <= minVersions
/// || !isExpired(ts)`.)
pub async fn min_versions_count_fresh_versions(t: &dyn Target) {
    let tt = table(
        t,
        "min_versions_count_fresh_versions",
        vec![FamilySchema::new("t").versions(5).min_versions(2).ttl_secs(60)],
    )
    .await;
    let now = now_millis();
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("t", "q", now, "fresh")
                .put_at("t", "q", now - 3_600_000, "old1")
                .put_at("t", "q", now - 7_200_000, "old2"),
        ],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(5)).await,
        vec![cell("t", "q", now, "fresh"), cell("t", "q", now - 3_600_000, "old1")]
    );
}

// ---------------------------------------------------------------------------
// Where the backends used to disagree (issues 10 and 17)

/// With TTL and MIN_VERSIONS, a read that names the column returns one
/// expired version beyond MIN_VERSIONS; a read of the whole family does
/// not. (`ExplicitColumnTracker.checkVersions` includes the version at which
/// `count >= minVersions && isExpired(ts)` and then moves to the next
/// column, where `ScanWildcardColumnTracker.checkVersion` drops it; a major
/// compaction, which reads like the wildcard tracker, removes it for good.)
pub async fn min_versions_named_column_keeps_one_expired(t: &dyn Target) {
    let tt = table(
        t,
        "min_versions_named_column_keeps_one_expired",
        vec![FamilySchema::new("t").versions(5).min_versions(1).ttl_secs(60)],
    )
    .await;
    let now = now_millis();
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("t", "q", now, "fresh")
                .put_at("t", "q", now - 3_600_000, "old1")
                .put_at("t", "q", now - 7_200_000, "old2"),
            RowMutation::new("s")
                .put_at("t", "q", now - 3_600_000, "old1")
                .put_at("t", "q", now - 7_200_000, "old2"),
        ],
    )
    .await;
    let fresh_and_one = vec![cell("t", "q", now, "fresh"), cell("t", "q", now - 3_600_000, "old1")];
    assert_eq!(
        get_cells(&tt, Get::new("r").column("t", "q").max_versions(3)).await,
        fresh_and_one
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").family("t").max_versions(3)).await,
        vec![cell("t", "q", now, "fresh")]
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)).await,
        vec![cell("t", "q", now, "fresh")]
    );
    // Only expired versions: MIN_VERSIONS of them either way.
    assert_eq!(
        get_cells(&tt, Get::new("s").column("t", "q").max_versions(3)).await,
        vec![cell("t", "q", now - 3_600_000, "old1")]
    );
    let scanned = scan_rows(&tt, Scan::all().column("t", "q").max_versions(3)).await;
    assert_eq!(scanned[0].cells, fresh_and_one);
}
