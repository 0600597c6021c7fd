//! Sums of money over many rows, exact beyond an `i64`: PostgreSQL's `SUM` of a `bigint` is a
//! `numeric`, read back as its text (no decimal crate needed) and parsed to an `i128`.

use crate::StoreError;

/// A `numeric` sum read as text (`SUM(x)::text`); `None` (no row) is 0.
pub(crate) fn read(text: Option<String>) -> Result<i128, StoreError> {
    match text {
        None => Ok(0),
        Some(text) => text
            .parse::<i128>()
            .map_err(|error| StoreError::Unreadable(format!("sum {text:?}: {error}"))),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sums_beyond_a_bigint_are_read() {
        let largest = i128::from(1_000_000_000_000_000_000_i64) * 200;
        assert_eq!(super::read(Some(largest.to_string())).unwrap(), largest);
        assert_eq!(super::read(None).unwrap(), 0);
        assert!(super::read(Some("1.5".into())).is_err());
    }
}
