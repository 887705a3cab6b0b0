//! The store conformance suite: one function per HBase behaviour, each run
//! against any [`Store`] on a table of its own, asserting the exact cells
//! returned.
//!
//! The same cases run against [`hmap::store::MemoryStore`] in `cargo test`
//! (`tests/conformance/memory.rs`) and against a real HBase through the Thrift
//! backend. Where they disagree, HBase is right. Each case cites where HBase
//! defines the behaviour: the reference guide (RG, the section named), its
//! source (class and method), or its Thrift IDL.
//!
//! Cases use explicit timestamps wherever the assertion depends on them; where
//! a case must rely on the server's clock it allows for the clock of a server
//! on the same machine.

mod batch;
pub use batch::*;
mod conditional;
pub use conditional::*;
mod filters;
pub use filters::*;

use std::thread;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use hmap::schema::{BloomType, Compression, FamilySchema, MAX_TABLE_NAME_PART, TTL_FOREVER, TableSchema};
use hmap::store::{
    Cell, CheckAndMutate, Column, FamilyChange, Get, Increment, LoadBatch, Loader, MAX_ROW_LENGTH, RowMutation,
    RowResult, Scan, Store, StoreError, TimeRange, max_row_length,
};

/// What a conformance run needs from a backend.
pub trait Target: Send + Sync {
    /// The store under test.
    fn store(&self) -> &dyn Store;

    /// A prefix for table names, so that runs against a shared server do not
    /// collide with other tables.
    fn table_prefix(&self) -> &str {
        "hmap_conformance_"
    }

    /// How many scanners the backend holds open, if it can tell.
    fn open_scanners(&self) -> Option<usize> {
        None
    }

    /// Whether the store talks to HBase through a framed Thrift2 gateway,
    /// whose handler reads table attributes and `deleteColumnFamily`'s
    /// family from the wrong bytes: the cases about them check what hmap
    /// does instead (creates without metadata, refuses the delete).
    fn framed_gateway(&self) -> bool {
        false
    }

    /// The largest value the backend accepts, for the size-limit case.
    fn max_value_size(&self) -> usize {
        10 * 1024 * 1024
    }

    /// A second client of the same cluster, with caches of its own, that
    /// changes tables behind the store's back; `None` for a store that
    /// keeps nothing about a table between calls (the store itself then
    /// stands in).
    fn other_client(&self) -> Option<&dyn Store> {
        None
    }
}

/// A [`NativeStore`](hmap::store::native::NativeStore) under test, however
/// it connects (plain, TLS, Kerberos), with its table prefix and a second
/// client of the same cluster.
pub struct NativeTarget {
    /// The store under test.
    pub store: hmap::store::native::NativeStore,
    /// Its tables' prefix.
    pub prefix: String,
    /// Another client of the same cluster.
    pub other: hmap::store::native::NativeStore,
}

impl Target for NativeTarget {
    fn store(&self) -> &dyn Store {
        &self.store
    }

    fn table_prefix(&self) -> &str {
        &self.prefix
    }

    fn open_scanners(&self) -> Option<usize> {
        Some(self.store.open_scanners())
    }

    fn other_client(&self) -> Option<&dyn Store> {
        Some(&self.other)
    }
}

/// A [`ThriftStore`](hmap::store::ThriftStore) under test, through a
/// gateway in any mode: the same target for every mode, with what the mode
/// changes (framed gateways' quirks, a smaller frame for values).
pub struct ThriftTarget {
    store: hmap::store::ThriftStore,
    other: hmap::store::ThriftStore,
    prefix: String,
    framed: bool,
    max_value_size: usize,
}

impl ThriftTarget {
    /// The store on the gateway named by the environment variable
    /// `variable` (panics when it is unset or the gateway does not answer),
    /// with `config` adjusting its configuration; tables are prefixed with
    /// `prefix` (after `HMAP_TEST_PREFIX`).
    pub async fn from_env(
        variable: &str,
        prefix: &str,
        config: impl FnOnce(&mut hmap::store::ThriftConfig),
    ) -> ThriftTarget {
        let settings = gateway_settings(variable, config);
        let (framed, max_value_size) = (settings.framed, settings.max_value_size);
        let store = hmap::store::ThriftStore::with_config(settings.clone());
        expect_answer(variable, &settings, store.ping().await);
        ThriftTarget {
            store,
            other: hmap::store::ThriftStore::with_config(settings.clone()),
            prefix: crate::test_table_prefix(prefix),
            framed,
            max_value_size,
        }
    }
}

impl Target for ThriftTarget {
    fn store(&self) -> &dyn Store {
        &self.store
    }

    fn table_prefix(&self) -> &str {
        &self.prefix
    }

    fn open_scanners(&self) -> Option<usize> {
        Some(self.store.open_scanners())
    }

    fn framed_gateway(&self) -> bool {
        self.framed
    }

    fn max_value_size(&self) -> usize {
        self.max_value_size
    }

    fn other_client(&self) -> Option<&dyn Store> {
        Some(&self.other)
    }
}

/// The settings of the gateway whose address is in the environment
/// variable `variable` (panics when it is unset), in the wire mode the
/// variable names ([`hmap::store::backend`]: `HMAP_THRIFT_FRAMED` framed,
/// `HMAP_THRIFT1_COMPACT` compact and framed, ...), adjusted by `config`.
fn gateway_settings(variable: &str, config: impl FnOnce(&mut hmap::store::ThriftConfig)) -> hmap::store::ThriftConfig {
    let address = crate::required_env(variable);
    // The wire mode the variable names, as hmap-cli reads it too.
    let mut backend = hmap::store::Backend::from_env_var(variable)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| hmap::store::Backend::thrift(&address));
    let mut settings = backend
        .thrift_config_mut()
        .cloned()
        .unwrap_or_else(|| panic!("{variable} names no Thrift gateway"));
    config(&mut settings);
    settings
}

/// Panics unless the gateway of `settings` (named by `variable`) answered
/// its `ping`: a set address with no gateway behind it is a broken setup.
fn expect_answer(variable: &str, settings: &hmap::store::ThriftConfig, ping: hmap::store::Result<()>) {
    if let Err(e) = ping {
        panic!(
            "{variable}={} is set but the gateway does not answer: {e}",
            settings.address
        );
    }
}

/// A [`Thrift1Store`](hmap::store::Thrift1Store) under test, its refusals
/// recorded: every [`StoreError::Unsupported`] it returns is noted, so that
/// a case listed in [`THRIFT1_SKIPS`] is shown to fail because Thrift1
/// cannot express what it needs, and for no other reason.
pub struct Thrift1Target {
    store: Refusals<hmap::store::Thrift1Store>,
    other: Refusals<hmap::store::Thrift1Store>,
    prefix: String,
    max_value_size: usize,
}

impl Thrift1Target {
    /// The store on the Thrift1 gateway named by the environment variable
    /// `variable` (panics when it is unset or the gateway does not answer),
    /// with `split_rows` on and `config` applied to its settings; tables
    /// prefixed with `prefix` (after `HMAP_TEST_PREFIX`).
    pub async fn from_env(
        variable: &str,
        prefix: &str,
        config: impl FnOnce(&mut hmap::store::ThriftConfig),
    ) -> Thrift1Target {
        let settings = gateway_settings(variable, config);
        let max_value_size = settings.max_value_size;
        // The cases write several versions of a row in one mutation, which
        // Thrift1 can only send as several calls.
        let store = hmap::store::Thrift1Store::with_config(settings.clone()).split_rows(true);
        expect_answer(variable, &settings, store.ping().await);
        let refused = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        Thrift1Target {
            store: Refusals {
                store,
                refused: std::sync::Arc::clone(&refused),
            },
            other: Refusals {
                store: hmap::store::Thrift1Store::with_config(settings.clone()).split_rows(true),
                refused,
            },
            prefix: crate::test_table_prefix(prefix),
            max_value_size,
        }
    }

    /// The features the store refused so far, in order.
    pub fn refused(&self) -> Vec<&'static str> {
        self.store.refused.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Target for Thrift1Target {
    fn store(&self) -> &dyn Store {
        &self.store
    }

    fn table_prefix(&self) -> &str {
        &self.prefix
    }

    fn open_scanners(&self) -> Option<usize> {
        Some(self.store.store.open_scanners())
    }

    fn max_value_size(&self) -> usize {
        self.max_value_size
    }

    fn other_client(&self) -> Option<&dyn Store> {
        Some(&self.other)
    }
}

/// The cases the Thrift1 gateway cannot run, each with the feature whose
/// [`StoreError::Unsupported`] stops it (the reason, in one place). The
/// test of such a case runs it and passes only if it fails because
/// `Thrift1Store` refused that very feature first; every other case must
/// pass as on any backend.
pub const THRIFT1_SKIPS: &[(&str, &str)] = {
    use hmap::store::thrift1_unsupported as u;
    &[
        ("describe_returns_family_options", u::MIN_VERSIONS),
        ("batch_applies_rows_in_order", u::DELETE_ONE_VERSION),
        ("versions_capped_by_family", u::VERSIONS_OF_SEVERAL_COLUMNS),
        ("get_fewer_versions", u::VERSIONS_OF_SEVERAL_COLUMNS),
        ("same_timestamp_overwrites", u::VERSIONS_OF_SEVERAL_COLUMNS),
        ("older_put_is_not_latest", u::VERSIONS_OF_SEVERAL_COLUMNS),
        ("thousand_versions", u::VERSIONS_OF_SEVERAL_COLUMNS),
        ("time_range_is_half_open", u::VERSIONS_OF_SEVERAL_COLUMNS),
        ("delete_latest_reveals_previous", u::DELETE_NEWEST_VERSION),
        ("delete_latest_of_single_version", u::DELETE_NEWEST_VERSION),
        ("delete_one_version", u::DELETE_ONE_VERSION),
        ("delete_column_all_versions", u::VERSIONS_OF_SEVERAL_COLUMNS),
        ("delete_column_up_to", u::VERSIONS_OF_SEVERAL_COLUMNS),
        ("newer_put_after_delete_visible", u::VERSIONS_OF_SEVERAL_COLUMNS),
        ("delete_and_put_in_one_mutation", u::PUTS_AND_DELETES),
        ("min_versions_outlive_ttl", u::MIN_VERSIONS),
        ("min_versions_count_fresh_versions", u::MIN_VERSIONS),
        ("scan_max_versions", u::SCAN_VERSIONS),
        ("check_and_put_when_equal", u::CHECK_AND_PUTS),
        ("check_and_put_when_different", u::CHECK_AND_PUT_AT),
        ("check_absent_when_missing", u::CHECK_AND_PUT_AT),
        ("check_absent_when_present", u::CHECK_AND_PUT_AT),
        ("check_and_delete", u::CHECK_AND_DELETE),
        ("check_compares_latest_version", u::CHECK_AND_PUT_AT),
        ("increment_several_columns", u::INCREMENT_COLUMNS),
        ("min_versions_named_column_keeps_one_expired", u::MIN_VERSIONS),
        ("check_empty_means_absent_or_empty", u::CHECK_AND_PUT_AT),
        ("two_delete_latest_in_one_mutation", u::DELETE_NEWEST_VERSION),
        ("family_delete_after_deletes_of_its_family", u::DELETE_ONE_VERSION),
        ("repeated_row_in_one_batch_applies_in_order", u::DELETE_NEWEST_VERSION),
        ("family_changed_behind_the_store", u::ALTER),
        ("check_and_mutate_put_not_older_than_checked", u::CHECK_AND_PUTS),
        ("surplus_versions_survive_the_mutation", u::DELETE_NEWEST_VERSION),
        ("check_absent_guards_deletes", u::CHECK_AND_DELETE),
        ("table_metadata_round_trips", u::METADATA),
        ("truncate_keeps_schema_and_splits", u::SPLIT_KEYS),
        ("alter_adds_a_family", u::ALTER),
        ("alter_modifies_a_family", u::ALTER),
        ("alter_deletes_a_family", u::ALTER),
    ]
};

/// Runs case `name` on the Thrift1 gateway of `target`: as on any backend,
/// or, for a case in [`THRIFT1_SKIPS`], checks that it stops on its listed
/// refusal, and says that it was skipped.
pub async fn run_on_thrift1(
    name: &str,
    target: impl Future<Output = Thrift1Target>,
    case: impl for<'a> FnOnce(&'a dyn Target) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send + 'a>> + Send + 'static,
) {
    let target = std::sync::Arc::new(target.await);
    let Some(&(_, feature)) = THRIFT1_SKIPS.iter().find(|(case, _)| *case == name) else {
        return case(&*target).await;
    };
    let running = std::sync::Arc::clone(&target);
    let outcome = tokio::spawn(async move { case(&*running).await }).await;
    let refused = target.refused();
    match outcome {
        Ok(()) => panic!(
            "{name} passed on Thrift1, though THRIFT1_SKIPS lists it as needing `{feature}`: take it off the list"
        ),
        Err(e) => {
            let why = match e.try_into_panic() {
                Ok(payload) => payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default(),
                Err(e) => e.to_string(),
            };
            assert_eq!(
                refused.first().copied(),
                Some(feature),
                "{name} failed, but not first on Thrift1Store refusing `{feature}` (refusals: {refused:?}): {why}"
            );
        }
    }
    println!("{name}: skipped on Thrift1: Thrift1Store cannot express {feature}");
}

/// The Thrift1 suite: one `#[ignore]`d test per case, each run by
/// [`run_on_thrift1`]. Expand it with [`for_each_case!`](crate::for_each_case):
///
/// ```ignore
/// hmap_suite::for_each_case!(hmap_suite::thrift1_cases, target, "needs a real HBase: ...");
/// ```
#[macro_export]
macro_rules! thrift1_cases {
    ($target:ident, $reason:literal; $($case:ident,)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = $reason]
        async fn $case() {
            $crate::conformance::run_on_thrift1(stringify!($case), $target(), |t| {
                ::std::boxed::Box::pin($crate::conformance::$case(t))
            })
            .await;
        }
    )*};
}

/// The name of every case, in order.
macro_rules! case_names {
    ($($case:ident,)*) => {
        /// The name of every case of the suite, in order.
        pub const CASES: &[&str] = &[$(stringify!($case)),*];
    };
}
crate::for_each_case!(case_names);

/// A store that notes every [`StoreError::Unsupported`] it returns (in a
/// list it may share with another client of the same target).
struct Refusals<S> {
    store: S,
    refused: std::sync::Arc<std::sync::Mutex<Vec<&'static str>>>,
}

impl<S> Refusals<S> {
    fn note<T>(&self, result: hmap::store::Result<T>) -> hmap::store::Result<T> {
        if let Err(StoreError::Unsupported { feature, .. }) = &result {
            self.refused.lock().unwrap_or_else(|e| e.into_inner()).push(feature);
        }
        result
    }
}

