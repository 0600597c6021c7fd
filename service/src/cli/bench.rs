//! `kobo bench`: bulk-load an account's history and run the in-process ledger loop, on
//! sandbox stores only (see [`crate::bench`]).

use anyhow::Result;
use chrono::{DateTime, Utc};
use clap::{Args, Subcommand};
use serde_json::json;

use super::{OutputArgs, StoreArgs};
use crate::bench::When;
use crate::kernel::clock::Clock;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Give an account a long history fast: COUNT inbound credits, written in multi-row
    /// statements (ledger-consistent, no events). For measuring listings at depth. Written now,
    /// a microsecond apart, or spread evenly over a past span (--from, --until) for an account
    /// whose business has no ledger entry at or after --from (a fresh business's).
    SeedTransactions(SeedArgs),
    /// A payout's ledger statements in a plain loop, one database transaction each, no HTTP:
    /// the reference the payout benchmark is compared with. Prints transfers per second.
    Ledger(LedgerLoopArgs),
}

#[derive(Clone, Debug, Args)]
pub struct SeedArgs {
    /// The account's 10-digit number.
    #[arg(long)]
    pub account: String,
    /// How many credits.
    #[arg(long)]
    pub count: u64,
    /// Each credit's amount in naira.
    #[arg(long, default_value = "1.00")]
    pub amount: String,
    /// Spread the credits evenly from this instant (RFC 3339), instead of writing them now.
    /// Refused if the account's business has a ledger entry at or after it.
    #[arg(long, value_parser = instant, requires = "until")]
    pub from: Option<DateTime<Utc>>,
    /// ... until just before this instant (RFC 3339, not in the future).
    #[arg(long, value_parser = instant, requires = "from")]
    pub until: Option<DateTime<Utc>>,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// An RFC 3339 instant (`2026-11-01T00:00:00+01:00`), in UTC.
fn instant(text: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(text)
        .map(|at| at.with_timezone(&Utc))
        .map_err(|error| format!("an RFC 3339 instant such as 2026-11-01T00:00:00+01:00: {error}"))
}

#[derive(Clone, Debug, Args)]
pub struct LedgerLoopArgs {
    /// The business whose active accounts pay each other, round robin.
    #[arg(long)]
    pub business: String,
    /// How many transfers.
    #[arg(long)]
    pub transfers: u64,
    /// Each transfer's amount in naira.
    #[arg(long, default_value = "1.00")]
    pub amount: String,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

fn naira_amount(text: &str) -> Result<crate::money::amount::Kobo> {
    crate::money::amount::Kobo::parse(text)
        .ok_or_else(|| anyhow::anyhow!("amount: positive naira, at most two fraction digits"))
}

/// `kobo bench seed-transactions`.
pub(super) async fn seed_transactions(args: SeedArgs) -> Result<()> {
    let amount = naira_amount(&args.amount)?;
    let store = args.store.open().await?;
    let clock = Clock::system();
    let when = match (args.from, args.until) {
        (Some(from), Some(until)) => When::Over { from, until },
        _ => When::Now,
    };
    let started = std::time::Instant::now();
    let seeded = crate::bench::seed_credits(
        &store,
        || clock.now(),
        &args.account,
        args.count,
        amount,
        crate::bench::SEED_BATCH,
        when,
    )
    .await
    .map_err(|error| anyhow::anyhow!("{}", error.message()))?;
    let seconds = started.elapsed().as_secs_f64();
    if args.output.json {
        println!(
            "{}",
            json!({"inserted": seeded.inserted, "seconds": seconds, "from": args.from,
                "until": args.until})
        );
    } else {
        let span = match (args.from, args.until) {
            (Some(from), Some(until)) => format!(" over [{from}, {until})"),
            _ => String::new(),
        };
        println!(
            "{} credits to account {}{span} in {seconds:.1} s",
            seeded.inserted, args.account
        );
    }
    Ok(())
}

/// `kobo bench ledger`.
pub(super) async fn ledger_loop(args: LedgerLoopArgs) -> Result<()> {
    let amount = naira_amount(&args.amount)?;
    let store = args.store.open().await?;
    let clock = Clock::system();
    let started = std::time::Instant::now();
    let transfers = crate::bench::ledger_loop(
        &store,
        || clock.now(),
        &args.business,
        args.transfers,
        amount,
    )
    .await
    .map_err(|error| anyhow::anyhow!("{}", error.message()))?;
    let seconds = started.elapsed().as_secs_f64();
    let per_second = transfers as f64 / seconds.max(f64::EPSILON);
    if args.output.json {
        println!(
            "{}",
            json!({"transfers": transfers, "seconds": seconds, "per_second": per_second})
        );
    } else {
        println!("{transfers} transfers in {seconds:.2} s: {per_second:.0} per second");
    }
    Ok(())
}
