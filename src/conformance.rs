//! The store conformance suite: one function per HBase behaviour, each run
//! against any [`Store`] on a table of its own, asserting the exact cells
//! returned.
//!
//! The same cases run against [`hmap::store::MemoryStore`] in `cargo test`
//! (`tests/conformance_memory.rs`) and against a real HBase through the Thrift
//! backend. Where they disagree, HBase is right. Each case cites where HBase
//! defines the behaviour: the reference guide (RG, the section named), its
//! source (class and method), or its Thrift IDL.
//!
//! Cases use explicit timestamps wherever the assertion depends on them; where
//! a case must rely on the server's clock it allows for the clock of a server
//! on the same machine.

use std::thread;

use bytes::Bytes;
use hmap::schema::{BloomType, Compression, FamilySchema, MAX_TABLE_NAME_PART, TTL_FOREVER, TableSchema};
use hmap::store::{
    Cell, CheckAndMutate, Column, FamilyChange, Get, Increment, MAX_ROW_LENGTH, RowMutation, RowResult, Scan, Store,
    StoreError, TimeRange, max_row_length,
};

/// What a conformance run needs from a backend.
pub trait Target: Sync {
    /// The store under test.
    fn store(&self) -> &dyn Store;

    /// A prefix for table names, so that runs against a shared server do not
    /// collide with other tables.
    fn table_prefix(&self) -> &str {
        "hmap_conformance_"
    }

    /// How many scanners the backend holds open, if it can tell.
    fn open_scanners(&self) -> Option<usize> {
        None
    }

    /// The largest value the backend accepts, for the size-limit case.
    fn max_value_size(&self) -> usize {
        10 * 1024 * 1024
    }
}

/// A table created for one case and deleted when the case ends.
pub struct TestTable<'a> {
    store: &'a dyn Store,
    /// The table's full name.
    pub name: String,
}

impl Drop for TestTable<'_> {
    fn drop(&mut self) {
        // Best effort: a failed case must not hide its own panic behind this.
        let _ = self.store.delete_table(&self.name);
    }
}

/// Creates `prefix + case` afresh with the given families.
pub fn table<'a>(t: &'a dyn Target, case: &str, families: Vec<FamilySchema>) -> TestTable<'a> {
    let store = t.store();
    let name = format!("{}{case}", t.table_prefix());
    if store.table_exists(&name).expect("table_exists") {
        store.delete_table(&name).expect("delete a leftover table");
    }
    let mut schema = TableSchema::new(name.clone());
    schema.families = families;
    store.create_table(&schema).expect("create_table");
    TestTable { store, name }
}

/// A table with families `a` (VERSIONS 3) and `b` (VERSIONS 1).
fn ab_table<'a>(t: &'a dyn Target, case: &str) -> TestTable<'a> {
    table(
        t,
        case,
        vec![FamilySchema::new("a").versions(3), FamilySchema::new("b")],
    )
}

/// A cell, for assertions.
pub fn cell(family: &str, qualifier: &str, timestamp: i64, value: &str) -> Cell {
    Cell::new(
        Bytes::copy_from_slice(family.as_bytes()),
        Bytes::copy_from_slice(qualifier.as_bytes()),
        timestamp,
        Bytes::copy_from_slice(value.as_bytes()),
    )
}

fn put(t: &TestTable<'_>, rows: Vec<RowMutation>) {
    t.store.mutate(&t.name, &rows).expect("mutate");
}

fn get_cells(t: &TestTable<'_>, get: Get) -> Vec<Cell> {
    t.store
        .get(&t.name, &get)
        .expect("get")
        .map_or_else(Vec::new, |r| r.cells)
}

fn scan_rows(t: &TestTable<'_>, scan: Scan) -> Vec<RowResult> {
    t.store
        .scan(&t.name, &scan)
        .expect("scan")
        .collect::<Result<Vec<_>, _>>()
        .expect("scan rows")
}

fn scan_keys(t: &TestTable<'_>, scan: Scan) -> Vec<Bytes> {
    scan_rows(t, scan).into_iter().map(|r| r.row).collect()
}

fn keys(list: &[&str]) -> Vec<Bytes> {
    list.iter().map(|k| Bytes::copy_from_slice(k.as_bytes())).collect()
}

fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Rows `r0`..`r{n-1}` zero-padded, one cell each at timestamp 1.
fn numbered_rows(t: &TestTable<'_>, n: usize) {
    let rows = (0..n)
        .map(|i| RowMutation::new(format!("r{i:03}")).put_at("b", "q", 1, format!("v{i}")))
        .collect();
    put(t, rows);
}

// ---------------------------------------------------------------------------
// Tables

/// A created table exists and is listed. (Thrift2 IDL: `createTable`,
/// `tableExists`, `getTableNamesByPattern`.)
pub fn create_table_then_exists(t: &dyn Target) {
    let tt = ab_table(t, "create_table_then_exists");
    assert!(t.store().table_exists(&tt.name).unwrap());
    assert!(t.store().list_tables().unwrap().contains(&tt.name));
}

/// Creating a table that exists fails with `TableExists`.
/// (HBase: `TableExistsException` from `HMaster.createTable`.)
pub fn create_existing_table_fails(t: &dyn Target) {
    let tt = ab_table(t, "create_existing_table_fails");
    let schema = TableSchema::new(tt.name.clone()).family(FamilySchema::new("a"));
    let err = t.store().create_table(&schema).unwrap_err();
    assert!(
        matches!(err, StoreError::TableExists { ref table } if *table == tt.name),
        "{err}"
    );
}

/// Deleting a table removes it and its rows; a new table of that name starts
/// empty. (Thrift2 IDL: `disableTable` + `deleteTable`.)
pub fn delete_table_removes_data(t: &dyn Target) {
    let tt = ab_table(t, "delete_table_removes_data");
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 1, "v")]);
    t.store().delete_table(&tt.name).unwrap();
    assert!(!t.store().table_exists(&tt.name).unwrap());
    let again = ab_table(t, "delete_table_removes_data");
    assert_eq!(get_cells(&again, Get::new("r")), vec![]);
}

/// Deleting, reading or writing a missing table fails with `TableNotFound`.
/// (HBase: `TableNotFoundException`.)
pub fn missing_table_fails(t: &dyn Target) {
    let name = format!("{}missing_table_fails_never_created", t.table_prefix());
    let s = t.store();
    let _ = s.delete_table(&name);
    assert!(matches!(s.delete_table(&name), Err(StoreError::TableNotFound { .. })));
    assert!(matches!(
        s.get(&name, &Get::new("r")),
        Err(StoreError::TableNotFound { .. })
    ));
    assert!(matches!(
        s.mutate(&name, &[RowMutation::new("r").put("a", "q", "v")]),
        Err(StoreError::TableNotFound { .. })
    ));
    assert!(matches!(
        s.scan(&name, &Scan::all()).map(|_| ()),
        Err(StoreError::TableNotFound { .. })
    ));
    assert!(matches!(s.describe_table(&name), Err(StoreError::TableNotFound { .. })));
}

/// Every family option set at creation is what `describe` reports.
/// (Thrift2 IDL: `TColumnFamilyDescriptor` fields maxVersions, minVersions,
/// timeToLive, blockSize, blockCacheEnabled, inMemory, bloomnFilterType,
/// compressionType.)
pub fn describe_returns_family_options(t: &dyn Target) {
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
    );
    let described = t.store().describe_table(&tt.name).unwrap();
    assert_eq!(described.name, tt.name);
    assert_eq!(described.families, vec![FamilySchema::new("d"), tuned]);
}

/// A family created without options gets HBase 2's defaults: VERSIONS 1,
/// MIN_VERSIONS 0, TTL forever, BLOCKSIZE 65536, BLOCKCACHE true, IN_MEMORY
/// false, BLOOMFILTER ROW, COMPRESSION NONE.
/// (HBase: `ColumnFamilyDescriptorBuilder.DEFAULT_*`.)
pub fn describe_default_family_options(t: &dyn Target) {
    let tt = table(t, "describe_default_family_options", vec![FamilySchema::new("f")]);
    let f = &t.store().describe_table(&tt.name).unwrap().families[0];
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
pub fn describe_sorts_families(t: &dyn Target) {
    let tt = table(
        t,
        "describe_sorts_families",
        vec![FamilySchema::new("z"), FamilySchema::new("a"), FamilySchema::new("m")],
    );
    let names: Vec<String> = t
        .store()
        .describe_table(&tt.name)
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
pub fn invalid_schemas_fail(t: &dyn Target) {
    let name = format!("{}invalid_schemas_fail", t.table_prefix());
    let s = t.store();
    assert!(matches!(
        s.create_table(&TableSchema::new(name.clone())),
        Err(StoreError::InvalidSchema { .. })
    ));
    assert!(matches!(
        s.create_table(&TableSchema::new("bad name!").family(FamilySchema::new("a"))),
        Err(StoreError::InvalidSchema { .. })
    ));
    assert!(matches!(
        s.create_table(&TableSchema::new(name.clone()).family(FamilySchema::new("a:b"))),
        Err(StoreError::InvalidSchema { .. })
    ));
    assert!(!s.table_exists(&name).unwrap());
}

// ---------------------------------------------------------------------------
// Puts and gets

/// A put cell reads back exactly: family, qualifier, timestamp and value.
/// (RG "Data Model": a cell is {row, column, version} -> value.)
pub fn put_then_get(t: &dyn Target) {
    let tt = ab_table(t, "put_then_get");
    put(&tt, vec![RowMutation::new("r1").put_at("a", "name", 100, "Ann")]);
    let row = t.store().get(&tt.name, &Get::new("r1")).unwrap().unwrap();
    assert_eq!(row.row, Bytes::from_static(b"r1"));
    assert_eq!(row.cells, vec![cell("a", "name", 100, "Ann")]);
}

/// A row that was never written reads as nothing.
/// (HBase: `Result.isEmpty()` for a missing row; Thrift2 returns an empty TResult.)
pub fn get_missing_row(t: &dyn Target) {
    let tt = ab_table(t, "get_missing_row");
    assert_eq!(t.store().get(&tt.name, &Get::new("nobody")).unwrap(), None);
}

/// Without a timestamp, a put is stamped with the server's current time in
/// milliseconds, the same for every cell of the mutation.
/// (RG "Versions": "the version is the current time in milliseconds";
/// `HRegion.doMiniBatchMutate` stamps a batch with one `now`.)
pub fn put_default_timestamp_is_now(t: &dyn Target) {
    let tt = ab_table(t, "put_default_timestamp_is_now");
    let before = now_millis();
    put(&tt, vec![RowMutation::new("r").put("a", "x", "1").put("b", "y", "2")]);
    let after = now_millis();
    let cells = get_cells(&tt, Get::new("r"));
    assert_eq!(cells.len(), 2);
    assert_eq!(cells[0].timestamp, cells[1].timestamp);
    // Allow for a server clock a second apart from ours.
    assert!(
        before - 1000 <= cells[0].timestamp && cells[0].timestamp <= after + 1000,
        "{before} <= {} <= {after}",
        cells[0].timestamp
    );
}

/// Cells come sorted by family, then qualifier bytes.
/// (RG "Data Model > Sort Order"; `CellComparatorImpl`.)
pub fn cells_sorted_by_family_and_qualifier(t: &dyn Target) {
    let tt = ab_table(t, "cells_sorted_by_family_and_qualifier");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("b", "z", 1, "5")
                .put_at("a", "y", 1, "3")
                .put_at("b", "a", 1, "4")
                .put_at("a", "Y", 1, "1")
                .put_at("a", "x", 1, "2"),
        ],
    );
    assert_eq!(
        get_cells(&tt, Get::new("r")),
        vec![
            cell("a", "Y", 1, "1"),
            cell("a", "x", 1, "2"),
            cell("a", "y", 1, "3"),
            cell("b", "a", 1, "4"),
            cell("b", "z", 1, "5"),
        ]
    );
}

