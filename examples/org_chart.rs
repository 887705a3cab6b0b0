//! The org chart of the seed article, in the seed's own layout: one table,
//! rowkeys `0_<id>` for top-level departments and `1_<id>` for the others,
//! `cf1:name` and the parent's rowkey in `cf1:pid` on the child, the
//! children listed on the parent in `cf2:<child id>=<child name>`. The
//! department is a type of ours, with a field of its own (a head count);
//! the tree keeps the pointer and the lists.
//!
//! Run with `cargo run --example org_chart`.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use hmap::HTable;
use hmap::blocking::relation::TreeOf;
use hmap::relation::DeleteMode;
use hmap::store::Store;
use hmap_suite::ExampleResult;

/// A department: `#[hmap(key, level)]` is the `0`/`1` of the rowkey,
/// `#[hmap(parent)]` the parent pointer, `#[hmap(dynamic, children)]` the
/// list of children.
#[derive(HTable, Debug, Clone)]
#[hmap(table = "org", text_key, family(name = "cf1"), family(name = "cf2"))]
pub struct Dept {
    #[hmap(key, level)]
    pub level: u8,
    #[hmap(key)]
    pub id: String,
    #[hmap(family = "cf1")]
    pub name: String,
    #[hmap(family = "cf1")]
    pub head_count: u32,
    #[hmap(family = "cf1", parent)]
    pub pid: Option<String>,
    #[hmap(family = "cf2", dynamic, children)]
    pub children: BTreeMap<String, String>,
}

type Org = TreeOf<Dept, Arc<dyn Store>>;

fn print_tree(org: &Org, node: &Dept, depth: usize, out: &mut dyn Write) -> ExampleResult {
    writeln!(out, "{}{} {}", "  ".repeat(depth + 1), node.id, node.name)?;
    for child in org.children(&node.id)? {
        print_tree(org, &child, depth + 1, out)?;
    }
    Ok(())
}

fn print_all(org: &Org, out: &mut dyn Write) -> ExampleResult {
    for top in org.top_level()? {
        print_tree(org, &top, 0, out)?;
    }
    Ok(())
}

pub fn run(store: Arc<dyn Store>, out: &mut dyn Write) -> ExampleResult {
    let org: Org = TreeOf::new(store, |d: &Dept| d.name.clone());
    if org.top_level().is_err() {
        org.create()?;
    }
    for (id, name, head_count, parent) in [
        ("001", "CEO", 1, None),
        ("002", "Development", 2, Some("001")),
        ("003", "Development 1", 12, Some("002")),
        ("004", "Development 2", 9, Some("002")),
        ("005", "Marketing", 3, Some("001")),
        ("006", "Marketing 1", 7, Some("005")),
        ("007", "Marketing 2", 5, Some("005")),
    ] {
        let dept = Dept {
            level: 0, // the tree sets the level and the pointer
            id: id.into(),
            name: name.into(),
            head_count,
            pid: None,
            children: BTreeMap::new(),
        };
        org.insert(&dept, parent.map(String::from).as_ref())?;
    }
    writeln!(out, "the org chart:")?;
    print_all(&org, out)?;
    let ceo = org.get("001")?.ok_or("no 001")?;
    writeln!(out, "the CEO's row lists {:?} in cf2", ceo.children)?;
    let dev = org.get("003")?.ok_or("no 003")?;
    writeln!(
        out,
        "003 is row {}_{} with cf1:pid={}",
        dev.level,
        dev.id,
        dev.pid.as_deref().unwrap_or("")
    )?;

    let path: Vec<String> = org.path_to_root("004")?.into_iter().map(|n| n.name).collect();
    writeln!(out, "from 004 to the top: {}", path.join(" <- "))?;

    org.move_node("004", Some(&"005".into()))?;
    writeln!(out, "moved 004 under Marketing; made Marketing a top-level department:")?;
    org.move_node("005", None)?;
    print_all(&org, out)?;
    let moved = org.get("006")?.ok_or("no 006")?;
    writeln!(out, "006 now points at {}", moved.pid.as_deref().unwrap_or(""))?;

    match org.delete("002", DeleteMode::Refuse) {
        Err(e) => writeln!(out, "refused: {e}")?,
        Ok(()) => writeln!(out, "deleted 002")?,
    }
    org.delete("002", DeleteMode::Subtree)?;
    writeln!(out, "deleted Development with its subtree:")?;
    print_all(&org, out)?;
    writeln!(out, "org chart: {}", org.verify()?)?;
    Ok(())
}

#[allow(dead_code)] // the tests include this file and call `run`
fn main() {
    hmap_suite::run_example(run);
}
