//! [`Bank`]: what the bank's money operations stand on — the [`Platform`] and, beside it,
//! what transfers cost and how much may leave, and the core banking provider. Built once by
//! the edge and handed to each operation whole (`money::transfers::funds_transfer(&bank,
//! caller, body)`).

use std::ops::Deref;
use std::sync::Arc;

use crate::money::fees::TransferPolicy;
use crate::platform::context::Platform;
use crate::provider::CoreBanking;

/// The platform, the transfer policy of the environment, and the provider. A `Bank` is a
/// `Platform` with money's own parts: it dereferences to it, so the platform's operations take
/// `&bank` too. An operation reads the parts it uses:
/// `let provider = &*bank.provider; let store = &bank.store;`.
pub struct Bank {
    pub platform: Platform,
    /// What transfers cost and how much may leave (the environment's).
    pub transfers: TransferPolicy,
    pub provider: Arc<dyn CoreBanking>,
    /// Wakes this process's bulk worker when a batch is written, authorised or approved, so it
    /// is taken up at once rather than at the worker's next look (another process's worker
    /// finds it at its own).
    pub bulk_work: tokio::sync::Notify,
}

impl Deref for Bank {
    type Target = Platform;

    fn deref(&self) -> &Platform {
        &self.platform
    }
}
