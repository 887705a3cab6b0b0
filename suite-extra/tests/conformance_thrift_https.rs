//! The store conformance suite against a real HBase through a Thrift2
//! gateway in HTTPS mode (`hbase.regionserver.thrift.http` and
//! `hbase.thrift.ssl.enabled`; `scripts/hbase/hbase start` runs one with a
//! certificate signed by a CA it makes, and prints its address as
//! `HMAP_THRIFT_HTTPS` and the CA's PEM file as `HMAP_THRIFT_CA`), with
//! `ThriftConfig::http` set to `ThriftHttp::https_with_ca`: every call a
//! `POST` over TLS, the gateway's certificate checked.

use std::time::{Duration, Instant};

use hmap::store::{StoreError, ThriftConfig, ThriftHttp, ThriftStore};
use hmap_suite::conformance::ThriftTarget;

/// The CA the script's gateway certificate is signed by.
fn ca() -> Vec<u8> {
    let path = hmap_suite::required_env("HMAP_THRIFT_CA");
    std::fs::read(&path).unwrap_or_else(|e| panic!("HMAP_THRIFT_CA={path} cannot be read: {e}"))
}

fn https_store(address: &str, http: ThriftHttp) -> ThriftStore {
    let mut config = ThriftConfig::new(address);
    config.http = Some(http);
    config.call_timeout = Duration::from_secs(30);
    ThriftStore::with_config(config)
}

/// The HTTPS gateway under test; panics without one.
async fn target() -> ThriftTarget {
    let https = ThriftHttp::https_with_ca(&ca()).expect("the CA's PEM");
    ThriftTarget::from_env("HMAP_THRIFT_HTTPS", "hmap_https_conformance_", |config| {
        config.http = Some(https);
        config.call_timeout = Duration::from_secs(30);
    })
    .await
}

hmap_suite::for_each_case!(
    hmap_suite::hbase_cases,
    target,
    "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT_HTTPS=host:port and HMAP_THRIFT_CA"
);

/// The certificate is checked: a client that trusts another CA fails the
/// handshake with an error that says so, and so does one that expects
/// another name on the certificate.
#[tokio::test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT_HTTPS=host:port and HMAP_THRIFT_CA"]
async fn the_gateway_s_certificate_is_checked() {
    let address = hmap_suite::required_env("HMAP_THRIFT_HTTPS");
    let other = ThriftHttp::https_with_ca(OTHER_CA).expect("a PEM");
    let err = https_store(&address, other).ping().await.expect_err("an unknown CA");
    assert!(
        matches!(err, StoreError::Connection { .. }) && err.to_string().contains("TLS handshake"),
        "{err}"
    );
    let wrong_name = ThriftHttp::https_with_ca(&ca())
        .expect("the CA")
        .server_name("gateway.example.com");
    let err = https_store(&address, wrong_name)
        .ping()
        .await
        .expect_err("another name");
    assert!(err.to_string().contains("TLS handshake"), "{err}");
}

/// Each mismatch between HTTPS, HTTP and plain sockets fails within the
/// call's deadline with an error that names the gateway's likely mode.
#[tokio::test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT, HMAP_THRIFT_HTTPS and HMAP_THRIFT_CA"]
async fn a_mismatched_transport_is_a_clear_error() {
    let https_gateway = hmap_suite::required_env("HMAP_THRIFT_HTTPS");
    let socket_gateway = hmap_suite::required_env("HMAP_THRIFT");
    let https = ThriftHttp::https_with_ca(&ca()).expect("the CA");
    let cases = [
        // A plain socket, and plain HTTP, against HTTPS.
        (&https_gateway, None, "HTTPS mode"),
        (&https_gateway, Some(ThriftHttp::plain()), "TLS"),
        // HTTPS and HTTP against a plain socket gateway.
        (&socket_gateway, Some(https), "HTTP mode"),
        (&socket_gateway, Some(ThriftHttp::plain()), "HTTP mode"),
    ];
    for (address, http, says) in cases {
        let mut config = ThriftConfig::new(address.as_str());
        config.http = http.clone();
        config.call_timeout = Duration::from_secs(5);
        config.connect_timeout = Duration::from_secs(5);
        let started = Instant::now();
        let err = ThriftStore::with_config(config)
            .ping()
            .await
            .expect_err("a mismatched transport fails");
        let text = err.to_string();
        assert!(
            text.contains(says) && text.contains("hmap speaks"),
            "{http:?} against {address}: {text}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(6),
            "{http:?} against {address}: {:?}",
            started.elapsed()
        );
    }
}

/// A CA certificate that signed nothing the gateway has (made once with
/// keytool: `-genkeypair -keyalg EC -dname "CN=another CA" -ext bc:c`).
const OTHER_CA: &[u8] = b"-----BEGIN CERTIFICATE-----
MIIBVTCB+6ADAgECAgkAyvAmHswwPtYwCgYIKoZIzj0EAwIwFTETMBEGA1UEAxMK
YW5vdGhlciBDQTAgFw0yNjExMjMwOTA4MzJaGA8yMTI2MTAzMDA5MDgzMlowFTET
MBEGA1UEAxMKYW5vdGhlciBDQTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABNm6
MpKm1/dZ2gqwXg40S7R0BtGdDKc3E9UZwv4Ouuod84qJGC9Kc/hy6/qkcDSguuiZ
zIdIUen66R2TU0lYL7OjMjAwMB0GA1UdDgQWBBTPJS0Mm3IOWBUtuiBCKXqHiyeP
YzAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0kAMEYCIQDQ9KLrlZmtLTvD
oP+gpa4UKy2L/U6HcsRPc2hDFTaSUAIhAKqN59ozPSCUCaatYsNAszLnwRtNknPB
77fNtbifR2IB
-----END CERTIFICATE-----
";
