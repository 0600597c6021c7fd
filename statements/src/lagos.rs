//! Lagos time: UTC+01:00 all year (West Africa Time, no daylight saving).
//!
//! A statement's days are Lagos days, and every time a person reads is a Lagos time, labelled
//! as such ([`LABEL`]). The machine formats write the +01:00 offset with each time.

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveTime, TimeZone, Utc};

/// How a human format names the time zone of its times.
pub const LABEL: &str = "Lagos time (WAT, UTC+01:00)";

/// UTC+01:00.
pub fn offset() -> FixedOffset {
    FixedOffset::east_opt(3600).expect("one hour east is a valid offset")
}

/// The same instant on a Lagos clock.
pub fn time(at: DateTime<Utc>) -> DateTime<FixedOffset> {
    at.with_timezone(&offset())
}

/// The Lagos day an instant falls on.
pub fn date(at: DateTime<Utc>) -> NaiveDate {
    time(at).date_naive()
}

/// 00:00:00 Lagos on `day`: where a statement starting that day opens.
pub fn start_of_day(day: NaiveDate) -> DateTime<FixedOffset> {
    at(day, NaiveTime::MIN)
}

/// 23:59:59 Lagos on `day`: the last second of a statement ending that day.
pub fn end_of_day(day: NaiveDate) -> DateTime<FixedOffset> {
    at(
        day,
        NaiveTime::from_hms_opt(23, 59, 59).expect("a valid time"),
    )
}

fn at(day: NaiveDate, time: NaiveTime) -> DateTime<FixedOffset> {
    offset()
        .from_local_datetime(&day.and_time(time))
        .single()
        .expect("a fixed offset maps each local time to one instant")
}

/// ISO 8601 with the offset, to the second: `2026-11-26T14:03:27+01:00`.
pub fn iso(at: DateTime<Utc>) -> String {
    iso_fixed(time(at))
}

/// ISO 8601 of a time already on the Lagos clock.
pub fn iso_fixed(at: DateTime<FixedOffset>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

/// For people, to the minute: `2026-11-26 14:03`.
pub fn minute(at: DateTime<Utc>) -> String {
    time(at).format("%Y-%m-%d %H:%M").to_string()
}

/// For people, to the second: `2026-11-26 14:03:27`.
pub fn second(at: DateTime<Utc>) -> String {
    time(at).format("%Y-%m-%d %H:%M:%S").to_string()
}

/// A day for people: `1 Nov 2026`.
pub fn day(day: NaiveDate) -> String {
    day.format("%-d %b %Y").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lagos_is_an_hour_ahead_of_utc() {
        let at = Utc.with_ymd_and_hms(2026, 10, 31, 23, 30, 5).unwrap();
        assert_eq!(iso(at), "2026-11-01T00:30:05+01:00");
        assert_eq!(date(at), NaiveDate::from_ymd_opt(2026, 11, 1).unwrap());
        assert_eq!(minute(at), "2026-11-01 00:30");
        let first = NaiveDate::from_ymd_opt(2026, 11, 1).unwrap();
        assert_eq!(
            start_of_day(first).with_timezone(&Utc),
            Utc.with_ymd_and_hms(2026, 10, 31, 23, 0, 0).unwrap()
        );
        assert_eq!(iso_fixed(end_of_day(first)), "2026-11-01T23:59:59+01:00");
        assert_eq!(day(first), "1 Nov 2026");
    }
}
