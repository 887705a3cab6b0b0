//! The purchase records of the seed article: rowkey
//! `<user_id><Long.MAX_VALUE - millis><product_id>`, so one user's purchases
//! are one prefix scan, newest first, and a time range is a range of keys.
//!
//! Run with `cargo run --example purchases`.

use std::io::Write;
use std::sync::Arc;

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use hmap::blocking::Table;
use hmap::store::Store;
use hmap::{HTable, Query};
use hmap_suite::{ExampleResult, Rng};

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "sale", family(name = "n", compression = "snappy"))]
pub struct Sale {
    #[hmap(key)]
    pub user_id: String,
    #[hmap(key, reverse_ts)]
    pub time: DateTime<Utc>,
    #[hmap(key)]
    pub product_id: u64,
    #[hmap(column = "p")]
    pub product: String,
    #[hmap(column = "q")]
    pub quantity: u32,
}

fn show(s: &Sale) -> String {
    format!(
        "{} {} x{}",
        s.time.to_rfc3339_opts(SecondsFormat::Secs, true),
        s.product,
        s.quantity
    )
}

pub fn run(store: Arc<dyn Store>, out: &mut dyn Write) -> ExampleResult {
    let sales = Table::<Sale, _>::new(store);
    sales.create_if_missing()?;
    writeln!(out, "{}", Sale::table_schema())?;
    let start: DateTime<Utc> = "2026-03-01T09:00:00Z".parse()?;
    let products = ["tea", "rice", "soap", "pen", "umbrella", "noodles"];
    let mut rng = Rng::new(7);
    let mut rows = Vec::new();
    for n in 0..200 {
        let user = format!("user{}", rng.below(5));
        let product = rng.below(products.len() as u64);
        rows.push(Sale {
            user_id: user,
            time: start + Duration::hours(n * 5),
            product_id: product,
            product: products[product as usize].into(),
            quantity: 1 + rng.below(3) as u32,
        });
    }
    sales.put_many(&rows)?;
    writeln!(out, "stored {} purchases of 5 users", rows.len())?;

    writeln!(out, "user3's five latest purchases:")?;
    for s in sales.scan(Query::prefix("user3").limit(5))? {
        writeln!(out, "  {}", show(&s?))?;
    }
    let from: DateTime<Utc> = "2026-03-10T00:00:00Z".parse()?;
    let to: DateTime<Utc> = "2026-03-17T00:00:00Z".parse()?;
    writeln!(
        out,
        "user3's purchases from {} to {}, newest first:",
        from.date_naive(),
        to.date_naive()
    )?;
    for s in sales.scan(Query::prefix("user3").between(from, to))? {
        writeln!(out, "  {}", show(&s?))?;
    }
    writeln!(out, "the same, oldest first:")?;
    for s in sales.scan(Query::prefix("user3").between(from, to).reversed())? {
        writeln!(out, "  {}", show(&s?))?;
    }
    let key = sales.row_key(("user3", start, 1u64))?;
    writeln!(out, "a rowkey, as the shell shows it: {}", hmap::key::Printable(&key))?;
    writeln!(out, "and read back: {}", sales.inspect_key(&key)?)?;
    Ok(())
}

#[allow(dead_code)] // the tests include this file and call `run`
fn main() {
    hmap_suite::run_example(run);
}
