//! Each design of the seed articles, mapped with `#[derive(HTable)]` and run
//! on `MemoryStore`, or on a real HBase when `HMAP_THRIFT` is set.

use futures_util::StreamExt;
use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use hmap::key::PartValue;
use hmap::store::{Get, Store, TimeRange};
use hmap::{Cursor, Error, HTable, Query, Table, Versioned};

fn at(day: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(1_700_000_000_000).unwrap() + Duration::days(day)
}

async fn table<T: HTable>(store: &Arc<dyn Store>) -> Table<T, Arc<dyn Store>> {
    let t = Table::new(Arc::clone(store));
    t.create().await.expect("create table");
    t
}

// ---------------------------------------------------------------------------
// 1. Animal taxonomy: one table, a parent and a child family listing ids.

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(
    table = "animal",
    family(name = "name"),
    family(name = "parent"),
    family(name = "child")
)]
struct Animal {
    #[hmap(key)]
    id: u32,
    #[hmap(family = "name", column = "")]
    name: String,
    #[hmap(family = "parent", dynamic(key = "text"))]
    parents: BTreeMap<u32, String>,
    #[hmap(family = "child", dynamic(key = "text"))]
    children: BTreeMap<u32, String>,
}

#[tokio::test]
async fn animal_taxonomy() {
    let store = hmap_suite::test_store("animal_taxonomy").await;
    let animals = table::<Animal>(&store).await;
    let animal = Animal {
        id: 1,
        name: "animal".into(),
        parents: BTreeMap::new(),
        children: BTreeMap::from([(4, "dog".into()), (6, "pig".into())]),
    };
    let dog = Animal {
        id: 4,
        name: "dog".into(),
        parents: BTreeMap::from([(1, "animal".into())]),
        children: BTreeMap::from([(7, "reddog".into()), (8, "blackdog".into())]),
    };
    let red_dog = Animal {
        id: 7,
        name: "reddog".into(),
        parents: BTreeMap::from([(1, "animal".into()), (4, "dog".into())]),
        children: BTreeMap::new(),
    };
    animals.put_many([&animal, &dog, &red_dog]).await.unwrap();
    assert_eq!(animals.get(4u32).await.unwrap(), Some(dog.clone()));
    assert_eq!(animals.get(7u32).await.unwrap().unwrap().parents.len(), 2);

    // The stored layout is the seed's: child:<id>=name, the ids written as
    // text (`child:7=reddog`), as the HBase shell shows them.
    let raw = store
        .get("animal", &Get::new(animals.row_key(4u32).unwrap()))
        .await
        .unwrap()
        .unwrap();
    let columns: Vec<(&[u8], &[u8], &[u8])> = raw
        .cells
        .iter()
        .map(|c| (&c.family[..], &c.qualifier[..], &c.value[..]))
        .collect();
    assert_eq!(
        columns,
        [
            (&b"child"[..], &b"7"[..], &b"reddog"[..]),
            (b"child", b"8", b"blackdog"),
            (b"name", b"", b"dog"),
            (b"parent", b"1", b"animal"),
        ]
    );

    // Replacing the map replaces the family: a child removed is gone.
    let mut dog2 = dog.clone();
    dog2.children.remove(&8);
    animals.put(&dog2).await.unwrap();
    assert_eq!(
        animals.get(4u32).await.unwrap().unwrap().children,
        BTreeMap::from([(7, "reddog".into())])
    );

    // All animals, in id order.
    let ids: Vec<u32> = animals
        .scan(Query::all())
        .await
        .unwrap()
        .map(|a| a.unwrap().id)
        .collect()
        .await;
    assert_eq!(ids, [1, 4, 7]);
}

// ---------------------------------------------------------------------------
// 2. Shop and item: each side lists the other in a family of its own.

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "shop", family(name = "info"), family(name = "item"))]
struct Shop {
    #[hmap(key)]
    id: String,
    #[hmap(family = "info")]
    name: String,
    #[hmap(family = "info")]
    address: String,
    #[hmap(family = "info")]
    regdate: chrono::NaiveDate,
    /// item:<item_id>=type
    #[hmap(family = "item", dynamic)]
    items: BTreeMap<String, String>,
}

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "item", family(name = "info"), family(name = "shop"))]
struct Item {
    #[hmap(key)]
    id: String,
    #[hmap(family = "info")]
    name: String,
    #[hmap(family = "info")]
    price: f64,
    #[hmap(family = "info")]
    details: Option<String>,
    #[hmap(family = "info")]
    title: String,
    /// shop:<shop_id>=type
    #[hmap(family = "shop", dynamic)]
    shops: BTreeMap<String, String>,
}

