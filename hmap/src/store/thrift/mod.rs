//! [`Store`]s over HBase's Thrift gateways: [`ThriftStore`] for Thrift2
//! (`THBaseService`), [`Thrift1Store`] for the original Thrift1 service
//! (`Hbase`), on the same codec, transport and call machinery.
//!
//! Thrift2 is the gateway that carries what hmap needs: time ranges and
//! versions on gets and scans, every family option, split keys at table
//! creation, atomic row mutations and check-and-mutate. Start one with
//! `hbase thrift2 -p 9091` (or this repository's `scripts/hbase/hbase start`).
//!
//! The client speaks Thrift's binary protocol, strict, or the compact one
//! (`ThriftConfig::protocol`, for a gateway started with `-c`), on a plain
//! TCP socket: unframed, the gateway's default, or framed
//! (`ThriftConfig::framed`, for a gateway started with `-f`, `-hsha` or
//! `-nonblocking`); or over HTTP or HTTPS (`ThriftConfig::http`, for a
//! gateway in HTTP mode). The layers, written by hand for the calls hmap
//! makes (no code generator, Thrift or HTTP library; TLS is rustls):
//!
//! - `codec`: the binary and compact protocols, sans-IO (bytes in, values
//!   out), depth- and length-limited, fuzzed;
//! - `hbase`: the Thrift2 IDL's structs and results on top of it;
//! - `hbase1`: the same for the original Thrift1 IDL (`Hbase.thrift`);
//! - `http`: HTTP/1.1 requests and responses, sans-IO and bounded;
//! - `transport`: the socket (with TLS), one deadline per call;
//! - `client`: the pool, one call with its deadline and retries, the
//!   errors, the scanner task: what both stores share;
//! - `thrift1`: [`Thrift1Store`], the store over a Thrift1 gateway.

mod client;
mod codec;
pub(crate) mod filter;
mod hbase;
mod hbase1;
mod http;
mod probe;
#[cfg(feature = "kerberos")]
mod sasl;
mod thrift1;
mod transport;

use rustc_hash::FxHashSet;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;

use self::client::{Client, Gateway, ScanFetcher, ScannerCalls, counter_error, split_points};
pub use self::codec::Protocol as ThriftProtocol;
use self::codec::{DecodeError, Encoder, Reader, TType};
pub use self::thrift1::{Thrift1Store, unsupported as thrift1_unsupported};
use self::transport::HttpWire;
use super::check::{
    check_append, check_conditional, check_family_change, check_gets, check_increment, check_load_row, check_mutation,
    check_read, check_schema, check_table_name,
};
use super::outcome::send_checked;
use super::traced;
use super::{
    Append, BatchOutcome, CheckAndMutate, FIRST_SIZED_BATCH_ROWS, FamilyChange, Get, Increment, LoadBatch,
    MAX_SIZED_BATCH_ROWS, Result, RowMutation, RowResult, RowStream, Scan, Store, StoreError,
};
use crate::schema::TableSchema;

/// What [`ThriftStore`] cannot express, each the `feature` of the
/// [`StoreError::Unsupported`] it returns, before anything is sent.
pub mod unsupported {
    /// Thrift2's `checkAndMutate` takes a column, an operator and a value:
    /// no `TimeRange` (HBase's `CheckAndMutate.Builder.timeRange`).
    pub const CHECK_TIME_RANGE: &str = "a time range in a check-and-mutate";
    /// Thrift2's `checkAndMutate` takes a column, an operator and a value:
    /// no filter (HBase 2.4's `CheckAndMutate.Builder.ifMatches(Filter)`).
    pub const CHECK_FILTER: &str = "a filter as the condition of a check-and-mutate";
}

/// About how many bytes of rows one `get_many` call through a gateway
/// brings back: a gateway builds each reply whole in its heap, and one
/// `getMultiple` of 3,000 rows of 100 KB ran a gateway with a 384 MiB heap
/// out of memory, which killed it. A `get_many` of more is read in several
/// calls: the first of [`FIRST_SIZED_BATCH_ROWS`] gets, the next sized by
/// the rows seen so far (at most [`MAX_SIZED_BATCH_ROWS`] gets), as scans
/// sized by bytes are.
const GET_MANY_REPLY_BYTES: usize = 4 * 1024 * 1024;

/// Reads `gets` with `call` (the gateway's `operation` on `table`) in
/// chunks, in order: the first of [`FIRST_SIZED_BATCH_ROWS`] gets, each
/// next one as many gets as `budget` bytes hold at the average size of the
/// rows read so far (found or not), between 1 and [`MAX_SIZED_BATCH_ROWS`].
/// A call must answer each get of its chunk: any other count is a
/// [`StoreError::Server`].
async fn in_sized_chunks<'g, F, Fut>(
    table: &str,
    operation: &'static str,
    gets: &'g [Get],
    budget: usize,
    mut call: F,
) -> Result<Vec<Option<RowResult>>>
where
    F: FnMut(&'g [Get]) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<Option<RowResult>>>>,
{
    let mut rows = Vec::with_capacity(gets.len());
    let mut bytes = 0;
    let mut start = 0;
    while start < gets.len() {
        let count = match start {
            0 => FIRST_SIZED_BATCH_ROWS,
            _ => (budget / (bytes / start).max(1)).clamp(1, MAX_SIZED_BATCH_ROWS),
        };
        let chunk = &gets[start..(start + count).min(gets.len())];
        let found = call(chunk).await?;
        if found.len() != chunk.len() {
            return Err(StoreError::Server {
                service: "HBase",
                table: table.into(),
                operation,
                message: format!("{} results for {} gets", found.len(), chunk.len()),
            });
        }
        bytes += found.iter().flatten().map(RowResult::wire_size).sum::<usize>();
        rows.extend(found);
        start += chunk.len();
    }
    Ok(rows)
}

/// [`ThriftConfig::max_request_bytes`] by default: 1 MiB.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// Settings of a [`ThriftStore`] or a [`Thrift1Store`]:
/// [`ThriftConfig::new`], then set the public fields (`#[non_exhaustive]`:
/// settings will be added).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ThriftConfig {
    /// The gateway, `host:port`.
    pub address: String,
    /// Connections kept at most; calls beyond wait for one (within their
    /// [`call_timeout`](Self::call_timeout)).
    pub pool_size: usize,
    /// How long connecting may take (within the call's deadline).
    pub connect_timeout: Duration,
    /// How long any one read may wait for the gateway's next bytes (within
    /// the call's deadline).
    pub read_timeout: Duration,
    /// How long a whole call may take: waiting for a pooled connection,
    /// connecting, sending, and reading every byte of the reply. A call past
    /// it fails with [`StoreError::Timeout`], which says how long it waited.
    /// A read retried on a new connection shares the same deadline. A call
    /// made with [`CallOptions`](crate::store::CallOptions) has theirs
    /// instead.
    pub call_timeout: Duration,
    /// A pooled connection idle this long is checked with a cheap call
    /// before use: gateways drop idle connections (after 60 s by default).
    pub idle_check: Duration,
    /// The largest value accepted, as HBase's client checks it
    /// (`hbase.client.keyvalue.maxsize`, 10 MiB).
    pub max_value_size: usize,
    /// The most bytes of rows one write call carries, about
    /// ([`RowMutation::wire_size`]): a `mutate` or a load of more is sent
    /// as several calls, one after the other (a row is never split, so one
    /// row larger than this is a call of its own). 1 MiB by default: HBase's
    /// own client sends at most 4 MiB a request
    /// (`hbase.client.max.perrequest.heapsize`), a framed gateway refuses a
    /// frame over 2 MiB, and a gateway reads each call whole into its heap
    /// (one call of 300 MB ran a gateway with a 384 MiB heap out of memory,
    /// which killed it).
    pub max_request_bytes: usize,
    /// Framed transport: each message after its length, as a gateway
    /// started with `-f` (or `-hsha`, `-nonblocking`,
    /// `-threadedselector`, which imply it) expects. Off: the gateway's
    /// default, unframed. A gateway of the other kind fails the first call
    /// with an error that says so, within a round trip: a framed binary
    /// connection's first call goes after a probe of two tiny
    /// `getThriftServerType` calls, whose answers are skipped, that an
    /// unframed gateway answers at once (see the transport's `PROBE`).
    pub framed: bool,
    /// The protocol: [`ThriftProtocol::Binary`], the gateway's default, or
    /// [`ThriftProtocol::Compact`] for a gateway started with `-c`
    /// (`hbase.regionserver.thrift.compact`). A gateway speaking the other
    /// one fails the first call with an error that says so.
    pub protocol: ThriftProtocol,
    /// HTTP transport: each call a `POST` to the gateway, as one in HTTP
    /// mode (`hbase.regionserver.thrift.http`, HTTPS with
    /// `hbase.thrift.ssl.enabled`) expects; see [`ThriftHttp`]. HBase's
    /// HTTP gateway reads only the binary protocol, and
    /// [`framed`](Self::framed) does not apply. `None`: a plain socket.
    pub http: Option<ThriftHttp>,
    /// Put before every table name on the wire, so that several
    /// applications or test runs share one cluster: with `staging_`, table
    /// `user` is `staging_user` in HBase. A prefix ending in `:` names an
    /// HBase namespace (which must exist). The store's callers and errors
    /// see names without it; [`Store::list_tables`] lists only the tables
    /// under it.
    pub table_prefix: String,
    /// Kerberos (feature `kerberos`): each connection authenticates with
    /// SASL GSSAPI before its first call, as HBase's gateways demand when
    /// `hbase.thrift.security.qop` is set, at the protection level the
    /// gateway demands (`auth`/`authentication`, `auth-int`/`integrity`,
    /// `auth-conf`/`privacy`: messages as they are, signed, or signed and
    /// encrypted). The servers' principal is the gateway's
    /// `hbase.thrift.kerberos.principal`, with `_HOST` the host name the
    /// gateway runs on (see [`Kerberos::server_principal`] and
    /// [`Kerberos::hostname`]). HBase's gateways serve SASL on
    /// unframed sockets only: with [`framed`](Self::framed) the first call
    /// fails saying so. With [`http`](Self::http) (a gateway in HTTP mode
    /// on a Kerberos cluster) every request carries a Kerberos token by
    /// SPNEGO instead (RFC 4559's `Authorization: Negotiate`), for the
    /// gateway's `hbase.thrift.spnego.principal` (`HTTP/_HOST@REALM`) as
    /// the servers' principal; the protection levels do not apply there
    /// (use HTTPS).
    ///
    /// ```no_run
    /// use hmap::security::Kerberos;
    /// use hmap::store::{ThriftConfig, ThriftStore};
    ///
    /// let mut config = ThriftConfig::new("gateway.example.com:9090");
    /// config.kerberos = Some(
    ///     Kerberos::keytab("app@EXAMPLE.COM", "/etc/security/keytabs/app.keytab")
    ///         .server_principal("hbase/_HOST@EXAMPLE.COM")
    ///         .hostname("gateway.example.com"),
    /// );
    /// let store = ThriftStore::with_config(config);
    /// ```
    ///
    /// [`Kerberos::server_principal`]: crate::security::Kerberos::server_principal
    /// [`Kerberos::hostname`]: crate::security::Kerberos::hostname
    #[cfg(feature = "kerberos")]
    pub kerberos: Option<crate::security::Kerberos>,
}

