//! `deployment`: the environment the database serves, once recorded.

use chrono::{DateTime, Utc};

use super::{dispatch, StoreError, Tx};

/// The environment recorded for the database, if any.
pub async fn environment(tx: &mut Tx) -> Result<Option<String>, StoreError> {
    dispatch!(tx.on(), deployment::environment())
}

/// Records `environment` unless one is recorded (a concurrent recorder's wins); returns the
/// one recorded.
pub async fn record(
    tx: &mut Tx,
    environment: &str,
    at: DateTime<Utc>,
) -> Result<String, StoreError> {
    dispatch!(tx.on(), deployment::record(environment, at))
}

/// How many businesses the database holds of each environment, told by their credentials:
/// `(sandbox, production)`.
pub async fn businesses_by_environment(tx: &mut Tx) -> Result<(i64, i64), StoreError> {
    dispatch!(tx.on(), deployment::businesses_by_environment())
}
