//! Every example, run with its output checked: on `MemoryStore`, or on a
//! real HBase when `HMAP_THRIFT` names a Thrift2 gateway.

use std::sync::Arc;

use hmap::store::Store;

#[path = "../../examples/animals.rs"]
pub(crate) mod animals;
#[path = "../../examples/keys.rs"]
mod keys;
#[path = "../../examples/org_chart.rs"]
mod org_chart;
#[path = "../../examples/person_role.rs"]
mod person_role;
#[path = "../../examples/purchases.rs"]
mod purchases;
#[path = "../../examples/sensor_readings.rs"]
mod sensor_readings;
#[path = "../../examples/shop_item.rs"]
mod shop_item;
#[path = "../../examples/weibo.rs"]
mod weibo;

/// The output of an example on the blocking API. Examples and their stores
/// run on the blocking API's runtime (`hmap::blocking::try_block_on`), so these
/// tests are plain `#[test]`s.
fn output(name: &str, run: fn(Arc<dyn Store>, &mut dyn std::io::Write) -> hmap_suite::ExampleResult) -> String {
    let mut out = Vec::new();
    let store = hmap::blocking::try_block_on(hmap_suite::test_store(name)).expect("a plain #[test] can wait");
    run(store, &mut out).expect("the example runs");
    String::from_utf8(out).expect("UTF-8 output")
}

/// The output of an async example.
fn output_async(
    name: &str,
    run: impl for<'a> AsyncFnOnce(Arc<dyn Store>, &'a mut dyn std::io::Write) -> hmap_suite::ExampleResult,
) -> String {
    let mut out = Vec::new();
    hmap::blocking::try_block_on(async {
        let store = hmap_suite::test_store(name).await;
        run(store, &mut out).await.expect("the example runs");
    })
    .expect("a plain #[test] can wait");
    String::from_utf8(out).expect("UTF-8 output")
}

/// The lines after `header`, up to the next line at the header's indent.
fn section<'a>(text: &'a str, header: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| !l.starts_with(header))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect()
}

/// The weibo job's first run on fresh tables: its store and its output.
/// Both weibo tests check it; it runs once for them (on a real HBase it is
/// the suite's longest job), on the blocking API's runtime, which outlives
/// each test, so that the second run can use its store.
fn first_weibo_run() -> &'static (Arc<dyn Store>, String) {
    static FIRST: std::sync::OnceLock<(Arc<dyn Store>, String)> = std::sync::OnceLock::new();
    FIRST.get_or_init(|| {
        let mut out = Vec::new();
        let store = hmap::blocking::try_block_on(async {
            let store = hmap_suite::test_store("weibo_runs_again_on_its_own_tables").await;
            weibo::run(Arc::clone(&store), &mut out).await.expect("the first run");
            store
        })
        .expect("a plain #[test] can wait");
        (store, String::from_utf8(out).expect("UTF-8 output"))
    })
}

#[test]
fn weibo_timelines_are_correct_and_newest_first() {
    let (_, first) = first_weibo_run();
    assert!(!first.contains("truncated"), "{first}");
    check_weibo(first);
}

/// A second run on the tables of the first starts afresh and tells so,
/// and reports what the first did (it read "removed 0 of u001's posts"
/// when the first run's delete markers hid the posts delivered again).
#[test]
fn weibo_runs_again_on_its_own_tables() {
    let (store, first) = first_weibo_run();
    let mut second = Vec::new();
    hmap::blocking::try_block_on(weibo::run(Arc::clone(store), &mut second))
        .expect("a plain #[test] can wait")
        .expect("the second run");
    let second = String::from_utf8(second).unwrap();
    assert!(!first.contains("truncated"), "{first}");
    assert!(second.contains("tables from an earlier run: truncated"), "{second}");
    check_weibo(first);
    check_weibo(&second);
}

