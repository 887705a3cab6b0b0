//! What only the in-memory store has: major compaction, an injectable clock
//! and a configurable cell size limit.

use futures_util::StreamExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use bytes::Bytes;
use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::{FamilyChange, Get, MemoryStore, MemoryStoreConfig, RowMutation, Scan, Store, StoreError};

fn manual_clock(start: i64) -> (Arc<AtomicI64>, MemoryStore) {
    let now = Arc::new(AtomicI64::new(start));
    let clock = Arc::clone(&now);
    let store =
        MemoryStore::with_config(MemoryStoreConfig::new().clock(Arc::new(move || clock.load(Ordering::SeqCst))));
    (now, store)
}

async fn values(store: &MemoryStore, table: &str, get: Get) -> Vec<(i64, Bytes)> {
    store.get(table, &get).await.unwrap().map_or_else(Vec::new, |r| {
        r.cells.into_iter().map(|c| (c.timestamp, c.value)).collect()
    })
}

#[tokio::test]
async fn default_timestamps_come_from_the_clock() {
    let (now, store) = manual_clock(1_000);
    store
        .create_table(&TableSchema::new("t").family(FamilySchema::new("f").versions(2)))
        .await
        .unwrap();
    store
        .mutate("t", &[RowMutation::new("r").put("f", "q", "a")])
        .await
        .unwrap();
    now.store(2_000, Ordering::SeqCst);
    store
        .mutate("t", &[RowMutation::new("r").put("f", "q", "b")])
        .await
        .unwrap();
    assert_eq!(
        values(&store, "t", Get::new("r").max_versions(2)).await,
        vec![(2_000, Bytes::from_static(b"b")), (1_000, Bytes::from_static(b"a"))]
    );
}

#[tokio::test]
async fn cells_expire_as_the_clock_passes_their_ttl() {
    let (now, store) = manual_clock(100_000);
    store
        .create_table(&TableSchema::new("t").family(FamilySchema::new("f").ttl_secs(10)))
        .await
        .unwrap();
    store
        .mutate("t", &[RowMutation::new("r").put("f", "q", "v")])
        .await
        .unwrap();
    now.store(109_999, Ordering::SeqCst);
    assert_eq!(values(&store, "t", Get::new("r")).await.len(), 1);
    // Expired once older than now - TTL (HBase: `timestamp < oldestStamp`).
    now.store(110_001, Ordering::SeqCst);
    assert_eq!(values(&store, "t", Get::new("r")).await, vec![]);
}

#[tokio::test]
async fn major_compaction_drops_markers_so_older_puts_reappear() {
    let store = MemoryStore::new();
    store
        .create_table(&TableSchema::new("t").family(FamilySchema::new("f").versions(3)))
        .await
        .unwrap();
    store
        .mutate("t", &[RowMutation::new("r").delete_column_up_to("f", "q", 100)])
        .await
        .unwrap();
    store
        .mutate("t", &[RowMutation::new("r").put_at("f", "q", 50, "masked")])
        .await
        .unwrap();
    assert_eq!(values(&store, "t", Get::new("r")).await, vec![]);
    // After a major compaction the marker is gone (RG: "major compactions
    // change query results"): a new put at the old timestamp shows.
    store.major_compact("t").unwrap();
    store
        .mutate("t", &[RowMutation::new("r").put_at("f", "q", 50, "visible")])
        .await
        .unwrap();
    assert_eq!(
        values(&store, "t", Get::new("r")).await,
        vec![(50, Bytes::from_static(b"visible"))]
    );
}