#[async_trait::async_trait]
impl<S: Store> Store for Refusals<S> {
    async fn create_table(&self, schema: &TableSchema) -> hmap::store::Result<()> {
        self.note(self.store.create_table(schema).await)
    }
    async fn delete_table(&self, table: &str) -> hmap::store::Result<()> {
        self.note(self.store.delete_table(table).await)
    }
    async fn truncate_table(&self, table: &str) -> hmap::store::Result<()> {
        self.note(self.store.truncate_table(table).await)
    }
    async fn alter_table(&self, table: &str, change: &FamilyChange) -> hmap::store::Result<()> {
        self.note(self.store.alter_table(table, change).await)
    }
    async fn table_exists(&self, table: &str) -> hmap::store::Result<bool> {
        self.note(self.store.table_exists(table).await)
    }
    async fn list_tables(&self) -> hmap::store::Result<Vec<String>> {
        self.note(self.store.list_tables().await)
    }
    async fn describe_table(&self, table: &str) -> hmap::store::Result<TableSchema> {
        self.note(self.store.describe_table(table).await)
    }
    async fn get(&self, table: &str, get: &Get) -> hmap::store::Result<Option<RowResult>> {
        self.note(self.store.get(table, get).await)
    }
    async fn get_many(&self, table: &str, gets: &[Get]) -> hmap::store::Result<Vec<Option<RowResult>>> {
        self.note(self.store.get_many(table, gets).await)
    }
    async fn mutate(&self, table: &str, rows: &[RowMutation]) -> hmap::store::Result<()> {
        self.note(self.store.mutate(table, rows).await)
    }
    async fn scan<'a>(&'a self, table: &str, scan: &Scan) -> hmap::store::Result<hmap::store::RowStream<'a>> {
        self.note(self.store.scan(table, scan).await)
    }
    async fn check_and_mutate(&self, table: &str, op: &CheckAndMutate) -> hmap::store::Result<bool> {
        self.note(self.store.check_and_mutate(table, op).await)
    }
    async fn increment(&self, table: &str, op: &Increment) -> hmap::store::Result<Vec<i64>> {
        self.note(self.store.increment(table, op).await)
    }
    async fn append(&self, table: &str, op: &hmap::store::Append) -> hmap::store::Result<RowResult> {
        self.note(self.store.append(table, op).await)
    }
    fn forget_schema(&self, table: &str) {
        self.store.forget_schema(table)
    }
    fn kept_family_options(&self) -> &'static [hmap::schema::FamilyOption] {
        self.store.kept_family_options()
    }
}

/// The suite as tests that need a real HBase: one `#[ignore]`d test per
/// case, each running it on `target().await`. Expand it with
/// [`for_each_case!`](crate::for_each_case):
///
/// ```ignore
/// hmap_suite::for_each_case!(hmap_suite::hbase_cases, target, "needs a real HBase: ...");
/// ```
#[macro_export]
macro_rules! hbase_cases {
    ($target:ident, $reason:literal; $($case:ident,)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[ignore = $reason]
        async fn $case() {
            $crate::conformance::$case(&$target().await).await;
        }
    )*};
}

/// A table created for one case and deleted when the case ends.
pub struct TestTable<'a> {
    store: &'a dyn Store,
    /// The table's full name.
    pub name: String,
}

impl Drop for TestTable<'_> {
    fn drop(&mut self) {
        // Best effort: a failed case must not hide its own panic behind
        // this. Cases run on a multi-threaded runtime, whose thread may
        // block for the delete.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let delete = self.store.delete_table(&self.name);
            let _ = tokio::task::block_in_place(|| runtime.block_on(delete));
        }
    }
}

/// Creates `prefix + case` afresh with the given families.
pub async fn table<'a>(t: &'a dyn Target, case: &str, families: Vec<FamilySchema>) -> TestTable<'a> {
    let store = t.store();
    let name = format!("{}{case}", t.table_prefix());
    if store.table_exists(&name).await.expect("table_exists") {
        store.delete_table(&name).await.expect("delete a leftover table");
    }
    let mut schema = TableSchema::new(name.clone());
    schema.families = families;
    store.create_table(&schema).await.expect("create_table");
    TestTable { store, name }
}

/// A table with families `a` (VERSIONS 3) and `b` (VERSIONS 1).
async fn ab_table<'a>(t: &'a dyn Target, case: &str) -> TestTable<'a> {
    table(
        t,
        case,
        vec![FamilySchema::new("a").versions(3), FamilySchema::new("b")],
    )
    .await
}

/// A cell, for assertions.
pub fn cell(family: &str, qualifier: &str, timestamp: i64, value: &str) -> Cell {
    Cell::new(
        Bytes::copy_from_slice(family.as_bytes()),
        Bytes::copy_from_slice(qualifier.as_bytes()),
        timestamp,
        Bytes::copy_from_slice(value.as_bytes()),
    )
}

async fn put(t: &TestTable<'_>, rows: Vec<RowMutation>) {
    t.store.mutate(&t.name, &rows).await.expect("mutate");
}

async fn get_cells(t: &TestTable<'_>, get: Get) -> Vec<Cell> {
    t.store
        .get(&t.name, &get)
        .await
        .expect("get")
        .map_or_else(Vec::new, |r| r.cells)
}

async fn scan_rows(t: &TestTable<'_>, scan: Scan) -> Vec<RowResult> {
    t.store
        .scan(&t.name, &scan)
        .await
        .expect("scan")
        .try_collect::<Vec<_>>()
        .await
        .expect("scan rows")
}

async fn scan_keys(t: &TestTable<'_>, scan: Scan) -> Vec<Bytes> {
    scan_rows(t, scan).await.into_iter().map(|r| r.row).collect()
}

fn keys(list: &[&str]) -> Vec<Bytes> {
    list.iter().map(|k| Bytes::copy_from_slice(k.as_bytes())).collect()
}

fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Rows `r0`..`r{n-1}` zero-padded, one cell each at timestamp 1.
async fn numbered_rows(t: &TestTable<'_>, n: usize) {
    let rows = (0..n)
        .map(|i| RowMutation::new(format!("r{i:03}")).put_at("b", "q", 1, format!("v{i}")))
        .collect();
    put(t, rows).await;
}

// ---------------------------------------------------------------------------
// Tables

/// A created table exists and is listed. (Thrift2 IDL: `createTable`,
/// `tableExists`, `getTableNamesByPattern`.)
pub async fn create_table_then_exists(t: &dyn Target) {
    let tt = ab_table(t, "create_table_then_exists").await;
    assert!(t.store().table_exists(&tt.name).await.unwrap());
    assert!(t.store().list_tables().await.unwrap().contains(&tt.name));
}

/// Creating a table that exists fails with `TableExists`.
/// (HBase: `TableExistsException` from `HMaster.createTable`.)
pub async fn create_existing_table_fails(t: &dyn Target) {
    let tt = ab_table(t, "create_existing_table_fails").await;
    let schema = TableSchema::new(tt.name.clone()).family(FamilySchema::new("a"));
    let err = t.store().create_table(&schema).await.unwrap_err();
    assert!(
        matches!(err, StoreError::TableExists { ref table } if *table == tt.name),
        "{err}"
    );
}

/// Deleting a table removes it and its rows; a new table of that name starts
/// empty. (Thrift2 IDL: `disableTable` + `deleteTable`.)
pub async fn delete_table_removes_data(t: &dyn Target) {
    let tt = ab_table(t, "delete_table_removes_data").await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 1, "v")]).await;
    t.store().delete_table(&tt.name).await.unwrap();
    assert!(!t.store().table_exists(&tt.name).await.unwrap());
    let again = ab_table(t, "delete_table_removes_data").await;
    assert_eq!(get_cells(&again, Get::new("r")).await, vec![]);
}

/// Deleting, reading or writing a missing table fails with `TableNotFound`.
/// (HBase: `TableNotFoundException`.)
pub async fn missing_table_fails(t: &dyn Target) {
    let name = format!("{}missing_table_fails_never_created", t.table_prefix());
    let s = t.store();
    let _ = s.delete_table(&name).await;
    assert!(matches!(
        s.delete_table(&name).await,
        Err(StoreError::TableNotFound { .. })
    ));
    assert!(matches!(
        s.get(&name, &Get::new("r")).await,
        Err(StoreError::TableNotFound { .. })
    ));
    assert!(matches!(
        s.mutate(&name, &[RowMutation::new("r").put("a", "q", "v")]).await,
        Err(StoreError::TableNotFound { .. })
    ));
    assert!(matches!(
        s.scan(&name, &Scan::all()).await.map(|_| ()),
        Err(StoreError::TableNotFound { .. })
    ));
    assert!(matches!(
        s.describe_table(&name).await,
        Err(StoreError::TableNotFound { .. })
    ));
}

/// Every family option set at creation is what `describe` reports.
/// (Thrift2 IDL: `TColumnFamilyDescriptor` fields maxVersions, minVersions,
/// timeToLive, blockSize, blockCacheEnabled, inMemory, bloomnFilterType,
/// compressionType.)
pub async fn describe_returns_family_options(t: &dyn Target) {
    let tuned = FamilySchema::new("t")
        .versions(1000)
        .min_versions(2)
        .ttl_secs(18_000)
        .block_size(16_384)
        .block_cache(false)
        .in_memory(true)
        .bloom(BloomType::RowCol)
        .compression(Compression::Gz);
    let tt = table(
        t,
        "describe_returns_family_options",
        vec![tuned.clone(), FamilySchema::new("d")],
    )
    .await;
    let described = t.store().describe_table(&tt.name).await.unwrap();
    assert_eq!(described.name, tt.name);
    assert_eq!(described.families, vec![FamilySchema::new("d"), tuned]);
}

/// A family created without options gets HBase 2's defaults: VERSIONS 1,
/// MIN_VERSIONS 0, TTL forever, BLOCKSIZE 65536, BLOCKCACHE true, IN_MEMORY
/// false, BLOOMFILTER ROW, COMPRESSION NONE.
/// (HBase: `ColumnFamilyDescriptorBuilder.DEFAULT_*`.)
pub async fn describe_default_family_options(t: &dyn Target) {
    let tt = table(t, "describe_default_family_options", vec![FamilySchema::new("f")]).await;
    let f = &t.store().describe_table(&tt.name).await.unwrap().families[0];
    assert_eq!(
        (
            f.versions,
            f.min_versions,
            f.ttl_secs,
            f.block_size,
            f.block_cache,
            f.in_memory
        ),
        (1, 0, TTL_FOREVER, 65_536, true, false)
    );
    assert_eq!((f.bloom, f.compression), (BloomType::Row, Compression::None));
}

/// Families are reported sorted by name, whatever the creation order.
/// (HBase: `TableDescriptorBuilder` keeps families in a `TreeMap` by name.)
pub async fn describe_sorts_families(t: &dyn Target) {
    let tt = table(
        t,
        "describe_sorts_families",
        vec![FamilySchema::new("z"), FamilySchema::new("a"), FamilySchema::new("m")],
    )
    .await;
    let names: Vec<String> = t
        .store()
        .describe_table(&tt.name)
        .await
        .unwrap()
        .families
        .into_iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(names, ["a", "m", "z"]);
}

/// A table needs at least one family and a legal name.
/// (HBase: `TableDescriptorChecker.sanityCheck`, "Table should have at least
/// one column family"; `TableName.isLegalTableQualifierName`.)
pub async fn invalid_schemas_fail(t: &dyn Target) {
    let name = format!("{}invalid_schemas_fail", t.table_prefix());
    let s = t.store();
    assert!(matches!(
        s.create_table(&TableSchema::new(name.clone())).await,
        Err(StoreError::InvalidSchema { .. })
    ));
    assert!(matches!(
        s.create_table(&TableSchema::new("bad name!").family(FamilySchema::new("a")))
            .await,
        Err(StoreError::InvalidSchema { .. })
    ));
    assert!(matches!(
        s.create_table(&TableSchema::new(name.clone()).family(FamilySchema::new("a:b")))
            .await,
        Err(StoreError::InvalidSchema { .. })
    ));
    assert!(!s.table_exists(&name).await.unwrap());
}

// ---------------------------------------------------------------------------
// Puts and gets

/// A put cell reads back exactly: family, qualifier, timestamp and value.
/// (RG "Data Model": a cell is {row, column, version} -> value.)
pub async fn put_then_get(t: &dyn Target) {
    let tt = ab_table(t, "put_then_get").await;
    put(&tt, vec![RowMutation::new("r1").put_at("a", "name", 100, "Ann")]).await;
    let row = t.store().get(&tt.name, &Get::new("r1")).await.unwrap().unwrap();
    assert_eq!(row.row, Bytes::from_static(b"r1"));
    assert_eq!(row.cells, vec![cell("a", "name", 100, "Ann")]);
}

/// A row that was never written reads as nothing.
/// (HBase: `Result.isEmpty()` for a missing row; Thrift2 returns an empty TResult.)
pub async fn get_missing_row(t: &dyn Target) {
    let tt = ab_table(t, "get_missing_row").await;
    assert_eq!(t.store().get(&tt.name, &Get::new("nobody")).await.unwrap(), None);
}

/// Without a timestamp, a put is stamped with the server's current time in
/// milliseconds, the same for every cell of the mutation.
/// (RG "Versions": "the version is the current time in milliseconds";
/// `HRegion.doMiniBatchMutate` stamps a batch with one `now`.)
pub async fn put_default_timestamp_is_now(t: &dyn Target) {
    let tt = ab_table(t, "put_default_timestamp_is_now").await;
    let before = now_millis();
    put(&tt, vec![RowMutation::new("r").put("a", "x", "1").put("b", "y", "2")]).await;
    let after = now_millis();
    let cells = get_cells(&tt, Get::new("r")).await;
    assert_eq!(cells.len(), 2);
    assert_eq!(cells[0].timestamp, cells[1].timestamp);
    // Allow for a server clock a second apart from ours.
    assert!(
        before - 1000 <= cells[0].timestamp && cells[0].timestamp <= after + 1000,
        "{before} <= {} <= {after}",
        cells[0].timestamp
    );
}

/// Cells come sorted by family, then qualifier bytes.
/// (RG "Data Model > Sort Order"; `CellComparatorImpl`.)
pub async fn cells_sorted_by_family_and_qualifier(t: &dyn Target) {
    let tt = ab_table(t, "cells_sorted_by_family_and_qualifier").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("b", "z", 1, "5")
                .put_at("a", "y", 1, "3")
                .put_at("b", "a", 1, "4")
                .put_at("a", "Y", 1, "1")
                .put_at("a", "x", 1, "2"),
        ],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r")).await,
        vec![
            cell("a", "Y", 1, "1"),
            cell("a", "x", 1, "2"),
            cell("a", "y", 1, "3"),
            cell("b", "a", 1, "4"),
            cell("b", "z", 1, "5"),
        ]
    );
}

/// A get of one family returns only that family's cells.
/// (HBase: `Get.addFamily`; Thrift2 `TColumn` without qualifier.)
pub async fn get_one_family(t: &dyn Target) {
    let tt = ab_table(t, "get_one_family").await;
    put(
        &tt,
        vec![RowMutation::new("r").put_at("a", "x", 1, "1").put_at("b", "y", 1, "2")],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").family("b")).await,
        vec![cell("b", "y", 1, "2")]
    );
}

/// A get of chosen columns returns only those columns.
/// (HBase: `Get.addColumn`; Thrift2 `TColumn` with qualifier.)
pub async fn get_chosen_columns(t: &dyn Target) {
    let tt = ab_table(t, "get_chosen_columns").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "x", 1, "1")
                .put_at("a", "y", 1, "2")
                .put_at("b", "z", 1, "3"),
        ],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").column("a", "y").column("b", "z")).await,
        vec![cell("a", "y", 1, "2"), cell("b", "z", 1, "3")]
    );
}

