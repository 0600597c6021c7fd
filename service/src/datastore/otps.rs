//! `otps`: the one-time passwords issued to members (only their hashes), each with its
//! attempts, expiry and use.

use super::contract::*;

use chrono::{DateTime, Utc};
pub use kobo_store::otps::{Attempted, Issued, NewOtp};

kobo_store::otps_functions!(dispatch);
