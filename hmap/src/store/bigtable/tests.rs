//! BigtableStore against the emulator, where the conformance suite cannot
//! look: the bytes on the wire (timestamps × 1000, GC rules), lazy GC, and
//! errors; and against servers that are not Bigtable.
//!
//! The emulator tests are `#[ignore]`d: `export $(scripts/bigtable/emulator
//! start)`, then `cargo test -p hmap-hbase --features bigtable --lib
//! bigtable -- --include-ignored`.

use std::time::{Duration, Instant};

use bytes::Bytes;
use googleapis_tonic_google_bigtable_admin_v2::google::bigtable::admin::v2 as admin;
use googleapis_tonic_google_bigtable_v2::google::bigtable::v2;

use super::{BigtableConfig, BigtableStore};
use crate::schema::{FamilySchema, TableSchema};
use crate::store::{FamilyChange, Get, Increment, RowMutation, Store, StoreError};

const NEEDS: &str = "needs a real Bigtable emulator: scripts/bigtable/emulator start, then HMAP_BIGTABLE";

async fn emulator() -> BigtableStore {
    let address = std::env::var("HMAP_BIGTABLE")
        .ok()
        .filter(|a| !a.trim().is_empty())
        .unwrap_or_else(|| panic!("HMAP_BIGTABLE is not set: {NEEDS}"));
    BigtableStore::connect(BigtableConfig::emulator(address.trim()).table_prefix("hmap_bt_unit_"))
        .await
        .unwrap_or_else(|e| panic!("HMAP_BIGTABLE={address}: {e}"))
}

/// A fresh table of `families`.
async fn fresh(store: &BigtableStore, name: &str, families: Vec<FamilySchema>) {
    if store.table_exists(name).await.unwrap() {
        store.delete_table(name).await.unwrap();
    }
    let mut schema = TableSchema::new(name);
    schema.families = families;
    store.create_table(&schema).await.unwrap();
}

/// Every cell of a row as stored, no filter: (family, qualifier, micros, value).
async fn raw_cells(store: &BigtableStore, table: &str, row: &str) -> Vec<(String, Bytes, i64, Bytes)> {
    let mut client = v2::bigtable_client::BigtableClient::new(store.data_channel());
    let request = v2::ReadRowsRequest {
        table_name: store.table_name(table),
        rows: Some(v2::RowSet {
            row_keys: vec![Bytes::copy_from_slice(row.as_bytes())],
            row_ranges: Vec::new(),
        }),
        ..Default::default()
    };
    let mut stream = client.read_rows(request).await.unwrap().into_inner();
    let mut cells = Vec::new();
    let (mut family, mut qualifier) = (String::new(), Bytes::new());
    while let Some(response) = stream.message().await.unwrap() {
        for chunk in response.chunks {
            if let Some(f) = chunk.family_name {
                family = f;
            }
            if let Some(q) = chunk.qualifier {
                qualifier = Bytes::from(q);
            }
            cells.push((family.clone(), qualifier.clone(), chunk.timestamp_micros, chunk.value));
        }
    }
    cells
}

#[tokio::test]
#[ignore = "needs a real Bigtable emulator: scripts/bigtable/emulator start, then HMAP_BIGTABLE"]
async fn timestamps_are_written_as_the_java_adapter_writes_them() {
    let store = emulator().await;
    fresh(&store, "wire_ts", vec![FamilySchema::new("f").versions(5)]).await;
    let before = super::data::now_ms_for_tests();
    store
        .mutate(
            "wire_ts",
            &[RowMutation::new("r").put_at("f", "at", 1_234, "x").put("f", "now", "y")],
        )
        .await
        .unwrap();
    let cells = raw_cells(&store, "wire_ts", "r").await;
    let micros = |q: &str| cells.iter().find(|c| c.1 == q.as_bytes()).map(|c| c.2).unwrap();
    assert_eq!(micros("at"), 1_234_000);
    let now = micros("now");
    assert_eq!(now % 1000, 0);
    assert!(
        now / 1000 >= before && now / 1000 <= super::data::now_ms_for_tests(),
        "{now}"
    );
    // Read back in milliseconds.
    let row = store.get("wire_ts", &Get::new("r")).await.unwrap().unwrap();
    assert_eq!(row.latest("f", "at").unwrap().timestamp, 1_234);
    assert_eq!(row.latest("f", "now").unwrap().timestamp, now / 1000);
}

