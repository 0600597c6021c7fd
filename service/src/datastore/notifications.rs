//! `notifications`: the outbox of messages to people, written with the change that causes
//! them and sent afterwards by the dispatcher.
//!
//! The writes outside a transaction ([`claim`], [`mark_sent`], [`mark_failed`]) run on the
//! pool: on SQLite the caller holds the write turn (`Store::write_turn`) across each.

use super::contract::*;

use chrono::{DateTime, Utc};
pub use kobo_store::notifications::{NewNotification, Notification, Unsent};

kobo_store::notifications_functions!(dispatch);
