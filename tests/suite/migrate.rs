//! Schema migrations (issue 15): a struct's families change, `migration`
//! shows the HBase shell statements, `migrate` applies them, and migrating
//! again does nothing. On `MemoryStore`, or on a real HBase when
//! `HMAP_THRIFT` is set.

use std::collections::BTreeMap;

use hmap::migrate::{MigrateOptions, Note, Step};
use hmap::schema::TTL_FOREVER;
use hmap::store::StoreError;
use hmap::{Error, HTable, Table};

/// The inbox as first shipped.
#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "inbox", family(name = "cf"))]
struct InboxV1 {
    #[hmap(key)]
    uid: String,
    #[hmap(family = "cf", dynamic)]
    posts: BTreeMap<String, String>,
}

/// The inbox a release later: a thousand versions, a month's TTL, and a
/// family for metadata.
#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(
    table = "inbox",
    family(name = "cf", versions = 1000, ttl = 2_592_000),
    family(name = "meta")
)]
struct InboxV2 {
    #[hmap(key)]
    uid: String,
    #[hmap(family = "cf", dynamic)]
    posts: BTreeMap<String, String>,
    #[hmap(family = "meta")]
    owner: Option<String>,
}

/// The same table keyed by another layout.
#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "inbox", family(name = "cf"))]
struct InboxById {
    #[hmap(key)]
    id: u64,
    #[hmap(family = "cf", dynamic)]
    posts: BTreeMap<String, String>,
}

/// Salted in four buckets.
#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "events", salt(buckets = 4, by = [uid]), family(name = "e"))]
struct Event {
    #[hmap(key)]
    uid: String,
    #[hmap(key)]
    seq: u32,
    #[hmap(family = "e")]
    kind: String,
}

fn inbox_v1() -> InboxV1 {
    InboxV1 {
        uid: "u1".into(),
        posts: BTreeMap::from([("p1".into(), "hello".into())]),
    }
}

