//! HBase's SASL exchange on the wire, sans IO (feature `kerberos`): the
//! bytes of the handshake that `kerberos.rs` ([`NativeKerberos`](super::NativeKerberos)) runs before the
//! connection header, and the security layer that follows it.
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

use std::fmt;

/// The preamble of a Kerberos connection: `HBas`, RPC version 0, auth
/// method KERBEROS (81).
pub const KERBEROS_PREAMBLE: [u8; 6] = *b"HBas\x00\x51";

/// The length a server without Kerberos answers the preamble with (HBase's
/// `SaslUtil.SWITCH_TO_SIMPLE_AUTH`).
pub const SWITCH_TO_SIMPLE_AUTH: i32 = -88;

/// The longest token accepted from a server. Kerberos tokens are a few
/// kilobytes (an AP-REP is well under one); a longer length is a server
/// that does not speak this exchange.
pub const MAX_TOKEN: usize = 1 << 20;

/// The longest exception class or message of an error reply accepted.
const MAX_ERROR_TEXT: usize = 64 * 1024;

/// The receive buffer the client announces in its security layer answer:
/// the most the 3-byte field can say. HBase does not hold its messages to
/// the peer's buffer (1 MiB values pass under privacy), and hmap neither.
pub const CLIENT_MAX_BUFFER: u32 = 0x00FF_FFFF;

/// `hbase.rpc.protection`: what the security layer does with each message
/// after the handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Protection {
    /// `authentication` (SASL `auth`): the handshake authenticates; messages
    /// travel as they are (inside TLS if there is TLS).
    Authentication,
    /// `integrity` (SASL `auth-int`): every message is signed.
    Integrity,
    /// `privacy` (SASL `auth-conf`): every message is signed and encrypted.
    Privacy,
}

impl Protection {
    /// Every level, strongest first: the default preference.
    pub const ALL: [Protection; 3] = [Protection::Privacy, Protection::Integrity, Protection::Authentication];

    /// The level's bit in the RFC 4752 layer mask.
    pub fn bit(self) -> u8 {
        match self {
            Protection::Authentication => 1,
            Protection::Integrity => 2,
            Protection::Privacy => 4,
        }
    }

    /// The name HBase's `hbase.rpc.protection` gives it.
    pub fn hbase_name(self) -> &'static str {
        match self {
            Protection::Authentication => "authentication",
            Protection::Integrity => "integrity",
            Protection::Privacy => "privacy",
        }
    }

    /// Whether messages are wrapped after the handshake.
    pub fn wraps(self) -> bool {
        !matches!(self, Protection::Authentication)
    }

    /// The levels a layer mask offers, strongest first.
    pub fn in_mask(mask: u8) -> Vec<Protection> {
        Protection::ALL.into_iter().filter(|p| mask & p.bit() != 0).collect()
    }
}

impl fmt::Display for Protection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.hbase_name())
    }
}

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

/// The server's security layer offer (RFC 4752), unwrapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offer {
    /// The layers offered: the server's `hbase.rpc.protection`.
    pub mask: u8,
    /// The largest message the server says it takes.
    pub max_buffer: u32,
}

/// Reads the unwrapped offer: exactly 4 bytes.
pub fn parse_offer(unwrapped: &[u8]) -> Result<Offer, String> {
    match unwrapped {
        &[mask, a, b, c] => Ok(Offer {
            mask,
            max_buffer: u32::from_be_bytes([0, a, b, c]),
        }),
        other => Err(format!(
            "the server's security layer offer is {} bytes, not 4 (RFC 4752)",
            other.len()
        )),
    }
}

/// No level both sides accept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoCommonLevel {
    /// What the server offered (its `hbase.rpc.protection`).
    pub offered: Vec<Protection>,
    /// What the client accepts.
    pub accepted: Vec<Protection>,
    /// The server's setting that offers the levels: `hbase.rpc.protection`
    /// for HBase's RPC, `hbase.thrift.security.qop` for a gateway.
    pub setting: &'static str,
}

