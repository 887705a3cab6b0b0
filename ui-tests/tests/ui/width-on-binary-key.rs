use hmap::HTable;

#[derive(HTable)]
#[hmap(family(name = "f"))]
struct Person {
    #[hmap(key, width = 3)]
    pid: u32,
    name: String,
}

fn main() {}
