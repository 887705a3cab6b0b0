//! The in-memory store; see [`MemoryStore`].

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use smallvec::SmallVec;

use super::check::{check_mutation, check_read, check_row};
use super::error::{show_column, show_row};
use super::{
    CheckAndMutate, Column, Get, Increment, Mutation, Result, RowMutation, RowResult, RowScanner, Scan, Store,
    StoreError, TimeRange,
};
use crate::key::Printable;
use crate::schema::{FamilySchema, TTL_FOREVER, TableSchema};

/// Settings of a [`MemoryStore`].
#[derive(Clone)]
pub struct MemoryStoreConfig {
    /// The largest value accepted, in bytes (HBase's
    /// `hbase.client.keyvalue.maxsize`, 10 MiB by default).
    pub max_value_size: usize,
    /// The clock, in milliseconds since the epoch: the default timestamp of
    /// writes, and what TTLs are measured against. The system clock by default.
    pub clock: Arc<dyn Fn() -> i64 + Send + Sync>,
}

impl Default for MemoryStoreConfig {
    fn default() -> Self {
        MemoryStoreConfig {
            max_value_size: 10 * 1024 * 1024,
            clock: Arc::new(system_millis),
        }
    }
}

impl fmt::Debug for MemoryStoreConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryStoreConfig")
            .field("max_value_size", &self.max_value_size)
            .finish_non_exhaustive()
    }
}

fn system_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// An in-memory [`Store`] that behaves like HBase.
///
/// What it reproduces, with where HBase does it:
/// - cells sorted by row, family, qualifier, then timestamp newest first
///   (reference guide, "Data Model > Sort Order" and `CellComparator`);
/// - reads return at most `min(requested, VERSIONS)` versions per column, and
///   of versions older than the TTL only the newest `MIN_VERSIONS`
///   (`ScanWildcardColumnTracker.checkVersion`: a version is kept if
///   `count <= minVersions || !isExpired(ts)`);
/// - two puts at one timestamp leave one version, the later write
///   (`sameAsPreviousTSAndType` in the column trackers);
/// - delete markers mask every version at or below their timestamp, also puts
///   written *after* the delete with an older timestamp, until a major
///   compaction (reference guide, "Deletes mask Puts"); a put with a newer
///   timestamp is visible;
/// - deleting a column's latest version without a timestamp deletes the newest
///   visible version, or, if there is none, places a marker at the current
///   time (`HRegion.updateDeleteLatestVersionTimestamp`);
/// - a mutation without timestamps stamps all its cells with one current time
///   in milliseconds;
/// - scanners read at the point they were opened: writes made while a scan is
///   under way are not seen by it (HBase's MVCC read point);
/// - an increment writes `max(now, current timestamp + 1)`
///   (`HRegion.reckonDelta`) and refuses a value that is not 8 bytes ("Field is
///   not a long");
/// - an empty row key, one longer than [`max_row_length`](super::max_row_length), an
///   unknown table or family, a negative timestamp ("Timestamp cannot be
///   negative") and a value over the cell size limit
///   (`hbase.client.keyvalue.maxsize`, 10 MiB) are errors.
///
/// What it does not do: split regions, flush or compact on its own. Masked and
/// surplus versions stay in memory until [`MemoryStore::major_compact`], as they
/// would stay in an HBase memstore that was never flushed.
///
/// Thread-safe: each table has its own lock, readers share it.
#[derive(Debug, Default)]
pub struct MemoryStore {
    tables: RwLock<BTreeMap<String, Arc<MemTable>>>,
    config: MemoryStoreConfig,
    open_scanners: Arc<AtomicUsize>,
}

#[derive(Debug)]
struct MemTable {
    /// Families sorted by name: a cell's family index is its sort position.
    schema: TableSchema,
    /// The family names, interned: shared by every cell read.
    family_names: Vec<Bytes>,
    data: RwLock<TableData>,
}

#[derive(Debug, Default)]
struct TableData {
    rows: BTreeMap<RowKey, StoredRow>,
    /// The sequence number of the last write: a read sees writes up to its
    /// read point.
    seq: u64,
    /// The read points of open scanners, with how many scanners hold each:
    /// versions they may still read are not pruned.
    scanners: BTreeMap<u64, usize>,
}

