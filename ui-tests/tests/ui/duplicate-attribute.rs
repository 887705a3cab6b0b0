use hmap::HTable;

#[derive(HTable)]
#[hmap(table = "a", table = "b", family(name = "f"))]
struct Account {
    #[hmap(key)]
    id: String,
    balance: i64,
}

fn main() {}
