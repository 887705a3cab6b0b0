//! The subset of HBase's Thrift2 service (`THBaseService`, from
//! `org/apache/hadoop/hbase/thrift2/hbase.thrift` in the `hbase-thrift` jar)
//! that hmap uses: each struct written with the field ids and types of that
//! IDL, each result read back with its fields' types checked against it
//! (a field of another type is a [`DecodeError::WrongType`], never a default),
//! its required fields required, and fields hmap does not know skipped, so
//! that newer gateways with more fields still work.

use std::collections::BTreeMap;
use std::ops::Range;

use bytes::Bytes;

use super::codec::{DecodeError, Encoder, Reader, TType};
use crate::schema::{BloomType, Compression, FamilySchema, TableSchema};
use crate::store::{Cell, Column, Get, Mutation, RowResult, Scan, TimeRange};

/// What decoding gives: a value, or why the bytes are not a valid reply.
pub type Decoded<T> = Result<T, DecodeError>;

/// An exception a call declares (`throws` in the IDL), sent as field 1 or 2
/// of its result struct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerException {
    /// `1: TIOError io { 1: optional string message, 2: optional bool canRetry }`:
    /// HBase failed; `message` is the Java exception's message.
    Io {
        /// The message, if sent.
        message: Option<String>,
        /// `false` for HBase's `DoNotRetryIOException`s, if sent.
        can_retry: Option<bool>,
    },
    /// `2: TIllegalArgument ia { 1: optional string message }` (scanner
    /// calls): the arguments were refused.
    IllegalArgument {
        /// The message, if sent.
        message: Option<String>,
    },
    /// `3: AlreadyExists exist { 1: string message }`: Thrift1's
    /// `createTable` of a table that exists (no Thrift2 call declares a
    /// third exception).
    AlreadyExists {
        /// The message, if sent.
        message: Option<String>,
    },
}

/// Reads a value of a result.
type ReadValue<'a, T> = dyn FnMut(&mut Reader) -> Decoded<T> + 'a;

