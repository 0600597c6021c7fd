//! The database: one code path for the embedded SQLite store and for PostgreSQL.
//!
//! Queries go through `sqlx::Any` with `$1`-style placeholders, which both drivers accept.
//! Column conventions (see `migrations/0001_platform.sql`): ids are UUID text, timestamps are
//! fixed-width RFC 3339 text (so text order is time order, which keyset paging relies on),
//! flags are SMALLINT 0/1 (the Any driver cannot decode SQLite booleans), money is BIGINT kobo.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::{DateTime, SecondsFormat, Utc};
use generated_server::ApiError;
use generated_server::OrInternal;
use sha2::{Digest, Sha256};
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{Any, AnyPool, Row, Transaction};

/// A transaction on either store.
pub type Tx = Transaction<'static, Any>;

/// Seconds a client is told to wait (`Retry-After`) when the database is unavailable.
pub const UNAVAILABLE_RETRY_AFTER_SECONDS: u64 = 2;

/// The source-error classifier the API registers ([`generated_server::set_error_classifier`]):
/// a database error that says the database cannot be reached or written *now* answers `97`
/// (service unavailable, with `Retry-After`), not `96`, so clients retry (with the same
/// idempotency key) instead of calling support. Every other error stays internal.
pub fn classify_error(error: &dyn std::any::Any) -> Option<ApiError> {
    let error = error.downcast_ref::<sqlx::Error>()?;
    unavailable(error).then(|| {
        ApiError::new(generated_server::ResponseCode::ServiceUnavailable)
            .with_retry_after_seconds(UNAVAILABLE_RETRY_AFTER_SECONDS)
    })
}

/// Whether `error` is the database being out of reach or unable to write, rather than a
/// mistake in a statement or in the data.
pub fn unavailable(error: &sqlx::Error) -> bool {
    match error {
        // The connection could not be made, or broke (the server restarted, a failover, the
        // network), or no connection freed up in time.
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(database) => match database.code() {
            // PostgreSQL's SQLSTATE (five characters): connection exceptions (class 08), the
            // server shutting down or starting (57P01-57P03), too many connections (53300).
            Some(code) if code.len() == 5 => {
                code.starts_with("08") || matches!(&*code, "57P01" | "57P02" | "57P03" | "53300")
            }
            // SQLite's (extended) result code: BUSY past the busy timeout, READONLY, IOERR,
            // FULL, CANTOPEN.
            Some(code) => code
                .parse::<u32>()
                .is_ok_and(|code| matches!(code & 0xFF, 5 | 8 | 10 | 13 | 14)),
            None => false,
        },
        _ => false,
    }
}

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Which database server is behind the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The connection pool and what kind of database it talks to.
#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
}