/// A row key as the row map stores it.
///
/// Keys up to 30 bytes (most keys) live inline in the map's nodes: comparing
/// them follows no pointer, and reading one copies it out of a node the scan
/// is already in, instead of touching the reference count of a separately
/// allocated buffer (a cache miss per row in a large table). Longer keys keep
/// their first 16 bytes inline as a big-endian `u128`, so that most
/// comparisons still settle without following the pointer. Either way the
/// order is exactly the order of the key bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum RowKey {
    Inline { len: u8, bytes: [u8; INLINE_KEY] },
    Heap { prefix: u128, bytes: Bytes },
}

const INLINE_KEY: usize = 30;

impl RowKey {
    fn new(bytes: Bytes) -> Self {
        if bytes.len() <= INLINE_KEY {
            let mut inline = [0u8; INLINE_KEY];
            inline[..bytes.len()].copy_from_slice(&bytes);
            return RowKey::Inline {
                len: bytes.len() as u8,
                bytes: inline,
            };
        }
        let mut head = [0u8; 16];
        head.copy_from_slice(&bytes[..16]);
        RowKey::Heap {
            prefix: u128::from_be_bytes(head),
            bytes,
        }
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            RowKey::Inline { len, bytes } => &bytes[..usize::from(*len)],
            RowKey::Heap { bytes, .. } => bytes,
        }
    }

    fn to_bytes(&self) -> Bytes {
        match self {
            RowKey::Inline { len, bytes } => Bytes::copy_from_slice(&bytes[..usize::from(*len)]),
            RowKey::Heap { bytes, .. } => bytes.clone(),
        }
    }
}

impl Ord for RowKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        match (self, other) {
            (RowKey::Heap { prefix: a, bytes: x }, RowKey::Heap { prefix: b, bytes: y }) => {
                a.cmp(b).then_with(|| x.cmp(y))
            }
            _ => self.as_slice().cmp(other.as_slice()),
        }
    }
}

impl PartialOrd for RowKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

#[derive(Debug, Default, Clone)]
struct StoredRow {
    /// Sorted by family, qualifier, timestamp descending, sequence descending.
    /// The first cell inline: a narrow row needs no allocation of its own,
    /// and a scan no pointer chase per row.
    cells: SmallVec<[StoredCell; 1]>,
    family_markers: Vec<FamilyMarker>,
    column_markers: BTreeMap<(u16, Bytes), Vec<ColumnMarker>>,
}

#[derive(Debug, Clone)]
struct StoredCell {
    family: u16,
    qualifier: Bytes,
    ts: i64,
    seq: u64,
    value: Bytes,
}

#[derive(Debug, Clone, Copy)]
struct FamilyMarker {
    family: u16,
    ts: i64,
    seq: u64,
}

#[derive(Debug, Clone, Copy)]
struct ColumnMarker {
    /// All versions up to `ts`, or only the version at `ts`.
    all_versions: bool,
    ts: i64,
    seq: u64,
}

/// What a read selects, resolved against the table's families.
#[derive(Debug, Clone)]
struct Selection {
    /// `None` reads every family. Otherwise, indexed by family: `None` skips
    /// it, `Some(empty)` reads all of it, `Some(qualifiers)` (sorted) only
    /// those columns.
    families: Option<Vec<Option<Vec<Bytes>>>>,
    max_versions: u32,
    time_range: TimeRange,
}

impl Selection {
    fn wants(&self, family: u16, qualifier: &[u8]) -> bool {
        let Some(families) = &self.families else {
            return true;
        };
        match families.get(usize::from(family)) {
            Some(Some(qualifiers)) => {
                qualifiers.is_empty() || qualifiers.binary_search_by(|q| q[..].cmp(qualifier)).is_ok()
            }
            _ => false,
        }
    }

    /// One column, newest version first, at any time.
    fn one_column(family_count: usize, family: u16, qualifier: &Bytes, max_versions: u32) -> Selection {
        let mut families = vec![None; family_count];
        families[usize::from(family)] = Some(vec![qualifier.clone()]);
        Selection {
            families: Some(families),
            max_versions,
            time_range: TimeRange::ALL,
        }
    }
}

/// A family name as `'static` bytes: every cell read returns its family, and
/// a static `Bytes` clones without touching a shared reference count. Each
/// distinct name is stored once for the life of the process; family names
/// are few and short.
fn intern(name: &str) -> Bytes {
    static NAMES: std::sync::Mutex<BTreeMap<String, &'static [u8]>> = std::sync::Mutex::new(BTreeMap::new());
    let mut names = NAMES.lock().unwrap_or_else(PoisonError::into_inner);
    let stored: &'static [u8] = names
        .entry(name.to_string())
        .or_insert_with(|| Box::leak(name.as_bytes().to_vec().into_boxed_slice()));
    Bytes::from_static(stored)
}

