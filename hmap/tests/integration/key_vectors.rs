//! Fixed byte vectors for every key encoding. These pin the stored layout:
//! if one fails, keys already written to HBase would no longer be found.
//!
//! The expected bytes were computed outside hmap (Python's `struct`, `zlib`
//! and `hashlib`, following Java's `Bytes.toBytes`), not copied from its output.

use bytes::Bytes;
use chrono::{DateTime, NaiveDate, Utc};
use hmap::key::{KeyFormat, KeySchema, KeyTuple, PartKind, PartSpec, Segment, Width};
use uuid::Uuid;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn one(spec: PartSpec) -> KeySchema {
    KeySchema::new(KeyFormat::Binary, vec![Segment::Part(spec)]).expect("valid schema")
}

fn text_one(spec: PartSpec) -> KeySchema {
    KeySchema::new(KeyFormat::text(), vec![Segment::Part(spec)]).expect("valid schema")
}

/// Encodes with a one-part binary schema and checks the hex.
fn bin<K: KeyTuple + ?Sized>(kind: PartKind, value: &K, expected: &str) {
    let key = one(PartSpec::new("v", kind)).encode(value).expect("encodes");
    assert_eq!(hex(&key), expected, "{kind}");
}

fn bin_desc<K: KeyTuple + ?Sized>(kind: PartKind, value: &K, expected: &str) {
    let key = one(PartSpec::new("v", kind).desc()).encode(value).expect("encodes");
    assert_eq!(hex(&key), expected, "{kind} desc");
}

const TS: i64 = 1_700_000_000_000;

fn ts() -> DateTime<Utc> {
    DateTime::from_timestamp_millis(TS).unwrap()
}

#[test]
fn unsigned_integers_are_big_endian() {
    bin(PartKind::U8, &0x12u8, "12");
    bin(PartKind::U16, &0x1234u16, "1234");
    bin(PartKind::U32, &1u32, "00000001");
    bin(PartKind::U64, &0x0102_0304_0506_0708u64, "0102030405060708");
    bin(PartKind::U128, &1u128, "00000000000000000000000000000001");
}

#[test]
fn signed_integers_flip_the_sign_bit() {
    bin(PartKind::I8, &-1i8, "7f");
    bin(PartKind::I8, &0i8, "80");
    bin(PartKind::I8, &i8::MIN, "00");
    bin(PartKind::I8, &i8::MAX, "ff");
    bin(PartKind::I16, &-2i16, "7ffe");
    bin(PartKind::I32, &1i32, "80000001");
    bin(PartKind::I64, &-1i64, "7fffffffffffffff");
    bin(PartKind::I128, &0i128, "80000000000000000000000000000000");
}

#[test]
fn floats_use_the_total_order_trick() {
    bin(PartKind::F64, &1.0f64, "bff0000000000000");
    bin(PartKind::F64, &-1.0f64, "400fffffffffffff");
    bin(PartKind::F64, &0.0f64, "8000000000000000");
    bin(PartKind::F32, &1.5f32, "bfc00000");
}

