//! What every list shares: keyset cursors, inclusive day ranges, case-insensitive search and
//! queries whose filters are only known at run time.
//!
//! Keyset paging orders by `(created_at DESC, id DESC)`; the next page holds the rows strictly
//! after the cursor in that order. It is written as `created_at < $a OR (created_at = $a AND
//! id < $b)` rather than a row comparison, which SQLite and PostgreSQL would both accept but
//! which reads less plainly. Timestamps are fixed-width text, so text order is time order.

use std::num::NonZeroU64;

use chrono::{DateTime, Days, NaiveDate, NaiveTime, Utc};
use sqlx::any::{AnyArguments, AnyRow};
use sqlx::{Any, AssertSqlSafe};

use crate::kernel::store::{self, StoreError};
use crate::kernel::Invalid;

/// One page of a list and where the next starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Page<T> {
    pub data: T,
    pub pagination: Pagination,
}

/// Where a page stands: whether more follow, the cursor of the next page (keyset paging) or
/// the page's number (numbered paging), and the page size applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pagination {
    pub has_more: bool,
    pub next_cursor_created_at: Option<DateTime<Utc>>,
    pub next_cursor_id: Option<uuid::Uuid>,
    pub page: Option<NonZeroU64>,
    pub page_size: NonZeroU64,
}

/// The largest page any list returns.
pub const PAGE_SIZE_MAX: u64 = 100;

pub use kobo_store::paging::Cursor;

/// Both cursor fields or neither; `01` names the missing one.
pub fn keyset_cursor(
    created_at: Option<DateTime<Utc>>,
    id: Option<uuid::Uuid>,
) -> Result<Option<Cursor>, Invalid> {
    match (created_at, id) {
        (None, None) => Ok(None),
        (Some(created_at), Some(id)) => Ok(Some(Cursor {
            created_at: store::timestamp(created_at),
            id: id.to_string(),
        })),
        (Some(_), None) => Err(invalid(
            "`cursor_id`: required together with cursor_created_at",
        )),
        (None, Some(_)) => Err(invalid(
            "`cursor_created_at`: required together with cursor_id",
        )),
    }
}

/// The bounds of an inclusive range of UTC days as stored timestamps: `created_at >= from`
/// and `created_at < until`. `01` when `start` is after `end`; `prefix` is how the fields are
/// named in the message (`filters.` or nothing).
pub fn day_range(
    start: Option<NaiveDate>,
    end: Option<NaiveDate>,
    prefix: &str,
) -> Result<(Option<String>, Option<String>), Invalid> {
    if let (Some(start), Some(end)) = (start, end) {
        if start > end {
            return Err(invalid(format!(
                "`{prefix}start_date`: must not be after {prefix}end_date"
            )));
        }
    }
    let from = start.map(start_of_day);
    let until = match end {
        Some(end) => Some(
            end.checked_add_days(Days::new(1))
                .map(start_of_day)
                .ok_or_else(|| invalid(format!("`{prefix}end_date`: out of range")))?,
        ),
        None => None,
    };
    Ok((from, until))
}

fn start_of_day(day: NaiveDate) -> String {
    store::timestamp(day.and_time(NaiveTime::MIN).and_utc())
}

