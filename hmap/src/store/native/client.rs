//! [`NativeStore`]: hmap's reads and writes over HBase's own RPC, as async
//! functions on hmap's types (the `Store` trait will be a thin adapter).
//!
//! Each call has one deadline ([`NativeConfig::call_timeout`]) that covers
//! locating the region, dialling, and every retry: a region that moved, a
//! server gone, stopping or starting, a busy server, each handled as the
//! retry policy says ([`RetryPolicy`]: HBase's pauses, capped at a second),
//! always within the deadline.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::batch::{Op, waves};
use super::connection::{CallReply, Connection, ConnectionConfig, Service};
use super::convert;
use super::error::NativeError;
use super::locate::{self, RegionLocation, Target};
use super::proto;
use super::retry::{Attempts, FailedServers, Idempotence, Retry, RetryPolicy, retry_kind};
use super::zookeeper::{self, ZooKeeperRegistry};
use crate::store::{
    Append, BatchOutcome, CheckAndMutate, Get, Increment, RowMutation, RowOutcome, RowResult, Scan, StoreError,
    TraceContext, TraceContextSource, metrics,
};

/// How a [`NativeStore`] reaches HBase.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct NativeConfig {
    /// Masters or region servers that answer `ClientMetaService`, `host:port`;
    /// tried in order. Not used when [`zookeeper`](Self::zookeeper) is set.
    pub bootstrap: Vec<String>,
    /// The ZooKeeper quorum to find the cluster through instead, for HBase
    /// before 2.5 (see [`NativeConfig::zookeeper`]).
    pub zookeeper: Option<ZooKeeperRegistry>,
    /// Each call's deadline, retries included. A call made with
    /// [`CallOptions`](crate::store::CallOptions) has theirs instead.
    pub call_timeout: Duration,
    /// The deadline of each admin call (create, delete, truncate, alter),
    /// which covers the wait for the master's procedure to finish. A call
    /// made with [`CallOptions`](crate::store::CallOptions) has theirs
    /// instead.
    pub admin_timeout: Duration,
    /// The connections' settings.
    pub connection: ConnectionConfig,
    /// Put before every table name on the wire, so that several
    /// applications or test runs share one cluster: with `staging_`, table
    /// `user` is `staging_user` in HBase. A prefix ending in `:` names an
    /// HBase namespace (which must exist). Callers and errors see names
    /// without it; [`Store::list_tables`](crate::store::Store::list_tables)
    /// lists only the tables under it.
    pub table_prefix: String,
    /// The largest cell accepted, as HBase counts it
    /// (`hbase.server.keyvalue.maxsize`, 10 MiB by default).
    pub max_value_size: usize,
    /// How calls pause between tries while the cluster cannot serve them
    /// (see [`RetryPolicy`]); the deadline, not a count, ends the tries.
    pub retry: RetryPolicy,
}

impl NativeConfig {
    /// Bootstraps from these servers, with a 30 s deadline per call.
    pub fn new(bootstrap: impl IntoIterator<Item = impl Into<String>>) -> Self {
        NativeConfig {
            bootstrap: bootstrap.into_iter().map(Into::into).collect(),
            zookeeper: None,
            call_timeout: Duration::from_secs(30),
            admin_timeout: Duration::from_secs(120),
            connection: ConnectionConfig::default(),
            table_prefix: String::new(),
            max_value_size: 10 * 1024 * 1024,
            retry: RetryPolicy::default(),
        }
    }

    /// Bootstraps from a ZooKeeper quorum, `host:port,host:port` (a host
    /// without a port gets 2181), as the Java client's `ZKConnectionRegistry`
    /// does: the cluster id, `hbase:meta`'s server and the active master
    /// are read from HBase's znodes under `/hbase` (see
    /// [`znode_parent`](Self::znode_parent)). For clusters whose masters
    /// do not answer `ClientMetaService` (before HBase 2.5); the reads count
    /// against the deadline of the call that needs them, `connect`'s first.
    pub fn zookeeper(quorum: &str) -> Self {
        NativeConfig {
            zookeeper: Some(ZooKeeperRegistry::new(quorum)),
            ..NativeConfig::new(Vec::<String>::new())
        }
    }

    /// Sets the parent znode of a [`zookeeper`](Self::zookeeper) bootstrap,
    /// HBase's `zookeeper.znode.parent` (`/hbase` by default); no effect on
    /// a bootstrap from `ClientMetaService`.
    pub fn znode_parent(mut self, parent: impl Into<String>) -> Self {
        if let Some(zookeeper) = self.zookeeper.take() {
            self.zookeeper = Some(zookeeper.znode_parent(parent));
        }
        self
    }

    /// Sets each call's deadline.
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Sets how calls pause between tries (see [`RetryPolicy`]).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Sets each admin call's deadline (the master's procedure included).
    pub fn admin_timeout(mut self, timeout: Duration) -> Self {
        self.admin_timeout = timeout;
        self
    }

    /// Sets the prefix of every table name on the wire (see
    /// [`table_prefix`](Self::table_prefix)).
    pub fn table_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.table_prefix = prefix.into();
        self
    }

    /// Speaks TLS on every connection to the masters and region servers
    /// (the bootstrap servers', the active master's, each region server's),
    /// as the Java client does with `hbase.client.netty.tls.enabled`: for a
    /// cluster that sets `hbase.server.netty.tls.enabled` (HBase 2.6 and
    /// later). The handshake is part of each call's deadline. The settings
    /// (the CA, a client certificate for mutual TLS, the name checked) are
    /// [`NativeTls`](super::NativeTls)'s. A ZooKeeper registry's reads stay
    /// plain (ZooKeeper's own TLS is not spoken).
    ///
    /// ```no_run
    /// use hmap::store::native::{NativeConfig, NativeStore, NativeTls};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// // `scripts/hbase/hbase start --tls` prints the CA as HMAP_NATIVE_TLS_CA.
    /// let tls = NativeTls::with_ca_file("target/hbase/tls/ca.pem")?;
    /// let store = NativeStore::connect(NativeConfig::new(["127.0.0.1:16000"]).tls(tls)).await?;
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "tls")]
    pub fn tls(mut self, tls: super::NativeTls) -> Self {
        self.connection.tls = Some(tls);
        self
    }

    /// Gives each request the trace context `source` returns, asked as the
    /// request is made (in the caller's task, inside hmap's `hmap.store`
    /// span), unless the call runs in a [`TraceContext::scope`], whose
    /// context wins. HBase (2.5 and later, with OpenTelemetry tracing on)
    /// records its spans of the call under that context. A source that
    /// reads the current `tracing` span's OpenTelemetry context is in
    /// `docs/observability.md`.
    ///
    /// ```
    /// use hmap::store::TraceContext;
    /// use hmap::store::native::NativeConfig;
    ///
    /// // A fixed context, as a source of one's own might give.
    /// let config = NativeConfig::new(["127.0.0.1:16000"]).trace_context(|| {
    ///     TraceContext::from_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
    /// });
    /// let source = config.connection.trace_context.as_ref().expect("set");
    /// assert_eq!(
    ///     source.get().map(|c| c.traceparent().to_string()).as_deref(),
    ///     Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
    /// );
    /// ```
    pub fn trace_context(mut self, source: impl Fn() -> Option<TraceContext> + Send + Sync + 'static) -> Self {
        self.connection.trace_context = Some(TraceContextSource::new(source));
        self
    }

    /// Plain TCP on every connection (the default): undoes
    /// [`tls`](Self::tls).
    #[cfg(feature = "tls")]
    pub fn without_tls(mut self) -> Self {
        self.connection.tls = None;
        self
    }

    /// Authenticates every connection to the masters and region servers
    /// with Kerberos (feature `kerberos`), as the Java client does on a
    /// cluster with `hbase.security.authentication=kerberos`: HBase's SASL
    /// GSSAPI handshake, then the protection level the server's
    /// `hbase.rpc.protection` and [`NativeKerberos::protection`](super::NativeKerberos::protection)
    /// agree on (integrity and privacy wrap every message). Inside TLS
    /// too, with [`tls`](Self::tls). The handshake is part of each call's
    /// deadline; the calls run as the client's principal.
    ///
    /// ```no_run
    /// use hmap::store::native::{NativeConfig, NativeKerberos, NativeStore};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// // `scripts/hbase/hbase start --kerberos` prints these as HMAP_PRINCIPAL,
    /// // HMAP_KEYTAB and HMAP_SERVER_PRINCIPAL (and HMAP_KRB5_CONFIG, for KRB5_CONFIG).
    /// let kerberos = NativeKerberos::keytab("hmap@HMAP.TEST", "target/hbase/krb/hmap.keytab")
    ///     .server_principal("hbase/localhost@HMAP.TEST");
    /// let store = NativeStore::connect(NativeConfig::new(["127.0.0.1:16000"]).kerberos(kerberos)).await?;
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "kerberos")]
    pub fn kerberos(mut self, kerberos: super::NativeKerberos) -> Self {
        self.connection.kerberos = Some(kerberos);
        self
    }

    /// SIMPLE authentication (the default): undoes [`kerberos`](Self::kerberos).
    #[cfg(feature = "kerberos")]
    pub fn without_kerberos(mut self) -> Self {
        self.connection.kerberos = None;
        self
    }
}