#[tokio::test]
async fn shop_and_item() {
    let store = hmap_suite::test_store("shop_and_item").await;
    let shops = table::<Shop>(&store).await;
    let items = table::<Item>(&store).await;
    let shop = Shop {
        id: "s1".into(),
        name: "Fruit stand".into(),
        address: "Hangzhou".into(),
        regdate: chrono::NaiveDate::from_ymd_opt(2020, 5, 1).unwrap(),
        items: BTreeMap::from([("i1".into(), "fresh".into()), ("i2".into(), "dried".into())]),
    };
    shops.put(&shop).await.unwrap();
    items
        .put_many(&[
            Item {
                id: "i1".into(),
                name: "apple".into(),
                price: 3.5,
                details: Some("red".into()),
                title: "Apples".into(),
                shops: BTreeMap::from([("s1".into(), "fresh".into())]),
            },
            Item {
                id: "i2".into(),
                name: "fig".into(),
                price: 9.0,
                details: None,
                title: "Figs".into(),
                shops: BTreeMap::from([("s1".into(), "dried".into())]),
            },
        ])
        .await
        .unwrap();
    // A shop's items with their details: one get, then one batched get.
    let s = shops.get("s1").await.unwrap().unwrap();
    let listed = items.get_many(s.items.keys().map(String::as_str)).await.unwrap();
    let names: Vec<String> = listed.into_iter().map(|i| i.unwrap().unwrap().name).collect();
    assert_eq!(names, ["apple", "fig"]);
    // Values are Java's Bytes.toBytes: the price is an 8-byte double.
    let raw = store
        .get("item", &Get::new(items.row_key("i1").unwrap()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(raw.value("info", "price").unwrap(), &3.5f64.to_be_bytes()[..]);
}

// ---------------------------------------------------------------------------
// 3. Purchase records: <user_id><Long.MAX_VALUE - millis><product_id>.

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "sale", family(name = "n", compression = "snappy", bloom = "row"))]
struct Sale {
    #[hmap(key)]
    user_id: String,
    #[hmap(key, reverse_ts)]
    at: DateTime<Utc>,
    #[hmap(key)]
    product_id: u64,
    #[hmap(column = "p")]
    product: String,
    #[hmap(column = "q")]
    quantity: u32,
}

async fn sales_fixture(name: &str) -> (Arc<dyn Store>, Table<Sale, Arc<dyn Store>>) {
    let store = hmap_suite::test_store(name).await;
    let sales = table::<Sale>(&store).await;
    let mut rows = Vec::new();
    for (user, day, product) in [
        ("alice", 0, 10u64),
        ("alice", 1, 11),
        ("alice", 2, 12),
        ("alice", 3, 13),
        ("alice", 4, 14),
        ("bob", 2, 20),
        ("bob", 5, 21),
    ] {
        rows.push(Sale {
            user_id: user.into(),
            at: at(day),
            product_id: product,
            product: format!("product {product}"),
            quantity: 1,
        });
    }
    sales.put_many(&rows).await.unwrap();
    (store, sales)
}

#[tokio::test]
async fn purchases_newest_first_per_user() {
    let (_, sales) = sales_fixture("purchases_newest_first_per_user").await;
    let alice: Vec<u64> = sales
        .scan(Query::prefix("alice"))
        .await
        .unwrap()
        .map(|s| s.unwrap().product_id)
        .collect()
        .await;
    assert_eq!(alice, [14, 13, 12, 11, 10]);
    // The latest purchase is the first row of the prefix.
    let latest = sales
        .scan(Query::prefix("alice").limit(1))
        .await
        .unwrap()
        .next()
        .await
        .unwrap()
        .unwrap();
    assert_eq!(latest.at, at(4));
}

