//! Rowkeys: composite keys built from typed parts, in a binary or a text format.
//!
//! HBase sorts rows by the raw bytes of their key and can only find rows by
//! key, so the key's layout decides which queries are cheap. A [`KeySchema`]
//! lists the key's segments in order:
//!
//! - **parts**, one per key field, each with its [`PartKind`] and modifiers:
//!   [`Order::Desc`] (descending), [`Transform::ReverseTs`] (`Long.MAX_VALUE -
//!   millis`, newest first) and [`Transform::Reversed`] (a string stored
//!   backwards, to spread ids that share a prefix);
//! - **derived segments** computed from parts: a [`Segment::Salt`] bucket that
//!   spreads writes over regions, a [`Segment::HashPrefix`] of MD5 bytes, and
//!   [`Segment::Literal`] bytes (a fixed tag such as `u`).
//!
//! ```
//! use hmap::key::{KeyFormat, KeySchema, PartKind, PartSpec, Segment};
//! use chrono::{DateTime, Utc};
//!
//! // The purchase records of the seeds: <user_id><Long.MAX_VALUE - millis><product_id>.
//! let schema = KeySchema::new(KeyFormat::Binary, vec![
//!     Segment::Part(PartSpec::new("user_id", PartKind::Str)),
//!     Segment::Part(PartSpec::new("at", PartKind::DateTime).reverse_ts()),
//!     Segment::Part(PartSpec::new("product_id", PartKind::U64)),
//! ])?;
//! let at = DateTime::from_timestamp_millis(1_700_000_000_000).unwrap();
//! let key = schema.encode(&("u42", at, 7u64))?;
//!
//! // Every purchase of one user, newest first, is one prefix scan away.
//! let prefix = schema.encode_prefix(&("u42",))?;
//! assert!(key.starts_with(&prefix));
//!
//! let (user, when, product): (String, DateTime<Utc>, u64) = schema.decode(&key)?;
//! assert_eq!((user.as_str(), when, product), ("u42", at, 7));
//! # Ok::<(), hmap::key::KeyError>(())
//! ```
//!
//! # Which format to pick
//!
//! **Binary** ([`KeyFormat::Binary`], the default) for new tables. Byte order
//! is tuple order for every part type, any leading parts form a scan prefix,
//! keys are short (a `u64` is 8 bytes, not 20 digits), and strings may hold any
//! character. The encodings:
//!
//! | part | bytes |
//! |---|---|
//! | `u8`..`u128` | big-endian |
//! | `i8`..`i128` | big-endian with the sign bit flipped |
//! | `f32`, `f64` | IEEE bits, sign bit set if positive, all bits flipped if negative (NaN is an error; -0.0 is stored as 0.0, which it equals) |
//! | `bool` | `00` or `01` |
//! | `String`, `Vec<u8>`, `Bytes` | the bytes, each `00` written `00 FF`, then `00 00` |
//! | `[u8; N]`, `Uuid` | the raw bytes |
//! | `DateTime<Utc>` | milliseconds as `i64`, as above (sub-millisecond precision is dropped) |
//! | `NaiveDate` | days since 1970-01-01 as `i32`, as above |
//! | `desc` | the complement of every byte of the ascending encoding |
//! | `reverse_ts` | `Long.MAX_VALUE - millis` as a plain big-endian `i64`: byte-equal to Java's `Bytes.toBytes(Long.MAX_VALUE - ts)` |
//! | salt | one byte, the bucket |
//! | hash prefix | the first *K* bytes of the MD5 |
//!
//! **Text** ([`KeyFormat::Text`]) to read or write tables whose keys are
//! already readable strings (`001_100`, `0_001`, `<uid>_<Long.MAX_VALUE -
//! millis>`), or when people must type keys into the HBase shell. Parts are
//! joined by a separator; numbers are zero-padded to a fixed [`Width`] so that
//! they sort numerically; `reverse_ts` is 19 digits; a salt is a zero-padded
//! bucket number, a hash prefix *K* lowercase hex digits; `desc` (on digits and
//! hex) replaces each digit *d* with *9 - d* (*15 - d* for hex). Limits: a
//! string part may not contain the separator (an error, not an escape), numbers
//! must be non-negative, floats are not supported, and two string parts of
//! different lengths compare by their characters against the separator, so
//! tuple order holds only for fixed-width parts.
//!
//! # Salts and hash prefixes
//!
//! A salt bucket is `crc32(plain bytes of the "by" parts) % buckets`, with the
//! CRC-32 of zlib, Java's `java.util.zip.CRC32` and Python's `zlib.crc32`. A
//! hash prefix is the first bytes (binary) or hex digits (text) of the MD5 of
//! the plain bytes of its part. The *plain bytes* of a part are its UTF-8 (for
//! strings) or raw bytes (for byte strings), its ascending binary encoding for
//! other kinds in binary keys, and its ascending text for text keys; several
//! `by` parts are concatenated (joined by the separator in text keys). So for a
//! text key salted by a user id, Python computes the bucket with
//! `zlib.crc32(uid.encode()) % buckets`, and a hash prefix of 6 is
//! `hashlib.md5(uid.encode()).hexdigest()[:6]`.
//!
//! Modifiers do not change the plain bytes: a salt depends on values only.

