use std::collections::BTreeMap;

use hmap::HTable;

#[derive(HTable)]
#[hmap(family(name = "f"), family(name = "fans"))]
struct User {
    #[hmap(key)]
    id: String,
    #[hmap(family = "fans", relation)]
    fans: BTreeMap<String, String>,
}

fn main() {}
