//! Moving bytes to and from a gateway, under one deadline per call: a TCP
//! socket (tokio), unframed (the gateway's default) or framed, or HTTP
//! `POST`s on one, with TLS (tokio-rustls) for HTTPS. The bytes' meaning is
//! the [`codec`](super::codec)'s business, HTTP's the [`http`](super::http)
//! module's; this file only asks them where a reply ends.

use std::io;
use std::pin::Pin;
#[cfg(feature = "tls")]
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::FutureExt;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout_at};

use super::codec::{DecodeError, Protocol, Skim, Skimmed};
use super::http::{self, Body, Chunked, HttpError};

/// The smallest and largest read: the buffer grows with what arrived (each
/// read asks for about as much as is there already), so that a reply never
/// holds much more memory than its own size.
const MIN_READ: usize = 4 * 1024;
const MAX_READ: usize = 64 * 1024;

/// When a call must be over, and since when it runs.
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    start: Instant,
    end: Instant,
}

impl Deadline {
    /// A deadline `limit` from now.
    pub fn after(limit: Duration) -> Self {
        let start = Instant::now();
        Deadline {
            start,
            end: start
                .checked_add(limit)
                .unwrap_or(start + Duration::from_secs(365 * 24 * 3600)),
        }
    }

    /// The time left, or `None` once it has passed.
    pub fn remaining(&self) -> Option<Duration> {
        self.end.checked_duration_since(Instant::now()).filter(|d| !d.is_zero())
    }

    /// How long the call has run.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// When the call must be over.
    pub fn end(&self) -> Instant {
        self.end
    }

    /// When a wait of at most `cap` must end: `cap` from now, or the
    /// deadline if that comes first.
    fn within(&self, cap: Duration) -> Instant {
        Instant::now().checked_add(cap).map_or(self.end, |t| t.min(self.end))
    }
}

/// Why a call's bytes did not make it there and back.
#[derive(Debug)]
pub enum Failure {
    /// The deadline passed (or a read waited longer than the read timeout).
    TimedOut,
    /// The connection failed or was closed; `replied` tells whether this
    /// connection ever carried a reply.
    Io { error: io::Error, replied: bool },
    /// The reply is not a Thrift message; `replied` as above.
    Decode { error: DecodeError, replied: bool },
    /// The HTTP response is not one hmap can read (HTTP transport).
    Http { error: HttpError, replied: bool },
    /// The SASL GSSAPI handshake (or SPNEGO's token) failed (feature
    /// `kerberos`): a [`SecurityError`](crate::security::SecurityError)
    /// whose [`KerberosFailure`](crate::security::KerberosFailure) names
    /// what to change. Not retried: the same settings fail the same way.
    #[cfg(feature = "kerberos")]
    Kerberos(crate::security::SecurityError),
}

/// The largest framed reply accepted: a length beyond it is a protocol
/// error before anything is read (a scan batch is far smaller).
const MAX_FRAME: usize = 1 << 30;

/// Two `getThriftServerType` calls, each in a frame, sent ahead of the
/// first call of a framed binary connection so that an unframed gateway
/// answers at once instead of waiting for bytes that never come. Each is
/// an old-style message (no version: the name's length first, then the
/// name, the type, the sequence number 0, no arguments), which HBase's
/// gateways read (their binary protocol is not strict).
///
/// An unframed gateway reads a frame's length as the length of an
/// old-style message's name. Given a lone framed call, it takes the whole
/// frame as the name, then waits for the type, sequence number and
/// arguments, which never come: the client waited out its deadline. Given
/// these two frames, it takes the first as a name and the second's length
/// and first byte as the type and sequence number, and the second's next
/// byte (0, the high byte of the name's length) ends the arguments: a
/// whole call, to a method it does not know. It answers "Invalid method
/// name", unframed, and the client reads that answer's `80 01` where a
/// frame's length should be: an error that names the gateway's transport,
/// within a round trip. A framed gateway answers both calls, and the
/// answers are skipped.
pub const PROBE: &[u8] = b"\
    \x00\x00\x00\x1d\x00\x00\x00\x13getThriftServerType\x01\x00\x00\x00\x00\x00\
    \x00\x00\x00\x1d\x00\x00\x00\x13getThriftServerType\x01\x00\x00\x00\x00\x00";

