//! Transactions and settlements: what a business sees of the ledger.
//!
//! A transaction is one account's side of a journal entry, written by [`record`] in the
//! entry's database transaction with the sequence and time of the business's ledger head, so
//! listing newest first by `(created_at, id)` is listing in commit order: a client polling by
//! cursor never misses a row that committed after it looked. Settlements are the cleared
//! inbound credits (one per collection, sharing its id).

use std::num::NonZeroU64;

use chrono::{DateTime, Utc};
use generated_server::{models, ResponseCode};

use crate::datastore::batch::{self, Batch};
use crate::datastore::transactions::{self, Filters, Listing, TransactionRow, Window};
use crate::error::Error;
use crate::kernel::paging::{self, Cursor, Page};
use crate::kernel::store::{Store, Tx};
use crate::money::accounts::{value, window, AccountRow};
use crate::money::amount::{amount_text, Kobo};
use crate::money::bank::Bank;
use crate::money::ledger::Head;

/// One account's side of a journal entry, before it is written.
#[derive(Clone, Debug)]
pub struct NewTransaction<'a> {
    pub business_id: &'a str,
    pub account: &'a AccountRow,
    pub entry_id: &'a str,
    pub head: Head,
    pub reference_number: String,
    pub transaction_type: models::TransactionType,
    pub category: models::TransactionCategory,
    pub status: models::TransactionStatus,
    pub channel: models::Channel,
    pub amount: Kobo,
    pub narration: String,
    pub session_id: Option<String>,
    pub originator: Option<Originator>,
}

/// Who sent an inbound credit.
#[derive(Clone, Debug)]
pub struct Originator {
    pub account_number: String,
    pub account_name: String,
    pub bank_code: String,
    pub bank_name: String,
}

/// A reference: `<prefix>-<YYYYMMDD>-<10 random characters>` (Crockford base32, 50 bits).
pub fn new_reference(prefix: &str, at: DateTime<Utc>) -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let random = uuid::Uuid::new_v4().as_u128();
    let suffix: String = (0..10)
        .map(|i| char::from(ALPHABET[((random >> (5 * i)) & 31) as usize]))
        .collect();
    format!("{prefix}-{}-{suffix}", at.format("%Y%m%d"))
}

/// Writes `new` inside the entry's transaction and returns it as the integration shows it.
pub async fn record(
    tx: &mut Tx,
    new: &NewTransaction<'_>,
) -> Result<models::IntegrationTransaction, Error> {
    let mut batch = Batch::new();
    let recorded = record_into(&mut batch, new)?;
    batch::run(tx, batch).await?;
    Ok(recorded)
}

/// [`record`] as statements of `batch` (the transaction, and a successful collection's
/// settlement), which runs in the entry's transaction. The view returned is what
/// [`fetch_transactions_api`] lists once the batch commits.
pub fn record_into(
    batch: &mut Batch,
    new: &NewTransaction<'_>,
) -> Result<models::IntegrationTransaction, Error> {
    let id = uuid::Uuid::new_v4();
    let originator = new.originator.as_ref();
    let row = transactions::NewTransaction {
        id,
        business_id: new.business_id.to_owned(),
        account_id: new.account.id.clone(),
        entry_id: new.entry_id.to_owned(),
        sequence: new.head.sequence,
        reference_number: new.reference_number.clone(),
        transaction_type: new.transaction_type.to_string(),
        category: new.category.to_string(),
        status: new.status.to_string(),
        channel: new.channel.to_string(),
        amount: new.amount.get(),
        narration: new.narration.clone(),
        session_id: new.session_id.clone(),
        originator: originator.map(|o| transactions::Originator {
            account_number: o.account_number.clone(),
            account_name: o.account_name.clone(),
            bank_code: o.bank_code.clone(),
            bank_name: o.bank_name.clone(),
        }),
        created_at: new.head.posted_at,
        settled: new.category == models::TransactionCategory::Collection
            && new.status == models::TransactionStatus::Success,
    };
    transactions::record_into(batch, row);
    // The columns as `integration_view` reads them back.
    Ok(models::IntegrationTransaction {
        id,
        reference_number: new.reference_number.clone(),
        account_number: value(&new.account.account_number)?,
        account_name: new.account.account_name.clone(),
        amount: value(amount_text(i128::from(new.amount.get())))?,
        transaction_type: new.transaction_type,
        transaction_category: new.category,
        status: new.status,
        channel: new.channel,
        remarks: new.narration.clone(),
        session_id: new.session_id.as_deref().map(value).transpose()?,
        originator_account_number: originator.map(|o| value(&o.account_number)).transpose()?,
        originator_account_name: originator.map(|o| o.account_name.clone()),
        originator_bank_code: originator.map(|o| value(&o.bank_code)).transpose()?,
        originator_bank_name: originator.map(|o| o.bank_name.clone()),
        created_at: new.head.posted_at,
    })
}