fn check_weibo(out: &str) {
    let out = out.to_owned();
    assert!(out.contains("registered 300 users with "), "{out}");
    assert!(out.contains("posted 3000 posts"), "{out}");
    assert!(out.contains("(0 failed)"), "{out}");
    assert!(out.contains("follow lists: consistent"), "{out}");
    assert!(out.contains("no longer lists u042 as a fan: true"), "{out}");

    // The home timeline, recomputed from the data set: posts by those u042
    // follows, newest first.
    let data = weibo::dataset(42, 300, 3000);
    let followed: Vec<&str> = data
        .follows
        .iter()
        .filter(|(a, _)| a == "u042")
        .map(|(_, b)| b.as_str())
        .collect();
    let mut expected: Vec<&(String, i64, String)> = data
        .posts
        .iter()
        .filter(|(u, _, _)| followed.contains(&u.as_str()))
        .collect();
    expected.sort_by_key(|p| std::cmp::Reverse(p.1));
    let timeline = section(&out, "u042's home timeline");
    let shown: Vec<&str> = timeline.iter().filter(|l| !l.contains("next page")).copied().collect();
    assert_eq!(shown.len(), 10, "{out}");
    for (line, (author, _, content)) in shown.iter().zip(&expected) {
        assert!(
            line.ends_with(&format!("{author}: {content}")),
            "{line} vs {author}: {content}"
        );
    }
    // Unfollowing the first user u042 follows takes that user's posts out
    // of u042's inbox.
    let whom = followed.iter().min().expect("u042 follows someone");
    let theirs = data.posts.iter().filter(|(u, _, _)| u == whom).count();
    assert!(theirs > 0, "{whom} wrote no posts: the check would be empty");
    let line = format!("removed {theirs} of {whom}'s posts from u042's inbox; the timeline still shows {whom}: false");
    assert!(out.lines().any(|l| l == line), "{line}\n{out}");
    // Own posts: u042's, newest first, two pages of three.
    let mut own: Vec<&(String, i64, String)> = data.posts.iter().filter(|(u, _, _)| u == "u042").collect();
    own.sort_by_key(|p| std::cmp::Reverse(p.1));
    let own_lines: Vec<&str> = section(&out, "u042's own posts")
        .into_iter()
        .filter(|l| !l.contains("next page"))
        .collect();
    assert_eq!(own_lines.len(), own.len().min(6), "{out}");
    for (line, (_, _, content)) in own_lines.iter().zip(&own) {
        assert!(line.ends_with(content.as_str()), "{line} vs {content}");
    }
}

#[test]
fn shop_item_lists_and_deletes() {
    let out = output("shop_item", shop_item::run);
    assert_eq!(
        section(&out, "Green Tea House")
            .first()
            .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>()),
        Some(vec!["i1", "Longjing"])
    );
    assert!(out.contains("i3 is sold by: s1 (consign), s2 (own)"), "{out}");
    let after: Vec<&str> = out.lines().skip_while(|l| !l.starts_with("deleted item i3")).collect();
    let text = after.join("\n");
    assert!(!text.contains("Mooncakes"), "{text}");
    assert!(text.contains("items left: i1, i2, i4"), "{text}");
    assert!(out.ends_with("shop/item lists: consistent\n"), "{out}");
}

#[test]
fn person_role_keeps_both_lists() {
    let out = output("person_role", person_role::run);
    assert!(
        out.contains("  role 200 soldier: Xiaohei, Xiaohuang, Xiaobai\n"),
        "{out}"
    );
    assert!(out.contains("  person 001 Xiaohei: monitor, private\n"), "{out}");
    assert!(out.contains("  role 200 private: Xiaohei, Xiaobai\n"), "{out}");
    assert!(out.contains("  role 300 cook: (none)\n"), "{out}");
    assert!(out.ends_with("person/role lists: consistent\n"), "{out}");
}

#[test]
fn org_chart_moves_and_deletes() {
    let out = output("org_chart", org_chart::run);
    assert!(
        out.contains("from 004 to the top: Development 2 <- Development <- CEO"),
        "{out}"
    );
    assert!(out.contains("refused: "), "{out}");
    // The seed's layout: the parent's rowkey on the child, rewritten when
    // the parent changes level.
    assert!(out.contains("003 is row 1_003 with cf1:pid=1_002"), "{out}");
    assert!(out.contains("006 now points at 0_005"), "{out}");
    let last: Vec<&str> = section(&out, "deleted Development with its subtree");
    assert_eq!(
        last,
        [
            "  001 CEO",
            "  005 Marketing",
            "    004 Development 2",
            "    006 Marketing 1",
            "    007 Marketing 2"
        ]
    );
    assert!(out.ends_with("org chart: consistent\n"), "{out}");
}