/// A get selecting a row's columns that do not exist reads as nothing.
pub async fn get_absent_column(t: &dyn Target) {
    let tt = ab_table(t, "get_absent_column").await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "x", 1, "1")]).await;
    assert_eq!(
        t.store()
            .get(&tt.name, &Get::new("r").column("a", "nope"))
            .await
            .unwrap(),
        None
    );
}

/// Naming a family the table does not have is an error, for reads and writes.
/// (HBase: `NoSuchColumnFamilyException` from `HRegion.checkFamily`.)
pub async fn unknown_family_fails(t: &dyn Target) {
    let tt = ab_table(t, "unknown_family_fails").await;
    let s = t.store();
    assert!(matches!(
        s.get(&tt.name, &Get::new("r").family("zz")).await,
        Err(StoreError::NoSuchFamily { ref family, .. }) if family == "zz"
    ));
    assert!(matches!(
        s.mutate(&tt.name, &[RowMutation::new("r").put("zz", "q", "v")]).await,
        Err(StoreError::NoSuchFamily { .. })
    ));
    assert!(matches!(
        s.scan(&tt.name, &Scan::all().family("zz")).await.map(|_| ()),
        Err(StoreError::NoSuchFamily { .. })
    ));
}

/// A batch with a refused row writes none of its rows.
/// (hmap's contract: every row is checked before any is written.)
pub async fn refused_batch_writes_nothing(t: &dyn Target) {
    let tt = ab_table(t, "refused_batch_writes_nothing").await;
    let err = t
        .store()
        .mutate(
            &tt.name,
            &[
                RowMutation::new("good").put_at("a", "q", 1, "v"),
                RowMutation::new("bad").put_at("zz", "q", 1, "v"),
            ],
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NoSuchFamily { .. }), "{err}");
    assert_eq!(scan_rows(&tt, Scan::all()).await, vec![]);
}

/// A batch applies its rows in order: of two puts to one cell at one
/// timestamp the later wins, a delete row removes what earlier rows wrote,
/// and a row mixing puts and deletes is applied as a whole.
/// (RG "Versions": a put at an existing timestamp overwrites it;
/// `Table.batch` leaves the order of two actions on one row undefined, so a
/// backend must not send them in one batch.)
pub async fn batch_applies_rows_in_order(t: &dyn Target) {
    let tt = ab_table(t, "batch_applies_rows_in_order").await;
    put(
        &tt,
        vec![
            RowMutation::new("r1").put_at("a", "q", 1, "first"),
            RowMutation::new("r2")
                .put_at("a", "q", 1, "x")
                .put_at("a", "q", 2, "x2"),
            RowMutation::new("r1").put_at("a", "q", 1, "second"),
            RowMutation::new("r2").delete_version("a", "q", 2),
            RowMutation::new("r4").delete_row(),
            RowMutation::new("r3")
                .put_at("a", "q", 1, "m")
                .put_at("b", "q", 1, "n")
                .delete_family_up_to("b", 1),
            RowMutation::new("r5"),
        ],
    )
    .await;
    let rows = scan_rows(&tt, Scan::all().max_versions(3)).await;
    let got: Vec<(Bytes, Vec<Cell>)> = rows.into_iter().map(|r| (r.row, r.cells)).collect();
    assert_eq!(
        got,
        vec![
            (Bytes::from("r1"), vec![cell("a", "q", 1, "second")]),
            (Bytes::from("r2"), vec![cell("a", "q", 1, "x")]),
            (Bytes::from("r3"), vec![cell("a", "q", 1, "m")]),
        ]
    );
}

/// A [`Loader`] writes what `mutate` writes for the same rows: in batches
/// of its row budget (here 4 rows), a repeated row's puts in order (the later of two at
/// one timestamp wins), rows without puts write nothing, binary bytes
/// intact, and puts without a timestamp at the server's current time, one
/// per row. (hmap's contract for `Store::load`; `Table.batch` leaves the
/// order of two actions on one row undefined, so a batch must not hold
/// both.)
pub async fn loader_writes_rows_as_mutate_does(t: &dyn Target) {
    let tt = ab_table(t, "loader_writes_rows_as_mutate_does").await;
    let before = now_millis();
    let mut loader = Loader::new(t.store(), tt.name.clone()).max_rows(4);
    let binary: Vec<u8> = (0..=255).collect();
    for i in 0..7 {
        loader
            .row(format!("r{i}"))
            .put_at("a", "q", 1, format!("v{i}"))
            .put_at("b", &binary[..], 1, &binary[..])
            .end()
            .await
            .expect("load a row");
    }
    loader
        .row("r1")
        .put_at("a", "q", 1, "again")
        .end()
        .await
        .expect("load a row");
    // One batch of 4: r3 twice, apart (the second must be sent after the first).
    loader
        .row("r3")
        .put_at("a", "q", 1, "x")
        .end()
        .await
        .expect("load a row");
    loader.row("empty").end().await.expect("load a row");
    loader
        .row("r3")
        .put_at("a", "q", 1, "y")
        .end()
        .await
        .expect("load a row");
    loader
        .row("now")
        .put("a", "x", "1")
        .put("b", "y", "2")
        .end()
        .await
        .expect("load a row");
    assert_eq!(loader.finish().await.expect("finish the load"), 11);
    let after = now_millis();

    let rows = scan_rows(&tt, Scan::all()).await;
    let keys: Vec<&[u8]> = rows.iter().map(|r| &r.row[..]).collect();
    assert_eq!(keys, [&b"now"[..], b"r0", b"r1", b"r2", b"r3", b"r4", b"r5", b"r6"]);
    let value = |row: &str| {
        let r = rows.iter().find(|r| r.row == row.as_bytes()).expect("the row");
        (r.value("a", "q"), r.value("b", &binary[..]))
    };
    let binary = Bytes::from(binary.clone());
    assert_eq!(value("r0"), (Some(Bytes::from("v0")), Some(binary.clone())));
    assert_eq!(value("r1").0, Some(Bytes::from("again")));
    assert_eq!(value("r3").0, Some(Bytes::from("y")));
    assert_eq!(value("r6"), (Some(Bytes::from("v6")), Some(binary)));
    let now = &rows[0].cells;
    assert_eq!(now.len(), 2);
    assert_eq!(now[0].timestamp, now[1].timestamp);
    // Allow for a server clock a second apart from ours.
    assert!(
        before - 1000 <= now[0].timestamp && now[0].timestamp <= after + 1000,
        "{before} <= {} <= {after}",
        now[0].timestamp
    );
}

/// A load batch with a refused row writes none of its rows, and the error
/// names what is wrong: an unknown family, a negative timestamp, a value
/// over the cell size limit, an empty row key. (As `mutate`:
/// `refused_batch_writes_nothing`, `negative_timestamp_rejected`,
/// `oversized_value_rejected`, `empty_row_rejected`.)
pub async fn refused_load_writes_nothing(t: &dyn Target) {
    let tt = ab_table(t, "refused_load_writes_nothing").await;
    let limit = t.max_value_size();
    let oversized = vec![0u8; limit + 1];
    let mut batch = LoadBatch::new();
    batch.row("good").put_at("a", "q", 1, "v");
    for (bad, expected) in [
        (0, "NoSuchFamily"),
        (1, "NegativeTimestamp"),
        (2, "CellTooLarge"),
        (3, "InvalidRow"),
    ] {
        let mut refused = batch.clone();
        match bad {
            0 => refused.row("bad").put_at("zz", "q", 1, "v"),
            1 => refused.row("bad").put_at("a", "q", -1, "v"),
            2 => refused.row("bad").put("a", "q", &oversized),
            _ => refused.row("").put("a", "q", "v"),
        };
        let err = t.store().load(&tt.name, &refused).await.unwrap_err();
        let kind = match err {
            StoreError::NoSuchFamily { .. } => "NoSuchFamily",
            StoreError::NegativeTimestamp { timestamp: -1, .. } => "NegativeTimestamp",
            StoreError::CellTooLarge { size, limit: l, .. } if size > limit && l == limit => "CellTooLarge",
            StoreError::InvalidRow { .. } => "InvalidRow",
            _ => "another error",
        };
        assert_eq!(kind, expected, "{err}");
        assert_eq!(scan_rows(&tt, Scan::all()).await, vec![]);
    }
    t.store().load(&tt.name, &batch).await.expect("load the good row");
    assert_eq!(get_cells(&tt, Get::new("good")).await, vec![cell("a", "q", 1, "v")]);
}

/// A `mutate`, and a load, of more bytes than one request may carry are
/// written whole: 6 MiB of rows each, where a framed gateway takes frames of
/// 2 MiB (`hbase.regionserver.thrift.framed.max_frame_size_in_mb`) and a
/// gateway reads each call whole into its heap. (HBase's own client splits
/// a batch into requests of at most 4 MiB:
/// `hbase.client.max.perrequest.heapsize`.)
pub async fn large_writes_are_written_whole(t: &dyn Target) {
    let tt = ab_table(t, "large_writes_are_written_whole").await;
    let value = vec![b'v'; 100 * 1024];
    let rows = (0..60)
        .map(|i| RowMutation::new(format!("m{i:03}")).put_at("b", "q", 1, value.clone()))
        .collect();
    put(&tt, rows).await;
    let mut loader = Loader::new(t.store(), tt.name.clone())
        .max_rows(usize::MAX)
        .max_bytes(usize::MAX);
    for i in 0..60 {
        loader
            .row(format!("l{i:03}"))
            .put_at("b", "q", 1, &value)
            .end()
            .await
            .expect("load a row");
    }
    assert_eq!(loader.finish().await.expect("finish the load"), 60);
    let rows = scan_rows(&tt, Scan::all()).await;
    assert_eq!(rows.len(), 120);
    for row in &rows {
        assert_eq!(row.value("b", "q").as_deref(), Some(&value[..]), "row {:?}", row.row);
    }
}

/// Empty qualifiers and empty values are legal.
/// (RG "Data Model": a qualifier is any byte array, possibly empty.)
pub async fn empty_qualifier_and_value(t: &dyn Target) {
    let tt = ab_table(t, "empty_qualifier_and_value").await;
    put(
        &tt,
        vec![RowMutation::new("r").put_at("a", "", 1, "v").put_at("a", "e", 1, "")],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r")).await,
        vec![cell("a", "", 1, "v"), cell("a", "e", 1, "")]
    );
}

/// Rows, qualifiers and values are raw bytes, 0x00 and 0xFF included, and
/// rows sort by unsigned bytes. (RG "Rows": "sorted lexicographically by row
/// key", `Bytes.compareTo` is unsigned.)
pub async fn binary_bytes_round_trip(t: &dyn Target) {
    let tt = ab_table(t, "binary_bytes_round_trip").await;
    let row_ff = Bytes::from_static(b"\xff\x00r");
    let row_00 = Bytes::from_static(b"\x00\xffr");
    let qualifier = Bytes::from_static(b"\x00q\xff");
    let value = Bytes::from_static(b"\xff\x00\x01");
    put(
        &tt,
        vec![
            RowMutation::new(row_ff.clone()).put_at("a", qualifier.clone(), 1, value.clone()),
            RowMutation::new(row_00.clone()).put_at("a", "q", 1, "v"),
        ],
    )
    .await;
    let got = get_cells(&tt, Get::new(row_ff.clone())).await;
    assert_eq!(got, vec![Cell::new(Bytes::from_static(b"a"), qualifier, 1, value)]);
    assert_eq!(scan_keys(&tt, Scan::all()).await, vec![row_00, row_ff]);
}

/// An empty row key is refused. (HBase: `Mutation.checkRow`, "Row length is 0".)
pub async fn empty_row_rejected(t: &dyn Target) {
    let tt = ab_table(t, "empty_row_rejected").await;
    let err = t
        .store()
        .mutate(&tt.name, &[RowMutation::new("").put("a", "q", "v")])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidRow { .. }), "{err}");
}

/// The longest row key a table can hold is accepted, one byte longer is
/// refused: 32767 less the table name and 16. (HBase:
/// `HConstants.MAX_ROW_LENGTH = Short.MAX_VALUE`, `Mutation.checkRow`; the
/// client's region lookup builds the `hbase:meta` key
/// `<table>,<row>,99999999999999` in `ConnectionImplementation.locateRegionInMeta`
/// and refuses it past 32767 bytes.)
pub async fn row_length_limit(t: &dyn Target) {
    let tt = ab_table(t, "row_length_limit").await;
    let limit = max_row_length(&tt.name);
    assert_eq!(limit, MAX_ROW_LENGTH - tt.name.len() - 16);
    let longest = Bytes::from(vec![b'k'; limit]);
    put(&tt, vec![RowMutation::new(longest.clone()).put_at("a", "q", 1, "v")]).await;
    assert_eq!(get_cells(&tt, Get::new(longest)).await, vec![cell("a", "q", 1, "v")]);
    let err = t
        .store()
        .mutate(&tt.name, &[RowMutation::new(vec![b'k'; limit + 1]).put("a", "q", "v")])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidRow { .. }), "{err}");
}

/// A value over the cell size limit is refused and nothing is written.
/// (HBase: `hbase.client.keyvalue.maxsize`, 10 MiB, checked in
/// `ConnectionUtils.validatePut`.)
pub async fn oversized_value_rejected(t: &dyn Target) {
    let tt = ab_table(t, "oversized_value_rejected").await;
    let limit = t.max_value_size();
    let err = t
        .store()
        .mutate(&tt.name, &[RowMutation::new("r").put("a", "q", vec![0u8; limit + 1])])
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::CellTooLarge { size, limit: l, .. } if size > limit && l == limit),
        "{err}"
    );
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![]);
}

/// Timestamps are non-negative. (HBase: `Put.addColumn`, "Timestamp cannot
/// be negative".)
pub async fn negative_timestamp_rejected(t: &dyn Target) {
    let tt = ab_table(t, "negative_timestamp_rejected").await;
    let err = t
        .store()
        .mutate(&tt.name, &[RowMutation::new("r").put_at("a", "q", -1, "v")])
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::NegativeTimestamp { timestamp: -1, .. }),
        "{err}"
    );
}

/// `get_many` answers each get in order, `None` for missing rows, and a row
/// asked for twice twice. (Thrift2 IDL: `getMultiple` returns one TResult
/// per TGet, in order; `Table.get(List<Get>)` one `Result` per `Get`.)
pub async fn get_many_in_order(t: &dyn Target) {
    let tt = ab_table(t, "get_many_in_order").await;
    put(
        &tt,
        vec![
            RowMutation::new("r1").put_at("a", "q", 1, "1"),
            RowMutation::new("r3").put_at("a", "q", 1, "3"),
        ],
    )
    .await;
    let got = t
        .store()
        .get_many(
            &tt.name,
            &[Get::new("r3"), Get::new("r2"), Get::new("r1"), Get::new("r3")],
        )
        .await
        .unwrap();
    let values: Vec<Option<Vec<Cell>>> = got.into_iter().map(|r| r.map(|r| r.cells)).collect();
    assert_eq!(
        values,
        vec![
            Some(vec![cell("a", "q", 1, "3")]),
            None,
            Some(vec![cell("a", "q", 1, "1")]),
            Some(vec![cell("a", "q", 1, "3")])
        ]
    );
}

