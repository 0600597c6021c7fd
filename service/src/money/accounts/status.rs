//! An account's status, changed by the operator (`kobo account set-status`): blocked, closed
//! or reactivated, never closed while money is reserved or in flight.

use generated_server::models;
use generated_server::ResponseCode;

use super::{find_by_id, invalid, value, AccountView};
use crate::datastore::{accounts, transfers};
use crate::error::{Error, OrInternal};
use crate::kernel::clock::Clock;
use crate::kernel::store::{Store, Tx};
use crate::money::amount;
use crate::outbox::events;

/// The status of account `id`, read under a lock held until `tx` ends: on PostgreSQL `FOR
/// SHARE`, so a status change in flight is waited for and seen, and one that comes later
/// waits for `tx`; SQLite's write transaction holds the whole database already. For a check
/// that must hold until the commit of a transaction that moves no money of the account's
/// (a held transfer's approval).
pub(crate) async fn locked_status(tx: &mut Tx, id: &str) -> Result<String, Error> {
    accounts::locked_status(tx, id)
        .await?
        .ok_or_else(|| Error::internal("an account vanished"))
}

/// The bank changes the status of the account `account_number` (an operator's act: `kobo
/// account set-status`), recording why, and emits `account.status_changed` to the business.
/// Closing needs a zero balance and no money of the account's reserved or in flight
/// ([`transfers::first_reserving`]): checked under the account's lock, so a hold or a release cannot slip
/// between the check and the change. Returns the change as the event carries it.
pub async fn change_status(
    store: &Store,
    clock: &Clock,
    account_number: &str,
    status: models::AccountStatus,
    reason: &str,
) -> Result<models::AccountStatusChange, Error> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(invalid("a reason is required: the business is told it"));
    }
    let now = clock.now();
    let mut tx = store.begin().await?;
    let (id, business_id) = accounts::lock_by_number(&mut tx, account_number)
        .await?
        .ok_or_else(|| {
            Error::new(ResponseCode::AccountNotFound)
                .with_message(format!("No account has the number {account_number}"))
        })?;
    let before = find_by_id(&mut tx, &id)
        .await?
        .ok_or_else(|| Error::internal("the account vanished"))?;
    let previous_status: models::AccountStatus = value(&before.status)?;
    if previous_status == status {
        return Err(Error::new(ResponseCode::InvalidState)
            .with_message(format!("The account is already {status}")));
    }
    if status == models::AccountStatus::Closed && before.balance != 0 {
        return Err(Error::new(ResponseCode::InvalidState).with_message(format!(
            "The account still holds {}: move the money out before closing it",
            amount::balance_text(i128::from(before.balance))
        )));
    }
    if status == models::AccountStatus::Closed {
        if let Some(reference) = transfers::first_reserving(&mut tx, &id).await? {
            return Err(Error::new(ResponseCode::InvalidState).with_message(format!(
                "The account's money is reserved for transfer {reference} (held for \
                     approval or on its way over NIP): close it once that transfer ends"
            )));
        }
        if let Some(batch) = crate::datastore::bulk_transfers::reserving(&mut tx, &id).await? {
            return Err(Error::new(ResponseCode::InvalidState).with_message(format!(
                "The account's money is reserved for bulk transfer {batch} (held for approval \
                 or being paid): close it once that bulk transfer ends"
            )));
        }
    }
    let changed = accounts::set_status(&mut tx, &id, &before.status, &status.to_string()).await?;
    if !changed {
        return Err(Error::new(ResponseCode::InvalidState)
            .with_message("The account's status changed meanwhile: try again"));
    }
    let after = find_by_id(&mut tx, &id)
        .await?
        .ok_or_else(|| Error::internal("the account vanished"))?;
    let change = models::AccountStatusChange {
        account: after.view()?,
        previous_status,
        reason: reason.to_owned(),
    };
    events::record(
        &mut tx,
        &business_id,
        "account.status_changed",
        &change,
        now,
    )
    .await?;
    tx.commit().await.or_internal()?;
    Ok(change)
}
