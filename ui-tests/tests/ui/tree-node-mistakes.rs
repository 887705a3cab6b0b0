use std::collections::BTreeMap;

use hmap::HTable;

// A parent pointer without a child list.
#[derive(HTable)]
#[hmap(table = "a", family(name = "f"))]
struct NoChildren {
    #[hmap(key)]
    id: String,
    #[hmap(parent)]
    pid: Option<String>,
}

// A parent pointer that is not an `Option<String>`, and `children` without `dynamic`.
#[derive(HTable)]
#[hmap(table = "b", family(name = "f"), family(name = "c"))]
struct WrongTypes {
    #[hmap(key)]
    id: String,
    #[hmap(family = "f", parent)]
    pid: String,
    #[hmap(family = "c", children)]
    kids: BTreeMap<String, String>,
}

// A level that is not first, and a child list keyed by another type than the id.
#[derive(HTable)]
#[hmap(table = "c", family(name = "f"), family(name = "c"))]
struct WrongKey {
    #[hmap(key)]
    id: String,
    #[hmap(key, level)]
    level: u8,
    #[hmap(family = "f", parent)]
    pid: Option<String>,
    #[hmap(family = "c", dynamic, children)]
    kids: BTreeMap<u32, String>,
}

// A child list whose keys are not the id's type.
#[derive(HTable)]
#[hmap(table = "d", family(name = "f"), family(name = "c"))]
struct WrongChildKeys {
    #[hmap(key)]
    id: String,
    #[hmap(family = "f", parent)]
    pid: Option<String>,
    #[hmap(family = "c", dynamic, children)]
    kids: BTreeMap<u32, String>,
}

fn main() {}
