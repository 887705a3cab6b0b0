//! The store conformance suite against a real Kerberos-secured HBase
//! (`hbase.security.authentication=kerberos`; `scripts/hbase/hbase start
//! --kerberos --protection P`), through `NativeStore` with
//! `NativeConfig::kerberos`: every connection to the master and the region
//! servers authenticated by HBase's SASL GSSAPI handshake with the client
//! keytab the script exports, at the protection level the cluster demands
//! (the client accepts only `HMAP_KRB_PROTECTION`, so a run at `privacy`
//! wraps and encrypts every message; a list, `privacy,integrity`, is
//! accepted as the library and the CLI accept it, the first preferred).
//! With `HMAP_NATIVE_TLS_CA` set too (`--kerberos --tls`), inside TLS; with
//! `HMAP_NATIVE_TLS_CERT` and `HMAP_NATIVE_TLS_KEY` as well (`--kerberos
//! --mtls`), presenting that client certificate to a cluster that demands
//! one. Then the refusals, each a typed error that names what to change
//! and is not transient: a server principal the KDC does not know, an
//! unreadable keytab, a file that is no keytab, a keytab without the
//! principal or with a stale key, a realm krb5.conf does not know, a
//! protection level the server does not offer, a client without Kerberos
//! (and, under mutual TLS, without its certificate).
//!
//! Built with `--features kerberos` only (see Cargo.toml). Every test is
//! `#[ignore]`d and lives in the module `native_kerberos_cluster`. MIT
//! Kerberos reads its configuration from `KRB5_CONFIG`, which must name
//! the file `HMAP_KRB5_CONFIG` names.

/// The TLS settings the environment names, if the cluster serves TLS
/// (`HMAP_NATIVE_TLS_CA`): its CA and, with `with_certificate` when
/// `HMAP_NATIVE_TLS_CERT` and `HMAP_NATIVE_TLS_KEY` name one (`--mtls`),
/// the client certificate a cluster demanding one is shown.
fn tls(with_certificate: bool) -> Option<hmap::security::Tls> {
    let ca = std::env::var("HMAP_NATIVE_TLS_CA").ok()?;
    let tls = hmap::security::Tls::with_ca_file(&ca).unwrap_or_else(|e| panic!("HMAP_NATIVE_TLS_CA={ca}: {e}"));
    let client = (
        std::env::var("HMAP_NATIVE_TLS_CERT").ok(),
        std::env::var("HMAP_NATIVE_TLS_KEY").ok(),
    );
    Some(match client {
        (Some(cert), Some(key)) if with_certificate => tls
            .client_auth_files(&cert, &key)
            .unwrap_or_else(|e| panic!("HMAP_NATIVE_TLS_CERT={cert}, HMAP_NATIVE_TLS_KEY={key}: {e}")),
        (Some(_), None) | (None, Some(_)) => {
            panic!("HMAP_NATIVE_TLS_CERT and HMAP_NATIVE_TLS_KEY go together: set both or neither")
        }
        _ => tls,
    })
}

mod native_kerberos_cluster {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    use hmap::schema::{FamilySchema, TableSchema};
    use hmap::security::{Kerberos, KerberosFailure, Protection, SecurityError};
    use hmap::store::native::{NativeConfig, NativeStore};
    use hmap::store::{Get, RowMutation, Store, StoreError};

    const NEEDS: &str = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables \
                         of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG";

    use hmap_suite::conformance::NativeTarget as Native;

    /// The levels the cluster offers (`HMAP_KRB_PROTECTION`: one, or
    /// several separated by commas as hbase.rpc.protection lists them), in
    /// the order given.
    fn protection() -> Vec<Protection> {
        let levels = hmap_suite::required_env("HMAP_KRB_PROTECTION");
        levels
            .split(',')
            .map(|level| match level.trim() {
                "authentication" => Protection::Authentication,
                "integrity" => Protection::Integrity,
                "privacy" => Protection::Privacy,
                other => panic!(
                    "HMAP_KRB_PROTECTION={levels}: {other} is not authentication, integrity or privacy (several are \
                     separated by commas)"
                ),
            })
            .collect()
    }

    /// The client's Kerberos settings from the environment, accepting only
    /// the cluster's level.
    fn kerberos() -> Kerberos {
        let krb5_config = hmap_suite::required_env("HMAP_KRB5_CONFIG");
        assert_eq!(
            std::env::var("KRB5_CONFIG").ok().as_deref(),
            Some(krb5_config.as_str()),
            "MIT Kerberos reads KRB5_CONFIG: export KRB5_CONFIG=$HMAP_KRB5_CONFIG"
        );
        Kerberos::keytab(
            hmap_suite::required_env("HMAP_PRINCIPAL"),
            hmap_suite::required_env("HMAP_KEYTAB"),
        )
        .server_principal(hmap_suite::required_env("HMAP_SERVER_PRINCIPAL"))
        .protection(protection())
    }

