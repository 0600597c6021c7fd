//! `members`: the people of each business, with their role, password hash, activity and
//! invitation status.

use chrono::{DateTime, Utc};

use crate::{first_rows, on, timestamp, uuid, Store, StoreError, Tx, NO_TIME_BOUND};
pub use kobo_store::members::{
    Approver, Member, MemberFilter, MemberOrder, Membership, NewMember, Profile, Standing,
};

/// A member as read, ids still text.
pub(crate) struct MemberRecord {
    pub(crate) id: String,
    pub(crate) email: String,
    pub(crate) first_name: String,
    pub(crate) last_name: String,
    pub(crate) role_id: String,
    pub(crate) role_name: String,
    pub(crate) is_active: bool,
    pub(crate) invitation_status: String,
    pub(crate) last_login: Option<DateTime<Utc>>,
    pub(crate) date_joined: DateTime<Utc>,
    pub(crate) created_at: DateTime<Utc>,
    pub(crate) invitation_expires_at: Option<DateTime<Utc>>,
}

impl MemberRecord {
    pub(crate) fn into_member(self) -> Result<Member, StoreError> {
        Ok(Member {
            id: uuid(&self.id)?,
            email: self.email,
            first_name: self.first_name,
            last_name: self.last_name,
            role_id: uuid(&self.role_id)?,
            role_name: self.role_name,
            is_active: self.is_active,
            invitation_status: self.invitation_status,
            last_login: self.last_login,
            date_joined: self.date_joined,
            created_at: self.created_at,
            invitation_expires_at: self.invitation_expires_at,
        })
    }
}

kobo_store::members_functions!(backend crate::Backend);

impl kobo_store::members::Members for crate::Backend {
    async fn find(
        conn: Self::Conn<'_>,
        business_id: &str,
        member_id: &str,
    ) -> Result<Option<Member>, StoreError> {
        let query = sqlx::query_as!(
            MemberRecord,
            r#"SELECT m.id AS "id!", m.email, m.first_name, m.last_name, m.role_id,
             r.name AS role_name, m.is_active AS "is_active: bool", m.invitation_status,
             m.last_login AS "last_login: DateTime<Utc>",
             m.date_joined AS "date_joined: DateTime<Utc>",
             m.created_at AS "created_at: DateTime<Utc>",
             (SELECT MAX(i.expires_at) FROM invitations i WHERE i.member_id = m.id
               AND i.used_at IS NULL AND i.revoked_at IS NULL)
               AS "invitation_expires_at?: DateTime<Utc>"
           FROM members m JOIN roles r ON r.id = m.role_id
           WHERE m.id = ?1 AND m.business_id = ?2"#,
            member_id,
            business_id
        );
        on!(conn, query, fetch_optional)?
            .map(MemberRecord::into_member)
            .transpose()
    }

    /// One static statement: the order is chosen by bound values (`?6` the key, `?7` whether
    /// ascending) in `CASE` expressions of the `ORDER BY`, members who never logged in last
    /// either way when ordered by their last login; then by id in the same direction.
    async fn list(store: &Store, filter: &MemberFilter) -> Result<Vec<Member>, StoreError> {
        let from = filter.joined_from.map(timestamp);
        let until = filter.joined_until.map(timestamp);
        let order = match filter.order {
            MemberOrder::DateJoined => "date_joined",
            MemberOrder::Email => "email",
            MemberOrder::FirstName => "first_name",
            MemberOrder::LastName => "last_name",
            MemberOrder::LastLogin => "last_login",
        };
        let query = sqlx::query_as!(
            MemberRecord,
            r#"SELECT m.id AS "id!", m.email, m.first_name, m.last_name, m.role_id,
             r.name AS role_name, m.is_active AS "is_active: bool", m.invitation_status,
             m.last_login AS "last_login: DateTime<Utc>",
             m.date_joined AS "date_joined: DateTime<Utc>",
             m.created_at AS "created_at: DateTime<Utc>",
             (SELECT MAX(i.expires_at) FROM invitations i WHERE i.member_id = m.id
               AND i.used_at IS NULL AND i.revoked_at IS NULL)
               AS "invitation_expires_at?: DateTime<Utc>"
           FROM members m JOIN roles r ON r.id = m.role_id
           WHERE m.business_id = ?1
             AND m.date_joined >= COALESCE(?2, '') AND m.date_joined < COALESCE(?3, ?9)
             AND (?4 IS NULL OR m.is_active = ?4)
             AND (?5 IS NULL OR m.role_id = ?5)
           ORDER BY
             CASE WHEN ?6 = 'last_login' AND m.last_login IS NULL THEN 1 ELSE 0 END,
             CASE WHEN ?7 THEN CASE ?6
               WHEN 'date_joined' THEN m.date_joined WHEN 'email' THEN m.email
               WHEN 'first_name' THEN LOWER(m.first_name)
               WHEN 'last_name' THEN LOWER(m.last_name) ELSE m.last_login END END ASC,
             CASE WHEN NOT ?7 THEN CASE ?6
               WHEN 'date_joined' THEN m.date_joined WHEN 'email' THEN m.email
               WHEN 'first_name' THEN LOWER(m.first_name)
               WHEN 'last_name' THEN LOWER(m.last_name) ELSE m.last_login END END DESC,
             CASE WHEN ?7 THEN m.id END ASC,
             CASE WHEN NOT ?7 THEN m.id END DESC
           LIMIT -1 OFFSET ?8"#,
            filter.business_id,
            from,
            until,
            filter.is_active,
            filter.role_id,
            order,
            filter.ascending,
            filter.offset,
            NO_TIME_BOUND
        );
        let rows = first_rows(query.fetch(store.pool()), filter.page_size + 1).await?;
        rows.into_iter().map(MemberRecord::into_member).collect()
    }