/// A client of HBase's RPC protocol; cheap to clone (clones share the
/// connections and the region cache).
#[derive(Clone, Debug)]
pub struct NativeStore {
    pub(super) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(super) struct Inner {
    pub(super) config: NativeConfig,
    connections: Mutex<HashMap<(String, Service), Connection>>,
    /// Region locations by table (its name on the wire), then by start key.
    regions: Mutex<HashMap<String, BTreeMap<Bytes, RegionLocation>>>,
    meta: Mutex<Option<RegionLocation>>,
    /// The active master, `host:port`, once the registry named it.
    pub(super) master: Mutex<Option<String>>,
    /// The cluster's id, once the registry named it.
    cluster_id: Mutex<Option<String>>,
    /// Table schemas (by the caller's name) that requests are checked against.
    pub(super) schemas: crate::store::check::SchemaCache,
    /// The nonce group of this store's admin calls: with a nonce per call,
    /// the master recognises a call sent again after a broken connection.
    pub(super) nonce_group: u64,
    /// Scanners open on region servers (see [`NativeStore::open_scanners`]).
    open_scanners: Arc<AtomicUsize>,
    /// Servers that refused a connection lately, not dialled for a while.
    failed_servers: FailedServers,
}

/// One scanner open on a region server, counted while it lives.
#[derive(Debug)]
struct Lease(Arc<AtomicUsize>);

impl Lease {
    fn new(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Lease(count.clone())
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The error of a registry with no server to ask.
pub(super) fn no_bootstrap() -> NativeError {
    NativeError::InvalidReply {
        reason: "no bootstrap server configured".to_string(),
    }
}

/// `hbase:meta`'s location on `server`, as a ZooKeeper registry names it:
/// its one region, `hbase:meta,,1` (`RegionInfoBuilder.FIRST_META_REGIONINFO`,
/// region id 1, in the old name format without an encoded suffix).
fn meta_at(server: String) -> RegionLocation {
    RegionLocation {
        table: locate::META_TABLE.to_string(),
        name: Bytes::from(format!("{},,1", locate::META_TABLE)),
        start: Bytes::new(),
        end: Bytes::new(),
        server,
    }
}

impl NativeStore {
    /// Connects: asks the bootstrap servers where `hbase:meta` is; with a
    /// [ZooKeeper registry](NativeConfig::zookeeper), reads the cluster id,
    /// `hbase:meta`'s server and the active master from ZooKeeper instead.
    /// One deadline, [`NativeConfig::call_timeout`], covers the whole
    /// connect: the servers (or quorum members) are tried in order, each
    /// given an equal share of the time left. When none answers, the error
    /// is a [`StoreError::Connection`] that says how long the connect took
    /// (`connect timed out after ...` once the deadline passed) and what
    /// each server did.
    pub async fn connect(config: NativeConfig) -> Result<Self, StoreError> {
        #[cfg(feature = "kerberos")]
        let config = {
            let mut config = config;
            if let Some(registry) = config.zookeeper.as_mut() {
                registry.sasl = config.connection.kerberos.as_ref().and_then(|k| k.for_zookeeper());
            }
            config
        };
        let store = NativeStore {
            inner: Arc::new(Inner {
                config,
                connections: Mutex::default(),
                regions: Mutex::default(),
                meta: Mutex::default(),
                master: Mutex::default(),
                cluster_id: Mutex::default(),
                schemas: Default::default(),
                nonce_group: super::random::random_u64(),
                open_scanners: Arc::default(),
                failed_servers: FailedServers::default(),
            }),
        };
        if let Some(registry) = &store.inner.config.zookeeper {
            let deadline = Instant::now() + crate::store::call_timeout(store.inner.config.call_timeout);
            let registered = zookeeper::bootstrap(registry, deadline).await.map_err(|e| {
                let endpoint = e.server().to_string();
                NativeError::from(e).into_store("", None, "connect", &endpoint)
            })?;
            *store.inner.meta.lock().unwrap_or_else(|e| e.into_inner()) = Some(meta_at(registered.meta_server));
            *store.inner.master.lock().unwrap_or_else(|e| e.into_inner()) = registered.master;
            *store.inner.cluster_id.lock().unwrap_or_else(|e| e.into_inner()) = Some(registered.cluster_id);
            return Ok(store);
        }
        store
            .meta_region(crate::store::call_timeout(store.inner.config.call_timeout))
            .await
            .map_err(|(e, endpoint)| e.into_store(locate::META_TABLE, None, "connect", &endpoint))?;
        Ok(store)
    }

    /// The cluster's id (a UUID), from the cache or the registry:
    /// `ClientMetaService.GetClusterId`, or the `hbaseid` znode.
    pub async fn cluster_id(&self) -> Result<String, StoreError> {
        if let Some(id) = self.inner.cluster_id.lock().unwrap_or_else(|e| e.into_inner()).clone() {
            return Ok(id);
        }
        let timeout = crate::store::call_timeout(self.inner.config.call_timeout);
        let id = match &self.inner.config.zookeeper {
            Some(registry) => zookeeper::cluster_id(registry, Instant::now() + timeout)
                .await
                .map_err(|e| (NativeError::from(e), String::new())),
            None => self
                .ask_bootstrap("GetClusterId", timeout, |connection, left| async move {
                    connection
                        .call::<proto::GetClusterIdResponse>("GetClusterId", &proto::GetClusterIdRequest {}, left)
                        .await
                        .and_then(|r| {
                            r.message.cluster_id.ok_or(NativeError::MissingField {
                                message: "GetClusterIdResponse",
                                field: "cluster_id",
                            })
                        })
                })
                .await
                .map_err(|e| (e, String::new())),
        };
        let id = id.map_err(|(e, endpoint)| {
            let endpoint = match &e {
                NativeError::ZooKeeper(z) => z.server().to_string(),
                _ => endpoint,
            };
            e.into_store("", None, "cluster_id", &endpoint)
        })?;
        *self.inner.cluster_id.lock().unwrap_or_else(|e| e.into_inner()) = Some(id.clone());
        Ok(id)
    }

    pub(super) fn connection(&self, endpoint: &str, service: Service) -> Connection {
        let mut connections = self
            .inner
            .connections
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        connections
            .entry((endpoint.to_string(), service))
            .or_insert_with(|| Connection::new(endpoint, service, self.inner.config.connection.clone()))
            .clone()
    }

    /// Asks the bootstrap servers in turn until one answers, all within
    /// `timeout`: each server is given an equal share of the time left to
    /// the servers still to try (as the ZooKeeper quorum's are), so that a
    /// silent first server leaves time for the others. When none answers,
    /// [`NativeError::Bootstrap`] says what each one did.
    pub(super) async fn ask_bootstrap<T, F>(
        &self,
        method: &'static str,
        timeout: Duration,
        ask: impl Fn(Connection, Duration) -> F,
    ) -> Result<T, NativeError>
    where
        F: std::future::Future<Output = Result<T, NativeError>>,
    {
        let servers = &self.inner.config.bootstrap;
        if servers.is_empty() {
            return Err(no_bootstrap());
        }
        let started = Instant::now();
        let deadline = started + timeout;
        let mut tried = Vec::with_capacity(servers.len());
        for (i, server) in servers.iter().enumerate() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                tried.push((server.clone(), "not tried: no time left".to_string()));
                continue;
            }
            let share = left / u32::try_from(servers.len() - i).unwrap_or(u32::MAX);
            match ask(self.connection(server, Service::ClientMeta), share).await {
                Ok(found) => return Ok(found),
                Err(NativeError::Timeout { elapsed, .. }) => tried.push((
                    server.clone(),
                    format!(
                        "no answer within {:?} (its share of the deadline)",
                        super::error::whole_ms(elapsed)
                    ),
                )),
                Err(NativeError::Connect { cause: source, .. }) => {
                    tried.push((server.clone(), format!("cannot connect: {source}")))
                }
                // Settings that every server refuses alike: said at once, typed.
                Err(e @ (NativeError::Kerberos { .. } | NativeError::Tls { .. })) => return Err(e),
                Err(e) => tried.push((server.clone(), e.to_string())),
            }
        }
        Err(NativeError::Bootstrap {
            method,
            elapsed: started.elapsed(),
            timed_out: Instant::now() >= deadline,
            tried,
        })
    }

    /// Where `hbase:meta` is, from the cache or the registry (within one
    /// `timeout` for every bootstrap server).
    pub(super) async fn meta_region(&self, timeout: Duration) -> Result<RegionLocation, (NativeError, String)> {
        if let Some(meta) = self.inner.meta.lock().unwrap_or_else(|e| e.into_inner()).clone() {
            return Ok(meta);
        }
        if let Some(registry) = &self.inner.config.zookeeper {
            let server = zookeeper::meta_location(registry, Instant::now() + timeout)
                .await
                .map_err(|e| {
                    let endpoint = e.server().to_string();
                    (NativeError::from(e), endpoint)
                })?;
            let meta = meta_at(server);
            *self.inner.meta.lock().unwrap_or_else(|e| e.into_inner()) = Some(meta.clone());
            return Ok(meta);
        }
        let meta = self
            .ask_bootstrap("GetMetaRegionLocations", timeout, |connection, left| async move {
                connection
                    .call::<proto::GetMetaRegionLocationsResponse>(
                        "GetMetaRegionLocations",
                        &proto::GetMetaRegionLocationsRequest {},
                        left,
                    )
                    .await
                    .and_then(|r| locate::meta_location(&r.message))
            })
            .await
            .map_err(|e| (e, String::new()))?;
        *self.inner.meta.lock().unwrap_or_else(|e| e.into_inner()) = Some(meta.clone());
        Ok(meta)
    }

    /// How many scanners this store holds open on region servers: opened
    /// by a scan and not yet closed (by the server at a region's end, or by
    /// the scanner when it stops early or is dropped).
    pub fn open_scanners(&self) -> usize {
        self.inner.open_scanners.load(Ordering::SeqCst)
    }

    pub(super) fn config(&self) -> &NativeConfig {
        &self.inner.config
    }

