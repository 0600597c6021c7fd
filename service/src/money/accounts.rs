//! Accounts: the main pool account (made with the business, `operator::businesses`), current
//! accounts linked to it, and customers' virtual accounts, each with its own balance; their
//! lookups, lists and aggregates, computed from the ledger.

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, Utc};
use generated_server::models::{self, AuditAction};
use generated_server::ResponseCode;
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::error::{Error, OrInternal};
use crate::kernel::clock::Clock;
use crate::kernel::config::Config;
use crate::kernel::paging::{self, Conditions, Cursor, Page, Sql};
use crate::kernel::secrets::sha256_hex;
use crate::kernel::store::{self, Backend, Store, Tx};
use crate::kernel::text;
use crate::money::amount::{self, Total};
use crate::money::nuban::{self, Series};
use crate::outbox::events;
use crate::platform::business::{self, normalize_email};
use crate::platform::caller::Caller;
use crate::platform::idempotency::{Completion, Keyed, Prepared};
use crate::platform::logs::{self, AuditEntry};
use crate::provider::{AccountOpening, CoreBanking, IdentityNumbers, VerifiedIdentity};

/// The columns every account view reads, from `accounts a LEFT JOIN accounts p` (the parent).
pub(crate) const ACCOUNT_COLUMNS: &str = "a.id, a.account_number, a.account_name, a.account_type, \
    a.account_class, a.status, a.balance, a.last_balance_update, \
    p.account_number AS parent_account_number, a.customer_id, a.created_at";
pub(crate) const ACCOUNT_FROM: &str =
    " FROM accounts a LEFT JOIN accounts p ON p.id = a.parent_account_id";

/// An account as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountRow {
    pub id: String,
    pub account_number: String,
    pub account_name: String,
    pub account_type: String,
    pub account_class: String,
    pub status: String,
    pub balance: i64,
    pub last_balance_update: Option<DateTime<Utc>>,
    pub parent_account_number: Option<String>,
    pub customer_id: Option<String>,
    pub created_at: DateTime<Utc>,
}

pub(crate) fn account_row(row: &AnyRow) -> Result<AccountRow, Error> {
    Ok(AccountRow {
        id: store::text(row, "id")?,
        account_number: store::text(row, "account_number")?,
        account_name: store::text(row, "account_name")?,
        account_type: store::text(row, "account_type")?,
        account_class: store::text(row, "account_class")?,
        status: store::text(row, "status")?,
        balance: row.try_get("balance").or_internal()?,
        last_balance_update: store::optional_time(row, "last_balance_update")?,
        parent_account_number: store::optional_text(row, "parent_account_number")?,
        customer_id: store::optional_text(row, "customer_id")?,
        created_at: store::time(row, "created_at")?,
    })
}

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

impl AccountRow {
    pub fn view(&self) -> Result<models::Account, Error> {
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
pub async fn ensure_business_active<'e, E>(executor: E, business_id: &str) -> Result<(), Error>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let status: Option<String> = sqlx::query_scalar("SELECT status FROM businesses WHERE id = $1")
        .bind(business_id)
        .fetch_optional(executor)
        .await
        .or_internal()?;
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
    store: &Store,
    config: &Config,
    provider: &dyn CoreBanking,
    clock: &Clock,
    caller: &Caller,
    body: models::CreateAccountRequest,
) -> Result<models::Account, Error> {
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
        business::lock_business(tx, store.backend(), &business_id).await?;
        ensure_business_active(&mut **tx, &business_id).await?;
        let row = sqlx::query(
            "SELECT b.name, \
               (SELECT COUNT(*) FROM accounts c WHERE c.business_id = b.id \
                  AND c.account_type = 'current') AS current_accounts, \
               (SELECT m.id FROM accounts m WHERE m.business_id = b.id \
                  AND m.account_class = 'primary') AS main_account_id \
             FROM businesses b WHERE b.id = $1",
        )
        .bind(&business_id)
        .fetch_one(&mut **tx)
        .await?;
        let current_accounts: i64 = row.try_get("current_accounts")?;
        if current_accounts >= i64::from(config.max_current_accounts) {
            return Err(
                Error::new(ResponseCode::ProviderError).with_message(format!(
                    "The account limit is reached: a business may hold {} current accounts",
                    config.max_current_accounts
                )),
            );
        }
        let main_account_id = store::optional_text(&row, "main_account_id")?
            .ok_or_else(|| Error::internal("the business has no main pool account"))?;
        let name = match chosen_name.clone() {
            Some(name) => name,
            None => format!(
                "{} - Current {}",
                store::text(&row, "name")?,
                current_accounts + 1
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
    sqlx::query(
        "INSERT INTO accounts (id, business_id, account_number, account_name, account_type, \
           account_class, status, parent_account_id, customer_id, balance, last_balance_update, \
           created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, 'secondary', 'active', $6, $7, 0, NULL, $8, $8)",
    )
    .bind(&id)
    .bind(business_id)
    .bind(&number)
    .bind(new.name)
    .bind(new.account_type)
    .bind(new.parent_account_id)
    .bind(new.customer_id)
    .bind(store::timestamp(now))
    .execute(&mut **tx)
    .await
    .or_internal()?;
    find_by_id(tx, &id)
        .await?
        .ok_or_else(|| Error::internal("the new account vanished"))
}

/// The account with this id.
pub async fn find_by_id(tx: &mut Tx, id: &str) -> Result<Option<AccountRow>, Error> {
    find_by_id_in(&mut **tx, id).await
}

/// [`find_by_id`] on any executor.
pub async fn find_by_id_in<'e, E>(executor: E, id: &str) -> Result<Option<AccountRow>, Error>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let sql = format!("SELECT {ACCOUNT_COLUMNS}{ACCOUNT_FROM} WHERE a.id = $1");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .fetch_optional(executor)
        .await
        .or_internal()?;
    row.as_ref().map(account_row).transpose()
}

/// The business's account with this number.
pub async fn find_by_number(
    tx: &mut Tx,
    business_id: &str,
    number: &str,
) -> Result<Option<AccountRow>, Error> {
    find_by_number_in(&mut **tx, business_id, number).await
}

/// [`find_by_number`] on any executor (the pool, for a read outside a transaction).
pub async fn find_by_number_in<'e, E>(
    executor: E,
    business_id: &str,
    number: &str,
) -> Result<Option<AccountRow>, Error>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let found = find_by_number_anywhere(executor, number).await?;
    Ok(found
        .filter(|found| found.business_id == business_id)
        .map(|found| found.account))
}