impl ThriftConfig {
    /// A gateway at `address`, 8 connections, 5 s to connect, 60 s per call
    /// and per read.
    pub fn new(address: impl Into<String>) -> Self {
        ThriftConfig {
            address: address.into(),
            pool_size: 8,
            connect_timeout: Duration::from_secs(5),
            read_timeout: Duration::from_secs(60),
            call_timeout: Duration::from_secs(60),
            idle_check: Duration::from_secs(20),
            max_value_size: 10 * 1024 * 1024,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            framed: false,
            protocol: ThriftProtocol::Binary,
            http: None,
            table_prefix: String::new(),
            #[cfg(feature = "kerberos")]
            kerberos: None,
        }
    }
}

/// HTTP transport for a [`ThriftStore`] ([`ThriftConfig::http`]): plain
/// HTTP, or HTTPS with the gateway's certificate checked (feature `tls`:
/// rustls, with the platform's root certificates or a CA of your own).
///
/// A response must be status 200 with a body delimited by its length or its
/// chunks (HBase's gateway sends chunks), holding one Thrift message; its
/// head may take 64 KiB, its body what any reply may (1 GiB). Anything else
/// is a typed error, and every read is within the call's deadline.
// The example needs the `tls` feature (doctests see hmap's features only
// through `cfg_attr` on the item).
#[cfg_attr(
    feature = "tls",
    doc = r#"
```no_run
use hmap::store::{ThriftConfig, ThriftHttp, ThriftStore};

# fn main() -> std::io::Result<()> {
let ca = std::fs::read("/etc/hbase/thrift-ca.pem")?;
let mut config = ThriftConfig::new("gateway.example.com:9095");
config.http = Some(ThriftHttp::https_with_ca(&ca)?);
let store = ThriftStore::with_config(config);
# Ok(()) }
```"#
)]
#[derive(Clone)]
pub struct ThriftHttp {
    path: String,
    server_name: Option<String>,
    do_as: Option<String>,
    #[cfg(feature = "tls")]
    tls: Option<crate::security::Tls>,
}

impl std::fmt::Debug for ThriftHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThriftHttp")
            .field("tls", &self.is_https())
            .field("path", &self.path)
            .field("server_name", &self.server_name)
            .field("do_as", &self.do_as)
            .finish()
    }
}

impl ThriftHttp {
    /// Plain HTTP, unencrypted, to path `/`.
    pub fn plain() -> Self {
        ThriftHttp {
            path: "/".into(),
            server_name: None,
            do_as: None,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }

    /// HTTPS, the gateway's certificate checked against the platform's root
    /// certificates (those `rustls-native-certs` finds). Fails if none can
    /// be read.
    #[cfg(feature = "tls")]
    pub fn https() -> std::io::Result<Self> {
        Ok(Self::https_with(crate::security::Tls::with_platform_roots()?))
    }

    /// HTTPS, the gateway's certificate checked against the CA
    /// certificates in `pem` (one or more `BEGIN CERTIFICATE` blocks) and
    /// no others: for a gateway whose certificate a private CA signed, or a
    /// self-signed one. Fails if `pem` holds no certificate.
    #[cfg(feature = "tls")]
    pub fn https_with_ca(pem: &[u8]) -> std::io::Result<Self> {
        Ok(Self::https_with(crate::security::Tls::with_ca_pem(pem)?))
    }

    /// HTTPS with the TLS settings every backend shares
    /// ([`Tls`](crate::security::Tls)): a CA or the platform's roots, a
    /// client certificate for a gateway that asks for one, the name the
    /// gateway's certificate must carry (which
    /// [`server_name`](Self::server_name) overrides).
    #[cfg(feature = "tls")]
    pub fn https_with(tls: crate::security::Tls) -> Self {
        ThriftHttp {
            tls: Some(tls),
            ..Self::plain()
        }
    }

    /// The request path, `/` by default (HBase's gateway serves every path).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// The name the gateway's certificate must carry, if not the host of
    /// [`ThriftConfig::address`] (a name or an IP address).
    pub fn server_name(mut self, name: impl Into<String>) -> Self {
        self.server_name = Some(name.into());
        self
    }

    /// Acts for `user`: each request asks the gateway to call HBase as
    /// that user (the `doAs` header), as a gateway with
    /// `hbase.thrift.support.proxyuser` allows the users that Hadoop's
    /// `hadoop.proxyuser.<caller>.*` settings let the caller impersonate;
    /// with Kerberos (`ThriftConfig::kerberos`, feature `kerberos`) the caller is the
    /// client's principal. A gateway that refuses answers HTTP 500, and the
    /// error says why that may be.
    pub fn do_as(mut self, user: impl Into<String>) -> Self {
        self.do_as = Some(user.into());
        self
    }

    /// Whether requests ask the gateway to act for another user
    /// ([`do_as`](Self::do_as)).
    pub fn acts_for_another(&self) -> bool {
        self.do_as.is_some()
    }

    /// Whether this is HTTPS.
    pub fn is_https(&self) -> bool {
        #[cfg(feature = "tls")]
        return self.tls.is_some();
        #[cfg(not(feature = "tls"))]
        false
    }

    /// The transport's settings for a gateway at `address`.
    fn wire(&self, address: &str) -> std::result::Result<HttpWire, String> {
        if let Some(user) = self
            .do_as
            .as_deref()
            .filter(|user| user.is_empty() || user.chars().any(char::is_control))
        {
            return Err(format!(
                "`ThriftHttp::do_as({user:?})`: a user name must be non-empty, without control characters"
            ));
        }
        #[cfg(feature = "tls")]
        let tls_name = self.tls.as_ref().and_then(|tls| tls.server_name_checked());
        #[cfg(not(feature = "tls"))]
        let tls_name: Option<&str> = None;
        let host = self
            .server_name
            .as_deref()
            .or(tls_name)
            .map(str::to_string)
            .unwrap_or_else(|| {
                // `host:port`, `[v6]:port`: the host, without brackets.
                let host = address.rsplit_once(':').map_or(address, |(host, _)| host);
                host.trim_start_matches('[').trim_end_matches(']').to_string()
            });
        #[cfg(feature = "tls")]
        let tls = match &self.tls {
            Some(tls) => {
                let name = tokio_rustls::rustls::pki_types::ServerName::try_from(host.clone())
                    .map_err(|_| format!("`{host}` is neither a DNS name nor an IP address for TLS"))?;
                Some((tls.client_config(), name))
            }
            None => None,
        };
        #[cfg(not(feature = "tls"))]
        let _ = host;
        Ok(HttpWire {
            host: address.to_string(),
            path: self.path.clone(),
            do_as: self.do_as.clone(),
            #[cfg(feature = "tls")]
            tls,
        })
    }
}

/// A store on a real HBase, through its Thrift2 gateway (`THBaseService`).
///
/// Thrift2 is the gateway that carries what hmap needs: time ranges and
/// versions on gets and scans, every family option, split keys at table
/// creation, atomic row mutations and check-and-mutate. Start one with
/// `hbase thrift2 -p 9091` (or this repository's `scripts/hbase/hbase start`).
///
/// It speaks Thrift's binary protocol (the gateway's default) or the
/// compact one ([`ThriftConfig::protocol`], for a gateway started with `-c`)
/// on a plain TCP socket, unframed (the gateway's default) or framed
/// ([`ThriftConfig::framed`], for a gateway started with `-f`, or `-hsha`,
/// `-nonblocking` and `-threadedselector`, which imply it); or each call as
/// an HTTP `POST`, over TLS if the gateway encrypts ([`ThriftConfig::http`],
/// [`ThriftHttp`], for a gateway with `hbase.regionserver.thrift.http`, and
/// `hbase.thrift.ssl.enabled`: in HBase 2.6 the Thrift gateway encrypts only
/// in HTTP mode). Against a gateway it does not match, the first call fails
/// with an error that says so.
///
/// ```no_run
/// use std::time::Duration;
/// use hmap::store::{Get, Store, ThriftConfig, ThriftStore};
///
/// # #[tokio::main] async fn main() -> Result<(), hmap::store::StoreError> {
/// let mut config = ThriftConfig::new("127.0.0.1:9091");
/// config.pool_size = 16;
/// config.call_timeout = Duration::from_secs(5); // each call, all of it
/// config.table_prefix = "staging_".into(); // tables `staging_<name>` in HBase
/// let store = ThriftStore::with_config(config);
/// store.ping().await?; // a Thrift2 gateway answers
/// let row = store.get("user", &Get::new("u1")).await?;
/// # Ok(()) }
/// ```
///
/// Puts go to the gateway in `putMultiple` batches, single deletes in
/// `deleteMultiple` ones, and a row mixing both in `mutateRow`; each row is
/// applied atomically, rows in order. A failed batch may have applied some of
/// its rows: writes are idempotent at a fixed timestamp, which hmap's typed
/// layer always sets, so retrying is safe.
///
/// Each call has one deadline, [`ThriftConfig::call_timeout`], covering the
/// wait for a pooled connection, connecting, sending and every read.
/// Connections are pooled; one that broke (the gateway restarted, or dropped
/// it while idle) is replaced. Reads that fail on a broken connection are
/// tried again on a new one, up to three attempts with a pause that grows
/// from 10 ms, all within the same deadline; writes are not, since whether
/// they were applied is unknown: they fail with [`StoreError::Connection`].
/// A call cancelled midway (its future dropped) closes its connection, so
/// no later call reads its reply.
///
/// Replies are checked against the Thrift2 IDL: a value of another type than
/// declared, nesting deeper than 64 levels, or a length beyond the bytes of
/// the reply is a [`StoreError::Protocol`], and the connection is dropped.
#[derive(Clone)]
pub struct ThriftStore {
    shared: Arc<Client>,
}

impl std::fmt::Debug for ThriftStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThriftStore")
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

impl ThriftStore {
    /// The refusal of a feature the Thrift2 gateway cannot express (see
    /// [`unsupported`]).
    fn unsupported(table: &str, feature: &'static str) -> StoreError {
        StoreError::Unsupported {
            backend: "ThriftStore",
            feature,
            table: table.into(),
        }
    }

