//! Cell value codecs.
//!
//! The default, [`CellValue`], writes what HBase's Java `Bytes.toBytes`
//! writes, so that Java, Python (`struct.pack('>q', ...)`) and the HBase
//! shell read the same table:
//!
//! | Rust | bytes | Java |
//! |---|---|---|
//! | `String`, `&str` | UTF-8 | `Bytes.toBytes(String)` |
//! | `i64`, `i32`, `i16` | big-endian two's complement | `Bytes.toBytes(long/int/short)` |
//! | `i8`, `u8` | one byte | `new byte[]{b}` |
//! | `u64`, `u32`, `u16` | big-endian, same width | the bits of a `long/int/short` |
//! | `f64`, `f32` | IEEE 754 big-endian | `Bytes.toBytes(double/float)` |
//! | `bool` | `FF` or `00` (any non-zero byte reads as true) | `Bytes.toBytes(boolean)` |
//! | `Vec<u8>`, `Bytes`, `[u8; N]` | as they are | `byte[]` |
//! | `uuid::Uuid` | 16 bytes | `Bytes.toBytes(msb) + Bytes.toBytes(lsb)` |
//! | `DateTime<Utc>` | milliseconds as `i64` | `Bytes.toBytes(date.getTime())` |
//! | `NaiveDate` | days since 1970-01-01 as `i32` | `Bytes.toBytes((int) localDate.toEpochDay())` |
//!
//! Other types choose [`Json`] (serde) or [`Text`] (`Display` / `FromStr`)
//! with `#[hmap(json)]` or `#[hmap(text)]`; a dynamic map chooses for its keys
//! and its values apart, `#[hmap(dynamic(key = "text", value = "json"))]`.

use std::fmt;
use std::str::FromStr;

use bytes::Bytes;
#[cfg(feature = "chrono")]
use chrono::{DateTime, NaiveDate, Utc};
#[cfg(feature = "uuid")]
use uuid::Uuid;

/// Why a cell value could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// The cell has another length than the type's.
    #[error("expected {expected} bytes, found {found}")]
    Length {
        /// The type's length.
        expected: usize,
        /// The cell's length.
        found: usize,
    },
    /// Text that is not UTF-8.
    #[error("invalid UTF-8 at byte {0}")]
    Utf8(usize),
    /// A value outside the type's range.
    #[error("{0} is out of range")]
    OutOfRange(String),
    /// Text that does not parse as the type.
    #[error("cannot parse {text:?}: {reason}")]
    Parse {
        /// The text.
        text: String,
        /// The parser's message.
        reason: String,
    },
    /// JSON that does not match the type, or a value that cannot be written as JSON.
    #[error("JSON: {0}")]
    Json(String),
}

/// A value stored in one cell with the default, Java-compatible encoding.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no default cell encoding",
    label = "not a cell value",
    note = "add `#[hmap(json)]` to store it as JSON (serde), or `#[hmap(text)]` to store its Display / FromStr text; for a dynamic map's keys or values, `#[hmap(dynamic(key = \"text\", value = \"json\"))]`"
)]
pub trait CellValue: Sized {
    /// The bytes of the value.
    fn to_cell(&self) -> Bytes;
    /// The value of the bytes.
    fn from_cell(bytes: &[u8]) -> Result<Self, ValueError>;
}

fn exact<const N: usize>(bytes: &[u8]) -> Result<[u8; N], ValueError> {
    bytes.try_into().map_err(|_| ValueError::Length {
        expected: N,
        found: bytes.len(),
    })
}

macro_rules! numeric_cell {
    ($($t:ty),*) => {$(
        impl CellValue for $t {
            #[inline]
            fn to_cell(&self) -> Bytes {
                Bytes::copy_from_slice(&self.to_be_bytes())
            }
            #[inline]
            fn from_cell(bytes: &[u8]) -> Result<Self, ValueError> {
                Ok(<$t>::from_be_bytes(exact(bytes)?))
            }
        }
    )*};
}

numeric_cell!(i8, i16, i32, i64, i128, u8, u16, u32, u64, u128, f32, f64);

impl CellValue for bool {
    fn to_cell(&self) -> Bytes {
        Bytes::from_static(if *self { &[0xFF] } else { &[0x00] })
    }
    fn from_cell(bytes: &[u8]) -> Result<Self, ValueError> {
        // Java's Bytes.toBoolean: any non-zero byte is true.
        Ok(exact::<1>(bytes)?[0] != 0)
    }
}

impl CellValue for String {
    #[inline]
    fn to_cell(&self) -> Bytes {
        Bytes::copy_from_slice(self.as_bytes())
    }
    #[inline]
    fn from_cell(bytes: &[u8]) -> Result<Self, ValueError> {
        std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|e| ValueError::Utf8(e.valid_up_to()))
    }
}

