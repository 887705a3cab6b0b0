//! The in-memory store; see [`MemoryStore`].

use async_trait::async_trait;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use smallvec::SmallVec;

use super::check::{
    check_family_change, check_increment, check_mutation, check_read, check_row, check_schema, check_table_name,
};
use super::error::{show_column, show_row};
use super::filter::CompareOp;
use super::filter::eval::{RegionScan, RowOutcome, StoreRow};
use super::traced;
use super::{
    Append, BatchOutcome, CheckAndMutate, Column, FamilyChange, Filter, Get, Increment, Mutation, Result, RowMutation,
    RowResult, RowStream, Scan, Store, StoreError, TimeRange, selected_columns,
};
use crate::key::Printable;
use crate::schema::{FamilySchema, TTL_FOREVER, TableSchema};

/// Settings of a [`MemoryStore`]: [`MemoryStoreConfig::new`], then the
/// builder methods (`#[non_exhaustive]`: settings will be added).
///
/// ```
/// use std::sync::Arc;
/// use hmap::store::{MemoryStore, MemoryStoreConfig};
///
/// let store = MemoryStore::with_config(
///     MemoryStoreConfig::new().max_value_size(1024).clock(Arc::new(|| 1_700_000_000_000)),
/// );
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct MemoryStoreConfig {
    /// The largest cell accepted, in bytes, counted as HBase's region server
    /// counts it against `hbase.server.keyvalue.maxsize` (10 MiB by
    /// default): row, family, qualifier and value, plus 24 bytes of framing.
    pub max_value_size: usize,
    /// The clock, in milliseconds since the epoch: the default timestamp of
    /// writes, and what TTLs are measured against. The system clock by default.
    pub clock: Arc<dyn Fn() -> i64 + Send + Sync>,
}

impl MemoryStoreConfig {
    /// The defaults: 10 MiB cells, the system clock.
    pub fn new() -> Self {
        MemoryStoreConfig::default()
    }

    /// The largest cell accepted (see the field).
    pub fn max_value_size(mut self, bytes: usize) -> Self {
        self.max_value_size = bytes;
        self
    }

    /// The clock, in milliseconds since the epoch (see the field).
    pub fn clock(mut self, clock: Arc<dyn Fn() -> i64 + Send + Sync>) -> Self {
        self.clock = clock;
        self
    }
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
///   `count <= minVersions || !isExpired(ts)`); a read that names the column
///   returns one expired version more, the first beyond `MIN_VERSIONS`
///   (`ExplicitColumnTracker.checkVersions` includes the version at which
///   `count >= minVersions && isExpired(ts)`, then moves on), until a major
///   compaction drops it;
/// - two puts at one timestamp leave one version, the later write
///   (`sameAsPreviousTSAndType` in the column trackers);
/// - delete markers mask every version at or below their timestamp, also puts
///   written *after* the delete with an older timestamp, until a major
///   compaction (reference guide, "Deletes mask Puts"); a put with a newer
///   timestamp is visible;
/// - deleting a column's latest version without a timestamp deletes the newest
///   visible version, or, if there is none, places a marker at the current
///   time (`HRegion.updateDeleteLatestVersionTimestamp`); every such delete
///   in one row mutation resolves against the row as it was before it, so
///   two of one column delete one version (each is its own `Delete` in
///   HBase's `RowMutations`);
/// - a check-and-mutate treats an empty expected value as "absent or empty",
///   and stamps its puts no older than the checked cell
///   (`HRegion.checkAndMutateInternal`);
/// - a mutation without timestamps stamps all its cells with one current time
///   in milliseconds;
/// - scanners read at the point they were opened: writes made while a scan is
///   under way are not seen by it (HBase's MVCC read point);
/// - an increment writes `max(now, current timestamp + 1)`
///   (`HRegion.reckonDelta`) and refuses a value that is not 8 bytes ("Field is
///   not a long");
/// - an empty row key, one longer than [`max_row_length`](super::max_row_length), an
///   illegal table name, an unknown table or family, a negative timestamp
///   ("Timestamp cannot be negative"), a cell over the cell size limit
///   (`hbase.server.keyvalue.maxsize`, 10 MiB, counting row, column and
///   value) and an increment naming a column twice are errors.
///
/// What it does not do: split regions, flush or compact on its own. Masked and
/// surplus versions stay in memory until [`MemoryStore::major_compact`], as they
/// would stay in an HBase memstore that was never flushed, except that a
/// column holding many more versions than its `VERSIONS` keeps only a few
/// beyond them once a row mutation ends, as a flush would.
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
    /// Each row boxed: the map's nodes hold keys and pointers, small and
    /// dense (a map filled in key order leaves its nodes about half full,
    /// and empty slots of a 112-byte row would be read past by every
    /// scan), and rows written one after the other tend to lie one after
    /// the other in memory, as the data of a `BTreeMap<Vec<u8>, Vec<u8>>`
    /// does. The cost is one pointer more to follow per row read.
    rows: BTreeMap<RowKey, Box<StoredRow>>,
    /// The sequence number of the last write: a read sees writes up to its
    /// read point.
    seq: u64,
    /// The read points of open scanners, with how many scanners hold each:
    /// versions they may still read are not pruned.
    scanners: BTreeMap<u64, usize>,
    /// Replaced by an altered copy of the table (`alter_table`): readers
    /// that still hold this one see the table as it was, and a writer that
    /// finds it retired starts again on the current table.
    retired: bool,
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
    /// Sorted by family, then qualifier. The first column inline: a narrow
    /// row is one allocation, and a scan follows no pointer within it.
    columns: SmallVec<[StoredColumn; 1]>,
    /// The row's delete markers, if it has any (few rows do): boxed, so
    /// that a row without them is smaller, and a scan reads fewer cache
    /// lines per row.
    markers: Option<Box<RowMarkers>>,
}

/// The delete markers of a row.
#[derive(Debug, Default, Clone)]
struct RowMarkers {
    family: Vec<FamilyMarker>,
    column: BTreeMap<(u16, Bytes), Vec<ColumnMarker>>,
}

/// One column's versions.
#[derive(Debug, Clone)]
struct StoredColumn {
    family: u16,
    qualifier: Bytes,
    versions: Versions,
}

/// A column's versions, by timestamp then sequence number, oldest first:
/// readers walk them backwards.
///
/// One version (most columns) sits inline; a few more in a sorted list;
/// past [`MANY_VERSIONS`] they move to a B-tree, so that adding one costs
/// `O(log n)` wherever its timestamp falls, however many the column holds.
/// (The enum takes no more room than [`StoredVersion`]: its tag fits in the
/// value's.)
#[derive(Debug, Clone)]
enum Versions {
    One(StoredVersion),
    Few(Vec<StoredVersion>),
    Many(BTreeMap<(i64, u64), StoredVersion>),
}

/// The most versions a column keeps in a sorted list: inserting into it
/// moves at most this many.
const MANY_VERSIONS: usize = 64;

impl Default for Versions {
    fn default() -> Self {
        Versions::Few(Vec::new())
    }
}

impl Versions {
    /// From versions sorted oldest first.
    fn from_sorted(mut versions: Vec<StoredVersion>) -> Self {
        if versions.len() == 1
            && let Some(one) = versions.pop()
        {
            return Versions::One(one);
        }
        if versions.len() <= MANY_VERSIONS {
            return Versions::Few(versions);
        }
        Versions::Many(versions.into_iter().map(|v| ((v.ts, v.seq), v)).collect())
    }

    fn len(&self) -> usize {
        match self {
            Versions::One(_) => 1,
            Versions::Few(v) => v.len(),
            Versions::Many(v) => v.len(),
        }
    }

