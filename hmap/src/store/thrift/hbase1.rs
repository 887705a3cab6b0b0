//! The subset of HBase's original Thrift service (`Hbase`, from
//! `org/apache/hadoop/hbase/thrift/Hbase.thrift` in the `hbase-thrift`
//! 2.6.1 jar) that [`Thrift1Store`](super::Thrift1Store) uses, on the same
//! codec as Thrift2's messages ([`hbase`](super::hbase)): each struct
//! written with the field ids and types of that IDL, each reply read back
//! with its types checked, container counts bounded by the bytes left
//! before anything is reserved, fields it does not know skipped.
//!
//! Thrift1 names a column by one string, `family:qualifier`, or `family`
//! for a whole family; the gateway splits it at the first `:`
//! (`CellUtil.parseColumn`), and a family cannot hold one, so the split is
//! unambiguous both ways. A qualifier may be empty (`family:`).

use bytes::Bytes;

use super::codec::{DecodeError, Encoder, Reader, TType};
use super::hbase::{Decoded, Least, MIN_ONE_BINARY, read_list, read_struct, required};
use crate::schema::{BloomType, Compression, FamilySchema, TTL_FOREVER};
use crate::store::{Cell, Column, RowResult};

// ---------------------------------------------------------------------------
// Writing

/// A column as Thrift1 names it: `family:qualifier`, or `family` alone.
pub fn column_name(family: &[u8], qualifier: Option<&[u8]>) -> Vec<u8> {
    let mut name = Vec::with_capacity(family.len() + 1 + qualifier.map_or(0, <[u8]>::len));
    name.extend_from_slice(family);
    if let Some(q) = qualifier {
        name.push(b':');
        name.extend_from_slice(q);
    }
    name
}

/// A `list<Text>` of columns as field `id`, without the single columns of
/// a family selected whole (see [`Column`]: the gateway adds them to a Java
/// `Get` or `Scan` in order, where a later `addColumn` would narrow the
/// family).
pub fn columns(e: &mut Encoder, id: i16, columns: &[Column]) {
    let columns = crate::store::selected_columns(columns);
    e.field(TType::List, id);
    e.list(TType::String, columns.len());
    for c in columns.iter() {
        match c {
            Column::Family(f) => e.string(&column_name(f, None)),
            Column::Qualifier(f, q) => e.string(&column_name(f, Some(q))),
        }
    }
}

/// A `list<Text>` as field `id`.
pub fn texts(e: &mut Encoder, id: i16, items: &[&Bytes]) {
    e.field(TType::List, id);
    e.list(TType::String, items.len());
    for item in items {
        e.string(item);
    }
}

