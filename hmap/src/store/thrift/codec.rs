//! Thrift's binary protocol (`TBinaryProtocol`, strict) and compact protocol
//! (`TCompactProtocol`), sans-IO: requests are written into a byte buffer,
//! replies decoded from one. Nothing here
//! touches a socket, so the blocking transport of today and an async one can
//! share it, and it is tested with golden bytes and fuzzed without a network.
//!
//! A reply is handled in two steps:
//!
//! 1. [`Skim`] tells, over the bytes received so far, whether a whole message
//!    is there and how long it is. It resumes where it stopped when more bytes
//!    arrive (no rescan from the start), never allocates, and refuses what no
//!    honest gateway sends: nesting deeper than [`MAX_DEPTH`], unknown types,
//!    negative lengths, containers of `STOP` elements.
//! 2. [`Reader`] decodes the complete message from one [`Bytes`] buffer,
//!    handing out binary fields as slices of it (no copy). Every length read
//!    from the wire is checked against the bytes actually left before anything
//!    is reserved for it, so a reply never allocates more than a small multiple
//!    of its own size.
//!
//! Both protocols share these two steps and the [`Encoder`]: each holds the
//! [`Protocol`] it speaks and differs only in how a token (a header, an
//! integer, a length) is laid out. The binary protocol writes fixed-size
//! big-endian integers; the compact one writes zigzag varints, field ids as
//! deltas from the previous field of the same struct, and a bool field's
//! value inside its header. Framing is the transport's business.

use bytes::Bytes;

/// How deep structs and containers may nest in a reply: the limit of the
/// `thrift` crate and of Apache Thrift's own libraries (`DEFAULT_RECURSION_DEPTH`).
pub const MAX_DEPTH: usize = 64;

/// The longest method name accepted in a reply header; HBase's are short.
const MAX_NAME: usize = 1024;

/// The longest message accepted: 1 GiB, ten times libthrift's default
/// `maxMessageSize` (100 MB), which HBase's own Java clients read with. A
/// value declared to end beyond it is refused at once, not waited for.
pub const MAX_MESSAGE: usize = 1 << 30;

/// Which of Thrift's protocols a gateway speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Protocol {
    /// `TBinaryProtocol`, strict: the gateway's default.
    #[default]
    Binary,
    /// `TCompactProtocol`: a gateway started with `-c`
    /// (`hbase.regionserver.thrift.compact`).
    Compact,
}

/// The longest varints the compact protocol writes: 5 bytes for 32 bits
/// (i16, i32, lengths), 10 for 64.
const VARINT32: usize = 5;
const VARINT64: usize = 10;
/// The compact protocol's first byte, and its version (the low 5 bits of
/// the second byte; the message type is in the high 3).
const COMPACT_ID: u8 = 0x82;
const COMPACT_VERSION: u8 = 1;

/// Thrift field and element types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TType {
    Stop = 0,
    Bool = 2,
    Byte = 3,
    Double = 4,
    I16 = 6,
    I32 = 8,
    I64 = 10,
    String = 11,
    Struct = 12,
    Map = 13,
    Set = 14,
    List = 15,
}

impl TType {
    /// The type a byte names, if any.
    pub fn from_byte(b: u8) -> Option<TType> {
        Some(match b {
            0 => TType::Stop,
            2 => TType::Bool,
            3 => TType::Byte,
            4 => TType::Double,
            6 => TType::I16,
            8 => TType::I32,
            10 => TType::I64,
            11 => TType::String,
            12 => TType::Struct,
            13 => TType::Map,
            14 => TType::Set,
            15 => TType::List,
            _ => return None,
        })
    }

    /// The type a compact type code names, if any (both bool codes name
    /// `Bool`: a bool field carries its value in its type code).
    fn from_compact(code: u8) -> Option<TType> {
        Some(match code {
            0 => TType::Stop,
            1 | 2 => TType::Bool,
            3 => TType::Byte,
            4 => TType::I16,
            5 => TType::I32,
            6 => TType::I64,
            7 => TType::Double,
            8 => TType::String,
            9 => TType::List,
            10 => TType::Set,
            11 => TType::Map,
            12 => TType::Struct,
            _ => return None,
        })
    }

    /// The compact protocol's code for this type (a bool as `true`, as
    /// libthrift writes a container's element type).
    fn compact(self) -> u8 {
        match self {
            TType::Stop => 0,
            TType::Bool => 1,
            TType::Byte => 3,
            TType::I16 => 4,
            TType::I32 => 5,
            TType::I64 => 6,
            TType::Double => 7,
            TType::String => 8,
            TType::List => 9,
            TType::Set => 10,
            TType::Map => 11,
            TType::Struct => 12,
        }
    }

    /// The encoded size of a fixed-size value; the compact protocol's
    /// integers are varints, of no fixed size.
    fn fixed_size(self, protocol: Protocol) -> Option<usize> {
        match (self, protocol) {
            (TType::Bool | TType::Byte, _) => Some(1),
            (TType::Double, _) => Some(8),
            (TType::I16, Protocol::Binary) => Some(2),
            (TType::I32, Protocol::Binary) => Some(4),
            (TType::I64, Protocol::Binary) => Some(8),
            _ => None,
        }
    }

    /// The fewest bytes a value of this type takes: what a declared count
    /// of them is checked against.
    pub fn min_size(self, protocol: Protocol) -> usize {
        match protocol {
            Protocol::Binary => match self {
                TType::Stop => 0,
                TType::Struct => 1,
                TType::String => 4,
                TType::Set | TType::List => 5,
                TType::Map => 6,
                fixed => fixed.fixed_size(protocol).unwrap_or(1),
            },
            // A varint, a one-byte container header, a lone STOP.
            Protocol::Compact => match self {
                TType::Stop => 0,
                TType::Double => 8,
                _ => 1,
            },
        }
    }
}

/// Message types.
pub const CALL: u8 = 1;
pub const REPLY: u8 = 2;
pub const EXCEPTION: u8 = 3;
const VERSION_1: u32 = 0x8001_0000;
const VERSION_MASK: u32 = 0xFFFF_0000;

/// Why bytes are not a valid reply. `at` is the offset in the message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The message does not start with a strict binary header.
    #[error("not a binary thrift message: it starts with {start:02x?}")]
    NotBinary {
        /// Its first bytes (at most 8).
        start: Vec<u8>,
    },
    /// The message does not start with a compact protocol header.
    #[error("not a compact thrift message: it starts with {start:02x?}")]
    NotCompact {
        /// Its first bytes (at most 8).
        start: Vec<u8>,
    },
    /// A compact varint longer than its type allows, or out of its range.
    #[error("a malformed varint at byte {at}")]
    BadVarint {
        /// Where.
        at: usize,
    },
    /// The message ends before a value it declares.
    #[error("the message ends at byte {at}, inside a value")]
    Truncated {
        /// Where.
        at: usize,
    },
    /// Structs and containers nested deeper than [`MAX_DEPTH`].
    #[error("values nest deeper than {MAX_DEPTH} levels at byte {at}")]
    TooDeep {
        /// Where.
        at: usize,
    },
    /// A type byte that names no Thrift type.
    #[error("unknown thrift type {byte} at byte {at}")]
    UnknownType {
        /// The byte.
        byte: u8,
        /// Where.
        at: usize,
    },
    /// A container of `STOP` elements that is not empty.
    #[error("a container of {len} STOP elements at byte {at}")]
    StopElements {
        /// Its declared length.
        len: i32,
        /// Where.
        at: usize,
    },
    /// A negative length or count.
    #[error("negative length {len} at byte {at}")]
    NegativeLength {
        /// The length.
        len: i32,
        /// Where.
        at: usize,
    },
    /// A length or count the bytes left cannot hold.
    #[error("{what} of {len} at byte {at} needs at least {needed} bytes, {left} are left")]
    TooLong {
        /// A string's length or a container's count.
        what: &'static str,
        /// The declared length.
        len: usize,
        /// The bytes it needs at least.
        needed: u64,
        /// The bytes left in the message.
        left: usize,
        /// Where.
        at: usize,
    },
    /// A field or element of another type than the IDL declares.
    #[error("{what} is of type {got:?}, the IDL says {expected:?} (byte {at})")]
    WrongType {
        /// The field.
        what: &'static str,
        /// The IDL's type.
        expected: TType,
        /// The wire's.
        got: TType,
        /// Where.
        at: usize,
    },
    /// A value of the IDL's type whose content the service's definition
    /// rules out (a Thrift1 column name without the `:` after its family).
    #[error("{what} at byte {at} is malformed: {why}")]
    Malformed {
        /// The value.
        what: &'static str,
        /// What is wrong.
        why: &'static str,
        /// Where.
        at: usize,
    },
    /// A required field is missing.
    #[error("{what} lacks its required field {id}")]
    MissingField {
        /// The struct.
        what: &'static str,
        /// The field id.
        id: i16,
    },
    /// A string that must be UTF-8 is not.
    #[error("{what} at byte {at} is not UTF-8")]
    NotUtf8 {
        /// The field.
        what: &'static str,
        /// Where.
        at: usize,
    },
    /// A message of a type other than a reply or an exception.
    #[error("message type {kind} where a reply was expected")]
    UnexpectedMessage {
        /// The type.
        kind: u8,
    },
    /// A reply to another call than the one made.
    #[error("a reply to `{name}` #{seq} where `{expected}` #{expected_seq} was called")]
    WrongReply {
        /// The method named in the reply.
        name: String,
        /// Its sequence number.
        seq: i32,
        /// The method called.
        expected: &'static str,
        /// The call's sequence number.
        expected_seq: i32,
    },
    /// Bytes after the end of the message.
    #[error("{extra} bytes after the end of the message")]
    TrailingBytes {
        /// How many.
        extra: usize,
    },
    /// A message where a frame's length should be (framed transport): the
    /// gateway does not frame its replies.
    #[error("an unframed message (it starts with {start:02x?}) where a frame's length was expected")]
    Unframed {
        /// Its first bytes.
        start: Vec<u8>,
    },
    /// A frame (framed transport) longer than a reply may be.
    #[error("a frame of {len} bytes, more than the {max} a reply may take")]
    FrameTooLarge {
        /// Its length.
        len: usize,
        /// The largest accepted.
        max: usize,
    },
    /// A non-void call whose reply holds neither a result nor an exception.
    #[error("the reply holds no result")]
    MissingResult,
}

