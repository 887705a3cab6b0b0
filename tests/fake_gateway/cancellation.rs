//! Cancelling a call (dropping its future, as `tokio::time::timeout` does)
//! in the middle of a round trip: the store stays usable, no later call
//! reads the abandoned call's reply, and every write that was acknowledged
//! is stored.

use crate::fake;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::fake::{Act, BOOL, Msg};
use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::{Get, RowMutation, Store, ThriftConfig, ThriftStore};

/// A `tableExists` reply.
fn exists_reply(seq: i32, exists: bool) -> Vec<u8> {
    Msg::reply("tableExists", seq)
        .field(BOOL, 0)
        .byte(u8::from(exists))
        .stop()
        .done()
}

/// The first call is answered slowly (`true`, a byte every 50 ms); every
/// later one at once (`false`). A store with one connection cancels the
/// slow call: the next call gets its own answer, at once, on a connection
/// of its own.
#[tokio::test]
async fn a_cancelled_call_leaves_the_pool_usable_and_its_reply_unread() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let addr = fake::start(move |_, seq| {
        if counted.fetch_add(1, Ordering::SeqCst) == 0 {
            Act::Dribble(exists_reply(seq, true), Duration::from_millis(50))
        } else {
            Act::Send(exists_reply(seq, false))
        }
    });
    let mut config = ThriftConfig::new(addr.to_string());
    config.pool_size = 1;
    config.call_timeout = Duration::from_secs(5);
    let store = ThriftStore::with_config(config);

    let cancelled = tokio::time::timeout(Duration::from_millis(200), store.table_exists("t")).await;
    assert!(cancelled.is_err(), "the slow call was cut off: {cancelled:?}");

    // The only permit is free again, and the answer is this call's own.
    let started = tokio::time::Instant::now();
    let answer = store.table_exists("t").await.expect("the store still works");
    assert!(!answer, "a later call read the cancelled call's reply");
    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

/// On HBase: writes cut off at random moments by a timeout, from 16 tasks
/// sharing a pool of 4 connections. Each write that returned `Ok` is read
/// back; the store answers normally afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT=host:port"]
async fn cancelled_writes_lose_nothing_acknowledged() {
    let mut config = ThriftConfig::new(hmap_suite::required_env("HMAP_THRIFT"));
    config.pool_size = 4;
    config.table_prefix = hmap_suite::test_table_prefix("hmap_cancellation__");
    let store = Arc::new(ThriftStore::with_config(config));
    if store.table_exists("t").await.unwrap() {
        store.delete_table("t").await.unwrap();
    }
    store
        .create_table(&TableSchema::new("t").family(FamilySchema::new("f")))
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for task in 0..16u64 {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            let mut rng = hmap_suite::Rng::new(task + 1);
            let mut acknowledged = Vec::new();
            for i in 0..40 {
                let row = format!("t{task:02}-{i:03}");
                let rows = [RowMutation::new(row.clone()).put("f", "q", row.clone())];
                let write = store.mutate("t", &rows);
                // From 0 to 50 ms: some writes finish, some are cut off;
                // every fourth is given all the time it needs.
                let limit = if i % 4 == 0 {
                    Duration::from_secs(60)
                } else {
                    Duration::from_micros(rng.below(50_000))
                };
                if let Ok(done) = tokio::time::timeout(limit, write).await {
                    done.expect("a write that finished succeeded");
                    acknowledged.push(row);
                }
            }
            acknowledged
        }));
    }
    let mut acknowledged = Vec::new();
    for task in tasks {
        acknowledged.extend(task.await.expect("no panic"));
    }
    assert!(
        acknowledged.len() >= 160,
        "the unlimited writes finished: {}",
        acknowledged.len()
    );
    for row in &acknowledged {
        let stored = store.get("t", &Get::new(row.clone())).await.unwrap();
        let value = stored.and_then(|r| r.value("f", "q"));
        assert_eq!(value.as_deref(), Some(row.as_bytes()), "acknowledged row {row}");
    }
    println!("{} of 640 writes acknowledged, all stored", acknowledged.len());
    store.delete_table("t").await.unwrap();
}