    /// The connection settings: Kerberos, inside TLS when the cluster
    /// serves TLS (see [`super::tls`]).
    fn config(kerberos: Kerberos) -> NativeConfig {
        let config = NativeConfig::new([hmap_suite::required_env("HMAP_NATIVE")]).kerberos(kerberos);
        match super::tls(true) {
            Some(tls) => config.tls(tls),
            None => config,
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
    /// `SecurityError::Kerberos` of kind `failure`, saying `hint`.
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
        let security = source
            .as_deref()
            .and_then(|e| e.downcast_ref::<SecurityError>())
            .unwrap_or_else(|| panic!("no SecurityError source: {err:?}"));
        match security {
            SecurityError::Kerberos { failure: got, .. } => assert_eq!(*got, failure, "{err}"),
            other => panic!("not a Kerberos error: {other:?}"),
        }
        assert!(err.to_string().contains(hint), "no `{hint}` in: {err}");
        // A setting to change: trying again fails the same way.
        assert!(!err.is_transient(), "a refusal is not transient: {err}");
    }

    /// A file in the temporary directory, removed on drop.
    struct TempFile(std::path::PathBuf);

    impl TempFile {
        fn new(name: &str, bytes: &[u8]) -> TempFile {
            let path = std::env::temp_dir().join(format!("hmap-krb-{}-{name}", std::process::id()));
            std::fs::write(&path, bytes).expect("a temporary file");
            TempFile(path)
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    /// A keytab (MIT's format, version 2) holding `principal`
    /// (`name[/instance]@REALM`) with random keys of kvno 1 for AES-256
    /// and AES-128: keys the KDC does not hold, as a keytab exported before
    /// the principal's key changed holds.
    fn keytab_with_keys_the_kdc_does_not_hold(principal: &str) -> Vec<u8> {
        let (name, realm) = principal.rsplit_once('@').expect("a principal with a realm");
        let mut seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("time")
            .as_nanos() as u64
            | 1;
        let mut random = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        };
        let mut out = vec![0x05, 0x02];
        for (enctype, len) in [(18u16, 32usize), (17, 16)] {
            let counted = |bytes: &[u8], entry: &mut Vec<u8>| {
                entry.extend_from_slice(&(bytes.len() as u16).to_be_bytes());
                entry.extend_from_slice(bytes);
            };
            let components: Vec<&str> = name.split('/').collect();
            let mut entry = Vec::new();
            entry.extend_from_slice(&(components.len() as u16).to_be_bytes());
            counted(realm.as_bytes(), &mut entry);
            for component in components {
                counted(component.as_bytes(), &mut entry);
            }
            entry.extend_from_slice(&1u32.to_be_bytes()); // KRB5_NT_PRINCIPAL
            entry.extend_from_slice(&0u32.to_be_bytes()); // timestamp
            entry.push(1); // kvno
            entry.extend_from_slice(&enctype.to_be_bytes());
            let key: Vec<u8> = (0..len).map(|_| random()).collect();
            counted(&key, &mut entry);
            out.extend_from_slice(&(entry.len() as i32).to_be_bytes());
            out.extend_from_slice(&entry);
        }
        out
    }

    /// The realm of the client principal.
    fn realm() -> String {
        hmap_suite::required_env("HMAP_PRINCIPAL")
            .rsplit_once('@')
            .map(|(_, realm)| realm.to_string())
            .expect("HMAP_PRINCIPAL has a realm")
    }

    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn a_principal_the_keytab_does_not_hold_is_named() {
        let keytab = hmap_suite::required_env("HMAP_KEYTAB");
        let principal = format!("nobody@{}", realm());
        let wrong =
            Kerberos::keytab(&principal, &keytab).server_principal(hmap_suite::required_env("HMAP_SERVER_PRINCIPAL"));
        refused(
            config(wrong),
            KerberosFailure::PrincipalNotInKeytab,
            &format!(
                "holds no key of {principal} (it holds keys of {}",
                hmap_suite::required_env("HMAP_PRINCIPAL")
            ),
        )
        .await;
    }

    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn files_that_are_no_keytab_are_named() {
        let keytab = std::fs::read(hmap_suite::required_env("HMAP_KEYTAB")).expect("the keytab");
        for (name, bytes, says) in [
            (
                "garbage.keytab",
                &b"[libdefaults]\n  default_realm = X\n"[..],
                "does not start as a keytab",
            ),
            ("empty.keytab", &b""[..], "the file is empty"),
            ("truncated.keytab", &keytab[..keytab.len() / 2], "cut short"),
        ] {
            let file = TempFile::new(name, bytes);
            let login = Kerberos::keytab(hmap_suite::required_env("HMAP_PRINCIPAL"), &file.0)
                .server_principal(hmap_suite::required_env("HMAP_SERVER_PRINCIPAL"));
            refused(config(login), KerberosFailure::KeytabInvalid, says).await;
        }
    }

    /// A keytab whose key of the principal is not the KDC's: MIT Kerberos
    /// cannot open the KDC's reply ("Decrypt integrity check failed").
    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn a_keytab_with_a_stale_key_is_told_to_be_exported_again() {
        let principal = hmap_suite::required_env("HMAP_PRINCIPAL");
        let file = TempFile::new("stale.keytab", &keytab_with_keys_the_kdc_does_not_hold(&principal));
        let stale =
            Kerberos::keytab(&principal, &file.0).server_principal(hmap_suite::required_env("HMAP_SERVER_PRINCIPAL"));
        refused(config(stale), KerberosFailure::StaleKeytab, "export the keytab again").await;
    }

    /// A realm the krb5.conf does not name: MIT Kerberos finds no KDC for
    /// it ("Cannot find KDC for realm"); the error names KRB5_CONFIG,
    /// krb5.conf and the realm.
    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn a_realm_krb5_conf_does_not_know_names_krb5_config() {
        let principal = "app@NO-SUCH-REALM.INVALID";
        let file = TempFile::new("other-realm.keytab", &keytab_with_keys_the_kdc_does_not_hold(principal));
        let elsewhere =
            Kerberos::keytab(principal, &file.0).server_principal(hmap_suite::required_env("HMAP_SERVER_PRINCIPAL"));
        // The message: "... finds no KDC for the realm R (...) in the
        // krb5.conf it read (KRB5_CONFIG=...): set KRB5_CONFIG ...".
        refused(
            config(elsewhere),
            KerberosFailure::Krb5Config,
            "no KDC for the realm NO-SUCH-REALM.INVALID",
        )
        .await;
    }

    /// Under mutual TLS (`HMAP_NATIVE_TLS_CERT` set: `--kerberos --mtls`),
    /// a client with Kerberos but without its certificate is refused by
    /// TLS first, and told to give one; not transient either. Against a
    /// cluster that demands no certificate this test fails: skip it there.
    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn under_mutual_tls_a_client_without_its_certificate_is_refused() {
        // Only a cluster that demands certificates can refuse this client:
        // `address` prints the certificate after `--mtls`.
        hmap_suite::required_env("HMAP_NATIVE_TLS_CERT");
        let without_certificate = super::tls(false).expect("HMAP_NATIVE_TLS_CA is set with HMAP_NATIVE_TLS_CERT");
        let config = NativeConfig::new([hmap_suite::required_env("HMAP_NATIVE")])
            .kerberos(kerberos())
            .tls(without_certificate)
            .call_timeout(Duration::from_secs(10));
        let started = Instant::now();
        let err = NativeStore::connect(config).await.expect_err("refused");
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "{:?}: {err}",
            started.elapsed()
        );
        assert!(err.to_string().contains("Tls::client_auth_files"), "{err}");
        assert!(!err.is_transient(), "{err}");
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
        let missing = Kerberos::keytab(hmap_suite::required_env("HMAP_PRINCIPAL"), "/nonexistent/hmap.keytab")
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
        let others: Vec<Protection> = Protection::ALL.into_iter().filter(|p| !theirs.contains(p)).collect();
        assert!(
            !others.is_empty(),
            "HMAP_KRB_PROTECTION={theirs:?}: the cluster offers every level, so none can be refused; run this \
             test against a cluster started with fewer (--protection authentication, say)"
        );
        // The server's offer as the error lists it: strongest first.
        let offered: Vec<&str> = Protection::ALL
            .into_iter()
            .filter(|p| theirs.contains(p))
            .map(Protection::hbase_name)
            .collect();
        refused(
            config(kerberos().protection(others)),
            KerberosFailure::ProtectionRefused,
            &format!("hbase.rpc.protection is {}", offered.join(", ")),
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
        let cache = Kerberos::ticket_cache_at(&ccache)
            .server_principal(hmap_suite::required_env("HMAP_SERVER_PRINCIPAL"))
            .protection(protection());
        let store = NativeStore::connect(config(cache))
            .await
            .expect("connected with kinit's tickets");
        store.list_tables().await.expect("listed");
        let empty = Kerberos::ticket_cache_at("FILE:/nonexistent/hmap-ccache")
            .server_principal(hmap_suite::required_env("HMAP_SERVER_PRINCIPAL"));
        refused(config(empty), KerberosFailure::NoCredentials, "run kinit").await;
    }
}

/// A ZooKeeper that demands SASL of every client
/// (`zookeeper.sessionRequireClientSASLAuth`; `scripts/hbase/hbase start
/// --kerberos --zk-sasl`): a store bootstrapped through it authenticates
/// there too with `Kerberos::zookeeper_principal`, and without it is
/// refused with an error that names that setting.
mod zookeeper_sasl {
    use std::time::Duration;

    use hmap::security::Kerberos;
    use hmap::store::Store;
    use hmap::store::native::{NativeConfig, NativeStore};

    fn login() -> Kerberos {
        Kerberos::keytab(
            hmap_suite::required_env("HMAP_PRINCIPAL"),
            hmap_suite::required_env("HMAP_KEYTAB"),
        )
        .server_principal(hmap_suite::required_env("HMAP_SERVER_PRINCIPAL"))
    }

    fn config(kerberos: Kerberos) -> NativeConfig {
        let config = NativeConfig::zookeeper(&hmap_suite::required_env("HMAP_ZOOKEEPER"))
            .kerberos(kerberos)
            .call_timeout(Duration::from_secs(10));
        match super::tls(true) {
            Some(tls) => config.tls(tls),
            None => config,
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