#[tokio::test]
async fn purchases_in_a_time_range() {
    let (_, sales) = sales_fixture("purchases_in_a_time_range").await;
    // [day 1, day 4): the range is in time order even though the key part
    // is stored reversed.
    let in_range: Vec<u64> = sales
        .scan(Query::prefix("alice").between(at(1), at(4)))
        .await
        .unwrap()
        .map(|s| s.unwrap().product_id)
        .collect()
        .await;
    assert_eq!(in_range, [13, 12, 11]);
    let oldest_first: Vec<u64> = sales
        .scan(Query::prefix("alice").between(at(1), at(4)).reversed())
        .await
        .unwrap()
        .map(|s| s.unwrap().product_id)
        .collect()
        .await;
    assert_eq!(oldest_first, [11, 12, 13]);
}

#[tokio::test]
async fn purchases_paginated() {
    let (_, sales) = sales_fixture("purchases_paginated").await;
    let first = sales.page(Query::prefix("alice"), 2, None).await.unwrap();
    assert_eq!(first.rows.iter().map(|s| s.product_id).collect::<Vec<_>>(), [14, 13]);
    // The cursor travels as text and back.
    let token = first.next.unwrap().to_string();
    let cursor: Cursor = token.parse().unwrap();
    let second = sales.page(Query::prefix("alice"), 2, Some(&cursor)).await.unwrap();
    assert_eq!(second.rows.iter().map(|s| s.product_id).collect::<Vec<_>>(), [12, 11]);
    let third = sales
        .page(Query::prefix("alice"), 2, second.next.as_ref())
        .await
        .unwrap();
    assert_eq!(third.rows.iter().map(|s| s.product_id).collect::<Vec<_>>(), [10]);
    assert!(third.next.is_none());
    // Offset and limit, as the seeds page without a cursor.
    let page: Vec<u64> = sales
        .scan(Query::prefix("alice").offset(1).limit(3))
        .await
        .unwrap()
        .map(|s| s.unwrap().product_id)
        .collect()
        .await;
    assert_eq!(page, [13, 12, 11]);
}

#[tokio::test]
async fn sale_schema_and_key_inspector() {
    let (_, sales) = sales_fixture("sale_schema_and_key_inspector").await;
    let schema = Sale::table_schema();
    assert_eq!(
        schema.to_string(),
        "create 'sale', {NAME => 'n', VERSIONS => 1, COMPRESSION => 'SNAPPY'}, \
         METADATA => {'hmap.key' => 'binary: user_id: string + at: datetime reverse_ts + product_id: u64'}"
    );
    let key = sales.row_key(("bob", at(2), 20u64)).unwrap();
    let shown = sales.inspect_key(&key).unwrap();
    assert_eq!(shown.part("product_id"), Some(&PartValue::U64(20)));
    assert_eq!(
        shown.to_string(),
        "user_id=\"bob\" at=2023-11-16T22:13:20.000Z product_id=20"
    );
}

// ---------------------------------------------------------------------------
// 4. Weibo users with follows and fans.

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(
    table = "wb_user",
    family(name = "info"),
    family(name = "follow"),
    family(name = "fans")
)]
struct WeiboUser {
    #[hmap(key)]
    id: String,
    #[hmap(family = "info")]
    nickname: String,
    #[hmap(family = "info", text)]
    gender: Gender,
    #[hmap(family = "info")]
    dob: Option<chrono::NaiveDate>,
    #[hmap(family = "info", keep_on_none)]
    address: Option<String>,
    /// follow:<user_id>=name
    #[hmap(family = "follow", dynamic)]
    follows: BTreeMap<String, String>,
    /// fans:<user_id>=name
    #[hmap(family = "fans", dynamic)]
    fans: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Gender {
    Female,
    Male,
}

impl std::fmt::Display for Gender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Gender::Female => "f",
            Gender::Male => "m",
        })
    }
}

impl std::str::FromStr for Gender {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "f" => Ok(Gender::Female),
            "m" => Ok(Gender::Male),
            other => Err(format!("unknown gender {other:?}")),
        }
    }
}

