//! `throttles` (the attempts counted at a key, and its lock) and `known_addresses` (the
//! addresses a credential succeeded from).

use super::contract::*;

use chrono::{DateTime, Utc};

kobo_store::throttles_functions!(dispatch);
