//! `get_account_statement` and `get_account_statement_api`: one account's statement for a
//! period of Lagos days (issue 61). Its balances are read from the ledger's running balances
//! (`transactions.balance_after`, migration 0028): the opening balance is the running balance
//! of the account's last transaction before the period, the closing balance the last one in it
//! (or the opening balance), each one row of `transactions_account_keyset` whatever the
//! account's history. The lines are that index's range, oldest first, paged by cursor.
//!
//! The figures reconcile by construction: every change of a balance has its transaction, each
//! transaction's running balance is its account's balance right after it, so the opening
//! balance plus the period's credits less its debits is the closing balance, and each line's
//! running balance is the one before it moved by its amount (`kobo ledger verify` checks both
//! on the whole ledger; `tests/money/statements.rs` on random histories).

use chrono::{DateTime, Days, FixedOffset, NaiveDate, TimeZone, Utc};
use generated_server::models;
use generated_server::ResponseCode;

use crate::datastore::transactions::{self, PeriodTotals, StatementLine};
use crate::error::{Error, OrInternal};
use crate::kernel::paging::{self, Cursor, Page};
use crate::kernel::store::Store;
use crate::money::accounts::{self, value, AccountRow};
use crate::money::amount::Total;
use crate::money::bank::Bank;
use crate::money::transactions as transactions_view;

/// The longest period a statement covers, in days.
pub const DAYS_MAX: u64 = 366;

/// Lagos time: UTC+01:00 all year (West Africa Time, no daylight saving).
fn lagos() -> FixedOffset {
    FixedOffset::east_opt(3600).expect("one hour east is a valid offset")
}

/// The instant Lagos day `day` begins.
fn start_of_lagos_day(day: NaiveDate) -> Result<DateTime<Utc>, Error> {
    let midnight = day.and_time(chrono::NaiveTime::MIN);
    Ok(lagos()
        .from_local_datetime(&midnight)
        .single()
        .ok_or_else(|| Error::internal("a Lagos midnight that is not one instant"))?
        .with_timezone(&Utc))
}

/// A statement's period: its Lagos days and the instants `[from, until)` they cover.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Period {
    pub start_date: NaiveDate,
    pub end_date: NaiveDate,
    pub from: DateTime<Utc>,
    pub until: DateTime<Utc>,
}

impl Period {
    /// Days `start_date` to `end_date`, both included: `01` if the first is after the last, or
    /// the period is longer than [`DAYS_MAX`].
    pub fn of(start_date: NaiveDate, end_date: NaiveDate) -> Result<Period, Error> {
        if start_date > end_date {
            return Err(invalid("`start_date`: must not be after end_date"));
        }
        let days = (end_date - start_date).num_days() + 1;
        if days > DAYS_MAX as i64 {
            return Err(invalid(
                "`end_date`: a statement covers at most 366 days; ask for the rest separately",
            ));
        }
        let after_end = end_date
            .checked_add_days(Days::new(1))
            .ok_or_else(|| invalid("`end_date`: out of range"))?;
        Ok(Period {
            start_date,
            end_date,
            from: start_of_lagos_day(start_date)?,
            until: start_of_lagos_day(after_end)?,
        })
    }

    /// The cursor before the period's first line: before its first instant, and before every
    /// id there.
    pub fn before_start(&self) -> Cursor {
        Cursor {
            created_at: self.from - chrono::Duration::microseconds(1),
            id: uuid::Uuid::max(),
        }
    }
}

fn invalid(message: &'static str) -> Error {
    Error::new(ResponseCode::InvalidRequest).with_message(message)
}

/// What a statement says of its period, in kobo.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Summary {
    pub opening: i64,
    pub closing: i64,
    pub totals: PeriodTotals,
}

impl Summary {
    /// The period's balances and totals: three reads, none of which grows with the account's
    /// history (the totals grow with the period's transactions).
    pub async fn read(store: &Store, account_id: &str, period: &Period) -> Result<Summary, Error> {
        let opening = transactions::balance_before(store, account_id, period.from).await?;
        let closing = transactions::balance_before(store, account_id, period.until).await?;
        let totals =
            transactions::period_totals(store, account_id, period.from, period.until).await?;
        Ok(Summary {
            opening,
            closing,
            totals,
        })
    }

    /// Whether the figures reconcile: opening + credits − debits = closing.
    pub fn reconciles(&self) -> bool {
        i128::from(self.opening) + self.totals.credited - self.totals.debited
            == i128::from(self.closing)
    }
}

