//! The validation of bulk transfers, by the worker of every process ([`work`]): one batch at a
//! time, taken up under a lease ([`LEASE`]), its pending items judged [`ITEMS_PER_PASS`] at a
//! time ([`ENQUIRIES_AT_ONCE`] name enquiries in flight) and each pass committed with the lease
//! held on. A process that stops mid-batch leaves the rest to the next worker once the lease
//! ends; an item already judged is never judged again.
//!
//! An item is judged as a transfer would be, from the same parts: the policy's amount bounds
//! (`01`), not the source account itself (`01`), its reference unused by any transfer of the
//! business (`26`), the account looked up (`06`), a Kobo account able to receive (`83`), the
//! holder's name (`49`), then its fee and VAT. An item whose bank cannot be asked now (`80`)
//! stays pending and its batch is taken up again later ([`retry_after`]); on the last of
//! [`ATTEMPTS_MAX`] attempts it is invalid with `80`.

use std::time::Duration;

use futures_util::stream::{self, StreamExt};
use generated_server::ResponseCode;

use crate::datastore::bulk_transfers::{self, BulkItemRow, BulkTransferRow, Judgement};
use crate::datastore::transfers;
use crate::error::{Error, OrInternal};
use crate::kernel::store;
use crate::money::bank::Bank;
use crate::money::banks::Beneficiary;
use crate::money::fees::Charges;
use crate::money::{banks, fees, nuban, transfers as transfer_rules};
use crate::outbox::events;

use super::view;

/// How long a worker holds a batch between two passes.
pub const LEASE: Duration = Duration::from_secs(60);

/// Items judged, then committed, at a time.
pub const ITEMS_PER_PASS: u64 = 200;

/// Name enquiries in flight at once for one batch: NIP's own limits are per institution.
pub const ENQUIRIES_AT_ONCE: usize = 8;

/// How many times a batch is taken up while its banks cannot be asked.
pub const ATTEMPTS_MAX: i64 = 5;

/// When a batch whose banks could not all be asked is taken up again: 10 s, then 20, 40, 80.
pub fn retry_after(attempts: i64) -> Duration {
    let doublings = u32::try_from(attempts.clamp(1, 5) - 1).unwrap_or(0);
    Duration::from_secs(10 << doublings)
}

/// Validates the batch longest due, if one is: `true` when one was taken up (there may be
/// more), `false` when none was due.
pub async fn work(bank: &Bank, owner: &str) -> Result<bool, Error> {
    let (store, clock) = (&bank.platform.store, &bank.platform.clock);
    let now = clock.now();
    let until = |now| store::as_stored(now + chrono::Duration::from_std(LEASE).unwrap_or_default());
    let mut tx = store.begin().await?;
    let Some(batch) =
        bulk_transfers::claim(&mut tx, super::status::VALIDATING, owner, now, until(now)).await?
    else {
        tx.rollback().await?;
        return Ok(false);
    };
    tx.commit().await.or_internal()?;
    let last_attempt = batch.attempts >= ATTEMPTS_MAX;
    let mut from = 0;
    let mut unreachable = false;
    loop {
        let items =
            bulk_transfers::items(store, &batch.id, Some("pending"), from, ITEMS_PER_PASS).await?;
        let Some(last) = items.last() else {
            break;
        };
        from = last.idx + 1;
        let judged: Vec<Option<Judgement>> = stream::iter(items)
            .map(|item| judge(bank, &batch, item, last_attempt))
            .buffered(ENQUIRIES_AT_ONCE)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect::<Result<_, _>>()?;
        unreachable |= judged.iter().any(Option::is_none);
        let judged: Vec<Judgement> = judged.into_iter().flatten().collect();
        let mut tx = store.begin().await?;
        if !bulk_transfers::judge(&mut tx, &batch.id, owner, &judged, until(clock.now())).await? {
            // Cancelled, or another worker holds it now (this one's lease ended).
            tx.rollback().await?;
            return Ok(true);
        }
        tx.commit().await.or_internal()?;
    }
    let mut tx = store.begin().await?;
    if unreachable {
        let due =
            clock.now() + chrono::Duration::from_std(retry_after(batch.attempts)).or_internal()?;
        bulk_transfers::later(&mut tx, &batch.id, owner, store::as_stored(due)).await?;
    } else if let Some(done) =
        bulk_transfers::finish(&mut tx, &batch.id, owner, store::as_stored(clock.now())).await?
    {
        let at = done.updated_at;
        let business_id = done.business_id.clone();
        events::record(
            &mut tx,
            &business_id,
            "bulk_transfer.validated",
            &view(done.clone(), None)?,
            at,
        )
        .await?;
        tracing::info!(
            bulk_transfer = %done.id, status = %done.status, valid = done.valid_count,
            invalid = done.invalid_count, "bulk transfer validated"
        );
    }
    tx.commit().await.or_internal()?;
    Ok(true)
}