#[tokio::test]
#[ignore = "needs a real Bigtable emulator: scripts/bigtable/emulator start, then HMAP_BIGTABLE"]
async fn versions_and_ttl_are_gc_rules_on_the_server() {
    let store = emulator().await;
    fresh(
        &store,
        "wire_gc",
        vec![
            FamilySchema::new("b").versions(2).ttl_secs(3600),
            FamilySchema::new("a"),
        ],
    )
    .await;
    let mut client =
        admin::bigtable_table_admin_client::BigtableTableAdminClient::new(store.inner.channels.admin.clone());
    let table = client
        .get_table(admin::GetTableRequest {
            name: store.table_name("wire_gc"),
            view: admin::table::View::SchemaView as i32,
        })
        .await
        .unwrap()
        .into_inner();
    use admin::gc_rule::Rule;
    let rule = |f: &str| table.column_families[f].gc_rule.clone().and_then(|r| r.rule);
    assert_eq!(rule("a"), Some(Rule::MaxNumVersions(1)));
    let Some(Rule::Union(union)) = rule("b") else {
        panic!("{:?}", rule("b"))
    };
    let rules: Vec<_> = union.rules.into_iter().filter_map(|r| r.rule).collect();
    assert_eq!(
        rules,
        [
            Rule::MaxNumVersions(2),
            Rule::MaxAge(prost_types::Duration {
                seconds: 3600,
                nanos: 0
            })
        ]
    );
    // And back, families sorted.
    let schema = store.describe_table("wire_gc").await.unwrap();
    assert_eq!(
        schema.families,
        [
            FamilySchema::new("a"),
            FamilySchema::new("b").versions(2).ttl_secs(3600)
        ]
    );
}

#[tokio::test]
#[ignore = "needs a real Bigtable emulator: scripts/bigtable/emulator start, then HMAP_BIGTABLE"]
async fn reads_cut_versions_that_lazy_gc_still_keeps() {
    let store = emulator().await;
    fresh(&store, "lazy_gc", vec![FamilySchema::new("f")]).await;
    let row = (1..=5).fold(RowMutation::new("r"), |r, t| r.put_at("f", "q", t, format!("v{t}")));
    store.mutate("lazy_gc", &[row]).await.unwrap();
    let stored = raw_cells(&store, "lazy_gc", "r").await.len();
    let read = store
        .get("lazy_gc", &Get::new("r").max_versions(10))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read.cells.len(), 1, "{read:?}");
    assert_eq!(&read.cells[0].value[..], b"v5");
    println!("stored right after the write: {stored} versions; read: 1");
}

#[tokio::test]
#[ignore = "needs a real Bigtable emulator: scripts/bigtable/emulator start, then HMAP_BIGTABLE"]
async fn an_increment_of_a_non_counter_is_not_a_counter() {
    let store = emulator().await;
    fresh(&store, "not_counter", vec![FamilySchema::new("f")]).await;
    store
        .mutate("not_counter", &[RowMutation::new("r").put("f", "c", "abc")])
        .await
        .unwrap();
    match store
        .increment("not_counter", &Increment::new("r").add("f", "c", 1))
        .await
    {
        Err(StoreError::NotACounter {
            table,
            row,
            column,
            len,
        }) => {
            assert_eq!(
                (table.as_str(), row.as_str(), column.as_str(), len),
                ("not_counter", "r", "f:c", 3)
            );
        }
        other => panic!("{other:?}"),
    }
    let values = store
        .increment("not_counter", &Increment::new("r").add("f", "n", 5).add("f", "m", -2))
        .await
        .unwrap();
    assert_eq!(values, [5, -2]);
}

