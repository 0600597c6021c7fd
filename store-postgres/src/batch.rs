//! A [`Batch`] of typed writes run in one round trip, as one static statement
//! (`src/batch.sql`).
//!
//! Each kind of write is grouped into one array per column, in the order pushed, and each
//! table is written by a data-modifying part of one `WITH` reading `unnest` of its arrays.
//! That one statement does what the writes run one after another would do:
//! - every write but the answers inserts new rows, and none reads a row another write of the
//!   batch writes (an event reads `webhook_configurations`, which no write touches; the
//!   answers update `idempotency_keys` rows claimed before the batch, which no write inserts;
//!   a key claimed with its answer is inserted, or replaces an expired row), so their order
//!   within the statement cannot change what each one does;
//! - a posting may name its entry and a transfer its transactions, whatever order the parts
//!   run in: no foreign key checks them (migration 0022);
//! - a uniqueness refused fails the whole statement, as it failed the transaction before;
//! - an answer pushed twice for one key keeps the last (`DISTINCT ON` the newest);
//! - the statement counts the keys it claimed with their answers: fewer than the batch's
//!   claims is `StoreError::KeyTaken` (a transaction that committed first holds one), and the
//!   caller rolls back;
//! - an entry's postings to customer accounts, and its row, are carried by the transactions
//!   the batch writes with them where they say the same ([`carry`], migration 0025): only the
//!   rest become rows of `postings` and `journal_entries`;
//! - a payout's audit entry, and an integration payout's activity entry, are carried by its
//!   transfer where they say what it says ([`carry_audit`], [`carry_activity`], migration
//!   0026): only the rest become rows of `audit_logs` and `activity_logs`.

use chrono::{DateTime, Utc};

use crate::{new_id, new_opt_id, StoreError, Tx};
pub use kobo_store::batch::{
    Answer, Batch, KeyClaim, NewActivity, NewAudit, NewEntry, NewEvent, Write,
};
use kobo_store::logs::Activity;

#[derive(Default)]
struct Entries {
    ids: Vec<uuid::Uuid>,
    business_ids: Vec<uuid::Uuid>,
    kinds: Vec<String>,
    ats: Vec<DateTime<Utc>>,
}

#[derive(Default)]
struct Postings {
    ids: Vec<uuid::Uuid>,
    entry_ids: Vec<uuid::Uuid>,
    account_ids: Vec<uuid::Uuid>,
    amounts: Vec<i64>,
    ats: Vec<DateTime<Utc>>,
}

#[derive(Default)]
struct Transactions {
    ids: Vec<uuid::Uuid>,
    business_ids: Vec<uuid::Uuid>,
    account_ids: Vec<uuid::Uuid>,
    entry_ids: Vec<uuid::Uuid>,
    sequences: Vec<i64>,
    reference_numbers: Vec<String>,
    transaction_types: Vec<String>,
    categories: Vec<String>,
    statuses: Vec<String>,
    channels: Vec<String>,
    amounts: Vec<i64>,
    narrations: Vec<String>,
    narration_keys: Vec<String>,
    session_ids: Vec<Option<String>>,
    originator_account_numbers: Vec<Option<String>>,
    originator_account_names: Vec<Option<String>>,
    originator_bank_codes: Vec<Option<String>>,
    originator_bank_names: Vec<Option<String>>,
    created_ats: Vec<DateTime<Utc>>,
    settled: Vec<bool>,
    /// It carries its entry's posting to its account ([`carry`]).
    carries_posting: Vec<bool>,
    /// It carries its entry's row: the entry's kind ([`carry`]).
    entry_kinds: Vec<Option<String>>,
}

