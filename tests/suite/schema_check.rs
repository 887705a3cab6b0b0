//! Opening a table through a struct checks the struct against the live
//! table (issue 17): families missing, family options that differ and
//! another key layout are one typed error listing every difference; the key
//! layout is recorded with the tables hmap creates; `exists`, `drop` and
//! `truncate`; errors about a row show its decoded key parts. On
//! `MemoryStore`, or on a real HBase when `HMAP_THRIFT` is set.

use futures_util::StreamExt;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use hmap::schema::{
    BloomType, Compression, FamilyOption, FamilySchema, KEY_LAYOUT_ATTRIBUTE, SchemaDifference, TableSchema,
};
use hmap::store::{RowMutation, Store, StoreError};
use hmap::{Error, HTable, Query, Table};

/// The seeds' purchases: newest first per user, salted by user.
#[derive(HTable, Debug, PartialEq)]
#[hmap(
    table = "purchases",
    salt(buckets = 8, by = [uid]),
    family(name = "p", versions = 3, compression = "snappy"),
    family(name = "s")
)]
struct Purchase {
    #[hmap(key)]
    uid: String,
    #[hmap(key, reverse_ts)]
    ts: DateTime<Utc>,
    #[hmap(key)]
    pid: u64,
    #[hmap(family = "p")]
    product: String,
    #[hmap(family = "s", counter)]
    views: i64,
}

/// The same table and families, keyed by another layout.
#[derive(HTable, Debug, PartialEq)]
#[hmap(
    table = "purchases",
    family(name = "p", versions = 3, compression = "snappy"),
    family(name = "s")
)]
struct PurchaseById {
    #[hmap(key)]
    id: u64,
    #[hmap(family = "p")]
    product: String,
}

const LAYOUT: &str = "binary: salt(8 by uid) + uid: string + ts: datetime reverse_ts + pid: u64";

fn at(text: &str) -> DateTime<Utc> {
    text.parse().expect("a time")
}

fn purchase() -> Purchase {
    Purchase {
        uid: "u1".into(),
        ts: at("2026-11-22T10:00:00Z"),
        pid: 7,
        product: "tea".into(),
        views: 0,
    }
}

/// Runs `f`, returning what it returned and the warnings it logged.
async fn logged<R>(f: impl std::future::Future<Output = R>) -> (R, Vec<String>) {
    use std::sync::Mutex;
    use tracing::field::{Field, Visit};
    use tracing::instrument::WithSubscriber;
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Level, Metadata};

    #[derive(Default)]
    struct Warnings(Mutex<Vec<String>>);
    struct Message(String);
    impl Visit for Message {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            if field.name() == "message" {
                self.0 = format!("{value:?}");
            }
        }
    }
    impl tracing::Subscriber for Warnings {
        fn enabled(&self, metadata: &Metadata<'_>) -> bool {
            *metadata.level() == Level::WARN
        }
        fn new_span(&self, _: &Attributes<'_>) -> Id {
            Id::from_u64(1)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, event: &Event<'_>) {
            let mut message = Message(String::new());
            event.record(&mut message);
            self.0.lock().unwrap().push(message.0);
        }
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }
    let warnings = Arc::new(Warnings::default());
    let result = f.with_subscriber(Arc::clone(&warnings)).await;
    let logged = warnings.0.lock().unwrap().clone();
    (result, logged)
}

fn mismatch(err: Error) -> Vec<SchemaDifference> {
    match err {
        Error::SchemaMismatch { table, diff } => {
            assert_eq!(table, "purchases");
            diff.differences
        }
        other => panic!("expected a schema mismatch, got {other:?}"),
    }
}

/// The key layout's fingerprint is pinned: tables keep it as long as they
/// live, so a change would make every table hmap created look foreign.
#[tokio::test]
async fn key_layout_fingerprint_vector() {
    assert_eq!(Purchase::key_schema().fingerprint(), LAYOUT);
    assert_eq!(PurchaseById::key_schema().fingerprint(), "binary: id: u64");
    assert_eq!(Purchase::table_schema().key_layout(), Some(LAYOUT));
    assert_eq!(
        Purchase::table_schema()
            .metadata
            .get(KEY_LAYOUT_ATTRIBUTE)
            .map(String::as_str),
        Some(LAYOUT)
    );
}

