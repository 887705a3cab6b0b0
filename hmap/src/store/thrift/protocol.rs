//! Thrift's binary protocol over a buffered socket: what HBase's Thrift
//! gateways speak by default (`TBinaryProtocol`, strict, unframed).
//!
//! Only what hmap needs: writing structs field by field, and reading them
//! back with every field hmap does not know skipped, so newer servers with
//! more fields still work.

use std::io::{self, BufReader, BufWriter, Read, Write};
use std::net::TcpStream;

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
    fn from_byte(b: u8) -> io::Result<TType> {
        Ok(match b {
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
            other => return Err(invalid(format!("unknown thrift type {other}"))),
        })
    }
}

/// Message types.
pub const CALL: u8 = 1;
pub const REPLY: u8 = 2;
pub const EXCEPTION: u8 = 3;
const VERSION_1: u32 = 0x8001_0000;

pub fn invalid(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

/// Writes a message into a buffer; sent whole by [`Connection::call`].
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
        // Thrift strings are at most i32::MAX bytes; cells are far smaller.
        self.i32(v.len() as i32);
        self.buf.extend_from_slice(v);
    }
    pub fn list(&mut self, elem: TType, len: usize) {
        self.buf.push(elem as u8);
        self.i32(len as i32);
    }
    /// A map header: key type, value type and length.
    pub fn map(&mut self, key: TType, value: TType, len: usize) {
        self.buf.push(key as u8);
        self.buf.push(value as u8);
        self.i32(len as i32);
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

/// Reads from the socket.
pub struct Decoder<'a> {
    pub input: &'a mut BufReader<TcpStream>,
}

impl Decoder<'_> {
    fn bytes<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let mut b = [0u8; N];
        self.input.read_exact(&mut b)?;
        Ok(b)
    }
    pub fn byte(&mut self) -> io::Result<u8> {
        Ok(self.bytes::<1>()?[0])
    }
    pub fn bool(&mut self) -> io::Result<bool> {
        Ok(self.byte()? != 0)
    }
    pub fn i16(&mut self) -> io::Result<i16> {
        Ok(i16::from_be_bytes(self.bytes()?))
    }
    pub fn i32(&mut self) -> io::Result<i32> {
        Ok(i32::from_be_bytes(self.bytes()?))
    }
    pub fn i64(&mut self) -> io::Result<i64> {
        Ok(i64::from_be_bytes(self.bytes()?))
    }
    pub fn binary(&mut self) -> io::Result<Vec<u8>> {
        let len = self.i32()?;
        let len = usize::try_from(len).map_err(|_| invalid(format!("negative length {len}")))?;
        // A cell is at most the gateway's frame; refuse absurd lengths
        // rather than allocating them.
        if len > 256 * 1024 * 1024 {
            return Err(invalid(format!("a {len}-byte string is beyond any cell")));
        }
        let mut v = vec![0u8; len];
        self.input.read_exact(&mut v)?;
        Ok(v)
    }
    pub fn string(&mut self) -> io::Result<String> {
        String::from_utf8(self.binary()?).map_err(|_| invalid("a thrift string is not UTF-8"))
    }
    /// A field header; `None` at the end of a struct.
    pub fn field(&mut self) -> io::Result<Option<(TType, i16)>> {
        let kind = TType::from_byte(self.byte()?)?;
        if kind == TType::Stop {
            return Ok(None);
        }
        Ok(Some((kind, self.i16()?)))
    }
    /// A list header: element type and length.
    pub fn list(&mut self) -> io::Result<(TType, usize)> {
        let elem = TType::from_byte(self.byte()?)?;
        let len = self.i32()?;
        Ok((elem, usize::try_from(len).map_err(|_| invalid("negative list length"))?))
    }
    /// A map header: key type, value type and length.
    pub fn map(&mut self) -> io::Result<(TType, TType, usize)> {
        let key = TType::from_byte(self.byte()?)?;
        let value = TType::from_byte(self.byte()?)?;
        let len = self.i32()?;
        Ok((
            key,
            value,
            usize::try_from(len).map_err(|_| invalid("negative map length"))?,
        ))
    }
    /// Skips a value of any type.
    pub fn skip(&mut self, kind: TType) -> io::Result<()> {
        match kind {
            TType::Stop => {}
            TType::Bool | TType::Byte => {
                self.byte()?;
            }
            TType::I16 => {
                self.i16()?;
            }
            TType::I32 => {
                self.i32()?;
            }
            TType::I64 | TType::Double => {
                self.i64()?;
            }
            TType::String => {
                self.binary()?;
            }
            TType::Struct => {
                while let Some((k, _)) = self.field()? {
                    self.skip(k)?;
                }
            }
            TType::Map => {
                let key = TType::from_byte(self.byte()?)?;
                let value = TType::from_byte(self.byte()?)?;
                let len = self.i32()?;
                for _ in 0..len {
                    self.skip(key)?;
                    self.skip(value)?;
                }
            }
            TType::Set | TType::List => {
                let (elem, len) = self.list()?;
                for _ in 0..len {
                    self.skip(elem)?;
                }
            }
        }
        Ok(())
    }
    /// A message header: `(name, type, sequence id)`.
    pub fn message(&mut self) -> io::Result<(String, u8, i32)> {
        let header = self.i32()? as u32;
        if header & 0xFFFF_0000 != VERSION_1 {
            return Err(invalid(format!("not a thrift binary message (header {header:#x})")));
        }
        let name = self.string()?;
        let seq = self.i32()?;
        Ok((name, (header & 0xFF) as u8, seq))
    }
}

