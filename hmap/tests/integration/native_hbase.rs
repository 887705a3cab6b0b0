//! NativeStore's layers against the real HBase: the registry, a region
//! lookup in `hbase:meta`, and gets, mutations and scans compared byte for
//! byte with what the Thrift2 gateway reads and writes.
//!
//! ```sh
//! eval $(scripts/hbase/hbase address)     # HMAP_NATIVE=host:port of the master
//! HMAP_THRIFT=127.0.0.1:9091 HMAP_NATIVE=... cargo test -p hmap-hbase --features native \
//!     --test native_hbase -- --include-ignored
//! ```
#![cfg(feature = "native")]

use futures_util::TryStreamExt;
use std::time::Duration;

use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::native::{NativeConfig, NativeStore};
use hmap::store::{Get, RowMutation, RowResult, Scan, Store, StoreError, ThriftStore};

/// The environment variable's value; panics when it is unset, so that a
/// test that needs a real HBase never passes without one (the same rule as
/// `hmap_suite::required_env`, which this crate cannot depend on).
fn required_env(variable: &str) -> String {
    match std::env::var(variable) {
        Ok(value) if !value.trim().is_empty() => value.trim().to_string(),
        _ => panic!(
            "{variable} is not set: this test needs a real HBase \
             (eval $(scripts/hbase/hbase start); eval $(scripts/hbase/hbase address))"
        ),
    }
}

fn table_name(name: &str) -> String {
    format!("{}{name}", std::env::var("HMAP_TEST_PREFIX").unwrap_or_default())
}

/// A fresh two-region table (split at `m`) with families `f` (1 version)
/// and `g` (3 versions), made through the Thrift2 gateway.
async fn fresh_table(thrift: &ThriftStore, name: &str) -> String {
    let table = table_name(name);
    if thrift.table_exists(&table).await.expect("exists") {
        thrift.delete_table(&table).await.expect("delete the old table");
    }
    let schema = TableSchema::new(table.clone())
        .family(FamilySchema::new("f"))
        .family(FamilySchema::new("g").versions(3))
        .split_keys([bytes::Bytes::from_static(b"m")]);
    thrift.create_table(&schema).await.expect("create");
    table
}

async fn connect_native() -> NativeStore {
    let config = NativeConfig::new([required_env("HMAP_NATIVE")]).call_timeout(Duration::from_secs(20));
    NativeStore::connect(config)
        .await
        .expect("bootstrap through ClientMetaService")
}

async fn native_scan(native: &NativeStore, table: &str, scan: &Scan) -> Vec<RowResult> {
    native
        .scan(table, scan)
        .await
        .expect("native scan")
        .try_collect::<Vec<_>>()
        .await
        .expect("native rows")
}

async fn thrift_scan(thrift: &ThriftStore, table: &str, scan: &Scan) -> Vec<RowResult> {
    thrift
        .scan(table, scan)
        .await
        .expect("thrift scan")
        .try_collect::<Vec<_>>()
        .await
        .expect("thrift rows")
}