fn be_i32(b: &[u8], at: usize) -> Option<i32> {
    let bytes: [u8; 4] = b.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(i32::from_be_bytes(bytes))
}

/// A length from the wire, refused when negative.
fn length(len: i32, at: usize) -> Result<usize, DecodeError> {
    usize::try_from(len).map_err(|_| DecodeError::NegativeLength { len, at })
}

/// A container's element type, refused when unknown, or `STOP` with elements.
fn element_type(byte: u8, len: i32, at: usize) -> Result<TType, DecodeError> {
    match TType::from_byte(byte) {
        None => Err(DecodeError::UnknownType { byte, at }),
        Some(TType::Stop) if len != 0 => Err(DecodeError::StopElements { len, at }),
        Some(t) => Ok(t),
    }
}

/// The start of a message, as [`DecodeError::NotBinary`] or
/// [`DecodeError::NotCompact`] shows it.
fn not_thrift(protocol: Protocol, buf: &[u8]) -> DecodeError {
    let start = buf.iter().take(8).copied().collect();
    match protocol {
        Protocol::Binary => DecodeError::NotBinary { start },
        Protocol::Compact => DecodeError::NotCompact { start },
    }
}

/// A varint at the start of `b`: its value and length, `None` if it goes
/// on past `b`, an error if it is longer than `max` bytes.
fn varint(b: &[u8], max: usize, at: usize) -> Result<Option<(u64, usize)>, DecodeError> {
    let mut value = 0u64;
    for (i, &byte) in b.iter().enumerate().take(max) {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok(Some((value, i + 1)));
        }
    }
    if b.len() >= max {
        Err(DecodeError::BadVarint { at })
    } else {
        Ok(None)
    }
}

/// A 32-bit varint at the start of `b`, as Java reads it into an `int`
/// (a length of 2^31 or more is negative); more than 32 bits is an error.
fn varint32(b: &[u8], at: usize) -> Result<Option<(i32, usize)>, DecodeError> {
    match varint(b, VARINT32, at)? {
        Some((v, len)) => {
            let v = u32::try_from(v).map_err(|_| DecodeError::BadVarint { at })?;
            Ok(Some((v as i32, len)))
        }
        None => Ok(None),
    }
}

fn zigzag32(n: u32) -> i32 {
    ((n >> 1) as i32) ^ -((n & 1) as i32)
}

fn zigzag64(n: u64) -> i64 {
    ((n >> 1) as i64) ^ -((n & 1) as i64)
}

// ---------------------------------------------------------------------------
// Writing

/// Writes a message into a buffer, which the transport sends whole.
///
/// The compact protocol writes a field's id as the difference from the
/// previous field's in the same struct, so the encoder follows where structs
/// begin and end: a struct field, the next element of a `list<struct>`, or
/// a message's arguments begin one; [`stop`](Self::stop) ends it. Callers
/// write the same sequence of calls for either protocol.
#[derive(Default)]
pub struct Encoder {
    pub buf: Vec<u8>,
    protocol: Protocol,
    /// Compact: the structs and struct lists being written, innermost last.
    nest: Vec<Nest>,
    /// Compact: a bool field whose header waits for its value.
    bool_field: Option<i16>,
}

/// What the compact encoder is inside of.
enum Nest {
    /// A struct, with the id of its last field written.
    Struct { last: i16 },
    /// A `list<struct>` with this many elements not yet begun.
    Elements { left: usize },
}

impl Encoder {
    /// An encoder of `protocol` messages.
    pub fn new(protocol: Protocol) -> Self {
        Encoder {
            protocol,
            ..Encoder::default()
        }
    }

    pub fn message(&mut self, name: &str, kind: u8, seq: i32) {
        match self.protocol {
            Protocol::Binary => {
                self.i32((VERSION_1 | u32::from(kind)) as i32);
                self.string(name.as_bytes());
                self.i32(seq);
            }
            Protocol::Compact => {
                self.buf.push(COMPACT_ID);
                self.buf.push(COMPACT_VERSION | (kind << 5));
                self.varint(u64::from(seq as u32));
                self.string(name.as_bytes());
                // The arguments (or result) struct.
                self.nest.clear();
                self.nest.push(Nest::Struct { last: 0 });
            }
        }
    }

    /// Compact: begins the next element of a `list<struct>` if one is due.
    fn next_element(&mut self) {
        if let Some(Nest::Elements { left }) = self.nest.last_mut()
            && *left > 0
        {
            *left -= 1;
            self.nest.push(Nest::Struct { last: 0 });
        }
    }

    #[inline]
    pub fn field(&mut self, kind: TType, id: i16) {
        match self.protocol {
            Protocol::Binary => {
                self.buf.push(kind as u8);
                self.i16(id);
            }
            // A bool field's header holds its value: written by `bool`.
            Protocol::Compact if kind == TType::Bool => self.bool_field = Some(id),
            Protocol::Compact => {
                self.compact_field(kind.compact(), id);
                if kind == TType::Struct {
                    self.nest.push(Nest::Struct { last: 0 });
                }
            }
        }
    }

    /// A compact field header: the id as a delta from the last field's in
    /// the high nibble when it is 1 to 15, else in a varint after the type.
    fn compact_field(&mut self, code: u8, id: i16) {
        self.next_element();
        let last = match self.nest.last_mut() {
            Some(Nest::Struct { last }) => std::mem::replace(last, id),
            _ => 0,
        };
        let delta = i32::from(id) - i32::from(last);
        if (1..=15).contains(&delta) {
            self.buf.push(((delta as u8) << 4) | code);
        } else {
            self.buf.push(code);
            self.varint(u64::from(zagzig32(i32::from(id))));
        }
    }

