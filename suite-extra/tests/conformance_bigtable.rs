//! The store conformance suite on `BigtableStore`, against the Bigtable
//! emulator (`scripts/bigtable/emulator start` prints `HMAP_BIGTABLE`).
//! Built with the `bigtable` feature of this package only:
//!
//! ```text
//! export $(scripts/bigtable/emulator start)
//! cargo test -p hmap-suite-extra --features bigtable --test conformance_bigtable -- --include-ignored
//! ```
//!
//! Every case runs. The cases that cannot hold on Bigtable are listed in
//! [`BIGTABLE_DIFFERENCES`], each with why: a case stopped by a feature
//! BigtableStore refuses must fail on that very `StoreError::Unsupported`,
//! first; a case that meets a documented difference of Bigtable's (no delete
//! markers, no split points reported, 4 KiB row keys, ...) must fail, and
//! with no refusal. A listed case that passes fails its test (take it off
//! the list), and every unlisted case must pass as on HBase. Nothing is
//! skipped silently: each listed case prints what stopped it.

mod bigtable_emulator {
    use std::sync::{Arc, Mutex};

    use hmap::schema::TableSchema;
    use hmap::store::bigtable::{BigtableConfig, BigtableStore, unsupported as u};
    use hmap::store::{
        CheckAndMutate, FamilyChange, Get, Increment, Result, RowMutation, RowResult, RowStream, Scan, Store,
        StoreError,
    };
    use hmap_suite::conformance::{CASES, Target};

    /// Why a case cannot hold on Bigtable.
    #[derive(Debug, Clone, Copy)]
    pub(crate) enum Expect {
        /// BigtableStore refuses this feature (its `Unsupported` comes first).
        Refused(&'static str),
        /// Bigtable behaves otherwise than HBase here (docs/bigtable.md): the
        /// reason, and what the case's failure must say (so that it fails for
        /// that reason and no other).
        Differs(&'static str, &'static str),
    }

    use Expect::{Differs, Refused};

    /// The cases that cannot hold on Bigtable, with why. Checked against
    /// the emulator case by case; docs/bigtable.md explains each kind.
    pub(crate) const BIGTABLE_DIFFERENCES: &[(&str, Expect)] = &[
        // Family options Bigtable has no place for.
        ("describe_returns_family_options", Refused(u::MIN_VERSIONS)),
        ("min_versions_outlive_ttl", Refused(u::MIN_VERSIONS)),
        ("min_versions_count_fresh_versions", Refused(u::MIN_VERSIONS)),
        ("min_versions_named_column_keeps_one_expired", Refused(u::MIN_VERSIONS)),
        ("alter_adds_a_family", Refused(u::COMPRESSION)),
        ("alter_modifies_a_family", Refused(u::CACHING)),
        // Deletes Bigtable cannot express (it deletes by time range only,
        // and a family's or a row's cells only all at once).
        ("delete_latest_reveals_previous", Refused(u::DELETE_LATEST)),
        ("delete_latest_of_single_version", Refused(u::DELETE_LATEST)),
        ("two_delete_latest_in_one_mutation", Refused(u::DELETE_LATEST)),
        ("repeated_row_in_one_batch_applies_in_order", Refused(u::DELETE_LATEST)),
        ("surplus_versions_survive_the_mutation", Refused(u::DELETE_LATEST)),
        // Where Bigtable behaves otherwise.
        (
            "delete_masks_later_older_put",
            Differs(
                "no delete markers: a put older than a delete, written after it, is visible on Bigtable",
                "hidden",
            ),
        ),
        (
            "check_and_mutate_put_not_older_than_checked",
            Differs(
                "a put without a timestamp in a check-and-mutate gets the client's clock, \
                 not HBase's max(now, checked cell's timestamp)",
                "right: [Cell { family: b\"b\", qualifier: b\"o\"",
            ),
        ),
        (
            "increment_timestamp_after_current",
            Differs(
                "ReadModifyWriteRow stamps the server's clock in milliseconds, not HBase's max(now, previous + 1): \
                 increments in one millisecond share a version",
                "assertion `left == right` failed",
            ),
        ),
        (
            "row_length_limit",
            Differs(
                "Bigtable's row keys are at most 4 KiB (HBase's 32 KiB): longer ones are a typed InvalidRow",
                "limit on row keys, 4 KiB (4096 bytes)",
            ),
        ),
        // The emulator's limits, not Cloud Bigtable's.
        (
            "scan_reversed",
            Differs(
                "the emulator does not implement reversed ReadRows (UNIMPLEMENTED); Cloud Bigtable does",
                "doesn't support reverse scans",
            ),
        ),
        (
            "scan_reversed_prefix",
            Differs(
                "the emulator does not implement reversed ReadRows (UNIMPLEMENTED); Cloud Bigtable does",
                "doesn't support reverse scans",
            ),
        ),
        (
            "scan_reversed_range",
            Differs(
                "the emulator does not implement reversed ReadRows (UNIMPLEMENTED); Cloud Bigtable does",
                "doesn't support reverse scans",
            ),
        ),
        (
            "scan_limit",
            Differs(
                "reads reversed too: the emulator does not implement reversed ReadRows",
                "doesn't support reverse scans",
            ),
        ),
        (
            "scan_range_start_equals_stop",
            Differs(
                "reads reversed too: the emulator does not implement reversed ReadRows",
                "doesn't support reverse scans",
            ),
        ),
        (
            "scan_batch_sizes_agree",
            Differs(
                "reads reversed too: the emulator does not implement reversed ReadRows",
                "doesn't support reverse scans",
            ),
        ),
    ];

