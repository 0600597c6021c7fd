//! The innermost layer: what any bank would need and no domain word names. The store and its
//! transactions, the clock, paging and run-time SQL, randomness and hashing, the process's
//! configuration. Imports nothing else of this crate.

pub mod clock;
pub mod config;
pub mod memory;
pub(crate) mod paging;
pub mod secrets;
pub mod store;
pub(crate) mod text;

use std::borrow::Cow;

/// Input the kernel's checks refuse (a cursor without its pair, a name with a control
/// character, a password too short): the message names the field and says why, for the
/// client. The layers above answer it as an invalid request.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub Cow<'static, str>);

impl Invalid {
    pub fn new(message: impl Into<Cow<'static, str>>) -> Invalid {
        Invalid(message.into())
    }

    pub fn message(&self) -> &str {
        &self.0
    }
}
