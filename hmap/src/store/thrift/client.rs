//! What [`ThriftStore`](super::ThriftStore) and
//! [`Thrift1Store`](super::Thrift1Store) share: the connection pool, one
//! call with its deadline, retries and errors, the schema cache, and the
//! task that reads a gateway's scanner. Both gateways' IDLs declare their
//! exceptions alike (`1: IOError`, `2: IllegalArgument`, Thrift1's
//! `createTable` also `3: AlreadyExists`) and answer `getThriftServerType`,
//! so the same machinery serves both; only the messages differ
//! ([`hbase`](super::hbase), [`hbase1`](super::hbase1)).

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::Semaphore;
use tracing::Instrument;

use super::codec::{self, ApplicationException, DecodeError, Encoder, Reader, TType};
use super::hbase::{self, Decoded, ServerException};
use super::http::HttpError;
use super::transport::{Connection, Deadline, Failure, HttpWire, Wire};
use super::{ThriftConfig, ThriftHttp, ThriftProtocol};
use crate::schema::TableSchema;
use crate::store::check::{SchemaCache, check_table_name};
use crate::store::{Result, RowResult, RowStream, Scan, StoreError, metrics};

/// The connection pool: at most `pool_size` calls hold a connection at once
/// (the semaphore's permits), and connections they return wait here for the
/// next call. A call cancelled in the middle of its round trip drops its
/// connection (its stream is out of step) and releases its permit, so the
/// pool stays usable.
///
/// Not a pool crate (deadpool, bb8): a call's one deadline covers the wait
/// for a permit, the liveness check of an idle connection and connecting,
/// and a connection that saw a failure must never go back; here that is a
/// semaphore and a `Vec`.
struct Pool {
    permits: Semaphore,
    idle: Mutex<Vec<Connection>>,
}

/// What the clones of one store share: the settings, the connection pool
/// and the call machinery, the schema cache and the open scanners.
pub struct Client {
    pub config: ThriftConfig,
    /// How messages go on the wire, from the config (or why they cannot).
    transport: std::result::Result<Wire, String>,
    pool: Pool,
    /// The service the store speaks, for the hint when a gateway does not
    /// know a call.
    gateway: Gateway,
    schemas: SchemaCache,
    /// Ids of the gateway's scanners that this store opened and has not yet
    /// seen closed.
    pub scanners: Mutex<BTreeSet<i32>>,
}

/// What the gateway answered instead of a result.
enum Exception {
    /// An exception the call declares.
    Declared(ServerException),
    /// The gateway could not run the call at all.
    Application(ApplicationException),
}

/// What a call's reply decodes to.
type Answer<T> = Decoded<std::result::Result<T, Exception>>;

/// What a call writes and how its reply is read; the same for every attempt.
struct CallSpec<'a, A, D> {
    table: &'a str,
    name: &'static str,
    args: A,
    decode: D,
}

/// The largest frame a framed gateway takes by default
/// (`hbase.regionserver.thrift.framed.max_frame_size_in_mb`, 2 MiB).
const FRAMED_GATEWAY_FRAME: usize = 2 * 1024 * 1024;

/// Attempts of a read whose connection failed (writes get one: whether a
/// failed write was applied is unknown), and the pause before the second.
const READ_ATTEMPTS: u32 = 3;
const FIRST_BACKOFF: Duration = Duration::from_millis(10);

/// `TApplicationException.UNKNOWN_METHOD`: the gateway has no such call.
const UNKNOWN_METHOD: i32 = 1;

/// Which gateway a store talks to, for [`Client::ping`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gateway {
    /// `hbase thrift`: the original `Hbase` service, `TThriftServerType.ONE`.
    One,
    /// `hbase thrift2`: `THBaseService`, `TThriftServerType.TWO`.
    Two,
}

/// How the messages of a client with `config` go on the wire (`http`: its
/// HTTP transport, if any), or why they cannot.
fn wire(config: &ThriftConfig, http: Option<HttpWire>) -> std::result::Result<Wire, String> {
    #[cfg(feature = "kerberos")]
    if config.kerberos.is_some() && config.framed && http.is_none() {
        return Err(
            "`ThriftConfig::kerberos` with `ThriftConfig::framed`: HBase's gateways serve SASL \
             (hbase.thrift.security.qop) on unframed sockets only"
                .to_string(),
        );
    }
    Ok(Wire {
        framed: config.framed,
        protocol: config.protocol,
        http,
        #[cfg(feature = "kerberos")]
        kerberos: config.kerberos.clone(),
    })
}

impl Client {
    /// A client of the gateway `config` names, which should run
    /// `gateway`'s service; connects lazily.
    pub fn new(config: ThriftConfig, gateway: Gateway) -> Self {
        let permits = Semaphore::new(config.pool_size.clamp(1, Semaphore::MAX_PERMITS));
        let http = match &config.http {
            Some(http) => http.wire(&config.address).map(Some),
            None => Ok(None),
        };
        let transport = http.and_then(|http| wire(&config, http));
        Client {
            config,
            transport,
            pool: Pool {
                permits,
                idle: Mutex::new(Vec::new()),
            },
            gateway,
            schemas: SchemaCache::default(),
            scanners: Mutex::new(BTreeSet::new()),
        }
    }

