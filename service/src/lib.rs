//! Kobo, the bank: the implementation of the generated `Api` trait on a real database, and the
//! `kobo` binary (`cli`). See ARCHITECTURE.md for the map.

pub mod app;
pub mod bank;
pub mod business;
pub mod cli;
pub mod config;
pub mod delivery;
pub mod housekeeping;
pub mod idempotency;
pub mod identity;
pub mod logs;
pub mod notify;
pub mod nuban;
pub mod paging;
pub mod permissions;
pub mod rate_limit;
pub mod secrets;
pub mod store;
pub mod team;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
pub mod throttle;
pub mod tokens;

pub use bank::{Bank, MemberPrincipal, Principal};
