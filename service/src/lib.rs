//! Kobo, the bank: the implementation of the generated `Api` trait on a real database, and the
//! `kobo` binary (`cli`). See ARCHITECTURE.md for the map.
//!
//! The modules are layers, listed from the innermost; each uses only the layers above it in
//! this list (`cargo xtask shape`'s `layers` rule keeps it so):
//! `kernel` → `datastore`, `error` → `outbox`, `provider` → `platform` → `money` → `operator`,
//! `workers`, `bench` → `http` → `cli`
//! (and `testkit`, which may use everything).

pub mod bench;
pub mod cli;
pub mod datastore;
pub mod error;
pub mod http;
pub mod kernel;
pub mod money;
pub mod operator;
pub mod outbox;
pub mod platform;
pub mod provider;
pub mod simulator;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
pub(crate) mod workers;

pub use http::api::KoboApi;
pub use kernel::clock::Clock;
pub use platform::principal::{MemberPrincipal, Principal};