/// A family dropped behind the store's back: the write that the cached
/// schema let through comes back from the server as NoSuchFamily, from
/// `MutateRow` and from an entry of `MutateRows`, and nothing of the
/// refused row is written.
#[tokio::test]
#[ignore = "needs a real Bigtable emulator: scripts/bigtable/emulator start, then HMAP_BIGTABLE"]
async fn a_family_dropped_behind_the_store_is_no_such_family() {
    let store = emulator().await;
    let other = emulator().await;
    fresh(&store, "dropped", vec![FamilySchema::new("a"), FamilySchema::new("b")]).await;
    store
        .mutate("dropped", &[RowMutation::new("r0").put("b", "q", "v")])
        .await
        .unwrap();
    other
        .alter_table("dropped", &FamilyChange::Delete("b".into()))
        .await
        .unwrap();
    let err = store
        .mutate("dropped", &[RowMutation::new("r1").put("b", "q", "v")])
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::NoSuchFamily { family, .. } if family == "b"),
        "{err:?}"
    );
    // The store forgot its copy: the next write is refused before sending.
    let err = store
        .mutate(
            "dropped",
            &[
                RowMutation::new("r2").put("a", "q", "v"),
                RowMutation::new("r3").put("b", "q", "v"),
            ],
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::NoSuchFamily { family, .. } if family == "b"),
        "{err:?}"
    );
    assert!(store.get("dropped", &Get::new("r2")).await.unwrap().is_none());
}

/// A server that accepts and never answers: connecting fails within its
/// deadline, with a typed error.
#[tokio::test]
async fn a_silent_server_fails_within_the_deadline() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let held = tokio::spawn(async move {
        let mut sockets = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            sockets.push(socket);
        }
    });
    let started = Instant::now();
    let config = BigtableConfig::emulator(address)
        .connect_timeout(Duration::from_millis(500))
        .call_timeout(Duration::from_millis(500))
        .admin_timeout(Duration::from_millis(500));
    let outcome = match BigtableStore::connect(config).await {
        Err(e) => Err(e),
        Ok(store) => store.list_tables().await.map(drop),
    };
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}: {outcome:?}",
        started.elapsed()
    );
    assert!(
        matches!(outcome, Err(StoreError::Connection { .. } | StoreError::Timeout { .. })),
        "{outcome:?}"
    );
    held.abort();
}

/// A call's options replace the store's timeouts: against an HTTP/2
/// server that never answers a request, a read given 300 ms on a store
/// whose calls (and admin calls: the read looks up the table's schema
/// first) get 30 s fails well before, with the store's timeout error.
#[tokio::test]
async fn a_call_timeout_replaces_the_stores() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let held = tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                // HTTP/2's handshake: the server's (empty) SETTINGS and the
                // acknowledgement of the client's; then it reads every
                // request and answers none.
                let settings = [0, 0, 0, 4, 0, 0, 0, 0, 0];
                let ack = [0, 0, 0, 4, 1, 0, 0, 0, 0];
                if socket.write_all(&[settings, ack].concat()).await.is_err() {
                    return;
                }
                let mut buf = [0u8; 4096];
                while matches!(socket.read(&mut buf).await, Ok(n) if n > 0) {}
            });
        }
    });
    let store = async |timeout: Duration| {
        let config = BigtableConfig::emulator(address.clone())
            .connect_timeout(Duration::from_secs(5))
            .call_timeout(timeout)
            .admin_timeout(timeout);
        BigtableStore::connect(config).await.expect("the server accepts")
    };
    // The store's own timeout error, for a store whose calls get 300 ms
    // (tonic's deadline or the store's timer, whichever fires first).
    let expected = store(Duration::from_millis(300))
        .await
        .get("t", &Get::new("r"))
        .await
        .expect_err("300 ms");
    assert!(
        matches!(
            &expected,
            StoreError::Timeout {
                operation: "GetTable",
                ..
            }
        ),
        "{expected:?}"
    );
    let store = store(Duration::from_secs(30)).await;
    let started = Instant::now();
    let err = crate::store::CallOptions::new()
        .timeout(Duration::from_millis(300))
        .scope(store.get("t", &Get::new("r")))
        .await
        .expect_err("the call's 300 ms");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert!(
        matches!(
            &err,
            StoreError::Timeout {
                operation: "GetTable",
                ..
            }
        ),
        "{err:?}"
    );
    held.abort();
}

