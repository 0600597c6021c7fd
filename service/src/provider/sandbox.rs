//! The sandbox's core banking provider: deterministic, following the spec's identity test
//! table (the overview's "Sandbox" section) to the letter.
//!
//! | BVN / NIN | Result |
//! |---|---|
//! | `22212345678` (BVN) | Chinedu Obi |
//! | `22287654321` (BVN) | Amaka Nwosu |
//! | `70123456789` (NIN) | Funke Adeyemi |
//! | `70198765432` (NIN) | Ibrahim Musa |
//! | other 11 digits ending in `83` | verification fails (`83`) |
//! | other 11 digits ending in `80` | provider unavailable (`80`) |
//! | any other 11 digits | `Test Customer <last 4 digits>` |

use chrono::{DateTime, Duration, Utc};

use super::{
    mask, AccountOpening, BankInfo, BoxFuture, CoreBanking, Holder, IdentityNumbers, NipOutcome,
    NipTransfer, ProviderError, VerifiedIdentity, KOBO_INSTITUTION,
};
use crate::kernel::clock::Clock;
use crate::kernel::secrets::sha256_hex;

/// The documented test identities: `(number, is_bvn, name)`.
const KNOWN: &[(&str, bool, &str)] = &[
    ("22212345678", true, "Chinedu Obi"),
    ("22287654321", true, "Amaka Nwosu"),
    ("70123456789", false, "Funke Adeyemi"),
    ("70198765432", false, "Ibrahim Musa"),
];

/// The banks the sandbox reaches, by name.
pub const BANKS: &[BankInfo] = &[
    BankInfo {
        name: "Access Bank",
        code: "000014",
        cbn_code: Some("044"),
    },
    BankInfo {
        name: "First Bank of Nigeria",
        code: "000016",
        cbn_code: Some("011"),
    },
    BankInfo {
        name: "Guaranty Trust Bank",
        code: "000013",
        cbn_code: Some("058"),
    },
    BankInfo {
        name: "Kobo Microfinance Bank",
        code: KOBO_INSTITUTION,
        cbn_code: None,
    },
    BankInfo {
        name: "Moniepoint Microfinance Bank",
        code: "090405",
        cbn_code: None,
    },
    BankInfo {
        name: "OPay Digital Services",
        code: "100004",
        cbn_code: None,
    },
    BankInfo {
        name: "United Bank for Africa",
        code: "000004",
        cbn_code: Some("033"),
    },
    BankInfo {
        name: "Zenith Bank",
        code: "000015",
        cbn_code: Some("057"),
    },
];

/// The documented external accounts: `(number, name, bvn, kyc)`.
const HOLDERS: &[(&str, &str, &str, u8)] = &[
    ("0123456788", "Emeka Nwosu", "22298765432", 3),
    ("0690000036", "Bisi Alade", "22245678901", 2),
    ("0690000043", "Sani Bello", "22256789012", 1),
];

/// The amount (kobo) that makes the sandbox refuse any transfer: NGN 8383.83.
const REFUSED_AMOUNT: i64 = 838_383;

/// How long a transfer to Sani Bello stays pending, in seconds.
const SLOW_CONFIRMATION: i64 = 60;

/// The sandbox's deterministic provider. Its clock decides when a slow transfer confirms.
#[derive(Clone, Debug)]
pub struct SandboxProvider {
    clock: Clock,
    /// When this process first saw each transfer (a slow one confirms a minute after).
    submitted: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, DateTime<Utc>>>>,
}

impl Default for SandboxProvider {
    fn default() -> Self {
        SandboxProvider::new(Clock::system())
    }
}

impl SandboxProvider {
    pub fn new(clock: Clock) -> SandboxProvider {
        SandboxProvider {
            clock,
            submitted: Default::default(),
        }
    }

    /// Takes `at` as the time `reference` was first submitted, unless one is known already: how
    /// a provider that keeps its transfers (`kobo-provider`) restores them after a restart, so
    /// a status query answers what it answered before.
    pub fn remember(&self, reference: &str, at: DateTime<Utc>) {
        let mut submitted = self
            .submitted
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        submitted.entry(reference.to_owned()).or_insert(at);
    }

