//! Composite keys: writing a key's segments in order, and reading them back.

use md5::{Digest, Md5};

use super::part::{BinaryReader, FromKeyPart, KeyPart, PartKind, TextAlphabet, write_escaped, write_hex};
use super::printable::Printable;
use super::tuple::{FromKeyTuple, KeyTuple};
use super::{KeyError, KeyFormat, KeySchema, Order, PartError, PartSpec, REVERSE_TS_DIGITS, Segment, Transform};

impl KeySchema {
    /// Encodes a whole key: a tuple with one value per part, in key order.
    ///
    /// Salts and hash prefixes are computed from the parts.
    pub fn encode<K: KeyTuple + ?Sized>(&self, key: &K) -> Result<Vec<u8>, KeyError> {
        let mut out = Vec::with_capacity(self.capacity_hint());
        self.encode_into(key, &mut out)?;
        Ok(out)
    }

    /// Encodes a whole key at the end of `out`, to reuse a buffer.
    pub fn encode_into<K: KeyTuple + ?Sized>(&self, key: &K, out: &mut Vec<u8>) -> Result<(), KeyError> {
        let expected = self.part_count();
        if key.arity() != expected {
            return Err(KeyError::Arity {
                expected,
                given: key.arity(),
            });
        }
        self.write_segments(key, None, out)
    }

    /// Encodes the leading parts of a key: every key that starts with these
    /// values starts with the returned bytes, so they are a scan prefix.
    ///
    /// Segments after the given parts are left out; in a text key, a separator
    /// ends the prefix so that `u1` does not match `u12`. A hash prefix whose
    /// part is not given ends the prefix there. A salt whose `by` parts are
    /// not all given is an error ([`KeyError::SaltNotCovered`]): use
    /// [`encode_prefix_in_bucket`](Self::encode_prefix_in_bucket) for each
    /// bucket instead.
    pub fn encode_prefix<K: KeyTuple + ?Sized>(&self, prefix: &K) -> Result<Vec<u8>, KeyError> {
        self.check_prefix_len(prefix)?;
        let mut out = Vec::with_capacity(self.capacity_hint());
        self.write_segments(prefix, None, &mut out)?;
        Ok(out)
    }

    /// Encodes the leading parts of a key in a chosen salt bucket, for scans
    /// that fan out over every bucket. Without a salt, the bucket must be 0.
    pub fn encode_prefix_in_bucket<K: KeyTuple + ?Sized>(&self, prefix: &K, bucket: u16) -> Result<Vec<u8>, KeyError> {
        self.check_prefix_len(prefix)?;
        let buckets = self.salt().map_or(1, |(b, _)| b);
        if bucket >= buckets {
            return Err(KeyError::BucketOutOfRange { bucket, buckets });
        }
        let mut out = Vec::with_capacity(self.capacity_hint());
        self.write_segments(prefix, Some(bucket), &mut out)?;
        Ok(out)
    }

    /// The salt bucket of a key, or of a prefix that gives every `by` part.
    /// `None` for a key without a salt.
    pub fn bucket_of<K: KeyTuple + ?Sized>(&self, key: &K) -> Result<Option<u16>, KeyError> {
        let Some((buckets, by)) = self.salt() else {
            return Ok(None);
        };
        self.require_parts(key, by)?;
        self.compute_salt(key, buckets, by).map(Some)
    }

    /// Decodes a whole key into a tuple of its parts, checking that any salt
    /// or hash prefix matches them.
    pub fn decode<K: FromKeyTuple>(&self, key: &[u8]) -> Result<K, KeyError> {
        let expected = self.part_count();
        if K::LEN != expected {
            return Err(KeyError::Arity {
                expected,
                given: K::LEN,
            });
        }
        let mut cursor = KeyCursor::new(self, key);
        let value = K::decode_parts(&mut cursor)?;
        cursor.finish()?;
        cursor.verify(&value)?;
        Ok(value)
    }

