//! Single key parts: the [`KeyPart`] / [`FromKeyPart`] traits and their
//! implementations for every supported type.
//!
//! Each type knows two renderings of itself, both *ascending*:
//! - binary: order-preserving and self-delimiting bytes;
//! - text: a readable, zero-padded rendering for text keys.
//!
//! Modifiers (`desc`, `reverse_ts`, `reversed`) are applied around these by the
//! composite codec in [`super::codec`], so a new part type only has to get the
//! ascending forms right.

use std::fmt;

use bytes::Bytes;
#[cfg(feature = "chrono")]
use chrono::{DateTime, NaiveDate, Utc};
#[cfg(feature = "uuid")]
use uuid::Uuid;

use super::error::PartError;

/// What a key part holds. Stored in the [`PartSpec`](super::PartSpec) so that a
/// key can be inspected without the Rust types at hand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PartKind {
    /// `u8`
    U8,
    /// `u16`
    U16,
    /// `u32`
    U32,
    /// `u64`
    U64,
    /// `u128`
    U128,
    /// `i8`
    I8,
    /// `i16`
    I16,
    /// `i32`
    I32,
    /// `i64`
    I64,
    /// `i128`
    I128,
    /// `f32`
    F32,
    /// `f64`
    F64,
    /// `bool`
    Bool,
    /// `String` / `&str`
    Str,
    /// `Vec<u8>` / `Bytes` / `&[u8]`, variable length
    Bytes,
    /// `[u8; N]`
    FixedBytes(usize),
    /// `uuid::Uuid`
    Uuid,
    /// `chrono::DateTime<Utc>`, stored as milliseconds since the Unix epoch
    DateTime,
    /// `chrono::NaiveDate`, stored as days since 1970-01-01
    Date,
}

impl PartKind {
    /// Whether `reverse_ts` applies: the kinds that hold milliseconds.
    pub const fn is_timestamp(self) -> bool {
        matches!(self, PartKind::DateTime | PartKind::I64 | PartKind::U64)
    }

    /// The length of the ascending binary encoding, when it is fixed.
    pub const fn binary_len(self) -> Option<usize> {
        Some(match self {
            PartKind::U8 | PartKind::I8 | PartKind::Bool => 1,
            PartKind::U16 | PartKind::I16 => 2,
            PartKind::U32 | PartKind::I32 | PartKind::F32 | PartKind::Date => 4,
            PartKind::U64 | PartKind::I64 | PartKind::F64 | PartKind::DateTime => 8,
            PartKind::U128 | PartKind::I128 | PartKind::Uuid => 16,
            PartKind::FixedBytes(n) => n,
            PartKind::Str | PartKind::Bytes => return None,
        })
    }

    /// The number of decimal digits of the largest value, for numeric kinds:
    /// the default text width.
    pub const fn max_digits(self) -> Option<u16> {
        Some(match self {
            PartKind::U8 | PartKind::I8 => 3,
            PartKind::U16 | PartKind::I16 => 5,
            PartKind::U32 | PartKind::I32 => 10,
            PartKind::U64 => 20,
            PartKind::I64 => 19,
            PartKind::U128 | PartKind::I128 => 39,
            // Milliseconds: 13 digits last until the year 2286.
            PartKind::DateTime => 13,
            _ => return None,
        })
    }

    /// The characters a text rendering uses; `desc` in text complements them.
    pub(crate) const fn text_alphabet(self) -> TextAlphabet {
        match self {
            PartKind::U8
            | PartKind::U16
            | PartKind::U32
            | PartKind::U64
            | PartKind::U128
            | PartKind::I8
            | PartKind::I16
            | PartKind::I32
            | PartKind::I64
            | PartKind::I128
            | PartKind::Bool
            | PartKind::DateTime
            | PartKind::Date => TextAlphabet::Decimal,
            PartKind::Bytes | PartKind::FixedBytes(_) | PartKind::Uuid => TextAlphabet::Hex,
            PartKind::Str => TextAlphabet::Free,
            PartKind::F32 | PartKind::F64 => TextAlphabet::None,
        }
    }

