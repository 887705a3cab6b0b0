//! Conformance cases of batch writes answered row by row
//! ([`Store::mutate_each`](hmap::store::Store::mutate_each)): HBase's
//! `Table.batch(actions, results)`, whose results hold, for each action,
//! its result or the exception that refused it, the other actions applied
//! (`AsyncProcess`, `RetriesExhaustedWithDetailsException`).

use hmap::store::{Get, MAX_ROW_LENGTH, RowMutation, RowOutcome, StoreError};

use super::{Target, ab_table, cell, get_cells};

/// A row the table cannot take (a family it lacks, a row key too long, a
/// cell too large) is refused with its typed reason, and the rows around
/// it are applied, a repeated row's changes in order.
pub async fn batch_answers_each_row(t: &dyn Target) {
    let tt = ab_table(t, "batch_answers_each_row").await;
    let long_key = vec![b'k'; MAX_ROW_LENGTH + 1];
    let rows = [
        RowMutation::new("r1").put_at("a", "q", 100, "one"),
        RowMutation::new("r2").put_at("nope", "q", 100, "two"),
        RowMutation::new("r3").put_at("a", "q", 100, "three"),
        RowMutation::new(long_key).put_at("a", "q", 100, "long"),
        RowMutation::new("r4").put_at("a", "q", 100, vec![0u8; t.max_value_size() + 1]),
        RowMutation::new("r1").put_at("a", "q", 200, "one again"),
    ];
    let outcome = tt
        .store
        .mutate_each(&tt.name, &rows)
        .await
        .expect("the batch is answered row by row");
    assert_eq!(outcome.len(), rows.len());
    let applied: Vec<bool> = outcome.iter().map(RowOutcome::is_applied).collect();
    assert_eq!(applied, [true, false, true, false, false, true], "{outcome:?}");
    assert!(
        matches!(&outcome[1], RowOutcome::Refused(StoreError::NoSuchFamily { family, .. }) if family == "nope"),
        "{:?}",
        outcome[1]
    );
    assert!(
        matches!(&outcome[3], RowOutcome::Refused(StoreError::InvalidRow { .. })),
        "{:?}",
        outcome[3]
    );
    assert!(
        matches!(&outcome[4], RowOutcome::Refused(StoreError::CellTooLarge { .. })),
        "{:?}",
        outcome[4]
    );
    assert_eq!(
        get_cells(&tt, Get::new("r1").column("a", "q").max_versions(3)).await,
        vec![cell("a", "q", 200, "one again"), cell("a", "q", 100, "one")]
    );
    assert_eq!(get_cells(&tt, Get::new("r3")).await, vec![cell("a", "q", 100, "three")]);
    assert_eq!(get_cells(&tt, Get::new("r2")).await, vec![]);
    assert_eq!(get_cells(&tt, Get::new("r4")).await, vec![]);
    // The all-or-first-error form: the first refused row's error.
    assert!(matches!(outcome.into_result(), Err(StoreError::NoSuchFamily { .. })));
    // Nothing to write: nothing to answer.
    let none = tt.store.mutate_each(&tt.name, &[]).await.expect("an empty batch");
    assert!(none.is_empty());
}

/// A batch into a table that does not exist fails as a whole, with
/// [`StoreError::TableNotFound`], and creates nothing.
pub async fn batch_into_missing_table_fails(t: &dyn Target) {
    let name = format!("{}batch_into_missing_table_fails_never_created", t.table_prefix());
    let _ = t.store().delete_table(&name).await;
    let rows = [RowMutation::new("r").put_at("a", "q", 1, "v")];
    let err = t.store().mutate_each(&name, &rows).await.expect_err("no such table");
    assert!(
        matches!(err, StoreError::TableNotFound { ref table } if *table == name),
        "{err}"
    );
    assert!(!t.store().table_exists(&name).await.expect("table_exists"));
}