/// A `LIKE` pattern matching `needle` anywhere, lower-cased, with `\`, `%` and `_` escaped
/// (use with `ESCAPE '\'`).
pub fn contains_pattern(needle: &str) -> String {
    let mut pattern = String::with_capacity(needle.len() + 2);
    pattern.push('%');
    for c in needle.to_lowercase().chars() {
        if matches!(c, '\\' | '%' | '_') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// Page queries ask for one row more than the page holds: drops that row, if it came, and tells
/// whether it did (`has_more`).
pub fn trim_to_page<T>(items: &mut Vec<T>, page_size: u64) -> bool {
    let has_more = items.len() as u64 > page_size;
    items.truncate(page_size as usize);
    has_more
}

/// The pagination object of a keyset page: the cursor of its last item when more follow.
pub fn keyset_pagination(
    has_more: bool,
    last: Option<(DateTime<Utc>, uuid::Uuid)>,
    page_size: u64,
) -> Pagination {
    let (next_cursor_created_at, next_cursor_id) = match (has_more, last) {
        (true, Some((created_at, id))) => (Some(created_at), Some(id)),
        _ => (None, None),
    };
    Pagination {
        has_more,
        next_cursor_created_at,
        next_cursor_id,
        page: None,
        page_size: page_size_value(page_size),
    }
}

/// The pagination object of a numbered page.
pub fn numbered_pagination(has_more: bool, page: u64, page_size: u64) -> Pagination {
    Pagination {
        has_more,
        next_cursor_created_at: None,
        next_cursor_id: None,
        page: std::num::NonZeroU64::new(page),
        page_size: page_size_value(page_size),
    }
}

fn page_size_value(page_size: u64) -> std::num::NonZeroU64 {
    std::num::NonZeroU64::new(page_size.clamp(1, PAGE_SIZE_MAX)).expect("clamped to at least 1")
}

/// A bound value of a [`Sql`] query.
#[derive(Clone, Debug)]
pub enum Arg {
    Text(String),
    Int(i64),
}

impl From<String> for Arg {
    fn from(value: String) -> Self {
        Arg::Text(value)
    }
}

impl From<&str> for Arg {
    fn from(value: &str) -> Self {
        Arg::Text(value.to_owned())
    }
}

impl From<i64> for Arg {
    fn from(value: i64) -> Self {
        Arg::Int(value)
    }
}

/// A query assembled at run time: SQL text with `$n` placeholders and their values in order.
/// Only placeholders carry values; the text itself comes from literals in this crate.
#[derive(Clone, Debug, Default)]
pub struct Sql {
    text: String,
    args: Vec<Arg>,
}

impl Sql {
    pub fn new(text: &str) -> Sql {
        Sql {
            text: text.to_owned(),
            args: Vec::new(),
        }
    }

    /// Adds a value and returns its placeholder.
    pub fn arg(&mut self, value: impl Into<Arg>) -> String {
        self.args.push(value.into());
        format!("${}", self.args.len())
    }

    pub fn push(&mut self, text: &str) -> &mut Sql {
        self.text.push_str(text);
        self
    }

    /// Adds ` LIMIT n`, the number written into the text, not bound.
    ///
    /// SQLite reads a bound `LIMIT` when it plans the statement, and so marks the statement
    /// to be planned again whenever that parameter is bound again, that is, on every
    /// execution: parsing and planning a page's query each time was a tenth of the server's
    /// time in a run of transaction pages. `OFFSET` has no such effect and stays bound. A
    /// number is not user text, and a page size has few values, so the cached statements stay
    /// few.
    pub fn limit(&mut self, n: u64) -> &mut Sql {
        self.text.push_str(&format!(" LIMIT {n}"));
        self
    }

    #[cfg(test)]
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn query(&self) -> sqlx::query::Query<'static, Any, AnyArguments> {
        let mut query = sqlx::query(AssertSqlSafe(self.text.clone()));
        for arg in &self.args {
            query = match arg {
                Arg::Text(value) => query.bind(value.clone()),
                Arg::Int(value) => query.bind(*value),
            };
        }
        query
    }

    pub async fn fetch_all<'e, E>(&self, executor: E) -> Result<Vec<AnyRow>, StoreError>
    where
        E: sqlx::Executor<'e, Database = Any>,
    {
        Ok(self.query().fetch_all(executor).await?)
    }
}

/// Conditions joined with `AND`, each added with its values.
#[derive(Debug, Default)]
pub struct Conditions {
    parts: Vec<String>,
}

impl Conditions {
    pub fn add(&mut self, condition: String) {
        self.parts.push(condition);
    }

    /// ` WHERE a AND b` or nothing.
    pub fn where_clause(&self) -> String {
        if self.parts.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", self.parts.join(" AND "))
        }
    }
}

fn invalid(message: impl Into<std::borrow::Cow<'static, str>>) -> Invalid {
    Invalid::new(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_fields_come_together() {
        let at: DateTime<Utc> = "2026-11-02T10:31:00Z".parse().unwrap();
        let id = uuid::Uuid::nil();
        assert_eq!(keyset_cursor(None, None), Ok(None));
        assert_eq!(
            keyset_cursor(Some(at), Some(id)),
            Ok(Some(Cursor {
                created_at: "2026-11-02T10:31:00.000000Z".into(),
                id: id.to_string(),
            }))
        );
        let missing = |result: Result<Option<Cursor>, Invalid>| {
            let error = result.unwrap_err();
            error.message().to_owned()
        };
        assert!(missing(keyset_cursor(Some(at), None)).starts_with("`cursor_id`"));
        assert!(missing(keyset_cursor(None, Some(id))).starts_with("`cursor_created_at`"));
    }

    #[test]
    fn day_ranges_are_inclusive_and_ordered() {
        let day = |s: &str| Some(s.parse::<NaiveDate>().unwrap());
        assert_eq!(
            day_range(day("2026-11-01"), day("2026-11-02"), "").unwrap(),
            (
                Some("2026-11-01T00:00:00.000000Z".into()),
                Some("2026-11-03T00:00:00.000000Z".into())
            )
        );
        assert_eq!(day_range(None, None, "").unwrap(), (None, None));
        let error = day_range(day("2026-11-03"), day("2026-11-02"), "filters.").unwrap_err();
        assert_eq!(
            error.message(),
            "`filters.start_date`: must not be after filters.end_date"
        );
    }

    #[test]
    fn search_patterns_escape_wildcards() {
        assert_eq!(contains_pattern("Create_Customer"), "%create\\_customer%");
        assert_eq!(contains_pattern("50%"), "%50\\%%");
    }

    #[test]
    fn placeholders_number_in_order() {
        let mut sql = Sql::new("SELECT 1 FROM t WHERE ");
        let a = sql.arg("x");
        let b = sql.arg(5i64);
        sql.push(&format!("a = {a} AND b = {b}"));
        assert_eq!(sql.text(), "SELECT 1 FROM t WHERE a = $1 AND b = $2");
    }
}
