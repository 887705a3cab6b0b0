//! Writes that would go around a secondary index: a table whose type has an
//! [`Index`](crate::relation::Index) (made in this process) with its index
//! table in the same store refuses the writes of `Table` that would leave
//! the index's entries behind ([`Error::Indexed`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::error::{Error, Result};
use crate::store::Store;

/// The index tables of each indexed table, as `Index::new` registers them.
static INDEXES: Mutex<Vec<(&'static str, &'static str)>> = Mutex::new(Vec::new());

/// How many registrations `INDEXES` holds: a guard that found none for its
/// table at some count need not look again until it grows (a write does
/// not take the lock each time).
static REGISTERED: AtomicUsize = AtomicUsize::new(0);

/// Notes that `table`'s rows are indexed in `index_table`.
pub(crate) fn register(table: &'static str, index_table: &'static str) {
    let mut indexes = INDEXES.lock().unwrap_or_else(PoisonError::into_inner);
    if !indexes.contains(&(table, index_table)) {
        indexes.push((table, index_table));
        REGISTERED.store(indexes.len(), Ordering::Release);
    }
}

/// The index tables registered for `table`.
fn registered(table: &str) -> Vec<&'static str> {
    let indexes = INDEXES.lock().unwrap_or_else(PoisonError::into_inner);
    indexes.iter().filter(|(t, _)| *t == table).map(|(_, i)| *i).collect()
}

/// What a `Table` knows of its indexes: whether to look (not when it was
/// told to write around them), and the index table found in its store,
/// looked up once.
#[derive(Debug, Default)]
pub(crate) struct IndexGuard {
    around: bool,
    found: tokio::sync::OnceCell<Option<&'static str>>,
    /// The registrations there were when none was found for the table
    /// (0: not looked yet).
    none_at: AtomicUsize,
}

impl IndexGuard {
    /// A guard that lets every write through.
    pub(crate) fn around() -> Self {
        IndexGuard {
            around: true,
            ..IndexGuard::default()
        }
    }

    /// A guard that looks (or not) as this one does, for a view of the
    /// same table.
    pub(crate) fn same_mode(&self) -> Self {
        IndexGuard {
            around: self.around,
            ..IndexGuard::default()
        }
    }

    /// `Ok` unless `table` has an index whose table is in `store`, which
    /// a write of the typed table would leave behind.
    pub(crate) async fn check<S: Store + ?Sized>(&self, store: &S, table: &'static str) -> Result<()> {
        if self.around {
            return Ok(());
        }
        let found = match self.found.get() {
            Some(found) => *found,
            None => {
                // Nothing registered since none was found for the table
                // (or at all): no lock, no lookup.
                let registered = REGISTERED.load(Ordering::Acquire);
                if registered == self.none_at.load(Ordering::Relaxed) {
                    return Ok(());
                }
                self.look_up(store, table, registered).await?
            }
        };
        match found {
            Some(index) => Err(Error::Indexed { table, index }),
            None => Ok(()),
        }
    }

    /// The first of `table`'s registered index tables that is in `store`,
    /// kept once some index is registered for it; `registered`, the count
    /// of registrations seen, kept when none is (an index may be made
    /// later).
    async fn look_up<S: Store + ?Sized>(
        &self,
        store: &S,
        table: &'static str,
        registered: usize,
    ) -> Result<Option<&'static str>> {
        let indexes = self::registered(table);
        if indexes.is_empty() {
            self.none_at.store(registered, Ordering::Relaxed);
            return Ok(None);
        }
        let found = self
            .found
            .get_or_try_init(|| async {
                for index in indexes {
                    if store.table_exists(index).await? {
                        return Ok::<_, Error>(Some(index));
                    }
                }
                Ok(None)
            })
            .await?;
        Ok(*found)
    }
}
