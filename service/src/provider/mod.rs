//! The core banking provider: who verifies identities (BVN, NIN) and provisions accounts, and
//! (with the transfers issue) answers inter-bank name enquiries and carries NIP transfers.
//!
//! Kobo talks to it through [`CoreBanking`], so the bank's logic never knows which provider is
//! behind it: [`sandbox::SandboxProvider`] follows the spec's documented test table exactly;
//! tests put a provider that is down or refuses behind the same trait. Calls are made outside
//! database transactions: a slow provider never holds a lock.

use std::future::Future;
use std::pin::Pin;

use generated_server::ResponseCode;

use crate::error::Error;

pub mod faults;
pub mod network;
pub mod sandbox;
pub mod tls;

/// Kobo's own NIP institution code (`money::nuban::BANK_CODE` is this one).
pub const KOBO_INSTITUTION: &str = "090823";

/// A new NIP session id: the sending institution's code, the time (`yyMMddHHmmss`) and 12
/// random digits.
pub fn new_session_id(institution: &str, at: chrono::DateTime<chrono::Utc>) -> String {
    let random = uuid::Uuid::new_v4().as_u128() % 1_000_000_000_000;
    format!("{institution}{}{random:012}", at.format("%y%m%d%H%M%S"))
}

/// What the provider's methods return: a future that may be held across threads.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why the provider did not do what was asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProviderError {
    /// Down or unreachable: `80`, retry later.
    Unavailable(String),
    /// It answered and said no (verification failed, request refused): `83`.
    Refused(String),
}

/// A refused or failed provider call: `80` when it is down, `83` when it said no, with the
/// provider's words.
impl From<ProviderError> for Error {
    fn from(error: ProviderError) -> Error {
        match error {
            ProviderError::Unavailable(message) => {
                Error::new(ResponseCode::ProviderUnavailable).with_message(message)
            }
            ProviderError::Refused(message) => {
                Error::new(ResponseCode::ProviderError).with_message(message)
            }
        }
    }
}

/// The identity numbers of an end-customer; at least one is set.
#[derive(Clone, PartialEq, Eq)]
pub struct IdentityNumbers {
    pub bvn: Option<String>,
    pub nin: Option<String>,
}

impl std::fmt::Debug for IdentityNumbers {
    /// Identity numbers are personal data: never in logs, even by accident.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdentityNumbers")
            .field("bvn", &self.bvn.as_deref().map(mask))
            .field("nin", &self.nin.as_deref().map(mask))
            .finish()
    }
}

/// An identity the provider vouched for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifiedIdentity {
    /// The holder's name on the identity record.
    pub name: String,
}

/// What Kobo asks the provider to open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountOpening<'a> {
    pub business_id: &'a str,
    pub account_name: &'a str,
    /// `current` or `virtual`.
    pub account_type: &'static str,
}

/// A bank reachable over NIP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BankInfo {
    pub name: &'static str,
    pub code: &'static str,
    pub cbn_code: Option<&'static str>,
}

/// The holder of an account at another bank, as NIP name enquiry gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    pub account_name: String,
    pub bvn: Option<String>,
    pub kyc: u8,
}

/// An inter-bank transfer as the provider sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NipTransfer {
    /// Kobo's reference: the provider's idempotency key for the transfer.
    pub reference_number: String,
    pub source_account_number: String,
    /// The source's holder as NIP shows it (`accounts::holder_name`).
    pub originator_account_name: String,
    pub beneficiary_account_number: String,
    /// The beneficiary's name as the name enquiry gave it.
    pub beneficiary_account_name: String,
    pub bank_code: String,
    pub amount_kobo: i64,
    pub narration: String,
}

/// What NIP says of a submitted transfer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NipOutcome {
    /// Credited at the other bank.
    Success { session_id: String },
    /// Definitely not credited: the money may come back.
    Failed {
        session_id: Option<String>,
        reason: String,
    },
    /// Not known yet: ask again later; never a reason to reverse.
    Pending { session_id: Option<String> },
}

/// The core banking provider.
pub trait CoreBanking: Send + Sync + 'static {
    /// The banks reachable over NIP (Kobo's own included).
    fn banks(&self) -> Vec<BankInfo>;

    /// Resolves an account at another bank: `Ok(None)` when it does not exist (`06`).
    fn name_enquiry<'a>(
        &'a self,
        bank_code: &'a str,
        account_number: &'a str,
    ) -> BoxFuture<'a, Result<Option<Holder>, ProviderError>>;

    /// Asks whether the core banking system accepts a transfer before anything is debited
    /// (fraud and limit screening): `Refused` is `83`, `Unavailable` `80`.
    fn screen_transfer<'a>(
        &'a self,
        transfer: &'a NipTransfer,
    ) -> BoxFuture<'a, Result<(), ProviderError>>;

    /// Submits an inter-bank transfer, idempotently by `reference_number`: submitting the same
    /// transfer twice sends it once.
    fn submit_transfer<'a>(
        &'a self,
        transfer: &'a NipTransfer,
    ) -> BoxFuture<'a, Result<NipOutcome, ProviderError>>;

    /// The current outcome of a submitted transfer.
    fn transfer_status<'a>(
        &'a self,
        transfer: &'a NipTransfer,
    ) -> BoxFuture<'a, Result<NipOutcome, ProviderError>>;

    /// Checks the BVN and/or NIN and returns the holder's name; both numbers, when given,
    /// must belong to one person.
    fn verify_identity<'a>(
        &'a self,
        numbers: &'a IdentityNumbers,
    ) -> BoxFuture<'a, Result<VerifiedIdentity, ProviderError>>;

    /// Asks the core banking system to open an account.
    fn open_account<'a>(
        &'a self,
        opening: &'a AccountOpening<'a>,
    ) -> BoxFuture<'a, Result<(), ProviderError>>;
}

/// An identity number as messages may show it: `222*****683`.
pub fn mask(number: &str) -> String {
    let chars: Vec<char> = number.chars().collect();
    if chars.len() < 7 {
        return "*".repeat(chars.len());
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 3..].iter().collect();
    format!("{head}{}{tail}", "*".repeat(chars.len() - 6))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_numbers_never_print_whole() {
        assert_eq!(mask("22212345683"), "222*****683");
        let numbers = IdentityNumbers {
            bvn: Some("22212345678".into()),
            nin: None,
        };
        let printed = format!("{numbers:?}");
        assert!(!printed.contains("22212345678"), "{printed}");
        assert!(printed.contains("222*****678"), "{printed}");
    }
}