#[tokio::test]
async fn created_tables_record_their_key_layout() {
    let store = hmap_suite::test_store("schema_records_layout").await;
    let purchases = Table::<Purchase, _>::new(&store);
    assert!(purchases.create_if_missing().await.expect("create"));
    let live = store.describe_table("purchases").await.expect("describe");
    assert_eq!(live.key_layout(), Some(LAYOUT));
    assert!(purchases.check_schema().await.expect("fits").is_empty());
    assert!(!purchases.create_if_missing().await.expect("opens"));
}

/// A table made by hand that lacks a family and holds other options: one
/// error lists every difference (before, `create_if_missing` said
/// `Ok(false)` and reads met the missing family later).
#[tokio::test]
async fn missing_family_and_other_options_are_one_error() {
    let store = hmap_suite::test_store("schema_missing_family").await;
    store
        .create_table(
            &TableSchema::new("purchases")
                .family(FamilySchema::new("p").versions(1).bloom(BloomType::RowCol))
                .family(FamilySchema::new("old"))
                .metadata(KEY_LAYOUT_ATTRIBUTE, LAYOUT),
        )
        .await
        .expect("create by hand");
    let purchases = Table::<Purchase, _>::new(&store);
    let expected = vec![
        SchemaDifference::FamilyOption {
            family: "p".into(),
            option: FamilyOption::Versions,
            declared: "3".into(),
            live: "1".into(),
        },
        SchemaDifference::FamilyOption {
            family: "p".into(),
            option: FamilyOption::Bloom,
            declared: "'ROW'".into(),
            live: "'ROWCOL'".into(),
        },
        SchemaDifference::FamilyOption {
            family: "p".into(),
            option: FamilyOption::Compression,
            declared: "'SNAPPY'".into(),
            live: "'NONE'".into(),
        },
        SchemaDifference::MissingFamily(FamilySchema::new("s")),
        SchemaDifference::ExtraFamily { family: "old".into() },
    ];
    let err = purchases.create_if_missing().await.expect_err("refused");
    assert_eq!(
        err.to_string(),
        "table `purchases` does not match its struct: \
         family `p`: VERSIONS is 1 in the table, 3 in the struct; \
         family `p`: BLOOMFILTER is 'ROWCOL' in the table, 'ROW' in the struct; \
         family `p`: COMPRESSION is 'NONE' in the table, 'SNAPPY' in the struct; \
         family `s` is missing (declared {NAME => 's', VERSIONS => 1})"
    );
    assert_eq!(mismatch(err), expected);
    assert_eq!(mismatch(purchases.check_schema().await.expect_err("refused")), expected);
    assert_eq!(purchases.schema_diff().await.expect("diff").differences, expected);
}

/// A table created for one key layout refuses a struct of another: the
/// error shows both (before, `create_if_missing` said `Ok(false)` and the
/// struct read and wrote keys of its own layout).
#[tokio::test]
async fn another_key_layout_is_refused() {
    let store = hmap_suite::test_store("schema_key_layout").await;
    Table::<Purchase, _>::new(&store).create().await.expect("create");
    let by_id = Table::<PurchaseById, _>::new(&store);
    let err = by_id.create_if_missing().await.expect_err("refused");
    assert_eq!(
        err.to_string(),
        format!(
            "table `purchases` does not match its struct: the table was created for another key layout: \
             its rows are `{LAYOUT}`, the struct's are `binary: id: u64`"
        )
    );
    let differences = mismatch(err);
    assert_eq!(
        differences,
        [SchemaDifference::KeyLayout {
            declared: "binary: id: u64".into(),
            recorded: LAYOUT.into(),
        }]
    );
    assert!(matches!(by_id.check_schema().await, Err(Error::SchemaMismatch { .. })));
}

