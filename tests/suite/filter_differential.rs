//! Random filter trees on random gets and scans, run on `MemoryStore` and on
//! a real HBase side by side: every read must give the same cells on both.
//! HBase is the reference; a difference is a defect of `MemoryStore`'s
//! evaluator (`store::filter::eval`) or of the backend's filter encoding.
//!
//! The table has three families (`VERSIONS` 3, 1 and 2) over a dozen rows
//! whose keys, qualifiers and values share bytes, so that comparisons,
//! prefixes, ranges and fuzzy patterns drawn from the data's own bytes hit.
//! Each round writes a fresh random table (explicit timestamps 1 to 6, no
//! more versions per column than its family keeps, so that no flush
//! changes what HBase shows), then runs its share of the operations.
//!
//! `HMAP_FILTER_DIFF_OPS` sets the number of reads (default 100,000),
//! `HMAP_DIFF_SEED` the first seed (default random, printed). Every
//! difference is printed with its seed, its read and both answers (the
//! first 20 in full); the test fails if there is any. `HMAP_FILTER_DIFF_BACKEND`
//! is `native` (the default, `HMAP_NATIVE`), `thrift` (`HMAP_THRIFT`) or
//! `bigtable` (`HMAP_BIGTABLE`, the emulator; this package's feature
//! `bigtable`): there the reads BigtableStore refuses with a typed
//! `Unsupported` (a filter it cannot express) and reversed scans (which the
//! emulator does not implement) are counted and not compared, and every
//! other read must give what MemoryStore gives, HBase's semantics.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use futures_util::TryStreamExt;
use hmap::schema::{FamilySchema, TableSchema};
use hmap::store::filter::{BitOp, ColumnOffset, ColumnRange, Comparator, CompareOp, Filter, FuzzyPattern, RowRange};
use hmap::store::native::{NativeConfig, NativeStore};
use hmap::store::{
    Column, Get, MemoryStore, RowMutation, RowResult, Scan, Store, ThriftConfig, ThriftStore, TimeRange,
};
use hmap_suite::Rng;

const ROWS: &[&str] = &["a", "a1", "a1b", "ab", "b", "b1", "b2x", "ba", "c", "c1", "xa", "xb1"];
const FAMILIES: &[(&str, u32)] = &[("a", 3), ("b", 1), ("c", 2)];
const QUALIFIERS: &[&str] = &["", "a", "a1", "ab", "b", "b1", "x"];
const VALUES: &[&[u8]] = &[
    b"",
    b"a",
    b"a1",
    b"ab",
    b"AB",
    b"b",
    b"b1x",
    b"x",
    b"\x00\x01",
    b"\xe9t\xe9",
    b"\x03",
];
const OPS: &[CompareOp] = &[
    CompareOp::Less,
    CompareOp::LessOrEqual,
    CompareOp::Equal,
    CompareOp::NotEqual,
    CompareOp::GreaterOrEqual,
    CompareOp::Greater,
];

fn schema(name: &str) -> TableSchema {
    FAMILIES.iter().fold(TableSchema::new(name), |s, (f, v)| {
        s.family(FamilySchema::new(*f).versions(*v))
    })
}

fn pick<T: Copy>(rng: &mut Rng, from: &[T]) -> T {
    from[rng.below(from.len() as u64) as usize]
}

fn chance(rng: &mut Rng, one_in: u64) -> bool {
    rng.below(one_in) == 0
}

fn bytes(b: &[u8]) -> Bytes {
    Bytes::copy_from_slice(b)
}

/// Some bytes of the data: a row, qualifier, family or value, or a piece of one.
fn data_bytes(rng: &mut Rng) -> Bytes {
    let whole: &[u8] = match rng.below(4) {
        0 => pick(rng, ROWS).as_bytes(),
        1 => pick(rng, QUALIFIERS).as_bytes(),
        2 => pick(rng, FAMILIES).0.as_bytes(),
        _ => pick(rng, VALUES),
    };
    if whole.is_empty() || chance(rng, 2) {
        return bytes(whole);
    }
    let (a, b) = (
        rng.below(whole.len() as u64 + 1) as usize,
        rng.below(whole.len() as u64 + 1) as usize,
    );
    bytes(&whole[a.min(b)..a.max(b)])
}

