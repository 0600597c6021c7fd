//! The rows of `webhook_endpoints` (see the datastore module of the same name in `kobo`).

use chrono::{DateTime, Utc};

/// A business's endpoint as its business reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Configuration {
    pub id: uuid::Uuid,
    pub url: String,
    pub is_active: bool,
    pub ip_whitelist: Vec<String>,
    pub event_types: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A business's endpoint as delivery reads it: with its signing secrets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub url: String,
    pub is_active: bool,
    pub ip_whitelist: Vec<String>,
    pub event_types: Vec<String>,
    pub secret: String,
    pub previous_secret: Option<String>,
    pub previous_secret_expires_at: Option<DateTime<Utc>>,
}

/// A new endpoint, active.
#[derive(Clone, Copy, Debug)]
pub struct NewEndpoint<'a> {
    pub id: &'a str,
    pub business_id: &'a str,
    pub url: &'a str,
    pub ip_whitelist: &'a [String],
    pub event_types: &'a [String],
    pub secret: &'a str,
}

/// What an update changes of an endpoint (`None`: as it is).
#[derive(Clone, Copy, Debug, Default)]
pub struct Change<'a> {
    pub url: Option<&'a str>,
    pub is_active: Option<bool>,
    pub ip_whitelist: Option<&'a [String]>,
    pub event_types: Option<&'a [String]>,
}

crate::contract! {
    /// `webhook_endpoints`, in each store.
    pub trait WebhookEndpoints in webhook_endpoints, functions webhook_endpoints_functions {
        /// The business's endpoint, if it has one.
        conn fn find(business_id: &str) -> Option<Configuration>;
        /// The business's endpoint with its secrets, if it has one.
        conn fn find_endpoint(business_id: &str) -> Option<Endpoint>;
        /// Creates the business's endpoint at `now`; `false` if it has one already (nothing
        /// changes).
        tx fn insert(new: &NewEndpoint<'_>, now: DateTime<Utc>) -> bool;
        /// Changes what is given of the business's endpoint at `now`, as part of `tx` (with the
        /// change's audit entry); `false` if it has none.
        tx fn update(business_id: &str, change: &Change<'_>, now: DateTime<Utc>) -> bool;
        /// Makes `secret` the endpoint's secret at `now`, the current one its previous one until
        /// `previous_expires_at`; `false` if the business has no endpoint.
        tx fn rotate_secret(
            business_id: &str,
            secret: &str,
            previous_expires_at: DateTime<Utc>,
            now: DateTime<Utc>,
        ) -> bool;
        /// The id of the business's endpoint (it has one).
        tx fn id_of(business_id: &str) -> String;
    }
}