/// Reads a result struct after its message header: field 0 the value, if
/// `success` is given (with the type the IDL declares for it), fields 1 to
/// 3 the declared exceptions (Thrift1's `IOError`, `IllegalArgument` and
/// `AlreadyExists` have the shapes of Thrift2's `TIOError` and
/// `TIllegalArgument`), other fields skipped. Fails on trailing bytes.
fn read_result<T>(
    r: &mut Reader,
    mut success: Option<(TType, &mut ReadValue<'_, T>)>,
) -> Decoded<Result<Option<T>, ServerException>> {
    let mut value = None;
    let mut error = None;
    r.enter()?;
    while let Some((kind, id)) = r.field()? {
        match (id, success.as_mut()) {
            (0, Some((expected, read))) => {
                r.expect("the result", *expected, kind)?;
                value = Some(read(r)?);
            }
            (1, _) => {
                r.expect("the TIOError", TType::Struct, kind)?;
                error = Some(read_io_error(r)?);
            }
            (2, _) => {
                r.expect("the TIllegalArgument", TType::Struct, kind)?;
                error = Some(ServerException::IllegalArgument {
                    message: read_message_only(r)?,
                });
            }
            (3, _) => {
                r.expect("the AlreadyExists", TType::Struct, kind)?;
                error = Some(ServerException::AlreadyExists {
                    message: read_message_only(r)?,
                });
            }
            _ => r.skip(kind)?,
        }
    }
    r.leave();
    r.finish()?;
    Ok(match error {
        Some(e) => Err(e),
        None => Ok(value),
    })
}

/// The result of a call declared to return a `kind` value, read by `read`.
/// A reply with neither a value nor an exception is a
/// [`DecodeError::MissingResult`], as Thrift's own clients treat it.
pub fn reply<T>(
    mut r: Reader,
    kind: TType,
    mut read: impl FnMut(&mut Reader) -> Decoded<T>,
) -> Decoded<Result<T, ServerException>> {
    match read_result(&mut r, Some((kind, &mut read)))? {
        Ok(Some(value)) => Ok(Ok(value)),
        Ok(None) => Err(DecodeError::MissingResult),
        Err(e) => Ok(Err(e)),
    }
}

/// The result of a `void` call.
pub fn void(mut r: Reader) -> Decoded<Result<(), ServerException>> {
    Ok(read_result::<()>(&mut r, None)?.map(|_| ()))
}

fn read_io_error(r: &mut Reader) -> Decoded<ServerException> {
    let (mut message, mut can_retry) = (None, None);
    r.enter()?;
    while let Some((kind, id)) = r.field()? {
        match id {
            1 => {
                r.expect("TIOError.message", TType::String, kind)?;
                message = Some(lossy(r.binary()?));
            }
            2 => {
                r.expect("TIOError.canRetry", TType::Bool, kind)?;
                can_retry = Some(r.bool()?);
            }
            _ => r.skip(kind)?,
        }
    }
    r.leave();
    Ok(ServerException::Io { message, can_retry })
}

/// `{ 1: optional string message }`, other fields skipped.
fn read_message_only(r: &mut Reader) -> Decoded<Option<String>> {
    let mut message = None;
    r.enter()?;
    while let Some((kind, id)) = r.field()? {
        match id {
            1 => {
                r.expect("the exception's message", TType::String, kind)?;
                message = Some(lossy(r.binary()?));
            }
            _ => r.skip(kind)?,
        }
    }
    r.leave();
    Ok(message)
}

/// A message for people: a Java string is UTF-8 on the wire, but a broken
/// one is still worth showing.
pub(super) fn lossy(b: Bytes) -> String {
    String::from_utf8_lossy(&b).into_owned()
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
    // A whole family includes its single columns, whatever the order; HBase
    // would let a later addColumn narrow it.
    let columns = crate::store::selected_columns(columns);
    // list<TColumn>, TColumn { 1: family, 2: optional qualifier, 3: optional timestamp }
    struct_list(e, id, &columns, |e, c| {
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

/// TGet { 1: row, 2: columns, 4: timeRange, 5: maxVersions, 6: filterString
/// or 15: filterBytes }
pub fn get(e: &mut Encoder, g: &Get) {
    e.binary_field(1, &g.row);
    if !g.columns.is_empty() {
        columns(e, 2, &g.columns);
    }
    if !g.time_range.is_all() {
        time_range(e, 4, g.time_range);
    }
    e.i32_field(5, i32::try_from(g.max_versions).unwrap_or(i32::MAX));
    super::filter::write_thrift2(e, g.filter.as_ref(), true, false);
    e.stop();
}

/// TScan { 1: startRow, 2: stopRow, 3: columns, 4: caching, 5: maxVersions,
/// 6: timeRange, 11: reversed, 7: filterString or 18: filterBytes }; the range as HBase reads it (a reversed
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
    // Caching: the rows the gateway's own scanner fetches from a region
    // server per call. Left out for a scan sized by bytes, so that the
    // gateway's client sizes those by bytes too (its maxResultSize).
    if let Some(rows) = s.batch_size {
        e.i32_field(4, i32::try_from(rows.max(1)).unwrap_or(i32::MAX));
    }
    e.i32_field(5, i32::try_from(s.max_versions).unwrap_or(i32::MAX));
    if !s.time_range.is_all() {
        time_range(e, 6, s.time_range);
    }
    if s.reversed {
        e.bool_field(11, true);
    }
    super::filter::write_thrift2(e, s.filter.as_ref(), false, s.reversed);
    e.stop();
}

/// TDeleteType values.
const DELETE_COLUMN: i32 = 0;
const DELETE_COLUMNS: i32 = 1;
const DELETE_FAMILY: i32 = 2;

/// `TCompareOp.EQUAL`.
#[cfg(test)]
pub const COMPARE_EQUAL: i32 = 2;

/// An operator as a `TCompareOp` (`LESS = 0` ... `NO_OP = 6`).
pub fn compare_op(op: crate::store::filter::CompareOp) -> i32 {
    use crate::store::filter::CompareOp;
    match op {
        CompareOp::Less => 0,
        CompareOp::LessOrEqual => 1,
        CompareOp::Equal => 2,
        CompareOp::NotEqual => 3,
        CompareOp::GreaterOrEqual => 4,
        CompareOp::Greater => 5,
        CompareOp::NoOp => 6,
    }
}

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
    let puts = mutations.iter().filter_map(|m| match m {
        Mutation::Put {
            family,
            qualifier,
            value,
            timestamp,
        } => Some((&family[..], &qualifier[..], &value[..], *timestamp)),
        _ => None,
    });
    tput_fields(e, row, count, puts);
}

/// `putMultiple`'s arguments { 1: table, 2: list<TPut> }: each row's puts
/// one TPut (the rows hold puts only).
pub fn put_multiple(e: &mut Encoder, table: &[u8], rows: &[crate::store::RowMutation]) {
    e.binary_field(1, table);
    struct_list(e, 2, rows, |e, r| put_fields(e, &r.row, &r.mutations));
}

/// `putMultiple`'s arguments for rows `rows` of a load batch: each row with
/// puts one TPut, as [`put_multiple`] writes the same rows.
pub fn put_multiple_loaded(e: &mut Encoder, table: &[u8], batch: &crate::store::LoadBatch, rows: Range<usize>) {
    let with_puts = || rows.clone().filter_map(|i| batch.get(i)).filter(|r| r.cell_count() > 0);
    e.binary_field(1, table);
    e.field(TType::List, 2);
    e.list(TType::Struct, with_puts().count());
    for row in with_puts() {
        load_row_fields(e, &row);
    }
}

/// The fields of a TPut of a [`LoadBatch`](crate::store::LoadBatch)'s row,
/// and its stop.
fn load_row_fields(e: &mut Encoder, row: &crate::store::LoadRow<'_>) {
    let puts = row
        .cells()
        .map(|c| (c.family(), c.qualifier(), c.value(), c.timestamp()));
    tput_fields(e, row.key(), row.cell_count(), puts);
}

/// The fields of a TPut { 1: row, 2: list<TColumnValue> } of `count` puts
/// (family, qualifier, value, timestamp), and its stop.
#[inline(always)]
fn tput_fields<'a>(
    e: &mut Encoder,
    row: &[u8],
    count: usize,
    puts: impl Iterator<Item = (&'a [u8], &'a [u8], &'a [u8], Option<i64>)>,
) {
    e.binary_field(1, row);
    e.field(TType::List, 2);
    e.list(TType::Struct, count);
    for (family, qualifier, value, timestamp) in puts {
        // TColumnValue { 1: family, 2: qualifier, 3: value, 4: timestamp }
        e.binary_field(1, family);
        e.binary_field(2, qualifier);
        e.binary_field(3, value);
        if let Some(ts) = timestamp {
            e.i64_field(4, ts);
        }
        e.stop();
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

/// TAppend { 1: row, 2: list<TColumnValue>, 6: returnResults }
pub fn append(e: &mut Encoder, row: &[u8], columns: &[(Bytes, Bytes, Bytes)]) {
    e.binary_field(1, row);
    e.field(TType::List, 2);
    e.list(TType::Struct, columns.len());
    for (f, q, value) in columns {
        // TColumnValue { 1: family, 2: qualifier, 3: value }
        e.binary_field(1, f);
        e.binary_field(2, q);
        e.binary_field(3, value);
        e.stop();
    }
    e.bool_field(6, true);
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

/// A TColumnFamilyDescriptor as a struct field `id`.
pub fn family_descriptor(e: &mut Encoder, id: i16, f: &FamilySchema) {
    e.field(TType::Struct, id);
    family_descriptor_fields(e, f);
}

/// TColumnFamilyDescriptor { 1: name, 4: blockSize, 5: bloomnFilterType,
/// 6: compressionType, 10: maxVersions, 11: minVersions, 13: timeToLive,
/// 14: blockCacheEnabled, 20: inMemory }: every option hmap models, sent
/// explicitly (an option left out takes the server's default).
fn family_descriptor_fields(e: &mut Encoder, f: &FamilySchema) {
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
}

/// TTableDescriptor { 1: tableName, 2: list<TColumnFamilyDescriptor> }, every
/// option sent explicitly (an option left out takes the server's default).
pub fn table_descriptor(e: &mut Encoder, id: i16, name: &str, schema: &TableSchema) {
    e.field(TType::Struct, id);
    table_name(e, 1, name);
    struct_list(e, 2, &schema.families, family_descriptor_fields);
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

/// Reads a struct: `field` gets each field's id, type and the reader; it
/// returns `false` for a field it does not know, which is skipped.
pub(super) fn read_struct(
    r: &mut Reader,
    mut field: impl FnMut(&mut Reader, i16, TType) -> Decoded<bool>,
) -> Decoded<()> {
    r.enter()?;
    while let Some((kind, id)) = r.field()? {
        if !field(r, id, kind)? {
            r.skip(kind)?;
        }
    }
    r.leave();
    Ok(())
}

/// A required field, or [`DecodeError::MissingField`].
pub(super) fn required<T>(value: Option<T>, what: &'static str, id: i16) -> Decoded<T> {
    value.ok_or(DecodeError::MissingField { what, id })
}

/// The fewest bytes of an element: in the binary protocol, and in the
/// compact one.
pub(super) type Least = (usize, usize);

/// A `list<struct>`, each element read by `each`. The declared count is
/// checked against the bytes left, each element taking at least `least`
/// bytes in the reader's protocol, before room for it is reserved.
pub(super) fn read_list<T>(
    r: &mut Reader,
    least: Least,
    mut each: impl FnMut(&mut Reader) -> Decoded<T>,
) -> Decoded<Vec<T>> {
    let at = r.pos();
    let (elem, len) = r.list(r.least(least.0, least.1))?;
    if len > 0 {
        r.expect("a list's element", TType::Struct, elem).map_err(|e| match e {
            DecodeError::WrongType {
                what, expected, got, ..
            } => DecodeError::WrongType {
                what,
                expected,
                got,
                at,
            },
            other => other,
        })?;
    }
    let mut items = Vec::with_capacity(len);
    r.enter()?;
    for _ in 0..len {
        items.push(each(r)?);
    }
    r.leave();
    Ok(items)
}

/// The fewest bytes of a TColumnValue: three required binary fields (a
/// 3-byte header and a 4-byte length each; compact: a byte each) and the
/// stop.
const MIN_COLUMN_VALUE: Least = (3 * 7 + 1, 3 * 2 + 1);
/// The fewest bytes of a TResult: its required list's field and list
/// headers, and the stop.
const MIN_RESULT: Least = (3 + 5 + 1, 1 + 1 + 1);
/// The fewest bytes of a struct with one required binary field.
pub(super) const MIN_ONE_BINARY: Least = (3 + 4 + 1, 1 + 1 + 1);

/// A TResult { 1: optional binary row, 2: required list<TColumnValue> };
/// `None` when it holds no cell (HBase's empty Result). Every binary is a
/// slice of the reply's buffer.
pub fn result(r: &mut Reader) -> Decoded<Option<RowResult>> {
    let mut row = Bytes::new();
    let mut cells = None;
    read_struct(r, |r, id, kind| {
        match id {
            1 => {
                r.expect("TResult.row", TType::String, kind)?;
                row = r.binary()?;
            }
            2 => {
                r.expect("TResult.columnValues", TType::List, kind)?;
                cells = Some(read_list(r, MIN_COLUMN_VALUE, column_value)?);
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    let cells = required(cells, "TResult", 2)?;
    Ok((!cells.is_empty()).then_some(RowResult { row, cells }))
}

/// A TColumnValue { 1: family, 2: qualifier, 3: value (all required),
/// 4: optional i64 timestamp }.
fn column_value(r: &mut Reader) -> Decoded<Cell> {
    let (mut family, mut qualifier, mut value, mut timestamp) = (None, None, None, 0);
    read_struct(r, |r, id, kind| {
        match id {
            1 => {
                r.expect("TColumnValue.family", TType::String, kind)?;
                family = Some(r.binary()?);
            }
            2 => {
                r.expect("TColumnValue.qualifier", TType::String, kind)?;
                qualifier = Some(r.binary()?);
            }
            3 => {
                r.expect("TColumnValue.value", TType::String, kind)?;
                value = Some(r.binary()?);
            }
            4 => {
                r.expect("TColumnValue.timestamp", TType::I64, kind)?;
                timestamp = r.i64()?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(Cell {
        family: required(family, "TColumnValue", 1)?,
        qualifier: required(qualifier, "TColumnValue", 2)?,
        timestamp,
        value: required(value, "TColumnValue", 3)?,
    })
}

/// A list of TResult, one per get (empty ones as `None`).
pub fn results(r: &mut Reader) -> Decoded<Vec<Option<RowResult>>> {
    read_list(r, MIN_RESULT, result)
}

/// The rows of a `list<TDelete>` (`{1: required binary row, ...}`): the
/// deletes `deleteMultiple` could not apply.
pub fn delete_rows(r: &mut Reader) -> Decoded<Vec<Bytes>> {
    read_list(r, MIN_ONE_BINARY, |r| {
        let mut row = None;
        read_struct(r, |r, id, kind| {
            if id != 1 {
                return Ok(false);
            }
            r.expect("TDelete.row", TType::String, kind)?;
            row = Some(r.binary()?);
            Ok(true)
        })?;
        required(row, "TDelete", 1)
    })
}

/// The start keys of a `list<THRegionLocation>` (`{1: required TServerName,
/// 2: required THRegionInfo {3: optional binary startKey}}`), in the
/// gateway's order; a region without a start key starts at the beginning.
pub fn region_starts(r: &mut Reader) -> Decoded<Vec<Bytes>> {
    read_list(r, (1, 1), |r| {
        let mut start = None;
        read_struct(r, |r, id, kind| {
            if id != 2 {
                return Ok(false);
            }
            r.expect("THRegionLocation.regionInfo", TType::Struct, kind)?;
            let mut key = Bytes::new();
            read_struct(r, |r, id, kind| {
                if id != 3 {
                    return Ok(false);
                }
                r.expect("THRegionInfo.startKey", TType::String, kind)?;
                key = r.binary()?;
                Ok(true)
            })?;
            start = Some(key);
            Ok(true)
        })?;
        required(start, "THRegionLocation", 2)
    })
}

/// A `list<TTableName>`, each as [`table_name_of`] gives it.
pub fn table_names(r: &mut Reader) -> Decoded<Vec<String>> {
    read_list(r, MIN_ONE_BINARY, table_name_of)
}

/// A TTableName { 1: optional binary ns, 2: required binary qualifier } as
/// `ns:table`, or `table` in the default namespace.
fn table_name_of(r: &mut Reader) -> Decoded<String> {
    let (mut ns, mut qualifier) = (None, None);
    read_struct(r, |r, id, kind| {
        match id {
            1 => {
                r.expect("TTableName.ns", TType::String, kind)?;
                ns = Some(r.string("TTableName.ns")?);
            }
            2 => {
                r.expect("TTableName.qualifier", TType::String, kind)?;
                qualifier = Some(r.string("TTableName.qualifier")?);
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    let qualifier = required(qualifier, "TTableName", 2)?;
    Ok(match ns {
        Some(ns) if !ns.is_empty() && ns != "default" => format!("{ns}:{qualifier}"),
        _ => qualifier,
    })
}

/// A TTableDescriptor { 1: required TTableName, 2: optional
/// list<TColumnFamilyDescriptor>, 3: optional map<binary, binary>
/// attributes }, families sorted by name.
pub fn table_descriptor_of(r: &mut Reader) -> Decoded<TableSchema> {
    let mut schema = TableSchema::new("");
    let mut named = false;
    read_struct(r, |r, id, kind| {
        match id {
            1 => {
                r.expect("TTableDescriptor.tableName", TType::Struct, kind)?;
                schema.name = table_name_of(r)?;
                named = true;
            }
            2 => {
                r.expect("TTableDescriptor.columns", TType::List, kind)?;
                schema.families = read_list(r, MIN_ONE_BINARY, family)?;
            }
            3 => {
                r.expect("TTableDescriptor.attributes", TType::Map, kind)?;
                schema.metadata = attributes(r)?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    required(named.then_some(()), "TTableDescriptor", 1)?;
    schema.families.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(schema)
}

/// TTableDescriptor's `3: optional map<binary, binary> attributes`, as
/// text (bytes that are not UTF-8 replaced).
fn attributes(r: &mut Reader) -> Decoded<BTreeMap<String, String>> {
    let at = r.pos();
    let (key, value, len) = r.map()?;
    let mut attributes = BTreeMap::new();
    if len == 0 {
        return Ok(attributes);
    }
    for (what, got) in [("an attribute's key", key), ("an attribute's value", value)] {
        if got != TType::String {
            return Err(DecodeError::WrongType {
                what,
                expected: TType::String,
                got,
                at,
            });
        }
    }
    for _ in 0..len {
        let k = String::from_utf8_lossy(&r.binary()?).into_owned();
        let v = String::from_utf8_lossy(&r.binary()?).into_owned();
        attributes.insert(k, v);
    }
    Ok(attributes)
}

/// A TColumnFamilyDescriptor: the options hmap's schema has.
fn family(r: &mut Reader) -> Decoded<FamilySchema> {
    let mut f = FamilySchema::new("");
    let mut named = false;
    let positive = |v: i32| u32::try_from(v).unwrap_or(0);
    read_struct(r, |r, id, kind| {
        let expected = match id {
            1 => TType::String,
            4 | 5 | 6 | 10 | 11 | 13 => TType::I32,
            14 | 20 => TType::Bool,
            _ => return Ok(false),
        };
        r.expect("a TColumnFamilyDescriptor field", expected, kind)?;
        match id {
            1 => {
                f.name = r.string("TColumnFamilyDescriptor.name")?;
                named = true;
            }
            4 => f.block_size = positive(r.i32()?),
            5 => {
                f.bloom = match r.i32()? {
                    0 => BloomType::None,
                    2 => BloomType::RowCol,
                    _ => BloomType::Row,
                }
            }
            6 => {
                f.compression = match r.i32()? {
                    0 => Compression::Lzo,
                    1 => Compression::Gz,
                    3 => Compression::Snappy,
                    4 => Compression::Lz4,
                    5 => Compression::Bzip2,
                    6 => Compression::Zstd,
                    _ => Compression::None,
                }
            }
            10 => f.versions = positive(r.i32()?),
            11 => f.min_versions = positive(r.i32()?),
            13 => f.ttl_secs = positive(r.i32()?),
            14 => f.block_cache = r.bool()?,
            _ => f.in_memory = r.bool()?,
        }
        Ok(true)
    })?;
    required(named.then_some(()), "TColumnFamilyDescriptor", 1)?;
    Ok(f)
}

#[cfg(test)]
mod tests {
    //! Golden messages written by HBase's own generated Thrift2 classes and
    //! libthrift (`golden/Golden.java`, run by `golden/generate.sh`): replies
    //! as the gateway writes them, calls as a Java client writes them.

    use super::*;
    use crate::store::thrift::codec::{self, ApplicationException, Protocol, Skim, Skimmed};
    use crate::store::{Column, Get, Mutation, Scan, TimeRange};

    /// Both protocols, whose golden messages libthrift wrote alike.
    const PROTOCOLS: [Protocol; 2] = [Protocol::Binary, Protocol::Compact];

    /// `golden(protocol, name)`: the golden message `name` in `protocol`.
    macro_rules! goldens {
        ($($name:literal,)*) => {
            fn golden(protocol: Protocol, name: &str) -> Bytes {
                match (protocol, name) {
                    $(
                        (Protocol::Binary, $name) => {
                            Bytes::from_static(include_bytes!(concat!("golden/", $name, ".bin")))
                        }
                        (Protocol::Compact, $name) => {
                            Bytes::from_static(include_bytes!(concat!("golden/compact/", $name, ".bin")))
                        }
                    )*
                    _ => panic!("no golden message {name} in {protocol:?}"),
                }
            }
        };
    }

    goldens!(
        "get_row",
        "get_empty",
        "get_io_error",
        "get_multiple",
        "check_and_mutate_true",
        "table_exists_false",
        "server_type",
        "open_scanner",
        "scanner_rows_illegal",
        "put_multiple",
        "table_descriptor",
        "region_locations",
        "delete_multiple_failed",
        "table_names",
        "increment",
        "application_exception",
        "call_get",
        "call_open_scanner",
        "call_put_multiple",
        "call_delete_multiple",
        "call_check_and_mutate_absent",
        "call_increment",
    );

    /// Every golden reply, with its method.
    fn replies(p: Protocol) -> Vec<(&'static str, Bytes)> {
        vec![
            ("get", golden(p, "get_row")),
            ("get", golden(p, "get_empty")),
            ("get", golden(p, "get_io_error")),
            ("getMultiple", golden(p, "get_multiple")),
            ("checkAndMutate", golden(p, "check_and_mutate_true")),
            ("tableExists", golden(p, "table_exists_false")),
            ("getThriftServerType", golden(p, "server_type")),
            ("openScanner", golden(p, "open_scanner")),
            ("getScannerRows", golden(p, "scanner_rows_illegal")),
            ("putMultiple", golden(p, "put_multiple")),
            ("getTableDescriptor", golden(p, "table_descriptor")),
            ("getAllRegionLocations", golden(p, "region_locations")),
            ("deleteMultiple", golden(p, "delete_multiple_failed")),
            ("getTableNamesByPattern", golden(p, "table_names")),
            ("increment", golden(p, "increment")),
            ("get", golden(p, "application_exception")),
        ]
    }

    /// The reply's result struct, for `method` #1.
    fn open(p: Protocol, method: &'static str, message: Bytes) -> Reader {
        codec::open_reply(p, message, method, 1)
            .expect("a valid reply")
            .expect("not an exception")
    }

    fn cell(family: &str, qualifier: &str, value: &[u8], timestamp: i64) -> Cell {
        Cell {
            family: Bytes::copy_from_slice(family.as_bytes()),
            qualifier: Bytes::copy_from_slice(qualifier.as_bytes()),
            timestamp,
            value: Bytes::copy_from_slice(value),
        }
    }

    #[test]
    fn skim_measures_every_golden_reply_whole_and_bytewise() {
        for p in PROTOCOLS {
            for (method, message) in replies(p) {
                assert_eq!(
                    Skim::of(p).advance(&message),
                    Ok(Skimmed::Done(message.len())),
                    "{method}"
                );
                let mut skim = Skim::of(p);
                for end in 0..message.len() {
                    assert!(
                        matches!(skim.advance(&message[..end]), Ok(Skimmed::NeedMore(_))),
                        "{method}: {end} of {} bytes",
                        message.len()
                    );
                }
                assert_eq!(skim.advance(&message), Ok(Skimmed::Done(message.len())), "{method}");
            }
        }
    }

    #[test]
    fn every_truncated_golden_reply_is_an_error_not_a_panic() {
        for p in PROTOCOLS {
            for (method, message) in replies(p) {
                for end in 0..message.len() {
                    let cut = message.slice(..end);
                    let decoded = codec::open_reply(p, cut, method, 1).and_then(|opened| match opened {
                        Ok(r) => match method {
                            "get" | "increment" => reply(r, TType::Struct, result).map(drop),
                            "getMultiple" | "getScannerRows" => reply(r, TType::List, results).map(drop),
                            _ => void(r).map(drop),
                        },
                        Err(_) => Ok(()),
                    });
                    assert!(decoded.is_err(), "{method} cut at {end} decoded");
                }
            }
        }
    }

    #[test]
    fn get_reply_slices_cells_and_skips_unknown_fields() {
        for p in PROTOCOLS {
            let message = golden(p, "get_row");
            let row = reply(open(p, "get", message.clone()), TType::Struct, result)
                .unwrap()
                .unwrap()
                .expect("a row");
            assert_eq!(row.row, "row1");
            assert_eq!(row.cells, vec![cell("cf", "a", b"1", 100), cell("cf", "b", b"", 200)]);
            let inside = message.as_ptr_range();
            assert!(inside.contains(&row.cells[0].family.as_ptr()), "copied, not sliced");
            assert!(inside.contains(&row.row.as_ptr()), "copied, not sliced");
        }
    }

    #[test]
    fn an_empty_result_is_no_row() {
        for p in PROTOCOLS {
            let row = reply(open(p, "get", golden(p, "get_empty")), TType::Struct, result).unwrap();
            assert_eq!(row, Ok(None));
        }
    }

    #[test]
    fn declared_exceptions_are_read_from_their_fields() {
        for p in PROTOCOLS {
            assert_eq!(
                reply(open(p, "get", golden(p, "get_io_error")), TType::Struct, result).unwrap(),
                Err(ServerException::Io {
                    message: Some("org.apache.hadoop.hbase.TableNotFoundException: t\n\tat Somewhere.java:1".into()),
                    can_retry: Some(false),
                })
            );
            assert_eq!(
                reply(
                    open(p, "getScannerRows", golden(p, "scanner_rows_illegal")),
                    TType::List,
                    results
                )
                .unwrap(),
                Err(ServerException::IllegalArgument {
                    message: Some("Invalid scanner Id".into()),
                })
            );
            assert_eq!(
                codec::open_reply(p, golden(p, "application_exception"), "get", 1)
                    .unwrap()
                    .unwrap_err(),
                ApplicationException {
                    message: "Invalid method name: 'get'".into(),
                    kind: 1,
                }
            );
        }
    }

    #[test]
    fn scalar_results() {
        for p in PROTOCOLS {
            assert_eq!(
                reply(
                    open(p, "checkAndMutate", golden(p, "check_and_mutate_true")),
                    TType::Bool,
                    Reader::bool
                ),
                Ok(Ok(true))
            );
            assert_eq!(
                reply(
                    open(p, "tableExists", golden(p, "table_exists_false")),
                    TType::Bool,
                    Reader::bool
                ),
                Ok(Ok(false))
            );
            assert_eq!(
                reply(
                    open(p, "getThriftServerType", golden(p, "server_type")),
                    TType::I32,
                    Reader::i32
                ),
                Ok(Ok(2))
            );
            assert_eq!(
                reply(
                    open(p, "openScanner", golden(p, "open_scanner")),
                    TType::I32,
                    Reader::i32
                ),
                Ok(Ok(42))
            );
            assert_eq!(void(open(p, "putMultiple", golden(p, "put_multiple"))), Ok(Ok(())));
        }
    }

    #[test]
    fn get_multiple_keeps_missing_rows_in_place() {
        for p in PROTOCOLS {
            let rows = reply(open(p, "getMultiple", golden(p, "get_multiple")), TType::List, results)
                .unwrap()
                .unwrap();
            assert_eq!(
                rows,
                vec![
                    Some(RowResult {
                        row: Bytes::from_static(b"r1"),
                        cells: vec![cell("f", "q", b"v1", 5)],
                    }),
                    None
                ]
            );
        }
    }

    #[test]
    fn table_descriptor_reads_every_option_hmap_has() {
        for p in PROTOCOLS {
            let schema = reply(
                open(p, "getTableDescriptor", golden(p, "table_descriptor")),
                TType::Struct,
                table_descriptor_of,
            )
            .unwrap()
            .unwrap();
            assert_eq!(schema.name, "user");
            let names: Vec<_> = schema.families.iter().map(|f| f.name.as_str()).collect();
            assert_eq!(names, ["a", "cf"]);
            let cf = &schema.families[1];
            assert_eq!(cf.block_size, 32768);
            assert_eq!(cf.bloom, BloomType::RowCol);
            assert_eq!(cf.compression, Compression::Snappy);
            assert_eq!((cf.versions, cf.min_versions, cf.ttl_secs), (3, 1, 86400));
            assert!(!cf.block_cache);
            assert!(cf.in_memory);
            assert_eq!(schema.families[0].versions, 1);
            // TTableDescriptor.attributes, as HBase's own classes wrote them.
            assert_eq!(schema.metadata.len(), 1);
            assert_eq!(schema.metadata.get("OWNER").map(String::as_str), Some("me"));
        }
    }

    #[test]
    fn region_starts_table_names_and_failed_deletes() {
        for p in PROTOCOLS {
            assert_eq!(
                reply(
                    open(p, "getAllRegionLocations", golden(p, "region_locations")),
                    TType::List,
                    region_starts
                ),
                Ok(Ok(vec![Bytes::new(), Bytes::from_static(b"m")]))
            );
            assert_eq!(
                reply(
                    open(p, "getTableNamesByPattern", golden(p, "table_names")),
                    TType::List,
                    table_names
                ),
                Ok(Ok(vec!["a".to_string(), "app:b".into(), "c".into()]))
            );
            assert_eq!(
                reply(
                    open(p, "deleteMultiple", golden(p, "delete_multiple_failed")),
                    TType::List,
                    delete_rows
                ),
                Ok(Ok(vec![Bytes::from_static(b"r9")]))
            );
        }
    }

    #[test]
    fn increment_reply_cells_in_column_order() {
        for p in PROTOCOLS {
            let row = reply(open(p, "increment", golden(p, "increment")), TType::Struct, result)
                .unwrap()
                .unwrap()
                .expect("a row");
            assert_eq!(
                row.cells,
                vec![
                    cell("c", "x", &7i64.to_be_bytes(), 9),
                    cell("c", "y", &(-2i64).to_be_bytes(), 9)
                ]
            );
        }
    }

    /// A reply to `method` whose result field 0 is `kind` with `value`'s bytes.
    fn result_of(method: &str, kind: TType, value: &[u8]) -> Bytes {
        let mut e = Encoder::default();
        e.message(method, codec::REPLY, 1);
        e.field(kind, 0);
        e.buf.extend_from_slice(value);
        e.stop();
        Bytes::from(e.buf)
    }

    /// A result of another wire type than the IDL declares is an error, never
    /// read as `false`, `0` or empty.
    #[test]
    fn a_result_of_the_wrong_type_is_an_error() {
        let p = Protocol::Binary;
        let wrong = [
            (TType::I32, &[0, 0, 0, 1][..]),
            (TType::Byte, &[1]),
            (TType::String, &[0, 0, 0, 0]),
            (TType::Struct, &[0]),
            (TType::List, &[TType::Bool as u8, 0, 0, 0, 0]),
        ];
        for (kind, bytes) in wrong {
            let message = result_of("checkAndMutate", kind, bytes);
            let got = reply(open(p, "checkAndMutate", message), TType::Bool, Reader::bool);
            assert!(
                matches!(got, Err(DecodeError::WrongType { .. })),
                "{kind:?} as bool: {got:?}"
            );
        }
        for (kind, bytes) in [
            (TType::Bool, &[1][..]),
            (TType::I64, &[0; 8]),
            (TType::List, &[12, 0, 0, 0, 0]),
        ] {
            let got = reply(open(p, "get", result_of("get", kind, bytes)), TType::Struct, result);
            assert!(
                matches!(got, Err(DecodeError::WrongType { .. })),
                "{kind:?} as TResult: {got:?}"
            );
            let got = reply(
                open(p, "openScanner", result_of("openScanner", kind, bytes)),
                TType::I32,
                Reader::i32,
            );
            assert!(
                matches!(got, Err(DecodeError::WrongType { .. })),
                "{kind:?} as i32: {got:?}"
            );
        }
        // A cell's value as an i32, a row as a list: wrong inside a struct too.
        let mut e = Encoder::default();
        e.message("get", codec::REPLY, 1);
        e.field(TType::Struct, 0);
        e.field(TType::List, 1);
        e.list(TType::Bool, 0);
        e.stop();
        e.stop();
        let got = reply(open(p, "get", Bytes::from(e.buf)), TType::Struct, result);
        assert!(matches!(got, Err(DecodeError::WrongType { .. })), "{got:?}");
        // An exception field that is not a struct.
        let got = reply(
            open(p, "get", result_of("get", TType::String, &[0, 0, 0, 0]).clone()),
            TType::Struct,
            result,
        );
        assert!(got.is_err());
    }

    #[test]
    fn no_result_and_no_exception_is_an_error() {
        let p = Protocol::Binary;
        let mut e = Encoder::default();
        e.message("checkAndMutate", codec::REPLY, 1);
        e.stop();
        assert_eq!(
            reply(open(p, "checkAndMutate", Bytes::from(e.buf)), TType::Bool, Reader::bool),
            Err(DecodeError::MissingResult)
        );
    }

    /// 4 MB of empty cells (one STOP byte each) made the client hold 412 MB:
    /// a TColumnValue without its required fields is refused, and the count
    /// is checked against 22 bytes a cell before anything is reserved.
    #[test]
    fn cells_without_their_required_fields_are_refused() {
        let p = Protocol::Binary;
        let mut e = Encoder::default();
        e.message("get", codec::REPLY, 1);
        e.field(TType::Struct, 0);
        e.field(TType::List, 2);
        e.list(TType::Struct, 4_000_000);
        e.buf.resize(e.buf.len() + 4_000_000, 0);
        e.stop();
        e.stop();
        let got = reply(open(p, "get", Bytes::from(e.buf)), TType::Struct, result);
        assert!(matches!(got, Err(DecodeError::TooLong { .. })), "{got:?}");

        let mut e = Encoder::default();
        e.message("get", codec::REPLY, 1);
        e.field(TType::Struct, 0);
        e.field(TType::List, 2);
        e.list(TType::Struct, 1);
        e.binary_field(1, b"f");
        e.binary_field(2, b"q");
        e.buf.extend_from_slice(&[0; 8]);
        e.stop();
        e.stop();
        e.stop();
        let got = reply(open(p, "get", Bytes::from(e.buf)), TType::Struct, result);
        assert_eq!(
            got,
            Err(DecodeError::MissingField {
                what: "TColumnValue",
                id: 3
            })
        );
    }

    /// The calls hmap writes, byte for byte as HBase's generated Java
    /// client writes them.
    #[test]
    fn calls_match_the_generated_java_client() {
        for p in PROTOCOLS {
            let get = Get {
                columns: vec![Column::Qualifier("f".into(), "q".into()), Column::Family("g".into())],
                time_range: TimeRange { min: 10, max: 20 },
                max_versions: 3,
                ..Get::new("r")
            };
            let bytes = codec::call(p, "get", 1, |e| {
                e.binary_field(1, b"t");
                e.field(TType::Struct, 2);
                super::get(e, &get);
            });
            assert_eq!(bytes, golden(p, "call_get"));

            let scan = Scan {
                columns: vec![Column::Family("f".into())],
                batch_size: Some(100),
                max_versions: 2,
                time_range: TimeRange { min: 0, max: 5 },
                reversed: true,
                ..Scan::all()
            };
            let bytes = codec::call(p, "openScanner", 1, |e| {
                e.binary_field(1, b"t");
                e.field(TType::Struct, 2);
                super::scan(e, &scan, b"a", b"z");
            });
            assert_eq!(bytes, golden(p, "call_open_scanner"));

            let puts = [
                Mutation::Put {
                    family: "f".into(),
                    qualifier: "q".into(),
                    value: "v".into(),
                    timestamp: Some(5),
                },
                Mutation::Put {
                    family: "f".into(),
                    qualifier: "p".into(),
                    value: "w".into(),
                    timestamp: None,
                },
            ];
            let rows = [crate::store::RowMutation::with("r", puts.to_vec())];
            let bytes = codec::call(p, "putMultiple", 1, |e| put_multiple(e, b"t", &rows));
            assert_eq!(bytes, golden(p, "call_put_multiple"));
            // The same rows from a load batch (with a row of no puts, left out).
            let mut batch = crate::store::LoadBatch::new();
            batch.row("empty");
            batch.row("r").put_at("f", "q", 5, "v").put("f", "p", "w");
            let bytes = codec::call(p, "putMultiple", 1, |e| put_multiple_loaded(e, b"t", &batch, 0..2));
            assert_eq!(bytes, golden(p, "call_put_multiple"));

            let delete = Mutation::DeleteCell {
                family: "f".into(),
                qualifier: "q".into(),
                timestamp: Some(5),
            };
            let bytes = codec::call(p, "deleteMultiple", 1, |e| {
                e.binary_field(1, b"t");
                struct_list(e, 2, &[()], |e, _| {
                    delete_fields(e, b"r", &DeleteSpec::of(&delete).expect("a delete"));
                });
            });
            assert_eq!(bytes, golden(p, "call_delete_multiple"));

            let mutations = [
                puts[0].clone(),
                Mutation::DeleteColumn {
                    family: "f".into(),
                    qualifier: "o".into(),
                    up_to: None,
                },
            ];
            let bytes = codec::call(p, "checkAndMutate", 1, |e| {
                e.binary_field(1, b"t");
                e.binary_field(2, b"r");
                e.binary_field(3, b"f");
                e.binary_field(4, b"ver");
                e.i32_field(5, COMPARE_EQUAL);
                e.binary_field(6, b"");
                row_mutations(e, 7, b"r", &mutations);
            });
            assert_eq!(bytes, golden(p, "call_check_and_mutate_absent"));

            let bytes = codec::call(p, "increment", 1, |e| {
                e.binary_field(1, b"t");
                e.field(TType::Struct, 2);
                increment(e, b"r", &[("c".into(), "y".into(), -3), ("c".into(), "x".into(), 7)]);
            });
            assert_eq!(bytes, golden(p, "call_increment"));
        }
    }
}

#[cfg(test)]
mod load_batch {
    //! A load batch's `putMultiple` is byte for byte the one `mutate` sends
    //! for the same rows.

    use super::*;
    use crate::store::thrift::codec::{self, Protocol};
    use crate::store::{LoadBatch, RowMutation};

    /// A small deterministic generator (xorshift), so that a failure
    /// repeats.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }

        fn bytes(&mut self, longest: u64) -> Vec<u8> {
            (0..self.below(longest + 1)).map(|_| self.below(256) as u8).collect()
        }
    }

    #[test]
    fn loaded_rows_encode_as_row_mutations_do() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..200 {
            let mut batch = LoadBatch::new();
            let mut rows = Vec::new();
            for _ in 0..rng.below(20) {
                let key = rng.bytes(12);
                let mut writer = batch.row(&key);
                let mut row = RowMutation::new(key.clone());
                // Some rows have no puts: the batch leaves them out, as
                // `mutate` leaves out a row with nothing to do.
                for _ in 0..rng.below(6) {
                    let (family, qualifier, value) = (rng.bytes(3), rng.bytes(8), rng.bytes(300));
                    if rng.below(2) == 0 {
                        let ts = rng.below(1 << 45) as i64;
                        writer = writer.put_at(&family, &qualifier, ts, &value);
                        row = row.put_at(family, qualifier, ts, value);
                    } else {
                        writer = writer.put(&family, &qualifier, &value);
                        row = row.put(family, qualifier, value);
                    }
                }
                if !row.mutations.is_empty() {
                    rows.push(row);
                }
            }
            for p in [Protocol::Binary, Protocol::Compact] {
                let expected = codec::call(p, "putMultiple", 7, |e| put_multiple(e, b"ns:t", &rows));
                let loaded = codec::call(p, "putMultiple", 7, |e| {
                    put_multiple_loaded(e, b"ns:t", &batch, 0..batch.len());
                });
                assert_eq!(loaded, expected, "round {round}, {p:?}");
            }
        }
    }
}

#[cfg(test)]
mod mutation {
    //! A bounded mutation loop over the golden replies, so that `cargo test`
    //! exercises the decoder on broken input even where cargo-fuzz does not
    //! run (it needs nightly; see `fuzz/`).

    use crate::store::thrift::fuzz_reply;

    /// Binary messages, then compact ones (from [`COMPACT`] on), then
    /// Thrift1's (binary, from [`THRIFT1`] on).
    const GOLDEN: [&[u8]; 24] = [
        include_bytes!("golden/get_row.bin"),
        include_bytes!("golden/get_multiple.bin"),
        include_bytes!("golden/table_descriptor.bin"),
        include_bytes!("golden/region_locations.bin"),
        include_bytes!("golden/table_names.bin"),
        include_bytes!("golden/delete_multiple_failed.bin"),
        include_bytes!("golden/get_io_error.bin"),
        include_bytes!("golden/application_exception.bin"),
        include_bytes!("golden/compact/get_row.bin"),
        include_bytes!("golden/compact/get_multiple.bin"),
        include_bytes!("golden/compact/table_descriptor.bin"),
        include_bytes!("golden/compact/region_locations.bin"),
        include_bytes!("golden/compact/table_names.bin"),
        include_bytes!("golden/compact/delete_multiple_failed.bin"),
        include_bytes!("golden/compact/get_io_error.bin"),
        include_bytes!("golden/compact/application_exception.bin"),
        include_bytes!("golden/thrift1/get_row.bin"),
        include_bytes!("golden/thrift1/scanner_rows.bin"),
        include_bytes!("golden/thrift1/get_versions.bin"),
        include_bytes!("golden/thrift1/column_descriptors.bin"),
        include_bytes!("golden/thrift1/table_regions.bin"),
        include_bytes!("golden/thrift1/increment.bin"),
        include_bytes!("golden/thrift1/create_table_exists.bin"),
        include_bytes!("golden/thrift1/scanner_closed.bin"),
    ];
    const COMPACT: usize = 8;
    const THRIFT1: usize = 16;

    /// xorshift64*: deterministic, so a failure repeats.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    #[test]
    fn mutated_golden_replies_never_panic() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..40_000 {
            let which = rng.below(GOLDEN.len());
            let golden = GOLDEN[which];
            // The first byte's high bit picks the protocol (compact when set).
            let protocol_bit = if (COMPACT..THRIFT1).contains(&which) { 0x80 } else { 0 };
            // The low bits pick the reader (see `fuzz_reply`): Thrift1's
            // replies mostly go to Thrift1's readers (9 to 15).
            let reader = match which >= THRIFT1 && rng.below(4) > 0 {
                true => 9 + rng.below(7) as u8,
                false => rng.next() as u8 & 0x7f,
            };
            let mut data = vec![reader | protocol_bit];
            data.extend_from_slice(golden);
            for _ in 0..=rng.below(4) {
                let at = 1 + rng.below(data.len() - 1);
                match rng.below(5) {
                    0 => data[at] ^= 1 << rng.below(8),
                    1 => data[at] = [0, 0x7f, 0x80, 0xff, 12, 13, 15][rng.below(7)],
                    2 => data.truncate(at),
                    3 => data.insert(at, rng.next() as u8),
                    _ => {
                        // A length or count made huge or negative.
                        let end = (at + 4).min(data.len());
                        data[at..end].fill(if rng.below(2) == 0 { 0x7f } else { 0xff });
                    }
                }
                if data.len() < 2 {
                    break;
                }
            }
            fuzz_reply(&data);
        }
    }
}