#[test]
fn animals_list_parents_and_children() {
    let out = output("animals", animals::run);
    assert!(
        out.contains(" 5 dog                      parents: [animal]  children: [red dog, black dog]"),
        "{out}"
    );
    assert!(
        out.contains(" 9 tiger of the northeast   parents: [animal, tiger]"),
        "{out}"
    );
    assert!(
        out.contains("what kinds of dog are there? [\"red dog\", \"black dog\"]"),
        "{out}"
    );
}

#[test]
fn purchases_by_time() {
    let out = output("purchases", purchases::run);
    assert!(
        out.starts_with("create 'sale', {NAME => 'n', VERSIONS => 1, COMPRESSION => 'SNAPPY'}"),
        "{out}"
    );
    let latest = section(&out, "user3's five latest purchases");
    assert_eq!(latest.len(), 5);
    let times = |lines: &[&str]| -> Vec<String> {
        lines
            .iter()
            .map(|l| l.trim().split(' ').next().unwrap_or("").to_string())
            .collect()
    };
    let t = times(&latest);
    assert!(t.windows(2).all(|w| w[0] > w[1]), "newest first: {t:?}");
    let newest = times(&section(&out, "user3's purchases from"));
    let mut oldest = times(&section(&out, "the same, oldest first"));
    assert!(!newest.is_empty());
    assert!(
        newest
            .iter()
            .all(|t| t.as_str() >= "2026-03-10" && t.as_str() < "2026-03-17"),
        "{newest:?}"
    );
    oldest.reverse();
    assert_eq!(newest, oldest);
    assert!(
        out.contains("and read back: user_id=\"user3\" time=2026-03-01T09:00:00.000Z product_id=1"),
        "{out}"
    );
}

#[test]
fn sensor_readings_spread_and_merge() {
    let out = output_async("sensor_readings", sensor_readings::run);
    let buckets = section(&out, "1200 readings of 20 sensors");
    assert_eq!(buckets.len(), 8, "all eight buckets hold rows: {out}");
    let total: usize = buckets
        .iter()
        .filter_map(|l| l.rsplit(' ').next()?.parse::<usize>().ok())
        .sum();
    assert_eq!(total, 1200);
    assert!(
        out.contains("the merged scan returned 1200 readings, ordered by sensor: true"),
        "{out}"
    );
    assert!(
        section(&out, "sensor 7, newest first")
            .iter()
            .all(|l| l.starts_with("  sensor 7 "))
    );
}

#[test]
fn keys_sort_as_hbase_sorts_them() {
    let mut out = Vec::new();
    keys::run(&mut out).expect("the keys example runs");
    let out = String::from_utf8(out).expect("UTF-8");
    // Each key is printed, in byte order, above what the inspector reads
    // from it.
    let shown = |key: &str| {
        out.find(&format!("  {key}\n"))
            .unwrap_or_else(|| panic!("{key} in:\n{out}"))
    };
    // Newest first within a uid (reverse timestamps).
    assert!(shown("001_9223370336854675807") < shown("001_9223370336854775807"));
    assert!(shown("001_9223370336854775807") < shown("002_9223370336854725807"));
    assert!(out.contains("  001_9223370336854675807\n      uid=\"001\" posted_at=1700000100000\n"));
    // Top-level departments first, ids zero-padded.
    assert!(shown("0_008") < shown("1_002"));
    assert!(out.contains("  top-level prefix: 0_\n"));
    // Alice's purchases, newest first: product 2 (day 3) before 99 (day 1).
    let alice = section(&out, "purchase records");
    let products: Vec<&str> = alice
        .iter()
        .filter(|l| l.contains("user_id=\"alice\""))
        .filter_map(|l| l.split("product_id=").nth(1))
        .collect();
    assert_eq!(products, ["2", "99", "17"]);
    // Every salted key reads back with its bucket.
    assert_eq!(
        section(&out, "salted time series")
            .iter()
            .filter(|l| l.contains("salt="))
            .count(),
        8
    );
}

#[tokio::test]
async fn thrift_address_without_a_gateway_is_a_clear_error() {
    // Nothing listens on port 1 of this machine.
    let err = hmap_suite::store_for(Some("127.0.0.1:1"), "")
        .await
        .err()
        .expect("refused");
    assert!(err.starts_with("HMAP_THRIFT=127.0.0.1:1: "), "{err}");
    assert!(err.contains("scripts/hbase/hbase start"), "{err}");
    assert!(hmap_suite::store_for(None, "").await.is_ok());
    assert!(hmap_suite::store_for(Some("  "), "").await.is_ok());
}
