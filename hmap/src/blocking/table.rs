//! The blocking [`Table`].

use std::fmt;

use bytes::Bytes;

use super::{block_on, blocking_methods};
use crate::error::Result;
use crate::key::{KeyArg, KeyInspection, KeyOf};
use crate::migrate::{MigrateOptions, Migration};
use crate::schema::SchemaDiff;
use crate::store::Store as AsyncStore;
use crate::table::{Cursor, Field, HTable, Page, Query};

/// A typed table over a store, blocking: [`crate::Table`]'s methods, each
/// waiting for its answer.
///
/// ```
/// use hmap::blocking::Table;
/// use hmap::store::MemoryStore;
/// use hmap::{HTable, Query};
///
/// #[derive(HTable, Debug)]
/// #[hmap(table = "event", family(name = "e"))]
/// struct Event {
///     #[hmap(key)]
///     user: String,
///     #[hmap(key)]
///     seq: u32,
///     #[hmap(family = "e")]
///     what: String,
/// }
///
/// let events = Table::<Event, _>::new(MemoryStore::new());
/// events.create()?;
/// for seq in 0..3 {
///     events.put(&Event { user: "u1".into(), seq, what: format!("e{seq}") })?;
/// }
/// let seqs: Vec<u32> = events
///     .scan(Query::prefix("u1"))?
///     .map(|e| e.map(|e| e.seq))
///     .collect::<hmap::Result<_>>()?;
/// assert_eq!(seqs, [0, 1, 2]);
/// # Ok::<(), hmap::Error>(())
/// ```
pub struct Table<T, S> {
    inner: crate::Table<T, S>,
}

impl<T, S: fmt::Debug> fmt::Debug for Table<T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("blocking::Table").field("inner", &self.inner).finish()
    }
}

impl<T: HTable, S: AsyncStore> Table<T, S> {
    /// The table of `T` in `store`.
    pub fn new(store: S) -> Self {
        Table {
            inner: crate::Table::new(store),
        }
    }

    /// This table, writing around its secondary indexes
    /// ([`around_indexes`](crate::Table::around_indexes)).
    pub fn around_indexes(self) -> Self {
        Table {
            inner: self.inner.around_indexes(),
        }
    }

    /// This table with each of its calls run with `options`
    /// ([`with_options`](crate::Table::with_options)).
    pub fn with_options(&self, options: crate::store::CallOptions) -> Table<T, crate::store::WithOptions<&S>> {
        Table {
            inner: self.inner.with_options(options),
        }
    }

    /// The async table underneath.
    pub fn as_async(&self) -> &crate::Table<T, S> {
        &self.inner
    }

    /// The store underneath.
    pub fn store(&self) -> &S {
        self.inner.store()
    }

    /// [`row_key`](crate::Table::row_key).
    pub fn row_key(&self, key: impl KeyArg<T::Key>) -> Result<Bytes> {
        self.inner.row_key(key)
    }

    /// [`row_key_of`](crate::Table::row_key_of).
    pub fn row_key_of(&self, row: &T) -> Result<Bytes> {
        self.inner.row_key_of(row)
    }

    /// [`inspect_key`](crate::Table::inspect_key).
    pub fn inspect_key(&self, row_key: &[u8]) -> Result<KeyInspection> {
        self.inner.inspect_key(row_key)
    }

    blocking_methods! { "crate::Table";
        fn create(&self) -> Result<()>;
        fn create_if_missing(&self) -> Result<bool>;
        fn migration(&self, options: &MigrateOptions) -> Result<Migration>;
        fn migrate(&self) -> Result<Migration>;
        fn schema_diff(&self) -> Result<SchemaDiff>;
        fn check_schema(&self) -> Result<SchemaDiff>;
        fn exists(&self) -> Result<bool>;
        fn drop(&self) -> Result<()>;
        fn truncate(&self) -> Result<()>;
        fn get_row(&self, row_key: impl Into<Bytes>) -> Result<Option<T>>;
        fn get_many_rows(&self, row_keys: impl IntoIterator<Item = Bytes>) -> Result<Vec<Result<Option<T>>>>;
        fn put(&self, row: &T) -> Result<()>;
        fn save(&self, row: &mut T) -> Result<()>;
        fn update(&self, row: &T, fields: impl crate::table::Fields<T>) -> Result<()>;
        fn put_if(&self, row: &T, condition: crate::Where<T>) -> Result<bool>;
        fn update_if(&self, row: &T, fields: impl crate::table::Fields<T>, condition: crate::Where<T>) -> Result<bool>;
        fn delete_rows(&self, row_keys: impl IntoIterator<Item = Bytes>) -> Result<()>;
    }

