//! The provider's operations (`spec/provider.yaml`), answered by the sandbox's tables: the same
//! identities, external accounts and NIP outcomes as Kobo's in-process sandbox provider, over
//! HTTP with NIP's codes. Each answer is the translation of what the sandbox said:
//!
//! | sandbox | NIP code |
//! |---|---|
//! | a verified identity, a holder, an accepted screening, a credited transfer | `00` |
//! | no such identity or account, a transfer to no account | `07` |
//! | BVN and NIN of two people, a transfer the bank declined | `05` |
//! | screening refused | `57` |
//! | a transfer not final yet | `09` |
//! | unavailable (name enquiry, identity, screening) | `91` |
//! | unavailable while a transfer was being sent, or its status asked | `97`: not known, ask again |
//!
//! A transfer is kept (`state`) before it is sent: whatever the answer, the same payment
//! reference names the same transfer, and a status query answers it after a restart.

use std::sync::Arc;

use provider_server::models;
use provider_server::{Api, ApiError, Permission, RequestContext, ResponseCode, TokenFamily};

use super::state::State;
use crate::kernel::clock::Clock;
use crate::kernel::secrets;
use crate::money::amount::Kobo;
use crate::provider::sandbox::SandboxProvider;
use crate::provider::{CoreBanking, IdentityNumbers, NipOutcome, NipTransfer, ProviderError};

/// The simulator behind the provider's router.
pub struct Simulator {
    /// The sandbox's tables, and the transfers' first times.
    pub sandbox: SandboxProvider,
    /// What answers: the sandbox, or the sandbox behind injected faults.
    pub provider: Arc<dyn CoreBanking>,
    pub state: State,
    pub clock: Clock,
    /// The shared secret Kobo presents as its bearer token.
    pub secret: String,
}

fn code(code: ResponseCode, message: impl Into<String>) -> ApiError {
    ApiError::new(code).with_message(message.into())
}

fn internal(error: anyhow::Error) -> ApiError {
    ApiError::internal(format!("{error:#}"))
}

/// A provider error of a call that did not move money: `91` down, `07` or `05` refused.
fn refused_or_down(error: ProviderError, refused: ResponseCode) -> ApiError {
    match error {
        ProviderError::Unavailable(message) => {
            code(ResponseCode::BeneficiaryBankUnavailable, message)
        }
        ProviderError::Refused(message) => code(refused, message),
    }
}

/// A transfer as the sandbox reads it, from the NIP request.
fn nip_transfer(request: &models::FundsTransferRequest) -> Result<NipTransfer, ApiError> {
    let amount = Kobo::parse(request.amount.as_str()).ok_or_else(|| {
        code(
            ResponseCode::InvalidAmount,
            "`amount`: must be more than 0.00",
        )
    })?;
    Ok(NipTransfer {
        reference_number: request.payment_reference.to_string(),
        source_account_number: request.originator_account_number.to_string(),
        originator_account_name: request.originator_account_name.to_string(),
        beneficiary_account_number: request.beneficiary_account_number.to_string(),
        beneficiary_account_name: request.beneficiary_account_name.to_string(),
        bank_code: request.destination_institution_code.to_string(),
        amount_kobo: amount.get(),
        narration: request.narration.to_string(),
    })
}

/// What NIP says of a transfer, as the envelope answers it.
fn outcome_answer(
    reference: &str,
    outcome: Result<NipOutcome, ProviderError>,
) -> Result<models::TransferStatus, ApiError> {
    match outcome {
        Ok(NipOutcome::Success { session_id }) => Ok(models::TransferStatus {
            payment_reference: reference.to_owned(),
            session_id: session_id.parse().map_err(|_| {
                ApiError::internal("the sandbox made a session id of the wrong shape")
            })?,
        }),
        Ok(NipOutcome::Pending { .. }) => Err(code(
            ResponseCode::InProgress,
            format!("Transfer {reference} is still in progress"),
        )),
        Ok(NipOutcome::Failed { reason, .. }) if reason.contains("declined") => {
            Err(code(ResponseCode::DoNotHonor, reason))
        }
        Ok(NipOutcome::Failed { reason, .. }) => Err(code(ResponseCode::InvalidAccount, reason)),
        Err(ProviderError::Unavailable(message) | ProviderError::Refused(message)) => {
            Err(code(ResponseCode::Timeout, message))
        }
    }
}

fn session_of(outcome: &Result<NipOutcome, ProviderError>) -> Option<&str> {
    match outcome {
        Ok(NipOutcome::Success { session_id }) => Some(session_id),
        Ok(NipOutcome::Pending { session_id } | NipOutcome::Failed { session_id, .. }) => {
            session_id.as_deref()
        }
        Err(_) => None,
    }
}

impl Simulator {
    /// The transfer kept under `reference`, as the sandbox reads it, its first time restored.
    async fn kept(&self, reference: &str) -> Result<Option<NipTransfer>, ApiError> {
        let Some(accepted) = self.state.transfer(reference).await.map_err(internal)? else {
            return Ok(None);
        };
        let request: models::FundsTransferRequest = serde_json::from_str(&accepted.request)
            .map_err(|error| {
                ApiError::internal(format!("a kept transfer does not read: {error}"))
            })?;
        self.sandbox.remember(reference, accepted.first_seen);
        Ok(Some(nip_transfer(&request)?))
    }
}

impl Api for Simulator {
    type Principal = ();

