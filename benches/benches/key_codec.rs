//! Encoding and decoding a 4-part binary rowkey with hmap, side by side with
//! hand-written code that pushes the same bytes.
//!
//! The key: `user_id: String` + `at: i64 reverse_ts` + `product_id: u64` +
//! `quantity: u32 desc`. Run with `cargo bench -p hmap-bench --bench key_codec`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use hmap::key::{KeyFormat, KeySchema, PartKind, PartSpec, Segment};

static SEGMENTS: [Segment; 4] = [
    Segment::Part(PartSpec::new("user_id", PartKind::Str)),
    Segment::Part(PartSpec::new("at", PartKind::I64).reverse_ts()),
    Segment::Part(PartSpec::new("product_id", PartKind::U64)),
    Segment::Part(PartSpec::new("quantity", PartKind::U32).desc()),
];
static SCHEMA: KeySchema = KeySchema::from_static(KeyFormat::Binary, &SEGMENTS);

type Key = (String, i64, u64, u32);

/// The baseline: what a careful person would write by hand for this layout.
fn hand_encode(key: &Key, out: &mut Vec<u8>) {
    for &b in key.0.as_bytes() {
        if b == 0 {
            out.extend_from_slice(&[0, 0xff]);
        } else {
            out.push(b);
        }
    }
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&(i64::MAX - key.1).to_be_bytes());
    out.extend_from_slice(&key.2.to_be_bytes());
    out.extend_from_slice(&(!key.3).to_be_bytes());
}

fn hand_decode(bytes: &[u8]) -> Option<Key> {
    let mut user = Vec::new();
    let mut i = 0;
    loop {
        match (*bytes.get(i)?, bytes.get(i + 1)) {
            (0, Some(0)) => break,
            (0, Some(0xff)) => {
                user.push(0);
                i += 2;
            }
            (0, _) => return None,
            (b, _) => {
                user.push(b);
                i += 1;
            }
        }
    }
    i += 2;
    let rest = bytes.get(i..)?;
    if rest.len() != 20 {
        return None;
    }
    let at = i64::MAX - i64::from_be_bytes(rest[..8].try_into().ok()?);
    let product = u64::from_be_bytes(rest[8..16].try_into().ok()?);
    let quantity = !u32::from_be_bytes(rest[16..20].try_into().ok()?);
    Some((String::from_utf8(user).ok()?, at, product, quantity))
}

fn key_codec(c: &mut Criterion) {
    SCHEMA.validate().expect("valid schema");
    let key: Key = ("user-000042".to_string(), 1_700_000_000_000, 987_654_321, 3);
    let encoded = SCHEMA.encode(&key).unwrap();
    let mut hand = Vec::new();
    hand_encode(&key, &mut hand);
    assert_eq!(encoded, hand, "the baseline must write the same bytes");
    assert_eq!(hand_decode(&encoded), Some(key.clone()));

    let mut group = c.benchmark_group("encode_4_part_key");
    group.bench_function("hmap", |b| b.iter(|| SCHEMA.encode(black_box(&key)).unwrap()));
    group.bench_function("hand_written", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(48);
            hand_encode(black_box(&key), &mut out);
            out
        })
    });
    group.finish();

    let mut group = c.benchmark_group("decode_4_part_key");
    group.bench_function("hmap", |b| {
        b.iter(|| SCHEMA.decode::<Key>(black_box(&encoded)).unwrap())
    });
    group.bench_function("hand_written", |b| b.iter(|| hand_decode(black_box(&encoded)).unwrap()));
    group.finish();
}

criterion_group!(benches, key_codec);
criterion_main!(benches);