    /// Adds a version. Two at the same timestamp and sequence number (one
    /// mutation writing a cell twice) keep the later.
    fn insert(&mut self, version: StoredVersion) {
        let key = (version.ts, version.seq);
        match self {
            Versions::One(one) if (one.ts, one.seq) == key => *one = version,
            Versions::One(_) => {
                let Versions::One(one) = std::mem::take(self) else {
                    return;
                };
                *self = if (one.ts, one.seq) < key {
                    Versions::Few(vec![one, version])
                } else {
                    Versions::Few(vec![version, one])
                };
            }
            Versions::Few(list) if list.is_empty() => *self = Versions::One(version),
            Versions::Few(list) => {
                let place = list.partition_point(|v| (v.ts, v.seq) <= key);
                if place > 0 && list.get(place - 1).is_some_and(|v| (v.ts, v.seq) == key) {
                    list[place - 1] = version;
                } else {
                    list.insert(place, version);
                }
                if list.len() > MANY_VERSIONS {
                    *self = Versions::from_sorted(std::mem::take(list));
                }
            }
            Versions::Many(tree) => {
                tree.insert(key, version);
            }
        }
    }

    /// Newest first.
    fn newest_first(&self) -> NewestFirst<'_> {
        match self {
            Versions::One(one) => NewestFirst::Few(std::slice::from_ref(one).iter().rev()),
            Versions::Few(list) => NewestFirst::Few(list.iter().rev()),
            Versions::Many(tree) => NewestFirst::Many(tree.values().rev()),
        }
    }

    /// Keeps the versions for which `keep`, called oldest first, says so.
    fn retain(&mut self, mut keep: impl FnMut() -> bool) {
        match self {
            Versions::One(_) => {
                if !keep() {
                    *self = Versions::default();
                }
            }
            Versions::Few(list) => list.retain(|_| keep()),
            // `BTreeMap::retain` visits in ascending key order.
            Versions::Many(tree) => tree.retain(|_, _| keep()),
        }
    }
}

/// A column's versions, newest first.
enum NewestFirst<'r> {
    Few(std::iter::Rev<std::slice::Iter<'r, StoredVersion>>),
    Many(std::iter::Rev<std::collections::btree_map::Values<'r, (i64, u64), StoredVersion>>),
}

impl<'r> Iterator for NewestFirst<'r> {
    type Item = &'r StoredVersion;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            NewestFirst::Few(it) => it.next(),
            NewestFirst::Many(it) => it.next(),
        }
    }
}

#[derive(Debug, Clone)]
struct StoredVersion {
    ts: i64,
    seq: u64,
    value: StoredValue,
}

/// A stored value. Values up to [`INLINE_VALUE`] bytes (most values) live
/// inline in their version, in the row: a read copies them from memory it
/// is already in, where a value of its own would be a separate allocation,
/// touched by every read (a cache miss per row on a large table), and two
/// allocations per written value (the writer's buffer and the reference
/// count a shared `Bytes` needs). Longer values are shared with the
/// writer's buffer.
#[derive(Clone)]
enum StoredValue {
    Inline { len: u8, bytes: [u8; INLINE_VALUE] },
    Shared(Bytes),
}

/// The longest value stored inline: as many bytes as keep a
/// [`StoredValue`] at 40 bytes (a `Bytes` and a tag).
const INLINE_VALUE: usize = 38;

impl StoredValue {
    fn new(value: &Bytes) -> Self {
        if value.len() <= INLINE_VALUE {
            let mut bytes = [0u8; INLINE_VALUE];
            bytes[..value.len()].copy_from_slice(value);
            return StoredValue::Inline {
                len: value.len() as u8,
                bytes,
            };
        }
        StoredValue::Shared(value.clone())
    }

    /// The value as a read returns it on its own: copied, or shared.
    fn to_bytes(&self) -> Bytes {
        match self {
            StoredValue::Inline { len, bytes } => Bytes::copy_from_slice(&bytes[..usize::from(*len)]),
            StoredValue::Shared(bytes) => bytes.clone(),
        }
    }
}

impl std::ops::Deref for StoredValue {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            StoredValue::Inline { len, bytes } => &bytes[..usize::from(*len)],
            StoredValue::Shared(bytes) => bytes,
        }
    }
}

impl fmt::Debug for StoredValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&Printable(self), f)
    }
}

