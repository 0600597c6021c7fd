//! Money: amounts, account numbers, the double-entry ledger, accounts and customers, and the
//! transactions and settlements businesses read. Uses `kernel`, `outbox`, `provider` and
//! `platform`; nothing outer.
//!
//! Amounts are integer kobo (`i64`) and sums are `i128`: no floating point anywhere in this
//! layer, which the lint below enforces.

#![deny(clippy::float_arithmetic)]

pub mod accounts;
pub mod amount;
pub(crate) mod approval_notices;
pub mod approvals;
pub mod bank;
pub mod banks;
pub mod beneficiaries;
pub mod bulk;
pub mod cash_flow;
pub mod downloads;
pub mod exports;
pub mod fees;
pub mod inbound;
pub mod ledger;
pub mod nuban;
pub mod statements;
pub mod transactions;
pub mod transfers;
pub mod verify;

/// The NIP worker's settlement of inter-bank transfers (in `transfers`).
pub use transfers::nip;
