//! Helpers shared by hmap's examples, integration tests and benchmarks.
//!
//! Nothing here is part of hmap's API: the library is the `hmap` crate.

pub mod conformance;

use std::error::Error;
use std::io::Write;
use std::sync::Arc;

use hmap::store::{Backend, MemoryStore, Store};

/// What an example's `run` returns.
pub type ExampleResult = Result<(), Box<dyn Error>>;

/// The store an example runs on: in memory, unless `HMAP_THRIFT=host:port`
/// names an HBase Thrift2 gateway or, without it, `HMAP_NATIVE=host:port`
/// names an HBase master (or region server) that hmap talks to natively
/// (`NativeStore`), or, without either, `HMAP_ZOOKEEPER=host:port` names
/// the ZooKeeper quorum `NativeStore` finds HBase through, or, without
/// any of them, `HMAP_BIGTABLE=host:port` names the Bigtable emulator
/// (`BigtableStore`, with this package's feature `bigtable`);
/// `HMAP_TABLE_PREFIX` then prefixes its table names. Each variable means
/// what [`hmap::store::backend`] says, as it does to `hmap-cli`.
pub async fn store_from_env() -> Result<Arc<dyn Store>, String> {
    let prefix = std::env::var("HMAP_TABLE_PREFIX").unwrap_or_default();
    env_store(&prefix).await
}

/// The variables an example or a test takes its store from, first set
/// first.
const STORE_VARIABLES: [&str; 4] = ["HMAP_THRIFT", "HMAP_NATIVE", "HMAP_ZOOKEEPER", "HMAP_BIGTABLE"];

/// The store the environment names (see [`store_from_env`]), its tables
/// named with `prefix`: `HMAP_THRIFT` first, then `HMAP_NATIVE`, then
/// `HMAP_ZOOKEEPER`, then `HMAP_BIGTABLE`, else memory.
async fn env_store(prefix: &str) -> Result<Arc<dyn Store>, String> {
    for variable in STORE_VARIABLES {
        let backend = Backend::from_env_var(variable).map_err(|e| match variable {
            "HMAP_BIGTABLE" if !cfg!(feature = "bigtable") => format!(
                "{e}: the examples and tests reach Bigtable with this package's feature `bigtable` \
                 (cargo run --features bigtable --example weibo)"
            ),
            _ => e.to_string(),
        })?;
        if let Some(backend) = backend {
            return connect(variable, backend, prefix).await;
        }
    }
    Ok(Arc::new(MemoryStore::new()))
}

/// Connects to `backend`, named by `variable`, its tables named with
/// `prefix`; an error says how to start HBase or run in memory.
async fn connect(variable: &str, mut backend: Backend, prefix: &str) -> Result<Arc<dyn Store>, String> {
    let address = backend.address();
    backend.set_table_prefix(prefix);
    // The examples declare HBase's storage options (compression, bloom
    // filters), which Bigtable has no setting for: on Bigtable they run
    // as Google's HBase adapter runs them, without.
    #[cfg(feature = "bigtable")]
    if let Backend::Bigtable(config) = &mut backend {
        config.ignore_storage_options = true;
    }
    backend.connect().await.map_err(|e| {
        let start = match variable {
            "HMAP_NATIVE" => "scripts/hbase/hbase start (scripts/hbase/hbase address prints HMAP_NATIVE)",
            "HMAP_ZOOKEEPER" => "scripts/hbase/hbase start (which prints HMAP_ZOOKEEPER)",
            "HMAP_BIGTABLE" => "scripts/bigtable/emulator start (which prints HMAP_BIGTABLE)",
            _ => "scripts/hbase/hbase start",
        };
        let what = if variable == "HMAP_BIGTABLE" {
            "the Bigtable emulator"
        } else {
            "HBase"
        };
        format!("{variable}={address}: {e}\nstart {what} with {start}, or unset {variable} to run in memory")
    })
}

/// The store for a Thrift gateway address, its tables named with `prefix`,
/// or in memory without an address. The gateway must answer.
pub async fn store_for(thrift: Option<&str>, prefix: &str) -> Result<Arc<dyn Store>, String> {
    match thrift.map(str::trim) {
        Some(address) if !address.is_empty() => connect("HMAP_THRIFT", Backend::thrift(address), prefix).await,
        _ => Ok(Arc::new(MemoryStore::new())),
    }
}

/// A `NativeStore` bootstrapped from `addresses` (`host:port`, several
/// separated by commas), its tables named with `prefix`. HBase must answer.
pub async fn native_store_for(addresses: &str, prefix: &str) -> Result<Arc<dyn Store>, String> {
    connect("HMAP_NATIVE", Backend::native(addresses), prefix).await
}

/// A `NativeStore` that finds HBase through the ZooKeeper `quorum`
/// (`host:port`, several separated by commas; parent znode `/hbase`), its
/// tables named with `prefix`. HBase must answer.
pub async fn zookeeper_store_for(quorum: &str, prefix: &str) -> Result<Arc<dyn Store>, String> {
    connect("HMAP_ZOOKEEPER", Backend::zookeeper(quorum), prefix).await
}