    /// The length of the text rendering for a given width, when it is fixed.
    pub(crate) const fn text_len(self, width: Width) -> Option<usize> {
        match (self, width) {
            (_, Width::Variable) => None,
            (PartKind::Bool, _) => Some(1),
            (PartKind::Date, _) => Some(8),
            (PartKind::Uuid, _) => Some(36),
            (PartKind::FixedBytes(n), _) => Some(2 * n),
            (PartKind::Str | PartKind::Bytes | PartKind::F32 | PartKind::F64, _) => None,
            (_, Width::Fixed(n)) => Some(n as usize),
            (kind, Width::Natural) => match kind.max_digits() {
                Some(d) => Some(d as usize),
                None => None,
            },
        }
    }
}

impl fmt::Display for PartKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            PartKind::U8 => "u8",
            PartKind::U16 => "u16",
            PartKind::U32 => "u32",
            PartKind::U64 => "u64",
            PartKind::U128 => "u128",
            PartKind::I8 => "i8",
            PartKind::I16 => "i16",
            PartKind::I32 => "i32",
            PartKind::I64 => "i64",
            PartKind::I128 => "i128",
            PartKind::F32 => "f32",
            PartKind::F64 => "f64",
            PartKind::Bool => "bool",
            PartKind::Str => "string",
            PartKind::Bytes => "bytes",
            PartKind::FixedBytes(n) => return write!(f, "[u8; {n}]"),
            PartKind::Uuid => "uuid",
            PartKind::DateTime => "datetime",
            PartKind::Date => "date",
        };
        f.write_str(name)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TextAlphabet {
    /// `0-9`: `desc` maps each digit d to 9 - d.
    Decimal,
    /// `0-9a-f`: `desc` maps each nibble n to 15 - n.
    Hex,
    /// Any UTF-8 but the separator: no `desc` in text.
    Free,
    /// No text rendering at all.
    None,
}

/// How wide a numeric part is written in a text key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Width {
    /// Zero-padded to the digits of the type's largest value (`u32`: 10,
    /// `u64`: 20, `i64`: 19, timestamps: 13). Keeps numeric order.
    #[default]
    Natural,
    /// Zero-padded to exactly this many digits (`001` is `Fixed(3)`); a value
    /// with more digits is an error. Keeps numeric order.
    Fixed(u16),
    /// No padding (`uid_42`): readable, but `10` sorts before `9`. For
    /// existing tables that were written that way.
    Variable,
}

/// A value that can be written as one part of a rowkey.
///
/// Implemented for the integers, `f32`/`f64`, `bool`, `str`/`String`,
/// `[u8]`/`Vec<u8>`/[`Bytes`], `[u8; N]`, [`Uuid`], `DateTime<Utc>` and
/// [`NaiveDate`], and for references to any of them. Implement it (and
/// [`FromKeyPart`]) for a newtype by delegating to the inner value.
///
/// Both methods write the *ascending* form; the composite codec applies the
/// part's modifiers.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a rowkey part",
    label = "not a key part type",
    note = "key parts are integers, f32/f64, bool, String/&str, Vec<u8>/Bytes/[u8; N], uuid::Uuid, chrono::DateTime<Utc> and chrono::NaiveDate; a newtype can implement `hmap::key::KeyPart` by delegating"
)]
pub trait KeyPart {
    /// The kind recorded in the schema; a value of another kind is refused.
    const KIND: PartKind;

    /// Appends the ascending, self-delimiting binary encoding.
    fn write_binary(&self, out: &mut Vec<u8>) -> Result<(), PartError>;

    /// Appends the ascending text rendering.
    fn write_text(&self, width: Width, out: &mut Vec<u8>) -> Result<(), PartError>;

    /// Appends the bytes that salts and hash prefixes hash in binary keys: the
    /// raw bytes for strings and byte strings, the binary encoding otherwise.
    fn write_plain(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
        self.write_binary(out)
    }

    /// Milliseconds since the Unix epoch, for kinds that can be `reverse_ts`.
    fn to_millis(&self) -> Option<i64> {
        None
    }

    /// The text, for kinds that can be `reversed`.
    fn as_str(&self) -> Option<&str> {
        None
    }
}

