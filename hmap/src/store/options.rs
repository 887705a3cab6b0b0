//! Options of the calls made within a scope: [`CallOptions`], a timeout that
//! replaces the store's for each call (as scylla's execution profiles and
//! tokio-postgres' statement timeouts do), and [`WithOptions`], a store
//! that runs every call with them.

use std::future::Future;
use std::time::Duration;

use async_trait::async_trait;

use super::{
    Append, BatchOutcome, CheckAndMutate, FamilyChange, Get, Increment, LoadBatch, Result, RowMutation, RowResult,
    RowStream, Scan, Store,
};
use crate::schema::TableSchema;

tokio::task_local! {
    static CURRENT: CallOptions;
}

/// Options for the store calls made within a scope
/// ([`scope`](Self::scope)), or by a store wrapped with them
/// ([`on`](Self::on)): for now a timeout; more options will come, so it is
/// built with methods.
///
/// The timeout replaces the store's own ([`NativeConfig::call_timeout`](crate::store::native::NativeConfig::call_timeout),
/// `ThriftConfig::call_timeout`, `BigtableConfig::call_timeout`) for each
/// call: one deadline for the whole call, as the store's, shorter or
/// longer than it (a long export can ask for ten minutes on a store whose
/// calls get thirty seconds). A scan keeps the timeout it was opened with
/// for each of its later fetches, wherever the stream is read. A call of a
/// [`Table`](crate::Table) or of a relation helper that makes several store
/// calls gives each the timeout. It replaces the administrative timeouts
/// too (`NativeConfig::admin_timeout`, `BigtableConfig::admin_timeout`;
/// the Thrift gateways have one timeout for every call): one rule for every
/// call and backend, so a scope that creates or alters tables should give
/// them time to finish. A call that runs out of time fails with the
/// store's own timeout error. [`MemoryStore`](crate::store::MemoryStore)
/// never waits, and ignores the timeout.
///
/// ```
/// use std::time::Duration;
/// use hmap::schema::{FamilySchema, TableSchema};
/// use hmap::store::{CallOptions, Get, MemoryStore, RowMutation, Store};
///
/// # #[tokio::main] async fn main() -> Result<(), hmap::store::StoreError> {
/// let store = MemoryStore::new();
/// store.create_table(&TableSchema::new("t").family(FamilySchema::new("f"))).await?;
/// let quick = CallOptions::new().timeout(Duration::from_millis(200));
/// // Every call inside the scope, whoever makes it:
/// quick
///     .clone()
///     .scope(store.mutate("t", &[RowMutation::new("r").put("f", "q", "v")]))
///     .await?;
/// // Or every call of a store:
/// let hurried = quick.on(&store);
/// assert!(hurried.get("t", &Get::new("r")).await?.is_some());
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallOptions {
    timeout: Option<Duration>,
}

impl CallOptions {
    /// No options: each call as the store is configured. Options are set
    /// with methods, and more will come (the fields are private so that
    /// adding one breaks no caller).
    pub fn new() -> Self {
        CallOptions::default()
    }

    /// Each call's timeout, instead of the store's: one deadline for the
    /// whole call (pool checkout, connecting, retries), shorter or longer
    /// than the store's.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The timeout set, if any.
    pub fn get_timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Runs `future` with these options: every store call it makes (and
    /// the scans it opens, for their later fetches) uses them. A scope
    /// inside another wins within it.
    pub async fn scope<F: Future>(self, future: F) -> F::Output {
        CURRENT.scope(self, future).await
    }

    /// The options of the scope the caller runs in, if any.
    pub fn current() -> Option<CallOptions> {
        CURRENT.try_with(Clone::clone).ok()
    }

    /// `store`, each call of which runs with these options.
    pub fn on<S: Store>(self, store: S) -> WithOptions<S> {
        WithOptions { store, options: self }
    }
}

/// The timeout of a call starting now: the scope's, else `default` (the
/// store's).
#[cfg(any(feature = "thrift", feature = "native", feature = "bigtable", test))]
pub(crate) fn call_timeout(default: Duration) -> Duration {
    CURRENT.try_with(|o| o.timeout).ok().flatten().unwrap_or(default)
}

/// Runs `future` in `options`' scope, if there are any: a task spawned for
/// a call (a scan's prefetch) keeps its caller's options.
#[cfg(any(feature = "thrift", feature = "native", test))]
pub(crate) async fn in_scope<F: Future>(options: Option<CallOptions>, future: F) -> F::Output {
    match options {
        Some(options) => options.scope(future).await,
        None => future.await,
    }
}

/// A store whose every call runs with [`CallOptions`]: from
/// [`CallOptions::on`].
#[derive(Clone, Debug)]
pub struct WithOptions<S> {
    store: S,
    options: CallOptions,
}

impl<S> WithOptions<S> {
    /// The store underneath.
    pub fn inner(&self) -> &S {
        &self.store
    }