/// A server that answers with bytes that are not HTTP/2: a typed error, at
/// once.
#[tokio::test]
async fn a_server_of_another_protocol_is_a_typed_error() {
    use tokio::io::AsyncWriteExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let server = tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let _ = socket
                .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                .await;
            let _ = socket.shutdown().await;
        }
    });
    let started = Instant::now();
    let config = BigtableConfig::emulator(address)
        .connect_timeout(Duration::from_secs(2))
        .call_timeout(Duration::from_secs(2))
        .admin_timeout(Duration::from_secs(2));
    let outcome = match BigtableStore::connect(config).await {
        Err(e) => Err(e),
        Ok(store) => store.list_tables().await.map(drop),
    };
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert!(
        matches!(
            outcome,
            Err(StoreError::Connection { .. } | StoreError::Timeout { .. } | StoreError::Server { .. })
        ),
        "{outcome:?}"
    );
    server.abort();
}

/// A batch over Bigtable's 100,000 mutations per request is sent in
/// several requests, a row named twice in a later one, and all of it lands.
#[tokio::test]
#[ignore = "needs a real Bigtable emulator: scripts/bigtable/emulator start, then HMAP_BIGTABLE"]
async fn a_batch_over_the_request_limit_is_written_whole() {
    use futures_util::TryStreamExt;
    let store = emulator().await;
    fresh(&store, "big_batch", vec![FamilySchema::new("f")]).await;
    let mut rows: Vec<RowMutation> = (0..2_000)
        .map(|i| {
            (0..60).fold(RowMutation::new(format!("r{i:05}")), |r, q| {
                r.put_at("f", format!("q{q}"), 1, "v")
            })
        })
        .collect();
    rows.push(RowMutation::new("r00000").put_at("f", "q0", 1, "again"));
    store.mutate("big_batch", &rows).await.unwrap();
    let read: Vec<_> = store
        .scan("big_batch", &crate::store::Scan::all())
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(read.len(), 2_000);
    assert!(read.iter().all(|r| r.cells.len() == 60));
    assert_eq!(read[0].value("f", "q0").as_deref(), Some(&b"again"[..]));
}

/// A delete of a row's or a family's cells up to `T` (how the typed API
/// deletes) is sent as column deletes of what the row holds at `T` or
/// before, and of what puts before it in the same call write: newer cells
/// survive, as on HBase.
#[tokio::test]
#[ignore = "needs a real Bigtable emulator: scripts/bigtable/emulator start, then HMAP_BIGTABLE"]
async fn deletes_up_to_a_timestamp_are_column_deletes() {
    use crate::store::Mutation;
    let store = emulator().await;
    fresh(
        &store,
        "up_to",
        vec![FamilySchema::new("f").versions(5), FamilySchema::new("g").versions(5)],
    )
    .await;
    store
        .mutate(
            "up_to",
            &[RowMutation::new("r")
                .put_at("f", "old", 5, "x")
                .put_at("f", "both", 5, "x")
                .put_at("f", "both", 20, "y")
                .put_at("g", "q", 5, "z")],
        )
        .await
        .unwrap();
    store
        .mutate(
            "up_to",
            &[RowMutation::new("r")
                .put_at("f", "fresh", 7, "w")
                .delete_family_up_to("f", 10)],
        )
        .await
        .unwrap();
    let cells = |row: crate::store::RowResult| -> Vec<(String, i64)> {
        row.cells
            .iter()
            .map(|c| {
                (
                    format!(
                        "{}:{}",
                        crate::key::Printable(&c.family),
                        crate::key::Printable(&c.qualifier)
                    ),
                    c.timestamp,
                )
            })
            .collect()
    };
    let row = store
        .get("up_to", &Get::new("r").max_versions(5))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(cells(row), [("f:both".to_string(), 20), ("g:q".to_string(), 5)]);
    store
        .mutate(
            "up_to",
            &[RowMutation::new("r").push(Mutation::DeleteRow { up_to: Some(10) })],
        )
        .await
        .unwrap();
    let row = store
        .get("up_to", &Get::new("r").max_versions(5))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(cells(row), [("f:both".to_string(), 20)]);
}