    #[inline]
    pub fn stop(&mut self) {
        self.buf.push(TType::Stop as u8);
        if self.protocol == Protocol::Compact {
            self.next_element();
            self.nest.pop();
            // The last element of a struct list ends the list.
            if let Some(Nest::Elements { left: 0 }) = self.nest.last() {
                self.nest.pop();
            }
        }
    }
    pub fn bool(&mut self, v: bool) {
        match (self.protocol, self.bool_field.take()) {
            (Protocol::Binary, _) => self.buf.push(u8::from(v)),
            (Protocol::Compact, Some(id)) => self.compact_field(if v { 1 } else { 2 }, id),
            (Protocol::Compact, None) => self.buf.push(if v { 1 } else { 2 }),
        }
    }
    #[inline]
    pub fn i16(&mut self, v: i16) {
        match self.protocol {
            Protocol::Binary => self.buf.extend_from_slice(&v.to_be_bytes()),
            Protocol::Compact => self.varint(u64::from(zagzig32(i32::from(v)))),
        }
    }
    #[inline]
    pub fn i32(&mut self, v: i32) {
        match self.protocol {
            Protocol::Binary => self.buf.extend_from_slice(&v.to_be_bytes()),
            Protocol::Compact => self.varint(u64::from(zagzig32(v))),
        }
    }
    #[inline]
    pub fn i64(&mut self, v: i64) {
        match self.protocol {
            Protocol::Binary => self.buf.extend_from_slice(&v.to_be_bytes()),
            Protocol::Compact => self.varint(((v << 1) ^ (v >> 63)) as u64),
        }
    }
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }
    /// A length or count: Thrift's are at most `i32::MAX`; cells are far
    /// smaller (the store checks values against `max_value_size` first).
    #[inline]
    fn len(&mut self, len: usize) {
        let len = i32::try_from(len).unwrap_or(i32::MAX);
        match self.protocol {
            Protocol::Binary => self.i32(len),
            Protocol::Compact => self.varint(len as u64),
        }
    }
    #[inline]
    pub fn string(&mut self, v: &[u8]) {
        self.len(v.len());
        self.buf.extend_from_slice(v);
    }
    pub fn list(&mut self, elem: TType, len: usize) {
        match self.protocol {
            Protocol::Binary => {
                self.buf.push(elem as u8);
                self.len(len);
            }
            Protocol::Compact => {
                if len < 15 {
                    self.buf.push(((len as u8) << 4) | elem.compact());
                } else {
                    self.buf.push(0xf0 | elem.compact());
                    self.len(len);
                }
                if elem == TType::Struct && len > 0 {
                    self.nest.push(Nest::Elements { left: len });
                }
            }
        }
    }
    pub fn map(&mut self, key: TType, value: TType, len: usize) {
        match self.protocol {
            Protocol::Binary => {
                self.buf.push(key as u8);
                self.buf.push(value as u8);
                self.len(len);
            }
            Protocol::Compact => {
                self.len(len);
                if len > 0 {
                    self.buf.push((key.compact() << 4) | value.compact());
                }
            }
        }
    }

    // Field shorthands.
    pub fn bool_field(&mut self, id: i16, v: bool) {
        self.field(TType::Bool, id);
        self.bool(v);
    }
    pub fn i32_field(&mut self, id: i16, v: i32) {
        self.field(TType::I32, id);
        self.i32(v);
    }
    #[inline]
    pub fn i64_field(&mut self, id: i16, v: i64) {
        self.field(TType::I64, id);
        self.i64(v);
    }
    /// A binary field: in the binary protocol its 7-byte header and the
    /// bytes in one write, since every cell's family, qualifier and value
    /// is one and a bulk load writes millions.
    #[inline(always)]
    pub fn binary_field(&mut self, id: i16, v: &[u8]) {
        if self.protocol == Protocol::Binary {
            let len = i32::try_from(v.len()).unwrap_or(i32::MAX);
            let mut header = [TType::String as u8, 0, 0, 0, 0, 0, 0];
            header[1..3].copy_from_slice(&id.to_be_bytes());
            header[3..].copy_from_slice(&len.to_be_bytes());
            self.buf.reserve(header.len() + v.len());
            self.buf.extend_from_slice(&header);
            self.buf.extend_from_slice(v);
        } else {
            self.field(TType::String, id);
            self.string(v);
        }
    }
}

/// Zigzag encoding of a 32-bit integer: small magnitudes, small varints.
fn zagzig32(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)) as u32
}

/// A whole call: header, the arguments struct `args` writes, its stop.
pub fn call(protocol: Protocol, name: &str, seq: i32, args: impl FnOnce(&mut Encoder)) -> Vec<u8> {
    let mut buf = Vec::new();
    call_into(&mut buf, protocol, name, seq, args);
    buf
}

/// [`call`], written into `buf` (cleared first): a connection reuses one
/// buffer for its calls, so that a batch of puts is not written into a
/// buffer that grows by doubling every time.
pub fn call_into(buf: &mut Vec<u8>, protocol: Protocol, name: &str, seq: i32, args: impl FnOnce(&mut Encoder)) {
    buf.clear();
    let mut e = Encoder {
        buf: std::mem::take(buf),
        ..Encoder::new(protocol)
    };
    e.message(name, CALL, seq);
    args(&mut e);
    e.stop();
    *buf = e.buf;
}

// ---------------------------------------------------------------------------
// Skimming: how long is the message?

/// What [`Skim::advance`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skimmed {
    /// The message is not complete: at least this many more bytes are needed.
    NeedMore(usize),
    /// The message is complete and this many bytes long.
    Done(usize),
}

/// A value being skimmed, one level of nesting.
#[derive(Clone, Copy, Debug)]
enum Frame {
    /// Fields until `STOP`.
    Struct,
    /// `left` more elements of type `elem`.
    List { elem: TType, left: u32 },
    /// `left` more keys and values, alternating, keys first.
    Map { key: TType, value: TType, left: u64 },
}

/// Finds where a message ends in the bytes received so far, resuming where
/// the previous call stopped. See the module docs.
#[derive(Clone, Debug)]
pub struct Skim {
    protocol: Protocol,
    /// Bytes accepted so far: every token before it is complete.
    pos: usize,
    /// Whether the header has been read.
    header: bool,
    /// The value to read next, if the current frame has announced one.
    pending: Option<TType>,
    stack: [Frame; MAX_DEPTH],
    depth: usize,
}

impl Default for Skim {
    fn default() -> Self {
        Skim::of(Protocol::Binary)
    }
}

impl Skim {
    /// A skim of a new binary message.
    #[cfg(test)]
    pub fn new() -> Self {
        Skim::default()
    }

    /// A skim of a new message in `protocol`.
    pub fn of(protocol: Protocol) -> Self {
        Skim {
            protocol,
            pos: 0,
            header: false,
            pending: None,
            stack: [Frame::Struct; MAX_DEPTH],
            depth: 0,
        }
    }

    /// Goes on over `buf`, all bytes received for this message so far (the
    /// same bytes as before, with more at the end).
    pub fn advance(&mut self, buf: &[u8]) -> Result<Skimmed, DecodeError> {
        loop {
            if self.pos > MAX_MESSAGE {
                return Err(DecodeError::TooLong {
                    what: "the message",
                    len: self.pos,
                    needed: self.pos as u64,
                    left: MAX_MESSAGE,
                    at: self.pos,
                });
            }
            if !self.header {
                let header = match self.protocol {
                    Protocol::Binary => self.binary_header(buf)?,
                    Protocol::Compact => self.compact_header(buf)?,
                };
                match header {
                    Some(len) => {
                        self.pos = len;
                        self.header = true;
                        self.pending = Some(TType::Struct);
                    }
                    None => return Ok(Skimmed::NeedMore(1)),
                }
                continue;
            }
            if let Some(kind) = self.pending {
                let value = match self.protocol {
                    Protocol::Binary => self.binary_value(buf, kind)?,
                    Protocol::Compact => self.compact_value(buf, kind)?,
                };
                match value {
                    Some(len) => {
                        self.pos += len;
                        self.pending = None;
                    }
                    None => return Ok(Skimmed::NeedMore(1)),
                }
                if self.depth == 0 && self.pending.is_none() {
                    return Ok(Skimmed::Done(self.pos));
                }
                continue;
            }
            let Some(top) = self.depth.checked_sub(1).and_then(|i| self.stack.get_mut(i)) else {
                return Ok(Skimmed::Done(self.pos));
            };
            match top {
                Frame::Struct => {
                    let Some(&byte) = buf.get(self.pos) else {
                        return Ok(Skimmed::NeedMore(1));
                    };
                    if byte == TType::Stop as u8 {
                        self.pos += 1;
                        self.depth -= 1;
                    } else {
                        match self.field_header(buf, byte)? {
                            Some((len, kind)) => {
                                self.pos += len;
                                self.pending = kind;
                            }
                            None => return Ok(Skimmed::NeedMore(1)),
                        }
                    }
                }
                Frame::List { elem, left } => {
                    if *left == 0 {
                        self.depth -= 1;
                    } else {
                        *left -= 1;
                        self.pending = Some(*elem);
                    }
                }
                Frame::Map { key, value, left } => {
                    if *left == 0 {
                        self.depth -= 1;
                    } else {
                        self.pending = Some(if *left % 2 == 0 { *key } else { *value });
                        *left -= 1;
                    }
                }
            }
            if self.depth == 0 && self.pending.is_none() {
                return Ok(Skimmed::Done(self.pos));
            }
        }
    }