/// How messages go on the wire: the protocol, and whether each goes in a
/// frame or an HTTP request.
#[derive(Clone, Debug)]
pub struct Wire {
    /// Framed transport: each message after a 4-byte big-endian length.
    pub framed: bool,
    /// The protocol of the messages.
    pub protocol: Protocol,
    /// HTTP transport: each message the body of a `POST`.
    pub http: Option<HttpWire>,
    /// SASL GSSAPI (Kerberos) on the socket, before the first message.
    #[cfg(feature = "kerberos")]
    pub kerberos: Option<crate::security::Kerberos>,
}

/// Where HTTP requests go, and over what.
#[derive(Clone, Debug)]
pub struct HttpWire {
    /// The `Host` header.
    pub host: String,
    /// The request path.
    pub path: String,
    /// The user the gateway acts for (`doAs`), if not the caller.
    pub do_as: Option<String>,
    /// TLS: the client's settings and the name the certificate must carry.
    #[cfg(feature = "tls")]
    pub tls: Option<(
        Arc<tokio_rustls::rustls::ClientConfig>,
        tokio_rustls::rustls::pki_types::ServerName<'static>,
    )>,
}

/// A socket, or TLS over one.
enum Stream {
    Tcp(TcpStream),
    #[cfg(feature = "tls")]
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Tcp(s) => s.is_write_vectored(),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_flush(cx),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// A TLS handshake that failed: the gateway's certificate refused, or no
/// TLS spoken at all.
#[cfg(feature = "tls")]
#[derive(Debug)]
struct Handshake(io::Error);

#[cfg(feature = "tls")]
impl std::fmt::Display for Handshake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the TLS handshake with the gateway failed: {}", self.0)?;
        let refused = self
            .0
            .get_ref()
            .and_then(|e| e.downcast_ref::<tokio_rustls::rustls::Error>())
            .is_some_and(|e| matches!(e, tokio_rustls::rustls::Error::InvalidCertificate(_)));
        if refused {
            write!(
                f,
                " (its certificate must be signed by a CA the client trusts, for the name it is reached by: \
                 see `ThriftHttp::https_with_ca` and `ThriftHttp::server_name`)"
            )?;
        }
        Ok(())
    }
}

#[cfg(feature = "tls")]
impl std::error::Error for Handshake {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// One connection to a gateway.
pub struct Connection {
    stream: Stream,
    wire: Wire,
    /// Whether the gateway said it closes the connection after a response.
    closing: bool,
    /// Bytes received and not yet handed out as a reply.
    buf: BytesMut,
    seq: i32,
    /// Whether a reply has been read on this connection.
    replied: bool,
    /// Whether the probe of an unframed gateway went first (see [`PROBE`]).
    probed: bool,
    /// When the connection was last used, to check idle ones before reuse.
    pub last_used: Instant,
    /// The buffer calls are written into, kept between calls.
    request: Vec<u8>,
    /// The SASL layer every message goes through, after a Kerberos
    /// handshake ([`Wire::kerberos`]).
    #[cfg(feature = "kerberos")]
    sasl: Option<super::sasl::SaslLayer>,
}

/// The largest request buffer a connection keeps between calls: one batch
/// of a few thousand rows; a larger one is freed after its call.
const KEPT_REQUEST_BUFFER: usize = 4 * 1024 * 1024;

impl Connection {
    /// Connects to the first of `address`'s addresses that answers, all
    /// attempts together given at most `connect_timeout` and what is left of
    /// `deadline`.
    pub async fn connect(
        address: &str,
        wire: Wire,
        connect_timeout: Duration,
        deadline: &Deadline,
    ) -> Result<Self, Failure> {
        let connect_by = deadline.within(connect_timeout);
        let stream = timeout_at(connect_by, TcpStream::connect(address))
            .await
            .map_err(|_| Failure::TimedOut)?
            .map_err(|error| Failure::Io { error, replied: false })?;
        stream
            .set_nodelay(true)
            .map_err(|error| Failure::Io { error, replied: false })?;
        #[cfg(feature = "tls")]
        if let Some(HttpWire {
            tls: Some((config, name)),
            ..
        }) = &wire.http
        {
            let connector = tokio_rustls::TlsConnector::from(Arc::clone(config));
            let tls = timeout_at(connect_by, connector.connect(name.clone(), stream))
                .await
                .map_err(|_| Failure::TimedOut)?
                .map_err(|error| Failure::Io {
                    error: io::Error::new(error.kind(), Handshake(error)),
                    replied: false,
                })?;
            return Ok(Connection::new(Stream::Tls(Box::new(tls)), wire));
        }
        // SASL on a socket; an HTTP gateway takes a token per request.
        #[cfg(feature = "kerberos")]
        if let (Some(kerberos), None) = (wire.kerberos.clone(), &wire.http) {
            let mut stream = Stream::Tcp(stream);
            let layer = super::sasl::handshake(&kerberos, address, &mut stream, deadline).await?;
            let mut conn = Connection::new(stream, wire);
            conn.sasl = Some(layer);
            return Ok(conn);
        }
        Ok(Connection::new(Stream::Tcp(stream), wire))
    }

