//! Kerberos on a Thrift gateway's socket (feature `kerberos`): Apache
//! Thrift's SASL transport (`TSaslClientTransport`, which HBase's gateways
//! serve when `hbase.thrift.security.qop` is set) with the GSSAPI mechanism,
//! as HBase's Java Thrift clients speak it. The GSSAPI tokens and the
//! security layer are [`GssapiSasl`]'s, the same as NativeStore's; this file
//! holds Thrift's framing of them.
//!
//! 1. Negotiation: each message is `[status u8][u32 length][payload]`.
//!    The client sends `START` with the mechanism's name (`GSSAPI`) and,
//!    at once, `OK` with its first GSSAPI token. Each server message is
//!    `OK` with a token (or `BAD` / `ERROR` with a reason, which ends the
//!    exchange); the client answers each with `OK` and its next token,
//!    and the RFC 4752 security layer offer with `COMPLETE` and its
//!    answer; the server ends with `COMPLETE`. The statuses are libthrift's
//!    `NegotiationStatus` (0.14.1, HBase 2.6's): `START` 1, `OK` 2, `BAD`
//!    3, `ERROR` 4, `COMPLETE` 5.
//! 2. Then every message, both ways, is one frame `[u32 length][payload]`,
//!    the payload `gss_wrap`ped for `auth-int` and `auth-conf` (integrity
//!    and privacy) and as it is for `auth`. The Thrift messages inside are
//!    unframed: HBase refuses SASL with framed transport.
//!
//! Every length is checked against a bound before anything is allocated.

use std::sync::Arc;

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::time::timeout_at;

use super::transport::{Deadline, Failure};
use crate::security::kerberos::{GssapiSasl, MAX_ROUNDS, SaslStep, SaslWrap};
use crate::security::sasl::{self, MAX_TOKEN};
use crate::security::{Kerberos, KerberosFailure, SecurityError};

/// The statuses of the negotiation's messages (libthrift's
/// `NegotiationStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Start = 1,
    Ok = 2,
    Bad = 3,
    Error = 4,
    Complete = 5,
}

impl Status {
    fn from_byte(byte: u8) -> Option<Status> {
        Some(match byte {
            1 => Status::Start,
            2 => Status::Ok,
            3 => Status::Bad,
            4 => Status::Error,
            5 => Status::Complete,
            _ => return None,
        })
    }
}

/// The mechanism hmap speaks.
pub const MECHANISM: &[u8] = b"GSSAPI";

/// Appends one negotiation message, `[status][u32 length][payload]`.
pub fn encode_message(status: Status, payload: &[u8], out: &mut Vec<u8>) {
    out.push(status as u8);
    // Tokens are a few KiB: a length that does not fit is no token.
    out.extend_from_slice(&u32::try_from(payload.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(payload);
}

/// One negotiation message read off the front of a buffer.
#[derive(Debug, PartialEq, Eq)]
pub struct Message<'a> {
    pub status: Status,
    pub payload: &'a [u8],
    /// The bytes it took, header included.
    pub len: usize,
}

/// Reads one negotiation message off the front of `buf`: `Ok(None)` until
/// all of it is there, `Ok(Some(message))` once it is, `Err` for bytes
/// that are no such message.
pub fn parse_message(buf: &[u8]) -> Result<Option<Message<'_>>, String> {
    let Some(&status) = buf.first() else {
        return Ok(None);
    };
    let Some(status) = Status::from_byte(status) else {
        return Err(format!(
            "{status:#04x} is no SASL negotiation status (a Thrift message starts with 0x80 or 0x82)"
        ));
    };
    let Some(length) = buf.get(1..5) else {
        return Ok(None);
    };
    let length = u32::from_be_bytes([length[0], length[1], length[2], length[3]]) as usize;
    if length > MAX_TOKEN {
        return Err(format!(
            "a negotiation message of {length} bytes (at most {MAX_TOKEN} accepted)"
        ));
    }
    match buf.get(5..5 + length) {
        Some(payload) => Ok(Some(Message {
            status,
            payload,
            len: 5 + length,
        })),
        None => Ok(None),
    }
}

