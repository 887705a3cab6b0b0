//! One multiplexed tokio connection to one server, for one service.
//!
//! Many calls are in flight at once on one TCP connection: each call gets
//! an id, hands its whole frame to a writer task (so that a call cancelled
//! half-way never leaves half a frame on the socket) and waits on a oneshot
//! channel that a reader task fills when the reply with its id arrives.
//! Each call has one deadline, covering the dial (if the connection must be
//! opened), the write and the wait for the reply; a call whose future is
//! dropped unregisters itself and its late reply is discarded. When the
//! connection breaks (the server closes it, a socket error, a frame that
//! does not decode), every pending call fails with [`NativeError::Closed`]
//! and the next call dials again.
//!
//! Two more things break a connection. Its reader or writer task stopping,
//! however it stops (cancelled, panicked, or dropped with the runtime it
//! was dialled on, as when one store is shared by several
//! `#[tokio::test]` functions): the calls waiting on it fail with
//! [`NativeError::Closed`] at once, and the next call dials a new one on
//! its own runtime. And a call that times out while the reader is stuck in
//! the middle of a reply frame (a server that announced a frame and sent
//! part of it, or none, and keeps the socket open): replies come one frame
//! after another, so every later call would time out behind it; the
//! connection is retired and the next call dials a fresh one. A call that
//! times out with no reply begun leaves the connection as it is.
//!
//! The reader task only cuts frames ([`codec::ReadBuffer`], which lets go
//! of a large frame's allocation once the frame is taken off, so that a
//! 64 MiB reply, answered or late for a call that timed out, is freed with
//! the reply rather than held for the connection's life). Each call
//! decodes its own reply, within the bounds of [`super::bound`]:
//! a reply out of bounds fails its call with
//! [`NativeError::InvalidReply`], undecoded, and leaves the connection
//! usable (its framing was sound).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use prost::Message;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;

use super::bound;
use super::codec::{self, KEY_VALUE_CODEC, ReadBuffer, Reply, Response, WireCell};
use super::error::{NativeError, whole_ms};
use super::io::write_and_flush;
use super::proto::{ConnectionHeader, RPCTInfo, RequestHeader, UserInformation};
use crate::security::{KerberosFailure, SecurityError};
use crate::store::{TraceContext, TraceContextSource, metrics};

/// The services a connection can be for (its `ConnectionHeader`'s service name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Service {
    /// `ClientService` on region servers: get, mutate, scan, multi.
    Client,
    /// `ClientMetaService` on masters and region servers: the connection registry.
    ClientMeta,
    /// `MasterService` on the active master: admin.
    Master,
}

impl Service {
    /// The name HBase knows the service by.
    pub fn name(self) -> &'static str {
        match self {
            Service::Client => "ClientService",
            Service::ClientMeta => "ClientMetaService",
            Service::Master => "MasterService",
        }
    }
}

/// How a connection talks to its server.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ConnectionConfig {
    /// The user the calls run as (SIMPLE authentication).
    pub user: String,
    /// The largest reply frame accepted; a larger one breaks the connection.
    pub max_frame: usize,
    /// How long a dial may take. Each call's own deadline still holds; this
    /// bounds a dial that a cancelled call left running.
    pub connect_timeout: Duration,
    /// TLS for every connection (HBase's `hbase.server.netty.tls.enabled`),
    /// or plain TCP (`None`).
    #[cfg(feature = "tls")]
    pub tls: Option<crate::security::Tls>,
    /// Where each request's trace context comes from when the call runs
    /// in no [`TraceContext::scope`] (see
    /// [`NativeConfig::trace_context`](super::NativeConfig::trace_context)).
    pub trace_context: Option<TraceContextSource>,
    /// Kerberos on every connection (HBase's `hbase.security.authentication=kerberos`),
    /// or SIMPLE authentication as [`user`](Self::user) (`None`).
    #[cfg(feature = "kerberos")]
    pub kerberos: Option<crate::security::Kerberos>,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        ConnectionConfig {
            user: std::env::var("USER").unwrap_or_else(|_| "hmap".to_string()),
            max_frame: codec::DEFAULT_MAX_FRAME,
            connect_timeout: Duration::from_secs(10),
            #[cfg(feature = "tls")]
            tls: None,
            trace_context: None,
            #[cfg(feature = "kerberos")]
            kerberos: None,
        }
    }
}

/// A successful call's reply: the decoded message and the cell block's cells.
#[derive(Debug)]
pub struct CallReply<M> {
    /// The response message.
    pub message: M,
    /// The cells that came in the cell block, in order.
    pub cells: Vec<WireCell>,
}

/// A connection to one server for one service; cheap to clone (clones
/// share the socket). Dials on the first call, and again after a break.
#[derive(Clone, Debug)]
pub struct Connection {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    endpoint: String,
    service: Service,
    config: ConnectionConfig,
    next_call_id: AtomicU32,
    live: Arc<tokio::sync::Mutex<Option<Arc<Live>>>>,
    /// Where the latest dial got to, for what a timeout says.
    dial_step: Mutex<&'static str>,
}

type Waiter = oneshot::Sender<Result<Reply, NativeError>>;

/// The calls waiting for replies on one socket, or why the socket broke.
#[derive(Debug, Default)]
struct Calls {
    waiting: HashMap<u32, Waiter>,
    broken: Option<String>,
    /// The server refused this client's settings (it broke the socket
    /// so): the calls fail with [`NativeError::Security`] or
    /// [`NativeError::Tls`], which are not tried again.
    refused: Option<Refusal>,
    /// The reader holds part of a frame and waits for the rest.
    partial: Option<Partial>,
    /// The server has sent a byte on this socket.
    answered: bool,
    /// The writer is writing these bytes, since then.
    writing: Option<(usize, Instant)>,
}

/// Part of a reply frame, read and waiting for the rest.
#[derive(Clone, Copy, Debug)]
struct Partial {
    /// The bytes of it read.
    bytes: usize,
    /// When the last of them arrived.
    last_byte: Instant,
}

type SharedCalls = Arc<Mutex<Calls>>;

/// An open socket: the writer's queue, the waiting calls, the two tasks.
#[derive(Debug)]
struct Live {
    frames: mpsc::UnboundedSender<Bytes>,
    calls: SharedCalls,
    tasks: [AbortHandle; 2],
}

impl Drop for Live {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Live {
    /// After a call on this socket timed out: if the reader is stuck in the
    /// middle of a frame, with no byte of it for at least half the time the
    /// call waited, the socket is retired (broken, its waiting calls failed,
    /// its tasks stopped), so that the next call dials a fresh one. Replies
    /// come one frame after another: every call behind a stalled frame would
    /// time out too. A call that timed out with no reply begun (a slow
    /// server) leaves the socket as it is.
    /// What a call on this socket that has not had its reply waits for.
    fn waiting_for(&self) -> String {
        let calls = lock(&self.calls);
        if let Some((bytes, since)) = calls.writing {
            return format!(
                "writing {bytes} bytes of requests, for {:?} (the server reads no more of them)",
                whole_ms(since.elapsed())
            );
        }
        match calls.partial {
            Some(partial) => format!(
                "the rest of a reply ({} bytes of it read, the last {:?} ago)",
                partial.bytes,
                whole_ms(partial.last_byte.elapsed())
            ),
            None => "the reply, nothing of it read".to_string(),
        }
    }

