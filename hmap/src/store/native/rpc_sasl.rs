//! HBase's SASL exchange on NativeStore's wire (feature `kerberos`): the
//! bytes, sans IO, and the handshake on a new connection (at the end).
//! The bytes of the handshake that [`Kerberos`](crate::security::Kerberos) runs before the
//! connection header, and the security layer that follows it
//! ([`crate::security::sasl`] has the bytes every carrier shares).
//!
//! 1. The preamble asks for Kerberos: `HBas`, version 0, auth code 81.
//! 2. The client sends each GSSAPI token as `[u32 length][token]`; the
//!    server answers `[u32 status][u32 length][token]`: status 0 is a
//!    token, status 1 an error, `[i32 length][exception class][i32
//!    length][message]` (Hadoop's `WritableUtils.writeString`). A server
//!    without Kerberos (`hbase.security.authentication` simple) answers
//!    the preamble at once with status 0 and the length -88 (HBase's
//!    `SaslUtil.SWITCH_TO_SIMPLE_AUTH`).
//! 3. Once the GSSAPI context is complete the client sends an empty
//!    token; the server answers with the RFC 4752 security layer offer,
//!    `gss_wrap`ped: `[layer mask][u24 max buffer]`, the mask being
//!    exactly its `hbase.rpc.protection` (1 authentication, 2 integrity, 4
//!    privacy). The client answers with one layer, `gss_wrap`ped
//!    `[layer][u24 max buffer]` (no authorization id: the principal is the
//!    user), and the server sends nothing more.
//! 4. With integrity or privacy, every message after that in both
//!    directions (the connection header included, its own length prefix
//!    included) is `gss_wrap`ped and sent as `[u32 length][wrapped]`.
//!
//! Every length here is checked against the bytes present and against a
//! bound before anything is allocated: a server's bytes never panic and
//! never make the client hold more than [`MAX_TOKEN`] for a token.

use std::sync::Arc;

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};

use super::error::NativeError;
use crate::security::kerberos::{GssapiSasl, MAX_ROUNDS, SaslStep, SaslWrap};
use crate::security::sasl::MAX_TOKEN;
use crate::security::{Kerberos, KerberosFailure, SecurityError};

/// The preamble of a Kerberos connection: `HBas`, RPC version 0, auth
/// method KERBEROS (81).
pub const KERBEROS_PREAMBLE: [u8; 6] = *b"HBas\x00\x51";

/// The length a server without Kerberos answers the preamble with (HBase's
/// `SaslUtil.SWITCH_TO_SIMPLE_AUTH`).
pub const SWITCH_TO_SIMPLE_AUTH: i32 = -88;

/// The longest exception class or message of an error reply accepted.
const MAX_ERROR_TEXT: usize = 64 * 1024;

/// Appends a client token, `[u32 length][token]`.
pub fn encode_token(token: &[u8], out: &mut Vec<u8>) {
    // Tokens are small (a Kerberos AP-REQ is a few KiB); a length that
    // does not fit is not a token a GSSAPI library makes.
    out.extend_from_slice(&u32::try_from(token.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(token);
}

/// One reply of the server during the exchange.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerReply {
    /// Status 0 and a token (possibly empty).
    Token(Vec<u8>),
    /// Status 0 and the length -88: the server does not use Kerberos.
    SwitchToSimple,
    /// Status 1: the server refused the exchange.
    Error {
        /// The Java exception's class.
        class: String,
        /// Its message.
        message: String,
    },
}

/// Reads one server reply off the front of `buf`: `Ok(None)` until all of
/// it is there, `Ok(Some((reply, bytes used)))` once it is, `Err` for
/// bytes that are no such reply (what is wrong).
pub fn parse_reply(buf: &[u8]) -> Result<Option<(ServerReply, usize)>, String> {
    let Some(status) = read_u32(buf, 0) else {
        return Ok(None);
    };
    match status {
        0 => {
            let Some(length) = read_u32(buf, 4) else {
                return Ok(None);
            };
            if length as i32 == SWITCH_TO_SIMPLE_AUTH {
                return Ok(Some((ServerReply::SwitchToSimple, 8)));
            }
            let length = checked_length(length, MAX_TOKEN, "token")?;
            Ok(buf
                .get(8..8 + length)
                .map(|token| (ServerReply::Token(token.to_vec()), 8 + length)))
        }
        1 => {
            let Some((class, at)) = read_string(buf, 4)? else {
                return Ok(None);
            };
            let Some((message, end)) = read_string(buf, at)? else {
                return Ok(None);
            };
            Ok(Some((ServerReply::Error { class, message }, end)))
        }
        other => Err(format!(
            "a SASL reply with status {other} (HBase sends 0 for a token and 1 for an error)"
        )),
    }
}

fn read_u32(buf: &[u8], at: usize) -> Option<u32> {
    let bytes = buf.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes(bytes.try_into().ok()?))
}