    fn check_prefix_len<K: KeyTuple + ?Sized>(&self, prefix: &K) -> Result<(), KeyError> {
        let expected = self.part_count();
        if prefix.arity() > expected {
            return Err(KeyError::Arity {
                expected,
                given: prefix.arity(),
            });
        }
        Ok(())
    }

    fn require_parts<K: KeyTuple + ?Sized>(&self, key: &K, needed: &[usize]) -> Result<(), KeyError> {
        match needed.iter().find(|&&i| i >= key.arity()) {
            None => Ok(()),
            Some(&missing) => Err(KeyError::SaltNotCovered {
                part: self
                    .parts()
                    .nth(missing)
                    .map_or_else(String::new, |p| p.name.to_string()),
            }),
        }
    }

    fn capacity_hint(&self) -> usize {
        self.layout.capacity
    }

    fn write_segments<K: KeyTuple + ?Sized>(
        &self,
        key: &K,
        bucket: Option<u16>,
        out: &mut Vec<u8>,
    ) -> Result<(), KeyError> {
        let given = key.arity();
        let separator = self.format.separator_byte();
        if self.layout.parts_only {
            key.encode_parts(&self.segments, self.format, separator, out)?;
            if given < self.layout.parts
                && given > 0
                && let Some(sep) = separator
            {
                out.push(sep);
            }
            return Ok(());
        }
        let mut part = 0;
        for (i, seg) in self.segments.iter().enumerate() {
            let writable = match seg {
                Segment::Part(_) => part < given,
                Segment::Salt { by, .. } => {
                    if bucket.is_none() {
                        self.require_parts(key, by)?;
                    }
                    true
                }
                Segment::HashPrefix { of, .. } => *of < given,
                Segment::Literal(_) => true,
            };
            if i > 0
                && let Some(sep) = separator
            {
                out.push(sep);
            }
            if !writable {
                // A prefix ends here, with the separator that leads to the
                // next segment.
                return Ok(());
            }
            match seg {
                Segment::Part(spec) => {
                    key.encode_part(part, spec, self.format, out)?;
                    part += 1;
                }
                Segment::Salt { buckets, by } => {
                    let b = match bucket {
                        Some(b) => b,
                        None => self.compute_salt(key, *buckets, by)?,
                    };
                    self.write_salt(b, *buckets, out);
                }
                Segment::HashPrefix { len, of } => {
                    let digest = self.compute_hash(key, *of)?;
                    self.write_hash(&digest, *len, out);
                }
                Segment::Literal(bytes) => out.extend_from_slice(bytes),
            }
        }
        Ok(())
    }

    /// The plain bytes of the given parts: concatenated in binary keys,
    /// joined by the separator in text keys.
    fn plain_bytes<K: KeyTuple + ?Sized>(&self, key: &K, parts: &[usize], out: &mut Vec<u8>) -> Result<(), KeyError> {
        let specs: Vec<&PartSpec> = self.parts().collect();
        for (n, &i) in parts.iter().enumerate() {
            if n > 0
                && let Some(sep) = self.format.separator_byte()
            {
                out.push(sep);
            }
            let spec = specs.get(i).ok_or_else(|| KeyError::Schema(format!("no part {i}")))?;
            key.write_plain(i, spec, self.format, out)?;
        }
        Ok(())
    }

    pub(super) fn compute_salt<K: KeyTuple + ?Sized>(
        &self,
        key: &K,
        buckets: u16,
        by: &[usize],
    ) -> Result<u16, KeyError> {
        let mut plain = Vec::new();
        self.plain_bytes(key, by, &mut plain)?;
        Ok(salt_bucket(&plain, buckets))
    }

    pub(super) fn compute_hash<K: KeyTuple + ?Sized>(&self, key: &K, of: usize) -> Result<[u8; 16], KeyError> {
        let mut plain = Vec::new();
        self.plain_bytes(key, &[of], &mut plain)?;
        Ok(Md5::digest(&plain).into())
    }