#[tokio::test]
async fn a_new_release_adds_a_family_raises_versions_and_adds_a_ttl() {
    let store = hmap_suite::test_store("migrate_release").await;
    let v1: Table<InboxV1, _> = Table::new(store.clone());
    v1.create().await.unwrap();
    v1.put(&inbox_v1()).await.unwrap();

    let v2: Table<InboxV2, _> = Table::new(store.clone());
    assert!(matches!(v2.check_schema().await, Err(Error::SchemaMismatch { .. })));
    let plan = v2.migration(&MigrateOptions::new()).await.unwrap();
    assert_eq!(
        plan.shell_statements(),
        [
            "alter 'inbox', {NAME => 'cf', VERSIONS => 1000, TTL => 2592000}",
            "alter 'inbox', {NAME => 'meta', VERSIONS => 1}",
        ]
    );
    assert!(plan.notes().is_empty(), "{plan}");
    let applied = v2.migrate().await.unwrap();
    assert_eq!(applied, plan);

    let live = store.describe_table("inbox").await.unwrap();
    let cf = live.find_family(b"cf").unwrap();
    assert_eq!((cf.versions, cf.ttl_secs), (1000, 2_592_000));
    assert_eq!(live.find_family(b"meta").unwrap().ttl_secs, TTL_FOREVER);
    v2.check_schema().await.unwrap();
    // The rows written before are still there, read through the new struct.
    let read = v2.get("u1".to_string()).await.unwrap().unwrap();
    assert_eq!(read.posts, inbox_v1().posts);
    assert_eq!(read.owner, None);
    // Migrating again does nothing.
    assert!(v2.migration(&MigrateOptions::new()).await.unwrap().is_empty());
    assert!(v2.migrate().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_family_the_struct_dropped_is_kept_unless_dropping_is_asked_for() {
    let store = hmap_suite::test_store("migrate_drop").await;
    let v2: Table<InboxV2, _> = Table::new(store.clone());
    v2.create().await.unwrap();
    let v1: Table<InboxV1, _> = Table::new(store.clone());

    // The old struct reads the new table, minus a family: kept, and said.
    let kept = v1.migration(&MigrateOptions::new()).await.unwrap();
    assert_eq!(
        kept.shell_statements(),
        ["alter 'inbox', {NAME => 'cf', VERSIONS => 1, TTL => 'FOREVER'}"]
    );
    assert!(
        kept.to_string()
            .contains("# family `meta` is in the table only; dropping it deletes its cells"),
        "{kept}"
    );
    let dropping = v1.migration(&MigrateOptions::new().drop_families(true)).await.unwrap();
    assert_eq!(dropping.steps().last(), Some(&Step::DropFamily("meta".into())));
    assert_eq!(
        dropping.shell_statements().last().map(String::as_str),
        Some("alter 'inbox', 'delete' => 'meta'")
    );
    dropping.apply(&store).await.unwrap();
    let names: Vec<String> = store
        .describe_table("inbox")
        .await
        .unwrap()
        .families
        .into_iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(names, ["cf"]);
    assert!(
        v1.migration(&MigrateOptions::new().drop_families(true))
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_missing_table_is_created() {
    let store = hmap_suite::test_store("migrate_create").await;
    let v1: Table<InboxV1, _> = Table::new(store.clone());
    let plan = v1.migration(&MigrateOptions::new()).await.unwrap();
    assert_eq!(plan.steps().len(), 1);
    assert!(
        plan.shell_statements()[0]
            .starts_with("create 'inbox', {NAME => 'cf', VERSIONS => 1}, METADATA => {'hmap.key' => "),
        "{plan}"
    );
    v1.migrate().await.unwrap();
    assert!(v1.exists().await.unwrap());
    v1.check_schema().await.unwrap();
    assert!(v1.migrate().await.unwrap().is_empty());
}

#[tokio::test]
async fn another_key_layout_blocks_the_migration() {
    let store = hmap_suite::test_store("migrate_layout").await;
    let v1: Table<InboxV1, _> = Table::new(store.clone());
    v1.create().await.unwrap();
    let by_id: Table<InboxById, _> = Table::new(store.clone());
    let plan = by_id.migration(&MigrateOptions::new()).await.unwrap();
    assert!(plan.is_blocked());
    match by_id.migrate().await {
        Err(Error::MigrationBlocked { table, diff }) => {
            assert_eq!(table, "inbox");
            assert!(diff.to_string().contains("another key layout"), "{diff}");
        }
        other => panic!("expected the migration to be blocked, got {other:?}"),
    }
    // Nothing changed: the first struct still fits.
    v1.check_schema().await.unwrap();
}

#[tokio::test]
async fn a_salted_table_without_its_bucket_splits_is_reported() {
    let store = hmap_suite::test_store("migrate_splits").await;
    // Created by hand, unsplit, with the struct's families and key layout.
    let mut unsplit = Event::table_schema();
    unsplit.split_keys.clear();
    store.create_table(&unsplit).await.unwrap();
    let events: Table<Event, _> = Table::new(store.clone());
    let plan = events.migration(&MigrateOptions::new()).await.unwrap();
    assert!(plan.is_empty(), "{plan}");
    match plan.notes() {
        [Note::MissingSplits { missing }] => assert_eq!(missing.len(), 3),
        other => panic!("expected the missing splits to be reported, got {other:?}"),
    }
    assert!(plan.to_string().contains("share regions"), "{plan}");

    // Created by hmap, split at its buckets: nothing to report.
    store.delete_table("events").await.unwrap();
    events.create().await.unwrap();
    let plan = events.migration(&MigrateOptions::new()).await.unwrap();
    assert!(plan.is_empty() && plan.notes().is_empty(), "{plan}");
}

#[tokio::test]
async fn a_change_the_backend_refuses_is_a_typed_error() {
    let store = hmap_suite::test_store("migrate_refused").await;
    let v1: Table<InboxV1, _> = Table::new(store.clone());
    v1.create().await.unwrap();
    let v2: Table<InboxV2, _> = Table::new(store.clone());
    let plan = v2.migration(&MigrateOptions::new()).await.unwrap();
    plan.apply(&store).await.unwrap();
    // The same plan again: its family exists now.
    match plan.apply(&store).await {
        Err(Error::Store(StoreError::InvalidSchema { table, reason })) => {
            assert_eq!(table, "inbox");
            assert!(reason.contains("family `meta` exists already"), "{reason}");
        }
        other => panic!("expected the stale plan to be refused, got {other:?}"),
    }
}
