//! Property tests of the key codec: for every part type and modifier, a
//! key decodes to what was encoded, byte order is tuple order, the leading
//! parts are a byte prefix of the whole key, and any bytes decode without a
//! panic (and, when they decode, re-encode to the same bytes).

use std::cmp::Ordering;
use std::fmt::Debug;

use bytes::Bytes;
use chrono::{DateTime, NaiveDate, Utc};
use hmap::key::{FromKeyPart, KeyError, KeyFormat, KeyPart, KeySchema, PartError, PartKind, PartSpec, Segment, Width};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use uuid::Uuid;

// ---------------------------------------------------------------------------
// Strategies

/// Strings from a small alphabet (so that prefixes and ties are common) that
/// includes NUL, the separator and multi-byte characters, or any string.
fn tricky_string() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::string::string_regex("[a\\x00_\u{ff}é\u{10ffff}b]{0,6}").unwrap(),
        any::<String>(),
    ]
}

fn tricky_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop_oneof![Just(0u8), Just(0xffu8), Just(1u8), any::<u8>()], 0..8)
}

/// chrono's range is about ±262,000 years.
const MAX_MILLIS: i64 = 8_000_000_000_000_000;

fn datetime() -> impl Strategy<Value = DateTime<Utc>> {
    (-MAX_MILLIS..MAX_MILLIS).prop_map(|ms| DateTime::from_timestamp_millis(ms).unwrap())
}

fn datetime_after_1970() -> impl Strategy<Value = DateTime<Utc>> {
    (0..MAX_MILLIS).prop_map(|ms| DateTime::from_timestamp_millis(ms).unwrap())
}

fn date() -> impl Strategy<Value = NaiveDate> {
    (-90_000_000i32..90_000_000).prop_filter_map("in chrono's range", NaiveDate::from_num_days_from_ce_opt)
}

fn text_date() -> impl Strategy<Value = NaiveDate> {
    (1i32..3_652_059).prop_filter_map("years 1 to 9999", NaiveDate::from_num_days_from_ce_opt)
}

fn float64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("not NaN", |f| !f.is_nan()),
        Just(0.0),
        Just(-0.0),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(f64::MIN_POSITIVE),
    ]
}

fn float32() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<f32>().prop_filter("not NaN", |f| !f.is_nan()),
        Just(0.0),
        Just(-0.0)
    ]
}

// ---------------------------------------------------------------------------
// Checks

fn schema(format: KeyFormat, segments: Vec<Segment>) -> KeySchema {
    KeySchema::new(format, segments).expect("valid schema")
}

fn flip(o: Ordering, desc: bool) -> Ordering {
    if desc { o.reverse() } else { o }
}

/// One part of type `T` followed by a `u8` tag, in the given format and
/// order: round trip, byte order = tuple order, prefix property.
fn check_part<T>(
    format: KeyFormat,
    spec: PartSpec,
    (a, ta): (&T, u8),
    (b, tb): (&T, u8),
    cmp: fn(&T, &T) -> Ordering,
    check_order: bool,
) -> Result<(), TestCaseError>
where
    T: KeyPart + FromKeyPart + Debug,
{
    let desc = spec.order == hmap::key::Order::Desc;
    let tag = match format {
        KeyFormat::Binary => PartSpec::new("tag", PartKind::U8),
        KeyFormat::Text { .. } => PartSpec::new("tag", PartKind::U8).width(Width::Fixed(3)),
    };
    let s = schema(format, vec![Segment::Part(spec), Segment::Part(tag)]);
    let ka = s.encode(&(a, ta)).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let kb = s.encode(&(b, tb)).map_err(|e| TestCaseError::fail(e.to_string()))?;

    let (da, dta): (T, u8) = s.decode(&ka).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(cmp(&da, a), Ordering::Equal, "round trip of {:?} gave {:?}", a, da);
    prop_assert_eq!(dta, ta);

    if check_order {
        let expected = flip(cmp(a, b), desc).then(ta.cmp(&tb));
        prop_assert_eq!(
            ka.cmp(&kb),
            expected,
            "{:?}/{} vs {:?}/{}: {:02x?} vs {:02x?}",
            a,
            ta,
            b,
            tb,
            ka,
            kb
        );
    }

    let prefix = s.encode_prefix(&(a,)).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert!(
        ka.starts_with(&prefix),
        "{:02x?} is not a prefix of {:02x?}",
        prefix,
        ka
    );
    Ok(())
}

