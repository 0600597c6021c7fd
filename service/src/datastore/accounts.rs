//! `accounts`: every customer-facing account (the business's main pool account, its current
//! accounts, its customers' virtual accounts), each with its stored balance.

use super::contract::*;

use crate::kernel::paging::Cursor;
use chrono::{DateTime, Utc};
pub use kobo_store::accounts::{
    AccountRow, Activity, BalanceChange, CurrentAccountFacts, Filters, KoboAccount, Metrics,
    MetricsFilters, NewAccount, PayoutLookup, PayoutRead,
};
use std::collections::HashMap;

kobo_store::accounts_functions!(dispatch);
