//! `events` and `webhook_attempts`: the domain events written with their change, their
//! delivery to the business's endpoint (status, lease, next attempt), and each attempt made.
//!
//! The writes outside a transaction ([`skip_due_unconfigured`], [`claim`], [`settle`]) run on
//! the pool: on SQLite the caller holds the write turn (`Store::write_turn`) across each.

use super::contract::*;

use chrono::{DateTime, Utc};
pub use kobo_store::events::{
    Attempt, AttemptMade, Delivery, DeliveryFilter, Due, Pending, ToSend,
};

pub use kobo_store::batch::event_into as record_into;

kobo_store::events_functions!(dispatch);
