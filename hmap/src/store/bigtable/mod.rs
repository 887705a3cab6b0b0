//! `BigtableStore`: the [`Store`] over Cloud Bigtable's gRPC Data API
//! (`google.bigtable.v2.Bigtable`) and Table Admin API
//! (`google.bigtable.admin.v2.BigtableTableAdmin`), tested against the
//! Bigtable emulator (`scripts/bigtable/emulator start`).
//!
//! HBase's model maps onto Bigtable's as Google's Java HBase adapter for
//! Bigtable maps it, so that the data is shared with Java's Bigtable HBase
//! client: timestamps in milliseconds are written × 1000 as microseconds,
//! VERSIONS and TTL are garbage-collection rules, deletes are Bigtable's
//! time-ranged deletes. What Bigtable cannot express is refused with
//! [`StoreError::Unsupported`] naming it (the list is [`unsupported`]),
//! before anything is sent. `docs/bigtable.md` has the whole mapping and
//! where Bigtable behaves otherwise than HBase (no delete markers, lazy
//! garbage collection, 4 KiB row keys).
//!
//! The messages and clients are generated from Google's own `.proto` files
//! by the `googleapis-tonic-google-bigtable-v2` and `-admin-v2` crates
//! (tonic 0.14, prost 0.14: the prost NativeStore already uses), rather
//! than by a build script of hmap's: no `protoc` at build time, and the
//! crates follow Google's protos release by release.
//!
//! ```no_run
//! use hmap::schema::{FamilySchema, TableSchema};
//! use hmap::store::bigtable::{BigtableConfig, BigtableStore};
//! use hmap::store::{Get, RowMutation, Store};
//!
//! # async fn run() -> Result<(), hmap::store::StoreError> {
//! // `scripts/bigtable/emulator start` prints HMAP_BIGTABLE=127.0.0.1:PORT.
//! let store = BigtableStore::connect(BigtableConfig::emulator("127.0.0.1:8086")).await?;
//! store.create_table(&TableSchema::new("user").family(FamilySchema::new("i"))).await?;
//! store.mutate("user", &[RowMutation::new("u1").put("i", "name", "Ann")]).await?;
//! let row = store.get("user", &Get::new("u1")).await?;
//! # let _ = row; Ok(()) }
//! ```

mod admin;
mod auth;
mod config;
mod convert;
mod data;
mod error;
pub mod filter;
mod framing;
mod metadata;
#[cfg(test)]
mod proto_check;
mod read;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use googleapis_tonic_google_bigtable_admin_v2::google::bigtable::admin::v2::bigtable_table_admin_client::BigtableTableAdminClient;
use googleapis_tonic_google_bigtable_v2::google::bigtable::v2::bigtable_client::BigtableClient;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use auth::{Authorizer, Headers};
pub use config::{
    ADMIN_ENDPOINT, BigtableConfig, BigtableCredentials, BigtableTls, DATA_ENDPOINT, EMULATOR_HOST_VARIABLE,
};
pub use data::RowKeySample;
pub use error::unsupported;
pub use metadata::METADATA_TABLE;
#[doc(hidden)]
pub use read::fuzz_read_rows as __fuzz_read_rows;

use super::check::SchemaCache;
use super::{
    Append, CheckAndMutate, FamilyChange, Get, Increment, Result, RowMutation, RowResult, RowStream, Scan, Store,
    StoreError,
};
use crate::schema::{FamilyOption, TableSchema};

/// The largest message tonic decodes: a row of Bigtable's (up to 256 MiB)
/// may come in one response, where tonic's default stops at 4 MiB.
const MAX_MESSAGE: usize = 256 * 1024 * 1024;

/// Bigtable's limit on row keys: 4 KiB (HBase's is 32 KiB).
pub const MAX_ROW_KEY: usize = 4096;

/// A Data API client whose calls carry an operation's [`Headers`].
type DataClient = BigtableClient<InterceptedService<framing::Checked, Headers>>;
/// A Table Admin API client whose calls carry an operation's [`Headers`].
type AdminClient = BigtableTableAdminClient<InterceptedService<framing::Checked, Headers>>;

/// A [`Store`] on Cloud Bigtable, through its gRPC APIs. Cheap to clone:
/// clones share the connections (a pool of HTTP/2 channels for data calls,
/// [`BigtableConfig::channels`], calls multiplexed on each; one for admin
/// calls), the access tokens and the cache of table schemas.
#[derive(Clone, Debug)]
pub struct BigtableStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: BigtableConfig,
    channels: config::Channels,
    /// The data channel the next operation takes (round robin).
    next: AtomicUsize,
    auth: Authorizer,
    schemas: SchemaCache,
    /// How many times a `ReadRows` stream was opened again after it broke
    /// (for the tests: a slow reader must not break its stream).
    resumed: AtomicUsize,
}

