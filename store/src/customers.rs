//! The rows of `customers` (see the datastore module of the same name in `kobo`).

use chrono::{DateTime, Utc};

/// A customer to record.
#[derive(Clone, Copy, Debug)]
pub struct NewCustomer<'a> {
    pub id: &'a str,
    pub business_id: &'a str,
    pub email: Option<&'a str>,
    pub phone: Option<&'a str>,
    pub bvn_hash: Option<&'a str>,
    pub nin_hash: Option<&'a str>,
    /// JSON: the identities verified (`["bvn", "nin"]`).
    pub verified_identities: &'a str,
    pub verified_name: &'a str,
    /// JSON: the business's metadata object.
    pub metadata: &'a str,
    pub created_at: DateTime<Utc>,
}

/// An identity number's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Identity {
    Bvn,
    Nin,
}

/// A customer's contact and what was verified, as an account shows them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contact {
    pub email: Option<String>,
    pub phone: Option<String>,
    /// JSON, as stored.
    pub verified_identities: String,
    /// JSON, as stored.
    pub metadata: String,
}

crate::contract! {
    /// `customers`, in each store.
    pub trait Customers in customers, functions customers_functions {
        tx fn insert(new: &NewCustomer<'_>) -> ();
        /// The number of the account of the business's customer whose identity of `kind` hashes to
        /// `hash`, if there is one.
        tx fn account_number_of(business_id: &str, kind: Identity, hash: &str) -> Option<String>;
        conn fn contact(id: &str) -> Option<Contact>;
    }
}
