//! `hmap-cli`: see the library's docs (`cli/src/lib.rs`).

use std::process::ExitCode;

fn main() -> ExitCode {
    hmap_cli::cli().run()
}