fn read_lock<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    // No code that can panic runs while a lock is held, so a poisoned lock
    // still guards consistent data.
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

fn write_lock<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

impl MemoryStore {
    /// An empty store with the default settings.
    pub fn new() -> Self {
        MemoryStore::default()
    }

    /// An empty store with chosen settings.
    pub fn with_config(config: MemoryStoreConfig) -> Self {
        MemoryStore {
            config,
            ..MemoryStore::default()
        }
    }

    /// How many scanners are open (not yet dropped).
    pub fn open_scanners(&self) -> usize {
        self.open_scanners.load(Ordering::SeqCst)
    }

    /// Does what HBase's major compaction does to a table: drops masked
    /// versions, expired versions beyond `MIN_VERSIONS`, versions beyond
    /// `VERSIONS`, and the delete markers. Reads may change afterwards, as
    /// they do in HBase ("major compactions change query results").
    pub fn major_compact(&self, table: &str) -> Result<()> {
        let t = self.table(table)?;
        let now = self.now();
        let mut data = write_lock(&t.data);
        let read_point = data.seq;
        let all = Selection {
            families: None,
            max_versions: u32::MAX,
            time_range: TimeRange::ALL,
        };
        data.rows.retain(|_, row| {
            let mut kept = Vec::new();
            visit_visible(&t.schema, row, &all, read_point, now, |cell| kept.push(cell.clone()));
            *row = StoredRow {
                cells: kept.into_iter().collect(),
                ..StoredRow::default()
            };
            !row.cells.is_empty()
        });
        Ok(())
    }

    /// How many cell versions the table holds in memory, visible or not yet
    /// pruned: a measure of its memory use.
    pub fn stored_cells(&self, table: &str) -> Result<usize> {
        let t = self.table(table)?;
        let data = read_lock(&t.data);
        Ok(data.rows.values().map(|r| r.cells.len()).sum())
    }

    fn now(&self) -> i64 {
        (self.config.clock)()
    }

    fn table(&self, name: &str) -> Result<Arc<MemTable>> {
        read_lock(&self.tables)
            .get(name)
            .cloned()
            .ok_or_else(|| StoreError::TableNotFound { table: name.into() })
    }
}

impl MemTable {
    fn family_index(&self, family: &[u8]) -> Option<u16> {
        self.schema
            .families
            .iter()
            .position(|f| f.name.as_bytes() == family)
            .and_then(|i| u16::try_from(i).ok())
    }

    fn require_family(&self, family: &[u8]) -> Result<u16> {
        self.family_index(family).ok_or_else(|| StoreError::NoSuchFamily {
            table: self.schema.name.clone(),
            family: Printable(family).to_string(),
        })
    }

    fn selection(&self, columns: &[Column], max_versions: u32, time_range: TimeRange) -> Result<Selection> {
        check_read(&self.schema, columns, max_versions, time_range)?;
        if columns.is_empty() {
            return Ok(Selection {
                families: None,
                max_versions,
                time_range,
            });
        }
        let mut families: Vec<Option<Vec<Bytes>>> = vec![None; self.schema.families.len()];
        // A whole family wins over single columns of it, as in HBase's Get.
        let mut whole = vec![false; families.len()];
        for column in columns {
            let index = usize::from(self.require_family(column.family())?);
            match column {
                Column::Family(_) => {
                    whole[index] = true;
                    families[index] = Some(Vec::new());
                }
                Column::Qualifier(_, qualifier) if !whole[index] => {
                    families[index].get_or_insert_with(Vec::new).push(qualifier.clone());
                }
                Column::Qualifier(..) => {}
            }
        }
        for qualifiers in families.iter_mut().flatten() {
            qualifiers.sort();
            qualifiers.dedup();
        }
        Ok(Selection {
            families: Some(families),
            max_versions,
            time_range,
        })
    }
}

/// Calls `emit` with every cell a read selects, in order: the heart of the
/// read path, shared by gets, scans, increments, checks and compaction.
fn visit_visible<'r>(
    schema: &TableSchema,
    row: &'r StoredRow,
    sel: &Selection,
    read_point: u64,
    now: i64,
    mut emit: impl FnMut(&'r StoredCell),
) {
    let cells = &row.cells;
    let mut i = 0;
    while i < cells.len() {
        let (family, qualifier) = (cells[i].family, &cells[i].qualifier);
        let group_len = cells[i..]
            .iter()
            .take_while(|c| c.family == family && c.qualifier == *qualifier)
            .count();
        let group = &cells[i..i + group_len];
        i += group_len;
        if !sel.wants(family, qualifier) {
            continue;
        }
        let Some(fam) = schema.families.get(usize::from(family)) else {
            continue;
        };
        let masks = row.masks(family, qualifier, read_point);
        visit_column(fam, group, sel, read_point, now, |ts| masks.masked(ts), &mut emit);
    }
}

