use std::collections::BTreeMap;

use hmap::HTable;

#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Species(String);

#[derive(HTable)]
#[hmap(family(name = "seen"))]
struct Zoo {
    #[hmap(key)]
    id: u32,
    // The keys are qualifiers: they need a codec too.
    #[hmap(dynamic)]
    seen: BTreeMap<Species, u32>,
}

fn main() {}
