//! Compile-time errors of `#[derive(HTable)]`: one case per mistake, each
//! with the error it must show (`ui/*.stderr`, reviewed when changed;
//! regenerate with `TRYBUILD=overwrite cargo test -p hmap-ui-tests --test ui`).
//!
//! trybuild writes its progress and cargo's build output straight to the
//! process's stderr, past the test harness's capture, so a passing run would
//! fill `cargo test`'s output with compiler noise. The test therefore runs
//! trybuild in a child process (this same test binary, told so by
//! `HMAP_UI_CHILD`) and shows the child's output only when it fails, or when
//! asked with `cargo test -- --nocapture`.

use std::io::IsTerminal;
use std::process::Command;

/// Set in the child process, which runs trybuild itself.
const CHILD: &str = "HMAP_UI_CHILD";

#[test]
fn ui() {
    if std::env::var_os(CHILD).is_some() {
        let t = trybuild::TestCases::new();
        t.compile_fail("tests/ui/*.rs");
        return;
    }
    let this = std::env::current_exe().expect("the test binary's path");
    let mut child = Command::new(this);
    child
        .args(["ui", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1");
    if !std::io::stderr().is_terminal() {
        // trybuild colours its output unless NO_COLOR is set (it does not
        // check for a terminal); escape codes only garble a log.
        child.env("NO_COLOR", "1");
    }
    let output = child.output().expect("run trybuild in a child process");
    // Printed through the harness, which shows it only for a failed test or
    // under --nocapture.
    print!("{}", String::from_utf8_lossy(&output.stdout));
    print!("{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        output.status.success(),
        "trybuild failed ({}): its output is above",
        output.status
    );
}
