use hmap::HTable;

#[derive(HTable)]
#[hmap(family(name = "f"))]
struct Account {
    #[hmap(key, skip)]
    id: String,
    balance: i64,
}

fn main() {}
