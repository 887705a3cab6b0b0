//! How much memory a reply may take decoded, checked before it is decoded.
//!
//! prost turns each element of a repeated message field into a whole Rust
//! struct: an empty `RegionLocation` is 2 bytes on the wire and 208 bytes
//! decoded, so an 8 MB reply of them took 826 MB. Before a reply's message
//! is decoded, [`decode`] walks its wire format once (lengths and tags, no
//! allocation) with the message's [`Shape`]: which fields are nested
//! messages, strings or repeated scalars, and how large each becomes. The
//! walk adds up the heap a decode would allocate (each `Vec` at the
//! capacity its pushes grow it to, each `String` its bytes; a `Bytes` field
//! is a slice of the reply and costs nothing), and counts the elements of
//! each repeated field. A reply is refused undecoded, with
//! [`NativeError::InvalidReply`], when
//! - it would take more than [`FACTOR`] times its own bytes plus
//!   [`ALLOWANCE`] decoded (the allowance covers the replies whose
//!   elements are legitimately small and whose count the call bounds: a
//!   `Multi` answers at most the 250 actions it was sent, 104 bytes each
//!   decoded for 6 on the wire), or
//! - a repeated field has more elements than any call of hmap's can be
//!   answered with (a `hbase:meta` location per replica of `hbase:meta`,
//!   not thousands), or
//! - the walk finds the bytes are not a protobuf message (a length past
//!   the end, a group, an unknown wire type).
//!
//! Cells come in the cell block, not in the message (hmap asks for the
//! KeyValue codec and HBase's `RSRpcServices` then puts every cell there):
//! a reply's cell block is decoded only for the messages that carry cells
//! ([`Reply::CELLS`]), into a vector sized once to its count (144 bytes a
//! cell, for at least 24 on the wire). A cell block attached to any other
//! reply (an admin reply) is refused undecoded.

use bytes::Bytes;
use prost::Message;

use super::error::NativeError;
use super::proto;

/// A reply may take at most this many times its bytes decoded (plus
/// [`ALLOWANCE`]).
pub const FACTOR: usize = 10;

/// Decoded bytes every reply may take beyond [`FACTOR`] times its own:
/// 256 KiB.
pub const ALLOWANCE: usize = 256 << 10;

