//! Deleting what can no longer matter, so the credential tables stay bounded: sessions, OTPs
//! and throttles past their use, idempotency keys past their 24 hours, webhook events (and their
//! attempts) past their 30 days unless still queued. Logs, members, roles and invitations are
//! history and are kept.
//!
//! [`purge_expired`] is safe to run from several processes at once and at any interval; `kobo
//! serve` should run it every few minutes.

use chrono::{DateTime, Duration, Utc};

use crate::datastore::{events, otps, sessions, throttles};
use crate::error::{Error, OrInternal};
use crate::kernel::store::Store;
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

pub async fn purge_expired(store: &Store, now: DateTime<Utc>) -> Result<Purged, Error> {
    let cutoff = now - Duration::hours(GRACE_HOURS);
    Ok(Purged {
        sessions: {
            let _turn = store.write_turn().await;
            sessions::purge_finished(store, cutoff).await?
        },
        otps: {
            let _turn = store.write_turn().await;
            otps::purge_expired(store, cutoff).await?
        },
        // A throttle whose window started a day ago has forgotten its failures; a lock never
        // lasts that long.
        throttles: {
            let _turn = store.write_turn().await;
            throttles::purge_expired(store, cutoff).await?
        },
        idempotency_keys: idempotency::purge_expired(store, now).await?,
        known_addresses: {
            let cutoff = now - Duration::days(KNOWN_ADDRESS_DAYS);
            let _turn = store.write_turn().await;
            throttles::purge_known_addresses(store, cutoff).await?
        },
        webhook_events: {
            let cutoff = now - Duration::days(WEBHOOK_EVENT_DAYS);
            let mut tx = store.begin().await?;
            events::purge_attempts(&mut tx, cutoff).await?;
            let deleted = events::purge(&mut tx, cutoff).await?;
            tx.commit().await.or_internal()?;
            deleted
        },
    })
}

#[cfg(test)]
mod tests {
    use crate::datastore::events::{PURGE_ATTEMPTS, PURGE_EVENTS};
    use crate::datastore::idempotency_keys::PURGE_EXPIRED;
    use crate::kernel::store::Backend;
    use crate::testkit::TestKit;

    /// The deletes by time that a pass makes on the tables every payout grows, which on
    /// SQLite run holding the write turn, and the index each must read through.
    const BY_TIME: [(&str, &str); 3] = [
        ("idempotency_keys_created", PURGE_EXPIRED),
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