    fn new(stream: Stream, wire: Wire) -> Self {
        Connection {
            stream,
            wire,
            closing: false,
            buf: BytesMut::new(),
            seq: 0,
            replied: false,
            probed: false,
            last_used: Instant::now(),
            request: Vec::new(),
            #[cfg(feature = "kerberos")]
            sasl: None,
        }
    }

    /// The request buffer, to write a call into; give it back with
    /// [`put_request_buffer`](Self::put_request_buffer).
    pub fn take_request_buffer(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.request)
    }

    /// Keeps a request buffer for the next call, unless it grew too large.
    pub fn put_request_buffer(&mut self, buf: Vec<u8>) {
        if buf.capacity() <= KEPT_REQUEST_BUFFER {
            self.request = buf;
        }
    }

    /// Whether a reply has been read on this connection.
    pub fn replied(&self) -> bool {
        self.replied
    }

    /// The sequence number of the next call.
    pub fn next_seq(&mut self) -> i32 {
        self.seq = self.seq.wrapping_add(1);
        self.seq
    }

    /// Whether the gateway closed the connection while it sat idle: a peek
    /// that is ready at once sees the end of the stream (or an error, or
    /// bytes nobody asked for); one that would wait means the connection is
    /// open and quiet.
    pub fn peer_closed(&mut self) -> bool {
        if !self.buf.is_empty() || self.closing {
            return true;
        }
        #[cfg(feature = "kerberos")]
        if self.sasl.as_ref().is_some_and(|layer| !layer.plain.is_empty()) {
            return true;
        }
        let mut byte = [0u8; 1];
        match &mut self.stream {
            Stream::Tcp(s) => s.peek(&mut byte).now_or_never().is_some(),
            // No peeking through TLS: a read that is ready at once sees the
            // end, an alert, or bytes nobody asked for; one that would wait
            // leaves the stream as it was (reads are cancel-safe).
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.read(&mut byte).now_or_never().is_some(),
        }
    }

    /// Sends `request` and reads one whole reply message, all before
    /// `deadline`; no single read waits longer than `read_timeout`.
    pub async fn round_trip(
        &mut self,
        request: &[u8],
        deadline: &Deadline,
        read_timeout: Duration,
    ) -> Result<Bytes, Failure> {
        let probe =
            !self.probed && self.wire.framed && self.wire.http.is_none() && self.wire.protocol == Protocol::Binary;
        if probe {
            self.probed = true;
            self.write_raw(PROBE, deadline).await?;
        }
        self.send(request, deadline).await?;
        if probe {
            // The probe's own answers (replies or exceptions) are of no
            // interest.
            for _ in 0..2 {
                let _ = self.receive(deadline, read_timeout).await?;
            }
        }
        let reply = self.receive(deadline, read_timeout).await?;
        self.replied = true;
        self.last_used = Instant::now();
        Ok(reply)
    }

    /// A socket error: a timeout, or the connection failing.
    fn io(&self, error: io::Error) -> Failure {
        if is_timeout(&error) {
            return Failure::TimedOut;
        }
        Failure::Io {
            error,
            replied: self.replied,
        }
    }

