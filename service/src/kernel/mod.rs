//! The innermost layer: what any bank would need and no domain word names. The store and its
//! transactions, the clock, paging and run-time SQL, randomness and hashing, the process's
//! configuration. Imports nothing else of this crate.

pub mod batch;
pub mod clock;
pub mod config;
pub mod memory;
pub(crate) mod paging;
pub mod secrets;
pub mod store;
pub(crate) mod text;
pub mod writer;
