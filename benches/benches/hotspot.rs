//! The seeds' central claim, measured: sequential keys pile onto one region
//! server, and salting spreads them. Not a criterion benchmark: one load per
//! layout, timed, then each region server's own request counts for the
//! table (HBase's cluster metrics, through `scripts/hbase/hbase metrics`).
//!
//! Writes the seeds' purchase records (user id, time of purchase, amount), in
//! arrival order (time increasing, users at random), by four writer threads
//! in batches of 500, into one table per layout:
//!
//! - `time_first`: the key starts with the time (the seeds' warning), split
//!   into three regions at thirds of the millisecond range up to 2^41;
//! - `user_first`: user id, then reverse timestamp (the seeds' purchase
//!   record), split into three regions at thirds of the user ids;
//! - `salted_8`, `salted_16`: the same key behind a salt of 8 and 16 buckets
//!   (`salt(by = [uid])`), split at each bucket.
//!
//! Then the read the other way round: the newest 20 purchases of one user,
//! 300 users, one prefix scan each.
//!
//! Needs HBase with several region servers:
//!
//! ```sh
//! eval $(HMAP_HBASE_DIR=target/hbase-rs3 scripts/hbase/hbase start --regionservers 3)
//! HMAP_HBASE_DIR=target/hbase-rs3 cargo bench -p hmap-bench --bench hotspot
//! ```
//!
//! `HMAP_HOTSPOT_ROWS` sets the rows per layout (1,000,000). It prints a
//! table and writes `docs/hotspot.svg`, the writes per region server.

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hmap::blocking::Table;
use hmap::schema::TableSchema;
use hmap::store::{ThriftConfig, ThriftStore};
use hmap::{HTable, Query};

#[derive(HTable, Debug, Clone)]
#[hmap(table = "hs_time_first", family(name = "p"))]
struct TimeFirst {
    #[hmap(key)]
    at: i64,
    #[hmap(key)]
    uid: String,
    #[hmap(family = "p")]
    amount: i64,
}

#[derive(HTable, Debug, Clone)]
#[hmap(table = "hs_user_first", family(name = "p"))]
struct UserFirst {
    #[hmap(key)]
    uid: String,
    #[hmap(key, reverse_ts)]
    at: i64,
    #[hmap(family = "p")]
    amount: i64,
}

#[derive(HTable, Debug, Clone)]
#[hmap(table = "hs_salted_8", salt(buckets = 8, by = [uid]), family(name = "p"))]
struct Salted8 {
    #[hmap(key)]
    uid: String,
    #[hmap(key, reverse_ts)]
    at: i64,
    #[hmap(family = "p")]
    amount: i64,
}

#[derive(HTable, Debug, Clone)]
#[hmap(table = "hs_salted_16", salt(buckets = 16, by = [uid]), family(name = "p"))]
struct Salted16 {
    #[hmap(key)]
    uid: String,
    #[hmap(key, reverse_ts)]
    at: i64,
    #[hmap(family = "p")]
    amount: i64,
}

const USERS: u64 = 10_000;
const WRITERS: usize = 4;
const BATCH: usize = 500;
const PREFIX: &str = "hmap_hotspot__";

/// A purchase in arrival order: the n-th, a millisecond after the one
/// before, by a user drawn at random.
fn purchase(n: u64, start: i64) -> (String, i64, i64) {
    let mut x = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    x ^= x >> 31;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 29;
    (format!("u{:05}", x % USERS), start + n as i64, (x % 10_000) as i64)
}

/// One layout: how to build its row from a purchase, and its table schema.
struct Layout<T: HTable> {
    name: &'static str,
    row: fn(String, i64, i64) -> T,
    schema: TableSchema,
}

struct Outcome {
    name: &'static str,
    load: Duration,
    /// Write requests per region server, busiest first.
    writes: Vec<(String, u64)>,
    /// The 300 users' newest purchases; `None` for a layout that cannot
    /// read one user's rows by a prefix.
    scans: Option<Duration>,
}