/// A check-and-mutate compares the newest cell the family's TTL has not
/// expired, as HBase sees it, though Bigtable's lazy GC still keeps the
/// expired one.
#[tokio::test]
#[ignore = "needs a real Bigtable emulator: scripts/bigtable/emulator start, then HMAP_BIGTABLE"]
async fn check_and_mutate_does_not_see_expired_cells() {
    use crate::store::CheckAndMutate;
    let store = emulator().await;
    fresh(&store, "check_ttl", vec![FamilySchema::new("f").ttl_secs(60)]).await;
    let old = super::data::now_ms_for_tests() - 3_600_000;
    store
        .mutate("check_ttl", &[RowMutation::new("r").put_at("f", "q", old, "stale")])
        .await
        .unwrap();
    assert!(store.get("check_ttl", &Get::new("r")).await.unwrap().is_none());
    let put = || RowMutation::new("r").put("f", "w", "x");
    let expect =
        |v: Option<&'static str>| CheckAndMutate::new(put(), "f", "q", v.map(|v| Bytes::from_static(v.as_bytes())));
    assert!(
        !store
            .check_and_mutate("check_ttl", &expect(Some("stale")))
            .await
            .unwrap()
    );
    assert!(store.check_and_mutate("check_ttl", &expect(None)).await.unwrap());
    assert_eq!(
        store
            .get("check_ttl", &Get::new("r"))
            .await
            .unwrap()
            .and_then(|r| r.value("f", "w")),
        Some(Bytes::from_static(b"x"))
    );
}

/// A proxy to `target`: forwards each connection, but closes at once the
/// next `reject` ones it accepts; a send on `cut` closes the live ones.
async fn flaky_proxy(
    target: String,
) -> (
    String,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
    tokio::sync::watch::Sender<u64>,
) {
    use std::sync::atomic::Ordering::SeqCst;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let reject = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (cut, cuts) = tokio::sync::watch::channel(0u64);
    let rejecting = std::sync::Arc::clone(&reject);
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            if rejecting.fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1)).is_ok() {
                drop(inbound);
                continue;
            }
            let target = target.clone();
            let mut cuts = cuts.clone();
            // Only a cut after this connection began closes it.
            cuts.borrow_and_update();
            tokio::spawn(async move {
                let Ok(mut outbound) = tokio::net::TcpStream::connect(&target).await else {
                    return;
                };
                tokio::select! {
                    _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                    _ = cuts.changed() => {}
                }
            });
        }
    });
    (address, reject, cut)
}

/// Idempotent calls are retried, with backoff within their deadline, while
/// the server cannot be reached: a read and a write whose connection was cut
/// and whose first reconnections are refused still succeed.
#[tokio::test]
#[ignore = "needs a real Bigtable emulator: scripts/bigtable/emulator start, then HMAP_BIGTABLE"]
async fn idempotent_calls_are_retried_while_the_server_is_unreachable() {
    use std::sync::atomic::Ordering::SeqCst;
    let target = std::env::var("HMAP_BIGTABLE").unwrap_or_else(|_| panic!("HMAP_BIGTABLE is not set: {NEEDS}"));
    let (address, reject, cut) = flaky_proxy(target.trim().to_string()).await;
    let config = BigtableConfig::emulator(address)
        .table_prefix("hmap_bt_unit_")
        .call_timeout(Duration::from_secs(10))
        .admin_timeout(Duration::from_secs(10));
    let store = BigtableStore::connect(config).await.unwrap();
    fresh(&store, "flaky", vec![FamilySchema::new("f")]).await;
    store
        .mutate("flaky", &[RowMutation::new("r").put("f", "q", "v")])
        .await
        .unwrap();
    for attempt in 0..2 {
        reject.store(2, SeqCst);
        cut.send_modify(|n| *n += 1);
        tokio::time::sleep(Duration::from_millis(100)).await;
        let outcome = if attempt == 0 {
            store.get("flaky", &Get::new("r")).await.map(|r| r.is_some())
        } else {
            store
                .mutate("flaky", &[RowMutation::new("s").put("f", "q", "v")])
                .await
                .map(|()| true)
        };
        assert!(matches!(outcome, Ok(true)), "attempt {attempt}: {outcome:?}");
        assert_eq!(reject.load(SeqCst), 0, "the refused connections were tried");
    }
    assert!(store.get("flaky", &Get::new("s")).await.unwrap().is_some());
}

