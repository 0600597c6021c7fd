//! Writes whose results nobody reads, sent to the database together.
//!
//! Every statement of a transaction costs a round trip on PostgreSQL and, on SQLite, a handoff
//! to the connection's thread and back while this process's write turn is held. A payout
//! writes about ten rows nobody reads back (its journal entry and postings, its transactions,
//! its transfer, events, audit entry, stored answer): a [`Batch`] sends them as one statement.
//! On SQLite the statements are one string the driver steps through in order; on PostgreSQL
//! they are the data-modifying parts of one `WITH`, the last the main statement (foreign keys
//! are checked at the end of the statement, so a row may reference one its batch inserts).
//!
//! Each statement is written as it would be alone, with its own `$1`, `$2`, ... ; the batch
//! numbers them on. Nothing here rewrites a `$` inside a quoted literal.

use sqlx::any::AnyArguments;
use sqlx::{Any, Arguments, Encode, Type};

use crate::kernel::store::{Backend, StoreError, Tx};

/// Statements to run as one, in the order they were pushed ([`Batch::run`]).
#[must_use = "a batch writes nothing until it is run"]
#[derive(Default)]
pub struct Batch {
    statements: Vec<String>,
    arguments: AnyArguments,
    /// How many arguments the statements pushed so far name.
    named: usize,
    /// The first mistake in building the batch, reported by [`Batch::run`].
    error: Option<String>,
}

impl Batch {
    pub fn new() -> Batch {
        Batch::default()
    }

    /// Adds `sql`, whose parameters are its own `$1` to `$n`: bind them next, in order.
    pub fn push(&mut self, sql: &str) -> &mut Batch {
        self.check_bound();
        let (renumbered, count) = renumber(sql, self.named);
        self.statements.push(renumbered);
        self.named += count;
        self
    }

    /// Binds the next parameter of the statement last pushed.
    pub fn bind<'q, T>(&mut self, value: T) -> &mut Batch
    where
        T: 'q + Encode<'q, Any> + Type<Any>,
    {
        if let Err(error) = self.arguments.add(value) {
            self.error
                .get_or_insert(format!("a batch's argument: {error}"));
        }
        self
    }

    pub fn is_empty(&self) -> bool {
        self.statements.is_empty()
    }

    pub fn len(&self) -> usize {
        self.statements.len()
    }

    fn check_bound(&mut self) {
        if self.arguments.len() != self.named && self.error.is_none() {
            self.error = Some(format!(
                "a batch's statement {} names {} parameters in all, {} are bound",
                self.statements.len(),
                self.named,
                self.arguments.len()
            ));
        }
    }

    /// The one statement the batch is on `backend`.
    fn sql(&self, backend: Backend) -> String {
        match (backend, self.statements.as_slice()) {
            (_, [only]) => only.clone(),
            (Backend::Sqlite, statements) => statements.join(";\n"),
            (Backend::Postgres, [parts @ .., last]) => {
                let parts: Vec<String> = parts
                    .iter()
                    .enumerate()
                    .map(|(index, part)| format!("batch_{index} AS ({part})"))
                    .collect();
                format!("WITH {}\n{last}", parts.join(",\n"))
            }
            (Backend::Postgres, []) => String::new(),
        }
    }

    /// Runs every statement in `tx`, in one round trip.
    pub async fn run(self, tx: &mut Tx) -> Result<(), StoreError> {
        Ok(self.execute(tx).await?)
    }

    /// [`Batch::run`] answering the database's own error.
    async fn execute(mut self, tx: &mut Tx) -> Result<(), sqlx::Error> {
        if self.is_empty() {
            return Ok(());
        }
        self.check_bound();
        if let Some(error) = self.error.take() {
            return Err(sqlx::Error::Encode(error.into()));
        }
        let sql = self.sql(tx.backend());
        sqlx::query_with(sqlx::AssertSqlSafe(sql), self.arguments)
            .execute(&mut **tx)
            .await?;
        Ok(())
    }
}

