//! `accounts`: every customer-facing account (the business's main pool account, its current
//! accounts, its customers' virtual accounts), each with its stored balance.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::Row;

use super::{sums, Conn, FromAnyRow, StoreError, Tx};
use crate::kernel::paging::{Conditions, Cursor, Sql};
use crate::kernel::store::{self, Backend, Store};
pub use kobo_store::accounts::{
    AccountRow, Activity, BalanceChange, CurrentAccountFacts, Filters, KoboAccount, Metrics,
    MetricsFilters, NewAccount, PayoutRead,
};

/// The columns every account read takes, from `accounts a LEFT JOIN accounts p` (the parent).
const ACCOUNT_COLUMNS: &str = "a.id, a.account_number, a.account_name, a.account_type, \
    a.account_class, a.status, a.balance, a.last_balance_update, \
    p.account_number AS parent_account_number, a.customer_id, a.created_at";
const ACCOUNT_FROM: &str = " FROM accounts a LEFT JOIN accounts p ON p.id = a.parent_account_id";

impl FromAnyRow for AccountRow {
    fn from_any(row: &AnyRow) -> Result<AccountRow, StoreError> {
        Ok(AccountRow {
            id: store::text(row, "id")?,
            account_number: store::text(row, "account_number")?,
            account_name: store::text(row, "account_name")?,
            account_type: store::text(row, "account_type")?,
            account_class: store::text(row, "account_class")?,
            status: store::text(row, "status")?,
            balance: row.try_get("balance")?,
            last_balance_update: store::optional_time(row, "last_balance_update")?,
            parent_account_number: store::optional_text(row, "parent_account_number")?,
            customer_id: store::optional_text(row, "customer_id")?,
            created_at: store::time(row, "created_at")?,
        })
    }
}

impl FromAnyRow for KoboAccount {
    fn from_any(row: &AnyRow) -> Result<KoboAccount, StoreError> {
        Ok(KoboAccount {
            account: AccountRow::from_any(row)?,
            business_id: store::text(row, "business_id")?,
            business_name: store::text(row, "business_name")?,
        })
    }
}

/// The account with this id.
pub async fn find_by_id(
    conn: impl Into<Conn<'_>>,
    id: &str,
) -> Result<Option<AccountRow>, StoreError> {
    let sql = format!("SELECT {ACCOUNT_COLUMNS}{ACCOUNT_FROM} WHERE a.id = $1");
    let query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id.to_owned());
    let row = conn.into().fetch_optional(query).await?;
    row.as_ref().map(AccountRow::from_any).transpose()
}

/// The account with this number, whoever's, with its business.
///
/// By the number alone, whose only index is its unique one, so PostgreSQL's kept plan cannot
/// take another: with the business in the `WHERE` too, a plan made while the business had few
/// accounts could read them all through `accounts_business_created` (see
/// [`super::transfers::reference_owner`]), and the lookup had to be planned on every call.
pub async fn find_by_number_anywhere(
    conn: impl Into<Conn<'_>>,
    number: &str,
) -> Result<Option<KoboAccount>, StoreError> {
    let sql = format!(
        "SELECT {ACCOUNT_COLUMNS}, a.business_id, o.name AS business_name{ACCOUNT_FROM} \
         JOIN businesses o ON o.id = a.business_id WHERE a.account_number = $1"
    );
    let query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(number.to_owned());
    let row = conn.into().fetch_optional(query).await?;
    row.as_ref().map(KoboAccount::from_any).transpose()
}

