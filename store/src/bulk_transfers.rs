//! The rows of `bulk_transfers` and `bulk_transfer_items`: batches of payments a business sends
//! in one run, each item as it was sent and, once the validation worker judged it, as it was
//! judged (the holder's name, the fee and VAT, or why it cannot be paid).

use crate::paging::Cursor;
use chrono::{DateTime, Utc};

/// A batch as it is stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkTransferRow {
    pub id: uuid::Uuid,
    pub business_id: String,
    pub reference: Option<String>,
    pub source_account_id: String,
    pub source_account_number: String,
    /// `refuse_batch` or `skip_invalid`.
    pub on_invalid: String,
    /// `validating`, `validated`, `invalid`, `cancelled`, ...
    pub status: String,
    pub narration: Option<String>,
    pub item_count: i64,
    pub valid_count: i64,
    pub invalid_count: i64,
    pub total_amount: i64,
    pub total_fee: i64,
    pub total_vat: i64,
    /// The member who wrote it, or `integration`.
    pub created_by: String,
    /// `dashboard` or `integration`.
    pub created_via: String,
    /// How many times the validation worker took it up.
    pub attempts: i64,
    pub validated_at: Option<DateTime<Utc>>,
    pub cancelled_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The member who authorised it, or `integration`.
    pub authorised_by: Option<String>,
    /// Authorised with integration credentials: the member who had issued them (the maker).
    pub credential_issued_by: Option<String>,
    pub authorised_at: Option<DateTime<Utc>>,
    pub reviewed_by: Option<String>,
    pub reviewed_at: Option<DateTime<Utc>>,
    pub review_reason: Option<String>,
    /// When a held batch expires unreviewed.
    pub expires_at: Option<DateTime<Utc>>,
    /// When its items are paid, at the earliest (a scheduled payment); `None`: once authorised.
    pub execute_at: Option<DateTime<Utc>>,
    /// Kobo set aside at authorisation, moved out to items' transfers, returned unspent.
    pub reserved: i64,
    pub paid: i64,
    pub released: i64,
    /// The first item the executor has not taken yet.
    pub next_index: i64,
    /// When what the items did not spend was released.
    pub executed_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    /// The members' names as they were when they wrote, authorised and reviewed it.
    pub created_by_name: Option<String>,
    pub authorised_by_name: Option<String>,
    pub reviewed_by_name: Option<String>,
}

/// What became of a batch's paid items: their transfers' statuses counted (an item refused when
/// it was to be paid counts as failed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcomes {
    pub bulk_transfer_id: uuid::Uuid,
    pub succeeded: i64,
    pub processing: i64,
    pub failed: i64,
    pub reversed: i64,
}

/// A batch's move at authorisation: out of `validated` to `to` (`executing` or `scheduled`, taken
/// up by the executor from `due`; or `pending_approval`), `reserved` set aside.
#[derive(Clone, Copy, Debug)]
pub struct Authorisation<'a> {
    pub to: &'a str,
    pub due: Option<DateTime<Utc>>,
    pub by: &'a str,
    pub by_name: Option<&'a str>,
    pub credential_issued_by: Option<&'a str>,
    pub reserved: i64,
    pub at: DateTime<Utc>,
    /// Held: when it expires unreviewed.
    pub expires_at: Option<DateTime<Utc>>,
}

/// A move of a batch whose money is held, out of `from` (`pending_approval`, or `scheduled`) to
/// `to` (`executing` or `scheduled`, taken up by the executor from `due`; `rejected`;
/// `cancelled`; `expired`), by `reviewer` when a checker decided, `released` given back.
#[derive(Clone, Copy, Debug)]
pub struct HoldEnd<'a> {
    pub from: &'a str,
    pub to: &'a str,
    pub due: Option<DateTime<Utc>>,
    pub reviewer: Option<&'a str>,
    pub reviewer_name: Option<&'a str>,
    pub reason: Option<&'a str>,
    pub released: i64,
    pub at: DateTime<Utc>,
}

