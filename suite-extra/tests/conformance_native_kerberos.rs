//! The store conformance suite against a real Kerberos-secured HBase
//! (`hbase.security.authentication=kerberos`; `scripts/hbase/hbase start
//! --kerberos --protection P`), through `NativeStore` with
//! `NativeConfig::kerberos`: every connection to the master and the region
//! servers authenticated by HBase's SASL GSSAPI handshake with the client
//! keytab the script exports, at the protection level the cluster demands
//! (the client accepts only `HMAP_KRB_PROTECTION`, so a run at `privacy`
//! wraps and encrypts every message). With `HMAP_NATIVE_TLS_CA` set too
//! (`--kerberos --tls`), inside TLS. Then the refusals, each a typed
//! error that names what to change: a server principal the KDC does not
//! know, an unreadable keytab, a protection level the server does not
//! offer, a client without Kerberos.
//!
//! Built with `--features kerberos` only (see Cargo.toml). Every test is
//! `#[ignore]`d and lives in the module `native_kerberos_cluster`. MIT
//! Kerberos reads its configuration from `KRB5_CONFIG`, which must name
//! the file `HMAP_KRB5_CONFIG` names.

mod native_kerberos_cluster {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    use hmap::schema::{FamilySchema, TableSchema};
    use hmap::store::native::{KerberosFailure, NativeConfig, NativeError, NativeKerberos, NativeStore, Protection};
    use hmap::store::{Get, RowMutation, Store, StoreError};

    const NEEDS: &str = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables \
                         of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG";

    use hmap_suite::conformance::NativeTarget as Native;

    /// The level the cluster demands (`HMAP_KRB_PROTECTION`).
    fn protection() -> Protection {
        match hmap_suite::required_env("HMAP_KRB_PROTECTION").as_str() {
            "authentication" => Protection::Authentication,
            "integrity" => Protection::Integrity,
            "privacy" => Protection::Privacy,
            other => panic!("HMAP_KRB_PROTECTION={other}: expected authentication, integrity or privacy"),
        }
    }

    /// The client's Kerberos settings from the environment, accepting only
    /// the cluster's level.
    fn kerberos() -> NativeKerberos {
        let krb5_config = hmap_suite::required_env("HMAP_KRB5_CONFIG");
        assert_eq!(
            std::env::var("KRB5_CONFIG").ok().as_deref(),
            Some(krb5_config.as_str()),
            "MIT Kerberos reads KRB5_CONFIG: export KRB5_CONFIG=$HMAP_KRB5_CONFIG"
        );
        NativeKerberos::keytab(
            hmap_suite::required_env("HMAP_PRINCIPAL"),
            hmap_suite::required_env("HMAP_KEYTAB"),
        )
        .server_principal(hmap_suite::required_env("HMAP_SERVER_PRINCIPAL"))
        .protection([protection()])
    }

    /// The connection settings: Kerberos, inside TLS when the cluster
    /// serves TLS (`HMAP_NATIVE_TLS_CA`).
    fn config(kerberos: NativeKerberos) -> NativeConfig {
        let config = NativeConfig::new([hmap_suite::required_env("HMAP_NATIVE")]).kerberos(kerberos);
        match std::env::var("HMAP_NATIVE_TLS_CA") {
            Ok(ca) => config.tls(
                hmap::store::native::NativeTls::with_ca_file(&ca)
                    .unwrap_or_else(|e| panic!("HMAP_NATIVE_TLS_CA={ca}: {e}")),
            ),
            Err(_) => config,
        }
    }

    /// The cluster under test; panics without one.
    async fn target() -> Native {
        let kerberos = kerberos();
        let connect = || async {
            NativeStore::connect(config(kerberos.clone()))
                .await
                .unwrap_or_else(|e| panic!("HMAP_NATIVE is set but HBase does not answer with Kerberos: {e}"))
        };
        let store = connect().await;
        Native {
            store,
            prefix: hmap_suite::test_table_prefix("hmap_native_krb_conformance_"),
            other: connect().await,
        }
    }

    hmap_suite::for_each_case!(
        hmap_suite::hbase_cases,
        target,
        "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"
    );