/// The business's main pool account.
pub async fn main_account(
    tx: &mut Tx,
    business_id: &str,
) -> Result<Option<AccountRow>, StoreError> {
    let sql = format!(
        "SELECT {ACCOUNT_COLUMNS}{ACCOUNT_FROM} \
         WHERE a.business_id = $1 AND a.account_class = 'primary'"
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(business_id)
        .fetch_optional(&mut **tx)
        .await?;
    row.as_ref().map(AccountRow::from_any).transpose()
}

/// The business's name, how many current accounts it holds, and its main pool account.
pub async fn current_account_facts(
    tx: &mut Tx,
    business_id: &str,
) -> Result<CurrentAccountFacts, StoreError> {
    let row = sqlx::query(
        "SELECT b.name, \
           (SELECT COUNT(*) FROM accounts c WHERE c.business_id = b.id \
              AND c.account_type = 'current') AS current_accounts, \
           (SELECT m.id FROM accounts m WHERE m.business_id = b.id \
              AND m.account_class = 'primary') AS main_account_id \
         FROM businesses b WHERE b.id = $1",
    )
    .bind(business_id)
    .fetch_one(&mut **tx)
    .await?;
    Ok(CurrentAccountFacts {
        business_name: store::text(&row, "name")?,
        current_accounts: row.try_get("current_accounts")?,
        main_account_id: store::optional_text(&row, "main_account_id")?,
    })
}

/// Opens `new`, active and empty.
pub async fn insert(tx: &mut Tx, new: &NewAccount<'_>) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO accounts (id, business_id, account_number, account_name, account_type, \
           account_class, status, parent_account_id, customer_id, balance, last_balance_update, \
           created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, 'secondary', 'active', $6, $7, 0, NULL, $8, $8)",
    )
    .bind(new.id)
    .bind(new.business_id)
    .bind(new.account_number)
    .bind(new.account_name)
    .bind(new.account_type)
    .bind(new.parent_account_id)
    .bind(new.customer_id)
    .bind(store::timestamp(new.created_at))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Opens a business's main pool account, active and empty.
pub async fn insert_main(
    tx: &mut Tx,
    id: &str,
    business_id: &str,
    account_number: &str,
    account_name: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO accounts (id, business_id, account_number, account_name, account_type, \
           account_class, status, parent_account_id, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, 'pool', 'primary', 'active', NULL, $5, $5)",
    )
    .bind(id)
    .bind(business_id)
    .bind(account_number)
    .bind(account_name)
    .bind(store::timestamp(now))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The number of the business's main pool account.
pub async fn main_account_number(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
) -> Result<Option<String>, StoreError> {
    let query = sqlx::query(
        "SELECT account_number FROM accounts \
         WHERE business_id = $1 AND account_type = 'pool' AND account_class = 'primary'",
    )
    .bind(business_id.to_owned());
    let row = conn.into().fetch_optional(query).await?;
    row.map(|row| store::text(&row, "account_number"))
        .transpose()
}

/// The status of account `id`, read under a lock held until `tx` ends: on PostgreSQL `FOR
/// SHARE`, so a status change in flight is waited for and seen, and one that comes later
/// waits for `tx`; SQLite's write transaction holds the whole database already.
pub async fn locked_status(tx: &mut Tx, id: &str) -> Result<Option<String>, StoreError> {
    let sql = match tx.backend() {
        Backend::Postgres => "SELECT status FROM accounts WHERE id = $1 FOR SHARE",
        Backend::Sqlite => "SELECT status FROM accounts WHERE id = $1",
    };
    Ok(sqlx::query_scalar(sql)
        .bind(id)
        .fetch_optional(&mut **tx)
        .await?)
}

/// The id and business of the account with this number, locked until `tx` ends (PostgreSQL:
/// `FOR UPDATE`; the statements after it see whatever committed before the lock was granted).
pub async fn lock_by_number(
    tx: &mut Tx,
    number: &str,
) -> Result<Option<(String, String)>, StoreError> {
    let sql = match tx.backend() {
        Backend::Postgres => {
            "SELECT id, business_id FROM accounts WHERE account_number = $1 FOR UPDATE"
        }
        Backend::Sqlite => "SELECT id, business_id FROM accounts WHERE account_number = $1",
    };
    let row = sqlx::query(sql)
        .bind(number)
        .fetch_optional(&mut **tx)
        .await?;
    row.map(|row| Ok((store::text(&row, "id")?, store::text(&row, "business_id")?)))
        .transpose()
}

/// Changes account `id`'s status from `from` to `to`; `false` if it no longer was `from`.
pub async fn set_status(tx: &mut Tx, id: &str, from: &str, to: &str) -> Result<bool, StoreError> {
    let changed = sqlx::query("UPDATE accounts SET status = $1 WHERE id = $2 AND status = $3")
        .bind(to)
        .bind(id)
        .bind(from)
        .execute(&mut **tx)
        .await?
        .rows_affected();
    Ok(changed == 1)
}

/// Applies `changes` in one statement, each only if the account stays within zero and
/// `max_balance` and, when debited, is active (read under the row's lock, so a freeze that
/// commits first stops it); the balances' last update is `at`. Returns the ids of the
/// accounts changed.
pub async fn apply_balance_changes(
    tx: &mut Tx,
    changes: &[BalanceChange<'_>],
    max_balance: i64,
    at: DateTime<Utc>,
) -> Result<Vec<String>, StoreError> {
    // `$1` the time, `$2` the limit, then each account's id and amount.
    let mut amount = String::from("CASE id");
    let mut ids = Vec::new();
    let mut debited = Vec::new();
    for (index, change) in changes.iter().enumerate() {
        let id = 3 + 2 * index;
        amount.push_str(&format!(" WHEN ${id} THEN ${}", id + 1));
        ids.push(format!("${id}"));
        if change.debited {
            debited.push(format!("${id}"));
        }
    }
    amount.push_str(" END");
    let active = if debited.is_empty() {
        String::new()
    } else {
        format!(
            " AND (status = 'active' OR id NOT IN ({}))",
            debited.join(", ")
        )
    };
    let sql = format!(
        "UPDATE accounts SET balance = balance + {amount}, last_balance_update = $1, \
           updated_at = $1 \
         WHERE id IN ({ids}) AND balance + {amount} >= 0 AND balance + {amount} <= $2{active} \
         RETURNING id",
        ids = ids.join(", ")
    );
    let mut update = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(store::timestamp(at))
        .bind(max_balance);
    for change in changes {
        update = update.bind(change.account_id).bind(change.amount);
    }
    Ok(update.fetch_all(&mut **tx).await?)
}

/// An account's balance (kobo) and status, read in `tx`; `None` if there is no such account.
pub async fn balance_and_status(
    tx: &mut Tx,
    account_id: &str,
) -> Result<Option<(i64, String)>, StoreError> {
    let found = sqlx::query("SELECT balance, status FROM accounts WHERE id = $1")
        .bind(account_id)
        .fetch_optional(&mut **tx)
        .await?;
    found
        .map(|row| Ok((row.try_get("balance")?, row.try_get("status")?)))
        .transpose()
}

/// The SQL condition of an account type filter on `a`.
fn type_condition(filter: &str) -> &'static str {
    match filter {
        "normal" => "a.account_type IN ('pool', 'current')",
        "virtual" => "a.account_type = 'virtual'",
        "current" => "a.account_type = 'current'",
        // Kobo opens no savings accounts.
        _ => "1 = 0",
    }
}

fn conditions(sql: &mut Sql, business_id: &str, filters: &Filters) -> Conditions {
    let mut conditions = Conditions::default();
    conditions.add(format!("a.business_id = {}", sql.arg(business_id)));
    if let Some(filter) = &filters.account_type {
        conditions.add(type_condition(filter).to_owned());
    }
    if let Some(number) = &filters.account_number {
        conditions.add(format!("a.account_number = {}", sql.arg(number.as_str())));
    }
    if let Some(status) = &filters.status {
        conditions.add(format!("a.status = {}", sql.arg(status.as_str())));
    }
    if let Some(available) = filters.is_available {
        conditions.add(if available {
            "a.status = 'active'".to_owned()
        } else {
            "a.status <> 'active'".to_owned()
        });
    }
    if let Some(parent) = &filters.parent_account_number {
        conditions.add(format!(
            "a.account_type = 'virtual' AND p.account_number = {}",
            sql.arg(parent.as_str())
        ));
    }
    if let Some(class) = &filters.account_class {
        conditions.add(format!("a.account_class = {}", sql.arg(class.as_str())));
    }
    conditions
}

/// One keyset page of the business's accounts, newest first: at most `limit + 1` rows.
pub async fn list(
    store: &Store,
    business_id: &str,
    filters: &Filters,
    cursor: Option<Cursor>,
    limit: u64,
) -> Result<Vec<AccountRow>, StoreError> {
    let mut sql = Sql::new(&format!("SELECT {ACCOUNT_COLUMNS}{ACCOUNT_FROM}"));
    let mut conditions = conditions(&mut sql, business_id, filters);
    if let Some(cursor) = cursor {
        let at = sql.arg(cursor.created_at);
        let id = sql.arg(cursor.id);
        conditions.add(format!(
            "(a.created_at < {at} OR (a.created_at = {at} AND a.id < {id}))"
        ));
    }
    sql.push(&conditions.where_clause());
    sql.push(" ORDER BY a.created_at DESC, a.id DESC")
        .limit(limit + 1);
    let rows = sql.fetch_all(store.pool()).await?;
    rows.iter().map(AccountRow::from_any).collect()
}

/// The totals of the accounts `ids`, counting collections in `[from, until)` (stored times)
/// when given. Accounts with no transaction are missing from the map.
pub async fn activity(
    store: &Store,
    ids: &[&str],
    from: Option<String>,
    until: Option<String>,
) -> Result<HashMap<String, Activity>, StoreError> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let mut sql = Sql::new("");
    let mut collection = "category = 'collection' AND status = 'success'".to_owned();
    if let Some(from) = from {
        collection.push_str(&format!(" AND created_at >= {}", sql.arg(from)));
    }
    if let Some(until) = until {
        collection.push_str(&format!(" AND created_at < {}", sql.arg(until)));
    }
    let transfer = "category = 'transfer' AND transaction_type = 'debit' \
                    AND status IN ('success', 'pending')";
    let ids: Vec<String> = ids.iter().map(|id| sql.arg(*id)).collect();
    sql.push(&format!(
        "SELECT account_id, \
           CAST(SUM(CASE WHEN {collection} THEN 1 ELSE 0 END) AS BIGINT) AS collections, \
           {}, \
           MAX(CASE WHEN {collection} THEN created_at END) AS last_collection, \
           CAST(SUM(CASE WHEN {transfer} THEN 1 ELSE 0 END) AS BIGINT) AS transfers, \
           {}, \
           CAST(SUM(CASE WHEN status <> 'failed' THEN 1 ELSE 0 END) AS BIGINT) AS transactions \
         FROM transactions WHERE account_id IN ({}) GROUP BY account_id",
        sums::limbs_sql_where("amount", &collection, "collected"),
        sums::limbs_sql_where("amount", transfer, "transferred"),
        ids.join(", ")
    ));
    let rows = sql.fetch_all(store.pool()).await?;
    let mut activity = HashMap::new();
    for row in &rows {
        activity.insert(
            store::text(row, "account_id")?,
            Activity {
                collections: row.try_get("collections")?,
                collected: sums::read(row, "collected")?,
                last_collection: store::optional_time(row, "last_collection")?,
                transfers: row.try_get("transfers")?,
                transferred: sums::read(row, "transferred")?,
                transactions: row.try_get("transactions")?,
            },
        );
    }
    Ok(activity)
}

