//! Typed filters (`Where`) built from a table's field handles: the rows each
//! keeps, on MemoryStore or, with `HMAP_NATIVE`/`HMAP_THRIFT`, on a real
//! HBase, where the filter runs on the region servers.

use hmap::store::filter::{Comparator, CompareOp, Filter};
use hmap::{Error, HTable, Query, Table, Where};

#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "typed_filter_order", family(name = "o"), family(name = "n"))]
struct Order {
    #[hmap(key)]
    customer: String,
    #[hmap(key)]
    id: u32,
    #[hmap(family = "o")]
    status: String,
    #[hmap(family = "o")]
    cents: u64,
    #[hmap(family = "o")]
    balance: i64,
    #[hmap(family = "n")]
    note: Option<String>,
}

fn order(customer: &str, id: u32, status: &str, cents: u64, note: Option<&str>) -> Order {
    Order {
        customer: customer.into(),
        id,
        status: status.into(),
        cents,
        balance: i64::from(id) - 3,
        note: note.map(Into::into),
    }
}

async fn orders(test: &str) -> Table<Order, std::sync::Arc<dyn hmap::store::Store>> {
    let store = hmap_suite::test_store(test).await;
    let table = Table::new(store);
    table.create().await.unwrap();
    for o in [
        order("c1", 1, "paid", 500, Some("gift")),
        order("c1", 2, "open", 900, None),
        order("c1", 3, "paid", 2_500, Some("Rush order")),
        order("c1", 4, "void", 10_000, None),
        order("c2", 1, "paid", 1_200, None),
        order("c2", 2, "paid-late", 700, Some("rush")),
    ] {
        table.put(&o).await.unwrap();
    }
    table
}

async fn ids<Q: hmap::table::QueryOf<Order>>(
    table: &Table<Order, std::sync::Arc<dyn hmap::store::Store>>,
    query: Query<'_, Q>,
) -> Vec<(String, u32)> {
    let rows = table.scan(query).await.unwrap().into_vec().await.unwrap();
    rows.into_iter().map(|o| (o.customer, o.id)).collect()
}

fn keys(list: &[(&str, u32)]) -> Vec<(String, u32)> {
    list.iter().map(|(c, i)| ((*c).to_owned(), *i)).collect()
}

#[tokio::test]
async fn typed_filters_keep_the_rows_they_say() {
    let t = orders("typed_filters").await;
    assert_eq!(
        ids(&t, Query::all().filter(Order::STATUS.equals("paid"))).await,
        keys(&[("c1", 1), ("c1", 3), ("c2", 1)])
    );
    assert_eq!(
        ids(&t, Query::prefix("c1").filter(Order::STATUS.not_equals("paid"))).await,
        keys(&[("c1", 2), ("c1", 4)])
    );
    assert_eq!(
        ids(&t, Query::all().filter(Order::CENTS.at_least(1_200u64))).await,
        keys(&[("c1", 3), ("c1", 4), ("c2", 1)])
    );
    assert_eq!(
        ids(&t, Query::all().filter(Order::CENTS.less_than(700u64))).await,
        keys(&[("c1", 1)])
    );
    assert_eq!(
        ids(
            &t,
            Query::all().filter(Order::CENTS.at_most(700u64).or(Order::CENTS.greater_than(9_999u64)))
        )
        .await,
        keys(&[("c1", 1), ("c1", 4), ("c2", 2)])
    );
    // Both filters apply, and with a prefix and a limit.
    assert_eq!(
        ids(
            &t,
            Query::prefix("c1")
                .filter(Order::STATUS.equals("paid"))
                .and_filter(Order::CENTS.greater_than(600u64))
                .limit(5)
        )
        .await,
        keys(&[("c1", 3)])
    );
    assert_eq!(
        ids(&t, Query::all().filter(Order::STATUS.starts_with("paid"))).await,
        keys(&[("c1", 1), ("c1", 3), ("c2", 1), ("c2", 2)])
    );
    // A signed number is compared for equality only (ordering does not
    // compile); -2 is stored as two's complement and found as such.
    assert_eq!(
        ids(&t, Query::all().filter(Order::BALANCE.equals(-2))).await,
        keys(&[("c1", 1), ("c2", 1)])
    );
}

/// A regular expression (Java's, on HBase; refused by BigtableStore,
/// whose RE2 is another language).
#[tokio::test]
async fn a_regex_filter_keeps_what_it_matches() {
    let t = orders("regex_filter").await;
    assert_eq!(
        ids(&t, Query::all().filter(Order::NOTE.matches("^[Rr]ush"))).await,
        keys(&[("c1", 3), ("c2", 2)])
    );
}

