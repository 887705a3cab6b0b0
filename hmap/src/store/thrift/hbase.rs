//! The subset of HBase's Thrift2 service (`THBaseService`, from
//! `org/apache/hadoop/hbase/thrift2/hbase.thrift` in the `hbase-thrift` jar)
//! that hmap uses: each struct written with the field ids and types of that
//! IDL, each result read back skipping what hmap does not need.

use std::io;

use bytes::Bytes;

use super::protocol::{Decoder, Encoder, TType, invalid};
use crate::schema::{BloomType, Compression, FamilySchema, TableSchema};
use crate::store::{Cell, Column, Get, Mutation, RowResult, Scan, TimeRange};

/// A reply: the value, or the message of a `TIOError` / `TIllegalArgument`.
pub type Reply<T> = Result<T, String>;

/// Reads a result struct: field 0 the value (absent for `void`), fields 1
/// and 2 the declared exceptions (each `{1: string message, ...}`).
pub fn read_reply<T>(
    d: &mut Decoder<'_>,
    success: impl FnOnce(&mut Decoder<'_>, TType) -> io::Result<T>,
) -> io::Result<Reply<Option<T>>> {
    let mut value = None;
    let mut error = None;
    let mut success = Some(success);
    while let Some((kind, id)) = d.field()? {
        match id {
            0 => match success.take() {
                Some(f) => value = Some(f(d, kind)?),
                None => d.skip(kind)?,
            },
            1 | 2 if kind == TType::Struct => {
                let mut message = String::from("(no message)");
                while let Some((k, fid)) = d.field()? {
                    match (fid, k) {
                        (1, TType::String) => message = d.string()?,
                        _ => d.skip(k)?,
                    }
                }
                error = Some(message);
            }
            _ => d.skip(kind)?,
        }
    }
    Ok(match error {
        Some(message) => Err(message),
        None => Ok(value),
    })
}

// ---------------------------------------------------------------------------
// Writing

/// A `list<struct>` field `id`, one struct per item written by `each`.
pub fn struct_list<T>(e: &mut Encoder, id: i16, items: &[T], mut each: impl FnMut(&mut Encoder, &T)) {
    e.field(TType::List, id);
    e.list(TType::Struct, items.len());
    for item in items {
        each(e, item);
    }
}

/// A `bool` result (`false` if the gateway sent another type).
pub fn read_bool(d: &mut Decoder<'_>, kind: TType) -> io::Result<bool> {
    if kind == TType::Bool {
        d.bool()
    } else {
        d.skip(kind).map(|_| false)
    }
}

/// An `i32` result (0 if the gateway sent another type).
pub fn read_i32(d: &mut Decoder<'_>, kind: TType) -> io::Result<i32> {
    if kind == TType::I32 {
        d.i32()
    } else {
        d.skip(kind).map(|_| 0)
    }
}

pub fn table_name(e: &mut Encoder, id: i16, name: &str) {
    // TTableName { 1: optional binary ns, 2: required binary qualifier }
    e.field(TType::Struct, id);
    match name.split_once(':') {
        Some((ns, q)) => {
            e.binary_field(1, ns.as_bytes());
            e.binary_field(2, q.as_bytes());
        }
        None => e.binary_field(2, name.as_bytes()),
    }
    e.stop();
}

fn time_range(e: &mut Encoder, id: i16, range: TimeRange) {
    // TTimeRange { 1: required i64 minStamp, 2: required i64 maxStamp }
    e.field(TType::Struct, id);
    e.i64_field(1, range.min);
    e.i64_field(2, range.max);
    e.stop();
}

fn columns(e: &mut Encoder, id: i16, columns: &[Column]) {
    // list<TColumn>, TColumn { 1: family, 2: optional qualifier, 3: optional timestamp }
    struct_list(e, id, columns, |e, c| {
        match c {
            Column::Family(f) => e.binary_field(1, f),
            Column::Qualifier(f, q) => {
                e.binary_field(1, f);
                e.binary_field(2, q);
            }
        }
        e.stop();
    });
}

/// TGet { 1: row, 2: columns, 4: timeRange, 5: maxVersions }
pub fn get(e: &mut Encoder, g: &Get) {
    e.binary_field(1, &g.row);
    if !g.columns.is_empty() {
        columns(e, 2, &g.columns);
    }
    if !g.time_range.is_all() {
        time_range(e, 4, g.time_range);
    }
    e.i32_field(5, i32::try_from(g.max_versions).unwrap_or(i32::MAX));
    e.stop();
}

/// TScan { 1: startRow, 2: stopRow, 3: columns, 4: caching, 5: maxVersions,
/// 6: timeRange, 11: reversed }; the range as HBase reads it (a reversed
/// scan starts at its high end).
pub fn scan(e: &mut Encoder, s: &Scan, start: &[u8], stop: &[u8]) {
    if !start.is_empty() {
        e.binary_field(1, start);
    }
    if !stop.is_empty() {
        e.binary_field(2, stop);
    }
    if !s.columns.is_empty() {
        columns(e, 3, &s.columns);
    }
    e.i32_field(4, i32::try_from(s.batch_size.max(1)).unwrap_or(i32::MAX));
    e.i32_field(5, i32::try_from(s.max_versions).unwrap_or(i32::MAX));
    if !s.time_range.is_all() {
        time_range(e, 6, s.time_range);
    }
    if s.reversed {
        e.bool_field(11, true);
    }
    e.stop();
}

/// TDeleteType values.
const DELETE_COLUMN: i32 = 0;
const DELETE_COLUMNS: i32 = 1;
const DELETE_FAMILY: i32 = 2;

/// One mutation as a `TMutation` union member: `1: TPut` or `2: TDelete`.
fn mutation(e: &mut Encoder, row: &[u8], m: &Mutation) {
    match DeleteSpec::of(m) {
        None => {
            e.field(TType::Struct, 1);
            put_fields(e, row, std::slice::from_ref(m));
        }
        Some(spec) => {
            e.field(TType::Struct, 2);
            delete_fields(e, row, &spec);
        }
    }
}

/// The fields of a TPut { 1: row, 2: list<TColumnValue> } holding the puts
/// among `mutations` (others are left out), and its stop.
pub fn put_fields(e: &mut Encoder, row: &[u8], mutations: &[Mutation]) {
    let count = mutations.iter().filter(|m| DeleteSpec::of(m).is_none()).count();
    e.binary_field(1, row);
    e.field(TType::List, 2);
    e.list(TType::Struct, count);
    for m in mutations {
        if let Mutation::Put {
            family,
            qualifier,
            value,
            timestamp,
        } = m
        {
            // TColumnValue { 1: family, 2: qualifier, 3: value, 4: timestamp }
            e.binary_field(1, family);
            e.binary_field(2, qualifier);
            e.binary_field(3, value);
            if let Some(ts) = timestamp {
                e.i64_field(4, *ts);
            }
            e.stop();
        }
    }
    e.stop();
}

/// What a delete mutation becomes in a TDelete.
pub struct DeleteSpec<'a> {
    column: Option<(&'a Bytes, Option<&'a Bytes>)>,
    timestamp: Option<i64>,
    kind: i32,
}

