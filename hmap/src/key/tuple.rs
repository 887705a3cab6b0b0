//! Composite key values: tuples (and single values) of key parts.

use super::codec::{KeyCursor, encode_part, write_plain};
use super::part::{FromKeyPart, KeyPart};
use super::{KeyError, KeyFormat, PartSpec, Segment};

/// A key value made of parts, in key order: a tuple such as
/// `("u42", at, 7u64)`, or a single part for a one-part key.
///
/// A tuple shorter than the schema is a key *prefix* (see
/// [`KeySchema::encode_prefix`](super::KeySchema::encode_prefix)).
pub trait KeyTuple {
    /// The number of parts given. (Not `len`, which would shadow the
    /// inherent `len` of strings and slices wherever this trait is in scope.)
    fn arity(&self) -> usize;

    /// Writes part `index` as `spec` says, with its modifiers.
    fn encode_part(&self, index: usize, spec: &PartSpec, format: KeyFormat, out: &mut Vec<u8>) -> Result<(), KeyError>;

    /// Writes the plain bytes of part `index`, which salts and hash prefixes hash.
    fn write_plain(&self, index: usize, spec: &PartSpec, format: KeyFormat, out: &mut Vec<u8>) -> Result<(), KeyError>;

    /// Writes every given part in order, with `separator` between them, for
    /// keys made of parts only (`specs[i]` is part `i`'s segment). Tuples
    /// override this with straight-line code; the default loops.
    fn encode_parts(
        &self,
        specs: &[Segment],
        format: KeyFormat,
        separator: Option<u8>,
        out: &mut Vec<u8>,
    ) -> Result<(), KeyError> {
        for index in 0..self.arity() {
            if index > 0
                && let Some(sep) = separator
            {
                out.push(sep);
            }
            self.encode_part(index, part_spec(specs, index)?, format, out)?;
        }
        Ok(())
    }
}

/// The spec of segment `index`, which the caller knows to be a part.
#[inline(always)]
fn part_spec(specs: &[Segment], index: usize) -> Result<&PartSpec, KeyError> {
    match specs.get(index) {
        Some(Segment::Part(spec)) => Ok(spec),
        _ => Err(KeyError::Schema(format!("segment {index} is not a part"))),
    }
}

/// A key value that can be decoded from stored bytes.
pub trait FromKeyTuple: KeyTuple + Sized {
    /// The number of parts.
    const LEN: usize;

    /// Reads every part from the cursor, in key order.
    fn decode_parts(cursor: &mut KeyCursor<'_>) -> Result<Self, KeyError>;
}

fn no_such_part(index: usize, len: usize) -> KeyError {
    KeyError::Arity {
        expected: index + 1,
        given: len,
    }
}

/// The empty prefix: every row.
impl KeyTuple for () {
    fn arity(&self) -> usize {
        0
    }
    fn encode_part(&self, index: usize, _: &PartSpec, _: KeyFormat, _: &mut Vec<u8>) -> Result<(), KeyError> {
        Err(no_such_part(index, 0))
    }
    fn write_plain(&self, index: usize, _: &PartSpec, _: KeyFormat, _: &mut Vec<u8>) -> Result<(), KeyError> {
        Err(no_such_part(index, 0))
    }
}

/// A single value is a one-part key.
impl<T: KeyPart + ?Sized> KeyTuple for T {
    fn arity(&self) -> usize {
        1
    }
    #[inline]
    fn encode_part(&self, index: usize, spec: &PartSpec, format: KeyFormat, out: &mut Vec<u8>) -> Result<(), KeyError> {
        match index {
            0 => encode_part(self, T::KIND, spec, format, out),
            _ => Err(no_such_part(index, 1)),
        }
    }
    fn write_plain(&self, index: usize, spec: &PartSpec, format: KeyFormat, out: &mut Vec<u8>) -> Result<(), KeyError> {
        match index {
            0 => write_plain(self, T::KIND, spec, format, out),
            _ => Err(no_such_part(index, 1)),
        }
    }
}

impl<T: FromKeyPart> FromKeyTuple for T {
    const LEN: usize = 1;
    #[inline]
    fn decode_parts(cursor: &mut KeyCursor<'_>) -> Result<Self, KeyError> {
        cursor.part()
    }
}

macro_rules! tuple_impls {
    ($len:expr => $($idx:tt $T:ident),+) => {
        impl<$($T: KeyPart),+> KeyTuple for ($($T,)+) {
            fn arity(&self) -> usize {
                $len
            }
            #[inline]
            fn encode_part(&self, index: usize, spec: &PartSpec, format: KeyFormat, out: &mut Vec<u8>) -> Result<(), KeyError> {
                match index {
                    $($idx => encode_part(&self.$idx, $T::KIND, spec, format, out),)+
                    _ => Err(no_such_part(index, $len)),
                }
            }
            fn write_plain(&self, index: usize, spec: &PartSpec, format: KeyFormat, out: &mut Vec<u8>) -> Result<(), KeyError> {
                match index {
                    $($idx => write_plain(&self.$idx, $T::KIND, spec, format, out),)+
                    _ => Err(no_such_part(index, $len)),
                }
            }
            #[inline]
            fn encode_parts(
                &self,
                specs: &[Segment],
                format: KeyFormat,
                separator: Option<u8>,
                out: &mut Vec<u8>,
            ) -> Result<(), KeyError> {
                $(
                    if $idx > 0 && let Some(sep) = separator {
                        out.push(sep);
                    }
                    encode_part(&self.$idx, $T::KIND, part_spec(specs, $idx)?, format, out)?;
                )+
                Ok(())
            }
        }

        /// A reference to a tuple is the tuple's key.
        impl<$($T: KeyPart),+> KeyTuple for &($($T,)+) {
            fn arity(&self) -> usize {
                $len
            }
            #[inline]
            fn encode_part(&self, index: usize, spec: &PartSpec, format: KeyFormat, out: &mut Vec<u8>) -> Result<(), KeyError> {
                (**self).encode_part(index, spec, format, out)
            }
            fn write_plain(&self, index: usize, spec: &PartSpec, format: KeyFormat, out: &mut Vec<u8>) -> Result<(), KeyError> {
                (**self).write_plain(index, spec, format, out)
            }
            #[inline]
            fn encode_parts(
                &self,
                specs: &[Segment],
                format: KeyFormat,
                separator: Option<u8>,
                out: &mut Vec<u8>,
            ) -> Result<(), KeyError> {
                (**self).encode_parts(specs, format, separator, out)
            }
        }

        impl<$($T: FromKeyPart),+> FromKeyTuple for ($($T,)+) {
            const LEN: usize = $len;
            #[inline]
            fn decode_parts(cursor: &mut KeyCursor<'_>) -> Result<Self, KeyError> {
                // Tuple fields are evaluated left to right: key order.
                Ok(($(cursor.part::<$T>()?,)+))
            }
        }
    };
}

tuple_impls!(1 => 0 A);
tuple_impls!(2 => 0 A, 1 B);
tuple_impls!(3 => 0 A, 1 B, 2 C);
tuple_impls!(4 => 0 A, 1 B, 2 C, 3 D);
tuple_impls!(5 => 0 A, 1 B, 2 C, 3 D, 4 E);
tuple_impls!(6 => 0 A, 1 B, 2 C, 3 D, 4 E, 5 F);
tuple_impls!(7 => 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G);
tuple_impls!(8 => 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H);
tuple_impls!(9 => 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I);
tuple_impls!(10 => 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J);
tuple_impls!(11 => 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K);
tuple_impls!(12 => 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L);