/// A get of one family returns only that family's cells.
/// (HBase: `Get.addFamily`; Thrift2 `TColumn` without qualifier.)
pub fn get_one_family(t: &dyn Target) {
    let tt = ab_table(t, "get_one_family");
    put(
        &tt,
        vec![RowMutation::new("r").put_at("a", "x", 1, "1").put_at("b", "y", 1, "2")],
    );
    assert_eq!(get_cells(&tt, Get::new("r").family("b")), vec![cell("b", "y", 1, "2")]);
}

/// A get of chosen columns returns only those columns.
/// (HBase: `Get.addColumn`; Thrift2 `TColumn` with qualifier.)
pub fn get_chosen_columns(t: &dyn Target) {
    let tt = ab_table(t, "get_chosen_columns");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "x", 1, "1")
                .put_at("a", "y", 1, "2")
                .put_at("b", "z", 1, "3"),
        ],
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").column("a", "y").column("b", "z")),
        vec![cell("a", "y", 1, "2"), cell("b", "z", 1, "3")]
    );
}

/// A get selecting a row's columns that do not exist reads as nothing.
pub fn get_absent_column(t: &dyn Target) {
    let tt = ab_table(t, "get_absent_column");
    put(&tt, vec![RowMutation::new("r").put_at("a", "x", 1, "1")]);
    assert_eq!(
        t.store().get(&tt.name, &Get::new("r").column("a", "nope")).unwrap(),
        None
    );
}

/// Naming a family the table does not have is an error, for reads and writes.
/// (HBase: `NoSuchColumnFamilyException` from `HRegion.checkFamily`.)
pub fn unknown_family_fails(t: &dyn Target) {
    let tt = ab_table(t, "unknown_family_fails");
    let s = t.store();
    assert!(matches!(
        s.get(&tt.name, &Get::new("r").family("zz")),
        Err(StoreError::NoSuchFamily { ref family, .. }) if family == "zz"
    ));
    assert!(matches!(
        s.mutate(&tt.name, &[RowMutation::new("r").put("zz", "q", "v")]),
        Err(StoreError::NoSuchFamily { .. })
    ));
    assert!(matches!(
        s.scan(&tt.name, &Scan::all().family("zz")).map(|_| ()),
        Err(StoreError::NoSuchFamily { .. })
    ));
}

/// A batch with a refused row writes none of its rows.
/// (hmap's contract: every row is checked before any is written.)
pub fn refused_batch_writes_nothing(t: &dyn Target) {
    let tt = ab_table(t, "refused_batch_writes_nothing");
    let err = t
        .store()
        .mutate(
            &tt.name,
            &[
                RowMutation::new("good").put_at("a", "q", 1, "v"),
                RowMutation::new("bad").put_at("zz", "q", 1, "v"),
            ],
        )
        .unwrap_err();
    assert!(matches!(err, StoreError::NoSuchFamily { .. }), "{err}");
    assert_eq!(scan_rows(&tt, Scan::all()), vec![]);
}

/// A batch applies its rows in order: of two puts to one cell at one
/// timestamp the later wins, a delete row removes what earlier rows wrote,
/// and a row mixing puts and deletes is applied as a whole.
/// (RG "Versions": a put at an existing timestamp overwrites it;
/// `Table.batch` leaves the order of two actions on one row undefined, so a
/// backend must not send them in one batch.)
pub fn batch_applies_rows_in_order(t: &dyn Target) {
    let tt = ab_table(t, "batch_applies_rows_in_order");
    put(
        &tt,
        vec![
            RowMutation::new("r1").put_at("a", "q", 1, "first"),
            RowMutation::new("r2")
                .put_at("a", "q", 1, "x")
                .put_at("a", "q", 2, "x2"),
            RowMutation::new("r1").put_at("a", "q", 1, "second"),
            RowMutation::new("r2").delete_version("a", "q", 2),
            RowMutation::new("r4").delete_row(),
            RowMutation::new("r3")
                .put_at("a", "q", 1, "m")
                .put_at("b", "q", 1, "n")
                .delete_family_up_to("b", 1),
            RowMutation::new("r5"),
        ],
    );
    let rows = scan_rows(&tt, Scan::all().max_versions(3));
    let got: Vec<(Bytes, Vec<Cell>)> = rows.into_iter().map(|r| (r.row, r.cells)).collect();
    assert_eq!(
        got,
        vec![
            (Bytes::from("r1"), vec![cell("a", "q", 1, "second")]),
            (Bytes::from("r2"), vec![cell("a", "q", 1, "x")]),
            (Bytes::from("r3"), vec![cell("a", "q", 1, "m")]),
        ]
    );
}

/// Empty qualifiers and empty values are legal.
/// (RG "Data Model": a qualifier is any byte array, possibly empty.)
pub fn empty_qualifier_and_value(t: &dyn Target) {
    let tt = ab_table(t, "empty_qualifier_and_value");
    put(
        &tt,
        vec![RowMutation::new("r").put_at("a", "", 1, "v").put_at("a", "e", 1, "")],
    );
    assert_eq!(
        get_cells(&tt, Get::new("r")),
        vec![cell("a", "", 1, "v"), cell("a", "e", 1, "")]
    );
}

/// Rows, qualifiers and values are raw bytes, 0x00 and 0xFF included, and
/// rows sort by unsigned bytes. (RG "Rows": "sorted lexicographically by row
/// key", `Bytes.compareTo` is unsigned.)
pub fn binary_bytes_round_trip(t: &dyn Target) {
    let tt = ab_table(t, "binary_bytes_round_trip");
    let row_ff = Bytes::from_static(b"\xff\x00r");
    let row_00 = Bytes::from_static(b"\x00\xffr");
    let qualifier = Bytes::from_static(b"\x00q\xff");
    let value = Bytes::from_static(b"\xff\x00\x01");
    put(
        &tt,
        vec![
            RowMutation::new(row_ff.clone()).put_at("a", qualifier.clone(), 1, value.clone()),
            RowMutation::new(row_00.clone()).put_at("a", "q", 1, "v"),
        ],
    );
    let got = get_cells(&tt, Get::new(row_ff.clone()));
    assert_eq!(got, vec![Cell::new(Bytes::from_static(b"a"), qualifier, 1, value)]);
    assert_eq!(scan_keys(&tt, Scan::all()), vec![row_00, row_ff]);
}

/// An empty row key is refused. (HBase: `Mutation.checkRow`, "Row length is 0".)
pub fn empty_row_rejected(t: &dyn Target) {
    let tt = ab_table(t, "empty_row_rejected");
    let err = t
        .store()
        .mutate(&tt.name, &[RowMutation::new("").put("a", "q", "v")])
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidRow { .. }), "{err}");
}

/// The longest row key a table can hold is accepted, one byte longer is
/// refused: 32767 less the table name and 16. (HBase:
/// `HConstants.MAX_ROW_LENGTH = Short.MAX_VALUE`, `Mutation.checkRow`; the
/// client's region lookup builds the `hbase:meta` key
/// `<table>,<row>,99999999999999` in `ConnectionImplementation.locateRegionInMeta`
/// and refuses it past 32767 bytes.)
pub fn row_length_limit(t: &dyn Target) {
    let tt = ab_table(t, "row_length_limit");
    let limit = max_row_length(&tt.name);
    assert_eq!(limit, MAX_ROW_LENGTH - tt.name.len() - 16);
    let longest = Bytes::from(vec![b'k'; limit]);
    put(&tt, vec![RowMutation::new(longest.clone()).put_at("a", "q", 1, "v")]);
    assert_eq!(get_cells(&tt, Get::new(longest)), vec![cell("a", "q", 1, "v")]);
    let err = t
        .store()
        .mutate(&tt.name, &[RowMutation::new(vec![b'k'; limit + 1]).put("a", "q", "v")])
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidRow { .. }), "{err}");
}

/// A value over the cell size limit is refused and nothing is written.
/// (HBase: `hbase.client.keyvalue.maxsize`, 10 MiB, checked in
/// `ConnectionUtils.validatePut`.)
pub fn oversized_value_rejected(t: &dyn Target) {
    let tt = ab_table(t, "oversized_value_rejected");
    let limit = t.max_value_size();
    let err = t
        .store()
        .mutate(&tt.name, &[RowMutation::new("r").put("a", "q", vec![0u8; limit + 1])])
        .unwrap_err();
    assert!(
        matches!(err, StoreError::CellTooLarge { size, limit: l, .. } if size > limit && l == limit),
        "{err}"
    );
    assert_eq!(get_cells(&tt, Get::new("r")), vec![]);
}

/// Timestamps are non-negative. (HBase: `Put.addColumn`, "Timestamp cannot
/// be negative".)
pub fn negative_timestamp_rejected(t: &dyn Target) {
    let tt = ab_table(t, "negative_timestamp_rejected");
    let err = t
        .store()
        .mutate(&tt.name, &[RowMutation::new("r").put_at("a", "q", -1, "v")])
        .unwrap_err();
    assert!(
        matches!(err, StoreError::NegativeTimestamp { timestamp: -1, .. }),
        "{err}"
    );
}

/// `get_many` answers each get in order, `None` for missing rows.
/// (Thrift2 IDL: `getMultiple` returns one TResult per TGet, in order.)
pub fn get_many_in_order(t: &dyn Target) {
    let tt = ab_table(t, "get_many_in_order");
    put(
        &tt,
        vec![
            RowMutation::new("r1").put_at("a", "q", 1, "1"),
            RowMutation::new("r3").put_at("a", "q", 1, "3"),
        ],
    );
    let got = t
        .store()
        .get_many(&tt.name, &[Get::new("r3"), Get::new("r2"), Get::new("r1")])
        .unwrap();
    let values: Vec<Option<Vec<Cell>>> = got.into_iter().map(|r| r.map(|r| r.cells)).collect();
    assert_eq!(
        values,
        vec![
            Some(vec![cell("a", "q", 1, "3")]),
            None,
            Some(vec![cell("a", "q", 1, "1")])
        ]
    );
}

