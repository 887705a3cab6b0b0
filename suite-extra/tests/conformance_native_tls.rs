//! The store conformance suite against a real HBase serving its RPC over
//! TLS only (`hbase.server.netty.tls.enabled`, `supportplaintext` false),
//! through `NativeStore` with `NativeConfig::tls`: every connection to the
//! master and the region servers a TLS connection, the servers'
//! certificate checked against the CA that `scripts/hbase/hbase start
//! --tls` makes. Against a cluster started with `--mtls` (client
//! certificates demanded), the same suite runs with the client certificate
//! that `address` prints (`HMAP_NATIVE_TLS_CERT`, `HMAP_NATIVE_TLS_KEY`).
//!
//! Every test is `#[ignore]`d and lives in the module `native_tls_cluster`,
//! so that a run against a plain cluster (`cargo test -- --include-ignored`
//! in `.ci/run`) leaves them out with `--skip native_tls_cluster::`.

mod native_tls_cluster {
    use std::time::{Duration, Instant};

    use hmap::security::Tls;
    use hmap::store::native::{NativeConfig, NativeStore};
    use hmap::store::{Store, StoreError};

    use hmap_suite::conformance::NativeTarget as Native;

    /// The TLS settings the environment names: the CA, and a client
    /// certificate when the cluster demands one.
    pub(crate) fn tls() -> Tls {
        let ca = hmap_suite::required_env("HMAP_NATIVE_TLS_CA");
        let tls = Tls::with_ca_file(&ca).unwrap_or_else(|e| panic!("HMAP_NATIVE_TLS_CA={ca}: {e}"));
        match (
            std::env::var("HMAP_NATIVE_TLS_CERT"),
            std::env::var("HMAP_NATIVE_TLS_KEY"),
        ) {
            (Ok(cert), Ok(key)) => tls
                .client_auth_files(&cert, &key)
                .unwrap_or_else(|e| panic!("HMAP_NATIVE_TLS_CERT={cert}, HMAP_NATIVE_TLS_KEY={key}: {e}")),
            _ => tls,
        }
    }

    /// The cluster under test; panics without one.
    async fn target() -> Native {
        let address = hmap_suite::required_env("HMAP_NATIVE");
        let tls = tls();
        let connect = || async {
            NativeStore::connect(NativeConfig::new([address.clone()]).tls(tls.clone()))
                .await
                .unwrap_or_else(|e| panic!("HMAP_NATIVE={address} is set but HBase does not answer over TLS: {e}"))
        };
        let store = connect().await;
        Native {
            store,
            prefix: hmap_suite::test_table_prefix("hmap_native_tls_conformance_"),
            other: connect().await,
        }
    }

    hmap_suite::for_each_case!(
        hmap_suite::hbase_cases,
        target,
        "needs a real HBase with TLS: scripts/hbase/hbase start --tls, then HMAP_NATIVE and HMAP_NATIVE_TLS_CA (scripts/hbase/hbase address)"
    );

    /// `NativeStore::connect` with `config` fails fast (well within its
    /// 10 s deadline) with a `StoreError::Connection` that says `hint`.
    async fn refused(config: NativeConfig, hint: &str) {
        let started = Instant::now();
        let err = NativeStore::connect(config.call_timeout(Duration::from_secs(10)))
            .await
            .expect_err("refused");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}: {err}",
            started.elapsed()
        );
        assert!(matches!(err, StoreError::Connection { .. }), "{err:?}");
        assert!(err.to_string().contains(hint), "no `{hint}` in: {err}");
    }

    /// A plaintext client is closed on without a byte; the error says to
    /// connect with TLS, at once.
    #[tokio::test]
    #[ignore = "needs a real HBase with TLS: scripts/hbase/hbase start --tls, then HMAP_NATIVE and HMAP_NATIVE_TLS_CA (scripts/hbase/hbase address)"]
    async fn a_plain_client_is_told_to_use_tls() {
        let address = hmap_suite::required_env("HMAP_NATIVE");
        refused(NativeConfig::new([address]), "NativeConfig::tls").await;
    }

    /// The same mistake through ZooKeeper: the registry answers in
    /// plaintext and names the servers; the first call to a region server
    /// (which serves TLS only) fails at once, saying to connect with TLS,
    /// where it waited out its deadline as for a server that is stopping.
    #[tokio::test]
    #[ignore = "needs a real HBase with TLS: scripts/hbase/hbase start --tls, then HMAP_ZOOKEEPER and HMAP_NATIVE_TLS_CA (scripts/hbase/hbase address)"]
    async fn a_plain_client_bootstrapped_through_zookeeper_is_told_to_use_tls() {
        let quorum = hmap_suite::required_env("HMAP_ZOOKEEPER");
        let started = Instant::now();
        let result = async {
            let store =
                NativeStore::connect(NativeConfig::zookeeper(&quorum).call_timeout(Duration::from_secs(20))).await?;
            store.table_exists("hmap_tls_probe").await
        }
        .await;
        let err = result.expect_err("a plaintext client on a TLS-only cluster");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}: {err}",
            started.elapsed()
        );
        assert!(matches!(err, StoreError::Connection { .. }), "{err:?}");
        let message = err.to_string();
        assert!(
            message.contains("serves TLS only") && message.contains("NativeConfig::tls"),
            "{message}"
        );
    }

    /// The servers' certificate is checked: against the CA, and for the
    /// name the client expects.
    #[tokio::test]
    #[ignore = "needs a real HBase with TLS: scripts/hbase/hbase start --tls, then HMAP_NATIVE and HMAP_NATIVE_TLS_CA (scripts/hbase/hbase address)"]
    async fn the_servers_certificate_is_checked() {
        let address = hmap_suite::required_env("HMAP_NATIVE");
        let other = Tls::with_ca_pem(OTHER_CA).expect("other-ca.pem");
        refused(NativeConfig::new([address.clone()]).tls(other), "Tls::with_ca_file").await;
        let wrong_name = tls().server_name("hbase.example.com");
        refused(NativeConfig::new([address]).tls(wrong_name), "Tls::server_name").await;
    }

    /// A CA that signed nothing the cluster has.
    const OTHER_CA: &[u8] = include_bytes!("../../hmap/src/store/native/testdata/tls/other-ca.pem");
}
