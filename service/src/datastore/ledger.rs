//! The ledger's tables: `ledger_heads` (each business's place in its ledger), `journal_entries`
//! and their `postings`, and `internal_accounts` (the bank's own accounts, seeded by migration).
//! Customer accounts' balances are `accounts`' (`datastore::accounts`).

use super::contract::*;

use chrono::{DateTime, Utc};

pub use kobo_store::ledger::{AdvancedHead, HeadsAndMoney, Money};

pub use kobo_store::ledger::record_entry_into;

kobo_store::ledger_functions!(dispatch);
