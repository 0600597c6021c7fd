//! `deployment`: the environment the database serves, once recorded.

use chrono::{DateTime, Utc};

use kobo_store::deployment::Deployment;

use crate::{timestamp, Backend, StoreError, Tx};

kobo_store::deployment_functions!(backend Backend);

impl Deployment for Backend {
    async fn environment(tx: &mut Tx) -> Result<Option<String>, StoreError> {
        Ok(
            sqlx::query_scalar!("SELECT environment FROM deployment WHERE id = 1")
                .fetch_optional(&mut **tx)
                .await?,
        )
    }

    async fn record(
        tx: &mut Tx,
        environment: &str,
        at: DateTime<Utc>,
    ) -> Result<String, StoreError> {
        let at = timestamp(at);
        sqlx::query!(
            "INSERT INTO deployment (id, environment, recorded_at) VALUES (1, ?1, ?2) \
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

    async fn businesses_by_environment(tx: &mut Tx) -> Result<(i64, i64), StoreError> {
        let counts = sqlx::query!(
        r#"SELECT COALESCE(SUM(client_id NOT LIKE 'kb\_live\_%' ESCAPE '\'), 0) AS "sandbox!: i64",
             COALESCE(SUM(client_id LIKE 'kb\_live\_%' ESCAPE '\'), 0) AS "production!: i64"
           FROM businesses"#
    )
    .fetch_one(&mut **tx)
    .await?;
        Ok((counts.sandbox, counts.production))
    }
}
