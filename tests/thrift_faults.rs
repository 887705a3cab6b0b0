//! The Thrift2 gateway stops in the middle of a run, then comes back.
//!
//! Restarting the gateway disturbs anything else using it, so this is
//! `#[ignore]`d and, under `--include-ignored`, needs both `HMAP_THRIFT` (the
//! gateway of `scripts/hbase/hbase start`) and `HMAP_FAULTS=1` (as `.ci/run`
//! sets): it fails, rather than pass unrun, without them. The script's
//! `stop-thrift2` and `start-thrift2` do the stopping.

use std::path::Path;
use std::process::Command;

use bytes::Bytes;
use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::{Get, RowMutation, Scan, StoreError, ThriftConfig, ThriftStore};

fn gateway(action: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/hbase/hbase");
    let status = Command::new("bash")
        .arg(script)
        .arg(action)
        .status()
        .expect("run scripts/hbase/hbase");
    assert!(status.success(), "scripts/hbase/hbase {action} failed");
}

fn row(i: usize) -> RowMutation {
    RowMutation::new(format!("r{i:04}")).put("f", "v", format!("value {i}"))
}

fn stored_rows(store: &hmap::blocking::Store<ThriftStore>, table: &str) -> Vec<Bytes> {
    store
        .scan(table, &Scan::all())
        .expect("scan")
        .map(|r| r.expect("scan row").row)
        .collect()
}

#[test]
#[ignore = "needs a real HBase and restarts its Thrift2 gateway: HMAP_THRIFT=host:port HMAP_FAULTS=1"]
fn gateway_restart_fails_clearly_and_recovers_without_a_new_store() {
    let address = hmap_suite::required_env("HMAP_THRIFT");
    assert_eq!(
        hmap_suite::required_env("HMAP_FAULTS"),
        "1",
        "HMAP_FAULTS=1 allows this test to restart the Thrift2 gateway"
    );
    let mut config = ThriftConfig::new(address.clone());
    config.pool_size = 4;
    config.table_prefix = hmap_suite::test_table_prefix("hmap_faults__");
    let store = hmap::blocking::Store::new(ThriftStore::with_config(config));
    let table = "restart";
    if store.table_exists(table).expect("table_exists") {
        store.delete_table(table).expect("delete a leftover table");
    }
    store
        .create_table(&TableSchema::new(table).family(FamilySchema::new("f")))
        .expect("create");

    // Acknowledged writes, from several threads so that the pool holds
    // several connections when the gateway goes.
    std::thread::scope(|s| {
        for t in 0..4 {
            let store = &store;
            s.spawn(move || {
                for i in (t * 50)..(t * 50 + 50) {
                    store.mutate(table, &[row(i)]).expect("write before the stop");
                }
            });
        }
    });
    assert_eq!(stored_rows(&store, table).len(), 200);

    gateway("stop-thrift2");
    let read = store.get(table, &Get::new("r0001"));
    let write = store.mutate(table, &[row(999)]);
    gateway("start-thrift2");

    for (what, result) in [("get", read.map(|_| ())), ("mutate", write)] {
        match result {
            Err(StoreError::Connection { endpoint, message, .. }) => {
                assert_eq!(endpoint, address, "{what}");
                assert!(
                    message.contains("`restart`"),
                    "{what}: the error names the table: {message}"
                );
            }
            other => panic!("{what} with the gateway down: expected a connection error, got {other:?}"),
        }
    }

    // The same store, after the gateway is back: reads and writes succeed,
    // and every acknowledged write is there; the refused one is not.
    let r1 = store.get(table, &Get::new("r0001")).expect("get after the restart");
    assert_eq!(r1.and_then(|r| r.value("f", "v")), Some(Bytes::from("value 1")));
    store.mutate(table, &[row(200)]).expect("write after the restart");
    let rows = stored_rows(&store, table);
    let expected: Vec<Bytes> = (0..=200).map(|i| Bytes::from(format!("r{i:04}"))).collect();
    assert_eq!(rows, expected);
    store.delete_table(table).expect("delete");
}
