//! Per-call options (`CallOptions`) on a real HBase, through NativeStore and
//! the Thrift2 gateway: calls in a scope and through a wrapped store are
//! answered, and a scan keeps the timeout it was opened with for its later
//! fetches, whatever the scope it is read in.

use std::sync::Arc;
use std::time::Duration;

use futures_util::TryStreamExt;
use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::{CallOptions, Get, RowMutation, Scan, Store};

async fn stores() -> Vec<(&'static str, Arc<dyn Store>)> {
    let prefix = hmap_suite::test_table_prefix("hmap_test_call_options__");
    let native = hmap_suite::native_store_for(&hmap_suite::required_env("HMAP_NATIVE"), &prefix)
        .await
        .expect("HMAP_NATIVE answers");
    let thrift = hmap_suite::store_for(Some(&hmap_suite::required_env("HMAP_THRIFT")), &prefix)
        .await
        .expect("HMAP_THRIFT answers");
    vec![("native", native), ("thrift", thrift)]
}

#[tokio::test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_NATIVE and HMAP_THRIFT"]
async fn call_options_carry_calls_and_scans_through_every_gateway() {
    for (name, store) in stores().await {
        let table = "t";
        if store.table_exists(table).await.unwrap() {
            store.delete_table(table).await.unwrap();
        }
        store
            .create_table(&TableSchema::new(table).family(FamilySchema::new("f")))
            .await
            .unwrap();
        let rows: Vec<RowMutation> = (0..50)
            .map(|i| RowMutation::new(format!("r{i:02}")).put("f", "q", "v"))
            .collect();
        store.mutate(table, &rows).await.unwrap();
        // (A timeout shorter than the server's answer fails the call: the
        // fake-server tests of each backend check that deterministically;
        // here, a loopback HBase answers within tokio's timer tick.)
        // Time enough: answered, also through a store wrapped with it.
        let enough = CallOptions::new().timeout(Duration::from_secs(60));
        let row = enough.clone().scope(store.get(table, &Get::new("r01"))).await.unwrap();
        assert!(row.is_some(), "{name}");
        let wrapped = enough.on(Arc::clone(&store));
        assert!(wrapped.get(table, &Get::new("r02")).await.unwrap().is_some(), "{name}");
        // A scan keeps the timeout it was opened with for each later fetch
        // (ten of them here), whatever the scope it is read in.
        let scan = Scan::all().batch_size(5);
        let opened = CallOptions::new()
            .timeout(Duration::from_secs(60))
            .scope(store.scan(table, &scan))
            .await
            .unwrap();
        let none = CallOptions::new().timeout(Duration::from_nanos(1));
        let rows: Vec<_> = none.scope(opened.try_collect::<Vec<_>>()).await.unwrap();
        assert_eq!(rows.len(), 50, "{name}");
        store.delete_table(table).await.unwrap();
    }
}
