//! What every list shares: keyset cursors, inclusive day ranges and case-insensitive search.
//!
//! Keyset paging orders by `(created_at DESC, id DESC)`; the next page holds the rows strictly
//! after the cursor in that order. It is written as `created_at < $a OR (created_at = $a AND
//! id < $b)` rather than a row comparison, which SQLite and PostgreSQL would both accept but
//! which reads less plainly. Timestamps are fixed-width text, so text order is time order.

use std::num::NonZeroU64;

use crate::kernel::store;
use crate::kernel::Invalid;
use chrono::{DateTime, Days, NaiveDate, NaiveTime, Utc};

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
            created_at: store::as_stored(created_at),
            id,
        })),
        (Some(_), None) => Err(invalid(
            "`cursor_id`: required together with cursor_created_at",
        )),
        (None, Some(_)) => Err(invalid(
            "`cursor_created_at`: required together with cursor_id",
        )),
    }
}

/// `[from, until)`: a range of times, each end open when `None`.
pub type DayRange = (Option<DateTime<Utc>>, Option<DateTime<Utc>>);

/// The bounds of an inclusive range of UTC days: `created_at >= from`
/// and `created_at < until`. `01` when `start` is after `end`; `prefix` is how the fields are
/// named in the message (`filters.` or nothing).
pub fn day_range(
    start: Option<NaiveDate>,
    end: Option<NaiveDate>,
    prefix: &str,
) -> Result<DayRange, Invalid> {
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

fn start_of_day(day: NaiveDate) -> DateTime<Utc> {
    day.and_time(NaiveTime::MIN).and_utc()
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

/// A keyset page of `rows` (read with one row more than `limit`), each shown by `view`, its
/// cursor the `(created_at, id)` of its last row (`key`) when more follow.
pub fn keyset_page<R, T, E>(
    mut rows: Vec<R>,
    limit: u64,
    key: impl Fn(&R) -> (DateTime<Utc>, uuid::Uuid),
    view: impl FnMut(R) -> Result<T, E>,
) -> Result<Page<Vec<T>>, E> {
    let has_more = trim_to_page(&mut rows, limit);
    let last = rows.last().map(key);
    Ok(Page {
        data: rows.into_iter().map(view).collect::<Result<_, _>>()?,
        pagination: keyset_pagination(has_more, last, limit),
    })
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
            Ok(Some(Cursor { created_at: at, id }))
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
                Some("2026-11-01T00:00:00Z".parse().unwrap()),
                Some("2026-11-03T00:00:00Z".parse().unwrap())
            )
        );
        assert_eq!(day_range(None, None, "").unwrap(), (None, None));
        let error = day_range(day("2026-11-03"), day("2026-11-02"), "filters.").unwrap_err();
        assert_eq!(
            error.message(),
            "`filters.start_date`: must not be after filters.end_date"
        );
    }
}