    /// A table's name in HBase: the configured prefix, then `table`.
    pub(super) fn wire<'a>(&self, table: &'a str) -> std::borrow::Cow<'a, str> {
        match self.inner.config.table_prefix.as_str() {
            "" => std::borrow::Cow::Borrowed(table),
            prefix => std::borrow::Cow::Owned(format!("{prefix}{table}")),
        }
    }

    /// Forgets every cached region of a table (by its name on the wire):
    /// after it is deleted, created or truncated, its regions are new.
    pub(super) fn forget_table(&self, wire: &str) {
        self.inner
            .regions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(wire);
    }

    fn cached(&self, table: &str, target: Target<'_>) -> Option<RegionLocation> {
        let regions = self.inner.regions.lock().unwrap_or_else(|e| e.into_inner());
        let regions = regions.get(table)?;
        let (_, region) = match target {
            Target::Row(row) => regions.range(..=Bytes::copy_from_slice(row)).next_back()?,
            Target::Last => regions.iter().next_back()?,
        };
        target.is_in(region).then(|| region.clone())
    }

    /// Forgets every cached region of `server` (and `hbase:meta`'s
    /// location, if it was there): the server is gone, stopping or starting.
    pub(super) fn forget_server(&self, server: &str) {
        let mut regions = self.inner.regions.lock().unwrap_or_else(|e| e.into_inner());
        for table in regions.values_mut() {
            let before = table.len();
            table.retain(|_, region| region.server != server);
            for _ in table.len()..before {
                metrics::region_relocation();
            }
        }
        drop(regions);
        let mut meta = self.inner.meta.lock().unwrap_or_else(|e| e.into_inner());
        if meta.as_ref().is_some_and(|m| m.server == server) {
            *meta = None;
        }
    }

    /// Caches `region` on `server`, where a `RegionMovedException` said it is now.
    fn moved(&self, region: &RegionLocation, server: &str) {
        let moved = RegionLocation {
            server: server.to_string(),
            ..region.clone()
        };
        if region.table == locate::META_TABLE {
            *self.inner.meta.lock().unwrap_or_else(|e| e.into_inner()) = Some(moved);
            return;
        }
        let mut regions = self.inner.regions.lock().unwrap_or_else(|e| e.into_inner());
        cache_region(regions.entry(region.table.clone()).or_default(), moved);
        metrics::region_relocation();
    }

    /// Acts on what a failed try on `region` meant for the cache.
    pub(super) fn note_failure(&self, retry: &Retry, region: &RegionLocation) {
        match retry {
            Retry::Relocate => self.forget(region),
            Retry::ServerGone => self.forget_server(&region.server),
            Retry::MovedTo(server) => self.moved(region, server),
            Retry::Wait { .. } | Retry::Now | Retry::No => {}
        }
    }

    /// Calls `method` on `server` within `left`, unless the server refused
    /// a connection lately (HBase's failed servers): then it fails at once,
    /// as a refused connection does, and is not dialled.
    pub(super) async fn call_server<Resp: super::bound::Reply>(
        &self,
        server: &str,
        method: &'static str,
        request: &impl prost::Message,
        left: Duration,
    ) -> Result<CallReply<Resp>, NativeError> {
        let expiry = self.inner.config.retry.failed_server_expiry;
        self.inner.failed_servers.check(server, expiry)?;
        let reply = self
            .connection(server, Service::Client)
            .call::<Resp>(method, request, left)
            .await;
        if let Err(e) = &reply
            && super::retry::dial_failed(e)
        {
            self.inner.failed_servers.note(server);
        }
        reply
    }

    /// A new call's tries, within `timeout`.
    pub(super) fn attempts(&self, timeout: Duration) -> Attempts {
        Attempts::new(timeout, self.inner.config.retry)
    }

    /// After a failed try on `region`, what `retry` says: give up with
    /// the error, or note what the failure means for the cache, log
    /// `event`, and pause within `attempts` (whose deadline's error ends
    /// the call once it has passed). `waiting_for` says what the call
    /// waits for, for that error.
    pub(super) async fn retry_on(
        &self,
        error: NativeError,
        retry: Retry,
        region: &RegionLocation,
        (method, event): (&'static str, &'static str),
        attempts: &mut Attempts,
        waiting_for: impl FnOnce() -> String,
    ) -> Result<(), (NativeError, String)> {
        if let Retry::No = retry {
            return Err((error, region.server.clone()));
        }
        tracing::debug!(table = %region.table, method, server = %region.server, error = %error, "hmap native: {event}");
        attempts.waiting_for(waiting_for);
        self.note_failure(&retry, region);
        attempts
            .back_off(error, &retry, &region.server, method)
            .await
            .map_err(|e| (e, region.server.clone()))
    }

    /// Where `hbase:meta` is ([`meta_region`](Self::meta_region)), asking
    /// the registry again after a pause while no registry server answers
    /// (a master failing over, or restarting), within `attempts`.
    pub(super) async fn meta_region_within(
        &self,
        attempts: &mut Attempts,
    ) -> Result<RegionLocation, (NativeError, String)> {
        loop {
            let left = attempts
                .remaining("the registry", "GetMetaRegionLocations")
                .map_err(|e| (e, String::new()))?;
            match self.meta_region(left).await {
                Err((e @ (NativeError::Bootstrap { .. } | NativeError::ZooKeeper(_)), endpoint)) => {
                    attempts.waiting_for(|| "a registry server to say where hbase:meta is".to_string());
                    attempts
                        .back_off(e, &Retry::ServerGone, &endpoint, "GetMetaRegionLocations")
                        .await
                        .map_err(|e| (e, endpoint))?;
                }
                found => return found,
            }
        }
    }

    pub(super) fn forget(&self, region: &RegionLocation) {
        let mut regions = self.inner.regions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(table) = regions.get_mut(&region.table)
            && table.remove(&region.start).is_some()
        {
            metrics::region_relocation();
        }
        if region.table == locate::META_TABLE {
            *self.inner.meta.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }

    /// The region that holds `row` in `table` (cached, or looked up in `hbase:meta`).
    pub async fn locate(&self, table: &str, row: &[u8]) -> Result<RegionLocation, StoreError> {
        let mut attempts = self.attempts(crate::store::call_timeout(self.inner.config.call_timeout));
        self.locate_within(table, Target::Row(row), &mut attempts)
            .await
            .map_err(|(e, endpoint)| e.into_store(table, Some(row), "locate", &endpoint))
    }

    pub(super) async fn locate_within(
        &self,
        table: &str,
        target: Target<'_>,
        attempts: &mut Attempts,
    ) -> Result<RegionLocation, (NativeError, String)> {
        let wire = self.wire(table);
        let table = wire.as_ref();
        if let Some(region) = self.cached(table, target) {
            return Ok(region);
        }
        metrics::region_cache_miss();
        let region = self
            .meta_lookup(table, target, attempts, |cells| {
                locate::region_from_meta(table, target, cells)
            })
            .await?;
        let mut regions = self.inner.regions.lock().unwrap_or_else(|e| e.into_inner());
        cache_region(regions.entry(table.to_string()).or_default(), region.clone());
        Ok(region)
    }

    /// Reads the `hbase:meta` row of `target`'s region in `table` (its
    /// name on the wire), bypassing the cache, and gives its cells to
    /// `read`; a lookup that fails because `hbase:meta` moved, or because
    /// the row names no region yet (a split under way), is tried again
    /// within `attempts`' deadline.
    pub(super) async fn meta_lookup<T>(
        &self,
        table: &str,
        target: Target<'_>,
        attempts: &mut Attempts,
        read: impl Fn(&[super::codec::WireCell]) -> Result<T, NativeError>,
    ) -> Result<T, (NativeError, String)> {
        loop {
            let meta = self.meta_region_within(attempts).await?;
            let request = proto::ScanRequest {
                region: Some(meta.specifier()),
                scan: Some(proto::Scan {
                    column: vec![proto::Column {
                        family: Bytes::from_static(locate::META_FAMILY),
                        qualifier: Vec::new(),
                    }],
                    start_row: Some(target.meta_key(table).into()),
                    stop_row: Some(locate::meta_stop_key(table).into()),
                    include_stop_row: Some(true),
                    reversed: Some(true),
                    caching: Some(1),
                    ..Default::default()
                }),
                number_of_rows: Some(1),
                close_scanner: Some(true),
                ..Default::default()
            };
            let result = async {
                let left = attempts.remaining(&meta.server, "Scan")?;
                let reply = self
                    .call_server::<proto::ScanResponse>(&meta.server, "Scan", &request, left)
                    .await?;
                let rows = scan_rows(&reply)?;
                let cells: Vec<_> = rows.into_iter().next().unwrap_or_default();
                read(&cells)
            }
            .await;
            let e = match result {
                Ok(found) => return Ok(found),
                Err(e) => e,
            };
            let event = ("Scan", "meta lookup retried");
            if let NativeError::NoRegion { .. } = e {
                // A row that names no region yet is a split under way, or
                // a region being assigned: hbase:meta is where it was.
                let retry = Retry::Wait { overloaded: false };
                let waiting_for = || format!("{} of table `{table}` to be assigned", target.show());
                self.retry_on(e, retry, &meta, event, attempts, waiting_for).await?;
            } else {
                let retry = retry_kind(&e, Idempotence::Safe);
                let waiting_for = || format!("hbase:meta (last on {}) to be served", meta.server);
                self.retry_on(e, retry, &meta, event, attempts, waiting_for).await?;
            }
        }
    }

    /// Calls `method` on the region of `target`, relocating and backing
    /// off as the retry policy says ([`super::retry`]), within one deadline.
    async fn region_call<Req: prost::Message, Resp: super::bound::Reply + RegionReply>(
        &self,
        table: &str,
        target: Target<'_>,
        method: &'static str,
        idempotence: Idempotence,
        request: impl Fn(&RegionLocation) -> Req,
    ) -> Result<(RegionLocation, CallReply<Resp>), (NativeError, String)> {
        let mut attempts = self.attempts(crate::store::call_timeout(self.inner.config.call_timeout));
        loop {
            let region = self.locate_within(table, target, &mut attempts).await?;
            let left = attempts
                .remaining(&region.server, method)
                .map_err(|e| (e, region.server.clone()))?;
            let e = match self
                .call_server::<Resp>(&region.server, method, &request(&region), left)
                .await
            {
                Ok(reply) => match reply.message.exception() {
                    None => return Ok((region, reply)),
                    Some(e) => e,
                },
                Err(e) => e,
            };
            let retry = retry_kind(&e, idempotence);
            let waiting_for = || {
                format!(
                    "the region of {} in table `{table}` to be served (last on {})",
                    target.show(),
                    region.server
                )
            };
            let event = (method, "region call retried");
            self.retry_on(e, retry, &region, event, &mut attempts, waiting_for)
                .await?;
        }
    }

    /// Reads one row; `None` if it has no cell the get selects.
    pub(super) async fn get_unchecked(
        &self,
        table: &str,
        get: &crate::store::Get,
    ) -> Result<Option<RowResult>, StoreError> {
        let request = |region: &RegionLocation| proto::GetRequest {
            region: region.specifier(),
            get: convert::get(get),
        };
        let (_, reply) = self
            .region_call::<_, proto::GetResponse>(table, Target::Row(&get.row), "Get", Idempotence::Safe, request)
            .await
            .map_err(|(e, endpoint)| e.into_store(table, Some(&get.row), "get", &endpoint))?;
        let result = reply.message.result.unwrap_or_default();
        let read = convert::associated_cells(&result)
            .and_then(|n| convert::row_result(&result, n, &mut reply.cells.into_iter()));
        read.map_err(|e| e.into_store(table, Some(&get.row), "get", ""))
    }

    /// Reads many rows in one `Multi` call per region server; results in
    /// the order of `gets`.
    pub(super) async fn get_many_unchecked(
        &self,
        table: &str,
        gets: &[Get],
    ) -> Result<Vec<Option<RowResult>>, StoreError> {
        let ops: Vec<_> = gets.iter().map(|g| (g.row.clone(), Op::Get(convert::get(g)))).collect();
        self.multi(table, &ops, "get_many").await
    }

    /// Reads many rows as [`get_many_unchecked`](Self::get_many_unchecked)
    /// does, each on its own: its row or its error, in the order of `gets`.
    pub(super) async fn get_each_unchecked(
        &self,
        table: &str,
        gets: &[Get],
    ) -> Result<Vec<Result<Option<RowResult>, StoreError>>, StoreError> {
        let ops: Vec<_> = gets.iter().map(|g| (g.row.clone(), Op::Get(convert::get(g)))).collect();
        Ok(self
            .multi_each(table, &ops, "get_many")
            .await?
            .into_iter()
            .map(|r| r.map_err(|failure| failure.error))
            .collect())
    }

    /// Applies each row's changes (atomically per row, rows independently,
    /// a row named several times in the order given).
    pub(super) async fn mutate_unchecked(&self, table: &str, rows: &[RowMutation]) -> Result<(), StoreError> {
        if rows.len() > 1 {
            // One Multi per region server; each row atomic on its own. A
            // row named again waits for the wave before: HBase applies a
            // region's actions of one `Multi` with no order between two of
            // one row (the atomic ones after the others, and a delete of the
            // latest version resolved before the batch's puts).
            let mut ops = Vec::with_capacity(rows.len());
            for row in rows {
                let mutations =
                    convert::mutations(row).map_err(|e| e.into_store(table, Some(&row.row), "mutate", ""))?;
                if !mutations.is_empty() {
                    ops.push((
                        row.row.clone(),
                        Op::Mutate(mutations, super::retry::row_idempotence(row)),
                    ));
                }
            }
            for wave in waves(ops) {
                self.multi(table, &wave, "mutate").await?;
            }
            return Ok(());
        }
        for row in rows {
            let mutations = convert::mutations(row).map_err(|e| e.into_store(table, Some(&row.row), "mutate", ""))?;
            match &mutations[..] {
                [] => {}
                [one] => {
                    let request = |region: &RegionLocation| proto::MutateRequest {
                        region: region.specifier(),
                        mutation: one.clone(),
                        condition: None,
                        nonce_group: None,
                    };
                    self.region_call::<_, proto::MutateResponse>(
                        table,
                        Target::Row(&row.row),
                        "Mutate",
                        super::retry::row_idempotence(row),
                        request,
                    )
                    .await
                    .map_err(|(e, endpoint)| e.into_store(table, Some(&row.row), "mutate", &endpoint))?;
                }
                several => {
                    // Kinds mixed in one row: one atomic region action.
                    let request = |region: &RegionLocation| proto::MultiRequest {
                        region_action: vec![proto::RegionAction {
                            region: region.specifier(),
                            atomic: Some(true),
                            action: several
                                .iter()
                                .enumerate()
                                .map(|(i, m)| proto::Action {
                                    index: Some(i as u32),
                                    mutation: Some(m.clone()),
                                    get: None,
                                })
                                .collect(),
                            condition: None,
                        }],
                        nonce_group: None,
                    };
                    self.region_call::<_, proto::MultiResponse>(
                        table,
                        Target::Row(&row.row),
                        "Multi",
                        super::retry::row_idempotence(row),
                        request,
                    )
                    .await
                    .map_err(|(e, endpoint)| e.into_store(table, Some(&row.row), "mutate", &endpoint))?;
                }
            }
        }
        Ok(())
    }

    /// Applies each row's changes as [`mutate_unchecked`](Self::mutate_unchecked)
    /// does, a row's failure not stopping the others: what became of each
    /// row, in order. `checked` holds each row's verdict of the checks
    /// before sending: a row that failed them is refused and not sent.
    pub(super) async fn mutate_each_unchecked(
        &self,
        table: &str,
        rows: &[RowMutation],
        checked: Vec<Result<(), StoreError>>,
    ) -> Result<BatchOutcome, StoreError> {
        let mut outcome: Vec<Option<RowOutcome>> = (0..rows.len()).map(|_| None).collect();
        let mut ops = Vec::with_capacity(rows.len());
        for (i, (row, checked)) in rows.iter().zip(checked).enumerate() {
            let mutations = checked
                .and_then(|()| convert::mutations(row).map_err(|e| e.into_store(table, Some(&row.row), "mutate", "")));
            match mutations {
                Err(e) => outcome[i] = Some(RowOutcome::Refused(e)),
                Ok(mutations) if mutations.is_empty() => outcome[i] = Some(RowOutcome::Applied),
                Ok(mutations) => ops.push((
                    row.row.clone(),
                    (i, Op::Mutate(mutations, super::retry::row_idempotence(row))),
                )),
            }
        }
        // A row named again waits for the wave before, as in `mutate`.
        for wave in waves(ops) {
            let (at, wave): (Vec<usize>, Vec<(Bytes, Op)>) =
                wave.into_iter().map(|(row, (i, op))| (i, (row, op))).unzip();
            let results = self.multi_each(table, &wave, "mutate").await?;
            for (i, result) in at.into_iter().zip(results) {
                outcome[i] = Some(match result {
                    Ok(_) => RowOutcome::Applied,
                    Err(failure) => failure.into_outcome(),
                });
            }
        }
        Ok(outcome
            .into_iter()
            .map(|o| {
                o.unwrap_or_else(|| {
                    RowOutcome::Unknown(StoreError::Protocol {
                        endpoint: String::new(),
                        table: table.to_string(),
                        operation: "mutate",
                        message: "a row of the batch got no answer".into(),
                    })
                })
            })
            .collect())
    }

    /// Applies the changes if the column's newest value is `op.expected`
    /// (absent or empty for `None`); returns whether it did.
    pub(super) async fn check_and_mutate_unchecked(
        &self,
        table: &str,
        op: &CheckAndMutate,
    ) -> Result<bool, StoreError> {
        let row = RowMutation::with(op.row.clone(), op.mutations.clone());
        let store_error =
            |(e, endpoint): (NativeError, String)| e.into_store(table, Some(&op.row), "check_and_mutate", &endpoint);
        let mutations = convert::mutations(&row).map_err(|e| store_error((e, String::new())))?;
        let condition = convert::condition(op);
        match &mutations[..] {
            [one] => {
                let request = |region: &RegionLocation| proto::MutateRequest {
                    region: region.specifier(),
                    mutation: one.clone(),
                    condition: Some(condition.clone()),
                    nonce_group: None,
                };
                let (_, reply) = self
                    .region_call::<_, proto::MutateResponse>(
                        table,
                        Target::Row(&op.row),
                        "Mutate",
                        Idempotence::Unsafe,
                        request,
                    )
                    .await
                    .map_err(store_error)?;
                Ok(reply.message.processed.unwrap_or(false))
            }
            several => {
                // Several kinds: one atomic region action under the condition.
                let request = |region: &RegionLocation| proto::MultiRequest {
                    region_action: vec![proto::RegionAction {
                        region: region.specifier(),
                        atomic: Some(true),
                        action: several
                            .iter()
                            .enumerate()
                            .map(|(i, m)| proto::Action {
                                index: Some(i as u32),
                                mutation: Some(m.clone()),
                                get: None,
                            })
                            .collect(),
                        condition: Some(condition.clone()),
                    }],
                    nonce_group: None,
                };
                let (_, reply) = self
                    .region_call::<_, proto::MultiResponse>(
                        table,
                        Target::Row(&op.row),
                        "Multi",
                        Idempotence::Unsafe,
                        request,
                    )
                    .await
                    .map_err(store_error)?;
                Ok(reply
                    .message
                    .region_action_result
                    .first()
                    .and_then(|r| r.processed)
                    .unwrap_or(false))
            }
        }
    }

    /// Adds to counters; returns their new values, in the order of `op`.
    pub(super) async fn increment_unchecked(&self, table: &str, op: &Increment) -> Result<Vec<i64>, StoreError> {
        let store_error = |(e, endpoint): (NativeError, String)| {
            // `DoNotRetryIOException: Field is not a long, it's N bytes wide`
            // (`HRegion.MutationBatchOperation.getLongValue`).
            let not_a_counter = e.remote().and_then(|r| {
                r.message
                    .strip_prefix("Field is not a long, it's ")?
                    .strip_suffix(" bytes wide")?
                    .parse::<usize>()
                    .ok()
            });
            match (not_a_counter, op.columns.first()) {
                (Some(len), Some((family, qualifier, _))) => StoreError::NotACounter {
                    table: table.to_string(),
                    row: crate::store::show_row(&op.row),
                    column: crate::store::error::show_column(family, qualifier),
                    len,
                },
                _ => e.into_store(table, Some(&op.row), "increment", &endpoint),
            }
        };
        let row = self
            .nonced_mutate(table, &op.row, convert::increment(op), &store_error)
            .await?;
        if !op.answered_by(row.as_ref()) {
            // Applied, without the values (see `Increment::read_back`):
            // read them, other increments since included.
            let read = self.get_unchecked(table, &op.read_back()).await?;
            return convert::counters(op, read.as_ref()).map_err(|e| store_error((e, String::new())));
        }
        convert::counters(op, row.as_ref()).map_err(|e| store_error((e, String::new())))
    }

    /// Sends an increment or an append of `row` with a nonce, the same on
    /// every try: a try whose reply was lost and that is sent again is
    /// recognised by the region server (even after the region moved: nonces
    /// are in its write-ahead log), which answers it with the values
    /// instead of applying it again, as for HBase's Java client. Returns the
    /// row the server answered with (`None`, or without some columns, when
    /// it answered without them).
    async fn nonced_mutate(
        &self,
        table: &str,
        row: &Bytes,
        mutation: proto::MutationProto,
        store_error: &impl Fn((NativeError, String)) -> StoreError,
    ) -> Result<Option<RowResult>, StoreError> {
        let mutation = proto::MutationProto {
            nonce: Some(super::random::random_u64()),
            ..mutation
        };
        let request = |region: &RegionLocation| proto::MutateRequest {
            region: region.specifier(),
            mutation: mutation.clone(),
            condition: None,
            nonce_group: Some(self.inner.nonce_group),
        };
        let (_, reply) = self
            .region_call::<_, proto::MutateResponse>(table, Target::Row(row), "Mutate", Idempotence::Safe, request)
            .await
            .map_err(store_error)?;
        let result = reply.message.result.unwrap_or_default();
        convert::associated_cells(&result)
            .and_then(|n| convert::row_result(&result, n, &mut reply.cells.into_iter()))
            .map_err(|e| store_error((e, String::new())))
    }

    /// Appends to columns; returns the row's new values of those columns.
    pub(super) async fn append_unchecked(&self, table: &str, op: &Append) -> Result<RowResult, StoreError> {
        let store_error =
            |(e, endpoint): (NativeError, String)| e.into_store(table, Some(&op.row), "append", &endpoint);
        let row = self
            .nonced_mutate(table, &op.row, convert::append(op), &store_error)
            .await?;
        if !op.answered_by(row.as_ref()) {
            // Applied, without the values (a retry recognised by its nonce):
            // read them, other appends since included.
            let read = self.get_unchecked(table, &op.read_back()).await?;
            return Ok(op.answer(read));
        }
        Ok(op.answer(row))
    }

    /// Reads the rows of a scan, region by region, all of them (up to the
    /// scan's limit).
    #[cfg(test)]
    pub(super) async fn scan_unchecked(&self, table: &str, scan: &Scan) -> Result<Vec<RowResult>, StoreError> {
        let mut scanner = self.scanner(table, scan);
        let mut rows = Vec::new();
        while let Some(batch) = scanner.next_batch().await? {
            rows.extend(batch);
        }
        Ok(rows)
    }

    /// A scanner over the rows of a scan: it fetches `batch_size` rows per
    /// round trip, region by region, and closes its server-side scanner when
    /// it stops early or is dropped.
    ///
    /// It keeps the call timeout of the scope it is made in
    /// ([`CallOptions`](crate::store::CallOptions)) for every later call.
    pub(super) fn scanner(&self, table: &str, scan: &Scan) -> NativeScanner {
        let timeout = crate::store::call_timeout(self.inner.config.call_timeout);
        NativeScanner {
            store: self.clone(),
            options: crate::store::CallOptions::current()
                .unwrap_or_default()
                .timeout(timeout),
            timeout,
            table: table.to_string(),
            finished: scan.is_empty_range() || scan.limit == Some(0),
            scan: scan.clone(),
            open: None,
            buffer: std::collections::VecDeque::new(),
            returned: 0,
            last_row: None,
            retry: None,
        }
    }
}

