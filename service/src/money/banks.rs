//! Banks and name enquiry: who can be paid, and who holds an account. Kobo accounts
//! (`090823`) are resolved locally, any business of the environment; other banks over NIP
//! through the provider.

use chrono::{DateTime, Utc};
use generated_server::{models, ResponseCode};

use crate::error::{Error, OrInternal};
use crate::kernel::store::Store;
use crate::money::accounts::HolderName;
use crate::money::accounts::{self, value, AccountRow, KoboAccount};
use crate::money::bank::Bank;
use crate::money::nuban;
use crate::provider::{BankInfo, CoreBanking};

/// This bank's name, as other banks show it.
pub const KOBO_BANK_NAME: &str = "Kobo Microfinance Bank";

/// When the bank list last changed.
const BANKS_UPDATED_AT: &str = "2026-11-01T00:00:00Z";

/// The banks reachable for name enquiry and transfers, by name.
pub fn fetch_banks(bank: &Bank) -> Result<Vec<models::Bank>, Error> {
    let provider = &*bank.provider;
    let updated_at: DateTime<Utc> = BANKS_UPDATED_AT.parse().or_internal()?;
    let mut banks = provider.banks();
    banks.sort_by(|a, b| a.name.cmp(b.name));
    banks
        .iter()
        .map(|bank| {
            Ok(models::Bank {
                name: bank.name.to_owned(),
                code: value(bank.code)?,
                cbn_code: bank.cbn_code.map(str::to_owned),
                updated_at,
            })
        })
        .collect()
}

/// The name of the bank with `code`, if the provider reaches it.
pub fn bank_name(provider: &dyn CoreBanking, code: &str) -> Option<String> {
    provider
        .banks()
        .into_iter()
        .find(|bank: &BankInfo| bank.code == code)
        .map(|bank| bank.name.to_owned())
}

/// The holder of an account: a Kobo account of any business, or one at another bank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Beneficiary {
    pub account_number: String,
    pub account_name: String,
    pub bank_code: String,
    pub bank_name: String,
    pub bvn: Option<String>,
    pub kyc: u8,
    /// The Kobo account, as the lookup read it, and its business, for an intra-bank
    /// beneficiary.
    pub kobo_account: Option<(AccountRow, String)>,
}

impl Beneficiary {
    /// `49`: the request's `what` (name, BVN, KYC level) is not this holder's.
    pub(crate) fn not_the_holders(&self, what: &str) -> Error {
        Error::new(ResponseCode::BeneficiaryNameMismatch).with_message(format!(
            "Beneficiary {what} does not match: the account is held by {}",
            self.account_name
        ))
    }
}

pub fn not_found(number: &str, bank_code: &str) -> Error {
    Error::new(ResponseCode::BeneficiaryAccountNotFound).with_message(format!(
        "No account {number} at bank {bank_code}: check the account number and bank code"
    ))
}

/// Resolves `number` at `bank_code`: `06` when no such account exists, `80` when the
/// provider cannot say.
pub async fn resolve(
    store: &Store,
    provider: &dyn CoreBanking,
    bank_code: &str,
    number: &str,
) -> Result<Beneficiary, Error> {
    let found = if bank_code == nuban::BANK_CODE {
        accounts::find_by_number_anywhere(store, number).await?
    } else {
        None
    };
    resolve_found(provider, bank_code, number, found).await
}

/// [`resolve`], this bank's account by `number` already looked up (`found`, with its
/// business; ignored for another bank). A Kobo account is named as its holder: its business,
/// then its own name ([`accounts::holder_name`]).
pub async fn resolve_found(
    provider: &dyn CoreBanking,
    bank_code: &str,
    number: &str,
    found: Option<KoboAccount>,
) -> Result<Beneficiary, Error> {
    if bank_code == nuban::BANK_CODE {
        let found = found
            .filter(|found| found.account.status != "closed")
            .ok_or_else(|| not_found(number, bank_code))?;
        return Ok(Beneficiary {
            account_number: number.to_owned(),
            account_name: found.holder_name(),
            bank_code: bank_code.to_owned(),
            bank_name: KOBO_BANK_NAME.to_owned(),
            bvn: None,
            kyc: 3,
            kobo_account: Some((found.account, found.business_id)),
        });
    }
    let bank_name = bank_name(provider, bank_code).ok_or_else(|| not_found(number, bank_code))?;
    let holder = provider
        .name_enquiry(bank_code, number)
        .await?
        .ok_or_else(|| not_found(number, bank_code))?;
    Ok(Beneficiary {
        account_number: number.to_owned(),
        account_name: holder.account_name,
        bank_code: bank_code.to_owned(),
        bank_name,
        bvn: holder.bvn,
        kyc: holder.kyc,
        kobo_account: None,
    })
}

/// `name_enquiry` and `name_enquiry_web`: `42` unless the source account is the business's.
pub async fn name_enquiry(
    bank: &Bank,
    business_id: &str,
    body: models::NameEnquiryRequest,
) -> Result<models::NameEnquiryResult, Error> {
    let provider = &*bank.provider;
    let store = &bank.store;
    let source =
        accounts::find_by_number(store, business_id, body.source_account_number.as_str()).await?;
    if source.is_none() {
        return Err(source_not_found(body.source_account_number.as_str()));
    }
    let found = resolve(
        store,
        provider,
        body.bank_code.as_str(),
        body.beneficiary_account_number.as_str(),
    )
    .await?;
    Ok(models::NameEnquiryResult {
        account_number: value(&found.account_number)?,
        account_name: found.account_name,
        bank_code: value(&found.bank_code)?,
        bank_name: found.bank_name,
        bvn: found.bvn.map(value).transpose()?,
        kyc: std::num::NonZeroU64::new(u64::from(found.kyc))
            .ok_or_else(|| Error::internal("a KYC level of 0"))?,
    })
}

pub fn source_not_found(number: &str) -> Error {
    Error::new(ResponseCode::SourceAccountNotFound).with_message(format!(
        "Source account {number} is not an account of this business"
    ))
}