    async fn send(&mut self, request: &[u8], deadline: &Deadline) -> Result<(), Failure> {
        if let Some(http) = &self.wire.http {
            // The head, then the request, in one vectored write.
            let mut headers = String::new();
            if let Some(user) = &http.do_as {
                headers.push_str(&format!("doAs: {user}\r\n"));
            }
            #[cfg(feature = "kerberos")]
            if let Some(kerberos) = &self.wire.kerberos {
                // SPNEGO (RFC 4559): a fresh Kerberos token on every
                // request, as HBase's gateway checks each one.
                use base64::Engine;
                let token = timeout_at(
                    deadline.end,
                    crate::security::kerberos::negotiate_token(kerberos, &http.host),
                )
                .await
                .map_err(|_| Failure::TimedOut)?
                .map_err(Failure::Kerberos)?;
                let token = base64::engine::general_purpose::STANDARD.encode(token);
                headers.push_str(&format!("Authorization: Negotiate {token}\r\n"));
            }
            let head = http::request_head(&http.host, &http.path, request.len(), &headers);
            let mut bytes = bytes::Buf::chain(&head[..], request);
            let written = timeout_at(deadline.end, self.stream.write_all_buf(&mut bytes)).await;
            return match written {
                Ok(Ok(())) => self.flush(deadline).await,
                Ok(Err(e)) => Err(self.io(e)),
                Err(_) => Err(Failure::TimedOut),
            };
        }
        #[cfg(feature = "kerberos")]
        if let Some(layer) = &self.sasl {
            // One SASL frame: the length, then the request (wrapped).
            let mut frame = Vec::with_capacity(request.len() + 64);
            layer.frame(request, &mut frame).map_err(|reason| Failure::Io {
                error: io::Error::new(io::ErrorKind::InvalidInput, reason),
                replied: self.replied,
            })?;
            return match timeout_at(deadline.end, self.stream.write_all(&frame)).await {
                Ok(Ok(())) => self.flush(deadline).await,
                Ok(Err(e)) => Err(self.io(e)),
                Err(_) => Err(Failure::TimedOut),
            };
        }
        // Framed: the length, then the request, in one vectored write.
        let length = u32::try_from(request.len()).map_err(|_| Failure::Io {
            error: io::Error::new(io::ErrorKind::InvalidInput, "a request of 4 GiB or more cannot be sent"),
            replied: self.replied,
        })?;
        let length = length.to_be_bytes();
        let prefix: &[u8] = if self.wire.framed { &length } else { &[] };
        let mut bytes = bytes::Buf::chain(prefix, request);
        match timeout_at(deadline.end, self.stream.write_all_buf(&mut bytes)).await {
            Ok(Ok(())) => self.flush(deadline).await,
            Ok(Err(e)) => Err(self.io(e)),
            Err(_) => Err(Failure::TimedOut),
        }
    }

    /// Writes `bytes` as they are (framed already, if framed).
    async fn write_raw(&mut self, bytes: &[u8], deadline: &Deadline) -> Result<(), Failure> {
        match timeout_at(deadline.end, self.stream.write_all(bytes)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(self.io(e)),
            Err(_) => Err(Failure::TimedOut),
        }
    }

    /// Flushes what TLS holds back (a plain socket holds nothing).
    async fn flush(&mut self, deadline: &Deadline) -> Result<(), Failure> {
        match timeout_at(deadline.end, self.stream.flush()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(self.io(e)),
            Err(_) => Err(Failure::TimedOut),
        }
    }

    /// Reads until the buffer holds a whole message, and splits it off. The
    /// skim resumes where it stopped after each read.
    async fn receive(&mut self, deadline: &Deadline, read_timeout: Duration) -> Result<Bytes, Failure> {
        if self.wire.http.is_some() {
            return self.receive_http(deadline, read_timeout).await;
        }
        #[cfg(feature = "kerberos")]
        if self.sasl.is_some() {
            return self.receive_sasl(deadline, read_timeout).await;
        }
        if self.wire.framed {
            return self.receive_frame(deadline, read_timeout).await;
        }
        let mut skim = Skim::of(self.wire.protocol);
        loop {
            match skim.advance(&self.buf) {
                Ok(Skimmed::Done(len)) => return Ok(self.buf.split_to(len).freeze()),
                Ok(Skimmed::NeedMore(_)) => self.fill(deadline, read_timeout).await?,
                Err(error) => {
                    return Err(Failure::Decode {
                        error,
                        replied: self.replied,
                    });
                }
            }
        }
    }

    /// Reads one frame: its length, then that many bytes, which must be one
    /// whole message.
    async fn receive_frame(&mut self, deadline: &Deadline, read_timeout: Duration) -> Result<Bytes, Failure> {
        let frame = self.take_frame(deadline, read_timeout, true).await?.freeze();
        self.one_message(frame)
    }

    /// Reads one frame, `[u32 length][bytes]`, and splits its bytes off; a
    /// length over [`MAX_FRAME`] is refused before anything is read, and,
    /// with `thrift_frames`, the start of an unframed Thrift message too.
    async fn take_frame(
        &mut self,
        deadline: &Deadline,
        read_timeout: Duration,
        thrift_frames: bool,
    ) -> Result<BytesMut, Failure> {
        while self.buf.len() < 4 {
            self.fill(deadline, read_timeout).await?;
        }
        let mut len = [0u8; 4];
        len.copy_from_slice(self.buf.get(..4).unwrap_or_default());
        if let (true, [0x80, 0x01, 0x00, 1..=4]) = (thrift_frames, len) {
            return Err(Failure::Decode {
                error: DecodeError::Unframed {
                    start: self.buf.get(..4).unwrap_or_default().to_vec(),
                },
                replied: self.replied,
            });
        }
        let len = u32::from_be_bytes(len) as usize;
        if len > MAX_FRAME {
            return Err(Failure::Decode {
                error: DecodeError::FrameTooLarge { len, max: MAX_FRAME },
                replied: self.replied,
            });
        }
        while self.buf.len() < 4 + len {
            self.fill(deadline, read_timeout).await?;
        }
        let _ = self.buf.split_to(4);
        Ok(self.buf.split_to(len))
    }