// ---------------------------------------------------------------------------
// Versions

/// Reads return at most the family's VERSIONS, newest first, however many
/// are asked for. (RG "Versions": "max versions"; `ScanQueryMatcher` uses
/// `min(scan.getMaxVersions(), family.getMaxVersions())`.)
pub fn versions_capped_by_family(t: &dyn Target) {
    let tt = ab_table(t, "versions_capped_by_family");
    let mut m = RowMutation::new("r");
    for ts in 1..=5 {
        m = m.put_at("a", "q", ts, format!("v{ts}"));
    }
    put(&tt, vec![m]);
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(10)),
        vec![
            cell("a", "q", 5, "v5"),
            cell("a", "q", 4, "v4"),
            cell("a", "q", 3, "v3")
        ]
    );
}

/// A get asks for fewer versions than the family keeps.
/// (HBase: `Get.readVersions`.)
pub fn get_fewer_versions(t: &dyn Target) {
    let tt = ab_table(t, "get_fewer_versions");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "v1")
                .put_at("a", "q", 2, "v2")
                .put_at("a", "q", 3, "v3"),
        ],
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(2)),
        vec![cell("a", "q", 3, "v3"), cell("a", "q", 2, "v2")]
    );
}

/// By default a get returns the newest version only. (RG "Versions > Get":
/// "by default only the latest version is returned".)
pub fn get_latest_by_default(t: &dyn Target) {
    let tt = ab_table(t, "get_latest_by_default");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "old")
                .put_at("a", "q", 2, "new"),
        ],
    );
    assert_eq!(get_cells(&tt, Get::new("r")), vec![cell("a", "q", 2, "new")]);
}

/// Two puts at the same timestamp leave one version: the later write.
/// (RG "Versions": "doing a put always creates a new version ... at the same
/// version overwrites"; column trackers skip `sameAsPreviousTSAndType`.)
pub fn same_timestamp_overwrites(t: &dyn Target) {
    let tt = ab_table(t, "same_timestamp_overwrites");
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 7, "first")]);
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 7, "second")]);
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)),
        vec![cell("a", "q", 7, "second")]
    );
}

/// A put with an older timestamp does not become the latest version.
/// (RG "Versions": versions are sorted by timestamp, not by write order.)
pub fn older_put_is_not_latest(t: &dyn Target) {
    let tt = ab_table(t, "older_put_is_not_latest");
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 200, "new")]);
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 100, "old")]);
    assert_eq!(get_cells(&tt, Get::new("r")), vec![cell("a", "q", 200, "new")]);
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)),
        vec![cell("a", "q", 200, "new"), cell("a", "q", 100, "old")]
    );
}

/// A family kept at VERSIONS=1000 (the seeds' weibo inbox) returns a
/// thousand versions, newest first. (RG "Versions".)
pub fn thousand_versions(t: &dyn Target) {
    let tt = table(t, "thousand_versions", vec![FamilySchema::new("i").versions(1000)]);
    let mut m = RowMutation::new("inbox");
    for ts in 1..=1100 {
        m = m.put_at("i", "sq", ts, format!("w{ts}"));
    }
    put(&tt, vec![m]);
    let cells = get_cells(&tt, Get::new("inbox").max_versions(1000));
    assert_eq!(cells.len(), 1000);
    assert_eq!(cells[0], cell("i", "sq", 1100, "w1100"));
    assert_eq!(cells[999], cell("i", "sq", 101, "w101"));
    assert!(cells.windows(2).all(|w| w[0].timestamp > w[1].timestamp));
}

// ---------------------------------------------------------------------------
// Time ranges

/// A time range `[min, max)` includes min and excludes max.
/// (HBase: `TimeRange`, "minStamp inclusive, maxStamp exclusive"; Thrift2 `TTimeRange`.)
pub fn time_range_is_half_open(t: &dyn Target) {
    let tt = ab_table(t, "time_range_is_half_open");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 10, "10")
                .put_at("a", "q", 20, "20")
                .put_at("a", "q", 30, "30"),
        ],
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3).time_range(TimeRange::new(10, 30))),
        vec![cell("a", "q", 20, "20"), cell("a", "q", 10, "10")]
    );
}

/// Versions are counted inside the time range: the newest N in range.
/// (HBase: `UserScanQueryMatcher` skips cells outside the range before the
/// column tracker counts versions.)
pub fn time_range_then_versions(t: &dyn Target) {
    let tt = ab_table(t, "time_range_then_versions");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 10, "10")
                .put_at("a", "q", 20, "20")
                .put_at("a", "q", 30, "30"),
        ],
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").time_range(TimeRange::new(0, 25))),
        vec![cell("a", "q", 20, "20")]
    );
}

/// One exact timestamp reads that version only. (HBase: `Get.setTimestamp`.)
pub fn exact_timestamp(t: &dyn Target) {
    let tt = ab_table(t, "exact_timestamp");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 10, "10")
                .put_at("a", "q", 20, "20"),
        ],
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").time_range(TimeRange::at(10))),
        vec![cell("a", "q", 10, "10")]
    );
}

/// A range that holds no version reads as nothing.
pub fn time_range_without_versions(t: &dyn Target) {
    let tt = ab_table(t, "time_range_without_versions");
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 10, "10")]);
    assert_eq!(
        t.store()
            .get(&tt.name, &Get::new("r").time_range(TimeRange::new(11, 20)))
            .unwrap(),
        None
    );
}

// ---------------------------------------------------------------------------
// Deletes

/// Deleting the latest version of a column reveals the one before.
/// (HBase: `Delete.addColumn` without timestamp; RG "Delete": "Delete the
/// latest version of the specified column".)
pub fn delete_latest_reveals_previous(t: &dyn Target) {
    let tt = ab_table(t, "delete_latest_reveals_previous");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 100, "v1")
                .put_at("a", "q", 200, "v2"),
        ],
    );
    put(&tt, vec![RowMutation::new("r").delete_latest("a", "q")]);
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)),
        vec![cell("a", "q", 100, "v1")]
    );
}

/// Deleting a column's only version leaves no cell.
/// (HBase: `HRegion.updateDeleteLatestVersionTimestamp` stamps the marker
/// with the newest version's timestamp.)
pub fn delete_latest_of_single_version(t: &dyn Target) {
    let tt = ab_table(t, "delete_latest_of_single_version");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("b", "q", 100, "v")
                .put_at("b", "k", 100, "keep"),
        ],
    );
    put(&tt, vec![RowMutation::new("r").delete_latest("b", "q")]);
    assert_eq!(get_cells(&tt, Get::new("r")), vec![cell("b", "k", 100, "keep")]);
}

/// Deleting one version by timestamp leaves the others.
/// (HBase: `Delete.addColumn(family, qualifier, ts)`, type `Delete`.)
pub fn delete_one_version(t: &dyn Target) {
    let tt = ab_table(t, "delete_one_version");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "v1")
                .put_at("a", "q", 2, "v2")
                .put_at("a", "q", 3, "v3"),
        ],
    );
    put(&tt, vec![RowMutation::new("r").delete_version("a", "q", 2)]);
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)),
        vec![cell("a", "q", 3, "v3"), cell("a", "q", 1, "v1")]
    );
}

/// Deleting a column removes all its versions.
/// (HBase: `Delete.addColumns`, type `DeleteColumn`.)
pub fn delete_column_all_versions(t: &dyn Target) {
    let tt = ab_table(t, "delete_column_all_versions");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "v1")
                .put_at("a", "q", 2, "v2")
                .put_at("a", "other", 1, "o"),
        ],
    );
    put(&tt, vec![RowMutation::new("r").delete_column("a", "q")]);
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)),
        vec![cell("a", "other", 1, "o")]
    );
}

/// Deleting a column up to a timestamp keeps the newer versions.
/// (HBase: `Delete.addColumns(family, qualifier, ts)`: "all versions with a
/// timestamp less than or equal to ts".)
pub fn delete_column_up_to(t: &dyn Target) {
    let tt = ab_table(t, "delete_column_up_to");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "v1")
                .put_at("a", "q", 2, "v2")
                .put_at("a", "q", 3, "v3"),
        ],
    );
    put(&tt, vec![RowMutation::new("r").delete_column_up_to("a", "q", 2)]);
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)),
        vec![cell("a", "q", 3, "v3")]
    );
}

/// Deleting a family removes its cells and leaves the other families.
/// (HBase: `Delete.addFamily`, type `DeleteFamily`.)
pub fn delete_family(t: &dyn Target) {
    let tt = ab_table(t, "delete_family");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "x", 1, "1")
                .put_at("a", "y", 1, "2")
                .put_at("b", "z", 1, "3"),
        ],
    );
    put(&tt, vec![RowMutation::new("r").delete_family("a")]);
    assert_eq!(get_cells(&tt, Get::new("r")), vec![cell("b", "z", 1, "3")]);
}

/// Deleting a family up to a timestamp keeps newer cells.
/// (HBase: `Delete.addFamily(family, ts)`.)
pub fn delete_family_up_to(t: &dyn Target) {
    let tt = ab_table(t, "delete_family_up_to");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "x", 5, "old")
                .put_at("a", "edge", 10, "at the marker")
                .put_at("a", "y", 15, "new"),
        ],
    );
    put(&tt, vec![RowMutation::new("r").delete_family_up_to("a", 10)]);
    assert_eq!(get_cells(&tt, Get::new("r")), vec![cell("a", "y", 15, "new")]);
}

/// Deleting a row removes every family's cells.
/// (HBase: `new Delete(row)`: a DeleteFamily marker for each family.)
pub fn delete_row(t: &dyn Target) {
    let tt = ab_table(t, "delete_row");
    put(
        &tt,
        vec![
            RowMutation::new("r").put_at("a", "x", 1, "1").put_at("b", "y", 1, "2"),
            RowMutation::new("s").put_at("a", "x", 1, "keep"),
        ],
    );
    put(&tt, vec![RowMutation::new("r").delete_row()]);
    assert_eq!(t.store().get(&tt.name, &Get::new("r")).unwrap(), None);
    assert_eq!(scan_keys(&tt, Scan::all()), keys(&["s"]));
}

/// A delete marker also hides a put written *after* it with an older
/// timestamp. (RG "Deletes mask Puts": "Deletes mask Puts, even Puts that
/// happened after the Delete was entered", until a major compaction.)
pub fn delete_masks_later_older_put(t: &dyn Target) {
    let tt = ab_table(t, "delete_masks_later_older_put");
    put(&tt, vec![RowMutation::new("r").delete_column_up_to("a", "q", 100)]);
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 50, "hidden")]);
    assert_eq!(t.store().get(&tt.name, &Get::new("r")).unwrap(), None);
}

/// A put with a timestamp newer than the delete is visible.
/// (RG "Deletes mask Puts": only versions at or below the marker are masked.)
pub fn newer_put_after_delete_visible(t: &dyn Target) {
    let tt = ab_table(t, "newer_put_after_delete_visible");
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 50, "old")]);
    put(&tt, vec![RowMutation::new("r").delete_column_up_to("a", "q", 100)]);
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 150, "new")]);
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)),
        vec![cell("a", "q", 150, "new")]
    );
}

