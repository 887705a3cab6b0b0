//! `hmap-cli`: the operator CLI (this package's library) with the example
//! apps' tables and relations registered.

use std::process::ExitCode;

mod apps;

fn main() -> ExitCode {
    apps::cli().run()
}