    /// A field header (not `STOP`) starting with `byte` at `self.pos`: its
    /// length and the type of the value after it (none for a compact bool,
    /// whose value is in the header), `None` if more bytes are needed.
    fn field_header(&self, buf: &[u8], byte: u8) -> Result<Option<(usize, Option<TType>)>, DecodeError> {
        let at = self.pos;
        match self.protocol {
            Protocol::Binary => {
                let kind = TType::from_byte(byte).ok_or(DecodeError::UnknownType { byte, at })?;
                Ok((buf.len() >= at + 3).then_some((3, Some(kind))))
            }
            Protocol::Compact => {
                // Only a whole zero byte is `STOP`.
                let kind = TType::from_compact(byte & 0x0f)
                    .filter(|&kind| kind != TType::Stop)
                    .ok_or(DecodeError::UnknownType { byte, at })?;
                let len = if byte >> 4 != 0 {
                    1
                } else {
                    // The id in a varint of its own.
                    match varint32(buf.get(at + 1..).unwrap_or_default(), at + 1)? {
                        Some((_, n)) => 1 + n,
                        None => return Ok(None),
                    }
                };
                Ok(Some((len, (kind != TType::Bool).then_some(kind))))
            }
        }
    }

    /// The binary header's length, once all of it is there.
    fn binary_header(&self, buf: &[u8]) -> Result<Option<usize>, DecodeError> {
        if let Some(&first) = buf.first()
            && first != 0x80
        {
            return Err(not_thrift(Protocol::Binary, buf));
        }
        let Some(version) = be_i32(buf, 0) else {
            return Ok(None);
        };
        if version as u32 & VERSION_MASK != VERSION_1 {
            return Err(not_thrift(Protocol::Binary, buf));
        }
        let Some(name_len) = be_i32(buf, 4) else {
            return Ok(None);
        };
        let name_len = length(name_len, 4)?;
        check_name(name_len)?;
        let end = 8 + name_len + 4;
        Ok((buf.len() >= end).then_some(end))
    }

    /// The compact header's length (id, version and type, sequence id,
    /// name), once all of it is there.
    fn compact_header(&self, buf: &[u8]) -> Result<Option<usize>, DecodeError> {
        match buf {
            [] => return Ok(None),
            [first, ..] if *first != COMPACT_ID => return Err(not_thrift(Protocol::Compact, buf)),
            [_] => return Ok(None),
            [_, version, ..] if version & 0x1f != COMPACT_VERSION => {
                return Err(not_thrift(Protocol::Compact, buf));
            }
            _ => {}
        }
        let Some((_, seq_len)) = varint32(buf.get(2..).unwrap_or_default(), 2)? else {
            return Ok(None);
        };
        let at = 2 + seq_len;
        let Some((name_len, len_len)) = varint32(buf.get(at..).unwrap_or_default(), at)? else {
            return Ok(None);
        };
        let name_len = length(name_len, at)?;
        check_name(name_len)?;
        let end = at + len_len + name_len;
        Ok((buf.len() >= end).then_some(end))
    }

    /// Starts a binary value of type `kind` at `self.pos`: its length if it
    /// is all there (containers: their header, and a frame pushed), `None`
    /// if more bytes are needed first.
    fn binary_value(&mut self, buf: &[u8], kind: TType) -> Result<Option<usize>, DecodeError> {
        let at = self.pos;
        let have = buf.len().saturating_sub(at);
        let rest = buf.get(at..).unwrap_or_default();
        if let Some(size) = kind.fixed_size(Protocol::Binary) {
            return Ok((have >= size).then_some(size));
        }
        match kind {
            TType::String => {
                let Some(len) = be_i32(rest, 0) else { return Ok(None) };
                let len = length(len, at)?;
                self.within_limit("a string", len, 4 + len, at)?;
                Ok((have - 4 >= len).then_some(4 + len))
            }
            TType::Struct => {
                self.push(Frame::Struct, at)?;
                Ok(Some(0))
            }
            TType::List | TType::Set => {
                let (Some(&elem), Some(len)) = (rest.first(), be_i32(rest, 1)) else {
                    return Ok(None);
                };
                let elem = element_type(elem, len, at)?;
                let count = length(len, at + 1)?;
                self.elements(elem, count, 5, have, at)
            }
            TType::Map => {
                let (Some(&key), Some(&value), Some(len)) = (rest.first(), rest.get(1), be_i32(rest, 2)) else {
                    return Ok(None);
                };
                let key = element_type(key, len, at)?;
                let value = element_type(value, len, at)?;
                let count = length(len, at + 2)?;
                self.entries(key, value, count, 6, have, at)
            }
            // Fixed sizes are handled above; a `STOP` value is nothing.
            _ => Ok(Some(0)),
        }
    }

    /// Starts a compact value of type `kind`, as [`binary_value`](Self::binary_value).
    fn compact_value(&mut self, buf: &[u8], kind: TType) -> Result<Option<usize>, DecodeError> {
        let at = self.pos;
        let have = buf.len().saturating_sub(at);
        let rest = buf.get(at..).unwrap_or_default();
        if let Some(size) = kind.fixed_size(Protocol::Compact) {
            return Ok((have >= size).then_some(size));
        }
        match kind {
            TType::I16 | TType::I32 => Ok(varint32(rest, at)?.map(|(_, n)| n)),
            TType::I64 => Ok(varint(rest, VARINT64, at)?.map(|(_, n)| n)),
            TType::String => {
                let Some((len, n)) = varint32(rest, at)? else {
                    return Ok(None);
                };
                let len = length(len, at)?;
                self.within_limit("a string", len, n + len, at)?;
                Ok((have - n >= len).then_some(n + len))
            }
            TType::Struct => {
                self.push(Frame::Struct, at)?;
                Ok(Some(0))
            }
            TType::List | TType::Set => {
                let Some(&byte) = rest.first() else { return Ok(None) };
                let (len, n) = if byte >> 4 == 15 {
                    match varint32(rest.get(1..).unwrap_or_default(), at + 1)? {
                        Some((len, n)) => (len, 1 + n),
                        None => return Ok(None),
                    }
                } else {
                    (i32::from(byte >> 4), 1)
                };
                let elem = compact_element(byte & 0x0f, len, at)?;
                let count = length(len, at)?;
                self.elements(elem, count, n, have, at)
            }
            TType::Map => {
                let Some((len, n)) = varint32(rest, at)? else {
                    return Ok(None);
                };
                let count = length(len, at)?;
                if count == 0 {
                    return Ok(Some(n));
                }
                let Some(&types) = rest.get(n) else { return Ok(None) };
                let key = compact_element(types >> 4, len, at)?;
                let value = compact_element(types & 0x0f, len, at)?;
                self.entries(key, value, count, n + 1, have, at)
            }
            // Fixed sizes are handled above; a `STOP` value is nothing.
            _ => Ok(Some(0)),
        }
    }

    /// A list's elements after its `header` bytes: the whole list if its
    /// elements are of a fixed size, else a frame pushed for them.
    fn elements(
        &mut self,
        elem: TType,
        count: usize,
        header: usize,
        have: usize,
        at: usize,
    ) -> Result<Option<usize>, DecodeError> {
        // Each element takes at least its type's least size.
        let least = count
            .saturating_mul(elem.min_size(self.protocol))
            .saturating_add(header);
        self.within_limit("a list", count, least, at)?;
        if let Some(size) = elem.fixed_size(self.protocol) {
            let total = count.saturating_mul(size).saturating_add(header);
            return Ok((have >= total).then_some(total));
        }
        self.push(
            Frame::List {
                elem,
                left: count as u32,
            },
            at,
        )?;
        Ok(Some(header))
    }

    /// A map's entries after its `header` bytes, as [`elements`](Self::elements).
    fn entries(
        &mut self,
        key: TType,
        value: TType,
        count: usize,
        header: usize,
        have: usize,
        at: usize,
    ) -> Result<Option<usize>, DecodeError> {
        let least = count
            .saturating_mul(key.min_size(self.protocol) + value.min_size(self.protocol))
            .saturating_add(header);
        self.within_limit("a map", count, least, at)?;
        if let (Some(k), Some(v)) = (key.fixed_size(self.protocol), value.fixed_size(self.protocol)) {
            let total = count.saturating_mul(k + v).saturating_add(header);
            return Ok((have >= total).then_some(total));
        }
        self.push(
            Frame::Map {
                key,
                value,
                left: 2 * count as u64,
            },
            at,
        )?;
        Ok(Some(header))
    }

    /// Refuses a value of `size` bytes at `at` that would end the message
    /// beyond [`MAX_MESSAGE`].
    fn within_limit(&self, what: &'static str, len: usize, size: usize, at: usize) -> Result<(), DecodeError> {
        if at.saturating_add(size) > MAX_MESSAGE {
            return Err(DecodeError::TooLong {
                what,
                len,
                needed: size as u64,
                left: MAX_MESSAGE.saturating_sub(at),
                at,
            });
        }
        Ok(())
    }