/// An account of any business, with the business that holds it: how a payer or a payee
/// outside the business sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KoboAccount {
    pub account: AccountRow,
    pub business_id: String,
    /// The business's registered name.
    pub business_name: String,
}

impl KoboAccount {
    /// The name everyone outside the business reads: see [`holder_name`].
    pub fn holder_name(&self) -> String {
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
///
/// By the number alone, whose only index is its unique one, so PostgreSQL's kept plan cannot
/// take another: with the business in the `WHERE` too, a plan made while the business had few
/// accounts could read them all through `accounts_business_created` (see
/// `transfers::reference_owner_in`), and the lookup had to be planned on every call.
pub async fn find_by_number_anywhere<'e, E>(
    executor: E,
    number: &str,
) -> Result<Option<KoboAccount>, Error>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let sql = format!(
        "SELECT {ACCOUNT_COLUMNS}, a.business_id, o.name AS business_name{ACCOUNT_FROM} \
         JOIN businesses o ON o.id = a.business_id WHERE a.account_number = $1"
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(number)
        .fetch_optional(executor)
        .await
        .or_internal()?;
    row.as_ref().map(kobo_account).transpose()
}

/// A row of [`ACCOUNT_COLUMNS`] with `business_id` and `business_name`.
pub(crate) fn kobo_account(row: &AnyRow) -> Result<KoboAccount, Error> {
    Ok(KoboAccount {
        account: account_row(row)?,
        business_id: store::text(row, "business_id")?,
        business_name: store::text(row, "business_name")?,
    })
}

/// The registered name of a business.
pub async fn business_name<'e, E>(executor: E, business_id: &str) -> Result<String, Error>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    sqlx::query_scalar("SELECT name FROM businesses WHERE id = $1")
        .bind(business_id)
        .fetch_one(executor)
        .await
        .or_internal()
}

/// The key that tells two customers apart without keeping their identity numbers.
fn identity_hash(business_id: &str, kind: &str, number: &str) -> String {
    sha256_hex(&format!("kobo.identity.v1:{business_id}:{kind}:{number}"))
}

