//! `Table::loader`: typed rows loaded in batches write what `put_many`
//! writes for them, deletes included, on every row shape.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::StreamExt;
use hmap::store::{FaultPlan, FaultyStore, MemoryStore, Scan, Store};
use hmap::{HTable, Table, Versioned};

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "profile", family(name = "p"), family(name = "t", versions = 5))]
struct Profile {
    #[hmap(key)]
    id: u32,
    #[hmap(family = "p")]
    name: String,
    #[hmap(family = "p")]
    nickname: Option<String>,
    #[hmap(family = "t", dynamic)]
    tags: BTreeMap<String, String>,
    #[hmap(family = "p", versions)]
    scores: Vec<Versioned<i64>>,
}

fn profile(id: u32, round: u32) -> Profile {
    Profile {
        id,
        name: format!("user {id} round {round}"),
        // Some rows delete a nickname, some write one.
        nickname: (id % 3 != round % 3).then(|| format!("nick {id}")),
        // Some rows have a dynamic family (which a write replaces), some not.
        tags: if id.is_multiple_of(2) {
            BTreeMap::from([(format!("k{round}"), format!("v{id}"))])
        } else {
            BTreeMap::new()
        },
        scores: vec![Versioned::new(1_000 + i64::from(id), i64::from(id * 10))],
    }
}

/// Every cell of a table, timestamps left out (the two writes took their
/// own), but the number of versions kept.
async fn cells(store: &dyn Store, table: &str) -> Vec<(Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>)> {
    let mut scan = store.scan(table, &Scan::default().max_versions(10)).await.unwrap();
    let mut out = Vec::new();
    while let Some(row) = scan.next().await {
        let row = row.unwrap();
        for c in &row.cells {
            out.push((
                row.row.to_vec(),
                c.family.to_vec(),
                c.qualifier.to_vec(),
                c.value.to_vec(),
            ));
        }
    }
    out
}

/// Two rounds over the same rows (the second deletes nicknames and
/// replaces tags the first wrote): the loader, in small batches, leaves
/// the table as `put_many` does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loader_writes_what_put_many_writes() {
    let loaded = Table::<Profile, _>::new(Arc::new(MemoryStore::new()));
    let put = Table::<Profile, _>::new(Arc::new(MemoryStore::new()));
    loaded.create().await.unwrap();
    put.create().await.unwrap();
    for round in 0..2 {
        let rows: Vec<Profile> = (0..250).map(|id| profile(id, round)).collect();
        let mut loader = loaded.loader().max_rows(32);
        for row in &rows {
            loader.add(row).await.unwrap();
        }
        assert_eq!(loader.finish().await.unwrap(), 250);
        put.put_many(&rows).await.unwrap();
    }
    assert_eq!(
        cells(&**loaded.store(), "profile").await,
        cells(&**put.store(), "profile").await
    );
    for id in [0, 1, 2, 3, 249] {
        assert_eq!(loaded.get(id).await.unwrap(), Some(profile(id, 1)), "row {id}");
    }
}

/// A flush that fails keeps its rows: flushed again, they are written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_flush_keeps_its_rows() {
    let memory = Arc::new(MemoryStore::new());
    Table::<Profile, _>::new(Arc::clone(&memory)).create().await.unwrap();
    let faulty = Table::<Profile, _>::new(FaultyStore::new(Arc::clone(&memory), FaultPlan::Call(1)));
    let mut loader = faulty.loader().max_rows(1_000);
    for id in 0..10 {
        loader.add(&profile(id, 0)).await.unwrap();
    }
    assert!(loader.flush().await.is_err());
    assert_eq!(loader.pending(), 10);
    loader.flush().await.unwrap();
    assert_eq!(loader.written(), 10);
    let table = Table::<Profile, _>::new(memory);
    for id in 0..10 {
        assert_eq!(table.get(id).await.unwrap(), Some(profile(id, 0)), "row {id}");
    }
}
