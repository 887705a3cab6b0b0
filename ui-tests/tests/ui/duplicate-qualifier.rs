use hmap::HTable;

#[derive(HTable)]
#[hmap(family(name = "f"))]
struct User {
    #[hmap(key)]
    id: String,
    #[hmap(column = "n")]
    name: String,
    #[hmap(column = "n")]
    nickname: String,
}

fn main() {}