/// A key part that can be read back from a stored key.
pub trait FromKeyPart: KeyPart + Sized {
    /// Reads the ascending binary encoding.
    fn read_binary(input: &mut BinaryReader<'_>) -> Result<Self, PartError>;

    /// Parses the ascending text rendering (exactly the part's characters).
    fn read_text(text: &[u8]) -> Result<Self, PartError>;

    /// Builds the value from milliseconds, for `reverse_ts` kinds.
    fn from_millis(_millis: i64) -> Result<Self, PartError> {
        Err(PartError::Unsupported {
            kind: Self::KIND,
            what: "reverse_ts",
        })
    }

    /// Builds the value from a string, for `reversed` kinds.
    fn from_string(_text: String) -> Result<Self, PartError> {
        Err(PartError::Unsupported {
            kind: Self::KIND,
            what: "reversed",
        })
    }
}

/// Reads binary key parts, undoing a `desc` complement on the fly.
#[derive(Debug)]
pub struct BinaryReader<'a> {
    bytes: &'a [u8],
    pos: usize,
    invert: u8,
}

impl<'a> BinaryReader<'a> {
    /// A reader over ascending bytes.
    pub fn new(bytes: &'a [u8]) -> Self {
        BinaryReader {
            bytes,
            pos: 0,
            invert: 0,
        }
    }

    pub(crate) fn with_invert(bytes: &'a [u8], descending: bool) -> Self {
        BinaryReader {
            bytes,
            pos: 0,
            invert: if descending { 0xFF } else { 0 },
        }
    }

    /// How many bytes have been read.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Reads exactly `N` bytes.
    #[inline(always)]
    pub fn take<const N: usize>(&mut self) -> Result<[u8; N], PartError> {
        let end = self.pos.checked_add(N).ok_or(PartError::Truncated)?;
        let src = self.bytes.get(self.pos..end).ok_or(PartError::Truncated)?;
        let mut buf = [0u8; N];
        buf.copy_from_slice(src);
        if self.invert != 0 {
            buf.iter_mut().for_each(|b| *b = !*b);
        }
        self.pos = end;
        Ok(buf)
    }

    /// Reads exactly `n` bytes.
    pub fn take_vec(&mut self, n: usize) -> Result<Vec<u8>, PartError> {
        let end = self.pos.checked_add(n).ok_or(PartError::Truncated)?;
        let src = self.bytes.get(self.pos..end).ok_or(PartError::Truncated)?;
        self.pos = end;
        Ok(src.iter().map(|b| b ^ self.invert).collect())
    }

    /// Reads an escaped, terminated byte string (see [`write_escaped`]).
    pub fn read_escaped(&mut self) -> Result<Vec<u8>, PartError> {
        let rest = &self.bytes[self.pos..];
        if self.invert == 0 {
            let zero = memchr::memchr(0, rest).ok_or(PartError::Truncated)?;
            // Most strings hold no NUL: one exact copy.
            if rest.get(zero + 1) == Some(&TERMINATOR) {
                self.pos += zero + 2;
                return Ok(rest[..zero].to_vec());
            }
            // Otherwise copy the runs between escapes.
            let mut out = Vec::with_capacity(rest.len());
            let mut i = 0;
            loop {
                let zero = memchr::memchr(0, &rest[i..]).ok_or(PartError::Truncated)? + i;
                out.extend_from_slice(&rest[i..zero]);
                match rest.get(zero + 1) {
                    Some(&TERMINATOR) => {
                        self.pos += zero + 2;
                        return Ok(out);
                    }
                    Some(&ESCAPED_ZERO) => {
                        out.push(0);
                        i = zero + 2;
                    }
                    Some(_) => return Err(PartError::Invalid("bad escape after a 0x00 byte")),
                    None => return Err(PartError::Truncated),
                }
            }
        }
        let mut out = Vec::new();
        let mut i = 0;
        loop {
            let b = *rest.get(i).ok_or(PartError::Truncated)? ^ self.invert;
            if b != 0 {
                out.push(b);
                i += 1;
                continue;
            }
            match rest.get(i + 1).map(|n| n ^ self.invert) {
                Some(TERMINATOR) => {
                    self.pos += i + 2;
                    return Ok(out);
                }
                Some(ESCAPED_ZERO) => {
                    out.push(0);
                    i += 2;
                }
                Some(_) => return Err(PartError::Invalid("bad escape after a 0x00 byte")),
                None => return Err(PartError::Truncated),
            }
        }
    }
}

