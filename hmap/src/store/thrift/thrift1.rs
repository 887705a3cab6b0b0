//! [`Thrift1Store`]: a [`Store`] over HBase's original Thrift gateway, the
//! `Hbase` service that `hbase thrift start` runs (and happybase speaks).

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use rustc_hash::{FxHashMap, FxHashSet};

use super::ThriftConfig;
use super::client::{Client, Gateway, ScanFetcher, ScannerCalls, counter_error, split_points};
use super::codec::{Encoder, Reader, TType};
use super::hbase::{self, ServerException};
use super::hbase1::{self, Change, ScanSpec};
use crate::schema::{FamilySchema, KEY_LAYOUT_ATTRIBUTE, TableSchema};
use crate::store::check::{
    check_append, check_conditional, check_family_change, check_gets, check_increment, check_read, check_rows,
    check_schema, check_table_name,
};
use crate::store::filter::CompareOp;
use crate::store::outcome::send_checked;
use crate::store::{
    Append, BatchOutcome, Cell, CheckAndMutate, Column, FamilyChange, Get, Increment, Mutation, Result, RowMutation,
    RowResult, RowStream, Scan, Store, StoreError, TimeRange, traced,
};

/// What [`Thrift1Store`] cannot express, each the `feature` of the
/// [`StoreError::Unsupported`] it returns (see [`Thrift1Store`]'s docs).
pub mod unsupported {
    /// `ColumnDescriptor` has no `MIN_VERSIONS`.
    pub const MIN_VERSIONS: &str = "MIN_VERSIONS at table creation";
    /// `ColumnDescriptor` has no `BLOCKSIZE`.
    pub const BLOCK_SIZE: &str = "BLOCKSIZE at table creation";
    /// `createTable` takes no split keys.
    pub const SPLIT_KEYS: &str = "split keys at table creation";
    /// No call sets or reads a table descriptor's attributes.
    pub const METADATA: &str = "table metadata";
    /// No call adds, changes or deletes a family of a live table.
    pub const ALTER: &str = "altering a table's families";
    /// No `truncateTable`, and the table cannot be recreated as it was
    /// (metadata, `BLOCKSIZE`, `MIN_VERSIONS` and split keys unknown).
    pub const TRUNCATE: &str = "truncating a table";
    /// `getVerTs` reads versions of one column only; the row calls read one
    /// version.
    pub const VERSIONS_OF_SEVERAL_COLUMNS: &str = "several versions of more than one column in a get";
    /// `TScan` has no `maxVersions`.
    pub const SCAN_VERSIONS: &str = "several versions per column in a scan";
    /// A Thrift1 delete removes every version up to its timestamp.
    pub const DELETE_NEWEST_VERSION: &str = "deleting a column's newest version only";
    /// A Thrift1 delete removes every version up to its timestamp.
    pub const DELETE_ONE_VERSION: &str = "deleting one exact version of a column";
    /// `mutateRows` applies its puts and its deletes as two operations.
    pub const PUTS_AND_DELETES: &str = "a row mixing puts and deletes in one atomic mutation";
    /// A Thrift1 mutation call carries one timestamp for all its cells.
    pub const SEVERAL_TIMESTAMPS: &str = "one row's mutations at different timestamps";
    /// `deleteAllRow` deletes a row and nothing else.
    pub const ROW_DELETE_AND_MORE: &str = "a row delete with other mutations of the row";
    /// `checkAndPut` takes one put.
    pub const CHECK_AND_DELETE: &str = "check-and-mutate with deletes";
    /// `checkAndPut` takes one put.
    pub const CHECK_AND_PUTS: &str = "check-and-mutate with other than one put";
    /// `checkAndPut` stamps its put with the server's time.
    pub const CHECK_AND_PUT_AT: &str = "check-and-mutate with a put at a chosen timestamp";
    /// `atomicIncrement` adds to one column.
    pub const INCREMENT_COLUMNS: &str = "an increment of several columns";
    /// A reversed `TScan` reads from hmap's stop row, which the filter would
    /// see (and count) before the row is dropped.
    pub const FILTER_REVERSED: &str = "a filter on a reversed scan";
    /// `TScan` and the row calls take only an upper time bound: the cells
    /// below the lower one would be dropped after the filter ran on them.
    pub const FILTER_MIN_TIME: &str = "a filter with a time range that has a lower bound";
    /// `checkAndPut` checks for equality (`ifEquals`) or absence
    /// (`ifNotExists`) only: no other comparison of a value, nor "holds a
    /// non-empty value" (NOT_EQUAL to nothing).
    pub const CHECK_COMPARE: &str = "check-and-mutate with a comparison other than equality";
    /// `checkAndPut` takes no time range.
    pub const CHECK_TIME_RANGE: &str = "a time range in a check-and-mutate";
    /// `checkAndPut` takes no filter.
    pub const CHECK_FILTER: &str = "a filter as the condition of a check-and-mutate";
}

