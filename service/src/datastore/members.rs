//! `members`: the people of each business, with their role, password hash, activity and
//! invitation status.

use super::contract::*;

use chrono::{DateTime, Utc};
pub use kobo_store::members::{
    Approver, Member, MemberFilter, MemberOrder, Membership, NewMember, Profile, Standing,
};

kobo_store::members_functions!(dispatch);
