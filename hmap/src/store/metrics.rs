//! hmap's metrics, through the [`metrics`](https://docs.rs/metrics) crate's
//! facade (hmap's feature `metrics`, off by default): install any recorder
//! (`metrics-exporter-prometheus`, a statsd one, one of your own) and every
//! store reports to it. Without the feature, the calls below compile to
//! nothing; with it and no recorder installed, each costs a look at the
//! recorder and no allocation on the paths every call takes.
//!
//! | name | type | labels | meaning |
//! |---|---|---|---|
//! | [`hmap_calls_total`](CALLS) | counter | `backend`, `operation` | store calls made, however they ended |
//! | [`hmap_errors_total`](ERRORS) | counter | `backend`, `operation`, `kind` | store calls that failed, by the error's kind |
//! | [`hmap_call_duration_seconds`](CALL_DURATION) | histogram | `backend`, `operation` | how long each store call took, retries included |
//! | [`hmap_retries_total`](RETRIES) | counter | `backend`, `reason` | tries made again inside a call's deadline |
//! | [`hmap_pool_wait_seconds`](POOL_WAIT) | histogram | `backend` | how long a call waited for a pooled connection (Thrift) |
//! | [`hmap_region_cache_misses_total`](REGION_CACHE_MISSES) | counter | — | NativeStore region lookups not answered from its cache (a read of `hbase:meta`) |
//! | [`hmap_region_relocations_total`](REGION_RELOCATIONS) | counter | — | NativeStore cached regions dropped because the region was not where the cache said |
//! | [`hmap_bytes_sent_total`](BYTES_SENT) | counter | `backend` | bytes of requests written to servers |
//! | [`hmap_bytes_received_total`](BYTES_RECEIVED) | counter | `backend` | bytes of replies read from servers |
//!
//! `backend` is `memory`, `thrift`, `thrift1` or `native`; `operation` is
//! the [`Store`](super::Store) method (`get`, `get_many`, `mutate`, `scan`,
//! `check_and_mutate`, `increment`, `load`, `create_table`, ...); `kind` is
//! the [`StoreError`] variant in snake case (`table_not_found`,
//! `connection`, `timeout`, `server`, ...). No metric is labelled with a
//! table or a row: their number has no bound (the `hmap.store` span carries
//! the table). The docs' `observability.md` says more.
//!
//! ```
//! # #[cfg(feature = "metrics")] {
//! // Once, at start-up, after installing a recorder: names the units and
//! // meanings for exporters that show them.
//! hmap::store::metrics::describe();
//! # }
//! assert_eq!(hmap::store::metrics::CALLS, "hmap_calls_total");
//! ```

use std::time::Duration;

use super::StoreError;

/// Counter: store calls made, labelled `backend`, `operation`.
pub const CALLS: &str = "hmap_calls_total";
/// Counter: store calls that failed, labelled `backend`, `operation`, `kind`.
pub const ERRORS: &str = "hmap_errors_total";
/// Histogram, seconds: each store call's duration, labelled `backend`, `operation`.
pub const CALL_DURATION: &str = "hmap_call_duration_seconds";
/// Counter: tries made again within a call's deadline, labelled `backend`, `reason`.
pub const RETRIES: &str = "hmap_retries_total";
/// Histogram, seconds: the wait for a pooled connection, labelled `backend`.
pub const POOL_WAIT: &str = "hmap_pool_wait_seconds";
/// Counter: NativeStore region lookups its cache could not answer.
pub const REGION_CACHE_MISSES: &str = "hmap_region_cache_misses_total";
/// Counter: NativeStore cached regions found stale and dropped.
pub const REGION_RELOCATIONS: &str = "hmap_region_relocations_total";
/// Counter: bytes written to servers, labelled `backend`.
pub const BYTES_SENT: &str = "hmap_bytes_sent_total";
/// Counter: bytes read from servers, labelled `backend`.
pub const BYTES_RECEIVED: &str = "hmap_bytes_received_total";

