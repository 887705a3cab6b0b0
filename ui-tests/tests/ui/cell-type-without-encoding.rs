use hmap::HTable;

struct Address {
    city: String,
}

#[derive(HTable)]
#[hmap(family(name = "f"))]
struct User {
    #[hmap(key)]
    id: String,
    address: Address,
}

fn main() {}
