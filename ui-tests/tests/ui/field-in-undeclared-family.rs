use hmap::HTable;

#[derive(HTable)]
#[hmap(family(name = "info"))]
struct User {
    #[hmap(key)]
    id: String,
    #[hmap(family = "infos")]
    name: String,
}

fn main() {}