/// The layer of an established SASL connection: each message goes out as
/// `[u32 length][payload]`, wrapped when the protection level wraps.
pub struct SaslLayer {
    wrap: Option<Arc<SaslWrap>>,
    /// Unwrapped bytes received and not yet handed out as a message.
    pub plain: BytesMut,
}

impl SaslLayer {
    /// Appends `message` as one SASL frame.
    pub fn frame(&self, message: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        match &self.wrap {
            Some(wrap) => wrap.wrap(message, out),
            None => sasl::encode_wrapped(message, out),
        }
    }

    /// Appends the bytes inside one received frame's payload to
    /// [`plain`](Self::plain): as they are for authentication, unwrapped
    /// otherwise.
    pub fn open(&mut self, payload: &[u8]) -> Result<(), String> {
        match &self.wrap {
            Some(wrap) => self.plain.extend_from_slice(&wrap.unwrap(payload)?),
            None => self.plain.extend_from_slice(payload),
        }
        Ok(())
    }
}

fn kerberos_failure(endpoint: &str, failure: KerberosFailure, reason: String) -> Failure {
    Failure::Kerberos(SecurityError::kerberos(endpoint, failure, reason))
}

/// The SASL GSSAPI negotiation on a new connection to `endpoint`, all
/// before `deadline`; returns the layer every later message goes through.
pub async fn handshake<S: AsyncRead + AsyncWrite + Unpin>(
    kerberos: &Kerberos,
    endpoint: &str,
    stream: &mut S,
    deadline: &Deadline,
) -> Result<SaslLayer, Failure> {
    let (mut sasl, first) = timeout_at(
        deadline.end(),
        GssapiSasl::start(kerberos, endpoint, "hbase.thrift.security.qop"),
    )
    .await
    .map_err(|_| Failure::TimedOut)?
    .map_err(Failure::Kerberos)?;
    let mut out = Vec::new();
    encode_message(Status::Start, MECHANISM, &mut out);
    encode_message(Status::Ok, &first, &mut out);
    write(stream, &out, deadline).await?;
    let mut buf = BytesMut::with_capacity(4096);
    let mut layer = None;
    for _ in 0..=MAX_ROUNDS {
        let (status, payload) = read_message(stream, &mut buf, endpoint, deadline).await?;
        match status {
            Status::Bad | Status::Error => {
                return Err(kerberos_failure(
                    endpoint,
                    KerberosFailure::Refused,
                    format!(
                        "the gateway refused the SASL handshake: {} (is {} the gateway's \
                         hbase.thrift.kerberos.principal, for the host name it runs on, and are the clocks in step?)",
                        String::from_utf8_lossy(&payload),
                        sasl.server()
                    ),
                ));
            }
            Status::Start => {
                return Err(kerberos_failure(
                    endpoint,
                    KerberosFailure::Gssapi,
                    "the gateway sent START, which only a client sends".to_string(),
                ));
            }
            Status::Ok | Status::Complete => {}
        }
        if let Some(layer) = layer.take() {
            if status != Status::Complete || !payload.is_empty() || !buf.is_empty() {
                return Err(kerberos_failure(
                    endpoint,
                    KerberosFailure::Gssapi,
                    format!(
                        "after the security layer was chosen the gateway sent {status:?} with {} bytes, not an \
                         empty COMPLETE",
                        payload.len() + buf.len()
                    ),
                ));
            }
            return Ok(layer);
        }
        let mut out = Vec::new();
        match sasl.step(&payload).map_err(Failure::Kerberos)? {
            SaslStep::Token(token) => encode_message(Status::Ok, &token, &mut out),
            SaslStep::Done { answer, wrap } => {
                encode_message(Status::Complete, &answer, &mut out);
                layer = Some(SaslLayer {
                    wrap,
                    plain: BytesMut::new(),
                });
            }
        }
        write(stream, &out, deadline).await?;
    }
    Err(kerberos_failure(
        endpoint,
        KerberosFailure::Gssapi,
        format!("the SASL handshake took more than {MAX_ROUNDS} rounds"),
    ))
}

