//! The rowkey layouts of the seed designs, encoded, sorted the way HBase sorts
//! them, and read back with the key inspector.
//!
//! Run with `cargo run --example keys`.

use std::io::Write;

use chrono::{DateTime, Duration, Utc};
use hmap::key::{KeyFormat, KeySchema, PartKind, PartSpec, Printable, Segment, Width};
use hmap_suite::ExampleResult;

pub fn run(out: &mut dyn Write) -> ExampleResult {
    purchase_records(out)?;
    weibo_posts(out)?;
    org_chart(out)?;
    salted_time_series(out)
}

#[allow(dead_code)] // the tests include this file and call `run`
fn main() -> ExampleResult {
    run(&mut std::io::stdout().lock())
}

/// Prints keys in HBase's order: sorted by their raw bytes.
fn show_sorted(out: &mut dyn Write, schema: &KeySchema, mut keys: Vec<Vec<u8>>) -> ExampleResult {
    keys.sort();
    for key in &keys {
        writeln!(out, "  {}\n      {}", Printable(key), schema.inspect(key)?)?;
    }
    writeln!(out)?;
    Ok(())
}

/// `<user_id><Long.MAX_VALUE - millis><product_id>`: a user's purchases,
/// newest first, one prefix scan apart.
fn purchase_records(out: &mut dyn Write) -> ExampleResult {
    let schema = KeySchema::new(
        KeyFormat::Binary,
        vec![
            Segment::Part(PartSpec::new("user_id", PartKind::Str)),
            Segment::Part(PartSpec::new("bought_at", PartKind::DateTime).reverse_ts()),
            Segment::Part(PartSpec::new("product_id", PartKind::U64)),
        ],
    )?;
    writeln!(out, "purchase records, {schema}")?;
    let start: DateTime<Utc> = DateTime::from_timestamp_millis(1_700_000_000_000).expect("in range");
    let mut keys = Vec::new();
    for (user, day, product) in [
        ("alice", 0, 17u64),
        ("bob", 1, 5),
        ("alice", 3, 2),
        ("alice", 1, 99),
        ("bob", 2, 5),
    ] {
        keys.push(schema.encode(&(user, start + Duration::days(day), product))?);
    }
    let prefix = schema.encode_prefix(&("alice",))?;
    writeln!(out, "  alice's prefix: {}", Printable(&prefix))?;
    show_sorted(out, &schema, keys)
}

/// The weibo post table as readable text: `<uid>_<Long.MAX_VALUE - millis>`.
fn weibo_posts(out: &mut dyn Write) -> ExampleResult {
    let schema = KeySchema::new(
        KeyFormat::text(),
        vec![
            Segment::Part(PartSpec::new("uid", PartKind::Str)),
            Segment::Part(PartSpec::new("posted_at", PartKind::I64).reverse_ts()),
        ],
    )?;
    writeln!(out, "weibo posts, {schema}")?;
    let keys = [
        ("001", 1_700_000_000_000i64),
        ("001", 1_700_000_100_000),
        ("002", 1_700_000_050_000),
    ]
    .iter()
    .map(|k| schema.encode(k))
    .collect::<Result<_, _>>()?;
    show_sorted(out, &schema, keys)
}

/// The org chart: `0_<id>` for top-level departments, `1_<id>` for the rest.
fn org_chart(out: &mut dyn Write) -> ExampleResult {
    let schema = KeySchema::new(
        KeyFormat::text(),
        vec![
            Segment::Part(PartSpec::new("level", PartKind::U8).width(Width::Fixed(1))),
            Segment::Part(PartSpec::new("id", PartKind::U32).width(Width::Fixed(3))),
        ],
    )?;
    writeln!(out, "org chart, {schema}")?;
    let keys = [(0u8, 1u32), (1, 2), (1, 3), (1, 5), (0, 8)]
        .iter()
        .map(|k| schema.encode(k))
        .collect::<Result<_, _>>()?;
    writeln!(
        out,
        "  top-level prefix: {}",
        Printable(&schema.encode_prefix(&(0u8,))?)
    )?;
    show_sorted(out, &schema, keys)
}

/// Sensor readings salted over 8 buckets by sensor, so that sequential
/// writes spread over regions; newest first within a sensor.
fn salted_time_series(out: &mut dyn Write) -> ExampleResult {
    let schema = KeySchema::new(
        KeyFormat::Binary,
        vec![
            Segment::Salt {
                buckets: 8,
                by: vec![0].into(),
            },
            Segment::Part(PartSpec::new("sensor", PartKind::U32)),
            Segment::Part(PartSpec::new("at", PartKind::I64).reverse_ts()),
        ],
    )?;
    writeln!(out, "salted time series, {schema}")?;
    let mut keys = Vec::new();
    for sensor in 1..=4u32 {
        for minute in 0..2i64 {
            keys.push(schema.encode(&(sensor, 1_700_000_000_000 + minute * 60_000))?);
        }
    }
    show_sorted(out, &schema, keys)
}
