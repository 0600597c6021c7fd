//! `invitations`: the invitations sent to pending members (only their tokens' hashes), each
//! usable once until it expires or is revoked.

use super::contract::*;

use chrono::{DateTime, Utc};
pub use kobo_store::invitations::{Invitation, NewInvitation};

kobo_store::invitations_functions!(dispatch);