/// A store on a real HBase through its original Thrift gateway (Thrift1,
/// the `Hbase` service: `hbase thrift start`, what happybase users run), for
/// clusters that run no Thrift2 gateway.
///
/// ```no_run
/// use std::time::Duration;
/// use hmap::schema::{FamilySchema, TableSchema};
/// use hmap::store::{Get, RowMutation, Store, Thrift1Store, ThriftConfig};
///
/// # #[tokio::main] async fn main() -> Result<(), hmap::store::StoreError> {
/// let mut config = ThriftConfig::new("127.0.0.1:9090");
/// config.call_timeout = Duration::from_secs(5); // each call, all of it
/// let store = Thrift1Store::with_config(config);
/// store.ping().await?; // a Thrift1 gateway answers
/// store.create_table(&TableSchema::new("user").family(FamilySchema::new("i"))).await?;
/// store.mutate("user", &[RowMutation::new("u1").put("i", "name", "Ann")]).await?;
/// let row = store.get("user", &Get::new("u1")).await?;
/// # Ok(()) }
/// ```
///
/// It is configured by a [`ThriftConfig`], as [`ThriftStore`](super::ThriftStore)
/// is, and shares its machinery: hmap's own sans-IO Thrift codec (binary or
/// compact protocol, every length and count checked against the bytes of
/// the reply, nesting limited, fuzzed), replies decoded without copying
/// cells, one deadline over a whole call (pool wait, connecting, every
/// read), reads retried on a new connection within it, on tokio, over an
/// unframed or framed socket, HTTP or HTTPS. Not the `hbase-thrift` crate
/// (the generated Thrift1 client of that gateway), which is synchronous and
/// built on the `thrift` crate: no deadlines, and it allocates whatever
/// lengths the wire declares.
///
/// # What Thrift1 cannot express
///
/// Thrift1 predates much of HBase's client API. What it cannot express is a
/// [`StoreError::Unsupported`] naming the feature (the constants of
/// [`thrift1_unsupported`](crate::store::thrift1_unsupported)) and the table, before
/// anything is sent, never something else done quietly:
///
/// - at creation: `MIN_VERSIONS` other than 0, `BLOCKSIZE` other than
///   65,536, split keys, table metadata (but for hmap's record of the key
///   layout, which [`Table::create`](crate::Table::create) writes: that is
///   left out with a warning, as on a framed Thrift2 gateway, and the table
///   reads as one whose key layout is not recorded); altering a table's
///   families; truncating a table;
/// - reads: several versions of more than one column in a get (one column,
///   `getVerTs`, is fine), several versions per column in a scan (a family
///   that keeps one version reads as it would with one);
/// - writes: deleting a column's newest version only or one exact version
///   (a Thrift1 delete removes every version up to a timestamp); a row that
///   mixes puts and deletes, or whose mutations carry different timestamps,
///   or a row delete with other mutations of the row (Thrift1 would apply
///   them as separate operations, not atomically: [`split_rows`](Self::split_rows)
///   sends such a row anyway when each of its mutations carries a timestamp);
/// - check-and-mutate other than one put without a timestamp
///   (`checkAndPut`), or with a comparison other than equality (but for
///   the comparisons that, with nothing expected, mean "absent or empty"
///   as equality does), a time range or a filter; an increment of several
///   columns (`atomicIncrement`).
///
/// A time range's lower bound, which Thrift1's calls lack (they read
/// `[0, max)`), is applied to the newest version read below its upper
/// bound: the same cells HBase returns. [`describe_table`](Store::describe_table)
/// reports no metadata and HBase's defaults for `MIN_VERSIONS` and
/// `BLOCKSIZE`, which Thrift1's `ColumnDescriptor` lacks.
#[derive(Clone)]
pub struct Thrift1Store {
    client: Arc<Client>,
    split_rows: bool,
}

impl std::fmt::Debug for Thrift1Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Thrift1Store")
            .field("config", &self.client.config)
            .field("split_rows", &self.split_rows)
            .finish_non_exhaustive()
    }
}

/// Thrift1's scanner calls: `scannerGetList(1: ScannerID id, 2: i32
/// nbRows)`, `scannerClose(1: ScannerID id)`.
static SCANNER: ScannerCalls = ScannerCalls {
    fetch: "scannerGetList",
    close: "scannerClose",
    rows: |r| hbase::reply(r, TType::List, hbase1::row_results),
};

/// The name in errors.
const BACKEND: &str = "Thrift1Store";

/// One Thrift1 call's share of a row mutation.
enum Part<'a> {
    /// Puts, or column and family deletes, all at one timestamp (`None`:
    /// the server's time): one `BatchMutation` of `mutateRows(Ts)`.
    Cells(Option<i64>, Vec<Change<'a>>),
    /// `deleteAllRow(Ts)`.
    DeleteRow(Option<i64>),
}

/// HBase's default `BLOCKSIZE`, the only one Thrift1 creates families with.
const DEFAULT_BLOCK_SIZE: u32 = 65_536;

impl Thrift1Store {
    /// A store on the Thrift1 gateway at `address` (`host:port`), with
    /// default settings. Connects lazily; [`ping`](Self::ping) checks the
    /// gateway.
    pub fn new(address: impl Into<String>) -> Self {
        Self::with_config(ThriftConfig::new(address))
    }

    /// A store with chosen settings (those of [`ThriftConfig`]).
    pub fn with_config(config: ThriftConfig) -> Self {
        Thrift1Store {
            client: Arc::new(Client::new(config, Gateway::One)),
            split_rows: false,
        }
    }

    /// Whether a row whose mutations need several Thrift1 calls (puts at
    /// several timestamps, puts and deletes together, a row delete with
    /// more) is sent as those calls rather than refused; off by default.
    ///
    /// Only a row whose every mutation carries its timestamp is split: HBase
    /// then ends in the same state whatever the order the calls arrive in
    /// (a delete masks the versions at or below its timestamp, written
    /// before or after it). But the row is no longer applied atomically: a
    /// reader may see some of its calls applied and not others, and a
    /// failure may leave some applied. hmap's typed layer stamps every
    /// write, so its `put` of a row with an unset optional field (a put and
    /// a delete at one timestamp) goes through with this on. A row with a
    /// mutation at the server's time is still refused.
    pub fn split_rows(mut self, split: bool) -> Self {
        self.split_rows = split;
        self
    }

    /// Checks that the gateway answers, and that it is a Thrift1 one.
    pub async fn ping(&self) -> Result<()> {
        self.client.ping().await
    }

    /// How many of the gateway's scanners this store holds open (as
    /// [`ThriftStore::open_scanners`](super::ThriftStore::open_scanners)).
    pub fn open_scanners(&self) -> usize {
        self.client.open_scanners()
    }

    /// The start key of each of the table's regions, sorted (the first
    /// region's is empty), from `getTableRegions`.
    pub async fn region_start_keys(&self, table: &str) -> Result<Vec<Bytes>> {
        check_table_name(table, &self.client.config.table_prefix)?;
        let mut starts = self
            .client
            .call(
                table,
                "getTableRegions",
                true,
                |e| e.binary_field(1, self.client.wire(table).as_bytes()),
                |r| hbase::reply(r, TType::List, hbase1::region_starts),
            )
            .await?;
        starts.sort();
        Ok(starts)
    }

    fn unsupported(table: &str, feature: &'static str) -> StoreError {
        StoreError::Unsupported {
            backend: BACKEND,
            feature,
            table: table.into(),
        }
    }

