//! What is on the other end of a Thrift connection whose first call gets
//! no answer: a gateway that demands SASL (`hbase.thrift.security.qop`)
//! reads a plain call's first bytes as a SASL message with an invalid
//! status and then neither answers nor closes (HBase 2.6.1's), so a client
//! without Kerberos would wait out its whole `call_timeout`. After
//! [`PROBE_AFTER`] of silence the gateway is asked once, on a connection of
//! its own, in SASL's words: a SASL gateway answers a `START` for GSSAPI
//! with a token that is no token at once, with a `BAD` or `ERROR` message.
//!
//! The messages are libthrift's `TSaslTransport` negotiation
//! (`[status u8][u32 length][payload]`, statuses `START` 1, `OK` 2, `BAD` 3,
//! `ERROR` 4, `COMPLETE` 5), written here by hand: a build without the
//! `kerberos` feature has no SASL module, and only the first bytes of the
//! answer matter.

use std::time::Duration;

#[cfg(test)]
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long a fresh connection's first call waits for a reply before the
/// gateway is asked whether it demands SASL. Any gateway answers in
/// milliseconds what it can read; the call goes on waiting either way.
pub(crate) const PROBE_AFTER: Duration = Duration::from_secs(1);

/// The longest the probe may take, dial, messages and answer together.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The longest negotiation message a gateway's refusal may announce.
const MAX_REFUSAL: u32 = 64 * 1024;

/// Whether `address` answers a SASL `START` with a negotiation message,
/// within [`PROBE_TIMEOUT`]. Any failure (refused, reset, silent, closed,
/// another protocol's bytes) answers `false`.
pub(crate) async fn demands_sasl(address: &str) -> bool {
    crate::store::probe::first_answer::<5>(address, &hello(), PROBE_TIMEOUT)
        .await
        .is_some_and(|head| is_negotiation_message(&head))
}

/// Whether `head` starts a negotiation message a server sends (`OK`, `BAD`,
/// `ERROR` or `COMPLETE`) of a plausible length.
fn is_negotiation_message(head: &[u8; 5]) -> bool {
    let length = u32::from_be_bytes([head[1], head[2], head[3], head[4]]);
    (2..=5).contains(&head[0]) && length <= MAX_REFUSAL
}

/// `START` with the mechanism's name, then `OK` with one byte that is no
/// GSSAPI token: the server refuses it, saying so in SASL.
fn hello() -> Vec<u8> {
    let mut out = Vec::new();
    for (status, payload) in [(1u8, &b"GSSAPI"[..]), (2, &[0u8][..])] {
        out.push(status);
        out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
        out.extend_from_slice(payload);
    }
    out
}

/// A gateway that demands SASL, as HBase 2.6.1's does: a plain call is
/// read and never answered; a SASL `START` is refused with an `ERROR`
/// message.
#[cfg(test)]
pub(crate) async fn sasl_gateway() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("addr").to_string();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 1024];
                let Ok(read) = stream.read(&mut buf).await else { return };
                if buf[..read].starts_with(&[1, 0, 0, 0, 6]) {
                    let refusal = b"GSS initiate failed";
                    let mut answer = vec![4];
                    answer.extend_from_slice(&(refusal.len() as u32).to_be_bytes());
                    answer.extend_from_slice(refusal);
                    let _ = stream.write_all(&answer).await;
                } else {
                    // Neither answers nor closes.
                    tokio::time::sleep(Duration::from_secs(60)).await;
                }
            });
        }
    });
    address
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hello_is_start_then_ok() {
        assert_eq!(hello(), b"\x01\x00\x00\x00\x06GSSAPI\x02\x00\x00\x00\x01\x00");
    }

    #[test]
    fn only_a_servers_negotiation_message_counts() {
        assert!(is_negotiation_message(b"\x04\x00\x00\x00\x13"));
        assert!(is_negotiation_message(b"\x02\x00\x00\x01\x00"));
        // A Thrift reply, binary and compact.
        assert!(!is_negotiation_message(b"\x80\x01\x00\x02\x00"));
        assert!(!is_negotiation_message(b"\x82\x41\x01\x0b\x67"));
        // A frame's length, HTTP.
        assert!(!is_negotiation_message(b"\x00\x00\x00\x2a\x80"));
        assert!(!is_negotiation_message(b"HTTP/"));
        // A status with a length no refusal has.
        assert!(!is_negotiation_message(b"\x04\x7f\x00\x00\x00"));
    }

    #[tokio::test]
    async fn a_sasl_gateway_is_told_from_a_plain_one() {
        assert!(demands_sasl(&sasl_gateway().await).await);
        // A plain gateway reading the START as a call: closes, or answers
        // with something else.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("addr").to_string();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let _ = stream.read(&mut [0u8; 64]).await;
            }
        });
        assert!(!demands_sasl(&address).await);
    }
}