impl Store {
    /// Opens `url` (`sqlite://path?mode=rwc` or `postgres://...`). SQLite runs in WAL mode with
    /// foreign keys on and a busy timeout, so concurrent readers never block the writer.
    pub async fn connect(url: &str) -> Result<Store> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Backend::Postgres
        } else {
            anyhow::bail!("unsupported database URL {url:?}: use sqlite://PATH or postgres://...");
        };
        let options = AnyPoolOptions::new()
            .max_connections(match backend {
                Backend::Sqlite => 8,
                Backend::Postgres => 16,
            })
            .acquire_timeout(Duration::from_secs(10))
            // A connection that comes back still inside a transaction is closed, not reused:
            // when a COMMIT fails (SQLite's disk full), the database has rolled back but the
            // driver still counts the transaction, and every later BEGIN on that connection
            // would fail ("begin_with at non-zero transaction depth") long after the disk
            // has room again. Found by `kobo-load chaos --disk-faults`. On SQLite the queued
            // rollback of a dropped transaction is flushed first (a round trip to its thread);
            // PostgreSQL's driver counts it as done when queued.
            .after_release(move |connection, _| {
                Box::pin(async move {
                    if backend == Backend::Sqlite {
                        sqlx::Connection::ping(&mut *connection).await?;
                    }
                    Ok(!sqlx::Connection::is_in_transaction(&*connection))
                })
            });
        let options = match backend {
            Backend::Sqlite => options.after_connect(|connection, _| {
                Box::pin(async move {
                    sqlx::query("PRAGMA journal_mode = WAL")
                        .execute(&mut *connection)
                        .await?;
                    sqlx::query("PRAGMA busy_timeout = 10000")
                        .execute(&mut *connection)
                        .await?;
                    sqlx::query("PRAGMA foreign_keys = ON")
                        .execute(&mut *connection)
                        .await?;
                    Ok(())
                })
            }),
            Backend::Postgres => options,
        };
        let pool = options
            .connect(url)
            .await
            .with_context(|| format!("cannot open the database at {}", redact_url(url)))?;
        Ok(Store { pool, backend })
    }

    /// The URL of an SQLite store kept in `data_dir` (created if missing).
    pub fn sqlite_url_in(data_dir: &Path) -> Result<String> {
        std::fs::create_dir_all(data_dir)
            .with_context(|| format!("cannot create the data directory {}", data_dir.display()))?;
        Ok(format!(
            "sqlite://{}?mode=rwc",
            data_dir.join("kobo.db").display()
        ))
    }

    /// Applies the embedded migrations that have not run yet.
    pub async fn migrate(&self) -> Result<()> {
        MIGRATOR
            .run(&self.pool)
            .await
            .context("cannot apply the database migrations")
    }

    /// A short fingerprint of the embedded migrations (their versions and checksums): two
    /// databases migrated by builds with the same fingerprint have the same schema.
    pub fn schema_fingerprint() -> String {
        let mut digest = Sha256::new();
        for migration in MIGRATOR.iter() {
            digest.update(migration.version.to_le_bytes());
            digest.update(&migration.checksum);
        }
        hex::encode(&digest.finalize()[..6])
    }

    /// Closes every connection of the pool (waiting for those in use to be returned).
    pub async fn close(&self) {
        self.pool.close().await;
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Starts a transaction for writes. On SQLite it takes the write lock at once
    /// (`BEGIN IMMEDIATE`): a deferred transaction that later needs to write can fail with
    /// "database is locked" instead of waiting its turn.
    pub async fn begin(&self) -> Result<Tx, ApiError> {
        let tx = match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => self.pool.begin().await,
        };
        tx.or_internal()
    }

    /// Checks that the database answers (for `/readyz`).
    pub async fn ping(&self) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT 1")
            .execute(&self.pool)
            .await
            .map(|_| ())
    }
}

