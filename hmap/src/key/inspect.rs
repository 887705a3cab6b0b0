//! The key inspector: decode any key of a schema into named, dynamically
//! typed parts, to read salted or binary keys while debugging.

use std::fmt;

use bytes::Bytes;
#[cfg(feature = "chrono")]
use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
#[cfg(feature = "uuid")]
use uuid::Uuid;

use super::codec::{KeyCursor, ReadPart, encode_part, write_plain};
use super::part::{BinaryReader, FromKeyPart, KeyPart, PartKind, Width, read_hex, write_hex};
use super::printable::{Printable, parse_printable};
use super::tuple::KeyTuple;
use super::{KeyError, KeyFormat, KeySchema, PartError, PartSpec, Segment};

/// A key part's value, whatever its type: what the inspector reads, and a key
/// that can be built at run time (`Vec<PartValue>` is a [`KeyTuple`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
#[allow(missing_docs)] // one variant per PartKind, named alike
pub enum PartValue {
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    U128(u128),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    I128(i128),
    F32(f32),
    F64(f64),
    Bool(bool),
    Str(String),
    Bytes(Bytes),
    FixedBytes(Vec<u8>),
    #[cfg(feature = "uuid")]
    Uuid(Uuid),
    #[cfg(feature = "chrono")]
    DateTime(DateTime<Utc>),
    #[cfg(feature = "chrono")]
    Date(NaiveDate),
}

impl PartValue {
    /// The kind of part this value fits.
    pub fn kind(&self) -> PartKind {
        match self {
            PartValue::U8(_) => PartKind::U8,
            PartValue::U16(_) => PartKind::U16,
            PartValue::U32(_) => PartKind::U32,
            PartValue::U64(_) => PartKind::U64,
            PartValue::U128(_) => PartKind::U128,
            PartValue::I8(_) => PartKind::I8,
            PartValue::I16(_) => PartKind::I16,
            PartValue::I32(_) => PartKind::I32,
            PartValue::I64(_) => PartKind::I64,
            PartValue::I128(_) => PartKind::I128,
            PartValue::F32(_) => PartKind::F32,
            PartValue::F64(_) => PartKind::F64,
            PartValue::Bool(_) => PartKind::Bool,
            PartValue::Str(_) => PartKind::Str,
            PartValue::Bytes(_) => PartKind::Bytes,
            PartValue::FixedBytes(v) => PartKind::FixedBytes(v.len()),
            #[cfg(feature = "uuid")]
            PartValue::Uuid(_) => PartKind::Uuid,
            #[cfg(feature = "chrono")]
            PartValue::DateTime(_) => PartKind::DateTime,
            #[cfg(feature = "chrono")]
            PartValue::Date(_) => PartKind::Date,
        }
    }
}

/// Runs `$body` with `$v` bound to the typed value inside a [`PartValue`];
/// fixed byte arrays, whose length is only known at run time, go through
/// [`RawFixed`].
macro_rules! with_typed {
    ($value:expr, $v:ident => $body:expr) => {
        match $value {
            PartValue::U8($v) => $body,
            PartValue::U16($v) => $body,
            PartValue::U32($v) => $body,
            PartValue::U64($v) => $body,
            PartValue::U128($v) => $body,
            PartValue::I8($v) => $body,
            PartValue::I16($v) => $body,
            PartValue::I32($v) => $body,
            PartValue::I64($v) => $body,
            PartValue::I128($v) => $body,
            PartValue::F32($v) => $body,
            PartValue::F64($v) => $body,
            PartValue::Bool($v) => $body,
            PartValue::Str($v) => $body,
            PartValue::Bytes($v) => $body,
            PartValue::FixedBytes(bytes) => {
                let $v = &RawFixed(bytes);
                $body
            }
            #[cfg(feature = "uuid")]
            PartValue::Uuid($v) => $body,
            #[cfg(feature = "chrono")]
            PartValue::DateTime($v) => $body,
            #[cfg(feature = "chrono")]
            PartValue::Date($v) => $body,
        }
    };
}

impl KeyTuple for [PartValue] {
    fn arity(&self) -> usize {
        self.len()
    }
    fn encode_part(&self, index: usize, spec: &PartSpec, format: KeyFormat, out: &mut Vec<u8>) -> Result<(), KeyError> {
        let value = self.get(index).ok_or(KeyError::Arity {
            expected: index + 1,
            given: self.len(),
        })?;
        let kind = value.kind();
        with_typed!(value, v => encode_part(v, kind, spec, format, out))
    }
    fn write_plain(&self, index: usize, spec: &PartSpec, format: KeyFormat, out: &mut Vec<u8>) -> Result<(), KeyError> {
        let value = self.get(index).ok_or(KeyError::Arity {
            expected: index + 1,
            given: self.len(),
        })?;
        let kind = value.kind();
        with_typed!(value, v => write_plain(v, kind, spec, format, out))
    }
}

