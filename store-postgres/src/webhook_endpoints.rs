//! `webhook_configurations`: a business's webhook endpoint, at most one per business: its URL,
//! whether delivery runs, the addresses it may resolve to, the events it wants, and its
//! signing secrets. Lists are `text[]`.

use chrono::{DateTime, Utc};

use crate::{id, new_id, StoreError, Tx};
pub use kobo_store::webhook_endpoints::{Change, Configuration, Endpoint, NewEndpoint};

kobo_store::webhook_endpoints_functions!(backend crate::Backend);

impl kobo_store::webhook_endpoints::WebhookEndpoints for crate::Backend {
    async fn find(
        conn: Self::Conn<'_>,
        business_id: &str,
    ) -> Result<Option<Configuration>, StoreError> {
        conn.run(async |conn| {
            Ok(sqlx::query_as!(
                Configuration,
                "SELECT id, url, is_active, ip_whitelist, event_types, created_at, updated_at \
         FROM webhook_configurations WHERE business_id = $1",
                id(business_id)
            )
            .fetch_optional(&mut *conn)
            .await?)
        })
        .await
    }

    async fn find_endpoint(
        conn: Self::Conn<'_>,
        business_id: &str,
    ) -> Result<Option<Endpoint>, StoreError> {
        conn.run(async |conn| {
            Ok(sqlx::query_as!(
                Endpoint,
                "SELECT url, is_active, ip_whitelist, event_types, secret, previous_secret, \
           previous_secret_expires_at FROM webhook_configurations WHERE business_id = $1",
                id(business_id)
            )
            .fetch_optional(&mut *conn)
            .await?)
        })
        .await
    }

    async fn insert(
        tx: &mut Tx,
        new: &NewEndpoint<'_>,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let inserted = sqlx::query!(
            "INSERT INTO webhook_configurations (id, business_id, url, is_active, ip_whitelist, \
           event_types, secret, created_at, updated_at) \
         VALUES ($1, $2, $3, true, $4, $5, $6, $7, $7) ON CONFLICT (business_id) DO NOTHING",
            new_id(new.id)?,
            new_id(new.business_id)?,
            new.url,
            new.ip_whitelist,
            new.event_types,
            new.secret,
            now
        )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(inserted != 0)
    }

    async fn update(
        tx: &mut Tx,
        business_id: &str,
        change: &Change<'_>,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let updated = sqlx::query!(
            "UPDATE webhook_configurations SET url = COALESCE($2, url), \
           is_active = COALESCE($3, is_active), ip_whitelist = COALESCE($4, ip_whitelist), \
           event_types = COALESCE($5, event_types), updated_at = $6 WHERE business_id = $1",
            id(business_id),
            change.url,
            change.is_active,
            change.ip_whitelist,
            change.event_types,
            now
        )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(updated != 0)
    }

    async fn rotate_secret(
        tx: &mut Tx,
        business_id: &str,
        secret: &str,
        previous_expires_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let rotated = sqlx::query!(
            "UPDATE webhook_configurations SET previous_secret = secret, secret = $2, \
           previous_secret_expires_at = $3, updated_at = $4 WHERE business_id = $1",
            id(business_id),
            secret,
            previous_expires_at,
            now
        )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(rotated != 0)
    }

    async fn id_of(tx: &mut Tx, business_id: &str) -> Result<String, StoreError> {
        let found = sqlx::query_scalar!(
            "SELECT id FROM webhook_configurations WHERE business_id = $1",
            id(business_id)
        )
        .fetch_one(&mut **tx)
        .await?;
        Ok(found.to_string())
    }
}
