//! SQL for tests' checks of stored rows, on either store, with no driver type in the test:
//! `kit.sql("SELECT ... WHERE business_id = $1").bind(&id).text().await`.
//!
//! The values a test binds are its own, never a client's: each `$n` becomes a quoted literal
//! (`'it''s'`, `42`, `NULL`), so each store infers the literal's type from the column it meets
//! (a uuid column on PostgreSQL compares with a string literal as with a uuid), and every
//! column is read back as text.

use sqlx::any::AnyRow;
use sqlx::Row;

use super::TestKit;

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

    async fn fetch(self) -> Vec<AnyRow> {
        let text = self.rendered();
        sqlx::query(sqlx::AssertSqlSafe(text.clone()))
            .fetch_all(self.kit.store.pool())
            .await
            .unwrap_or_else(|error| panic!("{text}: {error}"))
    }

    /// Runs the statement; returns how many rows it changed.
    pub async fn execute(self) -> u64 {
        let text = self.rendered();
        sqlx::query(sqlx::AssertSqlSafe(text.clone()))
            .execute(self.kit.store.pool())
            .await
            .unwrap_or_else(|error| panic!("{text}: {error}"))
            .rows_affected()
    }

    /// Every row, each column as text (`None` for NULL).
    pub async fn rows(self) -> Vec<Vec<Option<String>>> {
        self.fetch()
            .await
            .iter()
            .map(|row| (0..row.columns().len()).map(|i| text_of(row, i)).collect())
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

/// Column `index` of `row` as text, whatever the store's type for it.
fn text_of(row: &AnyRow, index: usize) -> Option<String> {
    if let Ok(value) = row.try_get::<Option<String>, _>(index) {
        return value;
    }
    if let Ok(value) = row.try_get::<Option<i64>, _>(index) {
        return value.map(|number| number.to_string());
    }
    if let Ok(value) = row.try_get::<Option<bool>, _>(index) {
        return value.map(|flag| flag.to_string());
    }
    panic!("column {index}: a type tests do not read")
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
