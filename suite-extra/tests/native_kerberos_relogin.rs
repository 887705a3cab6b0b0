//! NativeStore past the end of its Kerberos tickets: with short tickets,
//! a store keeps calling for two and a half lifetimes, on its established connections and on new ones dialled with
//! the same `Kerberos` (whose login is re-acquired from the keytab
//! before the ticket ends): no call fails.
//!
//! Short tickets come either from a KDC that grants no longer ones
//! (`HMAP_KDC_TICKET_LIFETIME=60 scripts/hbase/hbase start --kerberos`;
//! `address` prints the lifetime as `HMAP_KRB_TICKET_LIFETIME`), or from
//! the client asking for them: a copy of the cluster's krb5.conf with
//! `ticket_lifetime = 24s` in `[libdefaults]`, named by both `KRB5_CONFIG`
//! and `HMAP_KRB5_CONFIG`, and `HMAP_KRB_TICKET_LIFETIME=24` (what `.ci/run`
//! does, on a cluster whose servers and gateways keep their day-long
//! tickets).
//!
//! Built with `--features kerberos` only; `#[ignore]`d, in the module
//! `native_kerberos_relogin_cluster`.

mod native_kerberos_relogin_cluster {
    use std::time::{Duration, Instant};

    use hmap::schema::{FamilySchema, TableSchema};
    use hmap::security::{Kerberos, Tls};
    use hmap::store::native::{NativeConfig, NativeStore};
    use hmap::store::{Get, RowMutation, Store};

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
    }

    fn config(kerberos: Kerberos) -> NativeConfig {
        let config = NativeConfig::new([hmap_suite::required_env("HMAP_NATIVE")]).kerberos(kerberos);
        let Ok(ca) = std::env::var("HMAP_NATIVE_TLS_CA") else {
            return config;
        };
        let tls = Tls::with_ca_file(&ca).unwrap_or_else(|e| panic!("HMAP_NATIVE_TLS_CA={ca}: {e}"));
        // Under mutual TLS (`--mtls`), the client certificate `address` prints.
        match (
            std::env::var("HMAP_NATIVE_TLS_CERT"),
            std::env::var("HMAP_NATIVE_TLS_KEY"),
        ) {
            (Ok(cert), Ok(key)) => config.tls(
                tls.client_auth_files(&cert, &key)
                    .unwrap_or_else(|e| panic!("HMAP_NATIVE_TLS_CERT={cert}, HMAP_NATIVE_TLS_KEY={key}: {e}")),
            ),
            _ => config.tls(tls),
        }
    }

    #[tokio::test]
    #[ignore = "needs a real Kerberos HBase and short tickets: HMAP_KDC_TICKET_LIFETIME=60 scripts/hbase/hbase start --kerberos, then the variables of scripts/hbase/hbase address, and KRB5_CONFIG=$HMAP_KRB5_CONFIG (or a krb5.conf asking for short tickets: see the module's docs)"]
    async fn calls_go_on_past_the_ticket_lifetime() {
        let lifetime: u64 = hmap_suite::required_env("HMAP_KRB_TICKET_LIFETIME")
            .parse()
            .expect("HMAP_KRB_TICKET_LIFETIME is seconds");
        assert!(
            lifetime <= 300,
            "tickets of {lifetime} s: start HBase with HMAP_KDC_TICKET_LIFETIME=60, or ask for short tickets in krb5.conf (see the module's docs)"
        );
        let kerberos = kerberos();
        let store = NativeStore::connect(config(kerberos.clone())).await.expect("connected");
        let table = format!("{}relogin", hmap_suite::test_table_prefix("hmap_native_krb_"));
        let _ = store.delete_table(&table).await;
        store
            .create_table(&TableSchema::new(&table).family(FamilySchema::new("f")))
            .await
            .expect("created");
        let first_end = kerberos
            .ticket_ends()
            .expect("the login's ticket end, known after a handshake");
        let started = Instant::now();
        let end = started + Duration::from_secs(lifetime * 5 / 2);
        let (mut calls, mut dials) = (0, 0);
        while Instant::now() < end {
            let row = format!("r{calls}");
            let at = started.elapsed();
            store
                .mutate(&table, &[RowMutation::new(row.clone()).put("f", "q", "v")])
                .await
                .unwrap_or_else(|e| panic!("a write on the first store after {at:?}: {e}"));
            // A new store: new connections, each a new handshake with the
            // shared login.
            let other = NativeStore::connect(config(kerberos.clone()))
                .await
                .unwrap_or_else(|e| panic!("a new store after {at:?}: {e}"));
            assert!(
                other
                    .get(&table, &Get::new(row.clone()))
                    .await
                    .unwrap_or_else(|e| panic!("a read on a new store after {at:?}: {e}"))
                    .is_some(),
                "{row} read back"
            );
            calls += 2;
            dials += 1;
            tokio::time::sleep(Duration::from_secs(3)).await;
        }
        store.delete_table(&table).await.expect("deleted");
        // hmap logged in again (not only MIT's own refresh): the login's
        // ticket now ends well after the first one did.
        let last_end = kerberos.ticket_ends().expect("a ticket end");
        assert!(
            last_end > first_end + Duration::from_secs(lifetime),
            "no relogin: the first ticket ended {:?} after the start, the last {:?}",
            first_end.saturating_duration_since(started),
            last_end.saturating_duration_since(started)
        );
        assert!(
            dials as u64 >= lifetime * 5 / 2 / 6,
            "{dials} new stores in {:?}",
            started.elapsed()
        );
        eprintln!(
            "{calls} calls and {dials} new stores over {:?} with tickets of {lifetime} s",
            started.elapsed()
        );
    }
}
