//! The store conformance suite against a real HBase through its original
//! Thrift gateway (Thrift1, `hbase thrift start`; `scripts/hbase/hbase
//! start` runs one next to the Thrift2 gateways and prints its address as
//! `HMAP_THRIFT1`), on [`Thrift1Store`](hmap::store::Thrift1Store).
//!
//! The cases Thrift1 cannot express are listed, with the feature that
//! stops each, in `hmap_suite::conformance::THRIFT1_SKIPS`: their tests
//! check that the store refuses that feature with `StoreError::Unsupported`
//! and print that they were skipped. Every other case runs as on any
//! backend.

use hmap_suite::conformance::{CASES, THRIFT1_SKIPS, Thrift1Target};

/// The Thrift1 gateway under test; panics without one.
async fn target() -> Thrift1Target {
    Thrift1Target::from_env("HMAP_THRIFT1", "t1_conformance_", |_| {}).await
}

hmap_suite::for_each_case!(
    hmap_suite::thrift1_cases,
    target,
    "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT1=host:port"
);

/// Needs no HBase: every skipped case is a case of the suite, listed once.
#[test]
fn skipped_cases_are_cases_of_the_suite() {
    for (i, (case, feature)) in THRIFT1_SKIPS.iter().enumerate() {
        assert!(CASES.contains(case), "THRIFT1_SKIPS lists `{case}`, which is no case");
        assert!(!feature.is_empty());
        assert!(
            THRIFT1_SKIPS[..i].iter().all(|(c, _)| c != case),
            "THRIFT1_SKIPS lists `{case}` twice"
        );
    }
}

/// Each store against the other's gateway: `ping` fails at once with an
/// error that names the store the gateway needs.
#[tokio::test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT and HMAP_THRIFT1"]
async fn each_store_names_the_other_for_the_other_gateway() {
    use hmap::store::{StoreError, Thrift1Store, ThriftStore};
    let thrift2 = hmap_suite::required_env("HMAP_THRIFT");
    let thrift1 = hmap_suite::required_env("HMAP_THRIFT1");
    match Thrift1Store::new(thrift2.as_str()).ping().await {
        Err(StoreError::Connection { message, .. }) => {
            assert!(
                message.contains("server type 2") && message.contains("`ThriftStore`"),
                "{message}"
            )
        }
        other => panic!("expected a connection error, got {other:?}"),
    }
    match ThriftStore::new(thrift1.as_str()).ping().await {
        Err(StoreError::Connection { message, .. }) => {
            assert!(
                message.contains("server type 1") && message.contains("`Thrift1Store`"),
                "{message}"
            )
        }
        other => panic!("expected a connection error, got {other:?}"),
    }
}

/// Each store against the other's gateway, its first call not a `ping`:
/// the same error naming the store the gateway needs, not the gateway's
/// bare "Invalid method name".
#[tokio::test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT and HMAP_THRIFT1"]
async fn a_first_call_on_the_other_gateway_names_the_store_it_needs() {
    use hmap::store::{Store, StoreError, Thrift1Store, ThriftStore};
    let thrift2 = hmap_suite::required_env("HMAP_THRIFT");
    let thrift1 = hmap_suite::required_env("HMAP_THRIFT1");
    match Thrift1Store::new(thrift2.as_str()).list_tables().await {
        Err(StoreError::Connection { message, .. }) => assert!(
            message.contains("not a Thrift1 gateway")
                && message.contains("getTableNames")
                && message.contains("`ThriftStore`"),
            "{message}"
        ),
        other => panic!("expected a connection error, got {other:?}"),
    }
    match ThriftStore::new(thrift1.as_str()).list_tables().await {
        Err(StoreError::Connection { message, .. }) => assert!(
            message.contains("not a Thrift2 gateway") && message.contains("`Thrift1Store`"),
            "{message}"
        ),
        other => panic!("expected a connection error, got {other:?}"),
    }
}

