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
use super::proto::{CellBlockMeta, ConnectionHeader, RequestHeader, ResponseHeader};

/// The connection preamble: `HBas`, RPC version 0, auth method SIMPLE (80).
pub const PREAMBLE: [u8; 6] = *b"HBas\x00\x50";

/// The cell block codec hmap asks servers for.
pub const KEY_VALUE_CODEC: &str = "org.apache.hadoop.hbase.codec.KeyValueCodec";

/// The default limit on a reply frame: 256 MiB, HBase's own default limit
/// on a request (`hbase.ipc.max.request.size`).
pub const DEFAULT_MAX_FRAME: usize = 256 << 20;

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

/// A successful reply.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reply {
    /// The response message's bytes (without its length delimiter).
    pub message: Bytes,
    /// The cells of the cell block, in order.
    pub cells: Vec<WireCell>,
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

/// Takes one whole frame (without its length prefix) off the front of a
/// read buffer, or `None` if the buffer does not hold one yet.
pub fn split_frame(buf: &mut BytesMut, max: usize) -> Result<Option<Bytes>, NativeError> {
    let Some(prefix) = buf.get(..4) else {
        return Ok(None);
    };
    let length = frame_length(prefix.try_into().expect("4 bytes"), max)?;
    if buf.len() - 4 < length {
        buf.reserve(4 + length - buf.len());
        return Ok(None);
    }
    buf.advance(4);
    Ok(Some(buf.split_to(length).freeze()))
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
    let length = prost::encoding::decode_varint(buf).map_err(|source| NativeError::Decode { what, source })?;
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
        source,
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
            cells: decode_cell_block(frame)?,
        }),
    })
}

/// Decodes a cell block written with the KeyValue codec.
pub fn decode_cell_block(mut block: Bytes) -> Result<Vec<WireCell>, NativeError> {
    let mut cells = Vec::new();
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