/// The byte after 0x00 that ends a byte string.
const TERMINATOR: u8 = 0x00;
/// The byte after 0x00 that stands for a 0x00 inside a byte string.
const ESCAPED_ZERO: u8 = 0xFF;

/// Appends a byte string so that it sorts as the raw bytes would and ends
/// unambiguously: each 0x00 becomes `00 FF`, and `00 00` terminates. The
/// terminator sorts below every continuation, so a string sorts before each
/// longer string it is a prefix of.
#[inline(always)]
pub fn write_escaped(bytes: &[u8], out: &mut Vec<u8>) {
    // Short keys rarely hold a NUL: an inlined word-at-a-time scan beats
    // memchr's setup.
    if bytes.len() < 64 && !has_zero_byte(bytes) {
        out.reserve(bytes.len() + 2);
        out.extend_from_slice(bytes);
        out.extend_from_slice(&[0, TERMINATOR]);
    } else {
        write_escaped_long(bytes, out);
    }
}

/// Whether any byte is 0, eight bytes at a time: `(x - 0x01..) & !x & 0x80..`
/// is non-zero exactly when some byte of `x` is zero.
#[inline(always)]
fn has_zero_byte(bytes: &[u8]) -> bool {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let x = u64::from_le_bytes(w);
        if x.wrapping_sub(LOW) & !x & HIGH != 0 {
            return true;
        }
    }
    words.remainder().contains(&0)
}

#[inline(never)]
fn write_escaped_long(bytes: &[u8], out: &mut Vec<u8>) {
    out.reserve(bytes.len() + 2);
    let mut rest = bytes;
    while let Some(zero) = memchr::memchr(0, rest) {
        out.extend_from_slice(&rest[..zero]);
        out.extend_from_slice(&[0, ESCAPED_ZERO]);
        rest = &rest[zero + 1..];
    }
    out.extend_from_slice(rest);
    out.extend_from_slice(&[0, TERMINATOR]);
}

// ---------------------------------------------------------------------------
// Text helpers

/// Appends `value` in decimal, zero-padded to `width`.
fn write_decimal(value: u128, kind: PartKind, width: Width, out: &mut Vec<u8>) -> Result<(), PartError> {
    let mut digits = [0u8; 39];
    let mut n = 0;
    let mut v = value;
    loop {
        digits[38 - n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let pad = match width {
        Width::Variable => 0,
        Width::Fixed(w) => (w as usize).checked_sub(n).ok_or_else(|| PartError::TooWide {
            value: value.to_string(),
            width: w,
        })?,
        // Natural widths hold every value of the type, except timestamps
        // after the year 2286.
        Width::Natural => {
            let w = kind.max_digits().unwrap_or(39);
            (w as usize).checked_sub(n).ok_or_else(|| PartError::TooWide {
                value: value.to_string(),
                width: w,
            })?
        }
    };
    out.extend(std::iter::repeat_n(b'0', pad));
    out.extend_from_slice(&digits[39 - n..]);
    Ok(())
}

/// Parses a run of decimal digits.
fn read_decimal(text: &[u8]) -> Result<u128, PartError> {
    if text.is_empty() {
        return Err(PartError::Invalid("empty number"));
    }
    let mut v: u128 = 0;
    for &c in text {
        if !c.is_ascii_digit() {
            return Err(PartError::Invalid("not a decimal digit"));
        }
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(u128::from(c - b'0')))
            .ok_or_else(|| PartError::OutOfRange(String::from_utf8_lossy(text).into_owned()))?;
    }
    Ok(v)
}

pub(crate) fn write_hex(bytes: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2);
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)]);
        out.push(HEX[usize::from(b & 0xF)]);
    }
}

pub(crate) fn read_hex(text: &[u8]) -> Result<Vec<u8>, PartError> {
    fn nibble(c: u8) -> Result<u8, PartError> {
        match c {
            b'0'..=b'9' => Ok(c - b'0'),
            b'a'..=b'f' => Ok(c - b'a' + 10),
            _ => Err(PartError::Invalid("not a lowercase hex digit")),
        }
    }
    if !text.len().is_multiple_of(2) {
        return Err(PartError::Invalid("odd number of hex digits"));
    }
    text.chunks_exact(2)
        .map(|pair| Ok(nibble(pair[0])? << 4 | nibble(pair[1])?))
        .collect()
}

