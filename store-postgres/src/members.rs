//! `members`: the people of each business, with their role, password hash, activity and
//! invitation status.

use chrono::{DateTime, Utc};

use crate::Pool;
use crate::{id, new_id, StoreError, Tx};
pub use kobo_store::members::{
    Approver, Member, MemberFilter, MemberOrder, Membership, NewMember, Profile, Standing,
};

kobo_store::members_functions!(backend crate::Backend);

impl kobo_store::members::Members for crate::Backend {
    async fn find(
        conn: Self::Conn<'_>,
        business_id: &str,
        member_id: &str,
    ) -> Result<Option<Member>, StoreError> {
        conn.run(async |conn| {
            Ok(sqlx::query_as!(
                Member,
                r#"SELECT m.id, m.email, m.first_name, m.last_name, m.role_id, r.name AS role_name,
           m.is_active, m.invitation_status, m.last_login, m.date_joined, m.created_at,
           (SELECT MAX(i.expires_at) FROM invitations i WHERE i.member_id = m.id
              AND i.used_at IS NULL AND i.revoked_at IS NULL) AS invitation_expires_at
         FROM members m JOIN roles r ON r.id = m.role_id
         WHERE m.id = $1 AND m.business_id = $2"#,
                id(member_id),
                id(business_id)
            )
            .fetch_optional(&mut *conn)
            .await?)
        })
        .await
    }

    async fn list(pool: &Pool, filter: &MemberFilter) -> Result<Vec<Member>, StoreError> {
        pool.run(async |pool| {
            let order = match filter.order {
                MemberOrder::DateJoined => "date_joined",
                MemberOrder::Email => "email",
                MemberOrder::FirstName => "first_name",
                MemberOrder::LastName => "last_name",
                MemberOrder::LastLogin => "last_login",
            };
            // One statement for every order: each `CASE` sorts only when its order and direction are
            // the ones asked (the others are NULL on every row, so they do not reorder anything).
            // Members without a login come last either way.
            Ok(sqlx::query_as!(
                Member,
                r#"SELECT m.id, m.email, m.first_name, m.last_name, m.role_id, r.name AS role_name,
           m.is_active, m.invitation_status, m.last_login, m.date_joined, m.created_at,
           (SELECT MAX(i.expires_at) FROM invitations i WHERE i.member_id = m.id
              AND i.used_at IS NULL AND i.revoked_at IS NULL) AS invitation_expires_at
         FROM members m JOIN roles r ON r.id = m.role_id
         WHERE m.business_id = $1
           AND m.date_joined >= COALESCE($2::timestamptz, '-infinity')
           AND m.date_joined < COALESCE($3::timestamptz, 'infinity')
           AND ($4::boolean IS NULL OR m.is_active = $4)
           AND ($5::uuid IS NULL OR m.role_id = $5)
         ORDER BY
           CASE WHEN $6 = 'date_joined' AND $7 THEN m.date_joined END ASC,
           CASE WHEN $6 = 'date_joined' AND NOT $7 THEN m.date_joined END DESC,
           CASE WHEN $6 = 'email' AND $7 THEN m.email END ASC,
           CASE WHEN $6 = 'email' AND NOT $7 THEN m.email END DESC,
           CASE WHEN $6 = 'first_name' AND $7 THEN LOWER(m.first_name) END ASC,
           CASE WHEN $6 = 'first_name' AND NOT $7 THEN LOWER(m.first_name) END DESC,
           CASE WHEN $6 = 'last_name' AND $7 THEN LOWER(m.last_name) END ASC,
           CASE WHEN $6 = 'last_name' AND NOT $7 THEN LOWER(m.last_name) END DESC,
           CASE WHEN $6 = 'last_login' THEN m.last_login IS NULL END ASC,
           CASE WHEN $6 = 'last_login' AND $7 THEN m.last_login END ASC,
           CASE WHEN $6 = 'last_login' AND NOT $7 THEN m.last_login END DESC,
           CASE WHEN $7 THEN m.id END ASC,
           CASE WHEN NOT $7 THEN m.id END DESC
         LIMIT $8 OFFSET $9"#,
                id(&filter.business_id),
                filter.joined_from,
                filter.joined_until,
                filter.is_active,
                filter.role_id.as_deref().map(id),
                order,
                filter.ascending,
                (filter.page_size + 1) as i64,
                filter.offset
            )
            .fetch_all(&mut *pool)
            .await?)
        })
        .await
    }