    pub(super) fn write_salt(&self, bucket: u16, buckets: u16, out: &mut Vec<u8>) {
        match self.format {
            // Validation caps buckets at 256, so a bucket fits in a byte.
            KeyFormat::Binary => out.push(bucket as u8),
            KeyFormat::Text { .. } => {
                let text = format!("{bucket:0width$}", width = super::salt_text_width(buckets));
                out.extend_from_slice(text.as_bytes());
            }
        }
    }

    pub(super) fn write_hash(&self, digest: &[u8; 16], len: u8, out: &mut Vec<u8>) {
        let len = usize::from(len);
        match self.format {
            KeyFormat::Binary => out.extend_from_slice(&digest[..len]),
            KeyFormat::Text { .. } => {
                let mut hex = Vec::with_capacity(32);
                write_hex(digest, &mut hex);
                out.extend_from_slice(&hex[..len]);
            }
        }
    }
}

/// The salt bucket of some plain bytes: `crc32(bytes) % buckets`, with the
/// CRC-32 of zlib (`zlib.crc32` in Python, `java.util.zip.CRC32` in Java).
pub fn salt_bucket(plain: &[u8], buckets: u16) -> u16 {
    (crc32fast::hash(plain) % u32::from(buckets.max(1))) as u16
}

/// `Long.MAX_VALUE - millis`, refusing times before 1970.
fn reverse_millis(millis: Option<i64>, kind: PartKind) -> Result<i64, PartError> {
    let millis = millis.ok_or(PartError::Unsupported {
        kind,
        what: "reverse_ts",
    })?;
    if millis < 0 {
        return Err(PartError::NegativeTimestamp { millis });
    }
    Ok(i64::MAX - millis)
}

fn reversed_string(text: Option<&str>, kind: PartKind) -> Result<String, PartError> {
    text.map(|s| s.chars().rev().collect())
        .ok_or(PartError::Unsupported { kind, what: "reversed" })
}

/// Replaces each digit with its complement, so that text sorts descending.
/// Characters outside the alphabet (a uuid's hyphens) stay as they are.
fn complement_text(text: &mut [u8], alphabet: TextAlphabet) {
    for c in text {
        *c = match (alphabet, *c) {
            (TextAlphabet::Decimal, b'0'..=b'9') => b'9' - (*c - b'0'),
            (TextAlphabet::Hex, b'0'..=b'9') => hex_digit(15 - (*c - b'0')),
            (TextAlphabet::Hex, b'a'..=b'f') => hex_digit(15 - (*c - b'a' + 10)),
            (_, other) => other,
        };
    }
}

fn hex_digit(n: u8) -> u8 {
    if n < 10 { b'0' + n } else { b'a' + n - 10 }
}

/// Writes one part with its modifiers. `kind` is the value's kind, checked
/// against the part's declared kind.
///
/// Binary parts without `reversed` take an inlined fast path; everything
/// else, and every error, goes out of line. Always inlined: the fast path is
/// a few instructions once `T` is known, and a call per part cost 30% of a
/// 4-part key in the `key_codec` benchmark.
#[inline(always)]
pub(crate) fn encode_part<T: KeyPart + ?Sized>(
    value: &T,
    kind: PartKind,
    spec: &PartSpec,
    format: KeyFormat,
    out: &mut Vec<u8>,
) -> Result<(), KeyError> {
    if kind == spec.kind && format == KeyFormat::Binary {
        let start = out.len();
        let written = match spec.transform {
            Transform::None => value.write_binary(out),
            Transform::ReverseTs => match value.to_millis() {
                Some(millis) if millis >= 0 => {
                    out.extend_from_slice(&(i64::MAX - millis).to_be_bytes());
                    Ok(())
                }
                _ => return encode_part_general(value, kind, spec, format, out),
            },
            Transform::Reversed => return encode_part_general(value, kind, spec, format, out),
        };
        if let Err(source) = written {
            out.truncate(start);
            return Err(encode_error(spec, source));
        }
        if spec.order == Order::Desc {
            out[start..].iter_mut().for_each(|b| *b = !*b);
        }
        return Ok(());
    }
    encode_part_general(value, kind, spec, format, out)
}

