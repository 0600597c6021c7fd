//! The interface of Kobo's stores: what the bank reads and writes, as typed rows, and how a
//! store fails ([`error::StoreError`]). No SQL and no driver here: `kobo`'s datastore runs the
//! statements, and each store (SQLite, PostgreSQL) answers with these types.

pub mod accounts;
pub mod approval_policies;
pub mod audit;
pub mod batch;
pub mod businesses;
pub mod customers;
pub mod error;
pub mod events;
pub mod group_commit;
pub mod idempotency_keys;
pub mod invitations;
pub mod ledger;
pub mod logs;
pub mod members;
pub mod notifications;
pub mod otps;
pub mod paging;
pub mod roles;
pub mod seeding;
pub mod sessions;
pub mod transactions;
pub mod transfers;
pub mod webhook_endpoints;