/// The totals of the business's accounts that `filters` choose, in one statement.
pub async fn metrics(
    store: &Store,
    business_id: &str,
    filters: &MetricsFilters,
) -> Result<Metrics, StoreError> {
    let mut sql = Sql::new(
        "WITH chosen AS (SELECT a.id, a.status, a.account_type, a.balance FROM accounts a",
    );
    let mut conditions = Conditions::default();
    conditions.add(format!("a.business_id = {}", sql.arg(business_id)));
    if let Some(filter) = &filters.account_type {
        conditions.add(type_condition(filter).to_owned());
    }
    let mut window = String::new();
    if let Some(from) = &filters.from {
        conditions.add(format!("a.created_at >= {}", sql.arg(from.as_str())));
        window.push_str(&format!(" AND t.created_at >= {}", sql.arg(from.as_str())));
    }
    if let Some(until) = &filters.until {
        conditions.add(format!("a.created_at < {}", sql.arg(until.as_str())));
        window.push_str(&format!(" AND t.created_at < {}", sql.arg(until.as_str())));
    }
    sql.push(&conditions.where_clause());
    sql.push(" ORDER BY a.created_at DESC, a.id DESC");
    if let Some(count) = filters.count {
        let cap = sql.arg(count);
        sql.push(&format!(" LIMIT {cap}"));
    }
    sql.push(&format!(
        ") SELECT \
           CAST(COALESCE(SUM(CASE WHEN status = 'active' THEN 1 ELSE 0 END), 0) AS BIGINT) AS active, \
           CAST(COALESCE(SUM(CASE WHEN status <> 'active' THEN 1 ELSE 0 END), 0) AS BIGINT) AS inactive, \
           CAST(COALESCE(SUM(CASE WHEN account_type = 'virtual' THEN 1 ELSE 0 END), 0) AS BIGINT) AS virtual_accounts, \
           {}, \
           (SELECT CAST(COALESCE(SUM(t.amount / 1000000000), 0) AS BIGINT) FROM transactions t \
              JOIN chosen c ON c.id = t.account_id \
              WHERE t.category = 'collection' AND t.status = 'success'{window}) AS collected_high, \
           (SELECT CAST(COALESCE(SUM(t.amount % 1000000000), 0) AS BIGINT) FROM transactions t \
              JOIN chosen c ON c.id = t.account_id \
              WHERE t.category = 'collection' AND t.status = 'success'{window}) AS collected_low \
         FROM chosen",
        sums::limbs_sql("balance", "balance")
    ));
    let rows = sql.fetch_all(store.pool()).await?;
    let row = rows
        .first()
        .ok_or_else(|| StoreError::Unreadable("an aggregate query returned no row".into()))?;
    Ok(Metrics {
        active: row.try_get("active")?,
        inactive: row.try_get("inactive")?,
        virtual_accounts: row.try_get("virtual_accounts")?,
        balance: sums::read(row, "balance")?,
        collected: sums::read(row, "collected")?,
    })
}

