//! The blocking [`Loader`] and [`TableLoader`].

use crate::HTable;
use crate::store::{LoadError, Result, Store as AsyncStore};

use super::{Store, Table, block_on};

impl<S: AsyncStore> Store<S> {
    /// A [`Loader`] of rows into `table`: many rows of puts written fast,
    /// in batches (see [`crate::store::Loader`]).
    ///
    /// ```
    /// use hmap::blocking::Store;
    /// use hmap::schema::{FamilySchema, TableSchema};
    /// use hmap::store::{Get, MemoryStore};
    ///
    /// let store = Store::new(MemoryStore::new());
    /// store.create_table(&TableSchema::new("order").family(FamilySchema::new("p")))?;
    /// let mut loader = store.loader("order").max_rows(100);
    /// for i in 0..250u32 {
    ///     loader.row(format!("o{i:05}")).put("p", "qty", i.to_be_bytes()).end()?;
    /// }
    /// assert_eq!(loader.finish()?, 250);
    /// assert!(store.get("order", &Get::new("o00249"))?.is_some());
    /// # Ok::<(), hmap::store::StoreError>(())
    /// ```
    pub fn loader(&self, table: impl Into<String>) -> Loader<'_, S> {
        Loader {
            inner: crate::store::Loader::new(self.as_async(), table),
        }
    }
}

/// Many rows of puts written fast, in batches: [`crate::store::Loader`],
/// each call waiting for its answer. From [`Store::loader`].
#[derive(Debug)]
pub struct Loader<'a, S> {
    inner: crate::store::Loader<&'a S>,
}

impl<'a, S: AsyncStore> Loader<'a, S> {
    /// Writes a batch once it holds this many rows
    /// ([`crate::store::Loader::max_rows`]).
    pub fn max_rows(self, rows: usize) -> Self {
        Loader {
            inner: self.inner.max_rows(rows),
        }
    }

    /// Writes a batch once it holds this many bytes
    /// ([`crate::store::Loader::max_bytes`]).
    pub fn max_bytes(self, bytes: usize) -> Self {
        Loader {
            inner: self.inner.max_bytes(bytes),
        }
    }

    /// Rows that fail do not stop the load
    /// ([`crate::store::Loader::keep_going`]).
    pub fn keep_going(self) -> Self {
        Loader {
            inner: self.inner.keep_going(),
        }
    }

    /// The rows that failed so far ([`crate::store::Loader::failed`]).
    pub fn failed(&self) -> &[crate::store::FailedRow] {
        self.inner.failed()
    }

    /// The rows that failed so far, taken out of the loader.
    pub fn take_failed(&mut self) -> Vec<crate::store::FailedRow> {
        self.inner.take_failed()
    }

    /// Starts a row: add its puts to the returned writer, then
    /// [`end`](LoaderRow::end) it.
    pub fn row(&mut self, key: impl AsRef<[u8]>) -> LoaderRow<'_, 'a, S> {
        LoaderRow {
            inner: self.inner.row(key),
        }
    }

    /// The rows added and not written yet.
    pub fn pending(&self) -> usize {
        self.inner.pending()
    }

    /// The rows with puts written so far.
    pub fn written(&self) -> u64 {
        self.inner.written()
    }

    /// Writes the rows gathered. On an error they stay in the loader.
    pub fn flush(&mut self) -> Result<()> {
        block_on(self.inner.flush())
    }

    /// Drops the rows gathered and not written; returns how many there were.
    pub fn discard(&mut self) -> usize {
        self.inner.discard()
    }

    /// Writes the rows left and returns the number of rows with puts
    /// written in all. On an error, the [`LoadError`] says how many rows
    /// were written and hands back the rows that were not
    /// ([`crate::store::Loader::finish`]).
    // The error is returned once, at the end of a load: its size (it hands
    // the rows back) costs nothing worth a box.
    #[allow(clippy::result_large_err)]
    pub fn finish(self) -> std::result::Result<u64, LoadError> {
        if let Some(refused) = super::cannot_wait() {
            return Err(self.inner.refused(refused));
        }
        super::wait_allowed(self.inner.finish())
    }
}

/// Adds puts to a row of a blocking [`Loader`], from [`Loader::row`].
#[derive(Debug)]
#[must_use = "end the row with `.end()`, which writes the batch when it is full"]
pub struct LoaderRow<'l, 'a, S> {
    inner: crate::store::LoaderRow<'l, &'a S>,
}