/// A `get_many` of many rows, more than a backend reads in one call,
/// answers every get in order: rows found, rows missing, rows asked for
/// twice far apart. (`Table.get(List<Get>)`: one `Result` per `Get`, in
/// order, however the client splits the batch.)
pub async fn get_many_of_many_rows_in_order(t: &dyn Target) {
    let tt = ab_table(t, "get_many_of_many_rows_in_order").await;
    let rows = (0..300)
        .filter(|i| i % 3 != 0)
        .map(|i| RowMutation::new(format!("r{i:04}")).put_at("b", "q", 1, format!("v{i}")))
        .collect();
    put(&tt, rows).await;
    // 0..300, then 299 down to 0 again: 600 gets, each row asked twice.
    let order: Vec<usize> = (0..300).chain((0..300).rev()).collect();
    let gets: Vec<Get> = order.iter().map(|i| Get::new(format!("r{i:04}"))).collect();
    let got = t.store().get_many(&tt.name, &gets).await.expect("get_many");
    assert_eq!(got.len(), gets.len());
    for (i, row) in order.iter().zip(&got) {
        let expected = (i % 3 != 0).then(|| Bytes::from(format!("v{i}")));
        assert_eq!(row.as_ref().and_then(|r| r.value("b", "q")), expected, "row r{i:04}");
        if let Some(row) = row {
            assert_eq!(row.row, format!("r{i:04}").as_bytes());
        }
    }
}

// ---------------------------------------------------------------------------
// Versions

/// Reads return at most the family's VERSIONS, newest first, however many
/// are asked for. (RG "Versions": "max versions"; `ScanQueryMatcher` uses
/// `min(scan.getMaxVersions(), family.getMaxVersions())`.)
pub async fn versions_capped_by_family(t: &dyn Target) {
    let tt = ab_table(t, "versions_capped_by_family").await;
    let mut m = RowMutation::new("r");
    for ts in 1..=5 {
        m = m.put_at("a", "q", ts, format!("v{ts}"));
    }
    put(&tt, vec![m]).await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(10)).await,
        vec![
            cell("a", "q", 5, "v5"),
            cell("a", "q", 4, "v4"),
            cell("a", "q", 3, "v3")
        ]
    );
}

/// A get asks for fewer versions than the family keeps.
/// (HBase: `Get.readVersions`.)
pub async fn get_fewer_versions(t: &dyn Target) {
    let tt = ab_table(t, "get_fewer_versions").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "v1")
                .put_at("a", "q", 2, "v2")
                .put_at("a", "q", 3, "v3"),
        ],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(2)).await,
        vec![cell("a", "q", 3, "v3"), cell("a", "q", 2, "v2")]
    );
}

/// By default a get returns the newest version only. (RG "Versions > Get":
/// "by default only the latest version is returned".)
pub async fn get_latest_by_default(t: &dyn Target) {
    let tt = ab_table(t, "get_latest_by_default").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "old")
                .put_at("a", "q", 2, "new"),
        ],
    )
    .await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("a", "q", 2, "new")]);
}

/// Two puts at the same timestamp leave one version: the later write.
/// (RG "Versions": "doing a put always creates a new version ... at the same
/// version overwrites"; column trackers skip `sameAsPreviousTSAndType`.)
pub async fn same_timestamp_overwrites(t: &dyn Target) {
    let tt = ab_table(t, "same_timestamp_overwrites").await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 7, "first")]).await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 7, "second")]).await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)).await,
        vec![cell("a", "q", 7, "second")]
    );
}

/// A put with an older timestamp does not become the latest version.
/// (RG "Versions": versions are sorted by timestamp, not by write order.)
pub async fn older_put_is_not_latest(t: &dyn Target) {
    let tt = ab_table(t, "older_put_is_not_latest").await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 200, "new")]).await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 100, "old")]).await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("a", "q", 200, "new")]);
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)).await,
        vec![cell("a", "q", 200, "new"), cell("a", "q", 100, "old")]
    );
}

/// A family kept at VERSIONS=1000 (the seeds' weibo inbox) returns a
/// thousand versions, newest first. (RG "Versions".)
pub async fn thousand_versions(t: &dyn Target) {
    let tt = table(t, "thousand_versions", vec![FamilySchema::new("i").versions(1000)]).await;
    let mut m = RowMutation::new("inbox");
    for ts in 1..=1100 {
        m = m.put_at("i", "sq", ts, format!("w{ts}"));
    }
    put(&tt, vec![m]).await;
    let cells = get_cells(&tt, Get::new("inbox").max_versions(1000)).await;
    assert_eq!(cells.len(), 1000);
    assert_eq!(cells[0], cell("i", "sq", 1100, "w1100"));
    assert_eq!(cells[999], cell("i", "sq", 101, "w101"));
    assert!(cells.windows(2).all(|w| w[0].timestamp > w[1].timestamp));
}

// ---------------------------------------------------------------------------
// Time ranges

/// A time range `[min, max)` includes min and excludes max.
/// (HBase: `TimeRange`, "minStamp inclusive, maxStamp exclusive"; Thrift2 `TTimeRange`.)
pub async fn time_range_is_half_open(t: &dyn Target) {
    let tt = ab_table(t, "time_range_is_half_open").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 10, "10")
                .put_at("a", "q", 20, "20")
                .put_at("a", "q", 30, "30"),
        ],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3).time_range(TimeRange::new(10, 30))).await,
        vec![cell("a", "q", 20, "20"), cell("a", "q", 10, "10")]
    );
}

/// Versions are counted inside the time range: the newest N in range.
/// (HBase: `UserScanQueryMatcher` skips cells outside the range before the
/// column tracker counts versions.)
pub async fn time_range_then_versions(t: &dyn Target) {
    let tt = ab_table(t, "time_range_then_versions").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 10, "10")
                .put_at("a", "q", 20, "20")
                .put_at("a", "q", 30, "30"),
        ],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").time_range(TimeRange::new(0, 25))).await,
        vec![cell("a", "q", 20, "20")]
    );
}

/// One exact timestamp reads that version only. (HBase: `Get.setTimestamp`.)
pub async fn exact_timestamp(t: &dyn Target) {
    let tt = ab_table(t, "exact_timestamp").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 10, "10")
                .put_at("a", "q", 20, "20"),
        ],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").time_range(TimeRange::at(10))).await,
        vec![cell("a", "q", 10, "10")]
    );
}

/// A range that holds no version reads as nothing.
pub async fn time_range_without_versions(t: &dyn Target) {
    let tt = ab_table(t, "time_range_without_versions").await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 10, "10")]).await;
    assert_eq!(
        t.store()
            .get(&tt.name, &Get::new("r").time_range(TimeRange::new(11, 20)))
            .await
            .unwrap(),
        None
    );
}

// ---------------------------------------------------------------------------
// Deletes

/// Deleting the latest version of a column reveals the one before.
/// (HBase: `Delete.addColumn` without timestamp; RG "Delete": "Delete the
/// latest version of the specified column".)
pub async fn delete_latest_reveals_previous(t: &dyn Target) {
    let tt = ab_table(t, "delete_latest_reveals_previous").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 100, "v1")
                .put_at("a", "q", 200, "v2"),
        ],
    )
    .await;
    put(&tt, vec![RowMutation::new("r").delete_latest("a", "q")]).await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)).await,
        vec![cell("a", "q", 100, "v1")]
    );
}

/// Deleting a column's only version leaves no cell.
/// (HBase: `HRegion.updateDeleteLatestVersionTimestamp` stamps the marker
/// with the newest version's timestamp.)
pub async fn delete_latest_of_single_version(t: &dyn Target) {
    let tt = ab_table(t, "delete_latest_of_single_version").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("b", "q", 100, "v")
                .put_at("b", "k", 100, "keep"),
        ],
    )
    .await;
    put(&tt, vec![RowMutation::new("r").delete_latest("b", "q")]).await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("b", "k", 100, "keep")]);
}

/// Deleting one version by timestamp leaves the others.
/// (HBase: `Delete.addColumn(family, qualifier, ts)`, type `Delete`.)
pub async fn delete_one_version(t: &dyn Target) {
    let tt = ab_table(t, "delete_one_version").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "v1")
                .put_at("a", "q", 2, "v2")
                .put_at("a", "q", 3, "v3"),
        ],
    )
    .await;
    put(&tt, vec![RowMutation::new("r").delete_version("a", "q", 2)]).await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)).await,
        vec![cell("a", "q", 3, "v3"), cell("a", "q", 1, "v1")]
    );
}

/// Deleting a column removes all its versions.
/// (HBase: `Delete.addColumns`, type `DeleteColumn`.)
pub async fn delete_column_all_versions(t: &dyn Target) {
    let tt = ab_table(t, "delete_column_all_versions").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "v1")
                .put_at("a", "q", 2, "v2")
                .put_at("a", "other", 1, "o"),
        ],
    )
    .await;
    put(&tt, vec![RowMutation::new("r").delete_column("a", "q")]).await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)).await,
        vec![cell("a", "other", 1, "o")]
    );
}

/// Deleting a column up to a timestamp keeps the newer versions.
/// (HBase: `Delete.addColumns(family, qualifier, ts)`: "all versions with a
/// timestamp less than or equal to ts".)
pub async fn delete_column_up_to(t: &dyn Target) {
    let tt = ab_table(t, "delete_column_up_to").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "v1")
                .put_at("a", "q", 2, "v2")
                .put_at("a", "q", 3, "v3"),
        ],
    )
    .await;
    put(&tt, vec![RowMutation::new("r").delete_column_up_to("a", "q", 2)]).await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)).await,
        vec![cell("a", "q", 3, "v3")]
    );
}

/// Deleting a family removes its cells and leaves the other families.
/// (HBase: `Delete.addFamily`, type `DeleteFamily`.)
pub async fn delete_family(t: &dyn Target) {
    let tt = ab_table(t, "delete_family").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "x", 1, "1")
                .put_at("a", "y", 1, "2")
                .put_at("b", "z", 1, "3"),
        ],
    )
    .await;
    put(&tt, vec![RowMutation::new("r").delete_family("a")]).await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("b", "z", 1, "3")]);
}

/// Deleting a family up to a timestamp keeps newer cells.
/// (HBase: `Delete.addFamily(family, ts)`.)
pub async fn delete_family_up_to(t: &dyn Target) {
    let tt = ab_table(t, "delete_family_up_to").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "x", 5, "old")
                .put_at("a", "edge", 10, "at the marker")
                .put_at("a", "y", 15, "new"),
        ],
    )
    .await;
    put(&tt, vec![RowMutation::new("r").delete_family_up_to("a", 10)]).await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("a", "y", 15, "new")]);
}

/// Deleting a row removes every family's cells.
/// (HBase: `new Delete(row)`: a DeleteFamily marker for each family.)
pub async fn delete_row(t: &dyn Target) {
    let tt = ab_table(t, "delete_row").await;
    put(
        &tt,
        vec![
            RowMutation::new("r").put_at("a", "x", 1, "1").put_at("b", "y", 1, "2"),
            RowMutation::new("s").put_at("a", "x", 1, "keep"),
        ],
    )
    .await;
    put(&tt, vec![RowMutation::new("r").delete_row()]).await;
    assert_eq!(t.store().get(&tt.name, &Get::new("r")).await.unwrap(), None);
    assert_eq!(scan_keys(&tt, Scan::all()).await, keys(&["s"]));
}

/// A delete marker also hides a put written *after* it with an older
/// timestamp. (RG "Deletes mask Puts": "Deletes mask Puts, even Puts that
/// happened after the Delete was entered", until a major compaction.)
pub async fn delete_masks_later_older_put(t: &dyn Target) {
    let tt = ab_table(t, "delete_masks_later_older_put").await;
    put(&tt, vec![RowMutation::new("r").delete_column_up_to("a", "q", 100)]).await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 50, "hidden")]).await;
    assert_eq!(t.store().get(&tt.name, &Get::new("r")).await.unwrap(), None);
}

/// A put with a timestamp newer than the delete is visible.
/// (RG "Deletes mask Puts": only versions at or below the marker are masked.)
pub async fn newer_put_after_delete_visible(t: &dyn Target) {
    let tt = ab_table(t, "newer_put_after_delete_visible").await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 50, "old")]).await;
    put(&tt, vec![RowMutation::new("r").delete_column_up_to("a", "q", 100)]).await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 150, "new")]).await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)).await,
        vec![cell("a", "q", 150, "new")]
    );
}

/// A default-timestamp delete hides what is there and not a later
/// default-timestamp put (a later millisecond).
/// (RG "Deletes mask Puts": a put after the delete's time is visible.)
pub async fn delete_then_put_again(t: &dyn Target) {
    let tt = ab_table(t, "delete_then_put_again").await;
    put(&tt, vec![RowMutation::new("r").put("b", "q", "one")]).await;
    put(&tt, vec![RowMutation::new("r").delete_column("b", "q")]).await;
    // A later millisecond than the delete's.
    thread::sleep(std::time::Duration::from_millis(5));
    put(&tt, vec![RowMutation::new("r").put("b", "q", "two")]).await;
    let cells = get_cells(&tt, Get::new("r")).await;
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0].value, Bytes::from_static(b"two"));
}

/// Deleting from a row that does not exist is harmless.
/// (HBase: deletes are markers; no existence check.)
pub async fn delete_missing_row_harmless(t: &dyn Target) {
    let tt = ab_table(t, "delete_missing_row_harmless").await;
    put(&tt, vec![RowMutation::new("ghost").delete_row()]).await;
    put(&tt, vec![RowMutation::new("ghost2").delete_column("a", "q")]).await;
    assert_eq!(scan_rows(&tt, Scan::all()).await, vec![]);
}

/// One row mutation deletes one column and writes another, atomically.
/// (Thrift2 IDL: `mutateRow(TRowMutations)`, "atomically".)
pub async fn delete_and_put_in_one_mutation(t: &dyn Target) {
    let tt = ab_table(t, "delete_and_put_in_one_mutation").await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "old", 1, "x")]).await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .delete_column("a", "old")
                .put_at("a", "new", 2, "y"),
        ],
    )
    .await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("a", "new", 2, "y")]);
}

// ---------------------------------------------------------------------------
// TTL and MIN_VERSIONS

/// Cells older than the family's TTL are not returned; fresh ones are.
/// (RG "Time To Live (TTL)": "expired rows ... are not returned".)
pub async fn ttl_hides_expired(t: &dyn Target) {
    let tt = table(t, "ttl_hides_expired", vec![FamilySchema::new("t").ttl_secs(60)]).await;
    let now = now_millis();
    put(
        &tt,
        vec![
            RowMutation::new("old").put_at("t", "q", now - 3_600_000, "stale"),
            RowMutation::new("new").put_at("t", "q", now, "fresh"),
        ],
    )
    .await;
    assert_eq!(t.store().get(&tt.name, &Get::new("old")).await.unwrap(), None);
    assert_eq!(
        get_cells(&tt, Get::new("new")).await,
        vec![cell("t", "q", now, "fresh")]
    );
    assert_eq!(scan_keys(&tt, Scan::all()).await, keys(&["new"]));
}

/// With MIN_VERSIONS, the newest versions outlive the TTL.
/// (RG "Minimum Number of Versions": "keep at least MIN_VERSIONS ... even if
/// older than TTL"; `ScanWildcardColumnTracker.checkVersion`.) A read that
/// names the column gets one expired version more, until a major
/// compaction: see `min_versions_named_column_keeps_one_expired`.
pub async fn min_versions_outlive_ttl(t: &dyn Target) {
    let tt = table(
        t,
        "min_versions_outlive_ttl",
        vec![FamilySchema::new("t").versions(5).min_versions(1).ttl_secs(60)],
    )
    .await;
    let now = now_millis();
    put(
        &tt,
        vec![RowMutation::new("r").put_at("t", "q", now - 7_200_000, "older").put_at(
            "t",
            "q",
            now - 3_600_000,
            "newest",
        )],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(5)).await,
        vec![cell("t", "q", now - 3_600_000, "newest")]
    );
}