fn both_orders<T>(
    format: KeyFormat,
    kind: PartKind,
    a: (&T, u8),
    b: (&T, u8),
    cmp: fn(&T, &T) -> Ordering,
    order: bool,
) -> Result<(), TestCaseError>
where
    T: KeyPart + FromKeyPart + Debug,
{
    check_part(format, PartSpec::new("v", kind), a, b, cmp, order)?;
    check_part(format, PartSpec::new("v", kind).desc(), a, b, cmp, order)
}

macro_rules! binary_props {
    ($($name:ident: $t:ty = $strat:expr, $cmp:expr;)*) => {
        mod binary_parts {
            use super::*;
            proptest! {
                #![proptest_config(ProptestConfig::with_cases(512))]
                $(
                    #[test]
                    fn $name(a in $strat, b in $strat, ta in any::<u8>(), tb in any::<u8>()) {
                        both_orders::<$t>(KeyFormat::Binary, <$t as KeyPart>::KIND, (&a, ta), (&b, tb), $cmp, true)?;
                    }
                )*
            }
        }
    };
}

binary_props! {
    u8_part: u8 = any::<u8>(), Ord::cmp;
    u16_part: u16 = any::<u16>(), Ord::cmp;
    u32_part: u32 = any::<u32>(), Ord::cmp;
    u64_part: u64 = any::<u64>(), Ord::cmp;
    u128_part: u128 = any::<u128>(), Ord::cmp;
    i8_part: i8 = any::<i8>(), Ord::cmp;
    i16_part: i16 = any::<i16>(), Ord::cmp;
    i32_part: i32 = any::<i32>(), Ord::cmp;
    i64_part: i64 = any::<i64>(), Ord::cmp;
    i128_part: i128 = any::<i128>(), Ord::cmp;
    f32_part: f32 = float32(), |a: &f32, b: &f32| (a + 0.0).total_cmp(&(b + 0.0));
    f64_part: f64 = float64(), |a: &f64, b: &f64| (a + 0.0).total_cmp(&(b + 0.0));
    bool_part: bool = any::<bool>(), Ord::cmp;
    string_part: String = tricky_string(), Ord::cmp;
    vec_part: Vec<u8> = tricky_bytes(), Ord::cmp;
    bytes_part: Bytes = tricky_bytes().prop_map(Bytes::from), Ord::cmp;
    array_part: [u8; 4] = any::<[u8; 4]>(), Ord::cmp;
    uuid_part: Uuid = any::<u128>().prop_map(Uuid::from_u128), Ord::cmp;
    datetime_part: DateTime<Utc> = datetime(), Ord::cmp;
    date_part: NaiveDate = date(), Ord::cmp;
}

/// Text keys: `order` says whether the rendering is fixed-width, so that
/// byte order is value order.
macro_rules! text_props {
    ($($name:ident: $t:ty = $strat:expr, order = $order:expr;)*) => {
        mod text_parts {
            use super::*;
            proptest! {
                #![proptest_config(ProptestConfig::with_cases(512))]
                $(
                    #[test]
                    fn $name(a in $strat, b in $strat, ta in any::<u8>(), tb in any::<u8>()) {
                        let kind = <$t as KeyPart>::KIND;
                        check_part::<$t>(KeyFormat::text(), PartSpec::new("v", kind), (&a, ta), (&b, tb), Ord::cmp, $order)?;
                        if $order {
                            check_part::<$t>(KeyFormat::text(), PartSpec::new("v", kind).desc(), (&a, ta), (&b, tb), Ord::cmp, true)?;
                        }
                    }
                )*
            }
        }
    };
}