#[tokio::test]
async fn rows_without_the_field_pass_only_is_missing() {
    let t = orders("missing_fields").await;
    // A test of an absent field drops the row, as SQL's WHERE drops NULLs.
    assert_eq!(
        ids(&t, Query::all().filter(Order::NOTE.not_equals("gift"))).await,
        keys(&[("c1", 3), ("c2", 2)])
    );
    assert_eq!(
        ids(&t, Query::all().filter(Order::NOTE.is_present())).await,
        keys(&[("c1", 1), ("c1", 3), ("c2", 2)])
    );
    assert_eq!(
        ids(&t, Query::all().filter(Order::NOTE.is_missing())).await,
        keys(&[("c1", 2), ("c1", 4), ("c2", 1)])
    );
    assert_eq!(
        ids(
            &t,
            Query::all().filter(Where::all([Order::NOTE.is_missing(), Order::STATUS.equals("paid")]))
        )
        .await,
        keys(&[("c2", 1)])
    );
}

/// `Where::any` of nothing keeps no row (a `RowFilter` with `NO_OP`, which
/// BigtableStore refuses as a row-level filter).
#[tokio::test]
async fn an_empty_any_keeps_no_row() {
    let t = orders("empty_any").await;
    assert_eq!(ids(&t, Query::all().filter(Where::<Order>::any([]))).await, keys(&[]));
}

