use hmap::HTable;

#[derive(HTable)]
#[hmap(family(name = "f"))]
struct Post {
    #[hmap(key, reverse_ts)]
    uid: String,
    body: String,
}

fn main() {}
