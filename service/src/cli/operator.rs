//! The operator's commands on businesses and accounts: `kobo business create | activate |
//! deactivate | daily-limit` and `kobo account set-status`.

use std::io::Write;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde_json::json;

use super::serve::EnvironmentArg;
use super::{OutputArgs, StoreArgs};
use crate::kernel::clock::Clock;
use crate::kernel::config::Config;
use crate::operator::businesses::{self, CreatedBusiness, NewBusiness};
use crate::platform::permissions;

#[derive(Debug, Subcommand)]
pub enum BusinessCommand {
    /// Create a business with its owner and integration credentials.
    Create(CreateBusinessArgs),
    /// Mark a business active.
    Activate(BusinessStatusArgs),
    /// Mark a business inactive (the spec's `60`, customer not active).
    Deactivate(BusinessStatusArgs),
    /// Set a business's daily transfer limit (NGN), or `--default` to go back to the
    /// configured one.
    DailyLimit(DailyLimitArgs),
}

#[derive(Clone, Debug, Args)]
pub struct DailyLimitArgs {
    /// The business id (a UUID) as `business create` printed it, or its `client_id`.
    pub id: String,

    /// The limit in NGN, at most two fraction digits (`5000000`, `2500000.50`).
    #[arg(required_unless_present = "default")]
    pub amount: Option<String>,

    /// Use the configured default again.
    #[arg(long, conflicts_with = "amount")]
    pub default: bool,

    #[command(flatten)]
    pub store: StoreArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Clone, Debug, Args)]
pub struct CreateBusinessArgs {
    /// The business's registered name.
    #[arg(long)]
    pub name: String,

    /// The owner's email: their Dashboard login.
    #[arg(long)]
    pub owner_email: String,

    /// The owner's first name. Default: from the email (`adaeze.okafor@...` gives Adaeze).
    #[arg(long)]
    pub owner_first_name: Option<String>,

    /// The owner's last name. Default: from the email (`adaeze.okafor@...` gives Okafor).
    #[arg(long)]
    pub owner_last_name: Option<String>,

    /// The owner's password (8 to 128 characters). Without it the owner gets an invitation
    /// (read it with `kobo outbox`) and sets a password with `accept_invite`.
    #[arg(long, env = "KOBO_OWNER_PASSWORD", hide_env_values = true)]
    pub owner_password: Option<String>,

    /// Create it active (default: inactive until `kobo business activate`).
    #[arg(long)]
    pub active: bool,

    /// The environment its credentials work in (`kb_sandbox_...` or `kb_live_...`).
    #[arg(long, env = "KOBO_ENVIRONMENT", value_enum, default_value_t = EnvironmentArg::Sandbox)]
    pub environment: EnvironmentArg,

    #[command(flatten)]
    pub store: StoreArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Clone, Debug, Args)]
pub struct BusinessStatusArgs {
    /// The business id (a UUID) as `business create` printed it, or its `client_id`.
    pub id: String,

    #[command(flatten)]
    pub store: StoreArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Subcommand)]
pub enum AccountCommand {
    /// Block, close, reactivate ... an account, saying why.
    SetStatus(AccountStatusArgs),
}

#[derive(Clone, Debug, Args)]
pub struct AccountStatusArgs {
    /// The account's 10-digit number.
    pub account_number: String,

    /// `active`, `inactive`, `blocked`, `closed` or `pending`.
    pub status: String,

    /// Why: the business reads it in the event.
    #[arg(long)]
    pub reason: String,

