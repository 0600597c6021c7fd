//! Bulk loading for `kobo bench` (sandbox stores only): an account's history written as
//! arrays, one statement for every table, and the few reads the benchmark tools make.

use chrono::{DateTime, Utc};

pub use kobo_store::seeding::SeededCredit;

use crate::Pool;
use crate::{id, new_id, StoreError, Tx};

/// The rows of a batch of seeded credits, column by column, as [`SeedRows::insert`] sends
/// them: one array per column.
#[derive(Default)]
pub struct SeedRows {
    /// One per credit: its entry, transaction and settlement share these.
    entry_ids: Vec<uuid::Uuid>,
    ids: Vec<uuid::Uuid>,
    business_ids: Vec<uuid::Uuid>,
    account_ids: Vec<uuid::Uuid>,
    sequences: Vec<i64>,
    references: Vec<String>,
    amounts: Vec<i64>,
    balances_after: Vec<i64>,
    narrations: Vec<String>,
    narration_keys: Vec<String>,
    times: Vec<DateTime<Utc>>,
    /// Two per credit: out of NIP settlement, into the account.
    posting_ids: Vec<uuid::Uuid>,
    posting_entries: Vec<uuid::Uuid>,
    posting_accounts: Vec<uuid::Uuid>,
    posting_amounts: Vec<i64>,
    posting_times: Vec<DateTime<Utc>>,
    /// The first id that was not a UUID, reported by [`SeedRows::insert`].
    error: Option<String>,
}

impl SeedRows {
    pub fn with_capacity(batch: usize) -> SeedRows {
        SeedRows {
            entry_ids: Vec::with_capacity(batch),
            ids: Vec::with_capacity(batch),
            business_ids: Vec::with_capacity(batch),
            account_ids: Vec::with_capacity(batch),
            sequences: Vec::with_capacity(batch),
            references: Vec::with_capacity(batch),
            amounts: Vec::with_capacity(batch),
            balances_after: Vec::with_capacity(batch),
            narrations: Vec::with_capacity(batch),
            narration_keys: Vec::with_capacity(batch),
            times: Vec::with_capacity(batch),
            posting_ids: Vec::with_capacity(2 * batch),
            posting_entries: Vec::with_capacity(2 * batch),
            posting_accounts: Vec::with_capacity(2 * batch),
            posting_amounts: Vec::with_capacity(2 * batch),
            posting_times: Vec::with_capacity(2 * batch),
            error: None,
        }
    }

    /// The rows of `credit`: its journal entry, two postings (out of NIP settlement, into the
    /// account), the transaction and the settlement.
    pub fn push(&mut self, credit: &SeededCredit<'_>) {
        let mut uuid = |text: &str| match new_id(text) {
            Ok(id) => id,
            Err(error) => {
                self.error.get_or_insert(error.to_string());
                uuid::Uuid::nil()
            }
        };
        let entry_id = uuid(&credit.entry_id);
        let id = uuid(&credit.id);
        let business_id = uuid(credit.business_id);
        let account_id = uuid(credit.account_id);
        let settlement_account_id = uuid(credit.settlement_account_id);
        let first_posting = uuid(&credit.posting_ids[0]);
        let second_posting = uuid(&credit.posting_ids[1]);
        self.entry_ids.push(entry_id);
        self.ids.push(id);
        self.business_ids.push(business_id);
        self.account_ids.push(account_id);
        self.sequences.push(credit.sequence);
        self.references.push(credit.reference.clone());
        self.amounts.push(credit.amount);
        self.balances_after.push(credit.balance_after);
        self.narrations.push(credit.narration.clone());
        self.narration_keys
            .push(format!("{} {}", credit.narration, credit.reference).to_lowercase());
        self.times.push(credit.at);
        let sides = [
            (first_posting, settlement_account_id, -credit.amount),
            (second_posting, account_id, credit.amount),
        ];
        for (posting, account, signed) in sides {
            self.posting_ids.push(posting);
            self.posting_entries.push(entry_id);
            self.posting_accounts.push(account);
            self.posting_amounts.push(signed);
            self.posting_times.push(credit.at);
        }
    }

