// A key of two parts given three.
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
    orders.get(("c1", 7u32, 2u32)).await?;
    Ok(())
}

fn main() {}