fn text_unsupported<T>(kind: PartKind) -> Result<T, PartError> {
    Err(PartError::Unsupported {
        kind,
        what: "the text format",
    })
}

// ---------------------------------------------------------------------------
// Integers

macro_rules! unsigned_part {
    ($($t:ty => $kind:ident),* $(,)?) => {$(
        impl KeyPart for $t {
            const KIND: PartKind = PartKind::$kind;
            #[inline]
            fn write_binary(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
                out.extend_from_slice(&self.to_be_bytes());
                Ok(())
            }
            fn write_text(&self, width: Width, out: &mut Vec<u8>) -> Result<(), PartError> {
                write_decimal(u128::from(*self), Self::KIND, width, out)
            }
        }
        impl FromKeyPart for $t {
            #[inline]
            fn read_binary(input: &mut BinaryReader<'_>) -> Result<Self, PartError> {
                Ok(<$t>::from_be_bytes(input.take()?))
            }
            fn read_text(text: &[u8]) -> Result<Self, PartError> {
                let v = read_decimal(text)?;
                <$t>::try_from(v).map_err(|_| PartError::OutOfRange(v.to_string()))
            }
        }
    )*};
}

unsigned_part!(u8 => U8, u16 => U16, u32 => U32, u128 => U128);

// u64 is also a timestamp kind (milliseconds), so it is written out.
impl KeyPart for u64 {
    const KIND: PartKind = PartKind::U64;
    #[inline]
    fn write_binary(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
        out.extend_from_slice(&self.to_be_bytes());
        Ok(())
    }
    fn write_text(&self, width: Width, out: &mut Vec<u8>) -> Result<(), PartError> {
        write_decimal(u128::from(*self), Self::KIND, width, out)
    }
    fn to_millis(&self) -> Option<i64> {
        i64::try_from(*self).ok()
    }
}

impl FromKeyPart for u64 {
    #[inline]
    fn read_binary(input: &mut BinaryReader<'_>) -> Result<Self, PartError> {
        Ok(u64::from_be_bytes(input.take()?))
    }
    fn read_text(text: &[u8]) -> Result<Self, PartError> {
        let v = read_decimal(text)?;
        u64::try_from(v).map_err(|_| PartError::OutOfRange(v.to_string()))
    }
    fn from_millis(millis: i64) -> Result<Self, PartError> {
        u64::try_from(millis).map_err(|_| PartError::OutOfRange(millis.to_string()))
    }
}

/// Signed integers: big-endian with the sign bit flipped, so that negative
/// numbers sort first. In text keys only non-negative values are allowed.
macro_rules! signed_part {
    ($($t:ty, $u:ty => $kind:ident),* $(,)?) => {$(
        impl KeyPart for $t {
            const KIND: PartKind = PartKind::$kind;
            #[inline]
            fn write_binary(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
                out.extend_from_slice(&((*self as $u) ^ (1 << (<$u>::BITS - 1))).to_be_bytes());
                Ok(())
            }
            fn write_text(&self, width: Width, out: &mut Vec<u8>) -> Result<(), PartError> {
                let v = u128::try_from(*self).map_err(|_| PartError::Negative { value: self.to_string() })?;
                write_decimal(v, Self::KIND, width, out)
            }
            signed_part!(@millis $kind);
        }
        impl FromKeyPart for $t {
            #[inline]
            fn read_binary(input: &mut BinaryReader<'_>) -> Result<Self, PartError> {
                Ok((<$u>::from_be_bytes(input.take()?) ^ (1 << (<$u>::BITS - 1))) as $t)
            }
            fn read_text(text: &[u8]) -> Result<Self, PartError> {
                let v = read_decimal(text)?;
                <$t>::try_from(v).map_err(|_| PartError::OutOfRange(v.to_string()))
            }
            signed_part!(@from_millis $kind);
        }
    )*};
    (@millis I64) => {
        fn to_millis(&self) -> Option<i64> {
            Some(*self)
        }
    };
    (@millis $other:ident) => {};
    (@from_millis I64) => {
        fn from_millis(millis: i64) -> Result<Self, PartError> {
            Ok(millis)
        }
    };
    (@from_millis $other:ident) => {};
}

