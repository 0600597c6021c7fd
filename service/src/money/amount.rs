//! Amounts: integer kobo in, decimal strings out, never a float in between.
//!
//! A request amount is the spec's `RequestAmount` (`"5000"`, `"5000.5"`, `"5000.50"`: at most
//! 15 integer digits and 2 fraction digits), so the largest is 99 999 999 999 999 999 kobo,
//! about 10^17, and fits an `i64` (9.2 × 10^18) ninety-two times over. A balance may not exceed
//! [`MAX_BALANCE`] (10^18 kobo), so adding any amount to any balance cannot overflow. Sums over
//! many rows are `i128` ([`Total`]), summed exactly by the datastore (`datastore::sums`).

use std::fmt;

/// The largest amount a request may carry, in kobo.
pub const MAX_AMOUNT: i64 = 99_999_999_999_999_999;

/// The largest balance an account may hold, in kobo (10 quadrillion naira).
pub const MAX_BALANCE: i64 = 1_000_000_000_000_000_000;

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
    pub fn amount_text(self) -> String {
        amount_text(self.0)
    }

    pub fn balance_text(self) -> String {
        balance_text(self.0)
    }
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
}
