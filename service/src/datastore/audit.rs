//! The reads of `kobo ledger verify`: the ledger's tables checked against each other. Each
//! function returns what does not add up (or the figures the domain compares), read on the
//! pool outside any transaction.

use super::contract::*;

pub use kobo_store::audit::{AccountBalance, ClosingAstray, Counted, DayAstray, RunningAstray};

kobo_store::audit_functions!(dispatch);