fn checked_length(length: u32, max: usize, what: &str) -> Result<usize, String> {
    match usize::try_from(length) {
        Ok(n) if n <= max => Ok(n),
        _ => Err(format!(
            "a SASL {what} of {length} bytes announced, beyond the {max}-byte limit"
        )),
    }
}

/// A Hadoop `WritableUtils.writeString`: `[i32 length][UTF-8]`, -1 for
/// null (read as empty).
fn read_string(buf: &[u8], at: usize) -> Result<Option<(String, usize)>, String> {
    let Some(length) = read_u32(buf, at) else {
        return Ok(None);
    };
    if length as i32 == -1 {
        return Ok(Some((String::new(), at + 4)));
    }
    let length = checked_length(length, MAX_ERROR_TEXT, "error text")?;
    Ok(buf
        .get(at + 4..at + 4 + length)
        .map(|text| (String::from_utf8_lossy(text).into_owned(), at + 4 + length)))
}

/// HBase's SASL GSSAPI handshake on a new `stream` (plain TCP or inside
/// TLS) to `endpoint`: the Kerberos preamble, the tokens, the security
/// layer, then `header` (the connection header with its length prefix),
/// wrapped when the layer wraps. Returns the layer the reader and writer
/// use, `None` for authentication only.
pub(super) async fn handshake<S: AsyncRead + AsyncWrite + Unpin>(
    kerberos: &Kerberos,
    endpoint: &str,
    stream: &mut S,
    header: &[u8],
) -> Result<Option<Arc<SaslWrap>>, NativeError> {
    let fail = |kind, reason: String| NativeError::from(SecurityError::kerberos(endpoint, kind, reason));
    let (mut sasl, first) = GssapiSasl::start(kerberos, endpoint, "hbase.rpc.protection").await?;
    let mut out = KERBEROS_PREAMBLE.to_vec();
    encode_token(&first, &mut out);
    write(stream, &out, endpoint).await?;

    let mut buf = BytesMut::with_capacity(4096);
    for _ in 0..MAX_ROUNDS {
        let token = match read_reply(stream, &mut buf, endpoint).await? {
            ServerReply::Token(token) => token,
            ServerReply::SwitchToSimple => {
                return Err(fail(
                    KerberosFailure::ServerNotKerberos,
                    "the server does not use Kerberos (its hbase.security.authentication is simple): connect \
                     without `NativeConfig::kerberos`"
                        .to_string(),
                ));
            }
            ServerReply::Error { class, message } => {
                return Err(fail(
                    KerberosFailure::Refused,
                    format!(
                        "the server refused the SASL handshake: {class}: {message} (is {} the servers' \
                         hbase.regionserver.kerberos.principal, and are the clocks in step?)",
                        sasl.server()
                    ),
                ));
            }
        };
        let mut out = Vec::new();
        match sasl.step(&token)? {
            // Once complete with nothing more to say, the empty token asks
            // for the server's security layer offer.
            SaslStep::Token(next) => {
                encode_token(&next, &mut out);
                write(stream, &out, endpoint).await?;
            }
            SaslStep::Done { answer, wrap, .. } => {
                if !buf.is_empty() {
                    return Err(fail(
                        KerberosFailure::Gssapi,
                        format!("{} unexpected bytes after the security layer offer", buf.len()),
                    ));
                }
                encode_token(&answer, &mut out);
                match &wrap {
                    None => out.extend_from_slice(header),
                    Some(layer) => layer
                        .wrap(header, &mut out)
                        .map_err(|reason| fail(KerberosFailure::Gssapi, reason))?,
                }
                write(stream, &out, endpoint).await?;
                return Ok(wrap);
            }
        }
    }
    Err(fail(
        KerberosFailure::Gssapi,
        format!("the SASL handshake took more than {MAX_ROUNDS} rounds"),
    ))
}

async fn write<S: AsyncWrite + Unpin>(stream: &mut S, bytes: &[u8], endpoint: &str) -> Result<(), NativeError> {
    super::io::write_and_flush(stream, bytes)
        .await
        .map_err(|e| NativeError::Closed {
            endpoint: endpoint.to_string(),
            reason: format!("writing the SASL handshake failed: {e}"),
            sent: false,
        })
}