/// Fresh versions count towards MIN_VERSIONS: with MIN_VERSIONS 2 and one
/// fresh version, one expired version is still returned, not two.
/// (`ScanWildcardColumnTracker.checkVersion`: keep if `count <= minVersions
/// || !isExpired(ts)`.)
pub async fn min_versions_count_fresh_versions(t: &dyn Target) {
    let tt = table(
        t,
        "min_versions_count_fresh_versions",
        vec![FamilySchema::new("t").versions(5).min_versions(2).ttl_secs(60)],
    )
    .await;
    let now = now_millis();
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("t", "q", now, "fresh")
                .put_at("t", "q", now - 3_600_000, "old1")
                .put_at("t", "q", now - 7_200_000, "old2"),
        ],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(5)).await,
        vec![cell("t", "q", now, "fresh"), cell("t", "q", now - 3_600_000, "old1")]
    );
}

// ---------------------------------------------------------------------------
// Scans

/// A full scan returns every row in key order, each with its cells.
/// (RG "Scans"; rows sorted by key.)
pub async fn scan_all_in_order(t: &dyn Target) {
    let tt = ab_table(t, "scan_all_in_order").await;
    put(
        &tt,
        vec![
            RowMutation::new("c").put_at("a", "q", 1, "3"),
            RowMutation::new("a").put_at("a", "q", 1, "1").put_at("b", "z", 1, "1b"),
            RowMutation::new("b").put_at("a", "q", 1, "2"),
        ],
    )
    .await;
    let rows = scan_rows(&tt, Scan::all()).await;
    assert_eq!(
        rows,
        vec![
            RowResult::new(
                Bytes::from_static(b"a"),
                vec![cell("a", "q", 1, "1"), cell("b", "z", 1, "1b")]
            ),
            RowResult::new(Bytes::from_static(b"b"), vec![cell("a", "q", 1, "2")]),
            RowResult::new(Bytes::from_static(b"c"), vec![cell("a", "q", 1, "3")]),
        ]
    );
}

/// Start row is inclusive, stop row exclusive.
/// (HBase: `Scan.withStartRow` inclusive, `withStopRow` exclusive by default.)
pub async fn scan_range_bounds(t: &dyn Target) {
    let tt = ab_table(t, "scan_range_bounds").await;
    numbered_rows(&tt, 6).await;
    assert_eq!(
        scan_keys(&tt, Scan::range("r001", "r004")).await,
        keys(&["r001", "r002", "r003"])
    );
    assert_eq!(scan_keys(&tt, Scan::range("r004", "")).await, keys(&["r004", "r005"]));
}

/// A prefix scan returns exactly the rows that start with the prefix: a
/// partial row scan. (HBase: `Scan.setRowPrefixFilter`.)
pub async fn scan_prefix(t: &dyn Target) {
    let tt = ab_table(t, "scan_prefix").await;
    put(
        &tt,
        ["u1", "u1_a", "u1_b", "u10", "u2", "u0"]
            .iter()
            .map(|k| RowMutation::new(*k).put_at("a", "q", 1, "v"))
            .collect(),
    )
    .await;
    assert_eq!(scan_keys(&tt, Scan::prefix("u1_")).await, keys(&["u1_a", "u1_b"]));
    assert_eq!(
        scan_keys(&tt, Scan::prefix("u1")).await,
        keys(&["u1", "u10", "u1_a", "u1_b"])
    );
}

/// A prefix ending in 0xFF bytes still bounds the scan correctly.
/// (HBase: `ClientUtil.calculateTheClosestNextRowKeyForPrefix` skips 0xFF.)
pub async fn scan_prefix_with_ff(t: &dyn Target) {
    let tt = ab_table(t, "scan_prefix_with_ff").await;
    let rows: [&[u8]; 5] = [b"a\xff", b"a\xff\x00", b"a\xff\xff", b"b", b"a\xfe"];
    put(
        &tt,
        rows.iter()
            .map(|k| RowMutation::new(Bytes::copy_from_slice(k)).put_at("a", "q", 1, "v"))
            .collect(),
    )
    .await;
    let got = scan_keys(&tt, Scan::prefix(Bytes::from_static(b"a\xff"))).await;
    let expected: Vec<Bytes> = [&b"a\xff"[..], b"a\xff\x00", b"a\xff\xff"]
        .iter()
        .map(|k| Bytes::copy_from_slice(k))
        .collect();
    assert_eq!(got, expected);
}

/// A reversed scan returns rows last first.
/// (HBase: `Scan.setReversed`; Thrift2 `TScan.reversed`.)
pub async fn scan_reversed(t: &dyn Target) {
    let tt = ab_table(t, "scan_reversed").await;
    numbered_rows(&tt, 4).await;
    assert_eq!(
        scan_keys(&tt, Scan::all().reversed()).await,
        keys(&["r003", "r002", "r001", "r000"])
    );
}

/// A reversed scan over a range keeps the range's bounds (start inclusive,
/// stop exclusive) and reads it last first.
pub async fn scan_reversed_range(t: &dyn Target) {
    let tt = ab_table(t, "scan_reversed_range").await;
    numbered_rows(&tt, 6).await;
    assert_eq!(
        scan_keys(&tt, Scan::range("r001", "r004").reversed()).await,
        keys(&["r003", "r002", "r001"])
    );
}

/// A reversed prefix scan returns the prefix's rows last first: the newest
/// first when the key ends in a timestamp.
pub async fn scan_reversed_prefix(t: &dyn Target) {
    let tt = ab_table(t, "scan_reversed_prefix").await;
    put(
        &tt,
        ["p1", "p1_1", "p1_2", "p2_1", "p0"]
            .iter()
            .map(|k| RowMutation::new(*k).put_at("a", "q", 1, "v"))
            .collect(),
    )
    .await;
    assert_eq!(
        scan_keys(&tt, Scan::prefix("p1").reversed()).await,
        keys(&["p1_2", "p1_1", "p1"])
    );
}

/// A limit stops the scan after that many rows.
/// (HBase: `Scan.setLimit`; Thrift2 `TScan.limit`.)
pub async fn scan_limit(t: &dyn Target) {
    let tt = ab_table(t, "scan_limit").await;
    numbered_rows(&tt, 10).await;
    assert_eq!(
        scan_keys(&tt, Scan::all().limit(3)).await,
        keys(&["r000", "r001", "r002"])
    );
    assert_eq!(
        scan_keys(&tt, Scan::all().reversed().limit(2)).await,
        keys(&["r009", "r008"])
    );
}

/// Small batch sizes return the same rows as one big batch, and so do
/// batches sized by bytes, however small the budget.
/// (HBase: `Scan.setCaching` and `setMaxResultSize` change round trips, not
/// results.)
pub async fn scan_batch_sizes_agree(t: &dyn Target) {
    let tt = ab_table(t, "scan_batch_sizes_agree").await;
    numbered_rows(&tt, 25).await;
    let all = scan_keys(&tt, Scan::all()).await;
    assert_eq!(all.len(), 25);
    for batch in [1, 2, 7, 25, 1000] {
        assert_eq!(
            scan_keys(&tt, Scan::all().batch_size(batch)).await,
            all,
            "batch {batch}"
        );
        assert_eq!(
            scan_keys(&tt, Scan::all().batch_size(batch).limit(11)).await,
            all[..11].to_vec()
        );
    }
    for bytes in [1, 40, 100, 1 << 20] {
        assert_eq!(
            scan_keys(&tt, Scan::all().batch_bytes(bytes)).await,
            all,
            "{bytes} bytes"
        );
        assert_eq!(
            scan_keys(&tt, Scan::all().batch_bytes(bytes).limit(11).reversed()).await,
            all.iter().rev().take(11).cloned().collect::<Vec<_>>(),
            "{bytes} bytes, reversed"
        );
    }
}

/// A scan of chosen columns returns only them, and skips rows that have none.
/// (HBase: `Scan.addColumn`; rows with no matching cell are not returned.)
pub async fn scan_chosen_columns(t: &dyn Target) {
    let tt = ab_table(t, "scan_chosen_columns").await;
    put(
        &tt,
        vec![
            RowMutation::new("r1").put_at("a", "x", 1, "1").put_at("b", "y", 1, "2"),
            RowMutation::new("r2").put_at("a", "x", 1, "3"),
            RowMutation::new("r3").put_at("b", "y", 1, "4"),
        ],
    )
    .await;
    let rows = scan_rows(&tt, Scan::all().column("b", "y")).await;
    assert_eq!(
        rows,
        vec![
            RowResult::new(Bytes::from_static(b"r1"), vec![cell("b", "y", 1, "2")]),
            RowResult::new(Bytes::from_static(b"r3"), vec![cell("b", "y", 1, "4")]),
        ]
    );
}

/// A scan with a time range returns only cells in range, and skips rows
/// with none. (HBase: `Scan.setTimeRange`.)
pub async fn scan_time_range(t: &dyn Target) {
    let tt = ab_table(t, "scan_time_range").await;
    put(
        &tt,
        vec![
            RowMutation::new("r1").put_at("a", "q", 10, "early"),
            RowMutation::new("r2")
                .put_at("a", "q", 20, "mid")
                .put_at("a", "q", 30, "late"),
        ],
    )
    .await;
    let rows = scan_rows(&tt, Scan::all().time_range(TimeRange::new(15, 25))).await;
    assert_eq!(
        rows,
        vec![RowResult::new(
            Bytes::from_static(b"r2"),
            vec![cell("a", "q", 20, "mid")]
        )]
    );
}

/// A scan returns several versions per column when asked.
/// (HBase: `Scan.readVersions`; Thrift2 `TScan.maxVersions`.)
pub async fn scan_max_versions(t: &dyn Target) {
    let tt = ab_table(t, "scan_max_versions").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "1")
                .put_at("a", "q", 2, "2")
                .put_at("a", "q", 3, "3"),
        ],
    )
    .await;
    let rows = scan_rows(&tt, Scan::all().max_versions(2)).await;
    assert_eq!(rows[0].cells, vec![cell("a", "q", 3, "3"), cell("a", "q", 2, "2")]);
}

/// Deleted rows do not appear in scans.
pub async fn scan_skips_deleted_rows(t: &dyn Target) {
    let tt = ab_table(t, "scan_skips_deleted_rows").await;
    numbered_rows(&tt, 4).await;
    put(
        &tt,
        vec![
            RowMutation::new("r001").delete_row(),
            RowMutation::new("r002").delete_family("b"),
        ],
    )
    .await;
    assert_eq!(scan_keys(&tt, Scan::all()).await, keys(&["r000", "r003"]));
}

/// Scanning an empty table, or an empty range, yields nothing.
pub async fn scan_empty(t: &dyn Target) {
    let tt = ab_table(t, "scan_empty").await;
    assert_eq!(scan_rows(&tt, Scan::all()).await, vec![]);
    numbered_rows(&tt, 3).await;
    assert_eq!(scan_rows(&tt, Scan::range("x", "y")).await, vec![]);
    assert_eq!(scan_rows(&tt, Scan::prefix("zzz")).await, vec![]);
}

/// A scanner reads the table as it was when it was opened: rows written
/// while it runs, past its first batch, are not returned.
/// (HBase: a region scanner reads at the MVCC read point of its opening,
/// `HRegion.RegionScannerImpl`; one region here.)
pub async fn scanner_reads_at_open(t: &dyn Target) {
    let tt = ab_table(t, "scanner_reads_at_open").await;
    numbered_rows(&tt, 4).await;
    let mut scanner = t.store().scan(&tt.name, &Scan::all().batch_size(1)).await.unwrap();
    let first = scanner.next().await.unwrap().unwrap();
    assert_eq!(first.row, Bytes::from_static(b"r000"));
    put(&tt, vec![RowMutation::new("r002a").put_at("b", "q", 1, "late")]).await;
    let rest: Vec<Bytes> = scanner.map(|r| r.unwrap().row).collect().await;
    assert_eq!(rest, keys(&["r001", "r002", "r003"]));
}

/// Dropping a scanner before its end releases it: at once in memory, within
/// moments on a server (the scanner's task closes it when it sees the
/// stream gone). (Thrift2 IDL: `closeScanner`.)
pub async fn scanner_released_on_drop(t: &dyn Target) {
    let tt = ab_table(t, "scanner_released_on_drop").await;
    numbered_rows(&tt, 5).await;
    let before = t.open_scanners();
    {
        let mut scanner = t.store().scan(&tt.name, &Scan::all().batch_size(2)).await.unwrap();
        assert!(scanner.next().await.is_some());
        if let (Some(b), Some(during)) = (before, t.open_scanners()) {
            assert_eq!(during, b + 1);
        }
    }
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while t.open_scanners() != before && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(t.open_scanners(), before);
}

/// A scanner asked for more after its last row keeps answering none (a
/// `Stream` that ended stays ended). (Java client: `ResultScanner.next()`
/// returns null after the end, every time.)
pub async fn scanner_ends_for_good(t: &dyn Target) {
    let tt = ab_table(t, "scanner_ends_for_good").await;
    numbered_rows(&tt, 3).await;
    let mut scanner = t.store().scan(&tt.name, &Scan::all().batch_size(2)).await.unwrap();
    let mut rows = 0;
    while let Some(row) = scanner.next().await {
        row.unwrap();
        rows += 1;
    }
    assert_eq!(rows, 3);
    assert!(scanner.next().await.is_none());
    assert!(scanner.next().await.is_none());
}

// ---------------------------------------------------------------------------
// Check-and-mutate

/// The mutation applies when the column holds the expected value.
/// (HBase: `Table.checkAndMutate(...).ifEquals`; Thrift2 `checkAndPut`.)
pub async fn check_and_put_when_equal(t: &dyn Target) {
    let tt = ab_table(t, "check_and_put_when_equal").await;
    put(&tt, vec![RowMutation::new("r").put_at("b", "ver", 1, "1")]).await;
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(
                RowMutation::new("r")
                    .put_at("b", "ver", 2, "2")
                    .put_at("b", "data", 2, "new"),
                "b",
                "ver",
                Some(Bytes::from_static(b"1")),
            ),
        )
        .await
        .unwrap();
    assert!(applied);
    assert_eq!(
        get_cells(&tt, Get::new("r")).await,
        vec![cell("b", "data", 2, "new"), cell("b", "ver", 2, "2")]
    );
}

/// The mutation is skipped when the value differs, and nothing is written.
pub async fn check_and_put_when_different(t: &dyn Target) {
    let tt = ab_table(t, "check_and_put_when_different").await;
    put(&tt, vec![RowMutation::new("r").put_at("b", "ver", 1, "1")]).await;
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(
                RowMutation::new("r").put_at("b", "data", 2, "new"),
                "b",
                "ver",
                Some(Bytes::from_static(b"0")),
            ),
        )
        .await
        .unwrap();
    assert!(!applied);
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("b", "ver", 1, "1")]);
}

