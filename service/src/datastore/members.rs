//! `members`: the people of each business, with their role, password hash, activity and
//! invitation status.

use super::{dispatch, Conn, Store, StoreError, Tx};
use chrono::{DateTime, Utc};
pub use kobo_store::members::{
    Member, MemberFilter, MemberOrder, Membership, NewMember, Profile, Standing,
};

/// The business's member `member_id`, if any.
pub async fn find(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
    member_id: &str,
) -> Result<Option<Member>, StoreError> {
    dispatch!(conn.into().on(), members::find(business_id, member_id))
}

/// The business's members in the filter's order, from its offset: at most `page_size + 1`
/// (the one more tells whether more follow).
pub async fn list(store: &Store, filter: &MemberFilter) -> Result<Vec<Member>, StoreError> {
    dispatch!(store.on(), members::list(filter))
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
    dispatch!(
        store.on(),
        members::memberships(email, client_id_prefix, business_id, max)
    )
}

/// Records the member's login at `now` (shown by their profile, which sessions keep).
pub async fn record_login(tx: &mut Tx, id: &str, now: DateTime<Utc>) -> Result<(), StoreError> {
    tx.touch_auth();
    dispatch!(tx.on(), members::record_login(id, now))
}

/// The password hash of the business's member `id` (`None`: no such member, or no password).
pub async fn password_hash(
    store: &Store,
    id: &str,
    business_id: &str,
) -> Result<Option<String>, StoreError> {
    dispatch!(store.on(), members::password_hash(id, business_id))
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
    tx.touch_auth();
    dispatch!(
        tx.on(),
        members::change_password(id, business_id, current, new, now)
    )
}

/// Whether the business has a member with this email.
pub async fn email_taken(tx: &mut Tx, business_id: &str, email: &str) -> Result<bool, StoreError> {
    dispatch!(tx.on(), members::email_taken(business_id, email))
}

/// Writes an invited member at `now`: pending, inactive, with no password
/// ([`StoreError::Conflict`] when the email is the business's already).
pub async fn insert_invited(
    tx: &mut Tx,
    new: &NewMember<'_>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    dispatch!(tx.on(), members::insert_invited(new, now))
}

/// Writes a business's first member at `now`: with a password hash, active and accepted;
/// without, pending and inactive.
pub async fn insert_first(
    tx: &mut Tx,
    new: &NewMember<'_>,
    password_hash: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    dispatch!(tx.on(), members::insert_first(new, password_hash, now))
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
    tx.touch_auth();
    dispatch!(
        tx.on(),
        members::accept_invitation(id, business_id, password_hash, now)
    )
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
    tx.touch_auth();
    dispatch!(
        tx.on(),
        members::restore(id, business_id, password_hash, now)
    )
}

/// The role and state of the business's member `id`, if any.
pub async fn standing(
    tx: &mut Tx,
    id: &str,
    business_id: &str,
) -> Result<Option<Standing>, StoreError> {
    dispatch!(tx.on(), members::standing(id, business_id))
}

/// How many active members of the business hold `role_id`, the member `except_id` aside.
pub async fn count_active_with_role(
    tx: &mut Tx,
    business_id: &str,
    role_id: &str,
    except_id: &str,
) -> Result<i64, StoreError> {
    dispatch!(
        tx.on(),
        members::count_active_with_role(business_id, role_id, except_id)
    )
}

/// Gives the business's member `id` the role `role_id` at `now`.
pub async fn set_role(
    tx: &mut Tx,
    id: &str,
    business_id: &str,
    role_id: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    tx.touch_auth();
    dispatch!(tx.on(), members::set_role(id, business_id, role_id, now))
}

/// Activates or deactivates the business's member `id` at `now`.
pub async fn set_active(
    tx: &mut Tx,
    id: &str,
    business_id: &str,
    active: bool,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    tx.touch_auth();
    dispatch!(tx.on(), members::set_active(id, business_id, active, now))
}
