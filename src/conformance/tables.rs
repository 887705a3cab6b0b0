//! Conformance cases of tables: creating, listing, deleting and describing
//! them (their families and the families' options), the names HBase takes,
//! metadata and truncation, and a table another client dropped.

use bytes::Bytes;
use futures_util::TryStreamExt;
use hmap::schema::{BloomType, Compression, FamilySchema, MAX_TABLE_NAME_PART, TTL_FOREVER, TableSchema};
use hmap::store::{CheckAndMutate, Get, Increment, RowMutation, Scan, StoreError};

use super::{Target, TestTable, ab_table, cell, get_cells, keys, put, scan_keys, table};

/// A created table exists and is listed. (Thrift2 IDL: `createTable`,
/// `tableExists`, `getTableNamesByPattern`.)
pub async fn create_table_then_exists(t: &dyn Target) {
    let tt = ab_table(t, "create_table_then_exists").await;
    assert!(t.store().table_exists(&tt.name).await.unwrap());
    assert!(t.store().list_tables().await.unwrap().contains(&tt.name));
}

/// Creating a table that exists fails with `TableExists`.
/// (HBase: `TableExistsException` from `HMaster.createTable`.)
pub async fn create_existing_table_fails(t: &dyn Target) {
    let tt = ab_table(t, "create_existing_table_fails").await;
    let schema = TableSchema::new(tt.name.clone()).family(FamilySchema::new("a"));
    let err = t.store().create_table(&schema).await.unwrap_err();
    assert!(
        matches!(err, StoreError::TableExists { ref table } if *table == tt.name),
        "{err}"
    );
}

/// Deleting a table removes it and its rows; a new table of that name starts
/// empty. (Thrift2 IDL: `disableTable` + `deleteTable`.)
pub async fn delete_table_removes_data(t: &dyn Target) {
    let tt = ab_table(t, "delete_table_removes_data").await;
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 1, "v")]).await;
    t.store().delete_table(&tt.name).await.unwrap();
    assert!(!t.store().table_exists(&tt.name).await.unwrap());
    let again = ab_table(t, "delete_table_removes_data").await;
    assert_eq!(get_cells(&again, Get::new("r")).await, vec![]);
}

/// Deleting, reading or writing a missing table fails with `TableNotFound`.
/// (HBase: `TableNotFoundException`.)
pub async fn missing_table_fails(t: &dyn Target) {
    let name = format!("{}missing_table_fails_never_created", t.table_prefix());
    let s = t.store();
    let _ = s.delete_table(&name).await;
    assert!(matches!(
        s.delete_table(&name).await,
        Err(StoreError::TableNotFound { .. })
    ));
    assert!(matches!(
        s.get(&name, &Get::new("r")).await,
        Err(StoreError::TableNotFound { .. })
    ));
    assert!(matches!(
        s.mutate(&name, &[RowMutation::new("r").put("a", "q", "v")]).await,
        Err(StoreError::TableNotFound { .. })
    ));
    assert!(matches!(
        s.scan(&name, &Scan::all()).await.map(|_| ()),
        Err(StoreError::TableNotFound { .. })
    ));
    assert!(matches!(
        s.describe_table(&name).await,
        Err(StoreError::TableNotFound { .. })
    ));
}

/// Every family option set at creation is what `describe` reports.
/// (Thrift2 IDL: `TColumnFamilyDescriptor` fields maxVersions, minVersions,
/// timeToLive, blockSize, blockCacheEnabled, inMemory, bloomnFilterType,
/// compressionType.)
pub async fn describe_returns_family_options(t: &dyn Target) {
    let tuned = FamilySchema::new("t")
        .versions(1000)
        .min_versions(2)
        .ttl_secs(18_000)
        .block_size(16_384)
        .block_cache(false)
        .in_memory(true)
        .bloom(BloomType::RowCol)
        .compression(Compression::Gz);
    let tt = table(
        t,
        "describe_returns_family_options",
        vec![tuned.clone(), FamilySchema::new("d")],
    )
    .await;
    let described = t.store().describe_table(&tt.name).await.unwrap();
    assert_eq!(described.name, tt.name);
    assert_eq!(described.families, vec![FamilySchema::new("d"), tuned]);
}