/// One column's versions, newest first: HBase's order of checks in
/// `UserScanQueryMatcher` and `ScanWildcardColumnTracker`.
fn visit_column<'r>(
    fam: &FamilySchema,
    versions: &'r [StoredCell],
    sel: &Selection,
    read_point: u64,
    now: i64,
    masked: impl Fn(i64) -> bool,
    emit: &mut impl FnMut(&'r StoredCell),
) {
    let max_versions = sel.max_versions.min(fam.versions);
    let min_versions = fam.min_versions;
    let oldest_unexpired = oldest_unexpired(fam, now);
    let mut count = 0u32;
    let mut previous_ts = None;
    for cell in versions {
        if cell.seq > read_point {
            continue;
        }
        // Of two writes at one timestamp, only the later (listed first) counts.
        if previous_ts == Some(cell.ts) {
            continue;
        }
        previous_ts = Some(cell.ts);
        let expired = cell.ts < oldest_unexpired;
        // Without MIN_VERSIONS, expired cells are skipped before anything else.
        if min_versions == 0 && expired {
            return;
        }
        if masked(cell.ts) {
            continue;
        }
        if cell.ts >= sel.time_range.max {
            continue;
        }
        if cell.ts < sel.time_range.min {
            return;
        }
        count += 1;
        if count > max_versions || (count > min_versions && expired) {
            return;
        }
        emit(cell);
    }
}

/// The cells a read selects from a row, or `None` if there are none.
fn read_cells(
    table: &MemTable,
    row: &StoredRow,
    sel: &Selection,
    read_point: u64,
    now: i64,
) -> Option<Vec<super::Cell>> {
    let mut cells = Vec::new();
    visit_visible(&table.schema, row, sel, read_point, now, |c| {
        if cells.is_empty() {
            // One allocation for most rows, none for rows that show nothing.
            cells.reserve(row.cells.len().min(16));
        }
        cells.push(super::Cell {
            family: table.family_names[usize::from(c.family)].clone(),
            qualifier: c.qualifier.clone(),
            timestamp: c.ts,
            value: c.value.clone(),
        });
    });
    (!cells.is_empty()).then_some(cells)
}

/// The newest visible version of one column, as a check or an increment sees it.
fn latest_cell<'r>(
    schema: &TableSchema,
    row: Option<&'r StoredRow>,
    family: u16,
    qualifier: &Bytes,
    read_point: u64,
    now: i64,
) -> Option<&'r StoredCell> {
    let row = row?;
    let sel = Selection::one_column(schema.families.len(), family, qualifier, 1);
    let mut found = None;
    visit_visible(schema, row, &sel, read_point, now, |c| {
        found.get_or_insert(c);
    });
    found
}

/// The oldest timestamp a family's TTL leaves visible at `now`
/// (HBase: a cell expires when `timestamp < now - ttl`).
fn oldest_unexpired(fam: &FamilySchema, now: i64) -> i64 {
    if fam.ttl_secs >= TTL_FOREVER {
        i64::MIN
    } else {
        now.saturating_sub(i64::from(fam.ttl_secs) * 1000)
    }
}

/// The delete markers that apply to one column, as a reader at a read point
/// sees them.
struct Masks<'r> {
    /// The newest family delete: every version at or below it is masked.
    family_deleted_to: Option<i64>,
    column: &'r [ColumnMarker],
    read_point: u64,
}

impl Masks<'_> {
    /// Whether a version at `ts` is masked: by a family or column delete at
    /// or above it, or a version delete at exactly it.
    fn masked(&self, ts: i64) -> bool {
        self.family_deleted_to.is_some_and(|d| ts <= d)
            || self
                .column
                .iter()
                .any(|m| m.seq <= self.read_point && (ts == m.ts || (m.all_versions && ts <= m.ts)))
    }
}

