//! The approval policy: from which amount a business's transfers are held for a checker,
//! created, changed and read by the business (one policy per business).

use generated_server::models::{self, AuditAction};
use generated_server::ResponseCode;

use crate::datastore::{approval_policies, Conn};
use crate::error::{Error, OrInternal};
use crate::money::accounts::value;
use crate::money::amount::{amount_text, Kobo};
use crate::money::bank::Bank;
use crate::platform::caller::Caller;
use crate::platform::context::Platform;
use crate::platform::idempotency::Keyed;
use crate::platform::logs::{self, AuditEntry};

fn no_policy() -> Error {
    Error::new(ResponseCode::NotFound).with_message("The business has no approval policy")
}

fn policy_view(policy: approval_policies::ApprovalPolicy) -> Result<models::ApprovalPolicy, Error> {
    Ok(models::ApprovalPolicy {
        id: policy.id,
        is_active: policy.is_active,
        min_amount: value(amount_text(i128::from(policy.min_amount)))?,
        created_at: policy.created_at,
        updated_at: policy.updated_at,
    })
}

async fn policy_of(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
) -> Result<Option<models::ApprovalPolicy>, Error> {
    approval_policies::find(conn, business_id)
        .await?
        .map(policy_view)
        .transpose()
}

fn minimum(text: Option<&str>) -> Result<i64, Error> {
    match text {
        None => Ok(0),
        Some("0") | Some("0.0") | Some("0.00") => Ok(0),
        Some(text) => Kobo::parse(text).map(Kobo::get).ok_or_else(|| {
            Error::new(ResponseCode::InvalidRequest)
                .with_message("`min_amount`: at most two fraction digits")
        }),
    }
}

pub async fn create_policy(
    bank: &Bank,
    caller: &Caller,
    body: models::CreateApprovalPolicyRequest,
) -> Result<models::ApprovalPolicy, Error> {
    let Platform { store, clock, .. } = &bank.platform;
    let business_id = caller.principal.business_id.clone();
    let min_amount = minimum(Some(body.min_amount.as_str()))?;
    Keyed::new(store, clock, caller, &body)
        .run_in_transaction(async |tx, _| {
            let now = clock.now();
            let inserted =
                approval_policies::insert(tx, &business_id, body.is_active, min_amount, now)
                    .await?;
            if !inserted {
                return Err(Error::new(ResponseCode::Duplicate).with_message(
                    "The business already has an approval policy: change it with \
                 update_approval_policy",
                ));
            }
            let policy = policy_of(&mut *tx, &business_id)
                .await?
                .ok_or_else(|| Error::internal("the new policy vanished"))?;
            let entry = AuditEntry::by(caller, AuditAction::CreateApprovalPolicy)
                .target("approval_policy", policy.id.to_string());
            logs::audit(tx, now, entry).await?;
            Ok(policy)
        })
        .await
}

pub async fn update_policy(
    bank: &Bank,
    caller: &Caller,
    body: models::UpdateApprovalPolicyRequest,
) -> Result<models::ApprovalPolicy, Error> {
    let Platform { store, clock, .. } = &bank.platform;
    let business_id = caller.principal.business_id.clone();
    let min_amount = body
        .min_amount
        .as_ref()
        .map(|amount| minimum(Some(amount.as_str())))
        .transpose()?;
    if min_amount.is_none() && body.is_active.is_none() {
        return Err(Error::new(ResponseCode::InvalidRequest)
            .with_message("`min_amount`: send min_amount, is_active or both"));
    }
    let now = clock.now();
    let mut tx = store.begin().await?;
    let updated =
        approval_policies::update(&mut tx, &business_id, min_amount, body.is_active, now).await?;
    if !updated {
        return Err(no_policy());
    }
    let policy = policy_of(&mut tx, &business_id)
        .await?
        .ok_or_else(no_policy)?;
    logs::audit(
        &mut tx,
        now,
        AuditEntry::by(caller, AuditAction::UpdateApprovalPolicy)
            .target("approval_policy", policy.id.to_string()),
    )
    .await?;
    tx.commit().await.or_internal()?;
    Ok(policy)
}

pub async fn get_policy(bank: &Bank, business_id: &str) -> Result<models::ApprovalPolicy, Error> {
    let store = &bank.store;
    policy_of(store, business_id).await?.ok_or_else(no_policy)
}
