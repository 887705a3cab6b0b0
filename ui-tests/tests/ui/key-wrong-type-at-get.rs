// A key of the wrong type does not compile: the table's key is a `String`
// (a `&str` stands for it), a pair is not a one-part key, and a composite
// key takes its parts in order.
use hmap::store::MemoryStore;
use hmap::{HTable, Table};

#[derive(HTable)]
#[hmap(table = "user", family(name = "i"))]
struct User {
    #[hmap(key)]
    id: String,
    name: String,
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

async fn reads(users: &Table<User, MemoryStore>, posts: &Table<Post, MemoryStore>) -> hmap::Result<()> {
    users.get("u1").await?;
    users.get(5u32).await?;
    users.delete(("u1", 7u64)).await?;
    posts.get(("u1", 7)).await?;
    posts.get((7u64, "u1")).await?;
    Ok(())
}

fn main() {}