    /// Refuses a filter the gateway cannot be sent: one HBase's filter
    /// language cannot express, without the `native` feature that encodes
    /// it as `filterBytes` (see [`filter`]).
    fn expressible(table: &str, filter: Option<&crate::store::Filter>, reversed: bool) -> Result<()> {
        match filter.map(|f| filter::thrift2_filter(f, reversed)) {
            Some(Err(feature)) => Err(Self::unsupported(table, feature)),
            _ => Ok(()),
        }
    }

    /// A store on the gateway at `address` (`host:port`), with default
    /// settings. Connects lazily; [`ping`](Self::ping) checks the gateway.
    pub fn new(address: impl Into<String>) -> Self {
        Self::with_config(ThriftConfig::new(address))
    }

    /// A store with chosen settings.
    pub fn with_config(config: ThriftConfig) -> Self {
        ThriftStore {
            shared: Arc::new(Client::new(config, Gateway::Two)),
        }
    }

    /// How many of the gateway's scanners this store holds open: opened by
    /// [`scan`](Store::scan) and not yet closed. Each scanner is read by a
    /// task of its own, which closes it (`closeScanner`) once the rows run
    /// out or the stream is dropped, moments later. A scanner whose close
    /// could not reach the gateway (or whose runtime shut down first) stays
    /// counted; the gateway expires it after its lease
    /// (`hbase.client.scanner.timeout.period`, 60 s by default).
    pub fn open_scanners(&self) -> usize {
        self.shared.open_scanners()
    }

    /// Checks that the gateway answers, and that it is a Thrift2 one.
    ///
    /// Any Thrift2 gateway answers this call at once, so one that stays
    /// silent until [`ThriftConfig::call_timeout`] most likely waits for
    /// bytes in another transport or protocol (an unframed gateway reading a
    /// framed call, say): that is a [`StoreError::Connection`] that says so,
    /// not a [`StoreError::Timeout`].
    pub async fn ping(&self) -> Result<()> {
        self.shared.ping().await
    }

    /// What `call` gave, with a gateway's bare message for a table dropped
    /// behind this store confirmed and answered as `TableNotFound`.
    async fn confirmed<T>(&self, table: &str, call: impl Future<Output = Result<T>>) -> Result<T> {
        let result = call.await;
        self.shared
            .confirm_table(table, result, || self.table_exists(table))
            .await
    }

    /// The table's schema and what `check` makes of a request against it
    /// (described again when the cached schema lacks a family it names).
    async fn checked<T>(
        &self,
        table: &str,
        check: impl Fn(&TableSchema) -> Result<T>,
    ) -> Result<(Arc<TableSchema>, T)> {
        self.shared
            .checked_schema(table, || self.descriptor(table), check)
            .await
    }

    /// The table's descriptor: families and metadata, without the split
    /// points (what the schema cache and request checks need).
    async fn descriptor(&self, table: &str) -> Result<TableSchema> {
        check_table_name(table, &self.shared.config.table_prefix)?;
        let described = self.shared.call(
            table,
            "getTableDescriptor",
            true,
            |e| hbase::table_name(e, 1, &self.shared.wire(table)),
            |r| hbase::reply(r, TType::Struct, hbase::table_descriptor_of),
        );
        match described.await {
            Ok(mut schema) => {
                schema.name = table.to_string();
                Ok(schema)
            }
            // The gateway passes on only the exception's message, which for
            // a missing table is its bare name: ask whether it exists.
            Err(StoreError::Server { .. }) if !self.table_exists(table).await? => {
                Err(StoreError::TableNotFound { table: table.into() })
            }
            Err(e) => Err(e),
        }
    }

    /// Disables a table before it is deleted or truncated: `TableNotFound`
    /// when there is none, and a table disabled already is fine.
    async fn disable_existing(&self, table: &str) -> Result<()> {
        let exists = self.table_exists(table).await?;
        self.shared
            .disable_existing(table, exists, |e| hbase::table_name(e, 1, &self.shared.wire(table)))
            .await
    }

    /// Rows of puts in one `putMultiple`: each row's puts one TPut, applied
    /// atomically.
    async fn put_multiple(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        self.shared
            .call_void(table, "putMultiple", |e| {
                hbase::put_multiple(e, self.shared.wire(table).as_bytes(), rows);
            })
            .await
    }

    /// Rows of one delete each in one `deleteMultiple`; the gateway returns
    /// the deletes it could not apply.
    async fn delete_multiple(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        let failed = self
            .shared
            .call(
                table,
                "deleteMultiple",
                false,
                |e| {
                    e.binary_field(1, self.shared.wire(table).as_bytes());
                    hbase::struct_list(e, 2, rows, |e, r| {
                        if let Some(spec) = r.mutations.first().and_then(hbase::DeleteSpec::of) {
                            hbase::delete_fields(e, &r.row, &spec);
                        }
                    });
                },
                |r| hbase::reply(r, TType::List, hbase::delete_rows),
            )
            .await?;
        match failed.first() {
            None => Ok(()),
            Some(row) => Err(StoreError::Server {
                service: "HBase",
                table: table.into(),
                operation: "deleteMultiple",
                message: format!("the delete of row {} was not applied", super::error::show_row(row)),
            }),
        }
    }

    /// The start key of each of the table's regions, sorted (the first
    /// region's is empty): how a table is split, as in HBase's
    /// `RegionLocator.getStartKeys`. A table created from a salted key's
    /// schema has one region per bucket.
    pub async fn region_start_keys(&self, table: &str) -> Result<Vec<Bytes>> {
        let mut starts = self
            .shared
            .call(
                table,
                "getAllRegionLocations",
                true,
                |e| e.binary_field(1, self.shared.wire(table).as_bytes()),
                |r| hbase::reply(r, TType::List, hbase::region_starts),
            )
            .await?;
        starts.sort();
        Ok(starts)
    }