/// A Java regular expression built from data bytes (a byte above 0x7F as
/// `\x{..}`, which matches only where the value is valid UTF-8 for it),
/// in the syntax Java and `regex-lite` read alike.
fn regex(rng: &mut Rng) -> String {
    let mut pattern = String::new();
    if chance(rng, 4) {
        pattern.push('^');
    }
    for b in data_bytes(rng).iter() {
        let c = char::from(*b);
        match rng.below(6) {
            0 => pattern.push('.'),
            1 if c.is_ascii_alphanumeric() => {
                pattern.push('[');
                pattern.push(c);
                pattern.push_str("x]");
            }
            _ if c.is_ascii_alphanumeric() => pattern.push(c),
            _ => {
                let _ = write!(pattern, "\\x{{{:02x}}}", b);
            }
        }
        if chance(rng, 5) {
            pattern.push_str(pick(rng, &["*", "?", "+"]));
        }
    }
    pattern
}

fn comparator(rng: &mut Rng) -> Comparator {
    match rng.below(10) {
        0..=3 => Comparator::binary(data_bytes(rng)),
        4 | 5 => Comparator::binary_prefix(data_bytes(rng)),
        6 => Comparator::regex(regex(rng)),
        7 => {
            let s = String::from_utf8_lossy(&data_bytes(rng)).into_owned();
            Comparator::substring(if chance(rng, 2) { s.to_uppercase() } else { s })
        }
        8 => Comparator::Null,
        _ => {
            let mut value = data_bytes(rng).to_vec();
            if value.is_empty() {
                value.push(1);
            }
            Comparator::bit(value, pick(rng, &[BitOp::And, BitOp::Or, BitOp::Xor]))
        }
    }
}

fn op(rng: &mut Rng) -> CompareOp {
    if chance(rng, 40) {
        CompareOp::NoOp
    } else {
        pick(rng, OPS)
    }
}

fn family(rng: &mut Rng) -> Bytes {
    bytes(pick(rng, FAMILIES).0.as_bytes())
}

fn qualifier(rng: &mut Rng) -> Bytes {
    bytes(pick(rng, QUALIFIERS).as_bytes())
}

fn timestamp(rng: &mut Rng) -> i64 {
    1 + rng.below(6) as i64
}

/// A random filter, lists nested up to `depth` more levels.
fn filter(rng: &mut Rng, depth: u32) -> Filter {
    let kinds = if depth == 0 { 21 } else { 24 };
    match rng.below(kinds) {
        0 => Filter::prefix(data_bytes(rng)),
        1 => Filter::row(op(rng), comparator(rng)),
        2 => Filter::family(op(rng), comparator(rng)),
        3 => Filter::qualifier(op(rng), comparator(rng)),
        4 => Filter::value(op(rng), comparator(rng)),
        5 | 6 => {
            let test = Filter::single_column_value(family(rng), qualifier(rng), pick(rng, OPS), comparator(rng))
                .filter_if_missing(chance(rng, 2))
                .latest_version_only(!chance(rng, 3));
            if chance(rng, 2) { test.keep() } else { test.exclude() }
        }
        7 => Filter::column_prefix(data_bytes(rng)),
        8 => {
            let mut prefixes: Vec<Bytes> = (0..1 + rng.below(3)).map(|_| data_bytes(rng)).collect();
            prefixes.sort();
            prefixes.dedup();
            Filter::multiple_column_prefix(prefixes)
        }
        9 => Filter::ColumnRange(column_range(rng)),
        10 => Filter::column_count_get(rng.below(4) as u32),
        11 => Filter::ColumnPagination {
            limit: rng.below(4) as u32,
            offset: if chance(rng, 2) {
                ColumnOffset::Count(rng.below(4) as u32)
            } else {
                ColumnOffset::Qualifier(qualifier(rng))
            },
        },
        12 => Filter::KeyOnly {
            value_length: chance(rng, 2),
        },
        13 => Filter::first_key_only(),
        14 => Filter::inclusive_stop(data_bytes(rng)),
        15 => Filter::page(rng.below(5)),
        16 => Filter::Timestamps {
            timestamps: (0..rng.below(3)).map(|_| timestamp(rng)).collect(),
            can_hint: chance(rng, 2),
        },
        17 => {
            let mut f = Filter::dependent_column(family(rng), qualifier(rng), chance(rng, 2));
            if chance(rng, 2)
                && let Filter::DependentColumn(d) = &mut f
            {
                d.value = Some((op(rng), comparator(rng)));
            }
            f
        }
        18 => {
            let ranges = (0..1 + rng.below(3))
                .map(|_| {
                    let (a, b) = (data_bytes(rng), data_bytes(rng));
                    let (start, stop) = if a <= b { (a, b) } else { (b, a) };
                    let stop = if chance(rng, 6) { Bytes::new() } else { stop };
                    RowRange::with_bounds(start, !chance(rng, 3), stop, chance(rng, 2))
                })
                .collect::<Vec<_>>();
            Filter::multi_row_range(ranges)
        }
        19 => Filter::fuzzy_row((0..1 + rng.below(2)).map(|_| fuzzy(rng))),
        20 => Filter::value(op(rng), comparator(rng)),
        21 => Filter::skip(filter(rng, depth - 1)),
        22 => Filter::while_match(filter(rng, depth - 1)),
        _ => {
            let filters = (0..rng.below(4)).map(|_| filter(rng, depth - 1)).collect::<Vec<_>>();
            if chance(rng, 2) {
                Filter::all(filters)
            } else {
                Filter::any(filters)
            }
        }
    }
}

