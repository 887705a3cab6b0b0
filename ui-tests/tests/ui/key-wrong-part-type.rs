// A key part of the wrong type: the day is a `u32`, not a `&str`.
use hmap::store::MemoryStore;
use hmap::{HTable, Table};

#[derive(HTable)]
#[hmap(table = "order", family(name = "o"))]
struct Order {
    #[hmap(key)]
    customer: String,
    #[hmap(key)]
    day: u32,
    total: u64,
}

async fn read(orders: &Table<Order, MemoryStore>) -> hmap::Result<()> {
    orders.get(("c1", "monday")).await?;
    Ok(())
}

fn main() {}
