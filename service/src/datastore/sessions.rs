//! `sessions`: every token's row, checked on every request, so revocation is immediate.

use super::contract::*;

use chrono::{DateTime, Utc};
pub use kobo_store::sessions::{Authenticated, NewSession, SessionMember};

kobo_store::sessions_functions!(dispatch);
