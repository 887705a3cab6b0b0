use std::collections::BTreeMap;

use hmap::HTable;

#[derive(HTable)]
#[hmap(family(name = "child"))]
struct Animal {
    #[hmap(key)]
    id: u32,
    #[hmap(dynamic(qualifier = "text"))]
    children: BTreeMap<u32, String>,
}

fn main() {}