/// With `ignore_storage_options`, a table created with a compression and a
/// bloom filter (dropped: Bigtable has no such settings) checks as
/// declared, and its migration has nothing to do; its versions are still
/// compared.
#[tokio::test]
#[ignore = "needs a real Bigtable emulator: scripts/bigtable/emulator start, then HMAP_BIGTABLE"]
async fn dropped_storage_options_are_not_schema_differences() {
    use crate::schema::{BloomType, Compression};
    let address = std::env::var("HMAP_BIGTABLE").unwrap_or_else(|_| panic!("HMAP_BIGTABLE is not set: {NEEDS}"));
    let config = BigtableConfig::emulator(address.trim())
        .table_prefix("hmap_bt_unit_")
        .ignore_storage_options(true);
    let store = BigtableStore::connect(config).await.expect(NEEDS);
    let declared = TableSchema::new("kept_options").family(
        FamilySchema::new("f")
            .versions(2)
            .compression(Compression::Snappy)
            .bloom(BloomType::RowCol),
    );
    if store.table_exists("kept_options").await.unwrap() {
        store.delete_table("kept_options").await.unwrap();
    }
    store.create_table(&declared).await.unwrap();
    let diff = crate::table::lifecycle::check_schema(&store, "kept_options", &declared)
        .await
        .expect("the table is as declared, in what Bigtable keeps");
    assert!(diff.is_empty(), "{diff}");
    let plan = crate::migrate::Migration::plan_kept(
        &declared,
        Some(&store.describe_table("kept_options").await.unwrap()),
        &crate::migrate::MigrateOptions::new(),
        store.kept_family_options(),
    );
    assert!(plan.is_empty(), "{plan}");
    // VERSIONS is still compared.
    let more = TableSchema::new("kept_options").family(FamilySchema::new("f").versions(5));
    let err = crate::table::lifecycle::check_schema(&store, "kept_options", &more)
        .await
        .expect_err("VERSIONS differ");
    assert!(err.to_string().contains("VERSIONS"), "{err}");
    store.delete_table("kept_options").await.unwrap();
}

#[tokio::test]
#[ignore = "needs a real Bigtable emulator: scripts/bigtable/emulator start, then HMAP_BIGTABLE"]
async fn sample_row_keys_ends_with_the_tables_end() {
    let store = emulator().await;
    fresh(&store, "samples", vec![FamilySchema::new("f")]).await;
    let rows: Vec<RowMutation> = (0..3000)
        .map(|i| RowMutation::new(format!("r{i:05}")).put_at("f", "q", 1, vec![b'x'; 100]))
        .collect();
    store.mutate("samples", &rows).await.unwrap();
    let samples = store.sample_row_keys("samples").await.unwrap();
    let last = samples.last().expect("at least the end");
    assert!(last.row_key.is_empty(), "{samples:?}");
    let keys: Vec<&Bytes> = samples[..samples.len() - 1].iter().map(|s| &s.row_key).collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "{samples:?}");
    assert!(
        samples.windows(2).all(|w| w[0].offset_bytes <= w[1].offset_bytes),
        "{samples:?}"
    );
    let err = store.sample_row_keys("no_such_table").await.unwrap_err();
    assert!(matches!(err, StoreError::TableNotFound { .. }), "{err}");
}

