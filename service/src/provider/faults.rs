//! Fault injection: a provider that wraps another and fails on command, the way NIP fails in
//! production: unavailable before anything happens, a timeout after a transfer was submitted
//! (the outcome unknown), status queries that cannot answer.
//!
//! Tests flip [`Faults`] at run time; every fault is off by default.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::{
    AccountOpening, BankInfo, BoxFuture, CoreBanking, Holder, IdentityNumbers, NipOutcome,
    NipTransfer, ProviderError, VerifiedIdentity,
};

/// Which faults are on.
#[derive(Debug, Default)]
pub struct Faults {
    /// Every call answers `Unavailable` before doing anything.
    pub down: AtomicBool,
    /// Identity checks, account openings and transfer screening answer `Refused`.
    pub refuse: AtomicBool,
    /// `submit_transfer` submits, then answers `Unavailable`: the transfer went out, the caller
    /// does not know it.
    pub timeout_after_submit: AtomicBool,
    /// `transfer_status` answers `Unavailable`.
    pub status_unknown: AtomicBool,
}

impl Faults {
    pub fn set(flag: &AtomicBool, on: bool) {
        flag.store(on, Ordering::SeqCst);
    }

    fn on(flag: &AtomicBool) -> bool {
        flag.load(Ordering::SeqCst)
    }
}

/// `inner`, failing as `faults` say.
pub struct FaultyProvider {
    pub inner: Arc<dyn CoreBanking>,
    pub faults: Arc<Faults>,
}

fn unavailable() -> ProviderError {
    ProviderError::Unavailable("The provider did not answer (injected fault)".into())
}

impl FaultyProvider {
    /// The injected failure of a call that may be refused, if any.
    fn refusal(&self) -> Option<ProviderError> {
        if Faults::on(&self.faults.down) {
            Some(unavailable())
        } else if Faults::on(&self.faults.refuse) {
            Some(ProviderError::Refused(
                "The provider refused the request (injected fault)".into(),
            ))
        } else {
            None
        }
    }
}

impl CoreBanking for FaultyProvider {
    fn verify_identity<'a>(
        &'a self,
        numbers: &'a IdentityNumbers,
    ) -> BoxFuture<'a, Result<VerifiedIdentity, ProviderError>> {
        Box::pin(async move {
            if let Some(error) = self.refusal() {
                return Err(error);
            }
            self.inner.verify_identity(numbers).await
        })
    }

    fn open_account<'a>(
        &'a self,
        opening: &'a AccountOpening<'a>,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        Box::pin(async move {
            if let Some(error) = self.refusal() {
                return Err(error);
            }
            self.inner.open_account(opening).await
        })
    }

    fn banks(&self) -> Vec<BankInfo> {
        self.inner.banks()
    }

    fn name_enquiry<'a>(
        &'a self,
        bank_code: &'a str,
        account_number: &'a str,
    ) -> BoxFuture<'a, Result<Option<Holder>, ProviderError>> {
        Box::pin(async move {
            if Faults::on(&self.faults.down) {
                return Err(unavailable());
            }
            self.inner.name_enquiry(bank_code, account_number).await
        })
    }

    fn screen_transfer<'a>(
        &'a self,
        transfer: &'a NipTransfer,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        Box::pin(async move {
            if let Some(error) = self.refusal() {
                return Err(error);
            }
            self.inner.screen_transfer(transfer).await
        })
    }

    fn submit_transfer<'a>(
        &'a self,
        transfer: &'a NipTransfer,
    ) -> BoxFuture<'a, Result<NipOutcome, ProviderError>> {
        Box::pin(async move {
            if Faults::on(&self.faults.down) {
                return Err(unavailable());
            }
            let outcome = self.inner.submit_transfer(transfer).await;
            if Faults::on(&self.faults.timeout_after_submit) {
                return Err(unavailable());
            }
            outcome
        })
    }

    fn transfer_status<'a>(
        &'a self,
        transfer: &'a NipTransfer,
    ) -> BoxFuture<'a, Result<NipOutcome, ProviderError>> {
        Box::pin(async move {
            if Faults::on(&self.faults.down) || Faults::on(&self.faults.status_unknown) {
                return Err(unavailable());
            }
            self.inner.transfer_status(transfer).await
        })
    }
}