impl KeyTuple for Vec<PartValue> {
    fn arity(&self) -> usize {
        self.len()
    }
    fn encode_part(&self, index: usize, spec: &PartSpec, format: KeyFormat, out: &mut Vec<u8>) -> Result<(), KeyError> {
        self[..].encode_part(index, spec, format, out)
    }
    fn write_plain(&self, index: usize, spec: &PartSpec, format: KeyFormat, out: &mut Vec<u8>) -> Result<(), KeyError> {
        self[..].write_plain(index, spec, format, out)
    }
}

/// A `[u8; N]` whose `N` is only known at run time. Its `KIND` is never
/// consulted: callers pass `PartKind::FixedBytes(len)`.
#[derive(Debug)]
struct RawFixed<'a>(&'a [u8]);

impl KeyPart for RawFixed<'_> {
    const KIND: PartKind = PartKind::FixedBytes(0);
    fn write_binary(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
        out.extend_from_slice(self.0);
        Ok(())
    }
    fn write_text(&self, _width: Width, out: &mut Vec<u8>) -> Result<(), PartError> {
        write_hex(self.0, out);
        Ok(())
    }
}

/// Reads any kind into a [`PartValue`].
struct DynReader(PartKind);

macro_rules! dyn_read {
    ($kind:expr, $read:ident($arg:expr), fixed => $fixed:expr, uuid => $uuid:expr) => {
        match $kind {
            PartKind::U8 => u8::$read($arg).map(PartValue::U8),
            PartKind::U16 => u16::$read($arg).map(PartValue::U16),
            PartKind::U32 => u32::$read($arg).map(PartValue::U32),
            PartKind::U64 => u64::$read($arg).map(PartValue::U64),
            PartKind::U128 => u128::$read($arg).map(PartValue::U128),
            PartKind::I8 => i8::$read($arg).map(PartValue::I8),
            PartKind::I16 => i16::$read($arg).map(PartValue::I16),
            PartKind::I32 => i32::$read($arg).map(PartValue::I32),
            PartKind::I64 => i64::$read($arg).map(PartValue::I64),
            PartKind::I128 => i128::$read($arg).map(PartValue::I128),
            PartKind::F32 => f32::$read($arg).map(PartValue::F32),
            PartKind::F64 => f64::$read($arg).map(PartValue::F64),
            PartKind::Bool => bool::$read($arg).map(PartValue::Bool),
            PartKind::Str => String::$read($arg).map(PartValue::Str),
            PartKind::Bytes => Bytes::$read($arg).map(PartValue::Bytes),
            PartKind::FixedBytes(_) => $fixed.map(PartValue::FixedBytes),
            #[cfg(feature = "uuid")]
            PartKind::Uuid => Uuid::$read($arg).map(PartValue::Uuid),
            // Without the type: its 16 bytes, or its text.
            #[cfg(not(feature = "uuid"))]
            PartKind::Uuid => $uuid,
            #[cfg(feature = "chrono")]
            PartKind::DateTime => DateTime::<Utc>::$read($arg).map(PartValue::DateTime),
            #[cfg(feature = "chrono")]
            PartKind::Date => NaiveDate::$read($arg).map(PartValue::Date),
            // Without the types: milliseconds and days as numbers.
            #[cfg(not(feature = "chrono"))]
            PartKind::DateTime => i64::$read($arg).map(PartValue::I64),
            #[cfg(not(feature = "chrono"))]
            PartKind::Date => i32::$read($arg).map(PartValue::I32),
        }
    };
}

impl ReadPart for DynReader {
    type Value = PartValue;
    fn kind(&self) -> PartKind {
        self.0
    }
    fn binary(&self, input: &mut BinaryReader<'_>) -> Result<PartValue, PartError> {
        let len = self.0.binary_len().unwrap_or(0);
        dyn_read!(self.0, read_binary(input), fixed => input.take_vec(len), uuid => input.take_vec(16).map(PartValue::FixedBytes))
    }
    fn text(&self, text: &[u8]) -> Result<PartValue, PartError> {
        dyn_read!(self.0, read_text(text), fixed => read_hex(text), uuid => String::read_text(text).map(PartValue::Str))
    }
    fn millis(&self, millis: i64) -> Result<PartValue, PartError> {
        match self.0 {
            #[cfg(feature = "chrono")]
            PartKind::DateTime => DateTime::<Utc>::from_millis(millis).map(PartValue::DateTime),
            #[cfg(not(feature = "chrono"))]
            PartKind::DateTime => Ok(PartValue::I64(millis)),
            PartKind::I64 => Ok(PartValue::I64(millis)),
            PartKind::U64 => u64::from_millis(millis).map(PartValue::U64),
            kind => Err(PartError::Unsupported {
                kind,
                what: "reverse_ts",
            }),
        }
    }
    fn string(&self, text: String) -> Result<PartValue, PartError> {
        match self.0 {
            PartKind::Str => Ok(PartValue::Str(text)),
            kind => Err(PartError::Unsupported { kind, what: "reversed" }),
        }
    }
}

