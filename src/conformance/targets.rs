//! The backends the suite runs on, each a [`Target`]: `NativeStore`, a
//! Thrift2 gateway in any mode, and a Thrift1 gateway whose refusals are
//! noted, so that a case it cannot run ([`THRIFT1_SKIPS`]) is shown to stop
//! on that refusal and on nothing else.

use hmap::schema::TableSchema;
use hmap::store::{CheckAndMutate, FamilyChange, Get, Increment, RowMutation, RowResult, Scan, Store, StoreError};

use super::Target;

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
