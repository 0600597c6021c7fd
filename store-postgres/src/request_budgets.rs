//! `request_budgets`: each credential's request budget, shared by every process on the
//! database (a GCRA: the theoretical arrival time `tat` of the credential's next request).

use chrono::{DateTime, TimeDelta, Utc};

use crate::Pool;
use crate::StoreError;

/// What [`claim`] answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claimed {
    /// The units are the caller's to spend.
    Granted,
    /// Not enough room: the claim would fit after this long.
    Refused { wait: TimeDelta },
}

/// Claims `units` requests of `credential`'s budget at once, all or none: each costs
/// `interval` (a minute over the requests allowed per minute), and the budget holds `burst`
/// of them. One statement; its time is the database's, the same for every process.
pub async fn claim(
    pool: &Pool,
    credential: &str,
    units: i64,
    interval: TimeDelta,
    burst: i64,
) -> Result<Claimed, StoreError> {
    let interval_us = interval.num_microseconds().unwrap_or(i64::MAX);
    let cost_us = interval_us.saturating_mul(units);
    let room_us = interval_us.saturating_mul(burst);
    pool.run(async |pool| {
        let row = sqlx::query!(
            r#"WITH claimed AS (
                 INSERT INTO request_budgets AS b (credential, tat)
                 VALUES ($1, now() + $2::bigint * interval '1 microsecond')
                 ON CONFLICT (credential) DO UPDATE
                   SET tat = greatest(b.tat, now()) + $2::bigint * interval '1 microsecond'
                   WHERE greatest(b.tat, now()) + $2::bigint * interval '1 microsecond'
                         <= now() + $3::bigint * interval '1 microsecond'
                 RETURNING tat
               )
               SELECT EXISTS (SELECT 1 FROM claimed) AS "granted!",
                      (SELECT (extract(epoch FROM greatest(b.tat, now())
                                 + $2::bigint * interval '1 microsecond'
                                 - now() - $3::bigint * interval '1 microsecond') * 1000000)::bigint
                         FROM request_budgets b WHERE b.credential = $1) AS wait_us"#,
            credential,
            cost_us,
            room_us
        )
        .fetch_one(&mut *pool)
        .await?;
        Ok(if row.granted {
            Claimed::Granted
        } else {
            Claimed::Refused {
                wait: TimeDelta::microseconds(row.wait_us.unwrap_or(interval_us).max(1)),
            }
        })
    })
    .await
}

/// Deletes the budgets that are full again before `cutoff` (their credential made no request
/// since); returns how many.
pub async fn purge_full(pool: &Pool, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
    pool.run(async |pool| {
        Ok(
            sqlx::query!("DELETE FROM request_budgets WHERE tat < $1", cutoff)
                .execute(&mut *pool)
                .await?
                .rows_affected(),
        )
    })
    .await
}