    fn retire_if_stalled(&self, endpoint: &str, waited: Duration) {
        let stalled = lock(&self.calls)
            .partial
            .filter(|partial| partial.last_byte.elapsed() >= waited / 2);
        let Some(partial) = stalled else {
            return;
        };
        let reason = format!(
            "a reply stalled half read ({} bytes of its frame, nothing more for {:?}); the connection is retired",
            partial.bytes,
            partial.last_byte.elapsed()
        );
        tracing::debug!(endpoint, %reason, "hmap native: connection retired");
        break_all(&self.calls, endpoint, reason);
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Breaks the socket when the task holding it ends, however it ends:
/// returned, panicked, aborted, or dropped with the runtime it ran on (a
/// runtime that shuts down drops its tasks without running them to the
/// end). The calls waiting on the socket fail at once, and the next call
/// dials a new one on its own runtime.
struct BreakOnExit {
    calls: SharedCalls,
    endpoint: String,
    task: &'static str,
}

impl Drop for BreakOnExit {
    fn drop(&mut self) {
        break_all(
            &self.calls,
            &self.endpoint,
            format!(
                "its {} task stopped (it was cancelled or panicked, or its runtime shut down)",
                self.task
            ),
        );
    }
}

/// Locks the call table; a poisoned lock (a panic elsewhere while holding
/// it) still holds a consistent map.
fn lock(calls: &SharedCalls) -> std::sync::MutexGuard<'_, Calls> {
    calls.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Marks the socket broken and fails every waiting call.
fn break_all(calls: &SharedCalls, endpoint: &str, reason: String) {
    break_refused(calls, endpoint, reason, None);
}

/// How a server refused this client's settings, which the same settings
/// meet again: it broke the socket so.
#[derive(Clone, Copy, Debug)]
enum Refusal {
    /// Its Kerberos (or the lack of it).
    Kerberos(KerberosFailure),
    /// Plaintext, by a server that serves TLS only.
    TlsOnly,
}

/// [`break_all`], for a refusal of this client's settings when `refused`
/// says which.
fn break_refused(calls: &SharedCalls, endpoint: &str, reason: String, refused: Option<Refusal>) {
    let (waiting, reason, refused) = {
        let mut calls = lock(calls);
        if calls.broken.is_none() {
            calls.broken = Some(reason);
            calls.refused = refused;
        }
        let reason = calls.broken.clone().unwrap_or_default();
        (std::mem::take(&mut calls.waiting), reason, calls.refused)
    };
    for (_, waiter) in waiting {
        let _ = waiter.send(Err(broken_error(endpoint, &reason, refused, true)));
    }
}

/// The error of a call on a broken socket; `sent`: its request had been
/// handed to the writer (and may have reached the server).
fn broken_error(endpoint: &str, reason: &str, refused: Option<Refusal>, sent: bool) -> NativeError {
    match refused {
        Some(Refusal::Kerberos(failure)) => SecurityError::kerberos(endpoint, failure, reason).into(),
        Some(Refusal::TlsOnly) => NativeError::Tls {
            endpoint: endpoint.to_string(),
            reason: reason.to_string(),
        },
        None => NativeError::Closed {
            endpoint: endpoint.to_string(),
            reason: reason.to_string(),
            sent,
        },
    }
}

/// Unregisters a call when its future ends, however it ends.
struct Registration {
    calls: SharedCalls,
    id: u32,
}

impl Drop for Registration {
    fn drop(&mut self) {
        lock(&self.calls).waiting.remove(&self.id);
    }
}

impl Connection {
    /// A connection to `endpoint` (`host:port`) for `service`; nothing is
    /// dialled until the first call.
    pub fn new(endpoint: impl Into<String>, service: Service, config: ConnectionConfig) -> Self {
        Connection {
            shared: Arc::new(Shared {
                endpoint: endpoint.into(),
                service,
                config,
                next_call_id: AtomicU32::new(0),
                live: Arc::default(),
                dial_step: Mutex::new("not dialled"),
            }),
        }
    }

    /// The server's address.
    pub fn endpoint(&self) -> &str {
        &self.shared.endpoint
    }

    /// Calls `method` with `request` and decodes the reply as `M`, all within
    /// `timeout` (dialling included).
    pub async fn call<M: bound::Reply>(
        &self,
        method: &'static str,
        request: &impl Message,
        timeout: Duration,
    ) -> Result<CallReply<M>, NativeError> {
        let started = Instant::now();
        let mut used = None;
        let reply = match tokio::time::timeout(timeout, self.call_raw(method, request, timeout, &mut used)).await {
            Ok(reply) => reply?,
            Err(_) => {
                let elapsed = started.elapsed();
                let waiting_for = match &used {
                    Some(live) => live.waiting_for(),
                    None => self.shared.dialling(),
                };
                if let Some(live) = used {
                    live.retire_if_stalled(&self.shared.endpoint, elapsed);
                }
                return Err(NativeError::Timeout {
                    endpoint: self.shared.endpoint.clone(),
                    method,
                    elapsed,
                    waiting_for,
                });
            }
        };
        // Within bounds, or refused undecoded (see `bound`); a cell block
        // is decoded only for a reply that carries cells.
        let message = bound::decode::<M>(reply.message)?;
        let cells = match (M::CELLS, reply.cell_block.is_empty()) {
            (_, true) => Vec::new(),
            (true, false) => codec::decode_cell_block(reply.cell_block)?,
            (false, false) => {
                return Err(NativeError::InvalidReply {
                    reason: format!(
                        "a {} carries no cells, yet came with a cell block of {} bytes (not decoded)",
                        M::SHAPE.name,
                        reply.cell_block.len()
                    ),
                });
            }
        };
        Ok(CallReply { message, cells })
    }

    async fn call_raw(
        &self,
        method: &'static str,
        request: &impl Message,
        timeout: Duration,
        used: &mut Option<Arc<Live>>,
    ) -> Result<Reply, NativeError> {
        let live = self.live().await?;
        *used = Some(live.clone());
        // Java reads call ids as ints: keep them positive.
        let id = self.shared.next_call_id.fetch_add(1, Ordering::Relaxed) & 0x7FFF_FFFF;
        let header = RequestHeader {
            call_id: Some(id),
            trace_info: trace_info(self.shared.config.trace_context.as_ref()),
            method_name: Some(method.to_string()),
            request_param: Some(true),
            timeout: Some(u32::try_from(timeout.as_millis()).unwrap_or(u32::MAX)),
            ..Default::default()
        };
        let mut frame = BytesMut::new();
        codec::encode_request(&header, request, &[], &mut frame)?;
        let (sender, receiver) = oneshot::channel();
        let closed = |reason: String, sent: bool| NativeError::Closed {
            endpoint: self.shared.endpoint.clone(),
            reason,
            sent,
        };
        let _registration = {
            let mut calls = lock(&live.calls);
            if let Some(reason) = &calls.broken {
                return Err(broken_error(&self.shared.endpoint, reason, calls.refused, false));
            }
            calls.waiting.insert(id, sender);
            Registration {
                calls: live.calls.clone(),
                id,
            }
        };
        // A stopped task has broken the socket already (`BreakOnExit`);
        // breaking it here as well covers the moment in between.
        let stopped = |task: &str, sent: bool| {
            let reason = format!("its {task} task stopped");
            break_all(&live.calls, &self.shared.endpoint, reason.clone());
            closed(reason, sent)
        };
        live.frames.send(frame.freeze()).map_err(|_| stopped("writer", false))?;
        receiver.await.map_err(|_| stopped("reader", true))?
    }

    /// The open socket, dialled if there is none or it broke.
    ///
    /// The dial runs in a task of its own that installs the socket, so that
    /// a call cancelled while dialling does not waste the connection; the
    /// calls behind it wait for that dial instead of starting their own.
    async fn live(&self) -> Result<Arc<Live>, NativeError> {
        let mut slot = self.shared.live.clone().lock_owned().await;
        if let Some(live) = slot.as_ref()
            && lock(&live.calls).broken.is_none()
        {
            return Ok(live.clone());
        }
        let shared = self.shared.clone();
        let dial = tokio::spawn(async move {
            *slot = None;
            let started = Instant::now();
            let live = match tokio::time::timeout(shared.config.connect_timeout, shared.dial()).await {
                Ok(live) => Arc::new(live?),
                Err(_) => {
                    return Err(NativeError::Timeout {
                        endpoint: shared.endpoint.clone(),
                        method: "connect",
                        elapsed: started.elapsed(),
                        waiting_for: shared.dialling(),
                    });
                }
            };
            *slot = Some(live.clone());
            Ok(live)
        });
        dial.await.map_err(|e| NativeError::Closed {
            endpoint: self.shared.endpoint.clone(),
            reason: format!("the dial failed: {e}"),
            sent: false,
        })?
    }
}

impl Shared {
    /// Notes where a dial got to.
    fn dial_step(&self, step: &'static str) {
        *self.dial_step.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = step;
    }

    /// What a call still dialling waits for.
    fn dialling(&self) -> String {
        let step = *self.dial_step.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        format!("connecting: {step}")
    }

    /// Dials (see [`dial_once`](Self::dial_once)). A SASL handshake the
    /// server refuses is tried again on a new connection, up to
    /// [`SASL_RETRIES`] times after a random pause, as HBase's Java client
    /// does (`hbase.security.relogin.maxretries`, 5): a server re-logging
    /// in from its keytab has, for a moment, no credentials to accept
    /// with, and says "Failure to initialize security context". The
    /// connect deadline bounds the retries.
    async fn dial(&self) -> Result<Live, NativeError> {
        let mut tries = 0;
        loop {
            match self.dial_once().await {
                Err(NativeError::Security(SecurityError::Kerberos {
                    failure: KerberosFailure::Refused,
                    reason,
                    ..
                })) if tries < SASL_RETRIES => {
                    tries += 1;
                    let pause = Duration::from_millis(1 + super::random::random_u64() % SASL_RETRY_PAUSE_MS);
                    tracing::debug!(endpoint = %self.endpoint, %reason, ?pause, tries, "the SASL handshake was refused; trying again");
                    tokio::time::sleep(pause).await;
                }
                other => return other,
            }
        }
    }

    /// Dials, with the TLS handshake first when TLS is on, and sends the
    /// preamble and the connection header.
    async fn dial_once(&self) -> Result<Live, NativeError> {
        let endpoint = &self.endpoint;
        let connect_error = |source| NativeError::Connect {
            endpoint: endpoint.clone(),
            cause: source,
        };
        self.dial_step("the TCP connection");
        let stream = TcpStream::connect(endpoint.as_str()).await.map_err(connect_error)?;
        stream.set_nodelay(true).map_err(connect_error)?;
        #[cfg(feature = "tls")]
        if let Some(tls) = &self.config.tls {
            self.dial_step("the TLS handshake");
            let mut stream = super::tls::handshake(tls, endpoint, stream).await?;
            let wire = Wire::Tls {
                client_auth: tls.has_client_auth(),
            };
            let layer = self.start(&mut stream, wire).await?;
            let (reader, writer) = tokio::io::split(stream);
            return Ok(self.spawn(reader, writer, wire, layer));
        }
        let mut stream = stream;
        let layer = self.start(&mut stream, Wire::Plain).await?;
        let (reader, writer) = stream.into_split();
        Ok(self.spawn(reader, writer, Wire::Plain, layer))
    }

    /// Sends the preamble and the connection header on a new stream, after
    /// the SASL handshake with Kerberos; returns the security layer the
    /// messages go through.
    async fn start<S: AsyncRead + AsyncWrite + Unpin>(&self, stream: &mut S, wire: Wire) -> Result<Layer, NativeError> {
        // With Kerberos the calls run as the client's principal: no
        // effective user (any other name would ask for impersonation).
        #[cfg(feature = "kerberos")]
        let kerberos = self.config.kerberos.as_ref();
        #[cfg(not(feature = "kerberos"))]
        let kerberos: Option<&()> = None;
        let header = ConnectionHeader {
            user_info: kerberos.is_none().then(|| UserInformation {
                effective_user: self.config.user.clone(),
                real_user: None,
            }),
            service_name: Some(self.service.name().to_string()),
            cell_block_codec_class: Some(KEY_VALUE_CODEC.to_string()),
            cell_block_compressor_class: None,
            version_info: Some(codec::client_version_info()),
        };
        let start = codec::encode_connection_start(&header);
        #[cfg(feature = "kerberos")]
        if let Some(kerberos) = kerberos {
            self.dial_step("the SASL handshake (tickets from the KDC, then tokens with the server)");
            let header = &start[codec::PREAMBLE.len()..];
            let sasl = super::rpc_sasl::handshake(kerberos, &self.endpoint, stream, header).await?;
            return Ok(Layer { sasl });
        }
        self.dial_step("writing the connection header");
        match write_and_flush(stream, &start).await {
            Ok(()) => Ok(Layer::default()),
            Err(source) => Err(match wire {
                Wire::Plain => NativeError::Connect {
                    endpoint: self.endpoint.clone(),
                    cause: source,
                },
                #[cfg(feature = "tls")]
                Wire::Tls { .. } => NativeError::Closed {
                    endpoint: self.endpoint.clone(),
                    reason: format!("writing the connection header failed: {}", wire.io_reason(&source)),
                    sent: false,
                },
            }),
        }
    }

    /// Starts the reader and writer tasks of a new stream.
    fn spawn<R, W>(&self, reader: R, writer: W, wire: Wire, layer: Layer) -> Live
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let endpoint = &self.endpoint;
        let calls = SharedCalls::default();
        let (frames, queue) = mpsc::unbounded_channel();
        let read = tokio::spawn(read_loop(
            reader,
            calls.clone(),
            endpoint.clone(),
            self.config.max_frame,
            wire,
            layer.clone(),
            self.config.connect_timeout,
        ));
        let write = tokio::spawn(write_loop(
            writer,
            queue,
            calls.clone(),
            endpoint.clone(),
            wire,
            layer,
            self.config.connect_timeout,
        ));
        Live {
            frames,
            calls,
            tasks: [read.abort_handle(), write.abort_handle()],
        }
    }
}

/// The security layer of a connection: with Kerberos at integrity or
/// privacy, every message both ways is wrapped (see [`crate::security::sasl`]);
/// otherwise bytes go as they are.
#[derive(Clone, Debug, Default)]
struct Layer {
    #[cfg(feature = "kerberos")]
    sasl: Option<Arc<crate::security::kerberos::SaslWrap>>,
}

/// Room for a wrapped message beyond the frame it carries (a GSSAPI
/// wrap token's header, checksum and padding are well under 1 KiB).
#[cfg(feature = "kerberos")]
const WRAP_OVERHEAD: usize = 64 * 1024;

impl Layer {
    /// Appends `plain` to `out` as it goes on the wire.
    fn put(&self, plain: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        #[cfg(feature = "kerberos")]
        if let Some(sasl) = &self.sasl {
            return sasl.wrap(plain, out);
        }
        out.extend_from_slice(plain);
        Ok(())
    }

