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

use hmap::store::native::{KerberosFailure, NativeError, NativeKerberos, Protection};
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

mod thrift2_kerberos {
    use super::*;

    async fn target() -> ThriftTarget {
        krb5_config_is_set();
        ThriftTarget::from_env("HMAP_THRIFT", "hmap_thrift_krb_conformance_", |config| {
            assert!(
                config.kerberos.is_some(),
                "HMAP_PRINCIPAL and HMAP_KEYTAB are set: {NEEDS}"
            );
        })
        .await
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
        ThriftTarget::from_env("HMAP_THRIFT_COMPACT", "hmap_compact_krb_conformance_", |config| {
            assert!(
                config.kerberos.is_some(),
                "HMAP_PRINCIPAL and HMAP_KEYTAB are set: {NEEDS}"
            );
        })
        .await
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
        Thrift1Target::from_env("HMAP_THRIFT1", "t1_krb_conformance_", |config| {
            assert!(
                config.kerberos.is_some(),
                "HMAP_PRINCIPAL and HMAP_KEYTAB are set: {NEEDS}"
            );
        })
        .await
    }

    hmap_suite::for_each_case!(
        hmap_suite::thrift1_cases,
        target,
        "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"
    );
}

mod thrift_kerberos_refusals {
    use super::*;

    /// The client's Kerberos settings from the environment, accepting only
    /// the gateway's level.
    fn kerberos() -> NativeKerberos {
        krb5_config_is_set();
        let protection = match hmap_suite::required_env("HMAP_KRB_PROTECTION").as_str() {
            "authentication" => Protection::Authentication,
            "integrity" => Protection::Integrity,
            "privacy" => Protection::Privacy,
            other => panic!("HMAP_KRB_PROTECTION={other}: expected authentication, integrity or privacy"),
        };
        NativeKerberos::keytab(
            hmap_suite::required_env("HMAP_PRINCIPAL"),
            hmap_suite::required_env("HMAP_KEYTAB"),
        )
        .server_principal(hmap_suite::required_env("HMAP_SERVER_PRINCIPAL"))
        .protection([protection])
    }

    /// The Thrift2 gateway's settings, with `kerberos` and a 10 s deadline.
    fn config(kerberos: Option<NativeKerberos>) -> ThriftConfig {
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

    /// [`refused`], with a `NativeError::Kerberos` of kind `failure` as
    /// the source.
    async fn refused_by_kerberos(config: ThriftConfig, failure: KerberosFailure, hint: &str) {
        let err = refused(config, hint).await;
        let StoreError::Connection { source, .. } = &err else {
            unreachable!()
        };
        match source.as_deref().and_then(|e| e.downcast_ref::<NativeError>()) {
            Some(NativeError::Kerberos { failure: got, .. }) => assert_eq!(*got, failure, "{err}"),
            other => panic!("not a Kerberos error: {other:?} in {err:?}"),
        }
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
        // (seen with HBase 2.6.1's): the ping ends at its deadline (3 s
        // here, within `refused`'s 8 s) and says what to set.
        let mut plain = config(None);
        plain.call_timeout = Duration::from_secs(3);
        refused(plain, "set `ThriftConfig::kerberos`").await;
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
            config(Some(wrong)),
            KerberosFailure::ServerPrincipalUnknown,
            &format!("hbase/127.0.0.1@{realm}"),
        )
        .await;
    }

    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase: scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG"]
    async fn kerberos_on_a_framed_or_http_wire_is_refused_before_sending() {
        let mut framed = config(Some(kerberos()));
        framed.framed = true;
        refused(framed, "unframed sockets only").await;
        let mut http = config(Some(kerberos()));
        http.http = Some(hmap::store::ThriftHttp::plain());
        refused(http, "unframed sockets only").await;
    }
}
