//! hmap's side of `scripts/bench/compare`: ThriftStore (the raw `Store`,
//! through the Thrift2 gateway) doing the same work as the native Java
//! client and happybase on the same rows.
//!
//! ```sh
//! hmap-compare HOST:PORT ROWS TABLE
//! ```
//!
//! Prints one line per operation: `hmap<TAB>operation<TAB>seconds`, and on
//! Unix one more with the CPU time the client spent on it, all threads
//! together (`hmap<TAB>operation_cpu<TAB>seconds`, from the process's CPU
//! clock); for the load, one more with the part of it spent inside
//! `Store::mutate`, that is in hmap rather than in building and dropping
//! the rows (`hmap<TAB>load_mutate_cpu<TAB>seconds`). With `HMAP_BENCH_SERVERS` set (`name=PID`
//! pairs, space-separated, as `scripts/bench/compare` sets it for HBase and
//! its gateways) it prints the CPU time each of those processes spent during
//! the operation too (`hmap<TAB>operation@name<TAB>seconds`). With
//! `HMAP_COMPARE_LOAD_ONLY` set it stops after the load, for a profile of
//! the write path. With `HMAP_COMPARE_LOADER` set it loads the same rows
//! through a `Loader` (batches of 1,000 rows, values built in reused
//! buffers) instead of `Store::mutate`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::time::Instant;

use bytes::Bytes;
use futures_util::StreamExt;
use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::{Get, Loader, RowMutation, Scan, Store, StoreError, ThriftConfig, ThriftStore};

const GETS: usize = 10_000;
const MULTI: usize = 100;
const FAMILY: &str = "p";

/// The rows, as `scripts/bench/compare` describes them.
fn key(i: usize) -> Bytes {
    let ts = 1_700_000_000_000i64 + i as i64;
    let mut key = format!("u{:04}", i % 1000).into_bytes();
    key.extend_from_slice(&(i64::MAX - ts).to_be_bytes());
    Bytes::from(key)
}

fn row(i: usize) -> RowMutation {
    RowMutation::with_capacity(key(i), 6)
        .put(FAMILY, "item", format!("item-{:06}", i % 50_000))
        .put(
            FAMILY,
            "amount",
            Bytes::copy_from_slice(&((i as i64) * 37 % 100_000).to_be_bytes()),
        )
        .put(
            FAMILY,
            "qty",
            Bytes::copy_from_slice(&(1 + (i % 9) as i32).to_be_bytes()),
        )
        .put(FAMILY, "shop", format!("shop-{:04}", i % 700))
        .put(FAMILY, "status", "paid")
        .put(FAMILY, "note", format!("purchase record {i:08}, gift wrap: no"))
}

/// The same rows as [`row`] makes, through a [`Loader`] in batches of
/// 1,000 rows, as an application loading many rows would write them: the
/// key and the text values built in buffers reused from row to row.
async fn load_with_loader(store: &ThriftStore, table: &str, rows: usize) -> Result<(), StoreError> {
    let mut loader = Loader::new(store, table).max_rows(1000);
    let mut key = Vec::with_capacity(16);
    let mut text = String::with_capacity(64);
    for i in 0..rows {
        let ts = 1_700_000_000_000i64 + i as i64;
        key.clear();
        write!(key, "u{:04}", i % 1000).expect("a Vec takes any write");
        key.extend_from_slice(&(i64::MAX - ts).to_be_bytes());
        let mut row = loader.row(&key);
        text.clear();
        write!(text, "item-{:06}", i % 50_000).expect("a String takes any write");
        row = row
            .put(FAMILY, "item", &text)
            .put(FAMILY, "amount", ((i as i64) * 37 % 100_000).to_be_bytes())
            .put(FAMILY, "qty", (1 + (i % 9) as i32).to_be_bytes());
        text.clear();
        write!(text, "shop-{:04}", i % 700).expect("a String takes any write");
        row = row.put(FAMILY, "shop", &text).put(FAMILY, "status", "paid");
        text.clear();
        write!(text, "purchase record {i:08}, gift wrap: no").expect("a String takes any write");
        row.put(FAMILY, "note", &text).end().await?;
    }
    loader.finish().await?;
    Ok(())
}

fn pick(k: usize, rows: usize) -> usize {
    k * 7919 % rows
}

/// The CPU time of every thread of this process so far, in seconds (the
/// process's CPU clock). `None` where there is none.
#[cfg(unix)]
fn cpu_seconds() -> Option<f64> {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid timespec for the call to fill.
    let done = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    (done == 0).then(|| now.tv_sec as f64 + now.tv_nsec as f64 / 1e9)
}

#[cfg(not(unix))]
fn cpu_seconds() -> Option<f64> {
    None
}

