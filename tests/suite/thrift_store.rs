//! What only `ThriftStore` does: region splits, its connection pool, and its
//! errors when no gateway (or the wrong one) answers. The cases that need
//! HBase are `#[ignore]`d; `cargo test -- --include-ignored` runs them with
//! `HMAP_THRIFT` (and for one, `HMAP_THRIFT1`) set.

use std::collections::BTreeMap;
use std::time::Duration;

use hmap::HTable;
use hmap::blocking::Table;
use hmap::store::{Get, RowMutation, Scan, StoreError, ThriftConfig, ThriftStore};
use hmap::table::salt_split_keys;

#[derive(HTable, Debug, PartialEq)]
#[hmap(table = "reading", salt(buckets = 8, by = [sensor]), family(name = "r"))]
struct Reading {
    #[hmap(key)]
    sensor: u32,
    #[hmap(key)]
    at: i64,
    value: f64,
}

/// A versioned type with an optional column and a dynamic family: saving a
/// new one deletes under a check for absence.
#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "profile", family(name = "p"), family(name = "tag"))]
struct Profile {
    #[hmap(key)]
    id: String,
    #[hmap(family = "p")]
    nick: Option<String>,
    #[hmap(family = "tag", dynamic)]
    tags: BTreeMap<String, String>,
    #[hmap(family = "p", version)]
    version: u64,
}

/// A store on the gateway with tables under a prefix of the test's own,
/// emptied of any an earlier run left; panics without a gateway.
fn gateway(test: &str, pool_size: usize) -> hmap::blocking::Store<ThriftStore> {
    let mut config = ThriftConfig::new(hmap_suite::required_env("HMAP_THRIFT"));
    config.pool_size = pool_size;
    config.table_prefix = hmap_suite::test_table_prefix(&format!("hmap_thrift_store_{test}__"));
    let store = hmap::blocking::Store::new(ThriftStore::with_config(config));
    for table in store.list_tables().expect("list tables") {
        store.delete_table(&table).expect("delete a leftover table");
    }
    store
}

#[test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT=host:port"]
fn salted_table_is_pre_split_one_region_per_bucket() {
    let store = gateway("salted", 8);
    let readings = Table::<Reading, _>::new(&store);
    readings.create().expect("create");
    let mut expected = vec![bytes::Bytes::new()];
    expected.extend(salt_split_keys(Reading::key_schema()));
    assert_eq!(expected.len(), 8);
    assert_eq!(
        hmap::blocking::block_on(store.as_async().region_start_keys("reading")).expect("regions"),
        expected
    );

    // Rows land in every bucket and come back merged in key order.
    let rows: Vec<Reading> = (0..64)
        .map(|i| Reading {
            sensor: i % 16,
            at: i64::from(i),
            value: f64::from(i),
        })
        .collect();
    readings.put_many(&rows).expect("put");
    let keys: Vec<_> = store
        .scan("reading", &Scan::all())
        .expect("scan")
        .map(|r| r.expect("row").row)
        .collect();
    assert_eq!(keys.len(), 64);
    assert!(keys.windows(2).all(|w| w[0] < w[1]));
    store.delete_table("reading").expect("delete");
}

/// A salted table truncated keeps its regions (one per bucket), its
/// recorded key layout and its families; only the rows go. `describe`
/// returns the metadata hmap wrote, and the attributes HBase adds itself.
#[test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT=host:port"]
fn truncate_keeps_regions_and_the_key_layout() {
    let store = gateway("truncate", 2);
    let readings = Table::<Reading, _>::new(&store);
    readings.create().expect("create");
    let regions = hmap::blocking::block_on(store.as_async().region_start_keys("reading")).expect("regions");
    assert_eq!(regions.len(), 8);
    let rows: Vec<Reading> = (0..16)
        .map(|i| Reading {
            sensor: i,
            at: i64::from(i),
            value: f64::from(i),
        })
        .collect();
    readings.put_many(&rows).expect("put");
    let described = store.describe_table("reading").expect("describe");
    assert_eq!(described.key_layout(), Reading::table_schema().key_layout());
    // HBase 2.6 records these of its own on every table.
    assert_eq!(described.metadata.get("IS_META").map(String::as_str), Some("false"));
    assert!(described.metadata.contains_key("hbase.store.file-tracker.impl"));

    readings.truncate().expect("truncate");
    assert_eq!(store.scan("reading", &Scan::all()).expect("scan").count(), 0);
    assert_eq!(
        hmap::blocking::block_on(store.as_async().region_start_keys("reading")).expect("regions"),
        regions
    );
    assert_eq!(store.describe_table("reading").expect("describe"), described);
    readings.check_schema().expect("the table still fits");
    readings.put_many(&rows).expect("the table is enabled again");
    assert_eq!(store.scan("reading", &Scan::all()).expect("scan").count(), 16);
    readings.drop().expect("drop");
    assert!(!readings.exists().expect("exists"));
}

