//! `customers`: a business's customers, each verified by BVN or NIN (kept as salted hashes)
//! and holding one virtual account.

use super::contract::*;

pub use kobo_store::customers::{Contact, Identity, NewCustomer};

kobo_store::customers_functions!(dispatch);
