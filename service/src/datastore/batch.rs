//! A [`Batch`] of typed writes run together: on PostgreSQL as one statement (one round trip),
//! on SQLite one statement after another in the writer's transaction (in process, a round trip
//! is a function call).

use super::contract::*;

pub use kobo_store::batch::{
    Answer, Batch, KeyClaim, NewActivity, NewAudit, NewEntry, NewEvent, Write,
};

kobo_store::batch_functions!(dispatch);