/// One page of the period's lines after `cursor` (from the period's start without one), at
/// most `size`, and whether more follow.
pub async fn lines(
    store: &Store,
    account_id: &str,
    period: &Period,
    cursor: Option<Cursor>,
    size: u64,
) -> Result<(Vec<StatementLine>, bool), Error> {
    let after = cursor.unwrap_or_else(|| period.before_start());
    let mut rows =
        transactions::statement_lines(store, account_id, &after, period.until, size + 1).await?;
    let has_more = paging::trim_to_page(&mut rows, size);
    Ok((rows, has_more))
}

/// The business's account numbered `number` (`44` if it is not one), the period of Lagos days
/// `start..=end` (`01` if it is not one a statement covers), and the period's figures: what a
/// statement begins with, as JSON or as a file.
pub async fn summarised(
    store: &Store,
    business_id: &str,
    number: &str,
    (start, end): (NaiveDate, NaiveDate),
) -> Result<(AccountRow, Period, Summary), Error> {
    let period = Period::of(start, end)?;
    let account = accounts::of_business(store, business_id, number).await?;
    let summary = Summary::read(store, &account.id, &period).await?;
    Ok((account, period, summary))
}

/// `get_account_statement` and `get_account_statement_api`: the business's account numbered
/// `body.account_number`.
pub async fn get_account_statement(
    bank: &Bank,
    business_id: &str,
    body: models::GetAccountStatementRequest,
) -> Result<Page<models::AccountStatement>, Error> {
    let store = &bank.platform.store;
    let size = body.limit.get();
    if size > paging::PAGE_SIZE_MAX {
        return Err(invalid("`limit`: at most 100"));
    }
    let cursor = paging::keyset_cursor(body.cursor_created_at, body.cursor_id)?;
    let number = body.account_number.as_str();
    let (account, period, summary) =
        summarised(store, business_id, number, (body.start_date, body.end_date)).await?;
    if !summary.reconciles() {
        return Err(Error::internal(format!(
            "the statement of account {number} does not reconcile: run `kobo ledger verify`"
        )));
    }
    let (rows, has_more) = lines(store, &account.id, &period, cursor, size).await?;
    let last = rows.last().map(|line| (line.created_at, line.id));
    let lines = rows.into_iter().map(line_view).collect::<Result<_, _>>()?;
    Ok(Page {
        data: view(&account, &period, &summary, lines)?,
        pagination: paging::keyset_pagination(has_more, last, size),
    })
}

fn view(
    account: &AccountRow,
    period: &Period,
    summary: &Summary,
    lines: Vec<models::StatementLine>,
) -> Result<models::AccountStatement, Error> {
    let amount = |kobo: i128| value(Total(kobo).amount_text());
    Ok(models::AccountStatement {
        account_number: value(account.account_number.clone())?,
        account_name: account.account_name.clone(),
        currency: models::AccountStatementCurrency::Ngn,
        start_date: period.start_date,
        end_date: period.end_date,
        period_start: period.from,
        period_end: period.until,
        opening_balance: amount(i128::from(summary.opening))?,
        closing_balance: amount(i128::from(summary.closing))?,
        total_credits: amount(summary.totals.credited)?,
        total_debits: amount(summary.totals.debited)?,
        credit_count: u64::try_from(summary.totals.credits).or_internal()?,
        debit_count: u64::try_from(summary.totals.debits).or_internal()?,
        lines,
    })
}

fn line_view(line: StatementLine) -> Result<models::StatementLine, Error> {
    let amount = transactions_view::amount_of;
    Ok(models::StatementLine {
        id: line.id,
        reference_number: line.reference_number,
        transaction_type: value(line.transaction_type)?,
        transaction_category: value(line.category)?,
        status: value(line.status)?,
        channel: value(line.channel)?,
        amount: amount(line.amount)?,
        balance_after: amount(line.balance_after)?,
        remarks: line.narration,
        session_id: line.session_id.map(value).transpose()?,
        counterparty_account_number: line.originator_account_number,
        counterparty_account_name: line.originator_account_name,
        counterparty_bank_name: line.originator_bank_name,
        created_at: line.created_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn a_period_is_its_lagos_days() {
        let period = Period::of(day("2026-11-01"), day("2026-11-30")).unwrap();
        assert_eq!(period.from.to_rfc3339(), "2026-10-31T23:00:00+00:00");
        assert_eq!(period.until.to_rfc3339(), "2026-11-30T23:00:00+00:00");
        let one = Period::of(day("2026-11-02"), day("2026-11-02")).unwrap();
        assert_eq!((one.until - one.from).num_hours(), 24);
    }

    #[test]
    fn a_period_is_at_most_366_days_and_in_order() {
        assert!(Period::of(day("2024-01-01"), day("2024-12-31")).is_ok());
        assert!(Period::of(day("2024-01-01"), day("2025-01-01")).is_err());
        assert!(Period::of(day("2026-11-02"), day("2026-11-01")).is_err());
    }
}
