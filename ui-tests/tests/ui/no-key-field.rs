use hmap::HTable;

#[derive(HTable)]
#[hmap(family(name = "f"))]
struct Note {
    body: String,
}

fn main() {}
