//! Bulk loading for `kobo bench` (sandbox stores only): an account's history written many rows
//! a statement, and the few reads the benchmark tools make.

use chrono::{DateTime, Utc};

pub use kobo_store::seeding::SeededCredit;

use super::{Store, StoreError, Tx};
use crate::kernel::store::{self, Backend};

/// Rows per multi-row `INSERT` (the widest table has 19 columns: 19,000 parameters, under
/// SQLite's 32,766 and PostgreSQL's 65,535).
const ROWS_PER_STATEMENT: usize = 1_000;

/// Fresh statistics of `transactions` on PostgreSQL, whose planner otherwise took a scan for
/// the first page of a freshly seeded 100k-row account (233 ms until the table was analysed,
/// 0.18 ms after). Nothing on SQLite, whose stores are never analysed otherwise, so a benchmark
/// of an analysed one would measure a store no deployment has; and its statistics' samples
/// (STAT4, built into the bundled SQLite) make SQLite plan a statement again whenever a
/// parameter it compared to them is bound (the page's cursor, the date window).
pub async fn analyze_transactions(store: &Store) -> Result<(), StoreError> {
    if store.backend() == Backend::Postgres {
        sqlx::query("ANALYZE transactions")
            .execute(store.pool())
            .await?;
    }
    Ok(())
}

/// Whether any posting names one of `account_ids`.
pub async fn any_posting_to(store: &Store, account_ids: [&str; 4]) -> Result<bool, StoreError> {
    let found: Option<i64> =
        sqlx::query_scalar("SELECT 1 FROM postings WHERE account_id IN ($1, $2, $3, $4) LIMIT 1")
            .bind(account_ids[0])
            .bind(account_ids[1])
            .bind(account_ids[2])
            .bind(account_ids[3])
            .fetch_optional(store.pool())
            .await?;
    Ok(found.is_some())
}

/// The business that holds the account numbered `number`.
pub async fn business_of_account(
    store: &Store,
    number: &str,
) -> Result<Option<String>, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT business_id FROM accounts WHERE account_number = $1")
            .bind(number)
            .fetch_optional(store.pool())
            .await?,
    )
}

/// The numbers of the business's active accounts, the richest first.
pub async fn active_accounts_by_balance(
    store: &Store,
    business_id: &str,
) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT account_number FROM accounts WHERE business_id = $1 AND status = 'active' \
         ORDER BY balance DESC, account_number",
    )
    .bind(business_id)
    .fetch_all(store.pool())
    .await?)
}

/// Adds `total` kobo to the account's balance in one update, its last update at `last_at`,
/// unless the balance would pass `max_balance`; `false` if it would.
pub async fn add_to_balance(
    tx: &mut Tx,
    account_id: &str,
    total: i64,
    last_at: DateTime<Utc>,
    max_balance: i64,
) -> Result<bool, StoreError> {
    let applied = sqlx::query(
        "UPDATE accounts SET balance = balance + $2, last_balance_update = $3, updated_at = $3 \
         WHERE id = $1 AND balance + $2 <= $4",
    )
    .bind(account_id)
    .bind(total)
    .bind(store::timestamp(last_at))
    .bind(max_balance)
    .execute(&mut **tx)
    .await?
    .rows_affected();
    Ok(applied == 1)
}

/// Runs `INSERT INTO <table> (<columns>) VALUES ...` for `rows` (each as many values as
/// columns), [`ROWS_PER_STATEMENT`] at a time.
///
/// On SQLite the placeholders are anonymous (`?`): a numbered one (`$7`) is a named parameter
/// there, and sqlx looks up each parameter's name (`sqlite3_bind_parameter_name`, a walk of the
/// statement's list of names), so binding a statement of n parameters took n²/2 steps: 1.3 s
/// for one statement of 1,000 transactions, about 70 s of CPU per 100,000 seeded credits.
async fn insert_rows(
    tx: &mut Tx,
    backend: Backend,
    table: &str,
    columns: &[&str],
    rows: &[Vec<Value>],
) -> Result<(), StoreError> {
    for chunk in rows.chunks(ROWS_PER_STATEMENT) {
        let mut sql = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
        let mut parameter = 0;
        for (index, _) in chunk.iter().enumerate() {
            if index > 0 {
                sql.push_str(", ");
            }
            sql.push('(');
            for column in 0..columns.len() {
                parameter += 1;
                if column > 0 {
                    sql.push_str(", ");
                }
                match backend {
                    Backend::Sqlite => sql.push('?'),
                    Backend::Postgres => sql.push_str(&format!("${parameter}")),
                }
            }
            sql.push(')');
        }
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for row in chunk {
            for value in row {
                query = match value {
                    Value::Text(text) => query.bind(text.clone()),
                    Value::Int(number) => query.bind(*number),
                    Value::Null => query.bind(None::<String>),
                };
            }
        }
        query.execute(&mut **tx).await?;
    }
    Ok(())
}

