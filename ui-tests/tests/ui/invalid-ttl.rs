use hmap::HTable;

#[derive(HTable)]
#[hmap(family(name = "f", ttl = "30 days"))]
struct Session {
    #[hmap(key)]
    id: String,
    user: String,
}

fn main() {}
