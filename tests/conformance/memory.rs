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
    // The cases of `src/conformance/`: its `mod.rs`, then its modules in
    // the order `mod.rs` declares them, which is the order `for_each_case!`
    // lists their cases in.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/conformance");
    let read =
        |file: &str| std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("src/conformance/{file}: {e}"));
    let harness = read("mod.rs");
    let files: Vec<String> = std::iter::once("mod.rs".to_owned())
        .chain(harness.lines().filter_map(|l| {
            let module = l.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(format!("{module}.rs"))
        }))
        .collect();
    // Every Rust file of the directory is a module read here: a case in
    // any other would go unchecked.
    let mut present: Vec<String> = std::fs::read_dir(&dir)
        .expect("list src/conformance")
        .map(|entry| {
            entry
                .expect("an entry of src/conformance")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".rs"))
        .collect();
    present.sort();
    let mut declared = files.clone();
    declared.sort();
    assert_eq!(
        present, declared,
        "the files of src/conformance/ and the modules mod.rs declares"
    );
    let source: String = files.iter().map(|f| read(f)).collect();
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