#[tokio::test]
async fn weibo_users_and_fans() {
    let store = hmap_suite::test_store("weibo_users_and_fans").await;
    let users = table::<WeiboUser>(&store).await;
    let red = WeiboUser {
        id: "001".into(),
        nickname: "Xiaohong".into(),
        gender: Gender::Female,
        dob: None,
        address: Some("Beijing".into()),
        follows: BTreeMap::from([("002".into(), "Xiaohei".into())]),
        fans: BTreeMap::from([("002".into(), "Xiaohei".into()), ("003".into(), "Xiaobai".into())]),
    };
    users.put(&red).await.unwrap();
    assert_eq!(users.get("001").await.unwrap(), Some(red.clone()));
    // `text` stores Display: readable in the shell.
    let raw = store
        .get("wb_user", &Get::new(users.row_key("001").unwrap()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&raw.value("info", "gender").unwrap()[..], b"f");

    // keep_on_none leaves the stored address; a plain None deletes the dob.
    let mut changed = red.clone();
    changed.address = None;
    changed.dob = Some(chrono::NaiveDate::from_ymd_opt(2000, 1, 1).unwrap());
    users.put(&changed).await.unwrap();
    changed.dob = None;
    users.put(&changed).await.unwrap();
    let back = users.get("001").await.unwrap().unwrap();
    assert_eq!(back.address.as_deref(), Some("Beijing"));
    assert_eq!(back.dob, None);

    // Updating chosen fields leaves the others, the fan list included.
    let rename = WeiboUser {
        nickname: "Hong".into(),
        fans: BTreeMap::new(),
        ..red.clone()
    };
    users.update(&rename, [WeiboUser::NICKNAME]).await.unwrap();
    let back = users.get("001").await.unwrap().unwrap();
    assert_eq!(back.nickname, "Hong");
    assert_eq!(back.fans.len(), 2);
    // Key fields have no handle: `users.update(&rename, [User::ID])` does
    // not compile (ui-tests/tests/ui/update-key-field.rs).
}

// ---------------------------------------------------------------------------
// 5. Weibo posts: a readable text key <uid>_<Long.MAX_VALUE - millis>.

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "wb_post", text_key, family(name = "cf"))]
struct Post {
    #[hmap(key)]
    uid: String,
    #[hmap(key, reverse_ts)]
    posted_at: i64,
    content: String,
    title: Option<String>,
}

#[tokio::test]
async fn weibo_posts_with_text_keys() {
    let store = hmap_suite::test_store("weibo_posts_with_text_keys").await;
    let posts = table::<Post>(&store).await;
    for (uid, ms) in [("001", 1_000i64), ("001", 3_000), ("002", 2_000), ("001", 2_000)] {
        posts
            .put(&Post {
                uid: uid.into(),
                posted_at: ms,
                content: format!("{uid} at {ms}"),
                title: None,
            })
            .await
            .unwrap();
    }
    let key = posts.row_key(("001", 3_000i64)).unwrap();
    assert_eq!(&key[..], b"001_9223372036854772807");
    let mine: Vec<i64> = posts
        .scan(Query::prefix("001"))
        .await
        .unwrap()
        .map(|p| p.unwrap().posted_at)
        .collect()
        .await;
    assert_eq!(mine, [3_000, 2_000, 1_000]);
}

// ---------------------------------------------------------------------------
// 6. The inbox: one row per user, a column kept at VERSIONS => 1000.

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "wb_inbox", family(name = "cf", versions = 1000))]
struct Inbox {
    #[hmap(key)]
    uid: String,
    #[hmap(versions)]
    sq: Vec<Versioned<String>>,
}

#[tokio::test]
async fn inbox_keeps_a_thousand_versions() {
    let store = hmap_suite::test_store("inbox_keeps_a_thousand_versions").await;
    let inboxes = table::<Inbox>(&store).await;
    let refs: Vec<Versioned<String>> = (1..=1200).map(|i| Versioned::new(i, format!("post{i}"))).collect();
    inboxes
        .put(&Inbox {
            uid: "001".into(),
            sq: refs,
        })
        .await
        .unwrap();
    let inbox = inboxes.get("001").await.unwrap().unwrap();
    assert_eq!(inbox.sq.len(), 1000);
    assert_eq!(inbox.sq[0], Versioned::new(1200, "post1200".to_string()));
    assert_eq!(inbox.sq[999], Versioned::new(201, "post201".to_string()));
    assert_eq!(Inbox::table_schema().families[0].versions, 1000);
}