/// Gives the installed recorder each metric's unit and meaning (exporters
/// show them as `# HELP` lines). Optional: the metrics are reported
/// without it.
#[cfg(feature = "metrics")]
pub fn describe() {
    use ::metrics::{Unit, describe_counter, describe_histogram};
    describe_counter!(CALLS, Unit::Count, "hmap store calls made");
    describe_counter!(ERRORS, Unit::Count, "hmap store calls that failed, by error kind");
    describe_histogram!(
        CALL_DURATION,
        Unit::Seconds,
        "hmap store call duration, retries included"
    );
    describe_counter!(RETRIES, Unit::Count, "hmap tries made again within a call's deadline");
    describe_histogram!(POOL_WAIT, Unit::Seconds, "hmap wait for a pooled connection");
    describe_counter!(REGION_CACHE_MISSES, Unit::Count, "hmap NativeStore region cache misses");
    describe_counter!(
        REGION_RELOCATIONS,
        Unit::Count,
        "hmap NativeStore stale regions dropped"
    );
    describe_counter!(BYTES_SENT, Unit::Bytes, "hmap bytes written to servers");
    describe_counter!(BYTES_RECEIVED, Unit::Bytes, "hmap bytes read from servers");
}

/// Whether this build reports metrics (feature `metrics`).
pub(crate) const ENABLED: bool = cfg!(feature = "metrics");

/// The `kind` label of an error: its variant, in snake case.
#[cfg(feature = "metrics")]
pub(crate) fn error_kind(error: &StoreError) -> &'static str {
    match error {
        StoreError::TableNotFound { .. } => "table_not_found",
        StoreError::TableExists { .. } => "table_exists",
        StoreError::NoSuchFamily { .. } => "no_such_family",
        StoreError::InvalidSchema { .. } => "invalid_schema",
        StoreError::InvalidRow { .. } => "invalid_row",
        StoreError::CellTooLarge { .. } => "cell_too_large",
        StoreError::NegativeTimestamp { .. } => "negative_timestamp",
        StoreError::NotACounter { .. } => "not_a_counter",
        StoreError::InvalidRequest { .. } => "invalid_request",
        StoreError::Unsupported { .. } => "unsupported",
        StoreError::Connection { .. } => "connection",
        StoreError::Timeout { .. } => "timeout",
        StoreError::Unavailable { .. } => "unavailable",
        StoreError::Server { .. } => "server",
        StoreError::Protocol { .. } => "protocol",
        StoreError::Interrupted { .. } => "interrupted",
        StoreError::BlockingInRuntime => "blocking_in_runtime",
    }
}

/// A started clock for a duration metric; nothing without the feature.
/// (Only the Thrift pool times a wait of its own.)
#[cfg(feature = "thrift")]
#[derive(Clone, Copy)]
pub(crate) struct Timer {
    #[cfg(feature = "metrics")]
    started: std::time::Instant,
}

#[cfg(feature = "thrift")]
impl Timer {
    #[inline]
    pub(crate) fn start() -> Self {
        Timer {
            #[cfg(feature = "metrics")]
            started: std::time::Instant::now(),
        }
    }

    /// The time since [`start`](Self::start).
    #[cfg(feature = "metrics")]
    #[inline]
    pub(crate) fn elapsed(self) -> Duration {
        self.started.elapsed()
    }
}

#[cfg(feature = "metrics")]
pub(crate) use on::*;

#[cfg(not(feature = "metrics"))]
pub(crate) use off::*;

/// Without the feature: nothing.
#[cfg(not(feature = "metrics"))]
mod off {
    use super::*;

