//! The rows of `ledger` (see the datastore module of the same name in `kobo`).

use chrono::{DateTime, Utc};

/// A business's ledger head after an advance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdvancedHead {
    pub business_id: String,
    /// The last sequence taken, the advance's places included.
    pub last_sequence: i64,
    /// The time of the last place taken, in microseconds since the epoch; `None` for a head
    /// last advanced before migration 0010, whose time is `last_posted_at`'s.
    pub last_posted_micros: Option<i64>,
    pub last_posted_at: DateTime<Utc>,
}