/// Expecting absence passes for a missing column, creating the row.
/// (HBase: `checkAndMutate(...).ifNotExists()`; Thrift2 `checkAndPut` with
/// no value: "the value is expected to be absent".)
pub async fn check_absent_when_missing(t: &dyn Target) {
    let tt = ab_table(t, "check_absent_when_missing").await;
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(RowMutation::new("r").put_at("b", "lock", 1, "me"), "b", "lock", None),
        )
        .await
        .unwrap();
    assert!(applied);
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("b", "lock", 1, "me")]);
}

/// Expecting absence fails when the column is there.
pub async fn check_absent_when_present(t: &dyn Target) {
    let tt = ab_table(t, "check_absent_when_present").await;
    put(&tt, vec![RowMutation::new("r").put_at("b", "lock", 1, "them")]).await;
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(RowMutation::new("r").put_at("b", "lock", 2, "me"), "b", "lock", None),
        )
        .await
        .unwrap();
    assert!(!applied);
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("b", "lock", 1, "them")]);
}

/// A check can guard a delete. (Thrift2 IDL: `checkAndDelete`.)
pub async fn check_and_delete(t: &dyn Target) {
    let tt = ab_table(t, "check_and_delete").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("b", "state", 1, "done")
                .put_at("b", "data", 1, "x"),
        ],
    )
    .await;
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(
                RowMutation::new("r").delete_column("b", "data"),
                "b",
                "state",
                Some(Bytes::from_static(b"done")),
            ),
        )
        .await
        .unwrap();
    assert!(applied);
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("b", "state", 1, "done")]);
}

/// The check compares the newest version only.
/// (HBase: `CheckAndMutate` reads the column with one version.)
pub async fn check_compares_latest_version(t: &dyn Target) {
    let tt = ab_table(t, "check_compares_latest_version").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "old")
                .put_at("a", "q", 2, "new"),
        ],
    )
    .await;
    let check = async |expected: &'static [u8]| {
        t.store()
            .check_and_mutate(
                &tt.name,
                &CheckAndMutate::new(
                    RowMutation::new("r").put_at("a", "hit", 3, "x"),
                    "a",
                    "q",
                    Some(Bytes::from_static(expected)),
                ),
            )
            .await
            .unwrap()
    };
    assert!(!check(b"old").await);
    assert!(check(b"new").await);
}

/// A deleted column counts as absent for a check.
pub async fn check_absent_after_delete(t: &dyn Target) {
    let tt = ab_table(t, "check_absent_after_delete").await;
    put(&tt, vec![RowMutation::new("r").put_at("b", "lock", 1, "x")]).await;
    put(&tt, vec![RowMutation::new("r").delete_column("b", "lock")]).await;
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(RowMutation::new("r").put("b", "lock", "y"), "b", "lock", None),
        )
        .await
        .unwrap();
    assert!(applied);
}

// ---------------------------------------------------------------------------
// Increments

/// A missing counter starts at 0; the new value is returned and stored as an
/// 8-byte big-endian long. (HBase: `Table.incrementColumnValue`; values are
/// `Bytes.toBytes(long)`.)
pub async fn increment_creates_counter(t: &dyn Target) {
    let tt = ab_table(t, "increment_creates_counter").await;
    let values = t
        .store()
        .increment(&tt.name, &Increment::new("r").add("b", "hits", 5))
        .await
        .unwrap();
    assert_eq!(values, vec![5]);
    let cells = get_cells(&tt, Get::new("r")).await;
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0].value, Bytes::copy_from_slice(&5i64.to_be_bytes()));
}

/// Increments accumulate, negative amounts subtract.
pub async fn increment_accumulates(t: &dyn Target) {
    let tt = ab_table(t, "increment_accumulates").await;
    let s = t.store();
    for (amount, expected) in [(1, 1), (10, 11), (-4, 7), (0, 7)] {
        assert_eq!(
            s.increment(&tt.name, &Increment::new("r").add("b", "n", amount))
                .await
                .unwrap(),
            vec![expected]
        );
    }
    assert_eq!(
        get_cells(&tt, Get::new("r")).await[0].value,
        Bytes::copy_from_slice(&7i64.to_be_bytes())
    );
}

/// One increment updates several counters of a row.
/// (Thrift2 IDL: `TIncrement.columns`.)
pub async fn increment_several_columns(t: &dyn Target) {
    let tt = ab_table(t, "increment_several_columns").await;
    let s = t.store();
    s.increment(&tt.name, &Increment::new("r").add("b", "x", 2))
        .await
        .unwrap();
    let values = s
        .increment(&tt.name, &Increment::new("r").add("b", "x", 3).add("b", "y", 4))
        .await
        .unwrap();
    assert_eq!(values, vec![5, 4]);
}

/// Incrementing a value that is not 8 bytes fails and changes nothing.
/// (HBase: `DoNotRetryIOException`, "Field is not a long, it's N bytes wide".)
pub async fn increment_non_counter_fails(t: &dyn Target) {
    let tt = ab_table(t, "increment_non_counter_fails").await;
    put(&tt, vec![RowMutation::new("r").put_at("b", "name", 1, "Ann")]).await;
    let err = t
        .store()
        .increment(&tt.name, &Increment::new("r").add("b", "name", 1))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotACounter { len: 3, .. }), "{err}");
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("b", "name", 1, "Ann")]);
}

/// An increment's version is newer than the counter's current one, even
/// when that one carries a future timestamp. (HBase: `HRegion.reckonDelta`,
/// `max(now, current.getTimestamp() + 1)`.)
pub async fn increment_timestamp_after_current(t: &dyn Target) {
    let tt = ab_table(t, "increment_timestamp_after_current").await;
    let future = now_millis() + 3_600_000;
    put(
        &tt,
        vec![RowMutation::new("r").put_at("b", "n", future, 1i64.to_be_bytes().to_vec())],
    )
    .await;
    assert_eq!(
        t.store()
            .increment(&tt.name, &Increment::new("r").add("b", "n", 1))
            .await
            .unwrap(),
        vec![2]
    );
    let cells = get_cells(&tt, Get::new("r")).await;
    assert_eq!(cells[0].timestamp, future + 1);
}

// ---------------------------------------------------------------------------
// Concurrency

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

// ---------------------------------------------------------------------------
// Where the backends used to disagree (issues 10 and 17)

/// A column selection is a set: a whole family includes single columns of
/// it listed before or after, so `family("a").column("a", "r")` reads all
/// of `a`. (hmap's meaning, see `Column`. HBase's `Get.addColumn` after
/// `addFamily` narrows the family to that column, as its Thrift gateway
/// shows: `ThriftUtilities.getFromThrift` calls them in list order; the
/// request builders keep such pairs out of the list.)
pub async fn family_includes_its_named_columns(t: &dyn Target) {
    let tt = ab_table(t, "family_includes_its_named_columns").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "r", 1, "1")
                .put_at("a", "x", 1, "2")
                .put_at("b", "y", 1, "3"),
        ],
    )
    .await;
    let family_a = vec![cell("a", "r", 1, "1"), cell("a", "x", 1, "2")];
    assert_eq!(
        get_cells(&tt, Get::new("r").family("a").column("a", "r")).await,
        family_a
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").column("a", "r").family("a")).await,
        family_a
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").family("a").column("a", "r").column("b", "y")).await,
        [family_a.clone(), vec![cell("b", "y", 1, "3")]].concat()
    );
    let scanned = scan_rows(&tt, Scan::all().family("a").column("a", "r")).await;
    assert_eq!(scanned.len(), 1);
    assert_eq!(scanned[0].cells, family_a);
}

/// The same meaning for a request whose column list is built by hand:
/// `[Family(a), Qualifier(a, r)]` reads all of `a`. (A backend passes the
/// list through `hmap::store::selected_columns` before HBase sees it.)
pub async fn hand_built_columns_read_as_a_set(t: &dyn Target) {
    let tt = ab_table(t, "hand_built_columns_read_as_a_set").await;
    put(
        &tt,
        vec![RowMutation::new("r").put_at("a", "r", 1, "1").put_at("a", "x", 1, "2")],
    )
    .await;
    let mut get = Get::new("r");
    get.columns = vec![
        Column::Family(Bytes::from_static(b"a")),
        Column::Qualifier(Bytes::from_static(b"a"), Bytes::from_static(b"r")),
    ];
    let family_a = vec![cell("a", "r", 1, "1"), cell("a", "x", 1, "2")];
    assert_eq!(get_cells(&tt, get.clone()).await, family_a);
    let mut scan = Scan::all();
    scan.columns = get.columns;
    assert_eq!(
        scan_rows(&tt, scan)
            .await
            .into_iter()
            .flat_map(|r| r.cells)
            .collect::<Vec<_>>(),
        family_a
    );
}

/// An increment naming one column twice is refused, naming the table, row
/// and column, and writes nothing. (hmap's rule. HBase adds each amount to
/// the same old value, keeps the last sum and answers with a cell per
/// amount: `HRegion.reckonDeltas` reads every delta's column before any is
/// written.)
pub async fn increment_repeated_column_refused(t: &dyn Target) {
    let tt = ab_table(t, "increment_repeated_column_refused").await;
    let err = t
        .store()
        .increment(&tt.name, &Increment::new("r").add("b", "q", 2).add("b", "q", 5))
        .await
        .unwrap_err();
    match &err {
        StoreError::InvalidRequest { table, reason } => {
            assert_eq!(*table, tt.name);
            assert!(reason.contains("row r") && reason.contains("b:q"), "{err}");
        }
        _ => panic!("expected an invalid request, got {err}"),
    }
    assert_eq!(t.store().get(&tt.name, &Get::new("r")).await.unwrap(), None);
}

/// A range is half-open: a stop equal to the start reads nothing, forward
/// and reversed, as does a stop below the start. (hmap's meaning, that of
/// HBase's `Scan.withStopRow`. HBase's Thrift gateway sets the stop with the
/// deprecated `Scan.setStopRow`, which turns an equal start and stop into a
/// one-row "get scan" (`includeStopRow`): a backend must not send such a
/// scan, see `Scan::is_empty_range`.)
pub async fn scan_range_start_equals_stop(t: &dyn Target) {
    let tt = ab_table(t, "scan_range_start_equals_stop").await;
    put(
        &tt,
        ["a", "b", "b\0", "c"]
            .iter()
            .map(|k| RowMutation::new(*k).put_at("a", "q", 1, "v"))
            .collect(),
    )
    .await;
    assert_eq!(scan_keys(&tt, Scan::range("b", "b")).await, keys(&[]));
    assert_eq!(scan_keys(&tt, Scan::range("b", "b").reversed()).await, keys(&[]));
    assert_eq!(scan_keys(&tt, Scan::range("c", "b")).await, keys(&[]));
    assert_eq!(scan_keys(&tt, Scan::range("c", "b").reversed()).await, keys(&[]));
    assert_eq!(scan_keys(&tt, Scan::range("b", "b\0")).await, keys(&["b"]));
    assert_eq!(scan_keys(&tt, Scan::range("b", "b\0").reversed()).await, keys(&["b"]));
}

/// With TTL and MIN_VERSIONS, a read that names the column returns one
/// expired version beyond MIN_VERSIONS; a read of the whole family does
/// not. (`ExplicitColumnTracker.checkVersions` includes the version at which
/// `count >= minVersions && isExpired(ts)` and then moves to the next
/// column, where `ScanWildcardColumnTracker.checkVersion` drops it; a major
/// compaction, which reads like the wildcard tracker, removes it for good.)
pub async fn min_versions_named_column_keeps_one_expired(t: &dyn Target) {
    let tt = table(
        t,
        "min_versions_named_column_keeps_one_expired",
        vec![FamilySchema::new("t").versions(5).min_versions(1).ttl_secs(60)],
    )
    .await;
    let now = now_millis();
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("t", "q", now, "fresh")
                .put_at("t", "q", now - 3_600_000, "old1")
                .put_at("t", "q", now - 7_200_000, "old2"),
            RowMutation::new("s")
                .put_at("t", "q", now - 3_600_000, "old1")
                .put_at("t", "q", now - 7_200_000, "old2"),
        ],
    )
    .await;
    let fresh_and_one = vec![cell("t", "q", now, "fresh"), cell("t", "q", now - 3_600_000, "old1")];
    assert_eq!(
        get_cells(&tt, Get::new("r").column("t", "q").max_versions(3)).await,
        fresh_and_one
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").family("t").max_versions(3)).await,
        vec![cell("t", "q", now, "fresh")]
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)).await,
        vec![cell("t", "q", now, "fresh")]
    );
    // Only expired versions: MIN_VERSIONS of them either way.
    assert_eq!(
        get_cells(&tt, Get::new("s").column("t", "q").max_versions(3)).await,
        vec![cell("t", "q", now - 3_600_000, "old1")]
    );
    let scanned = scan_rows(&tt, Scan::all().column("t", "q").max_versions(3)).await;
    assert_eq!(scanned[0].cells, fresh_and_one);
}

/// An empty expected value means "absent or empty", like no value: a check
/// for `""` passes on an absent column and on an empty one, a check for
/// absence passes on an empty one, and neither passes on another value.
/// (`HRegion.checkAndMutateInternal`: `valueIsNull` is a null or empty
/// comparator value; then an empty result matches, and a cell matches when
/// its value is empty.)
pub async fn check_empty_means_absent_or_empty(t: &dyn Target) {
    let tt = ab_table(t, "check_empty_means_absent_or_empty").await;
    put(
        &tt,
        vec![
            RowMutation::new("empty").put_at("b", "q", 1, ""),
            RowMutation::new("full").put_at("b", "q", 1, "z"),
        ],
    )
    .await;
    let check = async |row: &'static str, expected: Option<Bytes>| {
        t.store()
            .check_and_mutate(
                &tt.name,
                &CheckAndMutate::new(RowMutation::new(row).put_at("b", "hit", 1, "x"), "b", "q", expected),
            )
            .await
            .unwrap()
    };
    assert!(check("absent", Some(Bytes::new())).await);
    assert!(check("empty", None).await);
    assert!(check("empty", Some(Bytes::new())).await);
    assert!(!check("full", Some(Bytes::new())).await);
    assert!(!check("full", None).await);
    assert_eq!(get_cells(&tt, Get::new("absent")).await, vec![cell("b", "hit", 1, "x")]);
    assert_eq!(get_cells(&tt, Get::new("full")).await, vec![cell("b", "q", 1, "z")]);
}

/// Two deletes of a column's latest version in one row mutation delete one
/// version: each resolves against the row as it was. (Each is its own
/// `Delete` in HBase's `RowMutations`; `HRegion.prepareDeleteTimestamps`
/// counts the versions to skip per `Delete`, before any is applied.)
pub async fn two_delete_latest_in_one_mutation(t: &dyn Target) {
    let tt = ab_table(t, "two_delete_latest_in_one_mutation").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "v1")
                .put_at("a", "q", 2, "v2")
                .put_at("a", "q", 3, "v3"),
        ],
    )
    .await;
    put(
        &tt,
        vec![RowMutation::new("r").delete_latest("a", "q").delete_latest("a", "q")],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)).await,
        vec![cell("a", "q", 2, "v2"), cell("a", "q", 1, "v1")]
    );
}