/// A version with its column, as reads see it.
#[derive(Debug, Clone, Copy)]
struct CellRef<'r> {
    column: &'r StoredColumn,
    version: &'r StoredVersion,
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

    /// Whether the read names single columns of `family`, rather than
    /// reading it whole: HBase then uses its `ExplicitColumnTracker`.
    fn names_columns(&self, family: u16) -> bool {
        self.families
            .as_ref()
            .and_then(|f| f.get(usize::from(family)))
            .is_some_and(|q| q.as_ref().is_some_and(|q| !q.is_empty()))
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
        if data.retired {
            drop(data);
            return self.major_compact(table);
        }
        let read_point = data.seq;
        flush(&t.schema, &mut data.rows, read_point, now, Markers::Drop);
        Ok(())
    }

    /// How many cell versions the table holds in memory, visible or not yet
    /// pruned: a measure of its memory use.
    pub fn stored_cells(&self, table: &str) -> Result<usize> {
        let t = self.table(table)?;
        let data = read_lock(&t.data);
        Ok(data
            .rows
            .values()
            .flat_map(|r| &r.columns)
            .map(|c| c.versions.len())
            .sum())
    }

    fn now(&self) -> i64 {
        (self.config.clock)()
    }

    fn table(&self, name: &str) -> Result<Arc<MemTable>> {
        check_table_name(name, "")?;
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
        // A whole family includes single columns of it (see `Column`).
        for column in selected_columns(columns).iter() {
            let index = usize::from(self.require_family(column.family())?);
            match column {
                Column::Family(_) => families[index] = Some(Vec::new()),
                Column::Qualifier(_, qualifier) => {
                    families[index].get_or_insert_with(Vec::new).push(qualifier.clone());
                }
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

/// What a [`flush`] does with delete markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Markers {
    /// Keeps them, as a memstore flush or a minor compaction does.
    Keep,
    /// Drops them, as a major compaction does.
    Drop,
}

/// Rewrites rows as HBase writes a store file: only the versions a read at
/// `read_point` could see (masked versions, expired versions beyond
/// `MIN_VERSIONS` and versions beyond `VERSIONS` go), with the delete
/// markers kept or dropped; rows left empty go.
fn flush(
    schema: &TableSchema,
    rows: &mut BTreeMap<RowKey, Box<StoredRow>>,
    read_point: u64,
    now: i64,
    markers: Markers,
) {
    let all = Selection {
        families: None,
        max_versions: u32::MAX,
        time_range: TimeRange::ALL,
    };
    let plan = ReadPlan::new(schema, all, now);
    rows.retain(|_, row| {
        let mut kept: SmallVec<[StoredColumn; 1]> = SmallVec::new();
        visit_visible(&plan, row, read_point, |cell| {
            let same = kept
                .last()
                .is_some_and(|c| c.family == cell.column.family && c.qualifier == cell.column.qualifier);
            if !same {
                kept.push(StoredColumn {
                    family: cell.column.family,
                    qualifier: cell.column.qualifier.clone(),
                    versions: Versions::default(),
                });
            }
            if let Some(Versions::Few(list)) = kept.last_mut().map(|c| &mut c.versions) {
                list.push(cell.version.clone());
            }
        });
        // Visited newest first; stored oldest first.
        for column in &mut kept {
            if let Versions::Few(list) = &mut column.versions {
                list.reverse();
                column.versions = Versions::from_sorted(std::mem::take(list));
            }
        }
        let markers = match markers {
            Markers::Keep => row.markers.take(),
            Markers::Drop => None,
        };
        **row = StoredRow { columns: kept, markers };
        !row.is_empty()
    });
}

/// A read's [`Selection`] worked out against the table's families once, at
/// one time (`now`): what reading each row needs, so that no row looks up a
/// family, its limits or its TTL again.
#[derive(Debug)]
struct ReadPlan {
    sel: Selection,
    /// Indexed by family, like the schema's families.
    families: SmallVec<[FamilyPlan; 4]>,
}

/// How a read treats one family (see [`ReadPlan`]).
#[derive(Debug, Clone, Copy)]
struct FamilyPlan {
    /// The read takes some of the family.
    wanted: bool,
    /// The read names single columns of it: HBase then uses its
    /// `ExplicitColumnTracker` (see [`Selection::names_columns`]).
    named: bool,
    /// `min(requested versions, VERSIONS)`.
    max_versions: u32,
    /// The family's `MIN_VERSIONS`.
    min_versions: u32,
    /// The oldest timestamp the family's TTL leaves visible.
    oldest_unexpired: i64,
}

impl ReadPlan {
    fn new(schema: &TableSchema, sel: Selection, now: i64) -> Self {
        let families = schema
            .families
            .iter()
            .enumerate()
            .map(|(i, fam)| {
                let family = u16::try_from(i).unwrap_or(u16::MAX);
                FamilyPlan {
                    wanted: sel
                        .families
                        .as_ref()
                        .is_none_or(|families| matches!(families.get(i), Some(Some(_)))),
                    named: sel.names_columns(family),
                    max_versions: sel.max_versions.min(fam.versions),
                    min_versions: fam.min_versions,
                    oldest_unexpired: oldest_unexpired(fam, now),
                }
            })
            .collect();
        ReadPlan { sel, families }
    }

    /// The plan of a read with a filter: every version the time range
    /// leaves (the filter's evaluator counts them against `VERSIONS`
    /// itself, as HBase's column tracker does with a filter).
    fn for_filter(schema: &TableSchema, sel: Selection, now: i64) -> Self {
        let mut plan = ReadPlan::new(schema, sel, now);
        for fam in &mut plan.families {
            fam.max_versions = u32::MAX;
        }
        plan
    }

    /// How the read treats a column's family, or `None` if it skips the column.
    fn column(&self, column: &StoredColumn) -> Option<&FamilyPlan> {
        let fam = self.families.get(usize::from(column.family))?;
        let wanted = fam.wanted && (!fam.named || self.sel.wants(column.family, &column.qualifier));
        wanted.then_some(fam)
    }
}

/// Calls `emit` with every cell a read selects from a row, in order: the
/// heart of the read path, shared by gets, scans, increments, checks and
/// compaction.
fn visit_visible<'r>(plan: &ReadPlan, row: &'r StoredRow, read_point: u64, mut emit: impl FnMut(CellRef<'r>)) {
    // Most rows carry no delete marker, and then no version is masked.
    let marked = row.markers.is_some();
    for column in &row.columns {
        let Some(fam) = plan.column(column) else {
            continue;
        };
        let emit = |version| emit(CellRef { column, version });
        if marked {
            let masks = row.masks(column.family, &column.qualifier, read_point);
            visit_column(fam, column, &plan.sel, read_point, |ts| masks.masked(ts), emit);
        } else {
            visit_column(fam, column, &plan.sel, read_point, |_| false, emit);
        }
    }
}

/// One column's versions, newest first: HBase's order of checks in
/// `UserScanQueryMatcher`, then `ScanWildcardColumnTracker` or, when the
/// read names the column, `ExplicitColumnTracker`.
fn visit_column<'r>(
    fam: &FamilyPlan,
    column: &'r StoredColumn,
    sel: &Selection,
    read_point: u64,
    masked: impl Fn(i64) -> bool,
    mut emit: impl FnMut(&'r StoredVersion),
) {
    let (max_versions, min_versions, named) = (fam.max_versions, fam.min_versions, fam.named);
    let mut count = 0u32;
    let mut previous_ts = None;
    for cell in column.versions.newest_first() {
        if cell.seq > read_point {
            continue;
        }
        // Of two writes at one timestamp, only the later (listed first) counts.
        if previous_ts == Some(cell.ts) {
            continue;
        }
        previous_ts = Some(cell.ts);
        let expired = cell.ts < fam.oldest_unexpired;
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
        if count > max_versions {
            return;
        }
        if named {
            // `ExplicitColumnTracker.checkVersions`: the version at which
            // `count >= minVersions && isExpired` is still included.
            emit(cell);
            if count >= min_versions && expired {
                return;
            }
            continue;
        }
        if count > min_versions && expired {
            return;
        }
        emit(cell);
    }
}

/// A row as the filter evaluator reads it: for each family the read
/// selects, the cells its matcher would hand the filter (see
/// [`ReadPlan::for_filter`]), and whether the store holds anything of the
/// row at all.
fn store_rows(
    schema: &TableSchema,
    family_names: &[Bytes],
    plan: &ReadPlan,
    row: &StoredRow,
    read_point: u64,
) -> Vec<Option<StoreRow>> {
    let mut stores: Vec<Option<StoreRow>> = plan
        .families
        .iter()
        .zip(&schema.families)
        .zip(family_names)
        .map(|((fam, schema), name)| {
            fam.wanted.then(|| StoreRow {
                family: name.clone(),
                versions: schema.versions,
                explicit: fam.named,
                present: false,
                cells: Vec::new(),
            })
        })
        .collect();
    for column in &row.columns {
        if let Some(Some(store)) = stores.get_mut(usize::from(column.family)) {
            store.present = true;
        }
    }
    if let Some(markers) = &row.markers {
        let families = markers.family.iter().map(|m| m.family);
        for f in families.chain(markers.column.keys().map(|(f, _)| *f)) {
            if let Some(Some(store)) = stores.get_mut(usize::from(f)) {
                store.present = true;
            }
        }
    }
    visit_visible(plan, row, read_point, |c| {
        if let Some(Some(store)) = stores.get_mut(usize::from(c.column.family)) {
            store
                .cells
                .push((c.column.qualifier.clone(), c.version.ts, c.version.value.to_bytes()));
        }
    });
    stores
}

/// A read's filter, ready to run: refused as [`StoreError::InvalidRequest`]
/// if HBase would refuse it.
fn region_scan(
    t: &MemTable,
    filter: &Filter,
    reversed: bool,
    sel: &Selection,
    max_versions: u32,
) -> Result<RegionScan> {
    let families: Vec<Option<Bytes>> = t
        .family_names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let read = sel
                .families
                .as_ref()
                .is_none_or(|families| matches!(families.get(i), Some(Some(_))));
            read.then(|| name.clone())
        })
        .collect();
    RegionScan::new(filter, reversed, &families, max_versions).map_err(|reason| filter_failed(&t.schema.name, reason))
}

/// A filter HBase refuses, or fails on.
fn filter_failed(table: &str, reason: String) -> StoreError {
    StoreError::InvalidRequest {
        table: table.to_owned(),
        reason,
    }
}

/// One row read through a filter, as a get reads it.
fn filtered_row(
    t: &MemTable,
    filter: &mut RegionScan,
    plan: &ReadPlan,
    key: &Bytes,
    row: &StoredRow,
    read_point: u64,
) -> Result<Option<Vec<super::Cell>>> {
    let stores = store_rows(&t.schema, &t.family_names, plan, row, read_point);
    match filter.next_row(key, stores) {
        Ok(RowOutcome::Row(cells)) => Ok(Some(cells)),
        Ok(RowOutcome::Unseen | RowOutcome::Filtered) => Ok(None),
        Err(reason) => Err(filter_failed(&t.schema.name, reason)),
    }
}