fn column_range(rng: &mut Rng) -> ColumnRange {
    let Filter::ColumnRange(mut r) = Filter::column_range(None, true, None, false) else {
        unreachable!("column_range builds a ColumnRange");
    };
    let (a, b) = (qualifier(rng), qualifier(rng));
    let (min, max) = if a <= b { (a, b) } else { (b, a) };
    r.min = (!chance(rng, 4)).then_some(min);
    r.max = (!chance(rng, 4)).then_some(max);
    r.min_inclusive = chance(rng, 2);
    r.max_inclusive = chance(rng, 2);
    r
}

fn fuzzy(rng: &mut Rng) -> FuzzyPattern {
    let row = pick(rng, ROWS).as_bytes();
    let len = 1 + rng.below(row.len() as u64) as usize;
    let mask: Vec<u8> = (0..len).map(|_| u8::from(chance(rng, 3))).collect();
    let key: Vec<u8> = row[..len]
        .iter()
        .zip(&mask)
        .map(|(b, m)| if *m == 1 { b'?' } else { *b })
        .collect();
    FuzzyPattern::new(key, mask)
}

fn columns(rng: &mut Rng) -> Vec<Column> {
    let mut columns = Vec::new();
    if chance(rng, 2) {
        return columns;
    }
    for _ in 0..1 + rng.below(3) {
        if chance(rng, 2) {
            columns.push(Column::Family(family(rng)));
        } else {
            columns.push(Column::Qualifier(family(rng), qualifier(rng)));
        }
    }
    hmap::store::selected_columns(&columns).into_owned()
}

fn time_range(rng: &mut Rng) -> Option<TimeRange> {
    if !chance(rng, 4) {
        return None;
    }
    let (a, b) = (timestamp(rng), timestamp(rng));
    Some(TimeRange::new(a.min(b), a.max(b) + 1))
}

enum Read {
    Get(Get),
    Scan(Scan),
}

fn read(rng: &mut Rng) -> Read {
    let filter = filter(rng, 3);
    let versions = 1 + rng.below(3) as u32;
    if chance(rng, 3) {
        let mut get = Get::new(pick(rng, ROWS)).max_versions(versions).filter(filter);
        get.columns = columns(rng);
        if let Some(range) = time_range(rng) {
            get = get.time_range(range);
        }
        return Read::Get(get);
    }
    let (a, b) = (pick(rng, ROWS), pick(rng, ROWS));
    let mut scan = match rng.below(3) {
        0 => Scan::all(),
        1 => Scan::range(a.min(b), a.max(b)),
        _ => Scan::range(a.min(b), ""),
    }
    .max_versions(versions)
    .filter(filter);
    scan.columns = columns(rng);
    if chance(rng, 3) {
        scan = scan.reversed();
    }
    if chance(rng, 4) {
        scan = scan.limit(1 + rng.below(3) as usize);
    }
    if let Some(range) = time_range(rng) {
        scan = scan.time_range(range);
    }
    Read::Scan(scan.batch_size(1 + rng.below(4) as usize))
}

