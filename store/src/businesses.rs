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
