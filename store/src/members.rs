//! The rows of `members` (see the datastore module of the same name in `kobo`).

use chrono::{DateTime, Utc};

use crate::businesses::Business;
use crate::roles::Role;

/// A member as the API shows one: with their role's name and their open invitation's expiry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub id: uuid::Uuid,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub role_id: uuid::Uuid,
    pub role_name: String,
    pub is_active: bool,
    /// `pending` or `accepted`.
    pub invitation_status: String,
    pub last_login: Option<DateTime<Utc>>,
    pub date_joined: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
    /// When the latest open invitation expires (`None`: no open invitation).
    pub invitation_expires_at: Option<DateTime<Utc>>,
}

/// What members are listed by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemberOrder {
    #[default]
    DateJoined,
    Email,
    /// Ignoring case.
    FirstName,
    /// Ignoring case.
    LastName,
    /// Members who never logged in last, either way.
    LastLogin,
}

/// Which members of a business [`list`] reads, in which order, from where.
#[derive(Clone, Debug, Default)]
pub struct MemberFilter {
    pub business_id: String,
    /// Joined at or after this stored time.
    pub joined_from: Option<DateTime<Utc>>,
    /// Joined before this stored time.
    pub joined_until: Option<DateTime<Utc>>,
    pub is_active: Option<bool>,
    pub role_id: Option<String>,
    pub order: MemberOrder,
    pub ascending: bool,
    /// How many members in that order come before the page.
    pub offset: i64,
    pub page_size: u64,
}

/// One membership of an email, as signing in reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Membership {
    pub id: String,
    pub business_id: String,
    pub first_name: String,
    pub last_name: String,
    pub password_hash: Option<String>,
    pub is_active: bool,
    /// `pending` or `accepted`.
    pub invitation_status: String,
}

/// A member to write.
#[derive(Clone, Copy, Debug)]
pub struct NewMember<'a> {
    pub id: &'a str,
    pub business_id: &'a str,
    pub email: &'a str,
    pub first_name: &'a str,
    pub last_name: &'a str,
    pub role_id: &'a str,
}

/// What a change of a member decides on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Standing {
    pub role_id: String,
    pub is_active: bool,
    /// `pending` or `accepted`.
    pub invitation_status: String,
}

/// A member with their role and business, as their profile shows them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    pub member: Member,
    pub role: Role,
    pub business: Business,
}

/// A member who may approve a held transfer: id, email, first name.
pub type Approver = (String, String, String);

crate::contract! {
    /// `members`, in each store.
    pub trait Members in members, functions members_functions {
        /// The business's member `member_id`, if any.
        conn fn find(business_id: &str, member_id: &str) -> Option<Member>;
        /// The business's members in the filter's order, from its offset: at most `page_size + 1`
        /// (the one more tells whether more follow).
        pool fn list(filter: &MemberFilter) -> Vec<Member>;
        /// The memberships of `email` in the businesses whose client id begins with
        /// `client_id_prefix`, of one business when `business_id` says which; oldest first, at most
        /// `max`.
        pool fn memberships(
            email: &str,
            client_id_prefix: &str,
            business_id: Option<&str>,
            max: usize,
        ) -> Vec<Membership>;
        /// Records the member's login at `now` (shown by their profile, which sessions keep).
        auth_tx fn record_login(id: &str, now: DateTime<Utc>) -> ();
        /// The password hash of the business's member `id` (`None`: no such member, or no
        /// password).
        pool fn password_hash(id: &str, business_id: &str) -> Option<String>;
        /// Replaces the member's password hash `current` with `new` at `now`; `false` when the hash
        /// is no longer `current` (changed meanwhile).
        auth_tx fn change_password(
            id: &str,
            business_id: &str,
            current: &str,
            new: &str,
            now: DateTime<Utc>,
        ) -> bool;
        /// Whether the business has a member with this email.
        tx fn email_taken(business_id: &str, email: &str) -> bool;
        /// Writes an invited member at `now`: pending, inactive, with no password
        /// ([`StoreError::Conflict`] when the email is the business's already).
        tx fn insert_invited(new: &NewMember<'_>, now: DateTime<Utc>) -> ();
        /// Writes a business's first member at `now`: with a password hash, active and accepted;
        /// without, pending and inactive.
        tx fn insert_first(
            new: &NewMember<'_>,
            password_hash: Option<&str>,
            now: DateTime<Utc>,
        ) -> ();
        /// Activates the business's pending member with the password hash at `now`; `false` when
        /// the member is not pending (any more).
        auth_tx fn accept_invitation(
            id: &str,
            business_id: &str,
            password_hash: &str,
            now: DateTime<Utc>,
        ) -> bool;
        /// Sets the password hash of the business's member, activated and accepted, at `now`
        /// whatever their state; `false` when there is no such member.
        auth_tx fn restore(
            id: &str,
            business_id: &str,
            password_hash: &str,
            now: DateTime<Utc>,
        ) -> bool;
        /// The role and state of the business's member `id`, if any.
        tx fn standing(id: &str, business_id: &str) -> Option<Standing>;
        /// How many active members of the business hold `role_id`, the member `except_id` aside.
        tx fn count_active_with_role(business_id: &str, role_id: &str, except_id: &str) -> i64;
        /// Gives the business's member `id` the role `role_id` at `now`.
        auth_tx fn set_role(id: &str, business_id: &str, role_id: &str, now: DateTime<Utc>) -> ();
        /// Activates or deactivates the business's member `id` at `now`.
        auth_tx fn set_active(id: &str, business_id: &str, active: bool, now: DateTime<Utc>) -> ();
        /// The business's active members whose role grants `transfer.approve`, oldest first, at
        /// most `max`: whom the outbox tells that a transfer waits.
        pool fn approvers(business_id: &str, max: i64) -> Vec<Approver>;
    }
}