/// A default-timestamp delete hides what is there and not a later
/// default-timestamp put (a later millisecond).
/// (RG "Deletes mask Puts": a put after the delete's time is visible.)
pub fn delete_then_put_again(t: &dyn Target) {
    let tt = ab_table(t, "delete_then_put_again");
    put(&tt, vec![RowMutation::new("r").put("b", "q", "one")]);
    put(&tt, vec![RowMutation::new("r").delete_column("b", "q")]);
    // A later millisecond than the delete's.
    thread::sleep(std::time::Duration::from_millis(5));
    put(&tt, vec![RowMutation::new("r").put("b", "q", "two")]);
    let cells = get_cells(&tt, Get::new("r"));
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0].value, Bytes::from_static(b"two"));
}

/// Deleting from a row that does not exist is harmless.
/// (HBase: deletes are markers; no existence check.)
pub fn delete_missing_row_harmless(t: &dyn Target) {
    let tt = ab_table(t, "delete_missing_row_harmless");
    put(&tt, vec![RowMutation::new("ghost").delete_row()]);
    put(&tt, vec![RowMutation::new("ghost2").delete_column("a", "q")]);
    assert_eq!(scan_rows(&tt, Scan::all()), vec![]);
}

/// One row mutation deletes one column and writes another, atomically.
/// (Thrift2 IDL: `mutateRow(TRowMutations)`, "atomically".)
pub fn delete_and_put_in_one_mutation(t: &dyn Target) {
    let tt = ab_table(t, "delete_and_put_in_one_mutation");
    put(&tt, vec![RowMutation::new("r").put_at("a", "old", 1, "x")]);
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .delete_column("a", "old")
                .put_at("a", "new", 2, "y"),
        ],
    );
    assert_eq!(get_cells(&tt, Get::new("r")), vec![cell("a", "new", 2, "y")]);
}

// ---------------------------------------------------------------------------
// TTL and MIN_VERSIONS

/// Cells older than the family's TTL are not returned; fresh ones are.
/// (RG "Time To Live (TTL)": "expired rows ... are not returned".)
pub fn ttl_hides_expired(t: &dyn Target) {
    let tt = table(t, "ttl_hides_expired", vec![FamilySchema::new("t").ttl_secs(60)]);
    let now = now_millis();
    put(
        &tt,
        vec![
            RowMutation::new("old").put_at("t", "q", now - 3_600_000, "stale"),
            RowMutation::new("new").put_at("t", "q", now, "fresh"),
        ],
    );
    assert_eq!(t.store().get(&tt.name, &Get::new("old")).unwrap(), None);
    assert_eq!(get_cells(&tt, Get::new("new")), vec![cell("t", "q", now, "fresh")]);
    assert_eq!(scan_keys(&tt, Scan::all()), keys(&["new"]));
}

/// With MIN_VERSIONS, the newest versions outlive the TTL.
/// (RG "Minimum Number of Versions": "keep at least MIN_VERSIONS ... even if
/// older than TTL"; `ScanWildcardColumnTracker.checkVersion`.) A read that
/// names the column gets one expired version more, until a major
/// compaction: see `min_versions_named_column_keeps_one_expired`.
pub fn min_versions_outlive_ttl(t: &dyn Target) {
    let tt = table(
        t,
        "min_versions_outlive_ttl",
        vec![FamilySchema::new("t").versions(5).min_versions(1).ttl_secs(60)],
    );
    let now = now_millis();
    put(
        &tt,
        vec![RowMutation::new("r").put_at("t", "q", now - 7_200_000, "older").put_at(
            "t",
            "q",
            now - 3_600_000,
            "newest",
        )],
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(5)),
        vec![cell("t", "q", now - 3_600_000, "newest")]
    );
}

/// Fresh versions count towards MIN_VERSIONS: with MIN_VERSIONS 2 and one
/// fresh version, one expired version is still returned, not two.
/// (`ScanWildcardColumnTracker.checkVersion`: keep if `count <= minVersions
/// || !isExpired(ts)`.)
pub fn min_versions_count_fresh_versions(t: &dyn Target) {
    let tt = table(
        t,
        "min_versions_count_fresh_versions",
        vec![FamilySchema::new("t").versions(5).min_versions(2).ttl_secs(60)],
    );
    let now = now_millis();
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("t", "q", now, "fresh")
                .put_at("t", "q", now - 3_600_000, "old1")
                .put_at("t", "q", now - 7_200_000, "old2"),
        ],
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(5)),
        vec![cell("t", "q", now, "fresh"), cell("t", "q", now - 3_600_000, "old1")]
    );
}

// ---------------------------------------------------------------------------
// Scans

/// A full scan returns every row in key order, each with its cells.
/// (RG "Scans"; rows sorted by key.)
pub fn scan_all_in_order(t: &dyn Target) {
    let tt = ab_table(t, "scan_all_in_order");
    put(
        &tt,
        vec![
            RowMutation::new("c").put_at("a", "q", 1, "3"),
            RowMutation::new("a").put_at("a", "q", 1, "1").put_at("b", "z", 1, "1b"),
            RowMutation::new("b").put_at("a", "q", 1, "2"),
        ],
    );
    let rows = scan_rows(&tt, Scan::all());
    assert_eq!(
        rows,
        vec![
            RowResult::new(
                Bytes::from_static(b"a"),
                vec![cell("a", "q", 1, "1"), cell("b", "z", 1, "1b")]
            ),
            RowResult::new(Bytes::from_static(b"b"), vec![cell("a", "q", 1, "2")]),
            RowResult::new(Bytes::from_static(b"c"), vec![cell("a", "q", 1, "3")]),
        ]
    );
}

/// Start row is inclusive, stop row exclusive.
/// (HBase: `Scan.withStartRow` inclusive, `withStopRow` exclusive by default.)
pub fn scan_range_bounds(t: &dyn Target) {
    let tt = ab_table(t, "scan_range_bounds");
    numbered_rows(&tt, 6);
    assert_eq!(
        scan_keys(&tt, Scan::range("r001", "r004")),
        keys(&["r001", "r002", "r003"])
    );
    assert_eq!(scan_keys(&tt, Scan::range("r004", "")), keys(&["r004", "r005"]));
}

/// A prefix scan returns exactly the rows that start with the prefix: a
/// partial row scan. (HBase: `Scan.setRowPrefixFilter`.)
pub fn scan_prefix(t: &dyn Target) {
    let tt = ab_table(t, "scan_prefix");
    put(
        &tt,
        ["u1", "u1_a", "u1_b", "u10", "u2", "u0"]
            .iter()
            .map(|k| RowMutation::new(*k).put_at("a", "q", 1, "v"))
            .collect(),
    );
    assert_eq!(scan_keys(&tt, Scan::prefix("u1_")), keys(&["u1_a", "u1_b"]));
    assert_eq!(scan_keys(&tt, Scan::prefix("u1")), keys(&["u1", "u10", "u1_a", "u1_b"]));
}

/// A prefix ending in 0xFF bytes still bounds the scan correctly.
/// (HBase: `ClientUtil.calculateTheClosestNextRowKeyForPrefix` skips 0xFF.)
pub fn scan_prefix_with_ff(t: &dyn Target) {
    let tt = ab_table(t, "scan_prefix_with_ff");
    let rows: [&[u8]; 5] = [b"a\xff", b"a\xff\x00", b"a\xff\xff", b"b", b"a\xfe"];
    put(
        &tt,
        rows.iter()
            .map(|k| RowMutation::new(Bytes::copy_from_slice(k)).put_at("a", "q", 1, "v"))
            .collect(),
    );
    let got = scan_keys(&tt, Scan::prefix(Bytes::from_static(b"a\xff")));
    let expected: Vec<Bytes> = [&b"a\xff"[..], b"a\xff\x00", b"a\xff\xff"]
        .iter()
        .map(|k| Bytes::copy_from_slice(k))
        .collect();
    assert_eq!(got, expected);
}

/// A reversed scan returns rows last first.
/// (HBase: `Scan.setReversed`; Thrift2 `TScan.reversed`.)
pub fn scan_reversed(t: &dyn Target) {
    let tt = ab_table(t, "scan_reversed");
    numbered_rows(&tt, 4);
    assert_eq!(
        scan_keys(&tt, Scan::all().reversed()),
        keys(&["r003", "r002", "r001", "r000"])
    );
}

/// A reversed scan over a range keeps the range's bounds (start inclusive,
/// stop exclusive) and reads it last first.
pub fn scan_reversed_range(t: &dyn Target) {
    let tt = ab_table(t, "scan_reversed_range");
    numbered_rows(&tt, 6);
    assert_eq!(
        scan_keys(&tt, Scan::range("r001", "r004").reversed()),
        keys(&["r003", "r002", "r001"])
    );
}

/// A reversed prefix scan returns the prefix's rows last first: the newest
/// first when the key ends in a timestamp.
pub fn scan_reversed_prefix(t: &dyn Target) {
    let tt = ab_table(t, "scan_reversed_prefix");
    put(
        &tt,
        ["p1", "p1_1", "p1_2", "p2_1", "p0"]
            .iter()
            .map(|k| RowMutation::new(*k).put_at("a", "q", 1, "v"))
            .collect(),
    );
    assert_eq!(
        scan_keys(&tt, Scan::prefix("p1").reversed()),
        keys(&["p1_2", "p1_1", "p1"])
    );
}

/// A limit stops the scan after that many rows.
/// (HBase: `Scan.setLimit`; Thrift2 `TScan.limit`.)
pub fn scan_limit(t: &dyn Target) {
    let tt = ab_table(t, "scan_limit");
    numbered_rows(&tt, 10);
    assert_eq!(scan_keys(&tt, Scan::all().limit(3)), keys(&["r000", "r001", "r002"]));
    assert_eq!(scan_keys(&tt, Scan::all().reversed().limit(2)), keys(&["r009", "r008"]));
}

/// Small batch sizes return the same rows as one big batch.
/// (HBase: `Scan.setCaching` changes round trips, not results.)
pub fn scan_batch_sizes_agree(t: &dyn Target) {
    let tt = ab_table(t, "scan_batch_sizes_agree");
    numbered_rows(&tt, 25);
    let all = scan_keys(&tt, Scan::all());
    assert_eq!(all.len(), 25);
    for batch in [1, 2, 7, 25, 1000] {
        assert_eq!(scan_keys(&tt, Scan::all().batch_size(batch)), all, "batch {batch}");
        assert_eq!(
            scan_keys(&tt, Scan::all().batch_size(batch).limit(11)),
            all[..11].to_vec()
        );
    }
}

