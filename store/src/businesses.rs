//! The rows of `businesses` (see the datastore module of the same name in `kobo`).

use chrono::{DateTime, Utc};

/// A business as it is listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Business {
    pub id: String,
    pub name: String,
    /// `active` or `inactive`.
    pub status: String,
    pub client_id: String,
    pub created_at: DateTime<Utc>,
}

/// A business to write, with the hash of its client secret.
#[derive(Clone, Copy, Debug)]
pub struct NewBusiness<'a> {
    pub id: &'a str,
    pub name: &'a str,
    /// `active` or `inactive`.
    pub status: &'a str,
    pub client_id: &'a str,
    pub client_secret_hash: &'a str,
}

/// A business's integration credentials as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credentials {
    pub id: String,
    pub client_secret_hash: String,
    /// Whether they may be used: issued by the bank's operator, or by a member who is still
    /// active and may still manage credentials (`credential.manage`).
    pub usable: bool,
}

crate::contract! {
    /// `businesses`, in each store.
    pub trait Businesses in businesses, functions businesses_functions {
        /// Sets the status (`active` or `inactive`) of the business with this id or client id at
        /// `now`, in a transaction of its own holding its standing; returns how many businesses
        /// changed.
        auth_pool fn set_status(id_or_client_id: &str, status: &str, now: DateTime<Utc>) -> u64;
        /// Writes a new business at `now`.
        tx fn insert(new: &NewBusiness<'_>, now: DateTime<Utc>) -> ();
        /// The business with this id or client id, if any.
        pool fn find(id_or_client_id: &str) -> Option<Business>;
        /// Every business, oldest first.
        pool fn list() -> Vec<Business>;
        /// The name of the business (it exists).
        conn fn name_of(id: &str) -> String;
        /// The status (`active`, `inactive`) of the business, if it exists.
        conn fn status_of(id: &str) -> Option<String>;
        /// What a transfer's execution reads of its business: its status and daily limit (its own,
        /// or `default_daily_limit`), under a share lock until `tx` ends on PostgreSQL (a
        /// deactivation waits for it, or it for the deactivation); SQLite's write transaction holds
        /// the whole database already.
        tx fn locked_for_execution(id: &str, default_daily_limit: i64) -> (String, i64);
        /// The client id of the business (it exists).
        tx fn client_id_of(id: &str) -> String;
        /// The credentials of the business whose client id is `client_id`, if any.
        pool fn credentials_of_client(client_id: &str) -> Option<Credentials>;
        /// Replaces the business's client secret (its hash) at `now`; `issuer` is the member who
        /// asked for it.
        auth_tx fn set_client_secret(
            id: &str,
            client_secret_hash: &str,
            issuer: Option<&str>,
            now: DateTime<Utc>,
        ) -> ();
        /// PostgreSQL: takes the business row's lock (`FOR NO KEY UPDATE`) until `tx` ends.
        tx fn lock(id: &str) -> ();
        /// Sets the daily transfer limit in kobo (`None`: the default) of the business with this id
        /// or client id, in a transaction of its own holding its standing ([`hold_standing`]);
        /// returns how many businesses changed.
        pool fn set_daily_transfer_limit(id_or_client_id: &str, limit: Option<i64>) -> u64;
    }
}