/// The cells a read selects from a row, or `None` if there are none; each
/// value made by `value` from the stored one.
fn read_cells(
    family_names: &[Bytes],
    plan: &ReadPlan,
    row: &StoredRow,
    read_point: u64,
    mut value: impl FnMut(&StoredValue) -> Bytes,
) -> Option<Vec<super::Cell>> {
    let mut cells = Vec::new();
    visit_visible(plan, row, read_point, |c| {
        if cells.capacity() == 0 {
            // One allocation for most rows, none for rows that show nothing.
            cells = Vec::with_capacity(row.columns.len().clamp(1, 16));
        }
        cells.push(super::Cell {
            family: family_names[usize::from(c.column.family)].clone(),
            qualifier: c.column.qualifier.clone(),
            timestamp: c.version.ts,
            value: value(&c.version.value),
        });
    });
    (!cells.is_empty()).then_some(cells)
}

/// Where a scan copies the row keys and values that live inline in the
/// row map: one buffer for a run of rows, which becomes one `Bytes` when
/// the run ends, and each copy a slice of it. A copy then costs a reference
/// count on a buffer the scan just wrote (in cache) rather than an
/// allocation of its own. Until its run ends, a copied key or value is an
/// empty placeholder in the row; [`Copies::finish`] puts the slices in.
/// A returned row keeps at most one buffer (about [`COPY_RUN`] bytes)
/// alive besides its own cells.
#[derive(Debug, Default)]
struct Copies {
    bytes: Vec<u8>,
    /// Each copy in the buffer, in order: its start and length, and where
    /// it goes (the row, counted from the run's first; the cell, or
    /// `KEY` for the row key).
    spans: Vec<Span>,
    /// Rows in the run.
    rows: usize,
    /// Cells of the current row so far.
    cells: u32,
}

#[derive(Debug, Clone, Copy)]
struct Span {
    row: u32,
    cell: u32,
    start: u32,
    len: u32,
}

impl Span {
    const KEY: u32 = u32::MAX;
}

/// The bytes a run of copies reaches before it ends with the row that
/// passes it.
const COPY_RUN: usize = 16 * 1024;

impl Copies {
    /// Copies `bytes` into the run, bound for cell `cell` of the current row.
    fn copy(&mut self, bytes: &[u8], cell: u32) -> Bytes {
        let (Ok(start), Ok(len), Ok(row)) = (
            u32::try_from(self.bytes.len()),
            u32::try_from(bytes.len()),
            u32::try_from(self.rows),
        ) else {
            // A run is a few kilobytes; past 4 GiB, share instead.
            return Bytes::copy_from_slice(bytes);
        };
        if self.bytes.capacity() == 0 {
            self.bytes.reserve(COPY_RUN);
        }
        self.bytes.extend_from_slice(bytes);
        self.spans.push(Span { row, cell, start, len });
        Bytes::new()
    }

    /// A stored value as a scan returns it: copied if inline (see
    /// [`Copies`]), else shared.
    fn value(&mut self, value: &StoredValue) -> Bytes {
        let cell = self.cells;
        self.cells += 1;
        match value {
            StoredValue::Inline { .. } => self.copy(value, cell),
            StoredValue::Shared(bytes) => bytes.clone(),
        }
    }

    /// A row key as a scan returns it, ending the row: copied if inline
    /// (see [`Copies`]), else shared.
    fn row_key(&mut self, key: &RowKey) -> Bytes {
        let row = match key {
            RowKey::Inline { .. } => self.copy(key.as_slice(), Span::KEY),
            RowKey::Heap { bytes, .. } => bytes.clone(),
        };
        self.rows += 1;
        self.cells = 0;
        row
    }

    /// Whether the run should end.
    fn full(&self) -> bool {
        self.bytes.len() >= COPY_RUN
    }

    /// Ends the run: `rows` ends with its rows, whose placeholders get their slices.
    fn finish(&mut self, rows: &mut VecDeque<RowResult>) {
        let run = std::mem::take(&mut self.rows);
        if self.spans.is_empty() {
            return;
        }
        let bytes = Bytes::from(std::mem::take(&mut self.bytes));
        let first = rows.len() - run;
        for span in self.spans.drain(..) {
            let (start, len) = (span.start as usize, span.len as usize);
            let Some(row) = rows.get_mut(first + span.row as usize) else {
                continue;
            };
            let slot = if span.cell == Span::KEY {
                Some(&mut row.row)
            } else {
                row.cells.get_mut(span.cell as usize).map(|c| &mut c.value)
            };
            if let Some(slot) = slot {
                *slot = bytes.slice(start..start + len);
            }
        }
    }
}

/// The newest visible version of one column, as a check or an increment sees it.
fn latest_cell<'r>(
    schema: &TableSchema,
    row: Option<&'r StoredRow>,
    family: u16,
    qualifier: &Bytes,
    read_point: u64,
    now: i64,
) -> Option<&'r StoredVersion> {
    latest_cell_in(schema, row, family, qualifier, TimeRange::ALL, read_point, now)
}

/// The newest visible version of one column in a time range.
fn latest_cell_in<'r>(
    schema: &TableSchema,
    row: Option<&'r StoredRow>,
    family: u16,
    qualifier: &Bytes,
    range: TimeRange,
    read_point: u64,
    now: i64,
) -> Option<&'r StoredVersion> {
    let row = row?;
    let mut sel = Selection::one_column(schema.families.len(), family, qualifier, 1);
    sel.time_range = range;
    let plan = ReadPlan::new(schema, sel, now);
    let mut found = None;
    visit_visible(&plan, row, read_point, |c| {
        found.get_or_insert(c.version);
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
    /// No cells and no markers: the row map drops such a row.
    fn is_empty(&self) -> bool {
        self.columns.is_empty() && self.markers.is_none()
    }

    fn markers_mut(&mut self) -> &mut RowMarkers {
        self.markers.get_or_insert_with(Box::default)
    }

    fn masks(&self, family: u16, qualifier: &Bytes, read_point: u64) -> Masks<'_> {
        let Some(markers) = &self.markers else {
            return Masks {
                family_deleted_to: None,
                column: &[],
                read_point,
            };
        };
        let family_deleted_to = markers
            .family
            .iter()
            .filter(|m| m.family == family && m.seq <= read_point)
            .map(|m| m.ts)
            .max();
        let column = if markers.column.is_empty() {
            &[][..]
        } else {
            markers
                .column
                .get(&(family, qualifier.clone()))
                .map_or(&[][..], Vec::as_slice)
        };
        Masks {
            family_deleted_to,
            column,
            read_point,
        }
    }

    /// Adds a version to a column: a binary search for the column, then
    /// [`Versions::insert`].
    fn insert(&mut self, family: u16, qualifier: &Bytes, version: StoredVersion) {
        let at = self
            .columns
            .binary_search_by(|c| (c.family, &c.qualifier[..]).cmp(&(family, &qualifier[..])));
        let index = match at {
            Ok(i) => i,
            Err(i) => {
                self.columns.insert(
                    i,
                    StoredColumn {
                        family,
                        qualifier: qualifier.clone(),
                        versions: Versions::default(),
                    },
                );
                i
            }
        };
        if let Some(column) = self.columns.get_mut(index) {
            column.versions.insert(version);
        }
    }

    fn mark_column(&mut self, family: u16, qualifier: &Bytes, marker: ColumnMarker) {
        self.markers_mut()
            .column
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
    /// `MIN_VERSIONS`, and versions beyond `VERSIONS` and
    /// [`SURPLUS_VERSIONS`] more. This is what an HBase flush does (it keeps
    /// `VERSIONS` only); until one, HBase shows the surplus versions when
    /// the newer ones are deleted one by one, and so does this store for the
    /// newest few. Called once a row mutation is applied, never in its
    /// middle, since no flush splits an atomic mutation.
    fn prune_column_if_large(&mut self, family: u16, qualifier: &Bytes, fam: &FamilySchema, horizon: u64, now: i64) {
        let Ok(index) = self
            .columns
            .binary_search_by(|c| (c.family, &c.qualifier[..]).cmp(&(family, &qualifier[..])))
        else {
            return;
        };
        let len = self.columns[index].versions.len();
        let versions = usize::try_from(fam.versions).unwrap_or(usize::MAX);
        if len <= versions.saturating_mul(2).saturating_add(8) {
            return;
        }
        let kept_versions = fam.versions.saturating_add(SURPLUS_VERSIONS);
        let masks = self.masks(family, qualifier, horizon);
        let oldest_unexpired = oldest_unexpired(fam, now);
        let mut count = 0u32;
        let mut previous_ts = None;
        // Decided newest first, as a reader walks the column.
        let mut keep: Vec<bool> = self.columns[index]
            .versions
            .newest_first()
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
                count <= kept_versions && (count <= fam.min_versions || cell.ts >= oldest_unexpired)
            })
            .collect();
        keep.reverse();
        let mut keep = keep.into_iter();
        self.columns[index].versions.retain(|| keep.next().unwrap_or(true));
    }
}