/// A scan of chosen columns returns only them, and skips rows that have none.
/// (HBase: `Scan.addColumn`; rows with no matching cell are not returned.)
pub fn scan_chosen_columns(t: &dyn Target) {
    let tt = ab_table(t, "scan_chosen_columns");
    put(
        &tt,
        vec![
            RowMutation::new("r1").put_at("a", "x", 1, "1").put_at("b", "y", 1, "2"),
            RowMutation::new("r2").put_at("a", "x", 1, "3"),
            RowMutation::new("r3").put_at("b", "y", 1, "4"),
        ],
    );
    let rows = scan_rows(&tt, Scan::all().column("b", "y"));
    assert_eq!(
        rows,
        vec![
            RowResult::new(Bytes::from_static(b"r1"), vec![cell("b", "y", 1, "2")]),
            RowResult::new(Bytes::from_static(b"r3"), vec![cell("b", "y", 1, "4")]),
        ]
    );
}

/// A scan with a time range returns only cells in range, and skips rows
/// with none. (HBase: `Scan.setTimeRange`.)
pub fn scan_time_range(t: &dyn Target) {
    let tt = ab_table(t, "scan_time_range");
    put(
        &tt,
        vec![
            RowMutation::new("r1").put_at("a", "q", 10, "early"),
            RowMutation::new("r2")
                .put_at("a", "q", 20, "mid")
                .put_at("a", "q", 30, "late"),
        ],
    );
    let rows = scan_rows(&tt, Scan::all().time_range(TimeRange::new(15, 25)));
    assert_eq!(
        rows,
        vec![RowResult::new(
            Bytes::from_static(b"r2"),
            vec![cell("a", "q", 20, "mid")]
        )]
    );
}

/// A scan returns several versions per column when asked.
/// (HBase: `Scan.readVersions`; Thrift2 `TScan.maxVersions`.)
pub fn scan_max_versions(t: &dyn Target) {
    let tt = ab_table(t, "scan_max_versions");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "1")
                .put_at("a", "q", 2, "2")
                .put_at("a", "q", 3, "3"),
        ],
    );
    let rows = scan_rows(&tt, Scan::all().max_versions(2));
    assert_eq!(rows[0].cells, vec![cell("a", "q", 3, "3"), cell("a", "q", 2, "2")]);
}

/// Deleted rows do not appear in scans.
pub fn scan_skips_deleted_rows(t: &dyn Target) {
    let tt = ab_table(t, "scan_skips_deleted_rows");
    numbered_rows(&tt, 4);
    put(
        &tt,
        vec![
            RowMutation::new("r001").delete_row(),
            RowMutation::new("r002").delete_family("b"),
        ],
    );
    assert_eq!(scan_keys(&tt, Scan::all()), keys(&["r000", "r003"]));
}

/// Scanning an empty table, or an empty range, yields nothing.
pub fn scan_empty(t: &dyn Target) {
    let tt = ab_table(t, "scan_empty");
    assert_eq!(scan_rows(&tt, Scan::all()), vec![]);
    numbered_rows(&tt, 3);
    assert_eq!(scan_rows(&tt, Scan::range("x", "y")), vec![]);
    assert_eq!(scan_rows(&tt, Scan::prefix("zzz")), vec![]);
}

/// A scanner reads the table as it was when it was opened: rows written
/// while it runs, past its first batch, are not returned.
/// (HBase: a region scanner reads at the MVCC read point of its opening,
/// `HRegion.RegionScannerImpl`; one region here.)
pub fn scanner_reads_at_open(t: &dyn Target) {
    let tt = ab_table(t, "scanner_reads_at_open");
    numbered_rows(&tt, 4);
    let mut scanner = t.store().scan(&tt.name, &Scan::all().batch_size(1)).unwrap();
    let first = scanner.next().unwrap().unwrap();
    assert_eq!(first.row, Bytes::from_static(b"r000"));
    put(&tt, vec![RowMutation::new("r002a").put_at("b", "q", 1, "late")]);
    let rest: Vec<Bytes> = scanner.map(|r| r.unwrap().row).collect();
    assert_eq!(rest, keys(&["r001", "r002", "r003"]));
}

/// Dropping a scanner before its end releases it.
/// (Thrift2 IDL: `closeScanner`.)
pub fn scanner_released_on_drop(t: &dyn Target) {
    let tt = ab_table(t, "scanner_released_on_drop");
    numbered_rows(&tt, 5);
    let before = t.open_scanners();
    {
        let mut scanner = t.store().scan(&tt.name, &Scan::all().batch_size(2)).unwrap();
        assert!(scanner.next().is_some());
        if let (Some(b), Some(during)) = (before, t.open_scanners()) {
            assert_eq!(during, b + 1);
        }
    }
    assert_eq!(t.open_scanners(), before);
}

// ---------------------------------------------------------------------------
// Check-and-mutate

/// The mutation applies when the column holds the expected value.
/// (HBase: `Table.checkAndMutate(...).ifEquals`; Thrift2 `checkAndPut`.)
pub fn check_and_put_when_equal(t: &dyn Target) {
    let tt = ab_table(t, "check_and_put_when_equal");
    put(&tt, vec![RowMutation::new("r").put_at("b", "ver", 1, "1")]);
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(
                RowMutation::new("r")
                    .put_at("b", "ver", 2, "2")
                    .put_at("b", "data", 2, "new"),
                "b",
                "ver",
                Some(Bytes::from_static(b"1")),
            ),
        )
        .unwrap();
    assert!(applied);
    assert_eq!(
        get_cells(&tt, Get::new("r")),
        vec![cell("b", "data", 2, "new"), cell("b", "ver", 2, "2")]
    );
}

/// The mutation is skipped when the value differs, and nothing is written.
pub fn check_and_put_when_different(t: &dyn Target) {
    let tt = ab_table(t, "check_and_put_when_different");
    put(&tt, vec![RowMutation::new("r").put_at("b", "ver", 1, "1")]);
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(
                RowMutation::new("r").put_at("b", "data", 2, "new"),
                "b",
                "ver",
                Some(Bytes::from_static(b"0")),
            ),
        )
        .unwrap();
    assert!(!applied);
    assert_eq!(get_cells(&tt, Get::new("r")), vec![cell("b", "ver", 1, "1")]);
}

/// Expecting absence passes for a missing column, creating the row.
/// (HBase: `checkAndMutate(...).ifNotExists()`; Thrift2 `checkAndPut` with
/// no value: "the value is expected to be absent".)
pub fn check_absent_when_missing(t: &dyn Target) {
    let tt = ab_table(t, "check_absent_when_missing");
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(RowMutation::new("r").put_at("b", "lock", 1, "me"), "b", "lock", None),
        )
        .unwrap();
    assert!(applied);
    assert_eq!(get_cells(&tt, Get::new("r")), vec![cell("b", "lock", 1, "me")]);
}

/// Expecting absence fails when the column is there.
pub fn check_absent_when_present(t: &dyn Target) {
    let tt = ab_table(t, "check_absent_when_present");
    put(&tt, vec![RowMutation::new("r").put_at("b", "lock", 1, "them")]);
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(RowMutation::new("r").put_at("b", "lock", 2, "me"), "b", "lock", None),
        )
        .unwrap();
    assert!(!applied);
    assert_eq!(get_cells(&tt, Get::new("r")), vec![cell("b", "lock", 1, "them")]);
}

/// A check can guard a delete. (Thrift2 IDL: `checkAndDelete`.)
pub fn check_and_delete(t: &dyn Target) {
    let tt = ab_table(t, "check_and_delete");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("b", "state", 1, "done")
                .put_at("b", "data", 1, "x"),
        ],
    );
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(
                RowMutation::new("r").delete_column("b", "data"),
                "b",
                "state",
                Some(Bytes::from_static(b"done")),
            ),
        )
        .unwrap();
    assert!(applied);
    assert_eq!(get_cells(&tt, Get::new("r")), vec![cell("b", "state", 1, "done")]);
}

/// The check compares the newest version only.
/// (HBase: `CheckAndMutate` reads the column with one version.)
pub fn check_compares_latest_version(t: &dyn Target) {
    let tt = ab_table(t, "check_compares_latest_version");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "old")
                .put_at("a", "q", 2, "new"),
        ],
    );
    let check = |expected: &'static [u8]| {
        t.store()
            .check_and_mutate(
                &tt.name,
                &CheckAndMutate::new(
                    RowMutation::new("r").put_at("a", "hit", 3, "x"),
                    "a",
                    "q",
                    Some(Bytes::from_static(expected)),
                ),
            )
            .unwrap()
    };
    assert!(!check(b"old"));
    assert!(check(b"new"));
}

/// A deleted column counts as absent for a check.
pub fn check_absent_after_delete(t: &dyn Target) {
    let tt = ab_table(t, "check_absent_after_delete");
    put(&tt, vec![RowMutation::new("r").put_at("b", "lock", 1, "x")]);
    put(&tt, vec![RowMutation::new("r").delete_column("b", "lock")]);
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(RowMutation::new("r").put("b", "lock", "y"), "b", "lock", None),
        )
        .unwrap();
    assert!(applied);
}

// ---------------------------------------------------------------------------
// Increments

/// A missing counter starts at 0; the new value is returned and stored as an
/// 8-byte big-endian long. (HBase: `Table.incrementColumnValue`; values are
/// `Bytes.toBytes(long)`.)
pub fn increment_creates_counter(t: &dyn Target) {
    let tt = ab_table(t, "increment_creates_counter");
    let values = t
        .store()
        .increment(&tt.name, &Increment::new("r").add("b", "hits", 5))
        .unwrap();
    assert_eq!(values, vec![5]);
    let cells = get_cells(&tt, Get::new("r"));
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0].value, Bytes::copy_from_slice(&5i64.to_be_bytes()));
}

/// Increments accumulate, negative amounts subtract.
pub fn increment_accumulates(t: &dyn Target) {
    let tt = ab_table(t, "increment_accumulates");
    let s = t.store();
    for (amount, expected) in [(1, 1), (10, 11), (-4, 7), (0, 7)] {
        assert_eq!(
            s.increment(&tt.name, &Increment::new("r").add("b", "n", amount))
                .unwrap(),
            vec![expected]
        );
    }
    assert_eq!(
        get_cells(&tt, Get::new("r"))[0].value,
        Bytes::copy_from_slice(&7i64.to_be_bytes())
    );
}

/// One increment updates several counters of a row.
/// (Thrift2 IDL: `TIncrement.columns`.)
pub fn increment_several_columns(t: &dyn Target) {
    let tt = ab_table(t, "increment_several_columns");
    let s = t.store();
    s.increment(&tt.name, &Increment::new("r").add("b", "x", 2)).unwrap();
    let values = s
        .increment(&tt.name, &Increment::new("r").add("b", "x", 3).add("b", "y", 4))
        .unwrap();
    assert_eq!(values, vec![5, 4]);
}

