use clap::Parser;
use rapid_rs::cli::{Cli, Command};

fn main() -> std::process::ExitCode {
    // Before any thread or file exists: everything created from here on is private.
    rapid_rs::file_modes::private_umask();
    let cli = Cli::parse();
    let args = match cli.command {
        Some(Command::Serve(args)) => *args,
        Some(Command::Bench(bench)) => return rapid_rs::cli::run_bench(bench.args),
        Some(Command::Admin(args)) => {
            rapid_rs::ops::logging::init("warn", rapid_rs::config_ops::LogFormat::Text);
            return rapid_rs::admin::run(args);
        }
        None => cli.serve,
    };
    rapid_rs::ops::logging::init(&args.log_level, args.ops.log_format);
    let log_format = args.ops.log_format;
    // actix's own runtime: the actors and the HTTP server share its System.
    let result = actix_web::rt::System::new().block_on(rapid_rs::server::serve(args));
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("rapid-rs stopped: {e}");
            // In JSON mode the log line above is the only one: every line stays JSON.
            if log_format == rapid_rs::config_ops::LogFormat::Text {
                eprintln!("rapid-rs: {e}");
            }
            std::process::ExitCode::FAILURE
        }
    }
}
