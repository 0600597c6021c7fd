//! `get_cash_flow`: the money that came into and went out of a business's accounts on each of
//! its last days (issue 59), what the Dashboard's overview charts. Every day of the window is
//! present, oldest first; the sums are exact (kobo, in `i128`).

use std::collections::HashMap;

use chrono::{Days, NaiveDate, TimeZone, Utc};
use generated_server::models;

use crate::datastore::transactions;
use crate::error::{Error, OrInternal};
use crate::money::accounts::{self, value};
use crate::money::amount::Total;
use crate::money::bank::Bank;
use crate::platform::caller::Caller;
use crate::platform::context::Platform;

/// The most days a window may hold (the spec's `maximum`).
const DAYS_MAX: u64 = 90;

/// What came in and went out on one day: counts and kobo.
#[derive(Clone, Copy, Default)]
struct Day {
    credits: i64,
    money_in: i128,
    debits: i64,
    money_out: i128,
}

pub async fn get_cash_flow(
    bank: &Bank,
    caller: &Caller,
    body: models::GetCashFlowRequest,
) -> Result<models::CashFlow, Error> {
    let Platform { store, clock, .. } = &bank.platform;
    let business_id = &caller.principal.business_id;
    let days = body.days.get().min(DAYS_MAX);
    let account_id = match &body.account_number {
        Some(number) => Some(
            accounts::of_business(store, business_id, number.as_str())
                .await?
                .id,
        ),
        None => None,
    };
    let end = clock.now().date_naive();
    let start = end
        .checked_sub_days(Days::new(days - 1))
        .ok_or_else(|| Error::internal("a window before the calendar's start"))?;
    let after_end = end
        .checked_add_days(Days::new(1))
        .ok_or_else(|| Error::internal("a window past the calendar's end"))?;
    let from = Utc.from_utc_datetime(&start.and_time(chrono::NaiveTime::MIN));
    let until = Utc.from_utc_datetime(&after_end.and_time(chrono::NaiveTime::MIN));
    let rows =
        transactions::per_day(store, business_id, account_id.as_deref(), from, until).await?;
    let mut by_day: HashMap<NaiveDate, Day> = HashMap::new();
    for (day, credit, count, sum) in rows {
        let date = NaiveDate::parse_from_str(&day, "%Y-%m-%d").or_internal()?;
        let totals = by_day.entry(date).or_default();
        if credit {
            totals.credits += count;
            totals.money_in += sum;
        } else {
            totals.debits += count;
            totals.money_out += sum;
        }
    }
    let (mut money_in, mut money_out) = (0_i128, 0_i128);
    let mut data = Vec::with_capacity(days as usize);
    for date in start.iter_days().take_while(|date| *date <= end) {
        let day = by_day.get(&date).copied().unwrap_or_default();
        money_in += day.money_in;
        money_out += day.money_out;
        data.push(models::CashFlowDay {
            date,
            money_in: value(Total(day.money_in).amount_text())?,
            money_out: value(Total(day.money_out).amount_text())?,
            credits: u64::try_from(day.credits).or_internal()?,
            debits: u64::try_from(day.debits).or_internal()?,
        });
    }
    Ok(models::CashFlow {
        start_date: start,
        end_date: end,
        money_in: value(Total(money_in).amount_text())?,
        money_out: value(Total(money_out).amount_text())?,
        days: data,
    })
}