    /// Rows in one `getMultiple`, in the order of `gets` (the count is
    /// checked by [`in_sized_chunks`]).
    async fn get_multiple(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<RowResult>>> {
        self.shared
            .call(
                table,
                "getMultiple",
                true,
                |e| {
                    e.binary_field(1, self.shared.wire(table).as_bytes());
                    hbase::struct_list(e, 2, gets, hbase::get);
                },
                |r| hbase::reply(r, TType::List, hbase::results),
            )
            .await
    }

    /// Rows `rows` of a load batch in one `putMultiple` (rows without puts
    /// are left out; the caller sends none of only those).
    async fn put_multiple_loaded(&self, table: &str, batch: &LoadBatch, rows: Range<usize>) -> Result<()> {
        self.shared
            .call_void(table, "putMultiple", |e| {
                hbase::put_multiple_loaded(e, self.shared.wire(table).as_bytes(), batch, rows.clone());
            })
            .await
    }

    async fn mutate_row(&self, table: &str, m: &RowMutation) -> Result<()> {
        self.shared
            .call_void(table, "mutateRow", |e| {
                e.binary_field(1, self.shared.wire(table).as_bytes());
                hbase::row_mutations(e, 2, &m.row, &m.mutations);
            })
            .await
    }
}

#[async_trait]
impl Store for ThriftStore {
    fn forget_schema(&self, table: &str) {
        self.shared.forget_schema(table);
    }

    async fn create_table(&self, schema: &TableSchema) -> Result<()> {
        traced("thrift", "create_table", &schema.name, 0, async move {
            check_schema(schema, &self.shared.config.table_prefix)?;
            self.shared.forget_schema(&schema.name);
            // HBase's framed Thrift2 gateway reads a descriptor's attributes
            // from the wrong bytes (the whole request frame becomes the key
            // and the value): on it, the table is created without them.
            let stripped;
            let schema = if self.shared.config.framed && !schema.metadata.is_empty() {
                tracing::warn!(
                    table = %schema.name,
                    gateway = %self.shared.config.address,
                    "a framed Thrift2 gateway cannot carry table metadata; the table is created without it \
                     (its key layout is not recorded)"
                );
                stripped = TableSchema {
                    metadata: Default::default(),
                    ..schema.clone()
                };
                &stripped
            } else {
                schema
            };
            self.shared
                .call_void(&schema.name, "createTable", |e| {
                    hbase::table_descriptor(e, 1, &self.shared.wire(&schema.name), schema);
                    if !schema.split_keys.is_empty() {
                        e.field(TType::List, 2);
                        e.list(TType::String, schema.split_keys.len());
                        for k in &schema.split_keys {
                            e.string(k);
                        }
                    }
                })
                .await
        })
        .await
    }

    async fn delete_table(&self, table: &str) -> Result<()> {
        traced("thrift", "delete_table", table, 0, async move {
            check_table_name(table, &self.shared.config.table_prefix)?;
            self.shared.forget_schema(table);
            self.disable_existing(table).await?;
            self.shared
                .call_void(table, "deleteTable", |e| {
                    hbase::table_name(e, 1, &self.shared.wire(table))
                })
                .await
        })
        .await
    }

    /// `disableTable`, then `truncateTable` with `preserveSplits`; HBase
    /// enables the table again.
    async fn truncate_table(&self, table: &str) -> Result<()> {
        traced("thrift", "truncate_table", table, 0, async move {
            self.disable_existing(table).await?;
            self.shared
                .call_void(table, "truncateTable", |e| {
                    hbase::table_name(e, 1, &self.shared.wire(table));
                    e.bool_field(2, true);
                })
                .await
        })
        .await
    }

    /// Checked against the table as the gateway describes it now (not the
    /// cached schema), then `addColumnFamily`, `modifyColumnFamily` or
    /// `deleteColumnFamily`. A modified family is sent whole: options hmap
    /// does not model (`DATA_BLOCK_ENCODING`, `KEEP_DELETED_CELLS`, ...)
    /// return to HBase's defaults.
    async fn alter_table(&self, table: &str, change: &FamilyChange) -> Result<()> {
        traced("thrift", "alter_table", table, 0, async move {
            self.shared.forget_schema(table);
            let live = self.descriptor(table).await?;
            check_family_change(&live, change)?;
            let name = |e: &mut Encoder| hbase::table_name(e, 1, &self.shared.wire(table));
            let altered = match change {
                FamilyChange::Add(f) => {
                    self.shared
                        .call_void(table, "addColumnFamily", |e| {
                            name(e);
                            hbase::family_descriptor(e, 2, f);
                        })
                        .await
                }
                FamilyChange::Modify(f) => {
                    self.shared
                        .call_void(table, "modifyColumnFamily", |e| {
                            name(e);
                            hbase::family_descriptor(e, 2, f);
                        })
                        .await
                }
                // HBase's framed Thrift2 gateway reads this call's family
                // name from the wrong bytes (the whole request frame).
                FamilyChange::Delete(_) if self.shared.config.framed => Err(StoreError::InvalidRequest {
                    table: table.into(),
                    reason: "HBase's framed Thrift2 gateway misreads deleteColumnFamily's family name; delete the \
                             family through an unframed gateway or the HBase shell"
                        .into(),
                }),
                FamilyChange::Delete(family) => {
                    self.shared
                        .call_void(table, "deleteColumnFamily", |e| {
                            name(e);
                            e.binary_field(2, family.as_bytes());
                        })
                        .await
                }
            };
            self.shared.forget_schema(table);
            altered
        })
        .await
    }

    async fn table_exists(&self, table: &str) -> Result<bool> {
        traced("thrift", "table_exists", table, 0, async move {
            check_table_name(table, &self.shared.config.table_prefix)?;
            self.shared
                .call(
                    table,
                    "tableExists",
                    true,
                    |e| hbase::table_name(e, 1, &self.shared.wire(table)),
                    |r| hbase::reply(r, TType::Bool, Reader::bool),
                )
                .await
        })
        .await
    }

    async fn list_tables(&self) -> Result<Vec<String>> {
        traced("thrift", "list_tables", "", 0, async move {
            let names = self
                .shared
                .call(
                    "",
                    "getTableNamesByPattern",
                    true,
                    |e| e.bool_field(2, false),
                    |r| hbase::reply(r, TType::List, hbase::table_names),
                )
                .await?;
            Ok(self.shared.unprefixed(names))
        })
        .await
    }

    async fn describe_table(&self, table: &str) -> Result<TableSchema> {
        traced("thrift", "describe_table", table, 0, async move {
            let mut schema = self.descriptor(table).await?;
            // How the table is split now: its regions' start keys, the first
            // (empty) one aside.
            schema.split_keys = split_points(self.region_start_keys(table).await?);
            Ok(schema)
        })
        .await
    }

    async fn get(&self, table: &str, get: &Get) -> Result<Option<RowResult>> {
        traced(
            "thrift",
            "get",
            table,
            1,
            self.confirmed(table, async move {
                self.checked(table, |schema| check_gets(schema, std::slice::from_ref(get)))
                    .await?;
                Self::expressible(table, get.filter.as_ref(), false)?;
                let result = self
                    .shared
                    .call(
                        table,
                        "get",
                        true,
                        |e| {
                            e.binary_field(1, self.shared.wire(table).as_bytes());
                            e.field(TType::Struct, 2);
                            hbase::get(e, get);
                        },
                        |r| hbase::reply(r, TType::Struct, hbase::result),
                    )
                    .await?;
                Ok(result.map(|mut r| {
                    if r.row.is_empty() {
                        r.row = get.row.clone();
                    }
                    r
                }))
            }),
        )
        .await
    }

    async fn get_many(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<RowResult>>> {
        traced(
            "thrift",
            "get_many",
            table,
            gets.len(),
            self.confirmed(table, async move {
                self.checked(table, |schema| check_gets(schema, gets)).await?;
                gets.iter()
                    .try_for_each(|g| Self::expressible(table, g.filter.as_ref(), false))?;
                if gets.is_empty() {
                    return Ok(Vec::new());
                }
                in_sized_chunks(table, "getMultiple", gets, GET_MANY_REPLY_BYTES, |chunk| {
                    self.get_multiple(table, chunk)
                })
                .await
            }),
        )
        .await
    }

    async fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        traced(
            "thrift",
            "mutate",
            table,
            rows.len(),
            self.confirmed(table, async move {
                // Every row is checked before anything is sent; its kind is
                // read in the same pass, while its cells are in the cache.
                let (_, kinds) = self
                    .checked(table, |schema| {
                        rows.iter()
                            .map(|r| {
                                check_mutation(schema, &r.row, &r.mutations, self.shared.config.max_value_size)?;
                                Ok(RowKind::of(r))
                            })
                            .collect::<Result<Vec<_>>>()
                    })
                    .await?;
                for batch in batches(rows, &kinds, self.shared.config.max_request_bytes) {
                    match batch {
                        Batch::Puts(rows) => self.put_multiple(table, rows).await?,
                        Batch::Deletes(rows) => self.delete_multiple(table, rows).await?,
                        Batch::Mixed(row) => self.mutate_row(table, row).await?,
                    }
                }
                Ok(())
            }),
        )
        .await
    }