impl Transactions {
    /// The transaction of the batch that can carry a posting of `amount` (signed, credit
    /// positive) to `account_id` in `entry_id`, and carries none yet. Its time may be a later
    /// place's than the entry's (a fee's, a recipient's in its own ledger): the posting then
    /// reads as of its transaction's time, which nothing compares.
    fn carrier_of_posting(
        &self,
        entry_id: uuid::Uuid,
        account_id: uuid::Uuid,
        amount: i64,
    ) -> Option<usize> {
        (0..self.ids.len()).find(|&i| {
            let signed = if self.transaction_types[i] == "credit" {
                self.amounts[i]
            } else {
                -self.amounts[i]
            };
            !self.carries_posting[i]
                && self.entry_ids[i] == entry_id
                && self.account_ids[i] == account_id
                && signed == amount
        })
    }

    /// The transaction of the batch that can carry the row of entry `entry_id` of
    /// `business_id` at `at`: one of that business's transactions of the entry, at its time.
    fn carrier_of_entry(
        &self,
        entry_id: uuid::Uuid,
        business_id: uuid::Uuid,
        at: DateTime<Utc>,
    ) -> Option<usize> {
        (0..self.ids.len()).find(|&i| {
            self.entry_kinds[i].is_none()
                && self.entry_ids[i] == entry_id
                && self.business_ids[i] == business_id
                && self.created_ats[i] == at
        })
    }
}

#[derive(Default)]
struct Transfers {
    ids: Vec<uuid::Uuid>,
    business_ids: Vec<uuid::Uuid>,
    reference_numbers: Vec<String>,
    references: Vec<Option<String>>,
    source_account_ids: Vec<uuid::Uuid>,
    beneficiary_account_numbers: Vec<String>,
    beneficiary_account_names: Vec<String>,
    beneficiary_account_ids: Vec<Option<uuid::Uuid>>,
    bank_codes: Vec<String>,
    bank_names: Vec<String>,
    transfer_types: Vec<String>,
    amounts: Vec<i64>,
    fees: Vec<i64>,
    vats: Vec<i64>,
    narrations: Vec<String>,
    transfer_statuses: Vec<String>,
    approval_statuses: Vec<String>,
    debit_transaction_ids: Vec<uuid::Uuid>,
    fee_transaction_ids: Vec<Option<uuid::Uuid>>,
    initiated_bys: Vec<String>,
    initiated_vias: Vec<String>,
    expires_ats: Vec<Option<DateTime<Utc>>>,
    days: Vec<String>,
    created_ats: Vec<DateTime<Utc>>,
    updated_ats: Vec<DateTime<Utc>>,
    credential_issued_bys: Vec<Option<String>>,
    /// The audit entry it carries ([`carry_audit`], migration 0026): its user's name.
    audit_user_names: Vec<Option<String>>,
    /// The call of the entries it carries: its address and request id.
    call_ip_addresses: Vec<Option<String>>,
    call_request_ids: Vec<Option<String>>,
    /// The activity entry it carries ([`carry_activity`]): its endpoint and message.
    activity_endpoints: Vec<Option<String>>,
    activity_messages: Vec<Option<String>>,
}

impl Transfers {
    /// The transfer of the batch whose audit entry `audit` is, if one can carry it: the
    /// payout's own entry (`funds_transfer`, a success, naming the transfer as its target, at
    /// its creation, by its maker: the member who made it, or no member for an integration),
    /// and it carries none yet.
    fn carrier_of_audit(&self, audit: &NewAudit) -> Option<usize> {
        let entry = &audit.entry;
        if entry.action != "funds_transfer"
            || entry.response_code != 200
            || entry.target_type != Some("transfer")
        {
            return None;
        }
        let target = uuid::Uuid::parse_str(entry.target_id.as_deref()?).ok()?;
        let business_id = uuid::Uuid::parse_str(&entry.business_id).ok()?;
        (0..self.ids.len()).find(|&i| {
            let maker = (self.initiated_vias[i] == "dashboard").then_some(&self.initiated_bys[i]);
            self.ids[i] == target
                && self.business_ids[i] == business_id
                && self.created_ats[i] == audit.at
                && maker == entry.user_id.as_ref()
                && self.audit_user_names[i].is_none()
                && self.call_is(i, &entry.ip_address, &entry.request_id)
        })
    }

