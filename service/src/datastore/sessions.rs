//! `sessions`: every token's row, checked on every request, so revocation is immediate.

use chrono::{DateTime, Utc};
use sqlx::Row;

use super::{StoreError, Tx};
use crate::kernel::store::{self, Store};
pub use kobo_store::sessions::{Authenticated, NewSession, SessionMember};

/// Writes a live session.
pub async fn insert(tx: &mut Tx, new: &NewSession<'_>) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO sessions (id, business_id, family, member_id, ip_address, created_at, \
           expires_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)",
    )
    .bind(new.id)
    .bind(new.business_id)
    .bind(new.family)
    .bind(new.member_id)
    .bind(new.ip_address)
    .bind(store::timestamp(new.created_at))
    .bind(store::timestamp(new.expires_at))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The session `id` as authentication reads it, if it exists.
pub async fn find_for_token(store: &Store, id: &str) -> Result<Option<Authenticated>, StoreError> {
    let row = sqlx::query(
        "SELECT s.business_id, s.family, s.member_id, s.expires_at, s.revoked_at, \
           m.email, m.first_name, m.last_name, m.role_id, m.is_active, r.permission_codes, \
           b.status AS business_status, b.client_id, b.secret_issued_by \
         FROM sessions s \
         JOIN businesses b ON b.id = s.business_id \
         LEFT JOIN members m ON m.id = s.member_id AND m.business_id = s.business_id \
         LEFT JOIN roles r ON r.id = m.role_id \
         WHERE s.id = $1",
    )
    .bind(id)
    .fetch_optional(store.pool())
    .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let member = match store::optional_text(&row, "email")? {
        Some(email) => Some(SessionMember {
            email,
            first_name: store::text(&row, "first_name")?,
            last_name: store::text(&row, "last_name")?,
            role_id: store::text(&row, "role_id")?,
            is_active: row.try_get::<Option<i64>, _>("is_active")? == Some(1),
            permission_codes: store::optional_text(&row, "permission_codes")?,
        }),
        None => None,
    };
    Ok(Some(Authenticated {
        business_id: store::text(&row, "business_id")?,
        family: store::text(&row, "family")?,
        member_id: store::optional_text(&row, "member_id")?,
        expires_at: store::time(&row, "expires_at")?,
        revoked_at: store::optional_time(&row, "revoked_at")?,
        member,
        business_status: store::text(&row, "business_status")?,
        client_id: store::text(&row, "client_id")?,
        secret_issued_by: store::optional_text(&row, "secret_issued_by")?,
    }))
}

/// Revokes the business's session `id` at `now`, if it is live.
pub async fn revoke(
    tx: &mut Tx,
    id: &str,
    business_id: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE sessions SET revoked_at = $3 \
         WHERE id = $1 AND business_id = $2 AND revoked_at IS NULL",
    )
    .bind(id)
    .bind(business_id)
    .bind(store::timestamp(now))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Revokes every live session of the member at `now`.
pub async fn revoke_all_of_member(
    tx: &mut Tx,
    member_id: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE sessions SET revoked_at = $2 WHERE member_id = $1 AND revoked_at IS NULL")
        .bind(member_id)
        .bind(store::timestamp(now))
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Revokes every live integration session of the business at `now`.
pub async fn revoke_integration_of_business(
    tx: &mut Tx,
    business_id: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE sessions SET revoked_at = $2 \
         WHERE business_id = $1 AND family = 'integration' AND revoked_at IS NULL",
    )
    .bind(business_id)
    .bind(store::timestamp(now))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Deletes the sessions that expired or were revoked before `cutoff`, on the pool; returns
/// how many.
pub async fn purge_finished(store: &Store, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
    let deleted = sqlx::query("DELETE FROM sessions WHERE expires_at < $1 OR revoked_at < $1")
        .bind(store::timestamp(cutoff))
        .execute(store.pool())
        .await?
        .rows_affected();
    Ok(deleted)
}