    /// The options of its calls.
    pub fn options(&self) -> &CallOptions {
        &self.options
    }
}

#[async_trait]
impl<S: Store> Store for WithOptions<S> {
    async fn create_table(&self, schema: &TableSchema) -> Result<()> {
        self.options.clone().scope(self.store.create_table(schema)).await
    }
    async fn delete_table(&self, table: &str) -> Result<()> {
        self.options.clone().scope(self.store.delete_table(table)).await
    }
    async fn truncate_table(&self, table: &str) -> Result<()> {
        self.options.clone().scope(self.store.truncate_table(table)).await
    }
    async fn alter_table(&self, table: &str, change: &FamilyChange) -> Result<()> {
        self.options.clone().scope(self.store.alter_table(table, change)).await
    }
    async fn table_exists(&self, table: &str) -> Result<bool> {
        self.options.clone().scope(self.store.table_exists(table)).await
    }
    async fn list_tables(&self) -> Result<Vec<String>> {
        self.options.clone().scope(self.store.list_tables()).await
    }
    async fn describe_table(&self, table: &str) -> Result<TableSchema> {
        self.options.clone().scope(self.store.describe_table(table)).await
    }
    async fn get(&self, table: &str, get: &Get) -> Result<Option<RowResult>> {
        self.options.clone().scope(self.store.get(table, get)).await
    }
    async fn get_many(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<RowResult>>> {
        self.options.clone().scope(self.store.get_many(table, gets)).await
    }
    async fn get_each(&self, table: &str, gets: &[Get]) -> Result<Vec<Result<Option<RowResult>>>> {
        self.options.clone().scope(self.store.get_each(table, gets)).await
    }
    async fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        self.options.clone().scope(self.store.mutate(table, rows)).await
    }
    async fn mutate_each(&self, table: &str, rows: &[RowMutation]) -> Result<BatchOutcome> {
        self.options.clone().scope(self.store.mutate_each(table, rows)).await
    }
    async fn load(&self, table: &str, batch: &LoadBatch) -> Result<()> {
        self.options.clone().scope(self.store.load(table, batch)).await
    }
    /// Opened in the options' scope: the scan's later fetches keep them.
    async fn scan<'a>(&'a self, table: &str, scan: &Scan) -> Result<RowStream<'a>> {
        self.options.clone().scope(self.store.scan(table, scan)).await
    }
    async fn check_and_mutate(&self, table: &str, op: &CheckAndMutate) -> Result<bool> {
        self.options.clone().scope(self.store.check_and_mutate(table, op)).await
    }
    async fn increment(&self, table: &str, op: &Increment) -> Result<Vec<i64>> {
        self.options.clone().scope(self.store.increment(table, op)).await
    }
    async fn append(&self, table: &str, op: &Append) -> Result<RowResult> {
        self.options.clone().scope(self.store.append(table, op)).await
    }
    fn forget_schema(&self, table: &str) {
        self.store.forget_schema(table);
    }
    fn kept_family_options(&self) -> &'static [crate::schema::FamilyOption] {
        self.store.kept_family_options()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_innermost_scope_gives_the_timeout() {
        let store = Duration::from_secs(30);
        assert_eq!(call_timeout(store), store);
        let outer = CallOptions::new().timeout(Duration::from_secs(2));
        let inner = CallOptions::new().timeout(Duration::from_secs(600));
        let seen = outer
            .scope(async {
                let here = call_timeout(store);
                let nested = inner.scope(async { call_timeout(store) }).await;
                (here, nested, call_timeout(store))
            })
            .await;
        assert_eq!(
            seen,
            (Duration::from_secs(2), Duration::from_secs(600), Duration::from_secs(2))
        );
        // Options without a timeout leave the store's.
        assert_eq!(CallOptions::new().scope(async { call_timeout(store) }).await, store);
    }

    #[tokio::test]
    async fn a_spawned_task_keeps_the_options_it_is_given() {
        let options = CallOptions::new().timeout(Duration::from_millis(250));
        let captured = options.clone().scope(async { CallOptions::current() }).await;
        let seen = tokio::spawn(in_scope(captured, async { call_timeout(Duration::from_secs(30)) }))
            .await
            .expect("the task ran");
        assert_eq!(seen, Duration::from_millis(250));
    }
}