/// Changes the status of transaction `id`, when there is one (`pending` becoming `success`,
/// `reversed` or `failed`): its amount and place in the listing never change.
pub async fn set_status(
    tx: &mut Tx,
    id: Option<&str>,
    status: models::TransactionStatus,
) -> Result<(), Error> {
    if let Some(id) = id {
        transactions::set_status(tx, id, &status.to_string()).await?;
    }
    Ok(())
}

pub(crate) fn amount_of(kobo: i64) -> Result<models::Amount, Error> {
    value(amount_text(i128::from(kobo)))
}

fn integration_view(row: TransactionRow) -> Result<models::IntegrationTransaction, Error> {
    Ok(models::IntegrationTransaction {
        id: row.id,
        reference_number: row.reference_number,
        account_number: value(row.account_number)?,
        account_name: row.account_name,
        amount: amount_of(row.amount)?,
        transaction_type: value(row.transaction_type)?,
        transaction_category: value(row.category)?,
        status: value(row.status)?,
        channel: value(row.channel)?,
        remarks: row.narration,
        session_id: row.session_id.map(value).transpose()?,
        originator_account_number: row.originator_account_number.map(value).transpose()?,
        originator_account_name: row.originator_account_name,
        originator_bank_code: row.originator_bank_code.map(value).transpose()?,
        originator_bank_name: row.originator_bank_name,
        created_at: row.created_at,
    })
}

fn dashboard_view(row: TransactionRow) -> Result<models::DashboardTransaction, Error> {
    Ok(models::DashboardTransaction {
        id: row.id,
        reference_number: row.reference_number,
        account_number: value(row.account_number)?,
        amount: amount_of(row.amount)?,
        transaction_type: value(row.transaction_type)?,
        status: value(row.status)?,
        narration: row.narration,
        created_at: row.created_at,
    })
}

fn settlement_view(row: TransactionRow) -> Result<models::DashboardSettlement, Error> {
    Ok(models::DashboardSettlement {
        id: row.id,
        reference: row.reference_number,
        account_number: value(row.account_number)?,
        amount: amount_of(row.amount)?,
        settlement_date: row.created_at,
        status: value(row.status)?,
        created_at: row.created_at,
    })
}

/// How a list is paged: by cursor (exact under concurrent inserts) or by page number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paging {
    pub size: u64,
    pub cursor: Option<Cursor>,
    pub page: u64,
}

