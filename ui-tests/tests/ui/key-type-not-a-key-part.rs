use hmap::HTable;

#[derive(HTable)]
#[hmap(family(name = "f"))]
struct User {
    #[hmap(key)]
    tags: Vec<String>,
    name: String,
}

fn main() {}