    /// What `call` gave, with a gateway's bare message for a table dropped
    /// behind this store confirmed and answered as `TableNotFound`.
    async fn confirmed<T>(&self, table: &str, call: impl Future<Output = Result<T>>) -> Result<T> {
        let result = call.await;
        self.client
            .confirm_table(table, result, || self.table_exists(table))
            .await
    }

    /// The table's schema and what `check` makes of a request against it
    /// (described again when the cached schema lacks a family it names).
    async fn checked<T>(
        &self,
        table: &str,
        check: impl Fn(&TableSchema) -> Result<T>,
    ) -> Result<(Arc<TableSchema>, T)> {
        self.client.checked_schema(table, || self.families(table), check).await
    }

    /// The table's families as `getColumnDescriptors` reports them.
    async fn families(&self, table: &str) -> Result<TableSchema> {
        check_table_name(table, &self.client.config.table_prefix)?;
        let families = self
            .client
            .call(
                table,
                "getColumnDescriptors",
                true,
                |e| e.binary_field(1, self.client.wire(table).as_bytes()),
                |r| hbase::reply(r, TType::Map, hbase1::column_descriptors),
            )
            .await;
        match families {
            Ok(families) => {
                let mut schema = TableSchema::new(table);
                schema.families = families;
                Ok(schema)
            }
            Err(StoreError::Server { .. }) if !self.table_exists(table).await? => {
                Err(StoreError::TableNotFound { table: table.into() })
            }
            Err(e) => Err(e),
        }
    }

    /// `TableNotFound` unless the table exists.
    async fn require_table(&self, table: &str) -> Result<()> {
        if self.table_exists(table).await? {
            Ok(())
        } else {
            Err(StoreError::TableNotFound { table: table.into() })
        }
    }

    /// How many versions a read of `columns` gets at most: `max_versions`,
    /// or fewer if every family it reads keeps fewer (the family's
    /// `VERSIONS` caps every read).
    fn versions_read(schema: &TableSchema, columns: &[Column], max_versions: u32) -> u32 {
        let kept = |family: &FamilySchema| family.versions;
        let most = if columns.is_empty() {
            schema.families.iter().map(kept).max()
        } else {
            columns
                .iter()
                .filter_map(|c| schema.find_family(c.family()).map(kept))
                .max()
        };
        max_versions.min(most.unwrap_or(max_versions))
    }

    /// Reads one row with `getRowWithColumnsTs` (one version of each
    /// column below the range's upper bound), or a single column's versions
    /// with `getVerTs`; the range's lower bound applied to what comes back.
    /// The filter in HBase's filter language, or what Thrift1 cannot send
    /// exactly: what the language cannot express (Thrift1 has no
    /// `filterBytes`), a reversed scan, a time range with a lower bound.
    fn filter_string(table: &str, filter: &crate::store::Filter, reversed: bool, range: TimeRange) -> Result<Vec<u8>> {
        if reversed {
            return Err(Self::unsupported(table, unsupported::FILTER_REVERSED));
        }
        if range.min > 0 {
            return Err(Self::unsupported(table, unsupported::FILTER_MIN_TIME));
        }
        super::filter::filter_string(filter, reversed).map_err(|feature| Self::unsupported(table, feature))
    }

    /// A filtered get, which Thrift1's row calls cannot carry: a scan of the
    /// one row (`scannerOpenWithScan` from the row to the row and a zero
    /// byte), as HBase itself runs a get (a one-row scan).
    async fn read_filtered_row(&self, table: &str, get: &Get) -> Result<Option<RowResult>> {
        let mut stop = get.row.to_vec();
        stop.push(0);
        let scan = Scan {
            start: get.row.clone(),
            stop: Bytes::from(stop),
            columns: get.columns.clone(),
            max_versions: get.max_versions,
            time_range: get.time_range,
            filter: get.filter.clone(),
            limit: Some(1),
            ..Scan::default()
        };
        let mut rows = self.scan(table, &scan).await?;
        use futures_util::StreamExt;
        match rows.next().await {
            Some(row) => row.map(|r| (r.row == get.row).then_some(r)),
            None => Ok(None),
        }
    }

    async fn read_row(&self, table: &str, schema: &TableSchema, get: &Get) -> Result<Option<RowResult>> {
        if get.filter.is_some() {
            return self.read_filtered_row(table, get).await;
        }
        let versions = Self::versions_read(schema, &get.columns, get.max_versions);
        let before = get.time_range.max;
        let cells = if versions > 1 {
            let columns = crate::store::selected_columns(&get.columns);
            let [Column::Qualifier(family, qualifier)] = &columns[..] else {
                return Err(Self::unsupported(table, unsupported::VERSIONS_OF_SEVERAL_COLUMNS));
            };
            let column = hbase1::column_name(family, Some(qualifier));
            let found = self
                .client
                .call(
                    table,
                    "getVerTs",
                    true,
                    |e| {
                        e.binary_field(1, self.client.wire(table).as_bytes());
                        e.binary_field(2, &get.row);
                        e.binary_field(3, &column);
                        e.i64_field(4, before);
                        e.i32_field(5, i32::try_from(versions).unwrap_or(i32::MAX));
                    },
                    |r| hbase::reply(r, TType::List, hbase1::cells),
                )
                .await?;
            found
                .into_iter()
                .map(|(value, ts)| Cell::new(family.clone(), qualifier.clone(), ts, value))
                .collect()
        } else {
            let rows = self
                .client
                .call(
                    table,
                    "getRowWithColumnsTs",
                    true,
                    |e| {
                        e.binary_field(1, self.client.wire(table).as_bytes());
                        e.binary_field(2, &get.row);
                        if !get.columns.is_empty() {
                            hbase1::columns(e, 3, &get.columns);
                        }
                        e.i64_field(4, before);
                    },
                    |r| hbase::reply(r, TType::List, hbase1::row_results),
                )
                .await?;
            rows.into_iter().next().map(|r| r.cells).unwrap_or_default()
        };
        Ok(with_cells_from(get.row.clone(), cells, get.time_range))
    }