    #[inline(always)]
    pub(crate) fn call(_: &'static str, _: &'static str, _: Duration, _: Option<&StoreError>) {}
    #[cfg(any(feature = "thrift", feature = "native"))]
    #[inline(always)]
    pub(crate) fn retry(_: &'static str, _: &'static str) {}
    #[cfg(feature = "thrift")]
    #[inline(always)]
    pub(crate) fn pool_wait(_: &'static str, _: Timer) {}
    #[cfg(feature = "native")]
    #[inline(always)]
    pub(crate) fn region_cache_miss() {}
    #[cfg(feature = "native")]
    #[inline(always)]
    pub(crate) fn region_relocation() {}
    #[cfg(any(feature = "thrift", feature = "native"))]
    #[inline(always)]
    pub(crate) fn bytes_sent(_: &'static str, _: usize) {}
    #[cfg(any(feature = "thrift", feature = "native"))]
    #[inline(always)]
    pub(crate) fn bytes_received(_: &'static str, _: usize) {}
}

/// With the feature: through the `metrics` facade. The keys of the metrics
/// every call reports are built once and kept (`Key`s of `'static` labels),
/// so that a call allocates nothing; the rarer ones (errors, retries) build
/// theirs when they happen.
#[cfg(feature = "metrics")]
mod on {
    use std::sync::OnceLock;

    use ::metrics::{Key, Label, Level, Metadata, with_recorder};

    use super::*;

    static METADATA: Metadata<'static> = Metadata::new("hmap", Level::INFO, Some(module_path!()));

    /// The backends, in the order of the key tables.
    const BACKENDS: [&str; 4] = ["memory", "thrift", "thrift1", "native"];
    /// The store operations `traced` names, in the order of the key tables.
    const OPERATIONS: [&str; 14] = [
        "get",
        "get_many",
        "mutate",
        "scan",
        "check_and_mutate",
        "increment",
        "load",
        "create_table",
        "delete_table",
        "truncate_table",
        "alter_table",
        "table_exists",
        "list_tables",
        "describe_table",
    ];
    const SLOTS: usize = BACKENDS.len() * OPERATIONS.len();

    static CALL_KEYS: [OnceLock<Key>; SLOTS] = [const { OnceLock::new() }; SLOTS];
    static DURATION_KEYS: [OnceLock<Key>; SLOTS] = [const { OnceLock::new() }; SLOTS];

    /// A backend's place in [`BACKENDS`].
    fn backend_index(backend: &str) -> Option<usize> {
        match backend {
            "memory" => Some(0),
            "thrift" => Some(1),
            "thrift1" => Some(2),
            "native" => Some(3),
            _ => None,
        }
    }

    /// The place of a backend and operation in the key tables: a `match`,
    /// which compiles to a switch on the length and one comparison, where a
    /// search of the tables would compare up to 18 strings per call.
    fn slot(backend: &str, operation: &str) -> Option<usize> {
        let b = backend_index(backend)?;
        let o = match operation {
            "get" => 0,
            "get_many" => 1,
            "mutate" => 2,
            "scan" => 3,
            "check_and_mutate" => 4,
            "increment" => 5,
            "load" => 6,
            "create_table" => 7,
            "delete_table" => 8,
            "truncate_table" => 9,
            "alter_table" => 10,
            "table_exists" => 11,
            "list_tables" => 12,
            "describe_table" => 13,
            _ => return None,
        };
        Some(b * OPERATIONS.len() + o)
    }

    fn labels(backend: &'static str, operation: &'static str) -> Vec<Label> {
        vec![
            Label::from_static_parts("backend", backend),
            Label::from_static_parts("operation", operation),
        ]
    }

    #[cfg(any(feature = "thrift", feature = "native"))]
    /// The `backend` label of each backend, by its place in [`BACKENDS`].
    static BACKEND_LABELS: [[Label; 1]; 4] = [
        [Label::from_static_parts("backend", BACKENDS[0])],
        [Label::from_static_parts("backend", BACKENDS[1])],
        [Label::from_static_parts("backend", BACKENDS[2])],
        [Label::from_static_parts("backend", BACKENDS[3])],
    ];

    /// The keys of a metric labelled by backend alone, one per backend.
    #[cfg(any(feature = "thrift", feature = "native"))]
    macro_rules! backend_keys {
        ($name:expr) => {
            [
                Key::from_static_parts($name, &BACKEND_LABELS[0]),
                Key::from_static_parts($name, &BACKEND_LABELS[1]),
                Key::from_static_parts($name, &BACKEND_LABELS[2]),
                Key::from_static_parts($name, &BACKEND_LABELS[3]),
            ]
        };
    }
    #[cfg(any(feature = "thrift", feature = "native"))]
    static BYTES_SENT_KEYS: [Key; 4] = backend_keys!(BYTES_SENT);
    #[cfg(any(feature = "thrift", feature = "native"))]
    static BYTES_RECEIVED_KEYS: [Key; 4] = backend_keys!(BYTES_RECEIVED);
    #[cfg(feature = "thrift")]
    static POOL_WAIT_KEYS: [Key; 4] = backend_keys!(POOL_WAIT);
    #[cfg(feature = "native")]
    static CACHE_MISS_KEY: Key = Key::from_static_name(REGION_CACHE_MISSES);
    #[cfg(feature = "native")]
    static RELOCATION_KEY: Key = Key::from_static_name(REGION_RELOCATIONS);

    #[cfg(any(feature = "thrift", feature = "native"))]
    fn backend_key(keys: &'static [Key; 4], name: &'static str, backend: &'static str, use_key: impl FnOnce(&Key)) {
        match backend_index(backend) {
            Some(b) => use_key(&keys[b]),
            None => use_key(&Key::from_parts(
                name,
                vec![Label::from_static_parts("backend", backend)],
            )),
        }
    }

    /// One store call: counted, timed, and its error counted by kind.
    pub(crate) fn call(backend: &'static str, operation: &'static str, elapsed: Duration, error: Option<&StoreError>) {
        let seconds = elapsed.as_secs_f64();
        with_recorder(|recorder| {
            match slot(backend, operation) {
                Some(i) => {
                    let build = |name| move || Key::from_parts(name, labels(backend, operation));
                    let calls = CALL_KEYS[i].get_or_init(build(CALLS));
                    recorder.register_counter(calls, &METADATA).increment(1);
                    let durations = DURATION_KEYS[i].get_or_init(build(CALL_DURATION));
                    recorder.register_histogram(durations, &METADATA).record(seconds);
                }
                // A backend or operation the tables lack: its keys built now.
                None => {
                    let calls = Key::from_parts(CALLS, labels(backend, operation));
                    recorder.register_counter(&calls, &METADATA).increment(1);
                    let durations = Key::from_parts(CALL_DURATION, labels(backend, operation));
                    recorder.register_histogram(&durations, &METADATA).record(seconds);
                }
            }
            if let Some(error) = error {
                let mut labels = labels(backend, operation);
                labels.push(Label::from_static_parts("kind", error_kind(error)));
                recorder
                    .register_counter(&Key::from_parts(ERRORS, labels), &METADATA)
                    .increment(1);
            }
        });
    }

    #[cfg(test)]
    #[test]
    fn the_slots_follow_the_tables() {
        for (b, backend) in BACKENDS.iter().enumerate() {
            assert_eq!(backend_index(backend), Some(b));
            for (o, operation) in OPERATIONS.iter().enumerate() {
                assert_eq!(
                    slot(backend, operation),
                    Some(b * OPERATIONS.len() + o),
                    "{backend} {operation}"
                );
            }
        }
        assert_eq!(slot("memory", "no_such_call"), None);
        assert_eq!(slot("other", "get"), None);
    }

    #[cfg(any(feature = "thrift", feature = "native"))]
    /// One try made again, and why (`region_moved`, `server_busy`, ...).
    pub(crate) fn retry(backend: &'static str, reason: &'static str) {
        let key = Key::from_parts(
            RETRIES,
            vec![
                Label::from_static_parts("backend", backend),
                Label::from_static_parts("reason", reason),
            ],
        );
        with_recorder(|recorder| recorder.register_counter(&key, &METADATA).increment(1));
    }

    #[cfg(feature = "thrift")]
    /// A wait for a pooled connection, since `timer` started.
    pub(crate) fn pool_wait(backend: &'static str, timer: Timer) {
        let waited = timer.elapsed().as_secs_f64();
        backend_key(&POOL_WAIT_KEYS, POOL_WAIT, backend, |key| {
            with_recorder(|recorder| recorder.register_histogram(key, &METADATA).record(waited));
        });
    }

    /// A region lookup the cache could not answer.
    #[cfg(feature = "native")]
    pub(crate) fn region_cache_miss() {
        with_recorder(|recorder| recorder.register_counter(&CACHE_MISS_KEY, &METADATA).increment(1));
    }

    /// A cached region found stale and dropped.
    #[cfg(feature = "native")]
    pub(crate) fn region_relocation() {
        with_recorder(|recorder| recorder.register_counter(&RELOCATION_KEY, &METADATA).increment(1));
    }

    #[cfg(any(feature = "thrift", feature = "native"))]
    /// `bytes` written to a server.
    pub(crate) fn bytes_sent(backend: &'static str, bytes: usize) {
        backend_key(&BYTES_SENT_KEYS, BYTES_SENT, backend, |key| {
            with_recorder(|recorder| {
                recorder
                    .register_counter(key, &METADATA)
                    .increment(u64::try_from(bytes).unwrap_or(u64::MAX))
            });
        });
    }

    #[cfg(any(feature = "thrift", feature = "native"))]
    /// `bytes` read from a server.
    pub(crate) fn bytes_received(backend: &'static str, bytes: usize) {
        backend_key(&BYTES_RECEIVED_KEYS, BYTES_RECEIVED, backend, |key| {
            with_recorder(|recorder| {
                recorder
                    .register_counter(key, &METADATA)
                    .increment(u64::try_from(bytes).unwrap_or(u64::MAX))
            });
        });
    }
}

/// A recorder for tests: keeps what each metric was given, by name and
/// labels, for the thread it is set on (`metrics::set_default_local_recorder`;
/// a current-thread runtime runs the spawned tasks there too).
#[cfg(all(test, feature = "metrics"))]
pub(crate) mod testing {
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex, PoisonError};

    use ::metrics::{
        Counter, CounterFn, Gauge, Histogram, HistogramFn, Key, KeyName, Metadata, Recorder, SharedString, Unit,
    };

    /// A metric's name and labels (sorted).
    type Id = (String, Vec<(String, String)>);

    #[derive(Debug, Default)]
    struct Values {
        counters: BTreeMap<Id, u64>,
        histograms: BTreeMap<Id, Vec<f64>>,
    }

    /// What the metrics were given.
    #[derive(Clone, Debug, Default)]
    pub(crate) struct Captured(Arc<Mutex<Values>>);

    struct Handle {
        id: Id,
        values: Arc<Mutex<Values>>,
    }

    impl CounterFn for Handle {
        fn increment(&self, value: u64) {
            let mut values = self.values.lock().unwrap_or_else(PoisonError::into_inner);
            *values.counters.entry(self.id.clone()).or_default() += value;
        }
        fn absolute(&self, value: u64) {
            let mut values = self.values.lock().unwrap_or_else(PoisonError::into_inner);
            values.counters.insert(self.id.clone(), value);
        }
    }

    impl HistogramFn for Handle {
        fn record(&self, value: f64) {
            let mut values = self.values.lock().unwrap_or_else(PoisonError::into_inner);
            values.histograms.entry(self.id.clone()).or_default().push(value);
        }
    }

    fn id(name: &str, labels: &[(&str, &str)]) -> Id {
        let mut labels: Vec<(String, String)> = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        labels.sort();
        (name.to_string(), labels)
    }

    impl Captured {
        fn handle(&self, key: &Key) -> Arc<Handle> {
            let labels: Vec<(&str, &str)> = key.labels().map(|l| (l.key(), l.value())).collect();
            Arc::new(Handle {
                id: id(key.name(), &labels),
                values: self.0.clone(),
            })
        }

        /// A counter's total (0 if it never counted).
        pub(crate) fn counter(&self, name: &str, labels: &[(&str, &str)]) -> u64 {
            let values = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            values.counters.get(&id(name, labels)).copied().unwrap_or(0)
        }

        /// A histogram's values.
        pub(crate) fn histogram(&self, name: &str, labels: &[(&str, &str)]) -> Vec<f64> {
            let values = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            values.histograms.get(&id(name, labels)).cloned().unwrap_or_default()
        }

        /// Every metric (name and labels) reported at least once.
        pub(crate) fn reported(&self) -> Vec<Id> {
            let values = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            values
                .counters
                .keys()
                .chain(values.histograms.keys())
                .cloned()
                .collect()
        }
    }

    impl Recorder for Captured {
        fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
        fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
            Counter::from_arc(self.handle(key))
        }
        fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
            Gauge::noop()
        }
        fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
            Histogram::from_arc(self.handle(key))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names and labels this module's table and docs/observability.md
    /// document are the ones reported.
    #[test]
    fn the_documented_names_are_the_reported_ones() {
        let guide = include_str!("../../docs/observability.md");
        let module = include_str!("metrics.rs");
        for (name, labels) in [
            (CALLS, "`backend`, `operation`"),
            (ERRORS, "`backend`, `operation`, `kind`"),
            (CALL_DURATION, "`backend`, `operation`"),
            (RETRIES, "`backend`, `reason`"),
            (POOL_WAIT, "`backend`"),
            (REGION_CACHE_MISSES, "—"),
            (REGION_RELOCATIONS, "—"),
            (BYTES_SENT, "`backend`"),
            (BYTES_RECEIVED, "`backend`"),
        ] {
            for (doc, text) in [("docs/observability.md", guide), ("store/metrics.rs", module)] {
                let row = text
                    .lines()
                    .map(|l| l.trim_start_matches("//! "))
                    .find(|l| l.starts_with(&format!("| [`{name}`]")) || l.starts_with(&format!("| `{name}` |")))
                    .unwrap_or_else(|| panic!("{doc} has no table row for {name}"));
                assert!(row.contains(&format!("| {labels} |")), "{doc}: {name}'s labels: {row}");
            }
        }
    }

    #[cfg(feature = "metrics")]
    #[test]
    fn every_error_has_a_kind_label() {
        let kinds = [
            StoreError::TableNotFound { table: "t".into() },
            StoreError::BlockingInRuntime,
            StoreError::Timeout {
                table: "t".into(),
                operation: "get",
                elapsed: Duration::from_secs(1),
                detail: String::new(),
            },
        ]
        .iter()
        .map(error_kind)
        .collect::<Vec<_>>();
        assert_eq!(kinds, ["table_not_found", "blocking_in_runtime", "timeout"]);
    }

    /// MemoryStore's calls, through the `traced` every backend shares:
    /// counted and timed per backend and operation, errors by kind.
    #[cfg(feature = "metrics")]
    #[tokio::test]
    async fn a_memory_store_reports_its_calls() {
        use crate::schema::{FamilySchema, TableSchema};
        use crate::store::{Get, MemoryStore, RowMutation, Store};

        let captured = testing::Captured::default();
        let _recorder = ::metrics::set_default_local_recorder(&captured);
        let store = MemoryStore::new();
        store
            .create_table(&TableSchema::new("t").family(FamilySchema::new("f")))
            .await
            .expect("created");
        store
            .mutate("t", &[RowMutation::new("r").put("f", "q", "v")])
            .await
            .expect("put");
        store.get("t", &Get::new("r")).await.expect("got");
        store.get("t", &Get::new("s")).await.expect("got none");
        let missing = store.get("nope", &Get::new("r")).await;
        assert!(matches!(missing, Err(StoreError::TableNotFound { .. })), "{missing:?}");

        let get = [("backend", "memory"), ("operation", "get")];
        assert_eq!(captured.counter(CALLS, &get), 3);
        assert_eq!(
            captured.counter(CALLS, &[("backend", "memory"), ("operation", "mutate")]),
            1
        );
        assert_eq!(
            captured.counter(CALLS, &[("backend", "memory"), ("operation", "create_table")]),
            1
        );
        let durations = captured.histogram(CALL_DURATION, &get);
        assert_eq!(durations.len(), 3);
        assert!(durations.iter().all(|d| (0.0..10.0).contains(d)), "{durations:?}");
        assert_eq!(
            captured.counter(
                ERRORS,
                &[("backend", "memory"), ("operation", "get"), ("kind", "table_not_found")]
            ),
            1
        );
        // Nothing else: no error for the calls that worked, no bytes for
        // a store in memory.
        let names: std::collections::BTreeSet<String> = captured.reported().into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [CALLS, CALL_DURATION, ERRORS].into_iter().map(String::from).collect()
        );
    }
}