/// Reads until one whole server reply is in `buf`, and takes it off.
async fn read_reply<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut BytesMut,
    endpoint: &str,
) -> Result<ServerReply, NativeError> {
    loop {
        match parse_reply(buf) {
            Ok(Some((reply, used))) => {
                let _ = buf.split_to(used);
                return Ok(reply);
            }
            Ok(None) => {}
            Err(reason) => {
                return Err(SecurityError::kerberos(
                    endpoint,
                    KerberosFailure::Gssapi,
                    format!("the server's SASL reply is invalid: {reason}: is it HBase's RPC, with Kerberos?"),
                )
                .into());
            }
        }
        let read = stream.read_buf(buf).await.map_err(|e| NativeError::Closed {
            endpoint: endpoint.to_string(),
            reason: format!("reading the SASL handshake failed: {e}"),
            sent: false,
        })?;
        if read == 0 {
            return Err(NativeError::Closed {
                endpoint: endpoint.to_string(),
                reason: format!(
                    "closed by the server during the SASL handshake ({} bytes of a reply read): a server that \
                     serves TLS only closes a plaintext client so (`NativeConfig::tls`)",
                    buf.len()
                ),
                sent: false,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_length_prefixed() {
        let mut out = Vec::new();
        encode_token(b"abc", &mut out);
        encode_token(b"", &mut out);
        assert_eq!(out, b"\x00\x00\x00\x03abc\x00\x00\x00\x00");
    }

    #[test]
    fn a_token_reply_parses_once_whole() {
        let reply = b"\x00\x00\x00\x00\x00\x00\x00\x03xyzREST";
        for cut in 0..11 {
            assert_eq!(parse_reply(&reply[..cut]), Ok(None), "cut at {cut}");
        }
        assert_eq!(parse_reply(reply), Ok(Some((ServerReply::Token(b"xyz".to_vec()), 11))));
        assert_eq!(
            parse_reply(b"\x00\x00\x00\x00\x00\x00\x00\x00"),
            Ok(Some((ServerReply::Token(Vec::new()), 8)))
        );
    }

    #[test]
    fn switch_to_simple_is_recognised() {
        assert_eq!(
            parse_reply(b"\x00\x00\x00\x00\xff\xff\xff\xa8"),
            Ok(Some((ServerReply::SwitchToSimple, 8)))
        );
    }

    #[test]
    fn an_error_reply_gives_class_and_message() {
        let mut reply = b"\x00\x00\x00\x01".to_vec();
        reply.extend_from_slice(b"\x00\x00\x00\x21javax.security.sasl.SaslException");
        reply.extend_from_slice(b"\x00\x00\x00\x13GSS initiate failed");
        for cut in 0..reply.len() {
            assert_eq!(parse_reply(&reply[..cut]), Ok(None), "cut at {cut}");
        }
        assert_eq!(
            parse_reply(&reply),
            Ok(Some((
                ServerReply::Error {
                    class: "javax.security.sasl.SaslException".to_string(),
                    message: "GSS initiate failed".to_string(),
                },
                reply.len()
            )))
        );
        // A null message (-1) reads as empty.
        let null = b"\x00\x00\x00\x01\x00\x00\x00\x01X\xff\xff\xff\xff";
        assert_eq!(
            parse_reply(null),
            Ok(Some((
                ServerReply::Error {
                    class: "X".to_string(),
                    message: String::new()
                },
                null.len()
            )))
        );
    }

    #[test]
    fn lengths_beyond_the_bounds_are_refused_before_any_allocation() {
        let err = parse_reply(b"\x00\x00\x00\x00\x7f\xff\xff\xff").unwrap_err();
        assert!(err.contains("beyond the 1048576-byte limit"), "{err}");
        let err = parse_reply(b"\x00\x00\x00\x01\x00\x10\x00\x00").unwrap_err();
        assert!(err.contains("error text"), "{err}");
        let err = parse_reply(b"\x00\x00\x00\x02").unwrap_err();
        assert!(err.contains("status 2"), "{err}");
        // What a TLS server's alert or a ZooKeeper's bytes look like here.
        assert!(parse_reply(b"\x15\x03\x03\x00\x02\x02\x28").is_err());
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        // Every prefix of every 0..=255 byte at each position of a reply.
        let base = b"\x00\x00\x00\x01\x00\x00\x00\x02ab\x00\x00\x00\x01c".to_vec();
        for at in 0..base.len() {
            for byte in 0..=255u8 {
                let mut bytes = base.clone();
                bytes[at] = byte;
                for cut in 0..=bytes.len() {
                    let _ = parse_reply(&bytes[..cut]);
                }
            }
        }
    }
}
