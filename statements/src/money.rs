//! Kobo to naira text: the one place amounts are formatted, for every format.
//!
//! All three work on the integer: no floating point is involved, so `i64::MIN` and
//! `i64::MAX` kobo come out exact.

/// `1234.56`: naira with two decimals, no grouping, `-` for a negative amount. For machine
/// formats (CSV, OFX, camt.053).
pub fn decimal(kobo: i64) -> String {
    let (sign, naira, rest) = split(kobo);
    format!("{sign}{naira}.{rest:02}")
}

/// `1,234.56`: naira with two decimals and thousands grouped by commas. For people.
pub fn grouped(kobo: i64) -> String {
    let (sign, naira, rest) = split(kobo);
    let digits = naira.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 4);
    out.push_str(sign);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out.push_str(&format!(".{rest:02}"));
    out
}

/// `NGN 1,234.56` (`NGN -1,234.56` below zero): the PDFs' amounts, since `₦` is not in the
/// standard fonts' encoding.
pub fn naira(kobo: i64) -> String {
    format!("NGN {}", grouped(kobo))
}

/// The sign, the whole naira and the kobo of an amount.
fn split(kobo: i64) -> (&'static str, u64, u64) {
    let sign = if kobo < 0 { "-" } else { "" };
    let magnitude = kobo.unsigned_abs();
    (sign, magnitude / 100, magnitude % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals() {
        assert_eq!(decimal(0), "0.00");
        assert_eq!(decimal(5), "0.05");
        assert_eq!(decimal(123_456), "1234.56");
        assert_eq!(decimal(-5), "-0.05");
        assert_eq!(decimal(-100), "-1.00");
        assert_eq!(decimal(i64::MAX), "92233720368547758.07");
        assert_eq!(decimal(i64::MIN), "-92233720368547758.08");
    }

    #[test]
    fn grouping() {
        assert_eq!(grouped(0), "0.00");
        assert_eq!(grouped(99_999), "999.99");
        assert_eq!(grouped(100_000), "1,000.00");
        assert_eq!(grouped(123_456_789), "1,234,567.89");
        assert_eq!(grouped(-123_456_789), "-1,234,567.89");
        assert_eq!(grouped(i64::MIN), "-92,233,720,368,547,758.08");
        assert_eq!(naira(150_000_050), "NGN 1,500,000.50");
        assert_eq!(naira(-1), "NGN -0.01");
    }
}