    /// The rows checked one by one, the valid ones written as `mutate`
    /// writes them; a request that fails leaves its rows unknown (see
    /// `docs/guide.md`, "Per-row results").
    async fn mutate_each(&self, table: &str, rows: &[RowMutation]) -> Result<BatchOutcome> {
        traced(
            "thrift",
            "mutate_each",
            table,
            rows.len(),
            self.confirmed(table, async move {
                let checked = self.shared.checked_rows(table, || self.descriptor(table), rows).await?;
                Ok(send_checked(rows, checked, |valid| async move { self.mutate(table, &valid).await }).await)
            }),
        )
        .await
    }

    async fn load(&self, table: &str, batch: &LoadBatch) -> Result<()> {
        traced(
            "thrift",
            "load",
            table,
            batch.len(),
            self.confirmed(table, async move {
                self.checked(table, |schema| {
                    batch
                        .rows()
                        .try_for_each(|row| check_load_row(schema, &row, self.shared.config.max_value_size))
                })
                .await?;
                // Straight from the batch's buffer: one `putMultiple` per run of
                // rows in which no key repeats.
                let key = |i: usize| batch.get(i).map_or(&[][..], |r| r.key());
                let size = |i: usize| batch.get(i).map_or(0, |r| r.wire_size());
                let budget = self.shared.config.max_request_bytes;
                let mut start = 0;
                while start < batch.len() {
                    let end = distinct_run_end(start, batch.len(), |_| true, key, size, budget);
                    if (start..end).filter_map(|i| batch.get(i)).any(|r| r.cell_count() > 0) {
                        self.put_multiple_loaded(table, batch, start..end).await?;
                    }
                    start = end;
                }
                Ok(())
            }),
        )
        .await
    }

    async fn scan<'a>(&'a self, table: &str, scan: &Scan) -> Result<RowStream<'a>> {
        traced(
            "thrift",
            "scan",
            table,
            0,
            self.confirmed(table, async move {
                self.checked(table, |schema| {
                    check_read(schema, &scan.columns, scan.max_versions, scan.time_range)
                        .and_then(|()| crate::store::check::check_filter(&schema.name, scan.filter.as_ref()))
                })
                .await?;
                Self::expressible(table, scan.filter.as_ref(), scan.reversed)?;
                // The gateway would read a stop equal to the start as a one-row get.
                if scan.is_empty_range() {
                    let none: RowStream<'a> = Box::pin(futures_util::stream::empty());
                    return Ok(none);
                }
                // HBase reads a reversed scan from its start row (inclusive, the
                // high end) down to its stop row (exclusive). hmap's range is low to
                // high with the low end inclusive: start from the high end, skip a
                // row equal to it, and stop below the low end here.
                // A filter must not see the row equal to the high end, which
                // a stateful one (a PageFilter, a WhileMatchFilter) would
                // count: with one, start just before it, as HBase's Java
                // client starts a reversed scan whose start row is excluded
                // (`ConnectionUtils.createClosestRowBefore`).
                // Nor rows below the range, where a filter may fail or count
                // too: its stop (exclusive) is then the row just before the
                // low end.
                let (start, stop) = if scan.reversed {
                    if scan.filter.is_some() {
                        let below = |row: &Bytes| {
                            if row.is_empty() {
                                Bytes::new()
                            } else {
                                closest_row_before(row)
                            }
                        };
                        (below(&scan.stop), below(&scan.start))
                    } else {
                        (scan.stop.clone(), Bytes::new())
                    }
                } else {
                    (scan.start.clone(), scan.stop.clone())
                };
                let id = self
                    .shared
                    .call(
                        table,
                        "openScanner",
                        false,
                        |e| {
                            e.binary_field(1, self.shared.wire(table).as_bytes());
                            e.field(TType::Struct, 2);
                            hbase::scan(e, scan, &start, &stop);
                        },
                        |r| hbase::reply(r, TType::I32, Reader::i32),
                    )
                    .await?;
                Ok(ScanFetcher::start(
                    Arc::clone(&self.shared),
                    &SCANNER,
                    table,
                    id,
                    scan,
                    0,
                ))
            }),
        )
        .await
    }

    async fn check_and_mutate(&self, table: &str, op: &CheckAndMutate) -> Result<bool> {
        traced(
            "thrift",
            "check_and_mutate",
            table,
            1,
            self.confirmed(table, async move {
                self.checked(table, |schema| {
                    check_conditional(schema, op, self.shared.config.max_value_size)
                })
                .await?;
                if op.filter.is_some() {
                    return Err(Self::unsupported(table, unsupported::CHECK_FILTER));
                }
                if !op.time_range.is_all() {
                    return Err(Self::unsupported(table, unsupported::CHECK_TIME_RANGE));
                }
                // checkAndMutate { 1: table, 2: row, 3: family, 4: qualifier,
                // 5: compareOp, 6: value, 7: rowMutations }. The gateway passes the
                // value to `ifMatches` as it is (it cannot be left out: a null one
                // fails there), and HBase's region treats an empty expected value as
                // its client's `ifNotExists()` does (`HRegion.checkAndMutateInternal`:
                // `valueIsNull`): an absent column passes. So "absent" is EQUAL to
                // the empty value, and may guard deletes as well as puts. HBase
                // reads the operator as `given op stored`: it goes mirrored.
                let expected = op.expected.as_deref().unwrap_or_default();
                self.shared
                    .call(
                        table,
                        "checkAndMutate",
                        false,
                        |e| {
                            e.binary_field(1, self.shared.wire(table).as_bytes());
                            e.binary_field(2, &op.row);
                            e.binary_field(3, &op.family);
                            e.binary_field(4, &op.qualifier);
                            e.i32_field(5, hbase::compare_op(op.compare.mirrored()));
                            e.binary_field(6, expected);
                            hbase::row_mutations(e, 7, &op.row, &op.mutations);
                        },
                        |r| hbase::reply(r, TType::Bool, Reader::bool),
                    )
                    .await
            }),
        )
        .await
    }

    /// `append(TAppend)`: the gateway's Java client sends it with a nonce of
    /// its own, for its own retries; a call of this store that fails after
    /// it was sent is not sent again.
    async fn append(&self, table: &str, op: &Append) -> Result<RowResult> {
        traced(
            "thrift",
            "append",
            table,
            1,
            self.confirmed(table, async move {
                self.checked(table, |schema| {
                    check_append(schema, op, self.shared.config.max_value_size)
                })
                .await?;
                if op.columns.is_empty() {
                    return Ok(RowResult::new(op.row.clone(), Vec::new()));
                }
                let row = self
                    .shared
                    .call(
                        table,
                        "append",
                        false,
                        |e| {
                            e.binary_field(1, self.shared.wire(table).as_bytes());
                            e.field(TType::Struct, 2);
                            hbase::append(e, &op.row, &op.columns);
                        },
                        |r| hbase::reply(r, TType::Struct, hbase::result),
                    )
                    .await?;
                if !op.answered_by(row.as_ref()) {
                    // Applied, without the values (see `Increment::read_back`).
                    return Ok(op.answer(self.get(table, &op.read_back()).await?));
                }
                Ok(op.answer(row))
            }),
        )
        .await
    }

    async fn increment(&self, table: &str, op: &Increment) -> Result<Vec<i64>> {
        traced(
            "thrift",
            "increment",
            table,
            1,
            self.confirmed(table, async move {
                self.checked(table, |schema| check_increment(schema, &op.row, &op.columns))
                    .await?;
                let result = self.shared.call(
                    table,
                    "increment",
                    false,
                    |e| {
                        e.binary_field(1, self.shared.wire(table).as_bytes());
                        e.field(TType::Struct, 2);
                        hbase::increment(e, &op.row, &op.columns);
                    },
                    |r| hbase::reply(r, TType::Struct, hbase::result),
                );
                let row = result.await.map_err(|e| counter_error(e, &op.row, &op.columns))?;
                if !op.answered_by(row.as_ref()) {
                    // Applied, without the values (see `Increment::read_back`):
                    // read them, other increments since included.
                    let read = self.get(table, &op.read_back()).await?;
                    return counters(table, op, read.unwrap_or_default());
                }
                counters(table, op, row.unwrap_or_default())
            }),
        )
        .await
    }
}

/// Thrift2's scanner calls: `getScannerRows(1: i32 scannerId, 2: i32
/// numRows)`, `closeScanner(1: i32 scannerId)`.
static SCANNER: ScannerCalls = ScannerCalls {
    fetch: "getScannerRows",
    close: "closeScanner",
    rows: |r| {
        hbase::reply(r, TType::List, hbase::results).map(|rows| rows.map(|rows| rows.into_iter().flatten().collect()))
    },
};

