//! `webhook_configurations`: a business's webhook endpoint, at most one per business: its URL,
//! whether delivery runs, the addresses it may resolve to, the events it wants, and its
//! signing secrets. Lists are stored as JSON arrays of text.

use super::contract::*;

use chrono::{DateTime, Utc};
pub use kobo_store::webhook_endpoints::{Change, Configuration, Endpoint, NewEndpoint};

kobo_store::webhook_endpoints_functions!(dispatch);