/// The source account and an intra-bank beneficiary's (whoever's), each with its business,
/// and the paying business's settings on every row, in one statement (they were three round
/// trips). By account number only, which only its unique index leads with, so the kept plan
/// cannot read a business's accounts (see [`find_by_number_anywhere`]); the settings are by
/// the business's key. An inter-bank payout looks up the source's number twice.
pub async fn payout_reads(
    conn: impl Into<Conn<'_>>,
    default_daily_limit: i64,
    business_id: &str,
    source: &str,
    intra_beneficiary: Option<&str>,
) -> Result<Vec<PayoutRead>, StoreError> {
    let sql = format!(
        "SELECT {ACCOUNT_COLUMNS}, a.business_id, o.name AS business_name, b.name AS payer_name, \
           COALESCE(b.daily_transfer_limit, $3) AS daily_limit, \
           (SELECT ap.min_amount FROM approval_policies ap \
             WHERE ap.business_id = b.id AND ap.is_active = 1) AS policy_minimum\
         {ACCOUNT_FROM} JOIN businesses o ON o.id = a.business_id CROSS JOIN businesses b \
         WHERE a.account_number IN ($1, $2) AND b.id = $4",
    );
    // Audited: the statement is built from constants only; every value is bound.
    let query = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(source.to_owned())
        .bind(intra_beneficiary.unwrap_or(source).to_owned())
        .bind(default_daily_limit)
        .bind(business_id.to_owned());
    let rows = conn.into().fetch_all(query).await?;
    rows.iter()
        .map(|row| {
            Ok(PayoutRead {
                account: KoboAccount::from_any(row)?,
                payer_name: store::text(row, "payer_name")?,
                daily_limit: row.try_get("daily_limit")?,
                policy_minimum: row.try_get("policy_minimum")?,
            })
        })
        .collect()
}
