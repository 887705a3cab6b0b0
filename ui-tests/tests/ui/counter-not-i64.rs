use hmap::HTable;

#[derive(HTable)]
#[hmap(family(name = "f"))]
struct Page {
    #[hmap(key)]
    url: String,
    #[hmap(counter)]
    views: u32,
}

fn main() {}