mod arg;
mod codec;
mod error;
mod inspect;
mod part;
mod pattern;
mod printable;
mod tuple;

use std::borrow::Cow;
use std::fmt;

pub use arg::{KeyArg, KeyOf, PartArg};
pub use codec::KeyCursor;
pub use codec::salt_bucket;
pub use error::{KeyError, PartError};
pub use inspect::{InspectedSegment, KeyInspection, PartValue};
pub use part::{BinaryReader, FromKeyPart, KeyPart, PartKind, Width, write_escaped};
pub use pattern::{Any, KeyPattern, PatternPart, PatternPieces};
pub use printable::{Printable, parse_printable};
pub use tuple::{FromKeyTuple, KeyTuple};

use part::TextAlphabet;

/// How a key's segments are turned into bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum KeyFormat {
    /// Order-preserving, self-delimiting bytes. See the [module docs](self).
    #[default]
    Binary,
    /// Readable text, segments joined by `separator` (commonly `_`). Without a
    /// separator, only the last part may have a variable width.
    Text {
        /// An ASCII punctuation character, or none.
        separator: Option<char>,
    },
}

impl KeyFormat {
    /// Text with `_` between segments: `001_100`.
    pub const fn text() -> Self {
        KeyFormat::Text { separator: Some('_') }
    }

    /// Text with a chosen separator.
    pub const fn text_with(separator: char) -> Self {
        KeyFormat::Text {
            separator: Some(separator),
        }
    }

    fn separator_byte(self) -> Option<u8> {
        match self {
            // Validation makes the separator ASCII.
            KeyFormat::Text { separator: Some(c) } => Some(c as u8),
            _ => None,
        }
    }
}

/// The order of one part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Order {
    /// Smallest first.
    #[default]
    Asc,
    /// Largest first: binary keys store the complement of each byte.
    Desc,
}

/// A change to a part's value before it is encoded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Transform {
    /// The value as it is.
    #[default]
    None,
    /// `Long.MAX_VALUE - millis`, so that the newest rows come first. For
    /// `DateTime<Utc>`, `i64` and `u64` (milliseconds) parts.
    ReverseTs,
    /// The string's characters in reverse order, to spread ids that share a
    /// prefix over regions (`user1234` is stored as `4321resu`).
    Reversed,
}

/// One field of a composite key: its name, kind and modifiers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PartSpec {
    /// The name shown in errors and by the key inspector.
    pub name: Cow<'static, str>,
    /// The kind of value.
    pub kind: PartKind,
    /// Ascending or descending.
    pub order: Order,
    /// `reverse_ts`, `reversed` or nothing.
    pub transform: Transform,
    /// The text width of a numeric part (ignored by binary keys).
    pub width: Width,
}