/// Versions beyond a family's `VERSIONS` that pruning keeps (see
/// `StoredRow::prune_column_if_large`): at most `VERSIONS + 4` of the
/// `2 * VERSIONS + 9` a column may reach, so that pruning still runs at most
/// once per `VERSIONS + 5` writes.
const SURPLUS_VERSIONS: u32 = 4;

impl TableData {
    /// Applies one row's mutations at sequence `seq` and time `now`; puts
    /// without a timestamp get `put_now` (`now`, except after a
    /// check-and-mutate's check).
    fn apply(&mut self, table: &MemTable, row: &Bytes, mutations: &[Mutation], now: i64, put_now: i64) {
        self.seq += 1;
        let seq = self.seq;
        let before = seq - 1;
        // Deletes of "the latest version" resolve against the row as it was
        // before this mutation (HBase prepares delete timestamps first), each
        // on its own: a `RowMutations` holds one `Delete` per delete, and
        // `HRegion.prepareDeleteTimestamps` counts versions per `Delete`.
        let latest_deletes: Vec<i64> = mutations
            .iter()
            .filter_map(|m| match m {
                Mutation::DeleteCell {
                    family,
                    qualifier,
                    timestamp: None,
                } => Some(
                    table
                        .family_index(family)
                        .and_then(|f| self.latest_ts(table, row, f, qualifier, before, now))
                        .unwrap_or(now),
                ),
                _ => None,
            })
            .collect();
        let mut latest_deletes = latest_deletes.into_iter();
        let horizon = self.horizon();
        let stored = self.rows.entry(RowKey::new(row.clone())).or_default();
        let mut written: SmallVec<[(u16, &Bytes); 4]> = SmallVec::new();
        for m in mutations {
            match m {
                Mutation::Put {
                    family,
                    qualifier,
                    value,
                    timestamp,
                } => {
                    let Some(f) = table.family_index(family) else { continue };
                    stored.insert(
                        f,
                        qualifier,
                        StoredVersion {
                            ts: timestamp.unwrap_or(put_now),
                            seq,
                            value: StoredValue::new(value),
                        },
                    );
                    if !written.contains(&(f, qualifier)) {
                        written.push((f, qualifier));
                    }
                }
                Mutation::DeleteCell {
                    family,
                    qualifier,
                    timestamp,
                } => {
                    let Some(f) = table.family_index(family) else { continue };
                    let ts = match timestamp {
                        Some(ts) => *ts,
                        None => latest_deletes.next().unwrap_or(now),
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
                    stored.markers_mut().family.push(FamilyMarker {
                        family: f,
                        ts: up_to.unwrap_or(now),
                        seq,
                    });
                }
                Mutation::DeleteRow { up_to } => {
                    for f in 0..table.schema.families.len() {
                        stored.markers_mut().family.push(FamilyMarker {
                            family: u16::try_from(f).unwrap_or(u16::MAX),
                            ts: up_to.unwrap_or(now),
                            seq,
                        });
                    }
                }
            }
        }
        for (f, qualifier) in written {
            if let Some(fam) = table.schema.families.get(usize::from(f)) {
                stored.prune_column_if_large(f, qualifier, fam, horizon, now);
            }
        }
    }

    /// The oldest read point any reader may still use: the oldest open
    /// scanner's, or the present.
    fn horizon(&self) -> u64 {
        self.scanners.keys().next().copied().unwrap_or(self.seq)
    }

    /// The timestamp of the newest visible version of a column, read with
    /// the family's version limit, as HBase's delete preparation does.
    fn latest_ts(
        &self,
        table: &MemTable,
        row: &Bytes,
        family: u16,
        qualifier: &Bytes,
        read_point: u64,
        now: i64,
    ) -> Option<i64> {
        let stored = self.rows.get(&RowKey::new(row.clone())).map(|r| &**r);
        latest_cell(&table.schema, stored, family, qualifier, read_point, now).map(|c| c.ts)
    }
}

/// [`Store`]'s operations as MemoryStore runs them: in place, without waiting.
trait SyncStore {
    fn create_table(&self, schema: &TableSchema) -> Result<()>;
    fn delete_table(&self, table: &str) -> Result<()>;
    fn truncate_table(&self, table: &str) -> Result<()>;
    fn alter_table(&self, table: &str, change: &FamilyChange) -> Result<()>;
    fn table_exists(&self, table: &str) -> Result<bool>;
    fn list_tables(&self) -> Result<Vec<String>>;
    fn describe_table(&self, table: &str) -> Result<TableSchema>;
    fn get(&self, table: &str, get: &Get) -> Result<Option<RowResult>>;
    fn get_many(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<RowResult>>>;
    fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()>;
    fn mutate_each(&self, table: &str, rows: &[RowMutation]) -> Result<BatchOutcome>;
    fn scan(&self, table: &str, scan: &Scan) -> Result<MemScanner>;
    fn check_and_mutate(&self, table: &str, op: &CheckAndMutate) -> Result<bool>;
    fn increment(&self, table: &str, op: &Increment) -> Result<Vec<i64>>;
    fn append(&self, table: &str, op: &Append) -> Result<RowResult>;
}

/// The store's operations, synchronous: the async [`Store`] impl below runs
/// them in place (they never wait on anything but a lock held for memory work).
impl SyncStore for MemoryStore {
    fn create_table(&self, schema: &TableSchema) -> Result<()> {
        check_schema(schema, "")?;
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
        check_table_name(table, "")?;
        write_lock(&self.tables)
            .remove(table)
            .map(|_| ())
            .ok_or_else(|| StoreError::TableNotFound { table: table.into() })
    }

    /// Clears the rows; the schema, with its split keys, stays.
    fn truncate_table(&self, table: &str) -> Result<()> {
        let t = self.table(table)?;
        let mut data = write_lock(&t.data);
        if data.retired {
            drop(data);
            return SyncStore::truncate_table(self, table);
        }
        data.rows.clear();
        Ok(())
    }