    /// A value of 1 MiB goes through the security layer both ways (one
    /// wrapped message each way under integrity and privacy).
    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn a_large_value_goes_through_the_security_layer() {
        let store = NativeStore::connect(config(kerberos())).await.expect(NEEDS);
        let table = format!("{}large", hmap_suite::test_table_prefix("hmap_native_krb_"));
        let _ = store.delete_table(&table).await;
        store
            .create_table(&TableSchema::new(&table).family(FamilySchema::new("f")))
            .await
            .expect("created");
        let value: Vec<u8> = (0..1 << 20).map(|i: u32| (i % 251) as u8).collect();
        store
            .mutate(&table, &[RowMutation::new("r").put("f", "q", value.clone())])
            .await
            .expect("written");
        let row = store.get(&table, &Get::new("r")).await.expect("read").expect("a row");
        assert_eq!(row.cells[0].value.as_ref(), &value[..]);
        store.delete_table(&table).await.expect("deleted");
    }

    /// `NativeStore::connect` with `config` fails fast (within its 10 s
    /// deadline) with a `StoreError::Connection` whose source is
    /// `NativeError::Kerberos` of kind `failure`, saying `hint`.
    async fn refused(config: NativeConfig, failure: KerberosFailure, hint: &str) {
        let started = Instant::now();
        let err = NativeStore::connect(config.call_timeout(Duration::from_secs(10)))
            .await
            .expect_err("refused");
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "{:?}: {err}",
            started.elapsed()
        );
        let StoreError::Connection { cause: source, .. } = &err else {
            panic!("not a connection error: {err:?}");
        };
        let native = source
            .as_deref()
            .and_then(|e| e.downcast_ref::<NativeError>())
            .unwrap_or_else(|| panic!("no NativeError source: {err:?}"));
        match native {
            NativeError::Kerberos { failure: got, .. } => assert_eq!(*got, failure, "{err}"),
            other => panic!("not a Kerberos error: {other:?}"),
        }
        assert!(err.to_string().contains(hint), "no `{hint}` in: {err}");
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
        refused(
            config(wrong),
            KerberosFailure::ServerPrincipalUnknown,
            &format!("hbase/127.0.0.1@{realm}"),
        )
        .await;
    }

    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn an_unreadable_keytab_is_named() {
        let missing = NativeKerberos::keytab(hmap_suite::required_env("HMAP_PRINCIPAL"), "/nonexistent/hmap.keytab")
            .server_principal(hmap_suite::required_env("HMAP_SERVER_PRINCIPAL"));
        refused(
            config(missing),
            KerberosFailure::KeytabUnreadable,
            "/nonexistent/hmap.keytab",
        )
        .await;
    }

    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn a_protection_level_the_server_does_not_offer_is_refused() {
        let theirs = protection();
        let others: Vec<Protection> = Protection::ALL.into_iter().filter(|p| *p != theirs).collect();
        refused(
            config(kerberos().protection(others)),
            KerberosFailure::ProtectionRefused,
            &format!("hbase.rpc.protection is {theirs}"),
        )
        .await;
    }

    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn a_client_without_kerberos_is_told_to_use_it() {
        let plain = config(kerberos()).without_kerberos();
        refused(plain, KerberosFailure::AuthenticationRequired, "NativeConfig::kerberos").await;
    }

    /// The connections a store dials later (each region server's, the
    /// master's) reuse the login: many calls, one credential acquisition
    /// (seen in the store working across both services).
    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn tables_are_listed_and_rows_read_with_one_login() {
        let store = NativeStore::connect(config(kerberos())).await.expect(NEEDS);
        let prefix = hmap_suite::test_table_prefix("hmap_native_krb_");
        let table = format!("{prefix}list");
        let _ = store.delete_table(&table).await;
        store
            .create_table(&TableSchema::new(&table).family(FamilySchema::new("f")))
            .await
            .expect("created");
        assert!(store.list_tables().await.expect("listed").iter().any(|t| t == &table));
        for i in 0..20 {
            store
                .mutate(&table, &[RowMutation::new(format!("r{i}")).put("f", "q", "v")])
                .await
                .expect("written");
        }
        for i in 0..20 {
            assert!(
                store
                    .get(&table, &Get::new(format!("r{i}")))
                    .await
                    .expect("read")
                    .is_some()
            );
        }
        store.delete_table(&table).await.expect("deleted");
    }

    /// A fake server on a free port that reads the Kerberos preamble and
    /// the client's first token (a real one: the KDC is the script's),
    /// then answers `reply` and waits for the client to hang up.
    async fn fake_server(reply: Vec<u8>) -> (String, FakeServer) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address").to_string();
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = connections.clone();
        let task = tokio::spawn(async move {
            loop {
                let (mut stream, _) = listener.accept().await.expect("accept");
                counted.fetch_add(1, Ordering::SeqCst);
                let reply = reply.clone();
                tokio::spawn(async move {
                    let mut preamble = [0; 6];
                    stream.read_exact(&mut preamble).await.expect("preamble");
                    assert_eq!(&preamble, b"HBas\x00\x51", "the Kerberos preamble (auth 81)");
                    let length = stream.read_u32().await.expect("token length");
                    assert!(length > 0, "an initial GSSAPI token");
                    let mut token = vec![0; length as usize];
                    stream.read_exact(&mut token).await.expect("token");
                    // An AP-REQ in a GSSAPI initial context token (RFC 2743 3.1).
                    assert_eq!(token[0], 0x60, "a GSSAPI initial context token");
                    stream.write_all(&reply).await.expect("reply");
                    let _ = stream.read(&mut [0; 1]).await;
                });
            }
        });
        (address, FakeServer { connections, task })
    }

    /// A fake server's task, and how many connections it took.
    struct FakeServer {
        connections: Arc<AtomicUsize>,
        task: tokio::task::JoinHandle<()>,
    }

    impl Drop for FakeServer {
        fn drop(&mut self) {
            self.task.abort();
        }
    }

    /// `connect` to a fake server answering `reply` fails with `failure`,
    /// saying `hint`; how many connections it made.
    async fn fake_refuses(reply: Vec<u8>, failure: KerberosFailure, hint: &str) -> usize {
        let (address, server) = fake_server(reply).await;
        let config = NativeConfig::new([address]).kerberos(kerberos());
        refused(config, failure, hint).await;
        server.connections.load(Ordering::SeqCst)
    }

    /// What HBase without Kerberos (hbase.security.authentication simple)
    /// answers a Kerberos preamble (ServerRpcConnection.processPreamble:
    /// status 0, then SaslUtil.SWITCH_TO_SIMPLE_AUTH, -88).
    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn a_server_without_kerberos_is_named() {
        fake_refuses(
            b"\x00\x00\x00\x00\xff\xff\xff\xa8".to_vec(),
            KerberosFailure::ServerNotKerberos,
            "connect without `NativeConfig::kerberos`",
        )
        .await;
    }

    /// A SASL error reply (status 1, class and message) is the server's
    /// refusal, with its exception.
    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn a_sasl_error_reply_is_the_servers_refusal() {
        let mut reply = b"\x00\x00\x00\x01".to_vec();
        for text in ["javax.security.sasl.SaslException", "GSS initiate failed"] {
            reply.extend_from_slice(&(text.len() as u32).to_be_bytes());
            reply.extend_from_slice(text.as_bytes());
        }
        let connections = fake_refuses(reply, KerberosFailure::Refused, "SaslException: GSS initiate failed").await;
        // Tried again five times, as HBase's Java client does
        // (hbase.security.relogin.maxretries).
        assert_eq!(connections, 6);
    }

    /// Bytes that are no SASL reply (a status HBase never sends, a token
    /// longer than any) are refused before anything is allocated for them.
    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn bytes_that_are_no_sasl_reply_are_refused() {
        fake_refuses(b"\x00\x00\x00\x07".to_vec(), KerberosFailure::Gssapi, "status 7").await;
        fake_refuses(
            b"\x00\x00\x00\x00\x7f\xff\xff\xff".to_vec(),
            KerberosFailure::Gssapi,
            "beyond the 1048576-byte limit",
        )
        .await;
    }

    /// A server that takes the first token and never answers: `connect`
    /// ends at its deadline, the handshake within it.
    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn a_server_silent_in_the_handshake_meets_the_deadline() {
        let (address, server) = fake_server(Vec::new()).await;
        let started = Instant::now();
        let err = NativeStore::connect(
            NativeConfig::new([address])
                .kerberos(kerberos())
                .call_timeout(Duration::from_secs(3)),
        )
        .await
        .expect_err("no answer");
        let elapsed = started.elapsed();
        assert!(
            elapsed >= Duration::from_secs(2) && elapsed < Duration::from_secs(6),
            "{elapsed:?}: {err}"
        );
        assert!(err.to_string().contains("timed out"), "{err}");
        drop(server);
    }

    /// The tickets of a ticket cache that `kinit` filled (MIT's own kinit,
    /// from the client keytab) serve as well as the keytab; a cache
    /// without tickets is named, with what to do.
    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn a_ticket_cache_filled_by_kinit_serves() {
        let keytab = hmap_suite::required_env("HMAP_KEYTAB");
        let principal = hmap_suite::required_env("HMAP_PRINCIPAL");
        let ccache = format!("FILE:{keytab}.kinit-ccache");
        let status = std::process::Command::new("kinit")
            .args(["-kt", &keytab, "-c", &ccache, &principal])
            .status()
            .expect("kinit (scripts/krb5-deps installs krb5-user)");
        assert!(status.success(), "kinit -kt {keytab} -c {ccache} {principal}: {status}");
        let cache = NativeKerberos::ticket_cache_at(&ccache)
            .server_principal(hmap_suite::required_env("HMAP_SERVER_PRINCIPAL"))
            .protection([protection()]);
        let store = NativeStore::connect(config(cache))
            .await
            .expect("connected with kinit's tickets");
        store.list_tables().await.expect("listed");
        let empty = NativeKerberos::ticket_cache_at("FILE:/nonexistent/hmap-ccache")
            .server_principal(hmap_suite::required_env("HMAP_SERVER_PRINCIPAL"));
        refused(config(empty), KerberosFailure::NoCredentials, "run kinit").await;
    }
}

