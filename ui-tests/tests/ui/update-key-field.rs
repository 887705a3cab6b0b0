// A misspelt field, and a key field (keys are never updated in place), have
// no typed handle: `update` with them does not compile.
use hmap::store::MemoryStore;
use hmap::{HTable, Table};

#[derive(HTable)]
#[hmap(table = "user", family(name = "i"))]
struct User {
    #[hmap(key)]
    id: String,
    nickname: String,
}

async fn rename(users: &Table<User, MemoryStore>, user: &User) -> hmap::Result<()> {
    users.update(user, &[User::NICKNAM]).await?;
    users.update(user, &[User::ID]).await
}

fn main() {}