    fn alter_table(&self, table: &str, change: &FamilyChange) -> Result<()> {
        let mut tables = write_lock(&self.tables);
        check_table_name(table, "")?;
        let old = tables
            .get(table)
            .cloned()
            .ok_or_else(|| StoreError::TableNotFound { table: table.into() })?;
        let schema = check_family_change(&old.schema, change)?;
        let mut data = write_lock(&old.data);
        // Old family index to new, `None` for a deleted family.
        let remap: Vec<Option<u16>> = old
            .schema
            .families
            .iter()
            .map(|f| {
                let i = schema.families.iter().position(|g| g.name == f.name)?;
                u16::try_from(i).ok()
            })
            .collect();
        let to = |f: u16| remap.get(usize::from(f)).copied().flatten();
        // The table's regions reopen with the new schema, which flushes
        // their memstores under the old one.
        let mut flushed = data.rows.clone();
        flush(&old.schema, &mut flushed, data.seq, self.now(), Markers::Keep);
        let rows = flushed
            .iter()
            .filter_map(|(key, row)| {
                let mut columns: SmallVec<[StoredColumn; 1]> = row
                    .columns
                    .iter()
                    .filter_map(|c| {
                        Some(StoredColumn {
                            family: to(c.family)?,
                            ..c.clone()
                        })
                    })
                    .collect();
                columns.sort_by(|a, b| (a.family, &a.qualifier).cmp(&(b.family, &b.qualifier)));
                let markers = row.markers.as_ref().and_then(|markers| {
                    let remapped = RowMarkers {
                        family: markers
                            .family
                            .iter()
                            .filter_map(|m| {
                                Some(FamilyMarker {
                                    family: to(m.family)?,
                                    ..*m
                                })
                            })
                            .collect(),
                        column: markers
                            .column
                            .iter()
                            .filter_map(|((f, q), markers)| Some(((to(*f)?, q.clone()), markers.clone())))
                            .collect(),
                    };
                    let empty = remapped.family.is_empty() && remapped.column.is_empty();
                    (!empty).then(|| Box::new(remapped))
                });
                let row = StoredRow { columns, markers };
                (!row.is_empty()).then(|| (key.clone(), Box::new(row)))
            })
            .collect();
        let family_names = schema.families.iter().map(|f| intern(&f.name)).collect();
        let altered = MemTable {
            schema,
            family_names,
            data: RwLock::new(TableData {
                rows,
                seq: data.seq,
                scanners: BTreeMap::new(),
                retired: false,
            }),
        };
        data.retired = true;
        tables.insert(table.to_string(), Arc::new(altered));
        Ok(())
    }

    fn table_exists(&self, table: &str) -> Result<bool> {
        check_table_name(table, "")?;
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
        if let Some(filter) = &get.filter {
            let mut scan = region_scan(&t, filter, false, &sel, get.max_versions)?;
            let plan = ReadPlan::for_filter(&t.schema, sel, self.now());
            let data = read_lock(&t.data);
            let key = RowKey::new(get.row.clone());
            let cells = match data.rows.get(&key) {
                Some(row) => filtered_row(&t, &mut scan, &plan, &get.row, row, data.seq)?,
                None => None,
            };
            return Ok(cells.map(|cells| RowResult {
                row: get.row.clone(),
                cells,
            }));
        }
        let plan = ReadPlan::new(&t.schema, sel, self.now());
        let data = read_lock(&t.data);
        let key = RowKey::new(get.row.clone());
        Ok(data
            .rows
            .get(&key)
            .and_then(|row| read_cells(&t.family_names, &plan, row, data.seq, StoredValue::to_bytes))
            .map(|cells| RowResult {
                row: get.row.clone(),
                cells,
            }))
    }