    /// The transfer of the batch whose call's activity entry `activity` (at `at`) is, if one
    /// can carry it: a success of its business at its creation, and it carries none yet.
    fn carrier_of_activity(&self, activity: &Activity, at: DateTime<Utc>) -> Option<usize> {
        if !activity.success || activity.http_status != 200 {
            return None;
        }
        let business_id = uuid::Uuid::parse_str(&activity.business_id).ok()?;
        (0..self.ids.len()).find(|&i| {
            self.business_ids[i] == business_id
                && self.created_ats[i] == at
                && self.activity_endpoints[i].is_none()
                && self.call_is(i, &activity.ip_address, &activity.request_id)
        })
    }

    /// Whether transfer `i` carries no call yet, or this one.
    fn call_is(&self, i: usize, ip_address: &str, request_id: &str) -> bool {
        match (&self.call_ip_addresses[i], &self.call_request_ids[i]) {
            (Some(ip), Some(request)) => ip == ip_address && request == request_id,
            _ => true,
        }
    }

    fn set_call(&mut self, i: usize, ip_address: String, request_id: String) {
        self.call_ip_addresses[i] = Some(ip_address);
        self.call_request_ids[i] = Some(request_id);
    }
}

#[derive(Default)]
struct Events {
    ids: Vec<uuid::Uuid>,
    business_ids: Vec<uuid::Uuid>,
    kinds: Vec<String>,
    payloads: Vec<String>,
    ats: Vec<DateTime<Utc>>,
}

#[derive(Default)]
struct Audits {
    ids: Vec<uuid::Uuid>,
    business_ids: Vec<uuid::Uuid>,
    actions: Vec<String>,
    user_names: Vec<String>,
    user_ids: Vec<Option<String>>,
    ip_addresses: Vec<String>,
    response_codes: Vec<i64>,
    target_types: Vec<Option<String>>,
    target_ids: Vec<Option<String>>,
    request_ids: Vec<String>,
    ats: Vec<DateTime<Utc>>,
}

#[derive(Default)]
struct Activities {
    ids: Vec<uuid::Uuid>,
    business_ids: Vec<uuid::Uuid>,
    endpoints: Vec<String>,
    response_codes: Vec<i64>,
    statuses: Vec<String>,
    messages: Vec<String>,
    ip_addresses: Vec<String>,
    request_ids: Vec<String>,
    ats: Vec<DateTime<Utc>>,
}

#[derive(Default)]
struct Answers {
    business_ids: Vec<uuid::Uuid>,
    operations: Vec<String>,
    keys: Vec<String>,
    data: Vec<String>,
}

/// The keys a batch claims with their answers.
#[derive(Default)]
struct Claims {
    business_ids: Vec<uuid::Uuid>,
    operations: Vec<String>,
    keys: Vec<String>,
    request_hashes: Vec<String>,
    data: Vec<String>,
    ats: Vec<DateTime<Utc>>,
    /// The earliest of the claims' cutoffs: a key stored before it has expired for all.
    expired_before: Option<DateTime<Utc>>,
}

