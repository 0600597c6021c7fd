//! `kobo`: see `kobo --help`, and `cli` for every command and flag.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = kobo::cli::Cli::parse();
    kobo::cli::init_logging(cli.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("kobo: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(kobo::cli::run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // The whole chain, once: each context names what was being done.
            eprintln!("kobo: {error:#}");
            ExitCode::FAILURE
        }
    }
}
