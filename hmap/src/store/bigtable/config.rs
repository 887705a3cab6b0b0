//! [`BigtableConfig`]: where the store connects, and its deadlines; the
//! connection itself (one HTTP/2 channel, multiplexed).

use std::time::Duration;

use tonic::transport::{Channel, Endpoint};

use crate::store::{Result, StoreError};

/// The environment variable Google's clients read the emulator's address
/// from (`host:port`).
pub const EMULATOR_HOST_VARIABLE: &str = "BIGTABLE_EMULATOR_HOST";

/// How [`BigtableStore`](super::BigtableStore) reaches Bigtable, and each
/// call's deadline. Built with [`BigtableConfig::emulator`] and the builder
/// methods (`#[non_exhaustive]`: options will be added).
///
/// Only the emulator is reached today (plain HTTP/2, no credentials):
/// Cloud Bigtable needs TLS and OAuth2 access tokens, which are not done
/// yet (see `docs/bigtable.md`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BigtableConfig {
    /// The emulator's `host:port` (spoken to over plain HTTP/2).
    pub address: String,
    /// The Google Cloud project id (any id on the emulator).
    pub project: String,
    /// The Bigtable instance id (any id on the emulator).
    pub instance: String,
    /// The app profile of data calls; empty for the instance's default.
    pub app_profile: String,
    /// Each data call's deadline; for a scan, the deadline of each response
    /// of its stream.
    pub call_timeout: Duration,
    /// Each admin call's deadline (create, delete, truncate, alter).
    pub admin_timeout: Duration,
    /// The deadline of opening the connection.
    pub connect_timeout: Duration,
    /// Put before every table id on the wire, as NativeStore's
    /// `table_prefix`: callers and errors see names without it, and
    /// `list_tables` lists only the tables under it.
    pub table_prefix: String,
    /// The largest cell accepted, as HBase counts it (10 MiB, HBase's
    /// default `hbase.server.keyvalue.maxsize`; Bigtable's own limit is
    /// 100 MiB), so that an application gets the limits it has on HBase.
    pub max_value_size: usize,
    /// Drop a family's COMPRESSION, BLOOMFILTER, BLOCKSIZE, IN_MEMORY and
    /// BLOCKCACHE (Bigtable manages storage itself) with a warning, as
    /// Google's Java HBase adapter does, instead of refusing them with
    /// [`StoreError::Unsupported`] (the default: a schema tuned for HBase
    /// is not silently created as something else). `describe_table` then
    /// reports HBase's defaults for them.
    pub ignore_storage_options: bool,
}

impl BigtableConfig {
    /// The emulator at `address` (`host:port`, as `scripts/bigtable/emulator
    /// start` prints it in `HMAP_BIGTABLE`), project and instance `hmap`,
    /// 30 s per call.
    pub fn emulator(address: impl Into<String>) -> Self {
        BigtableConfig {
            address: address.into(),
            project: "hmap".into(),
            instance: "hmap".into(),
            app_profile: String::new(),
            call_timeout: Duration::from_secs(30),
            admin_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            table_prefix: String::new(),
            max_value_size: 10 * 1024 * 1024,
            ignore_storage_options: false,
        }
    }

    /// The emulator `BIGTABLE_EMULATOR_HOST` names, as Google's clients
    /// read it; `None` when it is unset or empty.
    pub fn from_emulator_env() -> Option<Self> {
        std::env::var(EMULATOR_HOST_VARIABLE)
            .ok()
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .map(BigtableConfig::emulator)
    }

    /// Sets the project id.
    pub fn project(mut self, project: impl Into<String>) -> Self {
        self.project = project.into();
        self
    }

    /// Sets the instance id.
    pub fn instance(mut self, instance: impl Into<String>) -> Self {
        self.instance = instance.into();
        self
    }

    /// Sets the app profile of data calls.
    pub fn app_profile(mut self, app_profile: impl Into<String>) -> Self {
        self.app_profile = app_profile.into();
        self
    }

    /// Sets each data call's deadline.
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Sets each admin call's deadline.
    pub fn admin_timeout(mut self, timeout: Duration) -> Self {
        self.admin_timeout = timeout;
        self
    }

    /// Sets the deadline of opening the connection.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Drops the storage options Bigtable has no place for instead of
    /// refusing them (see [`ignore_storage_options`](Self::ignore_storage_options)).
    pub fn ignore_storage_options(mut self, ignore: bool) -> Self {
        self.ignore_storage_options = ignore;
        self
    }

    /// Sets the prefix of every table id on the wire.
    pub fn table_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.table_prefix = prefix.into();
        self
    }

    /// The instance's resource name, `projects/P/instances/I`.
    pub(crate) fn instance_name(&self) -> String {
        format!("projects/{}/instances/{}", self.project, self.instance)
    }

    /// Opens the channel, within [`connect_timeout`](Self::connect_timeout).
    pub(crate) async fn connect(&self) -> Result<Channel> {
        let connection =
            |message: String, source: Option<Box<dyn std::error::Error + Send + Sync>>| StoreError::Connection {
                endpoint: self.address.clone(),
                message,
                source,
            };
        let endpoint = Endpoint::from_shared(format!("http://{}", self.address))
            .map_err(|e| connection(format!("`{}` is not a host:port", self.address), Some(Box::new(e))))?
            .connect_timeout(self.connect_timeout)
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(30))
            .keep_alive_while_idle(true);
        match tokio::time::timeout(self.connect_timeout, endpoint.connect()).await {
            Ok(Ok(channel)) => Ok(channel),
            Ok(Err(e)) => Err(connection(
                format!(
                    "cannot connect to the Bigtable emulator: {e} (start one with scripts/bigtable/emulator start)"
                ),
                Some(Box::new(e)),
            )),
            Err(_) => Err(connection(
                format!("no connection within {:?}", self.connect_timeout),
                None,
            )),
        }
    }
}