#[tokio::test]
#[ignore = "needs a real HBase: HMAP_NATIVE (scripts/hbase/hbase address) and HMAP_THRIFT"]
async fn native_reads_and_writes_match_thrift() {
    let thrift = ThriftStore::new(required_env("HMAP_THRIFT"));
    let table = fresh_table(&thrift, "hbase").await;
    let native = connect_native().await;

    // Written through the gateway, every byte value and two versions.
    let binary: Vec<u8> = (0..=255).collect();
    thrift
        .mutate(
            &table,
            &[
                RowMutation::new("a1")
                    .put("f", "q", "one")
                    .put("f", b"\x00\xff".to_vec(), binary.clone())
                    .put("f", "", "")
                    .put_at("g", "v", 5, "five")
                    .put_at("g", "v", 7, "seven"),
                RowMutation::new("z9").put("f", "q", "last"),
            ],
        )
        .await
        .expect("thrift put");

    // The regions: a1 in the first, z9 in the second.
    let first = native.locate(&table, b"a1").await.expect("locate a1");
    let second = native.locate(&table, b"z9").await.expect("locate z9");
    assert!(first.name.starts_with(format!("{table},,").as_bytes()), "{first:?}");
    assert_eq!((&first.start[..], &first.end[..]), (&b""[..], &b"m"[..]));
    assert_eq!((&second.start[..], &second.end[..]), (&b"m"[..], &b""[..]));
    assert_ne!(first.name, second.name);

    // Gets, byte for byte as the gateway reads them.
    for get in [
        Get::new("a1"),
        Get::new("a1").max_versions(3),
        Get::new("a1").column("g", "v").max_versions(3),
        Get::new("a1").family("f"),
        Get::new("a1").time_range(hmap::store::TimeRange::new(6, 8)).family("g"),
        Get::new("z9"),
        Get::new("missing"),
    ] {
        let ours = native.get(&table, &get).await.expect("native get");
        let theirs = thrift.get(&table, &get).await.expect("thrift get");
        assert_eq!(ours, theirs, "{get:?}");
    }
    let a1 = native.get(&table, &Get::new("a1")).await.expect("get").expect("a row");
    assert_eq!(a1.value("f", b"\x00\xff"), Some(binary.clone().into()));
    assert_eq!(a1.cells.len(), 4);

    // Writes through NativeStore, read back through the gateway.
    native
        .mutate(
            &table,
            &[
                RowMutation::new("b2")
                    .put("f", "q", "native")
                    .put_at("g", "v", 3, "three"),
                RowMutation::new("n5").put("f", "q", "second region"),
                RowMutation::new("a1").delete_column("f", "q"),
                // Mixed kinds in one row: one atomic Multi.
                RowMutation::new("z9")
                    .delete_row()
                    .put_at("f", "r", i64::MAX - 1, "after"),
            ],
        )
        .await
        .expect("native mutate");
    for row in ["a1", "b2", "n5", "z9"] {
        let theirs = thrift
            .get(&table, &Get::new(row).max_versions(3))
            .await
            .expect("thrift get");
        let ours = native
            .get(&table, &Get::new(row).max_versions(3))
            .await
            .expect("native get");
        assert_eq!(ours, theirs, "row {row}");
    }
    assert_eq!(
        thrift
            .get(&table, &Get::new("b2"))
            .await
            .expect("get")
            .and_then(|r| r.value("f", "q")),
        Some("native".into())
    );
    assert_eq!(
        thrift
            .get(&table, &Get::new("a1"))
            .await
            .expect("get")
            .and_then(|r| r.value("f", "q")),
        None
    );

    // Scans over both regions, as the gateway scans.
    for scan in [
        Scan::all(),
        Scan::all().batch_size(1),
        Scan::all().limit(3),
        Scan::range("b", "o"),
        Scan::prefix("n"),
        Scan::all().family("g").max_versions(3),
        Scan::all().reversed(),
        Scan::range("b", "o").reversed(),
        Scan::all().reversed().limit(2).batch_size(1),
    ] {
        let ours = native_scan(&native, &table, &scan).await;
        assert_eq!(ours, thrift_scan(&thrift, &table, &scan).await, "{scan:?}");
    }
    // A fresh client whose first call is a reversed scan from the table's
    // end: it must find the last region in hbase:meta.
    let fresh = connect_native().await;
    let reversed = native_scan(&fresh, &table, &Scan::all().reversed()).await;
    assert_eq!(reversed, thrift_scan(&thrift, &table, &Scan::all().reversed()).await);
    // Not vacuous: both regions, both directions.
    let rows = |rows: Vec<RowResult>| rows.into_iter().map(|r| r.row).collect::<Vec<_>>();
    assert_eq!(
        rows(native_scan(&native, &table, &Scan::all()).await),
        ["a1", "b2", "n5", "z9"]
    );
    assert_eq!(
        rows(native_scan(&native, &table, &Scan::range("b", "o").reversed()).await),
        ["n5", "b2"]
    );

    // Batched gets over both regions (one Multi per server), in order.
    let gets: Vec<Get> = ["z9", "missing", "a1", "n5", "b2"].into_iter().map(Get::new).collect();
    let ours = native.get_many(&table, &gets).await.expect("native get_many");
    assert_eq!(ours, thrift.get_many(&table, &gets).await.expect("thrift get_many"));
    assert_eq!(ours.iter().filter(|r| r.is_some()).count(), 4);

    // Many calls in flight on one connection per server.
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..200 {
        let native = native.clone();
        let table = table.clone();
        let row = ["a1", "b2", "n5", "z9"][i % 4];
        calls.spawn(async move { (row, native.get(&table, &Get::new(row)).await) });
    }
    while let Some(joined) = calls.join_next().await {
        let (row, got) = joined.expect("task");
        assert_eq!(got.expect("get").map(|r| r.row), Some(row.into()));
    }

    // Check-and-mutate and increments, side by side with the gateway on
    // twin rows: the same answers, the same values.
    use hmap::store::{CheckAndMutate, Increment};
    let values = |row: Option<RowResult>| {
        row.map(|r| {
            r.cells
                .into_iter()
                .map(|c| (c.family, c.qualifier, c.value))
                .collect::<Vec<_>>()
        })
    };
    for (ours_row, theirs_row) in [("c1", "c2")] {
        let ops = |row: &str| {
            [
                CheckAndMutate::new(RowMutation::new(row.to_string()).put("f", "q", "x"), "f", "q", None),
                CheckAndMutate::new(RowMutation::new(row.to_string()).put("f", "q", "no"), "f", "q", None),
                CheckAndMutate::new(
                    RowMutation::new(row.to_string())
                        .put("f", "q", "y")
                        .put("f", "r", "z")
                        .delete_column("g", "v"),
                    "f",
                    "q",
                    Some("x".into()),
                ),
                CheckAndMutate::new(
                    RowMutation::new(row.to_string()).delete_column("f", "r"),
                    "f",
                    "q",
                    Some("x".into()),
                ),
            ]
        };
        for (ours, theirs) in ops(ours_row).iter().zip(ops(theirs_row).iter()) {
            let a = native
                .check_and_mutate(&table, ours)
                .await
                .expect("native check_and_mutate");
            let b = thrift
                .check_and_mutate(&table, theirs)
                .await
                .expect("thrift check_and_mutate");
            assert_eq!(a, b, "{ours:?}");
        }
        let ours = native.get(&table, &Get::new(ours_row)).await.expect("get");
        let theirs = thrift.get(&table, &Get::new(theirs_row)).await.expect("get");
        assert_eq!(values(ours.clone()), values(theirs), "rows after check_and_mutate");
        assert_eq!(ours.and_then(|r| r.value("f", "q")), Some("y".into()));
    }
    for _ in 0..2 {
        let ours = native
            .increment(&table, &Increment::new("k1").add("g", "m", 2).add("f", "n", 5))
            .await
            .expect("native increment");
        let theirs = thrift
            .increment(&table, &Increment::new("k2").add("g", "m", 2).add("f", "n", 5))
            .await
            .expect("thrift increment");
        assert_eq!(ours, theirs);
    }
    assert_eq!(
        native
            .increment(&table, &Increment::new("k1").add("f", "n", -1))
            .await
            .expect("increment"),
        [9]
    );
    match native.increment(&table, &Increment::new("b2").add("f", "q", 1)).await {
        Err(StoreError::NotACounter { len: 6, column, .. }) => assert_eq!(column, "f:q"),
        other => panic!("expected NotACounter, got {other:?}"),
    }

    // Errors name the table.
    let missing = table_name("hbase_missing");
    match native.get(&missing, &Get::new("r")).await {
        Err(StoreError::TableNotFound { table }) => assert_eq!(table, missing),
        other => panic!("expected TableNotFound, got {other:?}"),
    }
    // A deadline too short for any round trip: a connection error that
    // says the connect timed out, and what each bootstrap server did.
    let started = std::time::Instant::now();
    let hurried =
        NativeStore::connect(NativeConfig::new([required_env("HMAP_NATIVE")]).call_timeout(Duration::from_micros(1)))
            .await;
    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    match hurried {
        Err(e @ StoreError::Connection { .. }) => {
            let message = e.to_string();
            assert!(
                e.is_transient()
                    && message.contains("connect timed out after")
                    && message.contains(&format!("{}: ", required_env("HMAP_NATIVE"))),
                "{message}"
            );
        }
        other => panic!("expected a timed-out connect, got {other:?}"),
    }
    thrift.delete_table(&table).await.expect("clean up");
}

