//! Shops and items, as the seed article designs them: two tables, each
//! listing the other in a family of its own.
//!
//! | table | rowkey | `info` | list |
//! |---|---|---|---|
//! | `shop` | shop id | `name`, `address`, `regdate` | `item:<item_id>=type` |
//! | `item` | item id | `name`, `price`, `details`, `title` | `shop:<shop_id>=type` |
//!
//! A shop's items with their details are then one get and one batched get:
//! no join. Run with `cargo run --example shop_item`.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use chrono::NaiveDate;
use hmap::blocking::relation::ManyToMany;
use hmap::store::Store;
use hmap::{HTable, Query};
use hmap_suite::ExampleResult;

#[derive(HTable, Debug, Clone, PartialEq, serde::Serialize)]
#[hmap(table = "shop", family(name = "info"), family(name = "item"))]
pub struct Shop {
    #[hmap(key)]
    pub id: String,
    #[hmap(family = "info")]
    pub name: String,
    #[hmap(family = "info")]
    pub address: String,
    #[hmap(family = "info")]
    pub regdate: NaiveDate,
    /// `item:<item_id>=type`
    #[hmap(family = "item", dynamic, relation)]
    pub items: BTreeMap<String, String>,
}

#[derive(HTable, Debug, Clone, PartialEq, serde::Serialize)]
#[hmap(table = "item", family(name = "info"), family(name = "shop"))]
pub struct Item {
    #[hmap(key)]
    pub id: String,
    #[hmap(family = "info")]
    pub name: String,
    #[hmap(family = "info")]
    pub price: f64,
    #[hmap(family = "info")]
    pub details: Option<String>,
    #[hmap(family = "info")]
    pub title: String,
    /// `shop:<shop_id>=type`
    #[hmap(family = "shop", dynamic, relation)]
    pub shops: BTreeMap<String, String>,
}

fn shop(id: &str, name: &str, address: &str, registered: (i32, u32, u32)) -> Shop {
    Shop {
        id: id.into(),
        name: name.into(),
        address: address.into(),
        regdate: NaiveDate::from_ymd_opt(registered.0, registered.1, registered.2).unwrap_or_default(),
        items: BTreeMap::new(),
    }
}

fn item(id: &str, name: &str, price: f64, title: &str, details: Option<&str>) -> Item {
    Item {
        id: id.into(),
        name: name.into(),
        price,
        details: details.map(str::to_string),
        title: title.into(),
        shops: BTreeMap::new(),
    }
}

fn list_items(rel: &ManyToMany<Shop, Item, Arc<dyn Store>>, shop: &str, out: &mut dyn Write) -> ExampleResult {
    let s = rel.left().get(shop)?.ok_or("no such shop")?;
    writeln!(out, "{} ({}, since {}):", s.name, s.address, s.regdate)?;
    let items: BTreeMap<String, Item> = rel.load_rights(shop)?.into_iter().map(|i| (i.id.clone(), i)).collect();
    for (id, kind) in rel.rights_of(shop)? {
        match items.get(&id) {
            Some(i) => {
                let details = i.details.as_deref().unwrap_or("-");
                writeln!(
                    out,
                    "  {:<4} {:<14} {:>7.2}  {:<8} {}",
                    i.id, i.title, i.price, kind, details
                )?;
            }
            None => writeln!(out, "  {id:<4} (no longer stocked)")?,
        }
    }
    Ok(())
}

pub fn run(store: Arc<dyn Store>, out: &mut dyn Write) -> ExampleResult {
    let rel: ManyToMany<Shop, Item, Arc<dyn Store>> = ManyToMany::new(store, "item", "shop");
    rel.left().create_if_missing()?;
    rel.right().create_if_missing()?;

    rel.left().put_many(&[
        shop("s1", "Green Tea House", "Hangzhou", (2019, 3, 12)),
        shop("s2", "Corner Market", "Shanghai", (2021, 9, 1)),
    ])?;
    rel.right().put_many(&[
        item("i1", "longjing", 89.0, "Longjing tea", Some("spring harvest")),
        item("i2", "teapot", 45.5, "Clay teapot", None),
        item("i3", "mooncake", 12.0, "Mooncakes", Some("box of four")),
        item("i4", "umbrella", 30.0, "Umbrella", None),
    ])?;
    writeln!(out, "added 2 shops and 4 items")?;

    for (s, i, kind) in [
        ("s1", "i1", "own"),
        ("s1", "i2", "own"),
        ("s1", "i3", "consign"),
        ("s2", "i3", "own"),
        ("s2", "i4", "own"),
    ] {
        rel.link_with(s, i, kind)?;
        writeln!(out, "linked {s} -> {i} ({kind})")?;
    }
    list_items(&rel, "s1", out)?;
    list_items(&rel, "s2", out)?;

    let sellers: Vec<String> = rel
        .lefts_of("i3")?
        .into_iter()
        .map(|(s, kind)| format!("{s} ({kind})"))
        .collect();
    writeln!(out, "i3 is sold by: {}", sellers.join(", "))?;

    rel.unlink("s1", "i2")?;
    writeln!(out, "unlinked s1 -> i2")?;
    rel.delete_right("i3")?;
    writeln!(out, "deleted item i3 everywhere")?;
    list_items(&rel, "s1", out)?;
    list_items(&rel, "s2", out)?;

    let all: Vec<String> = rel
        .right()
        .scan(Query::all())?
        .map(|i| i.map(|i| i.id))
        .collect::<Result<_, _>>()?;
    writeln!(out, "items left: {}", all.join(", "))?;
    writeln!(out, "shop/item lists: {}", rel.verify()?)?;
    Ok(())
}

#[allow(dead_code)] // the tests include this file and call `run`
fn main() {
    hmap_suite::run_example(run);
}
