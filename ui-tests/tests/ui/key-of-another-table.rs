// The key of another table: a `Post`'s key has a `u64` where an `Order`'s has a `u32`.
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

#[derive(HTable)]
#[hmap(table = "post", family(name = "p"))]
struct Post {
    #[hmap(key)]
    user: String,
    #[hmap(key)]
    seq: u64,
    text: String,
}

async fn read(orders: &Table<Order, MemoryStore>, posts: &Table<Post, MemoryStore>) -> hmap::Result<()> {
    let post_key: (String, u64) = ("c1".into(), 7);
    posts.get(&post_key).await?;
    orders.get(&post_key).await?;
    Ok(())
}

fn main() {}