    async fn memberships(
        pool: &Pool,
        email: &str,
        client_id_prefix: &str,
        business_id: Option<&str>,
        max: usize,
    ) -> Result<Vec<Membership>, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_as!(
                Membership,
                r#"SELECT m.id::text AS "id!", m.business_id::text AS "business_id!", m.first_name,
           m.last_name, m.password_hash, m.is_active, m.invitation_status
         FROM members m JOIN businesses b ON b.id = m.business_id
         WHERE m.email = $1 AND substr(b.client_id, 1, length($2)) = $2
           AND ($3::uuid IS NULL OR m.business_id = $3)
         ORDER BY m.created_at, m.id LIMIT $4"#,
                email,
                client_id_prefix,
                business_id.map(id),
                max as i64
            )
            .fetch_all(&mut *pool)
            .await?)
        })
        .await
    }

    async fn record_login(tx: &mut Tx, id: &str, now: DateTime<Utc>) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE members SET last_login = $2 WHERE id = $1",
            crate::id(id),
            now
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn password_hash(
        pool: &Pool,
        id: &str,
        business_id: &str,
    ) -> Result<Option<String>, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_scalar!(
                "SELECT password_hash FROM members WHERE id = $1 AND business_id = $2",
                crate::id(id),
                crate::id(business_id)
            )
            .fetch_optional(&mut *pool)
            .await?
            .flatten())
        })
        .await
    }

    async fn change_password(
        tx: &mut Tx,
        id: &str,
        business_id: &str,
        current: &str,
        new: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let changed = sqlx::query!(
            "UPDATE members SET password_hash = $3, updated_at = $4 \
         WHERE id = $1 AND business_id = $2 AND password_hash = $5",
            crate::id(id),
            crate::id(business_id),
            new,
            now,
            current
        )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(changed == 1)
    }

    async fn email_taken(tx: &mut Tx, business_id: &str, email: &str) -> Result<bool, StoreError> {
        let row = sqlx::query_scalar!(
            "SELECT id FROM members WHERE email = $1 AND business_id = $2",
            email,
            id(business_id)
        )
        .fetch_optional(&mut **tx)
        .await?;
        Ok(row.is_some())
    }

    async fn insert_invited(
        tx: &mut Tx,
        new: &NewMember<'_>,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query!(
            "INSERT INTO members (id, business_id, email, first_name, last_name, role_id, \
               password_hash, is_active, invitation_status, last_login, date_joined, \
               created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, NULL, false, 'pending', NULL, $7, $7, $7)",
            new_id(new.id)?,
            new_id(new.business_id)?,
            new.email,
            new.first_name,
            new.last_name,
            new_id(new.role_id)?,
            now
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn insert_first(
        tx: &mut Tx,
        new: &NewMember<'_>,
        password_hash: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let accepted = password_hash.is_some();
        sqlx::query!(
            "INSERT INTO members (id, business_id, email, first_name, last_name, role_id, \
           password_hash, is_active, invitation_status, last_login, date_joined, created_at, \
           updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL, $10, $10, $10)",
            new_id(new.id)?,
            new_id(new.business_id)?,
            new.email,
            new.first_name,
            new.last_name,
            new_id(new.role_id)?,
            password_hash,
            accepted,
            if accepted { "accepted" } else { "pending" },
            now
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn accept_invitation(
        tx: &mut Tx,
        id: &str,
        business_id: &str,
        password_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let activated = sqlx::query!(
        "UPDATE members SET password_hash = $3, is_active = true, invitation_status = 'accepted', \
           updated_at = $4 WHERE id = $1 AND business_id = $2 AND invitation_status = 'pending'",
        crate::id(id),
        crate::id(business_id),
        password_hash,
        now
    )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(activated == 1)
    }

    async fn restore(
        tx: &mut Tx,
        id: &str,
        business_id: &str,
        password_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let reset = sqlx::query!(
        "UPDATE members SET password_hash = $3, is_active = true, invitation_status = 'accepted', \
           updated_at = $4 WHERE id = $1 AND business_id = $2",
        crate::id(id),
        crate::id(business_id),
        password_hash,
        now
    )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(reset != 0)
    }

    async fn standing(
        tx: &mut Tx,
        id: &str,
        business_id: &str,
    ) -> Result<Option<Standing>, StoreError> {
        Ok(sqlx::query_as!(
            Standing,
            r#"SELECT role_id::text AS "role_id!", is_active, invitation_status FROM members
         WHERE id = $1 AND business_id = $2"#,
            crate::id(id),
            crate::id(business_id)
        )
        .fetch_optional(&mut **tx)
        .await?)
    }

    async fn count_active_with_role(
        tx: &mut Tx,
        business_id: &str,
        role_id: &str,
        except_id: &str,
    ) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar!(
            r#"SELECT COUNT(*) AS "count!" FROM members
         WHERE business_id = $1 AND role_id = $2 AND is_active AND id <> $3"#,
            id(business_id),
            id(role_id),
            id(except_id)
        )
        .fetch_one(&mut **tx)
        .await?)
    }

    async fn set_role(
        tx: &mut Tx,
        id: &str,
        business_id: &str,
        role_id: &str,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE members SET role_id = $3, updated_at = $4 WHERE id = $1 AND business_id = $2",
            crate::id(id),
            crate::id(business_id),
            new_id(role_id)?,
            now
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn set_active(
        tx: &mut Tx,
        id: &str,
        business_id: &str,
        active: bool,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE members SET is_active = $3, updated_at = $4 WHERE id = $1 AND business_id = $2",
            crate::id(id),
            crate::id(business_id),
            active,
            now
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn approvers(
        pool: &Pool,
        business_id: &str,
        max: i64,
    ) -> Result<Vec<Approver>, StoreError> {
        let rows = pool
            .run(async |pool| {
                Ok(sqlx::query!(
                    r#"SELECT m.id::text AS "id!", m.email, m.first_name
               FROM members m JOIN roles r ON r.id = m.role_id
               WHERE m.business_id = $1 AND m.is_active
                 AND r.permission_codes LIKE '%"transfer.approve"%'
               ORDER BY m.date_joined, m.id
               LIMIT $2"#,
                    id(business_id),
                    max
                )
                .fetch_all(&mut *pool)
                .await?)
            })
            .await?;
        Ok(rows
            .into_iter()
            .map(|row| (row.id, row.email, row.first_name))
            .collect())
    }
}