    /// Inserts every row in `tx`, in one statement: each table from a data-modifying `WITH`
    /// over arrays (foreign keys are checked at the statement's end, when every table has its
    /// rows).
    pub async fn insert(&self, tx: &mut Tx) -> Result<(), StoreError> {
        if let Some(error) = &self.error {
            return Err(StoreError::Unreadable(error.clone()));
        }
        if self.ids.is_empty() {
            return Ok(());
        }
        sqlx::query!(
            "WITH credits AS ( \
               SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], \
                 $5::bigint[], $6::text[], $7::bigint[], $8::text[], $9::text[], \
                 $10::timestamptz[], $16::bigint[]) \
                 AS c (entry_id, id, business_id, account_id, sequence, reference, amount, \
                   narration, narration_key, at, balance_after)), \
             entries AS ( \
               INSERT INTO journal_entries (id, business_id, kind, created_at) \
               SELECT entry_id, business_id, 'inbound_credit', at FROM credits), \
             postings AS ( \
               INSERT INTO postings (id, entry_id, account_id, amount, created_at) \
               SELECT * FROM unnest($11::uuid[], $12::uuid[], $13::uuid[], $14::bigint[], \
                 $15::timestamptz[])) \
             INSERT INTO transactions (id, business_id, account_id, entry_id, sequence, \
               reference_number, transaction_type, category, status, channel, amount, \
               narration_key, narration, session_id, originator_account_number, \
               originator_account_name, originator_bank_code, originator_bank_name, \
               created_at, settled, balance_after) \
             SELECT id, business_id, account_id, entry_id, sequence, reference, 'credit', \
               'collection', 'success', 'nip', amount, narration_key, narration, NULL, \
               '0123456789', 'Seed Originator', '000013', 'GTBank', at, true, balance_after \
             FROM credits",
            &self.entry_ids,
            &self.ids,
            &self.business_ids,
            &self.account_ids,
            &self.sequences,
            &self.references,
            &self.amounts,
            &self.narrations,
            &self.narration_keys,
            &self.times,
            &self.posting_ids,
            &self.posting_entries,
            &self.posting_accounts,
            &self.posting_amounts,
            &self.posting_times,
            &self.balances_after
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }
}

kobo_store::seeding_functions!(backend crate::Backend);

impl kobo_store::seeding::Seeding for crate::Backend {
    async fn analyze_transactions(pool: &Pool) -> Result<(), StoreError> {
        pool.run(async |pool| {
            sqlx::query!("ANALYZE transactions")
                .execute(&mut *pool)
                .await?;
            Ok(())
        })
        .await
    }

    async fn any_posting_to(pool: &Pool, account_ids: [&str; 4]) -> Result<bool, StoreError> {
        pool.run(async |pool| {
            let ids: Vec<uuid::Uuid> = account_ids.iter().map(|account| id(account)).collect();
            let found = sqlx::query_scalar!(
                "SELECT 1 FROM postings WHERE account_id = ANY($1) \
             AND account_id < '00000000-0000-4000-8000-000000000100' LIMIT 1",
                &ids
            )
            .fetch_optional(&mut *pool)
            .await?;
            Ok(found.is_some())
        })
        .await
    }

    async fn business_of_account(pool: &Pool, number: &str) -> Result<Option<String>, StoreError> {
        pool.run(async |pool| {
            let found = sqlx::query_scalar!(
                "SELECT business_id FROM accounts WHERE account_number = $1",
                number
            )
            .fetch_optional(&mut *pool)
            .await?;
            Ok(found.map(|business_id| business_id.to_string()))
        })
        .await
    }

    async fn active_accounts_by_balance(
        pool: &Pool,
        business_id: &str,
    ) -> Result<Vec<String>, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_scalar!(
                "SELECT account_number FROM accounts WHERE business_id = $1 AND status = 'active' \
         ORDER BY balance DESC, account_number",
                id(business_id)
            )
            .fetch_all(&mut *pool)
            .await?)
        })
        .await
    }

    async fn add_to_balance(
        tx: &mut Tx,
        account_id: &str,
        total: i64,
        last_at: DateTime<Utc>,
        max_balance: i64,
    ) -> Result<Option<i64>, StoreError> {
        Ok(sqlx::query_scalar!(
            "UPDATE accounts SET balance = balance + $2, last_balance_update = $3, \
               updated_at = $3 \
             WHERE id = $1 AND balance + $2 <= $4 RETURNING balance",
            id(account_id),
            total,
            last_at,
            max_balance
        )
        .fetch_optional(&mut **tx)
        .await?)
    }
}
