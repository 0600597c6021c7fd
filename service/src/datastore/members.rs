//! `members`: the people of each business, with their role, password hash, activity and
//! invitation status.

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::Row;

use super::businesses::Business;
use super::roles::{Role, ROLE_COLUMNS_AS_R};
use super::{Conn, FromAnyRow, FromPrefixedRow, StoreError, Tx};
use crate::kernel::paging::{Conditions, Sql};
use crate::kernel::store::{self, Store};
pub use kobo_store::members::{
    Member, MemberFilter, MemberOrder, Membership, NewMember, Profile, Standing,
};

/// The columns [`Member`] reads, from `members m JOIN roles r`.
const MEMBER_COLUMNS: &str = "m.id, m.email, m.first_name, m.last_name, m.role_id, \
    r.name AS role_name, m.is_active, m.invitation_status, m.last_login, m.date_joined, \
    m.created_at, (SELECT MAX(i.expires_at) FROM invitations i WHERE i.member_id = m.id \
    AND i.used_at IS NULL AND i.revoked_at IS NULL) AS invitation_expires_at";

impl FromAnyRow for Member {
    fn from_any(row: &AnyRow) -> Result<Member, StoreError> {
        Ok(Member {
            id: store::uuid(row, "id")?,
            email: store::text(row, "email")?,
            first_name: store::text(row, "first_name")?,
            last_name: store::text(row, "last_name")?,
            role_id: store::uuid(row, "role_id")?,
            role_name: store::text(row, "role_name")?,
            is_active: store::flag(row, "is_active")?,
            invitation_status: store::text(row, "invitation_status")?,
            last_login: store::optional_time(row, "last_login")?,
            date_joined: store::time(row, "date_joined")?,
            created_at: store::time(row, "created_at")?,
            invitation_expires_at: store::optional_time(row, "invitation_expires_at")?,
        })
    }
}

/// The business's member `member_id`, if any.
pub async fn find(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
    member_id: &str,
) -> Result<Option<Member>, StoreError> {
    let sql = format!(
        "SELECT {MEMBER_COLUMNS} FROM members m JOIN roles r ON r.id = m.role_id \
         WHERE m.id = $1 AND m.business_id = $2"
    );
    let query = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(member_id)
        .bind(business_id);
    let row = conn.into().fetch_optional(query).await?;
    row.as_ref().map(Member::from_any).transpose()
}

/// The business's members in the filter's order, from its offset: at most `page_size + 1`
/// (the one more tells whether more follow).
pub async fn list(store: &Store, filter: &MemberFilter) -> Result<Vec<Member>, StoreError> {
    let mut sql = Sql::new(&format!(
        "SELECT {MEMBER_COLUMNS} FROM members m JOIN roles r ON r.id = m.role_id"
    ));
    let mut conditions = Conditions::default();
    conditions.add(format!(
        "m.business_id = {}",
        sql.arg(filter.business_id.as_str())
    ));
    if let Some(from) = &filter.joined_from {
        conditions.add(format!("m.date_joined >= {}", sql.arg(from.as_str())));
    }
    if let Some(until) = &filter.joined_until {
        conditions.add(format!("m.date_joined < {}", sql.arg(until.as_str())));
    }
    if let Some(active) = filter.is_active {
        conditions.add(format!("m.is_active = {}", sql.arg(i64::from(active))));
    }
    if let Some(role_id) = &filter.role_id {
        conditions.add(format!("m.role_id = {}", sql.arg(role_id.as_str())));
    }
    let direction = if filter.ascending { "ASC" } else { "DESC" };
    let order = match filter.order {
        MemberOrder::DateJoined => format!("m.date_joined {direction}"),
        MemberOrder::Email => format!("m.email {direction}"),
        MemberOrder::FirstName => format!("LOWER(m.first_name) {direction}"),
        MemberOrder::LastName => format!("LOWER(m.last_name) {direction}"),
        // The stores disagree on where NULLs go.
        MemberOrder::LastLogin => {
            format!("CASE WHEN m.last_login IS NULL THEN 1 ELSE 0 END, m.last_login {direction}")
        }
    };
    let offset = sql.arg(filter.offset);
    sql.push(&conditions.where_clause());
    sql.push(&format!(" ORDER BY {order}, m.id {direction}"))
        .limit(filter.page_size + 1)
        .push(&format!(" OFFSET {offset}"));
    let rows = sql.fetch_all(store.pool()).await?;
    rows.iter().map(Member::from_any).collect()
}