    /// A buffer for the wrapped messages as they arrive, when messages are
    /// wrapped.
    fn wrapped_buffer(&self, max_frame: usize) -> Option<ReadBuffer> {
        #[cfg(feature = "kerberos")]
        if self.sasl.is_some() {
            return Some(ReadBuffer::new(max_frame.saturating_add(WRAP_OVERHEAD)));
        }
        let _ = max_frame;
        None
    }

    /// Moves every whole wrapped message of `wrapped` into `plain`,
    /// unwrapped.
    fn unwrap_into(&self, wrapped: &mut ReadBuffer, plain: &mut ReadBuffer) -> Result<(), String> {
        while let Some(message) = wrapped
            .next_frame()
            .map_err(|e| format!("invalid wrapped reply: {e}"))?
        {
            #[cfg(feature = "kerberos")]
            if let Some(sasl) = &self.sasl {
                plain.buf_mut().extend_from_slice(&sasl.unwrap(&message)?);
                continue;
            }
            plain.buf_mut().extend_from_slice(&message);
        }
        Ok(())
    }
}

/// What a connection's bytes travel over, for what its errors say.
#[derive(Clone, Copy, Debug)]
enum Wire {
    /// Plain TCP.
    Plain,
    /// TLS, with or without a client certificate.
    #[cfg(feature = "tls")]
    Tls {
        /// A client certificate is presented.
        client_auth: bool,
    },
}

impl Wire {
    /// An IO error's text, with what to change when a TLS server refused
    /// this client (see [`super::tls`]).
    fn io_reason(self, e: &std::io::Error) -> String {
        match self {
            Wire::Plain => e.to_string(),
            #[cfg(feature = "tls")]
            Wire::Tls { client_auth } => super::tls::io_failure(e, client_auth),
        }
    }