/// One connection to a gateway.
pub struct Connection {
    reader: BufReader<TcpStream>,
    writer: BufWriter<TcpStream>,
    seq: i32,
    /// When the connection was last used, to check idle ones before reuse.
    pub last_used: std::time::Instant,
}

impl Connection {
    pub fn open(stream: TcpStream) -> io::Result<Self> {
        stream.set_nodelay(true)?;
        Ok(Connection {
            reader: BufReader::with_capacity(64 * 1024, stream.try_clone()?),
            writer: BufWriter::with_capacity(64 * 1024, stream),
            seq: 0,
            last_used: std::time::Instant::now(),
        })
    }

    /// Whether the gateway closed the connection while it sat idle: a
    /// non-blocking peek sees the end of the stream (or an error) at once.
    pub fn peer_closed(&self) -> bool {
        let stream = self.reader.get_ref();
        if !self.reader.buffer().is_empty() || stream.set_nonblocking(true).is_err() {
            return true;
        }
        let closed = match stream.peek(&mut [0u8; 1]) {
            Ok(_) => true, // the end of the stream, or bytes nobody asked for
            Err(e) => e.kind() != io::ErrorKind::WouldBlock,
        };
        closed || stream.set_nonblocking(false).is_err()
    }

    /// Sends a call whose arguments `args` writes, then reads the reply with
    /// `reply`, which gets the decoder positioned at the result struct.
    ///
    /// The outer error is the connection's (it is then unusable); the inner
    /// one a `TApplicationException`, the gateway's report of a call it
    /// failed (the connection stays usable).
    pub fn call<T>(
        &mut self,
        name: &str,
        args: impl FnOnce(&mut Encoder),
        reply: impl FnOnce(&mut Decoder<'_>) -> io::Result<T>,
    ) -> io::Result<Result<T, String>> {
        self.seq = self.seq.wrapping_add(1);
        let mut e = Encoder::default();
        e.message(name, CALL, self.seq);
        args(&mut e);
        e.stop();
        self.writer.write_all(&e.buf)?;
        self.writer.flush()?;
        let mut d = Decoder {
            input: &mut self.reader,
        };
        let (_, kind, seq) = d.message()?;
        if seq != self.seq {
            return Err(invalid(format!("reply {seq} to call {}", self.seq)));
        }
        if kind == EXCEPTION {
            // TApplicationException { 1: string message, 2: i32 type }
            let mut message = String::new();
            while let Some((k, id)) = d.field()? {
                match (id, k) {
                    (1, TType::String) => message = d.string()?,
                    _ => d.skip(k)?,
                }
            }
            self.last_used = std::time::Instant::now();
            return Ok(Err(format!("the gateway failed {name}: {message}")));
        }
        if kind != REPLY {
            return Err(invalid(format!("unexpected message type {kind}")));
        }
        let result = reply(&mut d)?;
        self.last_used = std::time::Instant::now();
        Ok(Ok(result))
    }
}
