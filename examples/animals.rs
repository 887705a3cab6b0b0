//! The animal taxonomy of the seed article: one table, a row per animal, its
//! name, and two families listing ids: `parent:<id>=name` and
//! `child:<id>=name`.
//!
//! Run with `cargo run --example animals`.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use hmap::blocking::Table;
use hmap::store::Store;
use hmap::{HTable, Query};
use hmap_suite::ExampleResult;

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(
    table = "animal",
    family(name = "name"),
    family(name = "parent"),
    family(name = "child")
)]
pub struct Animal {
    #[hmap(key)]
    pub id: u32,
    #[hmap(family = "name", column = "")]
    pub name: String,
    #[hmap(family = "parent", dynamic(key = "text"))]
    pub parents: BTreeMap<u32, String>,
    #[hmap(family = "child", dynamic(key = "text"))]
    pub children: BTreeMap<u32, String>,
}

pub fn run(store: Arc<dyn Store>, out: &mut dyn Write) -> ExampleResult {
    let animals = Table::<Animal, _>::new(store);
    animals.create_if_missing()?;
    // id, name, parent (the parents' chain is copied down, as in the seed).
    let taxonomy = [
        (1, "animal", None),
        (2, "pig", Some(1)),
        (3, "cat", Some(1)),
        (4, "monkey", Some(1)),
        (5, "dog", Some(1)),
        (6, "red dog", Some(5)),
        (7, "black dog", Some(5)),
        (8, "tiger", Some(1)),
        (9, "tiger of the northeast", Some(8)),
    ];
    let name_of = |id: u32| taxonomy.iter().find(|t| t.0 == id).map_or("?", |t| t.1);
    for (id, name, parent) in taxonomy {
        let mut parents = BTreeMap::new();
        let mut up = parent;
        while let Some(p) = up {
            parents.insert(p, name_of(p).to_string());
            up = taxonomy.iter().find(|t| t.0 == p).and_then(|t| t.2);
        }
        let children = taxonomy
            .iter()
            .filter(|t| t.2 == Some(id))
            .map(|t| (t.0, t.1.to_string()))
            .collect();
        animals.put(&Animal {
            id,
            name: name.into(),
            parents,
            children,
        })?;
    }
    for row in animals.scan(Query::all())? {
        let a = row?;
        let parents: Vec<&str> = a.parents.values().map(String::as_str).collect();
        let children: Vec<&str> = a.children.values().map(String::as_str).collect();
        writeln!(
            out,
            "{:>2} {:<24} parents: [{}]  children: [{}]",
            a.id,
            a.name,
            parents.join(", "),
            children.join(", ")
        )?;
    }
    let dog = animals.get(5u32)?.ok_or("no dog")?;
    writeln!(
        out,
        "what kinds of dog are there? {:?}",
        dog.children.values().collect::<Vec<_>>()
    )?;
    Ok(())
}

#[allow(dead_code)] // the tests include this file and call `run`
fn main() {
    hmap_suite::run_example(run);
}
