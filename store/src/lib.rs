//! The interface of Kobo's stores: what the bank reads and writes, as typed rows, each
//! resource's operations declared once ([`contract`]), and how a store fails
//! ([`error::StoreError`]). No SQL and no driver here: each store (SQLite, PostgreSQL)
//! implements the contract in its own SQL and answers with these types.

pub mod accounts;
pub mod approval_policies;
pub mod audit;
pub mod batch;
pub mod beneficiaries;
pub mod bulk_transfers;
pub mod businesses;
pub mod contract;
pub mod customers;
pub mod daily_totals;
pub mod deployment;
pub mod error;
pub mod events;
pub mod exports;
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
pub mod sequences;
pub mod sessions;
pub mod throttles;
pub mod transactions;
pub mod transfers;
pub mod webhook_endpoints;

/// A new random id (a UUID v4), for the rows a batch is given here.
pub(crate) fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
