//! Following on a real HBase: 1,000 many-to-many links (the weibo example's
//! follows, both sides kept) made one `link` per pair, against one
//! `link_many` call, on the same gateway in one run.
//!
//! Needs a gateway: `scripts/hbase/hbase start`, then
//! `HMAP_THRIFT=127.0.0.1:9091 cargo bench -p hmap-bench --bench links`.
//! Without `HMAP_THRIFT` it says so and measures nothing.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use hmap::HTable;
use hmap::blocking::Table;
use hmap::blocking::relation::ManyToMany;
use hmap::store::{ThriftConfig, ThriftStore};

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "user", family(name = "i"), family(name = "follow"), family(name = "fans"))]
struct User {
    #[hmap(key)]
    uid: String,
    #[hmap(family = "i", column = "n")]
    name: String,
    #[hmap(family = "follow", dynamic, relation)]
    follows: BTreeMap<String, String>,
    #[hmap(family = "fans", dynamic, relation)]
    fans: BTreeMap<String, String>,
}

const USERS: usize = 100;
const LINKS: usize = 1_000;

fn links(c: &mut Criterion) {
    let Ok(address) = std::env::var("HMAP_THRIFT") else {
        eprintln!("links: HMAP_THRIFT is not set; start HBase with scripts/hbase/hbase start");
        return;
    };
    let mut config = ThriftConfig::new(address);
    config.table_prefix = "hmap_bench_links__".into();
    let store = Arc::new(ThriftStore::with_config(config));
    let users = Table::<User, _>::new(Arc::clone(&store));
    if users.exists().unwrap() {
        users.drop().unwrap();
    }
    users.create().unwrap();
    for u in 0..USERS {
        let user = User {
            uid: format!("u{u:03}"),
            name: format!("user {u}"),
            follows: BTreeMap::new(),
            fans: BTreeMap::new(),
        };
        users.put(&user).unwrap();
    }
    let follows: ManyToMany<User, User, _> = ManyToMany::new(Arc::clone(&store), "follow", "fans");
    // 1,000 distinct pairs, spread over the users.
    let pairs: Vec<(String, String)> = (0..LINKS)
        .map(|i| {
            (
                format!("u{:03}", i % USERS),
                format!("u{:03}", (i / USERS + 1 + i % USERS) % USERS),
            )
        })
        .collect();

    let mut group = c.benchmark_group("follow_1000_pairs");
    group.sample_size(10).measurement_time(Duration::from_secs(30));
    group.throughput(Throughput::Elements(LINKS as u64));
    group.bench_function("link_one_by_one", |b| {
        b.iter_custom(|iterations| {
            let started = Instant::now();
            for _ in 0..iterations {
                for (a, b) in &pairs {
                    follows.link(a, b).unwrap();
                }
            }
            started.elapsed()
        })
    });
    group.bench_function("link_many", |b| {
        b.iter_custom(|iterations| {
            let started = Instant::now();
            for _ in 0..iterations {
                follows.link_many(&pairs).unwrap();
            }
            started.elapsed()
        })
    });
    group.finish();
    users.drop().unwrap();
}

criterion_group!(benches, links);
criterion_main!(benches);