#[cold]
#[inline(never)]
fn encode_error(spec: &PartSpec, source: PartError) -> KeyError {
    KeyError::Encode {
        part: spec.name.to_string(),
        cause: source,
    }
}

/// Every case of [`encode_part`]: text keys, `reversed`, and errors.
#[inline(never)]
fn encode_part_general<T: KeyPart + ?Sized>(
    value: &T,
    kind: PartKind,
    spec: &PartSpec,
    format: KeyFormat,
    out: &mut Vec<u8>,
) -> Result<(), KeyError> {
    if kind != spec.kind {
        return Err(KeyError::KindMismatch {
            part: spec.name.to_string(),
            expected: spec.kind,
            given: kind,
        });
    }
    let start = out.len();
    let written = match format {
        KeyFormat::Binary => match spec.transform {
            Transform::None => value.write_binary(out),
            Transform::ReverseTs => {
                reverse_millis(value.to_millis(), kind).map(|r| out.extend_from_slice(&r.to_be_bytes()))
            }
            Transform::Reversed => reversed_string(value.as_str(), kind).map(|s| write_escaped(s.as_bytes(), out)),
        },
        KeyFormat::Text { separator } => {
            let written = match spec.transform {
                Transform::None => value.write_text(spec.width, out),
                Transform::ReverseTs => reverse_millis(value.to_millis(), kind)
                    .and_then(|r| r.write_text(super::Width::Fixed(REVERSE_TS_DIGITS as u16), out)),
                Transform::Reversed => {
                    reversed_string(value.as_str(), kind).map(|s| out.extend_from_slice(s.as_bytes()))
                }
            };
            match (written, separator) {
                (Ok(()), Some(sep)) if spec.encoded_len(format).is_none() && out[start..].contains(&(sep as u8)) => {
                    Err(PartError::ContainsSeparator {
                        value: String::from_utf8_lossy(&out[start..]).into_owned(),
                        separator: sep,
                    })
                }
                (written, _) => written,
            }
        }
    };
    if let Err(source) = written {
        out.truncate(start);
        return Err(encode_error(spec, source));
    }
    if spec.order == Order::Desc {
        match format {
            KeyFormat::Binary => out[start..].iter_mut().for_each(|b| *b = !*b),
            KeyFormat::Text { .. } => complement_text(&mut out[start..], spec.kind.text_alphabet()),
        }
    }
    Ok(())
}

/// Writes the plain bytes of one part (see the module docs).
pub(crate) fn write_plain<T: KeyPart + ?Sized>(
    value: &T,
    kind: PartKind,
    spec: &PartSpec,
    format: KeyFormat,
    out: &mut Vec<u8>,
) -> Result<(), KeyError> {
    if kind != spec.kind {
        return Err(KeyError::KindMismatch {
            part: spec.name.to_string(),
            expected: spec.kind,
            given: kind,
        });
    }
    let written = match format {
        KeyFormat::Binary => value.write_plain(out),
        KeyFormat::Text { .. } => value.write_text(spec.width, out),
    };
    written.map_err(|source| KeyError::Encode {
        part: spec.name.to_string(),
        cause: source,
    })
}

/// A derived segment read from a key, kept to be checked against the parts.
#[derive(Debug, Clone)]
struct DerivedRead {
    segment: usize,
    start: usize,
    end: usize,
}

/// Reads a key's segments one by one. [`KeySchema::decode`] drives it through
/// [`FromKeyTuple`]; use it directly to decode keys part by part.
#[derive(Debug)]
pub struct KeyCursor<'a> {
    schema: &'a KeySchema,
    key: &'a [u8],
    pos: usize,
    segment: usize,
    parts_read: usize,
    derived: Vec<DerivedRead>,
}

