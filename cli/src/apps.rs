//! The example apps' tables and relations as `hmap-cli` registers them (the
//! weibo and the shop/item designs): shared by the binary and its tests. An
//! application mounts `hmap_cli::Cli` in a binary of its own the same way.
//!
//! ```sh
//! scripts/hbase/hbase start          # prints HMAP_THRIFT=127.0.0.1:9091
//! cargo run -p hmap-cli -- --thrift 127.0.0.1:9091 tables
//! cargo run -p hmap-cli -- --thrift 127.0.0.1:9091 plan
//! cargo run -p hmap-cli -- --thrift 127.0.0.1:9091 scan wb_post --prefix u0001 --limit 5
//! cargo run -p hmap-cli -- inspect wb_post 'u0001_9223370273074375807'
//! ```

use std::sync::Arc;

use hmap::relation::ManyToMany;
use hmap::store::Store;
use hmap_cli::Cli;

/// The shop/item example app, for its table types.
#[allow(dead_code)]
#[path = "../../examples/shop_item.rs"]
pub mod shop_item;
/// The weibo example app, for its table types.
#[allow(dead_code)]
#[path = "../../examples/weibo.rs"]
pub mod weibo;

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
