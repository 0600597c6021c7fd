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

use crate::ledger::{MoneyArgs, MovedRow};
use crate::{id, new_id, new_opt_id, StoreError, Tx};
pub use kobo_store::batch::{
    Answer, Batch, KeyClaim, NewActivity, NewAudit, NewEntry, NewEvent, Write,
};
use kobo_store::ledger::{HeadsAndMoney, InOne, Money};
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

/// A payout whose ledger head is foreseen ([`crate::groups::Member::known_head`]: its last
/// sequence before the payout is `foreseen`): its head, daily total and balances as
/// `ledger::advance_and_move` moves them, and `batch`, written with the places that head gives,
/// in one statement (`src/payout_in_one.sql`) where they take two: an intra-bank payout not
/// held, to its own business's ledger alone (any other batch is refused).
/// [`InOne::HeadElsewhere`] when the head was elsewhere (nothing written, the head locked):
/// the caller then takes the two statements.
/// The caller checks that the head advanced to the places it wrote, and rolls back on any
/// refusal: the batch's rows are written whatever the movement decided, unless `holds_head`
/// (the transaction held the head before the payout: [`crate::groups::Member::holds_head`]).
/// Then the statement's gate first checks, from what it reads, every condition its writes
/// check, and writes nothing ([`InOne::Gated`]) if one fails: a payout that would be refused
/// writes nothing, and needs no savepoint to undo.
pub async fn run_moving(
    tx: &mut Tx,
    batch: Batch,
    businesses: &[(&str, i64)],
    now: DateTime<Utc>,
    money: &Money<'_>,
    foreseen: i64,
    holds_head: bool,
) -> Result<InOne, StoreError> {
    let parts = parts_of(batch)?;
    if !parts.is_a_payouts() || businesses.len() != 1 {
        return Err(StoreError::Misuse(
            "only an intra-bank payout to its own business's ledger is written in one statement"
                .into(),
        ));
    }
    let Some((moved, claimed)) =
        run_payout_in_one(tx, &parts, businesses, now, money, foreseen, holds_head).await?
    else {
        // The statement returns no row when its head was not at `foreseen`, or when its gate
        // refused; a transaction that holds the head finds it where it left it.
        return Ok(if holds_head {
            InOne::Gated
        } else {
            InOne::HeadElsewhere
        });
    };
    parts.check_claimed(claimed)?;
    Ok(InOne::Written(moved))
}

/// The batch's writes, grouped by table, its carried writes folded in.
fn parts_of(batch: Batch) -> Result<Parts, StoreError> {
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
    Ok(Parts {
        entries,
        postings,
        transactions,
        transfers,
        events,
        audits,
        activities,
        answers,
        claims,
    })
}

/// What a batch writes, by table, once its carried writes are folded in.
struct Parts {
    entries: Entries,
    postings: Postings,
    transactions: Transactions,
    transfers: Transfers,
    events: Events,
    audits: Audits,
    activities: Activities,
    answers: Answers,
    claims: Claims,
}

impl Parts {
    /// Whether only a payout's parts have rows ([`run_payout`]): transactions, transfers,
    /// events and keys claimed with their answers.
    fn is_a_payouts(&self) -> bool {
        self.entries.ids.is_empty()
            && self.postings.ids.is_empty()
            && self.audits.ids.is_empty()
            && self.activities.ids.is_empty()
            && self.answers.keys.is_empty()
    }

    /// `claimed` keys of the batch's claims: fewer is [`StoreError::KeyTaken`].
    fn check_claimed(&self, claimed: i64) -> Result<(), StoreError> {
        if claimed < self.claims.keys.len() as i64 {
            return Err(StoreError::KeyTaken);
        }
        Ok(())
    }
}