text_props! {
    u8_part: u8 = any::<u8>(), order = true;
    u16_part: u16 = any::<u16>(), order = true;
    u32_part: u32 = any::<u32>(), order = true;
    u64_part: u64 = any::<u64>(), order = true;
    u128_part: u128 = any::<u128>(), order = true;
    bool_part: bool = any::<bool>(), order = true;
    string_part: String = "[a-zA-Z0-9.é]{0,8}", order = false;
    vec_part: Vec<u8> = tricky_bytes(), order = false;
    array_part: [u8; 4] = any::<[u8; 4]>(), order = true;
    uuid_part: Uuid = any::<u128>().prop_map(Uuid::from_u128), order = true;
    datetime_part: DateTime<Utc> = (0..9_999_999_999_999i64).prop_map(|ms| DateTime::from_timestamp_millis(ms).unwrap()), order = true;
    date_part: NaiveDate = text_date(), order = true;
}

/// Signed integers in text keys, over their whole range: a non-negative
/// value behaves like any other text number (round trip, order, prefix); a
/// negative one is refused with `PartError::Negative`, in both orders.
macro_rules! text_signed_props {
    ($($name:ident: $t:ty;)*) => {
        mod text_signed_parts {
            use super::*;
            proptest! {
                #![proptest_config(ProptestConfig::with_cases(512))]
                $(
                    #[test]
                    fn $name(a in any::<$t>(), b in any::<$t>(), ta in any::<u8>(), tb in any::<u8>()) {
                        let kind = <$t as KeyPart>::KIND;
                        if a >= 0 && b >= 0 {
                            both_orders::<$t>(KeyFormat::text(), kind, (&a, ta), (&b, tb), Ord::cmp, true)?;
                        }
                        for v in [a, b].into_iter().filter(|v| *v < 0) {
                            for spec in [PartSpec::new("v", kind), PartSpec::new("v", kind).desc()] {
                                let s = schema(KeyFormat::text(), vec![Segment::Part(spec)]);
                                match s.encode(&(v,)) {
                                    Err(KeyError::Encode { cause: PartError::Negative { value }, .. }) => {
                                        prop_assert_eq!(value, v.to_string());
                                    }
                                    other => prop_assert!(false, "{} in a text key gave {:?}", v, other),
                                }
                            }
                        }
                    }
                )*
            }
        }
    };
}

