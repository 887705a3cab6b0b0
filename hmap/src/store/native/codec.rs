//! HBase's RPC wire format, sans IO: bytes in, bytes out, no sockets.
//!
//! A connection opens with a 6-byte preamble (`HBas`, version 0, auth
//! method 80 = SIMPLE) and a `ConnectionHeader` behind a 4-byte big-endian
//! length. Every request and every reply is then a frame: a 4-byte
//! big-endian length of what follows, a varint-delimited header
//! (`RequestHeader` / `ResponseHeader`), a varint-delimited message, and an
//! optional cell block whose length the header's `CellBlockMeta` gives.
//! Replies that carry an `ExceptionResponse` in their header have no
//! message.
//!
//! Cell blocks use the KeyValue codec (`org.apache.hadoop.hbase.codec.KeyValueCodec`,
//! which the connection header asks for): each cell is a 4-byte length,
//! then the KeyValue: key length (4), value length (4), row length (2),
//! row, family length (1), family, qualifier, timestamp (8), type (1),
//! value. Every length is checked against the bytes there; nothing here
//! panics on a server's bytes (see the fuzz target `decode_native_response`).

use bytes::{Buf, BufMut, Bytes, BytesMut};
use prost::Message;

use super::error::{NativeError, RemoteError};
use super::proto::{CellBlockMeta, ConnectionHeader, RequestHeader, ResponseHeader, VersionInfo};

/// The connection preamble: `HBas`, RPC version 0, auth method SIMPLE (80).
pub const PREAMBLE: [u8; 6] = *b"HBas\x00\x50";

/// The cell block codec hmap asks servers for.
pub const KEY_VALUE_CODEC: &str = "org.apache.hadoop.hbase.codec.KeyValueCodec";

/// The default limit on a reply frame: 256 MiB, HBase's own default limit
/// on a request (`hbase.ipc.max.request.size`).
pub const DEFAULT_MAX_FRAME: usize = 256 << 20;

/// The HBase version whose client hmap speaks as: its protocol (the
/// `.proto` files `proto.rs` mirrors) and the behaviours a server grants a
/// client by version.
pub const HBASE_CLIENT_VERSION: (u32, u32, u32) = (2, 6, 1);

/// The connection header's `version_info`, as HBase's Java client sends
/// its own (`VersionInfoUtil.getCurrentClientVersionInfo`): the server logs
/// it (`Connection from ..., version=...`; without one, `UNKNOWN`) and
/// grants by `version_major` and `version_minor` what the client handles:
/// from 1.2 `RetryImmediatelyException` and `MultiActionResultTooLarge` in
/// a `Multi`, from 1.3 a Get's cells in a cell block and an exception
/// answered before a too-large request is refused, from 1.4
/// `ScannerResetException` (not `UnknownScannerException`), from 2.0 a
/// table's enabling or truncation answered with its procedure at once
/// (`ProcedurePrepareLatch`) rather than after its first step. NativeStore
/// handles each (`retry.rs`, `convert.rs`, `admin.rs`'s procedure waits), so
/// it says 2.6, the version it is written against; `version` is
/// `2.6.1-hmap-<hmap's version>`, which HBase's parsers read as 2.6.1
/// (`VersionInfoUtil.getVersionComponents` splits at `.` and `-`) and an
/// operator reads as hmap. What hmap has no value for is `Unknown`, as in
/// a Java client built outside git.
pub fn client_version_info() -> VersionInfo {
    let (major, minor, patch) = HBASE_CLIENT_VERSION;
    VersionInfo {
        version: format!("{major}.{minor}.{patch}-hmap-{}", env!("CARGO_PKG_VERSION")),
        url: env!("CARGO_PKG_REPOSITORY").to_string(),
        revision: "Unknown".to_string(),
        user: "hmap".to_string(),
        date: "Unknown".to_string(),
        src_checksum: "Unknown".to_string(),
        version_major: Some(major),
        version_minor: Some(minor),
    }
}

/// The bytes that open a connection: the preamble and the length-framed
/// `ConnectionHeader`.
pub fn encode_connection_start(header: &ConnectionHeader) -> Bytes {
    let len = header.encoded_len();
    let mut out = BytesMut::with_capacity(PREAMBLE.len() + 4 + len);
    out.put_slice(&PREAMBLE);
    // A connection header is a few hundred bytes at most.
    out.put_u32(len as u32);
    out.put_slice(&header.encode_to_vec());
    out.freeze()
}