#[tokio::test]
async fn major_compaction_keeps_exactly_what_reads_return() {
    let store = MemoryStore::new();
    store
        .create_table(&TableSchema::new("t").family(FamilySchema::new("f").versions(2)))
        .await
        .unwrap();
    let mut m = RowMutation::new("r");
    for ts in 1..=5 {
        m = m.put_at("f", "q", ts, format!("v{ts}"));
    }
    store
        .mutate("t", &[m, RowMutation::new("gone").put_at("f", "q", 1, "x")])
        .await
        .unwrap();
    store
        .mutate("t", &[RowMutation::new("gone").delete_row()])
        .await
        .unwrap();
    let before: Vec<_> = store
        .scan("t", &Scan::all().max_versions(5))
        .await
        .unwrap()
        .collect()
        .await;
    store.major_compact("t").unwrap();
    let after: Vec<_> = store
        .scan("t", &Scan::all().max_versions(5))
        .await
        .unwrap()
        .collect()
        .await;
    assert_eq!(format!("{before:?}"), format!("{after:?}"));
    assert_eq!(
        values(&store, "t", Get::new("r").max_versions(5)).await,
        vec![(5, Bytes::from_static(b"v5")), (4, Bytes::from_static(b"v4"))]
    );
}

#[tokio::test]
async fn configured_cell_size_limit() {
    // Row "r", family "f", qualifier "q" and 24 bytes of framing: 27 bytes
    // before the value, as HBase counts a cell.
    let store = MemoryStore::with_config(MemoryStoreConfig::new().max_value_size(31));
    store
        .create_table(&TableSchema::new("t").family(FamilySchema::new("f")))
        .await
        .unwrap();
    store
        .mutate("t", &[RowMutation::new("r").put("f", "q", "four")])
        .await
        .unwrap();
    let err = store
        .mutate("t", &[RowMutation::new("r").put("f", "q", "fives")])
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "table `t`, row r, column f:q: the cell's 32 bytes (row, column, value and 24 bytes of framing) exceed the 31-byte cell limit"
    );
    assert!(matches!(
        err,
        StoreError::CellTooLarge {
            size: 32,
            limit: 31,
            ..
        }
    ));
    // The qualifier counts too: a one-byte longer one and a one-byte shorter
    // value are refused alike.
    let err = store
        .mutate("t", &[RowMutation::new("r").put("f", "qq", "four")])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::CellTooLarge { size: 32, .. }), "{err}");
}

#[tokio::test]
async fn errors_name_table_row_and_column() {
    let store = MemoryStore::new();
    store
        .create_table(&TableSchema::new("t").family(FamilySchema::new("f")))
        .await
        .unwrap();
    store
        .mutate("t", &[RowMutation::new("r\x00").put("f", "name", "Ann")])
        .await
        .unwrap();
    let err = store
        .increment("t", &hmap::store::Increment::new("r\x00").add("f", "name", 1))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        r"table `t`, row r\x00, column f:name: the 3-byte value is not a counter (8-byte big-endian i64)"
    );
    let err = store.get("t", &Get::new("r").family("g")).await.unwrap_err();
    assert_eq!(err.to_string(), "table `t` has no column family `g`");
    let long = vec![b'x'; 40_000];
    let err = store
        .mutate("t", &[RowMutation::new(long).put("f", "q", "v")])
        .await
        .unwrap_err();
    assert!(err.to_string().starts_with("table `t`: invalid row key xxxx"), "{err}");
    assert!(
        err.to_string()
            .ends_with("... (40000 bytes): 40000 bytes is longer than the 32750 this table can hold (32767 less the table name and 16 bytes of region lookup key)"),
        "{err}"
    );
}

#[tokio::test]
async fn schema_renders_as_a_shell_statement() {
    use hmap::schema::{BloomType, Compression};
    let schema = TableSchema::new("mytable")
        .family(
            FamilySchema::new("colfam1")
                .versions(5)
                .min_versions(1)
                .ttl_secs(18_000),
        )
        .family(
            FamilySchema::new("c2")
                .block_cache(false)
                .in_memory(true)
                .bloom(BloomType::RowCol)
                .compression(Compression::Snappy)
                .block_size(8192),
        )
        .split_keys([Bytes::from_static(b"\x01"), Bytes::from_static(b"a\"b")]);
    assert_eq!(
        schema.to_string(),
        "create 'mytable', {NAME => 'colfam1', VERSIONS => 5, MIN_VERSIONS => 1, TTL => 18000}, \
         {NAME => 'c2', VERSIONS => 1, BLOCKSIZE => 8192, BLOCKCACHE => 'false', IN_MEMORY => 'true', \
         BLOOMFILTER => 'ROWCOL', COMPRESSION => 'SNAPPY'}, SPLITS => [\"\\x01\", \"a\\x22b\"]"
    );
}