/// Figures, not assertions: point gets one at a time through each store,
/// and with 64 in flight on NativeStore's one connection.
#[tokio::test]
#[ignore = "needs a real HBase: HMAP_NATIVE (scripts/hbase/hbase address) and HMAP_THRIFT"]
async fn native_point_get_figures() {
    const ROWS: usize = 1000;
    let thrift = ThriftStore::new(required_env("HMAP_THRIFT"));
    let table = fresh_table(&thrift, "hbase_figures").await;
    let native = connect_native().await;
    let rows: Vec<RowMutation> = (0..ROWS)
        .map(|i| RowMutation::new(format!("r{i:05}")).put("f", "q", format!("value {i}")))
        .collect();
    let started = std::time::Instant::now();
    native.mutate(&table, &rows).await.expect("load");
    let load = started.elapsed();
    let started = std::time::Instant::now();
    for i in 0..ROWS {
        thrift
            .get(&table, &Get::new(format!("r{i:05}")))
            .await
            .expect("get")
            .expect("row");
    }
    let thrift_serial = started.elapsed();
    let started = std::time::Instant::now();
    for i in 0..ROWS {
        native
            .get(&table, &Get::new(format!("r{i:05}")))
            .await
            .expect("get")
            .expect("row");
    }
    let native_serial = started.elapsed();
    let started = std::time::Instant::now();
    let mut calls = tokio::task::JoinSet::new();
    for worker in 0..64 {
        let (native, table) = (native.clone(), table.clone());
        calls.spawn(async move {
            for i in (worker..ROWS).step_by(64) {
                native
                    .get(&table, &Get::new(format!("r{i:05}")))
                    .await
                    .expect("get")
                    .expect("row");
            }
        });
    }
    while let Some(joined) = calls.join_next().await {
        joined.expect("task");
    }
    let native_concurrent = started.elapsed();
    let scanned = native_scan(&native, &table, &Scan::all().batch_size(500)).await;
    assert_eq!(scanned.len(), ROWS);
    eprintln!(
        "{ROWS} rows: native Multi load {load:?}; point gets one at a time: thrift {thrift_serial:?}, \
         native {native_serial:?}; native with 64 in flight {native_concurrent:?}"
    );
    thrift.delete_table(&table).await.expect("clean up");
}