text_signed_props! {
    i8_part: i8;
    i16_part: i16;
    i32_part: i32;
    i64_part: i64;
    i128_part: i128;
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Fixed widths keep numeric order; `desc` in text reverses it.
    #[test]
    fn text_fixed_width_numbers(a in 0u32..1000, b in 0u32..1000, w in 3u16..12) {
        for desc in [false, true] {
            let mut spec = PartSpec::new("n", PartKind::U32).width(Width::Fixed(w));
            if desc {
                spec = spec.desc();
            }
            let s = schema(KeyFormat::text(), vec![Segment::Part(spec)]);
            let (ka, kb) = (s.encode(&a).unwrap(), s.encode(&b).unwrap());
            prop_assert_eq!(ka.len(), usize::from(w));
            prop_assert_eq!(ka.cmp(&kb), flip(a.cmp(&b), desc));
            prop_assert_eq!(s.decode::<u32>(&ka).unwrap(), a);
        }
    }

    /// Unpadded numbers round-trip (their order is not numeric, by design).
    #[test]
    fn text_unpadded_numbers(a in any::<u64>(), tail in "[a-z]{0,4}") {
        let s = schema(KeyFormat::text(), vec![
            Segment::Part(PartSpec::new("n", PartKind::U64).width(Width::Variable)),
            Segment::Part(PartSpec::new("s", PartKind::Str)),
        ]);
        let key = s.encode(&(a, tail.as_str())).unwrap();
        prop_assert_eq!(key.clone(), format!("{a}_{tail}").into_bytes());
        prop_assert_eq!(s.decode::<(u64, String)>(&key).unwrap(), (a, tail));
    }

    /// A text string part holding the separator is refused, naming the part.
    #[test]
    fn text_separator_in_string(s in tricky_string()) {
        let schema = schema(KeyFormat::text(), vec![
            Segment::Part(PartSpec::new("name", PartKind::Str)),
            Segment::Part(PartSpec::new("n", PartKind::U8)),
        ]);
        match schema.encode(&(s.as_str(), 1u8)) {
            Ok(key) => {
                prop_assert!(!s.contains('_'));
                prop_assert_eq!(schema.decode::<(String, u8)>(&key).unwrap(), (s, 1));
            }
            Err(KeyError::Encode { part, cause: PartError::ContainsSeparator { separator, .. } }) => {
                prop_assert!(s.contains('_'));
                prop_assert_eq!(part, "name");
                prop_assert_eq!(separator, '_');
            }
            Err(other) => prop_assert!(false, "unexpected error {other}"),
        }
    }

    /// reverse_ts: newer sorts first, in both formats, and matches Java's
    /// `Long.MAX_VALUE - ts`.
    #[test]
    fn reverse_ts_orders_newest_first(a in datetime_after_1970(), b in datetime_after_1970(), ta in any::<u8>(), tb in any::<u8>()) {
        for format in [KeyFormat::Binary, KeyFormat::text()] {
            check_part::<DateTime<Utc>>(format, PartSpec::new("t", PartKind::DateTime).reverse_ts(), (&a, ta), (&b, tb), |x, y| y.cmp(x), true)?;
            // desc on top of reverse_ts is oldest first again.
            check_part::<DateTime<Utc>>(format, PartSpec::new("t", PartKind::DateTime).reverse_ts().desc(), (&a, ta), (&b, tb), |x, y| y.cmp(x), true)?;
        }
        let s = schema(KeyFormat::Binary, vec![Segment::Part(PartSpec::new("t", PartKind::I64).reverse_ts())]);
        let key = s.encode(&a.timestamp_millis()).unwrap();
        prop_assert_eq!(key, (i64::MAX - a.timestamp_millis()).to_be_bytes().to_vec());
    }

    #[test]
    fn reverse_ts_on_integers(a in 0..i64::MAX, b in 0..i64::MAX) {
        for format in [KeyFormat::Binary, KeyFormat::text()] {
            check_part::<i64>(format, PartSpec::new("t", PartKind::I64).reverse_ts(), (&a, 0), (&b, 0), |x, y| y.cmp(x), true)?;
            let (ua, ub) = (a as u64, b as u64);
            check_part::<u64>(format, PartSpec::new("t", PartKind::U64).reverse_ts(), (&ua, 0), (&ub, 0), |x, y| y.cmp(x), true)?;
        }
    }

    /// reversed strings order by their reversed characters.
    #[test]
    fn reversed_strings(a in tricky_string(), b in tricky_string(), ta in any::<u8>(), tb in any::<u8>()) {
        let rev = |s: &String| s.chars().rev().collect::<String>();
        check_part::<String>(KeyFormat::Binary, PartSpec::new("s", PartKind::Str).reversed(), (&a, ta), (&b, tb), |x, y| {
            x.chars().rev().collect::<String>().cmp(&y.chars().rev().collect::<String>())
        }, true)?;
        let s = schema(KeyFormat::Binary, vec![Segment::Part(PartSpec::new("s", PartKind::Str).reversed())]);
        let mut expected = Vec::new();
        hmap::key::write_escaped(rev(&a).as_bytes(), &mut expected);
        prop_assert_eq!(s.encode(&a).unwrap(), expected);
    }

    /// A composite key mixing asc, desc and reverse_ts parts: byte order is
    /// the tuple order with the desc and reverse_ts parts reversed, and each
    /// leading run of parts is a prefix.
    #[test]
    fn composite_binary_order(
        a in (tricky_string(), any::<i64>(), datetime_after_1970(), tricky_bytes(), any::<u32>(), float64()),
        b in (tricky_string(), any::<i64>(), datetime_after_1970(), tricky_bytes(), any::<u32>(), float64()),
        share in 0usize..6,
    ) {
        let s = schema(KeyFormat::Binary, vec![
            Segment::Part(PartSpec::new("name", PartKind::Str)),
            Segment::Part(PartSpec::new("score", PartKind::I64).desc()),
            Segment::Part(PartSpec::new("at", PartKind::DateTime).reverse_ts()),
            Segment::Part(PartSpec::new("blob", PartKind::Bytes).desc()),
            Segment::Part(PartSpec::new("seq", PartKind::U32)),
            Segment::Part(PartSpec::new("weight", PartKind::F64).desc()),
        ]);
        // Make b share its first `share` parts with a, so that deep
        // comparisons are exercised too.
        let mut b = b;
        if share > 0 { b.0 = a.0.clone(); }
        if share > 1 { b.1 = a.1; }
        if share > 2 { b.2 = a.2; }
        if share > 3 { b.3 = a.3.clone(); }
        if share > 4 { b.4 = a.4; }

        let ka = s.encode(&(&a.0, a.1, a.2, &a.3, a.4, a.5)).unwrap();
        let kb = s.encode(&(&b.0, b.1, b.2, &b.3, b.4, b.5)).unwrap();
        let expected = a.0.cmp(&b.0)
            .then(b.1.cmp(&a.1))
            .then(b.2.cmp(&a.2))
            .then(b.3.cmp(&a.3))
            .then(a.4.cmp(&b.4))
            // -0.0 is stored as 0.0 (`+ 0.0` makes it so).
            .then((b.5 + 0.0).total_cmp(&(a.5 + 0.0)));
        prop_assert_eq!(ka.cmp(&kb), expected);

        let back: (String, i64, DateTime<Utc>, Vec<u8>, u32, f64) = s.decode(&ka).unwrap();
        prop_assert_eq!(&back.0, &a.0);
        prop_assert_eq!((back.1, back.2, &back.3, back.4), (a.1, a.2, &a.3, a.4));
        prop_assert_eq!(back.5.to_bits(), (a.5 + 0.0).to_bits());

        let prefixes = [
            s.encode_prefix(&()).unwrap(),
            s.encode_prefix(&(&a.0,)).unwrap(),
            s.encode_prefix(&(&a.0, a.1)).unwrap(),
            s.encode_prefix(&(&a.0, a.1, a.2)).unwrap(),
            s.encode_prefix(&(&a.0, a.1, a.2, &a.3)).unwrap(),
            s.encode_prefix(&(&a.0, a.1, a.2, &a.3, a.4)).unwrap(),
        ];
        for (k, p) in prefixes.iter().enumerate() {
            prop_assert!(ka.starts_with(p), "prefix of {} parts", k);
            if k > 0 {
                prop_assert!(p.starts_with(&prefixes[k - 1]));
            }
        }
    }

    /// A salted, hash-prefixed text key round-trips, its derived segments are
    /// checked on decode, and its prefix (covering the salt) is a prefix.
    #[test]
    fn composite_text_with_salt_and_hash(uid in "[a-z0-9]{1,8}", seq in 0u32..100_000, at in 0i64..4_000_000_000_000, buckets in 1u16..=256) {
        let s = schema(KeyFormat::text(), vec![
            Segment::Salt { buckets, by: vec![0].into() },
            Segment::HashPrefix { len: 4, of: 0 },
            Segment::Part(PartSpec::new("uid", PartKind::Str)),
            Segment::Part(PartSpec::new("seq", PartKind::U32).width(Width::Fixed(5)).desc()),
            Segment::Part(PartSpec::new("at", PartKind::I64).reverse_ts()),
        ]);
        let key = s.encode(&(uid.as_str(), seq, at)).unwrap();
        prop_assert_eq!(s.decode::<(String, u32, i64)>(&key).unwrap(), (uid.clone(), seq, at));
        let prefix = s.encode_prefix(&(uid.as_str(),)).unwrap();
        prop_assert!(key.starts_with(&prefix));
        let bucket = s.bucket_of(&(uid.as_str(),)).unwrap().unwrap();
        prop_assert!(bucket < buckets);
        prop_assert_eq!(s.encode_prefix_in_bucket(&(uid.as_str(),), bucket).unwrap(), prefix);
    }

    /// A key whose salt was written for another bucket does not decode.
    #[test]
    fn wrong_salt_is_detected(uid in "[a-z0-9]{1,8}", shift in 1u8..16) {
        let s = schema(KeyFormat::Binary, vec![
            Segment::Salt { buckets: 16, by: vec![0].into() },
            Segment::Part(PartSpec::new("uid", PartKind::Str)),
        ]);
        let mut key = s.encode(uid.as_str()).unwrap();
        key[0] = (key[0] + shift) % 16;
        let decoded = s.decode::<String>(&key);
        prop_assert!(matches!(decoded, Err(KeyError::DerivedMismatch { .. })), "{:?}", decoded);
    }
}