#[test]
fn negative_zero_is_stored_as_zero() {
    // -0.0 == 0.0 in Rust (and Java's `==`): one key, whichever is written.
    bin(PartKind::F64, &-0.0f64, "8000000000000000");
    bin(PartKind::F32, &-0.0f32, "80000000");
    bin_desc(PartKind::F64, &-0.0f64, "7fffffffffffffff");
    // The bytes that -0.0 would have had decode to nothing, so a decoded key
    // always encodes back to its own bytes.
    let schema = one(PartSpec::new("v", PartKind::F64));
    let negative_zero = [0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
    assert!(schema.decode::<f64>(&negative_zero).is_err());
    assert!(schema.inspect(&negative_zero).is_err());
    let zero = schema.encode(&0.0f64).unwrap();
    assert_eq!(schema.decode::<f64>(&zero).unwrap().to_bits(), 0.0f64.to_bits());
}

#[test]
fn bool_is_one_byte() {
    bin(PartKind::Bool, &false, "00");
    bin(PartKind::Bool, &true, "01");
}

#[test]
fn strings_escape_zero_and_end_with_two_zeros() {
    bin(PartKind::Str, "ab", "61620000");
    bin(PartKind::Str, "a\0b", "6100ff620000");
    bin(PartKind::Str, "", "0000");
    bin(PartKind::Str, &String::from("é"), "c3a90000");
}

#[test]
fn byte_strings_escape_like_strings() {
    bin(PartKind::Bytes, &vec![0xffu8, 0x00], "ff00ff0000");
    bin(PartKind::Bytes, &Bytes::from_static(b"\x00\x00"), "00ff00ff0000");
    bin(PartKind::Bytes, &b"\x01"[..], "010000");
}

#[test]
fn fixed_parts_are_raw() {
    bin(PartKind::FixedBytes(3), &[1u8, 2, 3], "010203");
    let id = Uuid::parse_str("00112233-4455-6677-8899-aabbccddeeff").unwrap();
    bin(PartKind::Uuid, &id, "00112233445566778899aabbccddeeff");
}

#[test]
fn time_is_signed_millis_and_days() {
    bin(PartKind::DateTime, &ts(), "8000018bcfe56800");
    bin(
        PartKind::Date,
        &NaiveDate::from_ymd_opt(1970, 1, 2).unwrap(),
        "80000001",
    );
    bin(
        PartKind::Date,
        &NaiveDate::from_ymd_opt(1969, 12, 31).unwrap(),
        "7fffffff",
    );
}

#[test]
fn sub_millisecond_precision_is_floored() {
    let precise = ts() + chrono::Duration::microseconds(999);
    bin(PartKind::DateTime, &precise, "8000018bcfe56800");
}

#[test]
fn desc_complements_every_byte() {
    bin_desc(PartKind::U16, &0x1234u16, "edcb");
    bin_desc(PartKind::Str, "ab", "9e9dffff");
    bin_desc(PartKind::Str, "a\0b", "9eff009dffff");
    bin_desc(PartKind::I8, &0i8, "7f");
}

#[test]
fn reverse_ts_is_java_long_max_minus_millis() {
    // Java: Bytes.toBytes(Long.MAX_VALUE - 1700000000000L)
    let expected = "7ffffe74301a97ff";
    for (kind, key) in [
        (
            PartKind::DateTime,
            one(PartSpec::new("t", PartKind::DateTime).reverse_ts()).encode(&ts()),
        ),
        (
            PartKind::I64,
            one(PartSpec::new("t", PartKind::I64).reverse_ts()).encode(&TS),
        ),
        (
            PartKind::U64,
            one(PartSpec::new("t", PartKind::U64).reverse_ts()).encode(&(TS as u64)),
        ),
    ] {
        assert_eq!(hex(&key.unwrap()), expected, "{kind}");
    }
    let schema = text_one(PartSpec::new("t", PartKind::I64).reverse_ts());
    assert_eq!(schema.encode(&TS).unwrap(), b"9223370336854775807");
    assert_eq!(schema.encode(&0i64).unwrap(), b"9223372036854775807");
}

#[test]
fn reversed_strings_are_stored_backwards() {
    let schema = one(PartSpec::new("id", PartKind::Str).reversed());
    assert_eq!(hex(&schema.encode("abc").unwrap()), "6362610000");
    let schema = text_one(PartSpec::new("id", PartKind::Str).reversed());
    assert_eq!(schema.encode("user1234").unwrap(), b"4321resu");
}

#[test]
fn salt_is_crc32_mod_buckets() {
    // zlib.crc32(b"u42") % 16 == 14
    let schema = KeySchema::new(
        KeyFormat::Binary,
        vec![
            Segment::Salt {
                buckets: 16,
                by: vec![0].into(),
            },
            Segment::Part(PartSpec::new("user", PartKind::Str)),
        ],
    )
    .unwrap();
    assert_eq!(hex(&schema.encode("u42").unwrap()), "0e7534320000");

    // zlib.crc32(struct.pack(">Q", 7)) % 8 == 2: plain bytes of a u64 are big-endian.
    let schema = KeySchema::new(
        KeyFormat::Binary,
        vec![
            Segment::Salt {
                buckets: 8,
                by: vec![0].into(),
            },
            Segment::Part(PartSpec::new("id", PartKind::U64).desc()),
        ],
    )
    .unwrap();
    assert_eq!(hex(&schema.encode(&7u64).unwrap()), "02fffffffffffffff8");

    // Text: zlib.crc32(b"u42_007") % 10 == 9, two digits, by two parts joined by "_".
    let schema = KeySchema::new(
        KeyFormat::text(),
        vec![
            Segment::Salt {
                buckets: 10,
                by: vec![0, 1].into(),
            },
            Segment::Part(PartSpec::new("user", PartKind::Str)),
            Segment::Part(PartSpec::new("seq", PartKind::U32).width(Width::Fixed(3))),
        ],
    )
    .unwrap();
    assert_eq!(schema.encode(&("u42", 7u32)).unwrap(), b"09_u42_007");
}

#[test]
fn salt_buckets_in_text_have_the_digits_of_the_largest() {
    let schema = |buckets| {
        KeySchema::new(
            KeyFormat::text(),
            vec![
                Segment::Salt {
                    buckets,
                    by: vec![0].into(),
                },
                Segment::Part(PartSpec::new("user", PartKind::Str)),
            ],
        )
        .unwrap()
    };
    // zlib.crc32(b"u42") % 256 == 222
    assert_eq!(schema(256).encode("u42").unwrap(), b"222_u42");
    assert_eq!(schema(16).encode("u42").unwrap(), b"14_u42");
    assert_eq!(schema(1).encode("u42").unwrap(), b"00_u42");
}

#[test]
fn hash_prefix_is_the_head_of_md5() {
    // hashlib.md5(b"u42").hexdigest() == "1c7082c84e576341de713934775ff522"
    let binary = KeySchema::new(
        KeyFormat::Binary,
        vec![
            Segment::HashPrefix { len: 4, of: 0 },
            Segment::Part(PartSpec::new("user", PartKind::Str)),
        ],
    )
    .unwrap();
    assert_eq!(hex(&binary.encode("u42").unwrap()), "1c7082c87534320000");

    // The seeds' "MD5 of the user id, first 6 characters" in front of it.
    let text = KeySchema::new(
        KeyFormat::Text { separator: None },
        vec![
            Segment::HashPrefix { len: 6, of: 0 },
            Segment::Part(PartSpec::new("user", PartKind::Str)),
        ],
    )
    .unwrap();
    assert_eq!(text.encode("user1234").unwrap(), b"b5b73fuser1234");
}

#[test]
fn literals_are_written_as_they_are() {
    let schema = KeySchema::new(
        KeyFormat::text(),
        vec![
            Segment::Literal(b"p".to_vec().into()),
            Segment::Part(PartSpec::new("pid", PartKind::U32).width(Width::Fixed(3))),
        ],
    )
    .unwrap();
    assert_eq!(schema.encode(&1u32).unwrap(), b"p_001");
}

#[test]
fn seed_text_layouts_are_literal() {
    // Person/role in one table: pid_rid.
    let person_role = KeySchema::new(
        KeyFormat::text(),
        vec![
            Segment::Part(PartSpec::new("pid", PartKind::U32).width(Width::Fixed(3))),
            Segment::Part(PartSpec::new("rid", PartKind::U32).width(Width::Fixed(3))),
        ],
    )
    .unwrap();
    assert_eq!(person_role.encode(&(1u32, 100u32)).unwrap(), b"001_100");

    // The org chart: 0 for top-level departments, then the id.
    let org = KeySchema::new(
        KeyFormat::text(),
        vec![
            Segment::Part(PartSpec::new("top", PartKind::U8).width(Width::Fixed(1))),
            Segment::Part(PartSpec::new("id", PartKind::U32).width(Width::Fixed(3))),
        ],
    )
    .unwrap();
    assert_eq!(org.encode(&(0u8, 1u32)).unwrap(), b"0_001");
    assert_eq!(org.encode(&(1u8, 2u32)).unwrap(), b"1_002");

    // Weibo posts: uid_(Long.MAX_VALUE - millis).
    let posts = KeySchema::new(
        KeyFormat::text(),
        vec![
            Segment::Part(PartSpec::new("uid", PartKind::Str)),
            Segment::Part(PartSpec::new("at", PartKind::DateTime).reverse_ts()),
        ],
    )
    .unwrap();
    assert_eq!(posts.encode(&("u001", ts())).unwrap(), b"u001_9223370336854775807");
}

#[test]
fn text_numbers_are_zero_padded() {
    assert_eq!(
        text_one(PartSpec::new("n", PartKind::U64)).encode(&42u64).unwrap(),
        b"00000000000000000042"
    );
    assert_eq!(
        text_one(PartSpec::new("n", PartKind::I64)).encode(&42i64).unwrap(),
        b"0000000000000000042"
    );
    assert_eq!(text_one(PartSpec::new("n", PartKind::U8)).encode(&7u8).unwrap(), b"007");
    assert_eq!(
        text_one(PartSpec::new("n", PartKind::U128))
            .encode(&1u128)
            .unwrap()
            .len(),
        39
    );
    let unpadded = text_one(PartSpec::new("n", PartKind::U32).width(Width::Variable));
    assert_eq!(unpadded.encode(&42u32).unwrap(), b"42");
}

#[test]
fn text_desc_complements_digits() {
    let schema = text_one(PartSpec::new("n", PartKind::U32).width(Width::Fixed(3)).desc());
    assert_eq!(schema.encode(&1u32).unwrap(), b"998");
    let id = Uuid::parse_str("00112233-4455-6677-8899-aabbccddeeff").unwrap();
    let schema = text_one(PartSpec::new("id", PartKind::Uuid).desc());
    assert_eq!(schema.encode(&id).unwrap(), b"ffeeddcc-bbaa-9988-7766-554433221100");
}

#[test]
fn text_renderings_of_other_kinds() {
    assert_eq!(
        text_one(PartSpec::new("b", PartKind::Bool)).encode(&true).unwrap(),
        b"1"
    );
    assert_eq!(
        text_one(PartSpec::new("b", PartKind::Bytes))
            .encode(&vec![0xabu8, 1])
            .unwrap(),
        b"ab01"
    );
    assert_eq!(
        text_one(PartSpec::new("b", PartKind::FixedBytes(2)))
            .encode(&[0xabu8, 1])
            .unwrap(),
        b"ab01"
    );
    let id = Uuid::parse_str("00112233-4455-6677-8899-aabbccddeeff").unwrap();
    assert_eq!(
        text_one(PartSpec::new("u", PartKind::Uuid)).encode(&id).unwrap(),
        b"00112233-4455-6677-8899-aabbccddeeff"
    );
    assert_eq!(
        text_one(PartSpec::new("t", PartKind::DateTime)).encode(&ts()).unwrap(),
        b"1700000000000"
    );
    let date = NaiveDate::from_ymd_opt(2024, 3, 5).unwrap();
    assert_eq!(
        text_one(PartSpec::new("d", PartKind::Date)).encode(&date).unwrap(),
        b"20240305"
    );
}

#[test]
fn every_vector_decodes_back() {
    let posts = KeySchema::new(
        KeyFormat::text(),
        vec![
            Segment::Part(PartSpec::new("uid", PartKind::Str)),
            Segment::Part(PartSpec::new("at", PartKind::DateTime).reverse_ts()),
        ],
    )
    .unwrap();
    let (uid, at): (String, DateTime<Utc>) = posts.decode(b"u001_9223370336854775807").unwrap();
    assert_eq!((uid.as_str(), at), ("u001", ts()));

    let salted = KeySchema::new(
        KeyFormat::Binary,
        vec![
            Segment::Salt {
                buckets: 8,
                by: vec![0].into(),
            },
            Segment::Part(PartSpec::new("id", PartKind::U64).desc()),
        ],
    )
    .unwrap();
    let id: u64 = salted
        .decode(&[0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf8])
        .unwrap();
    assert_eq!(id, 7);
}

/// The key layout's fingerprint, which tables hmap creates keep in their
/// metadata: every kind of segment and modifier, pinned.
#[test]
fn fingerprints_are_stable() {
    let text = KeySchema::new(
        KeyFormat::text(),
        vec![
            Segment::Salt {
                buckets: 16,
                by: vec![0, 1].into(),
            },
            Segment::HashPrefix { len: 4, of: 0 },
            Segment::Literal(b"u".as_slice().into()),
            Segment::Part(PartSpec::new("uid", PartKind::Str).reversed()),
            Segment::Part(PartSpec::new("seq", PartKind::U32).width(Width::Fixed(4)).desc()),
            Segment::Part(PartSpec::new("at", PartKind::DateTime).reverse_ts()),
            Segment::Part(PartSpec::new("n", PartKind::U64).width(Width::Variable)),
        ],
    )
    .expect("valid schema");
    assert_eq!(
        text.fingerprint(),
        "text '_': salt(16 by uid, seq) + md5(uid)[..4] + \"u\" + uid: string reversed + \
         seq: u32 desc width 4 + at: datetime reverse_ts + n: u64 unpadded"
    );
    let binary = KeySchema::new(
        KeyFormat::Binary,
        vec![
            Segment::Part(PartSpec::new("id", PartKind::FixedBytes(16))),
            Segment::Part(PartSpec::new("day", PartKind::Date).desc()),
            Segment::Part(PartSpec::new("u", PartKind::Uuid)),
        ],
    )
    .expect("valid schema");
    assert_eq!(binary.fingerprint(), "binary: id: [u8; 16] + day: date desc + u: uuid");
    let unseparated = KeySchema::new(
        KeyFormat::Text { separator: None },
        vec![Segment::Part(PartSpec::new("n", PartKind::U8))],
    )
    .expect("valid schema");
    assert_eq!(unseparated.fingerprint(), "text: n: u8");
}