/// What one Thrift1 `Mutation` does.
pub enum Change<'a> {
    /// A put of `value` into `family:qualifier`.
    Put(&'a [u8], &'a [u8], &'a [u8]),
    /// Every version of `family:qualifier` up to the call's timestamp.
    DeleteColumn(&'a [u8], &'a [u8]),
    /// Every cell of `family` up to the call's timestamp.
    DeleteFamily(&'a [u8]),
}

/// The fields of a `Mutation { 1: bool isDelete, 2: Text column, 3: Text
/// value, 4: bool writeToWAL }` and its stop. `writeToWAL` is sent as the
/// IDL's default, true (the gateway sets `SYNC_WAL` from it).
pub fn mutation_fields(e: &mut Encoder, change: &Change<'_>) {
    let (delete, column, value) = match *change {
        Change::Put(f, q, v) => (false, column_name(f, Some(q)), Some(v)),
        Change::DeleteColumn(f, q) => (true, column_name(f, Some(q)), None),
        Change::DeleteFamily(f) => (true, column_name(f, None), None),
    };
    e.bool_field(1, delete);
    e.binary_field(2, &column);
    if let Some(v) = value {
        e.binary_field(3, v);
    }
    e.bool_field(4, true);
    e.stop();
}

/// The fields of a `BatchMutation { 1: Text row, 2: list<Mutation> }` and
/// its stop.
pub fn batch_mutation_fields(e: &mut Encoder, row: &[u8], changes: &[Change<'_>]) {
    e.binary_field(1, row);
    e.field(TType::List, 2);
    e.list(TType::Struct, changes.len());
    for c in changes {
        mutation_fields(e, c);
    }
    e.stop();
}

/// What a scan asks of `scannerOpenWithScan`, in HBase's terms.
pub struct ScanSpec<'a> {
    /// Where HBase starts (the high end of a reversed scan); empty: the
    /// table's start.
    pub start: &'a [u8],
    /// Where HBase stops, exclusive; empty: no end.
    pub stop: &'a [u8],
    /// Cells below this timestamp only (`Scan.setTimeRange(0, t)`); `None`
    /// for all.
    pub before: Option<i64>,
    /// The columns; empty for every family.
    pub columns: &'a [Column],
    /// Rows the gateway's scanner fetches per region server call
    /// (`Scan.setCaching`); `None` leaves the client's default, sized by
    /// bytes.
    pub caching: Option<i32>,
    /// Last row first.
    pub reversed: bool,
    /// A filter in HBase's filter language (`TScan.filterString`).
    pub filter: Option<&'a [u8]>,
}

/// `TScan { 1: startRow, 2: stopRow, 3: timestamp, 4: columns, 5: caching,
/// 6: filterString, 8: sortColumns, 9: reversed }` as a struct field `id`. `sortColumns` is
/// set so that rows come back as lists of cells (`sortedColumns`) rather
/// than maps; `7: batchSize` is never sent: it would split rows into
/// several results (`Scan.setBatch`).
pub fn scan(e: &mut Encoder, id: i16, s: &ScanSpec<'_>) {
    e.field(TType::Struct, id);
    if !s.start.is_empty() {
        e.binary_field(1, s.start);
    }
    if !s.stop.is_empty() {
        e.binary_field(2, s.stop);
    }
    if let Some(t) = s.before {
        e.i64_field(3, t);
    }
    if !s.columns.is_empty() {
        columns(e, 4, s.columns);
    }
    if let Some(rows) = s.caching {
        e.i32_field(5, rows);
    }
    if let Some(filter) = s.filter {
        e.binary_field(6, filter);
    }
    e.bool_field(8, true);
    if s.reversed {
        e.bool_field(9, true);
    }
    e.stop();
}

/// HBase's name of a compression algorithm (`Compression.Algorithm`).
fn compression_name(c: Compression) -> &'static str {
    match c {
        Compression::Lzo => "LZO",
        Compression::Gz => "GZ",
        Compression::None => "NONE",
        Compression::Snappy => "SNAPPY",
        Compression::Lz4 => "LZ4",
        Compression::Bzip2 => "BZIP2",
        Compression::Zstd => "ZSTD",
    }
}

/// HBase's name of a bloom filter type (`BloomType`).
fn bloom_name(b: BloomType) -> &'static str {
    match b {
        BloomType::None => "NONE",
        BloomType::Row => "ROW",
        BloomType::RowCol => "ROWCOL",
    }
}

/// The fields of a `ColumnDescriptor { 1: Text name, 2: i32 maxVersions,
/// 3: string compression, 4: bool inMemory, 5: string bloomFilterType,
/// 8: bool blockCacheEnabled, 9: i32 timeToLive }` and its stop, every
/// option sent: the IDL's defaults are not HBase's (`maxVersions = 3`,
/// `blockCacheEnabled = 0`). 6 and 7 (the bloom filter's vector size and
/// hash count) are ignored by the gateway (`ThriftUtilities.colDescFromThrift`).
/// The struct has no `MIN_VERSIONS` and no `BLOCKSIZE`.
pub fn column_descriptor_fields(e: &mut Encoder, f: &FamilySchema) {
    e.binary_field(1, f.name.as_bytes());
    e.i32_field(2, i32::try_from(f.versions).unwrap_or(i32::MAX));
    e.binary_field(3, compression_name(f.compression).as_bytes());
    e.bool_field(4, f.in_memory);
    e.binary_field(5, bloom_name(f.bloom).as_bytes());
    e.bool_field(8, f.block_cache);
    e.i32_field(9, i32::try_from(f.ttl_secs).unwrap_or(i32::MAX));
    e.stop();
}

// ---------------------------------------------------------------------------
// Reading

/// The fewest bytes of a `TCell`: its value (a field header and a length)
/// and its timestamp (a header and 8 bytes; compact: a byte each), and the
/// stop.
const MIN_CELL: Least = (3 + 4 + 3 + 8 + 1, 2 + 2 + 1);
/// The fewest bytes of a `TColumn`: its name, its cell's header, a cell,
/// and the stop.
const MIN_COLUMN: Least = (3 + 4 + 3 + MIN_CELL.0 + 1, 2 + 1 + MIN_CELL.1 + 1);
/// The fewest bytes of a `map<Text, TCell>` entry.
const MIN_CELL_ENTRY: Least = (4 + MIN_CELL.0, 1 + MIN_CELL.1);
/// The fewest bytes of a `map<Text, ColumnDescriptor>` entry: a key and a
/// struct with its required name.
const MIN_DESCRIPTOR_ENTRY: Least = (4 + MIN_ONE_BINARY.0, 1 + MIN_ONE_BINARY.1);