impl PartSpec {
    /// An ascending part with no modifiers.
    pub const fn new(name: &'static str, kind: PartKind) -> Self {
        PartSpec {
            name: Cow::Borrowed(name),
            kind,
            order: Order::Asc,
            transform: Transform::None,
            width: Width::Natural,
        }
    }

    /// An ascending part with a name built at run time.
    pub fn named(name: impl Into<Cow<'static, str>>, kind: PartKind) -> Self {
        PartSpec {
            name: name.into(),
            kind,
            order: Order::Asc,
            transform: Transform::None,
            width: Width::Natural,
        }
    }

    /// The part in descending order.
    pub const fn desc(mut self) -> Self {
        self.order = Order::Desc;
        self
    }

    /// The part as `Long.MAX_VALUE - millis`.
    pub const fn reverse_ts(mut self) -> Self {
        self.transform = Transform::ReverseTs;
        self
    }

    /// The string part reversed.
    pub const fn reversed(mut self) -> Self {
        self.transform = Transform::Reversed;
        self
    }

    /// The text width of a numeric part.
    pub const fn width(mut self, width: Width) -> Self {
        self.width = width;
        self
    }

    /// Whether the part has a fixed length in the given format.
    const fn encoded_len(&self, format: KeyFormat) -> Option<usize> {
        match (format, self.transform) {
            (KeyFormat::Binary, Transform::ReverseTs) => Some(8),
            (KeyFormat::Binary, _) => self.kind.binary_len(),
            (KeyFormat::Text { .. }, Transform::ReverseTs) => Some(REVERSE_TS_DIGITS),
            (KeyFormat::Text { .. }, _) => self.kind.text_len(self.width),
        }
    }
}

/// `i64::MAX` has 19 decimal digits.
pub(crate) const REVERSE_TS_DIGITS: usize = 19;

/// One segment of a rowkey, in key order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Segment {
    /// A key field.
    Part(PartSpec),
    /// A bucket `crc32(plain bytes of the by parts) % buckets`, to spread
    /// sequential keys over regions. One byte in binary keys; in text keys the
    /// bucket zero-padded to the digits of `buckets - 1`, at least two.
    Salt {
        /// The number of buckets, 1 to 256.
        buckets: u16,
        /// The parts hashed, as indices among the key's parts (not segments).
        by: Cow<'static, [usize]>,
    },
    /// The first `len` bytes (binary; 1 to 16) or lowercase hex digits (text;
    /// 1 to 32) of the MD5 of a part's plain bytes.
    HashPrefix {
        /// Bytes or hex digits kept.
        len: u8,
        /// The part hashed, as an index among the key's parts.
        of: usize,
    },
    /// Fixed bytes, such as a tag that tells entity types apart in one table.
    Literal(Cow<'static, [u8]>),
}

/// The layout of a table's rowkeys: a format and its segments.
///
/// Build one with [`KeySchema::new`] (validated), or as a constant with
/// [`KeySchema::from_static`], as `#[derive(HTable)]` does.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KeySchema {
    format: KeyFormat,
    segments: Cow<'static, [Segment]>,
    /// Derived once from the segments, so that encoding does not walk them
    /// for bookkeeping.
    layout: Layout,
}

/// Facts about a schema's segments that every encode needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Layout {
    /// The number of parts.
    pub parts: usize,
    /// A guess of the encoded size, so that most keys need one allocation.
    pub capacity: usize,
    /// Whether every segment is a part (no salt, hash prefix or literal).
    pub parts_only: bool,
}

impl Layout {
    const fn of(format: KeyFormat, segments: &[Segment]) -> Layout {
        let mut parts = 0;
        let mut capacity = 0;
        let mut i = 0;
        while i < segments.len() {
            capacity += 1 + match &segments[i] {
                Segment::Part(p) => {
                    parts += 1;
                    match p.encoded_len(format) {
                        Some(len) => len,
                        None => 16,
                    }
                }
                Segment::Salt { .. } => 3,
                Segment::HashPrefix { len, .. } => *len as usize,
                Segment::Literal(Cow::Borrowed(bytes)) => bytes.len(),
                Segment::Literal(Cow::Owned(bytes)) => bytes.len(),
            };
            i += 1;
        }
        Layout {
            parts,
            capacity,
            parts_only: parts == segments.len(),
        }
    }
}

