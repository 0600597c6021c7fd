//! Transfers: money leaving an account of the business.
//!
//! Checks run in the order the spec documents (`funds_transfer`'s "Order of checks"); the
//! provider is called (name enquiry, screening) before any database transaction, so a slow
//! provider never holds a lock, and `80` is answered only when nothing was debited.
//!
//! - Intra-bank (`090823`): one database transaction debits the source and credits the
//!   beneficiary (any business of the environment, which gets its own collection and
//!   `collection.received`).
//! - Inter-bank: one transaction debits amount, fee and VAT (into NIP in flight and fees) and
//!   leaves the transfer `processing`; `nip::process_due` submits it and settles or reverses it.
//!
//! Locks: the ledger heads of the businesses involved, in business-id order, then accounts.

mod checks;
mod detail;
mod limits;
mod listing;
pub mod nip;
mod payout;
mod postings;
pub mod status;
mod views;

use generated_server::models;
use serde_json::Value;

use crate::error::{Error, OrInternal};
use crate::money::bank::Bank;
use crate::money::beneficiaries;
use crate::platform::caller::Caller;

pub(crate) use checks::{check_amount, check_recipient, check_source, duplicate};
pub use detail::{detail, details};
pub(crate) use limits::{count_toward_daily_limit, uncount};
pub use listing::{fetch_transfers, get_transfer};
pub(crate) use postings::{
    credit_recipient, destination_postings, lock_heads, move_money, payer, Opening,
};
pub use status::{ApprovalState, Move, TransferStatus};
pub(crate) use views::status as stored_status;
pub(crate) use views::view as view_of_row;
pub use views::{find, Lookup};

/// A transfer request, from either family.
#[derive(Clone, Debug)]
pub struct TransferRequest {
    pub source_account_number: String,
    /// The source account's name as the caller sent it (`01` unless it is the account's);
    /// `None` for a payment to a saved beneficiary, whose body names none.
    pub source_account_name: Option<String>,
    pub beneficiary_account_number: String,
    pub beneficiary_account_name: String,
    pub bank_code: String,
    pub amount: String,
    pub narration: Option<String>,
    pub transfer_type: models::TransferType,
    pub bvn: Option<String>,
    pub kyc: Option<u64>,
    pub reference: Option<String>,
    /// The saved beneficiary the body named, when the business has none with that id: `47`,
    /// answered after an idempotent replay (a retry after the beneficiary was deleted still
    /// answers the transfer its first attempt made).
    pub unknown_beneficiary: Option<uuid::Uuid>,
}

/// A [`TransferRequest`] from a body of either family (the two share every field but `otp`).
macro_rules! transfer_request_from {
    ($($body:ty),+) => {$(
        impl From<&$body> for TransferRequest {
            fn from(body: &$body) -> TransferRequest {
                TransferRequest {
                    source_account_number: body.source_account_number.to_string(),
                    source_account_name: Some(body.source_account_name.to_string()),
                    beneficiary_account_number: body.beneficiary_account_number.to_string(),
                    beneficiary_account_name: body.beneficiary_account_name.to_string(),
                    bank_code: body.bank_code.to_string(),
                    amount: body.amount.to_string(),
                    narration: body.narration.as_ref().map(|n| n.to_string()),
                    transfer_type: body.transfer_type,
                    bvn: body.bvn.as_ref().map(|b| b.to_string()),
                    kyc: body.kyc.map(|k| k.get()),
                    reference: body.reference.as_ref().map(|r| r.to_string()),
                    unknown_beneficiary: None,
                }
            }
        }
    )+};
}

transfer_request_from!(
    models::FundsTransferRequest,
    models::FundsTransferApiRequest
);

/// The idempotency fingerprint of a body that carries an OTP (`funds_transfer`,
/// `approve_transfer`): the body without it. The OTP is single-use, so a retry carries a new one.
pub(crate) fn without_otp<B: serde::Serialize>(body: &B) -> Result<Value, Error> {
    let mut fingerprint = serde_json::to_value(body).or_internal()?;
    if let Value::Object(fields) = &mut fingerprint {
        fields.remove("otp");
    }
    Ok(fingerprint)
}

