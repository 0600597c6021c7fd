//! Sums of money over many rows, exact beyond an `i64`: SQLite's `SUM` fails on overflow, so
//! the queries add them in two limbs (`SUM(x / 1000000000)` and `SUM(x % 1000000000)`) whose
//! partial sums stay far inside a `BIGINT`, and [`join`] joins them. A row adds at most 10^9 to
//! either limb. The limb is written into each query as a literal: keep it equal to [`LIMB`].

/// The split of a sum into limbs: each row adds `amount / LIMB` to the high limb and
/// `amount % LIMB` to the low one.
pub(crate) const LIMB: i64 = 1_000_000_000;

/// The sum of two limbs.
pub(crate) fn join(high: i64, low: i64) -> i128 {
    i128::from(high) * i128::from(LIMB) + i128::from(low)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limbs_join_beyond_a_bigint() {
        let largest: i64 = 1_000_000_000_000_000_000;
        let rows = vec![largest; 200];
        let high: i64 = rows.iter().map(|v| v / LIMB).sum();
        let low: i64 = rows.iter().map(|v| v % LIMB).sum();
        assert_eq!(join(high, low), i128::from(largest) * 200);
        assert!(i128::from(largest) * 200 > i128::from(i64::MAX));
        assert_eq!(join(0, 1_234), 1_234);
        let amount: i64 = 99_999_999_999_999_999;
        assert_eq!(join(amount / LIMB, amount % LIMB), i128::from(amount));
    }
}