/// One value of a multi-row insert.
enum Value {
    Text(String),
    Int(i64),
    Null,
}

/// The rows of a batch of seeded credits, table by table, as [`insert_rows`] takes them.
pub struct SeedRows {
    entries: Vec<Vec<Value>>,
    postings: Vec<Vec<Value>>,
    transactions: Vec<Vec<Value>>,
    settlements: Vec<Vec<Value>>,
}

const ENTRY_COLUMNS: &[&str] = &["id", "business_id", "kind", "created_at"];
const POSTING_COLUMNS: &[&str] = &["id", "entry_id", "account_id", "amount", "created_at"];
const TRANSACTION_COLUMNS: &[&str] = &[
    "id",
    "business_id",
    "account_id",
    "entry_id",
    "sequence",
    "reference_number",
    "transaction_type",
    "category",
    "status",
    "channel",
    "amount",
    "narration_key",
    "narration",
    "session_id",
    "originator_account_number",
    "originator_account_name",
    "originator_bank_code",
    "originator_bank_name",
    "created_at",
];
const SETTLEMENT_COLUMNS: &[&str] = &[
    "id",
    "business_id",
    "account_id",
    "reference",
    "amount",
    "status",
    "settlement_date",
    "created_at",
];

impl SeedRows {
    pub fn with_capacity(batch: usize) -> SeedRows {
        SeedRows {
            entries: Vec::with_capacity(batch),
            postings: Vec::with_capacity(2 * batch),
            transactions: Vec::with_capacity(batch),
            settlements: Vec::with_capacity(batch),
        }
    }

    /// The rows of `credit`: its journal entry, two postings (out of NIP settlement, into the
    /// account), the transaction and the settlement.
    pub fn push(&mut self, credit: &SeededCredit<'_>) {
        let at = store::timestamp(credit.at);
        let text = |value: &str| Value::Text(value.to_owned());
        let amount = credit.amount;
        self.entries.push(vec![
            text(&credit.entry_id),
            text(credit.business_id),
            text("inbound_credit"),
            text(&at),
        ]);
        let sides = [
            (
                &credit.posting_ids[0],
                credit.settlement_account_id,
                -amount,
            ),
            (&credit.posting_ids[1], credit.account_id, amount),
        ];
        for (id, account_id, signed) in sides {
            self.postings.push(vec![
                text(id),
                text(&credit.entry_id),
                text(account_id),
                Value::Int(signed),
                text(&at),
            ]);
        }
        self.transactions.push(vec![
            text(&credit.id),
            text(credit.business_id),
            text(credit.account_id),
            text(&credit.entry_id),
            Value::Int(credit.sequence),
            text(&credit.reference),
            text("credit"),
            text("collection"),
            text("success"),
            text("nip"),
            Value::Int(amount),
            Value::Text(format!("{} {}", credit.narration, credit.reference).to_lowercase()),
            text(&credit.narration),
            Value::Null,
            text("0123456789"),
            text("Seed Originator"),
            text("000013"),
            text("GTBank"),
            text(&at),
        ]);
        self.settlements.push(vec![
            text(&credit.id),
            text(credit.business_id),
            text(credit.account_id),
            text(&credit.reference),
            Value::Int(amount),
            text("success"),
            text(&at),
            Value::Text(at),
        ]);
    }

    /// Inserts every row, table by table, in `tx`.
    pub async fn insert(&self, tx: &mut Tx) -> Result<(), StoreError> {
        let backend = tx.backend();
        let tables = [
            ("journal_entries", ENTRY_COLUMNS, &self.entries),
            ("postings", POSTING_COLUMNS, &self.postings),
            ("transactions", TRANSACTION_COLUMNS, &self.transactions),
            ("settlements", SETTLEMENT_COLUMNS, &self.settlements),
        ];
        for (table, columns, rows) in tables {
            insert_rows(tx, backend, table, columns, rows).await?;
        }
        Ok(())
    }
}
