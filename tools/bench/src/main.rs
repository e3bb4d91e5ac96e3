//! `rapid-bench`: the load tool's binary (`cargo run -p rapid-bench --release -- --help`).
//! `rapid-rs bench ARGS` runs this binary when it sits beside `rapid-rs` or on PATH.

use clap::Parser;

fn main() -> std::process::ExitCode {
    rapid_bench::main(rapid_bench::Cli::parse().args)
}
