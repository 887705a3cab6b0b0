//! `hmap-cluster-load`: the write load of `scripts/hbase/ClusterLoad.java`
//! (HBase's Java client with its default settings) through NativeStore,
//! with the same rows, batches, read-back and output line, so that the two
//! clients can be run side by side under the same fault
//! (`scripts/hbase/chaos-compare`; the figures are in `docs/reliability.md`).
//!
//! ```sh
//! export $(scripts/hbase/cluster start)
//! cargo run --release -p hmap-bench --bin hmap-cluster-load -- --rows 200000 --batch 500
//! ```
//!
//! Options, as ClusterLoad's: `--rows N` (200,000), `--batch N` (500),
//! `--offset N` (0), `--table NAME` (`load`), `--regions N` (1: the table
//! pre-split into N regions over the keys), `--value-size N` (32),
//! `--verify-only`; and `--call-timeout SECS`, each call's deadline (30 s,
//! NativeStore's default). Keys are `row%010d`, one cell `f:q` each, a
//! value made from the row's number as ClusterLoad makes it. Each batch is
//! one `Store::mutate`, acknowledged or failed as a whole; a failed call is
//! counted and not tried again. Then every acknowledged row is read back
//! (`get_many` in batches).
//!
//! One line on stdout, key=value pairs (ClusterLoad's, plus the errors'
//! kinds): `table=load rows=200000 offset=0 batch=500 acknowledged=200000
//! failed_calls=0 failed_rows=0 longest_stall_ms=... stall_from_ms=...
//! stall_to_ms=... write_ms=... verified=200000 lost=0 late_calls=0`. Exit
//! status 0 when nothing is lost, 1 otherwise, 2 for a usage error.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::native::{NativeConfig, NativeStore};
use hmap::store::{Get, RowMutation, Store};

fn key(i: u64) -> String {
    format!("row{i:010}")
}

/// ClusterLoad's value: `v<i>-` then letters up to `size` bytes.
fn value(i: u64, size: usize) -> Vec<u8> {
    let mut s = format!("v{i}-");
    while s.len() < size {
        s.push((b'a' + ((i + s.len() as u64) % 26) as u8) as char);
    }
    s.into_bytes()
}

fn usage(why: &str) -> ! {
    eprintln!("hmap-cluster-load: {why}");
    eprintln!(
        "usage: hmap-cluster-load [--rows N] [--batch N] [--offset N] [--table NAME] [--regions N] \
         [--value-size N] [--call-timeout SECS] [--verify-only]"
    );
    std::process::exit(2);
}

fn epoch_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

struct Options {
    rows: u64,
    batch: u64,
    offset: u64,
    table: String,
    regions: u64,
    value_size: usize,
    call_timeout: Duration,
    verify_only: bool,
}

fn options() -> Options {
    let mut o = Options {
        rows: 200_000,
        batch: 500,
        offset: 0,
        table: "load".into(),
        regions: 1,
        value_size: 32,
        call_timeout: Duration::from_secs(30),
        verify_only: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--verify-only" {
            o.verify_only = true;
            continue;
        }
        let Some(v) = args.next() else {
            usage(&format!("{arg} takes a value"))
        };
        let number = || {
            v.parse::<u64>()
                .unwrap_or_else(|_| usage(&format!("{arg} takes a number, not {v}")))
        };
        match arg.as_str() {
            "--rows" => o.rows = number(),
            "--batch" => o.batch = number(),
            "--offset" => o.offset = number(),
            "--table" => o.table = v.clone(),
            "--regions" => o.regions = number(),
            "--value-size" => o.value_size = number() as usize,
            "--call-timeout" => o.call_timeout = Duration::from_secs(number()),
            _ => usage(&format!("unknown option {arg}")),
        }
    }
    if o.batch == 0 || o.regions == 0 {
        usage("--batch and --regions from 1");
    }
    o
}