/// Incrementing a value that is not 8 bytes fails and changes nothing.
/// (HBase: `DoNotRetryIOException`, "Field is not a long, it's N bytes wide".)
pub fn increment_non_counter_fails(t: &dyn Target) {
    let tt = ab_table(t, "increment_non_counter_fails");
    put(&tt, vec![RowMutation::new("r").put_at("b", "name", 1, "Ann")]);
    let err = t
        .store()
        .increment(&tt.name, &Increment::new("r").add("b", "name", 1))
        .unwrap_err();
    assert!(matches!(err, StoreError::NotACounter { len: 3, .. }), "{err}");
    assert_eq!(get_cells(&tt, Get::new("r")), vec![cell("b", "name", 1, "Ann")]);
}

/// An increment's version is newer than the counter's current one, even
/// when that one carries a future timestamp. (HBase: `HRegion.reckonDelta`,
/// `max(now, current.getTimestamp() + 1)`.)
pub fn increment_timestamp_after_current(t: &dyn Target) {
    let tt = ab_table(t, "increment_timestamp_after_current");
    let future = now_millis() + 3_600_000;
    put(
        &tt,
        vec![RowMutation::new("r").put_at("b", "n", future, 1i64.to_be_bytes().to_vec())],
    );
    assert_eq!(
        t.store()
            .increment(&tt.name, &Increment::new("r").add("b", "n", 1))
            .unwrap(),
        vec![2]
    );
    let cells = get_cells(&tt, Get::new("r"));
    assert_eq!(cells[0].timestamp, future + 1);
}

// ---------------------------------------------------------------------------
// Concurrency

/// Writers and readers on many threads: every acknowledged write is read
/// back, and readers never see a half-applied row mutation.
/// (HBase: row mutations are atomic, RG "ACID semantics": "All mutations in a
/// single row are atomic".)
pub fn concurrent_writers_and_readers(t: &dyn Target) {
    let tt = ab_table(t, "concurrent_writers_and_readers");
    const WRITERS: usize = 4;
    const ROWS: usize = 50;
    thread::scope(|scope| {
        for w in 0..WRITERS {
            let tt = &tt;
            scope.spawn(move || {
                for i in 0..ROWS {
                    // Both columns in one mutation: readers must see both or none.
                    let value = format!("{w}-{i}");
                    put(
                        tt,
                        vec![
                            RowMutation::new(format!("w{w}_{i:03}"))
                                .put_at("a", "x", 1, value.clone())
                                .put_at("b", "y", 1, value),
                        ],
                    );
                }
            });
        }
        for _ in 0..2 {
            let tt = &tt;
            scope.spawn(move || {
                for _ in 0..20 {
                    for row in scan_rows(tt, Scan::all().batch_size(7)) {
                        assert_eq!(row.cells.len(), 2, "a half-applied row: {row:?}");
                        assert_eq!(row.cells[0].value, row.cells[1].value);
                    }
                }
            });
        }
    });
    assert_eq!(scan_rows(&tt, Scan::all()).len(), WRITERS * ROWS);
}

/// Concurrent increments of one counter lose no update.
/// (HBase: increments hold the row lock, `HRegion.increment`.)
pub fn concurrent_increments(t: &dyn Target) {
    let tt = ab_table(t, "concurrent_increments");
    thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..50 {
                    t.store()
                        .increment(&tt.name, &Increment::new("r").add("b", "n", 1))
                        .unwrap();
                }
            });
        }
    });
    assert_eq!(
        t.store()
            .increment(&tt.name, &Increment::new("r").add("b", "n", 0))
            .unwrap(),
        vec![200]
    );
}

// ---------------------------------------------------------------------------
// Where the backends used to disagree (issues 10 and 17)

/// A column selection is a set: a whole family includes single columns of
/// it listed before or after, so `family("a").column("a", "r")` reads all
/// of `a`. (hmap's meaning, see `Column`. HBase's `Get.addColumn` after
/// `addFamily` narrows the family to that column, as its Thrift gateway
/// shows: `ThriftUtilities.getFromThrift` calls them in list order; the
/// request builders keep such pairs out of the list.)
pub fn family_includes_its_named_columns(t: &dyn Target) {
    let tt = ab_table(t, "family_includes_its_named_columns");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "r", 1, "1")
                .put_at("a", "x", 1, "2")
                .put_at("b", "y", 1, "3"),
        ],
    );
    let family_a = vec![cell("a", "r", 1, "1"), cell("a", "x", 1, "2")];
    assert_eq!(get_cells(&tt, Get::new("r").family("a").column("a", "r")), family_a);
    assert_eq!(get_cells(&tt, Get::new("r").column("a", "r").family("a")), family_a);
    assert_eq!(
        get_cells(&tt, Get::new("r").family("a").column("a", "r").column("b", "y")),
        [family_a.clone(), vec![cell("b", "y", 1, "3")]].concat()
    );
    let scanned = scan_rows(&tt, Scan::all().family("a").column("a", "r"));
    assert_eq!(scanned.len(), 1);
    assert_eq!(scanned[0].cells, family_a);
}

/// The same meaning for a request whose column list is built by hand:
/// `[Family(a), Qualifier(a, r)]` reads all of `a`. (A backend passes the
/// list through `hmap::store::selected_columns` before HBase sees it.)
pub fn hand_built_columns_read_as_a_set(t: &dyn Target) {
    let tt = ab_table(t, "hand_built_columns_read_as_a_set");
    put(
        &tt,
        vec![RowMutation::new("r").put_at("a", "r", 1, "1").put_at("a", "x", 1, "2")],
    );
    let mut get = Get::new("r");
    get.columns = vec![
        Column::Family(Bytes::from_static(b"a")),
        Column::Qualifier(Bytes::from_static(b"a"), Bytes::from_static(b"r")),
    ];
    let family_a = vec![cell("a", "r", 1, "1"), cell("a", "x", 1, "2")];
    assert_eq!(get_cells(&tt, get.clone()), family_a);
    let mut scan = Scan::all();
    scan.columns = get.columns;
    assert_eq!(
        scan_rows(&tt, scan)
            .into_iter()
            .flat_map(|r| r.cells)
            .collect::<Vec<_>>(),
        family_a
    );
}

/// An increment naming one column twice is refused, naming the table, row
/// and column, and writes nothing. (hmap's rule. HBase adds each amount to
/// the same old value, keeps the last sum and answers with a cell per
/// amount: `HRegion.reckonDeltas` reads every delta's column before any is
/// written.)
pub fn increment_repeated_column_refused(t: &dyn Target) {
    let tt = ab_table(t, "increment_repeated_column_refused");
    let err = t
        .store()
        .increment(&tt.name, &Increment::new("r").add("b", "q", 2).add("b", "q", 5))
        .unwrap_err();
    match &err {
        StoreError::InvalidRequest { table, reason } => {
            assert_eq!(*table, tt.name);
            assert!(reason.contains("row r") && reason.contains("b:q"), "{err}");
        }
        _ => panic!("expected an invalid request, got {err}"),
    }
    assert_eq!(t.store().get(&tt.name, &Get::new("r")).unwrap(), None);
}

/// A range is half-open: a stop equal to the start reads nothing, forward
/// and reversed, as does a stop below the start. (hmap's meaning, that of
/// HBase's `Scan.withStopRow`. HBase's Thrift gateway sets the stop with the
/// deprecated `Scan.setStopRow`, which turns an equal start and stop into a
/// one-row "get scan" (`includeStopRow`): a backend must not send such a
/// scan, see `Scan::is_empty_range`.)
pub fn scan_range_start_equals_stop(t: &dyn Target) {
    let tt = ab_table(t, "scan_range_start_equals_stop");
    put(
        &tt,
        ["a", "b", "b\0", "c"]
            .iter()
            .map(|k| RowMutation::new(*k).put_at("a", "q", 1, "v"))
            .collect(),
    );
    assert_eq!(scan_keys(&tt, Scan::range("b", "b")), keys(&[]));
    assert_eq!(scan_keys(&tt, Scan::range("b", "b").reversed()), keys(&[]));
    assert_eq!(scan_keys(&tt, Scan::range("c", "b")), keys(&[]));
    assert_eq!(scan_keys(&tt, Scan::range("c", "b").reversed()), keys(&[]));
    assert_eq!(scan_keys(&tt, Scan::range("b", "b\0")), keys(&["b"]));
    assert_eq!(scan_keys(&tt, Scan::range("b", "b\0").reversed()), keys(&["b"]));
}

/// With TTL and MIN_VERSIONS, a read that names the column returns one
/// expired version beyond MIN_VERSIONS; a read of the whole family does
/// not. (`ExplicitColumnTracker.checkVersions` includes the version at which
/// `count >= minVersions && isExpired(ts)` and then moves to the next
/// column, where `ScanWildcardColumnTracker.checkVersion` drops it; a major
/// compaction, which reads like the wildcard tracker, removes it for good.)
pub fn min_versions_named_column_keeps_one_expired(t: &dyn Target) {
    let tt = table(
        t,
        "min_versions_named_column_keeps_one_expired",
        vec![FamilySchema::new("t").versions(5).min_versions(1).ttl_secs(60)],
    );
    let now = now_millis();
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("t", "q", now, "fresh")
                .put_at("t", "q", now - 3_600_000, "old1")
                .put_at("t", "q", now - 7_200_000, "old2"),
            RowMutation::new("s")
                .put_at("t", "q", now - 3_600_000, "old1")
                .put_at("t", "q", now - 7_200_000, "old2"),
        ],
    );
    let fresh_and_one = vec![cell("t", "q", now, "fresh"), cell("t", "q", now - 3_600_000, "old1")];
    assert_eq!(
        get_cells(&tt, Get::new("r").column("t", "q").max_versions(3)),
        fresh_and_one
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").family("t").max_versions(3)),
        vec![cell("t", "q", now, "fresh")]
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)),
        vec![cell("t", "q", now, "fresh")]
    );
    // Only expired versions: MIN_VERSIONS of them either way.
    assert_eq!(
        get_cells(&tt, Get::new("s").column("t", "q").max_versions(3)),
        vec![cell("t", "q", now - 3_600_000, "old1")]
    );
    let scanned = scan_rows(&tt, Scan::all().column("t", "q").max_versions(3));
    assert_eq!(scanned[0].cells, fresh_and_one);
}

/// An empty expected value means "absent or empty", like no value: a check
/// for `""` passes on an absent column and on an empty one, a check for
/// absence passes on an empty one, and neither passes on another value.
/// (`HRegion.checkAndMutateInternal`: `valueIsNull` is a null or empty
/// comparator value; then an empty result matches, and a cell matches when
/// its value is empty.)
pub fn check_empty_means_absent_or_empty(t: &dyn Target) {
    let tt = ab_table(t, "check_empty_means_absent_or_empty");
    put(
        &tt,
        vec![
            RowMutation::new("empty").put_at("b", "q", 1, ""),
            RowMutation::new("full").put_at("b", "q", 1, "z"),
        ],
    );
    let check = |row: &'static str, expected: Option<Bytes>| {
        t.store()
            .check_and_mutate(
                &tt.name,
                &CheckAndMutate::new(RowMutation::new(row).put_at("b", "hit", 1, "x"), "b", "q", expected),
            )
            .unwrap()
    };
    assert!(check("absent", Some(Bytes::new())));
    assert!(check("empty", None));
    assert!(check("empty", Some(Bytes::new())));
    assert!(!check("full", Some(Bytes::new())));
    assert!(!check("full", None));
    assert_eq!(get_cells(&tt, Get::new("absent")), vec![cell("b", "hit", 1, "x")]);
    assert_eq!(get_cells(&tt, Get::new("full")), vec![cell("b", "q", 1, "z")]);
}

