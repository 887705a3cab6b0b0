//! Persons and roles, as the seed article designs them: two tables, each
//! listing the other, kept in sync (a person has many roles, a role many
//! persons), names copied into the lists so that a list reads without joins.
//!
//! | table | rowkey | `cf1` | `cf2` |
//! |---|---|---|---|
//! | `person` | pid (`001`) | `name`, `age` | `<rid>=role name` |
//! | `role` | rid (`100`) | `name` | `<pid>=person name` |
//!
//! Run with `cargo run --example person_role`.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use hmap::HTable;
use hmap::blocking::relation::ManyToMany;
use hmap::store::Store;
use hmap_suite::ExampleResult;

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "person", family(name = "cf1"), family(name = "cf2"))]
pub struct Person {
    #[hmap(key)]
    pub pid: String,
    #[hmap(family = "cf1")]
    pub name: String,
    #[hmap(family = "cf1")]
    pub age: u32,
    #[hmap(family = "cf2", dynamic, relation)]
    pub roles: BTreeMap<String, String>,
}

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "role", family(name = "cf1"), family(name = "cf2"))]
pub struct Role {
    #[hmap(key)]
    pub rid: String,
    #[hmap(family = "cf1")]
    pub name: String,
    #[hmap(family = "cf2", dynamic, relation)]
    pub persons: BTreeMap<String, String>,
}

fn show(rel: &ManyToMany<Person, Role, Arc<dyn Store>>, out: &mut dyn Write) -> ExampleResult {
    for pid in ["001", "002", "003"] {
        if let Some(p) = rel.left().get(pid)? {
            let roles: Vec<&str> = p.roles.values().map(String::as_str).collect();
            writeln!(out, "  person {pid} {}: {}", p.name, roles.join(", "))?;
        }
    }
    for rid in ["100", "200", "300"] {
        if let Some(r) = rel.right().get(rid)? {
            let persons: Vec<&str> = r.persons.values().map(String::as_str).collect();
            let persons = if persons.is_empty() {
                "(none)".to_string()
            } else {
                persons.join(", ")
            };
            writeln!(out, "  role {rid} {}: {persons}", r.name)?;
        }
    }
    Ok(())
}

pub fn run(store: Arc<dyn Store>, out: &mut dyn Write) -> ExampleResult {
    let rel =
        ManyToMany::<Person, Role, _>::new(store, "cf2", "cf2").with_labels(|p| p.name.clone(), |r| r.name.clone());
    rel.left().create_if_missing()?;
    rel.right().create_if_missing()?;
    for (pid, name, age) in [("001", "Xiaohei", 18), ("002", "Xiaohuang", 19), ("003", "Xiaobai", 20)] {
        rel.left().put(&Person {
            pid: pid.into(),
            name: name.into(),
            age,
            roles: BTreeMap::new(),
        })?;
    }
    for (rid, name) in [("100", "monitor"), ("200", "soldier"), ("300", "cook")] {
        rel.right().put(&Role {
            rid: rid.into(),
            name: name.into(),
            persons: BTreeMap::new(),
        })?;
    }
    for (pid, rid) in [
        ("001", "100"),
        ("001", "200"),
        ("002", "200"),
        ("003", "300"),
        ("003", "200"),
    ] {
        rel.link(pid, rid)?;
    }
    writeln!(out, "after linking:")?;
    show(&rel, out)?;

    // A role renamed: its name is copied into each person's list.
    let mut soldier = rel.right().get("200")?.ok_or("no role 200")?;
    soldier.name = "private".into();
    rel.right().update(&soldier, [Role::NAME])?;
    rel.relabel_right("200")?;
    rel.unlink("003", "300")?;
    rel.delete_left("002")?;
    writeln!(
        out,
        "after renaming role 200, unlinking 003 from 300 and deleting person 002:"
    )?;
    show(&rel, out)?;
    writeln!(out, "person/role lists: {}", rel.verify()?)?;
    Ok(())
}

#[allow(dead_code)] // the tests include this file and call `run`
fn main() {
    hmap_suite::run_example(run);
}
