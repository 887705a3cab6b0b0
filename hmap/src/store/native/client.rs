//! [`NativeStore`] and [`NativeConfig`]: the handle, how it is set up,
//! what its clones share (the connections, the region cache, what the
//! registry said), and a call to one server.
//!
//! Everything else a `NativeStore` does is in the files above this one,
//! each an `impl NativeStore` of its own (see the [module's](super) list):
//! the registry, the region cache, a region call with its retries, rows,
//! batches, scans, admin, and the `Store` trait.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;

use super::connection::{CallReply, Connection, ConnectionConfig, Service};
use super::error::NativeError;
use super::locate::RegionLocation;
use super::retry::{Attempts, FailedServers, RetryPolicy};
use super::zookeeper::ZooKeeperRegistry;
use crate::store::{TraceContext, TraceContextSource};

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
    /// [`Tls`](crate::security::Tls)'s. A ZooKeeper registry's reads stay
    /// plain (ZooKeeper's own TLS is not spoken).
    ///
    /// ```no_run
    /// use hmap::security::Tls;
    /// use hmap::store::native::{NativeConfig, NativeStore};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// // `scripts/hbase/hbase start --tls` prints the CA as HMAP_NATIVE_TLS_CA.
    /// let tls = Tls::with_ca_file("target/hbase/tls/ca.pem")?;
    /// let store = NativeStore::connect(NativeConfig::new(["127.0.0.1:16000"]).tls(tls)).await?;
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "tls")]
    pub fn tls(mut self, tls: crate::security::Tls) -> Self {
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
    /// `hbase.rpc.protection` and [`Kerberos::protection`](crate::security::Kerberos::protection)
    /// agree on (integrity and privacy wrap every message). Inside TLS
    /// too, with [`tls`](Self::tls). The handshake is part of each call's
    /// deadline; the calls run as the client's principal.
    ///
    /// ```no_run
    /// use hmap::security::Kerberos;
    /// use hmap::store::native::{NativeConfig, NativeStore};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// // `scripts/hbase/hbase start --kerberos` prints these as HMAP_PRINCIPAL,
    /// // HMAP_KEYTAB and HMAP_SERVER_PRINCIPAL (and HMAP_KRB5_CONFIG, for KRB5_CONFIG).
    /// let kerberos = Kerberos::keytab("hmap@HMAP.TEST", "target/hbase/krb/hmap.keytab")
    ///     .server_principal("hbase/localhost@HMAP.TEST");
    /// let store = NativeStore::connect(NativeConfig::new(["127.0.0.1:16000"]).kerberos(kerberos)).await?;
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "kerberos")]
    pub fn kerberos(mut self, kerberos: crate::security::Kerberos) -> Self {
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
    pub(super) regions: Mutex<HashMap<String, BTreeMap<Bytes, RegionLocation>>>,
    pub(super) meta: Mutex<Option<RegionLocation>>,
    /// The active master, `host:port`, once the registry named it.
    pub(super) master: Mutex<Option<String>>,
    /// The cluster's id, once the registry named it.
    pub(super) cluster_id: Mutex<Option<String>>,
    /// Table schemas (by the caller's name) that requests are checked against.
    pub(super) schemas: crate::store::check::SchemaCache,
    /// The nonce group of this store's admin calls: with a nonce per call,
    /// the master recognises a call sent again after a broken connection.
    pub(super) nonce_group: u64,
    /// Scanners open on region servers (see [`NativeStore::open_scanners`]).
    pub(super) open_scanners: Arc<AtomicUsize>,
    /// Servers that refused a connection lately, not dialled for a while.
    failed_servers: FailedServers,
}

impl NativeStore {
    /// A store on `config` that has asked no server anything yet:
    /// [`connect`](Self::connect) asks the registry first.
    pub(super) fn new(config: NativeConfig) -> Self {
        NativeStore {
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
        }
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
}