/// Two deletes of a column's latest version in one row mutation delete one
/// version: each resolves against the row as it was. (Each is its own
/// `Delete` in HBase's `RowMutations`; `HRegion.prepareDeleteTimestamps`
/// counts the versions to skip per `Delete`, before any is applied.)
pub fn two_delete_latest_in_one_mutation(t: &dyn Target) {
    let tt = ab_table(t, "two_delete_latest_in_one_mutation");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "q", 1, "v1")
                .put_at("a", "q", 2, "v2")
                .put_at("a", "q", 3, "v3"),
        ],
    );
    put(
        &tt,
        vec![RowMutation::new("r").delete_latest("a", "q").delete_latest("a", "q")],
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(3)),
        vec![cell("a", "q", 2, "v2"), cell("a", "q", 1, "v1")]
    );
}

/// A passing check-and-mutate stamps its puts without a timestamp no older
/// than the checked cell, so a checked cell from the future does not hide
/// them. (`HRegion.checkAndMutateInternal`: `ts = max(now, cellTs)`,
/// "ensure write is not eclipsed", HBASE-14054; the same timestamp
/// overwrites.)
pub fn check_and_mutate_put_not_older_than_checked(t: &dyn Target) {
    let tt = ab_table(t, "check_and_mutate_put_not_older_than_checked");
    let future = now_millis() + 3_600_000;
    put(&tt, vec![RowMutation::new("r").put_at("b", "q", future, "x")]);
    let applied = t
        .store()
        .check_and_mutate(
            &tt.name,
            &CheckAndMutate::new(
                RowMutation::new("r").put("b", "q", "y").put("b", "o", "z"),
                "b",
                "q",
                Some(Bytes::from_static(b"x")),
            ),
        )
        .unwrap();
    assert!(applied);
    assert_eq!(
        get_cells(&tt, Get::new("r")),
        vec![cell("b", "o", future, "z"), cell("b", "q", future, "y")]
    );
}

/// Versions beyond VERSIONS written in one row mutation are all there until
/// the mutation ends: twelve versions of a VERSIONS 1 column, written newest
/// first, then the newest deleted, shows the second newest. (HBase keeps
/// them in the memstore until a flush, which never splits a mutation; after
/// a flush it would show nothing, never the oldest.)
pub fn surplus_versions_survive_the_mutation(t: &dyn Target) {
    let tt = ab_table(t, "surplus_versions_survive_the_mutation");
    let mut m = RowMutation::new("r");
    for ts in (1..=12).rev() {
        m = m.put_at("b", "q", ts, format!("v{ts}"));
    }
    put(&tt, vec![m]);
    assert_eq!(get_cells(&tt, Get::new("r")), vec![cell("b", "q", 12, "v12")]);
    put(&tt, vec![RowMutation::new("r").delete_latest("b", "q")]);
    assert_eq!(get_cells(&tt, Get::new("r")), vec![cell("b", "q", 11, "v11")]);
}

/// Every call on an illegal table name fails with the same typed error,
/// before anything reaches storage. (HBase: `TableName.valueOf` throws
/// `IllegalArgumentException` from `isLegalTableQualifierName`, "Tables may
/// not be named 'zookeeper'".)
pub fn illegal_table_name_fails(t: &dyn Target) {
    let s = t.store();
    for name in ["bad name!", "-dash", "zookeeper"] {
        let invalid = |r: Result<(), StoreError>, call: &str| match r {
            Err(StoreError::InvalidRequest { ref table, .. }) if table == name => {}
            other => panic!("{call} on {name:?}: expected an invalid request, got {other:?}"),
        };
        invalid(s.get(name, &Get::new("r")).map(|_| ()), "get");
        invalid(s.mutate(name, &[RowMutation::new("r").put("a", "q", "v")]), "mutate");
        invalid(s.scan(name, &Scan::all()).map(|_| ()), "scan");
        invalid(s.table_exists(name).map(|_| ()), "table_exists");
        invalid(s.describe_table(name).map(|_| ()), "describe_table");
        invalid(s.delete_table(name), "delete_table");
        assert!(matches!(
            s.create_table(&TableSchema::new(name).family(FamilySchema::new("a"))),
            Err(StoreError::InvalidSchema { .. })
        ));
    }
}

/// A table name of 255 bytes works; one of 256 is refused before any call,
/// by `create_table` as an invalid schema and by other calls as an invalid
/// request. (HBase sets no limit, but the name is a directory under its
/// root, `data/default/<name>`, and file systems take 255 bytes: a longer
/// name leaves the master retrying `CreateTableProcedure` forever.)
pub fn table_name_length_limit(t: &dyn Target) {
    let s = t.store();
    let base = format!("{}table_name_length_limit_", t.table_prefix());
    let longest = format!("{base}{}", "n".repeat(MAX_TABLE_NAME_PART - base.len()));
    assert_eq!(longest.len(), 255);
    if s.table_exists(&longest).unwrap() {
        s.delete_table(&longest).unwrap();
    }
    s.create_table(&TableSchema::new(longest.clone()).family(FamilySchema::new("a")))
        .unwrap();
    s.mutate(&longest, &[RowMutation::new("r").put_at("a", "q", 1, "v")])
        .unwrap();
    let cells = s.get(&longest, &Get::new("r")).unwrap().map(|r| r.cells);
    s.delete_table(&longest).unwrap();
    assert_eq!(cells, Some(vec![cell("a", "q", 1, "v")]));

    let too_long = format!("{longest}n");
    assert!(matches!(
        s.create_table(&TableSchema::new(too_long.clone()).family(FamilySchema::new("a"))),
        Err(StoreError::InvalidSchema { .. })
    ));
    assert!(matches!(
        s.get(&too_long, &Get::new("r")),
        Err(StoreError::InvalidRequest { .. })
    ));
    assert!(matches!(
        s.table_exists(&too_long),
        Err(StoreError::InvalidRequest { .. })
    ));
}

/// The cell size limit counts what HBase counts: row, family, qualifier and
/// value, plus 24 bytes (a `KeyValue`'s 20 bytes of framing and the 4 that
/// `PrivateCellUtil.estimatedSerializedSizeOf` adds); the error names the
/// row and column. (HBase: `RSRpcServices.checkCellSizeLimit` against
/// `hbase.server.keyvalue.maxsize`, 10 MiB: "Cell[r/a:q/...] with size
/// 10485761 exceeds limit of 10485760 bytes" for a 10485734-byte value.)
pub fn cell_size_counts_row_and_column(t: &dyn Target) {
    let tt = ab_table(t, "cell_size_counts_row_and_column");
    let limit = t.max_value_size();
    let largest = limit - 24 - "row".len() - "a".len() - "qq".len();
    put(
        &tt,
        vec![RowMutation::new("row").put_at("a", "qq", 1, vec![b'x'; largest])],
    );
    let cells = get_cells(&tt, Get::new("row"));
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0].value.len(), largest);
    let err = t
        .store()
        .mutate(
            &tt.name,
            &[RowMutation::new("row").put_at("a", "qq", 2, vec![b'x'; largest + 1])],
        )
        .unwrap_err();
    match &err {
        StoreError::CellTooLarge {
            table,
            row,
            column,
            size,
            limit: l,
        } => {
            assert_eq!((table, row.as_str(), column.as_str()), (&tt.name, "row", "a:qq"));
            assert_eq!((*size, *l), (limit + 1, limit));
        }
        _ => panic!("expected a cell too large, got {err}"),
    }
    assert_eq!(get_cells(&tt, Get::new("row"))[0].timestamp, 1);
}

/// A check for absence guards deletes as well as puts, all applied at once:
/// how hmap's typed layer saves a new row of a versioned type, deleting its
/// `None` columns and replacing its dynamic families. (HBase:
/// `Table.checkAndMutate(row, family).qualifier(q).ifNotExists().thenMutate(RowMutations)`;
/// over Thrift2, `checkAndMutate` with the empty value, which HBase's region
/// reads as "absent", `HRegion.checkAndMutateInternal`.)
pub fn check_absent_guards_deletes(t: &dyn Target) {
    let tt = ab_table(t, "check_absent_guards_deletes");
    // Leftovers of an earlier life of the row: an optional column, and an
    // entry of a dynamic family.
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("a", "opt", 5, "stale")
                .put_at("b", "k1", 5, "x"),
        ],
    );
    let save = |version: &'static str| {
        RowMutation::new("r")
            .delete_column_up_to("a", "opt", 10)
            .delete_family_up_to("b", 9)
            .put_at("b", "k2", 10, "y")
            .put_at("b", "ver", 10, version)
    };
    let applied = t
        .store()
        .check_and_mutate(&tt.name, &CheckAndMutate::new(save("1"), "b", "ver", None))
        .unwrap();
    assert!(applied);
    let saved = vec![cell("b", "k2", 10, "y"), cell("b", "ver", 10, "1")];
    assert_eq!(get_cells(&tt, Get::new("r")), saved);
    // Saved once: a second "new row" finds the version column and changes nothing.
    let applied = t
        .store()
        .check_and_mutate(&tt.name, &CheckAndMutate::new(save("2"), "b", "ver", None))
        .unwrap();
    assert!(!applied);
    assert_eq!(get_cells(&tt, Get::new("r")), saved);
}

// ---------------------------------------------------------------------------
// Table metadata and truncation

/// Creates `prefix + case` afresh from a whole schema (its name replaced).
fn table_from<'a>(t: &'a dyn Target, case: &str, mut schema: TableSchema) -> TestTable<'a> {
    let store = t.store();
    schema.name = format!("{}{case}", t.table_prefix());
    if store.table_exists(&schema.name).expect("table_exists") {
        store.delete_table(&schema.name).expect("delete a leftover table");
    }
    store.create_table(&schema).expect("create_table");
    TestTable {
        store,
        name: schema.name,
    }
}

/// A table's metadata set at creation is what `describe` reports, quotes
/// and backslashes included. (HBase: `TableDescriptor.getValue`, the shell's
/// `METADATA`; Thrift2 IDL: `TTableDescriptor.attributes`, field 3.)
pub fn table_metadata_round_trips(t: &dyn Target) {
    let schema = TableSchema::new("")
        .family(FamilySchema::new("a"))
        .metadata("hmap.key", "text '_': uid: string + seq: u32 width 4")
        .metadata("team", "it's a \\ test");
    let tt = table_from(t, "table_metadata_round_trips", schema.clone());
    let live = t.store().describe_table(&tt.name).unwrap();
    for (key, value) in &schema.metadata {
        assert_eq!(live.metadata.get(key), Some(value), "{key}");
    }
    assert_eq!(live.key_layout(), Some("text '_': uid: string + seq: u32 width 4"));
}

