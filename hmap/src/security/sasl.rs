//! SASL GSSAPI's bytes that do not depend on the carrier, sans IO
//! (feature `kerberos`): what follows the GSSAPI context on every
//! connection that [`Kerberos`](super::Kerberos) authenticates, whether
//! HBase's RPC (NativeStore frames the tokens its own way), a Thrift
//! gateway's SASL transport or a ZooKeeper quorum carries the tokens.
//!
//! 1. Once the GSSAPI context is complete, the server sends the RFC 4752
//!    security layer offer, `gss_wrap`ped: `[layer mask][u24 max buffer]`,
//!    the mask being exactly its setting of the protection levels
//!    (HBase's `hbase.rpc.protection`, a gateway's
//!    `hbase.thrift.security.qop`: 1 authentication, 2 integrity, 4
//!    privacy). The client answers with one layer, `gss_wrap`ped
//!    `[layer][u24 max buffer]` (no authorization id: the principal is the
//!    user), and the server sends nothing more.
//! 2. With integrity or privacy, every message after that in both
//!    directions is `gss_wrap`ped and sent as `[u32 length][wrapped]`.
//!
//! Every length here is checked against a bound before anything is
//! allocated: a server's bytes never panic and never make the client hold
//! more than [`MAX_TOKEN`] for a token.

use std::fmt;

/// The longest token accepted from a server. Kerberos tokens are a few
/// kilobytes (an AP-REP is well under one); a longer length is a server
/// that does not speak this exchange.
pub const MAX_TOKEN: usize = 1 << 20;

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
             (`Kerberos::protection`) or change {setting} on the cluster",
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
