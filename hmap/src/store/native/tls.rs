//! HBase's RPC over TLS (feature `tls`), as HBase 2.6 serves it
//! (`hbase.server.netty.tls.enabled`): the TLS handshake first, then the
//! usual preamble, connection header and calls inside it, as the Java
//! client's `hbase.client.netty.tls.enabled` does. rustls on tokio, ring as
//! the crypto provider, the same stack as ThriftStore's HTTPS.
//!
//! The server's certificate is checked against a CA of yours or the
//! platform's roots, for the host each connection dials (an IP address is
//! checked against the certificate's IP SANs, a name against its DNS
//! SANs), unless [`Tls::server_name`] names another. With a client
//! certificate ([`Tls::client_auth_files`]) it works with servers
//! that demand one (`hbase.server.netty.tls.client.auth.mode` `NEED`).
//!
//! A handshake that fails is a [`NativeError::Tls`] saying what to change:
//! the CA, the server name, the client certificate, or TLS itself when the
//! server does not speak it.

use std::io;

use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_rustls::rustls::{self, AlertDescription};

use super::error::NativeError;
use crate::security::Tls;

/// The TLS handshake over `stream`, a connection to `endpoint`
/// (`host:port`), with the name to check.
pub(super) async fn handshake(
    tls: &Tls,
    endpoint: &str,
    stream: TcpStream,
) -> Result<TlsStream<TcpStream>, NativeError> {
    let host = tls.server_name_checked().map(str::to_string).unwrap_or_else(|| {
        // `host:port`, `[v6]:port`: the host, without brackets.
        let host = endpoint.rsplit_once(':').map_or(endpoint, |(host, _)| host);
        host.trim_start_matches('[').trim_end_matches(']').to_string()
    });
    let name = ServerName::try_from(host.clone()).map_err(|_| NativeError::Tls {
        endpoint: endpoint.to_string(),
        reason: format!(
            "`{host}` is neither a DNS name nor an IP address to check the server's certificate against \
             (set one with `Tls::server_name`)"
        ),
    })?;
    tokio_rustls::TlsConnector::from(tls.client_config())
        .connect(name, stream)
        .await
        .map_err(|e| NativeError::Tls {
            endpoint: endpoint.to_string(),
            reason: handshake_failure(&e, &host, tls.has_client_auth()),
        })
}

/// Why a handshake failed, and what to change.
fn handshake_failure(e: &io::Error, host: &str, client_auth: bool) -> String {
    let rustls_error = e.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>());
    match rustls_error {
        Some(rustls::Error::InvalidCertificate(why)) => format!(
            "the server's certificate is refused ({why:?}): it must be signed by a CA the client trusts \
             (`Tls::with_ca_file`: the CA of the servers' hbase.rpc.tls.keystore) and name `{host}` \
             (or set the name it carries with `Tls::server_name`)"
        ),
        Some(rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. }) => format!(
            "the server does not speak TLS ({e}): if the cluster does not set hbase.server.netty.tls.enabled, \
             connect without TLS (leave `NativeConfig::tls` unset)"
        ),
        Some(other) => match alert_in(other) {
            Some(alert) => refusal(alert, client_auth),
            None => format!("the TLS handshake failed: {e}"),
        },
        None if e.kind() == io::ErrorKind::UnexpectedEof => format!(
            "the server closed the connection during the TLS handshake: if the cluster does not set \
             hbase.server.netty.tls.enabled, connect without TLS (leave `NativeConfig::tls` unset) ({e})"
        ),
        None => format!("the TLS handshake failed: {e}"),
    }
}

fn alert_in(e: &rustls::Error) -> Option<AlertDescription> {
    match e {
        rustls::Error::AlertReceived(alert) => Some(*alert),
        _ => None,
    }
}

/// What a TLS alert from the server means for this client.
fn refusal(alert: AlertDescription, client_auth: bool) -> String {
    let about_certificate = matches!(
        alert,
        AlertDescription::BadCertificate
            | AlertDescription::NoCertificate
            | AlertDescription::CertificateRequired
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateUnknown
            | AlertDescription::CertificateExpired
            | AlertDescription::CertificateRevoked
            | AlertDescription::UnsupportedCertificate
            | AlertDescription::AccessDenied
    );
    match (about_certificate, client_auth) {
        (true, false) => format!(
            "the server refused the connection with TLS alert {alert:?}: it demands a client certificate \
             (hbase.server.netty.tls.client.auth.mode NEED); give one its truststore trusts with \
             `Tls::client_auth_files`"
        ),
        (true, true) => format!(
            "the server refused the client certificate with TLS alert {alert:?}: it must be signed by a CA \
             in the servers' hbase.rpc.tls.truststore, unexpired, with extended key usage clientAuth, and \
             name the client's host (an IP SAN, or its reverse-DNS name) unless the cluster sets \
             hbase.server.netty.tls.verify.client.hostname false (`Tls::client_auth_files`)"
        ),
        (false, _) => format!(
            "the server refused the TLS handshake with alert {alert:?}: no protocol version or cipher suite \
             in common? HBase serves TLS 1.2 unless hbase.rpc.tls.protocol and hbase.rpc.tls.enabledProtocols \
             say otherwise; hmap offers TLS 1.3 and 1.2"
        ),
    }
}