/// Appends one request frame to `out`: length, varint-delimited `header`,
/// varint-delimited `request`, then `cell_block` (the header's
/// `cell_block_meta` is set from it when it is not empty).
pub fn encode_request(
    header: &RequestHeader,
    request: &impl Message,
    cell_block: &[u8],
    out: &mut BytesMut,
) -> Result<(), NativeError> {
    let mut header = header.clone();
    if !cell_block.is_empty() {
        let length = u32::try_from(cell_block.len()).map_err(|_| NativeError::RequestTooLarge {
            length: cell_block.len(),
        })?;
        header.cell_block_meta = Some(CellBlockMeta { length: Some(length) });
    }
    let header_len = header.encoded_len();
    let request_len = request.encoded_len();
    let total = prost::length_delimiter_len(header_len)
        + header_len
        + prost::length_delimiter_len(request_len)
        + request_len
        + cell_block.len();
    // Java reads the length as a signed int.
    let prefix = i32::try_from(total).map_err(|_| NativeError::RequestTooLarge { length: total })?;
    out.reserve(4 + total);
    out.put_i32(prefix);
    out.put_slice(&header.encode_length_delimited_to_vec());
    out.put_slice(&request.encode_length_delimited_to_vec());
    out.put_slice(cell_block);
    Ok(())
}

/// One cell of a cell block, its parts sharing the reply's buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireCell {
    /// The row key.
    pub row: Bytes,
    /// The family.
    pub family: Bytes,
    /// The qualifier.
    pub qualifier: Bytes,
    /// The timestamp.
    pub timestamp: i64,
    /// The KeyValue type byte (4 = put, 8 = delete, ...).
    pub cell_type: u8,
    /// The value.
    pub value: Bytes,
}

/// A decoded reply: its call id, and its message and cells or the
/// server's exception.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    /// The call this answers.
    pub call_id: u32,
    /// The reply, or the exception the call failed with.
    pub result: Result<Reply, RemoteError>,
}

/// A successful reply: its message and cell block, both undecoded (the
/// call decodes them, knowing what it expects: see [`super::bound`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reply {
    /// The response message's bytes (without its length delimiter).
    pub message: Bytes,
    /// The cell block's bytes (empty without one): [`decode_cell_block`]
    /// reads its cells.
    pub cell_block: Bytes,
}

/// The length a frame's 4-byte prefix announces, checked against `max`.
pub fn frame_length(prefix: [u8; 4], max: usize) -> Result<usize, NativeError> {
    let length = u32::from_be_bytes(prefix);
    match usize::try_from(length) {
        Ok(n) if n <= max => Ok(n),
        _ => Err(NativeError::FrameTooLarge {
            length: u64::from(length),
            max,
        }),
    }
}

/// How much more room [`split_frame`] makes at a time for a frame that has
/// not all arrived.
const FRAME_CHUNK: usize = 1 << 20;

/// Takes one whole frame (without its length prefix) off the front of a
/// read buffer, or `None` if the buffer does not hold one yet.
pub fn split_frame(buf: &mut BytesMut, max: usize) -> Result<Option<Bytes>, NativeError> {
    let Some(&prefix) = buf.first_chunk::<4>() else {
        return Ok(None);
    };
    let length = frame_length(prefix, max)?;
    if buf.len() - 4 < length {
        // Room for the rest a chunk at a time, as it arrives (the buffer
        // grows as a `Vec` does, at most twice the frame): a peer that
        // announces a long frame gets no memory for bytes it never sends.
        buf.reserve((4 + length - buf.len()).min(FRAME_CHUNK));
        return Ok(None);
    }
    buf.advance(4);
    Ok(Some(buf.split_to(length).freeze()))
}

/// The room a [`ReadBuffer`] starts with, and keeps.
const READ_BUFFER: usize = 64 * 1024;

/// A connection's read buffer: the socket's bytes go in
/// ([`ReadBuffer::buf_mut`]), whole frames come off the front
/// ([`ReadBuffer::next_frame`]).
///
/// A frame taken off shares the buffer's allocation (its cells are slices
/// of it, no copy), and a buffer would take that allocation back for the
/// next bytes once the frame is dropped: one 64 MiB reply, even to a call
/// that had timed out, kept 65 MB held for the connection's life. After a
/// frame larger than the room it keeps, the buffer lets go of the
/// allocation (it is freed with the frame) and starts a small one.
#[derive(Debug)]
pub struct ReadBuffer {
    buf: BytesMut,
    max: usize,
}

impl ReadBuffer {
    /// An empty buffer for frames of at most `max` bytes.
    pub fn new(max: usize) -> Self {
        ReadBuffer {
            buf: BytesMut::with_capacity(READ_BUFFER),
            max,
        }
    }

    /// Where the socket's bytes go.
    pub fn buf_mut(&mut self) -> &mut BytesMut {
        &mut self.buf
    }

    /// The bytes read and not yet taken off as frames.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether no byte waits to be taken off.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The bytes read and not yet taken off as frames.
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The next whole frame (without its length prefix), `None` until its
    /// bytes are all there (see [`split_frame`]).
    pub fn next_frame(&mut self) -> Result<Option<Bytes>, NativeError> {
        let frame = split_frame(&mut self.buf, self.max)?;
        if frame.as_ref().is_some_and(|f| f.len() > READ_BUFFER) {
            let mut fresh = BytesMut::with_capacity(READ_BUFFER.max(self.buf.len()));
            fresh.extend_from_slice(&self.buf);
            self.buf = fresh;
        }
        Ok(frame)
    }
}