    // The calls that take a key are generic over it, which
    // `blocking_methods!` does not write.

    /// [`get`](crate::Table::get), waiting for it.
    pub fn get<A>(&self, key: A) -> Result<Option<T>>
    where
        T: KeyOf<A>,
    {
        block_on(self.inner.get(key))
    }

    /// [`delete`](crate::Table::delete), waiting for it.
    pub fn delete<A>(&self, key: A) -> Result<()>
    where
        T: KeyOf<A>,
    {
        block_on(self.inner.delete(key))
    }

    /// [`delete_if`](crate::Table::delete_if), waiting for it.
    pub fn delete_if<A>(&self, key: A, condition: crate::Where<T>) -> Result<bool>
    where
        T: KeyOf<A>,
    {
        block_on(self.inner.delete_if(key, condition))
    }

    /// [`increment`](crate::Table::increment), waiting for it.
    pub fn increment<A, C>(&self, key: A, field: Field<T, i64, C>, amount: i64) -> Result<i64>
    where
        T: KeyOf<A>,
    {
        block_on(self.inner.increment(key, field, amount))
    }

    /// [`get_many`](crate::Table::get_many), waiting for it.
    pub fn get_many<K>(&self, keys: impl IntoIterator<Item = K>) -> Result<Vec<Result<Option<T>>>>
    where
        T: KeyOf<K>,
    {
        block_on(self.inner.get_many(keys))
    }

    /// [`put_many`](crate::Table::put_many), waiting for it.
    pub fn put_many<'r>(&self, rows: impl IntoIterator<Item = &'r T>) -> Result<()>
    where
        T: 'r,
    {
        block_on(self.inner.put_many(rows))
    }

    /// [`put_each`](crate::Table::put_each), waiting for it.
    pub fn put_each<'r>(
        &self,
        rows: impl IntoIterator<Item = &'r T>,
    ) -> Result<crate::store::BatchOutcome<crate::Error>>
    where
        T: 'r,
    {
        block_on(self.inner.put_each(rows))
    }

    /// [`scan`](crate::Table::scan): the rows as an iterator, fetched in
    /// batches as it advances.
    pub fn scan<Q: crate::table::QueryOf<T>>(&self, query: Query<'_, Q>) -> Result<Rows<'_, T>> {
        Ok(Rows {
            inner: futures_util::StreamExt::fuse(block_on(self.inner.scan(query))?),
            ready: std::collections::VecDeque::new(),
            refused: false,
        })
    }

    /// [`page`](crate::Table::page), waiting for it.
    pub fn page<Q: crate::table::QueryOf<T>>(
        &self,
        query: Query<'_, Q>,
        limit: usize,
        cursor: Option<&Cursor>,
    ) -> Result<Page<T>> {
        block_on(self.inner.page(query, limit, cursor))
    }
}

/// The rows of a blocking [`Table::scan`], decoded as they are fetched.
pub struct Rows<'a, T> {
    // Fused: the iterator may ask again after the end.
    inner: futures_util::stream::Fuse<crate::Rows<'a, T>>,
    ready: std::collections::VecDeque<Result<T>>,
    // A wait was refused (`BlockingInRuntime`): the iterator ends after it.
    refused: bool,
}

impl<T> fmt::Debug for Rows<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

impl<T> Iterator for Rows<'_, T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        if self.ready.is_empty() && !self.refused {
            self.refused = super::ready_items(&mut self.inner, super::store::READY_ROWS, &mut self.ready);
        }
        self.ready.pop_front()
    }
}
