//! `hmap::blocking` called from inside a tokio runtime: the same answer on
//! every store. On a multi-thread runtime the call works; on a
//! current-thread one (a plain `#[tokio::test]`) it fails with
//! `StoreError::BlockingInRuntime`, never a panic, MemoryStore included
//! (so that tests on MemoryStore see what a remote store would do).

use crate::fake;

use std::sync::Arc;

use crate::fake::{Act, BOOL, Msg};
use hmap::blocking;
use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::{MemoryStore, StoreError, ThriftConfig, ThriftStore};

/// A ThriftStore on a fake gateway whose `tableExists` answers `true`.
fn thrift() -> blocking::Store<ThriftStore> {
    let addr = fake::start(|_, seq| Act::Send(Msg::reply("tableExists", seq).field(BOOL, 0).byte(1).stop().done()));
    blocking::Store::new(ThriftStore::with_config(ThriftConfig::new(addr.to_string())))
}

/// A MemoryStore with table `t` (created from a thread without a runtime).
fn memory() -> blocking::Store<Arc<MemoryStore>> {
    let store = blocking::Store::new(Arc::new(MemoryStore::new()));
    std::thread::scope(|s| {
        s.spawn(|| store.create_table(&TableSchema::new("t").family(FamilySchema::new("f"))))
            .join()
            .unwrap()
    })
    .unwrap();
    store
}

fn assert_refused(result: Result<bool, StoreError>, store: &str) {
    match result {
        Err(e @ StoreError::BlockingInRuntime) => {
            let message = e.to_string();
            assert!(
                message.contains("hmap::blocking") && message.contains("multi_thread"),
                "{message}"
            );
        }
        other => panic!("{store}: {other:?}"),
    }
}

#[tokio::test]
async fn a_blocking_call_in_a_current_thread_runtime_fails_alike_on_every_store() {
    assert_refused(thrift().table_exists("t"), "ThriftStore");
    assert_refused(memory().table_exists("t"), "MemoryStore");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_call_in_a_multi_thread_runtime_works_on_every_store() {
    assert!(thrift().table_exists("t").unwrap());
    assert!(memory().table_exists("t").unwrap());
    // And from a task of that runtime.
    let answered = tokio::spawn(async { thrift().table_exists("t") }).await.unwrap();
    assert!(answered.unwrap());
}

/// A blocking scan made where it can wait, then advanced inside a
/// current-thread runtime: one `BlockingInRuntime`, then the end (an
/// iterator that answered the refusal for ever would never end a
/// `count()`).
#[test]
fn a_blocking_scan_advanced_in_a_current_thread_runtime_ends_after_the_refusal() {
    use hmap::store::{RowMutation, Scan};
    let store = memory();
    let rows: Vec<RowMutation> = (0..3)
        .map(|i| RowMutation::new(format!("r{i}")).put("f", "q", "v"))
        .collect();
    store.mutate("t", &rows).unwrap();
    let mut scan = store.scan("t", &Scan::all().batch_size(1)).unwrap();
    assert!(scan.next().expect("a first row").is_ok());
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let items: Vec<_> = runtime.block_on(async {
        // No more than a few items: the refusal, then the end.
        scan.by_ref().take(10).collect()
    });
    assert!(
        items.len() <= 3,
        "the rows ready before, then the refusal at most: {items:?}"
    );
    assert!(
        matches!(items.last(), Some(Err(StoreError::BlockingInRuntime))),
        "{items:?}"
    );
    assert!(scan.next().is_none());
}
