//! The example apps' tables and relations as `hmap-cli` registers them (the
//! weibo and the shop/item designs of `examples/weibo.rs` and
//! `examples/shop_item.rs`): shared by the binary and its tests. An
//! application mounts `hmap_cli::Cli` in a binary of its own the same way.
//!
//! The table structs are copies of the examples' (about fifty lines), so
//! that this package depends on hmap alone, not on the examples' package
//! (`hmap-suite`): `tests/cli.rs` checks that each copy's schema and key
//! layout are the example's.
//!
//! ```sh
//! scripts/hbase/hbase start          # prints HMAP_THRIFT=127.0.0.1:9091
//! cargo run -p hmap-cli -- --thrift 127.0.0.1:9091 tables
//! cargo run -p hmap-cli -- --native "$HMAP_NATIVE" plan
//! cargo run -p hmap-cli -- --thrift1 127.0.0.1:9090 scan wb_post --prefix u0001 --limit 5
//! cargo run -p hmap-cli -- inspect wb_post 'u0001_9223370273074375807'
//! ```

use std::sync::Arc;

use hmap::relation::ManyToMany;
use hmap::store::Store;
use hmap_cli::Cli;

/// The weibo example's tables (`examples/weibo.rs`).
pub mod weibo {
    use std::collections::BTreeMap;

    use hmap::{HTable, Versioned};

    /// A user and whom they follow and who follows them.
    #[derive(HTable, Debug, Clone, PartialEq, serde::Serialize)]
    #[hmap(
        table = "wb_user",
        family(name = "i"),
        family(name = "follow"),
        family(name = "fans")
    )]
    pub struct User {
        #[hmap(key)]
        pub uid: String,
        #[hmap(family = "i", column = "n")]
        pub name: String,
        /// How many posts the user wrote: an atomic counter.
        #[hmap(family = "i", column = "pc", counter)]
        pub posts: i64,
        /// `follow:<uid>=name`
        #[hmap(family = "follow", dynamic, relation)]
        pub follows: BTreeMap<String, String>,
        /// `fans:<uid>=name`
        #[hmap(family = "fans", dynamic, relation)]
        pub fans: BTreeMap<String, String>,
    }

    /// A post, keyed `<uid>_<Long.MAX_VALUE - millis>`: newest first.
    #[derive(HTable, Debug, Clone, PartialEq, serde::Serialize)]
    #[hmap(table = "wb_post", text_key, family(name = "p"))]
    pub struct Post {
        #[hmap(key)]
        pub uid: String,
        /// Milliseconds, stored as `Long.MAX_VALUE - millis`: newest first.
        #[hmap(key, reverse_ts)]
        pub at: i64,
        #[hmap(column = "c")]
        pub content: String,
    }

    /// A user's home timeline: a version per post of the people followed.
    #[derive(HTable, Debug, Clone, PartialEq, serde::Serialize)]
    #[hmap(table = "wb_inbox", family(name = "cf", versions = 1000))]
    pub struct Inbox {
        #[hmap(key)]
        pub uid: String,
        /// One version per post of the people followed: its rowkey.
        #[hmap(versions)]
        pub sq: Vec<Versioned<String>>,
    }
}

/// The shop/item example's tables (`examples/shop_item.rs`).
pub mod shop_item {
    use std::collections::BTreeMap;

    use chrono::NaiveDate;
    use hmap::HTable;

    /// A shop and its items.
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

    /// An item and the shops that sell it.
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
}

/// The CLI with the example apps' tables and relations.
pub fn cli() -> Cli {
    Cli::new("hmap-cli")
        .table::<weibo::User>()
        .table::<weibo::Post>()
        .table::<weibo::Inbox>()
        .table::<shop_item::Shop>()
        .table::<shop_item::Item>()
        .relation("follows", |store: Arc<dyn Store>| {
            ManyToMany::<weibo::User, weibo::User, _>::new(store, "follow", "fans")
                .with_labels(|u: &weibo::User| u.name.clone(), |u: &weibo::User| u.name.clone())
        })
        .relation("shop_items", |store: Arc<dyn Store>| {
            ManyToMany::<shop_item::Shop, shop_item::Item, _>::new(store, "item", "shop")
        })
}