impl Paging {
    /// Reads `limit`/`page_size` (synonyms: when both differ from the default they must be
    /// equal), `page` and the cursor pair (not together with a `page` after the first).
    pub fn new(
        limit: NonZeroU64,
        page_size: NonZeroU64,
        page: NonZeroU64,
        cursor_created_at: Option<DateTime<Utc>>,
        cursor_id: Option<uuid::Uuid>,
    ) -> Result<Paging, Error> {
        const DEFAULT: u64 = 20;
        let (limit, page_size) = (limit.get(), page_size.get());
        if limit != DEFAULT && page_size != DEFAULT && limit != page_size {
            return Err(invalid(
                "`page_size`: must equal limit when both are sent (they are synonyms)",
            ));
        }
        let size = if limit != DEFAULT { limit } else { page_size };
        if size > paging::PAGE_SIZE_MAX {
            return Err(invalid("`limit`: at most 100"));
        }
        let cursor = paging::keyset_cursor(cursor_created_at, cursor_id)?;
        if cursor.is_some() && page.get() > 1 {
            return Err(invalid(
                "`page`: cannot be combined with cursor_created_at and cursor_id",
            ));
        }
        Ok(Paging {
            size,
            cursor,
            page: page.get(),
        })
    }
}

fn invalid(message: &'static str) -> Error {
    Error::new(ResponseCode::InvalidRequest).with_message(message)
}

impl Paging {
    /// The rows of this page a list reads.
    fn window(&self) -> Result<Window, Error> {
        let offset = match (&self.cursor, self.page) {
            (None, page) if page > 1 => Some(
                (page - 1)
                    .checked_mul(self.size)
                    .and_then(|offset| i64::try_from(offset).ok())
                    .ok_or_else(|| invalid("`page`: too large"))?,
            ),
            _ => None,
        };
        Ok(Window {
            size: self.size,
            cursor: self.cursor.clone(),
            offset,
        })
    }
}

/// One page of `listing`, newest first by `(created_at, id)`, each row shown by `view`.
async fn page<T>(
    store: &Store,
    listing: Listing,
    business_id: &str,
    filters: &Filters,
    paging: &Paging,
    view: fn(TransactionRow) -> Result<T, Error>,
) -> Result<Page<Vec<T>>, Error> {
    let rows = transactions::list(store, listing, business_id, filters, &paging.window()?).await?;
    let mut keyed = Vec::with_capacity(rows.len());
    for row in rows {
        keyed.push((row.created_at, row.id, view(row)?));
    }
    let has_more = paging::trim_to_page(&mut keyed, paging.size);
    let last = keyed.last().map(|(at, id, _)| (*at, *id));
    let mut pagination = paging::keyset_pagination(has_more, last, paging.size);
    if paging.cursor.is_none() {
        pagination.page = NonZeroU64::new(paging.page);
    }
    Ok(Page {
        data: keyed.into_iter().map(|(_, _, item)| item).collect(),
        pagination,
    })
}

/// A filter's value in the stored spelling.
fn spelt(value: Option<impl ToString>) -> Option<String> {
    value.map(|value| value.to_string())
}

pub async fn fetch_transactions_web(
    bank: &Bank,
    business_id: &str,
    body: models::FetchTransactionsWebRequest,
) -> Result<Page<Vec<models::DashboardTransaction>>, Error> {
    let store = &bank.store;
    let paging = Paging::new(
        body.limit,
        body.page_size,
        body.page,
        body.cursor_created_at,
        body.cursor_id,
    )?;
    let filters = web_filters(body.filters.unwrap_or_default())?;
    let listing = Listing::Transactions;
    page(
        store,
        listing,
        business_id,
        &filters,
        &paging,
        dashboard_view,
    )
    .await
}

/// The Dashboard's transaction filters, as the store reads them.
pub fn web_filters(given: models::DashboardTransactionFilters) -> Result<Filters, Error> {
    let (from, until) = paging::day_range(given.start_date, given.end_date, "filters.")?;
    Ok(Filters {
        account_number: given.account_number.map(|v| v.to_string()),
        from,
        until,
        status: spelt(given.status),
        transaction_type: spelt(given.transaction_type),
        reference_number: given.reference_number.map(|v| v.to_string()),
        search: given.search.map(|v| v.to_string()),
        ..Filters::default()
    })
}