impl<'a> DeleteSpec<'a> {
    /// The delete `m` is, or `None` for a put.
    pub fn of(m: &'a Mutation) -> Option<Self> {
        let (column, timestamp, kind) = match m {
            Mutation::Put { .. } => return None,
            Mutation::DeleteCell {
                family,
                qualifier,
                timestamp,
            } => (Some((family, Some(qualifier))), *timestamp, DELETE_COLUMN),
            Mutation::DeleteColumn {
                family,
                qualifier,
                up_to,
            } => (Some((family, Some(qualifier))), *up_to, DELETE_COLUMNS),
            Mutation::DeleteFamily { family, up_to } => (Some((family, None)), *up_to, DELETE_FAMILY),
            Mutation::DeleteRow { up_to } => (None, *up_to, DELETE_COLUMNS),
        };
        Some(DeleteSpec {
            column,
            timestamp,
            kind,
        })
    }
}

/// The fields of a TDelete { 1: row, 2: columns, 3: timestamp, 4: deleteType }
/// and its stop. With a column, the timestamp rides on the TColumn (HBase's
/// `ThriftUtilities.deleteFromThrift` reads it there); a whole-row delete
/// carries it on the TDelete.
pub fn delete_fields(e: &mut Encoder, row: &[u8], spec: &DeleteSpec<'_>) {
    e.binary_field(1, row);
    match spec.column {
        Some((family, qualifier)) => {
            e.field(TType::List, 2);
            e.list(TType::Struct, 1);
            e.binary_field(1, family);
            if let Some(q) = qualifier {
                e.binary_field(2, q);
            }
            if let Some(ts) = spec.timestamp {
                e.i64_field(3, ts);
            }
            e.stop();
            e.i32_field(4, spec.kind);
        }
        None => {
            if let Some(ts) = spec.timestamp {
                e.i64_field(3, ts);
            }
        }
    }
    e.stop();
}

/// TRowMutations { 1: row, 2: list<TMutation> } as field `id`.
pub fn row_mutations(e: &mut Encoder, id: i16, row: &[u8], mutations: &[Mutation]) {
    e.field(TType::Struct, id);
    e.binary_field(1, row);
    e.field(TType::List, 2);
    e.list(TType::Struct, mutations.len());
    for m in mutations {
        mutation(e, row, m);
        e.stop();
    }
    e.stop();
}

