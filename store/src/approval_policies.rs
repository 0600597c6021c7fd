//! The rows of `approval_policies` (see the datastore module of the same name in `kobo`).

use chrono::{DateTime, Utc};

/// A business's approval policy as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalPolicy {
    pub id: uuid::Uuid,
    pub is_active: bool,
    /// Transfers of at least this many kobo are held (0: every transfer).
    pub min_amount: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}
