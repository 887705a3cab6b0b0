//! Key patterns: some parts of a composite key given, the others any
//! ([`Any`]), as the fixed and free bytes of a fuzzy match
//! ([`KeySchema::fuzzy`]).

use super::codec::{encode_part, write_plain};
use super::part::KeyPart;
use super::tuple::KeyTuple;
use super::{KeyError, KeyFormat, KeySchema, PartSpec, Segment};

/// Any value of a key part, in a key pattern: `(Any, day)` matches the keys
/// whose second part is `day`, whatever their first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Any;

/// One part of a key pattern: a value (any [`KeyPart`]) or [`Any`].
pub trait PatternPart {
    /// Whether the part is [`Any`].
    fn is_any(&self) -> bool;

    /// Writes the part's value as `spec` says (an error for [`Any`]).
    fn encode(&self, spec: &PartSpec, format: KeyFormat, out: &mut Vec<u8>) -> Result<(), KeyError>;

    /// Writes the plain bytes salts and hash prefixes hash (an error for
    /// [`Any`]).
    fn plain(&self, spec: &PartSpec, format: KeyFormat, out: &mut Vec<u8>) -> Result<(), KeyError>;
}

impl<T: KeyPart> PatternPart for T {
    fn is_any(&self) -> bool {
        false
    }
    fn encode(&self, spec: &PartSpec, format: KeyFormat, out: &mut Vec<u8>) -> Result<(), KeyError> {
        encode_part(self, T::KIND, spec, format, out)
    }
    fn plain(&self, spec: &PartSpec, format: KeyFormat, out: &mut Vec<u8>) -> Result<(), KeyError> {
        write_plain(self, T::KIND, spec, format, out)
    }
}

impl PatternPart for Any {
    fn is_any(&self) -> bool {
        true
    }
    fn encode(&self, spec: &PartSpec, _: KeyFormat, _: &mut Vec<u8>) -> Result<(), KeyError> {
        Err(any_has_no_value(spec))
    }
    fn plain(&self, spec: &PartSpec, _: KeyFormat, _: &mut Vec<u8>) -> Result<(), KeyError> {
        Err(any_has_no_value(spec))
    }
}

fn any_has_no_value(spec: &PartSpec) -> KeyError {
    KeyError::Pattern(format!(
        "key part `{}` is any value: it has no bytes to write",
        spec.name
    ))
}

/// A key pattern: leading parts of a key, in key order, each a value or
/// [`Any`]; a tuple such as `(Any, day)`, or one part.
pub trait KeyPattern {
    /// The number of parts given.
    fn arity(&self) -> usize;

    /// Part `index`.
    fn part(&self, index: usize) -> Option<&dyn PatternPart>;
}

impl<P: PatternPart> KeyPattern for P {
    fn arity(&self) -> usize {
        1
    }
    fn part(&self, index: usize) -> Option<&dyn PatternPart> {
        (index == 0).then_some(self as &dyn PatternPart)
    }
}

macro_rules! pattern_impls {
    ($len:expr => $($idx:tt $T:ident),+) => {
        impl<$($T: PatternPart),+> KeyPattern for ($($T,)+) {
            fn arity(&self) -> usize {
                $len
            }
            fn part(&self, index: usize) -> Option<&dyn PatternPart> {
                match index {
                    $($idx => Some(&self.$idx as &dyn PatternPart),)+
                    _ => None,
                }
            }
        }
    };
}

pattern_impls!(1 => 0 A);
pattern_impls!(2 => 0 A, 1 B);
pattern_impls!(3 => 0 A, 1 B, 2 C);
pattern_impls!(4 => 0 A, 1 B, 2 C, 3 D);
pattern_impls!(5 => 0 A, 1 B, 2 C, 3 D, 4 E);
pattern_impls!(6 => 0 A, 1 B, 2 C, 3 D, 4 E, 5 F);
pattern_impls!(7 => 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G);
pattern_impls!(8 => 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H);

/// The given parts of a pattern as a key tuple, to compute salts and hash
/// prefixes from (asked only for parts that are given).
struct Given<'p, P: ?Sized>(&'p P);

impl<P: KeyPattern + ?Sized> KeyTuple for Given<'_, P> {
    fn arity(&self) -> usize {
        self.0.arity()
    }
    fn encode_part(&self, index: usize, spec: &PartSpec, format: KeyFormat, out: &mut Vec<u8>) -> Result<(), KeyError> {
        self.part(index, spec)?.encode(spec, format, out)
    }
    fn write_plain(&self, index: usize, spec: &PartSpec, format: KeyFormat, out: &mut Vec<u8>) -> Result<(), KeyError> {
        self.part(index, spec)?.plain(spec, format, out)
    }
}

