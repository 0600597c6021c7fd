//! `approval_policies`: a business's maker-checker policy, at most one per business.

use super::{dispatch, Conn, StoreError, Tx};
use chrono::{DateTime, Utc};
pub use kobo_store::approval_policies::ApprovalPolicy;

/// The business's policy, if it has one.
pub async fn find(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
) -> Result<Option<ApprovalPolicy>, StoreError> {
    dispatch!(conn.into().on(), approval_policies::find(business_id))
}

/// Creates the business's policy; `false` if it has one already (nothing changes).
pub async fn insert(
    tx: &mut Tx,
    business_id: &str,
    is_active: bool,
    min_amount: i64,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    dispatch!(
        tx.on(),
        approval_policies::insert(business_id, is_active, min_amount, now)
    )
}

/// Changes what is given of the business's policy; `false` if it has none.
pub async fn update(
    tx: &mut Tx,
    business_id: &str,
    min_amount: Option<i64>,
    is_active: Option<bool>,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    dispatch!(
        tx.on(),
        approval_policies::update(business_id, min_amount, is_active, now)
    )
}