/// A table hmap did not create (no recorded layout) with the struct's
/// families opens; the diff says the layout is not recorded and names the
/// families only the table has, for information.
#[tokio::test]
async fn unrecorded_layout_and_extra_families_open() {
    let store = hmap_suite::test_store("schema_unrecorded").await;
    let mut schema = Purchase::table_schema();
    schema.metadata.clear();
    schema
        .families
        .push(FamilySchema::new("z").compression(Compression::None));
    store.create_table(&schema).await.expect("create by hand");
    let purchases = Table::<Purchase, _>::new(&store);
    let (opened, warnings) = logged(purchases.create_if_missing()).await;
    assert!(!opened.expect("opens"));
    assert_eq!(
        warnings,
        [format!(
            "table `purchases` records no key layout (hmap did not create it); rows are read as `{LAYOUT}`"
        )]
    );
    let diff = purchases.check_schema().await.expect("opens");
    assert!(diff.is_compatible());
    assert_eq!(
        diff.differences,
        [
            SchemaDifference::ExtraFamily { family: "z".into() },
            SchemaDifference::KeyLayoutNotRecorded {
                declared: LAYOUT.into()
            },
        ]
    );
    purchases.put(&purchase()).await.expect("writes");
}

/// `exists`, `truncate` (rows gone, schema and layout kept) and `drop`.
#[tokio::test]
async fn exists_truncate_drop() {
    let store = hmap_suite::test_store("schema_lifecycle").await;
    let purchases = Table::<Purchase, _>::new(&store);
    assert!(!purchases.exists().await.expect("exists"));
    purchases.create().await.expect("create");
    assert!(purchases.exists().await.expect("exists"));
    purchases.put(&purchase()).await.expect("put");
    assert_eq!(purchases.scan(Query::all()).await.expect("scan").count().await, 1);

    let before = store.describe_table("purchases").await.expect("describe");
    purchases.truncate().await.expect("truncate");
    assert!(purchases.exists().await.expect("exists"));
    assert_eq!(purchases.scan(Query::all()).await.expect("scan").count().await, 0);
    assert_eq!(store.describe_table("purchases").await.expect("describe"), before);
    assert!(purchases.check_schema().await.expect("fits").is_empty());
    purchases.put(&purchase()).await.expect("put after truncate");

    purchases.drop().await.expect("drop");
    assert!(!purchases.exists().await.expect("exists"));
    assert!(matches!(
        purchases.truncate().await,
        Err(Error::Store(StoreError::TableNotFound { .. }))
    ));
    assert!(matches!(
        purchases.drop().await,
        Err(Error::Store(StoreError::TableNotFound { .. }))
    ));
}

/// The row of `purchase()`, shown as errors show it.
fn shown_row(store: &Arc<dyn Store>) -> String {
    let key = Table::<Purchase, _>::new(store).row_key_of(&purchase()).expect("key");
    format!(
        "{} (uid=\"u1\", ts=2026-11-22T10:00:00.000Z, pid=7)",
        hmap::key::Printable(&key)
    )
}

/// A cell that does not decode, and a counter that is not one: the errors
/// show the row's key parts next to its bytes.
#[tokio::test]
async fn row_errors_show_the_decoded_key() {
    let store = hmap_suite::test_store("schema_row_errors").await;
    let purchases = Table::<Purchase, _>::new(&store);
    purchases.create().await.expect("create");
    let key = purchases.row_key_of(&purchase()).expect("key");
    store
        .mutate(
            "purchases",
            &[RowMutation::new(key.clone())
                .put("p", "product", &b"\xff\xfe"[..])
                .put("s", "views", "abc")],
        )
        .await
        .expect("raw write");
    let row = shown_row(&store);

    let err = purchases
        .get(("u1", at("2026-11-22T10:00:00Z"), 7u64))
        .await
        .expect_err("bad utf-8");
    assert!(matches!(err, Error::Decode { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.starts_with(&format!("table `purchases`, row {row}, column p:product: ")),
        "{message}"
    );

    let err = purchases
        .increment(("u1", at("2026-11-22T10:00:00Z"), 7u64), Purchase::VIEWS, 1)
        .await
        .expect_err("not a counter");
    assert!(matches!(err, Error::Store(StoreError::NotACounter { .. })), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "table `purchases`, row {row}, column s:views: \
             the 3-byte value is not a counter (8-byte big-endian i64)"
        )
    );
}
