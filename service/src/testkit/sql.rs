//! SQL for tests' checks of stored rows, on either store, with no driver type in the test:
//! `kit.sql("SELECT ... WHERE business_id = $1").bind(&id).text().await`.
//!
//! The values a test binds are its own, never a client's: each `$n` becomes a quoted literal
//! (`'it''s'`, `42`, `NULL`), so each store infers the literal's type from the column it meets
//! (a uuid column on PostgreSQL compares with a string literal as with a uuid), and every
//! column is read back as text, as SQLite holds it (a PostgreSQL `timestamptz` in SQLite's
//! fixed-width form, a `boolean` as `1` or `0`).

use sqlx::{Column, Row};

use super::TestKit;
use crate::kernel::store::{Backend, Store};

/// A value bound to a test's statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Literal {
    Text(String),
    Int(i64),
    Null,
}

impl From<&str> for Literal {
    fn from(value: &str) -> Literal {
        Literal::Text(value.to_owned())
    }
}

impl From<&String> for Literal {
    fn from(value: &String) -> Literal {
        Literal::Text(value.clone())
    }
}

impl From<String> for Literal {
    fn from(value: String) -> Literal {
        Literal::Text(value)
    }
}

impl From<i64> for Literal {
    fn from(value: i64) -> Literal {
        Literal::Int(value)
    }
}

impl<T: Into<Literal>> From<Option<T>> for Literal {
    fn from(value: Option<T>) -> Literal {
        value.map_or(Literal::Null, Into::into)
    }
}

impl Literal {
    fn sql(&self) -> String {
        match self {
            Literal::Text(text) => format!("'{}'", text.replace('\'', "''")),
            Literal::Int(number) => number.to_string(),
            Literal::Null => "NULL".to_owned(),
        }
    }
}

/// A statement being built: [`TestKit::sql`].
#[must_use = "a statement runs when awaited"]
pub struct Sql<'k> {
    kit: &'k TestKit,
    text: &'k str,
    binds: Vec<Literal>,
}

impl TestKit {
    /// A statement on the kit's store; bind `$1`, `$2`, ... in order, then run it.
    pub fn sql<'k>(&'k self, text: &'k str) -> Sql<'k> {
        Sql {
            kit: self,
            text,
            binds: Vec::new(),
        }
    }
}

impl Sql<'_> {
    /// Binds the next placeholder.
    pub fn bind(mut self, value: impl Into<Literal>) -> Self {
        self.binds.push(value.into());
        self
    }

    fn rendered(&self) -> String {
        render(self.text, &self.binds)
    }

    /// Runs the statement; returns how many rows it changed. A test's change by hand counts as
    /// one of this process's changes to what authentication reads (its sessions are read again
    /// at once, as after the datastore's own).
    pub async fn execute(self) -> u64 {
        let text = self.rendered();
        let query = sqlx::raw_sql(sqlx::AssertSqlSafe(text.clone()));
        let done = match (self.kit.store.sqlite_pool(), self.kit.store.postgres_pool()) {
            (Some(pool), _) => query.execute(pool).await.map(|done| done.rows_affected()),
            (_, Some(pool)) => query.execute(pool).await.map(|done| done.rows_affected()),
            _ => unreachable!("a store is SQLite or PostgreSQL"),
        };
        let changed = done.unwrap_or_else(|error| panic!("{text}: {error}"));
        crate::kernel::store::auth_changed_here();
        changed
    }

    /// Runs the statement in `tx`, a transaction the test holds; returns how many rows it
    /// changed.
    pub async fn execute_in(self, tx: &mut crate::kernel::store::Tx) -> u64 {
        use crate::kernel::store::TxOn;
        let text = self.rendered();
        let query = sqlx::raw_sql(sqlx::AssertSqlSafe(text.clone()));
        let done = match &mut tx.on {
            TxOn::Sqlite(tx) => query
                .execute(&mut **tx)
                .await
                .map(|done| done.rows_affected()),
            TxOn::Postgres(tx) => query
                .execute(&mut **tx.inner())
                .await
                .map(|done| done.rows_affected()),
        };
        done.unwrap_or_else(|error| panic!("{text}: {error}"))
    }

    /// Every row, each column as text (`None` for NULL).
    pub async fn rows(self) -> Vec<Vec<Option<String>>> {
        rows_of(&self.kit.store, &self.rendered())
            .await
            .into_iter()
            .map(|row| row.into_iter().map(|(_, value)| value).collect())
            .collect()
    }

    /// The first column of every row, as text; NULL is a test's mistake here.
    pub async fn texts(self) -> Vec<String> {
        self.rows()
            .await
            .into_iter()
            .map(|row| row.into_iter().next().flatten().expect("a value, not NULL"))
            .collect()
    }

    /// The first column of the first row, if there is a row and it is not NULL.
    pub async fn optional_text(self) -> Option<String> {
        self.rows().await.into_iter().next()?.into_iter().next()?
    }

    /// The first column of the only row, as text.
    pub async fn text(self) -> String {
        let rendered = self.rendered();
        self.optional_text()
            .await
            .unwrap_or_else(|| panic!("{rendered}: no row, or NULL"))
    }

    /// The first column of the first row as a number, if there is one.
    pub async fn optional_int(self) -> Option<i64> {
        let rendered = self.rendered();
        self.optional_text().await.map(|text| {
            text.parse()
                .unwrap_or_else(|_| panic!("{rendered}: {text:?} is no number"))
        })
    }

    /// The first column of the only row as a number (`SELECT COUNT(*) ...`).
    pub async fn int(self) -> i64 {
        let rendered = self.rendered();
        self.optional_int()
            .await
            .unwrap_or_else(|| panic!("{rendered}: no row, or NULL"))
    }
}