/// One store used on two runtimes in turn, as one store shared by several
/// `#[tokio::test]` functions is: the first runtime's shutdown takes its
/// connections' tasks with it, and the second runtime's calls dial anew
/// (a write included, which is never sent again on a broken connection).
#[test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_NATIVE=host:port (scripts/hbase/hbase address)"]
fn a_store_outlives_the_runtime_it_was_first_used_on() {
    let table = table_name("hbase_two_runtimes");
    let first = tokio::runtime::Runtime::new().expect("runtime");
    let native = first.block_on(async {
        let native = connect_native().await;
        if native.table_exists(&table).await.expect("exists") {
            native.delete_table(&table).await.expect("delete the old table");
        }
        let schema = TableSchema::new(table.clone()).family(FamilySchema::new("f"));
        native.create_table(&schema).await.expect("create");
        native
            .mutate(&table, &[RowMutation::new("r1").put("f", "q", "one")])
            .await
            .expect("a write on the first runtime");
        native
    });
    drop(first);
    let second = tokio::runtime::Runtime::new().expect("runtime");
    second.block_on(async {
        let started = std::time::Instant::now();
        assert!(
            native
                .table_exists(&table)
                .await
                .expect("exists, on the second runtime")
        );
        native
            .mutate(&table, &[RowMutation::new("r2").put("f", "q", "two")])
            .await
            .expect("a write on the second runtime");
        let rows = native_scan(&native, &table, &Scan::all()).await;
        let keys: Vec<_> = rows.iter().map(|r| r.row.clone()).collect();
        assert_eq!(keys, [bytes::Bytes::from("r1"), bytes::Bytes::from("r2")]);
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
        native.delete_table(&table).await.expect("clean up");
    });
}

/// `NativeConfig::new` given a ZooKeeper server's or a Thrift gateway's
/// address: both close the connection at HBase's preamble, and the error
/// says that such a peer does, and what to use instead, within the deadline.
#[tokio::test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_ZOOKEEPER and HMAP_THRIFT"]
async fn a_zookeeper_or_thrift_address_given_as_a_master_is_named() {
    for variable in ["HMAP_ZOOKEEPER", "HMAP_THRIFT"] {
        let address = required_env(variable);
        let mut config = NativeConfig::new([address.clone()]);
        config.call_timeout = Duration::from_secs(10);
        let started = std::time::Instant::now();
        match NativeStore::connect(config).await {
            Err(StoreError::Connection { message, .. }) => assert!(
                message.contains("`NativeConfig::zookeeper`") && message.contains("`ThriftStore`"),
                "{variable}={address}: {message}"
            ),
            Err(other) => panic!("{variable}={address}: expected a connection error, got {other:?}"),
            Ok(_) => panic!("{variable}={address}: connected to a peer that is no master"),
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    }
}