/// `funds_transfer`: a member's transfer, with an OTP of theirs.
pub async fn funds_transfer(
    bank: &Bank,
    caller: &Caller,
    body: models::FundsTransferRequest,
) -> Result<models::Transfer, Error> {
    let fingerprint = without_otp(&body)?;
    let request = TransferRequest::from(&body);
    let otp = Some(body.otp.to_string());
    payout::initiate(bank, caller, &fingerprint, request, otp).await
}

/// `pay_beneficiary`: `funds_transfer` to a saved beneficiary, with an OTP of the member's.
pub async fn pay_beneficiary(
    bank: &Bank,
    caller: &Caller,
    body: models::PayBeneficiaryRequest,
) -> Result<models::Transfer, Error> {
    let fingerprint = without_otp(&body)?;
    let payment = SavedPayment {
        beneficiary_id: body.beneficiary_id,
        source_account_number: body.source_account_number.to_string(),
        amount: body.amount.to_string(),
        narration: body.narration.as_ref().map(|n| n.to_string()),
        reference: body.reference.as_ref().map(|r| r.to_string()),
    };
    let request = payment.request(bank, caller).await?;
    payout::initiate(
        bank,
        caller,
        &fingerprint,
        request,
        Some(body.otp.to_string()),
    )
    .await
}

/// `pay_beneficiary_api`: an integration's payout to a saved beneficiary (the
/// `Idempotency-Key` stands for the OTP).
pub async fn pay_beneficiary_api(
    bank: &Bank,
    caller: &Caller,
    body: models::PayBeneficiaryApiRequest,
) -> Result<models::Transfer, Error> {
    let payment = SavedPayment {
        beneficiary_id: body.beneficiary_id,
        source_account_number: body.source_account_number.to_string(),
        amount: body.amount.to_string(),
        narration: body.narration.as_ref().map(|n| n.to_string()),
        reference: body.reference.as_ref().map(|r| r.to_string()),
    };
    let request = payment.request(bank, caller).await?;
    payout::initiate(bank, caller, &body, request, None).await
}

/// A payment to a saved beneficiary, from either family's body.
struct SavedPayment {
    beneficiary_id: uuid::Uuid,
    source_account_number: String,
    amount: String,
    narration: Option<String>,
    reference: Option<String>,
}

impl SavedPayment {
    /// The transfer to the saved account, under its saved name (the payout enquires the name
    /// again and refuses `49` if the holder is now named otherwise).
    async fn request(self, bank: &Bank, caller: &Caller) -> Result<TransferRequest, Error> {
        let business_id = &caller.principal.business_id;
        let saved = beneficiaries::find(&bank.store, business_id, &self.beneficiary_id).await?;
        let (number, name, bank_code) = match &saved {
            Some(saved) => (
                saved.account_number.clone(),
                saved.account_name.clone(),
                saved.bank_code.clone(),
            ),
            None => Default::default(),
        };
        let transfer_type = if bank_code == crate::money::nuban::BANK_CODE {
            models::TransferType::Intra
        } else {
            models::TransferType::Inter
        };
        Ok(TransferRequest {
            source_account_number: self.source_account_number,
            source_account_name: None,
            beneficiary_account_number: number,
            beneficiary_account_name: name,
            bank_code,
            amount: self.amount,
            narration: self.narration,
            transfer_type,
            bvn: None,
            kyc: None,
            reference: self.reference,
            unknown_beneficiary: saved.is_none().then_some(self.beneficiary_id),
        })
    }
}

/// `funds_transfer_api`: an integration's payout; the `Idempotency-Key` (which the spec makes
/// required, so the router refuses a call without one) stands for the OTP.
pub async fn funds_transfer_api(
    bank: &Bank,
    caller: &Caller,
    body: models::FundsTransferApiRequest,
) -> Result<models::Transfer, Error> {
    let request = TransferRequest::from(&body);
    payout::initiate(bank, caller, &body, request, None).await
}