/// The reason for an IO error on an established TLS connection, with what
/// to change when it is the server's refusal: under TLS 1.3 a server that
/// demands a client certificate says so with an alert after the handshake,
/// on the first read.
pub(super) fn io_failure(e: &io::Error, client_auth: bool) -> String {
    let alert = e
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>())
        .and_then(alert_in);
    match alert {
        Some(alert) => format!("{e}: {}", refusal(alert, client_auth)),
        None => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    //! Fake servers on 127.0.0.1 with the certificates of `testdata/tls`
    //! (see its README): rustls servers speaking HBase's RPC inside TLS, and
    //! the ways a server refuses a client, as HBase 2.6 does.

    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use prost::Message;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use tokio_rustls::rustls::server::WebPkiClientVerifier;
    use tokio_rustls::rustls::{ServerConfig, SupportedProtocolVersion};

    use super::*;
    use crate::store::StoreError;
    use crate::store::native::codec::{self, encode_response};
    use crate::store::native::connection::{Connection, ConnectionConfig, Service};
    use crate::store::native::proto::{GetClusterIdRequest, GetClusterIdResponse, RequestHeader, ResponseHeader};
    use crate::store::native::{NativeConfig, NativeStore};

    const CA: &[u8] = include_bytes!("testdata/tls/ca.pem");
    const OTHER_CA: &[u8] = include_bytes!("testdata/tls/other-ca.pem");
    const SERVER: &[u8] = include_bytes!("testdata/tls/server.pem");
    const SERVER_KEY: &[u8] = include_bytes!("testdata/tls/server-key.pem");
    const CLIENT: &[u8] = include_bytes!("testdata/tls/client.pem");
    const CLIENT_KEY: &[u8] = include_bytes!("testdata/tls/client-key.pem");

    const TLS12: &[&SupportedProtocolVersion] = &[&rustls::version::TLS12];
    const TLS13: &[&SupportedProtocolVersion] = &[&rustls::version::TLS13];

    /// A server's TLS settings: its certificate for 127.0.0.1 and
    /// localhost, client certificates signed by the test CA demanded (as
    /// `hbase.server.netty.tls.client.auth.mode` NEED) or not.
    fn server_config(need_client_auth: bool, versions: &[&'static SupportedProtocolVersion]) -> Arc<ServerConfig> {
        server_config_trusting(need_client_auth.then_some(CA), versions)
    }

    /// A server's TLS settings demanding client certificates signed by
    /// `client_ca` (none demanded without one).
    fn server_config_trusting(
        client_ca: Option<&[u8]>,
        versions: &[&'static SupportedProtocolVersion],
    ) -> Arc<ServerConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let chain = CertificateDer::pem_slice_iter(SERVER)
            .collect::<Result<Vec<_>, _>>()
            .expect("server.pem");
        let key = PrivateKeyDer::from_pem_slice(SERVER_KEY).expect("server-key.pem");
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(versions)
            .expect("versions");
        let builder = if let Some(client_ca) = client_ca {
            let roots = Arc::new(crate::security::tls::roots_from_pem(client_ca).expect("the clients' CA"));
            let verifier = WebPkiClientVerifier::builder_with_provider(roots, provider)
                .build()
                .expect("verifier");
            builder.with_client_cert_verifier(verifier)
        } else {
            builder.with_no_client_auth()
        };
        Arc::new(builder.with_single_cert(chain, key).expect("server identity"))
    }

    /// A fake HBase serving RPC over TLS only: each connection's handshake,
    /// preamble and header, then every GetClusterId answered with
    /// `cluster`. A failed handshake closes the connection, as Netty's
    /// `SslHandler` does.
    async fn tls_server(config: Arc<ServerConfig>, cluster: &'static str) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let endpoint = listener.local_addr().expect("addr").to_string();
        let acceptor = tokio_rustls::TlsAcceptor::from(config);
        tokio::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.expect("accept");
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut stream) = acceptor.accept(stream).await else {
                        return;
                    };
                    let mut preamble = [0; 6];
                    if stream.read_exact(&mut preamble).await.is_err() {
                        return;
                    }
                    assert_eq!(&preamble, b"HBas\x00\x50");
                    let len = stream.read_u32().await.expect("header length");
                    stream.read_exact(&mut vec![0; len as usize]).await.expect("header");
                    while let Ok(len) = stream.read_u32().await {
                        let mut frame = vec![0; len as usize];
                        stream.read_exact(&mut frame).await.expect("request");
                        let mut body = &frame[..];
                        let header = RequestHeader::decode_length_delimited(&mut body).expect("request header");
                        let message = GetClusterIdResponse {
                            cluster_id: Some(cluster.to_string()),
                        }
                        .encode_to_vec();
                        let header = ResponseHeader {
                            call_id: header.call_id,
                            ..Default::default()
                        };
                        let reply = encode_response(&header, Some(&message), &[]);
                        stream.write_all(&reply).await.expect("reply");
                    }
                });
            }
        });
        endpoint
    }

    /// A fake server that takes what the client sends, `answer`s it (or
    /// not), and closes.
    async fn plain_server(answer: &'static [u8]) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let endpoint = listener.local_addr().expect("addr").to_string();
        tokio::spawn(async move {
            loop {
                let (mut stream, _) = listener.accept().await.expect("accept");
                tokio::spawn(async move {
                    let _ = stream.read(&mut [0; 1024]).await;
                    let _ = stream.write_all(answer).await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        endpoint
    }

    fn connection(endpoint: &str, tls: Option<Tls>) -> Connection {
        let config = ConnectionConfig {
            tls,
            ..ConnectionConfig::default()
        };
        Connection::new(endpoint, Service::ClientMeta, config)
    }

    async fn cluster_id(connection: &Connection) -> Result<String, NativeError> {
        let reply = connection
            .call::<GetClusterIdResponse>("GetClusterId", &GetClusterIdRequest {}, Duration::from_secs(5))
            .await?;
        Ok(reply.message.cluster_id.unwrap_or_default())
    }

    fn ca() -> Tls {
        Tls::with_ca_pem(CA).expect("ca.pem")
    }

    fn mtls() -> Tls {
        ca().client_auth_pem(CLIENT, CLIENT_KEY).expect("client identity")
    }

    /// `NativeStore::connect` with `tls` to `endpoint` fails, within its
    /// 3 s deadline and well before it, with a `StoreError::Connection`
    /// whose message says each of `hints`.
    async fn connect_fails(endpoint: &str, tls: Option<Tls>, hints: &[&str]) {
        let mut config = NativeConfig::new([endpoint]).call_timeout(Duration::from_secs(3));
        if let Some(tls) = tls {
            config = config.tls(tls);
        }
        let started = Instant::now();
        let err = NativeStore::connect(config).await.expect_err("refused");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}: {err}",
            started.elapsed()
        );
        let StoreError::Connection { message, .. } = &err else {
            panic!("not a connection error: {err:?}");
        };
        for hint in hints {
            assert!(message.contains(hint), "no `{hint}` in: {message}");
        }
    }

    #[tokio::test]
    async fn calls_go_through_tls_on_either_version() {
        for versions in [TLS12, TLS13] {
            let endpoint = tls_server(server_config(false, versions), "over tls").await;
            let connection = connection(&endpoint, Some(ca()));
            assert_eq!(cluster_id(&connection).await.expect("answered"), "over tls");
            // The connection is kept: a second call on it.
            assert_eq!(cluster_id(&connection).await.expect("answered"), "over tls");
            // localhost is on the certificate too.
            let by_name = endpoint.replace("127.0.0.1", "localhost");
            let connection = self::connection(&by_name, Some(ca()));
            assert_eq!(cluster_id(&connection).await.expect("by name"), "over tls");
        }
    }

    #[tokio::test]
    async fn mutual_tls_presents_the_client_certificate() {
        for versions in [TLS12, TLS13] {
            let endpoint = tls_server(server_config(true, versions), "mutual").await;
            let connection = connection(&endpoint, Some(mtls()));
            assert_eq!(cluster_id(&connection).await.expect("answered"), "mutual");
        }
    }

    #[tokio::test]
    async fn a_plain_client_against_a_tls_only_server_is_told_to_use_tls() {
        // HBase with hbase.server.netty.tls.supportplaintext false closes a
        // plaintext connection without a byte, and answers a TLS hello.
        let endpoint = crate::security::probe::tls_only_server().await;
        connect_fails(&endpoint, None, &["before any reply", "TLS only", "NativeConfig::tls"]).await;
        // A server that closes without a byte and does not answer TLS is
        // stopping (or speaks another protocol).
        let endpoint = plain_server(b"").await;
        connect_fails(
            &endpoint,
            None,
            &["before any reply", "stopping", "NativeConfig::zookeeper"],
        )
        .await;
        // A TLS server that answers with an alert (rustls does; Netty's
        // SslHandler closes at once).
        let endpoint = tls_server(server_config(false, TLS12), "unused").await;
        connect_fails(&endpoint, None, &["with a TLS record", "NativeConfig::tls"]).await;
    }

    #[tokio::test]
    async fn a_tls_client_against_a_plain_server_is_told_to_turn_tls_off() {
        // HBase without TLS answers a preamble that is not `HBas` (here, a
        // ClientHello) with a connection-level exception frame and closes.
        let endpoint =
            plain_server(b"\x00\x00\x00\x5a\x12\x08\xff\xff\xff\xff\x0f\x1a\x0bFatalConnectionException").await;
        connect_fails(
            &endpoint,
            Some(ca()),
            &[
                "does not speak TLS",
                "hbase.server.netty.tls.enabled",
                "NativeConfig::tls",
            ],
        )
        .await;
        // A server that closes without a byte.
        let endpoint = plain_server(b"").await;
        connect_fails(
            &endpoint,
            Some(ca()),
            &["during the TLS handshake", "NativeConfig::tls"],
        )
        .await;
    }

    #[tokio::test]
    async fn a_certificate_of_another_ca_or_name_is_refused() {
        let endpoint = tls_server(server_config(false, TLS12), "unused").await;
        let other = Tls::with_ca_pem(OTHER_CA).expect("other-ca.pem");
        connect_fails(
            &endpoint,
            Some(other),
            &["certificate is refused", "UnknownIssuer", "Tls::with_ca_file"],
        )
        .await;
        let wrong_name = ca().server_name("hbase.example.com");
        connect_fails(
            &endpoint,
            Some(wrong_name),
            &["certificate is refused", "Tls::server_name"],
        )
        .await;
    }

    #[tokio::test]
    async fn a_server_demanding_a_client_certificate_says_so() {
        // TLS 1.2 (HBase's default): the alert ends the handshake. TLS 1.3:
        // the handshake ends on the client's side first, the alert comes
        // with the first read.
        for versions in [TLS12, TLS13] {
            let endpoint = tls_server(server_config(true, versions), "unused").await;
            connect_fails(
                &endpoint,
                Some(ca()),
                &["client certificate", "NEED", "Tls::client_auth_files"],
            )
            .await;
        }
    }

    #[tokio::test]
    async fn a_silent_tls_server_times_out_within_the_deadline() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let endpoint = listener.local_addr().expect("addr").to_string();
        let _server = tokio::spawn(async move {
            let (_stream, _) = listener.accept().await.expect("accept");
            tokio::time::sleep(Duration::from_secs(30)).await;
        });
        let connection = connection(&endpoint, Some(ca()));
        let started = Instant::now();
        let err = connection
            .call::<GetClusterIdResponse>("GetClusterId", &GetClusterIdRequest {}, Duration::from_millis(300))
            .await
            .expect_err("no handshake");
        assert!(matches!(err, NativeError::Timeout { .. }), "{err}");
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    }

    /// Each client key the usual tools make, with its certificate
    /// (`testdata/tls/keys`, see its `make.sh`): Java's keytool (taken out
    /// of its PKCS12 keystore by `openssl pkcs12 -nodes`, as the JDK
    /// encoded it: PKCS#8, EC keys without their optional public key) and
    /// OpenSSL's (PKCS#8 and SEC1 EC keys with and without their public
    /// key, PKCS#8 and PKCS#1 RSA keys, Ed25519).
    const CLIENT_KEYS: &[(&str, &[u8], &[u8])] = &[
        (
            "keytool EC P-256, PKCS#8 without the public key",
            include_bytes!("testdata/tls/keys/keytool-ec-p256.pem"),
            include_bytes!("testdata/tls/keys/keytool-ec-p256-key.pem"),
        ),
        (
            "keytool EC P-384, PKCS#8 without the public key",
            include_bytes!("testdata/tls/keys/keytool-ec-p384.pem"),
            include_bytes!("testdata/tls/keys/keytool-ec-p384-key.pem"),
        ),
        (
            "keytool RSA, PKCS#8",
            include_bytes!("testdata/tls/keys/keytool-rsa.pem"),
            include_bytes!("testdata/tls/keys/keytool-rsa-key.pem"),
        ),
        (
            "keytool Ed25519, PKCS#8",
            include_bytes!("testdata/tls/keys/keytool-ed25519.pem"),
            include_bytes!("testdata/tls/keys/keytool-ed25519-key.pem"),
        ),
        (
            "openssl EC P-256, PKCS#8",
            include_bytes!("testdata/tls/keys/openssl-ec.pem"),
            include_bytes!("testdata/tls/keys/openssl-ec-key.pem"),
        ),
        (
            "openssl EC P-256, PKCS#8 without the public key",
            include_bytes!("testdata/tls/keys/openssl-ec.pem"),
            include_bytes!("testdata/tls/keys/openssl-ec-nopub-key.pem"),
        ),
        (
            "openssl EC P-256, SEC1",
            include_bytes!("testdata/tls/keys/openssl-ec.pem"),
            include_bytes!("testdata/tls/keys/openssl-ec-sec1-key.pem"),
        ),
        (
            "openssl EC P-256, SEC1 without the public key",
            include_bytes!("testdata/tls/keys/openssl-ec.pem"),
            include_bytes!("testdata/tls/keys/openssl-ec-sec1-nopub-key.pem"),
        ),
        (
            "openssl RSA, PKCS#8",
            include_bytes!("testdata/tls/keys/openssl-rsa.pem"),
            include_bytes!("testdata/tls/keys/openssl-rsa-key.pem"),
        ),
        (
            "openssl RSA, PKCS#1",
            include_bytes!("testdata/tls/keys/openssl-rsa.pem"),
            include_bytes!("testdata/tls/keys/openssl-rsa-pkcs1-key.pem"),
        ),
        (
            "openssl Ed25519, PKCS#8",
            include_bytes!("testdata/tls/keys/openssl-ed25519.pem"),
            include_bytes!("testdata/tls/keys/openssl-ed25519-key.pem"),
        ),
    ];

    #[tokio::test]
    async fn mutual_tls_accepts_the_keys_javas_and_openssls_tools_make() {
        const KEYS_CA: &[u8] = include_bytes!("testdata/tls/keys/ca.pem");
        for versions in [TLS12, TLS13] {
            let endpoint = tls_server(server_config_trusting(Some(KEYS_CA), versions), "any key").await;
            for (what, chain, key) in CLIENT_KEYS {
                let tls = ca()
                    .client_auth_pem(chain, key)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let connection = connection(&endpoint, Some(tls));
                let answer = cluster_id(&connection).await;
                assert_eq!(answer.unwrap_or_else(|e| panic!("{what}: {e}")), "any key", "{what}");
            }
        }
    }

    #[test]
    fn a_key_of_another_certificate_is_refused_even_without_its_public_key() {
        // An EC key without its public key is completed from the
        // certificate: a key that is not the certificate's still fails.
        let (_, other_chain, _) = CLIENT_KEYS[4];
        let (_, _, keytool_key) = CLIENT_KEYS[0];
        let err = ca().client_auth_pem(other_chain, keytool_key).expect_err("mismatched");
        assert!(err.to_string().contains("do not make an identity"), "{err}");
        let (_, _, sec1_nopub) = CLIENT_KEYS[7];
        let err = ca().client_auth_pem(CLIENT, sec1_nopub).expect_err("mismatched");
        assert!(err.to_string().contains("do not make an identity"), "{err}");
        // A P-384 key with a P-256 certificate: left as it is, and refused.
        let (_, _, p384) = CLIENT_KEYS[1];
        assert!(ca().client_auth_pem(other_chain, p384).is_err());
    }

    #[test]
    fn an_encrypted_key_is_named() {
        let encrypted = b"-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----\n";
        let err = ca().client_auth_pem(CLIENT, encrypted).expect_err("encrypted");
        assert!(err.to_string().contains("openssl pkcs8"), "{err}");
    }

    #[test]
    fn settings_that_cannot_work_are_refused_when_made() {
        let err = Tls::with_ca_pem(b"not a pem").expect_err("no certificate");
        assert!(err.to_string().contains("holds no certificate"), "{err}");
        let err = Tls::with_ca_file("/nonexistent/ca.pem").expect_err("no file");
        assert!(err.to_string().contains("/nonexistent/ca.pem"), "{err}");
        let err = ca().client_auth_pem(CLIENT, b"").expect_err("no key");
        assert!(err.to_string().contains("client key"), "{err}");
        // The server's key does not belong to the client's certificate.
        let err = ca().client_auth_pem(CLIENT, SERVER_KEY).expect_err("mismatched");
        assert!(err.to_string().contains("do not make an identity"), "{err}");
        let _ = codec::DEFAULT_MAX_FRAME;
    }
}