impl StoredRow {
    fn masks(&self, family: u16, qualifier: &Bytes, read_point: u64) -> Masks<'_> {
        let family_deleted_to = self
            .family_markers
            .iter()
            .filter(|m| m.family == family && m.seq <= read_point)
            .map(|m| m.ts)
            .max();
        let column = if self.column_markers.is_empty() {
            &[][..]
        } else {
            self.column_markers
                .get(&(family, qualifier.clone()))
                .map_or(&[][..], Vec::as_slice)
        };
        Masks {
            family_deleted_to,
            column,
            read_point,
        }
    }

    fn insert(&mut self, cell: StoredCell) {
        let at = self.cells.partition_point(|c| {
            (
                c.family,
                &c.qualifier[..],
                std::cmp::Reverse(c.ts),
                std::cmp::Reverse(c.seq),
            ) < (
                cell.family,
                &cell.qualifier[..],
                std::cmp::Reverse(cell.ts),
                std::cmp::Reverse(cell.seq),
            )
        });
        self.cells.insert(at, cell);
    }

    fn mark_column(&mut self, family: u16, qualifier: &Bytes, marker: ColumnMarker) {
        self.column_markers
            .entry((family, qualifier.clone()))
            .or_default()
            .push(marker);
    }

    /// Drops the versions of a column that no reader can see again, once it
    /// holds more than twice its family's `VERSIONS` (plus some slack), so
    /// that a cell rewritten a million times does not keep a million copies.
    ///
    /// Readers at or after `horizon` (every open scanner, and every later
    /// read) agree on what is dropped: versions overwritten at the same
    /// timestamp, versions masked by a delete marker, expired versions beyond
    /// `MIN_VERSIONS`, and versions beyond `VERSIONS`. The last is what an
    /// HBase flush does; before a flush, HBase could still show such a
    /// version after the newer ones are deleted one by one.
    fn prune_column_if_large(&mut self, family: u16, qualifier: &Bytes, fam: &FamilySchema, horizon: u64, now: i64) {
        let start = self
            .cells
            .partition_point(|c| (c.family, &c.qualifier[..]) < (family, &qualifier[..]));
        let len = self.cells[start..]
            .iter()
            .take_while(|c| c.family == family && c.qualifier[..] == qualifier[..])
            .count();
        let versions = usize::try_from(fam.versions).unwrap_or(usize::MAX);
        if len <= versions.saturating_mul(2).saturating_add(8) {
            return;
        }
        let masks = self.masks(family, qualifier, horizon);
        let oldest_unexpired = oldest_unexpired(fam, now);
        let mut count = 0u32;
        let mut previous_ts = None;
        let keep: Vec<bool> = self.cells[start..start + len]
            .iter()
            .map(|cell| {
                if cell.seq > horizon {
                    return true;
                }
                if previous_ts == Some(cell.ts) {
                    return false;
                }
                previous_ts = Some(cell.ts);
                if masks.masked(cell.ts) {
                    return false;
                }
                count += 1;
                count <= fam.versions && (count <= fam.min_versions || cell.ts >= oldest_unexpired)
            })
            .collect();
        let mut keep = keep.into_iter();
        let mut index = 0;
        self.cells.retain(|_| {
            let in_column = index >= start && index < start + len;
            index += 1;
            !in_column || keep.next().unwrap_or(true)
        });
    }
}

