//! The command line: `rapid-rs [serve] | bench | admin`, each command with its settings.

use clap::{Parser, Subcommand};

use crate::config::ServeArgs;

#[derive(Debug, Parser)]
#[command(
    name = "rapid-rs",
    version,
    about = "Self-hosted dataset data service: schema-validated uploads, Parquet storage, queries, permissions",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// With no subcommand, `rapid-rs` serves with these settings.
    #[command(flatten)]
    pub serve: ServeArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the service (the default).
    Serve(Box<ServeArgs>),
    /// Benchmark concurrent uploads against a running service, and check every row is stored once
    /// (runs the `rapid-bench` binary, tools/bench, with these arguments; `rapid-rs bench --help`).
    #[command(disable_help_flag = true)]
    Bench(BenchForward),
    /// Operate on a data folder: clients, admin secret, signing key, backup, restore, check.
    Admin(crate::admin::AdminArgs),
}

/// `rapid-rs bench ARGS`: every argument is handed to the load tool's own binary. The tool is not
/// linked into the server since issue 57: it brought an HTTP client's features and the test kit
/// into every server build, for a command the service never runs itself.
#[derive(Debug, clap::Args)]
pub struct BenchForward {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<std::ffi::OsString>,
}

/// Replaces this process by `rapid-bench` (beside this binary, as `cargo build -p rapid-bench`
/// and `cargo install --path tools/bench` put it, or else on PATH), so its exit status, output
/// and signals are the tool's own. Returns only when it cannot be started.
pub fn run_bench(args: Vec<std::ffi::OsString>) -> std::process::ExitCode {
    use std::os::unix::process::CommandExt;
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("rapid-bench")))
        .filter(|path| path.is_file());
    let program = beside.map_or_else(|| "rapid-bench".into(), |path| path.into_os_string());
    let error = std::process::Command::new(&program).args(args).exec();
    if error.kind() == std::io::ErrorKind::NotFound {
        eprintln!(
            "rapid-rs bench: the load tool is its own binary, `rapid-bench`, found neither beside \
             this binary nor on PATH; build it with `cargo build --release -p rapid-bench` or \
             install it with `cargo install --locked --path tools/bench`"
        );
    } else {
        eprintln!(
            "rapid-rs bench: cannot start {}: {error}",
            program.to_string_lossy()
        );
    }
    std::process::ExitCode::FAILURE
}
