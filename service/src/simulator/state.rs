//! What the simulator keeps across restarts, in one SQLite file of its data directory: the NIP
//! transfers it accepted (so a status query answers the same after a restart) and the inbound
//! credits it was asked to notify, until Kobo acknowledged each one.

use std::path::Path;

use chrono::{DateTime, Utc};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
use sqlx::{Row, SqlitePool};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS transfers (
    payment_reference TEXT PRIMARY KEY,
    -- The request as accepted: the same reference with another body is a duplicate (`26`).
    request TEXT NOT NULL,
    first_seen_micros INTEGER NOT NULL,
    session_id TEXT UNIQUE
);
CREATE TABLE IF NOT EXISTS notifications (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL UNIQUE,
    -- The sender's reference: a credit asked for again under it is the same credit.
    payment_reference TEXT NOT NULL UNIQUE,
    body TEXT NOT NULL,
    created_micros INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_micros INTEGER NOT NULL,
    delivered_micros INTEGER
);
";

/// The simulator's file, `provider.db` in its data directory.
#[derive(Clone, Debug)]
pub struct State {
    pool: SqlitePool,
}

/// A transfer the simulator accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accepted {
    pub request: String,
    pub first_seen: DateTime<Utc>,
}

/// An inbound credit's notification not yet acknowledged by Kobo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    pub id: String,
    pub body: String,
    pub attempts: i64,
}

fn micros(at: DateTime<Utc>) -> i64 {
    at.timestamp_micros()
}

fn time(micros: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(micros).unwrap_or_default()
}

impl State {
    /// Opens (creating it if needed) `provider.db` in `data_dir`.
    pub async fn open(data_dir: &Path) -> anyhow::Result<State> {
        std::fs::create_dir_all(data_dir)?;
        let options = SqliteConnectOptions::new()
            .filename(data_dir.join("provider.db"))
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal);
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await?;
        sqlx::raw_sql(SCHEMA).execute(&pool).await?;
        Ok(State { pool })
    }

    /// Records `reference` as accepted now with `request`, unless it was before: then the
    /// transfer as first accepted.
    pub async fn accept(
        &self,
        reference: &str,
        request: &str,
        now: DateTime<Utc>,
    ) -> anyhow::Result<Accepted> {
        sqlx::query(
            "INSERT INTO transfers (payment_reference, request, first_seen_micros)
             VALUES (?, ?, ?) ON CONFLICT (payment_reference) DO NOTHING",
        )
        .bind(reference)
        .bind(request)
        .bind(micros(now))
        .execute(&self.pool)
        .await?;
        self.transfer(reference)
            .await?
            .ok_or_else(|| anyhow::anyhow!("transfer {reference} vanished after its insert"))
    }

    /// The transfer accepted under `reference`, if any.
    pub async fn transfer(&self, reference: &str) -> anyhow::Result<Option<Accepted>> {
        let row = sqlx::query(
            "SELECT request, first_seen_micros FROM transfers WHERE payment_reference = ?",
        )
        .bind(reference)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|row| Accepted {
            request: row.get(0),
            first_seen: time(row.get(1)),
        }))
    }

    /// Names the NIP session of an accepted transfer, so a status query can ask by it.
    pub async fn name_session(&self, reference: &str, session_id: &str) -> anyhow::Result<()> {
        sqlx::query("UPDATE transfers SET session_id = ? WHERE payment_reference = ?")
            .bind(session_id)
            .bind(reference)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The payment reference of the transfer of NIP session `session_id`.
    pub async fn reference_of(&self, session_id: &str) -> anyhow::Result<Option<String>> {
        let row = sqlx::query("SELECT payment_reference FROM transfers WHERE session_id = ?")
            .bind(session_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|row| row.get(0)))
    }

    /// Queues the notification of an inbound credit, due now, unless one was queued under
    /// `reference` before: returns the session id of the credit queued under it.
    pub async fn queue_notification(
        &self,
        id: &str,
        session_id: &str,
        reference: &str,
        body: &str,
        now: DateTime<Utc>,
    ) -> anyhow::Result<String> {
        sqlx::query(
            "INSERT INTO notifications
               (id, session_id, payment_reference, body, created_micros, next_attempt_micros)
             VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (payment_reference) DO NOTHING",
        )
        .bind(id)
        .bind(session_id)
        .bind(reference)
        .bind(body)
        .bind(micros(now))
        .bind(micros(now))
        .execute(&self.pool)
        .await?;
        let row = sqlx::query("SELECT session_id FROM notifications WHERE payment_reference = ?")
            .bind(reference)
            .fetch_one(&self.pool)
            .await?;
        Ok(row.get(0))
    }

    /// The notifications due at `now`, oldest first.
    pub async fn due(&self, now: DateTime<Utc>) -> anyhow::Result<Vec<Pending>> {
        let rows = sqlx::query(
            "SELECT id, body, attempts FROM notifications
             WHERE delivered_micros IS NULL AND next_attempt_micros <= ?
             ORDER BY created_micros LIMIT 32",
        )
        .bind(micros(now))
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| Pending {
                id: row.get(0),
                body: row.get(1),
                attempts: row.get(2),
            })
            .collect())
    }

    /// Kobo acknowledged notification `id`.
    pub async fn delivered(&self, id: &str, now: DateTime<Utc>) -> anyhow::Result<()> {
        sqlx::query("UPDATE notifications SET delivered_micros = ? WHERE id = ?")
            .bind(micros(now))
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Notification `id` failed; it is due again at `next`.
    pub async fn retry_at(&self, id: &str, next: DateTime<Utc>) -> anyhow::Result<()> {
        sqlx::query(
            "UPDATE notifications SET attempts = attempts + 1, next_attempt_micros = ?
             WHERE id = ?",
        )
        .bind(micros(next))
        .bind(id)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}