impl fmt::Display for NoCommonLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = |levels: &[Protection]| {
            if levels.is_empty() {
                "none".to_string()
            } else {
                levels.iter().map(|p| p.hbase_name()).collect::<Vec<_>>().join(", ")
            }
        };
        write!(
            f,
            "the server's {setting} is {}, and this client accepts only {}: accept the server's level \
             (`NativeKerberos::protection`) or change {setting} on the cluster",
            names(&self.offered),
            names(&self.accepted),
            setting = self.setting
        )
    }
}

/// The first level of the client's `preference` that the server offers
/// (by its `setting`, for the error).
pub fn choose(offer: Offer, preference: &[Protection], setting: &'static str) -> Result<Protection, NoCommonLevel> {
    preference
        .iter()
        .copied()
        .find(|p| offer.mask & p.bit() != 0)
        .ok_or_else(|| NoCommonLevel {
            offered: Protection::in_mask(offer.mask),
            accepted: preference.to_vec(),
            setting,
        })
}

/// The client's answer, before it is wrapped: `[layer][u24 max buffer]`,
/// no authorization id.
pub fn encode_answer(chosen: Protection) -> [u8; 4] {
    let [_, a, b, c] = CLIENT_MAX_BUFFER.to_be_bytes();
    [chosen.bit(), a, b, c]
}

/// Appends a wrapped message, `[u32 length][wrapped]`.
pub fn encode_wrapped(wrapped: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let length = u32::try_from(wrapped.len())
        .ok()
        .filter(|&n| n <= i32::MAX as u32)
        .ok_or_else(|| format!("a wrapped message of {} bytes is too large to send", wrapped.len()))?;
    out.extend_from_slice(&length.to_be_bytes());
    out.extend_from_slice(wrapped);
    Ok(())
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

    #[test]
    fn the_offer_is_four_bytes() {
        assert_eq!(
            parse_offer(&[7, 0x01, 0x00, 0x00]),
            Ok(Offer {
                mask: 7,
                max_buffer: 65536
            })
        );
        assert!(parse_offer(&[4, 0, 0]).unwrap_err().contains("3 bytes"));
        assert!(parse_offer(&[4, 0, 0, 0, 0]).is_err());
    }

    #[test]
    fn the_client_picks_its_first_preference_the_server_offers() {
        let offer = |mask| Offer {
            mask,
            max_buffer: 65536,
        };
        assert_eq!(
            choose(offer(7), &Protection::ALL, "hbase.rpc.protection"),
            Ok(Protection::Privacy)
        );
        assert_eq!(
            choose(offer(1), &Protection::ALL, "hbase.rpc.protection"),
            Ok(Protection::Authentication)
        );
        assert_eq!(
            choose(offer(2), &Protection::ALL, "hbase.rpc.protection"),
            Ok(Protection::Integrity)
        );
        assert_eq!(
            choose(
                offer(7),
                &[Protection::Authentication, Protection::Privacy],
                "hbase.rpc.protection"
            ),
            Ok(Protection::Authentication)
        );
        let refused = choose(offer(1), &[Protection::Privacy], "hbase.rpc.protection").unwrap_err();
        assert_eq!(refused.offered, vec![Protection::Authentication]);
        let text = refused.to_string();
        assert!(
            text.contains("hbase.rpc.protection is authentication") && text.contains("accepts only privacy"),
            "{text}"
        );
        // A mask with no known bit offers nothing.
        let refused = choose(offer(0x80), &Protection::ALL, "hbase.rpc.protection").unwrap_err();
        assert!(refused.to_string().contains("is none"), "{refused}");
    }

    #[test]
    fn the_answer_names_one_layer_and_the_largest_buffer() {
        assert_eq!(encode_answer(Protection::Privacy), [4, 0xff, 0xff, 0xff]);
        assert_eq!(encode_answer(Protection::Authentication), [1, 0xff, 0xff, 0xff]);
    }

    #[test]
    fn wrapped_messages_are_length_prefixed() {
        let mut out = Vec::new();
        encode_wrapped(b"wrapped", &mut out).unwrap();
        assert_eq!(out, b"\x00\x00\x00\x07wrapped");
    }
}
