//! `sessions`: every token's row, checked on every request, so revocation is immediate.

use chrono::{DateTime, Utc};

use crate::Pool;
use crate::{id, new_id, new_opt_id, StoreError, Tx};
use kobo_store::businesses::Business;
use kobo_store::members::{Member, Profile};
use kobo_store::roles::Role;
pub use kobo_store::sessions::{Authenticated, NewSession, SessionMember};

kobo_store::sessions_functions!(backend crate::Backend);

impl kobo_store::sessions::Sessions for crate::Backend {
    async fn insert(tx: &mut Tx, new: &NewSession<'_>) -> Result<(), StoreError> {
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

    async fn find_for_token(pool: &Pool, id: &str) -> Result<Option<Authenticated>, StoreError> {
        pool.run(async |pool| {
        let row = sqlx::query_as!(
            TokenRow,
            r#"SELECT s.business_id::text AS "business_id!", s.family, s.member_id::text AS member_id,
               s.expires_at, s.revoked_at,
               m.id AS "m_id?", m.email AS "email?", m.first_name AS "first_name?",
               m.last_name AS "last_name?", m.role_id::text AS "role_id?",
               m.is_active AS "is_active?", m.invitation_status AS "invitation_status?",
               m.last_login AS "last_login?", m.date_joined AS "date_joined?",
               m.created_at AS "m_created_at?",
               (SELECT MAX(i.expires_at) FROM invitations i WHERE i.member_id = m.id
                  AND i.used_at IS NULL AND i.revoked_at IS NULL) AS invitation_expires_at,
               r.id AS "r_id?", r.name AS "r_name?", r.description AS "r_description?",
               r.is_built_in AS "r_is_built_in?", r.permission_codes AS "permission_codes?",
               r.created_at AS "r_created_at?", r.updated_at AS "r_updated_at?",
               (r.business_id IS NULL OR r.business_id = m.business_id) AS "role_fits?",
               b.name AS business_name, b.status AS business_status, b.client_id,
               b.secret_issued_by, b.created_at AS business_created_at,
               (b.secret_issued_by IS NULL OR EXISTS (
                  SELECT 1 FROM members im JOIN roles ir ON ir.id = im.role_id
                  WHERE im.business_id = b.id AND im.id::text = b.secret_issued_by
                    AND im.is_active
                    AND (ir.business_id IS NULL OR ir.business_id = im.business_id)
                    AND position('"credential.manage"' IN ir.permission_codes) > 0))
                 AS "credentials_usable!",
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
        Ok(row.map(TokenRow::into_authenticated))
    })
    .await
    }

    async fn auth_generation(pool: &Pool) -> Result<i64, StoreError> {
        pool.run(async |pool| {
            let value = sqlx::query_scalar!("SELECT value FROM auth_generation WHERE id = 1")
                .fetch_one(&mut *pool)
                .await?;
            Ok(value)
        })
        .await
    }

    async fn revoke(
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

    async fn revoke_all_of_member(
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

    async fn revoke_integration_of_business(
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

    async fn purge_finished(pool: &Pool, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
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

    async fn extend_idle(
        tx: &mut Tx,
        session_id: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query!(
            "UPDATE sessions SET expires_at = $3 \
             WHERE id = $1 AND revoked_at IS NULL AND expires_at > $2 AND expires_at < $3",
            id(session_id),
            now,
            until
        )
        .execute(&mut **tx)
        .await?;
        Ok(done.rows_affected() == 1)
    }
}

/// A session's row as `find_for_token` reads it: the session, its member, their role and
/// business, in one snapshot.
struct TokenRow {
    business_id: String,
    family: String,
    member_id: Option<String>,
    expires_at: DateTime<Utc>,
    revoked_at: Option<DateTime<Utc>>,
    m_id: Option<uuid::Uuid>,
    email: Option<String>,
    first_name: Option<String>,
    last_name: Option<String>,
    role_id: Option<String>,
    is_active: Option<bool>,
    invitation_status: Option<String>,
    last_login: Option<DateTime<Utc>>,
    date_joined: Option<DateTime<Utc>>,
    m_created_at: Option<DateTime<Utc>>,
    invitation_expires_at: Option<DateTime<Utc>>,
    r_id: Option<uuid::Uuid>,
    r_name: Option<String>,
    r_description: Option<String>,
    r_is_built_in: Option<bool>,
    permission_codes: Option<String>,
    r_created_at: Option<DateTime<Utc>>,
    r_updated_at: Option<DateTime<Utc>>,
    role_fits: Option<bool>,
    business_name: String,
    business_status: String,
    client_id: String,
    secret_issued_by: Option<String>,
    business_created_at: DateTime<Utc>,
    credentials_usable: bool,
    generation: i64,
}

impl TokenRow {
    /// The session as authentication reads it; its profile when the member and a role their
    /// business can use are there.
    fn into_authenticated(self) -> Authenticated {
        let row = self;
        let profile = (|| {
            row.role_fits.filter(|fits| *fits)?;
            let role = Role {
                id: row.r_id?,
                name: row.r_name.clone()?,
                description: row.r_description.clone()?,
                is_built_in: row.r_is_built_in?,
                permission_codes: row.permission_codes.clone()?,
                created_at: row.r_created_at?,
                updated_at: row.r_updated_at?,
            };
            Some(Profile {
                member: Member {
                    id: row.m_id?,
                    email: row.email.clone()?,
                    first_name: row.first_name.clone()?,
                    last_name: row.last_name.clone()?,
                    role_id: role.id,
                    role_name: role.name.clone(),
                    is_active: row.is_active?,
                    invitation_status: row.invitation_status.clone()?,
                    last_login: row.last_login,
                    date_joined: row.date_joined?,
                    created_at: row.m_created_at?,
                    invitation_expires_at: row.invitation_expires_at,
                },
                role,
                business: Business {
                    id: row.business_id.clone(),
                    name: row.business_name.clone(),
                    status: row.business_status.clone(),
                    client_id: row.client_id.clone(),
                    created_at: row.business_created_at,
                },
            })
        })();
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
        Authenticated {
            business_id: row.business_id,
            family: row.family,
            member_id: row.member_id,
            expires_at: row.expires_at,
            revoked_at: row.revoked_at,
            member,
            business_status: row.business_status,
            client_id: row.client_id,
            secret_issued_by: row.secret_issued_by,
            credentials_usable: row.credentials_usable,
            profile,
            generation: row.generation,
        }
    }
}
