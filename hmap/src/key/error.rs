use super::part::PartKind;

/// Why one key part could not be written or read. [`KeyError`] adds which part
/// of which key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PartError {
    /// A float part was NaN, which has no place in a sorted key.
    #[error("NaN cannot be stored in a rowkey")]
    NaN,
    /// A negative number in a text key, where numbers are unsigned digits.
    #[error("{value} is negative; text keys hold non-negative numbers only (use the binary format)")]
    Negative {
        /// The value, as text.
        value: String,
    },
    /// A number with more digits than the part's text width.
    #[error("{value} does not fit in {width} digits")]
    TooWide {
        /// The value, as text.
        value: String,
        /// The declared width.
        width: u16,
    },
    /// A variable-width text part that contains the key's separator.
    #[error("{value:?} contains the separator {separator:?}")]
    ContainsSeparator {
        /// The offending text.
        value: String,
        /// The key's separator.
        separator: char,
    },
    /// `reverse_ts` of a time before 1970: `Long.MAX_VALUE - ts` would overflow.
    #[error("timestamp {millis} ms is before 1970 and cannot be reversed")]
    NegativeTimestamp {
        /// The timestamp in milliseconds.
        millis: i64,
    },
    /// A decoded value outside its type's range.
    #[error("{0} is out of range")]
    OutOfRange(String),
    /// The key ended inside the part.
    #[error("the key ends inside the part")]
    Truncated,
    /// Bytes that no value encodes to.
    #[error("{0}")]
    Invalid(&'static str),
    /// A modifier or format the part's kind does not support.
    #[error("{kind} parts do not support {what}")]
    Unsupported {
        /// The part's kind.
        kind: PartKind,
        /// The modifier or format.
        what: &'static str,
    },
}

/// An error building, encoding or decoding a rowkey.
///
/// Keys are shown in the printable form HBase's shell uses
/// (`Bytes.toStringBinary`: printable ASCII as is, other bytes as `\xHH`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// A value could not be written into its part.
    #[error("key part `{part}`: {cause}")]
    Encode {
        /// The part's name.
        part: String,
        /// What went wrong.
        /// Already part of this error's message, so not its
        /// [`source`](std::error::Error::source): a chain printer shows it once.
        cause: PartError,
    },
    /// Stored bytes do not decode with the key's schema.
    #[error("rowkey {key} does not decode: `{part}` at byte {offset}: {cause}")]
    Decode {
        /// The whole key, printable.
        key: String,
        /// The part (or `salt`, `hash_prefix`, `literal`) being read.
        part: String,
        /// Where that part starts.
        offset: usize,
        /// What went wrong.
        /// Already part of this error's message, so not its
        /// [`source`](std::error::Error::source): a chain printer shows it once.
        cause: PartError,
    },
    /// Bytes left after the last part.
    #[error("rowkey {key} has {count} unexpected bytes after its last part, at byte {offset}")]
    Trailing {
        /// The whole key, printable.
        key: String,
        /// Where the extra bytes start.
        offset: usize,
        /// How many there are.
        count: usize,
    },
    /// A salt or hash prefix that does not match the parts it is computed from:
    /// the key was written with another schema, or corrupted.
    #[error("rowkey {key}: `{segment}` is {found} but the key's parts give {expected}")]
    DerivedMismatch {
        /// The whole key, printable.
        key: String,
        /// `salt` or `hash_prefix`.
        segment: String,
        /// What the key holds.
        found: String,
        /// What the parts hash to.
        expected: String,
    },
    /// A key value with a different number of parts than the schema.
    #[error("the key has {expected} parts but {given} were given")]
    Arity {
        /// Parts in the schema.
        expected: usize,
        /// Parts given.
        given: usize,
    },
    /// A value of another type than the part was declared with.
    #[error("key part `{part}` is declared as {expected} but a {given} was given")]
    KindMismatch {
        /// The part's name.
        part: String,
        /// The declared kind.
        expected: PartKind,
        /// The kind given.
        given: PartKind,
    },
    /// A prefix that does not give every part the salt is computed from, so
    /// its bucket is unknown: scan every bucket instead.
    #[error("the salt bucket depends on key part `{part}`, which the prefix does not give; scan every bucket instead")]
    SaltNotCovered {
        /// The first missing part.
        part: String,
    },
    /// A key pattern that cannot be matched byte by byte (a part of any
    /// value without a fixed width, before a part that is given).
    #[error("key pattern: {0}")]
    Pattern(String),
    /// A bucket number outside `0..buckets`.
    #[error("salt bucket {bucket} is out of range: the key has {buckets} buckets")]
    BucketOutOfRange {
        /// The bucket given.
        bucket: u16,
        /// The number of buckets.
        buckets: u16,
    },
    /// A key schema that breaks a rule (see [`KeySchema::validate`](super::KeySchema::validate)).
    #[error("invalid key schema: {0}")]
    Schema(String),
}