/// Every part, in one statement (`src/batch.sql`). Returns the keys claimed.
async fn run_all(tx: &mut Tx, parts: &Parts) -> Result<i64, StoreError> {
    let claimed = sqlx::query_file!(
        "src/batch.sql",
        &parts.entries.ids,
        &parts.entries.business_ids,
        &parts.entries.kinds,
        &parts.entries.ats,
        &parts.postings.ids,
        &parts.postings.entry_ids,
        &parts.postings.account_ids,
        &parts.postings.amounts,
        &parts.postings.ats,
        &parts.transactions.ids,
        &parts.transactions.business_ids,
        &parts.transactions.account_ids,
        &parts.transactions.entry_ids,
        &parts.transactions.sequences,
        &parts.transactions.reference_numbers,
        &parts.transactions.transaction_types,
        &parts.transactions.categories,
        &parts.transactions.statuses,
        &parts.transactions.channels,
        &parts.transactions.amounts,
        &parts.transactions.narrations,
        &parts.transactions.narration_keys,
        &parts.transactions.session_ids as &[Option<String>],
        &parts.transactions.originator_account_numbers as &[Option<String>],
        &parts.transactions.originator_account_names as &[Option<String>],
        &parts.transactions.originator_bank_codes as &[Option<String>],
        &parts.transactions.originator_bank_names as &[Option<String>],
        &parts.transactions.created_ats,
        &parts.transactions.settled,
        &parts.transfers.ids,
        &parts.transfers.business_ids,
        &parts.transfers.reference_numbers,
        &parts.transfers.references as &[Option<String>],
        &parts.transfers.source_account_ids,
        &parts.transfers.beneficiary_account_numbers,
        &parts.transfers.beneficiary_account_names,
        &parts.transfers.beneficiary_account_ids as &[Option<uuid::Uuid>],
        &parts.transfers.bank_codes,
        &parts.transfers.bank_names,
        &parts.transfers.transfer_types,
        &parts.transfers.amounts,
        &parts.transfers.fees,
        &parts.transfers.vats,
        &parts.transfers.narrations,
        &parts.transfers.transfer_statuses,
        &parts.transfers.approval_statuses,
        &parts.transfers.debit_transaction_ids,
        &parts.transfers.fee_transaction_ids as &[Option<uuid::Uuid>],
        &parts.transfers.initiated_bys,
        &parts.transfers.initiated_vias,
        &parts.transfers.expires_ats as &[Option<DateTime<Utc>>],
        &parts.transfers.days,
        &parts.transfers.created_ats,
        &parts.transfers.updated_ats,
        &parts.transfers.credential_issued_bys as &[Option<String>],
        &parts.events.ids,
        &parts.events.business_ids,
        &parts.events.kinds,
        &parts.events.payloads,
        &parts.events.ats,
        &parts.audits.ids,
        &parts.audits.business_ids,
        &parts.audits.actions,
        &parts.audits.user_names,
        &parts.audits.user_ids as &[Option<String>],
        &parts.audits.ip_addresses,
        &parts.audits.response_codes,
        &parts.audits.target_types as &[Option<String>],
        &parts.audits.target_ids as &[Option<String>],
        &parts.audits.request_ids,
        &parts.audits.ats,
        &parts.answers.business_ids,
        &parts.answers.operations,
        &parts.answers.keys,
        &parts.answers.data,
        &parts.claims.business_ids,
        &parts.claims.operations,
        &parts.claims.keys,
        &parts.claims.request_hashes,
        &parts.claims.data,
        &parts.claims.ats,
        parts.claims.expired_before,
        &parts.transactions.carries_posting,
        &parts.transactions.entry_kinds as &[Option<String>],
        &parts.activities.ids,
        &parts.activities.business_ids,
        &parts.activities.endpoints,
        &parts.activities.response_codes,
        &parts.activities.statuses,
        &parts.activities.messages,
        &parts.activities.ip_addresses,
        &parts.activities.request_ids,
        &parts.activities.ats,
        &parts.transfers.audit_user_names as &[Option<String>],
        &parts.transfers.call_ip_addresses as &[Option<String>],
        &parts.transfers.call_request_ids as &[Option<String>],
        &parts.transfers.activity_endpoints as &[Option<String>],
        &parts.transfers.activity_messages as &[Option<String>]
    )
    .fetch_one(&mut **tx)
    .await?;
    Ok(claimed.claimed)
}