    async fn memberships(
        store: &Store,
        email: &str,
        client_id_prefix: &str,
        business_id: Option<&str>,
        max: usize,
    ) -> Result<Vec<Membership>, StoreError> {
        let max = i64::try_from(max).unwrap_or(i64::MAX);
        Ok(sqlx::query_as!(
            Membership,
            r#"SELECT m.id AS "id!", m.business_id, m.first_name, m.last_name, m.password_hash,
             m.is_active AS "is_active: bool", m.invitation_status
           FROM members m JOIN businesses b ON b.id = m.business_id
           WHERE m.email = ?1 AND SUBSTR(b.client_id, 1, LENGTH(?2)) = ?2
             AND (?3 IS NULL OR m.business_id = ?3)
           ORDER BY m.created_at, m.id LIMIT ?4"#,
            email,
            client_id_prefix,
            business_id,
            max
        )
        .fetch_all(store.pool())
        .await?)
    }

    async fn record_login(tx: &mut Tx, id: &str, now: DateTime<Utc>) -> Result<(), StoreError> {
        let now = timestamp(now);
        sqlx::query!("UPDATE members SET last_login = ?2 WHERE id = ?1", id, now)
            .execute(&mut **tx)
            .await?;
        Ok(())
    }

    async fn password_hash(
        store: &Store,
        id: &str,
        business_id: &str,
    ) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar!(
            "SELECT password_hash FROM members WHERE id = ?1 AND business_id = ?2",
            id,
            business_id
        )
        .fetch_optional(store.pool())
        .await?
        .flatten())
    }

    async fn change_password(
        tx: &mut Tx,
        id: &str,
        business_id: &str,
        current: &str,
        new: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let now = timestamp(now);
        let changed = sqlx::query!(
            "UPDATE members SET password_hash = ?3, updated_at = ?4 \
         WHERE id = ?1 AND business_id = ?2 AND password_hash = ?5",
            id,
            business_id,
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
            r#"SELECT id AS "id!" FROM members WHERE email = ?1 AND business_id = ?2"#,
            email,
            business_id
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
        let now = timestamp(now);
        sqlx::query!(
            "INSERT INTO members (id, business_id, email, first_name, last_name, role_id, \
           password_hash, is_active, invitation_status, last_login, date_joined, \
           created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, 0, 'pending', NULL, ?7, ?7, ?7)",
            new.id,
            new.business_id,
            new.email,
            new.first_name,
            new.last_name,
            new.role_id,
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
        let status = if accepted { "accepted" } else { "pending" };
        let now = timestamp(now);
        sqlx::query!(
            "INSERT INTO members (id, business_id, email, first_name, last_name, role_id, \
           password_hash, is_active, invitation_status, last_login, date_joined, created_at, \
           updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, NULL, ?10, ?10, ?10)",
            new.id,
            new.business_id,
            new.email,
            new.first_name,
            new.last_name,
            new.role_id,
            password_hash,
            accepted,
            status,
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
        let now = timestamp(now);
        let activated = sqlx::query!(
        "UPDATE members SET password_hash = ?3, is_active = 1, invitation_status = 'accepted', \
           updated_at = ?4 WHERE id = ?1 AND business_id = ?2 AND invitation_status = 'pending'",
        id,
        business_id,
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
        let now = timestamp(now);
        let reset = sqlx::query!(
        "UPDATE members SET password_hash = ?3, is_active = 1, invitation_status = 'accepted', \
           updated_at = ?4 WHERE id = ?1 AND business_id = ?2",
        id,
        business_id,
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
            r#"SELECT role_id, is_active AS "is_active: bool", invitation_status FROM members
           WHERE id = ?1 AND business_id = ?2"#,
            id,
            business_id
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
            r#"SELECT COUNT(*) AS "count!: i64" FROM members
           WHERE business_id = ?1 AND role_id = ?2 AND is_active = 1 AND id <> ?3"#,
            business_id,
            role_id,
            except_id
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
        let now = timestamp(now);
        sqlx::query!(
            "UPDATE members SET role_id = ?3, updated_at = ?4 WHERE id = ?1 AND business_id = ?2",
            id,
            business_id,
            role_id,
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
        let now = timestamp(now);
        sqlx::query!(
            "UPDATE members SET is_active = ?3, updated_at = ?4 WHERE id = ?1 AND business_id = ?2",
            id,
            business_id,
            active,
            now
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn approvers(
        store: &Store,
        business_id: &str,
        max: i64,
    ) -> Result<Vec<Approver>, StoreError> {
        let rows = sqlx::query!(
            r#"SELECT m.id AS "id!", m.email, m.first_name
               FROM members m JOIN roles r ON r.id = m.role_id
               WHERE m.business_id = ?1 AND m.is_active = 1
                 AND r.permission_codes LIKE '%"transfer.approve"%'
               ORDER BY m.date_joined, m.id
               LIMIT ?2"#,
            business_id,
            max
        )
        .fetch_all(store.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| (row.id, row.email, row.first_name))
            .collect())
    }
}