/// Every delete of a row mutation counts, also when a delete of the whole
/// family follows another delete of that family. (HBase's
/// `Delete.addFamily` clears the family's earlier deletes in the same
/// `Delete` message, so a client must not pack them into one; separate
/// `Delete`s of one `RowMutations` each count.)
pub async fn family_delete_after_deletes_of_its_family(t: &dyn Target) {
    let tt = ab_table(t, "family_delete_after_deletes_of_its_family").await;
    let rows = ["column", "family", "version"];
    let cells = |row: &'static str| {
        RowMutation::new(row)
            .put_at("a", "q", 1000, "x")
            .put_at("a", "p", 100, "old")
            .put_at("b", "q", 1000, "kept")
    };
    put(&tt, rows.iter().map(|r| cells(r)).collect()).await;
    put(
        &tt,
        vec![
            RowMutation::new("column")
                .delete_column_up_to("a", "q", 2000)
                .delete_family_up_to("a", 300),
            RowMutation::new("family")
                .delete_family_up_to("a", 2000)
                .delete_family_up_to("a", 300),
            RowMutation::new("version")
                .delete_version("a", "q", 1000)
                .delete_family_up_to("a", 300),
        ],
    )
    .await;
    for row in rows {
        assert_eq!(
            get_cells(&tt, Get::new(row).max_versions(3)).await,
            vec![cell("b", "q", 1000, "kept")],
            "row {row}"
        );
    }
    // One row alone, and under a check.
    put(&tt, vec![cells("alone"), cells("checked")]).await;
    put(
        &tt,
        vec![
            RowMutation::new("alone")
                .delete_family_up_to("a", 2000)
                .delete_family_up_to("a", 300),
        ],
    )
    .await;
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(
                RowMutation::new("checked")
                    .delete_version("a", "q", 1000)
                    .delete_family_up_to("a", 300),
                "b",
                "q",
                Some(Bytes::from_static(b"kept")),
            ),
        )
        .await
        .unwrap();
    assert!(applied);
    for row in ["alone", "checked"] {
        assert_eq!(
            get_cells(&tt, Get::new(row).max_versions(3)).await,
            vec![cell("b", "q", 1000, "kept")],
            "row {row}"
        );
    }
}

/// A row named several times in one `mutate` gets its changes in the order
/// given, as if each were a call of its own, whatever their kinds: a later
/// put at the same timestamp wins, and a delete of the latest version
/// sees the puts before it. (hmap's contract for `Store::mutate`, kept on
/// every backend; HBase's `Table.batch` leaves the order of two actions on
/// one row undefined, so a backend that batches must not send them
/// together.)
pub async fn repeated_row_in_one_batch_applies_in_order(t: &dyn Target) {
    let tt = ab_table(t, "repeated_row_in_one_batch_applies_in_order").await;
    put(
        &tt,
        vec![
            RowMutation::new("r").put_at("a", "q", 300, "first"),
            RowMutation::new("r")
                .put_at("a", "q", 500, "second")
                .delete_column_up_to("b", "z", 500),
            RowMutation::new("other").put_at("a", "q", 1, "x"),
            RowMutation::new("r").put_at("a", "q", 500, "third"),
        ],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").column("a", "q").max_versions(3)).await,
        vec![cell("a", "q", 500, "third"), cell("a", "q", 300, "first")]
    );
    put(&tt, vec![RowMutation::new("s").put_at("a", "q", 100, "old")]).await;
    put(
        &tt,
        vec![
            RowMutation::new("s").put_at("a", "q", 200, "new"),
            RowMutation::new("s").delete_latest("a", "q"),
        ],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("s").column("a", "q").max_versions(3)).await,
        vec![cell("a", "q", 100, "old")]
    );
    assert_eq!(get_cells(&tt, Get::new("other")).await, vec![cell("a", "q", 1, "x")]);
}

/// A column named twice in a read is read once: its versions, as when it
/// is named once. (HBase's `Get.addColumn` keeps a family's qualifiers in
/// a set.)
pub async fn column_named_twice_reads_once(t: &dyn Target) {
    let tt = ab_table(t, "column_named_twice_reads_once").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "v1")
                .put_at("a", "q", 2, "v2")
                .put_at("a", "q", 3, "v3")
                .put_at("a", "other", 1, "o"),
        ],
    )
    .await;
    let versions = vec![
        cell("a", "q", 3, "v3"),
        cell("a", "q", 2, "v2"),
        cell("a", "q", 1, "v1"),
    ];
    assert_eq!(
        get_cells(&tt, Get::new("r").column("a", "q").column("a", "q").max_versions(3)).await,
        versions
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").column("a", "q").max_versions(3)).await,
        versions
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").column("a", "q").column("a", "q")).await,
        vec![cell("a", "q", 3, "v3")]
    );
}

/// A table another client dropped is [`StoreError::TableNotFound`] for
/// every call of a store that had read it, whatever shape the server's
/// answer takes. (HBase: `TableNotFoundException`; a gateway passes on only
/// its message, the table's name.)
pub async fn table_dropped_behind_the_store(t: &dyn Target) {
    let tt = ab_table(t, "table_dropped_behind_the_store").await;
    let s = t.store();
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 1, "x")]).await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("a", "q", 1, "x")]);
    t.other_client().unwrap_or(s).delete_table(&tt.name).await.unwrap();
    let not_found = |call: &str, e: Option<StoreError>| match e {
        Some(StoreError::TableNotFound { ref table }) if *table == tt.name => {}
        other => panic!("{call} on a dropped table: expected TableNotFound, got {other:?}"),
    };
    not_found("get", s.get(&tt.name, &Get::new("r")).await.err());
    not_found(
        "get_many",
        s.get_many(&tt.name, &[Get::new("r"), Get::new("s")]).await.err(),
    );
    not_found(
        "mutate of one row",
        s.mutate(&tt.name, &[RowMutation::new("r").put_at("a", "q", 2, "y")])
            .await
            .err(),
    );
    not_found(
        "mutate of two rows",
        s.mutate(
            &tt.name,
            &[
                RowMutation::new("r").put_at("a", "q", 2, "y"),
                RowMutation::new("s").put_at("a", "q", 2, "y"),
            ],
        )
        .await
        .err(),
    );
    not_found(
        "check_and_mutate",
        s.check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(
                RowMutation::new("r").put("a", "q", "y"),
                "a",
                "q",
                Some(Bytes::from_static(b"x")),
            ),
        )
        .await
        .err(),
    );
    not_found(
        "increment",
        s.increment(&tt.name, &Increment::new("r").add("b", "n", 1)).await.err(),
    );
    let scanned = match s.scan(&tt.name, &Scan::all()).await {
        Ok(rows) => rows.try_collect::<Vec<_>>().await.err(),
        Err(e) => Some(e),
    };
    not_found("scan", scanned);
}

/// A family another client added is writable and readable through a store
/// that had read the table before, and one it deleted is
/// [`StoreError::NoSuchFamily`] there, every time. (HBase checks families on
/// the region server: `NoSuchColumnFamilyException`.)
pub async fn family_changed_behind_the_store(t: &dyn Target) {
    let tt = ab_table(t, "family_changed_behind_the_store").await;
    let s = t.store();
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 1, "x")]).await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("a", "q", 1, "x")]);
    let other = t.other_client().unwrap_or(s);
    other
        .alter_table(&tt.name, &FamilyChange::Add(FamilySchema::new("m")))
        .await
        .unwrap();
    put(&tt, vec![RowMutation::new("r").put_at("m", "q", 1, "new")]).await;
    assert_eq!(
        get_cells(&tt, Get::new("r").family("m")).await,
        vec![cell("m", "q", 1, "new")]
    );
    if t.framed_gateway() {
        // A framed gateway cannot delete a family (see `framed_gateway`).
        return;
    }
    other
        .alter_table(&tt.name, &FamilyChange::Delete("b".into()))
        .await
        .unwrap();
    for attempt in 0..2 {
        match s
            .mutate(&tt.name, &[RowMutation::new("r").put_at("b", "q", 1, "gone")])
            .await
        {
            Err(StoreError::NoSuchFamily { ref table, ref family }) if *table == tt.name && family == "b" => {}
            other => panic!("put {attempt} to a deleted family: expected NoSuchFamily, got {other:?}"),
        }
    }
    assert_eq!(
        get_cells(&tt, Get::new("r")).await,
        vec![cell("a", "q", 1, "x"), cell("m", "q", 1, "new")]
    );
}

/// A passing check-and-mutate stamps its puts without a timestamp no older
/// than the checked cell, so a checked cell from the future does not hide
/// them. (`HRegion.checkAndMutateInternal`: `ts = max(now, cellTs)`,
/// "ensure write is not eclipsed", HBASE-14054; the same timestamp
/// overwrites.)
pub async fn check_and_mutate_put_not_older_than_checked(t: &dyn Target) {
    let tt = ab_table(t, "check_and_mutate_put_not_older_than_checked").await;
    let future = now_millis() + 3_600_000;
    put(&tt, vec![RowMutation::new("r").put_at("b", "q", future, "x")]).await;
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(
                RowMutation::new("r").put("b", "q", "y").put("b", "o", "z"),
                "b",
                "q",
                Some(Bytes::from_static(b"x")),
            ),
        )
        .await
        .unwrap();
    assert!(applied);
    assert_eq!(
        get_cells(&tt, Get::new("r")).await,
        vec![cell("b", "o", future, "z"), cell("b", "q", future, "y")]
    );
}

/// Versions beyond VERSIONS written in one row mutation are all there until
/// the mutation ends: twelve versions of a VERSIONS 1 column, written newest
/// first, then the newest deleted, shows the second newest. (HBase keeps
/// them in the memstore until a flush, which never splits a mutation; after
/// a flush it would show nothing, never the oldest.)
pub async fn surplus_versions_survive_the_mutation(t: &dyn Target) {
    let tt = ab_table(t, "surplus_versions_survive_the_mutation").await;
    let mut m = RowMutation::new("r");
    for ts in (1..=12).rev() {
        m = m.put_at("b", "q", ts, format!("v{ts}"));
    }
    put(&tt, vec![m]).await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("b", "q", 12, "v12")]);
    put(&tt, vec![RowMutation::new("r").delete_latest("b", "q")]).await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("b", "q", 11, "v11")]);
}

/// Every call on an illegal table name fails with the same typed error,
/// before anything reaches storage. (HBase: `TableName.valueOf` throws
/// `IllegalArgumentException` from `isLegalTableQualifierName`, "Tables may
/// not be named 'zookeeper'".)
pub async fn illegal_table_name_fails(t: &dyn Target) {
    let s = t.store();
    for name in ["bad name!", "-dash", "zookeeper"] {
        let invalid = |r: Result<(), StoreError>, call: &str| match r {
            Err(StoreError::InvalidRequest { ref table, .. }) if table == name => {}
            other => panic!("{call} on {name:?}: expected an invalid request, got {other:?}"),
        };
        invalid(s.get(name, &Get::new("r")).await.map(|_| ()), "get");
        invalid(
            s.mutate(name, &[RowMutation::new("r").put("a", "q", "v")]).await,
            "mutate",
        );
        invalid(s.scan(name, &Scan::all()).await.map(|_| ()), "scan");
        invalid(s.table_exists(name).await.map(|_| ()), "table_exists");
        invalid(s.describe_table(name).await.map(|_| ()), "describe_table");
        invalid(s.delete_table(name).await, "delete_table");
        assert!(matches!(
            s.create_table(&TableSchema::new(name).family(FamilySchema::new("a")))
                .await,
            Err(StoreError::InvalidSchema { .. })
        ));
    }
}

/// A table name of 255 bytes works; one of 256 is refused before any call,
/// by `create_table` as an invalid schema and by other calls as an invalid
/// request. (HBase sets no limit, but the name is a directory under its
/// root, `data/default/<name>`, and file systems take 255 bytes: a longer
/// name leaves the master retrying `CreateTableProcedure` forever.)
pub async fn table_name_length_limit(t: &dyn Target) {
    let s = t.store();
    let base = format!("{}table_name_length_limit_", t.table_prefix());
    let longest = format!("{base}{}", "n".repeat(MAX_TABLE_NAME_PART - base.len()));
    assert_eq!(longest.len(), 255);
    if s.table_exists(&longest).await.unwrap() {
        s.delete_table(&longest).await.unwrap();
    }
    s.create_table(&TableSchema::new(longest.clone()).family(FamilySchema::new("a")))
        .await
        .unwrap();
    s.mutate(&longest, &[RowMutation::new("r").put_at("a", "q", 1, "v")])
        .await
        .unwrap();
    let cells = s.get(&longest, &Get::new("r")).await.unwrap().map(|r| r.cells);
    s.delete_table(&longest).await.unwrap();
    assert_eq!(cells, Some(vec![cell("a", "q", 1, "v")]));

    let too_long = format!("{longest}n");
    assert!(matches!(
        s.create_table(&TableSchema::new(too_long.clone()).family(FamilySchema::new("a")))
            .await,
        Err(StoreError::InvalidSchema { .. })
    ));
    assert!(matches!(
        s.get(&too_long, &Get::new("r")).await,
        Err(StoreError::InvalidRequest { .. })
    ));
    assert!(matches!(
        s.table_exists(&too_long).await,
        Err(StoreError::InvalidRequest { .. })
    ));
}

/// The cell size limit counts what HBase counts: row, family, qualifier and
/// value, plus 24 bytes (a `KeyValue`'s 20 bytes of framing and the 4 that
/// `PrivateCellUtil.estimatedSerializedSizeOf` adds); the error names the
/// row and column. (HBase: `RSRpcServices.checkCellSizeLimit` against
/// `hbase.server.keyvalue.maxsize`, 10 MiB: "Cell[r/a:q/...] with size
/// 10485761 exceeds limit of 10485760 bytes" for a 10485734-byte value.)
pub async fn cell_size_counts_row_and_column(t: &dyn Target) {
    let tt = ab_table(t, "cell_size_counts_row_and_column").await;
    let limit = t.max_value_size();
    let largest = limit - 24 - "row".len() - "a".len() - "qq".len();
    put(
        &tt,
        vec![RowMutation::new("row").put_at("a", "qq", 1, vec![b'x'; largest])],
    )
    .await;
    let cells = get_cells(&tt, Get::new("row")).await;
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0].value.len(), largest);
    let err = t
        .store()
        .mutate(
            &tt.name,
            &[RowMutation::new("row").put_at("a", "qq", 2, vec![b'x'; largest + 1])],
        )
        .await
        .unwrap_err();
    match &err {
        StoreError::CellTooLarge {
            table,
            row,
            column,
            size,
            limit: l,
        } => {
            assert_eq!((table, row.as_str(), column.as_str()), (&tt.name, "row", "a:qq"));
            assert_eq!((*size, *l), (limit + 1, limit));
        }
        _ => panic!("expected a cell too large, got {err}"),
    }
    assert_eq!(get_cells(&tt, Get::new("row")).await[0].timestamp, 1);
}