    /// The calls' shares of a row mutation: one, or with
    /// [`split_rows`](Self::split_rows) one per timestamp; or what Thrift1
    /// cannot express.
    fn row_parts<'a>(&self, table: &str, m: &'a RowMutation) -> Result<Vec<Part<'a>>> {
        let refuse = |feature| Err(Self::unsupported(table, feature));
        // (timestamp, change or a row delete) of each mutation.
        let mut each = Vec::with_capacity(m.mutations.len());
        for mutation in &m.mutations {
            each.push(match mutation {
                Mutation::Put {
                    family,
                    qualifier,
                    value,
                    timestamp,
                } => (*timestamp, Some(Change::Put(family, qualifier, value))),
                Mutation::DeleteCell { timestamp: None, .. } => return refuse(unsupported::DELETE_NEWEST_VERSION),
                Mutation::DeleteCell { .. } => return refuse(unsupported::DELETE_ONE_VERSION),
                Mutation::DeleteColumn {
                    family,
                    qualifier,
                    up_to,
                } => (*up_to, Some(Change::DeleteColumn(family, qualifier))),
                Mutation::DeleteFamily { family, up_to } => (*up_to, Some(Change::DeleteFamily(family))),
                Mutation::DeleteRow { up_to } => (*up_to, None),
            });
        }
        let Some(&(first, _)) = each.first() else {
            return Ok(Vec::new());
        };
        let puts = each.iter().any(|(_, c)| matches!(c, Some(Change::Put(..))));
        let deletes = each
            .iter()
            .any(|(_, c)| matches!(c, Some(Change::DeleteColumn(..) | Change::DeleteFamily(..))));
        let row_delete = each.iter().any(|(_, c)| c.is_none());
        let refusal = if row_delete && (puts || deletes) {
            Some(unsupported::ROW_DELETE_AND_MORE)
        } else if puts && deletes {
            Some(unsupported::PUTS_AND_DELETES)
        } else if each.iter().any(|(t, _)| *t != first) {
            Some(unsupported::SEVERAL_TIMESTAMPS)
        } else {
            None
        };
        match refusal {
            None if row_delete => Ok(vec![Part::DeleteRow(first)]),
            None => Ok(vec![Part::Cells(
                first,
                each.into_iter().filter_map(|(_, c)| c).collect(),
            )]),
            Some(feature) if !self.split_rows || each.iter().any(|(t, _)| t.is_none()) => refuse(feature),
            Some(_) => {
                // One call per timestamp, oldest first, a row delete before
                // the cells of its timestamp.
                let mut by_time: std::collections::BTreeMap<i64, (bool, Vec<Change<'a>>)> = Default::default();
                for (t, change) in each {
                    let at = by_time.entry(t.unwrap_or_default()).or_default();
                    match change {
                        Some(c) => at.1.push(c),
                        None => at.0 = true,
                    }
                }
                let mut parts = Vec::new();
                for (t, (row_delete, changes)) in by_time {
                    if row_delete {
                        parts.push(Part::DeleteRow(Some(t)));
                    }
                    if !changes.is_empty() {
                        parts.push(Part::Cells(Some(t), changes));
                    }
                }
                Ok(parts)
            }
        }
    }

    /// `mutateRows` (at the server's time) or `mutateRowsTs`: each row's
    /// changes one `BatchMutation`.
    async fn mutate_rows(&self, table: &str, timestamp: Option<i64>, rows: &[(&Bytes, Vec<Change<'_>>)]) -> Result<()> {
        let name = if timestamp.is_some() {
            "mutateRowsTs"
        } else {
            "mutateRows"
        };
        self.client
            .call_void(table, name, |e| {
                e.binary_field(1, self.client.wire(table).as_bytes());
                e.field(TType::List, 2);
                e.list(TType::Struct, rows.len());
                for (row, changes) in rows {
                    hbase1::batch_mutation_fields(e, row, changes);
                }
                if let Some(ts) = timestamp {
                    e.i64_field(3, ts);
                }
            })
            .await
    }

    /// `deleteAllRow` or `deleteAllRowTs`.
    async fn delete_row(&self, table: &str, row: &[u8], up_to: Option<i64>) -> Result<()> {
        let name = if up_to.is_some() {
            "deleteAllRowTs"
        } else {
            "deleteAllRow"
        };
        self.client
            .call_void(table, name, |e| {
                e.binary_field(1, self.client.wire(table).as_bytes());
                e.binary_field(2, row);
                if let Some(ts) = up_to {
                    e.i64_field(3, ts);
                }
            })
            .await
    }

    /// Disables a table before it is deleted: `TableNotFound` when there is
    /// none, and a table disabled already is fine.
    async fn disable_existing(&self, table: &str) -> Result<()> {
        let exists = self.table_exists(table).await?;
        self.client
            .disable_existing(table, exists, |e| e.binary_field(1, self.client.wire(table).as_bytes()))
            .await
    }

    /// Rows by key in one `getRowsWithColumnsTs`, for gets that all read
    /// `first`'s columns and time range, one version each.
    async fn get_rows_alike(&self, table: &str, first: &Get, gets: &[Get]) -> Result<Vec<Option<RowResult>>> {
        let keys: Vec<&Bytes> = gets.iter().map(|g| &g.row).collect();
        let found = self
            .client
            .call(
                table,
                "getRowsWithColumnsTs",
                true,
                |e| {
                    e.binary_field(1, self.client.wire(table).as_bytes());
                    hbase1::texts(e, 2, &keys);
                    if !first.columns.is_empty() {
                        hbase1::columns(e, 3, &first.columns);
                    }
                    e.i64_field(4, first.time_range.max);
                },
                |r| hbase::reply(r, TType::List, hbase1::row_results),
            )
            .await?;
        // The gateway leaves out rows it found empty: match by key. A
        // row's cells move to the last get that asks for it; only a row
        // asked for twice is copied.
        let mut by_row: FxHashMap<Bytes, (usize, usize)> = FxHashMap::default();
        for (i, r) in found.iter().enumerate() {
            by_row.insert(r.row.clone(), (i, 0));
        }
        for g in gets {
            if let Some((_, asks)) = by_row.get_mut(&g.row) {
                *asks += 1;
            }
        }
        let mut found: Vec<Option<RowResult>> = found.into_iter().map(Some).collect();
        Ok(gets
            .iter()
            .map(|g| {
                let (i, asks) = by_row.get_mut(&g.row)?;
                *asks -= 1;
                let cells = if *asks == 0 {
                    found[*i].take()?.cells
                } else {
                    found[*i].as_ref()?.cells.clone()
                };
                with_cells_from(g.row.clone(), cells, g.time_range)
            })
            .collect())
    }
}

/// A row of `cells` (sorted) in `range`, or `None` if none is: the range's
/// lower bound applied to the newest versions read below its upper bound.
fn with_cells_from(row: Bytes, mut cells: Vec<Cell>, range: TimeRange) -> Option<RowResult> {
    if range.min > 0 {
        cells.retain(|c| c.timestamp >= range.min);
    }
    (!cells.is_empty()).then(|| RowResult::new(row, cells))
}

#[async_trait]
impl Store for Thrift1Store {
    fn forget_schema(&self, table: &str) {
        self.client.forget_schema(table);
    }

    /// `createTable` with a `ColumnDescriptor` per family, after checking
    /// that it can carry the schema.
    async fn create_table(&self, schema: &TableSchema) -> Result<()> {
        traced("thrift1", "create_table", &schema.name, 0, async move {
            check_schema(schema, &self.client.config.table_prefix)?;
            let refuse = |feature| Err(Self::unsupported(&schema.name, feature));
            // hmap's own record of the key layout is left out, as on a
            // framed Thrift2 gateway, so that typed tables can be created:
            // the table then reads as one whose layout is not recorded.
            // Metadata the caller declared is refused.
            if schema.metadata.keys().any(|key| key != KEY_LAYOUT_ATTRIBUTE) {
                return refuse(unsupported::METADATA);
            }
            if schema.key_layout().is_some() {
                tracing::warn!(
                    table = %schema.name,
                    gateway = %self.client.config.address,
                    "a Thrift1 gateway cannot carry table metadata; the table is created without its key layout"
                );
            }
            if !schema.split_keys.is_empty() {
                return refuse(unsupported::SPLIT_KEYS);
            }
            if schema.families.iter().any(|f| f.min_versions != 0) {
                return refuse(unsupported::MIN_VERSIONS);
            }
            if schema.families.iter().any(|f| f.block_size != DEFAULT_BLOCK_SIZE) {
                return refuse(unsupported::BLOCK_SIZE);
            }
            self.client.forget_schema(&schema.name);
            self.client
                .call_void(&schema.name, "createTable", |e| {
                    e.binary_field(1, self.client.wire(&schema.name).as_bytes());
                    hbase::struct_list(e, 2, &schema.families, hbase1::column_descriptor_fields);
                })
                .await
        })
        .await
    }

    async fn delete_table(&self, table: &str) -> Result<()> {
        traced("thrift1", "delete_table", table, 0, async move {
            check_table_name(table, &self.client.config.table_prefix)?;
            self.client.forget_schema(table);
            self.disable_existing(table).await?;
            self.client
                .call_void(table, "deleteTable", |e| {
                    e.binary_field(1, self.client.wire(table).as_bytes())
                })
                .await
        })
        .await
    }

    /// Unsupported (once the table is found to exist): Thrift1 has no
    /// `truncateTable`, and cannot recreate the table as it was.
    async fn truncate_table(&self, table: &str) -> Result<()> {
        traced("thrift1", "truncate_table", table, 0, async move {
            check_table_name(table, &self.client.config.table_prefix)?;
            self.require_table(table).await?;
            Err(Self::unsupported(table, unsupported::TRUNCATE))
        })
        .await
    }

    /// Checked against the table as the gateway describes it, as on every
    /// backend; a change that passes is unsupported.
    async fn alter_table(&self, table: &str, change: &FamilyChange) -> Result<()> {
        traced("thrift1", "alter_table", table, 0, async move {
            self.client.forget_schema(table);
            let live = self.families(table).await?;
            check_family_change(&live, change)?;
            Err(Self::unsupported(table, unsupported::ALTER))
        })
        .await
    }

    /// Whether `getTableNames` lists it (Thrift1 has no `tableExists`).
    async fn table_exists(&self, table: &str) -> Result<bool> {
        traced("thrift1", "table_exists", table, 0, async move {
            check_table_name(table, &self.client.config.table_prefix)?;
            let names = self
                .client
                .call(
                    table,
                    "getTableNames",
                    true,
                    |_| {},
                    |r| hbase::reply(r, TType::List, hbase1::texts_of),
                )
                .await?;
            let wire = self.client.wire(table);
            Ok(names.iter().any(|n| n[..] == *wire.as_bytes()))
        })
        .await
    }

    async fn list_tables(&self) -> Result<Vec<String>> {
        traced("thrift1", "list_tables", "", 0, async move {
            let names = self
                .client
                .call(
                    "",
                    "getTableNames",
                    true,
                    |_| {},
                    |r| hbase::reply(r, TType::List, hbase1::texts_of),
                )
                .await?;
            let names = names.iter().map(|n| String::from_utf8_lossy(n).into_owned());
            Ok(self.client.unprefixed(names))
        })
        .await
    }

    /// `getColumnDescriptors` and `getTableRegions`: the families, with
    /// HBase's defaults for `MIN_VERSIONS` and `BLOCKSIZE` (Thrift1 does not
    /// report them), no metadata, and the split points.
    async fn describe_table(&self, table: &str) -> Result<TableSchema> {
        traced("thrift1", "describe_table", table, 0, async move {
            let mut schema = self.families(table).await?;
            schema.split_keys = split_points(self.region_start_keys(table).await?);
            Ok(schema)
        })
        .await
    }

    async fn get(&self, table: &str, get: &Get) -> Result<Option<RowResult>> {
        traced(
            "thrift1",
            "get",
            table,
            1,
            self.confirmed(table, async move {
                let (schema, ()) = self
                    .checked(table, |schema| check_gets(schema, std::slice::from_ref(get)))
                    .await?;
                self.read_row(table, &schema, get).await
            }),
        )
        .await
    }

    /// One `getRowsWithColumnsTs` when every get reads the same columns and
    /// time range, one version each; else one call per get.
    async fn get_many(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<RowResult>>> {
        traced(
            "thrift1",
            "get_many",
            table,
            gets.len(),
            self.confirmed(table, async move {
                let (schema, ()) = self.checked(table, |schema| check_gets(schema, gets)).await?;
                let Some(first) = gets.first() else {
                    return Ok(Vec::new());
                };
                let alike = gets.iter().all(|g| {
                    g.columns == first.columns
                        && g.filter.is_none()
                        && g.time_range == first.time_range
                        && Self::versions_read(&schema, &g.columns, g.max_versions) <= 1
                });
                if !alike {
                    let mut rows = Vec::with_capacity(gets.len());
                    for get in gets {
                        rows.push(self.read_row(table, &schema, get).await?);
                    }
                    return Ok(rows);
                }
                let budget = super::GET_MANY_REPLY_BYTES;
                super::in_sized_chunks(table, "getRowsWithColumnsTs", gets, budget, |chunk| {
                    self.get_rows_alike(table, first, chunk)
                })
                .await
            }),
        )
        .await
    }

    /// Rows of puts, or of column and family deletes, at one timestamp go
    /// in `mutateRows` (the server's time) or `mutateRowsTs` batches, a row
    /// delete in `deleteAllRow(Ts)` (see [`split_rows`](Self::split_rows)
    /// for rows that need more); every row is classified before any is
    /// sent, so a row Thrift1 cannot express writes nothing.
    /// The rows checked one by one (Thrift1's own refusals included), the
    /// valid ones written as `mutate` writes them; a request that fails
    /// leaves its rows unknown.
    async fn mutate_each(&self, table: &str, rows: &[RowMutation]) -> Result<BatchOutcome> {
        traced(
            "thrift1",
            "mutate_each",
            table,
            rows.len(),
            self.confirmed(table, async move {
                let checked = self
                    .client
                    .checked_rows(table, || self.families(table), rows)
                    .await?
                    .into_iter()
                    .zip(rows)
                    .map(|(checked, r)| checked.and_then(|()| self.row_parts(table, r).map(drop)))
                    .collect();
                Ok(send_checked(rows, checked, |valid| async move { self.mutate(table, &valid).await }).await)
            }),
        )
        .await
    }

    async fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        traced(
            "thrift1",
            "mutate",
            table,
            rows.len(),
            self.confirmed(table, async move {
                self.checked(table, |schema| {
                    check_rows(schema, rows, self.client.config.max_value_size)
                })
                .await?;
                let mut parts = Vec::with_capacity(rows.len());
                for r in rows {
                    parts.extend(self.row_parts(table, r)?.into_iter().map(|p| (r, p)));
                }
                // Runs of rows at one timestamp, no row twice (a batch applies
                // its puts, then its deletes, in no order within a row).
                // A run also ends before its rows pass the request budget.
                let budget = self.client.config.max_request_bytes;
                let mut run: Vec<(&Bytes, Vec<Change<'_>>)> = Vec::new();
                let mut run_ts = None;
                let mut run_bytes = 0;
                let mut seen: FxHashSet<&Bytes> = FxHashSet::default();
                for (r, part) in parts {
                    let row = &r.row;
                    match part {
                        Part::Cells(ts, changes) => {
                            let size = r.wire_size();
                            if !run.is_empty() && (ts != run_ts || seen.contains(row) || run_bytes + size > budget) {
                                self.mutate_rows(table, run_ts, &run).await?;
                                run.clear();
                                seen.clear();
                                run_bytes = 0;
                            }
                            run_ts = ts;
                            run_bytes += size;
                            seen.insert(row);
                            run.push((row, changes));
                        }
                        Part::DeleteRow(up_to) => {
                            if !run.is_empty() {
                                self.mutate_rows(table, run_ts, &run).await?;
                                run.clear();
                                seen.clear();
                                run_bytes = 0;
                            }
                            self.delete_row(table, row, up_to).await?;
                        }
                    }
                }
                if !run.is_empty() {
                    self.mutate_rows(table, run_ts, &run).await?;
                }
                Ok(())
            }),
        )
        .await
    }

    /// `scannerOpenWithScan`, then `scannerGetList` batches read by a task
    /// of its own, and `scannerClose`.
    async fn scan<'a>(&'a self, table: &str, scan: &Scan) -> Result<RowStream<'a>> {
        traced(
            "thrift1",
            "scan",
            table,
            0,
            self.confirmed(table, async move {
                let (schema, ()) = self
                    .checked(table, |schema| {
                        check_read(schema, &scan.columns, scan.max_versions, scan.time_range)
                            .and_then(|()| crate::store::check::check_filter(&schema.name, scan.filter.as_ref()))
                    })
                    .await?;
                if Self::versions_read(&schema, &scan.columns, scan.max_versions) > 1 {
                    return Err(Self::unsupported(table, unsupported::SCAN_VERSIONS));
                }
                // The gateway would read a stop equal to the start as a one-row
                // get (`Scan.setStopRow`).
                if scan.is_empty_range() {
                    let none: RowStream<'a> = Box::pin(futures_util::stream::empty());
                    return Ok(none);
                }
                // HBase reads a reversed scan from its start row (inclusive, the
                // high end) down to its stop row (exclusive): start from the high
                // end; the fetcher skips a row equal to it and stops below the
                // low end.
                let (start, stop) = if scan.reversed {
                    (&scan.stop, &Bytes::new())
                } else {
                    (&scan.start, &scan.stop)
                };
                let filter = match &scan.filter {
                    Some(f) => Some(Self::filter_string(table, f, scan.reversed, scan.time_range)?),
                    None => None,
                };
                let spec = ScanSpec {
                    filter: filter.as_deref(),
                    start,
                    stop,
                    before: (scan.time_range.max != i64::MAX).then_some(scan.time_range.max),
                    columns: &scan.columns,
                    caching: scan.batch_size.map(|n| i32::try_from(n.max(1)).unwrap_or(i32::MAX)),
                    reversed: scan.reversed,
                };
                let id = self
                    .client
                    .call(
                        table,
                        "scannerOpenWithScan",
                        false,
                        |e| {
                            e.binary_field(1, self.client.wire(table).as_bytes());
                            hbase1::scan(e, 2, &spec);
                        },
                        |r| hbase::reply(r, TType::I32, Reader::i32),
                    )
                    .await?;
                Ok(ScanFetcher::start(
                    Arc::clone(&self.client),
                    &SCANNER,
                    table,
                    id,
                    scan,
                    scan.time_range.min,
                ))
            }),
        )
        .await
    }

    /// `checkAndPut`: one put, stamped by the server, if the column holds
    /// the expected value (`ifEquals`), or is absent or empty (no value
    /// sent: `ifNotExists`).
    async fn check_and_mutate(&self, table: &str, op: &CheckAndMutate) -> Result<bool> {
        traced(
            "thrift1",
            "check_and_mutate",
            table,
            1,
            self.confirmed(table, async move {
                self.checked(table, |schema| {
                    check_conditional(schema, op, self.client.config.max_value_size)
                })
                .await?;
                let refuse = |feature| Err(Self::unsupported(table, feature));
                if op.filter.is_some() {
                    return refuse(unsupported::CHECK_FILTER);
                }
                if !op.time_range.is_all() {
                    return refuse(unsupported::CHECK_TIME_RANGE);
                }
                // With nothing (or the empty value) expected, HBase passes
                // every operator but NOT_EQUAL when the column is absent or
                // empty (`HRegion.checkAndMutateInternal`: `valueIsNull`):
                // equality with nothing says the same.
                let absent = op.expected.as_ref().is_none_or(|v| v.is_empty());
                let equal = match op.compare {
                    CompareOp::Equal => true,
                    CompareOp::NotEqual => false,
                    _ => absent,
                };
                if !equal {
                    return refuse(unsupported::CHECK_COMPARE);
                }
                if op.mutations.iter().any(|m| !matches!(m, Mutation::Put { .. })) {
                    return refuse(unsupported::CHECK_AND_DELETE);
                }
                let [
                    Mutation::Put {
                        family,
                        qualifier,
                        value,
                        timestamp,
                    },
                ] = &op.mutations[..]
                else {
                    return refuse(unsupported::CHECK_AND_PUTS);
                };
                if timestamp.is_some() {
                    return refuse(unsupported::CHECK_AND_PUT_AT);
                }
                let checked = hbase1::column_name(&op.family, Some(&op.qualifier));
                self.client
                    .call(
                        table,
                        "checkAndPut",
                        false,
                        |e| {
                            e.binary_field(1, self.client.wire(table).as_bytes());
                            e.binary_field(2, &op.row);
                            e.binary_field(3, &checked);
                            if let Some(expected) = &op.expected {
                                e.binary_field(5, expected);
                            }
                            e.field(TType::Struct, 6);
                            hbase1::mutation_fields(e, &Change::Put(family, qualifier, value));
                        },
                        |r| hbase::reply(r, TType::Bool, Reader::bool),
                    )
                    .await
            }),
        )
        .await
    }

    /// `append(TAppend)`: the columns as `family:qualifier` texts beside
    /// their values; the gateway answers with the new cells' values and
    /// timestamps, without their columns, in the row's column order.
    async fn append(&self, table: &str, op: &Append) -> Result<RowResult> {
        traced(
            "thrift1",
            "append",
            table,
            1,
            self.confirmed(table, async move {
                self.checked(table, |schema| {
                    check_append(schema, op, self.client.config.max_value_size)
                })
                .await?;
                if op.columns.is_empty() {
                    return Ok(RowResult::new(op.row.clone(), Vec::new()));
                }
                let names: Vec<Bytes> = op
                    .columns
                    .iter()
                    .map(|(f, q, _)| Bytes::from(hbase1::column_name(f, Some(q))))
                    .collect();
                let values: Vec<&Bytes> = op.columns.iter().map(|(_, _, v)| v).collect();
                let cells = self
                    .client
                    .call(
                        table,
                        "append",
                        false,
                        |e: &mut Encoder| {
                            // TAppend { 1: table, 2: row, 3: columns, 4: values }
                            e.field(TType::Struct, 1);
                            e.binary_field(1, self.client.wire(table).as_bytes());
                            e.binary_field(2, &op.row);
                            hbase1::texts(e, 3, &names.iter().collect::<Vec<_>>());
                            hbase1::texts(e, 4, &values);
                            e.stop();
                        },
                        |r| hbase::reply(r, TType::List, hbase1::cells),
                    )
                    .await?;
                let mut columns: Vec<(&Bytes, &Bytes)> = op.columns.iter().map(|(f, q, _)| (f, q)).collect();
                columns.sort();
                if cells.len() != columns.len() {
                    // Applied, without the values (see `Increment::read_back`).
                    return Ok(op.answer(self.get(table, &op.read_back()).await?));
                }
                let cells = columns
                    .into_iter()
                    .zip(cells)
                    .map(|((f, q), (value, ts))| Cell::new(f.clone(), q.clone(), ts, value))
                    .collect();
                Ok(RowResult::new(op.row.clone(), cells))
            }),
        )
        .await
    }

    /// `atomicIncrement` of one column.
    async fn increment(&self, table: &str, op: &Increment) -> Result<Vec<i64>> {
        traced(
            "thrift1",
            "increment",
            table,
            1,
            self.confirmed(table, async move {
                self.checked(table, |schema| check_increment(schema, &op.row, &op.columns))
                    .await?;
                let [(family, qualifier, amount)] = &op.columns[..] else {
                    return Err(Self::unsupported(table, unsupported::INCREMENT_COLUMNS));
                };
                let column = hbase1::column_name(family, Some(qualifier));
                let sum = self.client.call(
                    table,
                    "atomicIncrement",
                    false,
                    |e: &mut Encoder| {
                        e.binary_field(1, self.client.wire(table).as_bytes());
                        e.binary_field(2, &op.row);
                        e.binary_field(3, &column);
                        e.i64_field(4, *amount);
                    },
                    |r| hbase::reply(r, TType::I64, Reader::i64),
                );
                let sum = sum.await.map_err(|e| counter_error(e, &op.row, &op.columns))?;
                Ok(vec![sum])
            }),
        )
        .await
    }
}