fn metrics(table: &str) -> BTreeMap<String, u64> {
    let out = Command::new("scripts/hbase/hbase")
        .args(["metrics", table])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("run scripts/hbase/hbase metrics");
    assert!(
        out.status.success(),
        "metrics: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            // server, regions, reads, writes; the server's port names it.
            let server = cols.first()?.split(',').nth(1)?.to_string();
            Some((format!("rs:{server}"), cols.get(3)?.parse().ok()?))
        })
        .collect()
}

fn run<T>(store: &Arc<hmap::blocking::Store<ThriftStore>>, layout: Layout<T>, rows: u64) -> Outcome
where
    T: HTable + Send + Sync + 'static,
{
    let table: Table<T, Arc<hmap::blocking::Store<ThriftStore>>> = Table::new(Arc::clone(store));
    if table.exists().unwrap() {
        table.drop().unwrap();
    }
    store.create_table(&layout.schema).unwrap();
    let before = metrics(&format!("{PREFIX}{}", T::TABLE));
    let start = hmap::clock::wall_clock() - rows as i64;
    let began = Instant::now();
    std::thread::scope(|s| {
        for w in 0..WRITERS as u64 {
            let table = &table;
            let make = layout.row;
            s.spawn(move || {
                let mut batch = Vec::with_capacity(BATCH);
                // Writer w takes batches w, w + WRITERS, ...: arrival order overall.
                let mut first = w * BATCH as u64;
                while first < rows {
                    batch.clear();
                    for n in first..(first + BATCH as u64).min(rows) {
                        let (uid, at, amount) = purchase(n, start);
                        batch.push(make(uid, at, amount));
                    }
                    table.put_many(&batch).unwrap();
                    first += (WRITERS * BATCH) as u64;
                }
            });
        }
    });
    let load = began.elapsed();
    // Region servers report their metrics to the master every 3 s.
    std::thread::sleep(Duration::from_secs(8));
    let after = metrics(&format!("{PREFIX}{}", T::TABLE));
    let mut writes: Vec<(String, u64)> = after
        .iter()
        .map(|(server, n)| (server.clone(), n - before.get(server).copied().unwrap_or(0)))
        .collect();
    writes.sort_by_key(|w| std::cmp::Reverse(w.1));
    let scans = scan_users(&table);
    Outcome {
        name: layout.name,
        load,
        writes,
        scans,
    }
}

/// The newest 20 purchases of 300 users, one prefix scan each; `None` for
/// a key that does not start with the user (time first).
fn scan_users<T: HTable>(table: &Table<T, Arc<hmap::blocking::Store<ThriftStore>>>) -> Option<Duration> {
    if T::key_schema().parts().next().map(|p| p.name.as_ref()) != Some("uid") {
        return None;
    }
    let began = Instant::now();
    for u in 0..300u64 {
        let uid = format!("u{:05}", u * 31 % USERS);
        let n = table.scan(Query::prefix((uid,)).limit(20)).unwrap().count();
        assert!(n <= 20);
    }
    Some(began.elapsed())
}

