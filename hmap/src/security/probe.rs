//! What is on the other end of a plaintext connection that closed before
//! any reply: a server that serves TLS only does that to a plaintext
//! client (HBase with `hbase.server.netty.tls.enabled` true and
//! `hbase.server.netty.tls.supportplaintext` false: its `SslHandler` finds
//! no TLS record in the preamble and closes without a byte), and so does a
//! server that is stopping. The two are told apart by asking the server
//! once more in TLS's own words: a TLS server answers a `ClientHello` with
//! a TLS record (its `ServerHello`, or an alert); an HBase server that is
//! stopping, or that serves plaintext, answers nothing TLS.
//!
//! The hello is written here by hand, because a plaintext build has no TLS
//! library (feature `tls` is off by default) and only its first bytes
//! matter: no handshake is carried on.

use std::time::Duration;

#[cfg(test)]
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The longest the probe may take, dial, hello and answer together.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Whether `endpoint` answers a TLS `ClientHello` with a TLS record,
/// within `timeout` (at most [`PROBE_TIMEOUT`]). Any failure (refused,
/// reset, silent, closed) answers `false`.
pub(crate) async fn answers_tls(endpoint: &str, timeout: Duration) -> bool {
    crate::store::probe::first_answer::<3>(endpoint, &client_hello(), timeout.min(PROBE_TIMEOUT))
        .await
        .is_some_and(|first| is_tls_record(&first))
}

/// Whether `first` starts a TLS record of an alert or a handshake message,
/// TLS 1.0 to 1.3 (RFC 8446 §5.1: content type 21 or 22, then the legacy
/// version 3.x).
pub(crate) fn is_tls_record(first: &[u8]) -> bool {
    matches!(first, [0x15 | 0x16, 0x03, 0x00..=0x04, ..])
}

/// A TLS 1.2 `ClientHello` (RFC 5246 §7.4.1.2) in one record: the suites
/// HBase's JDK offers by default with ECDHE and RSA, the groups and
/// signature algorithms they need. A server with none of them in common
/// answers with a `handshake_failure` alert, which is a TLS record too.
fn client_hello() -> Vec<u8> {
    // TLS_ECDHE_RSA/ECDSA_WITH_AES_128_GCM_SHA256, TLS_RSA_WITH_AES_128_GCM_SHA256.
    const SUITES: [u16; 3] = [0xC02F, 0xC02B, 0x009C];
    let mut extensions = Vec::new();
    // supported_groups: secp256r1, x25519.
    extension(&mut extensions, 0x000A, &[0x00, 0x04, 0x00, 0x17, 0x00, 0x1D]);
    // ec_point_formats: uncompressed.
    extension(&mut extensions, 0x000B, &[0x01, 0x00]);
    // signature_algorithms: rsa_pkcs1_sha256, ecdsa_secp256r1_sha256, rsa_pss_rsae_sha256.
    extension(
        &mut extensions,
        0x000D,
        &[0x00, 0x06, 0x04, 0x01, 0x04, 0x03, 0x08, 0x04],
    );

    let mut body = vec![0x03, 0x03];
    // The random: its value does not matter to a probe that goes no further.
    body.extend_from_slice(&[0x5A; 32]);
    body.push(0); // no session id
    body.extend_from_slice(&u16_len(SUITES.len() * 2));
    for suite in SUITES {
        body.extend_from_slice(&suite.to_be_bytes());
    }
    body.extend_from_slice(&[0x01, 0x00]); // compression: null
    body.extend_from_slice(&u16_len(extensions.len()));
    body.extend_from_slice(&extensions);

    let mut handshake = vec![0x01]; // client_hello
    handshake.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    handshake.extend_from_slice(&body);

    let mut record = vec![0x16, 0x03, 0x01]; // handshake, TLS 1.0 record version
    record.extend_from_slice(&u16_len(handshake.len()));
    record.extend_from_slice(&handshake);
    record
}

fn extension(out: &mut Vec<u8>, kind: u16, data: &[u8]) {
    out.extend_from_slice(&kind.to_be_bytes());
    out.extend_from_slice(&u16_len(data.len()));
    out.extend_from_slice(data);
}

/// A length of the hello's own parts, all far below 64 KiB.
fn u16_len(len: usize) -> [u8; 2] {
    u16::try_from(len).expect("a hello part under 64 KiB").to_be_bytes()
}

/// A server that serves TLS only, as HBase's `SslHandler` does: a
/// plaintext preamble is answered by a close without a byte, a TLS hello
/// by a TLS record (here a `handshake_failure` alert).
#[cfg(test)]
pub(crate) async fn tls_only_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("addr").to_string();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut first = [0u8; 1];
            if stream.read_exact(&mut first).await.is_ok() && first[0] == 0x16 {
                let _ = stream.write_all(&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28]).await;
            }
        }
    });
    address
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    #[test]
    fn the_hello_is_one_well_formed_record() {
        let hello = client_hello();
        assert_eq!(&hello[..3], &[0x16, 0x03, 0x01]);
        let record_len = usize::from(u16::from_be_bytes([hello[3], hello[4]]));
        assert_eq!(record_len, hello.len() - 5);
        assert_eq!(hello[5], 0x01, "client_hello");
        let handshake_len = usize::from(hello[6]) << 16 | usize::from(hello[7]) << 8 | usize::from(hello[8]);
        assert_eq!(handshake_len, record_len - 4);
        assert_eq!(&hello[9..11], &[0x03, 0x03], "TLS 1.2");
    }

    /// A server that answers the first bytes it reads with `answer` and closes.
    async fn server(answer: &'static [u8]) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address").to_string();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut buf = [0u8; 512];
                let _ = stream.read(&mut buf).await;
                let _ = stream.write_all(answer).await;
            }
        });
        address
    }

    #[tokio::test]
    async fn a_tls_alert_or_server_hello_is_tls_and_silence_or_a_close_is_not() {
        assert!(answers_tls(&tls_only_server().await, PROBE_TIMEOUT).await);
        // A handshake_failure alert, TLS 1.2.
        assert!(
            answers_tls(
                &server(&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28]).await,
                PROBE_TIMEOUT
            )
            .await
        );
        // The start of a ServerHello.
        assert!(answers_tls(&server(&[0x16, 0x03, 0x03, 0x00, 0x4A, 0x02]).await, PROBE_TIMEOUT).await);
        // Closed without a byte (a plaintext HBase reading a bad preamble).
        assert!(!answers_tls(&server(b"").await, PROBE_TIMEOUT).await);
        // An HTTP server's answer.
        assert!(!answers_tls(&server(b"HTTP/1.1 400 Bad Request\r\n\r\n").await, PROBE_TIMEOUT).await);
        // Nothing listening.
        let closed = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = closed.local_addr().expect("address").to_string();
        drop(closed);
        assert!(!answers_tls(&address, PROBE_TIMEOUT).await);
    }

    #[tokio::test]
    async fn a_silent_server_is_given_up_on_within_the_timeout() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address").to_string();
        let started = std::time::Instant::now();
        assert!(!answers_tls(&address, Duration::from_millis(200)).await);
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        drop(listener);
    }
}