/// The rows of one table, each a map of column to its text ([`every_row`]).
pub type TableRows = Vec<std::collections::BTreeMap<String, Option<String>>>;

/// Runs `dump` (many statements: an SQL dump of a database) on the database at `url`, on a
/// connection of its own.
pub async fn load_dump(url: &str, dump: &str) {
    use sqlx::Connection;
    let query = sqlx::raw_sql(sqlx::AssertSqlSafe(dump.to_owned()));
    let loaded = if url.starts_with("sqlite:") {
        let mut connection = sqlx::SqliteConnection::connect(url).await.unwrap();
        // A dump creates the tables in name order: their references are checked once loaded.
        sqlx::raw_sql("PRAGMA foreign_keys = OFF")
            .execute(&mut connection)
            .await
            .unwrap();
        query.execute(&mut connection).await.map(drop)
    } else {
        let mut connection = sqlx::PgConnection::connect(url).await.unwrap();
        query.execute(&mut connection).await.map(drop)
    };
    loaded.unwrap_or_else(|error| panic!("the dump does not load: {error}"));
}

/// Every row of every table of `store` but sqlx's own, by table, each column as text as
/// [`TestKit::sql`] reads it, the rows sorted: two stores' states compare with `==`. A view that
/// replaced a table (PostgreSQL's `settlements`, migration 0023) is read as the table was.
pub async fn every_row(store: &Store) -> std::collections::BTreeMap<String, TableRows> {
    let mut tables = std::collections::BTreeMap::new();
    let names_sql = match store.backend() {
        Backend::Sqlite => {
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        }
        Backend::Postgres => {
            "SELECT table_name::text FROM information_schema.tables \
             WHERE table_schema = 'public' AND table_type IN ('BASE TABLE', 'VIEW')"
        }
    };
    for row in rows_of(store, names_sql).await {
        let table = row[0].1.clone().expect("a table's name");
        if table == "_sqlx_migrations" {
            continue;
        }
        let mut rows: TableRows = rows_of(store, &format!("SELECT * FROM \"{table}\""))
            .await
            .into_iter()
            .map(|row| row.into_iter().collect())
            .collect();
        rows.sort();
        tables.insert(table, rows);
    }
    tables
}