fn chart(outcomes: &[Outcome], path: &str) {
    use plotters::prelude::*;
    let root = SVGBackend::new(path, (860, 420)).into_drawing_area();
    root.fill(&WHITE).unwrap();
    let servers = outcomes.iter().map(|o| o.writes.len()).max().unwrap_or(1);
    let most = outcomes
        .iter()
        .flat_map(|o| o.writes.iter().map(|w| w.1))
        .max()
        .unwrap_or(1);
    let groups = outcomes.len();
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Writes per region server (busiest first), per rowkey layout",
            ("sans-serif", 18),
        )
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..groups as f64, 0u64..most + most / 10)
        .unwrap();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(groups)
        .x_label_formatter(&|x| {
            outcomes
                .get(x.floor() as usize)
                .map(|o| o.name.to_string())
                .unwrap_or_default()
        })
        .y_desc("write requests")
        .draw()
        .unwrap();
    let colors = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
    ];
    for (g, outcome) in outcomes.iter().enumerate() {
        for (s, (_, n)) in outcome.writes.iter().enumerate() {
            let width = 0.8 / servers as f64;
            let x0 = g as f64 + 0.1 + s as f64 * width;
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x0, 0), (x0 + width * 0.9, *n)],
                    colors[s % colors.len()].filled(),
                )))
                .unwrap();
        }
    }
    root.present().unwrap();
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken.
    let Ok(address) = std::env::var("HMAP_THRIFT") else {
        eprintln!(
            "hotspot: HMAP_THRIFT is not set; start HBase with \
             `scripts/hbase/hbase start --regionservers 3` (see this file's docs)"
        );
        return;
    };
    let rows: u64 = std::env::var("HMAP_HOTSPOT_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let mut config = ThriftConfig::new(address);
    config.table_prefix = PREFIX.into();
    let store = Arc::new(hmap::blocking::Store::new(ThriftStore::with_config(config)));

    let thirds = |a: &[u8], b: &[u8]| vec![bytes::Bytes::copy_from_slice(a), bytes::Bytes::copy_from_slice(b)];
    let time_first = {
        let third = (1i64 << 41) / 3;
        let key = |at: i64| TimeFirst::key_schema().encode_prefix(&(at,)).unwrap();
        TimeFirst::table_schema().split_keys(thirds(&key(third), &key(2 * third)))
    };
    let user_first = {
        let key = |uid: &str| UserFirst::key_schema().encode_prefix(&(uid,)).unwrap();
        UserFirst::table_schema().split_keys(thirds(&key("u03333"), &key("u06667")))
    };
    let outcomes = vec![
        run(
            &store,
            Layout {
                name: "time_first",
                row: |uid, at, amount| TimeFirst { at, uid, amount },
                schema: time_first,
            },
            rows,
        ),
        run(
            &store,
            Layout {
                name: "user_first",
                row: |uid, at, amount| UserFirst { uid, at, amount },
                schema: user_first,
            },
            rows,
        ),
        run(
            &store,
            Layout {
                name: "salted_8",
                row: |uid, at, amount| Salted8 { uid, at, amount },
                schema: Salted8::table_schema(),
            },
            rows,
        ),
        run(
            &store,
            Layout {
                name: "salted_16",
                row: |uid, at, amount| Salted16 { uid, at, amount },
                schema: Salted16::table_schema(),
            },
            rows,
        ),
    ];
    println!("{rows} purchases per layout, {WRITERS} writers, batches of {BATCH}");
    println!(
        "| layout | load | rows/s | writes per region server (busiest first) | busiest / idlest | 300 user scans |"
    );
    println!("|---|---|---|---|---|---|");
    for o in &outcomes {
        let counts: Vec<String> = o.writes.iter().map(|(_, n)| n.to_string()).collect();
        let busiest = o.writes.first().map_or(0, |w| w.1);
        let idlest = o.writes.last().map_or(0, |w| w.1);
        let ratio = if idlest == 0 {
            "all on one".to_string()
        } else {
            format!("{:.2}x", busiest as f64 / idlest as f64)
        };
        println!(
            "| {} | {:.1} s | {:.0} | {} | {} | {} |",
            o.name,
            o.load.as_secs_f64(),
            rows as f64 / o.load.as_secs_f64(),
            counts.join(" / "),
            ratio,
            o.scans.map_or("no user prefix".into(), |d| format!(
                "{:.0} ms",
                d.as_secs_f64() * 1000.0
            ))
        );
    }
    let svg = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/hotspot.svg");
    chart(&outcomes, svg);
    println!("chart: docs/hotspot.svg");
    for o in &outcomes {
        let table = match o.name {
            "time_first" => TimeFirst::TABLE,
            "user_first" => UserFirst::TABLE,
            "salted_8" => Salted8::TABLE,
            _ => Salted16::TABLE,
        };
        let _ = store.delete_table(table);
    }
}
