//! Thrift's binary protocol (`TBinaryProtocol`, strict), sans-IO: requests
//! are written into a byte buffer, replies decoded from one. Nothing here
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
//! Only the binary protocol on an unframed transport is spoken; framing and
//! the compact protocol would be other implementations of the same two steps.

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

    /// The encoded size of a fixed-size value.
    fn fixed_size(self) -> Option<usize> {
        match self {
            TType::Bool | TType::Byte => Some(1),
            TType::I16 => Some(2),
            TType::I32 => Some(4),
            TType::I64 | TType::Double => Some(8),
            _ => None,
        }
    }

    /// The fewest bytes a value of this type takes: what a declared count
    /// of them is checked against.
    pub fn min_size(self) -> usize {
        match self {
            TType::Stop => 0,
            TType::Struct => 1,
            TType::String => 4,
            TType::Set | TType::List => 5,
            TType::Map => 6,
            fixed => fixed.fixed_size().unwrap_or(1),
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

/// The start of a message, as [`DecodeError::NotBinary`] shows it.
fn not_binary(buf: &[u8]) -> DecodeError {
    DecodeError::NotBinary {
        start: buf.iter().take(8).copied().collect(),
    }
}

// ---------------------------------------------------------------------------
// Writing

/// Writes a message into a buffer, which the transport sends whole.
#[derive(Default)]
pub struct Encoder {
    pub buf: Vec<u8>,
}

impl Encoder {
    pub fn message(&mut self, name: &str, kind: u8, seq: i32) {
        self.i32((VERSION_1 | u32::from(kind)) as i32);
        self.string(name.as_bytes());
        self.i32(seq);
    }
    pub fn field(&mut self, kind: TType, id: i16) {
        self.buf.push(kind as u8);
        self.i16(id);
    }
    pub fn stop(&mut self) {
        self.buf.push(TType::Stop as u8);
    }
    pub fn bool(&mut self, v: bool) {
        self.buf.push(u8::from(v));
    }
    pub fn i16(&mut self, v: i16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    pub fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    pub fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    pub fn string(&mut self, v: &[u8]) {
        // Thrift strings are at most i32::MAX bytes; cells are far smaller
        // (the store checks values against `max_value_size` first).
        self.i32(i32::try_from(v.len()).unwrap_or(i32::MAX));
        self.buf.extend_from_slice(v);
    }
    pub fn list(&mut self, elem: TType, len: usize) {
        self.buf.push(elem as u8);
        self.i32(i32::try_from(len).unwrap_or(i32::MAX));
    }
    pub fn map(&mut self, key: TType, value: TType, len: usize) {
        self.buf.push(key as u8);
        self.buf.push(value as u8);
        self.i32(i32::try_from(len).unwrap_or(i32::MAX));
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
    pub fn i64_field(&mut self, id: i16, v: i64) {
        self.field(TType::I64, id);
        self.i64(v);
    }
    pub fn binary_field(&mut self, id: i16, v: &[u8]) {
        self.field(TType::String, id);
        self.string(v);
    }
}

/// A whole call: header, the arguments struct `args` writes, its stop.
pub fn call(name: &str, seq: i32, args: impl FnOnce(&mut Encoder)) -> Vec<u8> {
    let mut e = Encoder::default();
    e.message(name, CALL, seq);
    args(&mut e);
    e.stop();
    e.buf
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
        Skim {
            pos: 0,
            header: false,
            pending: None,
            stack: [Frame::Struct; MAX_DEPTH],
            depth: 0,
        }
    }
}

impl Skim {
    /// A skim of a new message.
    pub fn new() -> Self {
        Skim::default()
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
                match self.header(buf)? {
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
                match self.value(buf, kind)? {
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
                        let kind = TType::from_byte(byte).ok_or(DecodeError::UnknownType { byte, at: self.pos })?;
                        if buf.len() < self.pos + 3 {
                            return Ok(Skimmed::NeedMore(self.pos + 3 - buf.len()));
                        }
                        self.pos += 3;
                        self.pending = Some(kind);
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

    /// The header's length, once all of it is there.
    fn header(&self, buf: &[u8]) -> Result<Option<usize>, DecodeError> {
        if let Some(&first) = buf.first()
            && first != 0x80
        {
            return Err(not_binary(buf));
        }
        let Some(version) = be_i32(buf, 0) else {
            return Ok(None);
        };
        if version as u32 & VERSION_MASK != VERSION_1 {
            return Err(not_binary(buf));
        }
        let Some(name_len) = be_i32(buf, 4) else {
            return Ok(None);
        };
        let name_len = length(name_len, 4)?;
        if name_len > MAX_NAME {
            return Err(DecodeError::TooLong {
                what: "a method name",
                len: name_len,
                needed: name_len as u64,
                left: MAX_NAME,
                at: 4,
            });
        }
        let end = 8 + name_len + 4;
        Ok((buf.len() >= end).then_some(end))
    }

    /// Starts a value of type `kind` at `self.pos`: its length if it is all
    /// there (containers: their header, and a frame pushed), `None` if more
    /// bytes are needed first.
    fn value(&mut self, buf: &[u8], kind: TType) -> Result<Option<usize>, DecodeError> {
        let at = self.pos;
        let have = buf.len().saturating_sub(at);
        let rest = buf.get(at..).unwrap_or_default();
        if let Some(size) = kind.fixed_size() {
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
                // Each element takes at least its type's least size.
                let least = count.saturating_mul(elem.min_size()).saturating_add(5);
                self.within_limit("a list", count, least, at)?;
                if let Some(size) = elem.fixed_size() {
                    let total = count.saturating_mul(size).saturating_add(5);
                    return Ok((have >= total).then_some(total));
                }
                self.push(
                    Frame::List {
                        elem,
                        left: count as u32,
                    },
                    at,
                )?;
                Ok(Some(5))
            }
            TType::Map => {
                let (Some(&key), Some(&value), Some(len)) = (rest.first(), rest.get(1), be_i32(rest, 2)) else {
                    return Ok(None);
                };
                let key = element_type(key, len, at)?;
                let value = element_type(value, len, at)?;
                let count = length(len, at + 2)?;
                let least = count
                    .saturating_mul(key.min_size() + value.min_size())
                    .saturating_add(6);
                self.within_limit("a map", count, least, at)?;
                if let (Some(k), Some(v)) = (key.fixed_size(), value.fixed_size()) {
                    let total = count.saturating_mul(k + v).saturating_add(6);
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
                Ok(Some(6))
            }
            // Fixed sizes are handled above; a `STOP` value is nothing.
            _ => Ok(Some(0)),
        }
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

// ---------------------------------------------------------------------------
// Reading a complete message

/// Decodes values from one complete message, slicing binary fields out of
/// its buffer.
#[derive(Clone, Debug)]
pub struct Reader {
    buf: Bytes,
    pos: usize,
    depth: usize,
}

impl Reader {
    /// A reader at the start of `buf`.
    pub fn new(buf: Bytes) -> Self {
        Reader { buf, pos: 0, depth: 0 }
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

    pub fn byte(&mut self) -> Result<u8, DecodeError> {
        let [b] = self.take::<1>()?;
        Ok(b)
    }
    pub fn bool(&mut self) -> Result<bool, DecodeError> {
        Ok(self.byte()? != 0)
    }
    pub fn i16(&mut self) -> Result<i16, DecodeError> {
        self.take().map(i16::from_be_bytes)
    }
    pub fn i32(&mut self) -> Result<i32, DecodeError> {
        self.take().map(i32::from_be_bytes)
    }
    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        self.take().map(i64::from_be_bytes)
    }

    /// A binary value, as a slice of the message (no copy).
    pub fn binary(&mut self) -> Result<Bytes, DecodeError> {
        let at = self.pos;
        let len = length(self.i32()?, at)?;
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

    fn kind(&self, byte: u8, at: usize) -> Result<TType, DecodeError> {
        TType::from_byte(byte).ok_or(DecodeError::UnknownType { byte, at })
    }

    /// A field header; `None` at the end of a struct.
    pub fn field(&mut self) -> Result<Option<(TType, i16)>, DecodeError> {
        let at = self.pos;
        let byte = self.byte()?;
        let kind = self.kind(byte, at)?;
        if kind == TType::Stop {
            return Ok(None);
        }
        Ok(Some((kind, self.i16()?)))
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
        Ok(())
    }

    /// Leaves what [`enter`](Self::enter) entered.
    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// A list or set header: element type and count. The count is checked
    /// against the bytes left, each element taking at least `min_size`
    /// bytes (at least its type's minimum), before the caller reserves room.
    pub fn list(&mut self, min_size: usize) -> Result<(TType, usize), DecodeError> {
        let at = self.pos;
        let byte = self.byte()?;
        let len = self.i32()?;
        let elem = element_type(byte, len, at)?;
        let count = length(len, at + 1)?;
        self.check_count("a list", count, min_size.max(elem.min_size()), at)?;
        Ok((elem, count))
    }

    /// A map header: key type, value type and count, the count checked
    /// against the bytes left as [`list`](Self::list) checks it.
    pub fn map(&mut self) -> Result<(TType, TType, usize), DecodeError> {
        let at = self.pos;
        let (key, value, len) = (self.byte()?, self.byte()?, self.i32()?);
        let key = element_type(key, len, at)?;
        let value = element_type(value, len, at)?;
        let count = length(len, at + 2)?;
        self.check_count("a map", count, key.min_size() + value.min_size(), at)?;
        Ok((key, value, count))
    }

    fn check_count(&self, what: &'static str, count: usize, each: usize, at: usize) -> Result<(), DecodeError> {
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
        if let Some(size) = kind.fixed_size() {
            if size > self.left() {
                return Err(DecodeError::Truncated { at: self.pos });
            }
            self.pos += size;
            return Ok(());
        }
        match kind {
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
        let version = self.i32().map_err(|_| not_binary(&self.buf))? as u32;
        if version & VERSION_MASK != VERSION_1 {
            return Err(not_binary(&self.buf));
        }
        let name = self.binary()?;
        if name.len() > MAX_NAME {
            return Err(DecodeError::TooLong {
                what: "a method name",
                len: name.len(),
                needed: name.len() as u64,
                left: MAX_NAME,
                at: 4,
            });
        }
        let seq = self.i32()?;
        Ok((name, (version & 0xFF) as u8, seq))
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
    message: Bytes,
    name: &'static str,
    seq: i32,
) -> Result<Result<Reader, ApplicationException>, DecodeError> {
    let (reply_name, reply_seq, opened) = open_any_reply(message)?;
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
pub fn open_any_reply(message: Bytes) -> Result<(Bytes, i32, Result<Reader, ApplicationException>), DecodeError> {
    let mut r = Reader::new(message);
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
            assert!(started.elapsed() < std::time::Duration::from_millis(100));
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
        assert!(open_reply(message.clone(), "get", 1).unwrap().is_ok());
        assert!(matches!(
            open_reply(message.clone(), "get", 2),
            Err(DecodeError::WrongReply { .. })
        ));
        assert!(matches!(
            open_reply(message, "put", 1),
            Err(DecodeError::WrongReply { .. })
        ));
    }
}