impl TableData {
    /// Applies one row's mutations at sequence `seq` and time `now`.
    fn apply(&mut self, table: &MemTable, row: &Bytes, mutations: &[Mutation], now: i64) {
        self.seq += 1;
        let seq = self.seq;
        let before = seq - 1;
        // Deletes of "the latest version" resolve against the row as it was
        // before this mutation (HBase prepares delete timestamps first).
        let mut latest_deletes: Vec<(u16, Bytes, i64)> = Vec::new();
        for m in mutations {
            if let Mutation::DeleteCell {
                family,
                qualifier,
                timestamp: None,
            } = m
            {
                let Some(f) = table.family_index(family) else { continue };
                // The n-th such delete of one column in a mutation targets the
                // n-th newest version.
                let nth = 1 + latest_deletes
                    .iter()
                    .filter(|(g, q, _)| *g == f && q == qualifier)
                    .count();
                let ts = self
                    .nth_latest(table, row, f, qualifier, nth, before, now)
                    .unwrap_or(now);
                latest_deletes.push((f, qualifier.clone(), ts));
            }
        }
        let mut latest_deletes = latest_deletes.into_iter();
        let horizon = self.horizon();
        let stored = self.rows.entry(RowKey::new(row.clone())).or_default();
        for m in mutations {
            match m {
                Mutation::Put {
                    family,
                    qualifier,
                    value,
                    timestamp,
                } => {
                    let Some(f) = table.family_index(family) else { continue };
                    stored.insert(StoredCell {
                        family: f,
                        qualifier: qualifier.clone(),
                        ts: timestamp.unwrap_or(now),
                        seq,
                        value: value.clone(),
                    });
                    let fam = &table.schema.families[usize::from(f)];
                    stored.prune_column_if_large(f, qualifier, fam, horizon, now);
                }
                Mutation::DeleteCell {
                    family,
                    qualifier,
                    timestamp,
                } => {
                    let Some(f) = table.family_index(family) else { continue };
                    let ts = match timestamp {
                        Some(ts) => *ts,
                        None => latest_deletes.next().map_or(now, |(_, _, ts)| ts),
                    };
                    stored.mark_column(
                        f,
                        qualifier,
                        ColumnMarker {
                            all_versions: false,
                            ts,
                            seq,
                        },
                    );
                }
                Mutation::DeleteColumn {
                    family,
                    qualifier,
                    up_to,
                } => {
                    let Some(f) = table.family_index(family) else { continue };
                    stored.mark_column(
                        f,
                        qualifier,
                        ColumnMarker {
                            all_versions: true,
                            ts: up_to.unwrap_or(now),
                            seq,
                        },
                    );
                }
                Mutation::DeleteFamily { family, up_to } => {
                    let Some(f) = table.family_index(family) else { continue };
                    stored.family_markers.push(FamilyMarker {
                        family: f,
                        ts: up_to.unwrap_or(now),
                        seq,
                    });
                }
                Mutation::DeleteRow { up_to } => {
                    for f in 0..table.schema.families.len() {
                        stored.family_markers.push(FamilyMarker {
                            family: u16::try_from(f).unwrap_or(u16::MAX),
                            ts: up_to.unwrap_or(now),
                            seq,
                        });
                    }
                }
            }
        }
    }

    /// The oldest read point any reader may still use: the oldest open
    /// scanner's, or the present.
    fn horizon(&self) -> u64 {
        self.scanners.keys().next().copied().unwrap_or(self.seq)
    }

    /// The timestamp of the `nth` newest visible version of a column, read
    /// with the family's version limit, as HBase's delete preparation does.
    #[allow(clippy::too_many_arguments)] // the coordinates of one read
    fn nth_latest(
        &self,
        table: &MemTable,
        row: &Bytes,
        family: u16,
        qualifier: &Bytes,
        nth: usize,
        read_point: u64,
        now: i64,
    ) -> Option<i64> {
        let stored = self.rows.get(&RowKey::new(row.clone()))?;
        let max_versions = u32::try_from(nth).unwrap_or(u32::MAX);
        let sel = Selection::one_column(table.schema.families.len(), family, qualifier, max_versions);
        let mut seen = Vec::new();
        visit_visible(&table.schema, stored, &sel, read_point, now, |c| seen.push(c.ts));
        seen.get(nth - 1).copied()
    }
}

impl Store for MemoryStore {
    fn create_table(&self, schema: &TableSchema) -> Result<()> {
        schema.validate().map_err(|reason| StoreError::InvalidSchema {
            table: schema.name.clone(),
            reason,
        })?;
        let mut tables = write_lock(&self.tables);
        if tables.contains_key(&schema.name) {
            return Err(StoreError::TableExists {
                table: schema.name.clone(),
            });
        }
        let mut sorted = schema.clone();
        sorted.families.sort_by(|a, b| a.name.cmp(&b.name));
        let family_names = sorted.families.iter().map(|f| intern(&f.name)).collect();
        tables.insert(
            schema.name.clone(),
            Arc::new(MemTable {
                schema: sorted,
                family_names,
                data: RwLock::new(TableData::default()),
            }),
        );
        Ok(())
    }

    fn delete_table(&self, table: &str) -> Result<()> {
        write_lock(&self.tables)
            .remove(table)
            .map(|_| ())
            .ok_or_else(|| StoreError::TableNotFound { table: table.into() })
    }

    /// Clears the rows; the schema, with its split keys, stays.
    fn truncate_table(&self, table: &str) -> Result<()> {
        write_lock(&self.table(table)?.data).rows.clear();
        Ok(())
    }

    fn table_exists(&self, table: &str) -> Result<bool> {
        Ok(read_lock(&self.tables).contains_key(table))
    }

    fn list_tables(&self) -> Result<Vec<String>> {
        Ok(read_lock(&self.tables).keys().cloned().collect())
    }

