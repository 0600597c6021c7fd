//! Money: account numbers today; the ledger, accounts, customers and transfers arrive here.
//! Uses `kernel`, `outbox` and `platform`; nothing outer.

pub mod nuban;
