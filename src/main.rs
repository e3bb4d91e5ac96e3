use std::io::IsTerminal;

use clap::Parser;
use rapid_rs::config::{Cli, Command};
use tracing_subscriber::EnvFilter;

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let args = match cli.command {
        Some(Command::Serve(args)) => args,
        None => cli.serve,
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_new(&args.log_level).unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    // actix's own runtime: the actors and the HTTP server share its System.
    let result = actix_web::rt::System::new().block_on(rapid_rs::server::serve(args));
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("rapid-rs stopped: {e}");
            eprintln!("rapid-rs: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