/// How to read one kind of value, in both formats: the typed readers of
/// [`FromKeyPart`] types, or a dynamic one for the key inspector.
pub(crate) trait ReadPart {
    type Value;
    fn kind(&self) -> PartKind;
    fn binary(&self, input: &mut BinaryReader<'_>) -> Result<Self::Value, PartError>;
    fn text(&self, text: &[u8]) -> Result<Self::Value, PartError>;
    fn millis(&self, millis: i64) -> Result<Self::Value, PartError>;
    fn string(&self, text: String) -> Result<Self::Value, PartError>;
}

/// The reader of a [`FromKeyPart`] type.
pub(crate) struct Typed<T>(std::marker::PhantomData<T>);

impl<T: FromKeyPart> ReadPart for Typed<T> {
    type Value = T;
    #[inline]
    fn kind(&self) -> PartKind {
        T::KIND
    }
    #[inline]
    fn binary(&self, input: &mut BinaryReader<'_>) -> Result<T, PartError> {
        T::read_binary(input)
    }
    fn text(&self, text: &[u8]) -> Result<T, PartError> {
        T::read_text(text)
    }
    fn millis(&self, millis: i64) -> Result<T, PartError> {
        T::from_millis(millis)
    }
    fn string(&self, text: String) -> Result<T, PartError> {
        T::from_string(text)
    }
}

impl<'a> KeyCursor<'a> {
    /// A cursor at the start of `key`.
    pub fn new(schema: &'a KeySchema, key: &'a [u8]) -> Self {
        KeyCursor {
            schema,
            key,
            pos: 0,
            segment: 0,
            parts_read: 0,
            derived: Vec::new(),
        }
    }

    /// The byte offset reached.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Reads the next part as a `T`.
    #[inline]
    pub fn part<T: FromKeyPart>(&mut self) -> Result<T, KeyError> {
        self.part_with(&Typed::<T>(std::marker::PhantomData))
    }

    /// Reads the next part, skipping (and recording) derived segments before it.
    ///
    /// Binary parts without `reversed` take an inlined fast path, as in
    /// [`encode_part`].
    #[inline(always)]
    pub(crate) fn part_with<R: ReadPart>(&mut self, reader: &R) -> Result<R::Value, KeyError> {
        let spec = self.next_part_spec()?;
        if reader.kind() == spec.kind
            && self.schema.format == KeyFormat::Binary
            && spec.transform != Transform::Reversed
        {
            let start = self.pos;
            let mut input = BinaryReader::with_invert(&self.key[start..], spec.order == Order::Desc);
            let read = match spec.transform {
                Transform::ReverseTs => input.take::<8>().and_then(|b| match i64::from_be_bytes(b) {
                    reversed if reversed >= 0 => reader.millis(i64::MAX - reversed),
                    _ => Err(PartError::Invalid("a reverse_ts part is below 0")),
                }),
                _ => reader.binary(&mut input),
            };
            return match read {
                Ok(value) => {
                    self.pos += input.position();
                    self.parts_read += 1;
                    Ok(value)
                }
                Err(source) => Err(self.decode_error(&spec.name, start, source)),
            };
        }
        self.part_general(spec, reader)
    }