impl KeySchema {
    /// A validated schema.
    pub fn new(format: KeyFormat, segments: Vec<Segment>) -> Result<Self, KeyError> {
        let layout = Layout::of(format, &segments);
        let schema = KeySchema {
            format,
            segments: Cow::Owned(segments),
            layout,
        };
        schema.validate()?;
        Ok(schema)
    }

    /// A schema from static segments, not validated here: call
    /// [`validate`](Self::validate) once (the derive checks the same rules at
    /// compile time).
    pub const fn from_static(format: KeyFormat, segments: &'static [Segment]) -> Self {
        KeySchema {
            format,
            segments: Cow::Borrowed(segments),
            layout: Layout::of(format, segments),
        }
    }

    /// The key format.
    pub fn format(&self) -> KeyFormat {
        self.format
    }

    /// The segments, in key order.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The part specs, in key order.
    pub fn parts(&self) -> impl Iterator<Item = &PartSpec> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Part(p) => Some(p),
            _ => None,
        })
    }

    /// The number of parts.
    pub fn part_count(&self) -> usize {
        self.layout.parts
    }

    /// The salt, if the key has one: `(buckets, by)`.
    pub fn salt(&self) -> Option<(u16, &[usize])> {
        self.segments.iter().find_map(|s| match s {
            Segment::Salt { buckets, by } => Some((*buckets, &by[..])),
            _ => None,
        })
    }

    /// Checks the rules a schema must follow:
    /// - at least one part, and unique part names;
    /// - `reverse_ts` only on `DateTime`, `i64` and `u64` parts, `reversed`
    ///   only on strings;
    /// - at most one salt, with 1 to 256 buckets and valid, distinct `by` parts;
    /// - hash prefixes of 1 to 16 bytes (binary) or 1 to 32 hex digits (text)
    ///   of a valid part; literals not empty;
    /// - in text keys: an ASCII punctuation separator, no float parts, `desc`
    ///   only on fixed-width digit or hex parts, widths only on numbers, no
    ///   separator in a literal, and without a separator only the last segment
    ///   may have a variable width.
    pub fn validate(&self) -> Result<(), KeyError> {
        let fail = |msg: String| Err(KeyError::Schema(msg));
        let parts: Vec<&PartSpec> = self.parts().collect();
        if parts.is_empty() {
            return fail("a key needs at least one part".into());
        }
        for (i, p) in parts.iter().enumerate() {
            if parts[..i].iter().any(|q| q.name == p.name) {
                return fail(format!("two parts are named `{}`", p.name));
            }
        }
        let text = matches!(self.format, KeyFormat::Text { .. });
        if let KeyFormat::Text { separator: Some(c) } = self.format
            && !c.is_ascii_punctuation()
            && c != ' '
        {
            return fail(format!("the separator {c:?} must be ASCII punctuation"));
        }
        let mut salts = 0;
        let last = self.segments.len() - 1;
        for (i, seg) in self.segments.iter().enumerate() {
            match seg {
                Segment::Part(p) => self.validate_part(p)?,
                Segment::Salt { buckets, by } => {
                    salts += 1;
                    if !(1..=256).contains(buckets) {
                        return fail(format!("a salt has 1 to 256 buckets, not {buckets}"));
                    }
                    if by.is_empty() {
                        return fail("a salt needs at least one `by` part".into());
                    }
                    for (j, &b) in by.iter().enumerate() {
                        if b >= parts.len() {
                            return fail(format!(
                                "salt `by` names part {b}, but the key has {} parts",
                                parts.len()
                            ));
                        }
                        if by[..j].contains(&b) {
                            return fail(format!("salt `by` names part `{}` twice", parts[b].name));
                        }
                    }
                }
                Segment::HashPrefix { len, of } => {
                    let max = if text { 32 } else { 16 };
                    if *len == 0 || *len > max {
                        return fail(format!(
                            "a hash prefix keeps 1 to {max} {}, not {len}",
                            if text { "hex digits" } else { "bytes" }
                        ));
                    }
                    if *of >= parts.len() {
                        return fail(format!(
                            "hash prefix of part {of}, but the key has {} parts",
                            parts.len()
                        ));
                    }
                }
                Segment::Literal(bytes) => {
                    if bytes.is_empty() {
                        return fail("a literal segment is empty".into());
                    }
                    if let Some(sep) = self.format.separator_byte()
                        && bytes.contains(&sep)
                    {
                        return fail(format!("the literal {} contains the separator", Printable(bytes)));
                    }
                }
            }
            if text && self.format.separator_byte().is_none() && i != last && self.segment_text_len(seg).is_none() {
                return fail(format!(
                    "without a separator only the last segment may have a variable width, but {} is not last",
                    self.segment_name(seg)
                ));
            }
        }
        if salts > 1 {
            return fail("a key has at most one salt".into());
        }
        Ok(())
    }

    fn validate_part(&self, p: &PartSpec) -> Result<(), KeyError> {
        let fail = |msg: String| Err(KeyError::Schema(format!("part `{}`: {msg}", p.name)));
        match p.transform {
            Transform::ReverseTs if !p.kind.is_timestamp() => {
                return fail(format!(
                    "reverse_ts needs a DateTime<Utc>, i64 or u64 (milliseconds), not {}",
                    p.kind
                ));
            }
            Transform::Reversed if p.kind != PartKind::Str => {
                return fail(format!("reversed needs a string, not {}", p.kind));
            }
            _ => {}
        }
        match self.format {
            KeyFormat::Binary => {
                if p.width != Width::Natural {
                    return fail("a text width has no meaning in a binary key".into());
                }
            }
            KeyFormat::Text { .. } => {
                let alphabet = p.kind.text_alphabet();
                if alphabet == TextAlphabet::None {
                    return fail(format!(
                        "{} parts cannot be written in a text key; use the binary format",
                        p.kind
                    ));
                }
                let numeric = p.kind.max_digits().is_some();
                if p.width != Width::Natural && (!numeric || p.transform == Transform::ReverseTs) {
                    return fail(format!(
                        "a width applies to integer and timestamp parts{}",
                        if numeric {
                            " that are not reverse_ts (always 19 digits)"
                        } else {
                            ""
                        }
                    ));
                }
                if let Width::Fixed(w) = p.width
                    && (w == 0 || w > 39)
                {
                    return fail(format!("a width is 1 to 39 digits, not {w}"));
                }
                if p.order == Order::Desc && (alphabet == TextAlphabet::Free || p.encoded_len(self.format).is_none()) {
                    return fail(format!(
                        "desc in a text key needs a fixed-width number, date, uuid or [u8; N] part, not a {} {}",
                        if p.encoded_len(self.format).is_none() {
                            "variable-width"
                        } else {
                            "free-text"
                        },
                        p.kind
                    ));
                }
            }
        }
        Ok(())
    }

    /// The fixed text length of a segment, if it has one.
    fn segment_text_len(&self, seg: &Segment) -> Option<usize> {
        match seg {
            Segment::Part(p) => p.encoded_len(self.format),
            Segment::Salt { buckets, .. } => Some(salt_text_width(*buckets)),
            Segment::HashPrefix { len, .. } => Some(usize::from(*len)),
            Segment::Literal(bytes) => Some(bytes.len()),
        }
    }

    fn segment_name(&self, seg: &Segment) -> String {
        match seg {
            Segment::Part(p) => format!("part `{}`", p.name),
            Segment::Salt { .. } => "the salt".into(),
            Segment::HashPrefix { .. } => "the hash prefix".into(),
            Segment::Literal(bytes) => format!("the literal {}", Printable(bytes)),
        }
    }
}