// ---------------------------------------------------------------------------
// Salted and hashed keys, versions, counters, codecs, deletes.

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "reading", salt(buckets = 8, by = [sensor]), family(name = "r", ttl = "30d"))]
struct Reading {
    #[hmap(key)]
    sensor: u32,
    #[hmap(key, reverse_ts)]
    at: i64,
    value: f64,
}

#[tokio::test]
async fn salted_reads_one_bucket_or_merge_all() {
    let store = hmap_suite::test_store("salted_reads_one_bucket_or_merge_all").await;
    let readings = table::<Reading>(&store).await;
    let now = Utc::now().timestamp_millis();
    let mut rows = Vec::new();
    for sensor in 1..=6u32 {
        for minute in 0..3i64 {
            rows.push(Reading {
                sensor,
                at: now - minute * 60_000,
                value: f64::from(sensor) + minute as f64 / 10.0,
            });
        }
    }
    readings.put_many(&rows).await.unwrap();
    // The table is pre-split at each bucket.
    assert_eq!(Reading::table_schema().split_keys.len(), 7);
    // One sensor: one bucket, newest first.
    let one: Vec<i64> = readings
        .scan(Query::prefix(4u32))
        .await
        .unwrap()
        .map(|r| r.unwrap().at)
        .collect()
        .await;
    assert_eq!(one, [now, now - 60_000, now - 120_000]);
    // Every sensor: eight buckets merged in key order (sensor, then newest).
    let all: Vec<(u32, i64)> = readings
        .scan(Query::all())
        .await
        .unwrap()
        .map(|r| r.map(|r| (r.sensor, r.at)).unwrap())
        .collect()
        .await;
    let mut expected: Vec<(u32, i64)> = rows.iter().map(|r| (r.sensor, r.at)).collect();
    expected.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    assert_eq!(all, expected);
    let reversed: Vec<(u32, i64)> = readings
        .scan(Query::all().reversed())
        .await
        .unwrap()
        .map(|r| r.map(|r| (r.sensor, r.at)).unwrap())
        .collect()
        .await;
    expected.reverse();
    assert_eq!(reversed, expected);
    // Pages across buckets.
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = readings.page(Query::all(), 5, cursor.as_ref()).await.unwrap();
        seen.extend(page.rows.iter().map(|r| (r.sensor, r.at)));
        match page.next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    expected.reverse();
    assert_eq!(seen, expected);
}

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "watch", hash_prefix(len = 3, of = user), family(name = "w"))]
struct Watch {
    #[hmap(key)]
    user: String,
    #[hmap(key)]
    video: u64,
    #[hmap(json)]
    meta: WatchMeta,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct WatchMeta {
    seconds: u32,
    device: String,
}

#[tokio::test]
async fn hash_prefixed_keys_and_json_cells() {
    let store = hmap_suite::test_store("hash_prefixed_keys_and_json_cells").await;
    let watches = table::<Watch>(&store).await;
    let meta = WatchMeta {
        seconds: 42,
        device: "tv".into(),
    };
    for video in [3u64, 1, 2] {
        watches
            .put(&Watch {
                user: "u1".into(),
                video,
                meta: meta.clone(),
            })
            .await
            .unwrap();
    }
    let videos: Vec<u64> = watches
        .scan(Query::prefix("u1"))
        .await
        .unwrap()
        .map(|w| w.unwrap().video)
        .collect()
        .await;
    assert_eq!(videos, [1, 2, 3]);
    let raw = store
        .get("watch", &Get::new(watches.row_key(("u1", 1u64)).unwrap()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&raw.value("w", "meta").unwrap()[..], br#"{"seconds":42,"device":"tv"}"#);
    // A prefix that skips the hashed part cannot be scanned.
    assert!(matches!(
        watches.scan(Query::prefix(()).between(1u64, 2u64)).await,
        Err(Error::Query { .. })
    ));
}

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "account", family(name = "a"))]
struct Account {
    #[hmap(key)]
    id: String,
    balance: i64,
    #[hmap(version)]
    version: u64,
    #[hmap(counter)]
    logins: i64,
}

#[tokio::test]
async fn optimistic_versions_and_counters() {
    let store = hmap_suite::test_store("optimistic_versions_and_counters").await;
    let accounts = table::<Account>(&store).await;
    let mut mine = Account {
        id: "a1".into(),
        balance: 100,
        version: 0,
        logins: 0,
    };
    accounts.save(&mut mine).await.unwrap();
    assert_eq!(mine.version, 1);
    let mut theirs = accounts.get("a1").await.unwrap().unwrap();
    theirs.balance = 50;
    accounts.save(&mut theirs).await.unwrap();
    // Mine is stale now: the write is refused, nothing changes.
    mine.balance = 999;
    let err = accounts.save(&mut mine).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"table `account`, row a1\x00\x00 (id="a1"): version conflict: the row was read at version 1, it is now at 2"#
    );
    assert_eq!(accounts.get("a1").await.unwrap().unwrap().balance, 50);