/// The rows of a scan, fetched a batch at a time (see
/// `NativeStore::scanner`); [`Store::scan`](crate::store::Store::scan)
/// hands them out as a stream.
#[derive(Debug)]
pub(super) struct NativeScanner {
    store: NativeStore,
    /// The call options of the scope the scanner was made in, its timeout
    /// resolved: each call of the scanner runs with them, wherever it is
    /// polled (outside that scope, in a prefetch task, dropped).
    options: crate::store::CallOptions,
    /// `options`' timeout.
    timeout: Duration,
    table: String,
    /// The part of the range not read yet (its bounds move region by region).
    scan: Scan,
    open: Option<OpenScanner>,
    buffer: std::collections::VecDeque<RowResult>,
    returned: usize,
    /// The last row returned, where a scanner reopened resumes.
    last_row: Option<Bytes>,
    /// The deadline of consecutive failed scanner calls.
    retry: Option<Attempts>,
    finished: bool,
}

/// A scanner open on a region server.
#[derive(Debug)]
struct OpenScanner {
    region: RegionLocation,
    id: Option<u64>,
    /// `next_call_seq` of the next call.
    seq: u64,
    /// The server keeps the scanner open: the region has more rows.
    more: bool,
    /// Counts the scanner while the server keeps it open.
    lease: Option<Lease>,
}

impl NativeScanner {
    /// The rows fetched and not yet returned, fetching more when there are
    /// none; `None` at the end. Never an empty batch.
    pub async fn next_batch(&mut self) -> Result<Option<Vec<RowResult>>, StoreError> {
        // In the options the scanner was made with: the region lookups of
        // `open_region` read their timeout from the scope.
        self.options.clone().scope(self.next_batch_here()).await
    }

    async fn next_batch_here(&mut self) -> Result<Option<Vec<RowResult>>, StoreError> {
        loop {
            let allowed = self.scan.limit.map_or(usize::MAX, |l| l.saturating_sub(self.returned));
            if allowed > 0 && !self.buffer.is_empty() {
                let n = self.buffer.len().min(allowed);
                let batch: Vec<RowResult> = self.buffer.drain(..n).collect();
                self.returned += batch.len();
                self.last_row = batch.last().map(|row| row.row.clone());
                return Ok(Some(batch));
            }
            if self.finished || allowed == 0 {
                self.finished = true;
                self.buffer.clear();
                self.close().await;
                return Ok(None);
            }
            match self.open.take() {
                Some(open) if open.more => self.fetch(open).await?,
                Some(open) => self.advance(&open.region),
                None => self.open_region().await?,
            }
        }
    }

    /// Opens the scanner on its first region now, so that it reads the
    /// region as it is at this moment (and a refused scan fails here).
    pub(super) async fn open(&mut self) -> Result<(), StoreError> {
        if self.finished || self.open.is_some() || !self.buffer.is_empty() {
            return Ok(());
        }
        self.options.clone().scope(self.open_region()).await
    }

    fn remaining(&self) -> Option<usize> {
        self.scan
            .limit
            .map(|l| l.saturating_sub(self.returned + self.buffer.len()))
    }

    fn batch(&self) -> u32 {
        // Sized by bytes: the region server stops at the scan's
        // max_result_size; the rows only bound it.
        let batch = self
            .scan
            .batch_size
            .unwrap_or(crate::store::MAX_SIZED_BATCH_ROWS)
            .clamp(1, u32::MAX as usize);
        self.remaining().map_or(batch, |r| batch.min(r.max(1))) as u32
    }

    fn error(&self, e: NativeError, endpoint: &str) -> StoreError {
        e.into_store(&self.table, None, "scan", endpoint)
    }

    /// Opens a scanner on the region where the unread range begins (ends,
    /// when reversed).
    async fn open_region(&mut self) -> Result<(), StoreError> {
        // A reversed scan starts in the region of the row just below its
        // stop, or in the last region when it has none.
        let below = (self.scan.reversed && !self.scan.stop.is_empty()).then(|| reversed_locate_row(&self.scan.stop));
        let target = match (&below, self.scan.reversed) {
            (Some(row), _) => Target::Row(row),
            (None, true) => Target::Last,
            (None, false) => Target::Row(&self.scan.start),
        };
        let (scan, batch) = (convert::scan(&self.scan), self.batch());
        let limit = self.remaining().map(|l| l.min(u32::MAX as usize) as u32);
        let open = |region: &RegionLocation| proto::ScanRequest {
            region: Some(region.specifier()),
            scan: Some(scan.clone()),
            number_of_rows: Some(batch),
            limit_of_rows: limit,
            ..Default::default()
        };
        let (region, reply) = self
            .store
            .region_call::<_, proto::ScanResponse>(&self.table, target, "Scan", Idempotence::Safe, open)
            .await
            .map_err(|(e, endpoint)| self.error(e, &endpoint))?;
        self.take_rows(region, 0, reply, None)
    }

    /// The next batch of an open scanner.
    async fn fetch(&mut self, open: OpenScanner) -> Result<(), StoreError> {
        let Some(id) = open.id else {
            let missing = NativeError::MissingField {
                message: "scan response",
                field: "scanner id",
            };
            return Err(self.error(missing, &open.region.server));
        };
        let next = proto::ScanRequest {
            scanner_id: Some(id),
            number_of_rows: Some(self.batch()),
            next_call_seq: Some(open.seq),
            ..Default::default()
        };
        let reply = match self
            .store
            .call_server::<proto::ScanResponse>(&open.region.server, "Scan", &next, self.timeout)
            .await
        {
            Ok(reply) => reply,
            Err(e) => return self.resume_after(e, open.region).await,
        };
        self.retry = None;
        self.take_rows(open.region, open.seq + 1, reply, open.lease)
    }

    /// After a scanner call failed: if the region moved, the scanner
    /// expired, or the connection broke, opens a new scanner after the last
    /// row read (a scan is a read: nothing is applied twice), within one
    /// deadline for the consecutive failures; otherwise fails.
    async fn resume_after(&mut self, e: NativeError, region: RegionLocation) -> Result<(), StoreError> {
        // A scanner the server dropped is opened again where it was.
        let scanner_lost = e.remote().is_some_and(|r| r.kind.is_scanner_lost());
        let retry = match retry_kind(&e, Idempotence::Safe) {
            _ if scanner_lost => Retry::Now,
            retry => retry,
        };
        let timeout = self.timeout;
        let attempts = self.retry.get_or_insert_with(|| self.store.attempts(timeout));
        let table = &self.table;
        let waiting_for = || {
            format!(
                "a region of table `{table}` to be served again (last on {})",
                region.server
            )
        };
        let event = ("Scan", "scan resumed");
        if let Err((e, endpoint)) = self
            .store
            .retry_on(e, retry, &region, event, attempts, waiting_for)
            .await
        {
            return Err(self.error(e, &endpoint));
        }
        // Resume past the last row read: the buffered rows stay.
        if let Some(last) = self.buffer.back().map(|r| r.row.clone()).or(self.last_row.clone()) {
            if self.scan.reversed {
                self.scan.stop = last;
            } else {
                let mut after = last.to_vec();
                after.push(0);
                self.scan.start = after.into();
            }
        }
        self.open = None;
        Ok(())
    }

    fn take_rows(
        &mut self,
        region: RegionLocation,
        seq: u64,
        reply: CallReply<proto::ScanResponse>,
        lease: Option<Lease>,
    ) -> Result<(), StoreError> {
        let rows = scan_rows(&reply).map_err(|e| self.error(e, &region.server))?;
        self.buffer.extend(rows.into_iter().filter_map(rows_from_cells));
        let message = &reply.message;
        let more = message.more_results_in_region.unwrap_or(true) && message.more_results.unwrap_or(true);
        let more = more && message.scanner_id.is_some();
        // The server closes a scanner at the region's end by itself.
        let lease = more.then(|| lease.unwrap_or_else(|| Lease::new(&self.store.inner.open_scanners)));
        self.open = Some(OpenScanner {
            region,
            id: message.scanner_id,
            seq,
            more,
            lease,
        });
        Ok(())
    }

    /// Moves the unread range past a region read to its end.
    fn advance(&mut self, region: &RegionLocation) {
        let scan = &mut self.scan;
        if scan.reversed {
            if region.start.is_empty() || region.start <= scan.start {
                self.finished = true;
            } else {
                scan.stop = region.start.clone();
            }
        } else if region.end.is_empty() || (!scan.stop.is_empty() && region.end >= scan.stop) {
            self.finished = true;
        } else {
            scan.start = region.end.clone();
        }
    }

    /// The request that closes an open scanner, if one is open.
    fn close_request(&mut self) -> Option<(Connection, proto::ScanRequest, Option<Lease>)> {
        let open = self.open.take()?;
        let id = open.id.filter(|_| open.more)?;
        let request = proto::ScanRequest {
            scanner_id: Some(id),
            number_of_rows: Some(0),
            close_scanner: Some(true),
            ..Default::default()
        };
        Some((
            self.store.connection(&open.region.server, Service::Client),
            request,
            open.lease,
        ))
    }