impl CellValue for Vec<u8> {
    fn to_cell(&self) -> Bytes {
        Bytes::copy_from_slice(self)
    }
    fn from_cell(bytes: &[u8]) -> Result<Self, ValueError> {
        Ok(bytes.to_vec())
    }
}

impl CellValue for Bytes {
    fn to_cell(&self) -> Bytes {
        self.clone()
    }
    fn from_cell(bytes: &[u8]) -> Result<Self, ValueError> {
        Ok(Bytes::copy_from_slice(bytes))
    }
}

impl<const N: usize> CellValue for [u8; N] {
    fn to_cell(&self) -> Bytes {
        Bytes::copy_from_slice(self)
    }
    fn from_cell(bytes: &[u8]) -> Result<Self, ValueError> {
        exact(bytes)
    }
}

#[cfg(feature = "uuid")]
impl CellValue for Uuid {
    fn to_cell(&self) -> Bytes {
        Bytes::copy_from_slice(self.as_bytes())
    }
    fn from_cell(bytes: &[u8]) -> Result<Self, ValueError> {
        Ok(Uuid::from_bytes(exact(bytes)?))
    }
}

#[cfg(feature = "chrono")]
impl CellValue for DateTime<Utc> {
    fn to_cell(&self) -> Bytes {
        self.timestamp_millis().to_cell()
    }
    fn from_cell(bytes: &[u8]) -> Result<Self, ValueError> {
        let millis = i64::from_cell(bytes)?;
        DateTime::from_timestamp_millis(millis).ok_or_else(|| ValueError::OutOfRange(format!("{millis} ms")))
    }
}

#[cfg(feature = "chrono")]
impl CellValue for NaiveDate {
    fn to_cell(&self) -> Bytes {
        // chrono's dates span about ±262,000 years: ±96 million days fit an i32.
        let days = (*self - NaiveDate::default()).num_days();
        i32::try_from(days)
            .unwrap_or(if days < 0 { i32::MIN } else { i32::MAX })
            .to_cell()
    }
    fn from_cell(bytes: &[u8]) -> Result<Self, ValueError> {
        let days = i32::from_cell(bytes)?;
        NaiveDate::default()
            .checked_add_signed(chrono::Duration::days(days.into()))
            .ok_or_else(|| ValueError::OutOfRange(format!("{days} days")))
    }
}

/// How one field's value becomes a cell and back: [`Native`] (the default,
/// [`CellValue`]), [`Json`] or [`Text`].
pub trait Codec<T> {
    /// Encodes the value.
    fn encode(value: &T) -> Result<Bytes, ValueError>;
    /// Decodes the value.
    fn decode(bytes: &[u8]) -> Result<T, ValueError>;
}

/// The default codec: [`CellValue`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Native;

impl<T: CellValue> Codec<T> for Native {
    #[inline]
    fn encode(value: &T) -> Result<Bytes, ValueError> {
        Ok(value.to_cell())
    }
    #[inline]
    fn decode(bytes: &[u8]) -> Result<T, ValueError> {
        T::from_cell(bytes)
    }
}

/// JSON through serde: `#[hmap(json)]` (feature `json`, on by default).
#[derive(Debug, Clone, Copy, Default)]
pub struct Json;

#[cfg(feature = "json")]
impl<T: serde::Serialize + serde::de::DeserializeOwned> Codec<T> for Json {
    fn encode(value: &T) -> Result<Bytes, ValueError> {
        serde_json::to_vec(value)
            .map(Bytes::from)
            .map_err(|e| ValueError::Json(e.to_string()))
    }
    fn decode(bytes: &[u8]) -> Result<T, ValueError> {
        serde_json::from_slice(bytes).map_err(|e| ValueError::Json(e.to_string()))
    }
}

/// `Display` to write, `FromStr` to read: `#[hmap(text)]`. Numbers stored
/// this way read as text in the HBase shell (`"42"`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Text;

impl<T: fmt::Display + FromStr> Codec<T> for Text
where
    T::Err: fmt::Display,
{
    fn encode(value: &T) -> Result<Bytes, ValueError> {
        Ok(Bytes::from(value.to_string()))
    }
    fn decode(bytes: &[u8]) -> Result<T, ValueError> {
        let text = std::str::from_utf8(bytes).map_err(|e| ValueError::Utf8(e.valid_up_to()))?;
        text.parse().map_err(|e: T::Err| ValueError::Parse {
            text: text.to_string(),
            reason: e.to_string(),
        })
    }
}

/// One version of a multi-version cell: its timestamp and value.
///
/// A `Vec<Versioned<T>>` field holds the newest versions of one column,
/// newest first (the weibo inbox kept at `VERSIONS => 1000`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Versioned<T> {
    /// Milliseconds since the epoch, or whatever the writer chose.
    pub timestamp: i64,
    /// The value.
    pub value: T,
}

impl<T> Versioned<T> {
    /// A version at `timestamp`.
    pub fn new(timestamp: i64, value: T) -> Self {
        Versioned { timestamp, value }
    }
}
