//! NativeStore bootstrapped from ZooKeeper alone (the registry of clusters
//! before HBase 2.5): no bootstrap server, only the quorum HBase registers
//! itself in, as `HMAP_ZOOKEEPER=host:port` names it (`scripts/hbase/hbase
//! start` and `address` print it).
//!
//! The tests that need a real HBase are `#[ignore]`d; the others run
//! against fake ZooKeeper servers.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::native::{NativeConfig, NativeStore};
use hmap::store::{Get, RowMutation, Scan, Store, StoreError};
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;

/// A store that found the cluster through ZooKeeper only, its tables under `zk_`.
async fn connect() -> NativeStore {
    let quorum = hmap_suite::required_env("HMAP_ZOOKEEPER");
    let config = NativeConfig::zookeeper(&quorum)
        .table_prefix(hmap_suite::test_table_prefix("zk_"))
        .call_timeout(Duration::from_secs(30));
    assert!(config.bootstrap.is_empty(), "no RPC bootstrap server");
    NativeStore::connect(config)
        .await
        .unwrap_or_else(|e| panic!("HMAP_ZOOKEEPER={quorum} is set but HBase cannot be found there: {e}"))
}

#[tokio::test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_ZOOKEEPER=host:port (scripts/hbase/hbase address)"]
async fn a_table_round_trip_on_a_store_found_through_zookeeper() {
    let store = connect().await;
    let table = "round_trip";
    if store.table_exists(table).await.expect("exists") {
        store
            .delete_table(table)
            .await
            .expect("delete a table left by an earlier run");
    }
    store
        .create_table(&TableSchema::new(table).family(FamilySchema::new("f")))
        .await
        .expect("create through the master ZooKeeper names");
    let rows: Vec<_> = (0..20)
        .map(|i| RowMutation::new(format!("r{i:02}")).put("f", "q", format!("v{i}")))
        .collect();
    store.mutate(table, &rows).await.expect("put");
    let row = store.get(table, &Get::new("r07")).await.expect("get").expect("row r07");
    assert_eq!(row.value("f", "q").as_deref(), Some(&b"v7"[..]));
    assert!(store.get(table, &Get::new("nope")).await.expect("get").is_none());
    let scanned: Vec<_> = store
        .scan(table, &Scan::prefix("r1"))
        .await
        .expect("scan")
        .map(|row| row.expect("row").row)
        .collect()
        .await;
    let want: Vec<String> = (10..20).map(|i| format!("r{i}")).collect();
    assert_eq!(scanned, want);
    store.delete_table(table).await.expect("delete");
    assert!(!store.table_exists(table).await.expect("exists"));
}

#[tokio::test]
#[ignore = "needs a real HBase: HMAP_ZOOKEEPER and HMAP_NATIVE (scripts/hbase/hbase address prints both)"]
async fn zookeeper_and_client_meta_service_name_the_same_cluster() {
    let through_zookeeper = connect().await;
    let native = hmap_suite::required_env("HMAP_NATIVE");
    let through_rpc = NativeStore::connect(NativeConfig::new([native]))
        .await
        .expect("connect through ClientMetaService");
    let id = through_zookeeper.cluster_id().await.expect("hbaseid");
    assert_eq!(id, through_rpc.cluster_id().await.expect("GetClusterId"));
    assert_eq!(id.len(), 36, "a UUID: {id}");
}

#[tokio::test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_ZOOKEEPER=host:port (scripts/hbase/hbase address)"]
async fn a_wrong_parent_znode_is_named() {
    let quorum = hmap_suite::required_env("HMAP_ZOOKEEPER");
    let config = NativeConfig::zookeeper(&quorum)
        .znode_parent("/no-hbase-here")
        .call_timeout(Duration::from_secs(5));
    let started = Instant::now();
    let err = NativeStore::connect(config)
        .await
        .expect_err("no HBase under that parent");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    let message = err.to_string();
    assert!(
        matches!(err, StoreError::Connection { .. }) && message.contains("/no-hbase-here/hbaseid"),
        "{message}"
    );
}

#[tokio::test]
async fn a_zookeeper_that_never_answers_fails_connect_within_its_deadline() {
    // Accepts, reads the handshake, never answers.
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address").to_string();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut buf = [0u8; 64];
            let _ = stream.read(&mut buf).await;
            held.push(stream);
        }
    });
    let config = NativeConfig::zookeeper(&address).call_timeout(Duration::from_millis(400));
    let started = Instant::now();
    let err = NativeStore::connect(config).await.expect_err("silent ZooKeeper");
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(390) && elapsed < Duration::from_secs(2),
        "{elapsed:?}"
    );
    let message = err.to_string();
    assert!(
        err.is_transient() && message.contains("/hbase/hbaseid") && message.contains(&address),
        "{message}"
    );
}
