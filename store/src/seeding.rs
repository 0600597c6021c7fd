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
    pub at: DateTime<Utc>,
}