/// The memberships of `email` in the businesses whose client id begins with
/// `client_id_prefix`, of one business when `business_id` says which; oldest first, at most
/// `max`.
pub async fn memberships(
    store: &Store,
    email: &str,
    client_id_prefix: &str,
    business_id: Option<&str>,
    max: usize,
) -> Result<Vec<Membership>, StoreError> {
    let mut query = Sql::new(
        "SELECT m.id, m.business_id, m.first_name, m.last_name, m.password_hash, m.is_active, \
           m.invitation_status FROM members m JOIN businesses b ON b.id = m.business_id",
    );
    let mut conditions = Conditions::default();
    conditions.add(format!("m.email = {}", query.arg(email)));
    let length = client_id_prefix.len();
    conditions.add(format!(
        "SUBSTR(b.client_id, 1, {length}) = {}",
        query.arg(client_id_prefix)
    ));
    if let Some(business_id) = business_id {
        conditions.add(format!("m.business_id = {}", query.arg(business_id)));
    }
    query.push(&conditions.where_clause());
    query.push(&format!(" ORDER BY m.created_at, m.id LIMIT {max}"));
    let rows = query.fetch_all(store.pool()).await?;
    rows.iter()
        .map(|row| {
            Ok(Membership {
                id: store::text(row, "id")?,
                business_id: store::text(row, "business_id")?,
                first_name: store::text(row, "first_name")?,
                last_name: store::text(row, "last_name")?,
                password_hash: store::optional_text(row, "password_hash")?,
                is_active: store::flag(row, "is_active")?,
                invitation_status: store::text(row, "invitation_status")?,
            })
        })
        .collect()
}