    async fn close(&mut self) {
        if let Some((connection, request, lease)) = self.close_request() {
            // Best effort: the server expires a forgotten scanner anyway.
            let _ = connection
                .call::<proto::ScanResponse>("Scan", &request, self.timeout)
                .await;
            drop(lease);
        }
    }
}

impl crate::store::prefetch::BatchSource for NativeScanner {
    async fn next_batch(&mut self) -> Result<Option<Vec<RowResult>>, StoreError> {
        NativeScanner::next_batch(self).await
    }

    async fn close(mut self) {
        NativeScanner::close(&mut self).await;
    }
}

impl Drop for NativeScanner {
    /// Closes the server's scanner in the background, if one is open and a
    /// tokio runtime is there to run the call.
    fn drop(&mut self) {
        let Some((connection, request, lease)) = self.close_request() else {
            return;
        };
        let timeout = self.timeout;
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = connection.call::<proto::ScanResponse>("Scan", &request, timeout).await;
                drop(lease);
            });
        }
    }
}

/// Caches a region, evicting the cached regions it overlaps (a parent
/// after a split, daughters after a merge): they are stale.
fn cache_region(regions: &mut BTreeMap<Bytes, RegionLocation>, region: RegionLocation) {
    let overlaps = |other: &RegionLocation| {
        (region.end.is_empty() || other.start < region.end) && (other.end.is_empty() || region.start < other.end)
    };
    regions.retain(|_, other| !overlaps(other));
    regions.insert(region.start.clone(), region);
}

/// The row to locate a reversed scan's region by, for a scan that stops
/// (exclusive) at `stop`, not empty: a row below the stop and above every
/// real row below it.
fn reversed_locate_row(stop: &[u8]) -> Vec<u8> {
    // The row just below `stop`: drop a trailing 0, or decrement the last
    // byte and pad with 0xFF (enough to sort after every real row below it).
    let mut row = stop.to_vec();
    match row.pop() {
        Some(0) => {}
        Some(b) => {
            row.push(b - 1);
            row.extend(std::iter::repeat_n(0xFF, 8));
        }
        None => {}
    }
    row
}

/// The cells of each row of a scan reply: from the cell block, split by
/// `cells_per_result`, or from the `Result` messages.
pub(super) fn scan_rows(
    reply: &CallReply<proto::ScanResponse>,
) -> Result<Vec<Vec<super::codec::WireCell>>, NativeError> {
    let message = &reply.message;
    if !message.cells_per_result.is_empty() {
        let mut cells = reply.cells.iter().cloned();
        let mut rows = Vec::with_capacity(message.cells_per_result.len());
        for (i, &n) in message.cells_per_result.iter().enumerate() {
            let row: Vec<_> = cells.by_ref().take(n as usize).collect();
            if row.len() != n as usize {
                return Err(NativeError::InvalidReply {
                    reason: format!("scan result {i} announces {n} cells, the cell block has {}", row.len()),
                });
            }
            rows.push(row);
        }
        return Ok(rows);
    }
    Ok(message
        .results
        .iter()
        .map(|r| {
            r.cell
                .iter()
                .map(|c| super::codec::WireCell {
                    row: c.row.clone().unwrap_or_default(),
                    family: c.family.clone().unwrap_or_default(),
                    qualifier: c.qualifier.clone().unwrap_or_default(),
                    timestamp: c.timestamp.unwrap_or(0) as i64,
                    cell_type: c.cell_type.unwrap_or(4) as u8,
                    value: c.value.clone().unwrap_or_default(),
                })
                .collect()
        })
        .collect())
}

fn rows_from_cells(cells: Vec<super::codec::WireCell>) -> Option<RowResult> {
    let n = cells.len();
    convert::row_result(&proto::Result::default(), n, &mut cells.into_iter())
        .ok()
        .flatten()
}

/// A reply that may carry its region's exception inside it, as a `Multi`'s
/// region action results do: a try that failed as much as one answered
/// with an exception.
pub(super) trait RegionReply {
    /// The exception inside the reply, if any.
    fn exception(&self) -> Option<NativeError> {
        None
    }
}

impl RegionReply for proto::GetResponse {}
impl RegionReply for proto::MutateResponse {}
impl RegionReply for proto::ScanResponse {}
impl RegionReply for proto::MultiResponse {
    fn exception(&self) -> Option<NativeError> {
        multi_error(self).err()
    }
}