    fn is_bank(code: &str) -> bool {
        BANKS.iter().any(|bank| bank.code == code)
    }

    /// A NIP session id: Kobo's code, the time, 12 digits of the reference's digest (so the
    /// same transfer always has the same session).
    fn session_id(&self, transfer: &NipTransfer, at: DateTime<Utc>) -> String {
        let digest = sha256_hex(&transfer.reference_number);
        let digits: String = digest
            .bytes()
            .map(|b| char::from(b'0' + b % 10))
            .take(12)
            .collect();
        format!("{KOBO_INSTITUTION}{}{digits}", at.format("%y%m%d%H%M%S"))
    }

    fn first_seen(&self, transfer: &NipTransfer) -> DateTime<Utc> {
        let mut submitted = self
            .submitted
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *submitted
            .entry(transfer.reference_number.clone())
            .or_insert_with(|| self.clock.now())
    }

    fn outcome(&self, transfer: &NipTransfer) -> Result<NipOutcome, ProviderError> {
        let at = self.first_seen(transfer);
        let session_id = self.session_id(transfer, at);
        Ok(match transfer.beneficiary_account_number.as_str() {
            "0123456788" => NipOutcome::Success { session_id },
            "0690000036" => NipOutcome::Failed {
                session_id: Some(session_id),
                reason: "Beneficiary bank declined the transfer".into(),
            },
            "0690000043" if self.clock.now() < at + Duration::seconds(SLOW_CONFIRMATION) => {
                NipOutcome::Pending {
                    session_id: Some(session_id),
                }
            }
            "0690000043" => NipOutcome::Success { session_id },
            "0000000080" => {
                return Err(ProviderError::Unavailable(
                    "NIP is unavailable: retry later".into(),
                ))
            }
            _ => NipOutcome::Failed {
                session_id: None,
                reason: "Beneficiary account not found".into(),
            },
        })
    }

    fn verify_one(&self, number: &str, is_bvn: bool) -> Result<String, ProviderError> {
        let kind = if is_bvn { "BVN" } else { "NIN" };
        if let Some((_, _, name)) = KNOWN
            .iter()
            .find(|(known, known_is_bvn, _)| *known == number && *known_is_bvn == is_bvn)
        {
            return Ok((*name).to_owned());
        }
        if number.ends_with("83") {
            return Err(ProviderError::Refused(format!(
                "Identity verification failed for {kind} {}",
                mask(number)
            )));
        }
        if number.ends_with("80") {
            return Err(ProviderError::Unavailable(
                "The identity provider is unavailable: retry later".into(),
            ));
        }
        Ok(format!("Test Customer {}", &number[number.len() - 4..]))
    }
}