impl<S: AsyncStore> LoaderRow<'_, '_, S> {
    /// Writes a cell at the current time ([`crate::store::LoaderRow::put`]).
    pub fn put(self, family: impl AsRef<[u8]>, qualifier: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Self {
        LoaderRow {
            inner: self.inner.put(family, qualifier, value),
        }
    }

    /// Writes a cell at a chosen timestamp
    /// ([`crate::store::LoaderRow::put_at`]).
    pub fn put_at(
        self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        timestamp: i64,
        value: impl AsRef<[u8]>,
    ) -> Self {
        LoaderRow {
            inner: self.inner.put_at(family, qualifier, timestamp, value),
        }
    }

    /// Ends the row, and writes the batch if it has reached its budget.
    pub fn end(self) -> Result<()> {
        block_on(self.inner.end())
    }
}

impl<T: HTable, S: AsyncStore> Table<T, S> {
    /// A typed bulk loader into this table ([`crate::TableLoader`]), each
    /// call waiting for its answer.
    ///
    /// ```
    /// use hmap::blocking::Table;
    /// use hmap::store::MemoryStore;
    /// use hmap::HTable;
    ///
    /// #[derive(HTable)]
    /// #[hmap(table = "order", family(name = "p"))]
    /// struct Order { #[hmap(key)] id: u32, qty: u32 }
    ///
    /// let orders = Table::<Order, _>::new(MemoryStore::new());
    /// orders.create()?;
    /// let mut loader = orders.loader().max_rows(100);
    /// for id in 0..250 {
    ///     loader.add(&Order { id, qty: id % 9 })?;
    /// }
    /// assert_eq!(loader.finish()?, 250);
    /// assert_eq!(orders.get(249u32)?.map(|o| o.qty), Some(6));
    /// # Ok::<(), hmap::Error>(())
    /// ```
    pub fn loader(&self) -> TableLoader<'_, T, S> {
        TableLoader {
            inner: self.as_async().loader(),
        }
    }
}

/// Rows of `T` loaded in batches: [`crate::TableLoader`], each call waiting
/// for its answer. From [`Table::loader`].
#[derive(Debug)]
#[must_use = "rows are written by `flush` or `finish`"]
pub struct TableLoader<'t, T, S> {
    inner: crate::TableLoader<'t, T, S>,
}

impl<T: HTable, S: AsyncStore> TableLoader<'_, T, S> {
    /// [`crate::TableLoader::max_rows`].
    pub fn max_rows(self, rows: usize) -> Self {
        TableLoader {
            inner: self.inner.max_rows(rows),
        }
    }

    /// [`crate::TableLoader::max_bytes`].
    pub fn max_bytes(self, bytes: usize) -> Self {
        TableLoader {
            inner: self.inner.max_bytes(bytes),
        }
    }

    /// [`crate::TableLoader::keep_going`].
    pub fn keep_going(self) -> Self {
        TableLoader {
            inner: self.inner.keep_going(),
        }
    }

    /// The rows that failed so far ([`crate::TableLoader::failed`]).
    pub fn failed(&self) -> &[crate::store::FailedRow<crate::Error>] {
        self.inner.failed()
    }

    /// The rows that failed so far, taken out of the loader.
    pub fn take_failed(&mut self) -> Vec<crate::store::FailedRow<crate::Error>> {
        self.inner.take_failed()
    }

    /// Adds a row, and writes the batch if it is full
    /// ([`crate::TableLoader::add`]).
    pub fn add(&mut self, row: &T) -> crate::Result<()> {
        block_on(self.inner.add(row))
    }

    /// The rows added and not written yet.
    pub fn pending(&self) -> usize {
        self.inner.pending()
    }

    /// The rows written so far.
    pub fn written(&self) -> u64 {
        self.inner.written()
    }

    /// Writes the rows gathered ([`crate::TableLoader::flush`]).
    pub fn flush(&mut self) -> crate::Result<()> {
        block_on(self.inner.flush())
    }

    /// Drops the rows gathered and not written; returns how many there were.
    pub fn discard(&mut self) -> usize {
        self.inner.discard()
    }

    /// Writes the rows left and returns the rows written in all
    /// ([`crate::TableLoader::finish`]).
    #[allow(clippy::result_large_err)]
    pub fn finish(self) -> std::result::Result<u64, LoadError> {
        if let Some(refused) = super::cannot_wait() {
            return Err(self.inner.refused(refused));
        }
        super::wait_allowed(self.inner.finish())
    }
}