/// Runs every write of `batch` in `tx`, in one round trip (one statement; nothing when the
/// batch is empty).
pub async fn run(tx: &mut Tx, batch: Batch) -> Result<(), StoreError> {
    if batch.is_empty() {
        return Ok(());
    }
    let mut entries = Entries::default();
    let mut postings = Postings::default();
    let mut transactions = Transactions::default();
    let mut transfers = Transfers::default();
    let mut events = Events::default();
    let mut audits = Audits::default();
    let mut activities = Activities::default();
    let mut answers = Answers::default();
    let mut claims = Claims::default();
    let mut new_entries = Vec::new();
    let mut new_audits = Vec::new();
    let mut new_activities = Vec::new();
    for write in batch.into_writes() {
        match write {
            Write::Entry(entry) => new_entries.push(entry),
            Write::Transaction(new) => {
                let t = &mut transactions;
                t.ids.push(new.id);
                t.business_ids.push(new_id(&new.business_id)?);
                t.account_ids.push(new_id(&new.account_id)?);
                t.entry_ids.push(new_id(&new.entry_id)?);
                t.sequences.push(new.sequence);
                t.narration_keys
                    .push(format!("{} {}", new.narration, new.reference_number).to_lowercase());
                t.reference_numbers.push(new.reference_number);
                t.transaction_types.push(new.transaction_type);
                t.categories.push(new.category);
                t.statuses.push(new.status);
                t.channels.push(new.channel);
                t.amounts.push(new.amount);
                t.narrations.push(new.narration);
                t.session_ids.push(new.session_id);
                let originator = new.originator;
                t.originator_account_numbers
                    .push(originator.as_ref().map(|o| o.account_number.clone()));
                t.originator_account_names
                    .push(originator.as_ref().map(|o| o.account_name.clone()));
                t.originator_bank_codes
                    .push(originator.as_ref().map(|o| o.bank_code.clone()));
                t.originator_bank_names
                    .push(originator.as_ref().map(|o| o.bank_name.clone()));
                t.created_ats.push(new.created_at);
                t.settled.push(new.settled);
                t.carries_posting.push(false);
                t.entry_kinds.push(None);
            }
            Write::Transfer(new) => {
                let t = &mut transfers;
                let row = new.row;
                t.ids.push(new_id(&row.id)?);
                t.business_ids.push(new_id(&new.business_id)?);
                t.reference_numbers.push(row.reference_number);
                t.references.push(row.reference);
                t.source_account_ids.push(new_id(&new.source_account_id)?);
                t.beneficiary_account_numbers
                    .push(row.beneficiary_account_number);
                t.beneficiary_account_names
                    .push(row.beneficiary_account_name);
                t.beneficiary_account_ids
                    .push(new_opt_id(new.beneficiary_account_id.as_deref())?);
                t.bank_codes.push(row.bank_code);
                t.bank_names.push(row.bank_name);
                t.transfer_types.push(row.transfer_type);
                t.amounts.push(row.amount);
                t.fees.push(row.fee);
                t.vats.push(row.vat);
                t.narrations.push(row.narration);
                t.transfer_statuses.push(row.transfer_status);
                t.approval_statuses.push(row.approval_status);
                t.debit_transaction_ids
                    .push(new_id(&new.debit_transaction_id)?);
                t.fee_transaction_ids
                    .push(new_opt_id(new.fee_transaction_id.as_deref())?);
                t.initiated_bys.push(row.initiated_by);
                t.initiated_vias.push(row.initiated_via);
                t.expires_ats.push(row.expires_at);
                t.days.push(new.day);
                t.created_ats.push(row.created_at);
                t.updated_ats.push(row.updated_at);
                t.credential_issued_bys.push(new.credential_issued_by);
                t.audit_user_names.push(None);
                t.call_ip_addresses.push(None);
                t.call_request_ids.push(None);
                t.activity_endpoints.push(None);
                t.activity_messages.push(None);
            }
            Write::Event(event) => {
                events.ids.push(new_id(&event.id)?);
                events.business_ids.push(new_id(&event.business_id)?);
                events.kinds.push(event.kind);
                events.payloads.push(event.payload);
                events.ats.push(event.at);
            }
            Write::Audit(audit) => new_audits.push(audit),
            Write::Activity(new) => new_activities.push(new),
            Write::Answer(Answer {
                business_id,
                operation,
                key,
                data,
                claim: Some(claim),
            }) => {
                claims.business_ids.push(new_id(&business_id)?);
                claims.operations.push(operation);
                claims.keys.push(key);
                claims.request_hashes.push(claim.request_hash);
                claims.data.push(data);
                claims.ats.push(claim.at);
                claims.expired_before = Some(match claims.expired_before {
                    Some(cutoff) => cutoff.min(claim.expired_before),
                    None => claim.expired_before,
                });
            }
            Write::Answer(answer) => {
                answers.business_ids.push(new_id(&answer.business_id)?);
                answers.operations.push(answer.operation);
                answers.keys.push(answer.key);
                answers.data.push(answer.data);
            }
        }
    }
    for entry in new_entries {
        carry(entry, &mut transactions, &mut entries, &mut postings)?;
    }
    for audit in new_audits {
        carry_audit(audit, &mut transfers, &mut audits)?;
    }
    for activity in new_activities {
        carry_activity(activity, &mut transfers, &mut activities)?;
    }
    let claimed = sqlx::query_file!(
        "src/batch.sql",
        &entries.ids,
        &entries.business_ids,
        &entries.kinds,
        &entries.ats,
        &postings.ids,
        &postings.entry_ids,
        &postings.account_ids,
        &postings.amounts,
        &postings.ats,
        &transactions.ids,
        &transactions.business_ids,
        &transactions.account_ids,
        &transactions.entry_ids,
        &transactions.sequences,
        &transactions.reference_numbers,
        &transactions.transaction_types,
        &transactions.categories,
        &transactions.statuses,
        &transactions.channels,
        &transactions.amounts,
        &transactions.narrations,
        &transactions.narration_keys,
        &transactions.session_ids as &[Option<String>],
        &transactions.originator_account_numbers as &[Option<String>],
        &transactions.originator_account_names as &[Option<String>],
        &transactions.originator_bank_codes as &[Option<String>],
        &transactions.originator_bank_names as &[Option<String>],
        &transactions.created_ats,
        &transactions.settled,
        &transfers.ids,
        &transfers.business_ids,
        &transfers.reference_numbers,
        &transfers.references as &[Option<String>],
        &transfers.source_account_ids,
        &transfers.beneficiary_account_numbers,
        &transfers.beneficiary_account_names,
        &transfers.beneficiary_account_ids as &[Option<uuid::Uuid>],
        &transfers.bank_codes,
        &transfers.bank_names,
        &transfers.transfer_types,
        &transfers.amounts,
        &transfers.fees,
        &transfers.vats,
        &transfers.narrations,
        &transfers.transfer_statuses,
        &transfers.approval_statuses,
        &transfers.debit_transaction_ids,
        &transfers.fee_transaction_ids as &[Option<uuid::Uuid>],
        &transfers.initiated_bys,
        &transfers.initiated_vias,
        &transfers.expires_ats as &[Option<DateTime<Utc>>],
        &transfers.days,
        &transfers.created_ats,
        &transfers.updated_ats,
        &transfers.credential_issued_bys as &[Option<String>],
        &events.ids,
        &events.business_ids,
        &events.kinds,
        &events.payloads,
        &events.ats,
        &audits.ids,
        &audits.business_ids,
        &audits.actions,
        &audits.user_names,
        &audits.user_ids as &[Option<String>],
        &audits.ip_addresses,
        &audits.response_codes,
        &audits.target_types as &[Option<String>],
        &audits.target_ids as &[Option<String>],
        &audits.request_ids,
        &audits.ats,
        &answers.business_ids,
        &answers.operations,
        &answers.keys,
        &answers.data,
        &claims.business_ids,
        &claims.operations,
        &claims.keys,
        &claims.request_hashes,
        &claims.data,
        &claims.ats,
        claims.expired_before,
        &transactions.carries_posting,
        &transactions.entry_kinds as &[Option<String>],
        &activities.ids,
        &activities.business_ids,
        &activities.endpoints,
        &activities.response_codes,
        &activities.statuses,
        &activities.messages,
        &activities.ip_addresses,
        &activities.request_ids,
        &activities.ats,
        &transfers.audit_user_names as &[Option<String>],
        &transfers.call_ip_addresses as &[Option<String>],
        &transfers.call_request_ids as &[Option<String>],
        &transfers.activity_endpoints as &[Option<String>],
        &transfers.activity_messages as &[Option<String>]
    )
    .fetch_one(&mut **tx)
    .await?;
    if claimed.claimed < claims.keys.len() as i64 {
        return Err(StoreError::KeyTaken);
    }
    Ok(())
}