/// Records the member's login at `now`.
pub async fn record_login(tx: &mut Tx, id: &str, now: DateTime<Utc>) -> Result<(), StoreError> {
    sqlx::query("UPDATE members SET last_login = $2 WHERE id = $1")
        .bind(id)
        .bind(store::timestamp(now))
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// The password hash of the business's member `id` (`None`: no such member, or no password).
pub async fn password_hash(
    store: &Store,
    id: &str,
    business_id: &str,
) -> Result<Option<String>, StoreError> {
    let row = sqlx::query("SELECT password_hash FROM members WHERE id = $1 AND business_id = $2")
        .bind(id)
        .bind(business_id)
        .fetch_optional(store.pool())
        .await?;
    Ok(row
        .map(|row| store::optional_text(&row, "password_hash"))
        .transpose()?
        .flatten())
}

/// Replaces the member's password hash `current` with `new` at `now`; `false` when the hash
/// is no longer `current` (changed meanwhile).
pub async fn change_password(
    tx: &mut Tx,
    id: &str,
    business_id: &str,
    current: &str,
    new: &str,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let changed = sqlx::query(
        "UPDATE members SET password_hash = $3, updated_at = $4 \
         WHERE id = $1 AND business_id = $2 AND password_hash = $5",
    )
    .bind(id)
    .bind(business_id)
    .bind(new)
    .bind(store::timestamp(now))
    .bind(current)
    .execute(&mut **tx)
    .await?
    .rows_affected();
    Ok(changed == 1)
}

/// Whether the business has a member with this email.
pub async fn email_taken(tx: &mut Tx, business_id: &str, email: &str) -> Result<bool, StoreError> {
    let row = sqlx::query("SELECT id FROM members WHERE email = $1 AND business_id = $2")
        .bind(email)
        .bind(business_id)
        .fetch_optional(&mut **tx)
        .await?;
    Ok(row.is_some())
}

/// Writes an invited member at `now`: pending, inactive, with no password
/// ([`StoreError::Conflict`] when the email is the business's already).
pub async fn insert_invited(
    tx: &mut Tx,
    new: &NewMember<'_>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO members (id, business_id, email, first_name, last_name, role_id, \
               password_hash, is_active, invitation_status, last_login, date_joined, \
               created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, NULL, 0, 'pending', NULL, $7, $7, $7)",
    )
    .bind(new.id)
    .bind(new.business_id)
    .bind(new.email)
    .bind(new.first_name)
    .bind(new.last_name)
    .bind(new.role_id)
    .bind(store::timestamp(now))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Writes a business's first member at `now`: with a password hash, active and accepted;
/// without, pending and inactive.
pub async fn insert_first(
    tx: &mut Tx,
    new: &NewMember<'_>,
    password_hash: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let accepted = password_hash.is_some();
    sqlx::query(
        "INSERT INTO members (id, business_id, email, first_name, last_name, role_id, \
           password_hash, is_active, invitation_status, last_login, date_joined, created_at, \
           updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL, $10, $10, $10)",
    )
    .bind(new.id)
    .bind(new.business_id)
    .bind(new.email)
    .bind(new.first_name)
    .bind(new.last_name)
    .bind(new.role_id)
    .bind(password_hash)
    .bind(i64::from(accepted))
    .bind(if accepted { "accepted" } else { "pending" })
    .bind(store::timestamp(now))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Activates the business's pending member with the password hash at `now`; `false` when the
/// member is not pending (any more).
pub async fn accept_invitation(
    tx: &mut Tx,
    id: &str,
    business_id: &str,
    password_hash: &str,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let activated = sqlx::query(
        "UPDATE members SET password_hash = $3, is_active = 1, invitation_status = 'accepted', \
           updated_at = $4 WHERE id = $1 AND business_id = $2 AND invitation_status = 'pending'",
    )
    .bind(id)
    .bind(business_id)
    .bind(password_hash)
    .bind(store::timestamp(now))
    .execute(&mut **tx)
    .await?
    .rows_affected();
    Ok(activated == 1)
}

/// Sets the password hash of the business's member, activated and accepted, at `now`
/// whatever their state; `false` when there is no such member.
pub async fn restore(
    tx: &mut Tx,
    id: &str,
    business_id: &str,
    password_hash: &str,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let reset = sqlx::query(
        "UPDATE members SET password_hash = $3, is_active = 1, invitation_status = 'accepted', \
           updated_at = $4 WHERE id = $1 AND business_id = $2",
    )
    .bind(id)
    .bind(business_id)
    .bind(password_hash)
    .bind(store::timestamp(now))
    .execute(&mut **tx)
    .await?
    .rows_affected();
    Ok(reset != 0)
}

/// The role and state of the business's member `id`, if any.
pub async fn standing(
    tx: &mut Tx,
    id: &str,
    business_id: &str,
) -> Result<Option<Standing>, StoreError> {
    let row = sqlx::query(
        "SELECT role_id, is_active, invitation_status FROM members \
         WHERE id = $1 AND business_id = $2",
    )
    .bind(id)
    .bind(business_id)
    .fetch_optional(&mut **tx)
    .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    Ok(Some(Standing {
        role_id: store::text(&row, "role_id")?,
        is_active: store::flag(&row, "is_active")?,
        invitation_status: store::text(&row, "invitation_status")?,
    }))
}

/// How many active members of the business hold `role_id`, the member `except_id` aside.
pub async fn count_active_with_role(
    tx: &mut Tx,
    business_id: &str,
    role_id: &str,
    except_id: &str,
) -> Result<i64, StoreError> {
    let row = sqlx::query(
        "SELECT COUNT(*) FROM members \
         WHERE business_id = $1 AND role_id = $2 AND is_active = 1 AND id <> $3",
    )
    .bind(business_id)
    .bind(role_id)
    .bind(except_id)
    .fetch_one(&mut **tx)
    .await?;
    Ok(row.try_get(0)?)
}

/// Gives the business's member `id` the role `role_id` at `now`.
pub async fn set_role(
    tx: &mut Tx,
    id: &str,
    business_id: &str,
    role_id: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE members SET role_id = $3, updated_at = $4 WHERE id = $1 AND business_id = $2",
    )
    .bind(id)
    .bind(business_id)
    .bind(role_id)
    .bind(store::timestamp(now))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Activates or deactivates the business's member `id` at `now`.
pub async fn set_active(
    tx: &mut Tx,
    id: &str,
    business_id: &str,
    active: bool,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE members SET is_active = $3, updated_at = $4 WHERE id = $1 AND business_id = $2",
    )
    .bind(id)
    .bind(business_id)
    .bind(i64::from(active))
    .bind(store::timestamp(now))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The business's member `id` with their role and business, in one query.
pub async fn profile(
    store: &Store,
    id: &str,
    business_id: &str,
) -> Result<Option<Profile>, StoreError> {
    let sql = format!(
        "SELECT {}, {}, b.id AS b_id, b.name AS b_name, b.status AS b_status, b.client_id AS b_client_id, \
           b.created_at AS b_created_at \
         FROM members m \
         JOIN roles r ON r.id = m.role_id AND (r.business_id IS NULL OR r.business_id = m.business_id) \
         JOIN businesses b ON b.id = m.business_id \
         WHERE m.id = $1 AND m.business_id = $2",
        MEMBER_COLUMNS, ROLE_COLUMNS_AS_R,
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(id)
        .bind(business_id)
        .fetch_optional(store.pool())
        .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    Ok(Some(Profile {
        member: Member::from_any(&row)?,
        role: Role::from_prefixed_row(&row, "r_")?,
        business: Business::from_prefixed_row(&row, "b_")?,
    }))
}