#[tokio::test]
#[ignore = "needs a real Bigtable emulator: scripts/bigtable/emulator start, then HMAP_BIGTABLE"]
async fn metadata_lives_in_its_own_table_and_follows_the_tables() {
    use super::METADATA_TABLE;
    let store = emulator().await;
    let with = |layout: &str| {
        TableSchema::new("meta_t")
            .family(FamilySchema::new("f"))
            .metadata("hmap.key", layout)
    };
    if store.table_exists("meta_t").await.unwrap() {
        store.delete_table("meta_t").await.unwrap();
    }
    store.create_table(&with("binary: id: u64")).await.unwrap();
    assert_eq!(
        store.describe_table("meta_t").await.unwrap().key_layout(),
        Some("binary: id: u64")
    );
    // Made again with another layout: the new one, nothing of the old.
    store.delete_table("meta_t").await.unwrap();
    let mut other = with("text '_': id: string");
    other.metadata.insert("owner".into(), "shop".into());
    store.create_table(&other).await.unwrap();
    assert_eq!(store.describe_table("meta_t").await.unwrap().metadata, other.metadata);
    // Made again without metadata: none.
    store.delete_table("meta_t").await.unwrap();
    store
        .create_table(&TableSchema::new("meta_t").family(FamilySchema::new("f")))
        .await
        .unwrap();
    assert!(store.describe_table("meta_t").await.unwrap().metadata.is_empty());
    // The metadata table is hmap's: not listed, not to be made.
    let tables = store.list_tables().await.unwrap();
    assert!(tables.contains(&"meta_t".to_string()), "{tables:?}");
    assert!(!tables.iter().any(|t| t == METADATA_TABLE), "{tables:?}");
    let err = store
        .create_table(&TableSchema::new(METADATA_TABLE).family(FamilySchema::new("f")))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidSchema { .. }), "{err}");
    // A create refused (the table exists) leaves the table's metadata.
    let err = store.create_table(&with("binary: id: u64")).await.unwrap_err();
    assert!(matches!(err, StoreError::TableExists { .. }), "{err}");
    assert!(store.describe_table("meta_t").await.unwrap().metadata.is_empty());
    // Deleting the table deletes its row.
    store.delete_table("meta_t").await.unwrap();
    store.create_table(&with("binary: id: u64")).await.unwrap();
    store.delete_table("meta_t").await.unwrap();
    let cells = raw_cells(&store, METADATA_TABLE, "meta_t").await;
    assert!(cells.is_empty(), "{cells:?}");
}

/// Writes rows `r000000`, `r000001`, ... (`count` of them), each one cell
/// of `value_len` bytes, to a fresh table `name`, and checks that the
/// emulator kept them all.
///
/// The emulator can lose a row it acknowledged: its garbage collection
/// (every 0.5 to 1.5 s on tables with GC rules, which every hmap family
/// has) deletes rows it found empty, and a row the write has just made,
/// before the write's cells are in it, is empty (`table.gc` in bttest's
/// `inmem.go`: the row is checked again under its lock, but the write may
/// take that lock only after). A row missing here is written again, so
/// that the tests that read the table test the read.
async fn fill(store: &BigtableStore, name: &str, count: usize, value_len: usize) {
    use futures_util::TryStreamExt;
    fresh(store, name, vec![FamilySchema::new("f")]).await;
    let value = Bytes::from(vec![b'v'; value_len]);
    let row = |i: usize| RowMutation::new(format!("r{i:06}")).put_at("f", "q", 1, value.clone());
    let rows: Vec<RowMutation> = (0..count).map(row).collect();
    for batch in rows.chunks(25_000) {
        store.mutate(name, batch).await.unwrap();
    }
    for _ in 0..3 {
        let keys_only = crate::store::Scan::all().filter(crate::store::Filter::KeyOnly { value_length: false });
        let read: Vec<_> = store.scan(name, &keys_only).await.unwrap().try_collect().await.unwrap();
        let stored: std::collections::HashSet<Bytes> = read.into_iter().map(|r| r.row).collect();
        let missing: Vec<RowMutation> = (0..count).map(row).filter(|r| !stored.contains(&r.row)).collect();
        if missing.is_empty() {
            return;
        }
        eprintln!(
            "the emulator lost {} acknowledged rows of {name} (its GC race), the first {}: written again",
            missing.len(),
            crate::store::show_row(&missing[0].row)
        );
        store.mutate(name, &missing).await.unwrap();
    }
    panic!("the emulator kept losing rows of {name}");
}