/// Without `split_rows`, a row whose versions need several Thrift1 calls is
/// refused and writes nothing; with it, the row is written.
#[tokio::test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT1=host:port"]
async fn a_row_needing_several_calls_is_refused_unless_split() {
    use hmap::schema::{FamilySchema, TableSchema};
    use hmap::store::{Get, RowMutation, Store, StoreError, Thrift1Store, thrift1_unsupported};
    let address = hmap_suite::required_env("HMAP_THRIFT1");
    let strict = Thrift1Store::new(address.as_str());
    let table = hmap_suite::test_table_prefix("t1_split_rows");
    if strict.table_exists(&table).await.unwrap() {
        strict.delete_table(&table).await.unwrap();
    }
    strict
        .create_table(&TableSchema::new(table.clone()).family(FamilySchema::new("f").versions(3)))
        .await
        .unwrap();
    let rows = [
        RowMutation::new("a").put_at("f", "q", 1, "x"),
        RowMutation::new("b")
            .put_at("f", "q", 1, "v1")
            .put_at("f", "q", 2, "v2"),
    ];
    match strict.mutate(&table, &rows).await {
        Err(StoreError::Unsupported { feature, .. }) => assert_eq!(feature, thrift1_unsupported::SEVERAL_TIMESTAMPS),
        other => panic!("expected Unsupported, got {other:?}"),
    }
    assert_eq!(
        strict.get(&table, &Get::new("a")).await.unwrap(),
        None,
        "nothing written"
    );
    let split = strict.clone().split_rows(true);
    split.mutate(&table, &rows).await.unwrap();
    let b = split
        .get(&table, &Get::new("b").column("f", "q").max_versions(3))
        .await
        .unwrap()
        .expect("row b");
    let stamps: Vec<i64> = b.cells.iter().map(|c| c.timestamp).collect();
    assert_eq!(stamps, [2, 1]);
    strict.delete_table(&table).await.unwrap();
}

/// A typed table on Thrift1: `Table::create` records the key layout in the
/// table's metadata, which Thrift1 cannot carry; the table is created
/// without it (other metadata would be refused), and rows written through
/// the typed layer read back.
#[tokio::test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT1=host:port"]
async fn a_typed_table_is_created_and_used_without_its_key_layout() {
    use hmap::schema::TableSchema;
    use hmap::store::{Store, StoreError, Thrift1Store, ThriftConfig, thrift1_unsupported};

    #[derive(hmap::HTable, Debug, PartialEq)]
    #[hmap(table = "t1_typed_sale", family(name = "s"))]
    struct Sale {
        #[hmap(key)]
        user: String,
        #[hmap(key)]
        seq: u32,
        item: String,
        quantity: u32,
    }

    let mut config = ThriftConfig::new(hmap_suite::required_env("HMAP_THRIFT1"));
    config.table_prefix = hmap_suite::test_table_prefix("");
    let store = Thrift1Store::with_config(config).split_rows(true);
    let sales = hmap::Table::<Sale, _>::new(store.clone());
    if store.table_exists("t1_typed_sale").await.unwrap() {
        store.delete_table("t1_typed_sale").await.unwrap();
    }
    sales.create().await.expect("created without the key layout");
    let live = store.describe_table("t1_typed_sale").await.unwrap();
    assert_eq!(live.key_layout(), None);
    let sale = Sale {
        user: "u1".into(),
        seq: 7,
        item: "tea".into(),
        quantity: 2,
    };
    sales.put(&sale).await.unwrap();
    assert_eq!(sales.get(("u1", 7u32)).await.unwrap(), Some(sale));
    store.delete_table("t1_typed_sale").await.unwrap();

    // Metadata of the caller's own is refused, and nothing is created.
    let declared = TableSchema::new("t1_typed_other")
        .family(hmap::schema::FamilySchema::new("f"))
        .metadata("team", "x");
    match store.create_table(&declared).await {
        Err(StoreError::Unsupported { feature, .. }) => assert_eq!(feature, thrift1_unsupported::METADATA),
        other => panic!("expected Unsupported, got {other:?}"),
    }
    assert!(!store.table_exists("t1_typed_other").await.unwrap());
}
