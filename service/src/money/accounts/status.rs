//! An account's status, changed by the operator (`kobo account set-status`): blocked, closed
//! or reactivated, never closed while money is reserved or in flight.

use generated_server::models;
use generated_server::ResponseCode;

use super::{find_by_id, invalid, value};
use crate::error::{Error, OrInternal};
use crate::kernel::clock::Clock;
use crate::kernel::store::{self, Backend, Store, Tx};
use crate::money::amount;
use crate::outbox::events;

/// The status of account `id`, read under a lock held until `tx` ends: on PostgreSQL `FOR
/// SHARE`, so a status change in flight is waited for and seen, and one that comes later
/// waits for `tx`; SQLite's write transaction holds the whole database already. For a check
/// that must hold until the commit of a transaction that moves no money of the account's
/// (a held transfer's approval).
pub(crate) async fn locked_status(tx: &mut Tx, id: &str) -> Result<String, Error> {
    let sql = match tx.backend() {
        Backend::Postgres => "SELECT status FROM accounts WHERE id = $1 FOR SHARE",
        Backend::Sqlite => "SELECT status FROM accounts WHERE id = $1",
    };
    sqlx::query_scalar(sql)
        .bind(id)
        .fetch_optional(&mut **tx)
        .await
        .or_internal()?
        .ok_or_else(|| Error::internal("an account vanished"))
}

/// The reference of a transfer whose money the account still owns though its balance no
/// longer shows it: reserved for a held transfer (`pending_approval`) or in flight to NIP
/// (`processing`). Rejection, expiry or a NIP failure would pay it back into the account.
async fn reserved_by(tx: &mut Tx, account_id: &str) -> Result<Option<String>, Error> {
    sqlx::query_scalar(
        "SELECT reference_number FROM transfers \
         WHERE source_account_id = $1 AND transfer_status IN ('pending_approval', 'processing') \
         ORDER BY created_at LIMIT 1",
    )
    .bind(account_id)
    .fetch_optional(&mut **tx)
    .await
    .or_internal()
}

/// The account with this number, locked until `tx` ends (PostgreSQL: `FOR UPDATE`; the
/// statements after it see whatever committed before the lock was granted).
async fn lock_by_number(tx: &mut Tx, number: &str) -> Result<Option<(String, String)>, Error> {
    let sql = match tx.backend() {
        Backend::Postgres => {
            "SELECT id, business_id FROM accounts WHERE account_number = $1 FOR UPDATE"
        }
        Backend::Sqlite => "SELECT id, business_id FROM accounts WHERE account_number = $1",
    };
    let row = sqlx::query(sql)
        .bind(number)
        .fetch_optional(&mut **tx)
        .await
        .or_internal()?;
    row.map(|row| Ok((store::text(&row, "id")?, store::text(&row, "business_id")?)))
        .transpose()
}

/// The bank changes the status of the account `account_number` (an operator's act: `kobo
/// account set-status`), recording why, and emits `account.status_changed` to the business.
/// Closing needs a zero balance and no money of the account's reserved or in flight
/// ([`reserved_by`]): checked under the account's lock, so a hold or a release cannot slip
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
    let (id, business_id) = lock_by_number(&mut tx, account_number)
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
        if let Some(reference) = reserved_by(&mut tx, &id).await? {
            return Err(Error::new(ResponseCode::InvalidState).with_message(format!(
                "The account's money is reserved for transfer {reference} (held for \
                     approval or on its way over NIP): close it once that transfer ends"
            )));
        }
    }
    let changed = sqlx::query("UPDATE accounts SET status = $1 WHERE id = $2 AND status = $3")
        .bind(status.to_string())
        .bind(&id)
        .bind(&before.status)
        .execute(&mut *tx)
        .await
        .or_internal()?
        .rows_affected();
    if changed == 0 {
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