/// Writes `entry` as few rows as it can (migration 0025): each posting to an account whose
/// transaction of the entry the batch writes, with the same signed amount, is carried by that
/// transaction, and so is the entry's row by one of its business's transactions of the entry
/// at the entry's time; what no transaction carries (a posting to an internal account, an
/// entry written apart from its transactions) goes to `postings` and `journal_entries`.
fn carry(
    entry: NewEntry,
    transactions: &mut Transactions,
    entries: &mut Entries,
    postings: &mut Postings,
) -> Result<(), StoreError> {
    let entry_id = new_id(&entry.id)?;
    let business_id = new_id(&entry.business_id)?;
    for (id, account_id, amount) in entry.postings {
        let account_id = new_id(&account_id)?;
        match transactions.carrier_of_posting(entry_id, account_id, amount) {
            Some(i) => transactions.carries_posting[i] = true,
            None => {
                postings.ids.push(new_id(&id)?);
                postings.entry_ids.push(entry_id);
                postings.account_ids.push(account_id);
                postings.amounts.push(amount);
                postings.ats.push(entry.at);
            }
        }
    }
    match transactions.carrier_of_entry(entry_id, business_id, entry.at) {
        Some(i) => transactions.entry_kinds[i] = Some(entry.kind),
        None => {
            entries.ids.push(entry_id);
            entries.business_ids.push(business_id);
            entries.kinds.push(entry.kind);
            entries.ats.push(entry.at);
        }
    }
    Ok(())
}

