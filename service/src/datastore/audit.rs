//! The reads of `kobo ledger verify`: the ledger's tables checked against each other. Each
//! function returns what does not add up (or the figures the domain compares), read on the
//! pool outside any transaction.

use sqlx::Row;

use super::{sums, Store, StoreError};
use crate::kernel::store;
pub use kobo_store::audit::{AccountBalance, Counted, DayAstray};

/// How many rows `table` holds.
pub async fn count(store: &Store, table: Counted) -> Result<i64, StoreError> {
    let sql = match table {
        Counted::Accounts => "SELECT COUNT(*) FROM accounts",
        Counted::JournalEntries => "SELECT COUNT(*) FROM journal_entries",
        Counted::Postings => "SELECT COUNT(*) FROM postings",
        Counted::Transactions => "SELECT COUNT(*) FROM transactions",
    };
    Ok(sqlx::query_scalar(sql).fetch_one(store.pool()).await?)
}

/// Every account's stored balance and the sum of its postings.
pub async fn account_balances(store: &Store) -> Result<Vec<AccountBalance>, StoreError> {
    let sql = format!(
        "SELECT a.id, a.account_number, a.balance, {} FROM accounts a \
         LEFT JOIN postings p ON p.account_id = a.id \
         GROUP BY a.id, a.account_number, a.balance",
        sums::limbs_sql("p.amount", "posted")
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .fetch_all(store.pool())
        .await?;
    rows.iter()
        .map(|row| {
            Ok(AccountBalance {
                account_number: store::text(row, "account_number")?,
                balance: row.try_get("balance")?,
                posted: sums::read(row, "posted")?,
            })
        })
        .collect()
}

/// Journal entries with fewer than two postings, with how many they have.
pub async fn short_entries(store: &Store) -> Result<Vec<(String, i64)>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT e.id, COUNT(p.id) AS postings FROM journal_entries e \
         LEFT JOIN postings p ON p.entry_id = e.id GROUP BY e.id HAVING COUNT(p.id) < 2",
    )
    .fetch_all(store.pool())
    .await?)
}

/// Journal entries whose postings do not sum to zero, with their sum (kobo). Per entry a plain
/// `SUM` cannot overflow: an entry has a few postings, each at most 10^18.
pub async fn unbalanced_entries(store: &Store) -> Result<Vec<(String, i64)>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT entry_id, CAST(SUM(amount) AS BIGINT) AS total FROM postings \
         GROUP BY entry_id HAVING SUM(amount) <> 0",
    )
    .fetch_all(store.pool())
    .await?)
}

/// The sum of every posting (kobo): zero in a sound ledger.
pub async fn postings_total(store: &Store) -> Result<i128, StoreError> {
    let sql = format!(
        "SELECT {} FROM postings",
        sums::limbs_sql("amount", "total")
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .fetch_one(store.pool())
        .await?;
    sums::read(&row, "total")
}

/// Postings to an account that is neither a customer's nor the bank's, as `(posting, account)`.
pub async fn postings_to_unknown_accounts(
    store: &Store,
) -> Result<Vec<(String, String)>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT p.id, p.account_id FROM postings p \
         WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = p.account_id) \
           AND NOT EXISTS (SELECT 1 FROM internal_accounts i WHERE i.id = p.account_id)",
    )
    .fetch_all(store.pool())
    .await?)
}

/// Transactions (not `failed`) whose entry has no posting of their amount on their account.
const TRANSACTIONS_WITHOUT_POSTING: &str =
    "SELECT t.reference_number FROM transactions t WHERE t.status <> 'failed' \
       AND NOT EXISTS (SELECT 1 FROM postings p WHERE p.entry_id = t.entry_id \
         AND p.account_id = t.account_id \
         AND p.amount = CASE WHEN t.transaction_type = 'credit' THEN t.amount \
                             ELSE -t.amount END)";

/// The reference numbers of [`TRANSACTIONS_WITHOUT_POSTING`].
pub async fn transactions_without_posting(store: &Store) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar(TRANSACTIONS_WITHOUT_POSTING)
        .fetch_all(store.pool())
        .await?)
}

/// Days whose running total for the daily limit (`daily_transfer_totals`) differs from the sum
/// of the business's transfers of the day that count toward it: those whose money moved
/// (`processing`, `success`; a held transfer counts from its approval, on that day).
pub async fn daily_totals_astray(store: &Store) -> Result<Vec<DayAstray>, StoreError> {
    let rows = sqlx::query(
        "SELECT k.business_id, k.day, CAST(COALESCE(d.amount, 0) AS BIGINT) AS kept, \
           CAST(COALESCE(s.spent, 0) AS BIGINT) AS spent \
         FROM (SELECT business_id, day FROM daily_transfer_totals \
               UNION SELECT business_id, day FROM transfers) k \
         LEFT JOIN daily_transfer_totals d ON d.business_id = k.business_id AND d.day = k.day \
         LEFT JOIN (SELECT business_id, day, SUM(amount) AS spent FROM transfers \
                    WHERE transfer_status IN ('processing', 'success') \
                    GROUP BY business_id, day) s \
           ON s.business_id = k.business_id AND s.day = k.day \
         WHERE COALESCE(d.amount, 0) <> COALESCE(s.spent, 0)",
    )
    .fetch_all(store.pool())
    .await?;
    rows.iter()
        .map(|row| {
            Ok(DayAstray {
                business_id: store::text(row, "business_id")?,
                day: store::text(row, "day")?,
                kept: row.try_get("kept")?,
                spent: row.try_get("spent")?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::TRANSACTIONS_WITHOUT_POSTING;
    use crate::kernel::store::Store;

    /// SQLite has no statistics (nothing runs ANALYZE), so it picks among equally good-looking
    /// indexes by their shape: with `postings_entry` and `postings_account` it took the
    /// account's, and `kobo ledger verify` read every posting of an account for each of its
    /// transactions (over 10 minutes after the long chaos run, 3 s now). Migration 0009.
    #[tokio::test]
    async fn each_transaction_finds_its_posting_by_entry_and_account() {
        let (_dir, store) = Store::temporary_sqlite().await;
        store.migrate().await.unwrap();
        let plan = explain(&store).await;
        assert!(
            plan.contains("postings_entry_account (entry_id=? AND account_id=?)"),
            "{plan}"
        );
    }

    /// SQLite's plan for `TRANSACTIONS_WITHOUT_POSTING`, one step a line.
    async fn explain(store: &Store) -> String {
        use sqlx::Row;
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "EXPLAIN QUERY PLAN {TRANSACTIONS_WITHOUT_POSTING}"
        )))
        .fetch_all(store.pool())
        .await
        .unwrap();
        rows.iter()
            .map(|row| row.try_get::<String, _>("detail").unwrap())
            .collect::<Vec<_>>()
            .join("\n")
    }
}
