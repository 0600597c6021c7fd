//! How a store fails, classified where the failure arises ([`From<sqlx::Error>`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// What the store fails with, classified where the failure arises ([`From<sqlx::Error>`]):
/// the database out of reach now (a client should retry), a uniqueness that refused a write
/// (the caller may know what it means), or anything else (a bug, or data the code cannot
/// read). The source is kept for the log.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database cannot be reached or written now: a restart or failover, a connection
    /// lost, no connection free in time, SQLite's disk full or read-only.
    #[error("the database cannot be reached or written")]
    Unavailable(#[source] sqlx::Error),
    /// A unique constraint refused the write.
    #[error("a uniqueness constraint refused the write")]
    Conflict(#[source] sqlx::Error),
    /// The database refused a statement for another reason: a mistake in it or in the data.
    #[error("the database refused a statement")]
    Failed(#[source] sqlx::Error),
    /// A stored value the code cannot read.
    #[error("an unreadable stored value: {0}")]
    Unreadable(String),
    /// The work was not kept: it shared a group commit (SQLite's writers, a business's
    /// payouts on PostgreSQL) that failed, for `reason`, as every member of the group is told.
    /// `retry`: the database was unavailable, and the work may be sent again (`97`); otherwise
    /// a failure the group's own members caused (`96`).
    #[error("the group commit this work shared failed: {reason}")]
    GroupUndone { reason: String, retry: bool },
    /// A task of the store that the work waited on stopped (the runtime shutting down, a
    /// panic) before it said what happened.
    #[error("the store's task stopped: {0}")]
    Stopped(&'static str),
    /// The store was used against its protocol: a caller's bug, never the database's doing.
    #[error("the store was used against its protocol: {0}")]
    Misuse(String),
    /// The database's answer to a commit was lost (the connection cut after the `COMMIT` was
    /// sent) and whether it was kept could not be found out in time: what was written may be
    /// there or not. Never "unavailable", which says nothing was kept.
    #[error("the outcome of a commit is unknown: {0}")]
    OutcomeUnknown(String),
    /// A batch's key claim ([`crate::batch::KeyClaim`]) found the key stored, unexpired:
    /// another transaction claimed it and committed first. Nothing of the batch may be kept.
    #[error("the Idempotency-Key was claimed by a transaction that committed first")]
    KeyTaken,
}

impl From<sqlx::Error> for StoreError {
    /// Classifies `error`, and notes an SQLite storage failure ([`note_storage_failure`]) so
    /// that the pool replaces the connections that saw it.
    fn from(error: sqlx::Error) -> StoreError {
        note_storage_failure(&error);
        if unavailable(&error) {
            StoreError::Unavailable(error)
        } else if is_unique_violation(&error) {
            StoreError::Conflict(error)
        } else {
            StoreError::Failed(error)
        }
    }
}

impl StoreError {
    /// Whether the database is out of reach (`Unavailable`), or the group the work shared
    /// failed because it was (`GroupUndone` with `retry`): nothing was kept, send it again.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            StoreError::Unavailable(_) | StoreError::GroupUndone { retry: true, .. }
        )
    }

    /// `self` as each member of a failed group is told it.
    pub fn for_group_members(&self) -> StoreError {
        match self {
            StoreError::OutcomeUnknown(unknown) => StoreError::OutcomeUnknown(unknown.clone()),
            error => StoreError::GroupUndone {
                reason: error.to_string(),
                retry: error.is_unavailable(),
            },
        }
    }

    /// Whether a unique constraint refused the write.
    pub fn is_conflict(&self) -> bool {
        matches!(self, StoreError::Conflict(_))
    }
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
            // server shutting down or starting (57P01-57P03), too many connections (53300), a
            // write that reached a server not (or no longer, or not yet) the primary (25006:
            // during a failover, until the address leads to the new primary).
            Some(code) if code.len() == 5 => {
                code.starts_with("08")
                    || matches!(&*code, "57P01" | "57P02" | "57P03" | "53300" | "25006")
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

/// Milliseconds from the first call in this process to the last SQLite storage failure (0:
/// none). SQLite connections that saw their files become unwritable (read-only, an I/O error,
/// a full disk) keep answering "attempt to write a readonly database" after the files are
/// writable again (found by `kobo-load chaos --read-only-faults`): the pool closes every
/// connection opened before the last failure when it is next acquired or released, and new
/// ones write again.
static STORAGE_FAILED_AT: AtomicU64 = AtomicU64::new(0);

fn process_millis() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    // Never 0, which means "no failure".
    START.get_or_init(Instant::now).elapsed().as_millis() as u64 + 1
}

/// Records `error` if it is SQLite's files failing (READONLY, IOERR, FULL, CANTOPEN).
pub fn note_storage_failure(error: &sqlx::Error) {
    let sqlite_storage = match error {
        sqlx::Error::Database(database) => database.code().is_some_and(|code| {
            code.len() != 5
                && code
                    .parse::<u32>()
                    .is_ok_and(|code| matches!(code & 0xFF, 8 | 10 | 13 | 14))
        }),
        _ => false,
    };
    if sqlite_storage {
        STORAGE_FAILED_AT.store(process_millis(), Ordering::SeqCst);
    }
}

/// Whether a connection of age `age` was surely opened after the last storage failure (a
/// margin of 2 ms covers the rounding of two clocks read at different moments).
pub fn opened_since_storage_failure(age: Duration) -> bool {
    let failed_at = STORAGE_FAILED_AT.load(Ordering::SeqCst);
    failed_at == 0 || process_millis().saturating_sub(age.as_millis() as u64) > failed_at + 2
}

/// True when `error` is a unique-constraint violation (on either store).
pub fn is_unique_violation(error: &sqlx::Error) -> bool {
    error
        .as_database_error()
        .is_some_and(|db| db.kind() == sqlx::error::ErrorKind::UniqueViolation)
}
