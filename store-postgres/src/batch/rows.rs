//! A batch's writes as the rows of each table ([`Parts`]), each table's sent as one JSON array
//! of objects that its part of the statement reads with `json_to_recordset`, its carried
//! writes folded in (migrations 0025 and 0026).

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::{new_id, new_opt_id, StoreError};
use kobo_store::batch::{later_on_account, Answer, Batch, NewActivity, NewAudit, NewEntry, Write};
use kobo_store::logs::Activity;
use kobo_store::transactions::NewTransaction;
use kobo_store::transfers::NewTransfer;

/// What a batch writes, by table, once its carried writes are folded in.
#[derive(Default)]
pub(super) struct Parts {
    pub(super) entries: Vec<EntryRow>,
    pub(super) postings: Vec<PostingRow>,
    pub(super) transactions: Vec<TransactionRow>,
    pub(super) transfers: Vec<TransferRow>,
    pub(super) events: Vec<EventRow>,
    pub(super) audits: Vec<AuditRow>,
    pub(super) activities: Vec<ActivityRow>,
    pub(super) answers: Vec<AnswerRow>,
    pub(super) claims: Vec<ClaimRow>,
    /// The earliest of the claims' cutoffs: a key stored before it has expired for all.
    pub(super) expired_before: Option<DateTime<Utc>>,
}

#[derive(Serialize)]
pub(super) struct EntryRow {
    id: Uuid,
    business_id: Uuid,
    kind: String,
    #[serde(serialize_with = "micros")]
    created_at: DateTime<Utc>,
}

#[derive(Serialize)]
pub(super) struct PostingRow {
    id: Uuid,
    entry_id: Uuid,
    account_id: Uuid,
    amount: i64,
    #[serde(serialize_with = "micros")]
    created_at: DateTime<Utc>,
}

#[derive(Serialize)]
pub(super) struct TransactionRow {
    id: Uuid,
    business_id: Uuid,
    account_id: Uuid,
    entry_id: Uuid,
    sequence: i64,
    reference_number: String,
    transaction_type: String,
    category: String,
    status: String,
    channel: String,
    amount: i64,
    narration: String,
    narration_key: String,
    session_id: Option<String>,
    originator_account_number: Option<String>,
    originator_account_name: Option<String>,
    originator_bank_code: Option<String>,
    originator_bank_name: Option<String>,
    #[serde(serialize_with = "micros")]
    created_at: DateTime<Utc>,
    settled: bool,
    /// It carries its entry's posting to its account ([`Parts::carry`]).
    carries_posting: bool,
    /// It carries its entry's row: the entry's kind ([`Parts::carry`]).
    entry_kind: Option<String>,
    /// What the batch's later transactions on its account move it by: its `balance_after` is
    /// its account's balance after the movement less this ([`later_on_account`]).
    later: i64,
}

#[derive(Serialize)]
pub(super) struct TransferRow {
    id: Uuid,
    business_id: Uuid,
    reference_number: String,
    reference: Option<String>,
    source_account_id: Uuid,
    beneficiary_account_number: String,
    beneficiary_account_name: String,
    beneficiary_account_id: Option<Uuid>,
    bank_code: String,
    bank_name: String,
    transfer_type: String,
    amount: i64,
    fee: i64,
    vat: i64,
    narration: String,
    transfer_status: String,
    approval_status: String,
    debit_transaction_id: Option<Uuid>,
    fee_transaction_id: Option<Uuid>,
    initiated_by: String,
    initiated_via: String,
    #[serde(serialize_with = "opt_micros")]
    expires_at: Option<DateTime<Utc>>,
    day: String,
    #[serde(serialize_with = "micros")]
    created_at: DateTime<Utc>,
    #[serde(serialize_with = "micros")]
    updated_at: DateTime<Utc>,
    credential_issued_by: Option<String>,
    /// The audit entry it carries ([`Parts::carry_audit`], migration 0026): its user's name.
    audit_user_name: Option<String>,
    /// The call of the entries it carries: its address and request id.
    call_ip_address: Option<String>,
    call_request_id: Option<String>,
    /// The activity entry it carries ([`Parts::carry_activity`]): its endpoint and message.
    activity_endpoint: Option<String>,
    activity_message: Option<String>,
}

#[derive(Serialize)]
pub(super) struct EventRow {
    id: Uuid,
    business_id: Uuid,
    kind: String,
    payload: String,
    #[serde(serialize_with = "micros")]
    at: DateTime<Utc>,
}

#[derive(Serialize)]
pub(super) struct AuditRow {
    id: Uuid,
    business_id: Uuid,
    action: String,
    user_name: String,
    user_id: Option<String>,
    ip_address: String,
    response_code: i64,
    target_type: Option<String>,
    target_id: Option<String>,
    request_id: String,
    #[serde(serialize_with = "micros")]
    at: DateTime<Utc>,
}

