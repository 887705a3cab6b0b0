//! A struct that declares a family the table does not have: reads say so,
//! as writes do, naming the table and the family, instead of reporting a
//! missing cell. On `MemoryStore`, or on a real HBase when `HMAP_THRIFT` is
//! set.

use std::sync::Arc;

use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::{RowMutation, Store, StoreError};
use hmap::{Error, HTable, Query, Table};

#[derive(HTable, Debug, PartialEq)]
#[hmap(table = "user", family(name = "i"), family(name = "x"))]
struct User {
    #[hmap(key)]
    id: String,
    #[hmap(family = "i")]
    name: String,
    #[hmap(family = "x")]
    score: u32,
}

/// The table as it exists: family `i` only, with the row `u1` in it.
async fn store() -> Arc<dyn Store> {
    let store = hmap_suite::test_store("missing_family").await;
    store
        .create_table(&TableSchema::new("user").family(FamilySchema::new("i")))
        .await
        .unwrap();
    let row = Table::<User, _>::new(&store).row_key("u1").unwrap();
    store
        .mutate("user", &[RowMutation::new(row).put("i", "name", "Ann")])
        .await
        .unwrap();
    store
}

fn assert_no_family_x(err: &Error) {
    assert!(
        matches!(err, Error::Store(StoreError::NoSuchFamily { table, family }) if table == "user" && family == "x"),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "table `user` has no column family `x`");
}

#[tokio::test]
async fn reads_name_the_missing_family_as_writes_do() {
    let users = Table::<User, _>::new(store().await);
    let put = users
        .put(&User {
            id: "u2".into(),
            name: "Bo".into(),
            score: 1,
        })
        .await
        .unwrap_err();
    assert_no_family_x(&put);

    assert_no_family_x(&users.get("u1").await.unwrap_err());
    assert_no_family_x(&users.get_many(["u1", "u2"]).await.unwrap_err());
    let scan = users.scan(Query::all()).await.expect_err("the scan is refused");
    assert_no_family_x(&scan);
}
