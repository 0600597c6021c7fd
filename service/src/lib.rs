//! Kobo, the bank: the implementation of the generated `Api` trait on a real database, and the
//! `kobo` binary (`cli`). See ARCHITECTURE.md for the map.

pub mod bank;
pub mod config;
pub mod identity;
pub mod logs;
pub mod notify;
pub mod store;
pub mod team;
pub mod tokens;

pub use bank::{Bank, MemberPrincipal, Principal};