impl fmt::Display for PartValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PartValue::Str(s) => write!(f, "{s:?}"),
            PartValue::Bytes(b) => write!(f, "{:?}", Printable(b)),
            PartValue::FixedBytes(b) => write!(f, "{:?}", Printable(b)),
            #[cfg(feature = "chrono")]
            PartValue::DateTime(t) => f.write_str(&t.to_rfc3339_opts(SecondsFormat::Millis, true)),
            #[cfg(feature = "uuid")]
            PartValue::Uuid(u) => write!(f, "{u}"),
            #[cfg(feature = "chrono")]
            PartValue::Date(d) => write!(f, "{d}"),
            PartValue::F32(v) => write!(f, "{v:?}"),
            PartValue::F64(v) => write!(f, "{v:?}"),
            other => with_typed!(other, v => write!(f, "{v:?}")),
        }
    }
}

/// One segment of an inspected key.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum InspectedSegment {
    /// A key part, by name.
    Part {
        /// The part's name.
        name: String,
        /// Its value.
        value: PartValue,
    },
    /// The salt bucket.
    Salt(u16),
    /// The hash prefix, as stored.
    HashPrefix(Vec<u8>),
    /// A literal, as stored.
    Literal(Vec<u8>),
}

/// A decoded key: its segments in key order. `Display` shows
/// `salt=3 user_id="u42" at=2023-11-14T22:13:20.000Z`; the alternate form
/// (`{:#}`) shows one segment a line.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyInspection(pub Vec<InspectedSegment>);

impl KeyInspection {
    /// The value of the part with that name.
    pub fn part(&self, name: &str) -> Option<&PartValue> {
        self.0.iter().find_map(|s| match s {
            InspectedSegment::Part { name: n, value } if n == name => Some(value),
            _ => None,
        })
    }
}

impl fmt::Display for KeyInspection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, seg) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(if f.alternate() { "\n" } else { " " })?;
            }
            match seg {
                InspectedSegment::Part { name, value } => write!(f, "{name}={value}")?,
                InspectedSegment::Salt(b) => write!(f, "salt={b}")?,
                InspectedSegment::HashPrefix(h) => write!(f, "hash_prefix={:?}", Printable(h))?,
                InspectedSegment::Literal(l) => write!(f, "literal={:?}", Printable(l))?,
            }
        }
        Ok(())
    }
}

impl KeySchema {
    /// Decodes any key of this schema into its named segments, checking its
    /// salt and hash prefix.
    ///
    /// ```
    /// use hmap::key::{KeyFormat, KeySchema, PartKind, PartSpec, PartValue, Segment};
    ///
    /// let schema = KeySchema::new(KeyFormat::Binary, vec![
    ///     Segment::Salt { buckets: 16, by: vec![0].into() },
    ///     Segment::Part(PartSpec::new("user_id", PartKind::Str)),
    ///     Segment::Part(PartSpec::new("seq", PartKind::U32).desc()),
    /// ])?;
    /// let key = schema.encode(&("u42", 7u32))?;
    /// let shown = schema.inspect(&key)?;
    /// assert_eq!(shown.part("seq"), Some(&PartValue::U32(7)));
    /// // Python agrees on the bucket: zlib.crc32(b"u42") % 16 == 14.
    /// assert_eq!(shown.to_string(), "salt=14 user_id=\"u42\" seq=7");
    /// # Ok::<(), hmap::key::KeyError>(())
    /// ```
    pub fn inspect(&self, key: &[u8]) -> Result<KeyInspection, KeyError> {
        let mut cursor = KeyCursor::new(self, key);
        let mut values = Vec::with_capacity(self.part_count());
        for spec in self.parts() {
            values.push(cursor.part_with(&DynReader(spec.kind))?);
        }
        cursor.finish()?;
        cursor.verify(&values[..])?;
        let mut derived = cursor.derived_segments().peekable();
        let mut values = values.into_iter();
        let mut out = Vec::with_capacity(self.segments().len());
        for (index, seg) in self.segments().iter().enumerate() {
            let stored = match derived.next_if(|(i, _)| *i == index) {
                Some((_, bytes)) => bytes,
                None => &[],
            };
            out.push(match seg {
                Segment::Part(spec) => InspectedSegment::Part {
                    name: spec.name.to_string(),
                    // One value was read for each part above.
                    value: values.next().ok_or(KeyError::Arity {
                        expected: self.part_count(),
                        given: index,
                    })?,
                },
                Segment::Salt { .. } => InspectedSegment::Salt(match self.format() {
                    KeyFormat::Binary => stored.first().copied().map_or(0, u16::from),
                    KeyFormat::Text { .. } => u16::read_text(stored).unwrap_or(0),
                }),
                Segment::HashPrefix { .. } => InspectedSegment::HashPrefix(stored.to_vec()),
                Segment::Literal(_) => InspectedSegment::Literal(stored.to_vec()),
            });
        }
        Ok(KeyInspection(out))
    }

    /// [`inspect`](Self::inspect) for a key in the printable form HBase's
    /// shell shows (`\x00u42\x00\x00`).
    pub fn inspect_printable(&self, printable: &str) -> Result<KeyInspection, KeyError> {
        self.inspect(&parse_printable(printable))
    }
}