/// A ZooKeeper that demands SASL of every client
/// (`zookeeper.sessionRequireClientSASLAuth`; `scripts/hbase/hbase start
/// --kerberos --zk-sasl`): a store bootstrapped through it authenticates
/// there too with `NativeKerberos::zookeeper_principal`, and without it is
/// refused with an error that names that setting.
mod zookeeper_sasl {
    use std::time::Duration;

    use hmap::store::Store;
    use hmap::store::native::{NativeConfig, NativeKerberos, NativeStore};

    fn login() -> NativeKerberos {
        NativeKerberos::keytab(
            hmap_suite::required_env("HMAP_PRINCIPAL"),
            hmap_suite::required_env("HMAP_KEYTAB"),
        )
        .server_principal(hmap_suite::required_env("HMAP_SERVER_PRINCIPAL"))
    }

    fn config(kerberos: NativeKerberos) -> NativeConfig {
        let config = NativeConfig::zookeeper(&hmap_suite::required_env("HMAP_ZOOKEEPER"))
            .kerberos(kerberos)
            .call_timeout(Duration::from_secs(10));
        match std::env::var("HMAP_NATIVE_TLS_CA") {
            Ok(ca) => config.tls(hmap::store::native::NativeTls::with_ca_file(&ca).expect("the CA")),
            Err(_) => config,
        }
    }

    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase with a SASL ZooKeeper: scripts/hbase/hbase start --kerberos --zk-sasl, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn a_store_authenticates_to_a_zookeeper_that_demands_sasl() {
        let zookeeper = hmap_suite::required_env("HMAP_ZOOKEEPER_PRINCIPAL");
        let store = NativeStore::connect(config(login().zookeeper_principal(zookeeper)))
            .await
            .expect("bootstrapped through the SASL ZooKeeper");
        store.list_tables().await.expect("tables listed");
        store.cluster_id().await.expect("the cluster id read");
    }

    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase with a SASL ZooKeeper: scripts/hbase/hbase start --kerberos --zk-sasl, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn a_store_without_sasl_is_told_to_use_it() {
        let started = std::time::Instant::now();
        let err = NativeStore::connect(config(login())).await.expect_err("refused");
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "{:?}: {err}",
            started.elapsed()
        );
        assert!(err.to_string().contains("zookeeper_principal"), "{err}");
    }

    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase with a SASL ZooKeeper: scripts/hbase/hbase start --kerberos --zk-sasl, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn a_zookeeper_principal_the_kdc_does_not_know_is_named() {
        let err = NativeStore::connect(config(login().zookeeper_principal("zookeeper/nowhere@HMAP.TEST")))
            .await
            .expect_err("refused");
        assert!(err.to_string().contains("zookeeper/nowhere@HMAP.TEST"), "{err}");
    }
}