    fn get_many(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<RowResult>>> {
        if gets.iter().any(|g| g.filter.is_some()) {
            return gets.iter().map(|g| SyncStore::get(self, table, g)).collect();
        }
        let t = self.table(table)?;
        let selections = gets
            .iter()
            .map(|g| {
                check_row(table, &g.row)?;
                t.selection(&g.columns, g.max_versions, g.time_range)
            })
            .collect::<Result<Vec<_>>>()?;
        let now = self.now();
        let plans: Vec<ReadPlan> = selections
            .into_iter()
            .map(|sel| ReadPlan::new(&t.schema, sel, now))
            .collect();
        let data = read_lock(&t.data);
        Ok(gets
            .iter()
            .zip(&plans)
            .map(|(g, plan)| {
                let row = data.rows.get(&RowKey::new(g.row.clone()))?;
                read_cells(&t.family_names, plan, row, data.seq, StoredValue::to_bytes).map(|cells| RowResult {
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
        if data.retired {
            drop(data);
            return SyncStore::mutate(self, table, rows);
        }
        for r in rows {
            data.apply(&t, &r.row, &r.mutations, now, now);
        }
        Ok(())
    }

    fn mutate_each(&self, table: &str, rows: &[RowMutation]) -> Result<BatchOutcome> {
        let t = self.table(table)?;
        let checked: Vec<Result<()>> = rows
            .iter()
            .map(|r| check_mutation(&t.schema, &r.row, &r.mutations, self.config.max_value_size))
            .collect();
        let now = self.now();
        let mut data = write_lock(&t.data);
        if data.retired {
            drop(data);
            return SyncStore::mutate_each(self, table, rows);
        }
        Ok(rows
            .iter()
            .zip(checked)
            .map(|(r, checked)| match checked {
                Ok(()) => {
                    data.apply(&t, &r.row, &r.mutations, now, now);
                    super::RowOutcome::Applied
                }
                Err(e) => super::RowOutcome::Refused(e),
            })
            .collect())
    }

    fn scan(&self, table: &str, scan: &Scan) -> Result<MemScanner> {
        let t = self.table(table)?;
        let selection = t.selection(&scan.columns, scan.max_versions, scan.time_range)?;
        let filter = match &scan.filter {
            // An empty range reads nothing, and no backend sends it.
            Some(f) if scan.is_empty_range() => {
                f.check().map_err(|reason| filter_failed(table, reason))?;
                None
            }
            Some(f) => Some(region_scan(&t, f, scan.reversed, &selection, scan.max_versions)?),
            None => None,
        };
        let read_point = {
            let mut data = write_lock(&t.data);
            let seq = data.seq;
            *data.scanners.entry(seq).or_default() += 1;
            seq
        };
        self.open_scanners.fetch_add(1, Ordering::SeqCst);
        let plan = match filter {
            Some(_) => ReadPlan::for_filter(&t.schema, selection, self.now()),
            None => ReadPlan::new(&t.schema, selection, self.now()),
        };
        Ok(MemScanner {
            table: t,
            plan,
            filter,
            failed: None,
            start: scan.start.clone(),
            stop: scan.stop.clone(),
            reversed: scan.reversed,
            cursor: None,
            read_point,
            remaining: scan.limit,
            // Batches bound how long a scan holds the table's lock; bytes do
            // not matter in memory.
            batch_size: scan.batch_size.unwrap_or(1000).max(1),
            buffer: VecDeque::new(),
            copies: Copies::default(),
            done: scan.is_empty_range(),
            open_scanners: Arc::clone(&self.open_scanners),
        })
    }

    fn check_and_mutate(&self, table: &str, op: &CheckAndMutate) -> Result<bool> {
        let t = self.table(table)?;
        let invalid = |reason: String| StoreError::InvalidRequest {
            table: table.to_owned(),
            reason: format!("row {}: {reason}", show_row(&op.row)),
        };
        // With a filter, the condition is a get of the row through it;
        // without, a get of the one column (`HRegion.checkAndMutateInternal`).
        let all = t.selection(&[], 1, TimeRange::ALL)?;
        let (family, mut filter) = match &op.filter {
            Some(f) => (None, Some(region_scan(&t, f, false, &all, 1)?)),
            None => (Some(t.require_family(&op.family)?), None),
        };
        if op.filter.is_none() && op.compare == CompareOp::NoOp {
            // `HRegion.matches` throws "Unknown Compare op NO_OP" once a
            // value is compared; refused before, as every backend does.
            return Err(invalid("a check-and-mutate cannot compare with NO_OP".into()));
        }
        let range = op.time_range;
        if range.min < 0 || range.max < range.min {
            return Err(invalid(format!("invalid time range [{}, {})", range.min, range.max)));
        }
        check_row(table, &op.row)?;
        check_mutation(&t.schema, &op.row, &op.mutations, self.config.max_value_size)?;
        let now = self.now();
        let mut data = write_lock(&t.data);
        if data.retired {
            drop(data);
            return SyncStore::check_and_mutate(self, table, op);
        }
        let stored = data.rows.get(&RowKey::new(op.row.clone())).map(|r| &**r);
        let (passes, cell_ts) = match (&mut filter, family) {
            (Some(filter), _) => {
                let sel = t.selection(&[], 1, range)?;
                let plan = ReadPlan::for_filter(&t.schema, sel, now);
                let cells = match stored {
                    Some(row) => filtered_row(&t, filter, &plan, &op.row, row, data.seq)?,
                    None => None,
                };
                match cells.as_deref() {
                    Some([first, ..]) => (true, first.timestamp),
                    _ => (false, 0),
                }
            }
            (None, Some(family)) => {
                let current = latest_cell_in(&t.schema, stored, family, &op.qualifier, range, data.seq, now);
                let not_equal = op.compare == CompareOp::NotEqual;
                // `valueIsNull`: an empty expected value is "absent or
                // empty", like no value at all.
                match (op.expected.as_deref().unwrap_or_default(), current) {
                    (b"", None) => (!not_equal, 0),
                    (b"", Some(cell)) => (cell.value.is_empty() != not_equal, cell.ts),
                    (_, None) => (false, 0),
                    // `matches(op, compareResult)` reads `given op stored`;
                    // hmap's operator reads `stored op given`.
                    (expected, Some(cell)) => (op.compare.holds(cell.value[..].cmp(expected)), cell.ts),
                }
            }
            (None, None) => (false, 0),
        };
        if passes {
            // "ensure write is not eclipsed": puts no older than the checked cell.
            let put_now = now.max(cell_ts);
            data.apply(&t, &op.row, &op.mutations, now, put_now);
        }
        Ok(passes)
    }

    fn append(&self, table: &str, op: &Append) -> Result<RowResult> {
        let t = self.table(table)?;
        check_row(table, &op.row)?;
        let families = op
            .columns
            .iter()
            .map(|(f, _, _)| t.require_family(f))
            .collect::<Result<Vec<_>>>()?;
        for (i, (family, qualifier, _)) in op.columns.iter().enumerate() {
            if op.columns[..i].iter().any(|(f, q, _)| f == family && q == qualifier) {
                return Err(StoreError::InvalidRequest {
                    table: table.to_owned(),
                    reason: format!(
                        "row {}: column {} appears twice in one append; append the values joined into one",
                        show_row(&op.row),
                        show_column(family, qualifier)
                    ),
                });
            }
        }
        let now = self.now();
        let mut data = write_lock(&t.data);
        if data.retired {
            drop(data);
            return SyncStore::append(self, table, op);
        }
        // `HRegion.reckonDeltasByStore` and `reckonDelta`: the old value
        // (the newest version) with the bytes after it, at `max(old
        // timestamp + 1, now)`; a missing column starts empty, at `now`.
        let stored = data.rows.get(&RowKey::new(op.row.clone())).map(|r| &**r);
        let mut cells: Vec<super::Cell> = op
            .columns
            .iter()
            .zip(&families)
            .map(|((_, qualifier, value), &f)| {
                let current = latest_cell_in(&t.schema, stored, f, qualifier, TimeRange::ALL, data.seq, now);
                let (value, ts) = match current {
                    None => (value.clone(), now),
                    Some(cell) => {
                        let mut joined = Vec::with_capacity(cell.value.len() + value.len());
                        joined.extend_from_slice(&cell.value);
                        joined.extend_from_slice(value);
                        (Bytes::from(joined), now.max(cell.ts.saturating_add(1)))
                    }
                };
                super::Cell::new(t.family_names[usize::from(f)].clone(), qualifier.clone(), ts, value)
            })
            .collect();
        let mutations: Vec<Mutation> = cells
            .iter()
            .map(|c| Mutation::Put {
                family: c.family.clone(),
                qualifier: c.qualifier.clone(),
                value: c.value.clone(),
                timestamp: Some(c.timestamp),
            })
            .collect();
        // The cells as written: within the cell size limit.
        check_mutation(&t.schema, &op.row, &mutations, self.config.max_value_size)?;
        data.apply(&t, &op.row, &mutations, now, now);
        cells.sort_by(|a, b| (&a.family, &a.qualifier).cmp(&(&b.family, &b.qualifier)));
        Ok(RowResult::new(op.row.clone(), cells))
    }

    fn increment(&self, table: &str, op: &Increment) -> Result<Vec<i64>> {
        let t = self.table(table)?;
        check_increment(&t.schema, &op.row, &op.columns)?;
        let families = op
            .columns
            .iter()
            .map(|(f, _, _)| t.require_family(f))
            .collect::<Result<Vec<_>>>()?;
        let now = self.now();
        let mut data = write_lock(&t.data);
        if data.retired {
            drop(data);
            return SyncStore::increment(self, table, op);
        }
        // Read every counter first, so that a refused one writes nothing.
        let mut writes = Vec::with_capacity(op.columns.len());
        for ((family_name, qualifier, amount), &family) in op.columns.iter().zip(&families) {
            let stored = data.rows.get(&RowKey::new(op.row.clone())).map(|r| &**r);
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
        data.apply(&t, &op.row, &mutations, now, now);
        Ok(writes.into_iter().map(|(_, _, value, _)| value).collect())
    }
}

#[async_trait]
impl Store for MemoryStore {
    async fn create_table(&self, schema: &TableSchema) -> Result<()> {
        traced("memory", "create_table", &schema.name, 0, async move {
            SyncStore::create_table(self, schema)
        })
        .await
    }

    async fn delete_table(&self, table: &str) -> Result<()> {
        traced("memory", "delete_table", table, 0, async move {
            SyncStore::delete_table(self, table)
        })
        .await
    }

    async fn truncate_table(&self, table: &str) -> Result<()> {
        traced("memory", "truncate_table", table, 0, async move {
            SyncStore::truncate_table(self, table)
        })
        .await
    }

    async fn alter_table(&self, table: &str, change: &FamilyChange) -> Result<()> {
        traced("memory", "alter_table", table, 0, async move {
            SyncStore::alter_table(self, table, change)
        })
        .await
    }

    async fn table_exists(&self, table: &str) -> Result<bool> {
        traced("memory", "table_exists", table, 0, async move {
            SyncStore::table_exists(self, table)
        })
        .await
    }

    async fn list_tables(&self) -> Result<Vec<String>> {
        traced(
            "memory",
            "list_tables",
            "",
            0,
            async move { SyncStore::list_tables(self) },
        )
        .await
    }

    async fn describe_table(&self, table: &str) -> Result<TableSchema> {
        traced("memory", "describe_table", table, 0, async move {
            SyncStore::describe_table(self, table)
        })
        .await
    }

    async fn get(&self, table: &str, get: &Get) -> Result<Option<RowResult>> {
        traced(
            "memory",
            "get",
            table,
            1,
            async move { SyncStore::get(self, table, get) },
        )
        .await
    }

    async fn get_many(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<RowResult>>> {
        traced("memory", "get_many", table, gets.len(), async move {
            SyncStore::get_many(self, table, gets)
        })
        .await
    }

    async fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
        traced("memory", "mutate", table, rows.len(), async move {
            SyncStore::mutate(self, table, rows)
        })
        .await
    }

    async fn mutate_each(&self, table: &str, rows: &[RowMutation]) -> Result<BatchOutcome> {
        traced("memory", "mutate_each", table, rows.len(), async move {
            SyncStore::mutate_each(self, table, rows)
        })
        .await
    }

    async fn scan<'a>(&'a self, table: &str, scan: &Scan) -> Result<RowStream<'a>> {
        traced("memory", "scan", table, 0, async move {
            let rows: RowStream<'a> = Box::pin(futures_util::stream::iter(SyncStore::scan(self, table, scan)?));
            Ok(rows)
        })
        .await
    }

    async fn check_and_mutate(&self, table: &str, op: &CheckAndMutate) -> Result<bool> {
        traced("memory", "check_and_mutate", table, 1, async move {
            SyncStore::check_and_mutate(self, table, op)
        })
        .await
    }

    async fn increment(&self, table: &str, op: &Increment) -> Result<Vec<i64>> {
        traced("memory", "increment", table, 1, async move {
            SyncStore::increment(self, table, op)
        })
        .await
    }

    async fn append(&self, table: &str, op: &Append) -> Result<RowResult> {
        traced("memory", "append", table, 1, async move {
            SyncStore::append(self, table, op)
        })
        .await
    }
}

/// A scanner over a [`MemoryStore`] table: fetches `batch_size` rows per
/// lock, reading at the sequence number current when it was opened.
struct MemScanner {
    table: Arc<MemTable>,
    /// What the scan reads, at the time it was opened.
    plan: ReadPlan,
    /// The scan's filter, as a region scanner runs it.
    filter: Option<RegionScan>,
    /// The filter failed (as HBase's would): returned after the rows before it.
    failed: Option<StoreError>,
    start: Bytes,
    stop: Bytes,
    reversed: bool,
    /// The last row visited, exclusive bound of the next batch.
    cursor: Option<RowKey>,
    read_point: u64,
    remaining: Option<usize>,
    batch_size: usize,
    buffer: VecDeque<RowResult>,
    /// Where the returned rows' keys and short values are copied.
    copies: Copies,
    done: bool,
    open_scanners: Arc<AtomicUsize>,
}

impl MemScanner {
    fn fetch(&mut self) {
        let table = Arc::clone(&self.table);
        let data = read_lock(&table.data);
        let (mut lower, mut upper) = (Bound::Included(RowKey::new(self.start.clone())), Bound::Unbounded);
        if !self.stop.is_empty() {
            upper = Bound::Excluded(RowKey::new(self.stop.clone()));
        }
        if let Some(cursor) = self.cursor.take() {
            if self.reversed {
                upper = Bound::Excluded(cursor);
            } else {
                lower = Bound::Excluded(cursor);
            }
        }
        let range = data.rows.range((lower, upper));
        if self.reversed {
            self.fill(&table.family_names, range.rev());
        } else {
            self.fill(&table.family_names, range);
        }
    }

    /// Reads the next batch from `rows`, in scan order.
    fn fill<'r>(&mut self, family_names: &[Bytes], rows: impl Iterator<Item = (&'r RowKey, &'r Box<StoredRow>)>) {
        let want = self.remaining.map_or(self.batch_size, |r| r.min(self.batch_size));
        let mut found = 0;
        let mut exhausted = true;
        let mut last = None;
        // A batch size may be far larger than the rows there are.
        self.buffer.reserve(want.min(1024));
        let copies = &mut self.copies;
        for (key, row) in rows {
            last = Some(key);
            if let Some(filter) = &mut self.filter {
                if filter.done() {
                    break;
                }
                let row_key = Bytes::copy_from_slice(key.as_slice());
                let cells = match filtered_row(&self.table, filter, &self.plan, &row_key, row, self.read_point) {
                    Ok(Some(cells)) => cells,
                    Ok(None) => continue,
                    Err(e) => {
                        // The read fails: the error is the scan's last item.
                        self.failed = Some(e);
                        break;
                    }
                };
                self.buffer.push_back(RowResult { row: row_key, cells });
                found += 1;
                if found == want {
                    exhausted = false;
                    break;
                }
                continue;
            }
            // A row that shows no cell copied nothing.
            let Some(cells) = read_cells(family_names, &self.plan, row, self.read_point, |v| copies.value(v)) else {
                continue;
            };
            self.buffer.push_back(RowResult {
                row: copies.row_key(key),
                cells,
            });
            if copies.full() {
                copies.finish(&mut self.buffer);
            }
            found += 1;
            if found == want {
                exhausted = false;
                break;
            }
        }
        copies.finish(&mut self.buffer);
        // The next batch resumes after the last row visited.
        if let Some(key) = last {
            self.cursor = Some(key.clone());
        }
        if exhausted || self.failed.is_some() || self.filter.as_ref().is_some_and(RegionScan::done) {
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
        let Some(row) = self.buffer.pop_front() else {
            return self.failed.take().map(Err);
        };
        if let Some(r) = &mut self.remaining {
            *r -= 1;
        }
        Some(Ok(row))
    }

    /// At least the rows already fetched.
    fn size_hint(&self) -> (usize, Option<usize>) {
        let ready = self.buffer.len();
        match self.remaining {
            Some(r) => (ready.min(r), Some(r)),
            None => (ready, None),
        }
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

    use super::{RowKey, StoredValue, StoredVersion, Versions};

    fn key() -> impl Strategy<Value = Vec<u8>> {
        // Keys from few bytes, zeros included, so that shared prefixes, zero
        // padding and the 16-byte boundary all come up often.
        // Lengths on both sides of the 30-byte inline limit.
        prop::collection::vec(prop_oneof![Just(0u8), Just(1u8), Just(0xffu8)], 0..40)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// Versions read newest first, whether few or many, in whatever
        /// order they were added; a second write at one timestamp and
        /// sequence number replaces the first.
        #[test]
        fn versions_read_newest_first(writes in prop::collection::vec((0i64..50, 0u64..4, any::<u8>()), 0..200)) {
            let mut versions = Versions::default();
            let mut model = std::collections::BTreeMap::new();
            for &(ts, seq, value) in &writes {
                versions.insert(StoredVersion { ts, seq, value: StoredValue::new(&Bytes::from(vec![value])) });
                model.insert((ts, seq), value);
            }
            let read: Vec<(i64, u64, u8)> = versions.newest_first().map(|v| (v.ts, v.seq, v.value[0])).collect();
            let expected: Vec<(i64, u64, u8)> = model.iter().rev().map(|(&(ts, seq), &v)| (ts, seq, v)).collect();
            prop_assert_eq!(versions.len(), expected.len());
            prop_assert_eq!(read, expected);
        }

        #[test]
        fn row_keys_order_like_their_bytes(a in key(), b in key()) {
            let (ka, kb) = (RowKey::new(Bytes::from(a.clone())), RowKey::new(Bytes::from(b.clone())));
            prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
            prop_assert_eq!(ka == kb, a == b);
        }
    }

    /// The layout the scan counts on: a column of one version takes no
    /// more room than the version, and a row of one column (a column inline,
    /// the markers behind a pointer) takes at most 112 bytes.
    #[test]
    fn a_narrow_row_is_compact() {
        assert_eq!(size_of::<Versions>(), size_of::<StoredVersion>());
        assert!(
            size_of::<super::StoredRow>() <= 112,
            "{}",
            size_of::<super::StoredRow>()
        );
    }
}
