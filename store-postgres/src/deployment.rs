//! `deployment`: the environment the database serves, once recorded.

use chrono::{DateTime, Utc};

use crate::{StoreError, Tx};

/// The environment recorded for the database, if any.
pub async fn environment(tx: &mut Tx) -> Result<Option<String>, StoreError> {
    Ok(
        sqlx::query_scalar!("SELECT environment FROM deployment WHERE id = 1")
            .fetch_optional(&mut **tx)
            .await?,
    )
}

/// Records `environment` unless one is recorded (a concurrent recorder's wins); returns the
/// one recorded.
pub async fn record(
    tx: &mut Tx,
    environment: &str,
    at: DateTime<Utc>,
) -> Result<String, StoreError> {
    sqlx::query!(
        "INSERT INTO deployment (id, environment, recorded_at) VALUES (1, $1, $2) \
         ON CONFLICT (id) DO NOTHING",
        environment,
        at
    )
    .execute(&mut **tx)
    .await?;
    Ok(
        sqlx::query_scalar!("SELECT environment FROM deployment WHERE id = 1")
            .fetch_one(&mut **tx)
            .await?,
    )
}

/// How many businesses the database holds of each environment, told by their credentials
/// (`kb_live_...` is production): `(sandbox, production)`.
pub async fn businesses_by_environment(tx: &mut Tx) -> Result<(i64, i64), StoreError> {
    let counts = sqlx::query!(
        r#"SELECT COUNT(*) FILTER (WHERE client_id NOT LIKE 'kb\_live\_%') AS "sandbox!",
             COUNT(*) FILTER (WHERE client_id LIKE 'kb\_live\_%') AS "production!"
           FROM businesses"#
    )
    .fetch_one(&mut **tx)
    .await?;
    Ok((counts.sandbox, counts.production))
}