#[tokio::test]
async fn rewriting_a_cell_keeps_memory_bounded() {
    let store = MemoryStore::new();
    store
        .create_table(&TableSchema::new("t").family(FamilySchema::new("f").versions(3)))
        .await
        .unwrap();
    for i in 0..10_000i64 {
        // Same timestamp every time: each write supersedes the last.
        store
            .mutate("t", &[RowMutation::new("r").put_at("f", "same", 1, i.to_string())])
            .await
            .unwrap();
        store
            .mutate("t", &[RowMutation::new("r").put_at("f", "grows", i, i.to_string())])
            .await
            .unwrap();
        store
            .increment("t", &hmap::store::Increment::new("r").add("f", "n", 1))
            .await
            .unwrap();
    }
    assert!(
        store.stored_cells("t").unwrap() <= 3 * (2 * 3 + 9),
        "{}",
        store.stored_cells("t").unwrap()
    );
    let row = store.get("t", &Get::new("r").max_versions(3)).await.unwrap().unwrap();
    let of = |q: &str| -> Vec<(i64, Bytes)> {
        row.cells
            .iter()
            .filter(|c| c.qualifier == q.as_bytes())
            .map(|c| (c.timestamp, c.value.clone()))
            .collect()
    };
    assert_eq!(
        of("grows"),
        vec![
            (9_999, Bytes::from_static(b"9999")),
            (9_998, Bytes::from_static(b"9998")),
            (9_997, Bytes::from_static(b"9997"))
        ]
    );
    assert_eq!(of("same"), vec![(1, Bytes::from_static(b"9999"))]);
    assert_eq!(of("n")[0].1, Bytes::copy_from_slice(&10_000i64.to_be_bytes()));
}

#[tokio::test]
async fn pruning_spares_what_an_open_scanner_reads() {
    let store = MemoryStore::new();
    store
        .create_table(&TableSchema::new("t").family(FamilySchema::new("f")))
        .await
        .unwrap();
    store
        .mutate(
            "t",
            &[
                RowMutation::new("a").put_at("f", "q", 1, "first"),
                RowMutation::new("b").put_at("f", "q", 1, "first"),
            ],
        )
        .await
        .unwrap();
    let mut scanner = store.scan("t", &Scan::all().batch_size(1)).await.unwrap();
    assert_eq!(
        scanner.next().await.unwrap().unwrap().cells[0].value,
        Bytes::from_static(b"first")
    );
    for i in 0..100 {
        store
            .mutate("t", &[RowMutation::new("b").put_at("f", "q", 1, format!("later {i}"))])
            .await
            .unwrap();
    }
    // The scanner reads row b as it was when it opened.
    assert_eq!(
        scanner.next().await.unwrap().unwrap().cells[0].value,
        Bytes::from_static(b"first")
    );
    drop(scanner);
    // Once it is gone, the next write prunes the copies it was keeping.
    store
        .mutate("t", &[RowMutation::new("b").put_at("f", "q", 1, "last")])
        .await
        .unwrap();
    assert!(
        store.stored_cells("t").unwrap() <= 1 + 11,
        "{}",
        store.stored_cells("t").unwrap()
    );
    assert_eq!(
        store.get("t", &Get::new("b")).await.unwrap().unwrap().cells[0].value,
        Bytes::from_static(b"last")
    );
}

