//! Decodes arbitrary bytes as rowkeys of several schemas, typed and through
//! the inspector. Nothing may panic, and whatever decodes must encode back to
//! the very same bytes (the encoding is canonical).
#![no_main]

use std::sync::LazyLock;

use chrono::{DateTime, NaiveDate, Utc};
use hmap::key::{InspectedSegment, KeyFormat, KeySchema, PartKind, PartSpec, PartValue, Segment, Width};
use libfuzzer_sys::fuzz_target;
use uuid::Uuid;

fn part(name: &'static str, kind: PartKind) -> PartSpec {
    PartSpec::new(name, kind)
}

static SCHEMAS: LazyLock<Vec<KeySchema>> = LazyLock::new(|| {
    let s = |format, segments| KeySchema::new(format, segments).expect("valid schema");
    vec![
        // 0: salted, desc string, reverse_ts
        s(KeyFormat::Binary, vec![
            Segment::Salt { buckets: 7, by: vec![1].into() },
            Segment::Part(part("name", PartKind::Str).desc()),
            Segment::Part(part("n", PartKind::U16)),
            Segment::Part(part("at", PartKind::DateTime).reverse_ts()),
        ]),
        // 1: floats, bools, dates, reversed strings
        s(KeyFormat::Binary, vec![
            Segment::Part(part("f", PartKind::F32)),
            Segment::Part(part("b", PartKind::Bool)),
            Segment::Part(part("d", PartKind::Date).desc()),
            Segment::Part(part("r", PartKind::Str).reversed()),
        ]),
        // 2: hash prefix, bytes, uuid, signed
        s(KeyFormat::Binary, vec![
            Segment::HashPrefix { len: 2, of: 0 },
            Segment::Part(part("blob", PartKind::Bytes)),
            Segment::Part(part("id", PartKind::Uuid).desc()),
            Segment::Part(part("i", PartKind::I64)),
        ]),
        // 3: text with a literal, a salt and fixed widths
        s(KeyFormat::text(), vec![
            Segment::Literal(b"u".to_vec().into()),
            Segment::Salt { buckets: 16, by: vec![0].into() },
            Segment::Part(part("uid", PartKind::Str)),
            Segment::Part(part("seq", PartKind::U32).width(Width::Fixed(4)).desc()),
            Segment::Part(part("at", PartKind::I64).reverse_ts()),
        ]),
        // 4: text with a hash prefix, no separator
        s(KeyFormat::Text { separator: None }, vec![
            Segment::HashPrefix { len: 6, of: 1 },
            Segment::Part(part("day", PartKind::Date)),
            Segment::Part(part("id", PartKind::Uuid)),
            Segment::Part(part("name", PartKind::Str)),
        ]),
    ]
});

/// Decodes with the inspector and checks that the parts re-encode to `bytes`.
fn check_inspected(schema: &KeySchema, bytes: &[u8]) {
    if let Ok(shown) = schema.inspect(bytes) {
        let values: Vec<PartValue> = shown
            .0
            .into_iter()
            .filter_map(|seg| match seg {
                InspectedSegment::Part { value, .. } => Some(value),
                _ => None,
            })
            .collect();
        let again = schema.encode(&values).expect("a decoded key encodes");
        assert_eq!(again, bytes, "{schema}: not canonical");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, bytes)) = data.split_first() else {
        return;
    };
    let schema = &SCHEMAS[usize::from(which) % SCHEMAS.len()];
    check_inspected(schema, bytes);

    // The typed decoders too.
    match usize::from(which) % SCHEMAS.len() {
        0 => {
            if let Ok(v) = schema.decode::<(String, u16, DateTime<Utc>)>(bytes) {
                assert_eq!(schema.encode(&v).unwrap(), bytes);
            }
        }
        1 => {
            if let Ok(v) = schema.decode::<(f32, bool, NaiveDate, String)>(bytes) {
                assert_eq!(schema.encode(&v).unwrap(), bytes);
            }
        }
        2 => {
            if let Ok(v) = schema.decode::<(Vec<u8>, Uuid, i64)>(bytes) {
                assert_eq!(schema.encode(&v).unwrap(), bytes);
            }
        }
        3 => {
            if let Ok(v) = schema.decode::<(String, u32, i64)>(bytes) {
                assert_eq!(schema.encode(&v).unwrap(), bytes);
            }
        }
        _ => {
            if let Ok(v) = schema.decode::<(NaiveDate, Uuid, String)>(bytes) {
                assert_eq!(schema.encode(&v).unwrap(), bytes);
            }
        }
    }

    // The printable form parses back, and any text can be inspected.
    assert_eq!(hmap::key::parse_printable(&hmap::key::Printable(bytes).to_string()), bytes);
    if let Ok(text) = std::str::from_utf8(bytes) {
        let _ = schema.inspect_printable(text);
    }
});
