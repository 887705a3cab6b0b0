//! A bulk load cut off by a failing store: what was written is said, what
//! was not is handed back.

use std::sync::Arc;

use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::{FaultPlan, FaultyStore, Get, Loader, MemoryStore, Scan, Store, StoreError};

async fn store() -> Arc<MemoryStore> {
    let store = Arc::new(MemoryStore::new());
    store
        .create_table(&TableSchema::new("t").family(FamilySchema::new("f")))
        .await
        .unwrap();
    store
}

async fn count(store: &MemoryStore) -> usize {
    use futures_util::StreamExt;
    store.scan("t", &Scan::default()).await.unwrap().count().await
}

/// Two batches of 10 written, the third call (the last 5 rows) fails:
/// `finish` says 20 rows were written and hands back the 5 others, which
/// load on a retry.
#[tokio::test]
async fn a_failed_finish_says_what_was_written_and_hands_back_the_rest() {
    let memory = store().await;
    let faulty = FaultyStore::new(Arc::clone(&memory), FaultPlan::Call(3));
    let mut loader = Loader::new(&faulty, "t").max_rows(10);
    for i in 0..25 {
        loader.row(format!("r{i:02}")).put("f", "q", "v").end().await.unwrap();
    }
    let err = loader.finish().await.unwrap_err();
    assert_eq!(
        (err.table.as_str(), err.written, err.unwritten.len()),
        ("t", 20, 5),
        "{err}"
    );
    assert!(matches!(err.cause, StoreError::Connection { .. }), "{err}");
    let keys: Vec<_> = err.unwritten.rows().map(|r| r.key().to_vec()).collect();
    let expected: Vec<Vec<u8>> = (20..25).map(|i| format!("r{i:02}").into_bytes()).collect();
    assert_eq!(keys, expected);
    assert!(err.to_string().contains("20 rows written"), "{err}");
    assert_eq!(count(&memory).await, 20);

    faulty.load("t", &err.unwritten).await.unwrap();
    assert_eq!(count(&memory).await, 25);
    assert!(memory.get("t", &Get::new("r24")).await.unwrap().is_some());
}

/// The blocking loader's `finish` hands back the same.
#[test]
fn a_failed_blocking_finish_hands_back_the_rest() {
    let memory = tokio::runtime::Runtime::new().unwrap().block_on(store());
    let faulty = hmap::blocking::Store::new(FaultyStore::new(Arc::clone(&memory), FaultPlan::Call(2)));
    let mut loader = faulty.loader("t").max_rows(4);
    for i in 0..6 {
        loader.row(format!("r{i}")).put("f", "q", "v").end().unwrap();
    }
    let err = loader.finish().unwrap_err();
    assert_eq!((err.written, err.unwritten.len()), (4, 2), "{err}");
    // `?` into a StoreError keeps working.
    let as_store_error: StoreError = err.into();
    assert!(matches!(as_store_error, StoreError::Connection { .. }));
}