    /// How many of the gateway's scanners the store holds open (see
    /// [`ThriftStore::open_scanners`](super::ThriftStore::open_scanners)).
    pub fn open_scanners(&self) -> usize {
        self.scanners.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Checks that the gateway answers, and that it runs `gateway`'s
    /// service (`getThriftServerType`, which both declare).
    ///
    /// Any gateway answers this call at once, so one that stays silent
    /// until [`ThriftConfig::call_timeout`] most likely waits for bytes in
    /// another transport or protocol (an unframed gateway reading a framed
    /// call, say): that is a [`StoreError::Connection`] that says so, not a
    /// [`StoreError::Timeout`].
    pub async fn ping(&self) -> Result<()> {
        let wanted = match self.gateway {
            Gateway::One => 1,
            Gateway::Two => 2,
        };
        match self.call("", "getThriftServerType", true, |_| {}, server_type).await {
            Ok(kind) if kind == wanted => Ok(()),
            Ok(kind) => Err(self.wrong_gateway(format!("server type {kind}"))),
            // An older gateway may not know the method.
            Err(StoreError::Server { message, .. }) => Err(self.wrong_gateway(message)),
            Err(StoreError::Timeout { elapsed, .. }) => Err(StoreError::Connection {
                endpoint: self.config.address.clone(),
                message: format!(
                    "getThriftServerType: no reply within {elapsed:?}, though a gateway answers it at once ({})",
                    self.wire_hint(None)
                ),
                cause: None,
            }),
            Err(e) => Err(e),
        }
    }

    /// A connection: an idle pooled one (checked if it idled long), else a
    /// new one, once fewer than `pool_size` calls hold one; all before
    /// `deadline`. The permit travels with the connection and is released
    /// when the call is over (or dropped).
    async fn checkout(
        &self,
        deadline: &Deadline,
    ) -> std::result::Result<(Connection, tokio::sync::SemaphorePermit<'_>), Failure> {
        let waiting = metrics::Timer::start();
        let permit = tokio::time::timeout_at(deadline.end(), self.pool.permits.acquire())
            .await
            .map_err(|_| Failure::TimedOut)?
            .map_err(|_| Failure::TimedOut)?;
        metrics::pool_wait(self.backend(), waiting);
        loop {
            let idle = self.pool.idle.lock().unwrap_or_else(PoisonError::into_inner).pop();
            let Some(mut conn) = idle else { break };
            let usable = !conn.peer_closed()
                && (conn.last_used.elapsed() < self.config.idle_check || self.probe(&mut conn, deadline).await?);
            if usable {
                return Ok((conn, permit));
            }
            // A dead connection: dropped, and the next one tried.
        }
        let config = &self.config;
        let wire = self.transport.clone().map_err(|why| Failure::Io {
            error: std::io::Error::new(std::io::ErrorKind::InvalidInput, why),
            replied: false,
        })?;
        let conn = Connection::connect(&config.address, wire, config.connect_timeout, deadline).await?;
        Ok((conn, permit))
    }

    /// Whether an idle connection still works: a cheap call on it. Only
    /// the deadline passing is an error.
    async fn probe(&self, conn: &mut Connection, deadline: &Deadline) -> std::result::Result<bool, Failure> {
        let seq = conn.next_seq();
        let protocol = self.config.protocol;
        let request = codec::call(protocol, "getThriftServerType", seq, |_| {});
        match conn.round_trip(&request, deadline, self.config.read_timeout).await {
            Ok(reply) => Ok(matches!(
                codec::open_reply(protocol, reply, "getThriftServerType", seq).map(|r| r.map(server_type)),
                Ok(Ok(Ok(Ok(_))))
            )),
            Err(Failure::TimedOut) => Err(Failure::TimedOut),
            Err(_) => Ok(false),
        }
    }

    /// A connection that finished its call cleanly waits for the next one.
    fn checkin(&self, conn: Connection) {
        let mut idle = self.pool.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < self.config.pool_size.max(1) {
            idle.push(conn);
        }
    }

    /// The `backend` label of this client's metrics.
    fn backend(&self) -> &'static str {
        match self.gateway {
            Gateway::One => "thrift1",
            Gateway::Two => "thrift",
        }
    }

    /// Closes every idle connection; new ones are opened as needed.
    fn drop_idle(&self) {
        self.pool.idle.lock().unwrap_or_else(PoisonError::into_inner).clear();
    }

    /// One call of a method declared to return a value: its arguments
    /// written by `args`, its result read by `read`. `retry` (for reads)
    /// tries once more on a new connection when the connection, not the
    /// server, failed, within the same deadline.
    pub async fn call<T>(
        &self,
        table: &str,
        name: &'static str,
        retry: bool,
        args: impl Fn(&mut Encoder),
        read: impl Fn(Reader) -> Decoded<std::result::Result<T, ServerException>>,
    ) -> Result<T> {
        let spec = CallSpec {
            table,
            name,
            args,
            decode: |reply: std::result::Result<Reader, ApplicationException>| match reply {
                Ok(r) => read(r).map(|v| v.map_err(Exception::Declared)),
                Err(app) => Ok(Err(Exception::Application(app))),
            },
        };
        self.run(&spec, retry).await
    }

    /// One call of a `void` method.
    pub async fn call_void(&self, table: &str, name: &'static str, args: impl Fn(&mut Encoder)) -> Result<()> {
        self.call(table, name, false, args, hbase::void).await
    }

