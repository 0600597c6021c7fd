//! `kobo`: see `kobo --help`, and `cli` for every command and flag.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    return_large_allocations_to_the_system();
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

/// Each password hash takes argon2's 19 MiB. glibc serves such a block with mmap, but after the
/// first one is freed it raises its mmap threshold past that size and serves the next ones
/// from its heaps, which it keeps: a flood of failed logins left hundreds of megabytes
/// resident that never went back. A fixed threshold keeps every block of 1 MiB or more mapped
/// on its own and returned when freed, so memory after a flood is what it was before
/// (`bench/login-flood.py --spread`: 33 MiB before, 46 MiB after, 198 MiB at the peak of
/// eight hashes at once).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn return_large_allocations_to_the_system() {
    const MMAP_THRESHOLD_BYTES: i32 = 1 << 20;
    // SAFETY: mallopt only sets an allocator parameter, and runs before any other thread.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn return_large_allocations_to_the_system() {}
