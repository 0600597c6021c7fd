//! Bulk loading for `kobo bench` (sandbox stores only): an account's history written many rows
//! a statement, and the few reads the benchmark tools make.
//!
//! A batch of rows is bound as one JSON array of rows and inserted with
//! `INSERT ... SELECT ... FROM json_each(?1)`: a static, checked statement per table and chunk
//! (no statement built from the number of rows, and no parameter list to walk when binding).

use chrono::{DateTime, Utc};

pub use kobo_store::seeding::SeededCredit;

use crate::{json_string, timestamp, Store, StoreError, Tx};

/// Rows per `INSERT`.
const ROWS_PER_STATEMENT: usize = 1_000;

/// One value of a seeded row.
enum Value<'a> {
    Text(&'a str),
    Int(i64),
    Null,
}

/// `values` as a JSON array (one row of a table).
fn json_row(values: &[Value<'_>]) -> String {
    let mut row = String::from("[");
    for (index, value) in values.iter().enumerate() {
        if index > 0 {
            row.push(',');
        }
        match value {
            Value::Text(text) => json_string(&mut row, text),
            Value::Int(number) => row.push_str(&number.to_string()),
            Value::Null => row.push_str("null"),
        }
    }
    row.push(']');
    row
}

/// `rows` (each a JSON array) as JSON arrays of at most [`ROWS_PER_STATEMENT`] rows.
fn chunks(rows: &[String]) -> impl Iterator<Item = String> + '_ {
    rows.chunks(ROWS_PER_STATEMENT)
        .map(|chunk| format!("[{}]", chunk.join(",")))
}

/// The rows of a batch of seeded credits, table by table, each row a JSON array.
pub struct SeedRows {
    entries: Vec<String>,
    postings: Vec<String>,
    transactions: Vec<String>,
    settlements: Vec<String>,
}

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
        use Value::{Int, Null, Text};
        let at = timestamp(credit.at);
        let amount = credit.amount;
        self.entries.push(json_row(&[
            Text(&credit.entry_id),
            Text(credit.business_id),
            Text("inbound_credit"),
            Text(&at),
        ]));
        let sides = [
            (
                &credit.posting_ids[0],
                credit.settlement_account_id,
                -amount,
            ),
            (&credit.posting_ids[1], credit.account_id, amount),
        ];
        for (id, account_id, signed) in sides {
            self.postings.push(json_row(&[
                Text(id),
                Text(&credit.entry_id),
                Text(account_id),
                Int(signed),
                Text(&at),
            ]));
        }
        let narration_key = format!("{} {}", credit.narration, credit.reference).to_lowercase();
        self.transactions.push(json_row(&[
            Text(&credit.id),
            Text(credit.business_id),
            Text(credit.account_id),
            Text(&credit.entry_id),
            Int(credit.sequence),
            Text(&credit.reference),
            Text("credit"),
            Text("collection"),
            Text("success"),
            Text("nip"),
            Int(amount),
            Text(&narration_key),
            Text(&credit.narration),
            Null,
            Text("0123456789"),
            Text("Seed Originator"),
            Text("000013"),
            Text("GTBank"),
            Text(&at),
            Int(credit.balance_after),
        ]));
        self.settlements.push(json_row(&[
            Text(&credit.id),
            Text(credit.business_id),
            Text(credit.account_id),
            Text(&credit.reference),
            Int(amount),
            Text("success"),
            Text(&at),
            Text(&at),
        ]));
    }

    /// Inserts every row, table by table, in `tx`.
    pub async fn insert(&self, tx: &mut Tx) -> Result<(), StoreError> {
        for rows in chunks(&self.entries) {
            sqlx::query!(
                "INSERT INTO journal_entries (id, business_id, kind, created_at) \
                 SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3 \
                 FROM json_each(?1) ORDER BY key",
                rows
            )
            .execute(&mut **tx)
            .await?;
        }
        for rows in chunks(&self.postings) {
            sqlx::query!(
                "INSERT INTO postings (id, entry_id, account_id, amount, created_at) \
                 SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4 \
                 FROM json_each(?1) ORDER BY key",
                rows
            )
            .execute(&mut **tx)
            .await?;
        }
        for rows in chunks(&self.transactions) {
            sqlx::query!(
                "INSERT INTO transactions (id, business_id, account_id, entry_id, sequence, \
                   reference_number, transaction_type, category, status, channel, amount, \
                   narration_key, narration, session_id, originator_account_number, \
                   originator_account_name, originator_bank_code, originator_bank_name, \
                   created_at, balance_after) \
                 SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, \
                   value ->> 5, value ->> 6, value ->> 7, value ->> 8, value ->> 9, \
                   value ->> 10, value ->> 11, value ->> 12, value ->> 13, value ->> 14, \
                   value ->> 15, value ->> 16, value ->> 17, value ->> 18, value ->> 19 \
                 FROM json_each(?1) ORDER BY key",
                rows
            )
            .execute(&mut **tx)
            .await?;
        }
        for rows in chunks(&self.settlements) {
            sqlx::query!(
                "INSERT INTO settlements (id, business_id, account_id, reference, amount, \
                   status, settlement_date, created_at) \
                 SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, \
                   value ->> 5, value ->> 6, value ->> 7 \
                 FROM json_each(?1) ORDER BY key",
                rows
            )
            .execute(&mut **tx)
            .await?;
        }
        Ok(())
    }
}

kobo_store::seeding_functions!(backend crate::Backend);

impl kobo_store::seeding::Seeding for crate::Backend {
    async fn analyze_transactions(_store: &Store) -> Result<(), StoreError> {
        Ok(())
    }

    async fn any_posting_to(store: &Store, account_ids: [&str; 4]) -> Result<bool, StoreError> {
        let found = sqlx::query_scalar!(
            r#"SELECT 1 AS "one!: i64" FROM postings WHERE account_id IN (?1, ?2, ?3, ?4) LIMIT 1"#,
            account_ids[0],
            account_ids[1],
            account_ids[2],
            account_ids[3]
        )
        .fetch_optional(store.pool())
        .await?;
        Ok(found.is_some())
    }

    async fn business_of_account(
        store: &Store,
        number: &str,
    ) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar!(
            "SELECT business_id FROM accounts WHERE account_number = ?1",
            number
        )
        .fetch_optional(store.pool())
        .await?)
    }

    async fn active_accounts_by_balance(
        store: &Store,
        business_id: &str,
    ) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar!(
            "SELECT account_number FROM accounts WHERE business_id = ?1 AND status = 'active' \
         ORDER BY balance DESC, account_number",
            business_id
        )
        .fetch_all(store.pool())
        .await?)
    }

    async fn add_to_balance(
        tx: &mut Tx,
        account_id: &str,
        total: i64,
        last_at: DateTime<Utc>,
        max_balance: i64,
    ) -> Result<Option<i64>, StoreError> {
        let last_at = timestamp(last_at);
        Ok(sqlx::query_scalar!(
            "UPDATE accounts SET balance = balance + ?2, last_balance_update = ?3, \
               updated_at = ?3 \
             WHERE id = ?1 AND balance + ?2 <= ?4 RETURNING balance",
            account_id,
            total,
            last_at,
            max_balance
        )
        .fetch_optional(&mut **tx)
        .await?)
    }
}