#[tokio::test]
async fn qualifiers_and_values_of_every_size_round_trip() {
    let store = MemoryStore::new();
    store
        .create_table(&TableSchema::new("t").family(FamilySchema::new("f").versions(2)))
        .await
        .unwrap();
    // Short and long qualifiers and values, empty ones included.
    let sizes = [0usize, 1, 37, 38, 39, 200];
    let mut m = RowMutation::new("r");
    for &q in &sizes {
        for (version, &v) in sizes.iter().enumerate().take(2) {
            let qualifier = vec![b'q'; q];
            let value: Vec<u8> = (0..v + q).map(|i| i as u8).collect();
            m = m.put_at("f", qualifier, version as i64 + 1, value);
        }
    }
    store.mutate("t", &[m]).await.unwrap();
    // A marker on a long qualifier, so that marker lookups by it are exercised.
    store
        .mutate("t", &[RowMutation::new("r").delete_version("f", vec![b'q'; 200], 1)])
        .await
        .unwrap();
    let row = store.get("t", &Get::new("r").max_versions(2)).await.unwrap().unwrap();
    let got: Vec<(usize, i64, usize)> = row
        .cells
        .iter()
        .map(|c| (c.qualifier.len(), c.timestamp, c.value.len()))
        .collect();
    // Each qualifier: version 2 (value 1 + q bytes), then version 1 (q bytes),
    // except the 200-byte one, whose version 1 was deleted.
    let expected: Vec<(usize, i64, usize)> = sizes
        .iter()
        .flat_map(|&q| {
            if q == 200 {
                vec![(q, 2, 1 + q)]
            } else {
                vec![(q, 2, 1 + q), (q, 1, q)]
            }
        })
        .collect();
    assert_eq!(got, expected);
    for c in &row.cells {
        assert!(c.qualifier.iter().all(|&b| b == b'q'));
        assert!(c.value.iter().enumerate().all(|(i, &b)| b == i as u8));
    }
}

#[tokio::test]
async fn named_column_shows_one_expired_version_until_a_major_compaction() {
    let (_, store) = manual_clock(10_000_000);
    store
        .create_table(&TableSchema::new("t").family(FamilySchema::new("f").versions(5).min_versions(1).ttl_secs(60)))
        .await
        .unwrap();
    store
        .mutate(
            "t",
            &[RowMutation::new("r")
                .put_at("f", "q", 10_000_000, "fresh")
                .put_at("f", "q", 5_000_000, "old1")
                .put_at("f", "q", 4_000_000, "old2")],
        )
        .await
        .unwrap();
    let named = Get::new("r").column("f", "q").max_versions(3);
    assert_eq!(
        values(&store, "t", named.clone()).await,
        vec![
            (10_000_000, Bytes::from_static(b"fresh")),
            (5_000_000, Bytes::from_static(b"old1"))
        ]
    );
    // A major compaction keeps what a read of the whole family returns.
    store.major_compact("t").unwrap();
    assert_eq!(
        values(&store, "t", named).await,
        vec![(10_000_000, Bytes::from_static(b"fresh"))]
    );
}

/// Writers racing with `alter_table` lose nothing: a write acknowledged
/// while a family is added is readable afterwards, with the new family.
#[tokio::test]
async fn writes_during_an_alteration_are_kept() {
    let store = Arc::new(MemoryStore::new());
    store
        .create_table(&TableSchema::new("t").family(FamilySchema::new("a")))
        .await
        .unwrap();
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let store = Arc::clone(&store);
            std::thread::spawn(async move || {
                for i in 0..500 {
                    let row = format!("w{w}-{i:04}");
                    store
                        .mutate("t", &[RowMutation::new(row).put("a", "q", "v")])
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for n in 0..20 {
        let family = FamilySchema::new(format!("f{n:02}"));
        store.alter_table("t", &FamilyChange::Add(family)).await.unwrap();
    }
    for w in writers {
        w.join().unwrap().await;
    }
    let rows = store.scan("t", &Scan::all()).await.unwrap().count().await;
    assert_eq!(rows, 4 * 500);
    assert_eq!(store.describe_table("t").await.unwrap().families.len(), 21);
    store
        .mutate("t", &[RowMutation::new("w0-0000").put("f07", "q", "x")])
        .await
        .unwrap();
    assert_eq!(values(&store, "t", Get::new("w0-0000").family("f07")).await.len(), 1);
}