#[derive(Serialize)]
pub(super) struct ActivityRow {
    id: Uuid,
    business_id: Uuid,
    endpoint: String,
    response_code: i64,
    status: String,
    message: String,
    ip_address: String,
    request_id: String,
    #[serde(serialize_with = "micros")]
    created_at: DateTime<Utc>,
}

#[derive(Serialize)]
pub(super) struct AnswerRow {
    business_id: Uuid,
    operation: String,
    key: String,
    data: String,
}

/// A key the batch claims with its answer.
#[derive(Serialize)]
pub(super) struct ClaimRow {
    business_id: Uuid,
    operation: String,
    idempotency_key: String,
    request_hash: String,
    response_data: String,
    #[serde(serialize_with = "micros")]
    created_at: DateTime<Utc>,
}

/// A time as its column keeps it, to the microsecond (truncated, as the driver's binary
/// encoding truncates), in the text `timestamptz` reads.
fn micros<S: serde::Serializer>(at: &DateTime<Utc>, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(&at.format("%Y-%m-%dT%H:%M:%S%.6fZ"))
}

/// [`micros`] of an optional time.
fn opt_micros<S: serde::Serializer>(
    at: &Option<DateTime<Utc>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match at {
        Some(at) => micros(at, serializer),
        None => serializer.serialize_none(),
    }
}

/// `rows` as the JSON text a part of the statement reads.
pub(super) fn json<T: Serialize>(rows: &[T]) -> Result<String, StoreError> {
    serde_json::to_string(rows)
        .map_err(|error| StoreError::Misuse(format!("a batch's rows as JSON: {error}")))
}

impl Parts {
    /// The batch's writes, grouped by table, its carried writes folded in.
    pub(super) fn of(batch: Batch) -> Result<Parts, StoreError> {
        let mut parts = Parts::default();
        let (mut entries, mut audits, mut activities) = (Vec::new(), Vec::new(), Vec::new());
        let writes = batch.into_writes();
        let later = later_on_account(&writes);
        for (write, later) in writes.into_iter().zip(later) {
            match write {
                Write::Entry(entry) => entries.push(entry),
                Write::Transaction(new) => {
                    parts.transactions.push(TransactionRow::of(*new, later)?)
                }
                Write::Transfer(new) => parts.transfers.push(TransferRow::of(*new)?),
                Write::Event(event) => parts.events.push(EventRow {
                    id: new_id(&event.id)?,
                    business_id: new_id(&event.business_id)?,
                    kind: event.kind,
                    payload: event.payload,
                    at: event.at,
                }),
                Write::Audit(audit) => audits.push(audit),
                Write::Activity(new) => activities.push(new),
                Write::Answer(answer) => parts.answer(answer)?,
            }
        }
        for entry in entries {
            parts.carry(entry)?;
        }
        for audit in audits {
            parts.carry_audit(audit)?;
        }
        for activity in activities {
            parts.carry_activity(activity)?;
        }
        Ok(parts)
    }

    /// Whether only a payout's parts have rows (`payout_batch.sql`): transactions, transfers,
    /// events and keys claimed with their answers.
    pub(super) fn is_a_payouts(&self) -> bool {
        self.entries.is_empty()
            && self.postings.is_empty()
            && self.audits.is_empty()
            && self.activities.is_empty()
            && self.answers.is_empty()
    }

