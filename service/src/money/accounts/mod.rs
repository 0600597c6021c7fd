//! Accounts: the main pool account (made with the business, `operator::businesses`), current
//! accounts linked to it, and customers' virtual accounts, each with its own balance; their
//! lookups, lists and aggregates, computed from the ledger.

use chrono::{DateTime, Utc};
use generated_server::models::{self, AuditAction};
use generated_server::ResponseCode;

use crate::datastore::{accounts, businesses, Conn};
use crate::error::Error;
use crate::kernel::store::{self, Tx};
use crate::kernel::text;
use crate::money::amount;
use crate::money::bank::Bank;
use crate::money::nuban::{self, Series};
use crate::outbox::events;
use crate::platform::business;
use crate::platform::caller::Caller;
use crate::platform::context::Platform;
use crate::platform::idempotency::{Completion, Keyed, Prepared};
use crate::platform::logs::{self, AuditEntry};
use crate::provider::AccountOpening;

mod customers;
mod status;
mod views;

pub use customers::{create_customer_account, open_customer_account, CustomerOpening};
pub use status::change_status;
pub(crate) use status::locked_status;
pub use views::{
    fetch_account_collections, fetch_account_summaries, fetch_customer_accounts, get_account,
    get_total_account_metrics, window,
};

pub use crate::datastore::accounts::{AccountRow, KoboAccount};

/// A value of a generated type, from what the database holds (which it always accepts).
pub(crate) fn value<T>(text: impl AsRef<str>) -> Result<T, Error>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    let text = text.as_ref();
    text.parse()
        .map_err(|error| Error::internal(format!("bad value {text:?} in the database: {error}")))
}

/// What the API shows of an account.
pub trait AccountView {
    fn view(&self) -> Result<models::Account, Error>;
}

impl AccountView for AccountRow {
    fn view(&self) -> Result<models::Account, Error> {
        Ok(models::Account {
            id: value(&self.id)?,
            account_number: value(&self.account_number)?,
            account_name: value(&self.account_name)?,
            account_type: value(&self.account_type)?,
            status: value(&self.status)?,
            balance: value(amount::balance_text(i128::from(self.balance)))?,
            last_balance_update: self.last_balance_update,
            parent_account_number: self
                .parent_account_number
                .as_deref()
                .map(value)
                .transpose()?,
            created_at: self.created_at,
        })
    }
}

/// `60` unless the business is active, read in `executor`: inside the caller's transaction,
/// where the answer must hold until commit (before it, `Principal::ensure_business_active`
/// answers from the authentication's read).
pub async fn ensure_business_active(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
) -> Result<(), Error> {
    let status = businesses::status_of(conn, business_id).await?;
    match status.as_deref() {
        Some("active") => Ok(()),
        Some(_) => Err(Error::new(ResponseCode::BusinessInactive)),
        None => Err(Error::internal("the business of a live session is missing")),
    }
}

fn invalid(message: impl Into<std::borrow::Cow<'static, str>>) -> Error {
    Error::new(ResponseCode::InvalidRequest).with_message(message)
}

/// A caller-chosen account name: trimmed, 1 to 255 characters, none of the characters a name
/// may not hold (`text::check_name`: controls, line breaks, bidirectional controls).
fn account_name(name: Option<&str>) -> Result<Option<String>, Error> {
    if let Some(name) = name {
        text::check_name("account_name", name)?;
    }
    match name.map(str::trim) {
        None => Ok(None),
        Some("") => Err(invalid("`account_name`: must not be blank")),
        Some(name) if name.chars().count() > 255 => {
            Err(invalid("`account_name`: at most 255 characters"))
        }
        Some(name) => Ok(Some(name.to_owned())),
    }
}

/// `create_account_api` and `create_account_web`: a current account linked to the main pool
/// account. Dashboard calls are audited as the member; integration calls as the credentials.
pub async fn create_current_account(
    bank: &Bank,
    caller: &Caller,
    body: models::CreateAccountRequest,
) -> Result<models::Account, Error> {
    let provider = &*bank.provider;
    let Platform {
        store,
        config,
        clock,
        ..
    } = &bank.platform;
    let business_id = caller.principal.business_id.clone();
    let chosen_name = account_name(body.account_name.as_deref().map(|name| name.as_str()))?;
    let prepare = async || {
        caller.principal.ensure_business_active()?;
        let opening = AccountOpening {
            business_id: &business_id,
            account_name: chosen_name.as_deref().unwrap_or(""),
            account_type: "current",
        };
        provider.open_account(&opening).await?;
        Ok(Prepared::plain(()))
    };
    let write = async |tx: &mut Tx, (), _: &mut Completion| {
        let now = clock.now();
        business::lock_business(tx, &business_id).await?;
        ensure_business_active(&mut *tx, &business_id).await?;
        let facts = accounts::current_account_facts(tx, &business_id).await?;
        if facts.current_accounts >= i64::from(config.max_current_accounts) {
            return Err(
                Error::new(ResponseCode::ProviderError).with_message(format!(
                    "The account limit is reached: a business may hold {} current accounts",
                    config.max_current_accounts
                )),
            );
        }
        let main_account_id = facts
            .main_account_id
            .ok_or_else(|| Error::internal("the business has no main pool account"))?;
        let name = match chosen_name.clone() {
            Some(name) => name,
            None => format!(
                "{} - Current {}",
                facts.business_name,
                facts.current_accounts + 1
            ),
        };
        let new = NewAccount {
            name: &name,
            series: Series::Business,
            account_type: "current",
            parent_account_id: &main_account_id,
            customer_id: None,
        };
        let account = insert_account(tx, &business_id, new, now).await?;
        let view = account.view()?;
        events::record(tx, &business_id, "account.created", &view, now).await?;
        let entry =
            AuditEntry::by(caller, AuditAction::CreateAccount).target("account", &account.id);
        logs::audit(tx, now, entry).await?;
        Ok(view)
    };
    Keyed::new(store, clock, caller, &body)
        .run(prepare, write)
        .await
}