/// Hides the password of a database URL in messages.
fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let credentials = &url[scheme_end + 3..at];
            match credentials.split_once(':') {
                Some((user, _password)) => {
                    format!("{}{user}:***{}", &url[..scheme_end + 3], &url[at..])
                }
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

/// Any database failure is an internal error: logged with its detail and the caller's
/// location, never shown. For `Result`s, `.or_internal()` keeps the location too.
#[track_caller]
pub fn internal(error: impl std::fmt::Display) -> ApiError {
    ApiError::internal(error)
}

/// True when `error` is a unique-constraint violation (on either store).
pub fn is_unique_violation(error: &sqlx::Error) -> bool {
    error
        .as_database_error()
        .is_some_and(|db| db.kind() == sqlx::error::ErrorKind::UniqueViolation)
}

/// A new random id.
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Formats a timestamp the way every column stores it: fixed-width, microseconds, `Z`.
pub fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Reads a timestamp column back.
pub fn parse_timestamp(text: &str) -> Result<DateTime<Utc>, ApiError> {
    DateTime::parse_from_rfc3339(text)
        .map(|at| at.with_timezone(&Utc))
        .map_err(|error| internal(format!("bad timestamp {text:?} in the database: {error}")))
}

/// Reads a SMALLINT 0/1 flag column.
pub fn flag(row: &AnyRow, column: &str) -> Result<bool, ApiError> {
    let value: i64 = row.try_get(column).or_internal()?;
    Ok(value != 0)
}

/// Reads a text column.
pub fn text(row: &AnyRow, column: &str) -> Result<String, ApiError> {
    row.try_get(column).or_internal()
}

/// Reads a nullable text column.
pub fn optional_text(row: &AnyRow, column: &str) -> Result<Option<String>, ApiError> {
    row.try_get(column).or_internal()
}

/// Reads a UUID text column.
pub fn uuid(row: &AnyRow, column: &str) -> Result<uuid::Uuid, ApiError> {
    let value = text(row, column)?;
    uuid::Uuid::from_str(&value)
        .map_err(|error| internal(format!("bad uuid {value:?} in column {column}: {error}")))
}

/// Reads a timestamp text column.
pub fn time(row: &AnyRow, column: &str) -> Result<DateTime<Utc>, ApiError> {
    parse_timestamp(&text(row, column)?)
}

/// Reads a nullable timestamp text column.
pub fn optional_time(row: &AnyRow, column: &str) -> Result<Option<DateTime<Utc>>, ApiError> {
    optional_text(row, column)?
        .map(|value| parse_timestamp(&value))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_out_of_reach_is_unavailable_not_internal() {
        for error in [
            sqlx::Error::PoolTimedOut,
            sqlx::Error::PoolClosed,
            sqlx::Error::Io(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)),
        ] {
            let classified = classify_error(&error).expect("unavailable");
            assert_eq!(
                classified.code(),
                generated_server::ResponseCode::ServiceUnavailable
            );
            assert_eq!(
                classified.retry_after_seconds(),
                Some(UNAVAILABLE_RETRY_AFTER_SECONDS)
            );
        }
        // A mistake stays internal, and so does any error that is not the database's.
        assert!(classify_error(&sqlx::Error::RowNotFound).is_none());
        assert!(classify_error(&"some other error").is_none());
    }

    /// A statement that fills the disk makes SQLite roll the whole transaction back by itself
    /// while the driver still counts it open; the connection must not go back into use, or
    /// every later BEGIN on it fails ("begin_with at non-zero transaction depth"), long after
    /// the disk has room again. Found by `kobo-load chaos --disk-faults`.
    #[tokio::test]
    async fn a_transaction_rolled_back_by_a_full_disk_does_not_poison_the_pool() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::connect(&Store::sqlite_url_in(dir.path()).unwrap())
            .await
            .unwrap();
        let mut tx = store.begin().await.unwrap();
        sqlx::query("CREATE TABLE filler (x BLOB)")
            .execute(&mut *tx)
            .await
            .unwrap();
        let pages: i64 = sqlx::query_scalar("PRAGMA page_count")
            .fetch_one(&mut *tx)
            .await
            .unwrap();
        // A "disk" exactly as large as the database is now.
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "PRAGMA max_page_count = {pages}"
        )))
        .execute(&mut *tx)
        .await
        .unwrap();
        let full = sqlx::query("INSERT INTO filler (x) VALUES (zeroblob(1000000))")
            .execute(&mut *tx)
            .await
            .unwrap_err();
        assert!(unavailable(&full), "SQLITE_FULL is unavailability: {full}");
        // The disk has room again (on this connection), and the transaction is dropped.
        sqlx::query("PRAGMA max_page_count = 1073741823")
            .execute(&mut *tx)
            .await
            .unwrap();
        drop(tx);
        // One request at a time reuses one connection: every BEGIN must work again.
        for _ in 0..5 {
            let tx = store
                .begin()
                .await
                .expect("a BEGIN after the disk was full");
            tx.commit().await.unwrap();
        }
    }

    #[test]
    fn timestamps_are_fixed_width_so_text_order_is_time_order() {
        let early = timestamp("2026-11-02T09:20:00Z".parse().unwrap());
        let late = timestamp("2026-11-02T09:20:00.5Z".parse().unwrap());
        assert_eq!(early, "2026-11-02T09:20:00.000000Z");
        assert_eq!(late, "2026-11-02T09:20:00.500000Z");
        assert!(early < late);
        assert_eq!(
            parse_timestamp(&late).unwrap(),
            "2026-11-02T09:20:00.5Z".parse::<DateTime<Utc>>().unwrap()
        );
    }

    #[test]
    fn passwords_in_database_urls_are_hidden() {
        assert_eq!(
            redact_url("postgres://kobo:s3cret@db:5432/kobo"),
            "postgres://kobo:***@db:5432/kobo"
        );
        assert_eq!(
            redact_url("postgres://postgres@127.0.0.1/test"),
            "postgres://postgres@127.0.0.1/test"
        );
        assert_eq!(
            redact_url("sqlite://data/kobo.db?mode=rwc"),
            "sqlite://data/kobo.db?mode=rwc"
        );
    }
}
