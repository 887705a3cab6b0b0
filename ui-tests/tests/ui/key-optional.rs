use hmap::HTable;

#[derive(HTable)]
#[hmap(family(name = "f"))]
struct Visit {
    #[hmap(key)]
    user: Option<String>,
    page: String,
}

fn main() {}
