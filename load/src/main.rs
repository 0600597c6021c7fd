//! `kobo-load`: drives real `kobo serve` processes from outside, as partners and faults do.
//!
//! ```sh
//! cargo run -p kobo-load -- chaos --store sqlite                 # the short reliability run
//! cargo run -p kobo-load -- chaos --store postgres --postgres-outage 5
//! cargo run -p kobo-load -- payroll-chaos --store sqlite --network-provider  # a salary run killed
//! cargo run -p kobo-load -- bench --smoke                          # the load generator
//! ```
//! See RELIABILITY.md and BENCHMARKS.md for the scenarios and their figures.

mod api;
mod bench;
mod budget;
mod bulk;
mod chaos;
mod check;
mod cluster;
mod edge;
mod faults;
mod history;
mod patroni;
mod payroll;
mod provider;
mod provision;
mod receiver;
mod rng;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "kobo-load", about = "Drives real kobo processes from outside")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The reliability run: concurrent payouts under kills and faults, then an independent
    /// check of the history against what the API says (exits 1 on any violation).
    Chaos(chaos::ChaosArgs),
    /// A 1,000-item bulk transfer (a salary run: intra-bank and NIP) paid while the `kobo`
    /// process paying it is killed with SIGKILL, then checked from the API and `kobo ledger
    /// verify`: every item paid exactly once or failed and released, the counts and balances
    /// right (exits 1 on any violation).
    PayrollChaos(payroll::PayrollArgs),
    /// The load generator: throughput and latency of each scenario on each store, beside
    /// pgbench and the raw ledger loop (exits 1 only when the harness broke, never on a
    /// figure). A flag given twice takes its last value, so a script's defaults can be
    /// overridden.
    #[command(args_override_self = true)]
    Bench(bench::BenchArgs),
    /// What synchronous replication costs: payouts per second with a synchronous standby,
    /// with asynchronous standbys and with none, in turn on one Patroni cluster
    /// (`deploy/patroni.yml`), in one run (never exits 1 because of a figure).
    Replication(bench::replication::ReplicationArgs),
    /// A point-in-time restore of a database with a long history (1 million transactions by
    /// default), on a Patroni cluster with pgBackRest: from a backup after the history and
    /// from one before it, each copy checked with `kobo ledger verify` (exits 1 when one is
    /// not as the moment was).
    Restore(bench::restore::RestoreArgs),
    /// One credential's request budget across three processes on one PostgreSQL behind
    /// HAProxy (and PgBouncer): granted once between them (exits 1 otherwise).
    Budget(budget::BudgetArgs),
    /// Runs COMMAND with Debian's PgBouncer in transaction mode in front of the local
    /// PostgreSQL (deploy/pgbouncer.ini), its address in KOBO_TEST_POSTGRES_POOLER_URL: the
    /// test kits then reach their databases through it. Exits with COMMAND's status.
    WithPgbouncer {
        #[arg(required = true, trailing_var_arg = true)]
        command: Vec<String>,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // On SIGINT or SIGTERM the command is dropped, which stops what it started (its children
    // are killed on drop, a Patroni cluster's PostgreSQL servers too), then the program exits.
    let finished = tokio::select! {
        clean = async {
            match cli.command {
                Command::Chaos(args) => chaos::run(args).await,
                Command::PayrollChaos(args) => payroll::run(args).await,
                Command::Bench(args) => bench::run(args).await,
                Command::Budget(args) => budget::run(args).await,
                Command::Replication(args) => bench::replication::run(args).await,
                Command::Restore(args) => bench::restore::run(args).await,
                Command::WithPgbouncer { command } => edge::with_pgbouncer(&command).await,
            }
        } => Some(clean),
        _ = stopped() => None,
    };
    match finished {
        Some(clean) => {
            if !clean? {
                std::process::exit(1);
            }
            Ok(())
        }
        None => {
            eprintln!("kobo-load: stopped by a signal");
            std::process::exit(130)
        }
    }
}

/// SIGINT (Ctrl-C) or SIGTERM.
async fn stopped() {
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("a SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
    }
}