/// `create_customer_account`: verifies the identity with the provider, then opens a virtual
/// account with its own balance under the chosen parent (default: the main pool account).
pub async fn create_customer_account(
    store: &Store,
    provider: &dyn CoreBanking,
    clock: &Clock,
    caller: &Caller,
    body: models::CreateCustomerAccountRequest,
) -> Result<models::Account, Error> {
    let business_id = caller.principal.business_id.clone();
    let numbers = IdentityNumbers {
        bvn: body.bvn.as_ref().map(|bvn| bvn.to_string()),
        nin: body.nin.as_ref().map(|nin| nin.to_string()),
    };
    if numbers.bvn.is_none() && numbers.nin.is_none() {
        return Err(
            Error::new(ResponseCode::IdentityNumberMissing).with_message("Provide a BVN or a NIN")
        );
    }
    let email = match body.email.as_deref() {
        Some(email) => {
            Some(normalize_email(email).ok_or_else(|| invalid("`email`: not an email address"))?)
        }
        None => None,
    };
    let chosen_name = account_name(body.account_name.as_deref().map(|name| name.as_str()))?;
    let prepare = async || {
        caller.principal.ensure_business_active()?;
        let parent_number = body.parent_account_number.as_deref().map(|n| n.as_str());
        check_customer_is_new(store, &business_id, &numbers, parent_number).await?;
        let verified = provider.verify_identity(&numbers).await?;
        let name = chosen_name.clone().unwrap_or_else(|| verified.name.clone());
        let opening = AccountOpening {
            business_id: &business_id,
            account_name: &name,
            account_type: "virtual",
        };
        provider.open_account(&opening).await?;
        Ok(Prepared::plain((verified, name)))
    };
    let write =
        async |tx: &mut Tx, (verified, name): (VerifiedIdentity, String), _: &mut Completion| {
            let now = clock.now();
            business::lock_business(tx, store.backend(), &business_id).await?;
            ensure_business_active(&mut **tx, &business_id).await?;
            let opening = CustomerOpening {
                business_id: &business_id,
                numbers: &numbers,
                verified_name: &verified.name,
                account_name: &name,
                email: email.as_deref(),
                phone: body.phone.as_ref().map(|phone| phone.as_str()),
                metadata: &body.metadata,
                parent_account_number: body.parent_account_number.as_deref().map(|n| n.as_str()),
            };
            let account = open_customer_account(tx, &opening, now).await?;
            let view = account.view()?;
            let entry = AuditEntry::by(caller, AuditAction::CreateCustomerAccount)
                .target("account", &account.id);
            logs::audit(tx, now, entry).await?;
            Ok(view)
        };
    Keyed::new(store, clock, caller, &body)
        .run(prepare, write)
        .await
}