    fn describe_table(&self, table: &str) -> Result<TableSchema> {
        Ok(self.table(table)?.schema.clone())
    }

    fn get(&self, table: &str, get: &Get) -> Result<Option<RowResult>> {
        let t = self.table(table)?;
        check_row(table, &get.row)?;
        let sel = t.selection(&get.columns, get.max_versions, get.time_range)?;
        let now = self.now();
        let data = read_lock(&t.data);
        let key = RowKey::new(get.row.clone());
        Ok(data
            .rows
            .get(&key)
            .and_then(|row| read_cells(&t, row, &sel, data.seq, now))
            .map(|cells| RowResult {
                row: get.row.clone(),
                cells,
            }))
    }

    fn get_many(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<RowResult>>> {
        let t = self.table(table)?;
        let selections = gets
            .iter()
            .map(|g| {
                check_row(table, &g.row)?;
                t.selection(&g.columns, g.max_versions, g.time_range)
            })
            .collect::<Result<Vec<_>>>()?;
        let now = self.now();
        let data = read_lock(&t.data);
        Ok(gets
            .iter()
            .zip(&selections)
            .map(|(g, sel)| {
                let row = data.rows.get(&RowKey::new(g.row.clone()))?;
                read_cells(&t, row, sel, data.seq, now).map(|cells| RowResult {
                    row: g.row.clone(),
                    cells,
                })
            })
            .collect())
    }

    fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        let t = self.table(table)?;
        for r in rows {
            check_mutation(&t.schema, &r.row, &r.mutations, self.config.max_value_size)?;
        }
        let now = self.now();
        let mut data = write_lock(&t.data);
        for r in rows {
            data.apply(&t, &r.row, &r.mutations, now);
        }
        Ok(())
    }

    fn scan<'a>(&'a self, table: &str, scan: &Scan) -> Result<RowScanner<'a>> {
        let t = self.table(table)?;
        let selection = t.selection(&scan.columns, scan.max_versions, scan.time_range)?;
        let read_point = {
            let mut data = write_lock(&t.data);
            let seq = data.seq;
            *data.scanners.entry(seq).or_default() += 1;
            seq
        };
        self.open_scanners.fetch_add(1, Ordering::SeqCst);
        Ok(Box::new(MemScanner {
            table: t,
            selection,
            start: scan.start.clone(),
            stop: scan.stop.clone(),
            reversed: scan.reversed,
            cursor: None,
            read_point,
            now: self.now(),
            remaining: scan.limit,
            batch_size: scan.batch_size.max(1),
            buffer: VecDeque::new(),
            done: false,
            open_scanners: Arc::clone(&self.open_scanners),
        }))
    }

    fn check_and_mutate(&self, table: &str, op: &CheckAndMutate) -> Result<bool> {
        let t = self.table(table)?;
        let family = t.require_family(&op.family)?;
        check_mutation(&t.schema, &op.row, &op.mutations, self.config.max_value_size)?;
        let now = self.now();
        let mut data = write_lock(&t.data);
        let stored = data.rows.get(&RowKey::new(op.row.clone()));
        let current = latest_cell(&t.schema, stored, family, &op.qualifier, data.seq, now);
        let passes = match (&op.expected, current) {
            (None, None) => true,
            (Some(expected), Some(cell)) => cell.value[..] == expected[..],
            _ => false,
        };
        if passes {
            data.apply(&t, &op.row, &op.mutations, now);
        }
        Ok(passes)
    }

    fn increment(&self, table: &str, op: &Increment) -> Result<Vec<i64>> {
        let t = self.table(table)?;
        check_row(table, &op.row)?;
        let families = op
            .columns
            .iter()
            .map(|(f, _, _)| t.require_family(f))
            .collect::<Result<Vec<_>>>()?;
        let now = self.now();
        let mut data = write_lock(&t.data);
        // Read every counter first, so that a refused one writes nothing.
        let mut writes = Vec::with_capacity(op.columns.len());
        for ((family_name, qualifier, amount), &family) in op.columns.iter().zip(&families) {
            let stored = data.rows.get(&RowKey::new(op.row.clone()));
            let current = latest_cell(&t.schema, stored, family, qualifier, data.seq, now);
            let (value, ts) = match current {
                None => (0i64, now),
                Some(cell) => {
                    let bytes: [u8; 8] = cell.value[..].try_into().map_err(|_| StoreError::NotACounter {
                        table: table.into(),
                        row: show_row(&op.row),
                        column: show_column(family_name, qualifier),
                        len: cell.value.len(),
                    })?;
                    (i64::from_be_bytes(bytes), now.max(cell.ts.saturating_add(1)))
                }
            };
            // Java's long arithmetic wraps; so does HBase's counter.
            writes.push((family_name, qualifier, value.wrapping_add(*amount), ts));
        }
        let mutations: Vec<Mutation> = writes
            .iter()
            .map(|(family, qualifier, value, ts)| Mutation::Put {
                family: (*family).clone(),
                qualifier: (*qualifier).clone(),
                value: Bytes::copy_from_slice(&value.to_be_bytes()),
                timestamp: Some(*ts),
            })
            .collect();
        data.apply(&t, &op.row, &mutations, now);
        Ok(writes.into_iter().map(|(_, _, value, _)| value).collect())
    }
}

