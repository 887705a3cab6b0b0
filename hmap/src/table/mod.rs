//! Typed tables: [`HTable`] (what `#[derive(HTable)]` implements) and
//! [`Table`], the typed API over any [`Store`].

use futures_util::{StreamExt, TryFutureExt};
mod filter;
mod indexed;
pub(crate) use indexed::register as register_index;
pub(crate) mod lifecycle;
mod loader;
mod mapping;
mod query;
mod row;
mod rows;

pub use filter::{QueryOf, SortedCodec, Where};
pub use loader::TableLoader;
pub use mapping::{Field, FieldInfo, FieldRole, Fields, HTable, salt_split_keys};
pub use query::{Cursor, Page, Query};
pub(crate) use row::show_typed_row;
pub use row::{RowReader, RowWriter};
use rows::Merge;
pub use rows::Rows;

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use bytes::Bytes;

use crate::clock::RowSet;
use crate::error::{Error, Result};
use crate::key::{KeyArg, KeyError, KeyInspection, KeyOf};
use crate::schema::SchemaDiff;
use crate::store::{
    BatchOutcome, CheckAndMutate, Get, Increment, Mutation, RowMutation, RowOutcome, RowResult, Store, StoreError,
};

/// The future of a call that takes a key ([`Table::get`] ...): boxed, so
/// that its type is not generic over the key's (see `get`). Private: the
/// documentation shows the type itself.
pub(crate) type KeyCall<'a, R> = Pin<Box<dyn Future<Output = Result<R>> + Send + 'a>>;

/// A typed table over a store.
///
/// ```
/// use hmap::{HTable, Table};
/// use hmap::store::MemoryStore;
///
/// #[derive(HTable, Debug, PartialEq)]
/// #[hmap(table = "user", family(name = "i"))]
/// struct User {
///     #[hmap(key)]
///     id: String,
///     #[hmap(family = "i", column = "n")]
///     name: String,
///     #[hmap(family = "i")]
///     city: Option<String>,
/// }
///
/// # #[tokio::main] async fn main() -> Result<(), hmap::Error> {
/// let users = Table::<User, _>::new(MemoryStore::new());
/// users.create().await?;
/// users.put(&User { id: "u1".into(), name: "Ann".into(), city: None }).await?;
/// let ann = users.get("u1").await?.expect("stored");
/// assert_eq!(ann.name, "Ann");
/// # Ok(()) }
/// ```
pub struct Table<T, S> {
    store: S,
    /// Whether a write would go around an index (see `indexed`).
    indexes: indexed::IndexGuard,
    row: PhantomData<fn() -> T>,
}

impl<T, S: fmt::Debug> fmt::Debug for Table<T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Table").field("store", &self.store).finish()
    }
}

impl<T: HTable, S: Store> Table<T, S> {
    /// The table of `T` in `store`.
    pub fn new(store: S) -> Self {
        Table {
            store,
            indexes: indexed::IndexGuard::default(),
            row: PhantomData,
        }
    }

    /// This table, writing around its secondary indexes: its writes do not
    /// refuse with [`Error::Indexed`] where an [`Index`](crate::relation::Index)
    /// of the type has its table in the store. For a bulk load or a
    /// migration that rebuilds the index afterwards (`Index::rebuild`,
    /// `Index::repair`).
    pub fn around_indexes(self) -> Self {
        Table {
            indexes: indexed::IndexGuard::around(),
            ..self
        }
    }

    /// This table with each of its calls run with `options` (a timeout
    /// that replaces the store's; see [`CallOptions`](crate::store::CallOptions)):
    /// `orders.with_options(CallOptions::new().timeout(Duration::from_secs(2))).get(key)`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hmap::store::{CallOptions, MemoryStore};
    /// use hmap::{HTable, Table};
    ///
    /// #[derive(HTable, Debug, PartialEq)]
    /// #[hmap(table = "user", family(name = "i"))]
    /// struct User {
    ///     #[hmap(key)]
    ///     id: String,
    ///     #[hmap(family = "i")]
    ///     name: String,
    /// }
    ///
    /// # #[tokio::main] async fn main() -> hmap::Result<()> {
    /// let users = Table::<User, _>::new(MemoryStore::new());
    /// users.create().await?;
    /// let quick = users.with_options(CallOptions::new().timeout(Duration::from_millis(500)));
    /// quick.put(&User { id: "u1".into(), name: "Ann".into() }).await?;
    /// assert!(quick.get("u1").await?.is_some());
    /// # Ok(()) }
    /// ```
    pub fn with_options(&self, options: crate::store::CallOptions) -> Table<T, crate::store::WithOptions<&S>> {
        Table {
            store: options.on(&self.store),
            indexes: self.indexes.same_mode(),
            row: PhantomData,
        }
    }

    /// `Ok` unless a write of this table would go around an index of its
    /// type ([`Error::Indexed`]).
    pub(crate) async fn refuse_around_index(&self) -> Result<()> {
        self.indexes.check(&self.store, T::TABLE).await
    }