/// A payout's parts alone ([`Parts::is_a_payouts`]), in one statement
/// (`src/payout_batch.sql`, the same parts as `batch.sql`'s). Returns the keys claimed.
async fn run_payout(tx: &mut Tx, parts: &Parts) -> Result<i64, StoreError> {
    let (transactions, transfers, events, claims) = (
        &parts.transactions,
        &parts.transfers,
        &parts.events,
        &parts.claims,
    );
    let claimed = sqlx::query_file!(
        "src/payout_batch.sql",
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
        &transactions.carries_posting,
        &transactions.entry_kinds as &[Option<String>],
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
        &transfers.audit_user_names as &[Option<String>],
        &transfers.call_ip_addresses as &[Option<String>],
        &transfers.call_request_ids as &[Option<String>],
        &transfers.activity_endpoints as &[Option<String>],
        &transfers.activity_messages as &[Option<String>],
        &events.ids,
        &events.business_ids,
        &events.kinds,
        &events.payloads,
        &events.ats,
        claims.expired_before,
        &claims.business_ids,
        &claims.operations,
        &claims.keys,
        &claims.request_hashes,
        &claims.data,
        &claims.ats
    )
    .fetch_one(&mut **tx)
    .await?;
    Ok(claimed.claimed)
}

/// A payout's movement and its batch's parts in one statement (`src/payout_in_one.sql`):
/// [`run_moving`]. Returns what the movement decided, and the keys claimed; `None` when the head
/// was not where foreseen, or (`holds_head`) the gate found the payout would be refused.
async fn run_payout_in_one(
    tx: &mut Tx,
    parts: &Parts,
    businesses: &[(&str, i64)],
    now: DateTime<Utc>,
    money: &Money<'_>,
    foreseen: i64,
    holds_head: bool,
) -> Result<Option<(HeadsAndMoney, i64)>, StoreError> {
    let (transactions, transfers, events, claims) = (
        &parts.transactions,
        &parts.transfers,
        &parts.events,
        &parts.claims,
    );
    let args = MoneyArgs::of(businesses, money)?;
    let rows = sqlx::query_file!(
        "src/payout_in_one.sql",
        now,
        now.timestamp_micros(),
        &args.ids,
        &args.places,
        id(money.business_id),
        money.places,
        money.daily,
        money.default_daily_limit,
        &args.accounts,
        &args.amounts,
        &args.must_be_active,
        money.max_balance,
        money.business_must_be_active,
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
        &transactions.carries_posting,
        &transactions.entry_kinds as &[Option<String>],
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
        &transfers.audit_user_names as &[Option<String>],
        &transfers.call_ip_addresses as &[Option<String>],
        &transfers.call_request_ids as &[Option<String>],
        &transfers.activity_endpoints as &[Option<String>],
        &transfers.activity_messages as &[Option<String>],
        &events.ids,
        &events.business_ids,
        &events.kinds,
        &events.payloads,
        &events.ats,
        claims.expired_before,
        &claims.business_ids,
        &claims.operations,
        &claims.keys,
        &claims.request_hashes,
        &claims.data,
        &claims.ats,
        foreseen,
        holds_head
    )
    .fetch_all(&mut **tx)
    .await?;
    let Some(claimed) = rows.first().map(|row| row.claimed) else {
        return Ok(None);
    };
    let rows = rows
        .into_iter()
        .map(|row| MovedRow {
            business_id: row.business_id,
            last_sequence: row.last_sequence,
            last_posted_micros: row.last_posted_micros,
            last_posted_at: row.last_posted_at,
            business_active: row.business_active,
            business_daily_limit: row.business_daily_limit,
            counted: row.counted,
            moved: row.moved,
        })
        .collect();
    Ok(Some((MovedRow::read(rows, money), claimed)))
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

kobo_store::batch_functions!(backend crate::Backend);

impl kobo_store::batch::Batches for crate::Backend {
    async fn run(tx: &mut Tx, batch: Batch) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        let parts = parts_of(batch)?;
        let claimed = if parts.is_a_payouts() {
            run_payout(tx, &parts).await?
        } else {
            run_all(tx, &parts).await?
        };
        parts.check_claimed(claimed)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    /// The parts of `batch.sql` a payout reaches ([`super::run_payout`]).
    const PAYOUT_PARTS: [&str; 5] = [
        "new_transactions",
        "transactions",
        "transfers",
        "events",
        "claimed",
    ];

    /// `payout_batch.sql`'s statement is `batch.sql`'s parts that a payout reaches, word for
    /// word (their comments too), and its last `SELECT`, with the parameters numbered again in
    /// order of appearance: a change to one part in one file only fails here.
    #[test]
    fn the_payout_batch_is_the_batch_s_parts() {
        let derived = payout_statement(include_str!("batch.sql"));
        let written = include_str!("payout_batch.sql");
        let (_, written) = written.split_once("\nWITH\n").expect("a WITH");
        assert_eq!(derived, written);
    }

    /// `payout_in_one.sql`'s statement is `advance_and_move.sql`'s parts, then
    /// `payout_batch.sql`'s with their parameters numbered on after the first's 13, then the
    /// first's last `SELECT` with the keys claimed, and the lines marked `as foreseen` (which
    /// make it write nothing unless the head is where the payout foresaw it and, for a
    /// transaction that held it, unless the gate finds nothing would refuse): a change to
    /// either statement that is not made to the fused one fails here.
    #[test]
    fn a_payout_in_one_is_its_two_statements() {
        let (_, moving) = include_str!("advance_and_move.sql")
            .split_once("\nWITH ")
            .expect("a WITH");
        let (moving_parts, moving_select) =
            moving.split_once("\n)\nSELECT ").expect("a last SELECT");
        let (columns, _) = moving_select
            .rsplit_once("\nFROM heads h")
            .expect("FROM heads");
        let (_, batch) = include_str!("payout_batch.sql")
            .split_once("\nWITH\n")
            .expect("a WITH");
        let (batch_parts, _) = batch.rsplit_once("\n)\nSELECT ").expect("a last SELECT");
        let derived = format!(
            "{moving_parts}\n),\n{}\n)\nSELECT {columns},\n  (SELECT count(*) FROM claimed) \
             AS \"claimed!\"\nFROM heads h\n",
            shifted(batch_parts, 13)
        );
        let (_, written) = include_str!("payout_in_one.sql")
            .split_once("\nWITH\n")
            .expect("a WITH");
        let foreseen = written
            .lines()
            .filter(|line| line.ends_with(" -- as foreseen"))
            .count();
        assert_eq!(
            foreseen, 31,
            "the gate's 24 lines and its condition on the head, the head's condition, the \
             place's, each insert's"
        );
        let written: String = written
            .lines()
            .filter(|line| !line.ends_with(" -- as foreseen"))
            .flat_map(|line| [line, "\n"])
            .collect();
        assert_eq!(derived, written);
    }

    /// `text` with each parameter `$N` numbered `$(N + by)`.
    fn shifted(text: &str, by: usize) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..=at]);
            let digits: String = rest[at + 1..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(number) = digits.parse::<usize>() {
                out.push_str(&(number + by).to_string());
            }
            rest = &rest[at + 1 + digits.len()..];
        }
        out.push_str(rest);
        out
    }

    /// The statement of `payout_batch.sql` after its `WITH`, made from `batch.sql`.
    fn payout_statement(batch: &str) -> String {
        let (_, body) = batch.split_once("\nWITH\n").expect("a WITH");
        let mut parts: Vec<Vec<&str>> = Vec::new();
        let mut part = Vec::new();
        let mut last = None;
        for line in body.lines() {
            if part.is_empty() && line.starts_with("SELECT ") {
                last = Some(line);
                break;
            }
            part.push(line);
            if line == ")," || line == ")" {
                parts.push(std::mem::take(&mut part));
            }
        }
        let kept: Vec<Vec<&str>> = parts
            .into_iter()
            .filter(|part| {
                part.iter().any(|line| {
                    PAYOUT_PARTS
                        .iter()
                        .any(|name| line.starts_with(&format!("{name} AS (")))
                })
            })
            .collect();
        assert_eq!(kept.len(), PAYOUT_PARTS.len(), "a part is missing");
        let mut text = String::new();
        for (i, part) in kept.iter().enumerate() {
            let (close, lines) = part.split_last().expect("a part's lines");
            assert!(close.starts_with(')'));
            for line in lines {
                text.push_str(line);
                text.push('\n');
            }
            text.push_str(if i + 1 < kept.len() { "),\n" } else { ")\n" });
        }
        text.push_str(last.expect("the last SELECT"));
        text.push('\n');
        renumbered(&text)
    }

    /// `text` with its parameters `$N` numbered from 1 in order of first appearance.
    fn renumbered(text: &str) -> String {
        let mut numbers: HashMap<String, usize> = HashMap::new();
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let digits: String = rest[at + 1..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if digits.is_empty() {
                out.push('$');
            } else {
                let next = numbers.len() + 1;
                let number = *numbers.entry(digits.clone()).or_insert(next);
                out.push_str(&format!("${number}"));
            }
            rest = &rest[at + 1 + digits.len()..];
        }
        out.push_str(rest);
        out
    }
}
