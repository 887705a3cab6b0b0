use hmap::HTable;

#[derive(HTable)]
#[hmap(tabel = "user", family(name = "f"))]
struct User {
    #[hmap(key)]
    id: String,
    name: String,
}

fn main() {}