signed_part!(i8, u8 => I8, i16, u16 => I16, i32, u32 => I32, i64, u64 => I64, i128, u128 => I128);

// ---------------------------------------------------------------------------
// Floats: the IEEE-754 total-order trick. Positive numbers get their sign bit
// set, negative numbers are complemented, so `f64::total_cmp` order is byte
// order. NaN is refused: it has no place in a sorted key. -0.0 is written as
// 0.0, since `==` holds them equal and a key lookup must find either; the
// bytes -0.0 would have are refused when read, so that every key that
// decodes encodes back to the same bytes.

macro_rules! float_part {
    ($($t:ty, $u:ty => $kind:ident),* $(,)?) => {$(
        impl KeyPart for $t {
            const KIND: PartKind = PartKind::$kind;
            #[inline]
            fn write_binary(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
                if self.is_nan() {
                    return Err(PartError::NaN);
                }
                // -0.0 == 0.0: one value, one key.
                let value = if *self == 0.0 { 0.0 } else { *self };
                let bits = value.to_bits();
                let sign = 1 << (<$u>::BITS - 1);
                let ordered = if bits & sign != 0 { !bits } else { bits | sign };
                out.extend_from_slice(&ordered.to_be_bytes());
                Ok(())
            }
            fn write_text(&self, _width: Width, _out: &mut Vec<u8>) -> Result<(), PartError> {
                text_unsupported(Self::KIND)
            }
        }
        impl FromKeyPart for $t {
            #[inline]
            fn read_binary(input: &mut BinaryReader<'_>) -> Result<Self, PartError> {
                let ordered = <$u>::from_be_bytes(input.take()?);
                let sign = 1 << (<$u>::BITS - 1);
                let bits = if ordered & sign != 0 { ordered & !sign } else { !ordered };
                let value = <$t>::from_bits(bits);
                if value.is_nan() {
                    return Err(PartError::NaN);
                }
                if value == 0.0 && value.is_sign_negative() {
                    return Err(PartError::Invalid("-0.0 is not a key: it is stored as 0.0"));
                }
                Ok(value)
            }
            fn read_text(_text: &[u8]) -> Result<Self, PartError> {
                text_unsupported(Self::KIND)
            }
        }
    )*};
}

float_part!(f32, u32 => F32, f64, u64 => F64);

// ---------------------------------------------------------------------------
// bool

impl KeyPart for bool {
    const KIND: PartKind = PartKind::Bool;
    #[inline]
    fn write_binary(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
        out.push(u8::from(*self));
        Ok(())
    }
    fn write_text(&self, _width: Width, out: &mut Vec<u8>) -> Result<(), PartError> {
        out.push(if *self { b'1' } else { b'0' });
        Ok(())
    }
}

impl FromKeyPart for bool {
    fn read_binary(input: &mut BinaryReader<'_>) -> Result<Self, PartError> {
        match input.take::<1>()? {
            [0] => Ok(false),
            [1] => Ok(true),
            _ => Err(PartError::Invalid("a bool part is 0x00 or 0x01")),
        }
    }
    fn read_text(text: &[u8]) -> Result<Self, PartError> {
        match text {
            b"0" => Ok(false),
            b"1" => Ok(true),
            _ => Err(PartError::Invalid("a bool part is 0 or 1")),
        }
    }
}

// ---------------------------------------------------------------------------
// Strings

impl KeyPart for str {
    const KIND: PartKind = PartKind::Str;
    #[inline(always)]
    fn write_binary(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
        write_escaped(self.as_bytes(), out);
        Ok(())
    }
    fn write_text(&self, _width: Width, out: &mut Vec<u8>) -> Result<(), PartError> {
        out.extend_from_slice(self.as_bytes());
        Ok(())
    }
    fn write_plain(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
        out.extend_from_slice(self.as_bytes());
        Ok(())
    }
    fn as_str(&self) -> Option<&str> {
        Some(self)
    }
}