    /// The store underneath.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// A store error about one of `rows`, with that row's key parts shown
    /// next to its bytes.
    #[cold]
    fn store_error<'r>(mut e: StoreError, rows: impl IntoIterator<Item = &'r [u8]>) -> Error {
        if let StoreError::InvalidRow { row: shown, .. }
        | StoreError::CellTooLarge { row: shown, .. }
        | StoreError::NegativeTimestamp { row: shown, .. }
        | StoreError::NotACounter { row: shown, .. } = &mut e
            && let Some(row) = rows.into_iter().find(|r| crate::store::show_row(r) == *shown)
        {
            *shown = show_typed_row(Some(T::key_schema()), row);
        }
        Error::Store(e)
    }

    fn key_error(source: KeyError) -> Error {
        Error::Key {
            table: T::TABLE,
            cause: source,
        }
    }

    /// Creates the table from `T`'s schema (families, options, salt splits).
    pub async fn create(&self) -> Result<()> {
        T::key_schema().validate().map_err(Self::key_error)?;
        self.store.create_table(&T::table_schema()).await?;
        Ok(())
    }

    /// Creates the table unless it exists; returns whether it created it.
    ///
    /// A table that exists is checked as [`check_schema`](Self::check_schema)
    /// does: if it lacks a family of `T`, has other family options, or was
    /// created for another key layout, the result is
    /// [`Error::SchemaMismatch`] listing every difference.
    pub async fn create_if_missing(&self) -> Result<bool> {
        T::key_schema().validate().map_err(Self::key_error)?;
        lifecycle::create_if_missing(&self.store, T::TABLE, &T::table_schema()).await
    }

    /// Plans the [`Migration`](crate::migrate::Migration) that brings the
    /// live table in line with `T`'s schema (creating it if it does not
    /// exist), reading only. Print it to see the HBase shell statements;
    /// [`apply`](crate::migrate::Migration::apply) it, or call
    /// [`migrate`](Self::migrate).
    pub async fn migration(&self, options: &crate::migrate::MigrateOptions) -> Result<crate::migrate::Migration> {
        let live = match self.store.describe_table(T::TABLE).await {
            Ok(live) => Some(live),
            Err(StoreError::TableNotFound { .. }) => None,
            Err(e) => return Err(e.into()),
        };
        Ok(crate::migrate::Migration::plan_kept(
            &T::table_schema(),
            live.as_ref(),
            options,
            self.store.kept_family_options(),
        ))
    }

    /// Plans and applies the migration that brings the live table in line
    /// with `T`'s schema (families the table alone has are kept); returns
    /// what it applied. Migrating again does nothing. A table created for
    /// another key layout is [`Error::MigrationBlocked`], and nothing
    /// changes.
    pub async fn migrate(&self) -> Result<crate::migrate::Migration> {
        T::key_schema().validate().map_err(Self::key_error)?;
        let migration = self.migration(&crate::migrate::MigrateOptions::new()).await?;
        migration.apply(&self.store).await?;
        Ok(migration)
    }

    /// Compares `T`'s schema with the live table's, reading only: every
    /// difference, errors and informational ones alike (see
    /// [`SchemaDiff`]). Fails only if the table cannot be described.
    pub async fn schema_diff(&self) -> Result<SchemaDiff> {
        lifecycle::schema_diff(&self.store, T::TABLE, &T::table_schema()).await
    }

    /// Checks that the live table fits `T`, reading only, as an application
    /// may at startup: [`Error::SchemaMismatch`] lists every difference if
    /// any is an error (a family missing, a family option that differs,
    /// another key layout); otherwise the diff is returned, holding the
    /// informational differences (families only the table has, no recorded
    /// key layout). A table whose key layout hmap did not record opens, with
    /// a warning logged through `tracing`.
    ///
    /// ```
    /// use hmap::schema::{FamilySchema, TableSchema};
    /// use hmap::store::{MemoryStore, Store};
    /// use hmap::{Error, HTable, Table};
    ///
    /// #[derive(HTable)]
    /// #[hmap(table = "user", family(name = "i", versions = 3))]
    /// struct User {
    ///     #[hmap(key)]
    ///     id: String,
    ///     #[hmap(family = "i")]
    ///     name: String,
    /// }
    ///
    /// # #[tokio::main] async fn main() -> Result<(), hmap::Error> {
    /// let store = MemoryStore::new();
    /// // Made by hand, with one version and no recorded key layout.
    /// store.create_table(&TableSchema::new("user").family(FamilySchema::new("i"))).await?;
    /// let users = Table::<User, _>::new(&store);
    /// let err = users.check_schema().await.unwrap_err();
    /// assert!(matches!(err, Error::SchemaMismatch { .. }));
    /// assert_eq!(
    ///     err.to_string(),
    ///     "table `user` does not match its struct: family `i`: VERSIONS is 1 in the table, 3 in the struct"
    /// );
    /// # Ok(()) }
    /// ```
    pub async fn check_schema(&self) -> Result<SchemaDiff> {
        lifecycle::check_schema(&self.store, T::TABLE, &T::table_schema()).await
    }

    /// Whether the table exists.
    pub async fn exists(&self) -> Result<bool> {
        Ok(self.store.table_exists(T::TABLE).await?)
    }

    /// Deletes the table and every row in it (on HBase: disables, then
    /// deletes it).
    pub async fn drop(&self) -> Result<()> {
        Ok(self.store.delete_table(T::TABLE).await?)
    }

    /// Deletes every row, keeping the table, its schema and its split
    /// points ([`Store::truncate_table`]).
    pub async fn truncate(&self) -> Result<()> {
        Ok(self.store.truncate_table(T::TABLE).await?)
    }

    /// The rowkey of a key value: the table's [key](HTable::Key), a tuple
    /// of every key part ([`KeyArg`] says what each part takes).
    pub fn row_key(&self, key: impl KeyArg<T::Key>) -> Result<Bytes> {
        T::key_schema().encode(&key).map(Bytes::from).map_err(Self::key_error)
    }

    /// The rowkey of a key value `T` accepts ([`KeyOf`]), for the calls
    /// that take a key: the same bytes as [`row_key`](Self::row_key), whose
    /// bound a generic caller's `impl KeyArg<T::Key>` meets.
    fn key_of<A>(key: A) -> Result<Bytes>
    where
        T: KeyOf<A>,
    {
        T::encode_key_arg(&key).map(Bytes::from).map_err(Self::key_error)
    }

    /// The rowkey of a row.
    pub fn row_key_of(&self, row: &T) -> Result<Bytes> {
        let mut out = Vec::new();
        row.encode_key(&mut out).map_err(Self::key_error)?;
        Ok(Bytes::from(out))
    }

    /// Decodes a rowkey into its named parts, to read salted or binary keys
    /// while debugging. Accepts raw bytes.
    pub fn inspect_key(&self, row_key: &[u8]) -> Result<KeyInspection> {
        T::key_schema().inspect(row_key).map_err(Self::key_error)
    }

    /// The families `T`'s fields are stored in, each once. Reads name them,
    /// as HBase clients do: only these cells are fetched, and a family the
    /// table lacks is the store's [`StoreError::NoSuchFamily`] naming table
    /// and family (HBase's `NoSuchColumnFamilyException`), as for a put,
    /// rather than a missing cell.
    ///
    /// [`StoreError::NoSuchFamily`]: crate::store::StoreError::NoSuchFamily
    fn get_request(row: Bytes) -> Get {
        read_families::<T>().fold(Get::new(row).max_versions(T::read_versions()), Get::family)
    }

    pub(crate) fn decode(result: &RowResult) -> Result<T> {
        let key: T::Key = T::key_schema().decode(&result.row).map_err(Self::key_error)?;
        let reader = RowReader {
            key: Some(T::key_schema()),
            ..RowReader::new(T::TABLE, result)
        };
        T::read_row(key, &reader)
    }

    /// Reads the row with this key: the table's [key](HTable::Key), a
    /// reference to it, or a tuple of every key part in which a `&str`
    /// stands for a `String` ([`KeyOf`]). Only the families of `T`'s fields
    /// are read: a row with no cells in them reads
    /// as `None`, and a family the table lacks is an error naming it.
    // Not an `async fn`, here and in the other calls that take a key: an
    // async fn's future is generic over the key's type and carries its
    // bound, which the compiler checks again at the call and at the
    // `.await`, so a key of the wrong type was three copies of one error.
    // The key is encoded at once and the rest boxed: one allocation, beside
    // the store's own boxed call.
    pub fn get<A>(&self, key: A) -> KeyCall<'_, Option<T>>
    where
        T: KeyOf<A>,
    {
        let row = Self::key_of(key);
        Box::pin(async move { self.get_row(row?).await })
    }

    /// Reads a row by its raw rowkey.
    pub async fn get_row(&self, row_key: impl Into<Bytes>) -> Result<Option<T>> {
        self.store
            .get(T::TABLE, &Self::get_request(row_key.into()))
            .await?
            .map(|r| Self::decode(&r))
            .transpose()
    }

    /// Reads many rows in one call; results in the order of `keys`, each
    /// what [`get`](Self::get) of its key answers: `Ok(None)` for a row
    /// that does not exist, an error (naming table, row and column) for one
    /// that does not read as `T` (a required cell missing, a cell that does
    /// not decode), or the store's error for a row it could not read (a
    /// region NativeStore could not reach within the deadline; see
    /// [`Store::get_each`]). As a [scan](Self::scan) yields such a row as an
    /// error and goes on, one unreadable row does not hide the others: the
    /// call as a whole fails only when a key does not encode or the store
    /// fails for every row.
    ///
    /// ```
    /// # use hmap::{HTable, Table};
    /// # use hmap::store::MemoryStore;
    /// # #[derive(HTable, Debug, PartialEq)]
    /// # #[hmap(table = "user", family(name = "i"))]
    /// # struct User { #[hmap(key)] id: String, name: String }
    /// # #[tokio::main] async fn main() -> Result<(), hmap::Error> {
    /// let users = Table::<User, _>::new(MemoryStore::new());
    /// users.create().await?;
    /// users.put(&User { id: "u1".into(), name: "Ann".into() }).await?;
    /// let found: Vec<User> = users
    ///     .get_many(["u1", "u2"])
    ///     .await?
    ///     .into_iter()
    ///     .filter_map(Result::transpose)
    ///     .collect::<Result<_, _>>()?;
    /// assert_eq!(found, [User { id: "u1".into(), name: "Ann".into() }]);
    /// # Ok(()) }
    /// ```
    pub fn get_many<K>(&self, keys: impl IntoIterator<Item = K>) -> KeyCall<'_, Vec<Result<Option<T>>>>
    where
        T: KeyOf<K>,
    {
        // Boxed, and the keys encoded at once, as in `get`.
        let gets = keys
            .into_iter()
            .map(|k| Self::key_of(k).map(Self::get_request))
            .collect::<Result<Vec<_>>>();
        Box::pin(async move { self.get_rows(gets?).await })
    }

    /// Reads many rows by raw rowkey in one call, each answered as
    /// [`get_many`](Self::get_many) answers it.
    pub async fn get_many_rows(&self, row_keys: impl IntoIterator<Item = Bytes>) -> Result<Vec<Result<Option<T>>>> {
        self.get_rows(row_keys.into_iter().map(Self::get_request).collect())
            .await
    }

    async fn get_rows(&self, gets: Vec<Get>) -> Result<Vec<Result<Option<T>>>> {
        let rows = self.store.get_each(T::TABLE, &gets).await?;
        Ok(rows
            .into_iter()
            .zip(&gets)
            .map(|(row, get)| match row {
                Ok(row) => row.as_ref().map(Self::decode).transpose(),
                Err(e) => Err(Self::store_error(e, [&get.row[..]])),
            })
            .collect())
    }

    /// A row's cells as one mutation of the row `key` (its
    /// [`row_key_of`](Self::row_key_of), computed by the caller before it
    /// took `timestamp` for that row).
    pub(crate) fn mutation_of(
        &self,
        row: &T,
        key: Bytes,
        only: Option<&[&str]>,
        timestamp: i64,
    ) -> Result<RowMutation> {
        let mut writer = RowWriter::at(T::TABLE, &key, timestamp);
        writer.only = only;
        writer.key = Some(T::key_schema());
        // One cell a field at least (more for dynamic columns and versions).
        writer.reserve(T::fields().len());
        row.write_cells(&mut writer)?;
        let mutations = writer.into_mutations();
        Ok(RowMutation { row: key, mutations })
    }

    /// Writes a row: every cell of its fields, stamped with
    /// [`next_timestamp`](crate::clock::next_timestamp), so that within a
    /// process a later write always wins, also over a delete of the same row
    /// in the same millisecond (which a server-stamped put would lose). That
    /// clock never runs ahead of the wall clock (a second write of the row in
    /// one millisecond waits for the next), so a delete the server stamps
    /// afterwards removes what this wrote. An `Option` field that is
    /// `None` deletes its stored cell (unless marked `keep_on_none`); a
    /// dynamic map replaces its family; counters are left alone. A type with
    /// a `version` field writes only if the stored version is the row's
    /// (else [`Error::Conflict`]), and stores the next version.
    pub async fn put(&self, row: &T) -> Result<()> {
        self.refuse_around_index().await?;
        let key = self.row_key_of(row)?;
        let ts = self.next_timestamp_of(&key);
        self.write(row, key, None, ts).await.map(|_| ())
    }

    /// [`put`](Self::put) of the row `key` (its
    /// [`row_key_of`](Self::row_key_of)) at a timestamp the caller took for
    /// it (a relation operation writing several rows at one timestamp);
    /// the version stored, for versioned types.
    pub(crate) async fn save_at(&self, row: &T, key: Bytes, timestamp: i64) -> Result<Option<u64>> {
        self.write(row, key, None, timestamp).await
    }

    /// A timestamp for a call writing the row `key` of this table.
    fn next_timestamp_of(&self, key: &[u8]) -> i64 {
        crate::clock::next_timestamp(&RowSet::of(T::TABLE, key))
    }

    /// [`put`](Self::put), then sets the row's version field to the version
    /// now stored.
    pub async fn save(&self, row: &mut T) -> Result<()> {
        self.refuse_around_index().await?;
        let key = self.row_key_of(row)?;
        let ts = self.next_timestamp_of(&key);
        if let Some(version) = self.write(row, key, None, ts).await? {
            row.set_version(version);
        }
        Ok(())
    }

    /// Writes only the given fields of a row: `users.update(&user,
    /// [User::NAME, User::CITY])`, with the handles the derive generates
    /// (a tuple, `(User::NAME, User::AGE)`, for fields of different types).
    pub async fn update(&self, row: &T, fields: impl Fields<T>) -> Result<()> {
        let fields = fields.names();
        self.check_update_fields(&fields)?;
        self.refuse_around_index().await?;
        let key = self.row_key_of(row)?;
        let ts = self.next_timestamp_of(&key);
        self.write(row, key, Some(&fields), ts).await.map(|_| ())
    }

    /// [`update`](Self::update) of the row `key` (its
    /// [`row_key_of`](Self::row_key_of)) at a timestamp the caller took for it.
    pub(crate) async fn update_at(&self, row: &T, key: Bytes, fields: &[&str], timestamp: i64) -> Result<()> {
        self.check_update_fields(fields)?;
        self.write(row, key, Some(fields), timestamp).await.map(|_| ())
    }

    /// Checks that `fields` name fields an update may write.
    fn check_update_fields(&self, fields: &[&str]) -> Result<()> {
        for name in fields {
            match T::fields().iter().find(|f| f.name == *name) {
                None => return Err(self.field_error(name, "is not a field of this table")),
                Some(f) if f.role == FieldRole::Key => {
                    return Err(self.field_error(name, "is part of the key; write the row under its new key instead"));
                }
                Some(f) if f.role == FieldRole::Counter => {
                    return Err(self.field_error(name, "is a counter; use `increment`"));
                }
                Some(f) if f.role == FieldRole::Relation => {
                    return Err(self.field_error(
                        name,
                        "is a relation's list; change it with the relation's `link` and `unlink`",
                    ));
                }
                Some(f) if f.role == FieldRole::Parent => {
                    return Err(
                        self.field_error(name, "is a tree node's parent; change it with the tree's `move_node`")
                    );
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    fn field_error(&self, field: &str, reason: &'static str) -> Error {
        Error::Field {
            table: T::TABLE,
            field: field.into(),
            reason,
        }
    }

    /// Writes a row; returns the version stored for versioned types.
    async fn write(&self, row: &T, key: Bytes, only: Option<&[&str]>, ts: i64) -> Result<Option<u64>> {
        let mut mutation = self.mutation_of(row, key, only, ts)?;
        let (Some(version), Some(field)) = (row.version(), T::fields().iter().find(|f| f.role == FieldRole::Version))
        else {
            self.store
                .mutate(T::TABLE, std::slice::from_ref(&mutation))
                .map_err(|e| Self::store_error(e, [&mutation.row[..]]))
                .await?;
            return Ok(None);
        };
        let next = version + 1;
        mutation.mutations.push(Mutation::Put {
            family: Bytes::from_static(field.family.as_bytes()),
            qualifier: Bytes::from_static(field.qualifier.as_bytes()),
            value: Bytes::copy_from_slice(&next.to_be_bytes()),
            timestamp: Some(ts),
        });
        let expected = (version > 0).then(|| Bytes::copy_from_slice(&version.to_be_bytes()));
        let row_key = mutation.row.clone();
        let applied = self
            .store
            .check_and_mutate(
                T::TABLE,
                &CheckAndMutate::new(mutation, field.family, field.qualifier, expected),
            )
            .map_err(|e| Self::store_error(e, [&row_key[..]]))
            .await?;
        if applied {
            return Ok(Some(next));
        }
        let stored = self
            .store
            .get(
                T::TABLE,
                &Get::new(row_key.clone()).column(field.family, field.qualifier),
            )
            .await?
            .and_then(|r| r.value(field.family, field.qualifier))
            .and_then(|v| <[u8; 8]>::try_from(&v[..]).ok())
            .map(u64::from_be_bytes);
        Err(Error::Conflict {
            table: T::TABLE,
            row: show_typed_row(Some(T::key_schema()), &row_key),
            expected: version,
            found: stored.map_or_else(|| "absent".into(), |v| v.to_string()),
        })
    }

    /// Writes many rows in one call (each row atomically, rows independently),
    /// all stamped with one timestamp: give each row once per call (two
    /// writes of a row at one timestamp are one version, and two maps of a
    /// dynamic family merge). Every row is checked before any is written, so
    /// a row the store refuses writes nothing.
    ///
    /// A versioned type's rows are each a check-and-put of its own
    /// ([`put`](Self::put)), sent a few at once: every row that does not
    /// conflict is written, and the error is the first failed row's
    /// ([`put_each`](Self::put_each) names each).
    pub async fn put_many<'r>(&self, rows: impl IntoIterator<Item = &'r T>) -> Result<()>
    where
        T: 'r,
    {
        self.refuse_around_index().await?;
        if Self::versioned() {
            return self.put_each(rows).await?.into_result();
        }
        let rows = rows
            .into_iter()
            .map(|r| Ok((r, self.row_key_of(r)?)))
            .collect::<Result<Vec<_>>>()?;
        let ts = crate::clock::next_timestamp(&RowSet::of_rows(T::TABLE, rows.iter().map(|(_, k)| &k[..])));
        let mutations = rows
            .into_iter()
            .map(|(r, key)| self.mutation_of(r, key, None, ts))
            .collect::<Result<Vec<_>>>()?;
        self.store
            .mutate(T::TABLE, &mutations)
            .map_err(|e| Self::store_error(e, mutations.iter().map(|m| &m.row[..])))
            .await?;
        Ok(())
    }

    /// Writes many rows as [`put_many`](Self::put_many) does, each row on
    /// its own: what became of each, in the order given. A row whose key
    /// or fields do not encode, that the store refuses (a cell too large),
    /// or, for a type with a `version` field, whose stored version is not
    /// the row's ([`Error::Conflict`]) is
    /// [`Refused`](crate::store::RowOutcome::Refused) without stopping the
    /// others; a row whose answer the call lost is
    /// [`Unknown`](crate::store::RowOutcome::Unknown). `Err` is for the
    /// call as a whole: the table does not exist.
    ///
    /// ```
    /// use hmap::store::{MemoryStore, RowOutcome};
    /// use hmap::{Error, HTable, Table};
    ///
    /// #[derive(HTable, Clone)]
    /// #[hmap(table = "account", family(name = "a"))]
    /// struct Account {
    ///     #[hmap(key)]
    ///     id: String,
    ///     #[hmap(family = "a")]
    ///     owner: String,
    ///     #[hmap(version)]
    ///     version: u64,
    /// }
    ///
    /// # #[tokio::main] async fn main() -> hmap::Result<()> {
    /// let accounts = Table::<Account, _>::new(MemoryStore::new());
    /// accounts.create().await?;
    /// let mut a1 = Account { id: "a1".into(), owner: "ann".into(), version: 0 };
    /// accounts.save(&mut a1).await?; // stored at version 1
    /// let stale = Account { version: 0, ..a1.clone() }; // read before that
    /// let a2 = Account { id: "a2".into(), owner: "bob".into(), version: 0 };
    /// let outcome = accounts.put_each([&stale, &a2]).await?;
    /// assert!(matches!(outcome[0], RowOutcome::Refused(Error::Conflict { .. })));
    /// assert!(outcome[1].is_applied());
    /// # Ok(()) }
    /// ```
    pub async fn put_each<'r>(&self, rows: impl IntoIterator<Item = &'r T>) -> Result<BatchOutcome<Error>>
    where
        T: 'r,
    {
        self.refuse_around_index().await?;
        let rows: Vec<&T> = rows.into_iter().collect();
        let outcome: Vec<RowOutcome<Error>> = if Self::versioned() {
            // Each row its own check-and-put, a few at once. (By index: a
            // closure over references would make this future's `Send`
            // higher-ranked, which a spawned caller cannot prove.)
            let rows = &rows;
            futures_util::stream::iter(0..rows.len())
                .map(|i| self.versioned_outcome(rows[i]))
                .buffered(VERSIONED_AT_ONCE)
                .collect()
                .await
        } else {
            let keys: Vec<Result<Bytes>> = rows.iter().map(|r| self.row_key_of(r)).collect();
            let valid_keys = keys.iter().filter_map(|k| k.as_ref().ok()).map(|k| &k[..]);
            let ts = crate::clock::next_timestamp(&RowSet::of_rows(T::TABLE, valid_keys));
            let mut outcome: Vec<Option<RowOutcome<Error>>> = Vec::with_capacity(rows.len());
            let mut mutations = Vec::with_capacity(rows.len());
            for (row, key) in rows.iter().zip(keys) {
                match key.and_then(|key| self.mutation_of(row, key, None, ts)) {
                    Ok(mutation) => {
                        mutations.push(mutation);
                        outcome.push(None);
                    }
                    Err(e) => outcome.push(Some(RowOutcome::Refused(e))),
                }
            }
            let written = self
                .store
                .mutate_each(T::TABLE, &mutations)
                .await
                .map_err(|e| Self::store_error(e, mutations.iter().map(|m| &m.row[..])))?;
            let mut written = written.into_iter().zip(&mutations);
            outcome
                .into_iter()
                .map(|o| match o {
                    Some(refused) => refused,
                    None => match written.next() {
                        Some((o, m)) => o.map_err(|e| Self::store_error(e, [&m.row[..]])),
                        None => RowOutcome::Unknown(Error::Store(StoreError::Protocol {
                            endpoint: String::new(),
                            table: T::TABLE.into(),
                            operation: "mutate_each",
                            message: "the store answered for fewer rows than it was given".into(),
                        })),
                    },
                })
                .collect()
        };
        // A table that is not there fails the call as a whole.
        if let Some(RowOutcome::Refused(Error::Store(StoreError::TableNotFound { .. }))) = outcome.first()
            && !outcome.iter().any(RowOutcome::is_applied)
        {
            return Err(Error::Store(StoreError::TableNotFound { table: T::TABLE.into() }));
        }
        Ok(BatchOutcome::new(outcome))
    }

    /// A versioned row's check-and-put, as a row of a batch.
    async fn versioned_outcome(&self, row: &T) -> RowOutcome<Error> {
        let key = match self.row_key_of(row) {
            Ok(key) => key,
            Err(e) => return RowOutcome::Refused(e),
        };
        let ts = self.next_timestamp_of(&key);
        match self.write(row, key, None, ts).await {
            Ok(_) => RowOutcome::Applied,
            Err(e) => row_failed(e),
        }
    }

    /// Whether `T` has a `version` field (its writes are checked).
    fn versioned() -> bool {
        T::fields().iter().any(|f| f.role == FieldRole::Version)
    }

    /// Writes the row, as [`put`](Self::put) does, only if `condition`
    /// holds for the row as stored, atomically (HBase's `CheckAndMutate`);
    /// answers whether it wrote. The condition reads the stored row's fields
    /// as a typed filter does ([`Where`]): a row without the field, or no
    /// row at all, does not pass (`is_missing` passes those).
    ///
    /// A test of one field with a value (`equals`, `not_equals`, the
    /// orderings) is a compare of its column, which every backend sends
    /// (Thrift1's gateway: equality only); anything else (`starts_with`,
    /// `matches`, `is_missing`, `and`, `or`) is sent as a filter, which the
    /// Thrift gateways refuse with `StoreError::Unsupported`. A type with a
    /// `version` field is refused ([`Error::Query`]): its writes are
    /// checked against its version already.
    ///
    /// ```
    /// use hmap::store::MemoryStore;
    /// use hmap::{HTable, Table};
    ///
    /// #[derive(HTable, Debug, Clone)]
    /// #[hmap(table = "job", family(name = "j"))]
    /// struct Job {
    ///     #[hmap(key)]
    ///     id: u32,
    ///     #[hmap(family = "j")]
    ///     state: String,
    ///     #[hmap(family = "j")]
    ///     worker: Option<String>,
    /// }
    ///
    /// # #[tokio::main] async fn main() -> hmap::Result<()> {
    /// let jobs = Table::<Job, _>::new(MemoryStore::new());
    /// jobs.create().await?;
    /// jobs.put(&Job { id: 1, state: "queued".into(), worker: None }).await?;
    /// // Two workers claim job 1; only the first finds it queued.
    /// let claim = |worker: &str| Job { id: 1, state: "running".into(), worker: Some(worker.into()) };
    /// assert!(jobs.put_if(&claim("w1"), Job::STATE.equals("queued")).await?);
    /// assert!(!jobs.put_if(&claim("w2"), Job::STATE.equals("queued")).await?);
    /// assert_eq!(jobs.get(1u32).await?.and_then(|j| j.worker).as_deref(), Some("w1"));
    /// # Ok(()) }
    /// ```
    pub async fn put_if(&self, row: &T, condition: Where<T>) -> Result<bool> {
        let key = self.row_key_of(row)?;
        let ts = self.next_timestamp_of(&key);
        let mutation = self.mutation_of(row, key, None, ts)?;
        self.mutate_if(mutation, condition).await
    }

    /// Writes only the given fields of the row, as [`update`](Self::update)
    /// does, only if `condition` holds for the row as stored (see
    /// [`put_if`](Self::put_if)); answers whether it wrote.
    pub async fn update_if(&self, row: &T, fields: impl Fields<T>, condition: Where<T>) -> Result<bool> {
        let fields = fields.names();
        self.check_update_fields(&fields)?;
        let key = self.row_key_of(row)?;
        let ts = self.next_timestamp_of(&key);
        let mutation = self.mutation_of(row, key, Some(&fields), ts)?;
        self.mutate_if(mutation, condition).await
    }

    /// Deletes the row with this key, as [`delete`](Self::delete) does,
    /// only if `condition` holds for the row as stored (see
    /// [`put_if`](Self::put_if)); answers whether it deleted.
    pub fn delete_if<A>(&self, key: A, condition: Where<T>) -> KeyCall<'_, bool>
    where
        T: KeyOf<A>,
    {
        let row = Self::key_of(key);
        Box::pin(async move {
            let row = row?;
            self.refuse_linked(std::slice::from_ref(&row)).await?;
            let ts = self.next_timestamp_of(&row);
            let mutation = RowMutation::new(row).push(Mutation::DeleteRow { up_to: Some(ts) });
            self.mutate_if(mutation, condition).await
        })
    }

    /// Applies `mutation` if `condition` holds; whether it did.
    async fn mutate_if(&self, mutation: RowMutation, condition: Where<T>) -> Result<bool> {
        if Self::versioned() {
            return Err(Error::Query {
                table: T::TABLE,
                reason: "a type with a `version` field is written at its version (`put`, `save`); a condition \
                         beside it is not supported"
                    .into(),
            });
        }
        self.refuse_around_index().await?;
        let condition = condition.into_filter().map_err(|e| e.error(T::TABLE))?;
        let op = filter::conditional(mutation, condition);
        let row = op.row.clone();
        self.store
            .check_and_mutate(T::TABLE, &op)
            .await
            .map_err(|e| Self::store_error(e, [&row[..]]))
    }

    /// Deletes the row with this key. A row that a relation links (one of
    /// its `#[hmap(dynamic, relation)]` families is not empty) is not
    /// deleted: [`Error::Linked`] names the family, and the relation's
    /// delete (`ManyToMany::delete_left`/`delete_right`) removes the row
    /// and its id from the partners' lists.
    pub fn delete<A>(&self, key: A) -> KeyCall<'_, ()>
    where
        T: KeyOf<A>,
    {
        // Boxed, and the key encoded at once, as in `get`.
        let row = Self::key_of(key);
        Box::pin(async move { self.delete_rows([row?]).await })
    }

    /// Deletes rows by raw rowkey, in one call; refuses (deleting none) if
    /// a relation links any of them, as [`delete`](Self::delete) does. For
    /// a type with relation families that check is one batched get before
    /// the delete.
    pub async fn delete_rows(&self, row_keys: impl IntoIterator<Item = Bytes>) -> Result<()> {
        let rows: Vec<Bytes> = row_keys.into_iter().collect();
        self.refuse_around_index().await?;
        self.refuse_linked(&rows).await?;
        let ts = crate::clock::next_timestamp(&RowSet::of_rows(T::TABLE, rows.iter().map(|k| &k[..])));
        self.delete_rows_at(rows, ts).await
    }

    /// The families that relation helpers own (`#[hmap(dynamic, relation)]`).
    pub(crate) fn relation_families() -> impl Iterator<Item = &'static str> {
        T::fields()
            .iter()
            .filter(|f| f.role == FieldRole::Relation)
            .map(|f| f.family)
    }

    /// [`Error::Linked`] if a relation family of one of these rows holds an
    /// entry (one batched get; none for a type without relation families).
    pub(crate) async fn refuse_linked(&self, rows: &[Bytes]) -> Result<()> {
        let families: Vec<&'static str> = Self::relation_families().collect();
        if families.is_empty() || rows.is_empty() {
            return Ok(());
        }
        let gets: Vec<Get> = rows
            .iter()
            .map(|row| families.iter().fold(Get::new(row.clone()), |g, f| g.family(*f)))
            .collect();
        for (row, result) in rows.iter().zip(self.store.get_many(T::TABLE, &gets).await?) {
            let Some(result) = result else { continue };
            if let Some(family) = families.iter().find(|f| result.family(f.as_bytes()).next().is_some()) {
                return Err(Error::Linked {
                    table: T::TABLE,
                    row: show_typed_row(Some(T::key_schema()), row),
                    family,
                });
            }
        }
        Ok(())
    }

    /// The families that hold an entity's own fields: those of `T`'s fields
    /// but its relation families. Empty for a type that is nothing but its
    /// lists, whose existence cannot be told.
    pub(crate) fn entity_families() -> Vec<&'static str> {
        let mut families: Vec<&'static str> = T::fields()
            .iter()
            .filter(|f| !matches!(f.role, FieldRole::Key | FieldRole::Relation))
            .map(|f| f.family)
            .collect();
        families.sort_unstable();
        families.dedup();
        families
    }

    /// Which of these rows hold an entity: a cell in a family of `T`'s
    /// fields other than its relation families (a row holding only a
    /// relation's list is no entity). One batched get. Every row of a type
    /// that is nothing but its relation lists counts as existing.
    pub(crate) async fn rows_exist(&self, rows: &[Bytes]) -> Result<Vec<bool>> {
        let families = Self::entity_families();
        if families.is_empty() {
            return Ok(vec![true; rows.len()]);
        }
        let gets: Vec<Get> = rows
            .iter()
            .map(|row| families.iter().fold(Get::new(row.clone()), |g, f| g.family(*f)))
            .collect();
        Ok(self
            .store
            .get_many(T::TABLE, &gets)
            .await?
            .iter()
            .map(|r| r.as_ref().is_some_and(|r| !r.cells.is_empty()))
            .collect())
    }

    /// [`delete_rows`](Self::delete_rows) up to a timestamp the caller took.
    pub(crate) async fn delete_rows_at(&self, row_keys: impl IntoIterator<Item = Bytes>, ts: i64) -> Result<()> {
        let mutations: Vec<RowMutation> = row_keys
            .into_iter()
            .map(|k| RowMutation::new(k).push(Mutation::DeleteRow { up_to: Some(ts) }))
            .collect();
        self.store
            .mutate(T::TABLE, &mutations)
            .map_err(|e| Self::store_error(e, mutations.iter().map(|m| &m.row[..])))
            .await?;
        Ok(())
    }

    /// Adds `amount` to a counter field (`User::POSTS`); returns its new
    /// value.
    ///
    /// HBase's `Increment` creates a row that does not exist
    /// (`HRegion.increment` starts a missing counter at 0), and a row
    /// holding only a counter does not read back as a type with a required
    /// field: every later `get`, and a relation's `link`, would fail on it
    /// with [`Error::MissingCell`]. So when `T` has such a field (one whose
    /// cell a row holding only this counter lacks), the row must hold the
    /// entity (a cell of a field other than a counter or a relation list):
    /// else [`Error::NoSuchEntity`] names the table and the row, and nothing
    /// is written. That check is one get before the increment; a delete of
    /// the row in between still leaves a counter-only row. A type whose
    /// fields are all optional (or counters, or dynamic) reads such a row
    /// back, so its increment creates the row, as HBase's does.
    pub fn increment<A, C>(&self, key: A, field: Field<T, i64, C>, amount: i64) -> KeyCall<'_, i64>
    where
        T: KeyOf<A>,
    {
        // Boxed, and the key encoded at once, as in `get`.
        let row = Self::key_of(key);
        Box::pin(self.increment_row(row, field.name(), amount))
    }

    async fn increment_row(&self, row: Result<Bytes>, field: &'static str, amount: i64) -> Result<i64> {
        let info = T::fields()
            .iter()
            .find(|f| f.name == field)
            .ok_or_else(|| self.field_error(field, "is not a field of this table"))?;
        if info.role != FieldRole::Counter {
            return Err(self.field_error(field, "is not a counter (mark it #[hmap(counter)])"));
        }
        let row = row?;
        self.require_entity_for(&row, info).await?;
        let values = self
            .store
            .increment(
                T::TABLE,
                &Increment::new(row.clone()).add(info.family, info.qualifier, amount),
            )
            .map_err(|e| Self::store_error(e, [&row[..]]))
            .await?;
        Ok(values.first().copied().unwrap_or_default())
    }

    /// [`Error::NoSuchEntity`] if `row` holds no entity while a row holding
    /// only `counter` would not read back as `T` (see
    /// [`increment`](Self::increment)).
    async fn require_entity_for(&self, row: &Bytes, counter: &FieldInfo) -> Result<()> {
        let alone = RowResult::new(
            row.clone(),
            vec![crate::store::Cell::new(
                counter.family,
                counter.qualifier,
                0,
                Bytes::copy_from_slice(&0i64.to_be_bytes()),
            )],
        );
        if Self::decode(&alone).is_ok() {
            return Ok(());
        }
        let counters: Vec<(&str, &str)> = T::fields()
            .iter()
            .filter(|f| f.role == FieldRole::Counter)
            .map(|f| (f.family, f.qualifier))
            .collect();
        let get = Self::entity_families()
            .into_iter()
            .fold(Get::new(row.clone()), Get::family);
        let holds_entity = self.store.get(T::TABLE, &get).await?.is_some_and(|r| {
            r.cells.iter().any(|c| {
                !counters
                    .iter()
                    .any(|(f, q)| c.family == f.as_bytes() && c.qualifier == q.as_bytes())
            })
        });
        if holds_entity {
            return Ok(());
        }
        Err(Error::NoSuchEntity {
            table: T::TABLE,
            key: show_typed_row(Some(T::key_schema()), row),
        })
    }

    /// Reads the rows a query selects, in key order (reversed if asked),
    /// fetching in batches as the iterator advances. On a salted table a
    /// query that does not give the salt's parts reads every bucket and
    /// merges them in key order.
    pub fn scan<'a, Q: QueryOf<T>>(&'a self, query: Query<'_, Q>) -> KeyCall<'a, Rows<'a, T>>
    where
        T: 'a,
    {
        // The query (whose key parts need not be `Send`) becomes scans
        // before anything waits; the future is boxed, so that its type is
        // not generic over the query's table (a query of another table is
        // then one error, at the call).
        let planned = self.planned(&query);
        Box::pin(async move { Ok(Rows::new(self.merge(planned?).await?)) })
    }

    /// What a query reads: its scans, and how their rows are merged.
    fn planned<Q>(&self, query: &Query<'_, Q>) -> Result<Merge<'static>> {
        let scans = query.plan::<T>()?;
        let skip = if scans.len() > 1 {
            T::key_schema()
                .encode_prefix_in_bucket(&(), 0)
                .map_err(Self::key_error)?
                .len()
        } else {
            0
        };
        Ok(Merge {
            scans,
            scanners: Vec::new(),
            heads: Vec::new(),
            pending_error: None,
            failed: false,
            reversed: query.reversed,
            skip_salt: skip,
            offset: query.offset,
            remaining: query.limit,
        })
    }

    /// Opens the scanners of a planned query.
    async fn merge<'a>(&'a self, planned: Merge<'static>) -> Result<Merge<'a>> {
        // A merge without scanners borrows nothing: it is one of any lifetime.
        let mut merge: Merge<'a> = planned;
        for scan in &merge.scans {
            merge.scanners.push(self.store.scan(T::TABLE, scan).await?);
        }
        Ok(merge)
    }

    /// One page of a query: at most `limit` rows after `cursor`, and the
    /// cursor of the next page if there are more rows.
    pub fn page<'a, Q: QueryOf<T>>(
        &'a self,
        query: Query<'_, Q>,
        limit: usize,
        cursor: Option<&Cursor>,
    ) -> KeyCall<'a, Page<T>> {
        let mut query = query.limit(limit + 1);
        if let Some(c) = cursor {
            query = query.after(c.clone());
        }
        let planned = self.planned(&query);
        Box::pin(async move { self.page_of(planned?, limit).await })
    }

    async fn page_of(&self, planned: Merge<'static>, limit: usize) -> Result<Page<T>> {
        let mut rows = Vec::with_capacity(limit);
        let mut last = None;
        let mut more = false;
        let mut scan = self.merge(planned).await?;
        while let Some(next) = scan.next_raw().await {
            let raw = next?;
            if rows.len() == limit {
                more = true;
                break;
            }
            rows.push(Self::decode(&raw)?);
            last = Some(raw.row);
        }
        Ok(Page {
            rows,
            next: if more { last.map(Cursor) } else { None },
        })
    }
}

/// The families `T` reads, each once.
pub(crate) fn read_families<T: HTable>() -> impl Iterator<Item = &'static str> {
    let fields = T::fields();
    fields
        .iter()
        .enumerate()
        .filter(move |(i, f)| !f.family.is_empty() && !fields.iter().take(*i).any(|g| g.family == f.family))
        .map(|(_, f)| f.family)
}

/// How many versioned rows of one [`Table::put_each`] are in flight at once.
const VERSIONED_AT_ONCE: usize = 16;

/// A row's outcome after its write failed with `error`: unknown if the
/// store's error leaves it so, else refused.
pub(crate) fn row_failed(error: Error) -> RowOutcome<Error> {
    match &error {
        Error::Store(e) if e.maybe_applied() => RowOutcome::Unknown(error),
        _ => RowOutcome::Refused(error),
    }
}