    async fn run<T, A, D>(&self, spec: &CallSpec<'_, A, D>, retry: bool) -> Result<T>
    where
        A: Fn(&mut Encoder),
        D: Fn(std::result::Result<Reader, ApplicationException>) -> Answer<T>,
    {
        let span = tracing::trace_span!(
            "hmap.thrift",
            method = spec.name,
            bytes_out = tracing::field::Empty,
            bytes_in = tracing::field::Empty
        );
        self.run_attempts(spec, retry).instrument(span).await
    }

    /// [`run`](Self::run)'s attempts, in its span.
    async fn run_attempts<T, A, D>(&self, spec: &CallSpec<'_, A, D>, retry: bool) -> Result<T>
    where
        A: Fn(&mut Encoder),
        D: Fn(std::result::Result<Reader, ApplicationException>) -> Answer<T>,
    {
        let deadline = Deadline::after(crate::store::call_timeout(self.config.call_timeout));
        let mut attempts_left = if retry { READ_ATTEMPTS } else { 1 };
        let mut backoff = FIRST_BACKOFF;
        loop {
            attempts_left -= 1;
            let failure = match self.attempt(spec, &deadline).await {
                Ok(answer) => return answer,
                Err(failure) => failure,
            };
            match failure {
                Failure::Io { .. } if attempts_left > 0 => {
                    // A read again, on a new connection, after a pause that
                    // doubles; all within the one deadline.
                    let Some(left) = deadline.remaining() else {
                        return Err(self.failure(spec.table, spec.name, Failure::TimedOut, &deadline));
                    };
                    metrics::retry(self.backend(), "connection");
                    tokio::time::sleep(backoff.min(left)).await;
                    backoff *= 4;
                }
                failure => return Err(self.failure(spec.table, spec.name, failure, &deadline)),
            }
        }
    }

    /// One attempt: `Ok` with the call's outcome once a reply arrived,
    /// `Err` when the connection failed.
    async fn attempt<T, A, D>(
        &self,
        spec: &CallSpec<'_, A, D>,
        deadline: &Deadline,
    ) -> std::result::Result<Result<T>, Failure>
    where
        A: Fn(&mut Encoder),
        D: Fn(std::result::Result<Reader, ApplicationException>) -> Answer<T>,
    {
        let (mut conn, _permit) = self.checkout(deadline).await?;
        let seq = conn.next_seq();
        let protocol = self.config.protocol;
        let mut request = conn.take_request_buffer();
        codec::call_into(&mut request, protocol, spec.name, seq, &spec.args);
        tracing::Span::current().record("bytes_out", request.len());
        // A fresh plain connection whose first call goes unanswered may be
        // talking to a gateway that demands SASL, which never answers it:
        // asked after a second (see `probe`), it fails the call at once.
        let unproven = !conn.replied() && self.config.http.is_none() && !self.uses_sasl();
        let round_trip = conn.round_trip(&request, deadline, self.config.read_timeout);
        let mut sent = if unproven {
            let address = &self.config.address;
            let sasl = async {
                tokio::time::sleep(super::probe::PROBE_AFTER).await;
                super::probe::demands_sasl(address).await
            };
            tokio::select! {
                sent = round_trip => sent,
                true = sasl => return Ok(Err(self.sasl_demanded(spec.table, spec.name))),
            }
        } else {
            round_trip.await
        };
        if let Err(Failure::Io { error, .. }) = &mut sent
            && self.config.framed
            && self.config.http.is_none()
            && request.len() > FRAMED_GATEWAY_FRAME
        {
            // The gateway closes the connection on a frame over its limit.
            *error = std::io::Error::new(
                error.kind(),
                format!(
                    "{error} (the request was {} bytes: a framed gateway drops the connection on a frame over \
                     hbase.regionserver.thrift.framed.max_frame_size_in_mb, 2 MiB by default; set a smaller \
                     ThriftConfig::max_request_bytes or send smaller values, or raise that setting on the gateway)",
                    request.len()
                ),
            );
        }
        let request_len = request.len();
        conn.put_request_buffer(request);
        let reply = match sent {
            Ok(reply) => {
                metrics::bytes_sent(self.backend(), request_len);
                metrics::bytes_received(self.backend(), reply.len());
                reply
            }
            Err(failure) => {
                // The gateway went away or broke the stream: the other idle
                // connections are suspect too.
                if matches!(failure, Failure::Io { .. }) {
                    self.drop_idle();
                }
                return Err(failure);
            }
        };
        tracing::Span::current().record("bytes_in", reply.len());
        match codec::open_reply(protocol, reply, spec.name, seq).and_then(&spec.decode) {
            Ok(answer) => {
                self.checkin(conn);
                Ok(answer.map_err(|e| self.exception(spec.table, spec.name, e)))
            }
            Err(error) => {
                // A reply that is not what the IDL says: the gateway is not
                // one hmap can talk to, or the stream is out of step.
                Ok(Err(self.protocol_error(spec.table, spec.name, error, true)))
            }
        }
    }

    /// Why a gateway may not have answered as expected, for a connection
    /// that never carried a reply: what the reply's first bytes (`start`,
    /// if any came) look like, else every mode the gateway may run in that
    /// differs from the client's; then what the client speaks.
    fn wire_hint(&self, start: Option<&[u8]>) -> String {
        let config = &self.config;
        let guess = match start {
            Some(b) if b.starts_with(b"HTTP/") => "the gateway answered in HTTP: it runs in HTTP mode \
                 (`hbase.regionserver.thrift.http`; set `ThriftConfig::http`)"
                .to_string(),
            // A TLS alert or handshake record.
            Some([0x15 | 0x16, 0x03, ..]) => "the gateway answered in TLS: it runs in HTTPS mode \
                 (`hbase.thrift.ssl.enabled`; set `ThriftConfig::http` to `ThriftHttp::https`)"
                .to_string(),
            Some([0x82, ..]) if config.protocol != ThriftProtocol::Compact => {
                "the gateway answered in the compact protocol (`-c`): set `ThriftConfig::protocol` to \
                 `ThriftProtocol::Compact`"
                    .to_string()
            }
            Some([0x80, 0x01, ..]) if config.framed && config.protocol == ThriftProtocol::Binary => {
                "the gateway answered with an unframed message: it runs unframed transport (no `-f`, `-hsha` or \
                 `-nonblocking`; unset `ThriftConfig::framed`)"
                    .to_string()
            }
            Some([0x80, 0x01, ..]) if config.protocol != ThriftProtocol::Binary => {
                "the gateway answered in the binary protocol: set `ThriftConfig::protocol` to `ThriftProtocol::Binary`"
                    .to_string()
            }
            Some([0, ..]) if !config.framed => "the reply starts like a frame's length: the gateway may run framed \
                 transport (`-f`, `-hsha`, `-nonblocking`; set `ThriftConfig::framed`)"
                .to_string(),
            // Nothing to go by: every mode that differs from the client's.
            _ if config.http.is_some() => {
                let tls = if config.http.as_ref().is_some_and(ThriftHttp::is_https) {
                    "or without TLS (no `hbase.thrift.ssl.enabled`; use `ThriftHttp::plain`)"
                } else {
                    "or with TLS (`hbase.thrift.ssl.enabled`; use `ThriftHttp::https`)"
                };
                format!(
                    "the gateway may not run in HTTP mode (`hbase.regionserver.thrift.http`; unset \
                     `ThriftConfig::http`), {tls}"
                )
            }
            _ => {
                let transport = if config.framed {
                    "unframed transport (no `-f`, `-hsha` or `-nonblocking`; unset `ThriftConfig::framed`)"
                } else {
                    "framed transport (`-f`, `-hsha`, `-nonblocking`; set `ThriftConfig::framed`)"
                };
                let protocol = match config.protocol {
                    ThriftProtocol::Compact => {
                        "the binary protocol (the default, no `-c`; set `ThriftConfig::protocol` to \
                         `ThriftProtocol::Binary`)"
                    }
                    _ => "the compact protocol (`-c`; set `ThriftConfig::protocol` to `ThriftProtocol::Compact`)",
                };
                #[cfg(feature = "kerberos")]
                let sasl = config.kerberos.is_none();
                #[cfg(not(feature = "kerberos"))]
                let sasl = true;
                // A gateway with SASL reads a plain call's first bytes as a
                // SASL message with an invalid status, then neither answers
                // nor closes (HBase 2.6.1's).
                let http = "in HTTP mode (`hbase.regionserver.thrift.http`; set `ThriftConfig::http`)";
                if sasl && !config.framed {
                    format!(
                        "the gateway may run {transport}, {protocol}, {http}, or with Kerberos \
                         (`hbase.thrift.security.qop`: it neither answers nor closes a client without SASL; \
                         set `ThriftConfig::kerberos`, hmap's feature `kerberos`)"
                    )
                } else {
                    format!("the gateway may run {transport}, {protocol}, or {http}")
                }
            }
        };
        let protocol = match config.protocol {
            ThriftProtocol::Compact => "compact",
            _ => "binary",
        };
        let transport = match &config.http {
            Some(http) if http.is_https() => "over HTTPS",
            Some(_) => "over HTTP",
            None if config.framed => "framed",
            None => "unframed",
        };
        format!("{guess}; hmap speaks the {protocol} protocol, {transport}")
    }

    /// The error for a call that got no usable reply.
    fn failure(&self, table: &str, operation: &'static str, failure: Failure, deadline: &Deadline) -> StoreError {
        match failure {
            Failure::TimedOut => StoreError::Timeout {
                table: table.into(),
                operation,
                elapsed: deadline.elapsed(),
                detail: String::new(),
            },
            Failure::Decode { error, replied } => self.protocol_error(table, operation, error, replied),
            #[cfg(feature = "kerberos")]
            Failure::Kerberos(error) => StoreError::Connection {
                endpoint: self.config.address.clone(),
                message: format!("{operation}{}: {error}", crate::store::error::on_table(table)),
                cause: Some(Box::new(error)),
            },
            Failure::Http {
                error: error @ HttpError::Status { .. },
                ..
            } => StoreError::Connection {
                endpoint: self.config.address.clone(),
                message: format!(
                    "{operation}{}: {error}{}",
                    crate::store::error::on_table(table),
                    self.status_hint(&error)
                ),
                cause: None,
            },
            Failure::Http { error, replied } => {
                let start = match &error {
                    HttpError::NotHttp { start } => Some(&start[..]),
                    _ => None,
                };
                let hint = self.hint(start, replied);
                self.invalid_reply(table, operation, format!("{error}{hint}"))
            }
            Failure::Io { error, replied } => {
                let hint = self.hint(None, replied);
                let closed = matches!(
                    error.kind(),
                    std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset
                );
                StoreError::Connection {
                    endpoint: self.config.address.clone(),
                    message: format!(
                        "{operation}{}: {error}{}",
                        crate::store::error::on_table(table),
                        if closed { hint.as_str() } else { "" }
                    ),
                    cause: Some(Box::new(error)),
                }
            }
        }
    }

    /// A reply whose bytes are not what the protocol or the IDL allow.
    fn protocol_error(&self, table: &str, operation: &'static str, error: DecodeError, replied: bool) -> StoreError {
        let start = match &error {
            DecodeError::NotBinary { start } | DecodeError::NotCompact { start } | DecodeError::Unframed { start } => {
                Some(&start[..])
            }
            _ => None,
        };
        let hint = self.hint(start, replied);
        self.invalid_reply(table, operation, format!("{error}{hint}"))
    }

    /// ` (what an HTTP status other than 200 may mean)` for the statuses
    /// HBase's gateway answers to a refused login (401) or `doAs` (500).
    fn status_hint(&self, error: &HttpError) -> &'static str {
        #[cfg(feature = "kerberos")]
        let kerberos = self.config.kerberos.is_some();
        #[cfg(not(feature = "kerberos"))]
        let kerberos = false;
        let do_as = self.config.http.as_ref().is_some_and(ThriftHttp::acts_for_another);
        match error {
            HttpError::Status { status: 401, .. } if kerberos => {
                " (the gateway refused the Kerberos token: is `Kerberos::server_principal` its \
                 hbase.thrift.spnego.principal, HTTP/_HOST@REALM, for the name it runs on?)"
            }
            HttpError::Status { status: 401, .. } => {
                " (the gateway demands Kerberos by SPNEGO, hbase.security.authentication=kerberos: set \
                 `ThriftConfig::kerberos`, hmap's feature `kerberos`)"
            }
            HttpError::Status { status: 500, .. } if do_as => {
                " (a gateway refuses `doAs` so: it needs hbase.thrift.support.proxyuser, and Hadoop's \
                 hadoop.proxyuser.<caller>.hosts and .users or .groups must allow the user)"
            }
            _ => "",
        }
    }

    /// ` (why the gateway may not have answered as expected)`: from the
    /// reply's first bytes (`start`) if they tell, else, on a connection
    /// that never carried a reply, from the modes the gateway may run in;
    /// nothing on a connection that worked before.
    fn hint(&self, start: Option<&[u8]>, replied: bool) -> String {
        match (start, replied) {
            (Some(start), _) => format!(" ({})", self.wire_hint(Some(start))),
            (None, false) => format!(" ({})", self.wire_hint(None)),
            (None, true) => String::new(),
        }
    }

    /// Whether this store's connections speak SASL (Kerberos on a socket).
    fn uses_sasl(&self) -> bool {
        #[cfg(feature = "kerberos")]
        return self.config.kerberos.is_some();
        #[cfg(not(feature = "kerberos"))]
        false
    }

    /// The error for a call to a gateway that demands SASL from a client
    /// without it: a refusal of the client's settings, not transient.
    fn sasl_demanded(&self, table: &str, operation: &'static str) -> StoreError {
        let reason = String::from(
            "the gateway demands SASL (it runs with hbase.thrift.security.qop): it refused a SASL hello at \
             once and never answered this plain call; connect with Kerberos: `ThriftConfig::kerberos` \
             (hmap's feature `kerberos`)",
        );
        let message = format!("{operation}{}: {reason}", crate::store::error::on_table(table));
        StoreError::Connection {
            endpoint: self.config.address.clone(),
            message,
            cause: Some(Box::new(crate::security::SecurityError::kerberos(
                self.config.address.clone(),
                crate::security::KerberosFailure::AuthenticationRequired,
                reason,
            ))),
        }
    }

    /// [`StoreError::Protocol`] for a reply hmap cannot read.
    fn invalid_reply(&self, table: &str, operation: &'static str, message: String) -> StoreError {
        StoreError::Protocol {
            endpoint: self.config.address.clone(),
            table: table.into(),
            operation,
            message,
        }
    }

    /// The error for a gateway that does not run this store's service
    /// (`why`: what it answered), naming the store the other one needs.
    fn wrong_gateway(&self, why: String) -> StoreError {
        let (name, start, other) = match self.gateway {
            Gateway::One => ("Thrift1", "`hbase thrift`", "a Thrift2 gateway needs `ThriftStore`"),
            Gateway::Two => ("Thrift2", "`hbase thrift2`", "a Thrift1 gateway needs `Thrift1Store`"),
        };
        StoreError::Connection {
            endpoint: self.config.address.clone(),
            message: format!("not a {name} gateway ({why}); this store needs {start} ({other})"),
            cause: None,
        }
    }

    /// Maps what the gateway sent instead of a result to a typed error: by
    /// the exception the IDL declares, then by the Java exception whose
    /// message a `TIOError` carries (its class name leads the message of
    /// exceptions the region servers raised).
    fn exception(&self, table: &str, operation: &'static str, e: Exception) -> StoreError {
        let table = table.to_string();
        match e {
            // A call the gateway does not know: most likely the other
            // gateway, on any call (not only after `ping`).
            Exception::Application(app) if app.kind == UNKNOWN_METHOD => {
                self.wrong_gateway(format!("it does not know `{operation}`: {}", app.message))
            }
            Exception::Application(app) => StoreError::Server {
                service: "HBase",
                table,
                operation,
                message: format!(
                    "the gateway could not run the call (TApplicationException type {}): {}",
                    app.kind, app.message
                ),
            },
            Exception::Declared(ServerException::IllegalArgument { message }) => StoreError::InvalidRequest {
                table,
                reason: format!(
                    "the gateway refused the arguments of {operation}: {}",
                    message.as_deref().unwrap_or("(no message)")
                ),
            },
            Exception::Declared(ServerException::Io { message, .. }) => {
                let message = message.unwrap_or_else(|| "(no message)".into());
                match java_exception(&message) {
                    Some(("TableNotFoundException", _)) => StoreError::TableNotFound { table },
                    Some(("TableExistsException", _)) => StoreError::TableExists { table },
                    Some(("NoSuchColumnFamilyException", detail)) => StoreError::NoSuchFamily {
                        table,
                        family: crate::store::error::missing_family(detail),
                    },
                    _ => StoreError::Server {
                        service: "HBase",
                        table,
                        operation,
                        message,
                    },
                }
            }
            Exception::Declared(ServerException::AlreadyExists { .. }) => StoreError::TableExists { table },
        }
    }

    /// `result`, but for a [`StoreError::Server`] that names only the table
    /// (how a gateway passes on a `TableNotFoundException`, whose message
    /// is the table's name, alone or as the cause of a failed batch): that
    /// is confirmed with `exists` and answered as
    /// [`StoreError::TableNotFound`] when the table is gone. The table's
    /// cached schema is forgotten whenever the server says the table or a
    /// family is missing.
    pub async fn confirm_table<T, F>(&self, table: &str, result: Result<T>, exists: impl FnOnce() -> F) -> Result<T>
    where
        F: std::future::Future<Output = Result<bool>>,
    {
        match &result {
            Err(StoreError::Server { message, .. }) if names_only_the_table(message, &self.wire(table)) => {
                match exists().await {
                    Ok(false) => {
                        self.schemas.forget(table);
                        Err(StoreError::TableNotFound { table: table.into() })
                    }
                    _ => result,
                }
            }
            Err(StoreError::TableNotFound { .. } | StoreError::NoSuchFamily { .. }) => {
                self.schemas.forget(table);
                result
            }
            _ => result,
        }
    }

    /// The schema of `table` and what `check` makes of a request against
    /// it, described again when the cached schema lacks a family the
    /// request names (see `SchemaCache::checked`).
    /// Each row of a batch write checked on its own against the table's
    /// schema (as `checked_schema` checks them all): one verdict per row.
    pub async fn checked_rows<F>(
        &self,
        table: &str,
        load: impl Fn() -> F,
        rows: &[crate::store::RowMutation],
    ) -> Result<Vec<Result<()>>>
    where
        F: std::future::Future<Output = Result<TableSchema>>,
    {
        check_table_name(table, &self.config.table_prefix)?;
        let max = self.config.max_value_size;
        self.schemas
            .checked_each(table, load, rows, |schema, r| {
                crate::store::check::check_mutation(schema, &r.row, &r.mutations, max)
            })
            .await
    }

    pub async fn checked_schema<T, F>(
        &self,
        table: &str,
        load: impl Fn() -> F,
        check: impl Fn(&TableSchema) -> Result<T>,
    ) -> Result<(Arc<TableSchema>, T)>
    where
        F: std::future::Future<Output = Result<TableSchema>>,
    {
        check_table_name(table, &self.config.table_prefix)?;
        self.schemas.checked(table, load, check).await
    }

    /// Disables a table before it is deleted or truncated, once `exists`
    /// says it is there (`TableNotFound` if not); `name` writes the
    /// table's name as the gateway's `disableTable` takes it. A table
    /// disabled already is fine.
    pub async fn disable_existing(&self, table: &str, exists: bool, name: impl Fn(&mut Encoder)) -> Result<()> {
        if !exists {
            return Err(StoreError::TableNotFound { table: table.into() });
        }
        match self.call_void(table, "disableTable", name).await {
            Ok(()) | Err(StoreError::Server { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The tables under the configured prefix, without it, sorted.
    pub fn unprefixed(&self, names: impl IntoIterator<Item = String>) -> Vec<String> {
        let prefix = self.config.table_prefix.as_str();
        let mut names: Vec<String> = names
            .into_iter()
            .filter_map(|n| n.strip_prefix(prefix).map(str::to_string))
            .collect();
        names.sort();
        names
    }

    pub fn forget_schema(&self, table: &str) {
        self.schemas.forget(table);
    }

    /// A table's name in HBase: the configured prefix, then `table`.
    pub fn wire<'a>(&self, table: &'a str) -> Cow<'a, str> {
        match self.config.table_prefix.as_str() {
            "" => Cow::Borrowed(table),
            prefix => Cow::Owned(format!("{prefix}{table}")),
        }
    }
}

/// The reply of `getThriftServerType`: `TThriftServerType`, an `i32` enum.
pub fn server_type(r: Reader) -> Decoded<std::result::Result<i32, ServerException>> {
    hbase::reply(r, TType::I32, Reader::i32)
}

/// Whether a gateway's message is the table's name `wire` alone, or a failed
/// batch whose first cause is (HBase's
/// `RetriesExhaustedWithDetailsException.getDesc`: `Failed 2 actions: t: 2
/// times, servers with issues: ...`): what a `TableNotFoundException`
/// becomes through a gateway that passes on only its message.
fn names_only_the_table(message: &str, wire: &str) -> bool {
    let message = message.trim();
    message == wire
        || message
            .strip_prefix("Failed ")
            .and_then(|rest| rest.split_once(": "))
            .and_then(|(_, causes)| causes.strip_prefix(wire))
            .is_some_and(|rest| rest.starts_with(": "))
}

/// The simple name of the Java exception class that leads `message`, and
/// the rest of its first line: `org.apache.hadoop.hbase.TableExistsException: t`
/// gives `("TableExistsException", "t")`. The message of a batch that failed
/// (HBase's `RetriesExhaustedWithDetailsException`, `Failed 1 action: ...`)
/// gives its first cause. `None` when the message does not start with a
/// qualified class name.
pub fn java_exception(message: &str) -> Option<(&str, &str)> {
    let mut line = message.lines().next().unwrap_or_default();
    // Thrift1's gateway sends the whole stack trace, which names the batch's
    // exception before its message.
    line = line
        .strip_prefix("org.apache.hadoop.hbase.client.RetriesExhaustedWithDetailsException: ")
        .unwrap_or(line);
    if let Some(rest) = line.strip_prefix("Failed ")
        && let Some((count, cause)) = rest.split_once(": ")
        && let Some(n) = count.strip_suffix(" actions").or_else(|| count.strip_suffix(" action"))
        && n.bytes().all(|b| b.is_ascii_digit())
    {
        line = cause;
    }
    let (class, detail) = line.split_once(':').unwrap_or((line, ""));
    let (package, simple) = class.rsplit_once('.')?;
    let identifier = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    let is_class = package.split('.').all(identifier)
        && identifier(simple)
        && simple.starts_with(|c: char| c.is_ascii_uppercase());
    if !is_class {
        return None;
    }
    // Thrift1's gateway names a remote exception twice, `X: X: message`.
    let detail = detail.trim();
    let detail = detail
        .strip_prefix(class)
        .and_then(|rest| rest.strip_prefix(':'))
        .map_or(detail, str::trim);
    Some((simple, detail))
}

/// The length HBase reports for an increment of a cell that is no counter:
/// `DoNotRetryIOException: Field is not a long, it's N bytes wide`
/// (`HRegion.MutationBatchOperation.getLongValue`).
pub fn not_a_counter(message: &str) -> Option<usize> {
    let ("DoNotRetryIOException", detail) = java_exception(message)? else {
        return None;
    };
    detail
        .strip_prefix("Field is not a long, it's ")?
        .strip_suffix(" bytes wide")?
        .parse()
        .ok()
}

/// The calls that read and close a gateway's scanner: the same arguments
/// on both gateways (`1: i32 id`, `2: i32 rows`), other names and rows.
pub struct ScannerCalls {
    /// Reads the next rows: `getScannerRows`, `scannerGetList`.
    pub fetch: &'static str,
    /// Closes the scanner: `closeScanner`, `scannerClose`.
    pub close: &'static str,
    /// Reads the rows of a `fetch` reply.
    pub rows: fn(Reader) -> Decoded<std::result::Result<Vec<RowResult>, ServerException>>,
}

/// The error for an increment the server refused with `message`:
/// [`StoreError::NotACounter`] naming the row and the first column, if the
/// message says a cell is no counter, else `error` itself.
pub fn counter_error(error: StoreError, row: &[u8], columns: &[(Bytes, Bytes, i64)]) -> StoreError {
    let StoreError::Server { table, message, .. } = &error else {
        return error;
    };
    match not_a_counter(message) {
        Some(len) => StoreError::NotACounter {
            table: table.clone(),
            row: crate::store::error::show_row(row),
            column: columns
                .first()
                .map(|(f, q, _)| crate::store::error::show_column(f, q))
                .unwrap_or_default(),
            len,
        },
        None => error,
    }
}

/// The split points of a table whose regions start at `starts`: every
/// start key but the first (empty) one.
pub fn split_points(starts: Vec<Bytes>) -> Vec<Bytes> {
    starts.into_iter().filter(|k| !k.is_empty()).collect()
}

/// A server-side scanner, read one batch ahead by
/// [`prefetched`](crate::store::prefetch::prefetched): `batch` rows per
/// fetch (for a scan sized by bytes, as many as the last batch's average
/// row says fit in its byte budget: neither gateway's `TScan` has a byte
/// limit of its own), the scanner closed when the rows run out, a fetch
/// fails, or the caller drops the stream.
pub struct ScanFetcher {
    client: Arc<Client>,
    /// The call options of the scope the scan was opened in, its timeout
    /// resolved: each fetch and the close run with them, wherever the
    /// stream is read.
    options: crate::store::CallOptions,
    calls: &'static ScannerCalls,
    table: String,
    id: i32,
    done: bool,
    reversed: bool,
    /// hmap's range: `low` inclusive, `high` exclusive (empty: unbounded).
    low: Bytes,
    high: Bytes,
    /// Cells older than this are dropped here, and rows left without any:
    /// a time range's lower bound that the gateway cannot apply (Thrift1,
    /// whose scans only take an upper bound). 0 for none.
    min_timestamp: i64,
    /// Rows the limit still allows.
    remaining: Option<usize>,
    /// The scan, for its batch sizing.
    sizing: Scan,
    /// Rows asked for per call.
    batch: i32,
}

impl crate::store::prefetch::BatchSource for ScanFetcher {
    async fn next_batch(&mut self) -> Result<Option<Vec<RowResult>>> {
        let options = self.options.clone();
        options
            .scope(async {
                while !self.done {
                    let rows = self.fetch().await?;
                    if !rows.is_empty() {
                        return Ok(Some(rows));
                    }
                }
                Ok(None)
            })
            .await
    }

    async fn close(self) {
        self.options.clone().scope(ScanFetcher::close(&self)).await;
    }
}

impl ScanFetcher {
    /// Reads the gateway's scanner `id`, opened for `scan` on `table`, in a
    /// task of its own; the stream hands out its rows. `min_timestamp` as
    /// the field says. Called where the scan was opened: its fetches keep
    /// that scope's call timeout ([`CallOptions`](crate::store::CallOptions)).
    pub fn start(
        client: Arc<Client>,
        calls: &'static ScannerCalls,
        table: &str,
        id: i32,
        scan: &Scan,
        min_timestamp: i64,
    ) -> RowStream<'static> {
        client
            .scanners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id);
        let timeout = crate::store::call_timeout(client.config.call_timeout);
        let fetcher = ScanFetcher {
            options: crate::store::CallOptions::current()
                .unwrap_or_default()
                .timeout(timeout),
            client,
            calls,
            table: table.to_string(),
            id,
            done: false,
            reversed: scan.reversed,
            low: scan.start.clone(),
            high: scan.stop.clone(),
            min_timestamp,
            remaining: scan.limit,
            batch: i32::try_from(scan.next_sized_batch(0, 0, crate::store::GATEWAY_BATCH_BYTES)).unwrap_or(i32::MAX),
            sizing: Scan {
                batch_size: scan.batch_size,
                batch_bytes: scan.batch_bytes,
                ..Scan::default()
            },
        };
        crate::store::prefetch::prefetched(table, fetcher)
    }

    /// The next batch of rows in hmap's range, at most what the limit allows.
    async fn fetch(&mut self) -> Result<Vec<RowResult>> {
        if self.remaining == Some(0) {
            self.done = true;
            return Ok(Vec::new());
        }
        // No more rows than the limit still wants (at least one).
        let wanted = self.remaining.map_or(self.batch, |r| {
            self.batch.min(i32::try_from(r.max(1)).unwrap_or(i32::MAX))
        });
        let id = self.id;
        let fetched = self
            .client
            .call(
                &self.table,
                self.calls.fetch,
                false,
                |e| {
                    e.i32_field(1, id);
                    e.i32_field(2, wanted);
                },
                self.calls.rows,
            )
            .await;
        let fetched = fetched.inspect_err(|_| self.done = true)?;
        if fetched.is_empty() {
            self.done = true;
        }
        let bytes: usize = fetched.iter().map(RowResult::wire_size).sum();
        let next = self
            .sizing
            .next_sized_batch(fetched.len(), bytes, crate::store::GATEWAY_BATCH_BYTES);
        self.batch = i32::try_from(next).unwrap_or(i32::MAX);
        let mut rows = Vec::with_capacity(fetched.len());
        for mut row in fetched {
            if self.reversed {
                if !self.high.is_empty() && row.row >= self.high {
                    continue;
                }
                if row.row < self.low {
                    self.done = true;
                    break;
                }
            }
            if self.min_timestamp > 0 {
                row.cells.retain(|c| c.timestamp >= self.min_timestamp);
                if row.cells.is_empty() {
                    continue;
                }
            }
            if let Some(r) = &mut self.remaining {
                if *r == 0 {
                    self.done = true;
                    break;
                }
                *r -= 1;
            }
            rows.push(row);
        }
        Ok(rows)
    }

    /// Closes the gateway's scanner. Best effort: the gateway expires
    /// scanners it does not hear from.
    async fn close(&self) {
        let id = self.id;
        match self
            .client
            .call_void(&self.table, self.calls.close, |e| e.i32_field(1, id))
            .await
        {
            // Closed, or unknown to the gateway (expired already: it answers
            // IllegalArgument, "Invalid scanner Id" or "scanner ID is
            // invalid"): gone.
            Ok(()) | Err(StoreError::Server { .. } | StoreError::InvalidRequest { .. }) => {
                self.client
                    .scanners
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&self.id);
            }
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_that_names_only_the_table() {
        assert!(names_only_the_table("t1", "t1"));
        assert!(names_only_the_table(
            "Failed 2 actions: t1: 2 times, servers with issues: null",
            "t1"
        ));
        assert!(names_only_the_table(
            "Failed 1 action: t1: 1 time, servers with issues: null",
            "t1"
        ));
        assert!(!names_only_the_table("t10", "t1"));
        assert!(!names_only_the_table(
            "Failed 2 actions: t10: 2 times, servers with issues: null",
            "t1"
        ));
        assert!(!names_only_the_table(
            "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: Column family g does not exist in region t1",
            "t1"
        ));
        assert!(!names_only_the_table("Failed 1 action: other: t1: 1 time", "t1"));
    }

    #[test]
    fn java_exceptions_are_read_from_the_head_of_the_message() {
        assert_eq!(
            java_exception("org.apache.hadoop.hbase.TableExistsException: t\n\tat X.java:1"),
            Some(("TableExistsException", "t"))
        );
        // A failed batch: its first cause.
        assert_eq!(
            java_exception(
                "Failed 1 action: org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: \
                 Column family g does not exist in region t: 1 time, servers with issues: h,1,2"
            )
            .map(|(class, _)| class),
            Some("NoSuchColumnFamilyException")
        );
        // Only at the head, and only a qualified class name.
        assert_eq!(java_exception("t"), None);
        assert_eq!(
            java_exception("a value mentions org.apache.hadoop.hbase.TableNotFoundException: t"),
            None
        );
        assert_eq!(java_exception("version 2.6: broken"), None);
        assert_eq!(
            not_a_counter(
                "org.apache.hadoop.hbase.DoNotRetryIOException: Field is not a long, it's 3 bytes wide\n\tat"
            ),
            Some(3)
        );
        assert_eq!(
            not_a_counter("java.io.IOException: Field is not a long, it's 3 bytes wide"),
            None
        );
        // Thrift1's stack trace names the remote exception twice.
        assert_eq!(
            not_a_counter(
                "org.apache.hadoop.hbase.DoNotRetryIOException: org.apache.hadoop.hbase.DoNotRetryIOException: \
                 Field is not a long, it's 3 bytes wide\n\tat org.apache.hadoop.hbase.regionserver.HRegion"
            ),
            Some(3)
        );
    }
}