async fn write<S: AsyncWrite + Unpin>(stream: &mut S, bytes: &[u8], deadline: &Deadline) -> Result<(), Failure> {
    // Flushed: TLS may hold back part of what a write took.
    let written = async {
        stream.write_all(bytes).await?;
        stream.flush().await
    };
    match timeout_at(deadline.end(), written).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(Failure::Io { error, replied: false }),
        Err(_) => Err(Failure::TimedOut),
    }
}

/// Reads until one whole negotiation message is in `buf`, and takes it off.
async fn read_message<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut BytesMut,
    endpoint: &str,
    deadline: &Deadline,
) -> Result<(Status, Vec<u8>), Failure> {
    loop {
        match parse_message(buf) {
            Ok(Some(Message { status, payload, len })) => {
                let payload = payload.to_vec();
                let _ = buf.split_to(len);
                return Ok((status, payload));
            }
            Ok(None) => {}
            Err(_) if is_hbase_rpc(buf) => {
                return Err(not_a_gateway(
                    endpoint,
                    "answered the SASL hello with HBase's FatalConnectionException (\"Expected HEADER=HBas\")",
                ));
            }
            Err(reason) => {
                return Err(kerberos_failure(
                    endpoint,
                    KerberosFailure::Gssapi,
                    format!(
                        "the gateway's SASL reply is invalid: {reason}: does it run with hbase.thrift.security.qop \
                         (SASL), unframed?"
                    ),
                ));
            }
        }
        let read = timeout_at(deadline.end(), stream.read_buf(buf))
            .await
            .map_err(|_| Failure::TimedOut)?;
        match read {
            Ok(0) if is_hbase_rpc(buf) => {
                return Err(not_a_gateway(
                    endpoint,
                    "answered the SASL hello with HBase's \
                 FatalConnectionException (\"Expected HEADER=HBas\")",
                ));
            }
            // HBase's RPC over TLS only, or an HTTPS gateway, closes a
            // plaintext hello without a byte.
            Ok(0) if buf.is_empty() && answers_tls(endpoint, deadline).await => {
                return Err(not_a_gateway(
                    endpoint,
                    "closed the SASL hello without a byte and answers TLS",
                ));
            }
            Ok(0) => {
                return Err(kerberos_failure(
                    endpoint,
                    KerberosFailure::ServerNotKerberos,
                    format!(
                        "the gateway closed the connection during the SASL handshake ({} bytes of a reply read): a \
                         gateway without SASL (no hbase.thrift.security.qop) does so; connect without \
                         `ThriftConfig::kerberos`",
                        buf.len()
                    ),
                ));
            }
            Ok(_) => {}
            Err(error) => return Err(Failure::Io { error, replied: false }),
        }
    }
}

/// Whether `reply` is HBase's RPC server's answer to bytes that are not
/// its preamble: a `FatalConnectionException` ("Expected HEADER=HBas ...")
/// before it closes.
fn is_hbase_rpc(reply: &[u8]) -> bool {
    memchr::memmem::find(reply, b"org.apache.hadoop.hbase.ipc.FatalConnectionException").is_some()
}

/// Whether `endpoint` answers TLS, asked within what is left of `deadline`.
async fn answers_tls(endpoint: &str, deadline: &Deadline) -> bool {
    let left = deadline.remaining().unwrap_or_default();
    crate::security::probe::answers_tls(endpoint, left).await
}