    /// Whether every transaction is on an account of `changes`.
    pub(super) fn transactions_move_only(
        &self,
        changes: &[kobo_store::accounts::BalanceChange<'_>],
    ) -> bool {
        self.transactions.iter().all(|transaction| {
            changes
                .iter()
                .any(|change| new_id(change.account_id).ok() == Some(transaction.account_id))
        })
    }

    /// `claimed` keys of the batch's claims: fewer is [`StoreError::KeyTaken`].
    pub(super) fn check_claimed(&self, claimed: i64) -> Result<(), StoreError> {
        if claimed < self.claims.len() as i64 {
            return Err(StoreError::KeyTaken);
        }
        Ok(())
    }

    /// An answer: set on a key claimed before, or a key claimed with it.
    fn answer(&mut self, answer: Answer) -> Result<(), StoreError> {
        let business_id = new_id(&answer.business_id)?;
        let Some(claim) = answer.claim else {
            self.answers.push(AnswerRow {
                business_id,
                operation: answer.operation,
                key: answer.key,
                data: answer.data,
            });
            return Ok(());
        };
        self.claims.push(ClaimRow {
            business_id,
            operation: answer.operation,
            idempotency_key: answer.key,
            request_hash: claim.request_hash,
            response_data: answer.data,
            created_at: claim.at,
        });
        self.expired_before = Some(match self.expired_before {
            Some(cutoff) => cutoff.min(claim.expired_before),
            None => claim.expired_before,
        });
        Ok(())
    }

    /// Writes `entry` as few rows as it can (migration 0025): each posting to an account whose
    /// transaction of the entry the batch writes, with the same signed amount, is carried by
    /// that transaction, and so is the entry's row by one of its business's transactions of
    /// the entry at the entry's time; what no transaction carries (a posting to an internal
    /// account, an entry written apart from its transactions) goes to `postings` and
    /// `journal_entries`.
    fn carry(&mut self, entry: NewEntry) -> Result<(), StoreError> {
        let entry_id = new_id(&entry.id)?;
        let business_id = new_id(&entry.business_id)?;
        for (id, account_id, amount) in entry.postings {
            let account_id = new_id(&account_id)?;
            match self.carrier_of_posting(entry_id, account_id, amount) {
                Some(carrier) => carrier.carries_posting = true,
                None => self.postings.push(PostingRow {
                    id: new_id(&id)?,
                    entry_id,
                    account_id,
                    amount,
                    created_at: entry.at,
                }),
            }
        }
        let carrier = self.transactions.iter_mut().find(|t| {
            t.entry_kind.is_none()
                && t.entry_id == entry_id
                && t.business_id == business_id
                && t.created_at == entry.at
        });
        match carrier {
            Some(carrier) => carrier.entry_kind = Some(entry.kind),
            None => self.entries.push(EntryRow {
                id: entry_id,
                business_id,
                kind: entry.kind,
                created_at: entry.at,
            }),
        }
        Ok(())
    }

    /// The transaction of the batch that can carry a posting of `amount` (signed, credit
    /// positive) to `account_id` in `entry_id`, and carries none yet. Its time may be a later
    /// place's than the entry's (a fee's, a recipient's in its own ledger): the posting then
    /// reads as of its transaction's time, which nothing compares.
    fn carrier_of_posting(
        &mut self,
        entry_id: Uuid,
        account_id: Uuid,
        amount: i64,
    ) -> Option<&mut TransactionRow> {
        self.transactions.iter_mut().find(|t| {
            let signed = if t.transaction_type == "credit" {
                t.amount
            } else {
                -t.amount
            };
            !t.carries_posting
                && t.entry_id == entry_id
                && t.account_id == account_id
                && signed == amount
        })
    }

    /// Writes `audit` into the transfer it is the payout's entry of, when the batch writes one
    /// that can carry it ([`TransferRow::carries_audit`], migration 0026); otherwise as a row
    /// of `audit_logs`.
    fn carry_audit(&mut self, audit: NewAudit) -> Result<(), StoreError> {
        let entry = audit.entry;
        let carrier = self
            .transfers
            .iter_mut()
            .find(|transfer| transfer.carries_audit(&entry, audit.at));
        if let Some(transfer) = carrier {
            transfer.audit_user_name = Some(entry.user_name);
            transfer.set_call(entry.ip_address, entry.request_id);
            return Ok(());
        }
        self.audits.push(AuditRow {
            id: new_id(&audit.id)?,
            business_id: new_id(&entry.business_id)?,
            action: entry.action,
            user_name: entry.user_name,
            user_id: entry.user_id,
            ip_address: entry.ip_address,
            response_code: entry.response_code,
            target_type: entry.target_type.map(str::to_owned),
            target_id: entry.target_id,
            request_id: entry.request_id,
            at: audit.at,
        });
        Ok(())
    }

    /// Writes `new` into the transfer its call made, when the batch writes one that can carry
    /// it ([`TransferRow::carries_activity`], migration 0026); otherwise as a row of
    /// `activity_logs`.
    fn carry_activity(&mut self, new: NewActivity) -> Result<(), StoreError> {
        let activity = new.activity;
        let carrier = self
            .transfers
            .iter_mut()
            .find(|transfer| transfer.carries_activity(&activity, new.at));
        if let Some(transfer) = carrier {
            transfer.activity_endpoint = Some(activity.endpoint.to_owned());
            transfer.activity_message = Some(activity.message);
            transfer.set_call(activity.ip_address, activity.request_id);
            return Ok(());
        }
        self.activities.push(ActivityRow {
            id: new_id(&new.id)?,
            business_id: new_id(&activity.business_id)?,
            endpoint: activity.endpoint.to_owned(),
            response_code: i64::from(activity.http_status),
            status: if activity.success { "success" } else { "error" }.to_owned(),
            message: activity.message,
            ip_address: activity.ip_address,
            request_id: activity.request_id,
            created_at: new.at,
        });
        Ok(())
    }
}

impl TransactionRow {
    fn of(new: NewTransaction, later: i64) -> Result<TransactionRow, StoreError> {
        let originator = new.originator;
        let of_originator = |field: fn(&kobo_store::transactions::Originator) -> &String| {
            originator.as_ref().map(|o| field(o).clone())
        };
        Ok(TransactionRow {
            id: new.id,
            business_id: new_id(&new.business_id)?,
            account_id: new_id(&new.account_id)?,
            entry_id: new_id(&new.entry_id)?,
            sequence: new.sequence,
            narration_key: format!("{} {}", new.narration, new.reference_number).to_lowercase(),
            reference_number: new.reference_number,
            transaction_type: new.transaction_type,
            category: new.category,
            status: new.status,
            channel: new.channel,
            amount: new.amount,
            narration: new.narration,
            session_id: new.session_id,
            originator_account_number: of_originator(|o| &o.account_number),
            originator_account_name: of_originator(|o| &o.account_name),
            originator_bank_code: of_originator(|o| &o.bank_code),
            originator_bank_name: of_originator(|o| &o.bank_name),
            created_at: new.created_at,
            settled: new.settled,
            carries_posting: false,
            entry_kind: None,
            later,
        })
    }
}

impl TransferRow {
    fn of(new: NewTransfer) -> Result<TransferRow, StoreError> {
        let row = new.row;
        Ok(TransferRow {
            id: new_id(&row.id)?,
            business_id: new_id(&new.business_id)?,
            reference_number: row.reference_number,
            reference: row.reference,
            source_account_id: new_id(&new.source_account_id)?,
            beneficiary_account_number: row.beneficiary_account_number,
            beneficiary_account_name: row.beneficiary_account_name,
            beneficiary_account_id: new_opt_id(new.beneficiary_account_id.as_deref())?,
            bank_code: row.bank_code,
            bank_name: row.bank_name,
            transfer_type: row.transfer_type,
            amount: row.amount,
            fee: row.fee,
            vat: row.vat,
            narration: row.narration,
            transfer_status: row.transfer_status,
            approval_status: row.approval_status,
            debit_transaction_id: new_opt_id(new.debit_transaction_id.as_deref())?,
            fee_transaction_id: new_opt_id(new.fee_transaction_id.as_deref())?,
            initiated_by: row.initiated_by,
            initiated_via: row.initiated_via,
            expires_at: row.expires_at,
            day: new.day,
            created_at: row.created_at,
            updated_at: row.updated_at,
            credential_issued_by: new.credential_issued_by,
            audit_user_name: None,
            call_ip_address: None,
            call_request_id: None,
            activity_endpoint: None,
            activity_message: None,
        })
    }