/// The first exception of a `Multi` reply, if any.
fn multi_error(reply: &proto::MultiResponse) -> Result<(), NativeError> {
    for result in &reply.region_action_result {
        let exceptions = result
            .exception
            .iter()
            .chain(result.result_or_exception.iter().filter_map(|r| r.exception.as_ref()));
        if let Some(e) = exceptions.into_iter().next() {
            return Err(NativeError::Remote(super::error::RemoteError::from_pair(e)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use bytes::BytesMut;
    use prost::Message;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;
    use crate::store::native::codec::{self, WireCell};
    use crate::store::native::proto::{RequestHeader, ResponseHeader};

    /// How the fake region server answers `Get`: the exception class of
    /// each try (`Class message` for a message of its own, `{port}` in it
    /// standing for the fake's port), then the row (or, with
    /// `fail_always`, the last exception for ever).
    #[derive(Default)]
    struct Script {
        get_failures: Vec<&'static str>,
        fail_always: bool,
        scanner_closes: AtomicUsize,
        /// The next row the fake scanner returns.
        next_row: AtomicUsize,
        /// Scanner calls (not opens) to fail with this exception class.
        scan_failures: Mutex<Vec<&'static str>>,
        meta_scans: AtomicUsize,
        gets: AtomicUsize,
        /// `Mutate` and `Multi` requests to read and then answer by closing
        /// the connection (a server that died with the reply unsent).
        drop_writes: AtomicUsize,
        /// The nonce group and nonce of each `Mutate` received.
        mutates: Mutex<Vec<(Option<u64>, Option<u64>)>>,
        multis: AtomicUsize,
        /// `Mutate` requests to answer with no result (applied, no values).
        empty_answers: AtomicUsize,
        /// Exceptions each `Multi` answers its region actions with, the
        /// last first, before answering them.
        multi_failures: Mutex<Vec<&'static str>>,
        /// How long the fake waits before it answers a `Get` (`None`: at
        /// once).
        get_delay: Mutex<Option<Duration>>,
        /// How long the fake waits before it answers a scanner's next
        /// batch (not its open or close; `None`: at once).
        scan_delay: Mutex<Option<Duration>>,
        /// Rows whose `Multi` actions are answered, each on its own, with
        /// a `NoSuchColumnFamilyException` (the others are applied).
        refused_rows: Vec<&'static str>,
        /// `hbase:meta` lookups to answer with `NotServingRegionException`
        /// (hbase:meta moved).
        meta_failures: AtomicUsize,
        registry_calls: AtomicUsize,
        /// `hbase:meta` lookups answered with this server instead of the
        /// fake's own (a dead server's address), while the count lasts.
        dead_server: Mutex<Option<(String, usize)>>,
    }

    /// A fake cluster of one server: registry, `hbase:meta` and one region
    /// of table `t` holding row `r`.
    async fn fake_cluster(script: Arc<Script>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let endpoint = listener.local_addr().expect("addr").to_string();
        let port = listener.local_addr().expect("addr").port();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let script = script.clone();
                tokio::spawn(serve(stream, script, port));
            }
        });
        endpoint
    }

    fn cell(row: &str, family: &str, qualifier: &str, value: Vec<u8>) -> WireCell {
        WireCell {
            row: Bytes::copy_from_slice(row.as_bytes()),
            family: Bytes::copy_from_slice(family.as_bytes()),
            qualifier: Bytes::copy_from_slice(qualifier.as_bytes()),
            timestamp: 9,
            cell_type: 4,
            value: value.into(),
        }
    }

    async fn serve(mut stream: tokio::net::TcpStream, script: Arc<Script>, port: u16) {
        let mut head = [0; 10];
        if stream.read_exact(&mut head).await.is_err() {
            return;
        }
        let mut header = vec![0; u32::from_be_bytes([head[6], head[7], head[8], head[9]]) as usize];
        if stream.read_exact(&mut header).await.is_err() {
            return;
        }
        let mut buf = BytesMut::new();
        loop {
            let mut frame = loop {
                if let Some(frame) = codec::split_frame(&mut buf, 1 << 20).expect("frame") {
                    break frame;
                }
                if stream.read_buf(&mut buf).await.unwrap_or(0) == 0 {
                    return;
                }
            };
            let len = prost::encoding::decode_varint(&mut frame).expect("varint") as usize;
            let request = RequestHeader::decode(frame.split_to(len)).expect("header");
            let len = prost::encoding::decode_varint(&mut frame).expect("varint") as usize;
            let body = frame.split_to(len);
            let id = request.call_id;
            let ok = |message: Vec<u8>, cells: &[WireCell]| {
                let mut block = BytesMut::new();
                codec::encode_cell_block(cells, &mut block);
                let header = ResponseHeader {
                    call_id: id,
                    ..Default::default()
                };
                codec::encode_response(&header, Some(&message), &block)
            };
            let reply = match request.method_name.as_deref() {
                Some("GetMetaRegionLocations") => {
                    script.registry_calls.fetch_add(1, Ordering::SeqCst);
                    ok(
                        proto::GetMetaRegionLocationsResponse {
                            meta_locations: vec![proto::RegionLocation {
                                region_info: region_info("hbase", "meta"),
                                server_name: Some(proto::ServerName {
                                    host_name: "127.0.0.1".into(),
                                    port: Some(u32::from(port)),
                                    start_code: Some(1),
                                }),
                                seq_num: 0,
                            }],
                        }
                        .encode_to_vec(),
                        &[],
                    )
                }
                Some("Scan")
                    if is_meta_scan(&body)
                        && script
                            .meta_failures
                            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                            .is_ok() =>
                {
                    script.meta_scans.fetch_add(1, Ordering::SeqCst);
                    let class = "org.apache.hadoop.hbase.NotServingRegionException";
                    codec::encode_exception(id, class, "hbase:meta,,1 is not online on this server")
                }
                Some("Scan") if !is_meta_scan(&body) => {
                    // Table t: endless rows r0, r1, ... through scanner 7.
                    let scan = proto::ScanRequest::decode(body).expect("scan request");
                    if scan.close_scanner == Some(true) {
                        assert_eq!(scan.scanner_id, Some(7));
                        script.scanner_closes.fetch_add(1, Ordering::SeqCst);
                        ok(proto::ScanResponse::default().encode_to_vec(), &[])
                    } else {
                        let delay = *script.scan_delay.lock().expect("lock");
                        if let (None, Some(delay)) = (&scan.scan, delay) {
                            tokio::time::sleep(delay).await;
                        }
                        let failure = match scan.scan {
                            Some(_) => None,
                            None => script.scan_failures.lock().expect("lock").pop(),
                        };
                        if let Some(open) = &scan.scan {
                            // Resumed after row rN: start = "rN\0".
                            let start = open.start_row.clone().unwrap_or_default();
                            let resumed = std::str::from_utf8(&start[..start.len().saturating_sub(1)])
                                .ok()
                                .and_then(|s| s.strip_prefix('r'))
                                .and_then(|n| n.parse::<usize>().ok());
                            script.next_row.store(resumed.map_or(0, |n| n + 1), Ordering::SeqCst);
                        } else if let Some(class) = failure {
                            if stream
                                .write_all(&codec::encode_exception(id, class, "scripted"))
                                .await
                                .is_err()
                            {
                                return;
                            }
                            continue;
                        }
                        let n = scan.number_of_rows.unwrap_or(1) as usize;
                        let first = script.next_row.fetch_add(n, Ordering::SeqCst);
                        let cells: Vec<_> = (first..first + n)
                            .map(|i| cell(&format!("r{i}"), "f", "q", b"v".to_vec()))
                            .collect();
                        let message = proto::ScanResponse {
                            cells_per_result: vec![1; cells.len()],
                            scanner_id: Some(7),
                            more_results: Some(true),
                            more_results_in_region: Some(true),
                            ..Default::default()
                        };
                        ok(message.encode_to_vec(), &cells)
                    }
                }
                Some("Scan") => {
                    script.meta_scans.fetch_add(1, Ordering::SeqCst);
                    let name = "t,,1.abc.";
                    let mut info = b"PBUF".to_vec();
                    info.extend(region_info("default", "t").encode_to_vec());
                    let server = {
                        let mut dead = script.dead_server.lock().expect("lock");
                        match dead.as_mut() {
                            Some((server, left)) if *left > 0 => {
                                *left -= 1;
                                server.clone()
                            }
                            _ => format!("127.0.0.1:{port}"),
                        }
                    };
                    let cells = [
                        cell(name, "info", "regioninfo", info),
                        cell(name, "info", "server", server.into_bytes()),
                    ];
                    let message = proto::ScanResponse {
                        cells_per_result: vec![2],
                        more_results: Some(false),
                        ..Default::default()
                    };
                    ok(message.encode_to_vec(), &cells)
                }
                Some("Get") => {
                    let delay = *script.get_delay.lock().expect("lock");
                    if let Some(delay) = delay {
                        tokio::time::sleep(delay).await;
                    }
                    let n = script.gets.fetch_add(1, Ordering::SeqCst);
                    let failure = match script.get_failures.get(n) {
                        None if script.fail_always => script.get_failures.last(),
                        failure => failure,
                    };
                    match failure {
                        Some(failure) => {
                            let failure = failure.replace("{port}", &port.to_string());
                            let (class, message) = failure.split_once(' ').unwrap_or((&failure, "scripted"));
                            codec::encode_exception(id, class, message)
                        }
                        _ => {
                            let message = proto::GetResponse {
                                result: Some(proto::Result {
                                    associated_cell_count: Some(2),
                                    ..Default::default()
                                }),
                            };
                            let cells = [
                                cell("r", "f", "c", 7i64.to_be_bytes().to_vec()),
                                cell("r", "f", "q", b"v".to_vec()),
                            ];
                            ok(message.encode_to_vec(), &cells)
                        }
                    }
                }
                Some(method @ ("Mutate" | "Multi")) => {
                    if method == "Mutate" {
                        let request = proto::MutateRequest::decode(body.clone()).expect("mutate request");
                        let nonces = (request.nonce_group, request.mutation.nonce);
                        script.mutates.lock().expect("lock").push(nonces);
                    } else {
                        script.multis.fetch_add(1, Ordering::SeqCst);
                    }
                    let dropped = script
                        .drop_writes
                        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                        .is_ok();
                    if dropped {
                        return;
                    }
                    let empty = script
                        .empty_answers
                        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                        .is_ok();
                    if method == "Mutate" && empty {
                        // Applied, answered without the values.
                        let message = proto::MutateResponse {
                            result: None,
                            processed: Some(true),
                        };
                        ok(message.encode_to_vec(), &[])
                    } else if method == "Mutate" {
                        // An increment's (or a condition's) answer: counter c at 1.
                        let message = proto::MutateResponse {
                            result: Some(proto::Result {
                                associated_cell_count: Some(1),
                                ..Default::default()
                            }),
                            processed: Some(true),
                        };
                        ok(
                            message.encode_to_vec(),
                            &[cell("r", "f", "c", 1i64.to_be_bytes().to_vec())],
                        )
                    } else {
                        let request = proto::MultiRequest::decode(body).expect("multi request");
                        let failure = script.multi_failures.lock().expect("lock").pop();
                        let message = proto::MultiResponse {
                            region_action_result: request
                                .region_action
                                .iter()
                                .map(|action| match failure {
                                    Some(class) => proto::RegionActionResult {
                                        exception: Some(proto::NameBytesPair {
                                            name: class.to_string(),
                                            value: Some(Bytes::from(format!("{class}: scripted"))),
                                        }),
                                        ..Default::default()
                                    },
                                    None => proto::RegionActionResult {
                                        result_or_exception: (action.action.iter().enumerate())
                                            .map(|(i, a)| {
                                                let row = a.mutation.as_ref().and_then(|m| m.row.clone()).or_else(|| a.get.as_ref().map(|g| g.row.clone()));
                                                let refused = row
                                                    .is_some_and(|r| script.refused_rows.iter().any(|x| x.as_bytes() == r));
                                                let class = "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException";
                                                proto::ResultOrException {
                                                    index: Some(i as u32),
                                                    result: (!refused).then(proto::Result::default),
                                                    exception: refused.then(|| proto::NameBytesPair {
                                                        name: class.to_string(),
                                                        value: Some(Bytes::from(format!(
                                                            "{class}: Column family g does not exist in region t,,1.abc."
                                                        ))),
                                                    }),
                                                }
                                            })
                                            .collect(),
                                        ..Default::default()
                                    },
                                })
                                .collect(),
                        };
                        ok(message.encode_to_vec(), &[])
                    }
                }
                other => panic!("unexpected call {other:?}"),
            };
            if stream.write_all(&reply).await.is_err() {
                return;
            }
        }
    }

    fn is_meta_scan(body: &[u8]) -> bool {
        let request = proto::ScanRequest::decode(body).expect("scan request");
        request.region.is_some_and(|r| r.value.starts_with(b"hbase:meta,"))
    }

    fn region_info(namespace: &str, table: &str) -> proto::RegionInfo {
        proto::RegionInfo {
            region_id: 1,
            table_name: proto::TableName {
                namespace: Bytes::copy_from_slice(namespace.as_bytes()),
                qualifier: Bytes::copy_from_slice(table.as_bytes()),
            },
            start_key: Some(Bytes::new()),
            end_key: Some(Bytes::new()),
            ..Default::default()
        }
    }

    async fn store(script: &Arc<Script>, timeout: Duration) -> NativeStore {
        paced_store(script, timeout, RetryPolicy::default()).await
    }

    /// A store on a fake cluster that `script` runs, pausing as `policy` says.
    async fn paced_store(script: &Arc<Script>, timeout: Duration, policy: RetryPolicy) -> NativeStore {
        let endpoint = fake_cluster(script.clone()).await;
        NativeStore::connect(NativeConfig::new([endpoint]).call_timeout(timeout).retry(policy))
            .await
            .expect("connect")
    }

    /// Pauses of 20 ms: the tests that count tries, not time.
    fn quick() -> RetryPolicy {
        RetryPolicy::default().pause(Duration::from_millis(20))
    }

    fn script(failures: Vec<&'static str>) -> Arc<Script> {
        Arc::new(Script {
            get_failures: failures,
            ..Default::default()
        })
    }

    #[tokio::test]
    async fn a_moved_region_is_looked_up_again() {
        let script = script(vec![
            "org.apache.hadoop.hbase.NotServingRegionException",
            "org.apache.hadoop.hbase.exceptions.RegionOpeningException",
        ]);
        let store = store(&script, Duration::from_secs(10)).await;
        let row = store
            .get_unchecked("t", &Get::new("r"))
            .await
            .expect("answered in the end");
        assert_eq!(row.and_then(|r| r.value("f", "q")), Some(Bytes::from("v")));
        assert_eq!(script.gets.load(Ordering::SeqCst), 3);
        // NotServingRegion: looked up again; RegionOpening: the region is
        // opening where it is, waited for there (as HBase's client does).
        assert_eq!(script.meta_scans.load(Ordering::SeqCst), 2, "a lookup after the move");
    }

    #[tokio::test]
    async fn each_not_here_not_yet_exception_is_ridden_out_for_what_it_means() {
        // Each class once, then the row: the lookups of hbase:meta it took
        // in all (1: the cached location was kept), and whether the retry
        // paused.
        let cases: [(&'static str, usize, bool); 14] = [
            ("org.apache.hadoop.hbase.NotServingRegionException", 2, true),
            (
                "org.apache.hadoop.hbase.exceptions.RegionMovedException Region moved to: hostname=127.0.0.1 port={port} startCode=1. As of locationSeqNum=9.",
                1,
                false,
            ),
            ("org.apache.hadoop.hbase.exceptions.RegionOpeningException", 1, true),
            (
                "org.apache.hadoop.hbase.regionserver.RegionServerStoppedException",
                2,
                true,
            ),
            (
                "org.apache.hadoop.hbase.regionserver.RegionServerAbortedException",
                2,
                true,
            ),
            ("org.apache.hadoop.hbase.ipc.ServerNotRunningYetException", 2, true),
            ("org.apache.hadoop.hbase.RegionTooBusyException", 1, true),
            ("org.apache.hadoop.hbase.CallQueueTooBigException", 1, true),
            ("org.apache.hadoop.hbase.CallDroppedException", 1, true),
            ("org.apache.hadoop.hbase.PleaseHoldException", 1, true),
            ("org.apache.hadoop.hbase.quotas.RpcThrottlingException", 1, true),
            ("org.apache.hadoop.hbase.RetryImmediatelyException", 1, false),
            ("org.apache.hadoop.hbase.MultiActionResultTooLarge", 1, false),
            // A region moved to a server the message does not name well:
            // looked up again.
            ("org.apache.hadoop.hbase.exceptions.RegionMovedException moved", 2, true),
        ];
        for (failure, lookups, pauses) in cases {
            let script = script(vec![failure]);
            let pause = Duration::from_millis(300);
            let policy = RetryPolicy::default().pause(pause).pause_overloaded(pause);
            let store = paced_store(&script, Duration::from_secs(10), policy).await;
            let started = Instant::now();
            let row = store.get_unchecked("t", &Get::new("r")).await.expect(failure);
            let took = started.elapsed();
            assert_eq!(row.and_then(|r| r.value("f", "q")), Some(Bytes::from("v")), "{failure}");
            assert_eq!(script.gets.load(Ordering::SeqCst), 2, "{failure}");
            assert_eq!(script.meta_scans.load(Ordering::SeqCst), lookups, "{failure}");
            assert_eq!(took >= Duration::from_millis(300), pauses, "{failure}: {took:?}");
        }
    }

    #[tokio::test]
    async fn hbase_meta_not_served_where_it_was_is_found_again_through_the_registry() {
        let script = Arc::new(Script {
            meta_failures: AtomicUsize::new(2),
            ..Default::default()
        });
        let store = paced_store(&script, Duration::from_secs(10), quick()).await;
        assert_eq!(script.registry_calls.load(Ordering::SeqCst), 1, "connect asks once");
        store.get_unchecked("t", &Get::new("r")).await.expect("served");
        assert_eq!(
            script.meta_scans.load(Ordering::SeqCst),
            3,
            "two refusals, then the lookup"
        );
        assert_eq!(
            script.registry_calls.load(Ordering::SeqCst),
            3,
            "the registry asked again after each refusal"
        );
    }

    /// Adds 1 to counter `f:c` of row `r` in table `t`.
    async fn increment_c(store: &NativeStore) -> Result<Vec<i64>, StoreError> {
        store
            .increment_unchecked("t", &Increment::new("r").add("f", "c", 1))
            .await
    }

    #[tokio::test]
    async fn an_increment_whose_reply_was_lost_is_sent_again_with_its_nonce() {
        let script = Arc::new(Script {
            drop_writes: AtomicUsize::new(1),
            ..Default::default()
        });
        let store = store(&script, Duration::from_secs(10)).await;
        let values = increment_c(&store).await.expect("sent again");
        assert_eq!(values, [1]);
        let mutates = script.mutates.lock().expect("lock").clone();
        assert_eq!(mutates.len(), 2, "{mutates:?}");
        let (group, nonce) = mutates[0];
        assert!(group.is_some() && nonce.is_some_and(|n| n != 0), "{mutates:?}");
        assert_eq!(mutates[1], mutates[0], "the same nonce on the repeat");
        // Another increment gets a nonce of its own.
        increment_c(&store).await.expect("answered");
        let mutates = script.mutates.lock().expect("lock").clone();
        assert_eq!(mutates[2].0, group);
        assert_ne!(mutates[2].1, nonce);
    }

    #[tokio::test]
    async fn an_increment_answered_without_its_values_reads_them_back() {
        let script = Arc::new(Script {
            empty_answers: AtomicUsize::new(1),
            ..Default::default()
        });
        let store = store(&script, Duration::from_secs(10)).await;
        let values = increment_c(&store).await.expect("read back");
        assert_eq!(values, [7], "the value the get read");
        assert_eq!(script.mutates.lock().expect("lock").len(), 1, "not sent again");
        assert_eq!(script.gets.load(Ordering::SeqCst), 1);
    }

    /// Appends to column `f:c` of row `r` in table `t`.
    async fn append_c(store: &NativeStore) -> Result<RowResult, StoreError> {
        store.append_unchecked("t", &Append::new("r").add("f", "c", "x")).await
    }

    #[tokio::test]
    async fn an_append_whose_reply_was_lost_is_sent_again_with_its_nonce() {
        let script = Arc::new(Script {
            drop_writes: AtomicUsize::new(1),
            ..Default::default()
        });
        let store = store(&script, Duration::from_secs(10)).await;
        let row = append_c(&store).await.expect("sent again");
        assert_eq!(
            row.value("f", "c").as_deref(),
            Some(&1i64.to_be_bytes()[..]),
            "the answer's cell"
        );
        let mutates = script.mutates.lock().expect("lock").clone();
        assert_eq!(mutates.len(), 2, "{mutates:?}");
        let (group, nonce) = mutates[0];
        assert!(group.is_some() && nonce.is_some_and(|n| n != 0), "{mutates:?}");
        assert_eq!(mutates[1], mutates[0], "the same nonce on the repeat");
        append_c(&store).await.expect("answered");
        let mutates = script.mutates.lock().expect("lock").clone();
        assert_eq!(mutates[2].0, group);
        assert_ne!(mutates[2].1, nonce, "another append, another nonce");
    }

    #[tokio::test]
    async fn an_append_answered_without_its_values_reads_them_back() {
        let script = Arc::new(Script {
            empty_answers: AtomicUsize::new(1),
            ..Default::default()
        });
        let store = store(&script, Duration::from_secs(10)).await;
        let row = append_c(&store).await.expect("read back");
        assert_eq!(
            row.value("f", "c").as_deref(),
            Some(&7i64.to_be_bytes()[..]),
            "the value the get read"
        );
        assert_eq!(row.cells.len(), 1, "only the appended column: {row:?}");
        assert_eq!(script.mutates.lock().expect("lock").len(), 1, "not sent again");
        assert_eq!(script.gets.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_check_and_mutate_whose_reply_was_lost_says_it_may_have_been_applied() {
        let script = Arc::new(Script {
            drop_writes: AtomicUsize::new(1),
            ..Default::default()
        });
        let store = store(&script, Duration::from_secs(10)).await;
        let op = CheckAndMutate::new(RowMutation::new("r").put("f", "q", "v"), "f", "q", None);
        let err = store
            .check_and_mutate_unchecked("t", &op)
            .await
            .expect_err("not sent again");
        assert!(err.maybe_applied() && err.is_transient(), "{err:?}");
        assert_eq!(script.mutates.lock().expect("lock").len(), 1, "sent once");
    }

    #[tokio::test]
    async fn a_batch_whose_connection_broke_is_sent_again() {
        let script = Arc::new(Script {
            drop_writes: AtomicUsize::new(1),
            ..Default::default()
        });
        let store = store(&script, Duration::from_secs(10)).await;
        let rows = [
            RowMutation::new("a").put("f", "q", "1"),
            RowMutation::new("b").put("f", "q", "2"),
        ];
        store.mutate_unchecked("t", &rows).await.expect("sent again");
        assert_eq!(script.multis.load(Ordering::SeqCst), 2);
        // A delete of a column's newest version is not sent twice.
        script.drop_writes.store(1, Ordering::SeqCst);
        let rows = [
            RowMutation::new("a").delete_latest("f", "q"),
            RowMutation::new("b").put("f", "q", "2"),
        ];
        let err = store.mutate_unchecked("t", &rows).await.expect_err("not sent again");
        assert!(err.maybe_applied(), "{err:?}");
        // The error names the server whose connection broke (it named none).
        let message = err.to_string();
        assert!(message.contains("the connection to 127.0.0.1:"), "{message}");
        // Row b, which may be sent twice, was sent again on its own (rows
        // are independent), and row a was not.
        assert_eq!(script.multis.load(Ordering::SeqCst), 4);
    }

    /// A call's options replace the store's timeout, shorter or longer.
    #[tokio::test]
    async fn a_call_timeout_replaces_the_stores() {
        use crate::store::CallOptions;
        let script = Arc::new(Script::default());
        let get = crate::store::Get::new("r");
        // A server that takes 800 ms; the store gives a call 300 ms.
        let store = store(&script, Duration::from_millis(300)).await;
        *script.get_delay.lock().expect("lock") = Some(Duration::from_millis(800));
        let err = store.get_unchecked("t", &get).await.expect_err("300 ms are too few");
        assert!(matches!(err, StoreError::Timeout { .. }), "{err:?}");
        let patient = CallOptions::new().timeout(Duration::from_secs(5));
        let row = patient
            .clone()
            .scope(store.get_unchecked("t", &get))
            .await
            .expect("5 s are enough");
        assert!(row.is_some());

        // A server that takes 60 s; the store gives a call 30 s, the call
        // asks for 300 ms and fails at about that.
        let store = self::store(&script, Duration::from_secs(30)).await;
        *script.get_delay.lock().expect("lock") = Some(Duration::from_secs(60));
        let started = std::time::Instant::now();
        let err = CallOptions::new()
            .timeout(Duration::from_millis(300))
            .scope(store.get_unchecked("t", &get))
            .await
            .expect_err("the call's 300 ms");
        assert!(matches!(err, StoreError::Timeout { .. }), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    }

    /// A scanner keeps the timeout of the scope it was opened in for its
    /// later fetches, read outside that scope: longer than the store's
    /// (a fetch that takes 800 ms on a store that gives a call 300 ms),
    /// or shorter (a fetch that never comes on a store that gives 30 s).
    #[tokio::test]
    async fn a_scanner_keeps_the_timeout_it_was_opened_with() {
        use crate::store::CallOptions;
        let script = Arc::new(Script::default());
        let scan = Scan::all().batch_size(2);
        let opened = async |store: &NativeStore, timeout: Duration| {
            CallOptions::new()
                .timeout(timeout)
                .scope(async {
                    let mut scanner = store.scanner("t", &scan);
                    scanner.open().await.map(|()| scanner)
                })
                .await
                .expect("opened at once")
        };
        let store = store(&script, Duration::from_millis(300)).await;
        *script.scan_delay.lock().expect("lock") = Some(Duration::from_millis(800));
        let mut scanner = opened(&store, Duration::from_secs(5)).await;
        // The rows of the open, then one fetch that takes 800 ms.
        let first = scanner.next_batch().await.expect("buffered").expect("a batch");
        assert_eq!(first.len(), 2);
        let second = scanner.next_batch().await.expect("5 s are enough").expect("a batch");
        let keys: Vec<_> = second.iter().map(|r| r.row.clone()).collect();
        assert_eq!(keys, ["r2", "r3"]);
        // The same through the stream `Store::scan` hands out, read by
        // another task.
        let rows = crate::store::prefetch::prefetched("t", opened(&store, Duration::from_secs(5)).await);
        let rows: Vec<_> = futures_util::StreamExt::collect::<Vec<_>>(futures_util::StreamExt::take(rows, 4)).await;
        assert_eq!(rows.len(), 4);
        assert!(rows.iter().all(Result::is_ok), "{rows:?}");
        drop(scanner);

        let store = self::store(&script, Duration::from_secs(30)).await;
        *script.scan_delay.lock().expect("lock") = Some(Duration::from_secs(60));
        let mut scanner = opened(&store, Duration::from_millis(300)).await;
        scanner.next_batch().await.expect("buffered").expect("a batch");
        let started = std::time::Instant::now();
        let err = scanner.next_batch().await.expect_err("the scan's 300 ms");
        assert!(matches!(err, StoreError::Timeout { .. }), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn a_batch_answers_for_each_row() {
        let script = Arc::new(Script {
            refused_rows: vec!["b"],
            ..Default::default()
        });
        let store = store(&script, Duration::from_secs(10)).await;
        let rows = [
            RowMutation::new("a").put("f", "q", "1"),
            RowMutation::new("b").put("g", "q", "2"),
            RowMutation::new("c").put("f", "q", "3"),
            RowMutation::new("d").put("f", "q", "4"),
        ];
        let invalid = || StoreError::InvalidRow {
            table: "t".into(),
            row: "d".into(),
            reason: "checked before sending".into(),
        };
        let checked = vec![Ok(()), Ok(()), Ok(()), Err(invalid())];
        let outcome = store
            .mutate_each_unchecked("t", &rows, checked)
            .await
            .expect("answered");
        assert!(outcome[0].is_applied() && outcome[2].is_applied(), "{outcome:?}");
        assert!(
            matches!(&outcome[1], RowOutcome::Refused(StoreError::NoSuchFamily { family, .. }) if family == "g"),
            "{outcome:?}"
        );
        assert!(
            matches!(outcome[3], RowOutcome::Refused(StoreError::InvalidRow { .. })),
            "{outcome:?}"
        );
        assert_eq!(
            script.multis.load(Ordering::SeqCst),
            1,
            "one Multi, the refused row not sent again"
        );
        // The all-or-first-error form reports the first failed row.
        let err = store
            .mutate_unchecked("t", &rows[..3])
            .await
            .expect_err("row b refused");
        assert!(matches!(err, StoreError::NoSuchFamily { .. }), "{err:?}");
        // Reads too: row b's error in its place, the others read.
        let gets = [
            crate::store::Get::new("a"),
            crate::store::Get::new("b"),
            crate::store::Get::new("c"),
        ];
        let read = store.get_each_unchecked("t", &gets).await.expect("answered");
        assert!(
            matches!(read[..], [Ok(_), Err(StoreError::NoSuchFamily { .. }), Ok(_)]),
            "{read:?}"
        );
        let err = store.get_many_unchecked("t", &gets).await.expect_err("row b failed");
        assert!(matches!(err, StoreError::NoSuchFamily { .. }), "{err:?}");

        // A reply lost: the row that may not be sent twice (a delete of the
        // newest version) is unknown, the put sent again is applied.
        script.drop_writes.store(1, Ordering::SeqCst);
        let rows = [
            RowMutation::new("a").delete_latest("f", "q"),
            RowMutation::new("c").put("f", "q", "3"),
        ];
        let outcome = store
            .mutate_each_unchecked("t", &rows, vec![Ok(()), Ok(())])
            .await
            .expect("answered");
        assert!(
            matches!(&outcome[0], RowOutcome::Unknown(e) if e.maybe_applied()),
            "{outcome:?}"
        );
        assert!(outcome[1].is_applied(), "{outcome:?}");
    }

    #[tokio::test]
    async fn a_batchs_region_exceptions_are_ridden_out_for_what_they_mean() {
        let script = Arc::new(Script::default());
        // Popped from the end: the server is stopping, the region moved,
        // the server is busy, then the rows are applied.
        script.multi_failures.lock().expect("lock").extend([
            "org.apache.hadoop.hbase.RegionTooBusyException",
            "org.apache.hadoop.hbase.NotServingRegionException",
            "org.apache.hadoop.hbase.regionserver.RegionServerStoppedException",
        ]);
        let store = paced_store(&script, Duration::from_secs(10), quick()).await;
        let rows = [
            RowMutation::new("a").put("f", "q", "1"),
            RowMutation::new("b").put("f", "q", "2"),
        ];
        store.mutate_unchecked("t", &rows).await.expect("applied in the end");
        assert_eq!(script.multis.load(Ordering::SeqCst), 4);
        // The first lookup, one after the stopped server and one after the
        // move; the busy server kept its region.
        assert_eq!(script.meta_scans.load(Ordering::SeqCst), 3);
        // A request the server refuses is not sent again.
        script
            .multi_failures
            .lock()
            .expect("lock")
            .push("org.apache.hadoop.hbase.DoNotRetryIOException");
        let err = store.mutate_unchecked("t", &rows).await.expect_err("refused");
        assert!(!err.maybe_applied(), "{err:?}");
        assert_eq!(script.multis.load(Ordering::SeqCst), 5);
    }

    #[tokio::test]
    async fn a_batch_to_a_dead_server_waits_for_its_region_to_be_served_elsewhere() {
        // hbase:meta names a server that refuses connections for the first
        // three lookups, then the fake itself (the region reassigned).
        let dead = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let dead_address = dead.local_addr().expect("addr").to_string();
        drop(dead);
        let script = Arc::new(Script {
            dead_server: Mutex::new(Some((dead_address.clone(), 3))),
            ..Default::default()
        });
        let store = paced_store(&script, Duration::from_secs(10), quick()).await;
        let rows = [
            RowMutation::new("a").put("f", "q", "1"),
            RowMutation::new("b").put("f", "q", "2"),
        ];
        store.mutate_unchecked("t", &rows).await.expect("served elsewhere");
        assert_eq!(script.multis.load(Ordering::SeqCst), 1, "sent once, where it is served");
        assert_eq!(script.meta_scans.load(Ordering::SeqCst), 4, "a lookup per pause");
        assert!(store.locate("t", b"a").await.expect("cached").server != dead_address);

        // Never served again: the deadline says what was waited for, and
        // that nothing was applied.
        let script = Arc::new(Script {
            dead_server: Mutex::new(Some((dead_address.clone(), usize::MAX))),
            ..Default::default()
        });
        let store = paced_store(&script, Duration::from_millis(800), quick()).await;
        let started = Instant::now();
        let err = store.mutate_unchecked("t", &rows).await.expect_err("never served");
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        assert!(
            matches!(err, StoreError::Unavailable { .. }) && !err.maybe_applied(),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(
            message.contains(&dead_address) && message.contains("row a"),
            "{message}"
        );
        assert!(message.contains("nothing of it was applied"), "{message}");
    }

    /// A region on a server that serves TLS only, found through hbase:meta
    /// (as a store bootstrapped through ZooKeeper finds every server): the
    /// plaintext call fails at once, saying so, where it waited out its
    /// deadline as for a server that is stopping.
    #[tokio::test]
    async fn a_region_server_that_serves_tls_only_fails_a_plaintext_call_at_once() {
        let tls_only = super::super::probe::tls_only_server().await;
        let script = Arc::new(Script {
            dead_server: Mutex::new(Some((tls_only.clone(), usize::MAX))),
            ..Default::default()
        });
        let store = paced_store(&script, Duration::from_secs(10), quick()).await;
        let started = Instant::now();
        let err = store.get_unchecked("t", &Get::new("r")).await.expect_err("TLS only");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}: {err}",
            started.elapsed()
        );
        let StoreError::Connection { endpoint, message, .. } = &err else {
            panic!("not a connection error: {err:?}");
        };
        assert_eq!(*endpoint, tls_only, "{err}");
        assert!(
            message.contains("serves TLS only") && message.contains("NativeConfig::tls"),
            "{message}"
        );
        assert_eq!(script.meta_scans.load(Ordering::SeqCst), 1, "not retried: {err}");
    }

    /// What HBase does with an increment sent twice under one nonce (a
    /// retry after a lost reply): applies it once, and answers the repeat
    /// with the counter's value.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_NATIVE from scripts/hbase/hbase address"]
    async fn hbase_applies_an_increment_sent_twice_with_one_nonce_once() {
        use crate::schema::{FamilySchema, TableSchema};
        use crate::store::Store;
        let address = std::env::var("HMAP_NATIVE").expect("HMAP_NATIVE");
        let store = NativeStore::connect(NativeConfig::new(address.split(',')))
            .await
            .expect("connect");
        let table = "hmap_nonce_check";
        if store.table_exists(table).await.expect("listed") {
            store.delete_table(table).await.expect("deleted");
        }
        store
            .create_table(&TableSchema::new(table).family(FamilySchema::new("f")))
            .await
            .expect("created");
        let op = Increment::new("r").add("f", "c", 5);
        let mutation = proto::MutationProto {
            nonce: Some(super::super::random::random_u64()),
            ..convert::increment(&op)
        };
        let request = |region: &RegionLocation| proto::MutateRequest {
            region: region.specifier(),
            mutation: mutation.clone(),
            condition: None,
            nonce_group: Some(store.inner.nonce_group),
        };
        let mut answers = Vec::new();
        for _ in 0..2 {
            let (_, reply) = store
                .region_call::<_, proto::MutateResponse>(table, Target::Row(b"r"), "Mutate", Idempotence::Safe, request)
                .await
                .expect("answered");
            let result = reply.message.result.unwrap_or_default();
            let row = convert::associated_cells(&result)
                .and_then(|n| convert::row_result(&result, n, &mut reply.cells.into_iter()))
                .expect("decoded");
            answers.push(convert::counters(&op, row.as_ref()).map_err(|e| e.to_string()));
        }
        let stored = store.get(table, &Get::new("r")).await.expect("read").expect("a row");
        let value = stored.value("f", "c").expect("a counter");
        assert_eq!(&value[..], &5i64.to_be_bytes(), "applied once");
        assert_eq!(answers[0], Ok(vec![5]), "{answers:?}");
        assert_eq!(
            answers[1],
            Ok(vec![5]),
            "the repeat answered with the value: {answers:?}"
        );
        store.delete_table(table).await.expect("deleted");
    }

    #[tokio::test]
    async fn a_busy_server_is_waited_for_without_a_lookup() {
        let script = script(vec!["org.apache.hadoop.hbase.CallQueueTooBigException"]);
        let store = store(&script, Duration::from_secs(10)).await;
        store.get_unchecked("t", &Get::new("r")).await.expect("answered");
        assert_eq!(script.gets.load(Ordering::SeqCst), 2);
        assert_eq!(script.meta_scans.load(Ordering::SeqCst), 1, "the cached location kept");
    }

    #[tokio::test]
    async fn retries_stop_at_the_deadline() {
        let script = Arc::new(Script {
            fail_always: true,
            get_failures: vec!["org.apache.hadoop.hbase.NotServingRegionException"],
            ..Default::default()
        });
        let store = store(&script, Duration::from_millis(300)).await;
        let started = Instant::now();
        let err = store
            .get_unchecked("t", &Get::new("r"))
            .await
            .expect_err("never served");
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        assert!(script.gets.load(Ordering::SeqCst) >= 2, "retried");
        let message = err.to_string();
        assert!(
            message.contains("table `t`") && message.contains("NotServingRegionException"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn other_exceptions_are_not_retried() {
        let script = script(vec!["org.apache.hadoop.hbase.DoNotRetryIOException"]);
        let store = store(&script, Duration::from_secs(10)).await;
        let err = store.get_unchecked("t", &Get::new("r")).await.expect_err("refused");
        assert_eq!(script.gets.load(Ordering::SeqCst), 1);
        assert!(
            matches!(&err, StoreError::Server { table, message, .. } if table == "t" && message.starts_with("row r:")),
            "{err}"
        );
    }

    #[tokio::test]
    async fn scanners_close_when_they_stop_early_or_are_dropped() {
        let script = script(vec![]);
        let store = store(&script, Duration::from_secs(10)).await;
        // A limit inside the second batch: the scanner is closed at once.
        let rows = store
            .scan_unchecked("t", &Scan::all().batch_size(2).limit(3))
            .await
            .expect("scan");
        let keys: Vec<_> = rows.iter().map(|r| r.row.clone()).collect();
        assert_eq!(keys, ["r0", "r1", "r2"]);
        assert_eq!(script.scanner_closes.load(Ordering::SeqCst), 1);
        // Dropped half-way: closed in the background.
        let mut scanner = store.scanner("t", &Scan::all().batch_size(2));
        let first = scanner.next_batch().await.expect("rows").expect("a batch");
        let keys: Vec<_> = first.iter().map(|r| r.row.clone()).collect();
        assert_eq!(keys, ["r0", "r1"]);
        drop(scanner);
        for _ in 0..100 {
            if script.scanner_closes.load(Ordering::SeqCst) == 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(script.scanner_closes.load(Ordering::SeqCst), 2);
        // Never opened: nothing to close.
        drop(store.scanner("t", &Scan::all()));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(script.scanner_closes.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_scan_resumes_after_its_last_row_when_the_scanner_is_lost() {
        let script = script(vec![]);
        // Popped from the end: the lease expires, the scanner is reset
        // (its region reopened), the server forgets it, the region moves.
        script.scan_failures.lock().expect("lock").extend([
            "org.apache.hadoop.hbase.UnknownScannerException",
            "org.apache.hadoop.hbase.NotServingRegionException",
            "org.apache.hadoop.hbase.exceptions.ScannerResetException",
            "org.apache.hadoop.hbase.regionserver.LeaseException",
        ]);
        let store = store(&script, Duration::from_secs(10)).await;
        let rows = store
            .scan_unchecked("t", &Scan::all().batch_size(2).limit(11))
            .await
            .expect("scan");
        let keys: Vec<_> = rows
            .iter()
            .map(|r| String::from_utf8_lossy(&r.row).into_owned())
            .collect();
        assert_eq!(
            keys,
            ["r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10"],
            "no row lost or repeated"
        );
        assert!(
            script.scan_failures.lock().expect("lock").is_empty(),
            "both failures met"
        );
        assert_eq!(
            script.meta_scans.load(Ordering::SeqCst),
            2,
            "looked up again after the region moved"
        );
    }

    fn current_thread() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    }

    #[test]
    fn a_store_outlives_the_runtime_it_was_first_used_on() {
        // The fake cluster runs on a runtime of its own, which outlives the
        // client's.
        let server = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("server runtime");
        let script = script(vec![]);
        let endpoint = server.block_on(fake_cluster(script.clone()));
        let first = current_thread();
        let config = NativeConfig::new([endpoint]).call_timeout(Duration::from_secs(5));
        let store = first.block_on(NativeStore::connect(config)).expect("connect");
        let row = first.block_on(store.get_unchecked("t", &Get::new("r"))).expect("get");
        assert!(row.is_some());
        // Its connections' tasks go with it.
        drop(first);
        let second = current_thread();
        let started = Instant::now();
        let row = second
            .block_on(store.get_unchecked("t", &Get::new("r")))
            .expect("a get on the second runtime");
        assert_eq!(row.and_then(|r| r.value("f", "q")), Some(Bytes::from("v")));
        let rows = second
            .block_on(store.scan_unchecked("t", &Scan::all().batch_size(2).limit(3)))
            .expect("a scan on the second runtime");
        assert_eq!(rows.len(), 3);
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        assert_eq!(script.meta_scans.load(Ordering::SeqCst), 1, "the region cache kept");
    }

    /// A server that accepts connections and never says a word.
    async fn silent_server() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address").to_string();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                held.push(stream);
            }
        });
        address
    }

    #[tokio::test]
    async fn connect_has_one_deadline_for_every_bootstrap_server() {
        // One server refuses, three say nothing.
        let refused = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let refused_address = refused.local_addr().expect("address").to_string();
        drop(refused);
        let mut servers = vec![refused_address];
        for _ in 0..3 {
            servers.push(silent_server().await);
        }
        let config = NativeConfig::new(servers.clone())
            .call_timeout(Duration::from_secs(1))
            .admin_timeout(Duration::from_secs(1));
        let started = Instant::now();
        let err = NativeStore::connect(config.clone())
            .await
            .expect_err("no server answers");
        let elapsed = started.elapsed();
        assert!(
            elapsed >= Duration::from_millis(950) && elapsed < Duration::from_millis(1500),
            "{elapsed:?}"
        );
        let message = err.to_string();
        assert!(
            matches!(err, StoreError::Connection { .. }) && err.is_transient(),
            "{err:?}"
        );
        assert!(message.contains("connect timed out after 1"), "{message}");
        assert!(
            message.contains(&format!("{}: cannot connect", servers[0])),
            "{message}"
        );
        for server in &servers[1..] {
            assert!(message.contains(&format!("{server}: no answer within")), "{message}");
        }
        // The registry's other call shares one deadline the same way.
        let store = NativeStore {
            inner: Arc::new(Inner {
                config,
                connections: Mutex::default(),
                regions: Mutex::default(),
                meta: Mutex::default(),
                master: Mutex::default(),
                cluster_id: Mutex::default(),
                schemas: Default::default(),
                nonce_group: 0,
                open_scanners: Arc::default(),
                failed_servers: FailedServers::default(),
            }),
        };
        let started = Instant::now();
        let err = store.cluster_id().await.expect_err("no server answers");
        assert!(
            started.elapsed() < Duration::from_millis(1500),
            "{:?}",
            started.elapsed()
        );
        assert!(err.to_string().contains("cluster_id timed out after 1"), "{err}");
        // And the one that names the active master, within the admin
        // deadline: asked again while time is left (a master failing
        // over), then said to be unavailable, nothing applied.
        let started = Instant::now();
        let err = store.admin_list().await.expect_err("no server answers");
        assert!(
            started.elapsed() < Duration::from_millis(1500),
            "{:?}",
            started.elapsed()
        );
        assert!(
            matches!(err, StoreError::Unavailable { .. }) && !err.maybe_applied(),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(message.contains("list_tables was not served within 1"), "{message}");
        assert!(message.contains("the registry to name an active master"), "{message}");
        assert!(message.contains("GetActiveMaster timed out after 1"), "{message}");
    }

    #[test]
    fn a_new_region_evicts_the_stale_ones_it_overlaps() {
        let region = |start: &'static str, end: &'static str| RegionLocation {
            table: "t".into(),
            name: format!("t,{start},1.x.").into(),
            start: start.into(),
            end: end.into(),
            server: "h:1".into(),
        };
        let mut cache = BTreeMap::new();
        cache_region(&mut cache, region("", "m"));
        cache_region(&mut cache, region("m", ""));
        // A merge: one region over both.
        cache_region(&mut cache, region("", ""));
        assert_eq!(cache.len(), 1);
        // A split: the daughters replace the parent, and keep each other.
        cache_region(&mut cache, region("", "g"));
        cache_region(&mut cache, region("g", ""));
        assert_eq!(cache.keys().collect::<Vec<_>>(), [&Bytes::from(""), &Bytes::from("g")]);
        cache_region(&mut cache, region("c", "e"));
        assert_eq!(cache.keys().collect::<Vec<_>>(), [&Bytes::from("c"), &Bytes::from("g")]);
    }

    #[test]
    fn reversed_lookups_start_below_the_stop() {
        assert_eq!(reversed_locate_row(b"m\x00"), b"m");
        assert_eq!(reversed_locate_row(b"m"), b"l\xff\xff\xff\xff\xff\xff\xff\xff");
    }

    /// The metrics a NativeStore reports on its own (the per-call ones
    /// come from `traced`, as on every backend): retries by reason, region
    /// cache misses and relocations, bytes each way.
    #[cfg(feature = "metrics")]
    #[tokio::test]
    async fn retries_region_lookups_and_bytes_are_reported() {
        use crate::store::metrics::{self, testing::Captured};

        let captured = Captured::default();
        // This test's thread; the current-thread runtime runs the fake
        // server's and the connections' tasks here too.
        let _recorder = ::metrics::set_default_local_recorder(&captured);
        let script = script(vec![
            "org.apache.hadoop.hbase.NotServingRegionException",
            "org.apache.hadoop.hbase.exceptions.RegionOpeningException",
            "org.apache.hadoop.hbase.CallQueueTooBigException",
        ]);
        let store = store(&script, Duration::from_secs(10)).await;
        store
            .get_unchecked("t", &Get::new("r"))
            .await
            .expect("answered in the end");
        assert_eq!(script.gets.load(Ordering::SeqCst), 4);

        let native = [("backend", "native")];
        let retries = |reason| captured.counter(metrics::RETRIES, &[("backend", "native"), ("reason", reason)]);
        assert_eq!(retries("region_moved"), 2);
        assert_eq!(retries("server_busy"), 1);
        // The first lookup, and one after the move; the opening region and
        // the busy server kept their cached location.
        assert_eq!(captured.counter(metrics::REGION_CACHE_MISSES, &[]), 2);
        assert_eq!(script.meta_scans.load(Ordering::SeqCst), 2);
        assert_eq!(captured.counter(metrics::REGION_RELOCATIONS, &[]), 1);
        // Every request and reply, the registry's included: more than the
        // four gets' headers alone.
        let sent = captured.counter(metrics::BYTES_SENT, &native);
        let received = captured.counter(metrics::BYTES_RECEIVED, &native);
        assert!(sent > 4 * 20, "{sent} bytes sent");
        assert!(received > 4 * 20, "{received} bytes received");
    }
}