    fn push(&mut self, frame: Frame, at: usize) -> Result<(), DecodeError> {
        let slot = self.stack.get_mut(self.depth).ok_or(DecodeError::TooDeep { at })?;
        *slot = frame;
        self.depth += 1;
        Ok(())
    }
}

/// Refuses a method name longer than [`MAX_NAME`].
fn check_name(len: usize) -> Result<(), DecodeError> {
    if len > MAX_NAME {
        return Err(DecodeError::TooLong {
            what: "a method name",
            len,
            needed: len as u64,
            left: MAX_NAME,
            at: 4,
        });
    }
    Ok(())
}

/// A compact container's element type, refused when unknown, or `STOP`
/// with elements.
fn compact_element(code: u8, len: i32, at: usize) -> Result<TType, DecodeError> {
    match TType::from_compact(code) {
        None => Err(DecodeError::UnknownType { byte: code, at }),
        Some(TType::Stop) if len != 0 => Err(DecodeError::StopElements { len, at }),
        Some(t) => Ok(t),
    }
}

// ---------------------------------------------------------------------------
// Reading a complete message

/// Decodes values from one complete message, slicing binary fields out of
/// its buffer.
#[derive(Clone, Debug)]
pub struct Reader {
    buf: Bytes,
    pos: usize,
    depth: usize,
    protocol: Protocol,
    /// Compact: the last field id read in each open struct, by depth.
    last: [i16; MAX_DEPTH + 1],
    /// Compact: the value of the bool field whose header was just read.
    bool_value: Option<bool>,
}

impl Reader {
    /// A reader at the start of `buf`, a binary message.
    #[cfg(test)]
    pub fn new(buf: Bytes) -> Self {
        Reader::of(Protocol::Binary, buf)
    }

    /// A reader at the start of `buf`, a `protocol` message.
    pub fn of(protocol: Protocol, buf: Bytes) -> Self {
        Reader {
            buf,
            pos: 0,
            depth: 0,
            protocol,
            last: [0; MAX_DEPTH + 1],
            bool_value: None,
        }
    }

    /// Where the reader is, for error messages.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes not read yet.
    pub fn left(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let bytes = self
            .buf
            .get(self.pos..self.pos + N)
            .and_then(|b| <[u8; N]>::try_from(b).ok())
            .ok_or(DecodeError::Truncated { at: self.pos })?;
        self.pos += N;
        Ok(bytes)
    }

    /// A varint of at most `max` bytes; the message ending inside it is
    /// [`DecodeError::Truncated`].
    fn varint(&mut self, max: usize) -> Result<u64, DecodeError> {
        let at = self.pos;
        let rest = self.buf.get(at..).unwrap_or_default();
        let (value, len) = varint(rest, max, at)?.ok_or(DecodeError::Truncated { at: self.buf.len() })?;
        self.pos += len;
        Ok(value)
    }

    /// A compact 32-bit varint, as Java reads it into an `int`.
    fn varint32(&mut self) -> Result<i32, DecodeError> {
        let at = self.pos;
        let rest = self.buf.get(at..).unwrap_or_default();
        let (value, len) = varint32(rest, at)?.ok_or(DecodeError::Truncated { at: self.buf.len() })?;
        self.pos += len;
        Ok(value)
    }

    pub fn byte(&mut self) -> Result<u8, DecodeError> {
        let [b] = self.take::<1>()?;
        Ok(b)
    }
    pub fn bool(&mut self) -> Result<bool, DecodeError> {
        match self.protocol {
            Protocol::Binary => Ok(self.byte()? != 0),
            Protocol::Compact => match self.bool_value.take() {
                Some(v) => Ok(v),
                // An element of a container: 1 is true, as libthrift reads it.
                None => Ok(self.byte()? == 1),
            },
        }
    }
    pub fn i16(&mut self) -> Result<i16, DecodeError> {
        match self.protocol {
            Protocol::Binary => self.take().map(i16::from_be_bytes),
            Protocol::Compact => {
                let at = self.pos;
                let v = zigzag32(self.varint32()? as u32);
                i16::try_from(v).map_err(|_| DecodeError::BadVarint { at })
            }
        }
    }
    pub fn i32(&mut self) -> Result<i32, DecodeError> {
        match self.protocol {
            Protocol::Binary => self.take().map(i32::from_be_bytes),
            Protocol::Compact => Ok(zigzag32(self.varint32()? as u32)),
        }
    }
    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        match self.protocol {
            Protocol::Binary => self.take().map(i64::from_be_bytes),
            Protocol::Compact => Ok(zigzag64(self.varint(VARINT64)?)),
        }
    }

    /// A length or count: an `i32`, or a compact varint.
    fn length_value(&mut self) -> Result<i32, DecodeError> {
        match self.protocol {
            Protocol::Binary => self.i32(),
            Protocol::Compact => self.varint32(),
        }
    }

    /// A binary value, as a slice of the message (no copy).
    pub fn binary(&mut self) -> Result<Bytes, DecodeError> {
        let at = self.pos;
        let len = length(self.length_value()?, at)?;
        if len > self.left() {
            return Err(DecodeError::TooLong {
                what: "a string",
                len,
                needed: len as u64,
                left: self.left(),
                at,
            });
        }
        let value = self.buf.slice(self.pos..self.pos + len);
        self.pos += len;
        Ok(value)
    }

    /// A string value, which must be UTF-8.
    pub fn string(&mut self, what: &'static str) -> Result<String, DecodeError> {
        let at = self.pos;
        let bytes = self.binary()?;
        String::from_utf8(bytes.to_vec()).map_err(|_| DecodeError::NotUtf8 { what, at })
    }

    /// A field header; `None` at the end of a struct.
    pub fn field(&mut self) -> Result<Option<(TType, i16)>, DecodeError> {
        let at = self.pos;
        let byte = self.byte()?;
        self.bool_value = None;
        match self.protocol {
            Protocol::Binary => {
                let kind = TType::from_byte(byte).ok_or(DecodeError::UnknownType { byte, at })?;
                if kind == TType::Stop {
                    return Ok(None);
                }
                Ok(Some((kind, self.i16()?)))
            }
            Protocol::Compact => {
                if byte == TType::Stop as u8 {
                    return Ok(None);
                }
                // A type of `STOP` with an id delta is no field.
                let code = byte & 0x0f;
                let kind = TType::from_compact(code)
                    .filter(|&kind| kind != TType::Stop)
                    .ok_or(DecodeError::UnknownType { byte, at })?;
                let last = self.last.get(self.depth).copied().unwrap_or(0);
                let id = match byte >> 4 {
                    // The id in a varint of its own.
                    0 => self.i16()?,
                    delta => last.wrapping_add(i16::from(delta)),
                };
                if let Some(slot) = self.last.get_mut(self.depth) {
                    *slot = id;
                }
                if kind == TType::Bool {
                    self.bool_value = Some(code == 1);
                }
                Ok(Some((kind, id)))
            }
        }
    }

    /// Checks a field's wire type against the IDL's.
    pub fn expect(&self, what: &'static str, expected: TType, got: TType) -> Result<(), DecodeError> {
        if got == expected {
            Ok(())
        } else {
            Err(DecodeError::WrongType {
                what,
                expected,
                got,
                at: self.pos,
            })
        }
    }

    /// Enters a struct or container: one level deeper, at most [`MAX_DEPTH`].
    pub fn enter(&mut self) -> Result<(), DecodeError> {
        if self.depth >= MAX_DEPTH {
            return Err(DecodeError::TooDeep { at: self.pos });
        }
        self.depth += 1;
        if let Some(slot) = self.last.get_mut(self.depth) {
            *slot = 0;
        }
        Ok(())
    }

    /// Leaves what [`enter`](Self::enter) entered.
    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// The least size of an element that takes at least `binary` bytes in
    /// the binary protocol and `compact` in the compact one.
    pub fn least(&self, binary: usize, compact: usize) -> usize {
        match self.protocol {
            Protocol::Binary => binary,
            Protocol::Compact => compact,
        }
    }

    /// A list or set header: element type and count. The count is checked
    /// against the bytes left, each element taking at least `min_size`
    /// bytes (at least its type's minimum), before the caller reserves room.
    pub fn list(&mut self, min_size: usize) -> Result<(TType, usize), DecodeError> {
        let at = self.pos;
        let byte = self.byte()?;
        let (elem, len) = match self.protocol {
            Protocol::Binary => {
                let len = self.i32()?;
                (element_type(byte, len, at)?, len)
            }
            Protocol::Compact => {
                let len = match byte >> 4 {
                    15 => self.varint32()?,
                    n => i32::from(n),
                };
                (compact_element(byte & 0x0f, len, at)?, len)
            }
        };
        let count = length(len, at + 1)?;
        self.check_count("a list", count, min_size.max(elem.min_size(self.protocol)), at)?;
        Ok((elem, count))
    }

    /// A map header: key type, value type and count, the count checked
    /// against the bytes left as [`list`](Self::list) checks it.
    pub fn map(&mut self) -> Result<(TType, TType, usize), DecodeError> {
        let at = self.pos;
        let (key, value, len) = match self.protocol {
            Protocol::Binary => {
                let (key, value, len) = (self.byte()?, self.byte()?, self.i32()?);
                (element_type(key, len, at)?, element_type(value, len, at)?, len)
            }
            Protocol::Compact => {
                let len = self.varint32()?;
                if len == 0 {
                    // An empty map has no types byte.
                    (TType::Stop, TType::Stop, 0)
                } else {
                    let types = self.byte()?;
                    (
                        compact_element(types >> 4, len, at)?,
                        compact_element(types & 0x0f, len, at)?,
                        len,
                    )
                }
            }
        };
        let count = length(len, at)?;
        let each = key.min_size(self.protocol) + value.min_size(self.protocol);
        self.check_count("a map", count, each, at)?;
        Ok((key, value, count))
    }

    /// Fails unless the bytes left can hold `count` elements of at least
    /// `each` bytes: a container's count checked before room is reserved.
    pub fn check_count(&self, what: &'static str, count: usize, each: usize, at: usize) -> Result<(), DecodeError> {
        let needed = count as u64 * each as u64;
        if needed > self.left() as u64 {
            return Err(DecodeError::TooLong {
                what,
                len: count,
                needed,
                left: self.left(),
                at,
            });
        }
        Ok(())
    }

    /// Skips a value of any type, at most [`MAX_DEPTH`] levels deep.
    pub fn skip(&mut self, kind: TType) -> Result<(), DecodeError> {
        // A compact bool field's value was in its header.
        if kind == TType::Bool && self.bool_value.take().is_some() {
            return Ok(());
        }
        if let Some(size) = kind.fixed_size(self.protocol) {
            if size > self.left() {
                return Err(DecodeError::Truncated { at: self.pos });
            }
            self.pos += size;
            return Ok(());
        }
        match kind {
            TType::I16 | TType::I32 => {
                self.varint32()?;
            }
            TType::I64 => {
                self.varint(VARINT64)?;
            }
            TType::String => {
                self.binary()?;
            }
            TType::Struct => {
                self.enter()?;
                while let Some((k, _)) = self.field()? {
                    self.skip(k)?;
                }
                self.leave();
            }
            TType::Map => {
                let (key, value, count) = self.map()?;
                self.enter()?;
                for _ in 0..count {
                    self.skip(key)?;
                    self.skip(value)?;
                }
                self.leave();
            }
            TType::Set | TType::List => {
                let (elem, count) = self.list(0)?;
                self.enter()?;
                for _ in 0..count {
                    self.skip(elem)?;
                }
                self.leave();
            }
            // Fixed sizes are handled above; a `STOP` value is nothing.
            _ => {}
        }
        Ok(())
    }

    /// A message header: `(name, type, sequence id)`.
    pub fn message(&mut self) -> Result<(Bytes, u8, i32), DecodeError> {
        let protocol = self.protocol;
        let (kind, seq, name) = match protocol {
            Protocol::Binary => {
                let version = self.i32().map_err(|_| not_thrift(protocol, &self.buf))? as u32;
                if version & VERSION_MASK != VERSION_1 {
                    return Err(not_thrift(protocol, &self.buf));
                }
                let name = self.binary()?;
                let seq = self.i32()?;
                ((version & 0xFF) as u8, seq, name)
            }
            Protocol::Compact => {
                let id = self.byte().map_err(|_| not_thrift(protocol, &self.buf))?;
                let version = self.byte().map_err(|_| not_thrift(protocol, &self.buf))?;
                if id != COMPACT_ID || version & 0x1f != COMPACT_VERSION {
                    return Err(not_thrift(protocol, &self.buf));
                }
                let seq = self.varint32()?;
                let name = self.binary()?;
                (version >> 5, seq, name)
            }
        };
        check_name(name.len())?;
        Ok((name, kind, seq))
    }

    /// Fails if bytes are left after the message.
    pub fn finish(&self) -> Result<(), DecodeError> {
        match self.left() {
            0 => Ok(()),
            extra => Err(DecodeError::TrailingBytes { extra }),
        }
    }
}