/// The CPU time so far of each server process named in `HMAP_BENCH_SERVERS`
/// (`name=PID ...`), in seconds: user and system time from
/// `/proc/PID/stat`, all threads, in clock ticks of 1/100 s.
fn server_cpu_seconds() -> Vec<(String, f64)> {
    let servers = std::env::var("HMAP_BENCH_SERVERS").unwrap_or_default();
    servers
        .split_whitespace()
        .filter_map(|pair| {
            let (name, pid) = pair.split_once('=')?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // The fields after the command name, which is in parentheses.
            let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
            let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
            Some((name.to_string(), ticks as f64 / 100.0))
        })
        .collect()
}

/// When an operation started: wall clock, CPU time, and the servers' CPU.
struct Started(Instant, Option<f64>, Vec<(String, f64)>);

fn start() -> Started {
    Started(Instant::now(), cpu_seconds(), server_cpu_seconds())
}

fn report(operation: &str, started: Started) {
    println!("hmap\t{operation}\t{:.6}", started.0.elapsed().as_secs_f64());
    if let (Some(before), Some(now)) = (started.1, cpu_seconds()) {
        println!("hmap\t{operation}_cpu\t{:.6}", now - before);
    }
    for ((name, before), (_, now)) in started.2.iter().zip(server_cpu_seconds()) {
        println!("hmap\t{operation}@{name}\t{:.2}", now - before);
    }
}

fn check(ok: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(format!("wrong result: {}", what()))
    }
}

async fn scan(store: &ThriftStore, table: &str, scan: Scan) -> Result<usize, StoreError> {
    let mut rows = store.scan(table, &scan).await?;
    let mut cells = 0;
    while let Some(row) = rows.next().await {
        cells += row?.cells.len();
    }
    Ok(cells)
}

async fn run(address: &str, rows: usize, table: &str) -> Result<(), Box<dyn std::error::Error>> {
    let mut config = ThriftConfig::new(address);
    config.call_timeout = std::time::Duration::from_secs(600);
    let store = ThriftStore::with_config(config);
    if store.table_exists(table).await? {
        store.delete_table(table).await?;
    }
    store
        .create_table(&TableSchema::new(table).family(FamilySchema::new(FAMILY)))
        .await?;

    if std::env::var_os("HMAP_COMPARE_LOADER").is_some() {
        let started = start();
        load_with_loader(&store, table, rows).await?;
        report("load", started);
    } else {
        let started = start();
        let mut in_mutate = 0.0;
        let mut batch = Vec::with_capacity(1000);
        for i in 0..rows {
            batch.push(row(i));
            if batch.len() == 1000 || i + 1 == rows {
                let before = cpu_seconds();
                store.mutate(table, &batch).await?;
                in_mutate += cpu_seconds().zip(before).map_or(0.0, |(now, before)| now - before);
                batch.clear();
            }
        }
        report("load", started);
        if cpu_seconds().is_some() {
            println!("hmap\tload_mutate_cpu\t{in_mutate:.6}");
        }
    }
    if std::env::var_os("HMAP_COMPARE_LOAD_ONLY").is_some() {
        store.delete_table(table).await?;
        return Ok(());
    }

    let started = start();
    let cells = scan(&store, table, Scan::all().batch_size(1000)).await?;
    report("scan_tuned", started);
    check(cells == 6 * rows, || format!("tuned scan read {cells} cells"))?;
    let started = start();
    let cells = scan(&store, table, Scan::all()).await?;
    report("scan_default", started);
    check(cells == 6 * rows, || format!("default scan read {cells} cells"))?;

    let started = start();
    for k in 0..GETS {
        let found = store.get(table, &Get::new(key(pick(k, rows)))).await?;
        check(found.is_some(), || format!("get {k}"))?;
    }
    report("get", started);

    let started = start();
    for b in 0..GETS / MULTI {
        let gets: Vec<Get> = (b * MULTI..(b + 1) * MULTI)
            .map(|k| Get::new(key(pick(k, rows))))
            .collect();
        let found = store.get_many(table, &gets).await?;
        check(found.iter().all(Option::is_some), || format!("multi-get {b}"))?;
    }
    report("multiget", started);
    store.delete_table(table).await?;
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [address, rows, table] = args.as_slice() else {
        eprintln!("usage: hmap-compare HOST:PORT ROWS TABLE");
        std::process::exit(2);
    };
    let Ok(rows) = rows.parse::<usize>() else {
        eprintln!("ROWS is a number: {rows}");
        std::process::exit(2);
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    if let Err(e) = runtime.block_on(run(address, rows, table)) {
        eprintln!("hmap-compare: {e}");
        std::process::exit(1);
    }
}