/// A family created without options gets HBase 2's defaults: VERSIONS 1,
/// MIN_VERSIONS 0, TTL forever, BLOCKSIZE 65536, BLOCKCACHE true, IN_MEMORY
/// false, BLOOMFILTER ROW, COMPRESSION NONE.
/// (HBase: `ColumnFamilyDescriptorBuilder.DEFAULT_*`.)
pub async fn describe_default_family_options(t: &dyn Target) {
    let tt = table(t, "describe_default_family_options", vec![FamilySchema::new("f")]).await;
    let f = &t.store().describe_table(&tt.name).await.unwrap().families[0];
    assert_eq!(
        (
            f.versions,
            f.min_versions,
            f.ttl_secs,
            f.block_size,
            f.block_cache,
            f.in_memory
        ),
        (1, 0, TTL_FOREVER, 65_536, true, false)
    );
    assert_eq!((f.bloom, f.compression), (BloomType::Row, Compression::None));
}

/// Families are reported sorted by name, whatever the creation order.
/// (HBase: `TableDescriptorBuilder` keeps families in a `TreeMap` by name.)
pub async fn describe_sorts_families(t: &dyn Target) {
    let tt = table(
        t,
        "describe_sorts_families",
        vec![FamilySchema::new("z"), FamilySchema::new("a"), FamilySchema::new("m")],
    )
    .await;
    let names: Vec<String> = t
        .store()
        .describe_table(&tt.name)
        .await
        .unwrap()
        .families
        .into_iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(names, ["a", "m", "z"]);
}

/// A table needs at least one family and a legal name.
/// (HBase: `TableDescriptorChecker.sanityCheck`, "Table should have at least
/// one column family"; `TableName.isLegalTableQualifierName`.)
pub async fn invalid_schemas_fail(t: &dyn Target) {
    let name = format!("{}invalid_schemas_fail", t.table_prefix());
    let s = t.store();
    assert!(matches!(
        s.create_table(&TableSchema::new(name.clone())).await,
        Err(StoreError::InvalidSchema { .. })
    ));
    assert!(matches!(
        s.create_table(&TableSchema::new("bad name!").family(FamilySchema::new("a")))
            .await,
        Err(StoreError::InvalidSchema { .. })
    ));
    assert!(matches!(
        s.create_table(&TableSchema::new(name.clone()).family(FamilySchema::new("a:b")))
            .await,
        Err(StoreError::InvalidSchema { .. })
    ));
    assert!(!s.table_exists(&name).await.unwrap());
}

// ---------------------------------------------------------------------------
// Table metadata and truncation

/// Creates `prefix + case` afresh from a whole schema (its name replaced).
async fn table_from<'a>(t: &'a dyn Target, case: &str, mut schema: TableSchema) -> TestTable<'a> {
    let store = t.store();
    schema.name = format!("{}{case}", t.table_prefix());
    if store.table_exists(&schema.name).await.expect("table_exists") {
        store.delete_table(&schema.name).await.expect("delete a leftover table");
    }
    store.create_table(&schema).await.expect("create_table");
    TestTable {
        store,
        name: schema.name,
    }
}

/// A table's metadata set at creation is what `describe` reports, quotes
/// and backslashes included. (HBase: `TableDescriptor.getValue`, the shell's
/// `METADATA`; Thrift2 IDL: `TTableDescriptor.attributes`, field 3.)
pub async fn table_metadata_round_trips(t: &dyn Target) {
    let schema = TableSchema::new("")
        .family(FamilySchema::new("a"))
        .metadata("hmap.key", "text '_': uid: string + seq: u32 width 4")
        .metadata("team", "it's a \\ test");
    let tt = table_from(t, "table_metadata_round_trips", schema.clone()).await;
    let live = t.store().describe_table(&tt.name).await.unwrap();
    if t.framed_gateway() {
        // Created without it: no metadata, and none of the frame-sized
        // garbage that gateway would have stored in its place.
        assert!(!live.metadata.contains_key("hmap.key"), "{:?}", live.metadata);
        assert!(live.metadata.keys().all(|k| k.len() < 100), "{:?}", live.metadata);
        return;
    }
    for (key, value) in &schema.metadata {
        assert_eq!(live.metadata.get(key), Some(value), "{key}");
    }
    assert_eq!(live.key_layout(), Some("text '_': uid: string + seq: u32 width 4"));
}