/// A scanner over a [`MemoryStore`] table: fetches `batch_size` rows per
/// lock, reading at the sequence number current when it was opened.
struct MemScanner {
    table: Arc<MemTable>,
    selection: Selection,
    start: Bytes,
    stop: Bytes,
    reversed: bool,
    /// The last row visited, exclusive bound of the next batch.
    cursor: Option<Bytes>,
    read_point: u64,
    now: i64,
    remaining: Option<usize>,
    batch_size: usize,
    buffer: VecDeque<RowResult>,
    done: bool,
    open_scanners: Arc<AtomicUsize>,
}

impl MemScanner {
    fn fetch(&mut self) {
        let data = read_lock(&self.table.data);
        let (mut lower, mut upper) = (Bound::Included(RowKey::new(self.start.clone())), Bound::Unbounded);
        if !self.stop.is_empty() {
            upper = Bound::Excluded(RowKey::new(self.stop.clone()));
        }
        if let Some(cursor) = &self.cursor {
            if self.reversed {
                upper = Bound::Excluded(RowKey::new(cursor.clone()));
            } else {
                lower = Bound::Excluded(RowKey::new(cursor.clone()));
            }
        }
        if !self.stop.is_empty() && self.start >= self.stop {
            self.done = true;
            return;
        }
        let range = data.rows.range((lower, upper));
        let rows: Box<dyn Iterator<Item = (&RowKey, &StoredRow)>> = if self.reversed {
            Box::new(range.rev())
        } else {
            Box::new(range)
        };
        let want = self.remaining.map_or(self.batch_size, |r| r.min(self.batch_size));
        let mut found = 0;
        let mut exhausted = true;
        let mut last = None;
        self.buffer.reserve(want);
        for (key, row) in rows {
            last = Some(key);
            if let Some(cells) = read_cells(&self.table, row, &self.selection, self.read_point, self.now) {
                self.buffer.push_back(RowResult {
                    row: key.to_bytes(),
                    cells,
                });
                found += 1;
                if found == want {
                    exhausted = false;
                    break;
                }
            }
        }
        // The next batch resumes after the last row visited.
        if let Some(key) = last {
            self.cursor = Some(key.to_bytes());
        }
        if exhausted {
            self.done = true;
        }
    }
}

impl Iterator for MemScanner {
    type Item = Result<RowResult>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == Some(0) {
            return None;
        }
        if self.buffer.is_empty() && !self.done {
            self.fetch();
        }
        let row = self.buffer.pop_front()?;
        if let Some(r) = &mut self.remaining {
            *r -= 1;
        }
        Some(Ok(row))
    }
}

impl Drop for MemScanner {
    fn drop(&mut self) {
        let mut data = write_lock(&self.table.data);
        if let Some(count) = data.scanners.get_mut(&self.read_point) {
            *count -= 1;
            if *count == 0 {
                data.scanners.remove(&self.read_point);
            }
        }
        self.open_scanners.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use proptest::prelude::*;

    use super::RowKey;

    fn key() -> impl Strategy<Value = Vec<u8>> {
        // Keys from few bytes, zeros included, so that shared prefixes, zero
        // padding and the 16-byte boundary all come up often.
        // Lengths on both sides of the 30-byte inline limit.
        prop::collection::vec(prop_oneof![Just(0u8), Just(1u8), Just(0xffu8)], 0..40)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        #[test]
        fn row_keys_order_like_their_bytes(a in key(), b in key()) {
            let (ka, kb) = (RowKey::new(Bytes::from(a.clone())), RowKey::new(Bytes::from(b.clone())));
            prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
            prop_assert_eq!(ka == kb, a == b);
        }
    }
}
