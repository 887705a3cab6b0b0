use hmap::HTable;

#[derive(HTable)]
#[hmap(family(name = "a"), family(name = "b"))]
struct Note {
    #[hmap(key)]
    id: u64,
    body: String,
}

fn main() {}