/// Truncating a table deletes its rows and keeps its families, options,
/// metadata and split points; writes go on. (HBase: `Admin.truncateTable`
/// with `preserveSplits`, the shell's `truncate_preserve`; Thrift2 IDL:
/// `truncateTable`.)
pub async fn truncate_keeps_schema_and_splits(t: &dyn Target) {
    let schema = TableSchema::new("")
        .family(FamilySchema::new("a").versions(3).ttl_secs(86_400))
        .family(FamilySchema::new("b"))
        .split_keys(keys(&["m"]))
        .metadata("hmap.key", "binary: id: string");
    let tt = table_from(t, "truncate_keeps_schema_and_splits", schema).await;
    put(
        &tt,
        vec![
            RowMutation::new("a1").put_at("a", "q", 1, "v"),
            RowMutation::new("z1").put_at("b", "q", 1, "v"),
        ],
    )
    .await;
    let before = t.store().describe_table(&tt.name).await.unwrap();
    t.store().truncate_table(&tt.name).await.unwrap();
    assert!(t.store().table_exists(&tt.name).await.unwrap());
    assert_eq!(scan_keys(&tt, Scan::all()).await, Vec::<Bytes>::new());
    assert_eq!(t.store().describe_table(&tt.name).await.unwrap(), before);
    put(&tt, vec![RowMutation::new("b2").put_at("b", "q", 2, "w")]).await;
    assert_eq!(get_cells(&tt, Get::new("b2")).await, vec![cell("b", "q", 2, "w")]);
}

/// Truncating a missing table fails with `TableNotFound`.
/// (HBase: `TableNotFoundException`.)
pub async fn truncate_missing_table_fails(t: &dyn Target) {
    let name = format!("{}truncate_missing_table_fails_never_created", t.table_prefix());
    let _ = t.store().delete_table(&name).await;
    let err = t.store().truncate_table(&name).await.unwrap_err();
    assert!(
        matches!(err, StoreError::TableNotFound { ref table } if *table == name),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// Where the backends used to disagree (issues 10 and 17)

/// A table another client dropped is [`StoreError::TableNotFound`] for
/// every call of a store that had read it, whatever shape the server's
/// answer takes. (HBase: `TableNotFoundException`; a gateway passes on only
/// its message, the table's name.)
pub async fn table_dropped_behind_the_store(t: &dyn Target) {
    let tt = ab_table(t, "table_dropped_behind_the_store").await;
    let s = t.store();
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 1, "x")]).await;
    assert_eq!(get_cells(&tt, Get::new("r")).await, vec![cell("a", "q", 1, "x")]);
    t.other_client().unwrap_or(s).delete_table(&tt.name).await.unwrap();
    let not_found = |call: &str, e: Option<StoreError>| match e {
        Some(StoreError::TableNotFound { ref table }) if *table == tt.name => {}
        other => panic!("{call} on a dropped table: expected TableNotFound, got {other:?}"),
    };
    not_found("get", s.get(&tt.name, &Get::new("r")).await.err());
    not_found(
        "get_many",
        s.get_many(&tt.name, &[Get::new("r"), Get::new("s")]).await.err(),
    );
    not_found(
        "mutate of one row",
        s.mutate(&tt.name, &[RowMutation::new("r").put_at("a", "q", 2, "y")])
            .await
            .err(),
    );
    not_found(
        "mutate of two rows",
        s.mutate(
            &tt.name,
            &[
                RowMutation::new("r").put_at("a", "q", 2, "y"),
                RowMutation::new("s").put_at("a", "q", 2, "y"),
            ],
        )
        .await
        .err(),
    );
    not_found(
        "check_and_mutate",
        s.check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(
                RowMutation::new("r").put("a", "q", "y"),
                "a",
                "q",
                Some(Bytes::from_static(b"x")),
            ),
        )
        .await
        .err(),
    );
    not_found(
        "increment",
        s.increment(&tt.name, &Increment::new("r").add("b", "n", 1)).await.err(),
    );
    let scanned = match s.scan(&tt.name, &Scan::all()).await {
        Ok(rows) => rows.try_collect::<Vec<_>>().await.err(),
        Err(e) => Some(e),
    };
    not_found("scan", scanned);
}