/// Every row of `text`, as (column, text) pairs.
async fn rows_of(store: &Store, text: &str) -> Vec<Vec<(String, Option<String>)>> {
    let query = sqlx::raw_sql(sqlx::AssertSqlSafe(text.to_owned()));
    let rows = match (store.sqlite_pool(), store.postgres_pool()) {
        (Some(pool), _) => query.fetch_all(pool).await.map(|rows| {
            rows.iter()
                .map(|row| {
                    (0..row.columns().len())
                        .map(|i| (row.column(i).name().to_owned(), sqlite_text(row, i)))
                        .collect()
                })
                .collect()
        }),
        (_, Some(pool)) => query.fetch_all(pool).await.map(|rows| {
            rows.iter()
                .map(|row| {
                    (0..row.columns().len())
                        .map(|i| (row.column(i).name().to_owned(), postgres_text(row, i)))
                        .collect()
                })
                .collect()
        }),
        _ => unreachable!("a store is SQLite or PostgreSQL"),
    };
    rows.unwrap_or_else(|error| panic!("{text}: {error}"))
}

/// `text` with each placeholder `$n` replaced by the literal of the `n`th value; a placeholder
/// without its value is the test's mistake.
fn render(text: &str, binds: &[Literal]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '$' || !chars.peek().is_some_and(char::is_ascii_digit) {
            out.push(c);
            continue;
        }
        let mut number = String::new();
        while let Some(digit) = chars.next_if(char::is_ascii_digit) {
            number.push(digit);
        }
        let index: usize = number.parse().expect("a placeholder's number");
        let literal = index
            .checked_sub(1)
            .and_then(|index| binds.get(index))
            .unwrap_or_else(|| panic!("{text}: ${index} has no value bound"));
        out.push_str(&literal.sql());
    }
    out
}

/// Column `index` of an SQLite row as text (SQLite's values are text, integers or reals).
fn sqlite_text(row: &sqlx::sqlite::SqliteRow, index: usize) -> Option<String> {
    if let Ok(value) = row.try_get::<Option<String>, _>(index) {
        return value;
    }
    if let Ok(value) = row.try_get::<Option<i64>, _>(index) {
        return value.map(|number| number.to_string());
    }
    if let Ok(value) = row.try_get::<Option<f64>, _>(index) {
        return value.map(|number| number.to_string());
    }
    panic!(
        "column {}: a type tests do not read",
        row.column(index).name()
    )
}

/// Column `index` of a PostgreSQL row as text, written as SQLite's column would hold it: a
/// time in the fixed-width form, a flag as `1` or `0`, so one check reads both stores.
fn postgres_text(row: &sqlx::postgres::PgRow, index: usize) -> Option<String> {
    use chrono::{DateTime, NaiveDate, Utc};
    if let Ok(value) = row.try_get::<Option<String>, _>(index) {
        return value;
    }
    if let Ok(value) = row.try_get::<Option<i64>, _>(index) {
        return value.map(|number| number.to_string());
    }
    if let Ok(value) = row.try_get::<Option<i32>, _>(index) {
        return value.map(|number| number.to_string());
    }
    if let Ok(value) = row.try_get::<Option<i16>, _>(index) {
        return value.map(|number| number.to_string());
    }
    if let Ok(value) = row.try_get::<Option<bool>, _>(index) {
        return value.map(|flag| if flag { "1" } else { "0" }.to_owned());
    }
    if let Ok(value) = row.try_get::<Option<uuid::Uuid>, _>(index) {
        return value.map(|id| id.to_string());
    }
    if let Ok(value) = row.try_get::<Option<DateTime<Utc>>, _>(index) {
        return value.map(crate::kernel::store::timestamp);
    }
    if let Ok(value) = row.try_get::<Option<NaiveDate>, _>(index) {
        return value.map(|day| day.to_string());
    }
    if let Ok(value) = row.try_get::<Option<Vec<String>>, _>(index) {
        return value.map(|items| items.join(","));
    }
    if let Ok(value) = row.try_get::<Option<f64>, _>(index) {
        return value.map(|number| number.to_string());
    }
    panic!(
        "column {}: a type tests do not read",
        row.column(index).name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_quoted_literals() {
        let mut binds = vec![
            Literal::from("it's"),
            Literal::Int(42),
            Literal::Null,
            Literal::from(None::<String>),
        ];
        binds.extend((5..=10).map(|n| Literal::Int(n * 100)));
        assert_eq!(
            render(
                "a = $1 AND b = $2 AND c IS $3 AND d IS $4 AND e = $10 AND f = 'x$'",
                &binds
            ),
            "a = 'it''s' AND b = 42 AND c IS NULL AND d IS NULL AND e = 1000 AND f = 'x$'"
        );
    }
}
