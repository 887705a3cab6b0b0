use hmap::HTable;

#[derive(HTable)]
#[hmap(family(name = "f"))]
struct Account {
    #[hmap(key)]
    id: String,
    #[hmap(version)]
    version: u64,
    #[hmap(version, column = "v2")]
    revision: u64,
}

fn main() {}
