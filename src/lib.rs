//! Helpers shared by hmap's examples, integration tests and benchmarks.
//!
//! Nothing here is part of hmap's API: the library is the `hmap` crate.

pub mod conformance;

use std::error::Error;
use std::io::Write;
use std::sync::Arc;

use hmap::store::{MemoryStore, Store};

/// What an example's `run` returns.
pub type ExampleResult = Result<(), Box<dyn Error>>;

/// The store an example runs on: in memory, unless `HMAP_THRIFT=host:port`
/// names an HBase Thrift2 gateway.
pub fn store_from_env() -> Result<Arc<dyn Store>, String> {
    store_for(std::env::var("HMAP_THRIFT").ok().as_deref())
}

/// The store for a Thrift gateway address, or in memory without one.
pub fn store_for(thrift: Option<&str>) -> Result<Arc<dyn Store>, String> {
    match thrift.map(str::trim) {
        Some(address) if !address.is_empty() => Err(format!(
            "HMAP_THRIFT={address} asks for a real HBase, but this build has no Thrift backend yet; \
             unset HMAP_THRIFT to run on the in-memory store"
        )),
        _ => Ok(Arc::new(MemoryStore::new())),
    }
}

/// An example's `main`: runs it on the store from the environment, writing
/// to stdout; on error, prints it and exits with status 1 (2 if the store
/// cannot be had).
pub fn run_example(run: impl FnOnce(Arc<dyn Store>, &mut dyn Write) -> ExampleResult) {
    let store = match store_from_env() {
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