/// The failure of a SASL handshake sent to HBase's RPC port, which `what`
/// it did.
fn not_a_gateway(endpoint: &str, what: &str) -> Failure {
    kerberos_failure(
        endpoint,
        KerberosFailure::Gssapi,
        format!(
            "this is HBase's RPC port, not a Thrift gateway with SASL: it {what}; a master's or region server's \
             port needs NativeStore (`NativeConfig::new` with `NativeConfig::kerberos`, and `NativeConfig::tls` if \
             it serves TLS), a Thrift gateway is on its own port (9090 by default; an HTTPS gateway takes \
             `ThriftHttp::https`)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ThriftStore with Kerberos pointed at HBase's RPC port: the server
    /// answers the SASL hello with its bad-preamble exception and closes;
    /// the error says what is there, not to drop Kerberos.
    #[tokio::test]
    async fn hbase_rpc_answering_the_sasl_hello_is_named() {
        let mut reply = vec![0, 0, 0, 0x60, 0x5E, 0x0A];
        reply.extend_from_slice(b"\x32org.apache.hadoop.hbase.ipc.FatalConnectionException");
        reply.extend_from_slice(b"Expected HEADER=HBas but received HEADER=\\x01\\x00\\x00\\x00\\x06G");
        let (mut client, mut server) = tokio::io::duplex(4096);
        tokio::io::AsyncWriteExt::write_all(&mut server, &reply)
            .await
            .expect("write");
        drop(server);
        let deadline = Deadline::after(std::time::Duration::from_secs(5));
        let failure = read_message(&mut client, &mut BytesMut::new(), "h:16000", &deadline)
            .await
            .expect_err("not SASL");
        let Failure::Kerberos(SecurityError::Kerberos { reason, .. }) = failure else {
            panic!("not a Kerberos failure: {failure:?}");
        };
        assert!(
            reason.contains("HBase's RPC port") && reason.contains("NativeStore"),
            "{reason}"
        );
        assert!(!reason.contains("without"), "{reason}");
    }

    /// The same port serving TLS only closes the hello without a byte; it
    /// answers TLS, and is named the same way.
    #[tokio::test]
    async fn hbase_rpc_over_tls_closing_the_sasl_hello_is_named() {
        let endpoint = crate::security::probe::tls_only_server().await;
        let (mut client, server) = tokio::io::duplex(64);
        drop(server);
        let deadline = Deadline::after(std::time::Duration::from_secs(5));
        let failure = read_message(&mut client, &mut BytesMut::new(), &endpoint, &deadline)
            .await
            .expect_err("closed");
        let Failure::Kerberos(SecurityError::Kerberos { reason, .. }) = failure else {
            panic!("not a Kerberos failure: {failure:?}");
        };
        assert!(
            reason.contains("HBase's RPC port") && reason.contains("answers TLS"),
            "{reason}"
        );
    }

    #[test]
    fn messages_are_status_length_payload() {
        let mut out = Vec::new();
        encode_message(Status::Start, MECHANISM, &mut out);
        encode_message(Status::Ok, b"tok", &mut out);
        assert_eq!(out, b"\x01\x00\x00\x00\x06GSSAPI\x02\x00\x00\x00\x03tok");
        let start = parse_message(&out).unwrap().unwrap();
        assert_eq!(
            (start.status, start.payload, start.len),
            (Status::Start, &b"GSSAPI"[..], 11)
        );
        let ok = parse_message(&out[11..]).unwrap().unwrap();
        assert_eq!((ok.status, ok.payload, ok.len), (Status::Ok, &b"tok"[..], 8));
    }

    #[test]
    fn partial_messages_wait_for_more() {
        let whole = b"\x05\x00\x00\x00\x02ok";
        for cut in 0..whole.len() {
            assert_eq!(parse_message(&whole[..cut]).unwrap(), None, "cut at {cut}");
        }
        assert_eq!(
            parse_message(whole).unwrap(),
            Some(Message {
                status: Status::Complete,
                payload: b"ok",
                len: whole.len()
            })
        );
    }

    #[test]
    fn foreign_bytes_and_huge_lengths_are_refused_before_allocating() {
        // A plain gateway's unframed binary reply.
        let reason = parse_message(b"\x80\x01\x00\x02\x00\x00\x00\x13").unwrap_err();
        assert!(reason.contains("0x80"), "{reason}");
        assert!(parse_message(b"\x00").is_err());
        assert!(parse_message(b"\x06").is_err());
        let reason = parse_message(b"\x02\xff\xff\xff\xff").unwrap_err();
        assert!(reason.contains("4294967295"), "{reason}");
    }

    #[test]
    fn authentication_frames_messages_as_they_are() {
        let mut layer = SaslLayer {
            wrap: None,
            plain: BytesMut::new(),
        };
        let mut out = Vec::new();
        layer.frame(b"\x80\x01", &mut out).unwrap();
        assert_eq!(out, b"\x00\x00\x00\x02\x80\x01");
        layer.open(b"abc").unwrap();
        assert_eq!(&layer.plain[..], b"abc");
    }
}
