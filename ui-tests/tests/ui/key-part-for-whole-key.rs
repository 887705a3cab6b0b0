// One value for a key of two parts: the parts go in a tuple.
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
    orders.get(42).await?;
    Ok(())
}

fn main() {}
