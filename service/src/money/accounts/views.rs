//! What the API shows of accounts: the filtered list, one account with its customer and
//! activity, collections and summaries per account, and the business's totals, computed from
//! the ledger.

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, Utc};
use generated_server::models;
use generated_server::ResponseCode;
use serde_json::Value;

use super::{value, AccountRow, AccountView};
use crate::datastore::accounts::{self, Activity, Filters, MetricsFilters};
use crate::datastore::customers;
use crate::error::{Error, OrInternal};
use crate::kernel::paging::{self, Cursor, Page};
use crate::kernel::store::Store;
use crate::money::amount::{self, Total};
use crate::money::bank::Bank;
use crate::platform::caller::Caller;
use kobo_store::paging::contains_pattern;

/// A filter's value in the stored spelling.
fn spelt(value: Option<impl ToString>) -> Option<String> {
    value.map(|value| value.to_string())
}

/// One keyset page of accounts, newest first.
async fn account_page(
    store: &Store,
    business_id: &str,
    filters: &Filters,
    cursor: Option<Cursor>,
    limit: u64,
) -> Result<(Vec<AccountRow>, paging::Pagination), Error> {
    let mut accounts = accounts::list(store, business_id, filters, cursor, limit).await?;
    let has_more = paging::trim_to_page(&mut accounts, limit);
    let last = match accounts.last() {
        Some(account) => Some((account.created_at, value(&account.id)?)),
        None => None,
    };
    Ok((accounts, paging::keyset_pagination(has_more, last, limit)))
}

pub async fn fetch_customer_accounts(
    bank: &Bank,
    caller: &Caller,
    body: models::FetchCustomerAccountsRequest,
) -> Result<Page<Vec<models::Account>>, Error> {
    let store = &bank.store;
    let cursor = paging::keyset_cursor(body.cursor_created_at, body.cursor_id)?;
    let limit = body.limit.get().min(paging::PAGE_SIZE_MAX);
    let filters = body.filters.unwrap_or_default();
    let filters = Filters {
        account_type: spelt(filters.account_type),
        status: spelt(filters.status),
        is_available: filters.is_available,
        ..Filters::default()
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
            .map(AccountView::view)
            .collect::<Result<_, _>>()?,
        pagination,
    })
}

pub async fn get_account(
    bank: &Bank,
    caller: &Caller,
    body: models::GetAccountRequest,
) -> Result<models::AccountDetail, Error> {
    let store = &bank.store;
    let business_id = &caller.principal.business_id;
    let filters = Filters {
        account_type: spelt(body.account_type),
        account_number: body.account_number.as_ref().map(|n| n.to_string()),
        status: spelt(body.status),
        account_class: spelt(body.account_class),
        ..Filters::default()
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
    let contact = customers::contact(store, customer_id)
        .await?
        .ok_or_else(|| Error::internal("an account's customer is missing"))?;
    let identities: Vec<String> =
        serde_json::from_str(&contact.verified_identities).or_internal()?;
    let metadata: Value = serde_json::from_str(&contact.metadata).or_internal()?;
    Ok(models::AccountCustomer {
        email: contact.email,
        phone: contact.phone,
        verified_identities: identities.iter().map(value).collect::<Result<_, _>>()?,
        metadata: match metadata {
            Value::Object(map) => map,
            _ => return Err(Error::internal("customer metadata is not an object")),
        },
    })
}

/// The totals of `accounts`, counting collections in `[from, until)` when given.
async fn activity_of(
    store: &Store,
    accounts: &[AccountRow],
    from: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
) -> Result<HashMap<String, Activity>, Error> {
    let ids: Vec<&str> = accounts.iter().map(|account| account.id.as_str()).collect();
    Ok(accounts::activity(store, &ids, from, until).await?)
}

fn count(value: i64) -> Result<u64, Error> {
    u64::try_from(value).or_internal()
}

pub async fn fetch_account_collections(
    bank: &Bank,
    caller: &Caller,
    body: models::FetchAccountCollectionsRequest,
) -> Result<Page<Vec<models::AccountCollection>>, Error> {
    let store = &bank.store;
    let cursor = paging::keyset_cursor(body.cursor_created_at, body.cursor_id)?;
    let limit = body.limit.get().min(paging::PAGE_SIZE_MAX);
    let (from, until) = window(body.date, body.start_date, body.end_date, "")?;
    let filters = Filters {
        account_type: spelt(body.account_type),
        account_number: body.account_number.as_ref().map(|n| n.to_string()),
        status: spelt(body.status),
        parent_account_number: body.parent_account_number.as_ref().map(|n| n.to_string()),
        ..Filters::default()
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
            total_collection_amount: value(Total(totals.collected).amount_text())?,
            last_transaction_date: totals.last_collection,
            created_at: account.created_at,
        });
    }
    Ok(Page { data, pagination })
}

pub async fn fetch_account_summaries(
    bank: &Bank,
    caller: &Caller,
    body: models::FetchAccountSummariesRequest,
) -> Result<Page<Vec<models::AccountSummary>>, Error> {
    let store = &bank.store;
    let cursor = paging::keyset_cursor(body.cursor_created_at, body.cursor_id)?;
    let limit = body.limit.get().min(paging::PAGE_SIZE_MAX);
    let filters = Filters {
        account_type: spelt(body.account_type),
        account_number: body.account_number.as_ref().map(|n| n.to_string()),
        status: spelt(body.status),
        is_available: body.is_available,
        search: body
            .search
            .as_deref()
            .map(|search| search.trim())
            .filter(|search| !search.is_empty())
            .map(contains_pattern),
        ..Filters::default()
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
            total_collection_amount: value(Total(totals.collected).amount_text())?,
            last_transaction_date: totals.last_collection,
            total_transfers: count(totals.transfers)?,
            total_transfer_amount: value(Total(totals.transferred).amount_text())?,
            total_transactions: count(totals.transactions)?,
            created_at: account.created_at,
        });
    }
    Ok(Page { data, pagination })
}

/// A single day (taking precedence) or an inclusive range of days, as `[from, until)`.
pub fn window(
    date: Option<NaiveDate>,
    start: Option<NaiveDate>,
    end: Option<NaiveDate>,
    prefix: &str,
) -> Result<paging::DayRange, Error> {
    Ok(match date {
        Some(day) => paging::day_range(Some(day), Some(day), prefix),
        None => paging::day_range(start, end, prefix),
    }?)
}

pub async fn get_total_account_metrics(
    bank: &Bank,
    caller: &Caller,
    body: models::GetTotalAccountMetricsRequest,
) -> Result<models::AccountMetrics, Error> {
    let store = &bank.store;
    let filters = body.filters.unwrap_or_default();
    let (from, until) = paging::day_range(filters.start_date, filters.end_date, "filters.")?;
    let chosen = MetricsFilters {
        account_type: spelt(filters.account_type),
        from,
        until,
        count: body
            .count
            .map(|count| i64::try_from(count.get()).unwrap_or(i64::MAX)),
    };
    let metrics = accounts::metrics(store, &caller.principal.business_id, &chosen).await?;
    let counts = |number: i64| -> Result<Option<u64>, Error> {
        if body.ignore_count {
            Ok(None)
        } else {
            count(number).map(Some)
        }
    };
    Ok(models::AccountMetrics {
        total_active_accounts: counts(metrics.active)?,
        total_inactive_accounts: counts(metrics.inactive)?,
        total_virtual_accounts: counts(metrics.virtual_accounts)?,
        total_volume_collected: value(Total(metrics.collected).amount_text())?,
        total_business_balance: value(Total(metrics.balance).balance_text())?,
    })
}
