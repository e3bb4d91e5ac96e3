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
    /// Benchmark concurrent uploads against a running service, and check every row is stored once.
    Bench(rapid_bench::BenchArgs),
    /// Operate on a data folder: clients, admin secret, signing key, backup, restore, check.
    Admin(crate::admin::AdminArgs),
}