impl BigtableStore {
    /// Connects to the Bigtable `config` names: opens its channels and,
    /// with credentials, fetches a first access token, each within the
    /// connect deadline, so that a wrong address, certificate or key fails
    /// here rather than at the first call.
    pub async fn connect(config: BigtableConfig) -> Result<Self> {
        let started = Instant::now();
        // One deadline for the whole of it: each step gets what the steps
        // before it left.
        let left = |started: Instant| config.connect_timeout.saturating_sub(started.elapsed());
        let channels = config.connect().await?;
        let auth = Authorizer::new(&config, left(started)).await?;
        auth.bearer(auth::DATA_SCOPE, "", "connect", left(started)).await?;
        Ok(BigtableStore {
            inner: Arc::new(Inner {
                config,
                channels,
                next: AtomicUsize::new(0),
                auth,
                schemas: SchemaCache::default(),
                resumed: AtomicUsize::new(0),
            }),
        })
    }

    /// The pool's next data channel.
    fn data_channel(&self) -> Channel {
        let pool = &self.inner.channels.data;
        pool[self.inner.next.fetch_add(1, Ordering::Relaxed) % pool.len()].clone()
    }

    /// The headers of a data operation on `table` (its access token and
    /// routing parameters), and what is left of `timeout` after waiting
    /// for the token.
    async fn data_headers(
        &self,
        table: &str,
        operation: &'static str,
        timeout: Duration,
    ) -> Result<(Headers, Duration)> {
        let started = Instant::now();
        let bearer = self
            .inner
            .auth
            .bearer(auth::DATA_SCOPE, table, operation, timeout)
            .await?;
        let name = self.table_name(table);
        let params = [
            ("table_name", name.as_str()),
            ("app_profile_id", self.inner.config.app_profile.as_str()),
        ];
        Ok((Headers::new(bearer, &params), timeout.saturating_sub(started.elapsed())))
    }

    /// The headers of an admin operation (its access token), and what is
    /// left of the admin deadline after waiting for the token.
    async fn admin_headers(&self, table: &str, operation: &'static str) -> Result<(Headers, Duration)> {
        let started = Instant::now();
        // A scope's call timeout replaces this one too (CallOptions).
        let timeout = crate::store::call_timeout(self.inner.config.admin_timeout);
        let bearer = self
            .inner
            .auth
            .bearer(auth::ADMIN_SCOPE, table, operation, timeout)
            .await?;
        Ok((Headers::new(bearer, &[]), timeout.saturating_sub(started.elapsed())))
    }

    /// The store's configuration.
    pub fn config(&self) -> &BigtableConfig {
        &self.inner.config
    }

    /// A table's id on the wire: the prefix, then `table`.
    fn wire(&self, table: &str) -> String {
        format!("{}{table}", self.inner.config.table_prefix)
    }

    /// A table's resource name, `projects/P/instances/I/tables/T`.
    fn table_name(&self, table: &str) -> String {
        format!("{}/tables/{}", self.inner.config.instance_name(), self.wire(table))
    }

    /// `call` within `timeout`, its status as a typed error naming `table`;
    /// a table or family found missing is forgotten from the schema cache.
    async fn deadline<T>(
        &self,
        table: &str,
        operation: &'static str,
        timeout: Duration,
        call: impl Future<Output = std::result::Result<tonic::Response<T>, tonic::Status>>,
    ) -> Result<T> {
        let started = Instant::now();
        let result = match tokio::time::timeout(timeout, call).await {
            Ok(Ok(response)) => return Ok(response.into_inner()),
            Ok(Err(status)) => {
                error::from_status(&status, operation, table, &self.inner.config.address, started.elapsed())
            }
            Err(_) => StoreError::Timeout {
                table: table.into(),
                operation,
                elapsed: started.elapsed(),
                detail: String::new(),
            },
        };
        Err(self.noted(table, result))
    }

    /// The call `make` makes, retried while it cannot reach the server
    /// (UNAVAILABLE, or an error of the client's own transport: no
    /// connection could be made, or it closed under the call) and
    /// `timeout` leaves room, after a backoff from 10 ms doubling to 1 s.
    /// For idempotent calls only: reads, admin reads, and writes, whose
    /// cells all carry their timestamps (BigtableStore stamps puts on the
    /// client) and so apply alike twice.
    async fn idempotent<T, F, Fut>(
        &self,
        table: &str,
        operation: &'static str,
        timeout: Duration,
        mut make: F,
    ) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = std::result::Result<tonic::Response<T>, tonic::Status>>,
    {
        let started = Instant::now();
        let mut backoff = Duration::from_millis(10);
        loop {
            let left = timeout.saturating_sub(started.elapsed());
            let status = match tokio::time::timeout(left, make()).await {
                Ok(Ok(response)) => return Ok(response.into_inner()),
                Ok(Err(status)) => status,
                Err(_) => {
                    return Err(StoreError::Timeout {
                        table: table.into(),
                        operation,
                        elapsed: started.elapsed(),
                        detail: String::new(),
                    });
                }
            };
            let unreachable = status.code() == tonic::Code::Unavailable || error::from_transport(&status);
            if unreachable && started.elapsed() + backoff < timeout {
                tracing::debug!(table, operation, ?backoff, message = status.message(), "retrying");
                crate::store::metrics::retry("bigtable", "connection");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
                continue;
            }
            let error = error::from_status(&status, operation, table, &self.inner.config.address, started.elapsed());
            return Err(self.noted(table, error));
        }
    }