impl CoreBanking for SandboxProvider {
    fn verify_identity<'a>(
        &'a self,
        numbers: &'a IdentityNumbers,
    ) -> BoxFuture<'a, Result<VerifiedIdentity, ProviderError>> {
        Box::pin(async move {
            let by_bvn = numbers
                .bvn
                .as_deref()
                .map(|bvn| self.verify_one(bvn, true))
                .transpose()?;
            let by_nin = numbers
                .nin
                .as_deref()
                .map(|nin| self.verify_one(nin, false))
                .transpose()?;
            match (by_bvn, by_nin) {
                (Some(a), Some(b)) if a != b => Err(ProviderError::Refused(
                    "Identity verification failed: the BVN and the NIN belong to different people"
                        .into(),
                )),
                (Some(name), _) | (None, Some(name)) => Ok(VerifiedIdentity { name }),
                (None, None) => Err(ProviderError::Refused(
                    "Identity verification needs a BVN or a NIN".into(),
                )),
            }
        })
    }

    fn open_account<'a>(
        &'a self,
        _opening: &'a AccountOpening<'a>,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        Box::pin(async { Ok(()) })
    }

    fn banks(&self) -> Vec<BankInfo> {
        BANKS.to_vec()
    }

    fn name_enquiry<'a>(
        &'a self,
        bank_code: &'a str,
        account_number: &'a str,
    ) -> BoxFuture<'a, Result<Option<Holder>, ProviderError>> {
        Box::pin(async move {
            if account_number == "0000000080" {
                return Err(ProviderError::Unavailable(
                    "NIP name enquiry is unavailable: retry later".into(),
                ));
            }
            if !Self::is_bank(bank_code) {
                return Ok(None);
            }
            Ok(HOLDERS
                .iter()
                .find(|(number, ..)| *number == account_number)
                .map(|(_, name, bvn, kyc)| Holder {
                    account_name: (*name).to_owned(),
                    bvn: Some((*bvn).to_owned()),
                    kyc: *kyc,
                }))
        })
    }

    fn screen_transfer<'a>(
        &'a self,
        transfer: &'a NipTransfer,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        Box::pin(async move {
            if transfer.amount_kobo == REFUSED_AMOUNT {
                return Err(ProviderError::Refused(
                    "The provider refused the transfer".into(),
                ));
            }
            if transfer.beneficiary_account_number == "0000000080" {
                return Err(ProviderError::Unavailable(
                    "NIP is unavailable: retry later".into(),
                ));
            }
            Ok(())
        })
    }

    fn submit_transfer<'a>(
        &'a self,
        transfer: &'a NipTransfer,
    ) -> BoxFuture<'a, Result<NipOutcome, ProviderError>> {
        Box::pin(async move {
            // Bisi Alade's transfers are accepted, then fail while processing.
            match self.outcome(transfer)? {
                NipOutcome::Failed { session_id, .. }
                    if transfer.beneficiary_account_number == "0690000036" =>
                {
                    Ok(NipOutcome::Pending { session_id })
                }
                outcome => Ok(outcome),
            }
        })
    }

    fn transfer_status<'a>(
        &'a self,
        transfer: &'a NipTransfer,
    ) -> BoxFuture<'a, Result<NipOutcome, ProviderError>> {
        Box::pin(async move { self.outcome(transfer) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn verify(bvn: Option<&str>, nin: Option<&str>) -> Result<String, ProviderError> {
        let numbers = IdentityNumbers {
            bvn: bvn.map(str::to_owned),
            nin: nin.map(str::to_owned),
        };
        SandboxProvider::default()
            .verify_identity(&numbers)
            .await
            .map(|identity| identity.name)
    }

    #[tokio::test]
    async fn follows_the_documented_table() {
        assert_eq!(
            verify(Some("22212345678"), None).await.unwrap(),
            "Chinedu Obi"
        );
        assert_eq!(
            verify(Some("22287654321"), None).await.unwrap(),
            "Amaka Nwosu"
        );
        assert_eq!(
            verify(None, Some("70123456789")).await.unwrap(),
            "Funke Adeyemi"
        );
        assert_eq!(
            verify(None, Some("70198765432")).await.unwrap(),
            "Ibrahim Musa"
        );
        assert_eq!(
            verify(Some("12345671234"), None).await.unwrap(),
            "Test Customer 1234"
        );
        assert!(matches!(
            verify(Some("12345678983"), None).await,
            Err(ProviderError::Refused(message)) if message.contains("123*****983")
        ));
        assert!(matches!(
            verify(None, Some("12345678980")).await,
            Err(ProviderError::Unavailable(_))
        ));
        // A known BVN is not a known NIN: the table names the kind.
        assert_eq!(
            verify(None, Some("22212345678")).await.unwrap(),
            "Test Customer 5678"
        );
    }

    #[tokio::test]
    async fn both_numbers_must_name_one_person() {
        assert_eq!(
            verify(Some("22212345678"), Some("70123456789")).await,
            Err(ProviderError::Refused(
                "Identity verification failed: the BVN and the NIN belong to different people"
                    .into()
            ))
        );
        assert_eq!(
            verify(Some("12345671234"), Some("99999991234"))
                .await
                .unwrap(),
            "Test Customer 1234"
        );
    }
}