#[tokio::main]
async fn main() {
    let o = options();
    let masters = std::env::var("HMAP_NATIVE").unwrap_or_else(|_| usage("HMAP_NATIVE names the masters"));
    let config = NativeConfig::new(masters.split(',')).call_timeout(o.call_timeout);
    let store = match NativeStore::connect(config).await {
        Ok(store) => store,
        Err(e) => {
            eprintln!("hmap-cluster-load: {e}");
            std::process::exit(1);
        }
    };
    if !o.verify_only && !store.table_exists(&o.table).await.unwrap_or(false) {
        let splits = (1..o.regions).map(|r| bytes::Bytes::from(key(o.offset + o.rows * r / o.regions)));
        let schema = TableSchema::new(o.table.clone())
            .family(FamilySchema::new("f"))
            .split_keys(splits);
        if let Err(e) = store.create_table(&schema).await {
            eprintln!("hmap-cluster-load: creating {}: {e}", o.table);
            std::process::exit(1);
        }
    }
    let mut acknowledged = vec![o.verify_only; o.rows as usize];
    let (mut failed_calls, mut failed_rows, mut late_calls) = (0u64, 0u64, 0u64);
    let (mut longest, mut stall_from, mut stall_to) = (0u128, 0u128, 0u128);
    let started = Instant::now();
    let mut last = epoch_ms();
    let mut last_progress = Instant::now();
    let mut first = 0;
    while first < o.rows && !o.verify_only {
        let count = o.batch.min(o.rows - first);
        let rows: Vec<RowMutation> = (first..first + count)
            .map(|i| RowMutation::new(key(o.offset + i)).put("f", "q", value(o.offset + i, o.value_size)))
            .collect();
        let call = Instant::now();
        let result = store.mutate(&o.table, &rows).await;
        if call.elapsed() > o.call_timeout + Duration::from_secs(2) {
            late_calls += 1;
        }
        match result {
            Ok(()) => {
                let now = epoch_ms();
                acknowledged[first as usize..(first + count) as usize].fill(true);
                if now - last > longest {
                    (longest, stall_from, stall_to) = (now - last, last, now);
                }
                last = now;
            }
            Err(e) => {
                failed_calls += 1;
                failed_rows += count;
                eprintln!(
                    "failed call rows={}..{}: {e} (maybe applied: {})",
                    o.offset + first,
                    o.offset + first + count - 1,
                    e.maybe_applied()
                );
            }
        }
        if last_progress.elapsed() >= Duration::from_secs(10) {
            eprintln!(
                "progress acknowledged={} failed_calls={failed_calls} current_stall_ms={} longest_stall_ms={longest}",
                acknowledged.iter().filter(|a| **a).count(),
                epoch_ms() - last
            );
            last_progress = Instant::now();
        }
        first += count;
    }
    let write_ms = started.elapsed().as_millis();

    let (mut verified, mut lost) = (0u64, 0u64);
    let wanted: Vec<u64> = (0..o.rows).filter(|&i| acknowledged[i as usize]).collect();
    for chunk in wanted.chunks(o.batch as usize) {
        let gets: Vec<Get> = chunk.iter().map(|&i| Get::new(key(o.offset + i))).collect();
        let results = match store.get_many(&o.table, &gets).await {
            Ok(results) => results,
            Err(e) => {
                eprintln!("hmap-cluster-load: reading back rows from {}: {e}", o.offset + chunk[0]);
                std::process::exit(1);
            }
        };
        for (&i, row) in chunk.iter().zip(results) {
            let got = row.and_then(|r| r.value("f", "q"));
            if got.as_deref() == Some(&value(o.offset + i, o.value_size)[..]) {
                verified += 1;
            } else {
                if lost < 20 {
                    eprintln!("lost row={} read={got:?}", key(o.offset + i));
                }
                lost += 1;
            }
        }
    }
    println!(
        "table={} rows={} offset={} batch={} acknowledged={} failed_calls={failed_calls} failed_rows={failed_rows} \
         longest_stall_ms={longest} stall_from_ms={stall_from} stall_to_ms={stall_to} write_ms={write_ms} \
         verified={verified} lost={lost} late_calls={late_calls}",
        o.table,
        o.rows,
        o.offset,
        o.batch,
        acknowledged.iter().filter(|a| **a).count(),
    );
    std::process::exit(if lost == 0 { 0 } else { 1 });
}
