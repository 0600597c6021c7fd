//! The approval policy: from which amount a business's transfers are held for a checker,
//! created, changed and read by the business (one policy per business).

use generated_server::models::{self, AuditAction};
use generated_server::ResponseCode;
use sqlx::Row;

use crate::error::{Error, OrInternal};
use crate::kernel::clock::Clock;
use crate::kernel::store::{self, Store};
use crate::money::accounts::value;
use crate::money::amount::{amount_text, Kobo};
use crate::platform::caller::Caller;
use crate::platform::idempotency::Keyed;
use crate::platform::logs::{self, AuditEntry};

fn no_policy() -> Error {
    Error::new(ResponseCode::NotFound).with_message("The business has no approval policy")
}

fn policy_view(row: &sqlx::any::AnyRow) -> Result<models::ApprovalPolicy, Error> {
    let min_amount: i64 = row.try_get("min_amount").or_internal()?;
    Ok(models::ApprovalPolicy {
        id: store::uuid(row, "id")?,
        is_active: store::flag(row, "is_active")?,
        min_amount: value(amount_text(i128::from(min_amount)))?,
        created_at: store::time(row, "created_at")?,
        updated_at: store::time(row, "updated_at")?,
    })
}

async fn policy_of<'e, E>(
    executor: E,
    business_id: &str,
) -> Result<Option<models::ApprovalPolicy>, Error>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(
        "SELECT id, is_active, min_amount, created_at, updated_at FROM approval_policies \
         WHERE business_id = $1",
    )
    .bind(business_id)
    .fetch_optional(executor)
    .await
    .or_internal()?;
    row.as_ref().map(policy_view).transpose()
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
    store: &Store,
    clock: &Clock,
    caller: &Caller,
    body: models::CreateApprovalPolicyRequest,
) -> Result<models::ApprovalPolicy, Error> {
    let business_id = caller.principal.business_id.clone();
    let min_amount = minimum(Some(body.min_amount.as_str()))?;
    Keyed::new(store, clock, caller, &body)
        .run_in_transaction(async |tx, _| {
            let now = clock.now();
            let inserted = sqlx::query(
            "INSERT INTO approval_policies (id, business_id, is_active, min_amount, created_at, \
               updated_at) VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (business_id) DO NOTHING",
        )
        .bind(store::new_id())
        .bind(&business_id)
        .bind(i64::from(body.is_active))
        .bind(min_amount)
        .bind(store::timestamp(now))
        .execute(&mut **tx)
        .await?
        .rows_affected();
            if inserted == 0 {
                return Err(Error::new(ResponseCode::Duplicate).with_message(
                    "The business already has an approval policy: change it with \
                 update_approval_policy",
                ));
            }
            let policy = policy_of(&mut **tx, &business_id)
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
    store: &Store,
    clock: &Clock,
    caller: &Caller,
    body: models::UpdateApprovalPolicyRequest,
) -> Result<models::ApprovalPolicy, Error> {
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
    let updated = sqlx::query(
        "UPDATE approval_policies SET min_amount = COALESCE($2, min_amount), \
           is_active = COALESCE($3, is_active), updated_at = $4 WHERE business_id = $1",
    )
    .bind(&business_id)
    .bind(min_amount)
    .bind(body.is_active.map(i64::from))
    .bind(store::timestamp(now))
    .execute(&mut *tx)
    .await
    .or_internal()?
    .rows_affected();
    if updated == 0 {
        return Err(no_policy());
    }
    let policy = policy_of(&mut *tx, &business_id)
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

pub async fn get_policy(store: &Store, business_id: &str) -> Result<models::ApprovalPolicy, Error> {
    policy_of(store.pool(), business_id)
        .await?
        .ok_or_else(no_policy)
}
