//! The `kobo` command line: `serve` and `demo` run the API; `business`, `migrate`, `outbox` and
//! `ledger` are the operator's commands (no HTTP surface); `webhooks listen` is a developer's
//! local receiver. Every flag of the configuration has an
//! environment variable (`KOBO_...`) that stands in for it when the flag is absent.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::json;
use tokio::net::TcpListener;

use crate::http;
use crate::kernel::store::{Connection, PoolMode, Store};
use crate::outbox::dispatcher;

mod bench;
mod listen;
mod operator;
mod serve;

use bench::BenchCommand;
use operator::{AccountCommand, BusinessCommand};
pub use serve::{load_or_create_token_key, EnvironmentArg, HttpArgs, ServeArgs, SmtpArgs};

#[derive(Debug, Parser)]
#[command(
    name = "kobo",
    version,
    about = "Kobo, a business banking API: the server and the operator's commands",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// Log lines as `text` (for people) or `json` (one object a line, for collectors). Which
    /// lines: `RUST_LOG` (default `info,sqlx=warn`).
    #[arg(long, env = "KOBO_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text, global = true)]
    pub log_format: LogFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the API (runs the migrations first).
    Serve(ServeArgs),
    /// Quickstart: a sandbox server on the embedded SQLite store with a ready demo business;
    /// prints its credentials and a first request to try. Same as `serve --demo
    /// --allow-loopback-webhooks`: webhooks may go to a receiver on this machine's loopback
    /// (`kobo webhooks listen`).
    Demo(ServeArgs),
    /// Operator: create, activate or deactivate a business.
    #[command(subcommand)]
    Business(BusinessCommand),
    /// Operator: apply the database migrations and exit.
    Migrate(MigrateArgs),
    /// Operator: list stored notifications (invitations, OTPs), newest first.
    Outbox(OutboxArgs),
    /// Operator: check the ledger.
    #[command(subcommand)]
    Ledger(LedgerCommand),
    /// Developers: receive webhooks locally.
    #[command(subcommand)]
    Webhooks(WebhooksCommand),
    /// Operator: change an account's status (the business gets `account.status_changed`).
    #[command(subcommand)]
    Account(AccountCommand),
    /// A mock of the whole API from the spec's examples: no database, no state. Every operation
    /// is validated as by `serve` and answers its first `200` example; the header
    /// `Prefer: example=<name>` chooses another of its examples (an error, too). Any bearer
    /// token is accepted.
    Mock(MockArgs),
    /// Benchmarks (sandbox stores only): bulk-load history, run the in-process ledger loop.
    #[command(subcommand)]
    Bench(BenchCommand),
}

#[derive(Debug, Subcommand)]
pub enum WebhooksCommand {
    /// A local receiver: verifies each delivery's signature and timestamp, prints the event.
    /// It listens on loopback: the server delivering to it must allow loopback webhooks
    /// (`kobo demo` does; `kobo serve --allow-loopback-webhooks` in the sandbox).
    Listen(listen::ListenArgs),
}

#[derive(Clone, Debug, Args)]
pub struct MockArgs {
    /// Address and port to listen on (port 0: any free one; the address is printed).
    #[arg(long, env = "KOBO_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
}

#[derive(Debug, Subcommand)]
pub enum LedgerCommand {
    /// Recompute every balance from the postings, check that each journal entry balances and
    /// that the whole ledger sums to zero; exits non-zero naming any discrepancy.
    Verify(MigrateArgs),
}

/// Where the data lives.
#[derive(Clone, Debug, Args)]
pub struct StoreArgs {
    /// Directory of the embedded SQLite database and the token key file.
    #[arg(long, env = "KOBO_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,

    /// `postgres://user:password@host/db`, or `sqlite://path?mode=rwc`. Default: the SQLite
    /// database `kobo.db` in the data directory.
    #[arg(long, env = "KOBO_DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,

    /// How `--database-url` reaches PostgreSQL: `session` (PostgreSQL itself, or a pooler in
    /// session mode) or `transaction` (a pooler in transaction mode, such as PgBouncer's
    /// `pool_mode = transaction`: nothing stays prepared between transactions, and a statement
    /// outside one runs in one of its own). `transaction` needs `--database-direct-url`.
    #[arg(long, env = "KOBO_DATABASE_POOL_MODE", value_enum, default_value_t = PoolModeArg::Session)]
    pub database_pool_mode: PoolModeArg,

    /// PostgreSQL's own address (not the pooler's), for what needs a session of its own: the
    /// migrations (an advisory lock) and listening for revoked sessions (`LISTEN`). Default:
    /// `--database-url`.
    #[arg(long, env = "KOBO_DATABASE_DIRECT_URL", hide_env_values = true)]
    pub database_direct_url: Option<String>,
}

/// [`PoolMode`] as a flag's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PoolModeArg {
    Session,
    Transaction,
}