#[test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT=host:port"]
fn one_pooled_connection_serves_many_threads() {
    let single = gateway("pool", 1);
    single
        .create_table(&hmap::schema::TableSchema::new("t").family(hmap::schema::FamilySchema::new("f")))
        .expect("create");
    std::thread::scope(|s| {
        for t in 0..4 {
            let single = &single;
            s.spawn(move || {
                for i in 0..25 {
                    let row = format!("t{t}-{i:02}");
                    single
                        .mutate("t", &[RowMutation::new(row.clone()).put("f", "q", "v")])
                        .expect("put");
                    assert!(single.get("t", &Get::new(row)).expect("get").is_some());
                }
            });
        }
    });
    assert_eq!(single.scan("t", &Scan::all()).expect("scan").count(), 100);
    single.delete_table("t").expect("delete");
}

#[test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT1=host:port"]
fn a_thrift1_gateway_is_refused_by_ping() {
    let thrift1 = hmap_suite::required_env("HMAP_THRIFT1");
    let err = hmap::blocking::Store::new(ThriftStore::new(thrift1))
        .ping_blocking()
        .unwrap_err();
    assert!(matches!(err, StoreError::Connection { .. }), "{err:?}");
}

/// Needs no HBase: nothing listens on port 1.
#[test]
fn no_gateway_is_a_typed_connection_error() {
    let mut config = ThriftConfig::new("127.0.0.1:1");
    config.connect_timeout = Duration::from_secs(2);
    let store = hmap::blocking::Store::new(ThriftStore::with_config(config));
    let err = store.get("user", &Get::new("u1")).unwrap_err();
    match &err {
        StoreError::Connection { endpoint, message, .. } => {
            assert_eq!(endpoint, "127.0.0.1:1");
            assert!(message.contains("`user`"), "{message}");
        }
        other => panic!("expected a connection error, got {other:?}"),
    }
    assert!(err.is_transient());
    assert!(matches!(store.ping_blocking(), Err(StoreError::Connection { .. })));
}

/// Saving a new versioned row whose `Option` is `None` and whose dynamic
/// family is replaced: the check for absence guards deletes, which Thrift2's
/// `checkAndMutate` carries (it was refused with InvalidRequest).
#[test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT=host:port"]
fn a_new_versioned_row_with_deletes_saves() {
    let store = gateway("versioned", 2);
    let profiles = Table::<Profile, _>::new(&store);
    profiles.create().expect("create");
    let mut p = Profile {
        id: "u1".into(),
        nick: None,
        tags: BTreeMap::from([("lang".to_string(), "rust".to_string())]),
        version: 0,
    };
    profiles.save(&mut p).expect("save a new row");
    assert_eq!(p.version, 1);
    assert_eq!(profiles.get("u1").expect("get"), Some(p.clone()));
    p.nick = Some("ann".into());
    p.tags = BTreeMap::from([("os".to_string(), "linux".to_string())]);
    profiles.save(&mut p).expect("save again");
    assert_eq!(profiles.get("u1").expect("get"), Some(p.clone()));
    // A second "new" row of the same key is a conflict, not a silent overwrite.
    let mut again = Profile {
        version: 0,
        ..p.clone()
    };
    assert!(profiles.save(&mut again).is_err());
    store.delete_table("profile").expect("delete");
}

/// HBase replies to an increment with its cells sorted by column; each
/// value goes back to the column that asked for it, in the order asked.
#[test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT=host:port"]
fn increment_values_follow_the_request_order() {
    let store = gateway("increment", 2);
    store
        .create_table(
            &hmap::schema::TableSchema::new("t")
                .family(hmap::schema::FamilySchema::new("a"))
                .family(hmap::schema::FamilySchema::new("b")),
        )
        .expect("create");
    let op = hmap::store::Increment::new("r")
        .add("b", "y", 4)
        .add("a", "x", 3)
        .add("b", "w", -2);
    assert_eq!(store.increment("t", &op).expect("increment"), vec![4, 3, -2]);
    assert_eq!(store.increment("t", &op).expect("increment"), vec![8, 6, -4]);
    store.delete_table("t").expect("delete");
}

/// `ThriftStore::ping` through the blocking API.
trait PingBlocking {
    fn ping_blocking(&self) -> Result<(), StoreError>;
}

impl PingBlocking for hmap::blocking::Store<ThriftStore> {
    fn ping_blocking(&self) -> Result<(), StoreError> {
        hmap::blocking::block_on(self.as_async().ping())
    }
}