/// The verdict on one item of `batch`: `None` when its bank cannot be asked now and this is
/// not the batch's last attempt (it stays pending).
async fn judge(
    bank: &Bank,
    batch: &BulkTransferRow,
    item: BulkItemRow,
    last_attempt: bool,
) -> Result<Option<Judgement>, Error> {
    let enquired_at = store::as_stored(bank.platform.clock.now());
    let Some((holder, outcome)) = check(bank, batch, &item, last_attempt).await? else {
        return Ok(None);
    };
    let intra = item.bank_code == nuban::BANK_CODE;
    let (charges, refusal) = match outcome {
        Ok(charges) => (Some(charges), None),
        Err(error) => (None, Some(error)),
    };
    Ok(Some(Judgement {
        idx: item.idx,
        validation: if refusal.is_none() {
            "valid"
        } else {
            "invalid"
        }
        .to_owned(),
        bank_name: holder.as_ref().map(|found| found.bank_name.clone()),
        transfer_type: holder
            .as_ref()
            .map(|_| if intra { "intra" } else { "inter" }.to_owned()),
        confirmed_name: holder.as_ref().map(|found| found.account_name.clone()),
        enquired_at: holder.as_ref().map(|_| enquired_at),
        fee: charges.map(|charges| charges.fee),
        vat: charges.map(|charges| charges.vat),
        refusal_code: refusal
            .as_ref()
            .map(|error| error.code().as_str().to_owned()),
        refusal_message: refusal.as_ref().map(|error| error.message().into_owned()),
    }))
}

/// An item checked as a transfer is, by the transfer's own rules: the amount's bounds, not the
/// source itself, the reference unused, the account looked up and able to receive, the
/// holder's name; its charges when it passes, the refusal otherwise, and the holder when the
/// account was found. `None` when its bank cannot be asked now (not on the last attempt).
async fn check(
    bank: &Bank,
    batch: &BulkTransferRow,
    item: &BulkItemRow,
    last_attempt: bool,
) -> Result<Option<(Option<Beneficiary>, Result<Charges, Error>)>, Error> {
    let refused = |error: Error| Ok(Some((None, Err(error))));
    let policy = &bank.transfers;
    if let Err(error) = transfer_rules::check_amount(policy, item.amount) {
        return refused(error);
    }
    let intra = item.bank_code == nuban::BANK_CODE;
    if intra && item.account_number == batch.source_account_number {
        return refused(
            Error::new(ResponseCode::InvalidRequest)
                .with_message("`account_number`: must differ from the source account"),
        );
    }
    let store = &bank.platform.store;
    if let Some(reference) = &item.reference {
        if let Some(other) =
            transfers::reference_owner(store, &batch.business_id, reference).await?
        {
            return refused(transfer_rules::duplicate(reference, &other));
        }
    }
    let provider = &*bank.provider;
    let found = match banks::resolve(store, provider, &item.bank_code, &item.account_number).await {
        Ok(found) => found,
        Err(error) if error.code() == ResponseCode::ProviderUnavailable && !last_attempt => {
            return Ok(None);
        }
        Err(error) if is_a_refusal(error.code()) => return refused(error),
        Err(error) => return Err(error),
    };
    let outcome = match &found.kobo_account {
        Some((account, _)) => transfer_rules::check_recipient(account),
        None => Ok(()),
    }
    .and_then(|()| {
        if fees::same_name(&item.account_name, &found.account_name) {
            Ok(fees::charges(policy, !intra, item.amount))
        } else {
            Err(found.not_the_holders("name"))
        }
    });
    Ok(Some((Some(found), outcome)))
}

/// The answers of a lookup that are the item's (it is invalid), not the worker's (it stops and
/// the batch is taken up again once its lease ends).
fn is_a_refusal(code: ResponseCode) -> bool {
    matches!(
        code,
        ResponseCode::BeneficiaryAccountNotFound
            | ResponseCode::InvalidRequest
            | ResponseCode::ProviderUnavailable
            | ResponseCode::ProviderError
    )
}