    /// Whether the first bytes a plain connection received are a TLS
    /// record (an alert or a handshake message, TLS 1.0 to 1.3), not a
    /// reply frame: a TLS server's answer to a plaintext preamble. (A reply
    /// frame that starts so would announce more than 352 MB, beyond any
    /// frame limit.)
    fn speaks_tls_unasked(self, first: &[u8]) -> bool {
        matches!(self, Wire::Plain) && crate::security::probe::is_tls_record(first)
    }

    /// Why a connection closed (or was reset) before its first byte came,
    /// and whether the server serves TLS only (a refusal of this client's
    /// plaintext, not tried again). A server that serves TLS only
    /// (`hbase.server.netty.tls.enabled` with
    /// `hbase.server.netty.tls.supportplaintext` false) closes a plaintext
    /// connection that way, without a byte (its `SslHandler` finds no TLS
    /// record in the preamble), and so does a server that is stopping: a
    /// plain connection asks the server once in TLS (see `security/probe.rs`),
    /// within `probe_timeout` (at most 2 s).
    async fn closed_before_any_reply(self, how: &str, endpoint: &str, probe_timeout: Duration) -> (String, bool) {
        match self {
            Wire::Plain if crate::security::probe::answers_tls(endpoint, probe_timeout).await => (
                format!(
                    "{how} before any reply, and it answers TLS: it serves TLS only \
                     (hbase.server.netty.tls.enabled true, hbase.server.netty.tls.supportplaintext false); \
                     connect with TLS: `NativeConfig::tls` (hmap's feature `tls`), or `--ca` in hmap-cli"
                ),
                true,
            ),
            Wire::Plain => (
                format!(
                    "{how} before any reply (it does not answer TLS either): the server is stopping. {NOT_HBASE_RPC}"
                ),
                false,
            ),
            #[cfg(feature = "tls")]
            Wire::Tls { .. } => (format!("{how} before any reply. {NOT_HBASE_RPC}"), false),
        }
    }
}

/// What else closes a connection at HBase's preamble: a peer that does
/// not speak HBase's RPC, which reads `HBas` as a length it refuses.
const NOT_HBASE_RPC: &str = "So do a ZooKeeper server (give its quorum to `NativeConfig::zookeeper`, \
     not `NativeConfig::new`) and a Thrift gateway (use `ThriftStore` or `Thrift1Store`): \
     `NativeConfig::new` takes a master's RPC address (16000 by default)";

/// How many times a refused SASL handshake is tried again (HBase's
/// `hbase.security.relogin.maxretries` default).
const SASL_RETRIES: u32 = 5;

/// The longest pause before such a try, in milliseconds (shorter than the
/// Java client's `hbase.security.relogin.maxbackoff`, 5 s, so that the
/// tries fit a connect deadline of seconds).
const SASL_RETRY_PAUSE_MS: u64 = 500;

/// Writes queued frames, several at a time when they pile up.
async fn write_loop(
    mut writer: impl AsyncWrite + Unpin,
    mut queue: mpsc::UnboundedReceiver<Bytes>,
    calls: SharedCalls,
    endpoint: String,
    wire: Wire,
    layer: Layer,
    probe_timeout: Duration,
) {
    let _break_on_exit = BreakOnExit {
        calls: calls.clone(),
        endpoint: endpoint.clone(),
        task: "writer",
    };
    let mut batch = Vec::new();
    let mut plain = Vec::new();
    let mut out = Vec::new();
    while queue.recv_many(&mut batch, 64).await > 0 {
        plain.clear();
        out.clear();
        for frame in batch.drain(..) {
            plain.extend_from_slice(&frame);
        }
        // Wrapped as one message when wrapped: HBase reads every request
        // a wrapped message holds, as the bytes of one stream.
        if let Err(e) = layer.put(&plain, &mut out) {
            break_all(&calls, &endpoint, format!("the security layer failed: {e}"));
            return;
        }
        lock(&calls).writing = Some((out.len(), Instant::now()));
        // The flush matters with TLS: a write returns once TLS has taken
        // the bytes, and what the socket did not take yet goes out only
        // with a flush (or the next write, which may never come).
        let written = write_and_flush(&mut writer, &out).await;
        lock(&calls).writing = None;
        if let Err(e) = written {
            // A server that serves TLS only may close a plaintext
            // connection before the first request is written.
            let unanswered = !lock(&calls).answered
                && matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
                );
            if matches!(wire, Wire::Plain) && unanswered {
                let how = format!("write failed ({e})");
                let (reason, tls_only) = wire.closed_before_any_reply(&how, &endpoint, probe_timeout).await;
                break_refused(&calls, &endpoint, reason, tls_only.then_some(Refusal::TlsOnly));
            } else {
                break_all(&calls, &endpoint, format!("write failed: {}", wire.io_reason(&e)));
            }
            return;
        }
        metrics::bytes_sent("native", out.len());
    }
}

/// Reads reply frames and hands each to the call waiting for it.
async fn read_loop(
    mut reader: impl AsyncRead + Unpin,
    calls: SharedCalls,
    endpoint: String,
    max_frame: usize,
    wire: Wire,
    layer: Layer,
    probe_timeout: Duration,
) {
    let _break_on_exit = BreakOnExit {
        calls: calls.clone(),
        endpoint: endpoint.clone(),
        task: "reader",
    };
    let mut buf = ReadBuffer::new(max_frame);
    // With a wrapping layer the socket's bytes go here first, and come
    // out unwrapped into `buf`.
    let mut wrapped = layer.wrapped_buffer(max_frame);
    let mut last_byte = Instant::now();
    let mut any_byte = false;
    // Whether the connection's first bytes were checked for a TLS record.
    let mut first_checked = false;
    let mut refused = None;
    let reason = 'read: loop {
        if let Some(wrapped) = wrapped.as_mut()
            && let Err(e) = layer.unwrap_into(wrapped, &mut buf)
        {
            break e;
        }
        if !first_checked && buf.len() >= 3 {
            first_checked = true;
            if wire.speaks_tls_unasked(buf.bytes()) {
                refused = Some(Refusal::TlsOnly);
                break "the server answered the plaintext preamble with a TLS record: it serves TLS \
                       (hbase.server.netty.tls.enabled); connect with TLS (`NativeConfig::tls`, hmap's feature `tls`)"
                    .to_string();
            }
        }
        loop {
            match buf.next_frame() {
                Ok(Some(frame)) => match codec::decode_response(frame) {
                    Ok(response) => {
                        if let Err((reason, kind)) = dispatch(&calls, response) {
                            refused = kind.map(Refusal::Kerberos);
                            break 'read reason;
                        }
                    }
                    Err(e) => break 'read format!("undecodable reply: {e}"),
                },
                Ok(None) => break,
                Err(e) => break 'read format!("invalid reply: {e}"),
            }
        }
        // What a timed-out call looks at to tell a stalled reply (see
        // `Live::retire_if_stalled`).
        let held = buf.len() + wrapped.as_ref().map_or(0, ReadBuffer::len);
        lock(&calls).partial = (held > 0).then_some(Partial { bytes: held, last_byte });
        let target = match wrapped.as_mut() {
            Some(wrapped) => wrapped.buf_mut(),
            None => buf.buf_mut(),
        };
        let read = reader.read_buf(target).await;
        last_byte = Instant::now();
        match read {
            Ok(0) if !any_byte => {
                let (reason, tls_only) = wire
                    .closed_before_any_reply("closed by the server", &endpoint, probe_timeout)
                    .await;
                refused = tls_only.then_some(Refusal::TlsOnly);
                break reason;
            }
            Ok(0) if held == 0 => break "closed by the server".to_string(),
            Ok(0) => break format!("closed by the server in the middle of a reply ({held} bytes of it read)"),
            Ok(bytes) => {
                metrics::bytes_received("native", bytes);
                if !any_byte {
                    any_byte = true;
                    lock(&calls).answered = true;
                }
            }
            Err(e) if !any_byte && e.kind() == std::io::ErrorKind::ConnectionReset => {
                let (reason, tls_only) = wire
                    .closed_before_any_reply("reset by the server", &endpoint, probe_timeout)
                    .await;
                refused = tls_only.then_some(Refusal::TlsOnly);
                break reason;
            }
            Err(e) => break format!("read failed: {}", wire.io_reason(&e)),
        }
    };
    break_refused(&calls, &endpoint, reason, refused);
}