/// TIncrement { 1: row, 2: list<TColumnIncrement>, 7: returnResults }
pub fn increment(e: &mut Encoder, row: &[u8], columns: &[(Bytes, Bytes, i64)]) {
    e.binary_field(1, row);
    e.field(TType::List, 2);
    e.list(TType::Struct, columns.len());
    for (f, q, amount) in columns {
        e.binary_field(1, f);
        e.binary_field(2, q);
        e.i64_field(3, *amount);
        e.stop();
    }
    e.bool_field(7, true);
    e.stop();
}

fn bloom_code(b: BloomType) -> i32 {
    match b {
        BloomType::None => 0,
        BloomType::Row => 1,
        BloomType::RowCol => 2,
    }
}

fn compression_code(c: Compression) -> i32 {
    match c {
        Compression::Lzo => 0,
        Compression::Gz => 1,
        Compression::None => 2,
        Compression::Snappy => 3,
        Compression::Lz4 => 4,
        Compression::Bzip2 => 5,
        Compression::Zstd => 6,
    }
}

/// TTableDescriptor { 1: tableName, 2: list<TColumnFamilyDescriptor> }, every
/// option sent explicitly (an option left out takes the server's default).
pub fn table_descriptor(e: &mut Encoder, id: i16, name: &str, schema: &TableSchema) {
    e.field(TType::Struct, id);
    table_name(e, 1, name);
    struct_list(e, 2, &schema.families, |e, f| {
        e.binary_field(1, f.name.as_bytes());
        e.i32_field(4, i32::try_from(f.block_size).unwrap_or(i32::MAX));
        e.i32_field(5, bloom_code(f.bloom));
        e.i32_field(6, compression_code(f.compression));
        e.i32_field(10, i32::try_from(f.versions).unwrap_or(i32::MAX));
        e.i32_field(11, i32::try_from(f.min_versions).unwrap_or(i32::MAX));
        e.i32_field(13, i32::try_from(f.ttl_secs).unwrap_or(i32::MAX));
        e.bool_field(14, f.block_cache);
        e.bool_field(20, f.in_memory);
        e.stop();
    });
    if !schema.metadata.is_empty() {
        // 3: optional map<binary, binary> attributes
        e.field(TType::Map, 3);
        e.map(TType::String, TType::String, schema.metadata.len());
        for (key, value) in &schema.metadata {
            e.string(key.as_bytes());
            e.string(value.as_bytes());
        }
    }
    e.stop();
}

// ---------------------------------------------------------------------------
// Reading

/// A TResult; `None` when it holds no cell (HBase's empty Result).
pub fn result(d: &mut Decoder<'_>) -> io::Result<Option<RowResult>> {
    let mut row = Bytes::new();
    let mut cells = Vec::new();
    while let Some((kind, id)) = d.field()? {
        match (id, kind) {
            (1, TType::String) => row = Bytes::from(d.binary()?),
            (2, TType::List) => cells = read_list(d, column_value)?,
            _ => d.skip(kind)?,
        }
    }
    Ok((!cells.is_empty()).then_some(RowResult { row, cells }))
}

fn column_value(d: &mut Decoder<'_>) -> io::Result<Cell> {
    let (mut family, mut qualifier, mut value, mut timestamp) = (Vec::new(), Vec::new(), Vec::new(), 0);
    while let Some((kind, id)) = d.field()? {
        match (id, kind) {
            (1, TType::String) => family = d.binary()?,
            (2, TType::String) => qualifier = d.binary()?,
            (3, TType::String) => value = d.binary()?,
            (4, TType::I64) => timestamp = d.i64()?,
            _ => d.skip(kind)?,
        }
    }
    Ok(Cell {
        family: Bytes::from(family),
        qualifier: Bytes::from(qualifier),
        timestamp,
        value: Bytes::from(value),
    })
}

/// A list of TResult, one per get (empty ones as `None`).
pub fn results(d: &mut Decoder<'_>) -> io::Result<Vec<Option<RowResult>>> {
    read_list(d, result)
}

/// A `list<struct>`, each element read by `each`.
fn read_list<T>(d: &mut Decoder<'_>, mut each: impl FnMut(&mut Decoder<'_>) -> io::Result<T>) -> io::Result<Vec<T>> {
    let (_, len) = d.list()?;
    // The length comes from the wire: allocate as elements arrive.
    let mut items = Vec::with_capacity(len.min(1024));
    for _ in 0..len {
        items.push(each(d)?);
    }
    Ok(items)
}

/// A struct's binary field `id` (empty if absent); other fields skipped.
fn read_binary_field(d: &mut Decoder<'_>, id: i16) -> io::Result<Bytes> {
    let mut value = Bytes::new();
    while let Some((kind, fid)) = d.field()? {
        match (fid, kind) {
            (f, TType::String) if f == id => value = Bytes::from(d.binary()?),
            _ => d.skip(kind)?,
        }
    }
    Ok(value)
}

