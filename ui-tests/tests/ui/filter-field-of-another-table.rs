// A filter on one table's fields cannot filter another table's rows.
use hmap::store::MemoryStore;
use hmap::{HTable, Query, Table};

#[derive(HTable)]
#[hmap(table = "order", family(name = "o"))]
struct Order {
    #[hmap(key)]
    id: u64,
    status: String,
}

#[derive(HTable)]
#[hmap(table = "user", family(name = "u"))]
struct User {
    #[hmap(key)]
    id: u64,
    name: String,
}

async fn read(users: &Table<User, MemoryStore>) -> hmap::Result<()> {
    users.scan(Query::all().filter(Order::STATUS.equals("paid"))).await?;
    let _both = User::NAME.equals("Ann").and(Order::STATUS.equals("paid"));
    Ok(())
}

fn main() {}
