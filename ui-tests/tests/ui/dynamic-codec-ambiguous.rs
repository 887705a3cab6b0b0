use std::collections::BTreeMap;

use hmap::HTable;

#[derive(HTable)]
#[hmap(family(name = "name"), family(name = "child"))]
struct Animal {
    #[hmap(key)]
    id: u32,
    #[hmap(family = "name", column = "")]
    name: String,
    // `text` for the ids (the qualifiers) or for the names (the values)?
    #[hmap(family = "child", dynamic, text)]
    children: BTreeMap<u32, String>,
}

fn main() {}