/// What a field becomes when prost decodes it (only the fields that
/// allocate, or hold fields that do, are listed; the others are skipped as
/// prost skips unknown fields).
#[derive(Debug)]
pub enum Kind {
    /// A nested message: inline in its parent when singular, an element
    /// of a `Vec` when repeated.
    Message(&'static Shape),
    /// A `String`: its bytes are copied.
    Text,
    /// A scalar of this many bytes in memory (listed when repeated; on the
    /// wire one element a field, or packed, at least one byte each).
    Scalar(usize),
}

/// One field of a [`Shape`].
#[derive(Debug)]
pub struct Field {
    /// The field's name, as the `.proto` file has it (for errors).
    pub name: &'static str,
    /// Its number.
    pub tag: u32,
    /// A repeated field (a `Vec`).
    pub repeated: bool,
    /// What it decodes to.
    pub kind: Kind,
    /// The most elements of a repeated field any call can be answered with.
    pub most: usize,
}

/// What a message becomes when prost decodes it: its size inline and the
/// fields that allocate.
#[derive(Debug)]
pub struct Shape {
    /// The message's name (for errors).
    pub name: &'static str,
    /// `size_of` the Rust struct.
    pub size: usize,
    /// Its fields that allocate (at most eight).
    pub fields: &'static [Field],
}

/// A reply message of HBase's RPC protocol, with its shape.
pub trait Reply: Message + Default {
    /// The message's shape, for the walk before it is decoded.
    const SHAPE: &'static Shape;
    /// Whether the reply can come with cells in a cell block.
    const CELLS: bool;
}

const fn message(name: &'static str, tag: u32, shape: &'static Shape) -> Field {
    Field {
        name,
        tag,
        repeated: false,
        kind: Kind::Message(shape),
        most: 1,
    }
}

const fn messages(name: &'static str, tag: u32, shape: &'static Shape, most: usize) -> Field {
    Field {
        name,
        tag,
        repeated: true,
        kind: Kind::Message(shape),
        most,
    }
}

const fn text(name: &'static str, tag: u32) -> Field {
    Field {
        name,
        tag,
        repeated: false,
        kind: Kind::Text,
        most: 1,
    }
}

const fn scalars(name: &'static str, tag: u32, size: usize) -> Field {
    Field {
        name,
        tag,
        repeated: true,
        kind: Kind::Scalar(size),
        most: usize::MAX,
    }
}

macro_rules! shape {
    ($static:ident, $ty:ty, [$($field:expr),* $(,)?]) => {
        static $static: Shape = Shape {
            name: stringify!($ty),
            size: std::mem::size_of::<$ty>(),
            fields: &[$($field),*],
        };
    };
}

macro_rules! reply {
    ($ty:ty, $shape:ident, cells: $cells:literal) => {
        impl Reply for $ty {
            const SHAPE: &'static Shape = &$shape;
            const CELLS: bool = $cells;
        }
    };
}

const ANY: usize = usize::MAX;

/// The most `hbase:meta` locations a registry answers: one per replica
/// of `hbase:meta` (`hbase.meta.replica.count`, a handful at most).
pub const MOST_META_LOCATIONS: usize = 256;

// Messages without a field that allocates.
shape!(CELL, proto::Cell, []);
shape!(TABLE_NAME, proto::TableName, []);
shape!(BYTES_BYTES_PAIR, proto::BytesBytesPair, []);
// Client.proto.
shape!(RESULT, proto::Result, [messages("cell", 1, &CELL, ANY)]);
shape!(NAME_BYTES_PAIR, proto::NameBytesPair, [text("name", 1)]);
shape!(GET_RESPONSE, proto::GetResponse, [message("result", 1, &RESULT)]);
shape!(MUTATE_RESPONSE, proto::MutateResponse, [message("result", 1, &RESULT)]);
shape!(
    SCAN_RESPONSE,
    proto::ScanResponse,
    [
        scalars("cells_per_result", 1, 4),
        messages("results", 5, &RESULT, ANY),
        scalars("partial_flag_per_result", 7, 1),
    ]
);
shape!(
    RESULT_OR_EXCEPTION,
    proto::ResultOrException,
    [message("result", 2, &RESULT), message("exception", 3, &NAME_BYTES_PAIR)]
);
shape!(
    REGION_ACTION_RESULT,
    proto::RegionActionResult,
    [
        messages("resultOrException", 1, &RESULT_OR_EXCEPTION, ANY),
        message("exception", 2, &NAME_BYTES_PAIR),
    ]
);
shape!(
    MULTI_RESPONSE,
    proto::MultiResponse,
    [messages("regionActionResult", 1, &REGION_ACTION_RESULT, ANY)]
);
// Registry.proto.
shape!(SERVER_NAME, proto::ServerName, [text("host_name", 1)]);
shape!(
    REGION_LOCATION,
    proto::RegionLocation,
    [message("server_name", 2, &SERVER_NAME)]
);
shape!(
    GET_CLUSTER_ID_RESPONSE,
    proto::GetClusterIdResponse,
    [text("cluster_id", 1)]
);
shape!(
    GET_ACTIVE_MASTER_RESPONSE,
    proto::GetActiveMasterResponse,
    [message("server_name", 1, &SERVER_NAME)]
);
shape!(
    GET_META_REGION_LOCATIONS_RESPONSE,
    proto::GetMetaRegionLocationsResponse,
    [messages("meta_locations", 1, &REGION_LOCATION, MOST_META_LOCATIONS)]
);
shape!(
    GET_BOOTSTRAP_NODES_RESPONSE,
    proto::GetBootstrapNodesResponse,
    [messages("server_name", 1, &SERVER_NAME, ANY)]
);
// HBase.proto and Master.proto.
shape!(
    NAME_STRING_PAIR,
    proto::NameStringPair,
    [text("name", 1), text("value", 2)]
);
shape!(
    COLUMN_FAMILY_SCHEMA,
    proto::ColumnFamilySchema,
    [
        messages("attributes", 2, &BYTES_BYTES_PAIR, ANY),
        messages("configuration", 3, &NAME_STRING_PAIR, ANY),
    ]
);
shape!(
    TABLE_SCHEMA,
    proto::TableSchema,
    [
        messages("attributes", 2, &BYTES_BYTES_PAIR, ANY),
        messages("column_families", 3, &COLUMN_FAMILY_SCHEMA, ANY),
        messages("configuration", 4, &NAME_STRING_PAIR, ANY),
    ]
);
shape!(
    GET_TABLE_DESCRIPTORS_RESPONSE,
    proto::GetTableDescriptorsResponse,
    [messages("table_schema", 1, &TABLE_SCHEMA, ANY)]
);
shape!(
    GET_TABLE_NAMES_RESPONSE,
    proto::GetTableNamesResponse,
    [messages("table_names", 1, &TABLE_NAME, ANY)]
);
shape!(
    GENERIC_EXCEPTION_MESSAGE,
    proto::GenericExceptionMessage,
    [text("class_name", 1), text("message", 2)]
);
shape!(
    FOREIGN_EXCEPTION_MESSAGE,
    proto::ForeignExceptionMessage,
    [
        text("source", 1),
        message("generic_exception", 2, &GENERIC_EXCEPTION_MESSAGE)
    ]
);
shape!(
    GET_PROCEDURE_RESULT_RESPONSE,
    proto::GetProcedureResultResponse,
    [message("exception", 5, &FOREIGN_EXCEPTION_MESSAGE)]
);
shape!(PROC_ID, proto::CreateTableResponse, []);
shape!(NOTHING, proto::MoveRegionResponse, []);

reply!(proto::GetResponse, GET_RESPONSE, cells: true);
reply!(proto::MutateResponse, MUTATE_RESPONSE, cells: true);
reply!(proto::ScanResponse, SCAN_RESPONSE, cells: true);
reply!(proto::MultiResponse, MULTI_RESPONSE, cells: true);
reply!(proto::GetClusterIdResponse, GET_CLUSTER_ID_RESPONSE, cells: false);
reply!(proto::GetActiveMasterResponse, GET_ACTIVE_MASTER_RESPONSE, cells: false);
reply!(proto::GetMetaRegionLocationsResponse, GET_META_REGION_LOCATIONS_RESPONSE, cells: false);
reply!(proto::GetBootstrapNodesResponse, GET_BOOTSTRAP_NODES_RESPONSE, cells: false);
reply!(proto::GetTableDescriptorsResponse, GET_TABLE_DESCRIPTORS_RESPONSE, cells: false);
reply!(proto::GetTableNamesResponse, GET_TABLE_NAMES_RESPONSE, cells: false);
reply!(proto::GetProcedureResultResponse, GET_PROCEDURE_RESULT_RESPONSE, cells: false);
// The replies that hold a procedure id, or nothing: no field allocates
// (their shapes differ only in name).
reply!(proto::CreateTableResponse, PROC_ID, cells: false);
reply!(proto::DeleteTableResponse, PROC_ID, cells: false);
reply!(proto::DisableTableResponse, PROC_ID, cells: false);
reply!(proto::TruncateTableResponse, PROC_ID, cells: false);
reply!(proto::AddColumnResponse, PROC_ID, cells: false);
reply!(proto::ModifyColumnResponse, PROC_ID, cells: false);
reply!(proto::DeleteColumnResponse, PROC_ID, cells: false);
reply!(proto::SplitTableRegionResponse, PROC_ID, cells: false);
reply!(proto::MoveRegionResponse, NOTHING, cells: false);

/// The capacity a `Vec` of `size`-byte elements reaches after `count`
/// pushes one at a time (prost's decode): it doubles, from 4 (8 for
/// one-byte elements).
fn capacity(count: usize, size: usize) -> usize {
    if count == 0 {
        return 0;
    }
    let least = if size == 1 { 8 } else { 4 };
    count.max(least).checked_next_power_of_two().unwrap_or(usize::MAX)
}

fn bad(shape: &Shape, reason: impl std::fmt::Display) -> NativeError {
    NativeError::InvalidReply {
        reason: format!("the {} does not parse: {reason}", shape.name),
    }
}

fn varint(buf: &mut &[u8], shape: &Shape, what: &str) -> Result<u64, NativeError> {
    prost::encoding::decode_varint(buf).map_err(|e| bad(shape, format_args!("{what}: {e}")))
}

/// The heap bytes prost allocates decoding `buf` as `shape`, at most;
/// refuses a repeated field with more elements than its `most`.
pub fn heap_size(mut buf: &[u8], shape: &Shape) -> Result<usize, NativeError> {
    // The elements of each repeated field.
    let mut counts = [0usize; 8];
    let mut heap = 0usize;
    while !buf.is_empty() {
        let key = varint(&mut buf, shape, "a field key")?;
        let (tag, wire) = (key >> 3, key & 7);
        let field = shape.fields.iter().position(|f| u64::from(f.tag) == tag);
        let mut count = |n: usize| {
            if let Some(i) = field {
                counts[i] = counts[i].saturating_add(n);
            }
        };
        match wire {
            // Varint, 64-bit, 32-bit: one element of a repeated scalar.
            0 => {
                varint(&mut buf, shape, "a varint")?;
                count(1);
            }
            1 | 5 => {
                let width = if wire == 1 { 8 } else { 4 };
                if buf.len() < width {
                    return Err(bad(
                        shape,
                        format_args!("field {tag}: {width} bytes, {} left", buf.len()),
                    ));
                }
                buf = &buf[width..];
                count(1);
            }
            2 => {
                let length = varint(&mut buf, shape, "a length")?;
                let body = match usize::try_from(length) {
                    Ok(n) if n <= buf.len() => {
                        let (body, rest) = buf.split_at(n);
                        buf = rest;
                        body
                    }
                    _ => {
                        return Err(bad(
                            shape,
                            format_args!("field {tag}: {length} bytes, {} left", buf.len()),
                        ));
                    }
                };
                match field.map(|i| &shape.fields[i].kind) {
                    Some(Kind::Message(inner)) => {
                        heap = heap.saturating_add(heap_size(body, inner)?);
                        count(1);
                    }
                    Some(Kind::Text) => {
                        heap = heap.saturating_add(body.len());
                        count(1);
                    }
                    // Packed: at least one byte an element.
                    Some(Kind::Scalar(_)) => count(body.len()),
                    None => {}
                }
            }
            _ => return Err(bad(shape, format_args!("field {tag} has wire type {wire}"))),
        }
    }
    for (field, &count) in shape.fields.iter().zip(&counts) {
        if !field.repeated {
            continue;
        }
        if count > field.most {
            return Err(NativeError::InvalidReply {
                reason: format!(
                    "a {} with {count} {}: no call is answered with more than {}",
                    shape.name, field.name, field.most
                ),
            });
        }
        let size = match field.kind {
            Kind::Message(inner) => inner.size,
            Kind::Text => std::mem::size_of::<String>(),
            Kind::Scalar(size) => size,
        };
        heap = heap.saturating_add(capacity(count, size).saturating_mul(size));
    }
    Ok(heap)
}

/// Decodes a reply's message as `M`, once [`heap_size`] has found it
/// within [`FACTOR`] times its bytes plus [`ALLOWANCE`] decoded.
pub fn decode<M: Reply>(message: Bytes) -> Result<M, NativeError> {
    let heap = heap_size(&message, M::SHAPE)?;
    let limit = message.len().saturating_mul(FACTOR).saturating_add(ALLOWANCE);
    if heap > limit {
        return Err(NativeError::InvalidReply {
            reason: format!(
                "a {} of {} bytes would take {heap} bytes decoded, more than {limit} ({FACTOR} times its bytes and {} KiB); refused undecoded",
                M::SHAPE.name,
                message.len(),
                ALLOWANCE >> 10
            ),
        });
    }
    M::decode(message).map_err(|source| NativeError::Decode {
        what: "response message",
        cause: source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `count` copies of `element`, each as field 1 of the message.
    fn repeated(element: &[u8], count: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for _ in 0..count {
            out.push(0x0a);
            prost::encoding::encode_varint(element.len() as u64, &mut out);
            out.extend_from_slice(element);
        }
        out
    }

    #[test]
    fn golden_replies_pass_the_walk() {
        let meta = &include_bytes!("golden/meta_locations.bin")[..];
        let decoded: proto::GetMetaRegionLocationsResponse = decode(Bytes::from_static(meta)).expect("decodes");
        assert_eq!(decoded.meta_locations.len(), 1);
        // One location (capacity 4, 208 bytes each) and its host name.
        let host = decoded.meta_locations[0]
            .server_name
            .as_ref()
            .expect("server")
            .host_name
            .len();
        assert_eq!(heap_size(meta, M_SHAPE).expect("walks"), 4 * 208 + host);
        let scan = &include_bytes!("golden/scan_response.bin")[..];
        let decoded: proto::ScanResponse = decode(Bytes::from_static(scan)).expect("decodes");
        assert_eq!(decoded.cells_per_result, [2, 1]);
    }

    const M_SHAPE: &Shape = <proto::GetMetaRegionLocationsResponse as Reply>::SHAPE;

    #[test]
    fn shapes_know_the_sizes_of_the_structs() {
        assert_eq!(REGION_LOCATION.size, std::mem::size_of::<proto::RegionLocation>());
        assert!(REGION_LOCATION.size >= 100, "the case the bound is for");
        for shape in [&SCAN_RESPONSE, &TABLE_SCHEMA, &REGION_ACTION_RESULT] {
            assert!(shape.fields.len() <= 8, "{}", shape.name);
        }
    }

    #[test]
    fn empty_locations_are_refused_before_decoding() {
        // An empty `RegionLocation`: 2 bytes on the wire, 208 decoded. Four
        // million of them (8 MB) took 826 MB to decode.
        let reply = Bytes::from(repeated(&[], 1 << 20));
        let err = decode::<proto::GetMetaRegionLocationsResponse>(reply).expect_err("refused");
        assert!(
            matches!(&err, NativeError::InvalidReply { reason } if reason.contains("meta_locations") && reason.contains("no call")),
            "{err}"
        );
        // Within the count a registry can answer, a few are fine.
        let reply = Bytes::from(repeated(&[], 3));
        let decoded = decode::<proto::GetMetaRegionLocationsResponse>(reply).expect("decodes");
        assert_eq!(decoded.meta_locations.len(), 3);
    }

    #[test]
    fn empty_table_names_are_refused_before_decoding() {
        // Two bytes each, 64 decoded: past ten times the reply's bytes.
        let count = 1 << 18;
        let reply = Bytes::from(repeated(&[], count));
        let err = decode::<proto::GetTableNamesResponse>(reply).expect_err("refused");
        assert!(
            matches!(&err, NativeError::InvalidReply { reason } if reason.contains("refused undecoded")),
            "{err}"
        );
        // Names as HBase writes them (`default` and a one-letter table)
        // pass, however many.
        let mut name = vec![0x0a, 7];
        name.extend_from_slice(b"default");
        name.extend_from_slice(&[0x12, 1, b't']);
        let reply = Bytes::from(repeated(&name, count));
        let decoded = decode::<proto::GetTableNamesResponse>(reply).expect("decodes");
        assert_eq!(decoded.table_names.len(), count);
    }

    #[test]
    fn many_small_results_of_a_multi_pass_within_the_allowance() {
        // 250 actions answered `{index, result: {}}`: 6 bytes on the wire,
        // 104 decoded each.
        let mut roe = Vec::new();
        let mut rar = Vec::new();
        for i in 0..250u32 {
            roe.clear();
            roe.push(0x08);
            prost::encoding::encode_varint(u64::from(i), &mut roe);
            roe.extend_from_slice(&[0x12, 0]);
            rar.push(0x0a);
            prost::encoding::encode_varint(roe.len() as u64, &mut rar);
            rar.extend_from_slice(&roe);
        }
        let multi = repeated(&rar, 1);
        let decoded: proto::MultiResponse = decode(Bytes::from(multi)).expect("decodes");
        assert_eq!(decoded.region_action_result[0].result_or_exception.len(), 250);
    }

    #[test]
    fn broken_messages_are_typed_errors() {
        for bytes in [&[0x0a, 5, 1][..], &[0x0b][..], &[0x80][..], &[0x09, 1, 2][..]] {
            let err = decode::<proto::GetTableNamesResponse>(Bytes::copy_from_slice(bytes)).expect_err("broken");
            assert!(matches!(err, NativeError::InvalidReply { .. }), "{bytes:?}: {err}");
        }
        // Nested: a location whose server name's length passes its end.
        let err = decode::<proto::GetMetaRegionLocationsResponse>(Bytes::from_static(&[0x0a, 2, 0x12, 9]))
            .expect_err("broken");
        assert!(matches!(err, NativeError::InvalidReply { .. }), "{err}");
    }

    #[test]
    fn unknown_fields_cost_nothing() {
        // Field 9 (unknown to hmap), a million times: prost skips it.
        let mut reply = Vec::new();
        for _ in 0..(1 << 20) {
            reply.extend_from_slice(&[0x4a, 0]);
        }
        assert_eq!(heap_size(&reply, M_SHAPE).expect("walks"), 0);
        decode::<proto::GetMetaRegionLocationsResponse>(Bytes::from(reply)).expect("decodes");
    }
}
