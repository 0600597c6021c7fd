//! The reads of `kobo ledger verify`: the ledger's tables checked against each other. Each
//! function returns what does not add up (or the figures the domain compares), read on the
//! pool outside any transaction.

use crate::Pool;
use crate::{sums, StoreError};
pub use kobo_store::audit::{AccountBalance, ClosingAstray, Counted, DayAstray, RunningAstray};

kobo_store::audit_functions!(backend crate::Backend);

impl kobo_store::audit::Audit for crate::Backend {
    async fn count(pool: &Pool, table: Counted) -> Result<i64, StoreError> {
        pool.run(async |pool| {
            let count = match table {
                Counted::Accounts => {
                    sqlx::query_scalar!(r#"SELECT COUNT(*) AS "count!" FROM accounts"#)
                        .fetch_one(&mut *pool)
                        .await?
                }
                Counted::JournalEntries => {
                    sqlx::query_scalar!(r#"SELECT COUNT(*) AS "count!" FROM ledger_entries"#)
                        .fetch_one(&mut *pool)
                        .await?
                }
                Counted::Postings => {
                    sqlx::query_scalar!(r#"SELECT COUNT(*) AS "count!" FROM ledger_postings"#)
                        .fetch_one(&mut *pool)
                        .await?
                }
                Counted::Transactions => {
                    sqlx::query_scalar!(r#"SELECT COUNT(*) AS "count!" FROM transactions"#)
                        .fetch_one(&mut *pool)
                        .await?
                }
            };
            Ok(count)
        })
        .await
    }

    async fn account_balances(pool: &Pool) -> Result<Vec<AccountBalance>, StoreError> {
        pool.run(async |pool| {
            let rows = sqlx::query!(
            "SELECT a.account_number, a.balance, SUM(p.amount)::text AS posted FROM accounts a \
         LEFT JOIN ledger_postings p ON p.account_id = a.id \
         GROUP BY a.id, a.account_number, a.balance"
        )
            .fetch_all(&mut *pool)
            .await?;
            rows.into_iter()
                .map(|row| {
                    Ok(AccountBalance {
                        account_number: row.account_number,
                        balance: row.balance,
                        posted: sums::read(row.posted)?,
                    })
                })
                .collect()
        })
        .await
    }

    async fn short_entries(pool: &Pool) -> Result<Vec<(String, i64)>, StoreError> {
        pool.run(async |pool| {
            let rows = sqlx::query!(
                r#"SELECT e.id::text AS "id!", COUNT(p.id) AS "postings!" FROM ledger_entries e
         LEFT JOIN ledger_postings p ON p.entry_id = e.id GROUP BY e.id HAVING COUNT(p.id) < 2"#
            )
            .fetch_all(&mut *pool)
            .await?;
            Ok(rows.into_iter().map(|row| (row.id, row.postings)).collect())
        })
        .await
    }

    async fn unbalanced_entries(pool: &Pool) -> Result<Vec<(String, i64)>, StoreError> {
        pool.run(async |pool| {
        let rows = sqlx::query!(
            r#"SELECT entry_id::text AS "entry_id!", SUM(amount)::bigint AS "total!" FROM ledger_postings
         GROUP BY entry_id HAVING SUM(amount) <> 0"#
        )
        .fetch_all(&mut *pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| (row.entry_id, row.total))
            .collect())
    })
    .await
    }

    async fn postings_total(pool: &Pool) -> Result<i128, StoreError> {
        pool.run(async |pool| {
            let total = sqlx::query_scalar!("SELECT SUM(amount)::text FROM ledger_postings")
                .fetch_one(&mut *pool)
                .await?;
            sums::read(total)
        })
        .await
    }

    async fn repeated_sequences(pool: &Pool) -> Result<Vec<(String, i64, i64)>, StoreError> {
        pool.run(async |pool| {
            let rows = sqlx::query!(
                r#"SELECT business_id::text AS "business_id!", sequence, COUNT(*) AS "transactions!"
               FROM transactions GROUP BY business_id, sequence HAVING COUNT(*) > 1"#
            )
            .fetch_all(&mut *pool)
            .await?;
            Ok(rows
                .into_iter()
                .map(|row| (row.business_id, row.sequence, row.transactions))
                .collect())
        })
        .await
    }

    async fn rows_without_parent(pool: &Pool) -> Result<Vec<(String, String)>, StoreError> {
        pool.run(async |pool| {
        let rows = sqlx::query!(
            r#"SELECT 'posting of no journal entry' AS "what!", p.id::text AS "row!" FROM ledger_postings p
           WHERE NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.id = p.entry_id)
         UNION ALL SELECT 'journal entry of no business', e.id::text FROM ledger_entries e
           WHERE NOT EXISTS (SELECT 1 FROM businesses b WHERE b.id = e.business_id)
         UNION ALL SELECT 'transaction of no journal entry', t.reference_number FROM transactions t
           WHERE NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.id = t.entry_id)
         UNION ALL SELECT 'transaction of no account of its business', t.reference_number
           FROM transactions t WHERE NOT EXISTS (SELECT 1 FROM accounts a
             WHERE a.id = t.account_id AND a.business_id = t.business_id)
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
        .fetch_all(&mut *pool)
        .await?;
        Ok(rows.into_iter().map(|row| (row.what, row.row)).collect())
    })
    .await
    }

    async fn postings_to_unknown_accounts(
        pool: &Pool,
    ) -> Result<Vec<(String, String)>, StoreError> {
        pool.run(async |pool| {
            let rows = sqlx::query!(
                r#"SELECT p.id AS "id!", p.account_id AS "account_id!" FROM ledger_postings p
         WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = p.account_id)
           AND NOT EXISTS (SELECT 1 FROM internal_accounts i WHERE i.id = p.account_id)"#
            )
            .fetch_all(&mut *pool)
            .await?;
            Ok(rows
                .into_iter()
                .map(|row| (row.id.to_string(), row.account_id.to_string()))
                .collect())
        })
        .await
    }

    async fn transactions_without_posting(pool: &Pool) -> Result<Vec<String>, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_scalar!(
                "SELECT t.reference_number FROM transactions t WHERE t.status <> 'failed' \
           AND NOT EXISTS (SELECT 1 FROM ledger_postings p WHERE p.entry_id = t.entry_id \
             AND p.account_id = t.account_id \
             AND p.amount = CASE WHEN t.transaction_type = 'credit' THEN t.amount \
                                 ELSE -t.amount END) \
           AND NOT (t.category = 'reversal' AND t.transaction_type = 'credit' \
             AND (SELECT sum(p.amount) FROM ledger_postings p WHERE p.entry_id = t.entry_id \
                  AND p.account_id = t.account_id) = t.amount)"
            )
            .fetch_all(&mut *pool)
            .await?)
        })
        .await
    }

    async fn daily_totals_astray(pool: &Pool) -> Result<Vec<DayAstray>, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_as!(
                DayAstray,
                r#"SELECT k.business_id::text AS "business_id!", k.day::text AS "day!",
           COALESCE(d.amount, 0) AS "kept!", COALESCE(s.spent, 0)::bigint AS "spent!"
         FROM (SELECT business_id, day FROM daily_transfer_totals
               UNION SELECT business_id, day FROM transfers) k
         LEFT JOIN daily_transfer_totals d ON d.business_id = k.business_id AND d.day = k.day
         LEFT JOIN (SELECT business_id, day, SUM(amount) AS spent FROM transfers
                    WHERE transfer_status IN ('processing', 'success')
                    GROUP BY business_id, day) s
           ON s.business_id = k.business_id AND s.day = k.day
         WHERE COALESCE(d.amount, 0) <> COALESCE(s.spent, 0)"#
            )
            .fetch_all(&mut *pool)
            .await?)
        })
        .await
    }

    async fn running_balances_astray(pool: &Pool) -> Result<Vec<RunningAstray>, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_as!(
                RunningAstray,
                r#"SELECT reference_number AS "reference_number!", balance_after AS stored,
                     summed AS "summed!"
                   FROM (SELECT reference_number, balance_after,
                           (sum(CASE transaction_type WHEN 'credit' THEN amount ELSE -amount END)
                             OVER (PARTITION BY account_id ORDER BY created_at, id
                                   ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))::bigint
                             AS summed
                         FROM transactions) r
                   WHERE balance_after IS DISTINCT FROM summed
                   ORDER BY reference_number LIMIT 1000"#
            )
            .fetch_all(&mut *pool)
            .await?)
        })
        .await
    }

    async fn closing_balances_astray(pool: &Pool) -> Result<Vec<ClosingAstray>, StoreError> {
        pool.run(async |pool| {
            Ok(sqlx::query_as!(
                ClosingAstray,
                r#"SELECT a.account_number, a.balance, COALESCE(l.balance_after, 0) AS "last!"
                   FROM accounts a
                   LEFT JOIN LATERAL (SELECT t.balance_after FROM transactions t
                       WHERE t.account_id = a.id ORDER BY t.created_at DESC, t.id DESC LIMIT 1) l
                     ON true
                   WHERE COALESCE(l.balance_after, 0) <> a.balance
                   ORDER BY a.account_number"#
            )
            .fetch_all(&mut *pool)
            .await?)
        })
        .await
    }
}
