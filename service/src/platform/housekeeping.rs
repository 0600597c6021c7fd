//! Deleting what can no longer matter, so the credential tables stay bounded: sessions, OTPs
//! and throttles past their use, idempotency keys past their 24 hours, webhook events (and their
//! attempts) past their 30 days unless still queued. Logs, members, roles and invitations are
//! history and are kept.
//!
//! [`purge_expired`] is safe to run from several processes at once and at any interval; `kobo
//! serve` should run it every few minutes.

use chrono::{DateTime, Duration, Utc};

use crate::error::{Error, OrInternal};
use crate::kernel::store::{self, Store};
use crate::platform::idempotency;

/// How long a finished session or OTP is kept, for whoever investigates an incident.
pub const GRACE_HOURS: i64 = 24;

/// How long an address a credential succeeded from stays known (see `throttle`).
pub const KNOWN_ADDRESS_DAYS: i64 = 90;

/// How long webhook events are listed and replayable (the spec's `fetch_webhook_events`).
pub const WEBHOOK_EVENT_DAYS: i64 = 30;

/// What one [`purge_expired`] deleted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Purged {
    pub sessions: u64,
    pub otps: u64,
    pub throttles: u64,
    pub idempotency_keys: u64,
    pub known_addresses: u64,
    pub webhook_events: u64,
}

/// The attempts of the events [`PURGE_EVENTS`] deletes (`$1`: the cutoff).
const PURGE_ATTEMPTS: &str = "DELETE FROM webhook_attempts WHERE event_id IN \
     (SELECT id FROM events WHERE created_at < $1 AND delivery_status <> 'pending')";

/// Webhook events past their days, unless still queued (`$1`: the cutoff); through
/// `events_created`, whose predicate is this `WHERE`'s.
const PURGE_EVENTS: &str =
    "DELETE FROM events WHERE created_at < $1 AND delivery_status <> 'pending'";

pub async fn purge_expired(store: &Store, now: DateTime<Utc>) -> Result<Purged, Error> {
    let cutoff = store::timestamp(now - Duration::hours(GRACE_HOURS));
    let delete = |sql: &'static str| {
        let cutoff = cutoff.clone();
        async move {
            let _turn = store.write_turn().await;
            sqlx::query(sql)
                .bind(cutoff)
                .execute(store.pool())
                .await
                .map(|done| done.rows_affected())
                .or_internal()
        }
    };
    Ok(Purged {
        sessions: delete("DELETE FROM sessions WHERE expires_at < $1 OR revoked_at < $1").await?,
        otps: delete("DELETE FROM otps WHERE expires_at < $1").await?,
        // A throttle whose window started a day ago has forgotten its failures; a lock never
        // lasts that long.
        throttles: delete(
            "DELETE FROM throttles WHERE window_started_at < $1 \
             AND (locked_until IS NULL OR locked_until < $1)",
        )
        .await?,
        idempotency_keys: idempotency::purge_expired(store, now).await?,
        known_addresses: {
            let cutoff = store::timestamp(now - Duration::days(KNOWN_ADDRESS_DAYS));
            let _turn = store.write_turn().await;
            sqlx::query("DELETE FROM known_addresses WHERE last_success_at < $1")
                .bind(cutoff)
                .execute(store.pool())
                .await
                .or_internal()?
                .rows_affected()
        },
        webhook_events: {
            let cutoff = store::timestamp(now - Duration::days(WEBHOOK_EVENT_DAYS));
            let mut tx = store.begin().await?;
            sqlx::query(PURGE_ATTEMPTS)
                .bind(&cutoff)
                .execute(&mut *tx)
                .await
                .or_internal()?;
            let deleted = sqlx::query(PURGE_EVENTS)
                .bind(&cutoff)
                .execute(&mut *tx)
                .await
                .or_internal()?
                .rows_affected();
            tx.commit().await.or_internal()?;
            deleted
        },
    })
}

#[cfg(test)]
mod tests {
    use super::{PURGE_ATTEMPTS, PURGE_EVENTS};
    use crate::kernel::store::Backend;
    use crate::platform::idempotency;
    use crate::testkit::TestKit;

    /// The deletes by time that a pass makes on the tables every payout grows, which on
    /// SQLite run holding the write turn, and the index each must read through.
    const BY_TIME: [(&str, &str); 3] = [
        ("idempotency_keys_created", idempotency::PURGE_EXPIRED),
        ("events_created", PURGE_ATTEMPTS),
        ("events_created", PURGE_EVENTS),
    ];

    /// Each reads only the expired rows, through an index on their time, instead of the whole
    /// table. (PostgreSQL, on a kit's tiny tables, is told not to prefer a scan.)
    async fn purges_read_only_what_expired(kit: TestKit) {
        let mut connection = kit.store.pool().acquire().await.unwrap();
        let sqlite = kit.store.backend() == Backend::Sqlite;
        if !sqlite {
            sqlx::query("SET enable_seqscan = off")
                .execute(&mut *connection)
                .await
                .unwrap();
        }
        for (index, statement) in BY_TIME {
            let explain = if sqlite {
                format!(
                    "EXPLAIN QUERY PLAN {}",
                    statement.replace("$1", "'2026-01-01'")
                )
            } else {
                format!("EXPLAIN {}", statement.replace("$1", "'2026-01-01'"))
            };
            let rows = sqlx::query(sqlx::AssertSqlSafe(explain))
                .persistent(false)
                .fetch_all(&mut *connection)
                .await
                .unwrap();
            let plan: Vec<String> = rows
                .iter()
                .map(|row| {
                    use sqlx::Row;
                    let column = if sqlite { "detail" } else { "QUERY PLAN" };
                    row.try_get::<String, _>(column).unwrap()
                })
                .collect();
            assert!(
                plan.iter().any(|line| line.contains(index)),
                "{statement}: {plan:#?}"
            );
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn purges_read_only_what_expired_sqlite() {
        purges_read_only_what_expired(TestKit::sqlite().await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn purges_read_only_what_expired_postgres() {
        purges_read_only_what_expired(TestKit::postgres().await).await;
    }
}