/// A `TApplicationException`: the gateway could not run the call at all
/// (an unknown method, arguments it could not read, a bug of its own).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApplicationException {
    /// Field 1, the message.
    pub message: String,
    /// Field 2, the kind (`UNKNOWN_METHOD` = 1, `INTERNAL_ERROR` = 6, ...).
    pub kind: i32,
}

/// Opens the reply to call `name` #`seq`: a reader at its result struct, or
/// the exception the gateway sent instead.
pub fn open_reply(
    protocol: Protocol,
    message: Bytes,
    name: &'static str,
    seq: i32,
) -> Result<Result<Reader, ApplicationException>, DecodeError> {
    let (reply_name, reply_seq, opened) = open_any_reply(protocol, message)?;
    if reply_seq != seq || reply_name != name.as_bytes() {
        return Err(DecodeError::WrongReply {
            name: String::from_utf8_lossy(&reply_name).into_owned(),
            seq: reply_seq,
            expected: name,
            expected_seq: seq,
        });
    }
    Ok(opened)
}

/// Opens a reply to whatever call it names: `(method, sequence id, what
/// [`open_reply`] gives)`.
pub fn open_any_reply(
    protocol: Protocol,
    message: Bytes,
) -> Result<(Bytes, i32, Result<Reader, ApplicationException>), DecodeError> {
    let mut r = Reader::of(protocol, message);
    let (reply_name, kind, reply_seq) = r.message()?;
    let opened = match kind {
        REPLY => Ok(r),
        EXCEPTION => {
            // TApplicationException { 1: string message, 2: i32 type }
            let mut e = ApplicationException::default();
            r.enter()?;
            while let Some((k, id)) = r.field()? {
                match id {
                    1 => {
                        r.expect("TApplicationException.message", TType::String, k)?;
                        e.message = String::from_utf8_lossy(&r.binary()?).into_owned();
                    }
                    2 => {
                        r.expect("TApplicationException.type", TType::I32, k)?;
                        e.kind = r.i32()?;
                    }
                    _ => r.skip(k)?,
                }
            }
            r.leave();
            r.finish()?;
            Err(e)
        }
        other => return Err(DecodeError::UnexpectedMessage { kind: other }),
    };
    Ok((reply_name, reply_seq, opened))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reply header for `name` #1.
    fn header(name: &str) -> Encoder {
        let mut e = Encoder::default();
        e.message(name, REPLY, 1);
        e
    }

    fn skim_all(buf: &[u8]) -> Result<Skimmed, DecodeError> {
        Skim::new().advance(buf)
    }

    /// Feeds `buf` one byte at a time: the skim must say "more" until the
    /// last byte, then the full length, never rescanning (checked by the
    /// position only ever growing).
    fn skim_bytewise(buf: &[u8]) -> Result<usize, DecodeError> {
        let mut skim = Skim::new();
        for end in 0..=buf.len() {
            match skim.advance(&buf[..end])? {
                Skimmed::Done(len) => return Ok(len),
                Skimmed::NeedMore(n) => assert!(n >= 1 && end < buf.len(), "needs {n} at {end} of {}", buf.len()),
            }
        }
        panic!("never done")
    }

    #[test]
    fn skim_finds_the_end_of_nested_values_bytewise() {
        let mut e = header("get");
        e.field(TType::Struct, 0);
        e.binary_field(1, b"row");
        e.field(TType::List, 2);
        e.list(TType::Struct, 2);
        for v in [&b"x"[..], b"yy"] {
            e.binary_field(3, v);
            e.i64_field(4, 7);
            e.stop();
        }
        e.field(TType::Map, 9);
        e.buf.extend_from_slice(&[TType::String as u8, TType::List as u8]);
        e.i32(1);
        e.string(b"k");
        e.list(TType::I32, 2);
        e.i32(1);
        e.i32(2);
        e.field(TType::List, 10);
        e.list(TType::I64, 3);
        for i in 0..3 {
            e.i64(i);
        }
        e.stop();
        e.stop();
        let len = e.buf.len();
        e.buf.extend_from_slice(b"next message");
        assert_eq!(skim_bytewise(&e.buf[..len]), Ok(len));
        assert_eq!(skim_all(&e.buf), Ok(Skimmed::Done(len)));
    }

    #[test]
    fn skim_refuses_deep_nesting_without_recursion() {
        // 40,000 nested structs: 120 KB, the reply that overflowed the stack.
        let mut e = header("get");
        for _ in 0..40_000 {
            e.field(TType::Struct, 1);
        }
        assert!(matches!(skim_all(&e.buf), Err(DecodeError::TooDeep { .. })));
        let mut r = Reader::new(Bytes::from(e.buf));
        r.message().unwrap();
        assert!(matches!(r.skip(TType::Struct), Err(DecodeError::TooDeep { .. })));
    }

    #[test]
    fn exactly_max_depth_is_accepted() {
        let mut e = header("get");
        // The result struct is level 1; 63 more nested structs.
        for _ in 1..MAX_DEPTH {
            e.field(TType::Struct, 1);
        }
        for _ in 0..MAX_DEPTH {
            e.stop();
        }
        let len = e.buf.len();
        assert_eq!(skim_all(&e.buf), Ok(Skimmed::Done(len)));
        let mut r = Reader::new(Bytes::from(e.buf));
        r.message().unwrap();
        r.skip(TType::Struct).unwrap();
        r.finish().unwrap();
    }

    /// 12 bytes that spun the CPU for seconds: a list (or map) of STOP or
    /// unknown elements declared 2^31-1 long.
    #[test]
    fn containers_of_stop_or_unknown_elements_are_refused_at_once() {
        for (container, elems) in [
            (TType::List, &[0u8][..]),
            (TType::Set, &[1]),
            (TType::List, &[200]),
            (TType::Map, &[0, 0]),
            (TType::Map, &[11, 7]),
        ] {
            let mut e = header("get");
            e.field(container, 0);
            e.buf.extend_from_slice(elems);
            e.i32(i32::MAX);
            let started = std::time::Instant::now();
            let skimmed = skim_all(&e.buf);
            assert!(
                matches!(
                    skimmed,
                    Err(DecodeError::StopElements { .. } | DecodeError::UnknownType { .. })
                ),
                "{container:?} {elems:?}: {skimmed:?}"
            );
            let mut r = Reader::new(Bytes::from(e.buf));
            r.message().unwrap();
            r.enter().unwrap();
            let (k, _) = r.field().unwrap().unwrap();
            assert!(r.skip(k).is_err());
            // Bounded work, not a speed check: a count taken from the bytes
            // would loop for billions of elements (minutes).
            assert!(started.elapsed() < std::time::Duration::from_secs(2));
        }
    }

    #[test]
    fn an_empty_container_of_stop_elements_is_harmless() {
        let mut e = header("get");
        e.field(TType::List, 0);
        e.list(TType::Stop, 0);
        e.stop();
        assert_eq!(skim_all(&e.buf), Ok(Skimmed::Done(e.buf.len())));
    }

    #[test]
    fn counts_are_checked_against_the_bytes_left() {
        let mut e = header("get");
        e.field(TType::List, 0);
        e.list(TType::Struct, 1_000_000);
        e.buf.extend_from_slice(&[0; 100]);
        let mut r = Reader::new(Bytes::from(e.buf));
        r.message().unwrap();
        r.enter().unwrap();
        r.field().unwrap();
        assert!(matches!(r.list(0), Err(DecodeError::TooLong { len: 1_000_000, .. })));
    }

    #[test]
    fn values_declared_beyond_the_message_limit_are_refused_at_once() {
        let mut e = header("get");
        e.field(TType::String, 0);
        e.i32(i32::MAX);
        assert!(matches!(skim_all(&e.buf), Err(DecodeError::TooLong { .. })));
        let mut e = header("get");
        e.field(TType::List, 0);
        e.list(TType::I64, i32::MAX as usize);
        assert!(matches!(skim_all(&e.buf), Err(DecodeError::TooLong { .. })));
        // Within the limit, the skim waits for the bytes.
        let mut e = header("get");
        e.field(TType::String, 0);
        e.i32(1 << 20);
        assert!(matches!(skim_all(&e.buf), Ok(Skimmed::NeedMore(_))));
    }

    /// Found by the fuzzer: the skim refused a 1028-byte method name, the
    /// reader took it.
    #[test]
    fn skim_and_reader_agree_on_long_method_names() {
        for len in [MAX_NAME, MAX_NAME + 1] {
            let mut e = Encoder::default();
            e.message(&"m".repeat(len), REPLY, 1);
            e.stop();
            let skimmed = skim_all(&e.buf);
            let read = Reader::new(Bytes::from(e.buf)).message();
            assert_eq!(skimmed.is_ok(), read.is_ok(), "{len}: {skimmed:?} / {read:?}");
        }
    }

    #[test]
    fn negative_lengths_are_refused() {
        let mut e = header("get");
        e.field(TType::String, 0);
        e.i32(-1);
        assert!(matches!(
            skim_all(&e.buf),
            Err(DecodeError::NegativeLength { len: -1, .. })
        ));
        let mut r = Reader::new(Bytes::from(e.buf));
        r.message().unwrap();
        r.field().unwrap();
        assert!(matches!(r.binary(), Err(DecodeError::NegativeLength { .. })));
    }

    #[test]
    fn binary_fields_are_slices_of_the_message() {
        let mut e = header("get");
        e.string(b"value");
        let message = Bytes::from(e.buf);
        let mut r = Reader::new(message.clone());
        r.message().unwrap();
        let value = r.binary().unwrap();
        assert_eq!(value, "value");
        let inside = message.as_ptr_range();
        assert!(inside.contains(&value.as_ptr()), "not a slice of the message");
    }

    #[test]
    fn not_binary_is_said_at_the_first_byte() {
        // A framed reply starts with its length; a compact one with 0x82.
        for start in [&[0u8, 0, 0, 30, 0x80, 1][..], &[0x82, 0x41], b"HTTP/1.1 400"] {
            assert!(
                matches!(skim_all(start), Err(DecodeError::NotBinary { .. })),
                "{start:?}"
            );
        }
    }

    #[test]
    fn the_reply_must_answer_the_call() {
        let mut e = header("get");
        e.stop();
        let message = Bytes::from(e.buf);
        assert!(open_reply(Protocol::Binary, message.clone(), "get", 1).unwrap().is_ok());
        assert!(matches!(
            open_reply(Protocol::Binary, message.clone(), "get", 2),
            Err(DecodeError::WrongReply { .. })
        ));
        assert!(matches!(
            open_reply(Protocol::Binary, message, "put", 1),
            Err(DecodeError::WrongReply { .. })
        ));
    }
    // -----------------------------------------------------------------------
    // The compact protocol

    /// A compact reply header for `name` #1.
    fn compact_header(name: &str) -> Encoder {
        let mut e = Encoder::new(Protocol::Compact);
        e.message(name, REPLY, 1);
        e
    }

    fn compact_skim(buf: &[u8]) -> Result<Skimmed, DecodeError> {
        Skim::of(Protocol::Compact).advance(buf)
    }

    /// A reader past the header of a compact message.
    fn compact_reader(buf: Vec<u8>) -> Reader {
        let mut r = Reader::of(Protocol::Compact, Bytes::from(buf));
        r.message().unwrap();
        r
    }

    /// Field ids as deltas and as varints (jumps over 15, going back,
    /// negative ids), bools in field headers and in lists, nested structs
    /// with ids of their own, struct lists: what the encoder writes, the
    /// skim measures and the reader reads back, byte by byte too.
    #[test]
    fn compact_round_trip_of_every_shape() {
        let mut e = compact_header("get");
        e.i32_field(1, -7);
        e.i64_field(20, i64::MIN);
        e.bool_field(21, true);
        e.bool_field(3, false);
        e.field(TType::Struct, -2);
        e.binary_field(1, b"inner");
        e.stop();
        e.field(TType::List, 4);
        e.list(TType::Struct, 16);
        for i in 0..16 {
            e.i64_field(2, i);
            e.stop();
        }
        e.field(TType::List, 5);
        e.list(TType::Bool, 2);
        e.bool(true);
        e.bool(false);
        e.field(TType::Map, 6);
        e.map(TType::String, TType::String, 1);
        e.string(b"k");
        e.string(b"v");
        e.field(TType::Map, 7);
        e.map(TType::String, TType::String, 0);
        e.field(TType::I16, 8);
        e.i16(i16::MIN);
        e.stop();
        let len = e.buf.len();
        assert_eq!(compact_skim(&e.buf), Ok(Skimmed::Done(len)));
        let mut skim = Skim::of(Protocol::Compact);
        for end in 0..len {
            assert!(matches!(skim.advance(&e.buf[..end]), Ok(Skimmed::NeedMore(_))), "{end}");
        }
        assert_eq!(skim.advance(&e.buf), Ok(Skimmed::Done(len)));

        let mut r = compact_reader(e.buf);
        r.enter().unwrap();
        assert_eq!(r.field(), Ok(Some((TType::I32, 1))));
        assert_eq!(r.i32(), Ok(-7));
        assert_eq!(r.field(), Ok(Some((TType::I64, 20))));
        assert_eq!(r.i64(), Ok(i64::MIN));
        assert_eq!(r.field(), Ok(Some((TType::Bool, 21))));
        assert_eq!(r.bool(), Ok(true));
        assert_eq!(r.field(), Ok(Some((TType::Bool, 3))));
        // A bool field skipped consumes nothing after its header.
        r.skip(TType::Bool).unwrap();
        assert_eq!(r.field(), Ok(Some((TType::Struct, -2))));
        r.enter().unwrap();
        assert_eq!(r.field(), Ok(Some((TType::String, 1))));
        assert_eq!(r.binary().unwrap(), "inner");
        assert_eq!(r.field(), Ok(None));
        r.leave();
        assert_eq!(r.field(), Ok(Some((TType::List, 4))));
        let (elem, count) = r.list(0).unwrap();
        assert_eq!((elem, count), (TType::Struct, 16));
        for i in 0..16 {
            r.enter().unwrap();
            assert_eq!(r.field(), Ok(Some((TType::I64, 2))));
            assert_eq!(r.i64(), Ok(i));
            assert_eq!(r.field(), Ok(None));
            r.leave();
        }
        assert_eq!(r.field(), Ok(Some((TType::List, 5))));
        assert_eq!(r.list(0), Ok((TType::Bool, 2)));
        assert_eq!((r.bool(), r.bool()), (Ok(true), Ok(false)));
        assert_eq!(r.field(), Ok(Some((TType::Map, 6))));
        assert_eq!(r.map(), Ok((TType::String, TType::String, 1)));
        assert_eq!(
            (r.binary().unwrap(), r.binary().unwrap()),
            (Bytes::from("k"), Bytes::from("v"))
        );
        assert_eq!(r.field(), Ok(Some((TType::Map, 7))));
        assert_eq!(r.map().map(|m| m.2), Ok(0));
        assert_eq!(r.field(), Ok(Some((TType::I16, 8))));
        assert_eq!(r.i16(), Ok(i16::MIN));
        assert_eq!(r.field(), Ok(None));
        r.leave();
        r.finish().unwrap();
    }

    #[test]
    fn compact_varints_longer_than_their_type_are_refused() {
        // An i32 of 6 bytes, an i64 of 11: never written by libthrift.
        for (kind, bytes) in [(TType::I32, &[0xff; 6][..]), (TType::I64, &[0xff; 11])] {
            let mut e = compact_header("get");
            e.buf.push(0x10 | kind.compact());
            e.buf.extend_from_slice(bytes);
            e.stop();
            assert!(
                matches!(compact_skim(&e.buf), Err(DecodeError::BadVarint { .. })),
                "{kind:?}"
            );
            let mut r = compact_reader(e.buf);
            r.enter().unwrap();
            let (k, _) = r.field().unwrap().unwrap();
            assert!(matches!(r.skip(k), Err(DecodeError::BadVarint { .. })), "{kind:?}");
        }
        // Five bytes of more than 32 bits, and an i16 out of its range.
        let mut e = compact_header("get");
        e.buf.push(0x10 | TType::I32.compact());
        e.buf.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x7f]);
        e.stop();
        assert!(matches!(compact_skim(&e.buf), Err(DecodeError::BadVarint { .. })));
        let mut e = compact_header("get");
        e.field(TType::I32, 1);
        e.i32(1 << 20);
        e.stop();
        let mut r = compact_reader(e.buf);
        r.enter().unwrap();
        r.field().unwrap();
        assert!(matches!(r.i16(), Err(DecodeError::BadVarint { .. })));
    }

    #[test]
    fn compact_lengths_are_checked_before_anything_is_reserved() {
        // A string declared 2^31-1 bytes long, one of 2^31 (negative as Java
        // reads it), a list of a million structs in 100 bytes.
        let mut e = compact_header("get");
        e.field(TType::String, 1);
        e.buf.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x07]);
        assert!(matches!(compact_skim(&e.buf), Err(DecodeError::TooLong { .. })));
        let mut r = compact_reader(e.buf);
        r.enter().unwrap();
        r.field().unwrap();
        assert!(matches!(r.binary(), Err(DecodeError::TooLong { .. })));

        let mut e = compact_header("get");
        e.field(TType::String, 1);
        e.buf.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x08]);
        assert!(matches!(compact_skim(&e.buf), Err(DecodeError::NegativeLength { .. })));

        let mut e = compact_header("get");
        e.field(TType::List, 1);
        e.list(TType::Struct, 1_000_000);
        e.buf.extend_from_slice(&[0; 100]);
        let mut r = compact_reader(e.buf);
        r.enter().unwrap();
        r.field().unwrap();
        assert!(matches!(r.list(0), Err(DecodeError::TooLong { len: 1_000_000, .. })));
    }

    /// A list or map of STOP or unknown elements declared 2^31-1 long is
    /// refused at once, as in the binary protocol.
    #[test]
    fn compact_containers_of_stop_or_unknown_elements_are_refused_at_once() {
        let huge = [0xff, 0xff, 0xff, 0xff, 0x07];
        let cases: [(TType, Vec<u8>); 4] = [
            (TType::List, [&[0xf0][..], &huge].concat()),
            (TType::Set, [&[0xfd][..], &huge].concat()),
            (TType::Map, [&huge[..], &[0x00]].concat()),
            (TType::Map, [&huge[..], &[0x8e]].concat()),
        ];
        for (container, bytes) in cases {
            let mut e = compact_header("get");
            e.buf.push(0x10 | container.compact());
            e.buf.extend_from_slice(&bytes);
            let started = std::time::Instant::now();
            let skimmed = compact_skim(&e.buf);
            assert!(
                matches!(
                    skimmed,
                    Err(DecodeError::StopElements { .. } | DecodeError::UnknownType { .. })
                ),
                "{container:?} {bytes:02x?}: {skimmed:?}"
            );
            let mut r = compact_reader(e.buf);
            r.enter().unwrap();
            let (k, _) = r.field().unwrap().unwrap();
            assert!(r.skip(k).is_err());
            // Bounded work, not a speed check: a count taken from the bytes
            // would loop for billions of elements (minutes).
            assert!(started.elapsed() < std::time::Duration::from_secs(2));
        }
    }

    #[test]
    fn compact_skim_refuses_deep_nesting_without_recursion() {
        let mut e = compact_header("get");
        for _ in 0..40_000 {
            e.field(TType::Struct, 1);
        }
        assert!(matches!(compact_skim(&e.buf), Err(DecodeError::TooDeep { .. })));
        let mut r = compact_reader(e.buf);
        assert!(matches!(r.skip(TType::Struct), Err(DecodeError::TooDeep { .. })));
    }

    /// A field byte whose type is STOP but with an id delta is not a stop.
    #[test]
    fn compact_stop_type_with_a_delta_is_refused() {
        let mut e = compact_header("get");
        e.buf.push(0x10);
        e.stop();
        assert!(matches!(compact_skim(&e.buf), Err(DecodeError::UnknownType { .. })));
        let mut r = compact_reader(e.buf);
        r.enter().unwrap();
        assert!(matches!(r.field(), Err(DecodeError::UnknownType { .. })));
    }

    #[test]
    fn each_protocol_names_the_other_at_the_first_byte() {
        let mut binary = header("get");
        binary.stop();
        let mut compact = compact_header("get");
        compact.stop();
        assert!(matches!(compact_skim(&binary.buf), Err(DecodeError::NotCompact { .. })));
        assert!(matches!(skim_all(&compact.buf), Err(DecodeError::NotBinary { .. })));
        assert!(matches!(
            Reader::of(Protocol::Compact, Bytes::from(binary.buf)).message(),
            Err(DecodeError::NotCompact { .. })
        ));
        // A compact header of another version.
        let mut other = compact.buf.clone();
        other[1] = (other[1] & 0xe0) | 2;
        assert!(matches!(compact_skim(&other), Err(DecodeError::NotCompact { .. })));
        // Fed one byte at a time, the compact reply is measured whole.
        let mut skim = Skim::of(Protocol::Compact);
        for end in 0..compact.buf.len() {
            assert!(matches!(skim.advance(&compact.buf[..end]), Ok(Skimmed::NeedMore(_))));
        }
        assert_eq!(skim.advance(&compact.buf), Ok(Skimmed::Done(compact.buf.len())));
    }
}
