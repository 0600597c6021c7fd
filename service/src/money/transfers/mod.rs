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
use crate::platform::caller::Caller;

pub(crate) use checks::check_recipient;
pub use detail::{detail, details};
pub(crate) use limits::{count_toward_daily_limit, uncount};
pub use listing::{fetch_transfers, get_transfer};
pub(crate) use postings::{
    credit_recipient, destination_postings, lock_heads, move_money, payer, Opening,
};
pub use status::{ApprovalState, Move, TransferStatus};
pub(crate) use views::status as stored_status;
pub use views::{find, Lookup};

/// A transfer request, from either family.
#[derive(Clone, Debug)]
pub struct TransferRequest {
    pub source_account_number: String,
    pub source_account_name: String,
    pub beneficiary_account_number: String,
    pub beneficiary_account_name: String,
    pub bank_code: String,
    pub amount: String,
    pub narration: Option<String>,
    pub transfer_type: models::TransferType,
    pub bvn: Option<String>,
    pub kyc: Option<u64>,
    pub reference: Option<String>,
}

/// A [`TransferRequest`] from a body of either family (the two share every field but `otp`).
macro_rules! transfer_request_from {
    ($($body:ty),+) => {$(
        impl From<&$body> for TransferRequest {
            fn from(body: &$body) -> TransferRequest {
                TransferRequest {
                    source_account_number: body.source_account_number.to_string(),
                    source_account_name: body.source_account_name.to_string(),
                    beneficiary_account_number: body.beneficiary_account_number.to_string(),
                    beneficiary_account_name: body.beneficiary_account_name.to_string(),
                    bank_code: body.bank_code.to_string(),
                    amount: body.amount.to_string(),
                    narration: body.narration.as_ref().map(|n| n.to_string()),
                    transfer_type: body.transfer_type,
                    bvn: body.bvn.as_ref().map(|b| b.to_string()),
                    kyc: body.kyc.map(|k| k.get()),
                    reference: body.reference.as_ref().map(|r| r.to_string()),
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