/// `sql` with each parameter `$n` outside quotes written `$(n + offset)`, and how many
/// parameters it names (its highest `n`).
fn renumber(sql: &str, offset: usize) -> (String, usize) {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut highest = 0;
    let mut quoted = false;
    let mut chars = sql.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        out.push(c);
        match c {
            '\'' => quoted = !quoted,
            '$' if !quoted => {
                let mut n = 0usize;
                let mut digits = 0;
                while let Some(&(_, d)) = chars.peek() {
                    let Some(value) = d.to_digit(10) else { break };
                    n = n * 10 + value as usize;
                    digits += 1;
                    chars.next();
                }
                if digits > 0 {
                    highest = highest.max(n);
                    out.push_str(&(n + offset).to_string());
                }
            }
            _ => {}
        }
    }
    (out, highest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_numbered_on_and_literals_left_alone() {
        assert_eq!(
            renumber("INSERT INTO t VALUES ($1, $2, '$1', $10, $2)", 5),
            (
                "INSERT INTO t VALUES ($6, $7, '$1', $15, $7)".to_owned(),
                10
            )
        );
        assert_eq!(renumber("SELECT 1", 3), ("SELECT 1".to_owned(), 0));
    }

    #[test]
    fn a_statement_left_unbound_is_reported() {
        let mut batch = Batch::new();
        batch.push("INSERT INTO t VALUES ($1, $2)").bind(1_i64);
        batch.push("INSERT INTO u VALUES ($1)").bind(2_i64);
        assert!(batch
            .error
            .as_deref()
            .unwrap()
            .contains("names 2 parameters in all, 1 are bound"));
    }

    #[test]
    fn the_batch_is_one_statement_on_each_store() {
        let mut batch = Batch::new();
        batch.push("INSERT INTO a VALUES ($1)").bind("x");
        batch
            .push("UPDATE b SET c = $1 WHERE d = $2")
            .bind("y")
            .bind("z");
        batch.push("INSERT INTO e VALUES ($1)").bind(3_i64);
        assert_eq!(
            batch.sql(Backend::Sqlite),
            "INSERT INTO a VALUES ($1);\nUPDATE b SET c = $2 WHERE d = $3;\nINSERT INTO e VALUES ($4)"
        );
        assert_eq!(
            batch.sql(Backend::Postgres),
            "WITH batch_0 AS (INSERT INTO a VALUES ($1)),\n\
             batch_1 AS (UPDATE b SET c = $2 WHERE d = $3)\n\
             INSERT INTO e VALUES ($4)"
        );
    }

    /// On the store: a row may reference one inserted earlier in its batch, and a batch that
    /// fails writes nothing (its transaction rolls back).
    async fn runs_as_one_statement(kit: crate::testkit::TestKit) {
        let store = &kit.store;
        for ddl in [
            "CREATE TABLE batch_parents (id TEXT PRIMARY KEY, name TEXT NOT NULL)",
            "CREATE TABLE batch_children (id TEXT PRIMARY KEY, \
               parent_id TEXT NOT NULL REFERENCES batch_parents (id), amount BIGINT NOT NULL)",
        ] {
            sqlx::query(ddl).execute(store.pool()).await.unwrap();
        }
        let mut tx = store.begin().await.unwrap();
        let mut batch = Batch::new();
        batch
            .push("INSERT INTO batch_parents (id, name) VALUES ($1, $2)")
            .bind("p1")
            .bind("it's $1");
        for (id, amount) in [("c1", 5_i64), ("c2", -7)] {
            batch
                .push("INSERT INTO batch_children (id, parent_id, amount) VALUES ($1, $2, $3)")
                .bind(id)
                .bind("p1")
                .bind(amount);
        }
        batch
            .push("UPDATE batch_parents SET name = $2 WHERE id = $1")
            .bind("p0")
            .bind("none");
        assert_eq!(batch.len(), 4);
        batch.run(&mut tx).await.unwrap();
        tx.commit().await.unwrap();
        let sum: i64 = sqlx::query_scalar(
            "SELECT CAST(SUM(c.amount) AS BIGINT) FROM batch_children c \
             JOIN batch_parents p ON p.id = c.parent_id WHERE p.name = 'it''s $1'",
        )
        .fetch_one(store.pool())
        .await
        .unwrap();
        assert_eq!(sum, -2);

        // The second child repeats an id: nothing of the batch is kept.
        let mut tx = store.begin().await.unwrap();
        let mut batch = Batch::new();
        batch
            .push("INSERT INTO batch_parents (id, name) VALUES ($1, $2)")
            .bind("p2")
            .bind("second");
        batch
            .push("INSERT INTO batch_children (id, parent_id, amount) VALUES ($1, $2, $3)")
            .bind("c1")
            .bind("p2")
            .bind(1_i64);
        let error = batch.run(&mut tx).await.unwrap_err();
        assert!(error.is_conflict(), "{error:?}");
        drop(tx);
        let parents: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM batch_parents")
            .fetch_one(store.pool())
            .await
            .unwrap();
        assert_eq!(parents, 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_as_one_statement_sqlite() {
        runs_as_one_statement(crate::testkit::TestKit::sqlite().await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_as_one_statement_postgres() {
        runs_as_one_statement(crate::testkit::TestKit::postgres().await).await;
    }
}
