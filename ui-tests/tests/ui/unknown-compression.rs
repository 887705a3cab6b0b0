use hmap::HTable;

#[derive(HTable)]
#[hmap(family(name = "f", compression = "lzma"))]
struct Session {
    #[hmap(key)]
    id: String,
    user: String,
}

fn main() {}
