//! What the API shows of accounts: the filtered list, one account with its customer and
//! activity, collections and summaries per account, and the business's totals, computed from
//! the ledger.

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, Utc};
use generated_server::models;
use generated_server::ResponseCode;
use serde_json::Value;
use sqlx::Row;

use super::{account_row, value, AccountRow, ACCOUNT_COLUMNS, ACCOUNT_FROM};
use crate::error::{Error, OrInternal};
use crate::kernel::paging::{self, Conditions, Cursor, Page, Sql};
use crate::kernel::store::{self, Store};
use crate::money::amount::{self, Total};
use crate::platform::caller::Caller;

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