    /// Forgets the table's schema when `error` says it changed.
    fn noted(&self, table: &str, error: StoreError) -> StoreError {
        match &error {
            StoreError::TableNotFound { .. } | StoreError::NoSuchFamily { .. } => self.inner.schemas.forget(table),
            _ => {}
        }
        error
    }

    /// The table's schema (cached), with what `check` makes of a request
    /// against it.
    async fn checked<T>(
        &self,
        table: &str,
        check: impl Fn(&TableSchema) -> Result<T>,
    ) -> Result<(Arc<TableSchema>, T)> {
        super::check::check_table_name(table, &self.inner.config.table_prefix)?;
        self.inner
            .schemas
            .checked(table, || self.describe_families(table), check)
            .await
    }
}

#[async_trait]
impl Store for BigtableStore {
    async fn create_table(&self, schema: &TableSchema) -> Result<()> {
        self.create_table_impl(schema).await
    }

    async fn delete_table(&self, table: &str) -> Result<()> {
        self.delete_table_impl(table).await
    }

    /// `DropRowRange` with `delete_all_data_from_table`: the table and its
    /// families stay.
    async fn truncate_table(&self, table: &str) -> Result<()> {
        self.truncate_table_impl(table).await
    }

    async fn alter_table(&self, table: &str, change: &FamilyChange) -> Result<()> {
        self.alter_table_impl(table, change).await
    }

    async fn table_exists(&self, table: &str) -> Result<bool> {
        self.table_exists_impl(table).await
    }

    async fn list_tables(&self) -> Result<Vec<String>> {
        self.list_tables_impl().await
    }

    /// The families and their VERSIONS and TTL, and the metadata hmap
    /// recorded in [`METADATA_TABLE`]; no split points (Bigtable splits
    /// and merges tablets by itself: see
    /// [`sample_row_keys`](BigtableStore::sample_row_keys)).
    async fn describe_table(&self, table: &str) -> Result<TableSchema> {
        self.describe_table_impl(table).await
    }

    async fn get(&self, table: &str, get: &Get) -> Result<Option<RowResult>> {
        let mut rows = self.get_many_impl(table, std::slice::from_ref(get)).await?;
        Ok(rows.pop().flatten())
    }

    /// One `ReadRows` over the set of rows per distinct read (columns,
    /// versions, time range): one call when every get reads alike.
    async fn get_many(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<RowResult>>> {
        self.get_many_impl(table, gets).await
    }

    async fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        self.mutate_impl(table, rows).await
    }

    /// The rows checked one by one, the valid ones written as `mutate`
    /// writes them; a request that fails leaves its rows unknown.
    async fn mutate_each(&self, table: &str, rows: &[RowMutation]) -> Result<crate::store::BatchOutcome> {
        self.mutate_each_impl(table, rows).await
    }

    async fn scan<'a>(&'a self, table: &str, scan: &Scan) -> Result<RowStream<'a>> {
        self.scan_impl(table, scan).await
    }

    async fn check_and_mutate(&self, table: &str, op: &CheckAndMutate) -> Result<bool> {
        self.check_and_mutate_impl(table, op).await
    }

    async fn append(&self, table: &str, op: &Append) -> Result<RowResult> {
        self.append_impl(table, op).await
    }

    async fn increment(&self, table: &str, op: &Increment) -> Result<Vec<i64>> {
        self.increment_impl(table, op).await
    }

    fn forget_schema(&self, table: &str) {
        self.inner.schemas.forget(table);
    }

    /// All of them, unless [`BigtableConfig::ignore_storage_options`]
    /// drops the storage options: then `VERSIONS`, `MIN_VERSIONS` and
    /// `TTL` (the GC rules; a `MIN_VERSIONS` other than 0 is refused).
    fn kept_family_options(&self) -> &'static [FamilyOption] {
        if self.inner.config.ignore_storage_options {
            &[FamilyOption::Versions, FamilyOption::MinVersions, FamilyOption::Ttl]
        } else {
            &FamilyOption::ALL
        }
    }
}