/// Feeds `data` to the reply decoder, for the fuzz target
/// (`fuzz/fuzz_targets/decode_reply.rs`) and the mutation test: its first
/// byte picks the protocol (its high bit: compact), a result reader and the
/// size of the pieces the skim is fed, the rest is the message. Panics only where the decoder breaks its own
/// promises: the skim must agree with itself whether fed whole or in pieces,
/// never claim more bytes than it was given, and the decoder must accept
/// nothing the skim refused. Not part of hmap's API.
#[doc(hidden)]
pub fn fuzz_reply(data: &[u8]) {
    use self::codec::{Skim, Skimmed};
    let Some((&which, bytes)) = data.split_first() else {
        return;
    };
    let protocol = if which & 0x80 == 0 {
        ThriftProtocol::Binary
    } else {
        ThriftProtocol::Compact
    };
    let whole = Skim::of(protocol).advance(bytes);
    let step = usize::from(which % 7) + 1;
    let mut skim = Skim::of(protocol);
    let mut end = 0;
    let pieces = loop {
        end = (end + step).min(bytes.len());
        match skim.advance(bytes.get(..end).unwrap_or_default()) {
            Ok(Skimmed::NeedMore(_)) if end < bytes.len() => continue,
            other => break other,
        }
    };
    // A message that is not binary Thrift shows the bytes there were.
    let same = |a: &std::result::Result<Skimmed, DecodeError>| match a {
        Err(DecodeError::NotBinary { .. }) => Err(DecodeError::NotBinary { start: Vec::new() }),
        Err(DecodeError::NotCompact { .. }) => Err(DecodeError::NotCompact { start: Vec::new() }),
        other => other.clone(),
    };
    assert_eq!(
        same(&whole),
        same(&pieces),
        "the skim differs when fed in pieces of {step}"
    );
    let message = match whole {
        Ok(Skimmed::Done(len)) => {
            assert!(len <= bytes.len(), "the skim claims {len} of {} bytes", bytes.len());
            Bytes::copy_from_slice(bytes.get(..len).unwrap_or_default())
        }
        // An incomplete or refused message: the decoder must refuse it too.
        _ => Bytes::copy_from_slice(bytes),
    };
    // The low seven bits pick the reader: Thrift2's nine, then Thrift1's seven.
    let pick = (which & 0x7f) % 16;
    let decoded = codec::open_any_reply(protocol, message).and_then(|(_, _, opened)| {
        let Ok(r) = opened else { return Ok(()) };
        match pick {
            0 => hbase::reply(r, TType::Struct, hbase::result).map(drop),
            1 => hbase::reply(r, TType::List, hbase::results).map(drop),
            2 => hbase::reply(r, TType::Bool, Reader::bool).map(drop),
            3 => hbase::reply(r, TType::I32, Reader::i32).map(drop),
            4 => hbase::void(r).map(drop),
            5 => hbase::reply(r, TType::Struct, hbase::table_descriptor_of).map(drop),
            6 => hbase::reply(r, TType::List, hbase::region_starts).map(drop),
            7 => hbase::reply(r, TType::List, hbase::table_names).map(drop),
            8 => hbase::reply(r, TType::List, hbase::delete_rows).map(drop),
            thrift1 => self::thrift1::decode_reply(thrift1 - 9, r),
        }
    });
    if decoded.is_ok() {
        assert!(
            matches!(whole, Ok(Skimmed::Done(_))),
            "decoded a message the skim did not accept: {whole:?}"
        );
    }
}

/// The new value of each counter of `op`, from the cells of `reply`: each
/// requested column gets a cell of its own family and qualifier (the reply
/// is sorted by column, not in the order asked), and no cell serves twice.
fn counters(table: &str, op: &Increment, reply: RowResult) -> Result<Vec<i64>> {
    let mut used = vec![false; reply.cells.len()];
    op.columns
        .iter()
        .map(|(f, q, _)| {
            let column = || super::error::show_column(f, q);
            let found = reply
                .cells
                .iter()
                .zip(used.iter_mut())
                .find(|(c, used)| !**used && c.family == f && c.qualifier == q);
            let (cell, used) = found.ok_or_else(|| StoreError::Server {
                service: "HBase",
                table: table.into(),
                operation: "increment",
                message: format!("the reply holds no value for column {}", column()),
            })?;
            *used = true;
            let counter = <[u8; 8]>::try_from(&cell.value[..]).map_err(|_| StoreError::Server {
                service: "HBase",
                table: table.into(),
                operation: "increment",
                message: format!(
                    "the reply's value of column {} is {} bytes, not an 8-byte counter",
                    column(),
                    cell.value.len()
                ),
            })?;
            Ok(i64::from_be_bytes(counter))
        })
        .collect()
}

/// A run of rows sent in one call.
enum Batch<'a> {
    /// Rows of puts only: `putMultiple`.
    Puts(&'a [RowMutation]),
    /// Rows of a single delete each: `deleteMultiple`.
    Deletes(&'a [RowMutation]),
    /// A row mixing puts and deletes, or of several deletes: `mutateRow`,
    /// which applies them atomically and in order.
    Mixed(&'a RowMutation),
}

/// What one row asks of the gateway, for [`batches`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RowKind {
    /// No mutations: nothing is sent.
    Nothing,
    /// Puts only: one TPut of a `putMultiple`.
    Puts,
    /// A single delete: one TDelete of a `deleteMultiple`.
    OneDelete,
    /// Puts and deletes, or several deletes: a `mutateRow` of its own.
    Mixed,
}

impl RowKind {
    fn of(row: &RowMutation) -> Self {
        let deletes = row
            .mutations
            .iter()
            .filter(|m| !matches!(m, crate::store::Mutation::Put { .. }))
            .count();
        match (row.mutations.len(), deletes) {
            (0, _) => RowKind::Nothing,
            (_, 0) => RowKind::Puts,
            (1, 1) => RowKind::OneDelete,
            _ => RowKind::Mixed,
        }
    }
}

/// The end of the run of rows from `start` (before `len`) that `joins`
/// accepts, in which no row key (`key`) comes twice (HBase does not order
/// two mutations of one row within a batch), and whose rows' `size` comes
/// to at most `budget` (the first row always joins, whatever its size).
fn distinct_run_end<'k>(
    start: usize,
    len: usize,
    joins: impl Fn(usize) -> bool,
    key: impl Fn(usize) -> &'k [u8],
    size: impl Fn(usize) -> usize,
    budget: usize,
) -> usize {
    // While keys ascend no row can repeat (a bulk load's usually do); from
    // the first that does not, a set finds repeats.
    let mut seen: Option<FxHashSet<&[u8]>> = None;
    let mut bytes = size(start);
    let mut end = start + 1;
    while end < len && joins(end) {
        bytes += size(end);
        if bytes > budget {
            break;
        }
        let row = key(end);
        let fresh = match &mut seen {
            None if row > key(end - 1) => true,
            None => {
                let mut set = FxHashSet::default();
                set.reserve(len - start);
                set.extend((start..end).map(&key));
                let fresh = set.insert(row);
                seen = Some(set);
                fresh
            }
            Some(set) => set.insert(row),
        };
        if !fresh {
            break;
        }
        end += 1;
    }
    end
}