/// The rows of a `list<TDelete>` (the deletes `deleteMultiple` could not apply).
pub fn read_delete_rows(d: &mut Decoder<'_>) -> io::Result<Vec<Bytes>> {
    read_list(d, |d| read_binary_field(d, 1))
}

/// The start keys of a `list<THRegionLocation>`
/// (`{1: TServerName, 2: THRegionInfo {3: startKey}}`), in the gateway's order.
pub fn read_region_starts(d: &mut Decoder<'_>) -> io::Result<Vec<Bytes>> {
    read_list(d, |d| {
        let mut start = Bytes::new();
        while let Some((kind, id)) = d.field()? {
            match (id, kind) {
                (2, TType::Struct) => start = read_binary_field(d, 3)?,
                _ => d.skip(kind)?,
            }
        }
        Ok(start)
    })
}

/// A `list<TTableName>`, each as [`read_table_name`] gives it.
pub fn read_table_names(d: &mut Decoder<'_>) -> io::Result<Vec<String>> {
    read_list(d, read_table_name)
}

/// A TTableName as `ns:table`, or `table` in the default namespace.
fn read_table_name(d: &mut Decoder<'_>) -> io::Result<String> {
    let (mut ns, mut qualifier) = (Vec::new(), Vec::new());
    while let Some((kind, id)) = d.field()? {
        match (id, kind) {
            (1, TType::String) => ns = d.binary()?,
            (2, TType::String) => qualifier = d.binary()?,
            _ => d.skip(kind)?,
        }
    }
    let qualifier = String::from_utf8(qualifier).map_err(|_| invalid("table name is not UTF-8"))?;
    Ok(match String::from_utf8(ns) {
        Ok(ns) if !ns.is_empty() && ns != "default" => format!("{ns}:{qualifier}"),
        _ => qualifier,
    })
}

pub fn read_table_descriptor(d: &mut Decoder<'_>) -> io::Result<TableSchema> {
    let mut schema = TableSchema::new("");
    while let Some((kind, id)) = d.field()? {
        match (id, kind) {
            (1, TType::Struct) => schema.name = read_table_name(d)?,
            (2, TType::List) => schema.families = read_list(d, read_family)?,
            (3, TType::Map) => schema.metadata = read_attributes(d)?,
            _ => d.skip(kind)?,
        }
    }
    schema.families.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(schema)
}

/// TTableDescriptor's `3: optional map<binary, binary> attributes`, as
/// text (bytes that are not UTF-8 replaced).
fn read_attributes(d: &mut Decoder<'_>) -> io::Result<std::collections::BTreeMap<String, String>> {
    let (key, value, len) = d.map()?;
    let mut attributes = std::collections::BTreeMap::new();
    for _ in 0..len {
        if (key, value) != (TType::String, TType::String) {
            d.skip(key)?;
            d.skip(value)?;
            continue;
        }
        let k = String::from_utf8_lossy(&d.binary()?).into_owned();
        let v = String::from_utf8_lossy(&d.binary()?).into_owned();
        attributes.insert(k, v);
    }
    Ok(attributes)
}

fn read_family(d: &mut Decoder<'_>) -> io::Result<FamilySchema> {
    let mut f = FamilySchema::new("");
    let positive = |v: i32| u32::try_from(v).unwrap_or(0);
    while let Some((kind, id)) = d.field()? {
        match (id, kind) {
            (1, TType::String) => {
                f.name = String::from_utf8(d.binary()?).map_err(|_| invalid("family name is not UTF-8"))?;
            }
            (4, TType::I32) => f.block_size = positive(d.i32()?),
            (5, TType::I32) => {
                f.bloom = match d.i32()? {
                    0 => BloomType::None,
                    2 => BloomType::RowCol,
                    _ => BloomType::Row,
                }
            }
            (6, TType::I32) => {
                f.compression = match d.i32()? {
                    0 => Compression::Lzo,
                    1 => Compression::Gz,
                    3 => Compression::Snappy,
                    4 => Compression::Lz4,
                    5 => Compression::Bzip2,
                    6 => Compression::Zstd,
                    _ => Compression::None,
                }
            }
            (10, TType::I32) => f.versions = positive(d.i32()?),
            (11, TType::I32) => f.min_versions = positive(d.i32()?),
            (13, TType::I32) => f.ttl_secs = positive(d.i32()?),
            (14, TType::Bool) => f.block_cache = d.bool()?,
            (20, TType::Bool) => f.in_memory = d.bool()?,
            _ => d.skip(kind)?,
        }
    }
    Ok(f)
}
