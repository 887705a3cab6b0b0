use std::collections::BTreeMap;

use hmap::HTable;

#[derive(HTable)]
#[hmap(family(name = "f"))]
struct User {
    #[hmap(key)]
    id: String,
    name: String,
    #[hmap(dynamic)]
    fans: BTreeMap<String, String>,
}

fn main() {}