/// The cheap refusals of a customer's opening, before the provider is asked: a parent that
/// is not the business's pool or current account (`44`), an identity that already has an
/// account in the business (`26`). Read in a transaction that is rolled back.
async fn check_customer_is_new(
    store: &Store,
    business_id: &str,
    numbers: &IdentityNumbers,
    parent_number: Option<&str>,
) -> Result<(), Error> {
    let hashes = [
        ("bvn", numbers.bvn.as_deref()),
        ("nin", numbers.nin.as_deref()),
    ]
    .map(|(kind, number)| number.map(|number| identity_hash(business_id, kind, number)));
    let mut tx = store.begin().await?;
    let parent = parent_account(&mut tx, business_id, parent_number).await;
    let duplicate = existing_customer_account(&mut tx, business_id, &hashes).await;
    tx.rollback().await?;
    parent?;
    match duplicate? {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

/// A verified customer's virtual account, as [`open_customer_account`] opens it.
#[derive(Clone, Debug)]
pub struct CustomerOpening<'a> {
    pub business_id: &'a str,
    pub numbers: &'a IdentityNumbers,
    pub verified_name: &'a str,
    pub account_name: &'a str,
    pub email: Option<&'a str>,
    pub phone: Option<&'a str>,
    pub metadata: &'a serde_json::Map<String, Value>,
    pub parent_account_number: Option<&'a str>,
}

/// Writes a verified customer and their virtual account inside `tx` (the business locked by
/// the caller), with the `account.created` event: `44` for a wrong parent, `26` for an identity
/// that already has an account in the business.
pub async fn open_customer_account(
    tx: &mut Tx,
    opening: &CustomerOpening<'_>,
    now: DateTime<Utc>,
) -> Result<AccountRow, Error> {
    let business_id = opening.business_id;
    let numbers = opening.numbers;
    let hashes = [
        ("bvn", numbers.bvn.as_deref()),
        ("nin", numbers.nin.as_deref()),
    ]
    .map(|(kind, number)| number.map(|number| identity_hash(business_id, kind, number)));
    let parent = parent_account(tx, business_id, opening.parent_account_number).await?;
    if let Some(error) = existing_customer_account(tx, business_id, &hashes).await? {
        return Err(error);
    }
    let mut verified_identities = Vec::new();
    if numbers.bvn.is_some() {
        verified_identities.push("bvn");
    }
    if numbers.nin.is_some() {
        verified_identities.push("nin");
    }
    let customer_id = store::new_id();
    sqlx::query(
        "INSERT INTO customers (id, business_id, email, phone, bvn_hash, nin_hash, \
           verified_identities, verified_name, metadata, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(&customer_id)
    .bind(business_id)
    .bind(opening.email)
    .bind(opening.phone)
    .bind(hashes[0].as_deref())
    .bind(hashes[1].as_deref())
    .bind(serde_json::to_string(&verified_identities).or_internal()?)
    .bind(opening.verified_name)
    .bind(serde_json::to_string(opening.metadata).or_internal()?)
    .bind(store::timestamp(now))
    .execute(&mut **tx)
    .await
    .or_internal()?;
    let account = insert_account(
        tx,
        business_id,
        NewAccount {
            name: opening.account_name,
            series: Series::Virtual,
            account_type: "virtual",
            parent_account_id: &parent.id,
            customer_id: Some(&customer_id),
        },
        now,
    )
    .await?;
    events::record(tx, business_id, "account.created", &account.view()?, now).await?;
    Ok(account)
}

/// The pool or current account a new virtual account is linked to: `number`, or the main pool
/// account. `44` when `number` is not a pool or current account of the business.
async fn parent_account(
    tx: &mut Tx,
    business_id: &str,
    number: Option<&str>,
) -> Result<AccountRow, Error> {
    let found = match number {
        Some(number) => find_by_number(tx, business_id, number)
            .await?
            .filter(|account| account.account_type != "virtual"),
        None => {
            let sql = format!(
                "SELECT {ACCOUNT_COLUMNS}{ACCOUNT_FROM} \
                 WHERE a.business_id = $1 AND a.account_class = 'primary'"
            );
            let row = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(business_id)
                .fetch_optional(&mut **tx)
                .await
                .or_internal()?;
            row.as_ref().map(account_row).transpose()?
        }
    };
    found.ok_or_else(|| {
        Error::new(ResponseCode::AccountNotFound).with_message(format!(
            "No pool or current account {} in this business",
            number.unwrap_or("(main)")
        ))
    })
}

/// `26` naming the account a BVN or NIN already has in this business.
async fn existing_customer_account(
    tx: &mut Tx,
    business_id: &str,
    hashes: &[Option<String>; 2],
) -> Result<Option<Error>, Error> {
    for (kind, hash) in ["BVN", "NIN"].iter().zip(hashes) {
        let Some(hash) = hash else { continue };
        let column = if *kind == "BVN" {
            "bvn_hash"
        } else {
            "nin_hash"
        };
        let sql = format!(
            "SELECT a.account_number FROM customers c JOIN accounts a ON a.customer_id = c.id \
             WHERE c.business_id = $1 AND c.{column} = $2"
        );
        let number: Option<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .bind(business_id)
            .bind(hash)
            .fetch_optional(&mut **tx)
            .await
            .or_internal()?;
        if let Some(number) = number {
            return Ok(Some(Error::new(ResponseCode::Duplicate).with_message(
                format!("This {kind} already has account {number} in this business"),
            )));
        }
    }
    Ok(None)
}

/// The SQL condition of an account type filter on `a`.
fn type_condition(filter: models::AccountTypeFilter) -> &'static str {
    match filter {
        models::AccountTypeFilter::Normal => "a.account_type IN ('pool', 'current')",
        models::AccountTypeFilter::Virtual => "a.account_type = 'virtual'",
        models::AccountTypeFilter::Current => "a.account_type = 'current'",
        // Kobo opens no savings accounts.
        models::AccountTypeFilter::Savings => "1 = 0",
    }
}

/// The account filters the lists share.
#[derive(Default)]
struct AccountFilters {
    account_type: Option<models::AccountTypeFilter>,
    account_number: Option<String>,
    status: Option<models::AccountStatus>,
    is_available: Option<bool>,
    parent_account_number: Option<String>,
    account_class: Option<models::AccountClass>,
}

fn account_conditions(sql: &mut Sql, business_id: &str, filters: &AccountFilters) -> Conditions {
    let mut conditions = Conditions::default();
    conditions.add(format!("a.business_id = {}", sql.arg(business_id)));
    if let Some(filter) = filters.account_type {
        conditions.add(type_condition(filter).to_owned());
    }
    if let Some(number) = &filters.account_number {
        conditions.add(format!("a.account_number = {}", sql.arg(number.as_str())));
    }
    if let Some(status) = filters.status {
        conditions.add(format!("a.status = {}", sql.arg(status.to_string())));
    }
    if let Some(available) = filters.is_available {
        conditions.add(if available {
            "a.status = 'active'".to_owned()
        } else {
            "a.status <> 'active'".to_owned()
        });
    }
    if let Some(parent) = &filters.parent_account_number {
        conditions.add(format!(
            "a.account_type = 'virtual' AND p.account_number = {}",
            sql.arg(parent.as_str())
        ));
    }
    if let Some(class) = filters.account_class {
        conditions.add(format!("a.account_class = {}", sql.arg(class.to_string())));
    }
    conditions
}

/// One keyset page of accounts, newest first.
async fn account_page(
    store: &Store,
    business_id: &str,
    filters: &AccountFilters,
    cursor: Option<Cursor>,
    limit: u64,
) -> Result<(Vec<AccountRow>, paging::Pagination), Error> {
    let mut sql = Sql::new(&format!("SELECT {ACCOUNT_COLUMNS}{ACCOUNT_FROM}"));
    let mut conditions = account_conditions(&mut sql, business_id, filters);
    if let Some(cursor) = cursor {
        let at = sql.arg(cursor.created_at);
        let id = sql.arg(cursor.id);
        conditions.add(format!(
            "(a.created_at < {at} OR (a.created_at = {at} AND a.id < {id}))"
        ));
    }
    sql.push(&conditions.where_clause());
    sql.push(" ORDER BY a.created_at DESC, a.id DESC")
        .limit(limit + 1);
    let rows = sql.fetch_all(store.pool()).await?;
    let mut accounts = rows
        .iter()
        .map(account_row)
        .collect::<Result<Vec<_>, _>>()?;
    let has_more = paging::trim_to_page(&mut accounts, limit);
    let last = match accounts.last() {
        Some(account) => Some((account.created_at, value(&account.id)?)),
        None => None,
    };
    Ok((accounts, paging::keyset_pagination(has_more, last, limit)))
}

pub async fn fetch_customer_accounts(
    store: &Store,
    caller: &Caller,
    body: models::FetchCustomerAccountsRequest,
) -> Result<Page<Vec<models::Account>>, Error> {
    let cursor = paging::keyset_cursor(body.cursor_created_at, body.cursor_id)?;
    let limit = body.limit.get().min(paging::PAGE_SIZE_MAX);
    let filters = body.filters.unwrap_or_default();
    let filters = AccountFilters {
        account_type: filters.account_type,
        status: filters.status,
        is_available: filters.is_available,
        ..AccountFilters::default()
    };
    let (accounts, pagination) = account_page(
        store,
        &caller.principal.business_id,
        &filters,
        cursor,
        limit,
    )
    .await?;
    Ok(Page {
        data: accounts
            .iter()
            .map(AccountRow::view)
            .collect::<Result<_, _>>()?,
        pagination,
    })
}

pub async fn get_account(
    store: &Store,
    caller: &Caller,
    body: models::GetAccountRequest,
) -> Result<models::AccountDetail, Error> {
    let business_id = &caller.principal.business_id;
    let filters = AccountFilters {
        account_type: body.account_type,
        account_number: body.account_number.as_ref().map(|n| n.to_string()),
        status: body.status,
        account_class: body.account_class,
        ..AccountFilters::default()
    };
    let (accounts, _) = account_page(store, business_id, &filters, None, 1).await?;
    let account = accounts.into_iter().next().ok_or_else(|| {
        Error::new(ResponseCode::AccountNotFound)
            .with_message("No account of this business matches the parameters")
    })?;
    let customer = match &account.customer_id {
        Some(customer_id) => Some(customer_view(store, customer_id).await?),
        None => None,
    };
    Ok(models::AccountDetail {
        id: value(&account.id)?,
        account_number: value(&account.account_number)?,
        account_name: value(&account.account_name)?,
        account_type: value(&account.account_type)?,
        account_class: value(&account.account_class)?,
        status: value(&account.status)?,
        balance: value(amount::balance_text(i128::from(account.balance)))?,
        last_balance_update: account.last_balance_update,
        parent_account_number: account
            .parent_account_number
            .as_deref()
            .map(value)
            .transpose()?,
        customer,
        created_at: account.created_at,
    })
}

async fn customer_view(store: &Store, customer_id: &str) -> Result<models::AccountCustomer, Error> {
    let row = sqlx::query(
        "SELECT email, phone, verified_identities, metadata FROM customers WHERE id = $1",
    )
    .bind(customer_id)
    .fetch_one(store.pool())
    .await
    .or_internal()?;
    let identities: Vec<String> =
        serde_json::from_str(&store::text(&row, "verified_identities")?).or_internal()?;
    let metadata: Value = serde_json::from_str(&store::text(&row, "metadata")?).or_internal()?;
    Ok(models::AccountCustomer {
        email: store::optional_text(&row, "email")?,
        phone: store::optional_text(&row, "phone")?,
        verified_identities: identities.iter().map(value).collect::<Result<_, _>>()?,
        metadata: match metadata {
            Value::Object(map) => map,
            _ => return Err(Error::internal("customer metadata is not an object")),
        },
    })
}

/// Per-account totals read from the ledger's transactions.
#[derive(Clone, Copy, Debug, Default)]
struct Activity {
    collections: i64,
    collected: Total,
    last_collection: Option<DateTime<Utc>>,
    transfers: i64,
    transferred: Total,
    transactions: i64,
}

/// The totals of `accounts`, counting collections in `[from, until)` when given.
async fn activity_of(
    store: &Store,
    accounts: &[AccountRow],
    from: Option<String>,
    until: Option<String>,
) -> Result<HashMap<String, Activity>, Error> {
    if accounts.is_empty() {
        return Ok(HashMap::new());
    }
    let mut sql = Sql::new("");
    let mut collection = "category = 'collection' AND status = 'success'".to_owned();
    if let Some(from) = from {
        collection.push_str(&format!(" AND created_at >= {}", sql.arg(from)));
    }
    if let Some(until) = until {
        collection.push_str(&format!(" AND created_at < {}", sql.arg(until)));
    }
    let transfer = "category = 'transfer' AND transaction_type = 'debit' \
                    AND status IN ('success', 'pending')";
    let ids: Vec<String> = accounts
        .iter()
        .map(|account| sql.arg(account.id.as_str()))
        .collect();
    sql.push(&format!(
        "SELECT account_id, \
           CAST(SUM(CASE WHEN {collection} THEN 1 ELSE 0 END) AS BIGINT) AS collections, \
           {}, \
           MAX(CASE WHEN {collection} THEN created_at END) AS last_collection, \
           CAST(SUM(CASE WHEN {transfer} THEN 1 ELSE 0 END) AS BIGINT) AS transfers, \
           {}, \
           CAST(SUM(CASE WHEN status <> 'failed' THEN 1 ELSE 0 END) AS BIGINT) AS transactions \
         FROM transactions WHERE account_id IN ({}) GROUP BY account_id",
        amount::limbs_sql_where("amount", &collection, "collected"),
        amount::limbs_sql_where("amount", transfer, "transferred"),
        ids.join(", ")
    ));
    let rows = sql.fetch_all(store.pool()).await?;
    let mut activity = HashMap::new();
    for row in &rows {
        let limbs = |name: &str| -> Result<Total, Error> {
            Ok(Total::from_limbs(
                row.try_get(format!("{name}_high").as_str()).or_internal()?,
                row.try_get(format!("{name}_low").as_str()).or_internal()?,
            ))
        };
        activity.insert(
            store::text(row, "account_id")?,
            Activity {
                collections: row.try_get("collections").or_internal()?,
                collected: limbs("collected")?,
                last_collection: store::optional_time(row, "last_collection")?,
                transfers: row.try_get("transfers").or_internal()?,
                transferred: limbs("transferred")?,
                transactions: row.try_get("transactions").or_internal()?,
            },
        );
    }
    Ok(activity)
}

fn count(value: i64) -> Result<u64, Error> {
    u64::try_from(value).or_internal()
}

pub async fn fetch_account_collections(
    store: &Store,
    caller: &Caller,
    body: models::FetchAccountCollectionsRequest,
) -> Result<Page<Vec<models::AccountCollection>>, Error> {
    let cursor = paging::keyset_cursor(body.cursor_created_at, body.cursor_id)?;
    let limit = body.limit.get().min(paging::PAGE_SIZE_MAX);
    let (from, until) = window(body.date, body.start_date, body.end_date, "")?;
    let filters = AccountFilters {
        account_type: body.account_type,
        account_number: body.account_number.as_ref().map(|n| n.to_string()),
        status: body.status,
        parent_account_number: body.parent_account_number.as_ref().map(|n| n.to_string()),
        ..AccountFilters::default()
    };
    let (accounts, pagination) = account_page(
        store,
        &caller.principal.business_id,
        &filters,
        cursor,
        limit,
    )
    .await?;
    let activity = activity_of(store, &accounts, from, until).await?;
    let mut data = Vec::with_capacity(accounts.len());
    for account in &accounts {
        let totals = activity.get(&account.id).copied().unwrap_or_default();
        data.push(models::AccountCollection {
            id: value(&account.id)?,
            account_number: value(&account.account_number)?,
            account_name: account.account_name.clone(),
            account_type: value(&account.account_type)?,
            account_class: value(&account.account_class)?,
            status: value(&account.status)?,
            balance: value(amount::balance_text(i128::from(account.balance)))?,
            last_balance_update: account.last_balance_update,
            parent_account_number: account
                .parent_account_number
                .as_deref()
                .map(value)
                .transpose()?,
            total_collections: count(totals.collections)?,
            total_collection_amount: value(totals.collected.amount_text())?,
            last_transaction_date: totals.last_collection,
            created_at: account.created_at,
        });
    }
    Ok(Page { data, pagination })
}

pub async fn fetch_account_summaries(
    store: &Store,
    caller: &Caller,
    body: models::FetchAccountSummariesRequest,
) -> Result<Page<Vec<models::AccountSummary>>, Error> {
    let cursor = paging::keyset_cursor(body.cursor_created_at, body.cursor_id)?;
    let limit = body.limit.get().min(paging::PAGE_SIZE_MAX);
    let filters = AccountFilters {
        account_type: body.account_type,
        account_number: body.account_number.as_ref().map(|n| n.to_string()),
        status: body.status,
        is_available: body.is_available,
        ..AccountFilters::default()
    };
    let (accounts, pagination) = account_page(
        store,
        &caller.principal.business_id,
        &filters,
        cursor,
        limit,
    )
    .await?;
    let activity = activity_of(store, &accounts, None, None).await?;
    let mut data = Vec::with_capacity(accounts.len());
    for account in &accounts {
        let totals = activity.get(&account.id).copied().unwrap_or_default();
        data.push(models::AccountSummary {
            id: value(&account.id)?,
            account_number: value(&account.account_number)?,
            account_name: account.account_name.clone(),
            account_type: value(&account.account_type)?,
            account_class: value(&account.account_class)?,
            status: value(&account.status)?,
            balance: value(amount::balance_text(i128::from(account.balance)))?,
            last_balance_update: account.last_balance_update,
            parent_account_number: account
                .parent_account_number
                .as_deref()
                .map(value)
                .transpose()?,
            total_collections: count(totals.collections)?,
            total_collection_amount: value(totals.collected.amount_text())?,
            last_transaction_date: totals.last_collection,
            total_transfers: count(totals.transfers)?,
            total_transfer_amount: value(totals.transferred.amount_text())?,
            total_transactions: count(totals.transactions)?,
            created_at: account.created_at,
        });
    }
    Ok(Page { data, pagination })
}

/// A single day (taking precedence) or an inclusive range of days, as stored bounds.
pub fn window(
    date: Option<NaiveDate>,
    start: Option<NaiveDate>,
    end: Option<NaiveDate>,
    prefix: &str,
) -> Result<(Option<String>, Option<String>), Error> {
    Ok(match date {
        Some(day) => paging::day_range(Some(day), Some(day), prefix),
        None => paging::day_range(start, end, prefix),
    }?)
}

pub async fn get_total_account_metrics(
    store: &Store,
    caller: &Caller,
    body: models::GetTotalAccountMetricsRequest,
) -> Result<models::AccountMetrics, Error> {
    let filters = body.filters.unwrap_or_default();
    let (from, until) = paging::day_range(filters.start_date, filters.end_date, "filters.")?;
    let mut sql = Sql::new(
        "WITH chosen AS (SELECT a.id, a.status, a.account_type, a.balance FROM accounts a",
    );
    let mut conditions = Conditions::default();
    conditions.add(format!(
        "a.business_id = {}",
        sql.arg(caller.principal.business_id.as_str())
    ));
    if let Some(filter) = filters.account_type {
        conditions.add(type_condition(filter).to_owned());
    }
    let mut window = String::new();
    if let Some(from) = &from {
        conditions.add(format!("a.created_at >= {}", sql.arg(from.as_str())));
        window.push_str(&format!(" AND t.created_at >= {}", sql.arg(from.as_str())));
    }
    if let Some(until) = &until {
        conditions.add(format!("a.created_at < {}", sql.arg(until.as_str())));
        window.push_str(&format!(" AND t.created_at < {}", sql.arg(until.as_str())));
    }
    sql.push(&conditions.where_clause());
    sql.push(" ORDER BY a.created_at DESC, a.id DESC");
    if let Some(count) = body.count {
        let cap = sql.arg(i64::try_from(count.get()).unwrap_or(i64::MAX));
        sql.push(&format!(" LIMIT {cap}"));
    }
    sql.push(&format!(
        ") SELECT \
           CAST(COALESCE(SUM(CASE WHEN status = 'active' THEN 1 ELSE 0 END), 0) AS BIGINT) AS active, \
           CAST(COALESCE(SUM(CASE WHEN status <> 'active' THEN 1 ELSE 0 END), 0) AS BIGINT) AS inactive, \
           CAST(COALESCE(SUM(CASE WHEN account_type = 'virtual' THEN 1 ELSE 0 END), 0) AS BIGINT) AS virtual_accounts, \
           {}, \
           (SELECT CAST(COALESCE(SUM(t.amount / 1000000000), 0) AS BIGINT) FROM transactions t \
              JOIN chosen c ON c.id = t.account_id \
              WHERE t.category = 'collection' AND t.status = 'success'{window}) AS collected_high, \
           (SELECT CAST(COALESCE(SUM(t.amount % 1000000000), 0) AS BIGINT) FROM transactions t \
              JOIN chosen c ON c.id = t.account_id \
              WHERE t.category = 'collection' AND t.status = 'success'{window}) AS collected_low \
         FROM chosen",
        amount::limbs_sql("balance", "balance")
    ));
    let rows = sql.fetch_all(store.pool()).await?;
    let row = rows
        .first()
        .ok_or_else(|| Error::internal("an aggregate query returned no row"))?;
    let number = |name: &str| -> Result<i64, Error> { row.try_get(name).or_internal() };
    let counts = |name: &str| -> Result<Option<u64>, Error> {
        if body.ignore_count {
            Ok(None)
        } else {
            count(number(name)?).map(Some)
        }
    };
    Ok(models::AccountMetrics {
        total_active_accounts: counts("active")?,
        total_inactive_accounts: counts("inactive")?,
        total_virtual_accounts: counts("virtual_accounts")?,
        total_volume_collected: value(
            Total::from_limbs(number("collected_high")?, number("collected_low")?).amount_text(),
        )?,
        total_business_balance: value(
            Total::from_limbs(number("balance_high")?, number("balance_low")?).balance_text(),
        )?,
    })
}

/// The status of account `id`, read under a lock held until `tx` ends: on PostgreSQL `FOR
/// SHARE`, so a status change in flight is waited for and seen, and one that comes later
/// waits for `tx`; SQLite's write transaction holds the whole database already. For a check
/// that must hold until the commit of a transaction that moves no money of the account's
/// (a held transfer's approval).
pub(crate) async fn locked_status(tx: &mut Tx, id: &str) -> Result<String, Error> {
    let sql = match tx.backend() {
        Backend::Postgres => "SELECT status FROM accounts WHERE id = $1 FOR SHARE",
        Backend::Sqlite => "SELECT status FROM accounts WHERE id = $1",
    };
    sqlx::query_scalar(sql)
        .bind(id)
        .fetch_optional(&mut **tx)
        .await
        .or_internal()?
        .ok_or_else(|| Error::internal("an account vanished"))
}

/// The reference of a transfer whose money the account still owns though its balance no
/// longer shows it: reserved for a held transfer (`pending_approval`) or in flight to NIP
/// (`processing`). Rejection, expiry or a NIP failure would pay it back into the account.
async fn reserved_by(tx: &mut Tx, account_id: &str) -> Result<Option<String>, Error> {
    sqlx::query_scalar(
        "SELECT reference_number FROM transfers \
         WHERE source_account_id = $1 AND transfer_status IN ('pending_approval', 'processing') \
         ORDER BY created_at LIMIT 1",
    )
    .bind(account_id)
    .fetch_optional(&mut **tx)
    .await
    .or_internal()
}

/// The account with this number, locked until `tx` ends (PostgreSQL: `FOR UPDATE`; the
/// statements after it see whatever committed before the lock was granted).
async fn lock_by_number(tx: &mut Tx, number: &str) -> Result<Option<(String, String)>, Error> {
    let sql = match tx.backend() {
        Backend::Postgres => {
            "SELECT id, business_id FROM accounts WHERE account_number = $1 FOR UPDATE"
        }
        Backend::Sqlite => "SELECT id, business_id FROM accounts WHERE account_number = $1",
    };
    let row = sqlx::query(sql)
        .bind(number)
        .fetch_optional(&mut **tx)
        .await
        .or_internal()?;
    row.map(|row| Ok((store::text(&row, "id")?, store::text(&row, "business_id")?)))
        .transpose()
}

/// The bank changes the status of the account `account_number` (an operator's act: `kobo
/// account set-status`), recording why, and emits `account.status_changed` to the business.
/// Closing needs a zero balance and no money of the account's reserved or in flight
/// ([`reserved_by`]): checked under the account's lock, so a hold or a release cannot slip
/// between the check and the change. Returns the change as the event carries it.
pub async fn change_status(
    store: &Store,
    clock: &Clock,
    account_number: &str,
    status: models::AccountStatus,
    reason: &str,
) -> Result<models::AccountStatusChange, Error> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(invalid("a reason is required: the business is told it"));
    }
    let now = clock.now();
    let mut tx = store.begin().await?;
    let (id, business_id) = lock_by_number(&mut tx, account_number)
        .await?
        .ok_or_else(|| {
            Error::new(ResponseCode::AccountNotFound)
                .with_message(format!("No account has the number {account_number}"))
        })?;
    let before = find_by_id(&mut tx, &id)
        .await?
        .ok_or_else(|| Error::internal("the account vanished"))?;
    let previous_status: models::AccountStatus = value(&before.status)?;
    if previous_status == status {
        return Err(Error::new(ResponseCode::InvalidState)
            .with_message(format!("The account is already {status}")));
    }
    if status == models::AccountStatus::Closed && before.balance != 0 {
        return Err(Error::new(ResponseCode::InvalidState).with_message(format!(
            "The account still holds {}: move the money out before closing it",
            amount::balance_text(i128::from(before.balance))
        )));
    }
    if status == models::AccountStatus::Closed {
        if let Some(reference) = reserved_by(&mut tx, &id).await? {
            return Err(Error::new(ResponseCode::InvalidState).with_message(format!(
                "The account's money is reserved for transfer {reference} (held for \
                     approval or on its way over NIP): close it once that transfer ends"
            )));
        }
    }
    let changed = sqlx::query("UPDATE accounts SET status = $1 WHERE id = $2 AND status = $3")
        .bind(status.to_string())
        .bind(&id)
        .bind(&before.status)
        .execute(&mut *tx)
        .await
        .or_internal()?
        .rows_affected();
    if changed == 0 {
        return Err(Error::new(ResponseCode::InvalidState)
            .with_message("The account's status changed meanwhile: try again"));
    }
    let after = find_by_id(&mut tx, &id)
        .await?
        .ok_or_else(|| Error::internal("the account vanished"))?;
    let change = models::AccountStatusChange {
        account: after.view()?,
        previous_status,
        reason: reason.to_owned(),
    };
    events::record(
        &mut tx,
        &business_id,
        "account.status_changed",
        &change,
        now,
    )
    .await?;
    tx.commit().await.or_internal()?;
    Ok(change)
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