impl StoreArgs {
    /// Connects to the store and applies the migrations that have not run yet.
    pub async fn open(&self) -> Result<Store> {
        let url = match &self.database_url {
            Some(url) => url.clone(),
            None => Store::sqlite_url_in(&self.data_dir)?,
        };
        let connection = Connection {
            pool_mode: match self.database_pool_mode {
                PoolModeArg::Session => PoolMode::Session,
                PoolModeArg::Transaction => PoolMode::Transaction,
            },
            direct_url: self.database_direct_url.clone(),
        };
        let store = Store::connect_with(&url, &connection).await?;
        store.migrate().await?;
        Ok(store)
    }
}

/// Machine-readable output.
#[derive(Clone, Copy, Debug, Args)]
pub struct OutputArgs {
    /// Print JSON instead of text.
    #[arg(long, env = "KOBO_JSON")]
    pub json: bool,
}

#[derive(Clone, Debug, Args)]
pub struct MigrateArgs {
    #[command(flatten)]
    pub store: StoreArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Clone, Debug, Args)]
pub struct OutboxArgs {
    /// How many messages, newest first.
    #[arg(long, env = "KOBO_OUTBOX_LIMIT", default_value_t = 20,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(dispatcher::RECENT_LIMIT_MAX)))]
    pub limit: u32,

    #[command(flatten)]
    pub store: StoreArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// Runs one command to completion.
pub async fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Serve(args) => serve::serve(args).await,
        Command::Demo(mut args) => {
            args.demo = true;
            serve::serve(args).await
        }
        Command::Business(command) => operator::business(command).await,
        Command::Migrate(args) => migrate(args).await,
        Command::Outbox(args) => outbox(args).await,
        Command::Ledger(LedgerCommand::Verify(args)) => verify_ledger(args).await,
        Command::Webhooks(WebhooksCommand::Listen(args)) => listen::listen(args).await,
        Command::Account(AccountCommand::SetStatus(args)) => {
            operator::set_account_status(args).await
        }
        Command::Mock(args) => mock(args).await,
        Command::Bench(BenchCommand::SeedTransactions(args)) => {
            bench::seed_transactions(args).await
        }
        Command::Bench(BenchCommand::Ledger(args)) => bench::ledger_loop(args).await,
    }
}

/// `kobo mock`: the generated router over the spec's examples, until SIGINT or SIGTERM.
async fn mock(args: MockArgs) -> Result<()> {
    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let address = listener.local_addr()?;
    let app = generated_server::mock::mock_router(Arc::new(generated_server::mock::MockApi::new()));
    println!(
        "Kobo mock at http://{address}: every operation answers its spec example, validated as \
         by `kobo serve`; any bearer token works.\n\
         Another example: -H 'Prefer: example=<name>' (the names are in the spec and at \
         http://{address}/docs).\n\
         Stop: Ctrl-C"
    );
    tracing::info!(address = %address, "kobo mock is serving");
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(http::shutdown_signal())
    .await
    .context("the mock server failed")?;
    tracing::info!("kobo mock stopped");
    Ok(())
}

/// Sets up the log lines on standard error (standard output is for commands' results).
pub fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,sqlx=warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().flatten_event(true).init(),
    }
}

async fn migrate(args: MigrateArgs) -> Result<()> {
    args.store.open().await?;
    if args.output.json {
        println!("{}", json!({"migrated": true}));
    } else {
        println!("Database migrations are up to date.");
    }
    Ok(())
}

async fn verify_ledger(args: MigrateArgs) -> Result<()> {
    let store = args.store.open().await?;
    let report = crate::money::verify::verify(&store).await?;
    let mut out = std::io::stdout().lock();
    if args.output.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "{} accounts, {} journal entries, {} postings, {} transactions; ledger total {}",
            report.accounts,
            report.journal_entries,
            report.postings,
            report.transactions,
            report.ledger_total
        )?;
        for discrepancy in &report.discrepancies {
            writeln!(
                out,
                "DISCREPANCY {} {}: {}",
                discrepancy.kind, discrepancy.subject, discrepancy.detail
            )?;
        }
        if report.ok {
            writeln!(out, "The ledger balances.")?;
        }
    }
    drop(out);
    if !report.ok {
        anyhow::bail!(
            "the ledger has {} discrepancy(ies)",
            report.discrepancies.len()
        );
    }
    Ok(())
}

async fn outbox(args: OutboxArgs) -> Result<()> {
    let store = args.store.open().await?;
    let notifications = dispatcher::recent(&store, args.limit).await?;
    let mut out = std::io::stdout().lock();
    if args.output.json {
        serde_json::to_writer_pretty(&mut out, &notifications)?;
        writeln!(out)?;
        return Ok(());
    }
    if notifications.is_empty() {
        writeln!(out, "The outbox is empty.")?;
    }
    for notification in &notifications {
        let state = match (&notification.sent_at, &notification.last_error) {
            (Some(sent_at), _) => format!("sent {}", sent_at.to_rfc3339()),
            (None, Some(error)) => format!(
                "not sent after {} attempt(s): {error}",
                notification.attempts
            ),
            (None, None) => "not sent (outbox only)".to_string(),
        };
        writeln!(
            out,
            "── {} ── to {} ── {}\nSubject: {}\n\n{}\n",
            notification.created_at.to_rfc3339(),
            notification.recipient,
            state,
            notification.subject,
            notification.body.trim_end()
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
