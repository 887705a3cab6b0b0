use hmap::HTable;

#[derive(HTable)]
#[hmap(family(name = "f"))]
struct User {
    #[hmap(kye)]
    id: String,
    name: String,
}

fn main() {}