/// Decodes one whole frame, length prefix included: the length must be
/// within `max` and match the bytes given exactly.
pub fn decode_frame(frame: &[u8], max: usize) -> Result<Response, NativeError> {
    let Some((prefix, body)) = frame.split_first_chunk::<4>() else {
        return Err(NativeError::Truncated {
            what: "frame length",
            needed: 4,
            available: frame.len(),
        });
    };
    let length = frame_length(*prefix, max)?;
    if body.len() < length {
        return Err(NativeError::Truncated {
            what: "frame",
            needed: length as u64,
            available: body.len(),
        });
    }
    if body.len() > length {
        return Err(NativeError::TrailingBytes {
            what: "frame",
            extra: body.len() - length,
        });
    }
    decode_response(Bytes::copy_from_slice(body))
}

/// Reads a varint length and the bytes it delimits.
fn delimited(buf: &mut Bytes, what: &'static str) -> Result<Bytes, NativeError> {
    let length = prost::encoding::decode_varint(buf).map_err(|source| NativeError::Decode { what, cause: source })?;
    match usize::try_from(length) {
        Ok(n) if n <= buf.len() => Ok(buf.split_to(n)),
        _ => Err(NativeError::Truncated {
            what,
            needed: length,
            available: buf.len(),
        }),
    }
}

/// Decodes a reply frame (after its length prefix).
pub fn decode_response(mut frame: Bytes) -> Result<Response, NativeError> {
    let header = delimited(&mut frame, "response header")?;
    let header = ResponseHeader::decode(header).map_err(|source| NativeError::Decode {
        what: "response header",
        cause: source,
    })?;
    let call_id = header.call_id.ok_or(NativeError::MissingField {
        message: "response header",
        field: "call id",
    })?;
    if let Some(exception) = &header.exception {
        // An exception reply carries nothing else.
        return Ok(Response {
            call_id,
            result: Err(RemoteError::from_proto(exception)),
        });
    }
    let message = if frame.is_empty() {
        Bytes::new()
    } else {
        delimited(&mut frame, "response message")?
    };
    let block_len = header.cell_block_meta.and_then(|m| m.length).unwrap_or(0) as usize;
    if frame.len() < block_len {
        return Err(NativeError::Truncated {
            what: "cell block",
            needed: block_len as u64,
            available: frame.len(),
        });
    }
    if frame.len() > block_len {
        return Err(NativeError::TrailingBytes {
            what: if block_len == 0 {
                "response message"
            } else {
                "cell block"
            },
            extra: frame.len() - block_len,
        });
    }
    Ok(Response {
        call_id,
        result: Ok(Reply {
            message,
            cell_block: frame,
        }),
    })
}

/// Decodes a cell block written with the KeyValue codec.
///
/// The cells are counted first (their length prefixes only), so that the
/// vector is allocated once at its size: a cell is at least 24 bytes on
/// the wire and a [`WireCell`] 144 bytes, whose parts are slices of the
/// block (no copy).
pub fn decode_cell_block(block: Bytes) -> Result<Vec<WireCell>, NativeError> {
    let mut count = 0usize;
    let mut rest = &block[..];
    while let Some((length, after)) = rest.split_first_chunk::<4>() {
        count += 1;
        rest = after.get(u32::from_be_bytes(*length) as usize..).unwrap_or_default();
    }
    let mut cells = Vec::with_capacity(count);
    let mut block = block;
    while !block.is_empty() {
        let index = cells.len();
        let bad = |reason: String| NativeError::InvalidCell { index, reason };
        if block.len() < 4 {
            return Err(bad(format!("{} bytes where a 4-byte length belongs", block.len())));
        }
        let length = block.get_u32() as usize;
        if length > block.len() {
            return Err(bad(format!("{length} bytes announced, {} left", block.len())));
        }
        cells.push(decode_key_value(block.split_to(length)).map_err(bad)?);
    }
    Ok(cells)
}