// ---------------------------------------------------------------------------
// Floats: two keys are equal exactly when `==` says the values are (so -0.0
// and 0.0 are one key), in both orders.

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn float_keys_are_equal_exactly_when_the_values_are(a in float64(), b in float64(), desc in any::<bool>()) {
        let spec = PartSpec::new("v", PartKind::F64);
        let s = schema(KeyFormat::Binary, vec![Segment::Part(if desc { spec.desc() } else { spec })]);
        let (ka, kb) = (s.encode(&a).unwrap(), s.encode(&b).unwrap());
        prop_assert_eq!(ka == kb, a == b, "{:?} and {:?}: {:02x?} and {:02x?}", a, b, ka, kb);
        let back: f64 = s.decode(&ka).unwrap();
        prop_assert_eq!(s.encode(&back).unwrap(), ka);
    }

    #[test]
    fn f32_keys_are_equal_exactly_when_the_values_are(a in float32(), b in float32()) {
        let s = schema(KeyFormat::Binary, vec![Segment::Part(PartSpec::new("v", PartKind::F32))]);
        let (ka, kb) = (s.encode(&a).unwrap(), s.encode(&b).unwrap());
        prop_assert_eq!(ka == kb, a == b, "{:?} and {:?}", a, b);
    }
}

// ---------------------------------------------------------------------------
// Arbitrary bytes: decoding never panics, and what decodes is canonical.