/// A random table: each row some cells, no more versions per column than
/// its family keeps.
fn data(rng: &mut Rng) -> Vec<RowMutation> {
    let mut rows = Vec::new();
    for row in ROWS {
        if chance(rng, 5) {
            continue;
        }
        let mut m = RowMutation::new(*row);
        for (family, versions) in FAMILIES {
            if chance(rng, 3) {
                continue;
            }
            for q in QUALIFIERS {
                if !chance(rng, 3) {
                    continue;
                }
                let mut stamps: Vec<i64> = (0..1 + rng.below(u64::from(*versions)))
                    .map(|_| timestamp(rng))
                    .collect();
                stamps.sort();
                stamps.dedup();
                for ts in stamps {
                    m = m.put_at(*family, *q, ts, pick(rng, VALUES));
                }
            }
        }
        if !m.mutations.is_empty() {
            rows.push(m);
        }
    }
    rows
}

/// What a read returned, as text; an error as "error" (its kind may differ
/// between stores: MemoryStore refuses up front what HBase fails on).
fn shown(rows: &[RowResult]) -> String {
    let mut out = String::new();
    for row in rows {
        let _ = write!(out, "{:?}:", String::from_utf8_lossy(&row.row));
        for c in &row.cells {
            let _ = write!(
                out,
                " {}:{:?}@{}={:?}",
                String::from_utf8_lossy(&c.family),
                String::from_utf8_lossy(&c.qualifier),
                c.timestamp,
                Bytes::copy_from_slice(&c.value)
            );
        }
        out.push('\n');
    }
    out
}

async fn run(store: &dyn Store, table: &str, read: &Read) -> Result<String, String> {
    match read {
        Read::Get(get) => match store.get(table, get).await {
            Ok(row) => Ok(shown(&row.into_iter().collect::<Vec<_>>())),
            Err(e) => Err(e.to_string()),
        },
        Read::Scan(scan) => match store.scan(table, scan).await {
            Ok(rows) => match rows.try_collect::<Vec<_>>().await {
                Ok(rows) => Ok(shown(&rows)),
                Err(e) => Err(e.to_string()),
            },
            Err(e) => Err(e.to_string()),
        },
    }
}