struct NewAccount<'a> {
    name: &'a str,
    series: Series,
    account_type: &'static str,
    parent_account_id: &'a str,
    customer_id: Option<&'a str>,
}

async fn insert_account(
    tx: &mut Tx,
    business_id: &str,
    new: NewAccount<'_>,
    now: DateTime<Utc>,
) -> Result<AccountRow, Error> {
    let id = store::new_id();
    let number = nuban::next_account_number(tx, new.series).await?;
    let row = accounts::NewAccount {
        id: &id,
        business_id,
        account_number: &number,
        account_name: new.name,
        account_type: new.account_type,
        parent_account_id: new.parent_account_id,
        customer_id: new.customer_id,
        created_at: now,
    };
    accounts::insert(tx, &row).await?;
    find_by_id(tx, &id)
        .await?
        .ok_or_else(|| Error::internal("the new account vanished"))
}

/// The account with this id.
pub async fn find_by_id(tx: &mut Tx, id: &str) -> Result<Option<AccountRow>, Error> {
    Ok(accounts::find_by_id(tx, id).await?)
}

/// The business's account with this number, read in `conn` (a transaction, or the pool for a
/// read outside one).
pub async fn find_by_number(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
    number: &str,
) -> Result<Option<AccountRow>, Error> {
    let found = accounts::find_by_number_anywhere(conn, number).await?;
    Ok(found
        .filter(|found| found.business_id == business_id)
        .map(|found| found.account))
}

/// The business's account with this number, or `44` naming it.
pub async fn of_business(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
    number: &str,
) -> Result<AccountRow, Error> {
    find_by_number(conn, business_id, number)
        .await?
        .ok_or_else(|| {
            Error::new(ResponseCode::AccountNotFound)
                .with_message(format!("No account {number} in this business"))
        })
}

/// The name everyone outside an account's business reads: see [`holder_name`].
pub trait HolderName {
    fn holder_name(&self) -> String;
}

impl HolderName for KoboAccount {
    fn holder_name(&self) -> String {
        holder_name(&self.business_name, &self.account.account_name)
    }
}

/// The longest holder name: what a payer can send back as `beneficiary_account_name`.
const HOLDER_NAME_MAX: usize = 255;

/// The name of an account as anyone outside its business reads it (name enquiry, a transfer's
/// beneficiary, the originator of an intra-bank credit): the business's registered name, then
/// ` - ` and the account's own name (`Adaeze Foods Ltd - Payroll`, `Adaeze Foods Ltd - Chinedu
/// Obi`), so that no business can pose as another by naming an account after it. An account
/// named as its business, or whose name already starts with the business's name and ` - `
/// (case aside), shows its own name. At most 255 characters, cut at the end.
pub fn holder_name(business_name: &str, account_name: &str) -> String {
    let business = business_name.to_lowercase();
    let account = account_name.to_lowercase();
    let carries_the_business =
        account == business || account.starts_with(&format!("{business} - "));
    let name = if carries_the_business {
        account_name.to_owned()
    } else {
        format!("{business_name} - {account_name}")
    };
    match name.char_indices().nth(HOLDER_NAME_MAX) {
        Some((cut, _)) => name[..cut].trim_end().to_owned(),
        None => name,
    }
}

/// The account with this number, whoever's, with its business.
pub async fn find_by_number_anywhere(
    conn: impl Into<Conn<'_>>,
    number: &str,
) -> Result<Option<KoboAccount>, Error> {
    Ok(accounts::find_by_number_anywhere(conn, number).await?)
}

/// The registered name of a business.
pub async fn business_name(conn: impl Into<Conn<'_>>, business_id: &str) -> Result<String, Error> {
    Ok(businesses::name_of(conn, business_id).await?)
}

#[cfg(test)]
mod tests {
    use super::holder_name;

    #[test]
    fn the_holder_name_always_starts_with_the_business() {
        let check = |business: &str, account: &str, shown: &str| {
            assert_eq!(holder_name(business, account), shown, "{account:?}");
        };
        check("Acme Ltd", "Acme Ltd", "Acme Ltd");
        check("Acme Ltd", "ACME LTD", "ACME LTD");
        check("Acme Ltd", "Acme Ltd - Payroll", "Acme Ltd - Payroll");
        check("Acme Ltd", "acme ltd - payroll", "acme ltd - payroll");
        check("Acme Ltd", "Payroll", "Acme Ltd - Payroll");
        check("Acme Ltd", "Chinedu Obi", "Acme Ltd - Chinedu Obi");
        // Posing as another business, or as this one with a look-alike, shows the owner first.
        check("Acme Ltd", "Bolt Ltd", "Acme Ltd - Bolt Ltd");
        check("Acme Ltd", "Acme Ltdx", "Acme Ltd - Acme Ltdx");
        check(
            "Acme Ltd",
            "\u{410}cme Ltd - Payroll",
            "Acme Ltd - \u{410}cme Ltd - Payroll",
        );
        check(
            "Bolt Ltd",
            "Acme Ltd - Payroll",
            "Bolt Ltd - Acme Ltd - Payroll",
        );
        // At most 255 characters, the owner kept.
        let long = "x".repeat(255);
        let shown = holder_name("Acme Ltd", &long);
        assert_eq!(shown.chars().count(), 255);
        assert!(shown.starts_with("Acme Ltd - x"));
    }
}
