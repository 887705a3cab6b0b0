//! The store conformance suite against `MemoryStore`: one test per case.

use hmap::store::{MemoryStore, Store};
use hmap_suite::conformance::{self, Target};

struct Memory(MemoryStore);

impl Target for Memory {
    fn store(&self) -> &dyn Store {
        &self.0
    }

    fn open_scanners(&self) -> Option<usize> {
        Some(self.0.open_scanners())
    }
}

macro_rules! memory_cases {
    ($($case:ident,)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $case() {
            conformance::$case(&Memory(MemoryStore::new())).await;
        }
    )*};
}

hmap_suite::for_each_case!(memory_cases);

/// Every case the suite defines is in `for_each_case!`, in order: a case
/// left out of the list would silently never run.
#[test]
fn every_case_is_listed() {
    // The cases of `src/conformance.rs`, then those of its modules, in
    // the order `for_each_case!` lists them.
    let source = [
        include_str!("../../src/conformance.rs"),
        include_str!("../../src/conformance/filters.rs"),
        include_str!("../../src/conformance/conditional.rs"),
        include_str!("../../src/conformance/batch.rs"),
    ]
    .concat();
    let defined: Vec<&str> = source
        .lines()
        .filter(|l| l.contains("(t: &dyn Target)"))
        .filter_map(|l| l.strip_prefix("pub async fn "))
        .filter_map(|l| l.split('(').next())
        .collect();
    macro_rules! names {
        ($($case:ident,)*) => { vec![$(stringify!($case)),*] };
    }
    let listed: Vec<&str> = hmap_suite::for_each_case!(names);
    assert_eq!(defined, listed);
    assert!(listed.len() >= 60, "{} cases", listed.len());
}