/// One KeyValue (key length, value length, key, value).
fn decode_key_value(mut kv: Bytes) -> Result<WireCell, String> {
    if kv.len() < 8 {
        return Err(format!("{} bytes, too short for the key and value lengths", kv.len()));
    }
    let key_len = kv.get_u32() as usize;
    let value_len = kv.get_u32() as usize;
    if key_len.checked_add(value_len) != Some(kv.len()) {
        return Err(format!(
            "key ({key_len} bytes) and value ({value_len} bytes) do not fill its {} bytes",
            kv.len()
        ));
    }
    let mut key = kv.split_to(key_len);
    let value = kv;
    // Row length (2), family length (1), timestamp (8), type (1).
    const FIXED: usize = 2 + 1 + 8 + 1;
    if key.len() < FIXED {
        return Err(format!("a {}-byte key is shorter than {FIXED} bytes", key.len()));
    }
    let row_len = key.get_u16() as usize;
    if key.len() < row_len + FIXED - 2 {
        return Err(format!("a {row_len}-byte row does not fit the key"));
    }
    let row = key.split_to(row_len);
    let family_len = key.get_u8() as usize;
    if key.len() < family_len + 9 {
        return Err(format!("a {family_len}-byte family does not fit the key"));
    }
    let family = key.split_to(family_len);
    let qualifier = key.split_to(key.len() - 9);
    let timestamp = key.get_i64();
    let cell_type = key.get_u8();
    Ok(WireCell {
        row,
        family,
        qualifier,
        timestamp,
        cell_type,
        value,
    })
}

/// Encodes cells with the KeyValue codec (the inverse of
/// [`decode_cell_block`]; for tests and request cell blocks).
pub fn encode_cell_block(cells: &[WireCell], out: &mut BytesMut) {
    for c in cells {
        let key_len = 2 + c.row.len() + 1 + c.family.len() + c.qualifier.len() + 8 + 1;
        out.put_u32((8 + key_len + c.value.len()) as u32);
        out.put_u32(key_len as u32);
        out.put_u32(c.value.len() as u32);
        out.put_u16(c.row.len() as u16);
        out.put_slice(&c.row);
        out.put_u8(c.family.len() as u8);
        out.put_slice(&c.family);
        out.put_slice(&c.qualifier);
        out.put_i64(c.timestamp);
        out.put_u8(c.cell_type);
        out.put_slice(&c.value);
    }
}

/// Encodes a reply frame, length prefix included (for tests and fake servers).
pub fn encode_response(header: &ResponseHeader, message: Option<&[u8]>, cell_block: &[u8]) -> Bytes {
    let mut body = BytesMut::new();
    let mut header = header.clone();
    if !cell_block.is_empty() {
        header.cell_block_meta = Some(CellBlockMeta {
            length: Some(cell_block.len() as u32),
        });
    }
    body.put_slice(&header.encode_length_delimited_to_vec());
    if let Some(message) = message {
        prost::encoding::encode_varint(message.len() as u64, &mut body);
        body.put_slice(message);
    }
    body.put_slice(cell_block);
    let mut out = BytesMut::with_capacity(4 + body.len());
    out.put_u32(body.len() as u32);
    out.put_slice(&body);
    out.freeze()
}