fn arbitrary_schemas() -> Vec<KeySchema> {
    vec![
        schema(
            KeyFormat::Binary,
            vec![
                Segment::Salt {
                    buckets: 7,
                    by: vec![1].into(),
                },
                Segment::Part(PartSpec::new("s", PartKind::Str).desc()),
                Segment::Part(PartSpec::new("n", PartKind::U16)),
                Segment::Part(PartSpec::new("t", PartKind::DateTime).reverse_ts()),
            ],
        ),
        schema(
            KeyFormat::Binary,
            vec![
                Segment::Part(PartSpec::new("f", PartKind::F32)),
                Segment::Part(PartSpec::new("b", PartKind::Bool)),
                Segment::Part(PartSpec::new("d", PartKind::Date).desc()),
                Segment::Part(PartSpec::new("r", PartKind::Str).reversed()),
            ],
        ),
        schema(
            KeyFormat::Binary,
            vec![Segment::Part(PartSpec::new("n", PartKind::U16))],
        ),
        schema(
            KeyFormat::text(),
            vec![
                Segment::Literal(b"u".to_vec().into()),
                Segment::Part(PartSpec::new("n", PartKind::U8).width(Width::Fixed(1))),
                Segment::Part(PartSpec::new("s", PartKind::Str)),
            ],
        ),
    ]
}