    /// Reads SASL frames, unwrapping each, until the bytes unwrapped hold
    /// a whole message (the gateway sends each reply as one frame, but a
    /// message in several would be read as well), and splits it off.
    #[cfg(feature = "kerberos")]
    async fn receive_sasl(&mut self, deadline: &Deadline, read_timeout: Duration) -> Result<Bytes, Failure> {
        let mut skim = Skim::of(self.wire.protocol);
        loop {
            let plain = self.sasl.as_ref().map_or(&[][..], |layer| &layer.plain[..]);
            match skim.advance(plain) {
                Ok(Skimmed::Done(len)) => {
                    return Ok(self
                        .sasl
                        .as_mut()
                        .map(|layer| layer.plain.split_to(len).freeze())
                        .unwrap_or_default());
                }
                Ok(Skimmed::NeedMore(_)) => {}
                Err(error) => {
                    return Err(Failure::Decode {
                        error,
                        replied: self.replied,
                    });
                }
            }
            let frame = self.take_frame(deadline, read_timeout, false).await?;
            let Some(layer) = self.sasl.as_mut() else {
                continue;
            };
            layer.open(&frame).map_err(|reason| Failure::Io {
                error: io::Error::new(io::ErrorKind::InvalidData, reason),
                replied: self.replied,
            })?;
        }
    }

    /// Reads one HTTP response: its head, then its body, delimited by its
    /// length or its chunks, which must be one whole message.
    async fn receive_http(&mut self, deadline: &Deadline, read_timeout: Duration) -> Result<Bytes, Failure> {
        let http_error = |error, replied| Failure::Http { error, replied };
        let head = loop {
            match http::parse_head(&self.buf) {
                Ok(Some((head, len))) => {
                    let _ = self.buf.split_to(len);
                    break head;
                }
                Ok(None) => self.fill(deadline, read_timeout).await?,
                Err(error) => return Err(http_error(error, self.replied)),
            }
        };
        self.closing = head.close;
        let body = match head.body {
            Body::Length(len) => {
                while self.buf.len() < len {
                    self.fill(deadline, read_timeout).await?;
                }
                self.buf.split_to(len).freeze()
            }
            Body::Chunked => {
                let mut chunked = Chunked::default();
                loop {
                    match chunked.advance(&mut self.buf) {
                        Ok(true) => break chunked.body.freeze(),
                        Ok(false) => self.fill(deadline, read_timeout).await?,
                        Err(error) => return Err(http_error(error, self.replied)),
                    }
                }
            }
        };
        self.one_message(body)
    }

    /// `bytes`, which must hold exactly one message (a frame, an HTTP body).
    fn one_message(&self, frame: Bytes) -> Result<Bytes, Failure> {
        let len = frame.len();
        match Skim::of(self.wire.protocol).advance(&frame) {
            Ok(Skimmed::Done(n)) if n == len => Ok(frame),
            Ok(Skimmed::Done(n)) => Err(Failure::Decode {
                error: DecodeError::TrailingBytes { extra: len - n },
                replied: self.replied,
            }),
            Ok(Skimmed::NeedMore(_)) => Err(Failure::Decode {
                error: DecodeError::Truncated { at: len },
                replied: self.replied,
            }),
            Err(error) => Err(Failure::Decode {
                error,
                replied: self.replied,
            }),
        }
    }

    /// One read into the buffer's spare room (nothing zero-filled first).
    async fn fill(&mut self, deadline: &Deadline, read_timeout: Duration) -> Result<(), Failure> {
        let filled = self.buf.len();
        let want = filled.clamp(MIN_READ, MAX_READ);
        self.buf.reserve(want);
        let read = timeout_at(deadline.within(read_timeout), self.stream.read_buf(&mut self.buf))
            .await
            .map_err(|_| Failure::TimedOut)?;
        match read {
            Ok(0) => Err(Failure::Io {
                error: io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("the gateway closed the connection after {filled} bytes of the reply"),
                ),
                replied: self.replied,
            }),
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(self.io(e)),
        }
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock)
}