/// A `TCell { 1: Bytes value, 2: i64 timestamp }`, both required.
fn cell(r: &mut Reader) -> Decoded<(Bytes, i64)> {
    let (mut value, mut timestamp) = (None, None);
    read_struct(r, |r, id, kind| {
        match id {
            1 => {
                r.expect("TCell.value", TType::String, kind)?;
                value = Some(r.binary()?);
            }
            2 => {
                r.expect("TCell.timestamp", TType::I64, kind)?;
                timestamp = Some(r.i64()?);
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok((required(value, "TCell", 1)?, required(timestamp, "TCell", 2)?))
}

/// A `list<TCell>` (`getVerTs`): values and timestamps, in the gateway's
/// order (newest first).
pub fn cells(r: &mut Reader) -> Decoded<Vec<(Bytes, i64)>> {
    read_list(r, MIN_CELL, cell)
}

/// A Thrift1 column name, `family:qualifier`, split at its first `:`; each
/// part a slice of the reply's buffer.
fn split_column(name: &Bytes, at: usize) -> Decoded<(Bytes, Bytes)> {
    let colon = name.iter().position(|&b| b == b':').ok_or(DecodeError::Malformed {
        what: "a cell's column name",
        why: "no `:` between family and qualifier",
        at,
    })?;
    Ok((name.slice(..colon), name.slice(colon + 1..)))
}

/// A `TRowResult { 1: Text row, 2: optional map<Text, TCell> columns, 3:
/// optional list<TColumn> sortedColumns }`, its cells sorted as hmap
/// returns them (family, qualifier, newest first), whichever form they came
/// in. The row is required.
fn row_result(r: &mut Reader) -> Decoded<RowResult> {
    let mut row = None;
    let mut cells: Vec<Cell> = Vec::new();
    read_struct(r, |r, id, kind| {
        match id {
            1 => {
                r.expect("TRowResult.row", TType::String, kind)?;
                row = Some(r.binary()?);
            }
            2 => {
                r.expect("TRowResult.columns", TType::Map, kind)?;
                let len = map_of_structs(r, "TRowResult.columns", MIN_CELL_ENTRY)?;
                cells.reserve(len);
                r.enter()?;
                for _ in 0..len {
                    let at = r.pos();
                    let name = r.binary()?;
                    let (value, timestamp) = cell(r)?;
                    let (family, qualifier) = split_column(&name, at)?;
                    cells.push(Cell::new(family, qualifier, timestamp, value));
                }
                r.leave();
            }
            3 => {
                r.expect("TRowResult.sortedColumns", TType::List, kind)?;
                let columns = read_list(r, MIN_COLUMN, |r| {
                    let (mut name, mut found) = (None, None);
                    let at = r.pos();
                    read_struct(r, |r, id, kind| {
                        match id {
                            1 => {
                                r.expect("TColumn.columnName", TType::String, kind)?;
                                name = Some(r.binary()?);
                            }
                            2 => {
                                r.expect("TColumn.cell", TType::Struct, kind)?;
                                found = Some(cell(r)?);
                            }
                            _ => return Ok(false),
                        }
                        Ok(true)
                    })?;
                    let (family, qualifier) = split_column(&required(name, "TColumn", 1)?, at)?;
                    let (value, timestamp) = required(found, "TColumn", 2)?;
                    Ok(Cell::new(family, qualifier, timestamp, value))
                })?;
                cells.extend(columns);
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    cells.sort_by(|a, b| {
        (&a.family, &a.qualifier)
            .cmp(&(&b.family, &b.qualifier))
            .then(b.timestamp.cmp(&a.timestamp))
    });
    Ok(RowResult::new(required(row, "TRowResult", 1)?, cells))
}

/// The header of a `map<Text, struct>` (`what`): its count, checked
/// against the bytes left with each entry taking at least `least`, so that
/// the caller may reserve room for it.
fn map_of_structs(r: &mut Reader, what: &'static str, least: Least) -> Decoded<usize> {
    let at = r.pos();
    let (key, value, len) = r.map()?;
    if len > 0 {
        r.expect(what, TType::String, key).map_err(|e| at_byte(e, at))?;
        r.expect(what, TType::Struct, value).map_err(|e| at_byte(e, at))?;
    }
    r.check_count("a map", len, r.least(least.0, least.1), at)?;
    Ok(len)
}

/// A `WrongType` error placed at `at`, the container's header.
fn at_byte(e: DecodeError, at: usize) -> DecodeError {
    match e {
        DecodeError::WrongType {
            what, expected, got, ..
        } => DecodeError::WrongType {
            what,
            expected,
            got,
            at,
        },
        other => other,
    }
}

/// A `list<TRowResult>`: the rows of a get or a scanner batch. The gateway
/// leaves out rows with no cell (`ThriftUtilities.rowResultFromHBase`).
pub fn row_results(r: &mut Reader) -> Decoded<Vec<RowResult>> {
    read_list(r, MIN_ONE_BINARY, row_result)
}

/// A `list<Text>` (`getTableNames`).
pub fn texts_of(r: &mut Reader) -> Decoded<Vec<Bytes>> {
    let at = r.pos();
    let (elem, len) = r.list(r.least(4, 1))?;
    if len > 0 {
        r.expect("a list's element", TType::String, elem)
            .map_err(|e| at_byte(e, at))?;
    }
    let mut items = Vec::with_capacity(len);
    for _ in 0..len {
        items.push(r.binary()?);
    }
    Ok(items)
}

/// The start keys of a `list<TRegionInfo>` (`{ 1: Text startKey, ... }`),
/// in the gateway's order; a region without one starts at the beginning.
pub fn region_starts(r: &mut Reader) -> Decoded<Vec<Bytes>> {
    read_list(r, (1, 1), |r| {
        let mut start = Bytes::new();
        read_struct(r, |r, id, kind| {
            if id != 1 {
                return Ok(false);
            }
            r.expect("TRegionInfo.startKey", TType::String, kind)?;
            start = r.binary()?;
            Ok(true)
        })?;
        Ok(start)
    })
}

/// A `map<Text, ColumnDescriptor>` (`getColumnDescriptors`): the families,
/// sorted by name, with the options a `ColumnDescriptor` carries. It has no
/// `MIN_VERSIONS` and no `BLOCKSIZE`: those are reported as HBase's
/// defaults (0 and 65,536).
pub fn column_descriptors(r: &mut Reader) -> Decoded<Vec<FamilySchema>> {
    let len = map_of_structs(r, "getColumnDescriptors' map", MIN_DESCRIPTOR_ENTRY)?;
    let mut families = Vec::with_capacity(len);
    r.enter()?;
    for _ in 0..len {
        r.skip(TType::String)?;
        families.push(column_descriptor(r)?);
    }
    r.leave();
    families.sort_by(|a: &FamilySchema, b| a.name.cmp(&b.name));
    Ok(families)
}

/// A `ColumnDescriptor`: its name (`family:`, as the gateway writes it,
/// with or without the colon) required, the options hmap has read; names
/// of compressions and bloom filters hmap does not know read as none.
fn column_descriptor(r: &mut Reader) -> Decoded<FamilySchema> {
    let mut f = FamilySchema::new("");
    let mut named = false;
    read_struct(r, |r, id, kind| {
        let expected = match id {
            1 | 3 | 5 => TType::String,
            2 | 9 => TType::I32,
            4 | 8 => TType::Bool,
            _ => return Ok(false),
        };
        r.expect("a ColumnDescriptor field", expected, kind)?;
        match id {
            1 => {
                let name = r.string("ColumnDescriptor.name")?;
                f.name = name.strip_suffix(':').unwrap_or(&name).to_string();
                named = true;
            }
            2 => f.versions = u32::try_from(r.i32()?).unwrap_or(0),
            3 => {
                f.compression = match &r.binary()?[..] {
                    b"LZO" => Compression::Lzo,
                    b"GZ" => Compression::Gz,
                    b"SNAPPY" => Compression::Snappy,
                    b"LZ4" => Compression::Lz4,
                    b"BZIP2" => Compression::Bzip2,
                    b"ZSTD" => Compression::Zstd,
                    _ => Compression::None,
                }
            }
            4 => f.in_memory = r.bool()?,
            5 => {
                f.bloom = match &r.binary()?[..] {
                    b"NONE" => BloomType::None,
                    b"ROWCOL" => BloomType::RowCol,
                    _ => BloomType::Row,
                }
            }
            8 => f.block_cache = r.bool()?,
            _ => {
                f.ttl_secs = match r.i32()? {
                    ttl if ttl <= 0 => TTL_FOREVER,
                    ttl => u32::try_from(ttl).unwrap_or(TTL_FOREVER),
                }
            }
        }
        Ok(true)
    })?;
    required(named.then_some(()), "ColumnDescriptor", 1)?;
    Ok(f)
}

#[cfg(test)]
mod tests {
    //! Replies recorded from HBase 2.6.1's Thrift1 gateway
    //! (`golden/thrift1/record.py`), binary protocol.

    use super::*;
    use crate::store::thrift::codec::{self, Protocol};
    use crate::store::thrift::hbase::{ServerException, reply, void};

    /// The golden reply `name` to `method`, opened.
    fn open(method: &'static str, bytes: &'static [u8]) -> Reader {
        codec::open_reply(Protocol::Binary, Bytes::from_static(bytes), method, seq(bytes))
            .expect("a reply")
            .expect("no application exception")
    }

    /// The sequence id of a strict binary reply.
    fn seq(bytes: &[u8]) -> i32 {
        let name = u32::from_be_bytes(bytes[4..8].try_into().unwrap()) as usize;
        i32::from_be_bytes(bytes[8 + name..12 + name].try_into().unwrap())
    }

    fn cell(f: &str, q: &[u8], ts: i64, v: &[u8]) -> Cell {
        Cell::new(
            Bytes::copy_from_slice(f.as_bytes()),
            Bytes::copy_from_slice(q),
            ts,
            Bytes::copy_from_slice(v),
        )
    }

    #[test]
    fn a_row_as_a_map_of_columns_reads_sorted() {
        let rows = reply(
            open("getRowWithColumnsTs", include_bytes!("golden/thrift1/get_row.bin")),
            TType::List,
            row_results,
        );
        let rows = rows.unwrap().unwrap();
        assert_eq!(
            rows,
            vec![RowResult::new(
                Bytes::from_static(b"r1"),
                vec![cell("a", b"q", 7, b"new"), cell("b", b"", 7, b"\xff\x00")]
            )]
        );
        // A missing row is no row at all.
        let none = reply(
            open(
                "getRowWithColumnsTs",
                include_bytes!("golden/thrift1/get_row_missing.bin"),
            ),
            TType::List,
            row_results,
        );
        assert_eq!(none, Ok(Ok(Vec::new())));
    }

    #[test]
    fn scanner_rows_as_sorted_columns_and_versions_as_cells() {
        let rows = reply(
            open("scannerGetList", include_bytes!("golden/thrift1/scanner_rows.bin")),
            TType::List,
            row_results,
        )
        .unwrap()
        .unwrap();
        let keys: Vec<&[u8]> = rows.iter().map(|r| &r.row[..]).collect();
        assert_eq!(keys, [&b"r1"[..], b"r2"]);
        assert_eq!(rows[1].cells, vec![cell("a", b"q", 7, b"two")]);
        let versions = reply(
            open("getVerTs", include_bytes!("golden/thrift1/get_versions.bin")),
            TType::List,
            cells,
        );
        assert_eq!(
            versions,
            Ok(Ok(vec![
                (Bytes::from_static(b"new"), 7),
                (Bytes::from_static(b"old"), 5)
            ]))
        );
        assert_eq!(
            reply(
                open("scannerOpenWithScan", include_bytes!("golden/thrift1/scanner_open.bin")),
                TType::I32,
                Reader::i32
            )
            .map(|r| r.is_ok()),
            Ok(true)
        );
        // A closed scanner: IllegalArgument.
        assert!(matches!(
            reply(
                open("scannerGetList", include_bytes!("golden/thrift1/scanner_closed.bin")),
                TType::List,
                row_results
            ),
            Ok(Err(ServerException::IllegalArgument { message: Some(m) })) if m == "scanner ID is invalid"
        ));
    }

    #[test]
    fn descriptors_regions_and_scalars() {
        let families = reply(
            open(
                "getColumnDescriptors",
                include_bytes!("golden/thrift1/column_descriptors.bin"),
            ),
            TType::Map,
            column_descriptors,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            families,
            vec![FamilySchema::new("a").versions(3), FamilySchema::new("b")]
        );
        assert_eq!(
            reply(
                open("getTableRegions", include_bytes!("golden/thrift1/table_regions.bin")),
                TType::List,
                region_starts
            ),
            Ok(Ok(vec![Bytes::new()]))
        );
        assert_eq!(
            reply(
                open("atomicIncrement", include_bytes!("golden/thrift1/increment.bin")),
                TType::I64,
                Reader::i64
            ),
            Ok(Ok(7))
        );
        assert_eq!(
            reply(
                open("checkAndPut", include_bytes!("golden/thrift1/check_and_put_false.bin")),
                TType::Bool,
                Reader::bool
            ),
            Ok(Ok(false))
        );
    }

    #[test]
    fn exceptions_of_thrift1() {
        assert!(matches!(
            void(open(
                "createTable",
                include_bytes!("golden/thrift1/create_table_exists.bin")
            )),
            Ok(Err(ServerException::AlreadyExists { .. }))
        ));
        match reply(
            open(
                "getColumnDescriptors",
                include_bytes!("golden/thrift1/missing_table_io_error.bin"),
            ),
            TType::Map,
            column_descriptors,
        ) {
            Ok(Err(ServerException::Io { message: Some(m), .. })) => {
                assert!(m.starts_with("org.apache.hadoop.hbase.TableNotFoundException: t1_golden_never_created"))
            }
            other => panic!("{other:?}"),
        }
    }

    /// A reply of `method` whose result field 0 is `kind`, written by `value`.
    fn result_of(method: &str, kind: TType, value: impl FnOnce(&mut Encoder)) -> Bytes {
        let mut e = Encoder::default();
        e.message(method, codec::REPLY, 1);
        e.field(kind, 0);
        value(&mut e);
        e.stop();
        Bytes::from(e.buf)
    }

    fn open_built(method: &'static str, bytes: Bytes) -> Reader {
        codec::open_reply(Protocol::Binary, bytes, method, 1).unwrap().unwrap()
    }

    /// Counts the bytes cannot hold, column names without their colon,
    /// cells without their fields, maps of the wrong types: typed errors,
    /// nothing reserved for the counts.
    #[test]
    fn hostile_thrift1_replies_are_typed_errors() {
        // A map of 2^31-1 cells in a few bytes.
        let huge = result_of("getRowWithColumnsTs", TType::List, |e| {
            e.list(TType::Struct, 1);
            e.binary_field(1, b"r");
            e.field(TType::Map, 2);
            e.map(TType::String, TType::Struct, i32::MAX as usize);
            e.stop();
        });
        let got = reply(open_built("getRowWithColumnsTs", huge), TType::List, row_results);
        assert!(matches!(got, Err(DecodeError::TooLong { .. })), "{got:?}");
        // A column name without `family:`.
        let bare = result_of("getRowWithColumnsTs", TType::List, |e| {
            e.list(TType::Struct, 1);
            e.binary_field(1, b"r");
            e.field(TType::Map, 2);
            e.map(TType::String, TType::Struct, 1);
            e.string(b"nocolon");
            e.binary_field(1, b"v");
            e.i64_field(2, 1);
            e.stop();
            e.stop();
        });
        let got = reply(open_built("getRowWithColumnsTs", bare), TType::List, row_results);
        assert!(matches!(got, Err(DecodeError::Malformed { .. })), "{got:?}");
        // A cell without its timestamp.
        let partial = result_of("getVerTs", TType::List, |e| {
            e.list(TType::Struct, 1);
            e.binary_field(1, b"v");
            e.buf.extend_from_slice(&[0; 11]);
            e.stop();
        });
        let got = reply(open_built("getVerTs", partial), TType::List, cells);
        assert!(
            matches!(
                got,
                Err(DecodeError::MissingField { what: "TCell", id: 2 }) | Err(DecodeError::TrailingBytes { .. })
            ),
            "{got:?}"
        );
        // Column descriptors keyed by integers.
        let wrong = result_of("getColumnDescriptors", TType::Map, |e| {
            e.map(TType::I32, TType::Struct, 1);
            e.i32(1);
            e.stop();
        });
        let got = reply(
            open_built("getColumnDescriptors", wrong),
            TType::Map,
            column_descriptors,
        );
        assert!(matches!(got, Err(DecodeError::WrongType { .. })), "{got:?}");
        // A row without its key.
        let keyless = result_of("scannerGetList", TType::List, |e| {
            e.list(TType::Struct, 1);
            e.field(TType::List, 3);
            e.list(TType::Struct, 0);
            e.stop();
        });
        let got = reply(open_built("scannerGetList", keyless), TType::List, row_results);
        assert_eq!(
            got,
            Err(DecodeError::MissingField {
                what: "TRowResult",
                id: 1
            })
        );
    }
}