    #[command(flatten)]
    pub store: StoreArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

pub(super) async fn business(command: BusinessCommand) -> Result<()> {
    match command {
        BusinessCommand::Create(args) => create_business(args).await,
        BusinessCommand::Activate(args) => set_business_status(args, true).await,
        BusinessCommand::Deactivate(args) => set_business_status(args, false).await,
        BusinessCommand::DailyLimit(args) => set_daily_limit(args).await,
    }
}

async fn create_business(args: CreateBusinessArgs) -> Result<()> {
    let store = args.store.open().await?;
    permissions::seed_built_in_roles(&store).await?;
    let (first_name, last_name) = names_from_email(&args.owner_email);
    let new = NewBusiness {
        name: args.name,
        owner_first_name: args.owner_first_name.unwrap_or(first_name),
        owner_last_name: args.owner_last_name.unwrap_or(last_name),
        owner_email: args.owner_email,
        owner_password: args.owner_password,
        active: args.active,
        business_id: None,
        owner_id: None,
    };
    let config = Config::new(args.environment.into());
    let clock = Clock::system();
    // A business of the other environment than the database's would share its money.
    crate::platform::deployment::bind(&store, config.environment, &clock).await?;
    let created = businesses::create(&store, &config, &clock, new).await?;
    let mut out = std::io::stdout().lock();
    if args.output.json {
        serde_json::to_writer_pretty(&mut out, &created_json(&created))?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "Business created: {} ({})\n  id:            {}\n  status:        {}\n  \
         main account:  {}\n  client_id:     {}\n  client_secret: {}   \
         (shown once: store it now)\n  owner:         {}",
        created.name,
        created.environment.as_str(),
        created.business_id,
        if created.active {
            "active"
        } else {
            "inactive (kobo business activate ID)"
        },
        created.main_account_number,
        created.client_id,
        created.client_secret,
        created.owner_email,
    )?;
    match (&created.owner_password, &created.invitation_token) {
        (Some(_), _) => writeln!(out, "  owner login:   the password you gave")?,
        (None, Some(token)) => writeln!(
            out,
            "  invitation:    {token}\n                 (also in the outbox: kobo outbox; \
             accept with accept_invite)"
        )?,
        (None, None) => {}
    }
    Ok(())
}

/// What `business create --json` prints. Secrets Kobo made appear here once and nowhere else;
/// the owner's password, which the operator chose, is never printed back.
fn created_json(created: &CreatedBusiness) -> serde_json::Value {
    json!({
        "business_id": created.business_id,
        "name": created.name,
        "environment": created.environment.as_str(),
        "active": created.active,
        "main_account_number": created.main_account_number,
        "client_id": created.client_id,
        "client_secret": created.client_secret,
        "owner": {
            "id": created.owner_id,
            "email": created.owner_email,
            // Whether the owner can log in with the password the operator gave; the password
            // itself is not printed back.
            "password_set": created.owner_password.is_some(),
            "invitation_token": created.invitation_token,
        },
    })
}

/// `adaeze.okafor@...` gives (`Adaeze`, `Okafor`); what cannot be split gives `Owner`.
fn names_from_email(email: &str) -> (String, String) {
    let local = email.split('@').next().unwrap_or_default();
    let mut parts = local
        .split(['.', '_', '-', '+'])
        .filter(|part| !part.is_empty() && part.chars().all(char::is_alphabetic))
        .map(capitalized);
    match (parts.next(), parts.next()) {
        (Some(first), Some(last)) => (first, last),
        (Some(first), None) => (first, "Owner".into()),
        _ => ("Business".into(), "Owner".into()),
    }
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first
            .to_uppercase()
            .chain(chars.flat_map(char::to_lowercase))
            .collect(),
        None => String::new(),
    }
}

async fn set_business_status(args: BusinessStatusArgs, active: bool) -> Result<()> {
    let store = args.store.open().await?;
    businesses::set_status(&store, &Clock::system(), &args.id, active).await?;
    let status = if active { "active" } else { "inactive" };
    if args.output.json {
        println!("{}", json!({"business_id": args.id, "status": status}));
    } else {
        println!("Business {} is now {status}.", args.id);
    }
    Ok(())
}

async fn set_daily_limit(args: DailyLimitArgs) -> Result<()> {
    let kobo = match &args.amount {
        Some(amount) => Some(crate::money::amount::Kobo::parse(amount).with_context(|| {
            format!("{amount:?} is not a positive amount with at most two fraction digits")
        })?),
        None => None,
    };
    let store = args.store.open().await?;
    businesses::set_daily_transfer_limit(&store, &args.id, kobo.map(|k| k.get())).await?;
    let shown = kobo.map_or_else(
        || "the configured default".to_owned(),
        |k| format!("NGN {k}"),
    );
    if args.output.json {
        println!(
            "{}",
            json!({"business_id": args.id, "daily_transfer_limit": kobo.map(|k| k.to_string())})
        );
    } else {
        println!("Business {} may now send {shown} a day.", args.id);
    }
    Ok(())
}

pub(super) async fn set_account_status(args: AccountStatusArgs) -> Result<()> {
    let status: generated_server::models::AccountStatus = args.status.parse().map_err(|_| {
        anyhow::anyhow!("status: one of active, inactive, blocked, closed, pending")
    })?;
    let store = args.store.open().await?;
    let change = crate::money::accounts::change_status(
        &store,
        &Clock::system(),
        &args.account_number,
        status,
        &args.reason,
    )
    .await
    .map_err(|error| anyhow::anyhow!("{}", error.message()))?;
    if args.output.json {
        println!("{}", serde_json::to_string(&change)?);
    } else {
        println!(
            "Account {} is now {} (was {}); the business gets account.status_changed.",
            change.account.account_number.as_str(),
            change.account.status,
            change.previous_status
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_names_default_from_the_email() {
        let names = |email: &str| names_from_email(email);
        assert_eq!(
            names("adaeze.okafor@adaezefoods.ng"),
            ("Adaeze".into(), "Okafor".into())
        );
        assert_eq!(
            names("TUNDE_BAKARE@x.ng"),
            ("Tunde".into(), "Bakare".into())
        );
        assert_eq!(names("ngozi@x.ng"), ("Ngozi".into(), "Owner".into()));
        assert_eq!(names("ops42@x.ng"), ("Business".into(), "Owner".into()));
    }
}