/// What [`create`] writes: a batch, `validating`.
#[derive(Clone, Debug)]
pub struct NewBulkTransfer {
    pub id: uuid::Uuid,
    pub business_id: String,
    pub reference: Option<String>,
    pub source_account_id: String,
    pub source_account_number: String,
    pub on_invalid: String,
    pub narration: Option<String>,
    pub created_by: String,
    pub created_by_name: Option<String>,
    pub created_via: String,
    /// When to pay it, at the earliest.
    pub execute_at: Option<DateTime<Utc>>,
    pub now: DateTime<Utc>,
}

/// An item as it was sent: its place in the batch (`idx`, from 0) and the id its transfer will
/// have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewBulkItem {
    pub idx: i64,
    pub transfer_id: uuid::Uuid,
    pub beneficiary_id: Option<uuid::Uuid>,
    pub account_number: String,
    pub bank_code: String,
    pub account_name: String,
    pub amount: i64,
    pub narration: Option<String>,
    pub reference: Option<String>,
}

/// What the validation worker found of one item: `valid` with the holder's name, the bank and
/// the charges, or `invalid` with the refusal's code and message. An item left `pending` (its
/// bank could not be asked) is not judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judgement {
    pub idx: i64,
    /// `valid` or `invalid`.
    pub validation: String,
    pub bank_name: Option<String>,
    /// `intra` or `inter`.
    pub transfer_type: Option<String>,
    pub confirmed_name: Option<String>,
    pub enquired_at: Option<DateTime<Utc>>,
    pub fee: Option<i64>,
    pub vat: Option<i64>,
    pub refusal_code: Option<String>,
    pub refusal_message: Option<String>,
}

/// An item as it is stored: as it was sent, then as it was judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkItemRow {
    pub idx: i64,
    pub transfer_id: uuid::Uuid,
    pub beneficiary_id: Option<uuid::Uuid>,
    pub account_number: String,
    pub bank_code: String,
    pub account_name: String,
    pub amount: i64,
    pub narration: Option<String>,
    pub reference: Option<String>,
    /// `pending`, `valid` or `invalid`.
    pub validation: String,
    pub bank_name: Option<String>,
    pub transfer_type: Option<String>,
    pub confirmed_name: Option<String>,
    pub enquired_at: Option<DateTime<Utc>>,
    pub fee: Option<i64>,
    pub vat: Option<i64>,
    pub refusal_code: Option<String>,
    pub refusal_message: Option<String>,
    /// Why it was refused when it was to be paid (no transfer was written).
    pub failure_code: Option<String>,
    pub failure_message: Option<String>,
    /// Its transfer's status and reference number, once it was paid.
    pub transfer_status: Option<String>,
    pub reference_number: Option<String>,
}

