//! `kobo ledger verify`: the ledger checked against itself.
//!
//! Recomputes every account balance from its postings, checks that each journal entry has at
//! least two postings summing to zero, that the whole ledger sums to zero, that no balance is
//! negative, that every posting names a known account, that every transaction is backed by
//! the posting it claims, and that the daily limit's running totals match the transfers. Sums
//! are exact ([`Total`]) whatever the number of rows.

use serde::Serialize;
use sqlx::Row;

use crate::kernel::store::Store;
use crate::money::amount::{self, Total};

/// One thing that does not add up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Discrepancy {
    /// `balance`, `unbalanced_entry`, `short_entry`, `ledger_total`, `negative_balance`,
    /// `unknown_account`, `transaction_without_posting`, `daily_total`.
    pub kind: &'static str,
    /// The account, entry or transaction it concerns.
    pub subject: String,
    pub detail: String,
}

/// What [`verify`] found.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub ok: bool,
    pub accounts: u64,
    pub journal_entries: u64,
    pub postings: u64,
    pub transactions: u64,
    /// The sum of every posting: `0.00` in a sound ledger.
    pub ledger_total: String,
    pub discrepancies: Vec<Discrepancy>,
}

fn limbs(row: &sqlx::any::AnyRow, alias: &str) -> Result<Total, sqlx::Error> {
    Ok(Total::from_limbs(
        row.try_get(format!("{alias}_high").as_str())?,
        row.try_get(format!("{alias}_low").as_str())?,
    ))
}

async fn count(store: &Store, table: &str) -> Result<u64, sqlx::Error> {
    let sql = format!("SELECT COUNT(*) FROM {table}");
    let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .fetch_one(store.pool())
        .await?;
    Ok(u64::try_from(n).unwrap_or_default())
}

/// Transactions (not `failed`) whose entry has no posting of their amount on their account.
const TRANSACTIONS_WITHOUT_POSTING: &str =
    "SELECT t.reference_number FROM transactions t WHERE t.status <> 'failed' \
       AND NOT EXISTS (SELECT 1 FROM postings p WHERE p.entry_id = t.entry_id \
         AND p.account_id = t.account_id \
         AND p.amount = CASE WHEN t.transaction_type = 'credit' THEN t.amount \
                             ELSE -t.amount END)";

/// Days whose running total for the daily limit (`daily_transfer_totals`) differs from the sum
/// of the business's transfers of the day that count toward it: those whose money moved
/// (`processing`, `success`; a held transfer counts from its approval, on that day).
const DAILY_TOTALS_ASTRAY: &str =
    "SELECT k.business_id, k.day, CAST(COALESCE(d.amount, 0) AS BIGINT) AS kept, \
       CAST(COALESCE(s.spent, 0) AS BIGINT) AS spent \
     FROM (SELECT business_id, day FROM daily_transfer_totals \
           UNION SELECT business_id, day FROM transfers) k \
     LEFT JOIN daily_transfer_totals d ON d.business_id = k.business_id AND d.day = k.day \
     LEFT JOIN (SELECT business_id, day, SUM(amount) AS spent FROM transfers \
                WHERE transfer_status IN ('processing', 'success') \
                GROUP BY business_id, day) s ON s.business_id = k.business_id AND s.day = k.day \
     WHERE COALESCE(d.amount, 0) <> COALESCE(s.spent, 0)";

/// Checks the whole ledger.
pub async fn verify(store: &Store) -> Result<Report, sqlx::Error> {
    let mut discrepancies = Vec::new();
    balances(store, &mut discrepancies).await?;
    entries(store, &mut discrepancies).await?;
    let total = ledger_total(store, &mut discrepancies).await?;
    references(store, &mut discrepancies).await?;
    daily_totals(store, &mut discrepancies).await?;
    Ok(Report {
        ok: discrepancies.is_empty(),
        accounts: count(store, "accounts").await?,
        journal_entries: count(store, "journal_entries").await?,
        postings: count(store, "postings").await?,
        transactions: count(store, "transactions").await?,
        ledger_total: total.amount_text(),
        discrepancies,
    })
}