    /// A store that notes every `Unsupported` it returns.
    struct Noted {
        store: BigtableStore,
        refused: Arc<Mutex<Vec<&'static str>>>,
    }

    impl Noted {
        fn note<T>(&self, result: Result<T>) -> Result<T> {
            if let Err(StoreError::Unsupported { feature, .. }) = &result {
                self.refused.lock().unwrap_or_else(|e| e.into_inner()).push(feature);
            }
            result
        }
    }

    #[async_trait::async_trait]
    impl Store for Noted {
        async fn create_table(&self, schema: &TableSchema) -> Result<()> {
            self.note(self.store.create_table(schema).await)
        }
        async fn delete_table(&self, table: &str) -> Result<()> {
            self.note(self.store.delete_table(table).await)
        }
        async fn truncate_table(&self, table: &str) -> Result<()> {
            self.note(self.store.truncate_table(table).await)
        }
        async fn alter_table(&self, table: &str, change: &FamilyChange) -> Result<()> {
            self.note(self.store.alter_table(table, change).await)
        }
        async fn table_exists(&self, table: &str) -> Result<bool> {
            self.note(self.store.table_exists(table).await)
        }
        async fn list_tables(&self) -> Result<Vec<String>> {
            self.note(self.store.list_tables().await)
        }
        async fn describe_table(&self, table: &str) -> Result<TableSchema> {
            self.note(self.store.describe_table(table).await)
        }
        async fn get(&self, table: &str, get: &Get) -> Result<Option<RowResult>> {
            self.note(self.store.get(table, get).await)
        }
        async fn get_many(&self, table: &str, gets: &[Get]) -> Result<Vec<Option<RowResult>>> {
            self.note(self.store.get_many(table, gets).await)
        }
        async fn mutate(&self, table: &str, rows: &[RowMutation]) -> Result<()> {
            self.note(self.store.mutate(table, rows).await)
        }
        async fn scan<'a>(&'a self, table: &str, scan: &Scan) -> Result<RowStream<'a>> {
            self.note(self.store.scan(table, scan).await)
        }
        async fn check_and_mutate(&self, table: &str, op: &CheckAndMutate) -> Result<bool> {
            self.note(self.store.check_and_mutate(table, op).await)
        }
        async fn increment(&self, table: &str, op: &Increment) -> Result<Vec<i64>> {
            self.note(self.store.increment(table, op).await)
        }
        async fn append(&self, table: &str, op: &hmap::store::Append) -> Result<RowResult> {
            self.note(self.store.append(table, op).await)
        }
        fn forget_schema(&self, table: &str) {
            self.store.forget_schema(table)
        }
        fn kept_family_options(&self) -> &'static [hmap::schema::FamilyOption] {
            self.store.kept_family_options()
        }
    }

    /// BigtableStore on the emulator, its refusals noted, and a second
    /// client with a schema cache of its own.
    pub(crate) struct Bigtable {
        store: Noted,
        other: Noted,
        prefix: String,
    }

    impl Bigtable {
        fn refused(&self) -> Vec<&'static str> {
            self.store.refused.lock().unwrap_or_else(|e| e.into_inner()).clone()
        }
    }

    impl Target for Bigtable {
        fn store(&self) -> &dyn Store {
            &self.store
        }

        fn table_prefix(&self) -> &str {
            &self.prefix
        }

        fn other_client(&self) -> Option<&dyn Store> {
            Some(&self.other)
        }
    }

    /// The emulator `HMAP_BIGTABLE` names; panics without one.
    pub(crate) async fn target() -> Bigtable {
        let address = std::env::var("HMAP_BIGTABLE")
            .ok()
            .filter(|a| !a.trim().is_empty())
            .unwrap_or_else(|| {
                panic!(
                    "HMAP_BIGTABLE is not set: this test needs the Bigtable emulator \
                     (export $(scripts/bigtable/emulator start))"
                )
            });
        let connect = || async {
            BigtableStore::connect(BigtableConfig::emulator(address.trim()))
                .await
                .unwrap_or_else(|e| panic!("HMAP_BIGTABLE={address} is set but the emulator does not answer: {e}"))
        };
        let refused = Arc::new(Mutex::new(Vec::new()));
        Bigtable {
            store: Noted {
                store: connect().await,
                refused: Arc::clone(&refused),
            },
            other: Noted {
                store: connect().await,
                refused,
            },
            prefix: hmap_suite::test_table_prefix("bt_conformance_"),
        }
    }

    /// Runs case `name`: as on any backend, or, for a listed case, checks
    /// that it stops as listed, and says so.
    pub(crate) async fn run(
        name: &str,
        case: impl for<'a> FnOnce(&'a dyn Target) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send + 'a>>
        + Send
        + 'static,
    ) {
        let target = Arc::new(target().await);
        let Some(&(_, expect)) = BIGTABLE_DIFFERENCES.iter().find(|(case, _)| *case == name) else {
            return case(&*target).await;
        };
        let running = Arc::clone(&target);
        let outcome = tokio::spawn(async move { case(&*running).await }).await;
        let refused = target.refused();
        let why = match outcome {
            Ok(()) => panic!(
                "{name} passed on Bigtable, though BIGTABLE_DIFFERENCES lists it ({expect:?}): take it off the list"
            ),
            Err(e) => match e.try_into_panic() {
                Ok(payload) => payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default(),
                Err(e) => e.to_string(),
            },
        };
        match expect {
            Refused(feature) => {
                assert_eq!(
                    refused.first().copied(),
                    Some(feature),
                    "{name} failed, but not first on BigtableStore refusing `{feature}` (refusals: {refused:?}): {why}"
                );
                println!("{name}: stopped on Bigtable: BigtableStore cannot express {feature}");
            }
            Differs(reason, evidence) => {
                assert!(
                    refused.is_empty(),
                    "{name} is listed as a difference ({reason}) but BigtableStore refused {refused:?}: {why}"
                );
                assert!(
                    why.contains(evidence),
                    "{name} is listed as a difference ({reason}) but failed otherwise (no `{evidence}`): {why}"
                );
                println!("{name}: differs on Bigtable: {reason} (the case failed with: {why})");
            }
        }
    }

    macro_rules! bigtable_cases {
        ($($case:ident,)*) => {$(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            #[ignore = "needs a real Bigtable emulator: scripts/bigtable/emulator start, then HMAP_BIGTABLE"]
            async fn $case() {
                run(stringify!($case), |t| ::std::boxed::Box::pin(hmap_suite::conformance::$case(t))).await;
            }
        )*};
    }

    hmap_suite::for_each_case!(bigtable_cases);

    /// Needs no emulator: every listed case is a case of the suite, once,
    /// with a reason.
    #[test]
    fn listed_cases_are_cases_of_the_suite() {
        for (i, (case, expect)) in BIGTABLE_DIFFERENCES.iter().enumerate() {
            assert!(
                CASES.contains(case),
                "BIGTABLE_DIFFERENCES lists `{case}`, which is no case"
            );
            assert!(
                BIGTABLE_DIFFERENCES[..i].iter().all(|(c, _)| c != case),
                "`{case}` listed twice"
            );
            match expect {
                Refused(f) | Differs(f, _) => assert!(!f.is_empty()),
            }
        }
    }
}