fn canonical(s: &KeySchema, bytes: &[u8]) -> Result<(), TestCaseError> {
    // Dynamic decoding (the inspector) and re-encoding of what it read.
    if let Ok(shown) = s.inspect(bytes) {
        let values: Vec<hmap::key::PartValue> = shown
            .0
            .into_iter()
            .filter_map(|seg| match seg {
                hmap::key::InspectedSegment::Part { value, .. } => Some(value),
                _ => None,
            })
            .collect();
        prop_assert_eq!(s.encode(&values).unwrap(), bytes.to_vec());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..40)) {
        for s in arbitrary_schemas() {
            canonical(&s, &bytes)?;
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in "u_[0-9a-z_]{0,10}") {
        for s in arbitrary_schemas() {
            canonical(&s, text.as_bytes())?;
        }
    }
}

/// How a valid key is damaged before decoding.
#[derive(Debug, Clone, Copy)]
enum Damage {
    None,
    Truncate,
    Flip(u8),
    Insert(u8),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        Just(Damage::None),
        Just(Damage::Truncate),
        (1u8..=255).prop_map(Damage::Flip),
        any::<u8>().prop_map(Damage::Insert),
    ]
}

fn damaged(mut key: Vec<u8>, at: prop::sample::Index, how: Damage) -> Vec<u8> {
    if key.is_empty() {
        return key;
    }
    let i = at.index(key.len());
    match how {
        Damage::None => {}
        Damage::Truncate => key.truncate(i),
        Damage::Flip(mask) => key[i] ^= mask,
        Damage::Insert(byte) => key.insert(i, byte),
    }
    key
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// Uniform random bytes rarely decode, so this starts from valid keys of
    /// every schema above and damages them (cut, one byte flipped, one byte
    /// inserted): whatever still decodes must re-encode to the same bytes,
    /// and an undamaged key must decode.
    #[test]
    fn damaged_valid_keys_decode_canonically_or_fail_cleanly(
        text in tricky_string(),
        n in any::<u16>(),
        at in datetime_after_1970(),
        f in float32(),
        flag in any::<bool>(),
        day in date(),
        digit in 0u8..10,
        word in "[a-z0-9]{0,6}",
        index in any::<prop::sample::Index>(),
        how in damage(),
    ) {
        let schemas = arbitrary_schemas();
        let keys = [
            schemas[0].encode(&(&text, n, at)),
            schemas[1].encode(&(f, flag, day, &text)),
            schemas[2].encode(&(n,)),
            schemas[3].encode(&(digit, &word)),
        ];
        for (s, key) in schemas.iter().zip(keys) {
            let key = key.map_err(|e| TestCaseError::fail(e.to_string()))?;
            if matches!(how, Damage::None) {
                prop_assert!(s.inspect(&key).is_ok(), "a valid key {:02x?} did not decode", key);
            }
            canonical(s, &damaged(key.to_vec(), index, how))?;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// The escaping fast paths (a word-at-a-time NUL scan below 64 bytes, one
    /// copy when there is no NUL) agree with a byte-by-byte reference, at
    /// every length around the 8-byte words and the 64-byte cutoff, in both
    /// orders.
    #[test]
    fn escaping_matches_a_reference(
        bytes in prop::collection::vec(prop_oneof![4 => 1u8..=255, 1 => Just(0u8)], 0..140),
        desc in any::<bool>(),
    ) {
        let mut reference = Vec::new();
        for &b in &bytes {
            if b == 0 { reference.extend_from_slice(&[0, 0xff]) } else { reference.push(b) }
        }
        reference.extend_from_slice(&[0, 0]);
        let mut written = Vec::new();
        hmap::key::write_escaped(&bytes, &mut written);
        prop_assert_eq!(&written, &reference);

        let mut spec = PartSpec::new("b", PartKind::Bytes);
        if desc {
            spec = spec.desc();
        }
        let s = schema(KeyFormat::Binary, vec![Segment::Part(spec), Segment::Part(PartSpec::new("n", PartKind::U8))]);
        let key = s.encode(&(&bytes[..], 9u8)).unwrap();
        prop_assert_eq!(s.decode::<(Vec<u8>, u8)>(&key).unwrap(), (bytes, 9));
    }
}
