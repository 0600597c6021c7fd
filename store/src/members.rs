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
    pub joined_from: Option<String>,
    /// Joined before this stored time.
    pub joined_until: Option<String>,
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
