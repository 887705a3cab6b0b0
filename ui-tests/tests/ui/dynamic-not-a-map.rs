use hmap::HTable;

#[derive(HTable)]
#[hmap(family(name = "f"), family(name = "fans"))]
struct User {
    #[hmap(key)]
    id: String,
    #[hmap(family = "fans", dynamic)]
    fans: Vec<String>,
}

fn main() {}
