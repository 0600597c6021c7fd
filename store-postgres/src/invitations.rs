//! `invitations`: the invitations sent to pending members (only their tokens' hashes), each
//! usable once until it expires or is revoked.

use chrono::{DateTime, Utc};

use crate::Pool;
use crate::{id, new_id, StoreError, Tx};
pub use kobo_store::invitations::{Invitation, NewInvitation};

kobo_store::invitations_functions!(backend crate::Backend);

impl kobo_store::invitations::Invitations for crate::Backend {
    async fn insert(
        tx: &mut Tx,
        new: &NewInvitation<'_>,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query!(
        "INSERT INTO invitations (id, business_id, member_id, token_hash, expires_at, used_at, \
           revoked_at, created_at) VALUES ($1, $2, $3, $4, $5, NULL, NULL, $6)",
        uuid::Uuid::new_v4(),
        new_id(new.business_id)?,
        new_id(new.member_id)?,
        new.token_hash,
        new.expires_at,
        now
    )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn find_by_token_hash(
        pool: &Pool,
        token_hash: &str,
    ) -> Result<Option<Invitation>, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_as!(
                Invitation,
                r#"SELECT i.id::text AS "id!", i.business_id::text AS "business_id!",
           i.member_id::text AS "member_id!", i.expires_at, i.used_at, i.revoked_at,
           m.invitation_status, m.email, m.first_name, m.last_name, b.client_id
         FROM invitations i JOIN members m ON m.id = i.member_id AND m.business_id = i.business_id
         JOIN businesses b ON b.id = i.business_id
         WHERE i.token_hash = $1"#,
                token_hash
            )
            .fetch_optional(&mut *pool)
            .await?)
        })
        .await
    }

    async fn use_up(tx: &mut Tx, id: &str, now: DateTime<Utc>) -> Result<bool, StoreError> {
        let claimed = sqlx::query!(
            "UPDATE invitations SET used_at = $2 \
         WHERE id = $1 AND used_at IS NULL AND revoked_at IS NULL",
            crate::id(id),
            now
        )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(claimed == 1)
    }

    async fn revoke_open_of_member(
        tx: &mut Tx,
        member_id: &str,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let revoked = sqlx::query!(
            "UPDATE invitations SET revoked_at = $2 \
         WHERE member_id = $1 AND used_at IS NULL AND revoked_at IS NULL",
            id(member_id),
            now
        )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(revoked)
    }
}