/// The store the environment variable `variable` names (one of
/// `HMAP_THRIFT`, `HMAP_NATIVE`, `HMAP_ZOOKEEPER`, `HMAP_BIGTABLE`), its
/// tables named with `prefix`; an error when it is unset or does not
/// answer.
pub async fn store_named(variable: &str, prefix: &str) -> Result<Arc<dyn Store>, String> {
    match Backend::from_env_var(variable).map_err(|e| e.to_string())? {
        Some(backend) => connect(variable, backend, prefix).await,
        None => Err(format!("{variable} is not set")),
    }
}

/// What a test marked `#[ignore = "needs a real HBase: ..."]` reads from the
/// environment: the value of `variable` (for example `HMAP_THRIFT`, as
/// `scripts/hbase/hbase start` prints it). Panics when it is unset, so that
/// `cargo test -- --include-ignored` without an HBase fails loudly instead of
/// reporting a test that ran nothing as passed.
pub fn required_env(variable: &str) -> String {
    match std::env::var(variable) {
        Ok(value) if !value.trim().is_empty() => value.trim().to_string(),
        _ => panic!(
            "{variable} is not set: this test needs a real HBase \
             (eval $(scripts/hbase/hbase start) sets HMAP_THRIFT, HMAP_THRIFT1 and the other gateways' addresses, \
             eval $(scripts/hbase/hbase address) sets HMAP_NATIVE and HMAP_ZOOKEEPER)"
        ),
    }
}

/// The prefix that keeps one test run's tables apart from another's on a
/// shared HBase: `HMAP_TEST_PREFIX` (empty by default) followed by `name`.
pub fn test_table_prefix(name: &str) -> String {
    format!("{}{name}", std::env::var("HMAP_TEST_PREFIX").unwrap_or_default())
}

/// The store an integration test runs on: the one the environment names
/// (`HMAP_THRIFT`, else `HMAP_NATIVE`, else `HMAP_ZOOKEEPER`, else memory; see
/// [`store_from_env`]), with tables prefixed by `test` (after
/// `HMAP_TEST_PREFIX`) so that tests running side by side on one HBase do
/// not meet. Panics if HBase is named but down. Tables left under the
/// prefix by an earlier run are deleted first.
pub async fn test_store(test: &str) -> Arc<dyn Store> {
    let prefix = test_table_prefix(&format!("hmap_test_{test}__"));
    let store = env_store(&prefix).await.unwrap_or_else(|e| panic!("{e}"));
    for table in store.list_tables().await.expect("list the test's tables") {
        store
            .delete_table(&table)
            .await
            .expect("delete a table left by an earlier run");
    }
    store
}

/// An example's `main`: runs it on the store from the environment, writing
/// to stdout; on error, prints it and exits with status 1 (2 if the store
/// cannot be had).
pub fn run_example(run: impl FnOnce(Arc<dyn Store>, &mut dyn Write) -> ExampleResult) {
    log_spans();
    let store = match hmap::blocking::try_block_on(store_from_env())
        .map_err(|e| e.to_string())
        .and_then(|s| s)
    {
        Ok(store) => store,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if let Err(e) = run(store, &mut out) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// With `RUST_LOG` set (`RUST_LOG=hmap=debug`: a line per store call;
/// `hmap=trace`: and per Thrift call), prints hmap's spans to stderr as they
/// close, with their fields and timings.
///
/// `RUST_LOG` is read as `target=level` directives separated by commas
/// (`tracing_subscriber::filter::Targets`), not with `EnvFilter`'s span
/// and field filters: those need the regex crates, which would double the
/// first build of every example.
fn log_spans() {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let Some(directives) = std::env::var_os("RUST_LOG") else {
        return;
    };
    let directives = directives.to_string_lossy();
    let targets: tracing_subscriber::filter::Targets = match directives.parse() {
        Ok(targets) => targets,
        Err(e) => {
            eprintln!("RUST_LOG={directives}: {e}; expected target=level directives, such as hmap=debug");
            return;
        }
    };
    let spans = tracing_subscriber::fmt::layer()
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_writer(std::io::stderr);
    let _ = tracing_subscriber::registry().with(spans).with(targets).try_init();
}

/// [`run_example`] for an async example: runs it on a tokio runtime.
pub fn run_async_example(run: impl for<'a> AsyncFnOnce(Arc<dyn Store>, &'a mut dyn Write) -> ExampleResult) {
    log_spans();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: no tokio runtime: {e}");
            std::process::exit(1);
        }
    };
    let store = match runtime.block_on(store_from_env()) {
        Ok(store) => store,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(2);
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if let Err(e) = runtime.block_on(run(store, &mut out)) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// A small seeded generator (xorshift64*), so that examples make the same
/// data on every run without a dependency.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15 | 1)
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}
