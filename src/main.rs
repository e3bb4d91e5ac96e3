use clap::Parser;
use rapid_rs::cli::{Cli, Command};

fn main() -> std::process::ExitCode {
    // Before any thread or file exists: everything created from here on is private.
    rapid_rs::file_modes::private_umask();
    let cli = Cli::parse();
    let args = match cli.command {
        Some(Command::Serve(args)) => *args,
        Some(Command::Bench(args)) => return run_bench(args),
        Some(Command::Admin(args)) => {
            rapid_rs::ops::logging::init("warn", rapid_rs::config_ops::LogFormat::Text);
            return rapid_rs::admin::run(args);
        }
        None => cli.serve,
    };
    rapid_rs::ops::logging::init(&args.log_level, args.ops.log_format);
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

fn run_bench(args: rapid_rs::bench::BenchArgs) -> std::process::ExitCode {
    let json = args.json;
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("rapid-rs bench: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(rapid_rs::bench::run(args)) {
        Ok(report) => {
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&report).unwrap_or_default()
                );
            } else {
                eprintln!();
                print!("{}", report.text());
            }
            // A run whose accepted rows are not all stored exactly once is a failure.
            if report.exactly_once {
                std::process::ExitCode::SUCCESS
            } else {
                std::process::ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("rapid-rs bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