    /// Whether the transfer can carry audit entry `entry` (at `at`): the payout's own entry
    /// (`funds_transfer`, a success, naming the transfer as its target, at its creation, by
    /// its maker: the member who made it, or no member for an integration), and it carries
    /// none yet.
    fn carries_audit(&self, entry: &kobo_store::logs::NewAuditEntry, at: DateTime<Utc>) -> bool {
        if entry.action != "funds_transfer"
            || entry.response_code != 200
            || entry.target_type != Some("transfer")
        {
            return false;
        }
        let target = entry.target_id.as_deref().map(Uuid::parse_str);
        let business_id = Uuid::parse_str(&entry.business_id);
        let maker = (self.initiated_via == "dashboard").then_some(&self.initiated_by);
        matches!(target, Some(Ok(target)) if target == self.id)
            && business_id.is_ok_and(|business_id| business_id == self.business_id)
            && self.created_at == at
            && maker == entry.user_id.as_ref()
            && self.audit_user_name.is_none()
            && self.call_is(&entry.ip_address, &entry.request_id)
    }

    /// Whether the transfer can carry its call's activity entry `activity` (at `at`): a
    /// success of its business at its creation, and it carries none yet.
    fn carries_activity(&self, activity: &Activity, at: DateTime<Utc>) -> bool {
        activity.success
            && activity.http_status == 200
            && Uuid::parse_str(&activity.business_id)
                .is_ok_and(|business_id| business_id == self.business_id)
            && self.created_at == at
            && self.activity_endpoint.is_none()
            && self.call_is(&activity.ip_address, &activity.request_id)
    }

    /// Whether the transfer carries no call yet, or this one.
    fn call_is(&self, ip_address: &str, request_id: &str) -> bool {
        match (&self.call_ip_address, &self.call_request_id) {
            (Some(ip), Some(request)) => ip == ip_address && request == request_id,
            _ => true,
        }
    }

    fn set_call(&mut self, ip_address: String, request_id: String) {
        self.call_ip_address = Some(ip_address);
        self.call_request_id = Some(request_id);
    }
}
