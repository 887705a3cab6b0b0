//! Conformance cases of concurrent calls: a row mutation is seen whole or
//! not at all, and concurrent increments lose no update.

use std::thread;

use hmap::store::{Increment, RowMutation, Scan};

use super::{Target, ab_table, put, scan_rows};

/// Writers and readers on many threads: every acknowledged write is read
/// back, and readers never see a half-applied row mutation.
/// (HBase: row mutations are atomic, RG "ACID semantics": "All mutations in a
/// single row are atomic".)
pub async fn concurrent_writers_and_readers(t: &dyn Target) {
    let tt = ab_table(t, "concurrent_writers_and_readers").await;
    const WRITERS: usize = 4;
    const ROWS: usize = 50;
    // Real threads, each waiting on the test's runtime (`block_in_place`
    // lets this one block).
    let runtime = tokio::runtime::Handle::current();
    tokio::task::block_in_place(|| {
        thread::scope(|scope| {
            for w in 0..WRITERS {
                let tt = &tt;
                let runtime = &runtime;
                scope.spawn(move || {
                    runtime.block_on(async move {
                        for i in 0..ROWS {
                            // Both columns in one mutation: readers must see both or none.
                            let value = format!("{w}-{i}");
                            put(
                                tt,
                                vec![
                                    RowMutation::new(format!("w{w}_{i:03}"))
                                        .put_at("a", "x", 1, value.clone())
                                        .put_at("b", "y", 1, value),
                                ],
                            )
                            .await;
                        }
                    })
                });
            }
            for _ in 0..2 {
                let tt = &tt;
                let runtime = &runtime;
                scope.spawn(move || {
                    runtime.block_on(async move {
                        for _ in 0..20 {
                            for row in scan_rows(tt, Scan::all().batch_size(7)).await {
                                assert_eq!(row.cells.len(), 2, "a half-applied row: {row:?}");
                                assert_eq!(row.cells[0].value, row.cells[1].value);
                            }
                        }
                    })
                });
            }
        })
    });
    assert_eq!(scan_rows(&tt, Scan::all()).await.len(), WRITERS * ROWS);
}

/// Concurrent increments of one counter lose no update.
/// (HBase: increments hold the row lock, `HRegion.increment`.)
pub async fn concurrent_increments(t: &dyn Target) {
    let tt = ab_table(t, "concurrent_increments").await;
    let runtime = tokio::runtime::Handle::current();
    tokio::task::block_in_place(|| {
        thread::scope(|scope| {
            for _ in 0..4 {
                let runtime = &runtime;
                let tt = &tt;
                scope.spawn(move || {
                    runtime.block_on(async move {
                        for _ in 0..50 {
                            t.store()
                                .increment(&tt.name, &Increment::new("r").add("b", "n", 1))
                                .await
                                .unwrap();
                        }
                    })
                });
            }
        })
    });
    assert_eq!(
        t.store()
            .increment(&tt.name, &Increment::new("r").add("b", "n", 0))
            .await
            .unwrap(),
        vec![200]
    );
}