/// Writes `audit` into the transfer it is the payout's entry of, when the batch writes one
/// that can carry it ([`Transfers::carrier_of_audit`], migration 0026); otherwise as a row
/// of `audit_logs`.
fn carry_audit(
    audit: NewAudit,
    transfers: &mut Transfers,
    audits: &mut Audits,
) -> Result<(), StoreError> {
    if let Some(i) = transfers.carrier_of_audit(&audit) {
        let entry = audit.entry;
        transfers.audit_user_names[i] = Some(entry.user_name);
        transfers.set_call(i, entry.ip_address, entry.request_id);
        return Ok(());
    }
    let entry = audit.entry;
    audits.ids.push(new_id(&audit.id)?);
    audits.business_ids.push(new_id(&entry.business_id)?);
    audits.actions.push(entry.action);
    audits.user_names.push(entry.user_name);
    audits.user_ids.push(entry.user_id);
    audits.ip_addresses.push(entry.ip_address);
    audits.response_codes.push(entry.response_code);
    audits
        .target_types
        .push(entry.target_type.map(str::to_owned));
    audits.target_ids.push(entry.target_id);
    audits.request_ids.push(entry.request_id);
    audits.ats.push(audit.at);
    Ok(())
}

/// Writes `new` into the transfer its call made, when the batch writes one that can carry it
/// ([`Transfers::carrier_of_activity`], migration 0026); otherwise as a row of
/// `activity_logs`.
fn carry_activity(
    new: NewActivity,
    transfers: &mut Transfers,
    activities: &mut Activities,
) -> Result<(), StoreError> {
    let activity = new.activity;
    if let Some(i) = transfers.carrier_of_activity(&activity, new.at) {
        transfers.activity_endpoints[i] = Some(activity.endpoint.to_owned());
        transfers.activity_messages[i] = Some(activity.message);
        transfers.set_call(i, activity.ip_address, activity.request_id);
        return Ok(());
    }
    let a = activities;
    a.ids.push(new_id(&new.id)?);
    a.business_ids.push(new_id(&activity.business_id)?);
    a.endpoints.push(activity.endpoint.to_owned());
    a.response_codes.push(i64::from(activity.http_status));
    a.statuses
        .push(if activity.success { "success" } else { "error" }.to_owned());
    a.messages.push(activity.message);
    a.ip_addresses.push(activity.ip_address);
    a.request_ids.push(activity.request_id);
    a.ats.push(new.at);
    Ok(())
}