/// A store filter as a typed query's (a substring comparator, which
/// BigtableStore refuses), and one that would drop cells of a row refused.
#[tokio::test]
async fn raw_filters() {
    let t = orders("raw_filters").await;
    let rush = Filter::single_column_value("n", "note", CompareOp::Equal, Comparator::substring("RUSH"));
    let raw = Where::<Order>::raw(rush.filter_if_missing(true).into());
    assert_eq!(ids(&t, Query::all().filter(raw)).await, keys(&[("c1", 3), ("c2", 2)]));
    // A filter that drops some of a row's cells cannot make typed rows.
    let cells = Where::<Order>::raw(Filter::value(CompareOp::Equal, Comparator::substring("RUSH")));
    let err = match t.scan(Query::all().filter(cells)).await {
        Ok(_) => panic!("a ValueFilter made typed rows"),
        Err(e) => e,
    };
    assert!(
        matches!(
            err,
            Error::Query {
                table: "typed_filter_order",
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_page_of_filtered_rows_resumes_after_its_cursor() {
    let t = orders("filtered_pages").await;
    let paid = || Query::all().filter(Order::STATUS.starts_with("paid"));
    let first = t.page(paid(), 2, None).await.unwrap();
    assert_eq!(first.rows.iter().map(|o| o.id).collect::<Vec<_>>(), [1, 3]);
    let second = t.page(paid(), 2, first.next.as_ref()).await.unwrap();
    assert_eq!(
        second
            .rows
            .iter()
            .map(|o| (o.customer.as_str(), o.id))
            .collect::<Vec<_>>(),
        [("c2", 1), ("c2", 2)]
    );
    assert!(second.next.is_none());
}

#[tokio::test]
async fn a_regex_the_store_cannot_compile_is_a_typed_error() {
    let t = orders("bad_regex").await;
    let err = match t.scan(Query::all().filter(Order::STATUS.matches("(unclosed"))).await {
        Ok(rows) => rows.into_vec().await.unwrap_err(),
        Err(e) => e,
    };
    assert!(matches!(err, Error::Store(_)), "{err:?}");
    assert!(err.to_string().contains("typed_filter_order"), "{err}");
}

/// A salted key of fixed-width parts: `<salt by shop><shop><day><seq>`.
#[derive(HTable, Debug, Clone, PartialEq)]
#[hmap(table = "typed_filter_visit", family(name = "v"), salt(buckets = 4, by = [shop]))]
struct Visit {
    #[hmap(key)]
    shop: u32,
    #[hmap(key)]
    day: u32,
    #[hmap(key, desc)]
    seq: u64,
    #[hmap(family = "v")]
    who: String,
}

/// Key patterns (`Query::matching`): rows found by a part in the middle of
/// a salted key, as a `FuzzyRowFilter` on the region servers (refused by
/// BigtableStore and Thrift1Store).
#[tokio::test]
async fn key_patterns_find_rows_by_the_middle_of_a_salted_key() {
    use hmap::key::Any;
    let store = hmap_suite::test_store("key_patterns").await;
    let visits = Table::<Visit, _>::new(store);
    if visits.exists().await.unwrap() {
        visits.drop().await.unwrap();
    }
    visits.create().await.unwrap();
    let mut all = Vec::new();
    for shop in 1..=6u32 {
        for day in [20261127u32, 20261128, 20261129] {
            for seq in 1..=2u64 {
                all.push(Visit {
                    shop,
                    day,
                    seq,
                    who: format!("{shop}/{day}/{seq}"),
                });
            }
        }
    }
    visits.put_many(&all).await.unwrap();
    let found = |rows: Vec<Visit>| {
        let mut keys: Vec<(u32, u32, u64)> = rows.into_iter().map(|v| (v.shop, v.day, v.seq)).collect();
        keys.sort_unstable();
        keys
    };
    let expect = |pick: &dyn Fn(&Visit) -> bool| {
        let mut keys: Vec<(u32, u32, u64)> = all.iter().filter(|v| pick(v)).map(|v| (v.shop, v.day, v.seq)).collect();
        keys.sort_unstable();
        keys
    };
    let day = visits
        .scan(Query::matching((Any, 20261128u32)))
        .await
        .unwrap()
        .into_vec()
        .await
        .unwrap();
    assert_eq!(found(day), expect(&|v| v.day == 20261128));
    // A descending part given, another day besides, a filter on a field too.
    let second = Query::matching((Any, 20261127u32, 2u64))
        .or_matching((Any, 20261129u32, 2u64))
        .filter(Visit::WHO.starts_with("3/"));
    let rows = visits.scan(second).await.unwrap().into_vec().await.unwrap();
    assert_eq!(found(rows), expect(&|v| v.seq == 2 && v.shop == 3 && v.day != 20261128));
    // Every part given: the salt too is fixed.
    let one = visits
        .scan(Query::matching((5u32, 20261129u32, 1u64)))
        .await
        .unwrap()
        .into_vec()
        .await
        .unwrap();
    assert_eq!(found(one), [(5, 20261129, 1)]);
    // Nothing fixed: every row.
    let every = visits
        .scan(Query::matching((Any,)))
        .await
        .unwrap()
        .into_vec()
        .await
        .unwrap();
    assert_eq!(every.len(), all.len());
}

/// A part of any value that has no fixed width cannot come before a given
/// one: a typed error naming the part, before anything is sent.
#[tokio::test]
async fn a_key_pattern_after_a_string_of_any_value_is_refused() {
    use hmap::key::{Any, KeyError};
    let t = orders("pattern_refused").await;
    let err = match t.scan(Query::matching((Any, 3u32))).await {
        Ok(_) => panic!("a pattern after a free string was sent"),
        Err(e) => e,
    };
    assert!(
        matches!(&err, Error::Key { table: "typed_filter_order", cause: KeyError::Pattern(m) } if m.contains("`customer`")),
        "{err:?}"
    );
}

/// Conditional writes of typed rows: a compare of one field on every
/// backend; a condition that is a filter where the backend sends one (the
/// Thrift2 gateway refuses it, as it documents).
#[tokio::test]
async fn conditional_writes_compare_the_stored_row() {
    use hmap::store::StoreError;
    let t = orders("conditional").await;
    // c1/2 is open at 900 cents: pay it only if it is open.
    let paid = order("c1", 2, "paid", 900, None);
    assert!(t.put_if(&paid, Order::STATUS.equals("open")).await.unwrap());
    assert!(
        !t.put_if(&paid, Order::STATUS.equals("open")).await.unwrap(),
        "paid now"
    );
    assert_eq!(
        t.get(("c1", 2u32)).await.unwrap().map(|o| o.status).as_deref(),
        Some("paid")
    );
    // A discount on the fields given, if the total is high enough.
    let discounted = order("c1", 4, "ignored", 9_000, None);
    assert!(
        t.update_if(&discounted, [Order::CENTS], Order::CENTS.at_least(10_000u64))
            .await
            .unwrap()
    );
    assert!(
        !t.update_if(&discounted, [Order::CENTS], Order::CENTS.at_least(10_000u64))
            .await
            .unwrap()
    );
    let stored = t.get(("c1", 4u32)).await.unwrap().unwrap();
    assert_eq!((stored.cents, stored.status.as_str()), (9_000, "void"));
    // No row: the condition fails, nothing is written.
    assert!(
        !t.put_if(&order("c9", 1, "paid", 1, None), Order::STATUS.equals("open"))
            .await
            .unwrap()
    );
    assert_eq!(t.get(("c9", 1u32)).await.unwrap(), None);
    // Deleted only while void.
    assert!(!t.delete_if(("c1", 1u32), Order::STATUS.equals("void")).await.unwrap());
    assert!(t.delete_if(("c1", 4u32), Order::STATUS.equals("void")).await.unwrap());
    assert_eq!(t.get(("c1", 4u32)).await.unwrap(), None);
    // A condition that is a filter: rows without a note.
    match t.delete_if(("c2", 1u32), Order::NOTE.is_missing()).await {
        Ok(deleted) => {
            assert!(deleted);
            assert_eq!(t.get(("c2", 1u32)).await.unwrap(), None);
        }
        Err(Error::Store(StoreError::Unsupported {
            backend: "ThriftStore", ..
        })) => {
            assert!(t.get(("c2", 1u32)).await.unwrap().is_some(), "refused: nothing written");
        }
        Err(e) => panic!("{e}"),
    }
}
