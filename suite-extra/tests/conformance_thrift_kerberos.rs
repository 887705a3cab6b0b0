//! The store conformance suite through HBase's Thrift gateways with
//! Kerberos (`hbase.thrift.security.qop`; `scripts/hbase/hbase start
//! --kerberos --protection P` starts the unframed gateways so): every
//! connection authenticated by SASL GSSAPI with the client keytab the
//! script exports, at the gateway's protection level (a run at `privacy`
//! wraps and encrypts every message). `ThriftStore` on the Thrift2 gateway
//! in the binary and the compact protocol, and `Thrift1Store` on the
//! Thrift1 gateway, each taken from the environment as `store_from_env`
//! takes it (`HMAP_THRIFT` and the Kerberos variables). Then the refusals,
//! each a typed error that names what to change, within the deadline.
//!
//! Built with `--features kerberos` only (see Cargo.toml). Every test is
//! `#[ignore]`d. MIT Kerberos reads its configuration from `KRB5_CONFIG`,
//! which must name the file `HMAP_KRB5_CONFIG` names.

use std::time::{Duration, Instant};

use hmap::security::{Kerberos, KerberosFailure, Protection, SecurityError};
use hmap::store::{Store, StoreError, ThriftConfig, ThriftStore};
use hmap_suite::conformance::{Thrift1Target, ThriftTarget};

const NEEDS: &str = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of \
                     scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG";

/// Checks that MIT Kerberos will read the script's krb5.conf.
fn krb5_config_is_set() {
    let krb5_config = hmap_suite::required_env("HMAP_KRB5_CONFIG");
    assert_eq!(
        std::env::var("KRB5_CONFIG").ok().as_deref(),
        Some(krb5_config.as_str()),
        "MIT Kerberos reads KRB5_CONFIG: export KRB5_CONFIG=$HMAP_KRB5_CONFIG"
    );
}

/// A target's settings must carry the environment's Kerberos login.
fn expect_login(config: &mut ThriftConfig) {
    assert!(
        config.kerberos.is_some(),
        "HMAP_PRINCIPAL and HMAP_KEYTAB are set: {NEEDS}"
    );
}

mod thrift2_kerberos {
    use super::*;

    async fn target() -> ThriftTarget {
        krb5_config_is_set();
        ThriftTarget::from_env("HMAP_THRIFT", "hmap_thrift_krb_conformance_", expect_login).await
    }

    hmap_suite::for_each_case!(
        hmap_suite::hbase_cases,
        target,
        "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"
    );
}

mod thrift2_compact_kerberos {
    use super::*;

    async fn target() -> ThriftTarget {
        krb5_config_is_set();
        ThriftTarget::from_env("HMAP_THRIFT_COMPACT", "hmap_compact_krb_conformance_", expect_login).await
    }

    hmap_suite::for_each_case!(
        hmap_suite::hbase_cases,
        target,
        "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"
    );
}

mod thrift1_kerberos {
    use super::*;

    async fn target() -> Thrift1Target {
        krb5_config_is_set();
        Thrift1Target::from_env("HMAP_THRIFT1", "t1_krb_conformance_", expect_login).await
    }

    hmap_suite::for_each_case!(
        hmap_suite::thrift1_cases,
        target,
        "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"
    );
}

mod thrift_https_spnego {
    use super::*;

    async fn target() -> ThriftTarget {
        krb5_config_is_set();
        let spnego = hmap_suite::required_env("HMAP_SPNEGO_PRINCIPAL");
        ThriftTarget::from_env("HMAP_THRIFT_HTTPS", "hmap_https_krb_conformance_", |config| {
            let login = config.kerberos.take().expect("HMAP_PRINCIPAL and HMAP_KEYTAB are set");
            // The HTTP gateway's principal, not the servers'.
            config.kerberos = Some(login.server_principal(spnego));
        })
        .await
    }

    hmap_suite::for_each_case!(
        hmap_suite::hbase_cases,
        target,
        "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"
    );
}

mod thrift_kerberos_refusals {
    use super::*;