impl<P: KeyPattern + ?Sized> Given<'_, P> {
    fn part(&self, index: usize, spec: &PartSpec) -> Result<&dyn PatternPart, KeyError> {
        self.0.part(index).ok_or_else(|| any_has_no_value(spec))
    }

    /// Whether part `index` has a value.
    fn has(&self, index: usize) -> bool {
        self.0.part(index).is_some_and(|p| !p.is_any())
    }
}

/// The pieces of a key a pattern fixes, in key order: `(bytes, fixed)`,
/// the bytes of a piece that is not fixed standing for its width.
pub type PatternPieces = Vec<(Vec<u8>, bool)>;

impl KeySchema {
    /// The bytes a key pattern fixes and the bytes it leaves free, in key
    /// order, as a fuzzy match needs them (`FuzzyRowFilter`): each given
    /// part's encoding, each [`Any`] part's width, a salt or hash prefix
    /// fixed when the parts it is computed from are given (else free),
    /// literals and separators fixed. The pieces end with the last fixed
    /// one; `None` when nothing is fixed (every key matches).
    ///
    /// A free part must have a fixed width when a fixed piece follows it:
    /// a number, a timestamp, a `[u8; N]` or a UUID in a binary key, a
    /// number of `Width::Fixed` or `Natural` width in a text key; a string
    /// is [`KeyError::Pattern`].
    ///
    /// ```
    /// use hmap::key::{Any, KeyFormat, KeySchema, PartKind, PartSpec, Segment};
    ///
    /// // <salt by customer><customer: u32><day: u32><seq: u32>
    /// let schema = KeySchema::new(KeyFormat::Binary, vec![
    ///     Segment::Salt { buckets: 16, by: vec![0].into() },
    ///     Segment::Part(PartSpec::new("customer", PartKind::U32)),
    ///     Segment::Part(PartSpec::new("day", PartKind::U32)),
    ///     Segment::Part(PartSpec::new("seq", PartKind::U32)),
    /// ])?;
    /// // Every customer's keys of day 20261128: salt and customer free.
    /// let pieces = schema.fuzzy(&(Any, 20261128u32))?.expect("the day is fixed");
    /// let fixed: Vec<bool> = pieces.iter().map(|(_, fixed)| *fixed).collect();
    /// assert_eq!(fixed, [false, false, true]);
    /// assert_eq!(pieces[0].0.len() + pieces[1].0.len(), 1 + 4);
    /// # Ok::<(), hmap::key::KeyError>(())
    /// ```
    pub fn fuzzy<P: KeyPattern + ?Sized>(&self, pattern: &P) -> Result<Option<PatternPieces>, KeyError> {
        let given = pattern.arity();
        if given > self.part_count() {
            return Err(KeyError::Arity {
                expected: self.part_count(),
                given,
            });
        }
        let parts = Given(pattern);
        let separator = self.format().separator_byte();
        let mut pieces: PatternPieces = Vec::new();
        // Whether each piece is a separator.
        let mut separators: Vec<bool> = Vec::new();
        // A free piece of no fixed width: nothing fixed may follow it.
        let mut floating: Option<String> = None;
        let mut part = 0;
        for (i, segment) in self.segments().iter().enumerate() {
            if i > 0
                && let Some(sep) = separator
                && floating.is_none()
            {
                pieces.push((vec![sep], true));
                separators.push(true);
            }
            if matches!(segment, Segment::Part(_)) && part >= given {
                break;
            }
            let mut piece = Vec::new();
            let fixed = match segment {
                Segment::Part(spec) => {
                    let has = parts.has(part);
                    if has {
                        parts.encode_part(part, spec, self.format(), &mut piece)?;
                    } else {
                        match spec.encoded_len(self.format()) {
                            Some(width) => piece.resize(width, 0),
                            None => floating = floating.or_else(|| Some(spec.name.to_string())),
                        }
                    }
                    part += 1;
                    has
                }
                Segment::Salt { buckets, by } => {
                    let has = by.iter().all(|&b| parts.has(b));
                    if has {
                        let bucket = self.compute_salt(&parts, *buckets, by)?;
                        self.write_salt(bucket, *buckets, &mut piece);
                    } else {
                        self.write_salt(0, *buckets, &mut piece);
                    }
                    has
                }
                Segment::HashPrefix { len, of } => {
                    let has = parts.has(*of);
                    let digest = if has { self.compute_hash(&parts, *of)? } else { [0; 16] };
                    self.write_hash(&digest, *len, &mut piece);
                    has
                }
                Segment::Literal(bytes) => {
                    piece.extend_from_slice(bytes);
                    true
                }
            };
            if fixed && let Some(name) = &floating {
                return Err(KeyError::Pattern(format!(
                    "key part `{name}` is any value and has no fixed width, so the bytes after it have no fixed \
                     place: give it, or leave it out with every part after it"
                )));
            }
            if floating.is_none() || fixed {
                pieces.push((piece, fixed));
                separators.push(false);
            }
        }
        // The pieces end with the last fixed one but a separator, and the
        // separator right after it (`u1_` does not match `u12`).
        let Some(last) = (0..pieces.len()).rev().find(|&i| pieces[i].1 && !separators[i]) else {
            return Ok(None);
        };
        let end = if separators.get(last + 1) == Some(&true) {
            last + 2
        } else {
            last + 1
        };
        pieces.truncate(end);
        Ok(Some(pieces))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{PartKind, Width};

    fn pieces(p: &PatternPieces) -> Vec<(Vec<u8>, bool)> {
        p.clone()
    }

    #[test]
    fn a_text_key_fixes_its_separators_and_given_parts() {
        let schema = KeySchema::new(
            KeyFormat::text(),
            vec![
                Segment::Part(PartSpec::new("shop", PartKind::U32).width(Width::Fixed(3))),
                Segment::Part(PartSpec::new("day", PartKind::Str)),
                Segment::Part(PartSpec::new("seq", PartKind::U32)),
            ],
        )
        .unwrap();
        let p = schema.fuzzy(&(Any, "2026-11-28")).unwrap().unwrap();
        assert_eq!(
            pieces(&p),
            [
                (vec![0; 3], false),
                (b"_".to_vec(), true),
                (b"2026-11-28".to_vec(), true),
                (b"_".to_vec(), true)
            ]
        );
        // Nothing given: every key.
        assert_eq!(schema.fuzzy(&(Any,)).unwrap(), None);
        assert_eq!(schema.fuzzy(&(Any, Any, Any)).unwrap(), None);
    }

    #[test]
    fn a_free_part_without_a_width_cannot_come_before_a_fixed_one() {
        let schema = KeySchema::new(
            KeyFormat::Binary,
            vec![
                Segment::Part(PartSpec::new("user", PartKind::Str)),
                Segment::Part(PartSpec::new("day", PartKind::U32)),
            ],
        )
        .unwrap();
        let err = schema.fuzzy(&(Any, 7u32)).unwrap_err();
        assert!(matches!(&err, KeyError::Pattern(m) if m.contains("`user`")), "{err}");
        // Given, the string is fixed bytes, and what follows may be free.
        let p = schema.fuzzy(&("u1", Any)).unwrap().unwrap();
        assert!(p.iter().all(|(_, fixed)| *fixed));
        assert_eq!(
            p.concat_fixed(),
            schema.encode_prefix(&("u1",)).unwrap(),
            "a pattern of leading parts is their prefix"
        );
    }

    #[test]
    fn a_salt_is_fixed_when_its_parts_are_given() {
        let schema = KeySchema::new(
            KeyFormat::Binary,
            vec![
                Segment::Salt {
                    buckets: 8,
                    by: vec![0].into(),
                },
                Segment::Part(PartSpec::new("customer", PartKind::U32)),
                Segment::Part(PartSpec::new("day", PartKind::U32)),
            ],
        )
        .unwrap();
        let p = schema.fuzzy(&(42u32, 7u32)).unwrap().unwrap();
        assert!(p.iter().all(|(_, fixed)| *fixed));
        assert_eq!(p.concat_fixed(), schema.encode(&(42u32, 7u32)).unwrap());
        let p = schema.fuzzy(&(Any, 7u32)).unwrap().unwrap();
        assert_eq!(
            p.iter().map(|(b, f)| (b.len(), *f)).collect::<Vec<_>>(),
            [(1, false), (4, false), (4, true)]
        );
        assert!(matches!(schema.fuzzy(&(1u32, 2u32, 3u32)), Err(KeyError::Arity { .. })));
        // A value of another kind than the part's is the encoder's error.
        assert!(matches!(schema.fuzzy(&(Any, "7")), Err(KeyError::KindMismatch { .. })));
    }

    trait Concat {
        fn concat_fixed(&self) -> Vec<u8>;
    }

    impl Concat for PatternPieces {
        fn concat_fixed(&self) -> Vec<u8> {
            self.iter().flat_map(|(b, _)| b.clone()).collect()
        }
    }
}
