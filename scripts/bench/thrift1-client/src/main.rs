//! The `hbase-thrift` crate's side of `scripts/bench/compare`: a bulk load
//! in batches of 1,000 rows (`mutateRows`) and a full scan fetching 1,000
//! rows per call (`scannerGetList`), through the Thrift1 gateway, on the
//! same rows as the other clients.
//!
//! ```sh
//! thrift1-client HOST:PORT ROWS TABLE
//! ```
//!
//! Prints `thrift1crate<TAB>operation<TAB>seconds` lines, and the client's
//! CPU time per operation as `operation_cpu` (Linux, all threads).

use std::collections::BTreeMap;
use std::time::Instant;

use hbase_thrift::hbase::{BatchMutation, ColumnDescriptor, HbaseSyncClient, Mutation, THbaseSyncClient, TScan};
use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol};
use thrift::transport::{TBufferedReadTransport, TBufferedWriteTransport, TIoChannel, TTcpChannel};

fn cpu_seconds() -> Option<f64> {
    let mut total = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        total += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(total as f64 / 1e9)
}

fn report(operation: &str, started: (Instant, Option<f64>)) {
    println!("thrift1crate\t{operation}\t{:.6}", started.0.elapsed().as_secs_f64());
    if let (Some(before), Some(now)) = (started.1, cpu_seconds()) {
        println!("thrift1crate\t{operation}_cpu\t{:.6}", now - before);
    }
}

fn start() -> (Instant, Option<f64>) {
    (Instant::now(), cpu_seconds())
}

/// The rows, as `scripts/bench/compare` describes them.
fn key(i: usize) -> Vec<u8> {
    let ts = 1_700_000_000_000i64 + i as i64;
    let mut key = format!("u{:04}", i % 1000).into_bytes();
    key.extend_from_slice(&(i64::MAX - ts).to_be_bytes());
    key
}

fn put(column: &str, value: Vec<u8>) -> Mutation {
    Mutation::new(false, format!("p:{column}").into_bytes(), value, None)
}

fn row(i: usize) -> BatchMutation {
    BatchMutation::new(
        key(i),
        vec![
            put("item", format!("item-{:06}", i % 50_000).into_bytes()),
            put("amount", ((i as i64) * 37 % 100_000).to_be_bytes().to_vec()),
            put("qty", (1 + (i % 9) as i32).to_be_bytes().to_vec()),
            put("shop", format!("shop-{:04}", i % 700).into_bytes()),
            put("status", b"paid".to_vec()),
            put("note", format!("purchase record {i:08}, gift wrap: no").into_bytes()),
        ],
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [address, rows, table] = args.as_slice() else {
        return Err("usage: thrift1-client HOST:PORT ROWS TABLE".into());
    };
    let rows: usize = rows.parse()?;
    let mut channel = TTcpChannel::new();
    channel.open(address)?;
    let (input, output) = channel.split()?;
    let mut client = HbaseSyncClient::new(
        TBinaryInputProtocol::new(TBufferedReadTransport::new(input), true),
        TBinaryOutputProtocol::new(TBufferedWriteTransport::new(output), true),
    );
    let name = table.as_bytes().to_vec();
    if client.get_table_names()?.contains(&name) {
        client.disable_table(name.clone())?;
        client.delete_table(name.clone())?;
    }
    // Hbase.thrift's defaults, but one version and the block cache on, as
    // the other clients' tables have.
    let family = ColumnDescriptor::new(
        b"p:".to_vec(),
        1,
        "NONE".to_string(),
        false,
        "NONE".to_string(),
        0,
        0,
        true,
        i32::MAX,
    );
    client.create_table(name.clone(), vec![family])?;

    let started = start();
    for first in (0..rows).step_by(1000) {
        let batch = (first..(first + 1000).min(rows)).map(row).collect();
        client.mutate_rows(name.clone(), batch, BTreeMap::new())?;
    }
    report("load", started);

    let started = start();
    // Every field unset but the caching (the generated `Default` sets them
    // all, a timestamp of 0 among them).
    let scan = TScan::new(None, None, None, None, 1000, None, None, None, None, None);
    let id = client.scanner_open_with_scan(name.clone(), scan, BTreeMap::new())?;
    let mut cells = 0;
    loop {
        let batch = client.scanner_get_list(id, 1000)?;
        if batch.is_empty() {
            break;
        }
        cells += batch.iter().map(|r| r.columns.as_ref().map_or(0, BTreeMap::len)).sum::<usize>();
    }
    client.scanner_close(id)?;
    report("scan_tuned", started);
    if cells != 6 * rows {
        return Err(format!("wrong result: the scan read {cells} cells").into());
    }
    client.disable_table(name.clone())?;
    client.delete_table(name)?;
    Ok(())
}