/// Digits of a text salt: those of `buckets - 1`, at least two.
pub(crate) fn salt_text_width(buckets: u16) -> usize {
    let max = buckets.saturating_sub(1);
    let digits = if max == 0 { 1 } else { max.ilog10() as usize + 1 };
    digits.max(2)
}

impl KeySchema {
    /// The key layout as one readable line, the same as `Display`: what hmap
    /// records in a table's metadata (under
    /// [`KEY_LAYOUT_ATTRIBUTE`](crate::schema::KEY_LAYOUT_ATTRIBUTE)) when it
    /// creates the table, and compares with the struct's when it opens it.
    ///
    /// The format is stable: tables keep it for as long as they live. Any
    /// change to it would be recorded under another attribute name. It is
    /// the key format, `: `, then the segments in key order joined by ` + `:
    ///
    /// - format: `binary`, `text '_'` (the separator), or `text` (none);
    /// - a part: `name: kind`, then ` desc`, ` reverse_ts` or ` reversed`,
    ///   then ` width N` or ` unpadded` for a text width other than the
    ///   natural one; kinds are `u8`..`u128`, `i8`..`i128`, `f32`, `f64`,
    ///   `bool`, `string`, `bytes`, `[u8; N]`, `uuid`, `datetime`, `date`;
    /// - a salt: `salt(BUCKETS by PART, PART)`;
    /// - a hash prefix: `md5(PART)[..LEN]`;
    /// - a literal: its bytes in double quotes, `\xHH` for bytes that are
    ///   not printable ASCII.
    ///
    /// Everything that changes the bytes of a key is in it, and the part
    /// names too: renaming a key field is reported as another layout.
    ///
    /// ```
    /// use hmap::key::{KeyFormat, KeySchema, PartKind, PartSpec, Segment};
    ///
    /// let schema = KeySchema::new(KeyFormat::Binary, vec![
    ///     Segment::Salt { buckets: 8, by: vec![0].into() },
    ///     Segment::Part(PartSpec::new("uid", PartKind::Str)),
    ///     Segment::Part(PartSpec::new("ts", PartKind::DateTime).reverse_ts()),
    ///     Segment::Part(PartSpec::new("pid", PartKind::U64)),
    /// ])?;
    /// assert_eq!(
    ///     schema.fingerprint(),
    ///     "binary: salt(8 by uid) + uid: string + ts: datetime reverse_ts + pid: u64"
    /// );
    /// # Ok::<(), hmap::key::KeyError>(())
    /// ```
    pub fn fingerprint(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for KeySchema {
    /// A one-line description, the key's [fingerprint](KeySchema::fingerprint):
    /// `binary: salt(16 by user_id) + user_id: string + at: datetime reverse_ts`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<&PartSpec> = self.parts().collect();
        let name = |i: usize| parts.get(i).map_or("?", |p| &p.name);
        match self.format {
            KeyFormat::Binary => f.write_str("binary: ")?,
            KeyFormat::Text { separator: Some(c) } => write!(f, "text {c:?}: ")?,
            KeyFormat::Text { separator: None } => f.write_str("text: ")?,
        }
        for (i, seg) in self.segments.iter().enumerate() {
            if i > 0 {
                f.write_str(" + ")?;
            }
            match seg {
                Segment::Part(p) => {
                    write!(f, "{}: {}", p.name, p.kind)?;
                    if p.order == Order::Desc {
                        f.write_str(" desc")?;
                    }
                    match p.transform {
                        Transform::None => {}
                        Transform::ReverseTs => f.write_str(" reverse_ts")?,
                        Transform::Reversed => f.write_str(" reversed")?,
                    }
                    match p.width {
                        Width::Natural => {}
                        Width::Fixed(w) => write!(f, " width {w}")?,
                        Width::Variable => f.write_str(" unpadded")?,
                    }
                }
                Segment::Salt { buckets, by } => {
                    let by: Vec<&str> = by.iter().map(|&i| name(i)).collect();
                    write!(f, "salt({buckets} by {})", by.join(", "))?;
                }
                Segment::HashPrefix { len, of } => write!(f, "md5({})[..{len}]", name(*of))?,
                Segment::Literal(bytes) => write!(f, "\"{}\"", Printable(bytes))?,
            }
        }
        Ok(())
    }
}
