//! What Kerberos' protection levels and TLS cost NativeStore, side by side
//! on one secured HBase in one run: the same four groups as
//! `native_vs_thrift` (a load of 100,000 rows, a full scan, 10,000 point
//! gets one at a time and 64 in flight) through four stores, each
//! authenticated by Kerberos (HBase accepts no other client once it demands
//! it): `authentication` (after the handshake every message travels as it
//! is: a plain connection), `integrity` (every message signed), `privacy`
//! (signed and encrypted), and `authentication` inside TLS.
//!
//! Needs a cluster that offers every level and serves TLS beside
//! plaintext on one port:
//!
//! ```sh
//! HMAP_TLS_PLAINTEXT=1 HMAP_HBASE_GATEWAYS=0 scripts/hbase/hbase start --kerberos \
//!   --protection privacy,integrity,authentication --tls
//! export $(scripts/hbase/hbase address); export KRB5_CONFIG=$HMAP_KRB5_CONFIG
//! cargo bench -p hmap-bench --features secured --bench secured
//! ```
//!
//! Without `HMAP_NATIVE`, `HMAP_PRINCIPAL`, `HMAP_KEYTAB`,
//! `HMAP_SERVER_PRINCIPAL` and `HMAP_NATIVE_TLS_CA` it says so and
//! measures nothing.

mod side_by_side;

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use hmap::security::{Kerberos, Protection, Tls};
use hmap::store::Store;
use hmap::store::native::{NativeConfig, NativeStore};
use side_by_side::Stores;

const VARIABLES: [&str; 5] = [
    "HMAP_NATIVE",
    "HMAP_PRINCIPAL",
    "HMAP_KEYTAB",
    "HMAP_SERVER_PRINCIPAL",
    "HMAP_NATIVE_TLS_CA",
];

fn setup() -> Option<Stores> {
    let [Some(native), Some(principal), Some(keytab), Some(server), Some(ca)] =
        VARIABLES.map(|variable| std::env::var(variable).ok())
    else {
        eprintln!(
            "secured: {} must be set (see benches/benches/secured.rs)",
            VARIABLES.join(", ")
        );
        return None;
    };
    let prefix = side_by_side::table_prefix("secured");
    let runtime = side_by_side::runtime();
    let login = Kerberos::keytab(principal, keytab).server_principal(server);
    let tls = Tls::with_ca_file(&ca).expect("HMAP_NATIVE_TLS_CA holds the CA");
    let mut stores = Vec::new();
    for (name, protection, tls) in [
        ("authentication", Protection::Authentication, None),
        ("integrity", Protection::Integrity, None),
        ("privacy", Protection::Privacy, None),
        ("authentication_in_tls", Protection::Authentication, Some(tls)),
    ] {
        let mut config = NativeConfig::new([native.clone()])
            .table_prefix(format!("{prefix}{name}_"))
            .kerberos(login.clone().protection([protection]));
        if let Some(tls) = tls {
            config = config.tls(tls);
        }
        let store = runtime
            .block_on(NativeStore::connect(config))
            .unwrap_or_else(|e| panic!("{name}: NativeStore connects: {e}"));
        stores.push((name, Arc::new(store) as Arc<dyn Store>));
    }
    Some(Stores::loaded(runtime, stores))
}

fn secured(c: &mut Criterion) {
    let Some(stores) = setup() else {
        return;
    };
    side_by_side::groups(c, &stores);
    stores.drop_tables();
}

criterion_group!(benches, secured);
criterion_main!(benches);