/// Splits rows into batches, in order, leaving out rows with nothing to do;
/// `kinds` holds each row's [`RowKind`]. A run ends where the kind of row
/// changes or a row repeats, since HBase does not order two mutations of
/// one row within a batch, and before its rows' [`RowMutation::wire_size`]
/// passes `budget` bytes.
fn batches<'a>(rows: &'a [RowMutation], kinds: &[RowKind], budget: usize) -> Vec<Batch<'a>> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < rows.len() {
        let kind = kinds[start];
        match kind {
            RowKind::Nothing => start += 1,
            RowKind::Mixed => {
                out.push(Batch::Mixed(&rows[start]));
                start += 1;
            }
            RowKind::Puts | RowKind::OneDelete => {
                let end = distinct_run_end(
                    start,
                    rows.len(),
                    |i| kinds[i] == kind,
                    |i| &rows[i].row[..],
                    |i| rows[i].wire_size(),
                    budget,
                );
                let run = &rows[start..end];
                out.push(if kind == RowKind::Puts {
                    Batch::Puts(run)
                } else {
                    Batch::Deletes(run)
                });
                start = end;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `doAs` goes in a header of each request; a user name that would
    /// break the head (a line break) is refused before anything is sent.
    #[test]
    fn do_as_is_a_header_and_a_name_that_breaks_it_is_refused() {
        let wire = ThriftHttp::plain().do_as("alice").wire("h:1").expect("a plain name");
        assert_eq!(wire.do_as.as_deref(), Some("alice"));
        let head = http::request_head(&wire.host, &wire.path, 3, "doAs: alice\r\n");
        let head = String::from_utf8(head).expect("text");
        assert!(head.contains("\r\ndoAs: alice\r\nContent-Length: 3\r\n\r\n"), "{head}");
        for bad in ["", "alice\r\nX-Evil: 1", "bob\n"] {
            let err = ThriftHttp::plain().do_as(bad).wire("h:1").expect_err("refused");
            assert!(err.contains("do_as"), "{err}");
        }
    }

    /// A fake Thrift2 gateway (binary protocol, unframed) that answers each
    /// `tableExists` with `true` after `delay` (never, for `None`); it reads
    /// anything else (the SASL probe) and stays silent.
    async fn slow_gateway(delay: Option<Duration>) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address").to_string();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut request = Vec::new();
                    let mut buf = [0u8; 4096];
                    loop {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(read) => request.extend_from_slice(&buf[..read]),
                        }
                        // A call: version and kind, name, sequence number
                        // (the client sends each whole, then waits).
                        let word = |at: usize| request.get(at..at + 4).map(|b| [b[0], b[1], b[2], b[3]]);
                        let Some(len) = word(4).map(|w| u32::from_be_bytes(w) as usize) else {
                            continue;
                        };
                        let Some(seq) = word(8 + len).map(i32::from_be_bytes) else {
                            continue;
                        };
                        if !request.starts_with(&[0x80, 0x01]) || &request[8..8 + len] != b"tableExists" {
                            continue;
                        }
                        let Some(delay) = delay else {
                            // Never answers: reads on, to see the client leave.
                            request.clear();
                            continue;
                        };
                        tokio::time::sleep(delay).await;
                        let mut reply = Encoder::new(ThriftProtocol::Binary);
                        reply.message("tableExists", codec::REPLY, seq);
                        reply.field(TType::Bool, 0);
                        reply.bool(true);
                        reply.stop();
                        if stream.write_all(&reply.buf).await.is_err() {
                            return;
                        }
                        request.clear();
                    }
                });
            }
        });
        address
    }

    /// A call's options replace the gateway store's timeout, shorter or
    /// longer: a gateway that answers after 800 ms fails a store whose
    /// calls get 300 ms, but not a call given 5 s; one that never answers
    /// fails a call given 300 ms on a store whose calls get 30 s, at once.
    #[tokio::test]
    async fn a_call_timeout_replaces_the_gateways() {
        use crate::store::CallOptions;
        let mut config = ThriftConfig::new(slow_gateway(Some(Duration::from_millis(800))).await);
        config.call_timeout = Duration::from_millis(300);
        let store = ThriftStore::with_config(config);
        let err = store.table_exists("t").await.expect_err("300 ms are too few");
        assert!(matches!(err, StoreError::Timeout { .. }), "{err:?}");
        let patient = CallOptions::new().timeout(Duration::from_secs(5));
        assert!(
            patient
                .clone()
                .scope(store.table_exists("t"))
                .await
                .expect("5 s are enough")
        );
        // And through a store wrapped with the options.
        assert!(patient.on(&store).table_exists("t").await.expect("5 s are enough"));

        let mut config = ThriftConfig::new(slow_gateway(None).await);
        config.call_timeout = Duration::from_secs(30);
        let store = ThriftStore::with_config(config);
        let started = std::time::Instant::now();
        let err = CallOptions::new()
            .timeout(Duration::from_millis(300))
            .scope(store.table_exists("t"))
            .await
            .expect_err("the call's 300 ms");
        assert!(matches!(err, StoreError::Timeout { .. }), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    }

    /// The blocking facade keeps a call's options: its store's and
    /// table's `with_options` run each call in their scope.
    #[test]
    fn a_blocking_call_keeps_its_timeout() {
        use crate::store::CallOptions;
        let runtime = crate::blocking::runtime();
        let mut config = ThriftConfig::new(runtime.block_on(slow_gateway(Some(Duration::from_millis(800)))));
        config.call_timeout = Duration::from_millis(300);
        let store = crate::blocking::Store::new(ThriftStore::with_config(config));
        let err = store.table_exists("t").expect_err("300 ms are too few");
        assert!(matches!(err, StoreError::Timeout { .. }), "{err:?}");
        let patient = store.with_options(CallOptions::new().timeout(Duration::from_secs(5)));
        assert!(patient.table_exists("t").expect("5 s are enough"));
    }

    /// A store without Kerberos against a gateway that demands SASL (which
    /// never answers a plain call): the first call fails after about a
    /// second, saying what to set, and the failure is not transient, where
    /// it waited out its whole `call_timeout` as a timeout.
    #[tokio::test]
    async fn a_gateway_that_demands_sasl_is_named_at_once() {
        let address = probe::sasl_gateway().await;
        let mut config = ThriftConfig::new(address.clone());
        config.call_timeout = Duration::from_secs(30);
        let store = ThriftStore::with_config(config);
        let started = std::time::Instant::now();
        let err = store
            .get("t", &crate::store::Get::new("r"))
            .await
            .expect_err("SASL demanded");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}: {err}",
            started.elapsed()
        );
        assert!(
            matches!(&err, StoreError::Connection { endpoint, .. } if *endpoint == address),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(
            message.contains("demands SASL") && message.contains("ThriftConfig::kerberos"),
            "{message}"
        );
        #[cfg(feature = "native")]
        assert!(!err.is_transient(), "a setting to change: {err}");
    }

    /// A Thrift store's own metrics (the per-call ones come from `traced`,
    /// as on every backend): against a "gateway" that hangs up on every
    /// connection, a read waits for the pool at each try, is tried again
    /// on a new connection twice, and fails as a connection error.
    #[cfg(feature = "metrics")]
    #[tokio::test]
    async fn pool_waits_retries_and_errors_are_reported() {
        use crate::store::metrics::{self, testing::Captured};

        let captured = Captured::default();
        // This thread's; the current-thread runtime runs the listener here.
        let _recorder = ::metrics::set_default_local_recorder(&captured);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address").to_string();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                drop(stream);
            }
        });
        let mut config = ThriftConfig::new(address);
        config.call_timeout = Duration::from_secs(10);
        let store = ThriftStore::with_config(config);
        let error = store.table_exists("t").await.expect_err("no gateway");
        assert!(matches!(error, StoreError::Connection { .. }), "{error:?}");

        let thrift = [("backend", "thrift")];
        assert_eq!(
            captured.counter(metrics::RETRIES, &[("backend", "thrift"), ("reason", "connection")]),
            2
        );
        assert_eq!(
            captured.histogram(metrics::POOL_WAIT, &thrift).len(),
            3,
            "one checkout per try"
        );
        let call = [("backend", "thrift"), ("operation", "table_exists")];
        assert_eq!(captured.counter(metrics::CALLS, &call), 1);
        assert_eq!(
            captured.counter(
                metrics::ERRORS,
                &[
                    ("backend", "thrift"),
                    ("operation", "table_exists"),
                    ("kind", "connection")
                ]
            ),
            1
        );
        // No round trip completed: no bytes counted.
        assert_eq!(captured.counter(metrics::BYTES_RECEIVED, &thrift), 0);
    }

    /// A dropped scanner is closed on the gateway: before the drop, reading
    /// no rows from its id works; after, the gateway no longer knows the id.
    #[tokio::test]
    #[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT=host:port"]
    async fn dropped_scanner_is_closed_on_the_gateway() {
        use futures_util::StreamExt;
        let address = std::env::var("HMAP_THRIFT").expect("HMAP_THRIFT names a Thrift2 gateway");
        let prefix = std::env::var("HMAP_TEST_PREFIX").unwrap_or_default();
        let store = ThriftStore::with_config(ThriftConfig::new(address));
        let table = format!("{prefix}hmap_unit_scanner_close");
        if store.table_exists(&table).await.unwrap() {
            store.delete_table(&table).await.unwrap();
        }
        store
            .create_table(&TableSchema::new(table.clone()).family(crate::schema::FamilySchema::new("f")))
            .await
            .unwrap();
        let rows: Vec<RowMutation> = (0..5)
            .map(|i| RowMutation::new(format!("r{i}")).put("f", "q", "v"))
            .collect();
        store.mutate(&table, &rows).await.unwrap();
        // Reads no rows from a scanner id: Ok while the gateway holds it.
        let probe = async |id: i32| {
            store
                .shared
                .call(
                    &table,
                    "getScannerRows",
                    false,
                    |e| {
                        e.i32_field(1, id);
                        e.i32_field(2, 0);
                    },
                    |r| hbase::reply(r, TType::List, hbase::results),
                )
                .await
        };
        let mut scanner = store.scan(&table, &Scan::all().batch_size(2)).await.unwrap();
        assert!(scanner.next().await.is_some());
        let ids: Vec<i32> = store.shared.scanners.lock().unwrap().iter().copied().collect();
        assert_eq!(ids.len(), 1);
        assert_eq!(store.open_scanners(), 1);
        probe(ids[0]).await.expect("an open scanner answers");
        drop(scanner);
        // The scanner's task closes it once it sees the stream gone.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while store.open_scanners() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(store.open_scanners(), 0);
        match probe(ids[0]).await {
            Err(StoreError::InvalidRequest { reason, .. }) => {
                assert!(reason.contains("Invalid scanner Id"), "{reason}")
            }
            other => panic!("expected the gateway to refuse a closed scanner's id, got {other:?}"),
        }
        store.delete_table(&table).await.unwrap();
    }

    /// (kind, rows) of each batch, for comparison.
    fn shape(rows: &[RowMutation]) -> Vec<(&'static str, Vec<&str>)> {
        fn names(rows: &[RowMutation]) -> Vec<&str> {
            rows.iter()
                .map(|r| std::str::from_utf8(&r.row).unwrap_or("?"))
                .collect()
        }
        let kinds: Vec<RowKind> = rows.iter().map(RowKind::of).collect();
        batches(rows, &kinds, usize::MAX)
            .into_iter()
            .map(|b| match b {
                Batch::Puts(rows) => ("puts", names(rows)),
                Batch::Deletes(rows) => ("deletes", names(rows)),
                Batch::Mixed(row) => ("mixed", names(std::slice::from_ref(row))),
            })
            .collect()
    }

    #[test]
    fn batches_group_runs_and_split_on_repeated_rows() {
        let rows = [
            RowMutation::new("a").put("f", "q", "1"),
            RowMutation::new("b").put("f", "q", "1").put("f", "p", "2"),
            RowMutation::new("a").put("f", "q", "2"),
            RowMutation::new("c"),
            RowMutation::new("c").delete_row(),
            RowMutation::new("d").delete_column("f", "q"),
            RowMutation::new("e").delete_row().delete_family("f"),
            RowMutation::new("e").put("f", "q", "3").delete_latest("f", "p"),
            RowMutation::new("f").put("f", "q", "4"),
        ];
        assert_eq!(
            shape(&rows),
            vec![
                ("puts", vec!["a", "b"]),
                ("puts", vec!["a"]),
                ("deletes", vec!["c", "d"]),
                ("mixed", vec!["e"]),
                ("mixed", vec!["e"]),
                ("puts", vec!["f"]),
            ]
        );
    }

    /// A repeat is found whether or not the keys before it ascend.
    #[test]
    fn batches_find_repeats_in_ascending_and_unordered_runs() {
        let puts = |keys: &[&str]| -> Vec<RowMutation> {
            keys.iter()
                .map(|k| RowMutation::new(k.to_string()).put("f", "q", "1"))
                .collect()
        };
        let runs = |keys: &[&str]| -> Vec<Vec<String>> {
            shape(&puts(keys))
                .into_iter()
                .map(|(kind, rows)| {
                    assert_eq!(kind, "puts");
                    rows.into_iter().map(String::from).collect()
                })
                .collect()
        };
        assert_eq!(runs(&["a", "b", "c", "d"]), [vec!["a", "b", "c", "d"]]);
        assert_eq!(runs(&["a", "b", "c", "b"]), [vec!["a", "b", "c"], vec!["b"]]);
        assert_eq!(runs(&["a", "b", "b"]), [vec!["a", "b"], vec!["b"]]);
        assert_eq!(runs(&["b", "a", "c", "a"]), [vec!["b", "a", "c"], vec!["a"]]);
        assert_eq!(runs(&["c", "a", "b", "d", "c"]), [vec!["c", "a", "b", "d"], vec!["c"]]);
        assert_eq!(runs(&["a", "c", "b", "e", "d"]), [vec!["a", "c", "b", "e", "d"]]);
    }

    /// A `get_many` goes in chunks: 100 gets first, then as many as the
    /// budget holds at the rows' average size so far (missing rows count).
    #[tokio::test]
    async fn get_many_chunks_follow_the_rows_seen() {
        let gets: Vec<Get> = (0..1000).map(|i| Get::new(format!("r{i:04}"))).collect();
        let sizes = std::sync::Mutex::new(Vec::new());
        let rows = in_sized_chunks("t", "getMultiple", &gets, 10_000, |chunk| {
            sizes.lock().unwrap().push(chunk.len());
            // Every other row found, each 100 bytes on the wire: 50 bytes a
            // get on average.
            let found = chunk
                .iter()
                .enumerate()
                .map(|(i, g)| {
                    let cell = super::super::Cell::new("f", "q", 1, vec![0u8; 100 - 8 - 2 - g.row.len()]);
                    (i % 2 == 0).then(|| RowResult::new(g.row.clone(), vec![cell]))
                })
                .collect();
            async move { Ok(found) }
        })
        .await
        .unwrap();
        assert_eq!(rows.len(), 1000);
        assert_eq!(rows[0].as_ref().map(|r| r.wire_size()), Some(100));
        assert_eq!(rows[998].as_ref().map(|r| &r.row[..]), Some(&b"r0998"[..]));
        assert!(rows[999].is_none());
        assert_eq!(sizes.into_inner().unwrap(), [100, 200, 200, 200, 200, 100]);
        // None at all, and no call.
        let none = in_sized_chunks("t", "getMultiple", &[], 10, |_| async { panic!("no call for no gets") }).await;
        assert_eq!(none.unwrap(), []);
        // A gateway answering a chunk with another count of rows: a typed
        // error, not a loop or rows out of place.
        let short = in_sized_chunks("t", "getMultiple", &gets, 10_000, |chunk| {
            let answer = vec![None; chunk.len() - 1];
            async move { Ok(answer) }
        })
        .await;
        assert!(
            matches!(&short, Err(StoreError::Server { message, .. }) if message == "99 results for 100 gets"),
            "{short:?}"
        );
    }

    /// A run ends before its rows pass the byte budget; a row larger than
    /// the budget is a run of its own.
    #[test]
    fn batches_keep_to_the_byte_budget() {
        let row = |key: &str, value: usize| RowMutation::new(key.to_string()).put("f", "q", vec![0u8; value]);
        let rows = [
            row("a", 60),
            row("b", 60),
            row("c", 500),
            row("d", 10),
            row("e", 10),
            row("f", 10),
        ];
        let kinds: Vec<RowKind> = rows.iter().map(RowKind::of).collect();
        // a and b are 96 bytes each; d, e and f 46.
        assert_eq!(rows[0].wire_size(), 1 + 1 + 1 + 60 + crate::store::MUTATION_FRAMING);
        let runs: Vec<Vec<&[u8]>> = batches(&rows, &kinds, 200)
            .into_iter()
            .map(|b| match b {
                Batch::Puts(rows) => rows.iter().map(|r| &r.row[..]).collect(),
                _ => panic!("puts only"),
            })
            .collect();
        assert_eq!(runs, [vec![&b"a"[..], b"b"], vec![b"c"], vec![b"d", b"e", b"f"]]);
        assert_eq!(batches(&rows, &kinds, 0).len(), 6);
    }

    #[test]
    fn increment_values_are_taken_by_column_not_position() {
        let op = Increment::new("r").add("c", "y", 1).add("c", "x", 2);
        let cell = |q: &str, v: i64| super::super::Cell {
            family: Bytes::from_static(b"c"),
            qualifier: Bytes::copy_from_slice(q.as_bytes()),
            timestamp: 1,
            value: Bytes::copy_from_slice(&v.to_be_bytes()),
        };
        let reply = RowResult {
            row: Bytes::from_static(b"r"),
            cells: vec![cell("x", 12), cell("y", 11)],
        };
        assert_eq!(counters("t", &op, reply.clone()).unwrap(), vec![11, 12]);
        // A column asked twice takes a cell of its own each time.
        let twice = Increment::new("r").add("c", "x", 1).add("c", "x", 1);
        let both = RowResult {
            cells: vec![cell("x", 1), cell("x", 2)],
            ..reply.clone()
        };
        assert_eq!(counters("t", &twice, both).unwrap(), vec![1, 2]);
        assert!(counters("t", &twice, reply).is_err());
    }

    #[test]
    fn batches_of_nothing() {
        assert!(shape(&[]).is_empty());
        assert!(shape(&[RowMutation::new("a"), RowMutation::new("b")]).is_empty());
    }
}

/// The row just before `row` in HBase's order, as HBase's Java client
/// writes it (`ConnectionUtils.createClosestRowBefore`): `row` without a
/// last zero byte, else with its last byte one lower followed by nine
/// `0xff` bytes; empty for an empty `row`.
fn closest_row_before(row: &[u8]) -> Bytes {
    match row.split_last() {
        None => Bytes::new(),
        Some((0, head)) => Bytes::copy_from_slice(head),
        Some((&last, head)) => {
            let mut before = Vec::with_capacity(row.len() + 9);
            before.extend_from_slice(head);
            before.push(last - 1);
            before.extend_from_slice(&[0xff; 9]);
            Bytes::from(before)
        }
    }
}

#[cfg(test)]
mod closest_row_before_tests {
    use super::closest_row_before;

    #[test]
    fn is_the_java_clients_row_before() {
        assert_eq!(&closest_row_before(b"ab\0")[..], b"ab");
        assert_eq!(&closest_row_before(b"b")[..], b"a\xff\xff\xff\xff\xff\xff\xff\xff\xff");
        assert!(closest_row_before(b"b")[..] < b"b"[..]);
        assert!(closest_row_before(b"b")[..] > b"a\xff\xff"[..]);
    }
}
