//! Amounts: integer kobo in, decimal strings out, never a float in between.
//!
//! A request amount is the spec's `RequestAmount` (`"5000"`, `"5000.5"`, `"5000.50"`: at most
//! 15 integer digits and 2 fraction digits), so the largest is 99 999 999 999 999 999 kobo,
//! about 10^17, and fits an `i64` (9.2 × 10^18) ninety-two times over. A balance may not exceed
//! [`MAX_BALANCE`] (10^18 kobo), so adding any amount to any balance cannot overflow. Sums over
//! many rows are `i128`: the database adds them in two limbs ([`limbs_sql`]) whose partial sums
//! stay far inside a `BIGINT`, and [`Total::from_limbs`] joins them.

use std::fmt;

/// The largest amount a request may carry, in kobo.
pub const MAX_AMOUNT: i64 = 99_999_999_999_999_999;

/// The largest balance an account may hold, in kobo (10 quadrillion naira).
pub const MAX_BALANCE: i64 = 1_000_000_000_000_000_000;

/// The split of a sum into limbs: each row adds `amount / LIMB` to the high limb and
/// `amount % LIMB` to the low one.
const LIMB: i64 = 1_000_000_000;

/// A positive amount of kobo.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Kobo(i64);

impl Kobo {
    /// Parses a request amount: digits, optionally `.` and one or two digits; positive; at
    /// most [`MAX_AMOUNT`]. `None` for anything else.
    pub fn parse(text: &str) -> Option<Kobo> {
        let (whole, fraction) = match text.split_once('.') {
            Some((whole, fraction)) => (whole, fraction),
            None => (text, ""),
        };
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(whole) || whole.len() > 15 || (whole.len() > 1 && whole.starts_with('0')) {
            return None;
        }
        if text.contains('.') && (!digits(fraction) || fraction.len() > 2) {
            return None;
        }
        let naira: i64 = whole.parse().ok()?;
        let kobo: i64 = match fraction.len() {
            0 => 0,
            1 => fraction.parse::<i64>().ok()? * 10,
            _ => fraction.parse().ok()?,
        };
        let total = naira.checked_mul(100)?.checked_add(kobo)?;
        (total > 0 && total <= MAX_AMOUNT).then_some(Kobo(total))
    }

    /// An amount read back from the database (a positive `BIGINT`).
    pub fn from_stored(kobo: i64) -> Option<Kobo> {
        (kobo > 0).then_some(Kobo(kobo))
    }

    pub fn get(self) -> i64 {
        self.0
    }
}

impl fmt::Display for Kobo {
    /// Two fraction digits: `15000.00`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&amount_text(i128::from(self.0)))
    }
}

/// Kobo as an amount string: two fraction digits (`"15000.00"`, `"-0.50"`).
pub fn amount_text(kobo: i128) -> String {
    let sign = if kobo < 0 { "-" } else { "" };
    let magnitude = kobo.unsigned_abs();
    format!("{sign}{}.{:02}", magnitude / 100, magnitude % 100)
}

/// Kobo as a balance string: nine fraction digits (`"15000.000000000"`).
pub fn balance_text(kobo: i128) -> String {
    format!("{}0000000", amount_text(kobo))
}

/// A sum of amounts, exact whatever the number of rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Total(pub i128);

impl Total {
    /// Joins the two limbs [`limbs_sql`] computes.
    pub fn from_limbs(high: i64, low: i64) -> Total {
        Total(i128::from(high) * i128::from(LIMB) + i128::from(low))
    }

    pub fn amount_text(self) -> String {
        amount_text(self.0)
    }

    pub fn balance_text(self) -> String {
        balance_text(self.0)
    }
}

/// SQL for the two limbs of `SUM(column)`, as `<alias>_high` and `<alias>_low`: each partial
/// sum is a `BIGINT` on both stores (SQLite's `SUM` fails on overflow; PostgreSQL's returns
/// `NUMERIC`, which `sqlx::Any` cannot decode), and neither comes near overflowing: a row adds
/// at most 10^9 to either.
pub fn limbs_sql(column: &str, alias: &str) -> String {
    format!(
        "CAST(COALESCE(SUM({column} / {LIMB}), 0) AS BIGINT) AS {alias}_high, \
         CAST(COALESCE(SUM({column} % {LIMB}), 0) AS BIGINT) AS {alias}_low"
    )
}

/// [`limbs_sql`] for a column that only rows matching `condition` add to.
pub fn limbs_sql_where(column: &str, condition: &str, alias: &str) -> String {
    format!(
        "CAST(COALESCE(SUM(CASE WHEN {condition} THEN {column} / {LIMB} ELSE 0 END), 0) AS BIGINT) \
           AS {alias}_high, \
         CAST(COALESCE(SUM(CASE WHEN {condition} THEN {column} % {LIMB} ELSE 0 END), 0) AS BIGINT) \
           AS {alias}_low"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_amounts_parse_exactly() {
        assert_eq!(Kobo::parse("5000"), Some(Kobo(500_000)));
        assert_eq!(Kobo::parse("5000.5"), Some(Kobo(500_050)));
        assert_eq!(Kobo::parse("5000.50"), Some(Kobo(500_050)));
        assert_eq!(Kobo::parse("0.01"), Some(Kobo(1)));
        assert_eq!(Kobo::parse("0.1"), Some(Kobo(10)));
        assert_eq!(
            Kobo::parse("999999999999999.99"),
            Some(Kobo(MAX_AMOUNT)),
            "the largest amount the spec allows"
        );
        for bad in [
            "",
            "0",
            "0.00",
            "-1",
            "1.",
            ".5",
            "1.234",
            "01",
            "1e3",
            "1 000",
            "+1",
            "1000000000000000",
            "１２",
            "NaN",
        ] {
            assert_eq!(Kobo::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn amounts_render_with_two_or_nine_digits() {
        assert_eq!(Kobo(1_500_000).to_string(), "15000.00");
        assert_eq!(Kobo(5).to_string(), "0.05");
        assert_eq!(balance_text(0), "0.000000000");
        assert_eq!(balance_text(245_000_000), "2450000.000000000");
        assert_eq!(amount_text(-50), "-0.50");
        assert_eq!(
            Kobo(MAX_AMOUNT).to_string(),
            "999999999999999.99",
            "round trip of the largest amount"
        );
    }

    #[test]
    fn limbs_join_beyond_a_bigint() {
        // 200 of the largest balances: more than an i64 holds.
        let rows = vec![MAX_BALANCE; 200];
        let high: i64 = rows.iter().map(|v| v / LIMB).sum();
        let low: i64 = rows.iter().map(|v| v % LIMB).sum();
        assert_eq!(
            Total::from_limbs(high, low).0,
            i128::from(MAX_BALANCE) * 200
        );
        assert!(i128::from(MAX_BALANCE) * 200 > i128::from(i64::MAX));
        assert_eq!(Total::from_limbs(0, 1_234).amount_text(), "12.34");
        assert_eq!(
            Total::from_limbs(MAX_AMOUNT / LIMB, MAX_AMOUNT % LIMB).amount_text(),
            "999999999999999.99"
        );
    }
}
