//! NativeStore against a real HBase that demands client certificates
//! (`hbase.server.netty.tls.client.auth.mode` NEED; `scripts/hbase/hbase
//! start --mtls`): a client with the certificate `address` prints
//! (`HMAP_NATIVE_TLS_CERT`, `HMAP_NATIVE_TLS_KEY`) reads and writes, one
//! without is refused with an error that says to give one. (The whole
//! conformance suite runs over mutual TLS too: suite-extra/tests/conformance_native_tls.rs
//! with those variables set.)
//!
//! Every test is `#[ignore]`d and lives in the module `native_mtls_cluster`,
//! so that a run against another cluster leaves them out with
//! `--skip native_mtls_cluster::`.

mod native_mtls_cluster {
    use std::time::{Duration, Instant};

    use hmap::schema::{FamilySchema, TableSchema};
    use hmap::security::Tls;
    use hmap::store::native::{NativeConfig, NativeStore};
    use hmap::store::{Get, RowMutation, Store, StoreError};

    fn ca() -> Tls {
        let ca = hmap_suite::required_env("HMAP_NATIVE_TLS_CA");
        Tls::with_ca_file(&ca).unwrap_or_else(|e| panic!("HMAP_NATIVE_TLS_CA={ca}: {e}"))
    }

    #[tokio::test]
    #[ignore = "needs a real HBase with mutual TLS: scripts/hbase/hbase start --mtls, then HMAP_NATIVE, HMAP_NATIVE_TLS_CA, HMAP_NATIVE_TLS_CERT and HMAP_NATIVE_TLS_KEY (scripts/hbase/hbase address)"]
    async fn a_client_with_its_certificate_reads_and_writes() {
        let address = hmap_suite::required_env("HMAP_NATIVE");
        let (cert, key) = (
            hmap_suite::required_env("HMAP_NATIVE_TLS_CERT"),
            hmap_suite::required_env("HMAP_NATIVE_TLS_KEY"),
        );
        let tls = ca().client_auth_files(&cert, &key).expect("the client's PEMs");
        let store = NativeStore::connect(NativeConfig::new([address]).tls(tls))
            .await
            .expect("connected over mutual TLS");
        let table = format!("{}mtls", hmap_suite::test_table_prefix("hmap_native_mtls_"));
        let _ = store.delete_table(&table).await;
        store
            .create_table(&TableSchema::new(&table).family(FamilySchema::new("f")))
            .await
            .expect("created");
        store
            .mutate(&table, &[RowMutation::new("r").put("f", "q", "over mTLS")])
            .await
            .expect("written");
        let row = store.get(&table, &Get::new("r")).await.expect("read").expect("a row");
        assert_eq!(row.cells[0].value.as_ref(), b"over mTLS");
        store.delete_table(&table).await.expect("deleted");
    }

    /// HBase 2.6 under NEED ends the handshake of a client without a
    /// certificate with a TLS alert: a typed error that says to give one,
    /// at once.
    #[tokio::test]
    #[ignore = "needs a real HBase with mutual TLS: scripts/hbase/hbase start --mtls, then HMAP_NATIVE, HMAP_NATIVE_TLS_CA, HMAP_NATIVE_TLS_CERT and HMAP_NATIVE_TLS_KEY (scripts/hbase/hbase address)"]
    async fn a_client_without_a_certificate_is_told_to_give_one() {
        let address = hmap_suite::required_env("HMAP_NATIVE");
        let started = Instant::now();
        let err = NativeStore::connect(
            NativeConfig::new([address])
                .tls(ca())
                .call_timeout(Duration::from_secs(10)),
        )
        .await
        .expect_err("refused");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}: {err}",
            started.elapsed()
        );
        assert!(matches!(err, StoreError::Connection { .. }), "{err:?}");
        let text = err.to_string();
        assert!(text.contains("Tls::client_auth_files"), "{text}");
    }
}
