//! Regions moving and splitting under NativeStore's feet: while writers
//! load rows and a scan is half-way through a table, the master moves the
//! table's region to another region server, splits it in the middle of the
//! scan's range, and moves a daughter again (NativeStore's own admin calls,
//! `MoveRegion` and `SplitRegion`). No error may reach a caller, every
//! acknowledged write must read back, and the scan must return every row
//! exactly once, in order.
//!
//! It needs an HBase with several region servers, so that a region has
//! somewhere to go:
//!
//! ```sh
//! scripts/hbase/hbase start --regionservers 3
//! eval $(scripts/hbase/hbase address)
//! cargo test --test native_regions -- --include-ignored
//! ```

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::native::{NativeConfig, NativeStore};
use hmap::store::{Get, Increment, RowMutation, Scan, Store};
use tokio::sync::watch;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Rows the scan reads, written before it starts.
const SCANNED: usize = 4_000;
/// Rows per scanner round trip: the scan makes 40 of them.
const SCAN_BATCH: usize = 100;
/// Concurrent writers, each writing batches of this many rows.
const WRITERS: usize = 4;
const WRITE_BATCH: usize = 25;

fn scanned_row(i: usize) -> String {
    format!("s/{i:05}")
}

/// NativeStore's debug events, written as text, to count its retries.
#[derive(Clone, Default)]
struct Events(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Events {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Events {
    fn capture() -> Events {
        let events = Events::default();
        let writer = events.clone();
        let hmap_debug: tracing_subscriber::filter::Targets = "hmap=debug".parse().expect("a valid filter");
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish()
            .with(hmap_debug)
            .init();
        events
    }

    /// How many events carry `message`.
    fn count(&self, message: &str) -> usize {
        let text = self.0.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&text).matches(message).count()
    }
}

async fn connect() -> NativeStore {
    let address = hmap_suite::required_env("HMAP_NATIVE");
    let config = NativeConfig::new([address.clone()])
        .call_timeout(Duration::from_secs(60))
        .admin_timeout(Duration::from_secs(120))
        .table_prefix(hmap_suite::test_table_prefix("hmap_native_regions_"));
    NativeStore::connect(config)
        .await
        .unwrap_or_else(|e| panic!("HMAP_NATIVE={address} is set but HBase does not answer: {e}"))
}

/// Where `row` is served now, as a store with an empty cache finds it.
async fn server_of(table: &str, row: &str) -> String {
    connect()
        .await
        .locate(table, row.as_bytes())
        .await
        .expect("locate")
        .server
}

/// What the writers did: the rows they were told were written, and the
/// calls that failed (none may).
#[derive(Default)]
struct Load {
    acknowledged: Vec<String>,
    counted: i64,
    errors: Vec<String>,
}

/// One writer: batches of puts (`Multi`), single puts (`Mutate`),
/// increments, and gets of its own last row, until `stop`.
async fn writer(store: NativeStore, table: String, id: usize, stop: Arc<AtomicBool>) -> Load {
    let mut load = Load::default();
    let mut n = 0;
    while !stop.load(Ordering::SeqCst) {
        let rows: Vec<RowMutation> = (0..WRITE_BATCH)
            .map(|k| RowMutation::new(format!("w/{id}/{:06}", n + k)).put("f", "q", format!("v{}", n + k)))
            .collect();
        match store.mutate(&table, &rows).await {
            Ok(()) => load
                .acknowledged
                .extend((0..WRITE_BATCH).map(|k| format!("w/{id}/{:06}", n + k))),
            Err(e) => load.errors.push(format!("mutate batch at {n}: {e}")),
        }
        n += WRITE_BATCH;
        let single = format!("w/{id}/{n:06}");
        match store
            .mutate(
                &table,
                &[RowMutation::new(single.clone()).put("f", "q", format!("v{n}"))],
            )
            .await
        {
            Ok(()) => load.acknowledged.push(single.clone()),
            Err(e) => load.errors.push(format!("single put {single}: {e}")),
        }
        n += 1;
        match store
            .increment(&table, &Increment::new(format!("c/{id}")).add("f", "n", 1))
            .await
        {
            Ok(_) => load.counted += 1,
            Err(e) => load.errors.push(format!("increment: {e}")),
        }
        match store.get(&table, &Get::new(single.clone())).await {
            Ok(Some(_)) => {}
            Ok(None) => load.errors.push(format!("get {single}: acknowledged but not found")),
            Err(e) => load.errors.push(format!("get {single}: {e}")),
        }
    }
    load
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs a real HBase: HMAP_NATIVE with 2 or more region servers (scripts/hbase/hbase start --regionservers 3)"]
async fn regions_move_and_split_under_load_and_a_scan() {
    let events = Events::capture();
    let store = connect().await;
    let table = "t";
    if store.table_exists(table).await.expect("exists") {
        store.delete_table(table).await.expect("delete the last run's table");
    }
    store
        .create_table(&TableSchema::new(table).family(FamilySchema::new("f")))
        .await
        .expect("create");
    let rows: Vec<RowMutation> = (0..SCANNED)
        .map(|i| RowMutation::new(scanned_row(i)).put("f", "q", format!("s{i}")))
        .collect();
    for chunk in rows.chunks(500) {
        store.mutate(table, chunk).await.expect("load the scanned rows");
    }
    let first_server = server_of(table, "s/00000").await;

    // The scan reports how far it got and waits at set rows for the
    // region changes, so that each one happens while its scanner is open.
    let (progress_tx, mut progress) = watch::channel(0usize);
    let (phase_tx, phase) = watch::channel(0usize);
    let scanner = {
        let store = store.clone();
        let mut phase = phase.clone();
        tokio::spawn(async move {
            let mut seen = Vec::with_capacity(SCANNED);
            let mut errors = Vec::new();
            let mut stream = store
                .scan(table, &Scan::prefix("s/").batch_size(SCAN_BATCH))
                .await
                .expect("open the scan");
            while let Some(row) = stream.next().await {
                match row {
                    Ok(row) => seen.push(String::from_utf8_lossy(&row.row).into_owned()),
                    Err(e) => {
                        errors.push(e.to_string());
                        break;
                    }
                }
                // Pauses at rows 1,000 (for a move), 1,500 (for a split at
                // row 3,000, ahead) and 3,500 (for the upper daughter's move).
                let wait_for = match seen.len() {
                    1_000 => Some(1),
                    1_500 => Some(2),
                    3_500 => Some(3),
                    _ => None,
                };
                if let Some(wanted) = wait_for {
                    progress_tx.send_replace(seen.len());
                    let _ = phase.wait_for(|p| *p >= wanted).await;
                }
            }
            (seen, errors)
        })
    };

    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|id| tokio::spawn(writer(store.clone(), table.to_string(), id, stop.clone())))
        .collect();

    let started = Instant::now();
    let admin = connect().await;
    // 1. The only region moves while the scanner is open on it and the
    // writers write to it.
    progress.wait_for(|&p| p >= 1_000).await.expect("scan progress");
    tokio::time::sleep(Duration::from_millis(300)).await;
    admin.move_region(table, b"s/00000").await.expect("move the region");
    let moved_to = server_of(table, "s/00000").await;
    assert_ne!(
        moved_to, first_server,
        "the region did not move: does HBase run with 2 or more region servers?"
    );
    let moved_at = started.elapsed();
    phase_tx.send_replace(1);
    // 2. It splits at a row the scan has not reached yet.
    progress.wait_for(|&p| p >= 1_500).await.expect("scan progress");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let split_row = scanned_row(3_000);
    admin
        .split_region(table, b"s/00000", Some(split_row.as_bytes()))
        .await
        .expect("split the region");
    let keys = admin.region_start_keys(table).await.expect("region start keys");
    assert_eq!(keys, [Bytes::new(), Bytes::from(split_row.clone())], "one split");
    let split_at = started.elapsed();
    phase_tx.send_replace(2);
    // 3. The upper daughter, where the scan is about to go and every
    // writer writes, moves too.
    progress.wait_for(|&p| p >= 3_500).await.expect("scan progress");
    let before = server_of(table, "w/").await;
    admin.move_region(table, b"w/").await.expect("move the upper daughter");
    assert_ne!(server_of(table, "w/").await, before, "the upper daughter did not move");
    let moved_again_at = started.elapsed();
    phase_tx.send_replace(3);

    // The writers write a little longer, on the settled regions.
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::SeqCst);
    let (seen, scan_errors) = scanner.await.expect("scan task");
    let mut acknowledged = Vec::new();
    let mut counted = Vec::new();
    let mut errors = scan_errors;
    for w in writers {
        let load = w.await.expect("writer task");
        acknowledged.extend(load.acknowledged);
        counted.push(load.counted);
        errors.extend(load.errors);
    }
    eprintln!(
        "moved at {moved_at:?}, split at {split_at:?}, moved again at {moved_again_at:?}; \
         {} rows written, {} scanned",
        acknowledged.len(),
        seen.len()
    );
    assert!(errors.is_empty(), "errors reached the callers: {errors:#?}");
    // The changes were met, not missed: the scan resumed after each (its
    // scanner was open on the region each time), and the writers' calls
    // were sent again.
    let (resumed, region_calls, batches, lookups) = (
        events.count("hmap native: scan resumed"),
        events.count("hmap native: region call retried"),
        events.count("hmap native: batch action retried"),
        events.count("hmap native: meta lookup retried"),
    );
    eprintln!(
        "retries: {resumed} scan resumptions, {region_calls} region calls, \
         {batches} batch actions, {lookups} meta lookups"
    );
    assert!(resumed >= 3, "the scan resumed {resumed} times for 3 region changes");
    assert!(region_calls + batches > 0, "no write or read was retried");

    // The scan: every row once, in order.
    let expected: Vec<String> = (0..SCANNED).map(scanned_row).collect();
    assert_eq!(seen.len(), expected.len(), "rows scanned");
    assert!(seen == expected, "the scan skipped, repeated or reordered rows");

    // Every acknowledged write reads back, by get and by a fresh scan.
    assert!(acknowledged.len() > WRITERS * WRITE_BATCH, "the writers wrote");
    let reader = connect().await;
    for chunk in acknowledged.chunks(500) {
        let gets: Vec<Get> = chunk.iter().map(|r| Get::new(r.clone())).collect();
        let found = reader.get_many(table, &gets).await.expect("read back");
        for (row, result) in chunk.iter().zip(found) {
            let value = result.and_then(|r| r.value("f", "q"));
            let n: usize = row.rsplit('/').next().and_then(|n| n.parse().ok()).expect("row number");
            assert_eq!(value, Some(Bytes::from(format!("v{n}"))), "acknowledged row {row}");
        }
    }
    let mut written = BTreeSet::new();
    let mut stream = reader.scan(table, &Scan::prefix("w/")).await.expect("scan the writes");
    while let Some(row) = stream.next().await {
        written.insert(String::from_utf8_lossy(&row.expect("row").row).into_owned());
    }
    let acknowledged: BTreeSet<String> = acknowledged.into_iter().collect();
    assert_eq!(written, acknowledged, "the rows written are the rows acknowledged");
    // Each increment counted once.
    for (id, &n) in counted.iter().enumerate() {
        let row = reader
            .get(table, &Get::new(format!("c/{id}")))
            .await
            .expect("counter")
            .expect("counter row");
        let value = row.value("f", "n").expect("counter cell");
        let value = i64::from_be_bytes(value[..].try_into().expect("8 bytes"));
        assert_eq!(value, n, "writer {id}'s counter");
    }
    assert_eq!(store.open_scanners(), 0, "scanners left open");
    store.delete_table(table).await.expect("delete");
}
