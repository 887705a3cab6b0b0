//! Batch writes answered row by row: `Table::put_each`, a versioned
//! `put_many` that writes every row that does not conflict, loaders that
//! keep going, and `Index::save` with versioned rows.

use std::sync::Arc;

use hmap::relation::Index;
use hmap::store::{MemoryStore, MemoryStoreConfig, RowOutcome, StoreError};
use hmap::{Error, HTable, Table};

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "note", family(name = "n"))]
struct Note {
    #[hmap(key)]
    id: u32,
    #[hmap(family = "n")]
    text: String,
}

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "account", family(name = "a"))]
struct Account {
    #[hmap(key)]
    id: String,
    #[hmap(family = "a")]
    owner: String,
    #[hmap(version)]
    version: u64,
}

fn account(id: &str, owner: &str, version: u64) -> Account {
    Account {
        id: id.into(),
        owner: owner.into(),
        version,
    }
}

/// A store whose cells hold at most 64 bytes, so that a long note is
/// refused with `CellTooLarge`.
fn small_cells() -> MemoryStore {
    MemoryStore::with_config(MemoryStoreConfig::new().max_value_size(64))
}

fn notes() -> Vec<Note> {
    (0..6)
        .map(|id| Note {
            id,
            text: if id % 3 == 1 {
                "x".repeat(100)
            } else {
                format!("note {id}")
            },
        })
        .collect()
}

#[tokio::test]
async fn put_each_writes_the_rows_that_fit_and_names_the_others() {
    let notes_table = Table::<Note, _>::new(small_cells());
    notes_table.create().await.unwrap();
    let notes = notes();
    let outcome = notes_table.put_each(&notes).await.unwrap();
    for (note, outcome) in notes.iter().zip(outcome.iter()) {
        let stored = notes_table.get(note.id).await.unwrap();
        if note.id % 3 == 1 {
            assert!(
                matches!(outcome, RowOutcome::Refused(Error::Store(StoreError::CellTooLarge { row, .. })) if row.contains(&note.id.to_string())),
                "{outcome:?}"
            );
            assert_eq!(stored, None);
        } else {
            assert!(outcome.is_applied(), "{outcome:?}");
            assert_eq!(stored.as_ref(), Some(note));
        }
    }
    assert_eq!(outcome.failed().map(|(i, _)| i).collect::<Vec<_>>(), [1, 4]);
    // put_many, all or nothing: the first refused row, and nothing written.
    let fresh = Table::<Note, _>::new(small_cells());
    fresh.create().await.unwrap();
    let err = fresh.put_many(&notes).await.unwrap_err();
    assert!(matches!(err, Error::Store(StoreError::CellTooLarge { .. })), "{err}");
    assert_eq!(fresh.get(0u32).await.unwrap(), None);
}

#[tokio::test]
async fn a_loader_that_keeps_going_hands_back_the_rows_it_could_not_write() {
    let notes_table = Table::<Note, _>::new(small_cells());
    notes_table.create().await.unwrap();
    let mut loader = notes_table.loader().max_rows(4).keep_going();
    for note in notes() {
        loader.add(&note).await.unwrap();
    }
    loader.flush().await.unwrap();
    assert_eq!(loader.written(), 4);
    let failed: Vec<&[u8]> = loader.failed().iter().map(|f| &f.row[..]).collect();
    let key = |id: u32| notes_table.row_key(id).unwrap();
    assert_eq!(failed, [&key(1)[..], &key(4)[..]]);
    assert!(loader.failed().iter().all(|f| matches!(
        f.outcome,
        RowOutcome::Refused(Error::Store(StoreError::CellTooLarge { .. }))
    )));
    // finish fails while failed rows are left, handing them back.
    let err = loader.finish().await.unwrap_err();
    assert_eq!((err.written, err.failed.len()), (4, 2));
    assert!(matches!(err.cause, StoreError::CellTooLarge { .. }), "{err}");
    assert_eq!(
        notes_table.get(5u32).await.unwrap().map(|n| n.text),
        Some("note 5".into())
    );
}

#[tokio::test]
async fn a_versioned_put_many_writes_every_row_that_does_not_conflict() {
    let accounts = Table::<Account, _>::new(MemoryStore::new());
    accounts.create().await.unwrap();
    let mut a1 = account("a1", "ann", 0);
    let mut a3 = account("a3", "cy", 0);
    accounts.save(&mut a1).await.unwrap();
    accounts.save(&mut a3).await.unwrap();
    // a1 and a3 read before their saves (version 0 now conflicts).
    let rows = [
        account("a1", "ann 2", 0),
        account("a2", "bob", 0),
        account("a3", "cy 2", 0),
        account("a4", "dee", 0),
    ];
    let outcome = accounts.put_each(&rows).await.unwrap();
    let conflicts: Vec<usize> = outcome
        .failed()
        .filter(|(_, o)| matches!(o, RowOutcome::Refused(Error::Conflict { expected: 0, .. })))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(conflicts, [0, 2], "{outcome:?}");
    assert!(outcome[1].is_applied() && outcome[3].is_applied());
    // put_many: the same, and the first conflict is the error.
    let more = [
        account("a5", "eve", 0),
        account("a1", "ann 3", 0),
        account("a6", "fay", 0),
    ];
    let err = accounts.put_many(&more).await.unwrap_err();
    assert!(matches!(err, Error::Conflict { .. }), "{err}");
    for id in ["a5", "a6", "a2", "a4"] {
        assert_eq!(accounts.get(id).await.unwrap().map(|a| a.version), Some(1), "{id}");
    }
    assert_eq!(accounts.get("a1").await.unwrap().map(|a| a.owner), Some("ann".into()));
    // A versioned table loader that keeps going names the conflicts.
    let mut loader = accounts.loader().keep_going();
    loader.add(&account("a7", "gus", 0)).await.unwrap();
    loader.add(&account("a3", "cy 3", 0)).await.unwrap();
    assert_eq!(loader.written(), 1);
    assert!(matches!(
        loader.failed()[0].outcome,
        RowOutcome::Refused(Error::Conflict { .. })
    ));
}

#[tokio::test]
async fn an_index_saves_versioned_rows_and_takes_back_a_conflicting_entry() {
    let store = Arc::new(MemoryStore::new());
    let by_owner = Index::new(Arc::clone(&store), "account_by_owner", |a: &Account| a.owner.clone());
    by_owner.table().create().await.unwrap();
    by_owner.create().await.unwrap();
    let mut a1 = account("a1", "ann", 0);
    by_owner.save(&mut a1).await.unwrap();
    assert_eq!(a1.version, 1);
    a1.owner = "bob".into();
    by_owner.save(&mut a1).await.unwrap();
    assert_eq!(a1.version, 2);
    assert_eq!(by_owner.lookup("bob").await.unwrap(), [a1.clone()]);
    assert!(by_owner.lookup("ann").await.unwrap().is_empty());
    // A stale copy conflicts: nothing written, and no entry left for its value.
    let stale = account("a1", "cy", 1);
    let err = by_owner.put(&stale).await.unwrap_err();
    assert!(matches!(err, Error::Conflict { expected: 1, .. }), "{err}");
    assert!(by_owner.lookup("cy").await.unwrap().is_empty());
    assert_eq!(by_owner.lookup("bob").await.unwrap(), [a1]);
    let report = by_owner.verify().await.unwrap();
    assert!(
        report.missing.is_empty() && report.dangling.is_empty() && report.stale.is_empty(),
        "{report:?}"
    );
}
