//! A commit whose answer was lost: found out before anyone is answered.
//!
//! When the connection breaks after a `COMMIT` was sent (a pooler killed, a network cut, a
//! server stopping), PostgreSQL may have committed or not, and the driver's error cannot
//! tell. Saying "nothing was kept, retry" then pays twice whenever it was kept. So a
//! transaction that moves money names a [`Witness`]: a row its work writes and nothing else
//! does, under a ledger head its work holds. If its `COMMIT` fails in a way that may have
//! committed ([`may_have_committed`]), [`find_out`] asks the database, on another
//! connection: it first takes the head's row lock shared, which waits for the transaction if
//! PostgreSQL is still finishing it, then looks for the witness, with a snapshot taken after
//! the wait. Found: committed. Not found: not committed, and never will be (the transaction
//! ended). This holds after a failover too, where a transaction id could be another's: the
//! rows are the truth, not the id.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use crate::{Pool, StoreError};

/// The most time [`find_out`] spends asking: past it, the outcome is unknown.
pub const FIND_OUT_MAX: Duration = Duration::from_secs(10);

/// How long one attempt waits for the head's lock before it tries again.
const LOCK_WAIT: &str = "SET LOCAL lock_timeout = '2s'";

/// Between attempts while the database cannot be reached.
const PAUSE: Duration = Duration::from_millis(200);

/// What tells whether a transaction committed: the business whose ledger head it advanced (so
/// holds until it ends), and the transfer it wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    pub business_id: String,
    pub transfer_id: String,
}

/// Commits whose answer was lost, by what [`find_out`] found out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LostCommits {
    pub kept: u64,
    pub not_kept: u64,
    pub unknown: u64,
}

/// [`LostCommits`] as a pool counts them.
#[derive(Debug, Default)]
pub(crate) struct Lost {
    kept: AtomicU64,
    not_kept: AtomicU64,
    unknown: AtomicU64,
}

impl Lost {
    pub(crate) fn read(&self) -> LostCommits {
        LostCommits {
            kept: self.kept.load(Ordering::SeqCst),
            not_kept: self.not_kept.load(Ordering::SeqCst),
            unknown: self.unknown.load(Ordering::SeqCst),
        }
    }
}

/// Whether `error`, from a `COMMIT`, leaves the outcome open. PostgreSQL's own refusal of the
/// commit (a serialization failure, a deferred constraint, a transaction already aborted)
/// means it was not kept; a broken connection, a protocol error, or a server that ended the
/// session (`57P01` may follow a commit whose wait for a synchronous standby was cancelled:
/// committed locally) do not say.
pub fn may_have_committed(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Database(database) => !database
            .code()
            .and_then(|code| code.get(..2).map(str::to_owned))
            .is_some_and(|class| matches!(class.as_str(), "40" | "23" | "25")),
        _ => true,
    }
}

/// Finds out whether the transaction that wrote `witness` committed, after its `COMMIT`
/// failed with `error`: `Ok(())` if it did; the error as unavailable if it did not (nothing was
/// kept: the caller may say so); [`StoreError::OutcomeUnknown`] if the database could not tell
/// within `within`.
pub async fn find_out(
    pool: &Pool,
    witness: &Witness,
    error: sqlx::Error,
    within: Duration,
) -> Result<(), StoreError> {
    let found = find_out_within(pool, witness, error, within).await;
    let counter = match &found {
        Ok(()) => &pool.lost.kept,
        Err(StoreError::OutcomeUnknown(_)) => &pool.lost.unknown,
        Err(_) => &pool.lost.not_kept,
    };
    counter.fetch_add(1, Ordering::SeqCst);
    found
}

async fn find_out_within(
    pool: &Pool,
    witness: &Witness,
    error: sqlx::Error,
    within: Duration,
) -> Result<(), StoreError> {
    let deadline = Instant::now() + within;
    let mut last = error.to_string();
    loop {
        match tokio::time::timeout_at(deadline, kept(pool, witness)).await {
            Ok(Ok(Some(true))) => {
                tracing::warn!(
                    transfer = %witness.transfer_id,
                    error = %error,
                    "a commit's answer was lost: it committed"
                );
                return Ok(());
            }
            Ok(Ok(Some(false))) => {
                tracing::warn!(
                    transfer = %witness.transfer_id,
                    error = %error,
                    "a commit's answer was lost: it did not commit"
                );
                return Err(StoreError::Unavailable(error));
            }
            // The head's lock was not free in time, or the database not reachable: again.
            Ok(Ok(None)) => last = "the head's lock is still held".to_owned(),
            Ok(Err(StoreError::Unavailable(unavailable))) => last = unavailable.to_string(),
            Ok(Err(other)) => return Err(unknown(witness, &error, &other.to_string())),
            Err(_) => return Err(unknown(witness, &error, &last)),
        }
        if Instant::now() + PAUSE >= deadline {
            return Err(unknown(witness, &error, &last));
        }
        tokio::time::sleep(PAUSE).await;
    }
}

fn unknown(witness: &Witness, error: &sqlx::Error, last: &str) -> StoreError {
    tracing::error!(
        transfer = %witness.transfer_id,
        error = %error,
        last = %last,
        "a commit's answer was lost and its outcome could not be found out"
    );
    StoreError::OutcomeUnknown(format!(
        "the answer to the commit of transfer {} was lost ({error}), and the database could \
         not tell whether it was kept ({last})",
        witness.transfer_id
    ))
}

/// One attempt: `Some(kept)`, or `None` when the head's lock was not granted in time.
async fn kept(pool: &Pool, witness: &Witness) -> Result<Option<bool>, StoreError> {
    let business_id = crate::id(&witness.business_id);
    let transfer_id = crate::id(&witness.transfer_id);
    let mut tx = pool.begin().await?;
    sqlx::raw_sql(LOCK_WAIT).execute(&mut *tx).await?;
    let held = sqlx::query_scalar!(
        "SELECT business_id FROM ledger_heads WHERE business_id = $1 FOR SHARE",
        business_id
    )
    .fetch_optional(&mut *tx)
    .await;
    let head = match held {
        Ok(head) => head,
        // lock_not_available: the transaction still holds the head.
        Err(sqlx::Error::Database(database)) if database.code().as_deref() == Some("55P03") => {
            return Ok(None)
        }
        Err(error) => return Err(error.into()),
    };
    // A new statement, so a new snapshot: it sees the transaction's work if it committed.
    let kept = sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM transfers WHERE id = $1) AS "kept!""#,
        transfer_id
    )
    .fetch_one(&mut *tx)
    .await?;
    tx.rollback().await?;
    // Without a head row there was no lock to wait on: a transaction still finishing (the
    // one that made the head) would not be seen yet, so only a witness found is an answer.
    Ok((kept || head.is_some()).then_some(kept))
}
