//! `kobo-provider`: see `kobo-provider --help`, and `kobo::simulator`.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = kobo::simulator::Cli::parse();
    kobo::cli::init_logging(kobo::cli::LogFormat::Text);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("kobo-provider: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(kobo::simulator::run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("kobo-provider: {error:#}");
            ExitCode::FAILURE
        }
    }
}