/// Feeds a Thrift1 reply to the decoder of `which`, for the fuzz target
/// and the mutation test (see [`fuzz_reply`](super::fuzz_reply)).
pub(super) fn decode_reply(which: u8, r: Reader) -> super::hbase::Decoded<()> {
    match which % 7 {
        0 => hbase::reply(r, TType::List, hbase1::row_results).map(drop),
        1 => hbase::reply(r, TType::List, hbase1::cells).map(drop),
        2 => hbase::reply(r, TType::Map, hbase1::column_descriptors).map(drop),
        3 => hbase::reply(r, TType::List, hbase1::texts_of).map(drop),
        4 => hbase::reply(r, TType::List, hbase1::region_starts).map(drop),
        5 => hbase::reply(r, TType::I64, Reader::i64).map(drop),
        _ => hbase::void(r).map(|v: std::result::Result<(), ServerException>| drop(v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One call's share of a row: its kind, timestamp and mutations.
    type Shape = (&'static str, Option<i64>, usize);

    /// The calls a row becomes, or the feature refused.
    fn parts(store: &Thrift1Store, row: RowMutation) -> std::result::Result<Vec<Shape>, &'static str> {
        match store.row_parts("t", &row) {
            Ok(parts) => Ok(parts
                .into_iter()
                .map(|p| match p {
                    Part::Cells(ts, changes) => ("cells", ts, changes.len()),
                    Part::DeleteRow(ts) => ("row", ts, 0),
                })
                .collect()),
            Err(StoreError::Unsupported {
                feature,
                table,
                backend,
            }) => {
                assert_eq!((table.as_str(), backend), ("t", "Thrift1Store"));
                Err(feature)
            }
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn rows_one_call_can_carry() {
        let store = Thrift1Store::new("127.0.0.1:1");
        let r = || RowMutation::new("r");
        assert_eq!(parts(&store, r()), Ok(vec![]));
        assert_eq!(
            parts(&store, r().put("f", "a", "1").put("g", "b", "2")),
            Ok(vec![("cells", None, 2)])
        );
        assert_eq!(
            parts(&store, r().delete_column_up_to("f", "a", 5).delete_family_up_to("g", 5)),
            Ok(vec![("cells", Some(5), 2)])
        );
        assert_eq!(parts(&store, r().delete_row()), Ok(vec![("row", None, 0)]));
    }

    #[test]
    fn rows_thrift1_cannot_carry_are_refused() {
        let store = Thrift1Store::new("127.0.0.1:1");
        let r = || RowMutation::new("r");
        assert_eq!(
            parts(&store, r().delete_latest("f", "a")),
            Err(unsupported::DELETE_NEWEST_VERSION)
        );
        assert_eq!(
            parts(&store, r().put("f", "a", "1").delete_version("f", "a", 3)),
            Err(unsupported::DELETE_ONE_VERSION)
        );
        assert_eq!(
            parts(&store, r().put_at("f", "a", 1, "1").put_at("f", "a", 2, "2")),
            Err(unsupported::SEVERAL_TIMESTAMPS)
        );
        assert_eq!(
            parts(&store, r().put_at("f", "a", 1, "1").delete_column_up_to("f", "b", 1)),
            Err(unsupported::PUTS_AND_DELETES)
        );
        assert_eq!(
            parts(&store, r().delete_row().delete_family("f")),
            Err(unsupported::ROW_DELETE_AND_MORE)
        );
    }

    #[test]
    fn split_rows_sends_stamped_rows_as_one_call_per_timestamp() {
        let store = Thrift1Store::new("127.0.0.1:1").split_rows(true);
        let r = || RowMutation::new("r");
        // The typed layer's put of a row with an unset field.
        assert_eq!(
            parts(&store, r().put_at("f", "a", 9, "1").delete_column_up_to("f", "b", 9)),
            Ok(vec![("cells", Some(9), 2)])
        );
        // A dynamic family replaced: its old cells deleted below the write.
        assert_eq!(
            parts(
                &store,
                r().delete_family_up_to("d", 8)
                    .put_at("d", "k", 9, "v")
                    .put_at("d", "l", 9, "w")
            ),
            Ok(vec![("cells", Some(8), 1), ("cells", Some(9), 2)])
        );
        assert_eq!(
            parts(
                &store,
                r().put_at("f", "a", 2, "2")
                    .delete_row_up_to_for_test(2)
                    .put_at("f", "a", 3, "3")
            ),
            Ok(vec![("row", Some(2), 0), ("cells", Some(2), 1), ("cells", Some(3), 1)])
        );
        // The server's time cannot be split: refused as without the option.
        assert_eq!(
            parts(&store, r().put("f", "a", "1").delete_column("f", "b")),
            Err(unsupported::PUTS_AND_DELETES)
        );
        assert_eq!(
            parts(&store, r().delete_version("f", "a", 3)),
            Err(unsupported::DELETE_ONE_VERSION)
        );
    }

    trait RowDeleteAt {
        fn delete_row_up_to_for_test(self, ts: i64) -> Self;
    }
    impl RowDeleteAt for RowMutation {
        fn delete_row_up_to_for_test(self, ts: i64) -> Self {
            self.push(Mutation::DeleteRow { up_to: Some(ts) })
        }
    }

    #[test]
    fn versions_read_are_capped_by_the_families_read() {
        let schema = TableSchema::new("t")
            .family(FamilySchema::new("one"))
            .family(FamilySchema::new("three").versions(3));
        let read = |columns: &[Column], n| Thrift1Store::versions_read(&schema, columns, n);
        assert_eq!(read(&[], 5), 3);
        assert_eq!(read(&[Column::Family("one".into())], 5), 1);
        assert_eq!(read(&[Column::Qualifier("three".into(), "q".into())], 2), 2);
        assert_eq!(read(&[Column::Family("one".into())], 1), 1);
    }

    #[test]
    fn a_lower_bound_applies_to_what_was_read() {
        let cells = vec![Cell::new("f", "q", 20, "b"), Cell::new("f", "q", 10, "a")];
        assert_eq!(
            with_cells_from(Bytes::from_static(b"r"), cells.clone(), TimeRange::new(15, 30)).map(|r| r.cells),
            Some(vec![Cell::new("f", "q", 20, "b")])
        );
        assert_eq!(
            with_cells_from(Bytes::from_static(b"r"), cells.clone(), TimeRange::new(25, 30)),
            None
        );
        assert_eq!(
            with_cells_from(Bytes::from_static(b"r"), cells, TimeRange::ALL).map(|r| r.cells.len()),
            Some(2)
        );
    }
}
