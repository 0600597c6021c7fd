//! The reads of `kobo ledger verify`: the ledger's tables checked against each other. Each
//! function returns what does not add up (or the figures the domain compares), read on the
//! pool outside any transaction.

use crate::{sums, Store, StoreError};
pub use kobo_store::audit::{AccountBalance, ClosingAstray, Counted, DayAstray, RunningAstray};

kobo_store::audit_functions!(backend crate::Backend);

impl kobo_store::audit::Audit for crate::Backend {
    async fn count(store: &Store, table: Counted) -> Result<i64, StoreError> {
        let pool = store.pool();
        Ok(match table {
            Counted::Accounts => {
                sqlx::query_scalar!(r#"SELECT COUNT(*) AS "count!: i64" FROM accounts"#)
                    .fetch_one(pool)
                    .await?
            }
            Counted::JournalEntries => {
                sqlx::query_scalar!(r#"SELECT COUNT(*) AS "count!: i64" FROM journal_entries"#)
                    .fetch_one(pool)
                    .await?
            }
            Counted::Postings => {
                sqlx::query_scalar!(r#"SELECT COUNT(*) AS "count!: i64" FROM postings"#)
                    .fetch_one(pool)
                    .await?
            }
            Counted::Transactions => {
                sqlx::query_scalar!(r#"SELECT COUNT(*) AS "count!: i64" FROM transactions"#)
                    .fetch_one(pool)
                    .await?
            }
        })
    }

    async fn account_balances(store: &Store) -> Result<Vec<AccountBalance>, StoreError> {
        let rows = sqlx::query!(
            r#"SELECT a.id AS "id!", a.account_number AS "account_number!", a.balance AS "balance!",
             CAST(COALESCE(SUM(p.amount / 1000000000), 0) AS BIGINT) AS "posted_high!: i64",
             CAST(COALESCE(SUM(p.amount % 1000000000), 0) AS BIGINT) AS "posted_low!: i64"
           FROM accounts a LEFT JOIN postings p ON p.account_id = a.id
           GROUP BY a.id, a.account_number, a.balance"#
        )
        .fetch_all(store.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| AccountBalance {
                account_number: row.account_number,
                balance: row.balance,
                posted: sums::join(row.posted_high, row.posted_low),
            })
            .collect())
    }

    async fn short_entries(store: &Store) -> Result<Vec<(String, i64)>, StoreError> {
        let rows = sqlx::query!(
            r#"SELECT e.id AS "id!", COUNT(p.id) AS "postings!: i64" FROM journal_entries e
           LEFT JOIN postings p ON p.entry_id = e.id GROUP BY e.id HAVING COUNT(p.id) < 2"#
        )
        .fetch_all(store.pool())
        .await?;
        Ok(rows.into_iter().map(|row| (row.id, row.postings)).collect())
    }

    async fn repeated_sequences(store: &Store) -> Result<Vec<(String, i64, i64)>, StoreError> {
        let rows = sqlx::query!(
            r#"SELECT business_id AS "business_id!", sequence AS "sequence!: i64",
             COUNT(*) AS "transactions!: i64"
           FROM transactions GROUP BY business_id, sequence HAVING COUNT(*) > 1"#
        )
        .fetch_all(store.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| (row.business_id, row.sequence, row.transactions))
            .collect())
    }

    async fn rows_without_parent(store: &Store) -> Result<Vec<(String, String)>, StoreError> {
        let rows = sqlx::query!(
            r#"SELECT 'posting of no journal entry' AS "what!", p.id AS "row!" FROM postings p
           WHERE NOT EXISTS (SELECT 1 FROM journal_entries e WHERE e.id = p.entry_id)
         UNION ALL SELECT 'journal entry of no business', e.id FROM journal_entries e
           WHERE NOT EXISTS (SELECT 1 FROM businesses b WHERE b.id = e.business_id)
         UNION ALL SELECT 'transaction of no journal entry', t.reference_number FROM transactions t
           WHERE NOT EXISTS (SELECT 1 FROM journal_entries e WHERE e.id = t.entry_id)
         UNION ALL SELECT 'transaction of no account of its business', t.reference_number
           FROM transactions t WHERE NOT EXISTS (SELECT 1 FROM accounts a
             WHERE a.id = t.account_id AND a.business_id = t.business_id)
         UNION ALL SELECT 'settlement of no transaction', s.reference FROM settlements s
           WHERE NOT EXISTS (SELECT 1 FROM transactions t WHERE t.id = s.id
             AND t.account_id = s.account_id AND t.business_id = s.business_id)
         UNION ALL SELECT 'transfer of no transaction', r.reference_number FROM transfers r
           WHERE (r.debit_transaction_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM transactions t
                   WHERE t.id = r.debit_transaction_id))
              OR (r.fee_transaction_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM transactions t
                   WHERE t.id = r.fee_transaction_id))
         UNION ALL SELECT 'transfer of no account of its business', r.reference_number
           FROM transfers r WHERE NOT EXISTS (SELECT 1 FROM accounts a
             WHERE a.id = r.source_account_id AND a.business_id = r.business_id)
              OR (r.beneficiary_account_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM accounts a
                   WHERE a.id = r.beneficiary_account_id))"#
        )
        .fetch_all(store.pool())
        .await?;
        Ok(rows.into_iter().map(|row| (row.what, row.row)).collect())
    }

    async fn unbalanced_entries(store: &Store) -> Result<Vec<(String, i64)>, StoreError> {
        let rows = sqlx::query!(
            r#"SELECT entry_id AS "entry_id!", CAST(SUM(amount) AS BIGINT) AS "total!: i64"
           FROM postings GROUP BY entry_id HAVING SUM(amount) <> 0"#
        )
        .fetch_all(store.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| (row.entry_id, row.total))
            .collect())
    }

    async fn postings_total(store: &Store) -> Result<i128, StoreError> {
        let row = sqlx::query!(
            r#"SELECT CAST(COALESCE(SUM(amount / 1000000000), 0) AS BIGINT) AS "high!: i64",
             CAST(COALESCE(SUM(amount % 1000000000), 0) AS BIGINT) AS "low!: i64"
           FROM postings"#
        )
        .fetch_one(store.pool())
        .await?;
        Ok(sums::join(row.high, row.low))
    }

    async fn postings_to_unknown_accounts(
        store: &Store,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let rows = sqlx::query!(
            r#"SELECT p.id AS "id!", p.account_id FROM postings p
           WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = p.account_id)
             AND NOT EXISTS (SELECT 1 FROM internal_accounts i WHERE i.id = p.account_id)"#
        )
        .fetch_all(store.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| (row.id, row.account_id))
            .collect())
    }

    /// The reference numbers of transactions (not `failed`) whose entry has no posting of their
    /// amount on their account. Each transaction finds its posting through
    /// `postings_entry_account` (migration 0009; a test checks the plan).
    async fn transactions_without_posting(store: &Store) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar!(
            "SELECT t.reference_number FROM transactions t WHERE t.status <> 'failed' \
           AND NOT EXISTS (SELECT 1 FROM postings p WHERE p.entry_id = t.entry_id \
             AND p.account_id = t.account_id \
             AND p.amount = CASE WHEN t.transaction_type = 'credit' THEN t.amount \
                                 ELSE -t.amount END) \
           AND NOT (t.category = 'reversal' AND t.transaction_type = 'credit' \
             AND (SELECT sum(p.amount) FROM postings p WHERE p.entry_id = t.entry_id \
                  AND p.account_id = t.account_id) = t.amount)"
        )
        .fetch_all(store.pool())
        .await?)
    }

    async fn daily_totals_astray(store: &Store) -> Result<Vec<DayAstray>, StoreError> {
        Ok(sqlx::query_as!(
            DayAstray,
            r#"SELECT k.business_id AS "business_id!", k.day AS "day!",
             CAST(COALESCE(d.amount, 0) AS BIGINT) AS "kept!: i64",
             CAST(COALESCE(s.spent, 0) AS BIGINT) AS "spent!: i64"
           FROM (SELECT business_id, day FROM daily_transfer_totals
                 UNION SELECT business_id, day FROM transfers) k
           LEFT JOIN daily_transfer_totals d ON d.business_id = k.business_id AND d.day = k.day
           LEFT JOIN (SELECT business_id, day, SUM(amount) AS spent FROM transfers
                      WHERE transfer_status IN ('processing', 'success')
                      GROUP BY business_id, day) s
             ON s.business_id = k.business_id AND s.day = k.day
           WHERE COALESCE(d.amount, 0) <> COALESCE(s.spent, 0)"#
        )
        .fetch_all(store.pool())
        .await?)
    }

    async fn running_balances_astray(store: &Store) -> Result<Vec<RunningAstray>, StoreError> {
        Ok(sqlx::query_as!(
            RunningAstray,
            r#"SELECT reference_number AS "reference_number!", balance_after AS stored,
                 summed AS "summed!: i64"
               FROM (SELECT reference_number, balance_after,
                       sum(CASE transaction_type WHEN 'credit' THEN amount ELSE -amount END)
                         OVER (PARTITION BY account_id ORDER BY created_at, id
                               ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS summed
                     FROM transactions)
               WHERE balance_after IS NOT summed
               ORDER BY reference_number LIMIT 1000"#
        )
        .fetch_all(store.pool())
        .await?)
    }

    async fn closing_balances_astray(store: &Store) -> Result<Vec<ClosingAstray>, StoreError> {
        Ok(sqlx::query_as!(
            ClosingAstray,
            r#"SELECT account_number, balance, last AS "last!: i64"
               FROM (SELECT a.account_number, a.balance,
                       COALESCE((SELECT t.balance_after
                         FROM transactions t INDEXED BY transactions_account_keyset
                         WHERE t.account_id = a.id
                         ORDER BY t.created_at DESC, t.id DESC LIMIT 1), 0) AS last
                     FROM accounts a)
               WHERE last <> balance
               ORDER BY account_number"#
        )
        .fetch_all(store.pool())
        .await?)
    }
}
