//! The org chart of the seed article: one table, rowkeys `0_<id>` for
//! top-level departments and `1_<id>` for the others, the parent named on
//! the child, the children listed on the parent.
//!
//! Run with `cargo run --example org_chart`.

use std::io::Write;
use std::sync::Arc;

use hmap::blocking::relation::Tree;
use hmap::relation::DeleteMode;
use hmap::store::Store;
use hmap_suite::ExampleResult;

fn print_tree(org: &Tree<Arc<dyn Store>>, id: &str, depth: usize, out: &mut dyn Write) -> ExampleResult {
    let node = org.get(id)?.ok_or("missing node")?;
    writeln!(out, "{}{} {}", "  ".repeat(depth + 1), node.id, node.name)?;
    for child in org.children(id)? {
        print_tree(org, &child.id, depth + 1, out)?;
    }
    Ok(())
}

fn print_all(org: &Tree<Arc<dyn Store>>, out: &mut dyn Write) -> ExampleResult {
    for top in org.top_level()? {
        print_tree(org, &top.id, 0, out)?;
    }
    Ok(())
}

pub fn run(store: Arc<dyn Store>, out: &mut dyn Write) -> ExampleResult {
    let org = Tree::new(store, "org");
    if org.top_level().is_err() {
        org.create()?;
    }
    for (id, name, parent) in [
        ("001", "CEO", None),
        ("002", "Development", Some("001")),
        ("003", "Development 1", Some("002")),
        ("004", "Development 2", Some("002")),
        ("005", "Marketing", Some("001")),
        ("006", "Marketing 1", Some("005")),
        ("007", "Marketing 2", Some("005")),
    ] {
        org.insert(id, name, parent)?;
    }
    writeln!(out, "the org chart:")?;
    print_all(&org, out)?;

    let path: Vec<String> = org.path_to_root("004")?.into_iter().map(|n| n.name).collect();
    writeln!(out, "from 004 to the top: {}", path.join(" <- "))?;

    org.move_node("004", Some("005"))?;
    writeln!(out, "moved 004 under Marketing; made Marketing a top-level department:")?;
    org.move_node("005", None)?;
    print_all(&org, out)?;

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
