//! Sums of money over many rows, exact beyond an `i64`: the database adds them in two limbs
//! ([`limbs_sql`]) whose partial sums stay far inside a `BIGINT` on both stores (SQLite's `SUM`
//! fails on overflow; PostgreSQL's returns `NUMERIC`, which `sqlx::Any` cannot decode), and
//! [`read`] joins them. A row adds at most 10^9 to either limb.

use sqlx::any::AnyRow;
use sqlx::Row;

use super::StoreError;

/// The split of a sum into limbs: each row adds `amount / LIMB` to the high limb and
/// `amount % LIMB` to the low one.
const LIMB: i64 = 1_000_000_000;

/// SQL for the two limbs of `SUM(column)`, as `<alias>_high` and `<alias>_low`.
pub(super) fn limbs_sql(column: &str, alias: &str) -> String {
    format!(
        "CAST(COALESCE(SUM({column} / {LIMB}), 0) AS BIGINT) AS {alias}_high, \
         CAST(COALESCE(SUM({column} % {LIMB}), 0) AS BIGINT) AS {alias}_low"
    )
}

/// [`limbs_sql`] for a column that only rows matching `condition` add to.
pub(super) fn limbs_sql_where(column: &str, condition: &str, alias: &str) -> String {
    format!(
        "CAST(COALESCE(SUM(CASE WHEN {condition} THEN {column} / {LIMB} ELSE 0 END), 0) AS BIGINT) \
           AS {alias}_high, \
         CAST(COALESCE(SUM(CASE WHEN {condition} THEN {column} % {LIMB} ELSE 0 END), 0) AS BIGINT) \
           AS {alias}_low"
    )
}

/// The sum `alias` of `row`, joined from its limbs.
pub(super) fn read(row: &AnyRow, alias: &str) -> Result<i128, StoreError> {
    let high: i64 = row.try_get(format!("{alias}_high").as_str())?;
    let low: i64 = row.try_get(format!("{alias}_low").as_str())?;
    Ok(join(high, low))
}

fn join(high: i64, low: i64) -> i128 {
    i128::from(high) * i128::from(LIMB) + i128::from(low)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limbs_join_beyond_a_bigint() {
        // 200 of the largest balances (10^18 kobo): more than an i64 holds.
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