/// A check for absence guards deletes as well as puts, all applied at once:
/// how hmap's typed layer saves a new row of a versioned type, deleting its
/// `None` columns and replacing its dynamic families. (HBase:
/// `Table.checkAndMutate(row, family).qualifier(q).ifNotExists().thenMutate(RowMutations)`;
/// over Thrift2, `checkAndMutate` with the empty value, which HBase's region
/// reads as "absent", `HRegion.checkAndMutateInternal`.)
pub async fn check_absent_guards_deletes(t: &dyn Target) {
    let tt = ab_table(t, "check_absent_guards_deletes").await;
    // Leftovers of an earlier life of the row: an optional column, and an
    // entry of a dynamic family.
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "opt", 5, "stale")
                .put_at("b", "k1", 5, "x"),
        ],
    )
    .await;
    let save = |version: &'static str| {
        RowMutation::new("r")
            .delete_column_up_to("a", "opt", 10)
            .delete_family_up_to("b", 9)
            .put_at("b", "k2", 10, "y")
            .put_at("b", "ver", 10, version)
    };
    let applied = t
        .store()
        .check_and_mutate(&tt.name, &CheckAndMutate::new(save("1"), "b", "ver", None))
        .await
        .unwrap();
    assert!(applied);
    let saved = vec![cell("b", "k2", 10, "y"), cell("b", "ver", 10, "1")];
    assert_eq!(get_cells(&tt, Get::new("r")).await, saved);
    // Saved once: a second "new row" finds the version column and changes nothing.
    let applied = t
        .store()
        .check_and_mutate(&tt.name, &CheckAndMutate::new(save("2"), "b", "ver", None))
        .await
        .unwrap();
    assert!(!applied);
    assert_eq!(get_cells(&tt, Get::new("r")).await, saved);
}

// ---------------------------------------------------------------------------
// Table metadata and truncation

/// Creates `prefix + case` afresh from a whole schema (its name replaced).
async fn table_from<'a>(t: &'a dyn Target, case: &str, mut schema: TableSchema) -> TestTable<'a> {
    let store = t.store();
    schema.name = format!("{}{case}", t.table_prefix());
    if store.table_exists(&schema.name).await.expect("table_exists") {
        store.delete_table(&schema.name).await.expect("delete a leftover table");
    }
    store.create_table(&schema).await.expect("create_table");
    TestTable {
        store,
        name: schema.name,
    }
}

/// A table's metadata set at creation is what `describe` reports, quotes
/// and backslashes included. (HBase: `TableDescriptor.getValue`, the shell's
/// `METADATA`; Thrift2 IDL: `TTableDescriptor.attributes`, field 3.)
pub async fn table_metadata_round_trips(t: &dyn Target) {
    let schema = TableSchema::new("")
        .family(FamilySchema::new("a"))
        .metadata("hmap.key", "text '_': uid: string + seq: u32 width 4")
        .metadata("team", "it's a \\ test");
    let tt = table_from(t, "table_metadata_round_trips", schema.clone()).await;
    let live = t.store().describe_table(&tt.name).await.unwrap();
    if t.framed_gateway() {
        // Created without it: no metadata, and none of the frame-sized
        // garbage that gateway would have stored in its place.
        assert!(!live.metadata.contains_key("hmap.key"), "{:?}", live.metadata);
        assert!(live.metadata.keys().all(|k| k.len() < 100), "{:?}", live.metadata);
        return;
    }
    for (key, value) in &schema.metadata {
        assert_eq!(live.metadata.get(key), Some(value), "{key}");
    }
    assert_eq!(live.key_layout(), Some("text '_': uid: string + seq: u32 width 4"));
}

/// Truncating a table deletes its rows and keeps its families, options,
/// metadata and split points; writes go on. (HBase: `Admin.truncateTable`
/// with `preserveSplits`, the shell's `truncate_preserve`; Thrift2 IDL:
/// `truncateTable`.)
pub async fn truncate_keeps_schema_and_splits(t: &dyn Target) {
    let schema = TableSchema::new("")
        .family(FamilySchema::new("a").versions(3).ttl_secs(86_400))
        .family(FamilySchema::new("b"))
        .split_keys(keys(&["m"]))
        .metadata("hmap.key", "binary: id: string");
    let tt = table_from(t, "truncate_keeps_schema_and_splits", schema).await;
    put(
        &tt,
        vec![
            RowMutation::new("a1").put_at("a", "q", 1, "v"),
            RowMutation::new("z1").put_at("b", "q", 1, "v"),
        ],
    )
    .await;
    let before = t.store().describe_table(&tt.name).await.unwrap();
    t.store().truncate_table(&tt.name).await.unwrap();
    assert!(t.store().table_exists(&tt.name).await.unwrap());
    assert_eq!(scan_keys(&tt, Scan::all()).await, Vec::<Bytes>::new());
    assert_eq!(t.store().describe_table(&tt.name).await.unwrap(), before);
    put(&tt, vec![RowMutation::new("b2").put_at("b", "q", 2, "w")]).await;
    assert_eq!(get_cells(&tt, Get::new("b2")).await, vec![cell("b", "q", 2, "w")]);
}

/// Truncating a missing table fails with `TableNotFound`.
/// (HBase: `TableNotFoundException`.)
pub async fn truncate_missing_table_fails(t: &dyn Target) {
    let name = format!("{}truncate_missing_table_fails_never_created", t.table_prefix());
    let _ = t.store().delete_table(&name).await;
    let err = t.store().truncate_table(&name).await.unwrap_err();
    assert!(
        matches!(err, StoreError::TableNotFound { ref table } if *table == name),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// Altering a live table

/// Adding a family to a live table: it is described with its options,
/// takes writes, and the other families keep their cells. (HBase:
/// `Admin.addColumnFamily`; Thrift2 `addColumnFamily`.)
pub async fn alter_adds_a_family(t: &dyn Target) {
    let tt = ab_table(t, "alter_adds_a_family").await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 1, "old")]).await;
    let c = FamilySchema::new("c")
        .versions(4)
        .block_size(32_768)
        .bloom(BloomType::RowCol)
        .compression(Compression::Gz);
    t.store()
        .alter_table(&tt.name, &FamilyChange::Add(c.clone()))
        .await
        .unwrap();
    let described = t.store().describe_table(&tt.name).await.unwrap();
    let names: Vec<&str> = described.families.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(described.find_family(b"c"), Some(&c));
    put(
        &tt,
        vec![RowMutation::new("r").put_at("c", "q", 1, "1").put_at("c", "q", 2, "2")],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(5)).await,
        vec![cell("a", "q", 1, "old"), cell("c", "q", 2, "2"), cell("c", "q", 1, "1")]
    );
}

/// Changing a family's options keeps its cells; raising VERSIONS keeps
/// more versions of what is written afterwards. The table's regions reopen,
/// which flushes what was written before under the old VERSIONS. (HBase:
/// `Admin.modifyColumnFamily`, then `ReopenTableRegionsProcedure`.)
pub async fn alter_modifies_a_family(t: &dyn Target) {
    let tt = ab_table(t, "alter_modifies_a_family").await;
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("b", "q", 1, "1")
                .put_at("b", "q", 2, "2")
                .put_at("a", "q", 1, "a1"),
        ],
    )
    .await;
    let wider = FamilySchema::new("b").versions(5).in_memory(true);
    t.store()
        .alter_table(&tt.name, &FamilyChange::Modify(wider.clone()))
        .await
        .unwrap();
    assert_eq!(
        t.store().describe_table(&tt.name).await.unwrap().find_family(b"b"),
        Some(&wider)
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").family("b").max_versions(5)).await,
        vec![cell("b", "q", 2, "2")]
    );
    put(
        &tt,
        vec![RowMutation::new("r").put_at("b", "q", 3, "3").put_at("b", "q", 4, "4")],
    )
    .await;
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(5)).await,
        vec![
            cell("a", "q", 1, "a1"),
            cell("b", "q", 4, "4"),
            cell("b", "q", 3, "3"),
            cell("b", "q", 2, "2"),
        ]
    );
}

/// Deleting a family deletes its cells; rows that held nothing else are
/// gone from scans. (HBase: `Admin.deleteColumnFamily`.)
pub async fn alter_deletes_a_family(t: &dyn Target) {
    let tt = ab_table(t, "alter_deletes_a_family").await;
    put(
        &tt,
        vec![
            RowMutation::new("r1").put_at("a", "q", 1, "1").put_at("b", "q", 1, "x"),
            RowMutation::new("r2").put_at("b", "q", 1, "y"),
        ],
    )
    .await;
    let deleted = t.store().alter_table(&tt.name, &FamilyChange::Delete("b".into())).await;
    if t.framed_gateway() {
        assert!(matches!(deleted, Err(StoreError::InvalidRequest { .. })), "{deleted:?}");
        assert_eq!(get_cells(&tt, Get::new("r2")).await, vec![cell("b", "q", 1, "y")]);
        return;
    }
    deleted.unwrap();
    let names: Vec<String> = t
        .store()
        .describe_table(&tt.name)
        .await
        .unwrap()
        .families
        .into_iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(names, ["a"]);
    assert_eq!(scan_keys(&tt, Scan::all()).await, keys(&["r1"]));
    assert_eq!(get_cells(&tt, Get::new("r1")).await, vec![cell("a", "q", 1, "1")]);
    put(&tt, vec![RowMutation::new("r3").put_at("a", "q", 1, "3")]).await;
    assert_eq!(scan_keys(&tt, Scan::all()).await, keys(&["r1", "r3"]));
}

/// A change that does not fit the table is refused, naming the table, and
/// changes nothing: adding a family that exists, changing or deleting one
/// that does not, deleting the only family, an invalid option; on a missing
/// table, `TableNotFound`. (HBase's master refuses the same:
/// `InvalidFamilyOperationException`, `TableDescriptorChecker`; hmap checks
/// before the call, the same way on every backend.)
pub async fn alter_refuses_what_does_not_fit(t: &dyn Target) {
    let tt = table(t, "alter_refuses_what_does_not_fit", vec![FamilySchema::new("a")]).await;
    let refused = async |change: FamilyChange, why: &str| match t.store().alter_table(&tt.name, &change).await {
        Err(StoreError::InvalidSchema { table, reason }) => {
            assert_eq!(table, tt.name);
            assert!(reason.contains(why), "{reason}");
        }
        other => panic!("expected {change:?} to be refused, got {other:?}"),
    };
    refused(FamilyChange::Add(FamilySchema::new("a")), "exists already").await;
    refused(FamilyChange::Modify(FamilySchema::new("x")), "no family `x`").await;
    refused(FamilyChange::Delete("x".into()), "no family `x`").await;
    refused(FamilyChange::Delete("a".into()), "only family").await;
    refused(FamilyChange::Add(FamilySchema::new("c").versions(0)), "VERSIONS").await;
    let before = t.store().describe_table(&tt.name).await.unwrap();
    assert_eq!(before.families, vec![FamilySchema::new("a")]);
    let missing = format!("{}alter_refuses_what_does_not_fit_never_created", t.table_prefix());
    let _ = t.store().delete_table(&missing).await;
    let err = t
        .store()
        .alter_table(&missing, &FamilyChange::Add(FamilySchema::new("c")))
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::TableNotFound { ref table } if *table == missing),
        "{err}"
    );
}

/// Every case, by name, in the order they are defined: `for_each_case!`
/// expands a macro once per name.
#[macro_export]
macro_rules! for_each_case {
    ($($callback:ident)::+ $(, $($with:tt)+)?) => {
        $($callback)::+! {
            $($($with)+;)?
            create_table_then_exists,
            create_existing_table_fails,
            delete_table_removes_data,
            missing_table_fails,
            describe_returns_family_options,
            describe_default_family_options,
            describe_sorts_families,
            invalid_schemas_fail,
            put_then_get,
            get_missing_row,
            put_default_timestamp_is_now,
            cells_sorted_by_family_and_qualifier,
            get_one_family,
            get_chosen_columns,
            get_absent_column,
            unknown_family_fails,
            refused_batch_writes_nothing,
            batch_applies_rows_in_order,
            loader_writes_rows_as_mutate_does,
            refused_load_writes_nothing,
            large_writes_are_written_whole,
            empty_qualifier_and_value,
            binary_bytes_round_trip,
            empty_row_rejected,
            row_length_limit,
            oversized_value_rejected,
            negative_timestamp_rejected,
            get_many_in_order,
            get_many_of_many_rows_in_order,
            versions_capped_by_family,
            get_fewer_versions,
            get_latest_by_default,
            same_timestamp_overwrites,
            older_put_is_not_latest,
            thousand_versions,
            time_range_is_half_open,
            time_range_then_versions,
            exact_timestamp,
            time_range_without_versions,
            delete_latest_reveals_previous,
            delete_latest_of_single_version,
            delete_one_version,
            delete_column_all_versions,
            delete_column_up_to,
            delete_family,
            delete_family_up_to,
            delete_row,
            delete_masks_later_older_put,
            newer_put_after_delete_visible,
            delete_then_put_again,
            delete_missing_row_harmless,
            delete_and_put_in_one_mutation,
            ttl_hides_expired,
            min_versions_outlive_ttl,
            min_versions_count_fresh_versions,
            scan_all_in_order,
            scan_range_bounds,
            scan_prefix,
            scan_prefix_with_ff,
            scan_reversed,
            scan_reversed_range,
            scan_reversed_prefix,
            scan_limit,
            scan_batch_sizes_agree,
            scan_chosen_columns,
            scan_time_range,
            scan_max_versions,
            scan_skips_deleted_rows,
            scan_empty,
            scanner_reads_at_open,
            scanner_released_on_drop,
            scanner_ends_for_good,
            check_and_put_when_equal,
            check_and_put_when_different,
            check_absent_when_missing,
            check_absent_when_present,
            check_and_delete,
            check_compares_latest_version,
            check_absent_after_delete,
            increment_creates_counter,
            increment_accumulates,
            increment_several_columns,
            increment_non_counter_fails,
            increment_timestamp_after_current,
            concurrent_writers_and_readers,
            concurrent_increments,
            family_includes_its_named_columns,
            hand_built_columns_read_as_a_set,
            increment_repeated_column_refused,
            scan_range_start_equals_stop,
            min_versions_named_column_keeps_one_expired,
            check_empty_means_absent_or_empty,
            two_delete_latest_in_one_mutation,
            family_delete_after_deletes_of_its_family,
            repeated_row_in_one_batch_applies_in_order,
            column_named_twice_reads_once,
            table_dropped_behind_the_store,
            family_changed_behind_the_store,
            check_and_mutate_put_not_older_than_checked,
            surplus_versions_survive_the_mutation,
            illegal_table_name_fails,
            table_name_length_limit,
            cell_size_counts_row_and_column,
            check_absent_guards_deletes,
            table_metadata_round_trips,
            truncate_keeps_schema_and_splits,
            truncate_missing_table_fails,
            alter_adds_a_family,
            alter_modifies_a_family,
            alter_deletes_a_family,
            alter_refuses_what_does_not_fit,
            filter_prefix,
            filter_row,
            filter_family,
            filter_qualifier,
            filter_value,
            filter_runs_before_versions,
            filter_binary_prefix,
            filter_regex,
            filter_substring,
            filter_null_comparator,
            filter_bit_comparator,
            filter_no_op,
            filter_tricky_bytes,
            filter_single_column_value,
            filter_single_column_value_exclude,
            filter_column_prefix,
            filter_multiple_column_prefix,
            filter_column_range,
            filter_column_count_get,
            filter_column_pagination,
            filter_column_pagination_from,
            filter_key_only,
            filter_key_only_lengths,
            filter_first_key_only,
            filter_inclusive_stop,
            filter_page,
            filter_timestamps,
            filter_dependent_column,
            filter_skip,
            filter_while_match,
            filter_list_and,
            filter_list_or,
            filter_list_nested,
            filter_multi_row_range,
            filter_fuzzy_row,
            filter_get,
            filter_invalid_refused,
            check_compares_every_way,
            check_absent_or_empty_every_way,
            check_time_range,
            check_filter_condition,
            append_to_columns,
            append_refusals,
            batch_answers_each_row,
            batch_into_missing_table_fails,
        }
    };
}