    /// The client's Kerberos settings from the environment, accepting only
    /// the gateway's level.
    fn kerberos() -> Kerberos {
        krb5_config_is_set();
        let protection = match hmap_suite::required_env("HMAP_KRB_PROTECTION").as_str() {
            "authentication" => Protection::Authentication,
            "integrity" => Protection::Integrity,
            "privacy" => Protection::Privacy,
            other => panic!("HMAP_KRB_PROTECTION={other}: expected authentication, integrity or privacy"),
        };
        Kerberos::keytab(
            hmap_suite::required_env("HMAP_PRINCIPAL"),
            hmap_suite::required_env("HMAP_KEYTAB"),
        )
        .server_principal(hmap_suite::required_env("HMAP_SERVER_PRINCIPAL"))
        .protection([protection])
    }

    /// The Thrift2 gateway's settings, with `kerberos` and a 10 s deadline.
    fn config(kerberos: Option<Kerberos>) -> ThriftConfig {
        let mut config = ThriftConfig::new(hmap_suite::required_env("HMAP_THRIFT"));
        config.call_timeout = Duration::from_secs(10);
        config.kerberos = kerberos;
        config
    }

    /// A ping with `config` fails within 8 s with a `StoreError::Connection`
    /// saying `hint`; returns it.
    async fn refused(config: ThriftConfig, hint: &str) -> StoreError {
        let started = Instant::now();
        let err = ThriftStore::with_config(config).ping().await.expect_err("refused");
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "{:?}: {err}",
            started.elapsed()
        );
        assert!(
            matches!(err, StoreError::Connection { .. }),
            "not a connection error: {err:?}"
        );
        assert!(err.to_string().contains(hint), "no `{hint}` in: {err}");
        err
    }

    /// [`refused`], with a `SecurityError::Kerberos` of kind `failure` as
    /// the source.
    async fn refused_by_kerberos(config: ThriftConfig, failure: KerberosFailure, hint: &str) {
        let err = refused(config, hint).await;
        let StoreError::Connection { cause: source, .. } = &err else {
            unreachable!()
        };
        match source.as_deref().and_then(|e| e.downcast_ref::<SecurityError>()) {
            Some(SecurityError::Kerberos { failure: got, .. }) => assert_eq!(*got, failure, "{err}"),
            other => panic!("not a Kerberos error: {other:?} in {err:?}"),
        }
        // A setting to change: trying again fails the same way.
        assert!(!err.is_transient(), "a refusal is not transient: {err}");
    }

    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn a_kerberos_store_reads_and_writes() {
        let store = ThriftStore::with_config(config(Some(kerberos())));
        store.ping().await.expect(NEEDS);
        let table = format!("{}rw", hmap_suite::test_table_prefix("hmap_thrift_krb_"));
        let _ = store.delete_table(&table).await;
        store
            .create_table(&hmap::schema::TableSchema::new(&table).family(hmap::schema::FamilySchema::new("f")))
            .await
            .expect("created");
        let value: Vec<u8> = (0..1 << 20).map(|i: u32| (i % 251) as u8).collect();
        store
            .mutate(
                &table,
                &[hmap::store::RowMutation::new("r").put("f", "q", value.clone())],
            )
            .await
            .expect("a 1 MiB value written through the security layer");
        let row = store
            .get(&table, &hmap::store::Get::new("r"))
            .await
            .expect("read")
            .expect("a row");
        assert_eq!(row.cells[0].value.as_ref(), &value[..]);
        store.delete_table(&table).await.expect("deleted");
    }

    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn a_client_without_kerberos_is_told_to_use_it() {
        // The gateway reads the call's first bytes as a SASL message with
        // an invalid status, logs it, and then neither answers nor closes
        // (seen with HBase 2.6.1's): asked in SASL after a second, it
        // answers so, and the ping fails then (within `refused`'s 8 s of a
        // 30 s deadline) saying what to set.
        let mut plain = config(None);
        plain.call_timeout = Duration::from_secs(30);
        refused_by_kerberos(
            plain,
            KerberosFailure::AuthenticationRequired,
            "demands SASL (it runs with hbase.thrift.security.qop)",
        )
        .await;
    }

    /// A Kerberos client given HBase's own RPC port (a master's) for a
    /// gateway's: told what is there, not to drop Kerberos.
    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn hbases_rpc_port_is_named_for_what_it_is() {
        let mut config = config(Some(kerberos()));
        config.address = hmap_suite::required_env("HMAP_NATIVE");
        refused_by_kerberos(
            config,
            KerberosFailure::Gssapi,
            "this is HBase's RPC port, not a Thrift gateway",
        )
        .await;
    }

    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn a_protection_level_the_gateway_does_not_offer_is_refused() {
        let theirs = hmap_suite::required_env("HMAP_KRB_PROTECTION");
        let others: Vec<Protection> = Protection::ALL
            .into_iter()
            .filter(|p| p.to_string() != theirs)
            .collect();
        refused_by_kerberos(
            config(Some(kerberos().protection(others))),
            KerberosFailure::ProtectionRefused,
            &format!("hbase.thrift.security.qop is {theirs}"),
        )
        .await;
    }

    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn a_server_principal_the_kdc_does_not_know_is_named() {
        let realm = hmap_suite::required_env("HMAP_PRINCIPAL")
            .rsplit_once('@')
            .map(|(_, realm)| realm.to_string())
            .expect("HMAP_PRINCIPAL has a realm");
        // `_HOST` becomes the dialled host, 127.0.0.1: not in the KDC.
        let wrong = kerberos().server_principal(format!("hbase/_HOST@{realm}"));
        refused_by_kerberos(
            config(Some(wrong.clone())),
            KerberosFailure::ServerPrincipalUnknown,
            &format!("hbase/127.0.0.1@{realm}"),
        )
        .await;
        // The gateway's own setting is named, not the region servers'.
        refused_by_kerberos(
            config(Some(wrong)),
            KerberosFailure::ServerPrincipalUnknown,
            "the gateway's hbase.thrift.kerberos.principal",
        )
        .await;
    }

    /// A fake gateway on a free port that reads the client's `START`
    /// (`GSSAPI`) and its first token (a real one: the KDC is the
    /// script's), then answers `reply` and waits for the client to hang up
    /// (or, with `close`, hangs up itself).
    async fn fake_gateway(reply: Vec<u8>, close: bool) -> (String, tokio::task::JoinHandle<()>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address").to_string();
        let server = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.expect("accept");
            let mut start = [0; 11];
            stream.read_exact(&mut start).await.expect("START");
            assert_eq!(&start, b"\x01\x00\x00\x00\x06GSSAPI", "START with the mechanism");
            assert_eq!(stream.read_u8().await.expect("status"), 2, "OK with the first token");
            let length = stream.read_u32().await.expect("token length");
            let mut token = vec![0; length as usize];
            stream.read_exact(&mut token).await.expect("token");
            // An AP-REQ in a GSSAPI initial context token (RFC 2743 3.1).
            assert_eq!(token.first(), Some(&0x60), "a GSSAPI initial context token");
            stream.write_all(&reply).await.expect("reply");
            if !close {
                let _ = stream.read(&mut [0; 1]).await;
            }
        });
        (address, server)
    }

    /// A ping through a fake gateway answering `reply` fails within its
    /// deadline with a `SecurityError::Kerberos` of kind `failure`, saying `hint`.
    async fn fake_refuses(reply: Vec<u8>, failure: KerberosFailure, hint: &str) {
        let (address, server) = fake_gateway(reply, false).await;
        let mut config = config(Some(kerberos()));
        config.address = address;
        refused_by_kerberos(config, failure, hint).await;
        server.await.expect("the fake gateway");
    }

    /// `BAD` and `ERROR` (libthrift's statuses 3 and 4) end the handshake
    /// with the gateway's reason; a status no SASL peer sends, a payload
    /// longer than any token, or a close are refused at once, naming what
    /// the gateway may be.
    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn hostile_gateways_in_the_handshake_are_refused_by_name() {
        let mut bad = b"\x03\x00\x00\x00\x13GSS initiate failed".to_vec();
        fake_refuses(bad.clone(), KerberosFailure::Refused, "GSS initiate failed").await;
        bad[0] = 4;
        fake_refuses(bad, KerberosFailure::Refused, "GSS initiate failed").await;
        // A plain gateway's reply to what it took for a call.
        fake_refuses(
            b"\x80\x01\x00\x03\x00\x00\x00\x00".to_vec(),
            KerberosFailure::Gssapi,
            "no SASL negotiation status",
        )
        .await;
        fake_refuses(
            b"\x02\x7f\xff\xff\xff".to_vec(),
            KerberosFailure::Gssapi,
            "at most 1048576 accepted",
        )
        .await;
        // A token that is no GSSAPI token.
        fake_refuses(b"\x02\x00\x00\x00\x03abc".to_vec(), KerberosFailure::Gssapi, "").await;
        // Half a message, then the connection closed: no SASL gateway.
        let (address, server) = fake_gateway(b"\x02\x00".to_vec(), true).await;
        let mut config = config(Some(kerberos()));
        config.address = address;
        refused_by_kerberos(
            config,
            KerberosFailure::ServerNotKerberos,
            "closed the connection during the SASL handshake",
        )
        .await;
        server.await.expect("the fake gateway");
    }

    /// A gateway that takes the first token and never answers: the ping
    /// ends at its deadline, the handshake within it.
    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn a_gateway_silent_in_the_handshake_meets_the_deadline() {
        let (address, server) = fake_gateway(Vec::new(), false).await;
        let mut config = config(Some(kerberos()));
        config.address = address;
        config.call_timeout = Duration::from_secs(3);
        let started = Instant::now();
        let err = ThriftStore::with_config(config).ping().await.expect_err("no answer");
        let elapsed = started.elapsed();
        assert!(
            elapsed >= Duration::from_secs(2) && elapsed < Duration::from_secs(6),
            "{elapsed:?}: {err}"
        );
        assert!(err.to_string().contains("no reply within"), "{err}");
        server.abort();
    }

    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn kerberos_on_a_framed_wire_is_refused_before_sending() {
        let mut framed = config(Some(kerberos()));
        framed.framed = true;
        refused(framed, "unframed sockets only").await;
    }

    /// The HTTPS gateway's settings (SPNEGO), with `kerberos`, acting for
    /// `do_as` if given, and a 10 s deadline.
    fn https_config(kerberos: Option<Kerberos>, do_as: Option<&str>) -> ThriftConfig {
        let ca = std::fs::read(hmap_suite::required_env("HMAP_THRIFT_CA")).expect("HMAP_THRIFT_CA is readable");
        let mut http = hmap::store::ThriftHttp::https_with_ca(&ca).expect("a CA");
        if let Some(user) = do_as {
            http = http.do_as(user);
        }
        let mut config = ThriftConfig::new(hmap_suite::required_env("HMAP_THRIFT_HTTPS"));
        config.call_timeout = Duration::from_secs(10);
        config.http = Some(http);
        config.kerberos = kerberos;
        config
    }

    fn spnego() -> Kerberos {
        kerberos().server_principal(hmap_suite::required_env("HMAP_SPNEGO_PRINCIPAL"))
    }

    /// The HTTPS gateway of a Kerberos cluster answers 401 to a request
    /// without a token, and to one for another principal: each an error
    /// that says what to set.
    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn the_http_gateway_refuses_requests_without_the_right_token() {
        refused(https_config(None, None), "HTTP 401").await;
        refused(https_config(None, None), "set `ThriftConfig::kerberos`").await;
        // A ticket for the servers' principal, not the gateway's HTTP one.
        refused(
            https_config(Some(kerberos()), None),
            "is `Kerberos::server_principal` its hbase.thrift.spnego.principal",
        )
        .await;
        ThriftStore::with_config(https_config(Some(spnego()), None))
            .ping()
            .await
            .expect("the right token");
    }

    /// `doAs`: the client's principal may act for the one user the
    /// cluster's `hadoop.proxyuser.<client>.users` names
    /// (`HMAP_PROXY_USER`), and for no other; the refusal says why it may be.
    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn the_http_gateway_acts_for_an_allowed_user_only() {
        let allowed = hmap_suite::required_env("HMAP_PROXY_USER");
        let store = ThriftStore::with_config(https_config(Some(spnego()), Some(&allowed)));
        store.ping().await.expect("acting for the allowed user");
        store.list_tables().await.expect("tables listed as that user");
        refused(
            https_config(Some(spnego()), Some("mallory-not-allowed")),
            "hadoop.proxyuser.<caller>",
        )
        .await;
    }
}
