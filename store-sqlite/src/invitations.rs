//! `invitations`: the invitations sent to pending members (only their tokens' hashes), each
//! usable once until it expires or is revoked.

use chrono::{DateTime, Utc};

use crate::{new_id, timestamp, Store, StoreError, Tx};
pub use kobo_store::invitations::{Invitation, NewInvitation};

kobo_store::invitations_functions!(backend crate::Backend);

impl kobo_store::invitations::Invitations for crate::Backend {
    async fn insert(
        tx: &mut Tx,
        new: &NewInvitation<'_>,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let id = new_id();
        let expires_at = timestamp(new.expires_at);
        let now = timestamp(now);
        sqlx::query!(
        "INSERT INTO invitations (id, business_id, member_id, token_hash, expires_at, used_at, \
           revoked_at, created_at) VALUES (?1, ?2, ?3, ?4, ?5, NULL, NULL, ?6)",
        id,
        new.business_id,
        new.member_id,
        new.token_hash,
        expires_at,
        now
    )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn find_by_token_hash(
        store: &Store,
        token_hash: &str,
    ) -> Result<Option<Invitation>, StoreError> {
        Ok(sqlx::query_as!(
            Invitation,
            r#"SELECT i.id AS "id!", i.business_id, i.member_id,
             i.expires_at AS "expires_at: DateTime<Utc>",
             i.used_at AS "used_at: DateTime<Utc>",
             i.revoked_at AS "revoked_at: DateTime<Utc>",
             m.invitation_status, m.email, m.first_name, m.last_name, b.client_id
           FROM invitations i
           JOIN members m ON m.id = i.member_id AND m.business_id = i.business_id
           JOIN businesses b ON b.id = i.business_id
           WHERE i.token_hash = ?1"#,
            token_hash
        )
        .fetch_optional(store.pool())
        .await?)
    }

    async fn use_up(tx: &mut Tx, id: &str, now: DateTime<Utc>) -> Result<bool, StoreError> {
        let now = timestamp(now);
        let claimed = sqlx::query!(
            "UPDATE invitations SET used_at = ?2 \
         WHERE id = ?1 AND used_at IS NULL AND revoked_at IS NULL",
            id,
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
        let now = timestamp(now);
        let revoked = sqlx::query!(
            "UPDATE invitations SET revoked_at = ?2 \
         WHERE member_id = ?1 AND used_at IS NULL AND revoked_at IS NULL",
            member_id,
            now
        )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(revoked)
    }
}
