//! What `kobo bench` loads in bulk (see the datastore module of the same name in `kobo`).

use chrono::{DateTime, Utc};

/// One seeded inbound credit, its ids and place chosen by the caller.
#[derive(Clone, Debug)]
pub struct SeededCredit<'a> {
    pub business_id: &'a str,
    pub account_id: &'a str,
    pub settlement_account_id: &'a str,
    pub entry_id: String,
    pub posting_ids: [String; 2],
    pub id: String,
    pub sequence: i64,
    pub reference: String,
    pub narration: String,
    pub amount: i64,
    /// The account's balance right after it.
    pub balance_after: i64,
    pub at: DateTime<Utc>,
}

crate::contract! {
    /// `seeding`, in each store.
    pub trait Seeding in seeding, functions seeding_functions {
        /// Fresh statistics of `transactions` on PostgreSQL, whose planner otherwise took a scan
        /// for the first page of a freshly seeded 100k-row account (233 ms until the table was
        /// analysed, 0.18 ms after). Nothing on SQLite, whose stores are never analysed otherwise,
        /// so a benchmark of an analysed one would measure a store no deployment has; and its
        /// statistics' samples (STAT4, built into the bundled SQLite) make SQLite plan a statement
        /// again whenever a parameter it compared to them is bound (the page's cursor, the date
        /// window).
        pool fn analyze_transactions() -> ();
        /// Whether any posting names one of `account_ids`, the bank's internal accounts.
        pool fn any_posting_to(account_ids: [&str; 4]) -> bool;
        /// The business that holds the account numbered `number`.
        pool fn business_of_account(number: &str) -> Option<String>;
        /// The numbers of the business's active accounts, the richest first.
        pool fn active_accounts_by_balance(business_id: &str) -> Vec<String>;
        /// Adds `total` kobo to the account's balance in one update, its last update at `last_at`,
        /// unless the balance would pass `max_balance`: the balance after, `None` if it would.
        tx fn add_to_balance(
            account_id: &str,
            total: i64,
            last_at: DateTime<Utc>,
            max_balance: i64,
        ) -> Option<i64>;
    }
}