impl KeyPart for String {
    const KIND: PartKind = PartKind::Str;
    #[inline(always)]
    fn write_binary(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
        self.as_str().write_binary(out)
    }
    fn write_text(&self, width: Width, out: &mut Vec<u8>) -> Result<(), PartError> {
        self.as_str().write_text(width, out)
    }
    fn write_plain(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
        self.as_str().write_plain(out)
    }
    fn as_str(&self) -> Option<&str> {
        Some(self)
    }
}

impl FromKeyPart for String {
    #[inline]
    fn read_binary(input: &mut BinaryReader<'_>) -> Result<Self, PartError> {
        String::from_utf8(input.read_escaped()?).map_err(|_| PartError::Invalid("a string part is not valid UTF-8"))
    }
    fn read_text(text: &[u8]) -> Result<Self, PartError> {
        std::str::from_utf8(text)
            .map(str::to_owned)
            .map_err(|_| PartError::Invalid("a string part is not valid UTF-8"))
    }
    fn from_string(text: String) -> Result<Self, PartError> {
        Ok(text)
    }
}

// ---------------------------------------------------------------------------
// Byte strings: escaped like strings in binary, lowercase hex in text.

impl KeyPart for [u8] {
    const KIND: PartKind = PartKind::Bytes;
    #[inline]
    fn write_binary(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
        write_escaped(self, out);
        Ok(())
    }
    fn write_text(&self, _width: Width, out: &mut Vec<u8>) -> Result<(), PartError> {
        write_hex(self, out);
        Ok(())
    }
    fn write_plain(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
        out.extend_from_slice(self);
        Ok(())
    }
}

macro_rules! byte_string_part {
    ($($t:ty),*) => {$(
        impl KeyPart for $t {
            const KIND: PartKind = PartKind::Bytes;
            #[inline]
            fn write_binary(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
                self[..].write_binary(out)
            }
            fn write_text(&self, width: Width, out: &mut Vec<u8>) -> Result<(), PartError> {
                self[..].write_text(width, out)
            }
            fn write_plain(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
                self[..].write_plain(out)
            }
        }
        impl FromKeyPart for $t {
            fn read_binary(input: &mut BinaryReader<'_>) -> Result<Self, PartError> {
                Ok(input.read_escaped()?.into())
            }
            fn read_text(text: &[u8]) -> Result<Self, PartError> {
                Ok(read_hex(text)?.into())
            }
        }
    )*};
}

byte_string_part!(Vec<u8>, Bytes);

impl<const N: usize> KeyPart for [u8; N] {
    const KIND: PartKind = PartKind::FixedBytes(N);
    #[inline]
    fn write_binary(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
        out.extend_from_slice(self);
        Ok(())
    }
    fn write_text(&self, _width: Width, out: &mut Vec<u8>) -> Result<(), PartError> {
        write_hex(self, out);
        Ok(())
    }
}

impl<const N: usize> FromKeyPart for [u8; N] {
    fn read_binary(input: &mut BinaryReader<'_>) -> Result<Self, PartError> {
        input.take()
    }
    fn read_text(text: &[u8]) -> Result<Self, PartError> {
        read_hex(text)?
            .try_into()
            .map_err(|_| PartError::Invalid("wrong number of hex digits"))
    }
}

// ---------------------------------------------------------------------------
// uuid: 16 raw bytes (Uuid's own order); hyphenated lowercase in text.

#[cfg(feature = "uuid")]
impl KeyPart for Uuid {
    const KIND: PartKind = PartKind::Uuid;
    #[inline]
    fn write_binary(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
        out.extend_from_slice(self.as_bytes());
        Ok(())
    }
    fn write_text(&self, _width: Width, out: &mut Vec<u8>) -> Result<(), PartError> {
        let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
        out.extend_from_slice(self.hyphenated().encode_lower(&mut buf).as_bytes());
        Ok(())
    }
}

#[cfg(feature = "uuid")]
impl FromKeyPart for Uuid {
    fn read_binary(input: &mut BinaryReader<'_>) -> Result<Self, PartError> {
        Ok(Uuid::from_bytes(input.take()?))
    }
    fn read_text(text: &[u8]) -> Result<Self, PartError> {
        if text.len() != uuid::fmt::Hyphenated::LENGTH {
            return Err(PartError::Invalid("a uuid part is 36 characters"));
        }
        Uuid::try_parse_ascii(text).map_err(|_| PartError::Invalid("not a hyphenated uuid"))
    }
}