/// The integration's transaction filters, as the store reads them.
pub fn api_filters(given: models::IntegrationTransactionFilters) -> Result<Filters, Error> {
    let (from, until) = window(given.date, given.start_date, given.end_date, "filters.")?;
    Ok(Filters {
        account_number: given.account_number.map(|v| v.to_string()),
        from,
        until,
        status: spelt(given.status),
        transaction_type: spelt(given.transaction_type),
        category: spelt(given.transaction_category),
        reference_number: given.reference_number.map(|v| v.to_string()),
        channel: spelt(given.channel),
        search: given.search.map(|v| v.to_string()),
    })
}

pub async fn fetch_transactions_api(
    bank: &Bank,
    business_id: &str,
    body: models::FetchTransactionsApiRequest,
) -> Result<Page<Vec<models::IntegrationTransaction>>, Error> {
    let store = &bank.store;
    let paging = Paging::new(
        body.limit,
        body.page_size,
        body.page,
        body.cursor_created_at,
        body.cursor_id,
    )?;
    let filters = api_filters(body.filters.unwrap_or_default())?;
    let listing = Listing::Transactions;
    page(
        store,
        listing,
        business_id,
        &filters,
        &paging,
        integration_view,
    )
    .await
}

fn settlement_filters(
    body: &models::FetchSettlementTransactionsRequest,
) -> Result<(Paging, Filters), Error> {
    let paging = Paging::new(
        body.limit,
        body.page_size,
        body.page,
        body.cursor_created_at,
        body.cursor_id,
    )?;
    let given = body.filters.clone().unwrap_or_default();
    let (from, until) = paging::day_range(given.start_date, given.end_date, "filters.")?;
    Ok((
        paging,
        Filters {
            account_number: given.account_number.map(|v| v.to_string()),
            from,
            until,
            reference_number: given.reference.map(|v| v.to_string()),
            ..Filters::default()
        },
    ))
}

pub async fn fetch_settlements_web(
    bank: &Bank,
    business_id: &str,
    body: models::FetchSettlementTransactionsRequest,
) -> Result<Page<Vec<models::DashboardSettlement>>, Error> {
    let store = &bank.store;
    let (paging, filters) = settlement_filters(&body)?;
    let listing = Listing::Settlements;
    page(
        store,
        listing,
        business_id,
        &filters,
        &paging,
        settlement_view,
    )
    .await
}

pub async fn fetch_settlements_api(
    bank: &Bank,
    business_id: &str,
    body: models::FetchSettlementTransactionsRequest,
) -> Result<Page<Vec<models::IntegrationTransaction>>, Error> {
    let store = &bank.store;
    let (paging, filters) = settlement_filters(&body)?;
    let listing = Listing::Settlements;
    page(
        store,
        listing,
        business_id,
        &filters,
        &paging,
        integration_view,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(value: u64) -> NonZeroU64 {
        NonZeroU64::new(value).unwrap()
    }

    #[test]
    fn references_are_dated_and_distinct() {
        let at: DateTime<Utc> = "2026-11-02T09:20:00Z".parse().unwrap();
        let a = new_reference("COL", at);
        let b = new_reference("COL", at);
        assert!(a.starts_with("COL-20261102-") && a.len() == 23, "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn limit_and_page_size_are_synonyms() {
        let paging = |limit, size, page| Paging::new(n(limit), n(size), n(page), None, None);
        assert_eq!(paging(20, 20, 1).unwrap().size, 20);
        assert_eq!(paging(50, 20, 1).unwrap().size, 50);
        assert_eq!(paging(20, 30, 2).unwrap().size, 30);
        assert_eq!(paging(30, 30, 1).unwrap().size, 30);
        assert!(paging(30, 40, 1).is_err());
        let at: DateTime<Utc> = "2026-11-02T09:20:00Z".parse().unwrap();
        let cursor = Paging::new(n(20), n(20), n(2), Some(at), Some(uuid::Uuid::nil()));
        assert!(cursor.unwrap_err().message().starts_with("`page`"));
    }
}
