//! `webhook_configurations`: a business's webhook endpoint, at most one per business: its URL,
//! whether delivery runs, the addresses it may resolve to, the events it wants, and its
//! signing secrets. Lists are stored as JSON arrays of text.

use chrono::{DateTime, Utc};

use crate::{on, timestamp, uuid, StoreError, Tx};
pub use kobo_store::webhook_endpoints::{Change, Configuration, Endpoint, NewEndpoint};

/// A JSON list column read back.
fn list(column: &str, text: &str) -> Result<Vec<String>, StoreError> {
    serde_json::from_str(text)
        .map_err(|error| StoreError::Unreadable(format!("{column} {text:?}: {error}")))
}

/// A list as its JSON column stores it.
fn json_list(values: &[String]) -> String {
    serde_json::to_string(values).expect("strings serialize")
}

kobo_store::webhook_endpoints_functions!(backend crate::Backend);

impl kobo_store::webhook_endpoints::WebhookEndpoints for crate::Backend {
    async fn find(
        conn: Self::Conn<'_>,
        business_id: &str,
    ) -> Result<Option<Configuration>, StoreError> {
        let query = sqlx::query!(
            r#"SELECT id AS "id!", url, is_active AS "is_active: bool", ip_whitelist, event_types,
             created_at AS "created_at: DateTime<Utc>", updated_at AS "updated_at: DateTime<Utc>"
           FROM webhook_configurations WHERE business_id = ?1"#,
            business_id
        );
        let Some(row) = on!(conn, query, fetch_optional)? else {
            return Ok(None);
        };
        Ok(Some(Configuration {
            id: uuid(&row.id)?,
            url: row.url,
            is_active: row.is_active,
            ip_whitelist: list("ip_whitelist", &row.ip_whitelist)?,
            event_types: list("event_types", &row.event_types)?,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }))
    }

    async fn find_endpoint(
        conn: Self::Conn<'_>,
        business_id: &str,
    ) -> Result<Option<Endpoint>, StoreError> {
        let query = sqlx::query!(
            r#"SELECT url, is_active AS "is_active: bool", ip_whitelist, event_types, secret,
             previous_secret,
             previous_secret_expires_at AS "previous_secret_expires_at: DateTime<Utc>"
           FROM webhook_configurations WHERE business_id = ?1"#,
            business_id
        );
        let Some(row) = on!(conn, query, fetch_optional)? else {
            return Ok(None);
        };
        Ok(Some(Endpoint {
            url: row.url,
            is_active: row.is_active,
            ip_whitelist: list("ip_whitelist", &row.ip_whitelist)?,
            event_types: list("event_types", &row.event_types)?,
            secret: row.secret,
            previous_secret: row.previous_secret,
            previous_secret_expires_at: row.previous_secret_expires_at,
        }))
    }

    async fn insert(
        tx: &mut Tx,
        new: &NewEndpoint<'_>,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let ip_whitelist = json_list(new.ip_whitelist);
        let event_types = json_list(new.event_types);
        let now = timestamp(now);
        let inserted = sqlx::query!(
            "INSERT INTO webhook_configurations (id, business_id, url, is_active, ip_whitelist, \
           event_types, secret, created_at, updated_at) \
         VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7, ?7) ON CONFLICT (business_id) DO NOTHING",
            new.id,
            new.business_id,
            new.url,
            ip_whitelist,
            event_types,
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
        let ip_whitelist = change.ip_whitelist.map(json_list);
        let event_types = change.event_types.map(json_list);
        let now = timestamp(now);
        let updated = sqlx::query!(
            "UPDATE webhook_configurations SET url = COALESCE(?2, url), \
           is_active = COALESCE(?3, is_active), ip_whitelist = COALESCE(?4, ip_whitelist), \
           event_types = COALESCE(?5, event_types), updated_at = ?6 WHERE business_id = ?1",
            business_id,
            change.url,
            change.is_active,
            ip_whitelist,
            event_types,
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
        let previous_expires_at = timestamp(previous_expires_at);
        let now = timestamp(now);
        let rotated = sqlx::query!(
            "UPDATE webhook_configurations SET previous_secret = secret, secret = ?2, \
           previous_secret_expires_at = ?3, updated_at = ?4 WHERE business_id = ?1",
            business_id,
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
        Ok(sqlx::query_scalar!(
            r#"SELECT id AS "id!" FROM webhook_configurations WHERE business_id = ?1"#,
            business_id
        )
        .fetch_one(&mut **tx)
        .await?)
    }
}