    async fn authenticate(&self, _: TokenFamily, token: &str) -> Result<(), ApiError> {
        match secrets::is_the_secret(token, &self.secret) {
            true => Ok(()),
            false => Err(code(
                ResponseCode::SecurityViolation,
                "The shared secret is missing or wrong",
            )),
        }
    }

    async fn authorize(&self, _: &(), permission: Permission) -> Result<(), ApiError> {
        match permission {}
    }

    async fn verify_identity(
        &self,
        _: RequestContext<()>,
        body: models::VerifyIdentityRequest,
    ) -> Result<models::VerifiedIdentity, ApiError> {
        let numbers = IdentityNumbers {
            bvn: body.bvn.map(|bvn| bvn.to_string()),
            nin: body.nin.map(|nin| nin.to_string()),
        };
        if numbers.bvn.is_none() && numbers.nin.is_none() {
            return Err(code(
                ResponseCode::InvalidTransaction,
                "`bvn`, `nin`: give at least one",
            ));
        }
        match self.provider.verify_identity(&numbers).await {
            Ok(identity) => Ok(models::VerifiedIdentity {
                name: identity.name,
            }),
            Err(ProviderError::Refused(message)) if message.contains("different people") => {
                Err(code(ResponseCode::DoNotHonor, message))
            }
            Err(error) => Err(refused_or_down(error, ResponseCode::InvalidAccount)),
        }
    }

    async fn open_account(
        &self,
        _: RequestContext<()>,
        body: models::OpenAccountRequest,
    ) -> Result<(), ApiError> {
        let opening = crate::provider::AccountOpening {
            business_id: &body.business_id.to_string(),
            account_name: &body.account_name,
            account_type: match body.account_type {
                models::OpenAccountRequestAccountType::Current => "current",
                models::OpenAccountRequestAccountType::Virtual => "virtual",
            },
        };
        self.provider
            .open_account(&opening)
            .await
            .map_err(|error| refused_or_down(error, ResponseCode::TransactionNotPermitted))
    }

    async fn screen_transfer(
        &self,
        _: RequestContext<()>,
        body: models::FundsTransferRequest,
    ) -> Result<(), ApiError> {
        let transfer = nip_transfer(&body)?;
        self.provider
            .screen_transfer(&transfer)
            .await
            .map_err(|error| refused_or_down(error, ResponseCode::TransactionNotPermitted))
    }

    async fn name_enquiry(
        &self,
        _: RequestContext<()>,
        body: models::NameEnquiryRequest,
    ) -> Result<models::NameEnquiry, ApiError> {
        let holder = self
            .provider
            .name_enquiry(&body.destination_institution_code, &body.account_number)
            .await
            .map_err(|error| refused_or_down(error, ResponseCode::InvalidAccount))?
            .ok_or_else(|| {
                code(
                    ResponseCode::InvalidAccount,
                    format!(
                        "No account {} at institution {}",
                        *body.account_number, *body.destination_institution_code
                    ),
                )
            })?;
        let kyc = std::num::NonZeroU64::new(u64::from(holder.kyc.max(1)))
            .ok_or_else(|| ApiError::internal("a KYC level of 0"))?;
        Ok(models::NameEnquiry {
            session_id: body.session_id,
            destination_institution_code: body.destination_institution_code,
            account_number: body.account_number,
            account_name: holder.account_name,
            bvn: holder.bvn,
            kyc_level: models::KycLevel(kyc),
        })
    }

    async fn funds_transfer(
        &self,
        _: RequestContext<()>,
        body: models::FundsTransferRequest,
    ) -> Result<models::TransferStatus, ApiError> {
        let transfer = nip_transfer(&body)?;
        let reference = transfer.reference_number.clone();
        let request =
            serde_json::to_string(&body).map_err(|e| ApiError::internal(e.to_string()))?;
        let accepted = self
            .state
            .accept(&reference, &request, self.clock.now())
            .await
            .map_err(internal)?;
        if accepted.request != request {
            return Err(code(
                ResponseCode::DuplicateRecord,
                format!("Payment reference {reference} belongs to another transfer"),
            ));
        }
        self.sandbox.remember(&reference, accepted.first_seen);
        let outcome = self.provider.submit_transfer(&transfer).await;
        if let Some(session_id) = session_of(&outcome) {
            self.state
                .name_session(&reference, session_id)
                .await
                .map_err(internal)?;
        }
        outcome_answer(&reference, outcome)
    }

    async fn transaction_status_query(
        &self,
        _: RequestContext<()>,
        body: models::StatusQueryRequest,
    ) -> Result<models::TransferStatus, ApiError> {
        let reference = match (&body.payment_reference, &body.session_id) {
            (Some(reference), _) => Some(reference.to_string()),
            (None, Some(session)) => self.state.reference_of(session).await.map_err(internal)?,
            (None, None) => {
                return Err(code(
                    ResponseCode::InvalidTransaction,
                    "`session_id`, `payment_reference`: give one",
                ))
            }
        };
        let not_found = || {
            code(
                ResponseCode::RecordNotFound,
                "No transfer with that session id or payment reference",
            )
        };
        let reference = reference.ok_or_else(not_found)?;
        let transfer = self.kept(&reference).await?.ok_or_else(not_found)?;
        let outcome = self.provider.transfer_status(&transfer).await;
        outcome_answer(&reference, outcome)
    }
}
