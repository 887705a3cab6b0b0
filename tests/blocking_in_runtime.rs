//! `hmap::blocking` called from inside a tokio runtime: the same answer on
//! every store. On a multi-thread runtime the call works; on a
//! current-thread one (a plain `#[tokio::test]`) it fails with
//! `StoreError::BlockingInRuntime`, never a panic, MemoryStore included
//! (so that tests on MemoryStore see what a remote store would do).

#[path = "support/fake_gateway.rs"]
mod fake;

use std::sync::Arc;

use fake::{Act, BOOL, Msg};
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
