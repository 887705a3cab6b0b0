//! A time series salted over 8 buckets: readings arrive in time order,
//! which would send every write to one region; a leading bucket,
//! `crc32(sensor) % 8`, spreads them over 8 regions (the table is pre-split
//! at each bucket). One sensor's readings stay one prefix scan in one
//! bucket; a scan over every sensor reads the 8 buckets and merges them in
//! key order.
//!
//! Run with `cargo run --example sensor_readings`.

use futures_util::{StreamExt, TryStreamExt};
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use hmap::store::{Scan, Store};
use hmap::{HTable, Query, Table};
use hmap_suite::{ExampleResult, Rng};

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "reading", salt(buckets = 8, by = [sensor]), family(name = "r", ttl = "30d"))]
pub struct Reading {
    #[hmap(key)]
    pub sensor: u32,
    #[hmap(key, reverse_ts)]
    pub at: i64,
    #[hmap(column = "v")]
    pub celsius: f64,
}

async fn print_readings(
    readings: &Table<Reading, Arc<dyn Store>>,
    query: Query<'_>,
    now: i64,
    out: &mut dyn Write,
) -> ExampleResult {
    let mut scanned = readings.scan(query).await?;
    while let Some(r) = scanned.next().await {
        let r = r?;
        writeln!(
            out,
            "  sensor {} {} min ago: {:.2} C",
            r.sensor,
            (now - r.at) / 60_000,
            r.celsius
        )?;
    }
    Ok(())
}

pub async fn run(store: Arc<dyn Store>, out: &mut dyn Write) -> ExampleResult {
    let readings = Table::<Reading, _>::new(Arc::clone(&store));
    readings.create_if_missing().await?;
    writeln!(out, "{}", Reading::table_schema())?;
    let now = chrono::Utc::now().timestamp_millis() / 60_000 * 60_000;
    let mut rng = Rng::new(11);
    let mut rows = Vec::new();
    for minute in 0..60 {
        for sensor in 1..=20u32 {
            let celsius = 15.0 + f64::from(sensor) / 2.0 + rng.below(100) as f64 / 50.0;
            rows.push(Reading {
                sensor,
                at: now - minute * 60_000,
                celsius,
            });
        }
    }
    readings.put_many(&rows).await?;

    // Where the writes went: the rows per bucket (the first key byte).
    let mut per_bucket: BTreeMap<u8, usize> = BTreeMap::new();
    let mut scanned = store.scan(Reading::TABLE, &Scan::all()).await?;
    while let Some(row) = scanned.next().await {
        *per_bucket.entry(row?.row[0]).or_default() += 1;
    }
    writeln!(
        out,
        "{} readings of 20 sensors over 60 minutes, rows per bucket:",
        rows.len()
    )?;
    for (bucket, count) in &per_bucket {
        writeln!(out, "  bucket {bucket}: {count}")?;
    }

    writeln!(out, "sensor 7, newest first (one bucket):")?;
    print_readings(&readings, Query::prefix(7u32).limit(3), now, out).await?;
    writeln!(out, "every sensor, merged from 8 buckets in key order (first 5):")?;
    print_readings(&readings, Query::all().limit(5), now, out).await?;
    let sensors: Vec<u32> = readings
        .scan(Query::all())
        .await?
        .map(|r| r.map(|r| r.sensor))
        .try_collect::<Vec<_>>()
        .await?;
    let ordered = sensors.windows(2).all(|w| w[0] <= w[1]);
    writeln!(
        out,
        "the merged scan returned {} readings, ordered by sensor: {ordered}",
        sensors.len()
    )?;
    Ok(())
}

#[allow(dead_code)] // the tests include this file and call `run`
fn main() {
    hmap_suite::run_async_example(run);
}