    assert_eq!(accounts.increment("a1", Account::LOGINS, 1).await.unwrap(), 1);
    assert_eq!(accounts.increment("a1", Account::LOGINS, 2).await.unwrap(), 3);
    // A put leaves counters alone.
    let mut fresh = accounts.get("a1").await.unwrap().unwrap();
    assert_eq!(fresh.logins, 3);
    fresh.logins = 0;
    accounts.save(&mut fresh).await.unwrap();
    assert_eq!(accounts.get("a1").await.unwrap().unwrap().logins, 3);
    assert!(matches!(
        accounts.increment("a1", Account::BALANCE, 1).await,
        Err(Error::Field { .. })
    ));
}

#[tokio::test]
async fn deletes_and_missing_cells() {
    let (store, sales) = sales_fixture("deletes_and_missing_cells").await;
    sales.delete(("bob", at(5), 21u64)).await.unwrap();
    let bob: Vec<u64> = sales
        .scan(Query::prefix("bob"))
        .await
        .unwrap()
        .map(|s| s.unwrap().product_id)
        .collect()
        .await;
    assert_eq!(bob, [20]);
    // A row missing a required cell is an error that names table, row and column.
    let key = sales.row_key(("bob", at(2), 20u64)).unwrap();
    store
        .mutate(
            "sale",
            // Stamped by hmap's clock, as the typed writes are, so that it
            // is later than they are.
            &[hmap::store::RowMutation::new(key.clone()).delete_column_up_to(
                "n",
                "q",
                hmap::clock::next_timestamp(&hmap::clock::RowSet::of("sale", &key)),
            )],
        )
        .await
        .unwrap();
    let err = sales.get(("bob", at(2), 20u64)).await.unwrap_err();
    assert!(matches!(err, Error::MissingCell { .. }));
    assert!(err.to_string().starts_with("table `sale`, row bob\\x00\\x00"), "{err}");
    assert!(
        err.to_string()
            .ends_with("column n:q: the cell is missing (the field is not an Option)"),
        "{err}"
    );
    // A cell of the wrong width, likewise, written after the delete.
    let later = hmap::clock::next_timestamp(&hmap::clock::RowSet::of("sale", &key));
    store
        .mutate(
            "sale",
            &[hmap::store::RowMutation::new(key).put_at("n", "q", later, "x")],
        )
        .await
        .unwrap();
    let err = sales.get(("bob", at(2), 20u64)).await.unwrap_err();
    assert!(
        err.to_string().ends_with("column n:q: expected 4 bytes, found 1"),
        "{err}"
    );
}

#[tokio::test]
async fn time_ranges_on_cells() {
    let store = hmap_suite::test_store("time_ranges_on_cells").await;
    let posts = table::<Post>(&store).await;
    posts
        .put(&Post {
            uid: "001".into(),
            posted_at: 5,
            content: "hi".into(),
            title: Some("t".into()),
        })
        .await
        .unwrap();
    // Cells written now are outside a range in the past: the optional field
    // reads as absent, the required one is an error.
    let past = TimeRange::new(0, 1_000);
    let err = posts.scan(Query::all().time_range(past)).await.unwrap().count().await;
    assert_eq!(err, 0, "no cell in range, so no row");
    let now = TimeRange::new(Utc::now().timestamp_millis() - 60_000, i64::MAX);
    assert_eq!(posts.scan(Query::all().time_range(now)).await.unwrap().count().await, 1);
}
