//! Compile-time errors of `#[derive(HTable)]`: one case per mistake, each
//! with the error it must show (`ui/*.stderr`, reviewed when changed;
//! regenerate with `TRYBUILD=overwrite cargo test -p hmap --test ui`).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