/// A reply frame of call `call_id` that answers with the exception
/// `class`, its stack trace `class: message` (for fake servers).
#[cfg(test)]
pub(crate) fn encode_exception(call_id: Option<u32>, class: &str, message: &str) -> Bytes {
    let header = ResponseHeader {
        call_id,
        exception: Some(super::proto::ExceptionResponse {
            exception_class_name: Some(class.to_string()),
            stack_trace: Some(format!("{class}: {message}")),
            ..Default::default()
        }),
        cell_block_meta: None,
    };
    encode_response(&header, None, &[])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::native::error::ExceptionKind;
    use crate::store::native::proto::{
        self, Column, ExceptionResponse, Get, GetRequest, MutateRequest, MutationProto, RegionSpecifier, ScanResponse,
        TimeRange, UserInformation, mutation_proto, region_specifier::RegionSpecifierType,
    };

    /// Golden bytes from Google's protobuf runtime on HBase's own `.proto`
    /// files (`golden/make_golden.py`).
    macro_rules! golden {
        ($name:literal) => {
            &include_bytes!(concat!("golden/", $name, ".bin"))[..]
        };
    }

    fn region(name: &'static [u8]) -> RegionSpecifier {
        RegionSpecifier {
            r#type: RegionSpecifierType::RegionName as i32,
            value: Bytes::from_static(name),
        }
    }

    fn request_header() -> RequestHeader {
        RequestHeader {
            call_id: Some(7),
            method_name: Some("Get".into()),
            request_param: Some(true),
            timeout: Some(5000),
            ..Default::default()
        }
    }

    fn get_request() -> GetRequest {
        GetRequest {
            region: region(b"t,,1700000000000.0123456789abcdef0123456789abcdef."),
            get: Get {
                row: Bytes::from_static(b"r\x00\xff1"),
                column: vec![
                    Column {
                        family: "f".into(),
                        qualifier: vec!["a".into(), "b".into()],
                    },
                    Column {
                        family: "g".into(),
                        qualifier: vec![],
                    },
                ],
                time_range: Some(TimeRange {
                    from: Some(5),
                    to: Some(100),
                }),
                max_versions: Some(3),
                ..Default::default()
            },
        }
    }

    fn qualifier_value(
        qualifier: Option<&'static str>,
        value: Option<&'static str>,
        timestamp: Option<u64>,
        delete_type: Option<mutation_proto::DeleteType>,
    ) -> mutation_proto::column_value::QualifierValue {
        mutation_proto::column_value::QualifierValue {
            qualifier: qualifier.map(|q| Bytes::from_static(q.as_bytes())),
            value: value.map(|v| Bytes::from_static(v.as_bytes())),
            timestamp,
            delete_type: delete_type.map(|d| d as i32),
            tags: None,
        }
    }

    #[test]
    fn messages_encode_as_protobuf_does() {
        let header = proto::ConnectionHeader {
            user_info: Some(UserInformation {
                effective_user: "hmap".into(),
                real_user: None,
            }),
            service_name: Some("ClientService".into()),
            cell_block_codec_class: Some(KEY_VALUE_CODEC.into()),
            cell_block_compressor_class: None,
            version_info: None,
        };
        assert_eq!(header.encode_to_vec(), golden!("connection_header"));
        assert_eq!(request_header().encode_to_vec(), golden!("request_header"));
        assert_eq!(get_request().encode_to_vec(), golden!("get_request"));

        let mut put = MutateRequest {
            region: region(b"t,,1.x."),
            mutation: MutationProto {
                row: Some("row".into()),
                mutate_type: Some(mutation_proto::MutationType::Put as i32),
                column_value: vec![mutation_proto::ColumnValue {
                    family: "f".into(),
                    qualifier_value: vec![
                        qualifier_value(Some("q"), Some("v"), None, None),
                        qualifier_value(Some("r"), Some(""), Some(42), None),
                    ],
                }],
                ..Default::default()
            },
            condition: None,
            nonce_group: None,
        };
        assert_eq!(put.encode_to_vec(), golden!("mutate_put"));
        put.mutation.mutate_type = Some(mutation_proto::MutationType::Delete as i32);
        put.mutation.column_value[0].qualifier_value = vec![
            qualifier_value(
                Some("q"),
                None,
                Some(9),
                Some(mutation_proto::DeleteType::DeleteMultipleVersions),
            ),
            qualifier_value(None, None, None, Some(mutation_proto::DeleteType::DeleteFamily)),
        ];
        assert_eq!(put.encode_to_vec(), golden!("mutate_delete"));

        let header = ResponseHeader {
            call_id: Some(3),
            exception: Some(ExceptionResponse {
                exception_class_name: Some("org.apache.hadoop.hbase.NotServingRegionException".into()),
                stack_trace: Some(
                    "org.apache.hadoop.hbase.NotServingRegionException: t,,1.x. is not online on 127.0.0.1,16020,1\n\tat A.b(C.java:1)\n".into(),
                ),
                hostname: Some("127.0.0.1".into()),
                port: Some(16020),
                do_not_retry: Some(false),
                server_overloaded: None,
            }),
            cell_block_meta: None,
        };
        assert_eq!(header.encode_to_vec(), golden!("response_header_exception"));
    }

    #[test]
    fn golden_replies_decode() {
        let scan = ScanResponse::decode(golden!("scan_response")).expect("decodes");
        assert_eq!(scan.cells_per_result, [2, 1]);
        assert_eq!(scan.partial_flag_per_result, [false, true]);
        assert_eq!(scan.scanner_id, Some(42));
        assert_eq!(scan.results[1].partial, Some(true));
        assert_eq!(scan.encode_to_vec(), golden!("scan_response"), "re-encodes unpacked");

        let meta = proto::GetMetaRegionLocationsResponse::decode(golden!("meta_locations")).expect("decodes");
        let location = &meta.meta_locations[0];
        assert_eq!(location.region_info.table_name.qualifier, "meta");
        assert_eq!(location.server_name.as_ref().map(|s| s.port), Some(Some(36821)));
        assert_eq!(meta.encode_to_vec(), golden!("meta_locations"));
    }

    #[test]
    fn request_frames_match_the_golden_frame() {
        let mut out = BytesMut::new();
        encode_request(&request_header(), &get_request(), &[], &mut out).expect("encodes");
        assert_eq!(&out[..], golden!("get_request_frame"));
    }

    #[test]
    fn a_request_with_a_cell_block_says_its_length() {
        let cells = [WireCell {
            row: "r".into(),
            family: "f".into(),
            qualifier: "q".into(),
            timestamp: 1,
            cell_type: 4,
            value: "v".into(),
        }];
        let mut block = BytesMut::new();
        encode_cell_block(&cells, &mut block);
        let mut out = BytesMut::new();
        encode_request(&request_header(), &get_request(), &block, &mut out).expect("encodes");
        let mut frame = out.freeze();
        let length = frame.get_u32() as usize;
        assert_eq!(length, frame.len());
        let header = RequestHeader::decode(delimited(&mut frame, "h").expect("header")).expect("decodes");
        assert_eq!(header.cell_block_meta.and_then(|m| m.length), Some(block.len() as u32));
        let request = GetRequest::decode(delimited(&mut frame, "r").expect("request")).expect("decodes");
        assert_eq!(request, get_request());
        assert_eq!(decode_cell_block(frame).expect("cells"), cells);
    }

    #[test]
    fn the_client_version_is_hbases_form_with_hmaps_own() {
        let info = client_version_info();
        assert_eq!(info.version, format!("2.6.1-hmap-{}", env!("CARGO_PKG_VERSION")));
        assert_eq!((info.version_major, info.version_minor), (Some(2), Some(6)));
        // HBase's VersionInfoUtil.getVersionComponents: the first three
        // parts, split at `.` and `-`, are numbers.
        let parts: Vec<&str> = info.version.split(['.', '-']).collect();
        assert_eq!(&parts[..3], ["2", "6", "1"]);
        // Field numbers as HBase.proto's VersionInfo (1 to 8) and RPC.proto's
        // ConnectionHeader.version_info (5): the bytes by hand.
        let header = proto::ConnectionHeader {
            version_info: Some(info.clone()),
            ..Default::default()
        };
        let mut expected = vec![];
        let mut inner = vec![];
        for (tag, text) in [
            (1u8, &info.version),
            (2, &info.url),
            (3, &info.revision),
            (4, &info.user),
            (5, &info.date),
            (6, &info.src_checksum),
        ] {
            inner.extend_from_slice(&[tag << 3 | 2, text.len() as u8]);
            inner.extend_from_slice(text.as_bytes());
        }
        inner.extend_from_slice(&[7 << 3, 2, 8 << 3, 6]);
        expected.extend_from_slice(&[5 << 3 | 2, inner.len() as u8]);
        expected.extend_from_slice(&inner);
        assert_eq!(header.encode_to_vec(), expected);
    }

    #[test]
    fn the_connection_opens_with_preamble_and_header() {
        let header = proto::ConnectionHeader {
            service_name: Some("ClientService".into()),
            ..Default::default()
        };
        let start = encode_connection_start(&header);
        assert_eq!(&start[..6], b"HBas\x00\x50");
        assert_eq!(&start[6..10], &(header.encoded_len() as u32).to_be_bytes());
        assert_eq!(&start[10..], &header.encode_to_vec()[..]);
    }

    #[test]
    fn a_scan_reply_with_a_cell_block_decodes() {
        let response = decode_frame(golden!("scan_response_frame"), DEFAULT_MAX_FRAME).expect("decodes");
        assert_eq!(response.call_id, 11);
        let reply = response.result.expect("no exception");
        assert_eq!(
            ScanResponse::decode(reply.message).expect("scan").cells_per_result,
            [2, 1]
        );
        let cells = decode_cell_block(reply.cell_block).expect("cells");
        assert_eq!(cells.len(), 3);
        assert_eq!(
            cells[0],
            WireCell {
                row: "r1".into(),
                family: "f".into(),
                qualifier: "a".into(),
                timestamp: 1_700_000_000_000,
                cell_type: 4,
                value: "va".into(),
            }
        );
        assert_eq!((&cells[1].qualifier[..], &cells[1].value[..]), (&b""[..], &b""[..]));
        assert_eq!(&cells[2].qualifier[..], b"q\xff");
        assert_eq!(cells[2].timestamp, i64::MAX);
        assert_eq!(cells[2].value.len(), 300);
        // Re-encoded, the cells are the block Python wrote.
        let mut block = BytesMut::new();
        encode_cell_block(&cells, &mut block);
        let frame = golden!("scan_response_frame");
        assert!(frame.ends_with(&block));
    }

    #[test]
    fn an_exception_reply_decodes_to_its_kind() {
        let response = decode_frame(golden!("exception_frame"), DEFAULT_MAX_FRAME).expect("decodes");
        assert_eq!(response.call_id, 3);
        let error = response.result.expect_err("an exception");
        assert_eq!(error.kind, ExceptionKind::NotServingRegion);
        assert_eq!(error.message, "t,,1.x. is not online on 127.0.0.1,16020,1");
    }

    #[test]
    fn frames_stream_in_pieces() {
        let mut stream = BytesMut::new();
        stream.put_slice(golden!("scan_response_frame"));
        stream.put_slice(golden!("exception_frame"));
        let whole = stream.freeze();
        // Fed one byte at a time, the two frames come out whole, once each.
        let mut buf = BytesMut::new();
        let mut frames = Vec::new();
        for b in whole.iter() {
            buf.put_u8(*b);
            while let Some(frame) = split_frame(&mut buf, DEFAULT_MAX_FRAME).expect("valid") {
                frames.push(decode_response(frame).expect("decodes").call_id);
            }
        }
        assert_eq!(frames, [11, 3]);
        assert!(buf.is_empty());
    }

    #[test]
    fn huge_lengths_are_refused_before_reading() {
        let mut buf = BytesMut::from(&[0xFF, 0xFF, 0xFF, 0xFF, 0][..]);
        let err = split_frame(&mut buf, 1 << 20).expect_err("too large");
        assert!(
            matches!(
                err,
                NativeError::FrameTooLarge {
                    length: 0xFFFF_FFFF,
                    max: 1_048_576
                }
            ),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            "a frame of 4294967295 bytes exceeds the 1048576-byte limit"
        );
        let err = decode_frame(&[0, 0, 1, 0], 255).expect_err("too large");
        assert!(matches!(err, NativeError::FrameTooLarge { length: 256, .. }));
    }

    #[test]
    fn truncated_frames_are_typed_errors() {
        let frame = golden!("scan_response_frame");
        for cut in 0..frame.len() {
            let err = decode_frame(&frame[..cut], DEFAULT_MAX_FRAME).expect_err("truncated");
            assert!(matches!(err, NativeError::Truncated { .. }), "cut at {cut}: {err}");
        }
        // A frame whose prefix is honest about a body cut short inside.
        let body = &frame[4..frame.len() - 10];
        let mut short = (body.len() as u32).to_be_bytes().to_vec();
        short.extend_from_slice(body);
        let err = decode_frame(&short, DEFAULT_MAX_FRAME).expect_err("cell block cut");
        assert!(
            matches!(err, NativeError::Truncated { what: "cell block", .. }),
            "{err}"
        );
        // And one byte too many.
        let mut long = frame.to_vec();
        long.push(0);
        let err = decode_frame(&long, DEFAULT_MAX_FRAME).expect_err("trailing");
        assert!(matches!(err, NativeError::TrailingBytes { extra: 1, .. }), "{err}");
    }

    #[test]
    fn garbage_varints_are_typed_errors() {
        // Eleven continuation bytes: no varint.
        let mut frame = vec![0, 0, 0, 11];
        frame.extend([0xFF; 11]);
        let err = decode_frame(&frame, DEFAULT_MAX_FRAME).expect_err("garbage");
        assert!(
            matches!(
                err,
                NativeError::Decode {
                    what: "response header",
                    ..
                }
            ),
            "{err}"
        );
        // A delimiter longer than the frame.
        let err = decode_frame(&[0, 0, 0, 2, 0x7F, 0], DEFAULT_MAX_FRAME).expect_err("long");
        assert!(
            matches!(
                err,
                NativeError::Truncated {
                    needed: 127,
                    available: 1,
                    ..
                }
            ),
            "{err}"
        );
        // A header that is not protobuf.
        let err = decode_frame(&[0, 0, 0, 3, 2, 0xFF, 0xFF], DEFAULT_MAX_FRAME).expect_err("bad header");
        assert!(matches!(err, NativeError::Decode { .. }), "{err}");
        // A header without a call id.
        let err = decode_frame(&[0, 0, 0, 1, 0], DEFAULT_MAX_FRAME).expect_err("no call id");
        assert!(
            matches!(err, NativeError::MissingField { field: "call id", .. }),
            "{err}"
        );
    }

    #[test]
    fn bad_cells_are_typed_errors() {
        let cell = WireCell {
            row: "row".into(),
            family: "fam".into(),
            qualifier: "q".into(),
            timestamp: 5,
            cell_type: 4,
            value: "value".into(),
        };
        let mut good = BytesMut::new();
        encode_cell_block(std::slice::from_ref(&cell), &mut good);
        let good = good.freeze();
        for cut in 1..good.len() {
            let err = decode_cell_block(good.slice(..cut)).expect_err("cut");
            assert!(
                matches!(err, NativeError::InvalidCell { index: 0, .. }),
                "cut at {cut}: {err}"
            );
        }
        // Key and value lengths that do not add up to the cell's.
        let mut bad = good.to_vec();
        bad[8..12].copy_from_slice(&6u32.to_be_bytes());
        assert!(decode_cell_block(bad.into()).is_err());
        // A row length past the key.
        let mut bad = good.to_vec();
        bad[12..14].copy_from_slice(&u16::MAX.to_be_bytes());
        let err = decode_cell_block(bad.into()).expect_err("row too long");
        assert!(err.to_string().contains("65535-byte row"), "{err}");
        // A family length past the key.
        let mut bad = good.to_vec();
        bad[17] = 200;
        assert!(decode_cell_block(bad.into()).is_err());
        // The second cell is named in the error.
        let mut two = good.to_vec();
        two.extend_from_slice(&good[..good.len() - 1]);
        let err = decode_cell_block(two.into()).expect_err("second cut");
        assert!(matches!(err, NativeError::InvalidCell { index: 1, .. }), "{err}");
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            let _ = decode_frame(&bytes, 1 << 16);
            let _ = decode_response(Bytes::from(bytes.clone()));
            let _ = decode_cell_block(Bytes::from(bytes));
        }

        #[test]
        fn cell_blocks_round_trip(
            cells in proptest::collection::vec(
                (
                    proptest::collection::vec(proptest::num::u8::ANY, 0..40),
                    proptest::collection::vec(proptest::num::u8::ANY, 0..20),
                    proptest::collection::vec(proptest::num::u8::ANY, 0..20),
                    proptest::num::i64::ANY,
                    proptest::num::u8::ANY,
                    proptest::collection::vec(proptest::num::u8::ANY, 0..60),
                ),
                0..8,
            )
        ) {
            let cells: Vec<WireCell> = cells
                .into_iter()
                .map(|(row, family, qualifier, timestamp, cell_type, value)| WireCell {
                    row: row.into(),
                    family: family.into(),
                    qualifier: qualifier.into(),
                    timestamp,
                    cell_type,
                    value: value.into(),
                })
                .collect();
            let mut block = BytesMut::new();
            encode_cell_block(&cells, &mut block);
            proptest::prop_assert_eq!(decode_cell_block(block.freeze()).expect("decodes"), cells);
        }
    }

    /// `body` behind its 4-byte length.
    fn framed(body: &[u8]) -> Vec<u8> {
        let mut frame = (body.len() as u32).to_be_bytes().to_vec();
        frame.extend_from_slice(body);
        frame
    }

    #[test]
    fn a_cell_block_is_decoded_into_a_vector_of_its_size() {
        // The smallest cells (24 bytes each): 144 bytes decoded, not the
        // twice as much a vector grown push by push can reach.
        let cell = WireCell {
            row: Bytes::new(),
            family: Bytes::new(),
            qualifier: Bytes::new(),
            timestamp: 0,
            cell_type: 4,
            value: Bytes::new(),
        };
        let mut block = BytesMut::new();
        encode_cell_block(&vec![cell; 1025], &mut block);
        assert_eq!(block.len(), 1025 * 24);
        let cells = decode_cell_block(block.freeze()).expect("decodes");
        assert_eq!((cells.len(), cells.capacity()), (1025, 1025));
        // A block cut short still says which cell is wrong.
        let mut block = BytesMut::new();
        encode_cell_block(&[cells[0].clone()], &mut block);
        block.extend_from_slice(&[0, 0, 0, 9, 1]);
        let err = decode_cell_block(block.freeze()).expect_err("cut");
        assert!(matches!(err, NativeError::InvalidCell { index: 1, .. }), "{err}");
    }

    #[test]
    fn the_read_buffer_lets_go_of_a_large_frames_allocation() {
        let mut reader = ReadBuffer::new(DEFAULT_MAX_FRAME);
        // A 4 MiB frame, as a socket delivers it, then a small one.
        let big = framed(&vec![7; 4 << 20]);
        for chunk in big.chunks(64 * 1024) {
            assert_eq!(reader.next_frame().expect("valid"), None);
            reader.buf_mut().extend_from_slice(chunk);
        }
        reader.buf_mut().extend_from_slice(&framed(b"small")[..2]);
        let frame = reader.next_frame().expect("valid").expect("whole");
        assert_eq!(frame.len(), 4 << 20);
        // Nothing but the frame holds its allocation: it is freed with it.
        assert!(frame.is_unique(), "the read buffer still holds the frame's allocation");
        assert!(
            reader.buf_mut().capacity() <= READ_BUFFER,
            "{}",
            reader.buf_mut().capacity()
        );
        assert_eq!(reader.len(), 2, "the next frame's first bytes are kept");
        reader.buf_mut().extend_from_slice(&framed(b"small")[2..]);
        assert_eq!(&reader.next_frame().expect("valid").expect("whole")[..], b"small");
        assert!(reader.is_empty());
    }

    #[test]
    fn a_long_frame_announced_gets_no_memory_before_its_bytes_come() {
        // 200 MiB announced (within the limit), three bytes of it sent.
        let mut buf = BytesMut::new();
        buf.extend_from_slice(&(200u32 << 20).to_be_bytes());
        buf.extend_from_slice(b"abc");
        assert_eq!(split_frame(&mut buf, DEFAULT_MAX_FRAME).expect("valid"), None);
        assert!(buf.capacity() <= 2 * FRAME_CHUNK, "{} bytes reserved", buf.capacity());
        // The frame still comes whole once its bytes are there.
        let mut buf = BytesMut::new();
        buf.extend_from_slice(&(3u32 << 20).to_be_bytes());
        let body = vec![7u8; 3 << 20];
        for chunk in body.chunks(64 * 1024) {
            assert_eq!(split_frame(&mut buf, DEFAULT_MAX_FRAME).expect("valid"), None);
            buf.extend_from_slice(chunk);
        }
        let frame = split_frame(&mut buf, DEFAULT_MAX_FRAME).expect("valid").expect("whole");
        assert_eq!(frame.len(), 3 << 20);
        assert!(buf.is_empty());
    }
}