    /// Every case of [`part_with`](Self::part_with): text keys, `reversed`,
    /// and kind mismatches.
    #[inline(never)]
    fn part_general<R: ReadPart>(&mut self, spec: &'a PartSpec, reader: &R) -> Result<R::Value, KeyError> {
        if reader.kind() != spec.kind {
            return Err(KeyError::KindMismatch {
                part: spec.name.to_string(),
                expected: spec.kind,
                given: reader.kind(),
            });
        }
        let start = self.pos;
        let rest = &self.key[start..];
        let format = self.schema.format;
        let desc = spec.order == Order::Desc;
        let read = match format {
            KeyFormat::Binary => {
                let mut input = BinaryReader::with_invert(rest, desc);
                let value = match spec.transform {
                    Transform::None => reader.binary(&mut input),
                    Transform::ReverseTs => input.take::<8>().and_then(|b| {
                        let reversed = i64::from_be_bytes(b);
                        if reversed < 0 {
                            return Err(PartError::Invalid("a reverse_ts part is below 0"));
                        }
                        reader.millis(i64::MAX - reversed)
                    }),
                    Transform::Reversed => input.read_escaped().and_then(|bytes| {
                        let text = String::from_utf8(bytes)
                            .map_err(|_| PartError::Invalid("a string part is not valid UTF-8"))?;
                        reader.string(text.chars().rev().collect())
                    }),
                };
                value.map(|v| (v, input.position()))
            }
            KeyFormat::Text { .. } => {
                let len = match spec.encoded_len(format) {
                    Some(len) => len,
                    None => match format.separator_byte() {
                        Some(sep) => memchr::memchr(sep, rest).unwrap_or(rest.len()),
                        None => rest.len(),
                    },
                };
                match rest.get(..len) {
                    None => Err(PartError::Truncated),
                    Some(field) => {
                        let mut owned;
                        let field = if desc {
                            owned = field.to_vec();
                            complement_text(&mut owned, spec.kind.text_alphabet());
                            &owned[..]
                        } else {
                            field
                        };
                        let value = match spec.transform {
                            Transform::None => reader.text(field),
                            Transform::ReverseTs => i64::read_text(field).and_then(|r| reader.millis(i64::MAX - r)),
                            Transform::Reversed => std::str::from_utf8(field)
                                .map_err(|_| PartError::Invalid("a string part is not valid UTF-8"))
                                .and_then(|s| reader.string(s.chars().rev().collect())),
                        };
                        value.map(|v| (v, len))
                    }
                }
            }
        };
        match read {
            Ok((value, len)) => {
                self.pos += len;
                self.parts_read += 1;
                Ok(value)
            }
            Err(source) => Err(self.decode_error(&spec.name, start, source)),
        }
    }

    /// Reads the remaining derived segments and checks that the key ends.
    pub fn finish(&mut self) -> Result<(), KeyError> {
        while self.segment < self.schema.segments.len() {
            if let Segment::Part(_) = self.schema.segments[self.segment] {
                return Err(KeyError::Arity {
                    expected: self.schema.part_count(),
                    given: self.parts_read,
                });
            }
            self.next_segment()?;
        }
        if self.pos != self.key.len() {
            return Err(KeyError::Trailing {
                key: Printable(self.key).to_string(),
                offset: self.pos,
                count: self.key.len() - self.pos,
            });
        }
        Ok(())
    }

    /// Checks every salt and hash prefix read against the decoded parts.
    pub fn verify<K: KeyTuple + ?Sized>(&self, parts: &K) -> Result<(), KeyError> {
        for d in &self.derived {
            let found = &self.key[d.start..d.end];
            let mut expected = Vec::new();
            match &self.schema.segments[d.segment] {
                Segment::Salt { buckets, by } => {
                    let bucket = self.schema.compute_salt(parts, *buckets, by)?;
                    self.schema.write_salt(bucket, *buckets, &mut expected);
                }
                Segment::HashPrefix { len, of } => {
                    let digest = self.schema.compute_hash(parts, *of)?;
                    self.schema.write_hash(&digest, *len, &mut expected);
                }
                _ => continue,
            }
            if expected != found {
                return Err(KeyError::DerivedMismatch {
                    key: Printable(self.key).to_string(),
                    segment: segment_label(&self.schema.segments[d.segment]).into(),
                    found: Printable(found).to_string(),
                    expected: Printable(&expected).to_string(),
                });
            }
        }
        Ok(())
    }

    /// Steps over derived segments up to the next part and returns its spec.
    #[inline(always)]
    pub(crate) fn next_part_spec(&mut self) -> Result<&'a PartSpec, KeyError> {
        // Keys of parts only, in binary, have nothing between their parts.
        if self.schema.layout.parts_only
            && self.schema.format == KeyFormat::Binary
            && let Some(Segment::Part(spec)) = self.schema.segments.get(self.segment)
        {
            self.segment += 1;
            return Ok(spec);
        }
        self.next_part_spec_general()
    }