/// The trace context a request carries: the current
/// [`TraceContext::scope`]'s, else `source`'s, as the W3C headers HBase's
/// propagator reads (`RPCTInfo.headers`); none when neither gives one.
fn trace_info(source: Option<&TraceContextSource>) -> Option<RPCTInfo> {
    let info = |context: &TraceContext| {
        let mut headers = std::collections::BTreeMap::new();
        headers.insert("traceparent".to_string(), context.traceparent().to_string());
        if let Some(state) = context.tracestate() {
            headers.insert("tracestate".to_string(), state.to_string());
        }
        RPCTInfo { headers }
    };
    TraceContext::with_current(info).or_else(|| source?.get().as_ref().map(info))
}

/// Hands a reply to its call. An exception for no call in flight (HBase
/// answers a bad connection header with call id -1) breaks the connection,
/// typed when it is a Kerberos server's refusal of a client without
/// Kerberos; a reply for a call no longer waiting (cancelled) is dropped.
fn dispatch(calls: &SharedCalls, response: Response) -> Result<(), (String, Option<KerberosFailure>)> {
    let waiter = lock(calls).waiting.remove(&response.call_id);
    match (waiter, response.result) {
        (Some(waiter), result) => {
            let _ = waiter.send(result.map_err(NativeError::Remote));
            Ok(())
        }
        (None, Err(e)) if response.call_id > 0x7FFF_FFFF && e.message.contains("Authentication is required") => Err((
            format!(
                "the server demands Kerberos (hbase.security.authentication=kerberos) and refused this client's SIMPLE authentication ({e}): connect with `NativeConfig::kerberos` (hmap's feature `kerberos`)"
            ),
            Some(KerberosFailure::AuthenticationRequired),
        )),
        (None, Err(e)) if response.call_id > 0x7FFF_FFFF => {
            Err((format!("the server refused the connection: {e}"), None))
        }
        (None, _) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::security::probe;
    use crate::store::native::codec::encode_response;
    use crate::store::native::proto::{ExceptionResponse, GetClusterIdRequest, GetClusterIdResponse, ResponseHeader};
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpListener;

    /// A fake server's view of one connection: reads the preamble and
    /// header, then requests.
    struct Peer {
        stream: TcpStream,
        buf: BytesMut,
    }

    impl Peer {
        async fn accept(listener: &TcpListener) -> Peer {
            let (mut stream, preamble) = loop {
                let (mut stream, _) = listener.accept().await.expect("accept");
                let mut preamble = [0; 6];
                stream.read_exact(&mut preamble).await.expect("preamble");
                // A connection closed before any reply is asked once in TLS
                // (see `probe`): not the client's next connection.
                if !probe::is_tls_record(&preamble) {
                    break (stream, preamble);
                }
            };
            assert_eq!(&preamble, b"HBas\x00\x50");
            let len = stream.read_u32().await.expect("header length");
            let mut header = vec![0; len as usize];
            stream.read_exact(&mut header).await.expect("header");
            let header = ConnectionHeader::decode(&header[..]).expect("connection header");
            assert_eq!(header.service_name.as_deref(), Some("ClientMetaService"));
            assert_eq!(header.cell_block_codec_class.as_deref(), Some(KEY_VALUE_CODEC));
            // The client's version, as HBase's Java client sends its own.
            assert_eq!(header.version_info, Some(codec::client_version_info()));
            Peer {
                stream,
                buf: BytesMut::new(),
            }
        }

        /// The next request: its header.
        async fn request(&mut self) -> RequestHeader {
            loop {
                if let Some(mut frame) = codec::split_frame(&mut self.buf, 1 << 20).expect("frame") {
                    let len = prost::encoding::decode_varint(&mut frame).expect("varint") as usize;
                    return RequestHeader::decode(frame.split_to(len)).expect("request header");
                }
                assert!(
                    self.stream.read_buf(&mut self.buf).await.expect("read") > 0,
                    "client hung up"
                );
            }
        }

        /// The next request's call id, `None` once the client hangs up.
        async fn try_request(&mut self) -> Option<u32> {
            loop {
                if let Some(mut frame) = codec::split_frame(&mut self.buf, 1 << 20).expect("frame") {
                    let len = prost::encoding::decode_varint(&mut frame).expect("varint") as usize;
                    return RequestHeader::decode(frame.split_to(len))
                        .expect("request header")
                        .call_id;
                }
                if self.stream.read_buf(&mut self.buf).await.unwrap_or(0) == 0 {
                    return None;
                }
            }
        }

        async fn reply(&mut self, call_id: u32, cluster: &str) {
            let message = GetClusterIdResponse {
                cluster_id: Some(cluster.to_string()),
            }
            .encode_to_vec();
            let header = ResponseHeader {
                call_id: Some(call_id),
                ..Default::default()
            };
            let frame = encode_response(&header, Some(&message), &[]);
            self.stream.write_all(&frame).await.expect("write reply");
        }
    }

    async fn fake_server() -> (TcpListener, Connection) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let endpoint = listener.local_addr().expect("addr").to_string();
        let connection = Connection::new(endpoint, Service::ClientMeta, ConnectionConfig::default());
        (listener, connection)
    }

    async fn cluster_id(connection: &Connection, timeout: Duration) -> Result<String, NativeError> {
        let reply = connection
            .call::<GetClusterIdResponse>("GetClusterId", &GetClusterIdRequest {}, timeout)
            .await?;
        Ok(reply.message.cluster_id.unwrap_or_default())
    }

    const LONG: Duration = Duration::from_secs(10);

    #[tokio::test]
    async fn many_calls_share_one_connection_and_replies_come_in_any_order() {
        let (listener, connection) = fake_server().await;
        let server = tokio::spawn(async move {
            let mut peer = Peer::accept(&listener).await;
            let mut ids = Vec::new();
            for _ in 0..16 {
                let header = peer.request().await;
                assert_eq!(header.method_name.as_deref(), Some("GetClusterId"));
                assert!(header.timeout.is_some_and(|t| t > 0));
                ids.push(header.call_id.expect("call id"));
            }
            // Answer last first; each reply names its call.
            for id in ids.iter().rev() {
                peer.reply(*id, &format!("cluster-{id}")).await;
            }
            ids
        });
        let calls: Vec<_> = (0..16).map(|_| cluster_id(&connection, LONG)).collect();
        let answers = futures_join(calls).await;
        let ids = server.await.expect("server");
        let mut got: Vec<String> = answers.into_iter().map(|a| a.expect("answered")).collect();
        got.sort();
        let mut want: Vec<String> = ids.iter().map(|id| format!("cluster-{id}")).collect();
        want.sort();
        assert_eq!(got, want);
    }

    /// Polls many futures at once on this task.
    async fn futures_join<F: std::future::Future>(futures: Vec<F>) -> Vec<F::Output> {
        let mut set = Vec::new();
        for f in futures {
            set.push(Box::pin(f));
        }
        let mut out: Vec<Option<F::Output>> = set.iter().map(|_| None).collect();
        std::future::poll_fn(|cx| {
            let mut pending = false;
            for (i, f) in set.iter_mut().enumerate() {
                if out[i].is_none() {
                    match f.as_mut().poll(cx) {
                        std::task::Poll::Ready(v) => out[i] = Some(v),
                        std::task::Poll::Pending => pending = true,
                    }
                }
            }
            if pending {
                std::task::Poll::Pending
            } else {
                std::task::Poll::Ready(())
            }
        })
        .await;
        out.into_iter().map(|o| o.expect("ready")).collect()
    }

    #[tokio::test]
    async fn a_call_times_out_and_the_connection_stays_usable() {
        let (listener, connection) = fake_server().await;
        let server = tokio::spawn(async move {
            let mut peer = Peer::accept(&listener).await;
            let late = peer.request().await.call_id.expect("id");
            let next = peer.request().await.call_id.expect("id");
            // The timed-out call's reply comes late, and is dropped.
            peer.reply(late, "late").await;
            peer.reply(next, "next").await;
        });
        let started = Instant::now();
        let err = cluster_id(&connection, Duration::from_millis(200))
            .await
            .expect_err("no reply in time");
        match &err {
            NativeError::Timeout { method, elapsed, .. } => {
                assert_eq!(*method, "GetClusterId");
                assert!(*elapsed >= Duration::from_millis(200), "{elapsed:?}");
            }
            other => panic!("not a timeout: {other}"),
        }
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(err.to_string().contains("timed out after"), "{err}");
        assert_eq!(cluster_id(&connection, LONG).await.expect("answered"), "next");
        server.await.expect("server");
    }

    /// Polls a call once (enough to send its request on an open
    /// connection, or to start a dial), then drops it.
    async fn poll_once_and_drop(connection: &Connection) {
        let mut call = Box::pin(cluster_id(connection, LONG));
        let pending = std::future::poll_fn(|cx| std::task::Poll::Ready(call.as_mut().poll(cx).is_pending())).await;
        assert!(pending);
    }

    #[tokio::test]
    async fn a_dropped_call_leaves_the_connection_usable() {
        let (listener, connection) = fake_server().await;
        let server = tokio::spawn(async move {
            let mut peer = Peer::accept(&listener).await;
            let first = peer.request().await.call_id.expect("id");
            peer.reply(first, "first").await;
            let dropped = peer.request().await.call_id.expect("id");
            let next = peer.request().await.call_id.expect("id");
            assert_ne!(dropped, next);
            peer.reply(dropped, "dropped").await;
            peer.reply(next, "next").await;
        });
        assert_eq!(cluster_id(&connection, LONG).await.expect("answered"), "first");
        poll_once_and_drop(&connection).await;
        assert_eq!(cluster_id(&connection, LONG).await.expect("answered"), "next");
        server.await.expect("server");
    }

    #[tokio::test]
    async fn a_call_dropped_while_dialling_does_not_waste_the_dial() {
        let (listener, connection) = fake_server().await;
        let server = tokio::spawn(async move {
            // One connection, one request: the dropped call sent nothing.
            let mut peer = Peer::accept(&listener).await;
            let id = peer.request().await.call_id.expect("id");
            peer.reply(id, "one dial").await;
            let again = tokio::time::timeout(Duration::from_millis(200), listener.accept()).await;
            assert!(again.is_err(), "a second dial");
        });
        poll_once_and_drop(&connection).await;
        assert_eq!(cluster_id(&connection, LONG).await.expect("answered"), "one dial");
        server.await.expect("server");
    }

    #[tokio::test]
    async fn a_broken_connection_fails_every_pending_call_and_is_dialled_again() {
        let (listener, connection) = fake_server().await;
        let server = tokio::spawn(async move {
            let mut peer = Peer::accept(&listener).await;
            peer.request().await;
            peer.request().await;
            drop(peer);
            // The next call dials again.
            let mut peer = Peer::accept(&listener).await;
            let id = peer.request().await.call_id.expect("id");
            peer.reply(id, "again").await;
        });
        let results = futures_join(vec![cluster_id(&connection, LONG), cluster_id(&connection, LONG)]).await;
        for r in results {
            match r {
                Err(NativeError::Closed { reason, .. }) => {
                    assert!(
                        reason.starts_with("closed by the server before any reply")
                            && reason.contains("ZooKeeper server")
                            && reason.contains("`NativeConfig::zookeeper`")
                            && reason.contains("`ThriftStore`"),
                        "{reason}"
                    )
                }
                other => panic!("expected a broken connection, got {other:?}"),
            }
        }
        assert_eq!(cluster_id(&connection, LONG).await.expect("re-dialled"), "again");
        server.await.expect("server");
    }

    #[tokio::test]
    async fn exceptions_reach_their_call_typed() {
        let (listener, connection) = fake_server().await;
        let server = tokio::spawn(async move {
            let mut peer = Peer::accept(&listener).await;
            let id = peer.request().await.call_id.expect("id");
            let header = ResponseHeader {
                call_id: Some(id),
                exception: Some(ExceptionResponse {
                    exception_class_name: Some("org.apache.hadoop.hbase.CallQueueTooBigException".into()),
                    stack_trace: Some("org.apache.hadoop.hbase.CallQueueTooBigException: Call queue is full".into()),
                    server_overloaded: Some(true),
                    ..Default::default()
                }),
                cell_block_meta: None,
            };
            peer.stream
                .write_all(&encode_response(&header, None, &[]))
                .await
                .expect("write");
            let id = peer.request().await.call_id.expect("id");
            peer.reply(id, "fine").await;
        });
        let err = cluster_id(&connection, LONG).await.expect_err("exception");
        let remote = err.remote().expect("a remote error");
        assert_eq!(remote.kind, crate::store::native::ExceptionKind::CallQueueTooBig);
        assert!(remote.server_overloaded);
        assert_eq!(remote.message, "Call queue is full");
        // An exception does not break the connection.
        assert_eq!(cluster_id(&connection, LONG).await.expect("answered"), "fine");
        server.await.expect("server");
    }

    /// A fake server that answers the first request with a connection-level
    /// exception (call id -1, as HBase refuses a connection), then waits for
    /// the client to go.
    async fn refusing_server(
        class: &'static str,
        message: &'static str,
        do_not_retry: bool,
    ) -> (Connection, tokio::task::JoinHandle<()>) {
        let (listener, connection) = fake_server().await;
        let server = tokio::spawn(async move {
            let mut peer = Peer::accept(&listener).await;
            peer.request().await;
            let header = ResponseHeader {
                call_id: Some(u32::MAX),
                exception: Some(ExceptionResponse {
                    exception_class_name: Some(class.into()),
                    stack_trace: Some(format!("{class}: {message}")),
                    do_not_retry: do_not_retry.then_some(true),
                    ..Default::default()
                }),
                cell_block_meta: None,
            };
            peer.stream
                .write_all(&encode_response(&header, None, &[]))
                .await
                .expect("write");
            let _ = peer.stream.read(&mut [0; 1]).await;
        });
        (connection, server)
    }

    #[tokio::test]
    async fn a_connection_level_exception_fails_the_pending_calls() {
        // HBase answers a connection it refuses (bad header, failed
        // authorisation) with call id -1.
        let (connection, server) = refusing_server(
            "org.apache.hadoop.hbase.ipc.FatalConnectionException",
            "bad header",
            false,
        )
        .await;
        let err = cluster_id(&connection, LONG).await.expect_err("refused");
        match &err {
            NativeError::Closed { reason, .. } => {
                assert!(
                    reason.contains("refused the connection") && reason.contains("bad header"),
                    "{reason}"
                )
            }
            other => panic!("expected a broken connection, got {other}"),
        }
        drop(connection);
        server.await.expect("server");
    }

    #[tokio::test]
    async fn a_kerberos_servers_refusal_of_a_simple_client_is_typed() {
        // What HBase with hbase.security.authentication=kerberos answers a
        // SIMPLE preamble: call id -1, AccessDeniedException, then it
        // closes. Every call waiting, and the next one on the same socket,
        // fails with the typed error that says to use Kerberos.
        let (connection, server) = refusing_server(
            "org.apache.hadoop.hbase.security.AccessDeniedException",
            "Authentication is required",
            true,
        )
        .await;
        let err = cluster_id(&connection, LONG).await.expect_err("refused");
        match &err {
            NativeError::Security(SecurityError::Kerberos { failure, reason, .. }) => {
                assert_eq!(*failure, KerberosFailure::AuthenticationRequired);
                assert!(
                    reason.contains("NativeConfig::kerberos") && reason.contains("Authentication is required"),
                    "{reason}"
                );
            }
            other => panic!("expected a Kerberos refusal, got {other:?}"),
        }
        drop(connection);
        server.await.expect("server");
    }

    #[tokio::test]
    async fn hostile_replies_break_the_connection_with_a_typed_error() {
        for (garbage, reason) in [
            (&[0xFF, 0xFF, 0xFF, 0xFF][..], "exceeds"),
            (&[0, 0, 0, 3, 0x7F, 1, 2][..], "truncated response header"),
            (&[0, 0, 0, 9, 1][..], "in the middle of a reply"),
        ] {
            let (listener, connection) = fake_server().await;
            let server = tokio::spawn(async move {
                let mut peer = Peer::accept(&listener).await;
                peer.request().await;
                peer.stream.write_all(garbage).await.expect("write");
                peer.stream.shutdown().await.expect("shutdown");
                // Keep the socket until the client gives up.
                let _ = peer.stream.read(&mut [0; 1]).await;
            });
            let err = cluster_id(&connection, LONG).await.expect_err("garbage");
            assert!(
                matches!(&err, NativeError::Closed { reason: r, .. } if r.contains(reason)),
                "{reason}: {err}"
            );
            drop(connection);
            server.await.expect("server");
        }
    }

    #[tokio::test]
    async fn a_large_reply_leaves_no_memory_held_by_the_connection() {
        use crate::store::native::proto::{GetResponse, Result as ProtoResult};
        let (listener, connection) = fake_server().await;
        let server = tokio::spawn(async move {
            let mut peer = Peer::accept(&listener).await;
            for size in [4 << 20, 3] {
                let id = peer.request().await.call_id.expect("call id");
                let cells = [WireCell {
                    row: "r".into(),
                    family: "f".into(),
                    qualifier: "q".into(),
                    timestamp: 1,
                    cell_type: 4,
                    value: Bytes::from(vec![7; size]),
                }];
                let mut block = BytesMut::new();
                codec::encode_cell_block(&cells, &mut block);
                let message = GetResponse {
                    result: Some(ProtoResult {
                        associated_cell_count: Some(1),
                        ..Default::default()
                    }),
                }
                .encode_to_vec();
                let header = ResponseHeader {
                    call_id: Some(id),
                    ..Default::default()
                };
                let frame = encode_response(&header, Some(&message), &block);
                peer.stream.write_all(&frame).await.expect("write");
            }
            let _ = peer.stream.read(&mut [0; 1]).await;
        });
        let get = || connection.call::<GetResponse>("Get", &GetClusterIdRequest {}, LONG);
        let mut reply = get().await.expect("large reply");
        let value = reply.cells.remove(0).value;
        drop(reply);
        assert_eq!(value.len(), 4 << 20);
        // The value is a slice of the frame it came in; nothing else holds
        // that allocation (the read buffer let go of it): it is freed with
        // the value.
        assert!(value.is_unique(), "the connection still holds the 4 MiB frame");
        drop(value);
        let reply = get().await.expect("small reply");
        assert_eq!(&reply.cells[0].value[..], &[7; 3]);
        drop(connection);
        server.await.expect("server");
    }

    /// A fake server on a runtime of its own (so that it outlives the
    /// client's runtimes): it answers each call with the number of its
    /// connection (`c1`, `c2`, ...), except the `silent` calls (connection,
    /// call, both from 1), which it leaves unanswered.
    fn server_on_its_own_runtime(silent: &'static [(usize, usize)]) -> (tokio::runtime::Runtime, Connection) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("server runtime");
        let (listener, connection) = runtime.block_on(fake_server());
        runtime.spawn(async move {
            for n in 1.. {
                let mut peer = Peer::accept(&listener).await;
                tokio::spawn(async move {
                    for call in 1.. {
                        let Some(id) = peer.try_request().await else {
                            return;
                        };
                        if !silent.contains(&(n, call)) {
                            peer.reply(id, &format!("c{n}")).await;
                        }
                    }
                });
            }
        });
        (runtime, connection)
    }

    fn current_thread() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    }

    #[test]
    fn a_connection_whose_runtime_shut_down_is_dialled_again() {
        let (_server, connection) = server_on_its_own_runtime(&[]);
        let first = current_thread();
        assert_eq!(first.block_on(cluster_id(&connection, LONG)).expect("answered"), "c1");
        // The reader and writer tasks go with their runtime.
        drop(first);
        let second = current_thread();
        let started = Instant::now();
        assert_eq!(
            second.block_on(cluster_id(&connection, LONG)).expect("dialled again"),
            "c2"
        );
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    }

    #[test]
    fn a_call_waiting_on_a_connection_whose_runtime_shuts_down_fails_typed() {
        // The second call on the first connection is never answered.
        let (_server, connection) = server_on_its_own_runtime(&[(1, 2)]);
        let first = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        assert_eq!(first.block_on(cluster_id(&connection, LONG)).expect("answered"), "c1");
        let second = current_thread();
        let started = Instant::now();
        let err = second.block_on(async {
            // The call waits on the first runtime's reader; that runtime
            // shuts down under it.
            let shutdown = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(200));
                drop(first);
            });
            let err = cluster_id(&connection, LONG).await.expect_err("its reader is gone");
            shutdown.join().expect("shut down");
            err
        });
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        match &err {
            NativeError::Closed { reason, .. } => assert!(reason.contains("runtime shut down"), "{reason}"),
            other => panic!("expected a broken connection, got {other}"),
        }
        assert_eq!(
            second.block_on(cluster_id(&connection, LONG)).expect("dialled again"),
            "c2"
        );
    }

    #[tokio::test]
    async fn a_connection_that_stalls_in_the_middle_of_a_reply_is_replaced() {
        for stall in [
            // A frame announced, nothing of it sent.
            &[0, 0, 0x10, 0][..],
            // Half a frame.
            &[0, 0, 0, 40, 5, 8, 1, 0x1A, 2][..],
        ] {
            let (listener, connection) = fake_server().await;
            let server = tokio::spawn(async move {
                let mut peer = Peer::accept(&listener).await;
                peer.request().await;
                peer.stream.write_all(stall).await.expect("write");
                // The stalled connection stays open; the next call comes
                // on a new one.
                let mut fresh = Peer::accept(&listener).await;
                let id = fresh.request().await.call_id.expect("id");
                fresh.reply(id, "fresh").await;
                let _ = peer.stream.read(&mut [0; 1]).await;
            });
            let err = cluster_id(&connection, Duration::from_millis(300))
                .await
                .expect_err("stalled");
            match &err {
                NativeError::Timeout { waiting_for, .. } => assert!(
                    waiting_for.starts_with(&format!("the rest of a reply ({} bytes of it read", stall.len())),
                    "{err}"
                ),
                other => panic!("not a timeout: {other}"),
            }
            let answer = cluster_id(&connection, Duration::from_secs(2)).await;
            assert_eq!(answer.expect("a fresh connection"), "fresh", "{stall:?}");
            drop(connection);
            server.await.expect("server");
        }
    }

    #[tokio::test]
    async fn a_server_that_never_answers_the_dial_times_out() {
        // Connection refused: a typed error at once.
        let (listener, connection) = fake_server().await;
        drop(listener);
        let err = cluster_id(&connection, LONG).await.expect_err("refused");
        assert!(matches!(err, NativeError::Connect { .. }), "{err}");
        // A server that accepts and says nothing: the deadline holds.
        let (listener, connection) = fake_server().await;
        let _server = tokio::spawn(async move {
            let (_stream, _) = listener.accept().await.expect("accept");
            tokio::time::sleep(LONG).await;
        });
        let err = cluster_id(&connection, Duration::from_millis(150))
            .await
            .expect_err("silence");
        match &err {
            NativeError::Timeout { waiting_for, .. } => {
                assert_eq!(waiting_for, "the reply, nothing of it read", "{err}")
            }
            other => panic!("not a timeout: {other}"),
        }
    }

    /// A server that takes a request's first bytes and then reads no more:
    /// the timeout says the request was being written.
    #[tokio::test]
    async fn a_server_that_stops_reading_times_the_call_out_while_writing() {
        let (listener, connection) = fake_server().await;
        let _server = tokio::spawn(async move {
            let (stream, _) = listener.accept().await.expect("accept");
            tokio::time::sleep(LONG).await;
            drop(stream);
        });
        // Far more than the socket buffers on both sides take.
        let big = super::super::proto::MutationProto {
            row: Some(vec![7; 32 << 20].into()),
            ..Default::default()
        };
        let err = connection
            .call::<GetClusterIdResponse>("Mutate", &big, Duration::from_millis(500))
            .await
            .expect_err("never read");
        match &err {
            NativeError::Timeout { waiting_for, .. } => {
                assert!(waiting_for.starts_with("writing "), "{err}")
            }
            other => panic!("not a timeout: {other}"),
        }
    }
    #[tokio::test]
    async fn the_writer_flushes_what_it_wrote() {
        // A writer that keeps small writes until flushed, as TLS keeps
        // what the socket did not take: each frame must still reach the
        // peer at once.
        let (ours, mut theirs) = tokio::io::duplex(1 << 16);
        let (frames, queue) = mpsc::unbounded_channel();
        let writer = tokio::io::BufWriter::new(ours);
        let calls = SharedCalls::default();
        let task = tokio::spawn(write_loop(
            writer,
            queue,
            calls,
            "fake:1".to_string(),
            Wire::Plain,
            Layer::default(),
            Duration::from_secs(1),
        ));
        for frame in [&b"first"[..], b"second"] {
            frames.send(Bytes::from_static(frame)).expect("queued");
            let mut got = vec![0; frame.len()];
            tokio::time::timeout(Duration::from_secs(5), theirs.read_exact(&mut got))
                .await
                .expect("the frame went out without another behind it")
                .expect("read");
            assert_eq!(got, frame);
        }
        drop(frames);
        task.await.expect("the writer ends with its queue");
    }
}