crate::contract! {
    /// `bulk_transfers` and `bulk_transfer_items`: batches of payments, validated before
    /// anything moves.
    pub trait BulkTransfers in bulk_transfers, functions bulk_transfers_functions {
        /// Writes `batch`, `validating`, with its `items` (at least one, `idx` from 0 in
        /// order), each `pending`; due for validation at once.
        tx fn create(batch: &NewBulkTransfer, items: &[NewBulkItem]) -> ();
        /// The business's batch `id`.
        conn fn get(business_id: &str, id: &uuid::Uuid) -> Option<BulkTransferRow>;
        /// The business's batch whose client reference is `reference`.
        conn fn by_reference(business_id: &str, reference: &str) -> Option<BulkTransferRow>;
        /// One page of the business's batches, newest first by `(created_at, id)`, of one
        /// status or all, after `cursor`: at most `limit` rows.
        conn fn list(
            business_id: &str,
            status: Option<&str>,
            cursor: Option<&Cursor>,
            limit: u64,
        ) -> Vec<BulkTransferRow>;
        /// Items of batch `id` in order, from `from_idx`, of one validation or all: at most
        /// `limit`.
        conn fn items(
            id: &uuid::Uuid,
            validation: Option<&str>,
            from_idx: i64,
            limit: u64,
        ) -> Vec<BulkItemRow>;
        /// Takes up the batch of `status` (`validating` for the validation worker, `executing` for
        /// the executor) longest due: due before `now`, under no lease or a lease that ended
        /// before `now` (its process stopped). It is leased to `owner` until `until`, one more
        /// attempt counted. PostgreSQL skips batches another process is taking (`SKIP LOCKED`).
        tx fn claim(
            status: &str,
            owner: &str,
            now: DateTime<Utc>,
            until: DateTime<Utc>,
        ) -> Option<BulkTransferRow>;
        /// Writes `judged` items of batch `id` (each still `pending`) and holds the lease to
        /// `until`, if `owner` still holds it: `false` otherwise, and nothing written.
        tx fn judge(id: &uuid::Uuid, owner: &str, judged: &[Judgement], until: DateTime<Utc>) -> bool;
        /// Batch `id` goes back to the queue (validating or executing), due at `due`, its lease
        /// given up (what is left is taken up again then), if `owner` holds it.
        tx fn later(id: &uuid::Uuid, owner: &str, due: DateTime<Utc>) -> bool;
        /// Batch `id`, its items all judged, is `validated` at `now` with its counts and the
        /// totals of its valid items, or `invalid` when none is valid or, refusing invalid
        /// items (`refuse_batch`), one is invalid; if `owner` holds its lease and no item is
        /// pending: the batch as it is then, else `None` and nothing written.
        tx fn finish(id: &uuid::Uuid, owner: &str, now: DateTime<Utc>) -> Option<BulkTransferRow>;
        /// Batch `id` of the business is `cancelled` at `now` if its status is one of `from`:
        /// the batch as it is then, else `None`.
        tx fn cancel(
            business_id: &str,
            id: &uuid::Uuid,
            from: &[&str],
            now: DateTime<Utc>,
        ) -> Option<BulkTransferRow>;
        /// Batch `id` of the business moves out of `validated` as `authorisation` says: the
        /// batch as it is then, else `None` (another request moved it first) and nothing written.
        tx fn authorise(
            business_id: &str,
            id: &uuid::Uuid,
            authorisation: &Authorisation<'_>,
        ) -> Option<BulkTransferRow>;
        /// Batch `id` of the business, its money held, moves out of `end.from` as `end` says:
        /// the batch as it is then, else `None` (it was not in `end.from`) and nothing written.
        tx fn end_hold(business_id: &str, id: &uuid::Uuid, end: &HoldEnd<'_>) -> Option<BulkTransferRow>;
        /// Scheduled batches whose time came (taken up from before `now`) are `executing`: how
        /// many.
        tx fn start_scheduled(now: DateTime<Utc>) -> u64;
        /// Item `idx` of batch `id` is done: the cursor moves past it, `paid` more kobo moved out
        /// of the reservation, the item's refusal kept when it was refused (`failure`), the
        /// lease held to `until`; if `owner` holds the lease and the cursor had not passed the
        /// item: `false` otherwise, and nothing written.
        tx fn pass_item(
            id: &uuid::Uuid,
            owner: &str,
            idx: i64,
            paid: i64,
            failure: Option<(&str, &str)>,
            until: DateTime<Utc>,
        ) -> bool;
        /// Every item of batch `id` taken: `released` kobo returned at `now`, the cursor at the
        /// end; if `owner` holds the lease and it was not released before.
        tx fn release_rest(id: &uuid::Uuid, owner: &str, released: i64, now: DateTime<Utc>) -> bool;
        /// Batch `id`, executing and released, is `completed` at `now`, its lease given up: the
        /// batch as it is then, else `None`.
        tx fn complete(id: &uuid::Uuid, owner: &str, now: DateTime<Utc>) -> Option<BulkTransferRow>;
        /// What became of the paid items of batches `ids` (a batch none of whose items was paid
        /// has no row).
        conn fn outcomes(ids: &[uuid::Uuid]) -> Vec<Outcomes>;
        /// A batch whose reservation still holds money of account `account_id` (held for
        /// approval, scheduled, or executing and not yet released), if one does.
        tx fn reserving(account_id: &str) -> Option<uuid::Uuid>;
        /// Held batches whose `expires_at` passed at `now`, as `(business, id)`: at most 100.
        pool fn due_holds(now: DateTime<Utc>) -> Vec<(String, uuid::Uuid)>;
    }
}