    #[inline(never)]
    fn next_part_spec_general(&mut self) -> Result<&'a PartSpec, KeyError> {
        loop {
            if self.segment >= self.schema.segments.len() {
                return Err(KeyError::Arity {
                    expected: self.schema.part_count(),
                    given: self.parts_read + 1,
                });
            }
            if let Some(spec) = self.next_segment()? {
                return Ok(spec);
            }
        }
    }

    /// Reads the separator before the next segment, then the segment itself
    /// if it is derived; returns the spec if it is a part (not yet read).
    fn next_segment(&mut self) -> Result<Option<&'a PartSpec>, KeyError> {
        let index = self.segment;
        let schema: &'a KeySchema = self.schema;
        let seg = &schema.segments[index];
        if index > 0
            && let Some(sep) = schema.format.separator_byte()
        {
            if self.key.get(self.pos) != Some(&sep) {
                let source = if self.pos >= self.key.len() {
                    PartError::Truncated
                } else {
                    PartError::Invalid("expected the separator")
                };
                return Err(self.decode_error(segment_label_or_part(seg), self.pos, source));
            }
            self.pos += 1;
        }
        self.segment += 1;
        let start = self.pos;
        let rest = &self.key[start..];
        let text = matches!(schema.format, KeyFormat::Text { .. });
        let len = match seg {
            Segment::Part(spec) => return Ok(Some(spec)),
            Segment::Salt { buckets, .. } => {
                let len = if text { super::salt_text_width(*buckets) } else { 1 };
                let field = rest.get(..len).ok_or(PartError::Truncated);
                let bucket = field.and_then(|f| if text { u16::read_text(f) } else { Ok(u16::from(f[0])) });
                match bucket {
                    Ok(b) if b < *buckets => len,
                    Ok(b) => {
                        return Err(self.decode_error(
                            "salt",
                            start,
                            PartError::OutOfRange(format!("bucket {b} of {buckets}")),
                        ));
                    }
                    Err(e) => return Err(self.decode_error("salt", start, e)),
                }
            }
            Segment::HashPrefix { len, .. } => {
                let len = usize::from(*len);
                match rest.get(..len) {
                    None => return Err(self.decode_error("hash_prefix", start, PartError::Truncated)),
                    Some(field) if text && !field.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) => {
                        return Err(self.decode_error("hash_prefix", start, PartError::Invalid("not lowercase hex")));
                    }
                    Some(_) => len,
                }
            }
            Segment::Literal(bytes) => {
                if !rest.starts_with(bytes) {
                    return Err(self.decode_error("literal", start, PartError::Invalid("the literal does not match")));
                }
                bytes.len()
            }
        };
        self.pos += len;
        self.derived.push(DerivedRead {
            segment: index,
            start,
            end: self.pos,
        });
        Ok(None)
    }

    pub(crate) fn derived_segments(&self) -> impl Iterator<Item = (usize, &'a [u8])> + '_ {
        let key: &'a [u8] = self.key;
        self.derived.iter().map(move |d| (d.segment, &key[d.start..d.end]))
    }

    #[cold]
    #[inline(never)]
    fn decode_error(&self, part: &str, offset: usize, source: PartError) -> KeyError {
        KeyError::Decode {
            key: Printable(self.key).to_string(),
            part: part.to_string(),
            offset,
            cause: source,
        }
    }
}

fn segment_label(seg: &Segment) -> &'static str {
    match seg {
        Segment::Part(_) => "part",
        Segment::Salt { .. } => "salt",
        Segment::HashPrefix { .. } => "hash_prefix",
        Segment::Literal(_) => "literal",
    }
}

fn segment_label_or_part(seg: &Segment) -> &str {
    match seg {
        Segment::Part(spec) => &spec.name,
        other => segment_label(other),
    }
}
