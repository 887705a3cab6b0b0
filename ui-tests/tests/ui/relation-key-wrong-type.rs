// A relation helper's key of the wrong type: one error, as at `get`, not
// a copy at the call and another at the `.await`.
use std::collections::BTreeMap;
use std::sync::Arc;

use hmap::HTable;
use hmap::relation::ManyToMany;
use hmap::store::MemoryStore;

#[derive(HTable)]
#[hmap(table = "shop", family(name = "i"), family(name = "item"))]
struct Shop {
    #[hmap(key)]
    id: u64,
    #[hmap(family = "i")]
    name: String,
    #[hmap(family = "item", dynamic, relation)]
    items: BTreeMap<u64, String>,
}

#[derive(HTable)]
#[hmap(table = "item", family(name = "i"), family(name = "shop"))]
struct Item {
    #[hmap(key)]
    id: u64,
    #[hmap(family = "i")]
    name: String,
    #[hmap(family = "shop", dynamic, relation)]
    shops: BTreeMap<u64, String>,
}

async fn link(relation: &ManyToMany<Shop, Item, Arc<MemoryStore>>) -> hmap::Result<()> {
    relation.link("shop-1", 7u64).await?;
    Ok(())
}

fn main() {}
