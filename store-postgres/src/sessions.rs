//! `sessions`: every token's row, checked on every request, so revocation is immediate.

use chrono::{DateTime, Utc};

use crate::Pool;
use crate::{id, new_id, new_opt_id, StoreError, Tx};
pub use kobo_store::sessions::{Authenticated, NewSession, SessionMember};

/// Writes a live session.
pub async fn insert(tx: &mut Tx, new: &NewSession<'_>) -> Result<(), StoreError> {
    sqlx::query!(
        "INSERT INTO sessions (id, business_id, family, member_id, ip_address, created_at, \
           expires_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)",
        new_id(new.id)?,
        new_id(new.business_id)?,
        new.family,
        new_opt_id(new.member_id)?,
        new.ip_address,
        new.created_at,
        new.expires_at
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The session `id` as authentication reads it, if it exists.
pub async fn find_for_token(pool: &Pool, id: &str) -> Result<Option<Authenticated>, StoreError> {
    pool.run(async |pool| {
        let row = sqlx::query!(
        r#"SELECT s.business_id::text AS "business_id!", s.family, s.member_id::text AS member_id,
           s.expires_at, s.revoked_at,
           m.email AS "email?", m.first_name AS "first_name?", m.last_name AS "last_name?",
           m.role_id::text AS "role_id?", m.is_active AS "is_active?",
           r.permission_codes AS "permission_codes?",
           b.status AS business_status, b.client_id, b.secret_issued_by,
           (SELECT g.value FROM auth_generation g WHERE g.id = 1) AS "generation!"
         FROM sessions s
         JOIN businesses b ON b.id = s.business_id
         LEFT JOIN members m ON m.id = s.member_id AND m.business_id = s.business_id
         LEFT JOIN roles r ON r.id = m.role_id
         WHERE s.id = $1"#,
        crate::id(id)
    )
    .fetch_optional(&mut *pool)
    .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let member = match row.email {
            Some(email) => Some(SessionMember {
                email,
                first_name: row.first_name.unwrap_or_default(),
                last_name: row.last_name.unwrap_or_default(),
                role_id: row.role_id.unwrap_or_default(),
                is_active: row.is_active == Some(true),
                permission_codes: row.permission_codes,
            }),
            None => None,
        };
        Ok(Some(Authenticated {
            business_id: row.business_id,
            family: row.family,
            member_id: row.member_id,
            expires_at: row.expires_at,
            revoked_at: row.revoked_at,
            member,
            business_status: row.business_status,
            client_id: row.client_id,
            secret_issued_by: row.secret_issued_by,
            generation: row.generation,
        }))
    })
    .await
}

/// The generation of what authentication reads (migration 0015): every change that can refuse
/// a live token moves it, in the change's transaction, and announces it on `kobo_auth`.
pub async fn auth_generation(pool: &Pool) -> Result<i64, StoreError> {
    pool.run(async |pool| {
        let value = sqlx::query_scalar!("SELECT value FROM auth_generation WHERE id = 1")
            .fetch_one(&mut *pool)
            .await?;
        Ok(value)
    })
    .await
}

/// Revokes the business's session `id` at `now`, if it is live.
pub async fn revoke(
    tx: &mut Tx,
    id: &str,
    business_id: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query!(
        "UPDATE sessions SET revoked_at = $3 \
         WHERE id = $1 AND business_id = $2 AND revoked_at IS NULL",
        crate::id(id),
        crate::id(business_id),
        now
    )
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
    sqlx::query!(
        "UPDATE sessions SET revoked_at = $2 WHERE member_id = $1 AND revoked_at IS NULL",
        id(member_id),
        now
    )
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
    sqlx::query!(
        "UPDATE sessions SET revoked_at = $2 \
         WHERE business_id = $1 AND family = 'integration' AND revoked_at IS NULL",
        id(business_id),
        now
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Deletes the sessions that expired or were revoked before `cutoff`, on the pool; returns
/// how many.
pub async fn purge_finished(pool: &Pool, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
    pool.run(async |pool| {
        let deleted = sqlx::query!(
            "DELETE FROM sessions WHERE expires_at < $1 OR revoked_at < $1",
            cutoff
        )
        .execute(&mut *pool)
        .await?
        .rows_affected();
        Ok(deleted)
    })
    .await
}