fn describe(read: &Read) -> String {
    match read {
        Read::Get(g) => format!("get {g:?}"),
        Read::Scan(s) => format!("scan {s:?}"),
    }
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

async fn hbase_store() -> Arc<dyn Store> {
    let prefix = hmap_suite::test_table_prefix("hmap_test_filter_diff__");
    match std::env::var("HMAP_FILTER_DIFF_BACKEND").as_deref() {
        Ok("bigtable") => hmap_suite::store_named("HMAP_BIGTABLE", &prefix)
            .await
            .expect("connect to HMAP_BIGTABLE"),
        Ok("thrift") => {
            let mut config = ThriftConfig::new(hmap_suite::required_env("HMAP_THRIFT"));
            config.table_prefix = prefix;
            Arc::new(ThriftStore::with_config(config))
        }
        _ => {
            let address = hmap_suite::required_env("HMAP_NATIVE");
            let config = NativeConfig::new([address.as_str()]).table_prefix(prefix);
            Arc::new(NativeStore::connect(config).await.expect("connect to HMAP_NATIVE"))
        }
    }
}

/// What one round found: how many reads it made, how many it could not
/// compare, and each difference, described.
#[derive(Default)]
struct RoundOutcome {
    reads: u64,
    refused: u64,
    differences: Vec<String>,
}

/// One round: a fresh table of its own (so that rounds run side by side)
/// written with `round_seed`'s random rows on HBase and in memory, then
/// `reads` random reads on both, compared.
async fn round(hbase: &dyn Store, seed: u64, round: u64, reads: u64, bigtable: bool) -> RoundOutcome {
    let round_seed = seed.wrapping_add(round);
    let mut rng = Rng::new(round_seed);
    let table = format!("t{round}");
    let table = table.as_str();
    if hbase.table_exists(table).await.expect("table_exists") {
        hbase
            .delete_table(table)
            .await
            .expect("delete a table left by an earlier run");
    }
    hbase.create_table(&schema(table)).await.expect("create");
    let memory = MemoryStore::new();
    memory.create_table(&schema(table)).await.expect("create in memory");
    let rows = data(&mut rng);
    hbase.mutate(table, &rows).await.expect("write to HBase");
    memory.mutate(table, &rows).await.expect("write to memory");
    let mut outcome = RoundOutcome {
        reads,
        ..RoundOutcome::default()
    };
    for n in 0..reads {
        let read = read(&mut rng);
        if bigtable && matches!(&read, Read::Scan(s) if s.reversed) {
            outcome.refused += 1;
            continue;
        }
        let (on_hbase, in_memory) = (run(hbase, table, &read).await, run(&memory, table, &read).await);
        // StoreError::Unsupported, as `run` shows it.
        if bigtable && matches!(&on_hbase, Err(e) if e.contains("cannot express")) {
            outcome.refused += 1;
            continue;
        }
        let same = match (&on_hbase, &in_memory) {
            (Ok(a), Ok(b)) => a == b,
            (Err(_), Err(_)) => true,
            _ => false,
        };
        if !same {
            outcome.differences.push(format!(
                "seed {round_seed} (round {round} of first seed {seed}), read {n}: {}\n  HBase:       {on_hbase:?}\n  MemoryStore: {in_memory:?}",
                describe(&read)
            ));
        }
    }
    hbase.delete_table(table).await.expect("delete");
    outcome
}

/// The rounds run `HMAP_FILTER_DIFF_WORKERS` at a time (default 8): a
/// round waits on the server most of its time, and its table is its own.
#[tokio::test]
#[ignore = "needs a real HBase: scripts/hbase/hbase start, then HMAP_NATIVE (or HMAP_THRIFT with HMAP_FILTER_DIFF_BACKEND=thrift)"]
async fn memory_store_filters_as_hbase_does() {
    use futures_util::StreamExt;
    let hbase = hbase_store().await;
    let total = env_number("HMAP_FILTER_DIFF_OPS").unwrap_or(100_000);
    let workers = env_number("HMAP_FILTER_DIFF_WORKERS").unwrap_or(8).max(1) as usize;
    let seed = env_number("HMAP_DIFF_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let per_round = 2_500u64.min(total.max(1));
    let started = Instant::now();
    let bigtable = std::env::var("HMAP_FILTER_DIFF_BACKEND").as_deref() == Ok("bigtable");
    println!("filter differential: seed {seed}, {total} reads, {workers} rounds at a time");
    let rounds = total.div_ceil(per_round);
    let outcomes: Vec<RoundOutcome> = futures_util::stream::iter(0..rounds)
        .map(|n| {
            let reads = per_round.min(total - n * per_round);
            round(&*hbase, seed, n, reads, bigtable)
        })
        .buffered(workers)
        .collect()
        .await;
    let done: u64 = outcomes.iter().map(|o| o.reads).sum();
    let refused: u64 = outcomes.iter().map(|o| o.refused).sum();
    let all: Vec<&String> = outcomes.iter().flat_map(|o| &o.differences).collect();
    let differences = all.len();
    let mut report = String::new();
    for (i, difference) in all.iter().take(20).enumerate() {
        let _ = writeln!(report, "difference {}: {difference}", i + 1);
    }
    println!(
        "filter differential: seed {seed}, {done} reads in {:.1} s ({refused} not compared: refused by the \
         backend or reversed on Bigtable's emulator), {differences} differences",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(
        differences, 0,
        "seed {seed}: {differences} of {done} reads differ (the first 20 below; each with its round's seed, \
         rerun with HMAP_DIFF_SEED=<that seed> and HMAP_FILTER_DIFF_OPS=2500):\n{report}"
    );
}