// ---------------------------------------------------------------------------
// Time. DateTime<Utc> is stored as i64 milliseconds since the epoch, like
// Java's `System.currentTimeMillis()`: sub-millisecond precision is dropped
// (floored) when a key is written. NaiveDate is i32 days since 1970-01-01,
// `YYYYMMDD` in text.

#[cfg(feature = "chrono")]
impl KeyPart for DateTime<Utc> {
    const KIND: PartKind = PartKind::DateTime;
    #[inline]
    fn write_binary(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
        self.timestamp_millis().write_binary(out)
    }
    fn write_text(&self, width: Width, out: &mut Vec<u8>) -> Result<(), PartError> {
        let millis = self.timestamp_millis();
        let v = u128::try_from(millis).map_err(|_| PartError::Negative {
            value: millis.to_string(),
        })?;
        write_decimal(v, Self::KIND, width, out)
    }
    fn to_millis(&self) -> Option<i64> {
        Some(self.timestamp_millis())
    }
}

#[cfg(feature = "chrono")]
impl FromKeyPart for DateTime<Utc> {
    fn read_binary(input: &mut BinaryReader<'_>) -> Result<Self, PartError> {
        Self::from_millis(i64::read_binary(input)?)
    }
    fn read_text(text: &[u8]) -> Result<Self, PartError> {
        Self::from_millis(i64::read_text(text)?)
    }
    fn from_millis(millis: i64) -> Result<Self, PartError> {
        DateTime::from_timestamp_millis(millis).ok_or_else(|| PartError::OutOfRange(format!("{millis} ms")))
    }
}

#[cfg(feature = "chrono")]
const UNIX_EPOCH_DAYS_FROM_CE: i32 = 719_163;

#[cfg(feature = "chrono")]
impl KeyPart for NaiveDate {
    const KIND: PartKind = PartKind::Date;
    #[inline]
    fn write_binary(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
        use chrono::Datelike;
        (self.num_days_from_ce() - UNIX_EPOCH_DAYS_FROM_CE).write_binary(out)
    }
    fn write_text(&self, _width: Width, out: &mut Vec<u8>) -> Result<(), PartError> {
        use chrono::Datelike;
        if !(0..=9999).contains(&self.year()) {
            return Err(PartError::OutOfRange(format!(
                "year {} in a YYYYMMDD part",
                self.year()
            )));
        }
        let v = self.year() as u32 * 10_000 + self.month() * 100 + self.day();
        write_decimal(u128::from(v), Self::KIND, Width::Fixed(8), out)
    }
}

#[cfg(feature = "chrono")]
impl FromKeyPart for NaiveDate {
    fn read_binary(input: &mut BinaryReader<'_>) -> Result<Self, PartError> {
        let days = i32::read_binary(input)?;
        days.checked_add(UNIX_EPOCH_DAYS_FROM_CE)
            .and_then(NaiveDate::from_num_days_from_ce_opt)
            .ok_or_else(|| PartError::OutOfRange(format!("{days} days")))
    }
    fn read_text(text: &[u8]) -> Result<Self, PartError> {
        if text.len() != 8 {
            return Err(PartError::Invalid("a date part is 8 digits, YYYYMMDD"));
        }
        let v = read_decimal(text)? as u32;
        NaiveDate::from_ymd_opt((v / 10_000) as i32, v / 100 % 100, v % 100)
            .ok_or_else(|| PartError::OutOfRange(format!("date {v}")))
    }
}

// ---------------------------------------------------------------------------
// References encode as what they point at.

impl<T: KeyPart + ?Sized> KeyPart for &T {
    const KIND: PartKind = T::KIND;
    #[inline]
    fn write_binary(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
        (**self).write_binary(out)
    }
    fn write_text(&self, width: Width, out: &mut Vec<u8>) -> Result<(), PartError> {
        (**self).write_text(width, out)
    }
    fn write_plain(&self, out: &mut Vec<u8>) -> Result<(), PartError> {
        (**self).write_plain(out)
    }
    fn to_millis(&self) -> Option<i64> {
        (**self).to_millis()
    }
    fn as_str(&self) -> Option<&str> {
        (**self).as_str()
    }
}
