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

crate::contract! {
    /// `approval_policies`, in each store.
    pub trait ApprovalPolicies in approval_policies, functions approval_policies_functions {
        /// The business's policy, if it has one.
        conn fn find(business_id: &str) -> Option<ApprovalPolicy>;
        /// Creates the business's policy; `false` if it has one already (nothing changes).
        tx fn insert(
            business_id: &str,
            is_active: bool,
            min_amount: i64,
            now: DateTime<Utc>,
        ) -> bool;
        /// Changes what is given of the business's policy; `false` if it has none.
        tx fn update(
            business_id: &str,
            min_amount: Option<i64>,
            is_active: Option<bool>,
            now: DateTime<Utc>,
        ) -> bool;
    }
}