/// Every call on an illegal table name fails with the same typed error,
/// before anything reaches storage. (HBase: `TableName.valueOf` throws
/// `IllegalArgumentException` from `isLegalTableQualifierName`, "Tables may
/// not be named 'zookeeper'".)
pub async fn illegal_table_name_fails(t: &dyn Target) {
    let s = t.store();
    for name in ["bad name!", "-dash", "zookeeper"] {
        let invalid = |r: Result<(), StoreError>, call: &str| match r {
            Err(StoreError::InvalidRequest { ref table, .. }) if table == name => {}
            other => panic!("{call} on {name:?}: expected an invalid request, got {other:?}"),
        };
        invalid(s.get(name, &Get::new("r")).await.map(|_| ()), "get");
        invalid(
            s.mutate(name, &[RowMutation::new("r").put("a", "q", "v")]).await,
            "mutate",
        );
        invalid(s.scan(name, &Scan::all()).await.map(|_| ()), "scan");
        invalid(s.table_exists(name).await.map(|_| ()), "table_exists");
        invalid(s.describe_table(name).await.map(|_| ()), "describe_table");
        invalid(s.delete_table(name).await, "delete_table");
        assert!(matches!(
            s.create_table(&TableSchema::new(name).family(FamilySchema::new("a")))
                .await,
            Err(StoreError::InvalidSchema { .. })
        ));
    }
}

/// A table name of 255 bytes works; one of 256 is refused before any call,
/// by `create_table` as an invalid schema and by other calls as an invalid
/// request. (HBase sets no limit, but the name is a directory under its
/// root, `data/default/<name>`, and file systems take 255 bytes: a longer
/// name leaves the master retrying `CreateTableProcedure` forever.)
pub async fn table_name_length_limit(t: &dyn Target) {
    let s = t.store();
    let base = format!("{}table_name_length_limit_", t.table_prefix());
    let longest = format!("{base}{}", "n".repeat(MAX_TABLE_NAME_PART - base.len()));
    assert_eq!(longest.len(), 255);
    if s.table_exists(&longest).await.unwrap() {
        s.delete_table(&longest).await.unwrap();
    }
    s.create_table(&TableSchema::new(longest.clone()).family(FamilySchema::new("a")))
        .await
        .unwrap();
    s.mutate(&longest, &[RowMutation::new("r").put_at("a", "q", 1, "v")])
        .await
        .unwrap();
    let cells = s.get(&longest, &Get::new("r")).await.unwrap().map(|r| r.cells);
    s.delete_table(&longest).await.unwrap();
    assert_eq!(cells, Some(vec![cell("a", "q", 1, "v")]));

    let too_long = format!("{longest}n");
    assert!(matches!(
        s.create_table(&TableSchema::new(too_long.clone()).family(FamilySchema::new("a")))
            .await,
        Err(StoreError::InvalidSchema { .. })
    ));
    assert!(matches!(
        s.get(&too_long, &Get::new("r")).await,
        Err(StoreError::InvalidRequest { .. })
    ));
    assert!(matches!(
        s.table_exists(&too_long).await,
        Err(StoreError::InvalidRequest { .. })
    ));
}
