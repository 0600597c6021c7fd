//! A transfer's own rules, judged before anything is read or moved: the amount, the bank and
//! the type, the source account, the names; and the refusals they answer.

use generated_server::ResponseCode;

use super::TransferRequest;
use crate::error::Error;
use crate::money::accounts::AccountRow;
use crate::money::amount::amount_text;
use crate::money::banks::Beneficiary;
use crate::money::fees::{self, TransferPolicy};

pub(super) fn invalid(message: impl Into<std::borrow::Cow<'static, str>>) -> Error {
    Error::new(ResponseCode::InvalidRequest).with_message(message)
}

pub(super) fn refused(message: impl Into<std::borrow::Cow<'static, str>>) -> Error {
    Error::new(ResponseCode::ProviderError).with_message(message)
}

/// `26`: the client reference belongs to another transfer.
pub(crate) fn duplicate(reference: &str, other: &str) -> Error {
    Error::new(ResponseCode::Duplicate)
        .with_message(format!("Reference {reference} belongs to transfer {other}"))
}

/// `01` unless `amount` (kobo) is within the policy's bounds.
pub(crate) fn check_amount(policy: &TransferPolicy, amount: i64) -> Result<(), Error> {
    if amount < policy.min_amount || amount > policy.max_amount {
        return Err(invalid(format!(
            "`amount`: must be between {} and {}",
            amount_text(i128::from(policy.min_amount)),
            amount_text(i128::from(policy.max_amount))
        )));
    }
    Ok(())
}

/// `83` when the intra-bank beneficiary's account cannot receive (it is not active).
pub(crate) fn check_recipient(account: &AccountRow) -> Result<(), Error> {
    if account.status != "active" {
        return Err(refused(format!(
            "Account {} cannot receive funds: it is {}",
            account.account_number, account.status
        )));
    }
    Ok(())
}

pub(crate) fn check_source(source: &AccountRow) -> Result<(), Error> {
    if source.status != "active" {
        return Err(Error::new(ResponseCode::InvalidState).with_message(format!(
            "Source account {} is {}",
            source.account_number, source.status
        )));
    }
    Ok(())
}

/// `49` when the request's name (or `bvn`, `kyc`) differs from the name enquiry.
pub(super) fn mismatch(request: &TransferRequest, found: &Beneficiary) -> Option<Error> {
    let differs = |what: &str| found.not_the_holders(what);
    if !fees::same_name(&request.beneficiary_account_name, &found.account_name) {
        return Some(differs("name"));
    }
    if request.bvn.is_some() && request.bvn != found.bvn {
        return Some(differs("BVN"));
    }
    if request.kyc.is_some_and(|kyc| kyc != u64::from(found.kyc)) {
        return Some(differs("KYC level"));
    }
    None
}