/// Every account's stored balance is the sum of its postings, and none is negative.
async fn balances(store: &Store, found: &mut Vec<Discrepancy>) -> Result<(), sqlx::Error> {
    let sql = format!(
        "SELECT a.id, a.account_number, a.balance, {} FROM accounts a \
         LEFT JOIN postings p ON p.account_id = a.id \
         GROUP BY a.id, a.account_number, a.balance",
        amount::limbs_sql("p.amount", "posted")
    );
    for row in sqlx::query(sqlx::AssertSqlSafe(sql))
        .fetch_all(store.pool())
        .await?
    {
        let balance: i64 = row.try_get("balance")?;
        let posted = limbs(&row, "posted")?;
        let number: String = row.try_get("account_number")?;
        if Total(i128::from(balance)) != posted {
            found.push(Discrepancy {
                kind: "balance",
                subject: number.clone(),
                detail: format!(
                    "stored balance {} but its postings sum to {}",
                    amount::amount_text(i128::from(balance)),
                    posted.amount_text()
                ),
            });
        }
        if balance < 0 {
            found.push(Discrepancy {
                kind: "negative_balance",
                subject: number,
                detail: format!("balance {}", amount::amount_text(i128::from(balance))),
            });
        }
    }
    Ok(())
}

/// Every journal entry has at least two postings, and they sum to zero.
async fn entries(store: &Store, found: &mut Vec<Discrepancy>) -> Result<(), sqlx::Error> {
    for row in sqlx::query(
        "SELECT e.id, COUNT(p.id) AS postings FROM journal_entries e \
         LEFT JOIN postings p ON p.entry_id = e.id GROUP BY e.id HAVING COUNT(p.id) < 2",
    )
    .fetch_all(store.pool())
    .await?
    {
        let postings: i64 = row.try_get("postings")?;
        found.push(Discrepancy {
            kind: "short_entry",
            subject: row.try_get("id")?,
            detail: format!("{postings} posting(s); an entry needs at least two"),
        });
    }
    // Per entry a plain SUM cannot overflow (an entry has a few postings, each at most 10^18).
    for row in sqlx::query(
        "SELECT entry_id, CAST(SUM(amount) AS BIGINT) AS total FROM postings \
         GROUP BY entry_id HAVING SUM(amount) <> 0",
    )
    .fetch_all(store.pool())
    .await?
    {
        let total: i64 = row.try_get("total")?;
        found.push(Discrepancy {
            kind: "unbalanced_entry",
            subject: row.try_get("entry_id")?,
            detail: format!(
                "its postings sum to {}",
                amount::amount_text(i128::from(total))
            ),
        });
    }
    Ok(())
}

/// The whole ledger sums to zero; returns its sum.
async fn ledger_total(store: &Store, found: &mut Vec<Discrepancy>) -> Result<Total, sqlx::Error> {
    let sql = format!(
        "SELECT {} FROM postings",
        amount::limbs_sql("amount", "total")
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .fetch_one(store.pool())
        .await?;
    let total = limbs(&row, "total")?;
    if total != Total(0) {
        found.push(Discrepancy {
            kind: "ledger_total",
            subject: "ledger".into(),
            detail: format!("all postings sum to {}", total.amount_text()),
        });
    }
    Ok(total)
}

/// Every posting names a known account, and every transaction is backed by its posting.
async fn references(store: &Store, found: &mut Vec<Discrepancy>) -> Result<(), sqlx::Error> {
    for row in sqlx::query(
        "SELECT p.id, p.account_id FROM postings p \
         WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = p.account_id) \
           AND NOT EXISTS (SELECT 1 FROM internal_accounts i WHERE i.id = p.account_id)",
    )
    .fetch_all(store.pool())
    .await?
    {
        let account: String = row.try_get("account_id")?;
        found.push(Discrepancy {
            kind: "unknown_account",
            subject: row.try_get("id")?,
            detail: format!("posting to {account}, which is no account"),
        });
    }
    for row in sqlx::query(TRANSACTIONS_WITHOUT_POSTING)
        .fetch_all(store.pool())
        .await?
    {
        found.push(Discrepancy {
            kind: "transaction_without_posting",
            subject: row.try_get("reference_number")?,
            detail: "no posting of its entry moves its amount on its account".into(),
        });
    }
    Ok(())
}

/// The daily limit's running totals match the transfers that count toward them.
async fn daily_totals(store: &Store, found: &mut Vec<Discrepancy>) -> Result<(), sqlx::Error> {
    for row in sqlx::query(DAILY_TOTALS_ASTRAY)
        .fetch_all(store.pool())
        .await?
    {
        let business: String = row.try_get("business_id")?;
        let day: String = row.try_get("day")?;
        let kept: i64 = row.try_get("kept")?;
        let spent: i64 = row.try_get("spent")?;
        found.push(Discrepancy {
            kind: "daily_total",
            subject: format!("{business} {day}"),
            detail: format!(
                "the daily limit's running total is {} but the day's transfers sum to {}",
                amount::amount_text(i128::from(kept)),
                amount::amount_text(i128::from(spent))
            ),
        });
    }
    Ok(())
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
