//! `transactions` (one account's side of a journal entry, as a business lists it) and
//! `settlements` (the cleared inbound credits, one per collection, sharing its id).

use super::contract::*;

use chrono::{DateTime, Utc};
use kobo_store::paging::Cursor;
pub use kobo_store::transactions::{
    DayTotal, Filters, Listing, NewTransaction, Originator, PeriodTotals, SessionCredit,
    StatementLine, TransactionRow, Window,
};

pub use kobo_store::batch::transaction_into as record_into;

kobo_store::transactions_functions!(dispatch);
