use hmap::HTable;

#[derive(HTable)]
#[hmap(salt(buckets = 300, by = [nobody]), family(name = "f", versions = 0))]
struct Everything {
    #[hmap(key, reversed)]
    id: u64,
    #[hmap(family = "g")]
    name: String,
}

fn main() {}
