//! The animal taxonomy of the seed article: one table, a row per animal
//! keyed by its id, its name in `name:`, and its children listed as
//! `child:<id>=name` (`child:7=red dog`). The tree keeps the children's
//! lists and a pointer to the parent (`parent:` holds the parent's id);
//! each animal's ancestors are its path to the root.
//!
//! Run with `cargo run --example animals`.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use hmap::blocking::Table;
use hmap::blocking::relation::TreeOf;
use hmap::store::Store;
use hmap::{HTable, Query};
use hmap_suite::ExampleResult;

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(
    table = "animal",
    text_key,
    family(name = "name"),
    family(name = "parent"),
    family(name = "child")
)]
pub struct Animal {
    #[hmap(key, unpadded)]
    pub id: u32,
    #[hmap(family = "name", column = "")]
    pub name: String,
    #[hmap(family = "parent", column = "", parent)]
    pub parent: Option<String>,
    #[hmap(family = "child", dynamic(key = "text"), children)]
    pub children: BTreeMap<u32, String>,
}

pub fn run(store: Arc<dyn Store>, out: &mut dyn Write) -> ExampleResult {
    let table = Table::<Animal, _>::new(Arc::clone(&store));
    table.create_if_missing()?;
    let animals = TreeOf::new(store, |a: &Animal| a.name.clone());
    // id, name, parent: parents first.
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
    for (id, name, parent) in taxonomy {
        let animal = Animal {
            id,
            name: name.into(),
            parent: None,
            children: BTreeMap::new(),
        };
        animals.insert(&animal, parent.as_ref())?;
    }
    for row in table.scan(Query::all())? {
        let a = row?;
        let mut ancestors: Vec<String> = animals
            .path_to_root(a.id)?
            .into_iter()
            .skip(1)
            .map(|p| p.name)
            .collect();
        ancestors.reverse();
        let children: Vec<&str> = a.children.values().map(String::as_str).collect();
        writeln!(
            out,
            "{:>2} {:<24} parents: [{}]  children: [{}]",
            a.id,
            a.name,
            ancestors.join(", "),
            children.join(", ")
        )?;
    }
    let dog = animals.get(5)?.ok_or("no dog")?;
    writeln!(
        out,
        "what kinds of dog are there? {:?}",
        dog.children.values().collect::<Vec<_>>()
    )?;
    writeln!(out, "taxonomy: {}", animals.verify()?)?;
    Ok(())
}

#[allow(dead_code)] // the tests include this file and call `run`
fn main() {
    hmap_suite::run_example(run);
}