/// Reads the scan of `name` to its end, doing `work` for each row: the
/// count of rows, each checked to be the next of `r000000`, `r000001`...
/// (none skipped, none twice); panics on an error, naming the row it came
/// after.
async fn read_slowly(store: &BigtableStore, name: &str, scan: &crate::store::Scan, work: impl Fn()) -> usize {
    use futures_util::StreamExt;
    let mut stream = store.scan(name, scan).await.unwrap();
    let mut n = 0;
    while let Some(row) = stream.next().await {
        let row = row.unwrap_or_else(|e| panic!("after {n} rows: {e:?}"));
        let expected = format!("r{n:06}");
        if row.row != expected.as_bytes() {
            // Which went wrong: the stream opened again, or the write.
            let resumed = store.inner.resumed.load(std::sync::atomic::Ordering::Relaxed);
            let stored = store.get(name, &crate::store::Get::new(expected.clone())).await;
            panic!(
                "row {n}: read {} where {expected} belonged; the stream was opened again {resumed} times; \
                 {expected} read alone: {stored:?}",
                crate::store::show_row(&row.row),
            );
        }
        n += 1;
        work();
    }
    n
}

/// A scan of 100,000 small rows (42-byte values, a row per response from
/// the emulator) read at 10 µs of work per row reads every row, once: a
/// reader that falls behind the server must not trip the HTTP/2 library's
/// guard against floods of small DATA frames (it closed the connection
/// with `ENHANCE_YOUR_CALM` after 15,000 to 28,000 rows).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real Bigtable emulator: scripts/bigtable/emulator start, then HMAP_BIGTABLE"]
async fn a_slow_scan_of_many_small_rows_reads_every_row() {
    let store = emulator().await;
    fill(&store, "many_small", 100_000, 42).await;
    let started = Instant::now();
    let work = || {
        let spin = Instant::now();
        while spin.elapsed() < Duration::from_micros(10) {
            std::hint::spin_loop();
        }
    };
    let read = read_slowly(&store, "many_small", &crate::store::Scan::all(), work).await;
    assert_eq!(read, 100_000);
    eprintln!("100,000 rows read slowly in {:?}", started.elapsed());
    // Read through one stream: the connection was not closed under it
    // (a stream opened again would hide that, and cost every other call
    // on the connection).
    assert_eq!(store.inner.resumed.load(std::sync::atomic::Ordering::Relaxed), 0);
    // A limit is kept.
    let limited = read_slowly(&store, "many_small", &crate::store::Scan::all().limit(12_345), work).await;
    assert_eq!(limited, 12_345);
    store.delete_table("many_small").await.unwrap();
}

/// A scan read at its caller's pace for longer than `call_timeout` (2 s
/// here, the scan takes about 5 s) reads every row, once: the deadline
/// bounds each wait for a response, not the whole stream. The rows (8 MiB)
/// are more than HTTP/2's flow control lets the server send ahead, so the
/// server is still sending when the 2 s are up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real Bigtable emulator: scripts/bigtable/emulator start, then HMAP_BIGTABLE"]
async fn a_scan_longer_than_the_call_timeout_reads_every_row() {
    let address = std::env::var("HMAP_BIGTABLE").unwrap_or_else(|_| panic!("HMAP_BIGTABLE is not set: {NEEDS}"));
    let config = BigtableConfig::emulator(address.trim())
        .table_prefix("hmap_bt_unit_")
        .call_timeout(Duration::from_secs(2));
    let store = BigtableStore::connect(config).await.unwrap();
    fill(&store, "long_scan", 1_000, 8 * 1024).await;
    let started = Instant::now();
    let work = || std::thread::sleep(Duration::from_millis(5));
    let read = read_slowly(&store, "long_scan", &crate::store::Scan::all(), work).await;
    assert_eq!(read, 1_000);
    assert!(started.elapsed() > Duration::from_secs(4), "{:?}", started.elapsed());
    assert_eq!(store.inner.resumed.load(std::sync::atomic::Ordering::Relaxed), 0);
    eprintln!("1,000 rows of 8 KiB read over {:?}", started.elapsed());
    store.delete_table("long_scan").await.unwrap();
}