/// Truncating a table deletes its rows and keeps its families, options,
/// metadata and split points; writes go on. (HBase: `Admin.truncateTable`
/// with `preserveSplits`, the shell's `truncate_preserve`; Thrift2 IDL:
/// `truncateTable`.)
pub fn truncate_keeps_schema_and_splits(t: &dyn Target) {
    let schema = TableSchema::new("")
        .family(FamilySchema::new("a").versions(3).ttl_secs(86_400))
        .family(FamilySchema::new("b"))
        .split_keys(keys(&["m"]))
        .metadata("hmap.key", "binary: id: string");
    let tt = table_from(t, "truncate_keeps_schema_and_splits", schema);
    put(
        &tt,
        vec![
            RowMutation::new("a1").put_at("a", "q", 1, "v"),
            RowMutation::new("z1").put_at("b", "q", 1, "v"),
        ],
    );
    let before = t.store().describe_table(&tt.name).unwrap();
    t.store().truncate_table(&tt.name).unwrap();
    assert!(t.store().table_exists(&tt.name).unwrap());
    assert_eq!(scan_keys(&tt, Scan::all()), Vec::<Bytes>::new());
    assert_eq!(t.store().describe_table(&tt.name).unwrap(), before);
    put(&tt, vec![RowMutation::new("b2").put_at("b", "q", 2, "w")]);
    assert_eq!(get_cells(&tt, Get::new("b2")), vec![cell("b", "q", 2, "w")]);
}

/// Truncating a missing table fails with `TableNotFound`.
/// (HBase: `TableNotFoundException`.)
pub fn truncate_missing_table_fails(t: &dyn Target) {
    let name = format!("{}truncate_missing_table_fails_never_created", t.table_prefix());
    let _ = t.store().delete_table(&name);
    let err = t.store().truncate_table(&name).unwrap_err();
    assert!(
        matches!(err, StoreError::TableNotFound { ref table } if *table == name),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// Altering a live table

/// Adding a family to a live table: it is described with its options,
/// takes writes, and the other families keep their cells. (HBase:
/// `Admin.addColumnFamily`; Thrift2 `addColumnFamily`.)
pub fn alter_adds_a_family(t: &dyn Target) {
    let tt = ab_table(t, "alter_adds_a_family");
    put(&tt, vec![RowMutation::new("r").put_at("a", "q", 1, "old")]);
    let c = FamilySchema::new("c")
        .versions(4)
        .block_size(32_768)
        .bloom(BloomType::RowCol)
        .compression(Compression::Gz);
    t.store().alter_table(&tt.name, &FamilyChange::Add(c.clone())).unwrap();
    let described = t.store().describe_table(&tt.name).unwrap();
    let names: Vec<&str> = described.families.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(described.find_family(b"c"), Some(&c));
    put(
        &tt,
        vec![RowMutation::new("r").put_at("c", "q", 1, "1").put_at("c", "q", 2, "2")],
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(5)),
        vec![cell("a", "q", 1, "old"), cell("c", "q", 2, "2"), cell("c", "q", 1, "1")]
    );
}

/// Changing a family's options keeps its cells; raising VERSIONS keeps
/// more versions of what is written afterwards. The table's regions reopen,
/// which flushes what was written before under the old VERSIONS. (HBase:
/// `Admin.modifyColumnFamily`, then `ReopenTableRegionsProcedure`.)
pub fn alter_modifies_a_family(t: &dyn Target) {
    let tt = ab_table(t, "alter_modifies_a_family");
    put(
        &tt,
        vec![
            RowMutation::new("r")
                .put_at("b", "q", 1, "1")
                .put_at("b", "q", 2, "2")
                .put_at("a", "q", 1, "a1"),
        ],
    );
    let wider = FamilySchema::new("b").versions(5).in_memory(true);
    t.store()
        .alter_table(&tt.name, &FamilyChange::Modify(wider.clone()))
        .unwrap();
    assert_eq!(
        t.store().describe_table(&tt.name).unwrap().find_family(b"b"),
        Some(&wider)
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").family("b").max_versions(5)),
        vec![cell("b", "q", 2, "2")]
    );
    put(
        &tt,
        vec![RowMutation::new("r").put_at("b", "q", 3, "3").put_at("b", "q", 4, "4")],
    );
    assert_eq!(
        get_cells(&tt, Get::new("r").max_versions(5)),
        vec![
            cell("a", "q", 1, "a1"),
            cell("b", "q", 4, "4"),
            cell("b", "q", 3, "3"),
            cell("b", "q", 2, "2"),
        ]
    );
}

/// Deleting a family deletes its cells; rows that held nothing else are
/// gone from scans. (HBase: `Admin.deleteColumnFamily`.)
pub fn alter_deletes_a_family(t: &dyn Target) {
    let tt = ab_table(t, "alter_deletes_a_family");
    put(
        &tt,
        vec![
            RowMutation::new("r1").put_at("a", "q", 1, "1").put_at("b", "q", 1, "x"),
            RowMutation::new("r2").put_at("b", "q", 1, "y"),
        ],
    );
    t.store()
        .alter_table(&tt.name, &FamilyChange::Delete("b".into()))
        .unwrap();
    let names: Vec<String> = t
        .store()
        .describe_table(&tt.name)
        .unwrap()
        .families
        .into_iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(names, ["a"]);
    assert_eq!(scan_keys(&tt, Scan::all()), keys(&["r1"]));
    assert_eq!(get_cells(&tt, Get::new("r1")), vec![cell("a", "q", 1, "1")]);
    put(&tt, vec![RowMutation::new("r3").put_at("a", "q", 1, "3")]);
    assert_eq!(scan_keys(&tt, Scan::all()), keys(&["r1", "r3"]));
}

/// A change that does not fit the table is refused, naming the table, and
/// changes nothing: adding a family that exists, changing or deleting one
/// that does not, deleting the only family, an invalid option; on a missing
/// table, `TableNotFound`. (HBase's master refuses the same:
/// `InvalidFamilyOperationException`, `TableDescriptorChecker`; hmap checks
/// before the call, the same way on every backend.)
pub fn alter_refuses_what_does_not_fit(t: &dyn Target) {
    let tt = table(t, "alter_refuses_what_does_not_fit", vec![FamilySchema::new("a")]);
    let refused = |change: FamilyChange, why: &str| match t.store().alter_table(&tt.name, &change) {
        Err(StoreError::InvalidSchema { table, reason }) => {
            assert_eq!(table, tt.name);
            assert!(reason.contains(why), "{reason}");
        }
        other => panic!("expected {change:?} to be refused, got {other:?}"),
    };
    refused(FamilyChange::Add(FamilySchema::new("a")), "exists already");
    refused(FamilyChange::Modify(FamilySchema::new("x")), "no family `x`");
    refused(FamilyChange::Delete("x".into()), "no family `x`");
    refused(FamilyChange::Delete("a".into()), "only family");
    refused(FamilyChange::Add(FamilySchema::new("c").versions(0)), "VERSIONS");
    let before = t.store().describe_table(&tt.name).unwrap();
    assert_eq!(before.families, vec![FamilySchema::new("a")]);
    let missing = format!("{}alter_refuses_what_does_not_fit_never_created", t.table_prefix());
    let _ = t.store().delete_table(&missing);
    let err = t
        .store()
        .alter_table(&missing, &FamilyChange::Add(FamilySchema::new("c")))
        .unwrap_err();
    assert!(
        matches!(err, StoreError::TableNotFound { ref table } if *table == missing),
        "{err}"
    );
}

/// Every case, by name, in the order they are defined: `for_each_case!`
/// expands a macro once per name.
#[macro_export]
macro_rules! for_each_case {
    ($callback:ident) => {
        $callback! {
            create_table_then_exists,
            create_existing_table_fails,
            delete_table_removes_data,
            missing_table_fails,
            describe_returns_family_options,
            describe_default_family_options,
            describe_sorts_families,
            invalid_schemas_fail,
            put_then_get,
            get_missing_row,
            put_default_timestamp_is_now,
            cells_sorted_by_family_and_qualifier,
            get_one_family,
            get_chosen_columns,
            get_absent_column,
            unknown_family_fails,
            refused_batch_writes_nothing,
            batch_applies_rows_in_order,
            empty_qualifier_and_value,
            binary_bytes_round_trip,
            empty_row_rejected,
            row_length_limit,
            oversized_value_rejected,
            negative_timestamp_rejected,
            get_many_in_order,
            versions_capped_by_family,
            get_fewer_versions,
            get_latest_by_default,
            same_timestamp_overwrites,
            older_put_is_not_latest,
            thousand_versions,
            time_range_is_half_open,
            time_range_then_versions,
            exact_timestamp,
            time_range_without_versions,
            delete_latest_reveals_previous,
            delete_latest_of_single_version,
            delete_one_version,
            delete_column_all_versions,
            delete_column_up_to,
            delete_family,
            delete_family_up_to,
            delete_row,
            delete_masks_later_older_put,
            newer_put_after_delete_visible,
            delete_then_put_again,
            delete_missing_row_harmless,
            delete_and_put_in_one_mutation,
            ttl_hides_expired,
            min_versions_outlive_ttl,
            min_versions_count_fresh_versions,
            scan_all_in_order,
            scan_range_bounds,
            scan_prefix,
            scan_prefix_with_ff,
            scan_reversed,
            scan_reversed_range,
            scan_reversed_prefix,
            scan_limit,
            scan_batch_sizes_agree,
            scan_chosen_columns,
            scan_time_range,
            scan_max_versions,
            scan_skips_deleted_rows,
            scan_empty,
            scanner_reads_at_open,
            scanner_released_on_drop,
            check_and_put_when_equal,
            check_and_put_when_different,
            check_absent_when_missing,
            check_absent_when_present,
            check_and_delete,
            check_compares_latest_version,
            check_absent_after_delete,
            increment_creates_counter,
            increment_accumulates,
            increment_several_columns,
            increment_non_counter_fails,
            increment_timestamp_after_current,
            concurrent_writers_and_readers,
            concurrent_increments,
            family_includes_its_named_columns,
            hand_built_columns_read_as_a_set,
            increment_repeated_column_refused,
            scan_range_start_equals_stop,
            min_versions_named_column_keeps_one_expired,
            check_empty_means_absent_or_empty,
            two_delete_latest_in_one_mutation,
            check_and_mutate_put_not_older_than_checked,
            surplus_versions_survive_the_mutation,
            illegal_table_name_fails,
            table_name_length_limit,
            cell_size_counts_row_and_column,
            check_absent_guards_deletes,
            table_metadata_round_trips,
            truncate_keeps_schema_and_splits,
            truncate_missing_table_fails,
            alter_adds_a_family,
            alter_modifies_a_family,
            alter_deletes_a_family,
            alter_refuses_what_does_not_fit,
        }
    };
}
