//! Deleting what can no longer matter, so the credential tables stay bounded: sessions, OTPs,
//! throttles and request budgets past their use, idempotency keys past their 24 hours, webhook events (and their
//! attempts) past their 30 days unless still queued. Logs, members, roles and invitations are
//! history and are kept.
//!
//! [`purge_expired`] is safe to run from several processes at once and at any interval; `kobo
//! serve` should run it every few minutes.

use chrono::{DateTime, Duration, Utc};

use crate::datastore::{events, otps, request_budgets, sessions, throttles};
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
    pub request_budgets: u64,
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
        // A budget whose next request was due a minute ago is full again: as if it had no row.
        request_budgets: request_budgets::purge_full(store, now - Duration::minutes(1)).await?,
    })
}
