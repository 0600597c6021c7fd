//! `invitations`: the invitations sent to pending members (only their tokens' hashes), each
//! usable once until it expires or is revoked.

use chrono::{DateTime, Utc};

use super::{StoreError, Tx};
use crate::kernel::store::{self, Store};
pub use kobo_store::invitations::{Invitation, NewInvitation};

/// Writes an open invitation at `now`.
pub async fn insert(
    tx: &mut Tx,
    new: &NewInvitation<'_>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO invitations (id, business_id, member_id, token_hash, expires_at, used_at, \
           revoked_at, created_at) VALUES ($1, $2, $3, $4, $5, NULL, NULL, $6)",
    )
    .bind(store::new_id())
    .bind(new.business_id)
    .bind(new.member_id)
    .bind(new.token_hash)
    .bind(store::timestamp(new.expires_at))
    .bind(store::timestamp(now))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The invitation whose token hashes to `token_hash`, if any.
pub async fn find_by_token_hash(
    store: &Store,
    token_hash: &str,
) -> Result<Option<Invitation>, StoreError> {
    let row = sqlx::query(
        "SELECT i.id, i.business_id, i.member_id, i.expires_at, i.used_at, i.revoked_at, \
           m.invitation_status, m.email, m.first_name, m.last_name, b.client_id \
         FROM invitations i JOIN members m ON m.id = i.member_id AND m.business_id = i.business_id \
         JOIN businesses b ON b.id = i.business_id \
         WHERE i.token_hash = $1",
    )
    .bind(token_hash)
    .fetch_optional(store.pool())
    .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    Ok(Some(Invitation {
        id: store::text(&row, "id")?,
        business_id: store::text(&row, "business_id")?,
        member_id: store::text(&row, "member_id")?,
        expires_at: store::time(&row, "expires_at")?,
        used_at: store::optional_time(&row, "used_at")?,
        revoked_at: store::optional_time(&row, "revoked_at")?,
        invitation_status: store::text(&row, "invitation_status")?,
        email: store::text(&row, "email")?,
        first_name: store::text(&row, "first_name")?,
        last_name: store::text(&row, "last_name")?,
        client_id: store::text(&row, "client_id")?,
    }))
}

/// Uses the invitation `id` at `now`; `false` when it was used or revoked already.
pub async fn use_up(tx: &mut Tx, id: &str, now: DateTime<Utc>) -> Result<bool, StoreError> {
    let claimed = sqlx::query(
        "UPDATE invitations SET used_at = $2 \
         WHERE id = $1 AND used_at IS NULL AND revoked_at IS NULL",
    )
    .bind(id)
    .bind(store::timestamp(now))
    .execute(&mut **tx)
    .await?
    .rows_affected();
    Ok(claimed == 1)
}

/// Revokes the member's open invitations at `now`; returns how many.
pub async fn revoke_open_of_member(
    tx: &mut Tx,
    member_id: &str,
    now: DateTime<Utc>,
) -> Result<u64, StoreError> {
    let revoked = sqlx::query(
        "UPDATE invitations SET revoked_at = $2 \
         WHERE member_id = $1 AND used_at IS NULL AND revoked_at IS NULL",
    )
    .bind(member_id)
    .bind(store::timestamp(now))
    .execute(&mut **tx)
    .await?
    .rows_affected();
    Ok(revoked)
}
