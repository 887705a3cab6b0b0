//! Random operation sequences run on `MemoryStore` and on a real HBase side
//! by side: every read must give the same cells on both. HBase is the
//! reference; a difference is a `MemoryStore` (or `ThriftStore`) defect.
//!
//! Writes carry explicit timestamps (1 to 30), so that both stores see the
//! same versions; deletes may also be stamped by the store ("now", later
//! than every explicit timestamp), and increments always are (their cells
//! show as `@now`). Each failure prints its seed and the
//! operations so far. `HMAP_DIFF_SEQUENCES` and `HMAP_DIFF_OPS` make a run
//! longer (defaults: 24 sequences of 60 operations).

use std::fmt::Write as _;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::TryStreamExt;
use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::{
    CheckAndMutate, Column, Get, Increment, MemoryStore, Mutation, RowMutation, RowResult, Scan, Store, ThriftConfig,
    ThriftStore, TimeRange,
};
use hmap_suite::Rng;

const ROWS: &[&str] = &["r0", "r1", "r2", "r3", "r4"];
const FAMILIES: &[&str] = &["a", "b", "c"];
const QUALIFIERS: &[&str] = &["q0", "q1", "q2"];
const VALUES: &[&str] = &["", "x", "y", "zz", "v1", "v2"];

fn schema(name: &str) -> TableSchema {
    TableSchema::new(name)
        .family(FamilySchema::new("a").versions(3))
        .family(FamilySchema::new("b"))
        .family(FamilySchema::new("c").versions(2).min_versions(1))
}

fn pick<'a>(rng: &mut Rng, from: &[&'a str]) -> &'a str {
    from[rng.below(from.len() as u64) as usize]
}

fn ts(rng: &mut Rng) -> i64 {
    1 + rng.below(30) as i64
}

/// One random mutation.
fn mutation(rng: &mut Rng) -> Mutation {
    let (family, qualifier) = (pick(rng, FAMILIES), pick(rng, QUALIFIERS));
    let f = Bytes::copy_from_slice(family.as_bytes());
    let q = Bytes::copy_from_slice(qualifier.as_bytes());
    match rng.below(12) {
        0..=5 => Mutation::Put {
            family: f,
            qualifier: q,
            value: Bytes::copy_from_slice(pick(rng, VALUES).as_bytes()),
            timestamp: Some(ts(rng)),
        },
        6 => Mutation::DeleteCell {
            family: f,
            qualifier: q,
            timestamp: Some(ts(rng)),
        },
        7 => Mutation::DeleteCell {
            family: f,
            qualifier: q,
            timestamp: None,
        },
        8 => Mutation::DeleteColumn {
            family: f,
            qualifier: q,
            up_to: if rng.below(4) == 0 { None } else { Some(ts(rng)) },
        },
        9 => Mutation::DeleteFamily {
            family: f,
            up_to: if rng.below(4) == 0 { None } else { Some(ts(rng)) },
        },
        10 => Mutation::DeleteRow { up_to: Some(ts(rng)) },
        _ => Mutation::Put {
            family: f,
            qualifier: q,
            value: Bytes::copy_from_slice(pick(rng, VALUES).as_bytes()),
            timestamp: Some(ts(rng)),
        },
    }
}

fn row_mutation(rng: &mut Rng) -> RowMutation {
    let mut m = RowMutation::new(pick(rng, ROWS));
    for _ in 0..1 + rng.below(3) {
        m = m.push(mutation(rng));
    }
    m
}

fn columns(rng: &mut Rng) -> Vec<Column> {
    let mut columns = Vec::new();
    for _ in 0..rng.below(3) {
        let family = Bytes::copy_from_slice(pick(rng, FAMILIES).as_bytes());
        if rng.below(2) == 0 {
            columns.push(Column::Family(family));
        } else {
            columns.push(Column::Qualifier(
                family,
                Bytes::copy_from_slice(pick(rng, QUALIFIERS).as_bytes()),
            ));
        }
    }
    columns
}

fn time_range(rng: &mut Rng) -> Option<TimeRange> {
    if rng.below(4) != 0 {
        return None;
    }
    let (a, b) = (ts(rng), ts(rng));
    Some(TimeRange::new(a.min(b), a.max(b) + 1))
}

/// What a read returned, for comparison.
fn shown(rows: &[RowResult]) -> String {
    let mut out = String::new();
    for row in rows {
        let _ = write!(out, "{}:", String::from_utf8_lossy(&row.row));
        for c in &row.cells {
            // A timestamp the store chose is "now" (explicit ones are 1 to 30).
            let at = if c.timestamp > 1_000_000_000_000 {
                "now".to_string()
            } else {
                c.timestamp.to_string()
            };
            let _ = write!(
                out,
                " {}:{}@{at}={:?}",
                String::from_utf8_lossy(&c.family),
                String::from_utf8_lossy(&c.qualifier),
                String::from_utf8_lossy(&c.value)
            );
        }
        out.push('\n');
    }
    out
}

enum Op {
    Mutate(Vec<RowMutation>),
    Increment(Increment),
    Check(CheckAndMutate),
    Get(Get),
    Scan(Scan),
}

