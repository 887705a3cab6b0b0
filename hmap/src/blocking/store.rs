//! The blocking [`Store`].

use std::fmt;

use super::{block_on, blocking_methods};
use crate::schema::TableSchema;
use crate::store::{
    Append, BatchOutcome, CheckAndMutate, FamilyChange, Get, Increment, Result, RowMutation, RowResult, RowStream,
    Scan, Store as AsyncStore,
};

/// Any [`Store`](crate::store::Store), blocking: its methods, each waiting
/// for its answer.
///
/// ```
/// use hmap::blocking::Store;
/// use hmap::schema::{FamilySchema, TableSchema};
/// use hmap::store::{Get, MemoryStore, RowMutation};
///
/// let store = Store::new(MemoryStore::new());
/// store.create_table(&TableSchema::new("user").family(FamilySchema::new("i")))?;
/// store.mutate("user", &[RowMutation::new("u1").put("i", "name", "Ann")])?;
/// let row = store.get("user", &Get::new("u1"))?.expect("the row exists");
/// assert_eq!(row.value("i", "name").as_deref(), Some(&b"Ann"[..]));
/// # Ok::<(), hmap::store::StoreError>(())
/// ```
#[derive(Clone, Default)]
pub struct Store<S> {
    inner: S,
}

impl<S: fmt::Debug> fmt::Debug for Store<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("blocking::Store").field("inner", &self.inner).finish()
    }
}

impl<S: AsyncStore> Store<S> {
    /// Blocking calls on `store`.
    pub fn new(store: S) -> Self {
        Store { inner: store }
    }

    /// This store with each of its calls run with `options` (a timeout
    /// that replaces the store's; see
    /// [`CallOptions`](crate::store::CallOptions)); its scans keep them for
    /// every later fetch.
    pub fn with_options(&self, options: crate::store::CallOptions) -> Store<crate::store::WithOptions<&S>> {
        Store {
            inner: options.on(&self.inner),
        }
    }

    /// The async store underneath.
    pub fn as_async(&self) -> &S {
        &self.inner
    }

    /// The async store underneath, taken out.
    pub fn into_async(self) -> S {
        self.inner
    }

    blocking_methods! { "crate::store::Store";
        fn create_table(&self, schema: &TableSchema) -> Result<()>;
        fn delete_table(&self, table: &str) -> Result<()>;
        fn truncate_table(&self, table: &str) -> Result<()>;
        fn alter_table(&self, table: &str, change: &FamilyChange) -> Result<()>;
        fn table_exists(&self, table: &str) -> Result<bool>;
        fn list_tables(&self) -> Result<Vec<String>>;
        fn describe_table(&self, table: &str) -> Result<TableSchema>;
        fn get(&self, table: &str, get: &Get) -> Result<Option<RowResult>>;
        fn get_many(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<RowResult>>>;
        fn get_each(&self, table: &str, gets: &[Get]) -> Result<Vec<Result<Option<RowResult>>>>;
        fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()>;
        fn mutate_each(&self, table: &str, rows: &[RowMutation]) -> Result<BatchOutcome>;
        fn check_and_mutate(&self, table: &str, op: &CheckAndMutate) -> Result<bool>;
        fn increment(&self, table: &str, op: &Increment) -> Result<Vec<i64>>;
        fn append(&self, table: &str, op: &Append) -> Result<RowResult>;
    }

    /// [`scan`](crate::store::Store::scan): the rows as an iterator,
    /// fetched in batches as it advances; dropping it closes the scanner.
    pub fn scan(&self, table: &str, scan: &Scan) -> Result<RowIter<'_>> {
        Ok(RowIter {
            inner: futures_util::StreamExt::fuse(block_on(self.inner.scan(table, scan))?),
            ready: std::collections::VecDeque::new(),
            refused: false,
        })
    }
}

/// Rows taken from a stream per wait, at most.
pub(crate) const READY_ROWS: usize = 256;

/// The rows of a blocking [`Store::scan`].
pub struct RowIter<'a> {
    // Fused: the iterator may ask again after the end.
    inner: futures_util::stream::Fuse<RowStream<'a>>,
    ready: std::collections::VecDeque<Result<RowResult>>,
    // A wait was refused (`BlockingInRuntime`): the iterator ends after it.
    refused: bool,
}

impl fmt::Debug for RowIter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RowIter").finish_non_exhaustive()
    }
}

impl Iterator for RowIter<'_> {
    type Item = Result<RowResult>;

    fn next(&mut self) -> Option<Result<RowResult>> {
        if self.ready.is_empty() && !self.refused {
            self.refused = super::ready_items(&mut self.inner, READY_ROWS, &mut self.ready);
        }
        self.ready.pop_front()
    }
}

// A blocking store is also an async one (its calls forwarded), so that
// one value serves the blocking calls of a test or a script and the
// tables and relation helpers built on it.
crate::store::forward_store!(sized Store<S>);

/// The async store underneath: its own methods (`MemoryStore::open_scanners`,
/// `ThriftStore::ping`...) through the blocking one.
impl<S> std::ops::Deref for Store<S> {
    type Target = S;
    fn deref(&self) -> &S {
        &self.inner
    }
}