fn op(rng: &mut Rng) -> Op {
    match rng.below(11) {
        0..=3 => Op::Mutate((0..1 + rng.below(2)).map(|_| row_mutation(rng)).collect()),
        10 => Op::Increment(Increment::new(pick(rng, ROWS)).add(pick(rng, FAMILIES), "n", rng.below(5) as i64 - 1)),
        4 => {
            let m = row_mutation(rng);
            let expected = match rng.below(3) {
                0 => None,
                _ => Some(Bytes::copy_from_slice(pick(rng, VALUES).as_bytes())),
            };
            let family = pick(rng, FAMILIES);
            let qualifier = pick(rng, QUALIFIERS);
            Op::Check(CheckAndMutate::new(m, family, qualifier, expected))
        }
        5..=7 => {
            let mut get = Get::new(pick(rng, ROWS)).max_versions(1 + rng.below(4) as u32);
            get.columns = columns(rng);
            if let Some(range) = time_range(rng) {
                get = get.time_range(range);
            }
            Op::Get(get)
        }
        _ => {
            let (a, b) = (pick(rng, ROWS), pick(rng, ROWS));
            let mut scan = match rng.below(3) {
                0 => Scan::all(),
                _ => Scan::range(a.min(b), if rng.below(2) == 0 { a.max(b) } else { "r9" }),
            }
            .max_versions(1 + rng.below(4) as u32);
            scan.columns = columns(rng);
            if rng.below(3) == 0 {
                scan = scan.reversed();
            }
            if rng.below(3) == 0 {
                scan = scan.limit(1 + rng.below(3) as usize);
            }
            if let Some(range) = time_range(rng) {
                scan = scan.time_range(range);
            }
            Op::Scan(scan.batch_size(1 + rng.below(3) as usize))
        }
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The result of `op` on `store`, as text; errors as their kind.
async fn run(store: &dyn Store, table: &str, op: &Op) -> String {
    match op {
        Op::Mutate(rows) => match store.mutate(table, rows).await {
            Ok(()) => "ok".into(),
            Err(e) => format!("error: {e}"),
        },
        Op::Increment(increment) => match store.increment(table, increment).await {
            Ok(values) => format!("values: {values:?}"),
            Err(e) => format!("error: {e}"),
        },
        Op::Check(check) => match store.check_and_mutate(table, check).await {
            Ok(applied) => format!("applied: {applied}"),
            Err(e) => format!("error: {e}"),
        },
        Op::Get(get) => match store.get(table, get).await {
            Ok(row) => shown(&row.into_iter().collect::<Vec<_>>()),
            Err(e) => format!("error: {e}"),
        },
        Op::Scan(scan) => match store.scan(table, scan).await {
            Ok(rows) => match rows.try_collect::<Vec<_>>().await {
                Ok(rows) => shown(&rows),
                Err(e) => format!("error: {e}"),
            },
            Err(e) => format!("error: {e}"),
        },
    }
}

fn describe(op: &Op) -> String {
    match op {
        Op::Mutate(rows) => format!("mutate {rows:?}"),
        Op::Increment(i) => format!("increment {i:?}"),
        Op::Check(c) => format!("check_and_mutate {c:?}"),
        Op::Get(g) => format!("get {g:?}"),
        Op::Scan(s) => format!("scan {s:?}"),
    }
}

#[tokio::test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_THRIFT=host:port"]
async fn memory_store_answers_as_hbase_does() {
    let address = hmap_suite::required_env("HMAP_THRIFT");
    let mut config = ThriftConfig::new(address);
    config.table_prefix = hmap_suite::test_table_prefix("hmap_test_differential__");
    let hbase = Arc::new(ThriftStore::with_config(config));
    let sequences = env_number("HMAP_DIFF_SEQUENCES", 24);
    let ops = env_number("HMAP_DIFF_OPS", 60);
    let first_seed = env_number("HMAP_DIFF_SEED", 1);
    let table = "t";
    for seed in first_seed..first_seed + sequences {
        let memory = MemoryStore::new();
        if hbase.table_exists(table).await.unwrap() {
            hbase.truncate_table(table).await.unwrap();
        } else {
            hbase.create_table(&schema(table)).await.unwrap();
        }
        memory.create_table(&schema(table)).await.unwrap();
        let mut rng = Rng::new(seed);
        let mut log = String::new();
        for n in 0..ops {
            let op = op(&mut rng);
            let _ = writeln!(log, "{n}: {}", describe(&op));
            let (on_hbase, in_memory) = (run(&*hbase, table, &op).await, run(&memory, table, &op).await);
            assert_eq!(
                in_memory, on_hbase,
                "seed {seed}, operation {n} (MemoryStore left, HBase right); the operations:\n{log}"
            );
        }
        // Everything, every version.
        let all = Op::Scan(Scan::all().max_versions(10));
        assert_eq!(
            run(&memory, table, &all).await,
            run(&*hbase, table, &all).await,
            "seed {seed}, after the sequence; the operations:\n{log}"
        );
    }
    hbase.delete_table(table).await.unwrap();
}
