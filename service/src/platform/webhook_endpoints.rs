//! The webhook operations: the business's endpoint (create, change, read, rotate its secret),
//! the delivery log, replays and test events. Delivery itself is `outbox::webhooks`.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use generated_server::models::{self, AuditAction};
use generated_server::ResponseCode;
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::error::{Error, OrInternal};
use crate::kernel::clock::Clock;
use crate::kernel::config::{Config, Environment};
use crate::kernel::paging::{self, Conditions, Page, Sql};
use crate::kernel::store::{self, Store, Tx};
use crate::outbox::events;
use crate::outbox::webhooks::destination::{self, Policy, SystemResolver};
use crate::outbox::webhooks::signing;
use crate::outbox::webhooks::{body_of, TEST_EVENT};
use crate::platform::caller::Caller;
use crate::platform::idempotency::{Completion, Keyed, Prepared};
use crate::platform::logs::{self, AuditEntry};
use crate::platform::principal::member_of;

/// The most attempts `attempt_log` shows.
const ATTEMPT_LOG_MAX: i64 = 20;
use crate::platform::housekeeping::WEBHOOK_EVENT_DAYS as RETENTION_DAYS;

fn invalid(message: String) -> Error {
    Error::new(ResponseCode::InvalidRequest).with_message(message)
}

fn no_configuration() -> Error {
    Error::new(ResponseCode::NotFound).with_message(
        "The business has no webhook configuration: create one with webhook_configuration",
    )
}

fn paused() -> Error {
    Error::new(ResponseCode::InvalidState)
        .with_message("Webhook delivery is paused; resume it with update_webhook_configuration")
}

/// Checks a URL and whitelist as the configuration will use them: the URL's form, and the
/// addresses its host resolves to now (delivery checks them again each time).
async fn check_destination(
    config: &Config,
    url: &str,
    ip_whitelist: &[String],
) -> Result<(), Error> {
    let whitelist = destination::parse_whitelist(ip_whitelist).map_err(invalid)?;
    let production = config.environment == Environment::Production;
    let policy = Policy::of(production, config.webhooks.loopback_allowed, whitelist);
    let parsed = destination::check_url(url, &policy).map_err(invalid)?;
    // Production resolves the name now; the sandbox checks a literal address now (a name it
    // checks at delivery, where it may resolve only on the developer's network).
    let literal = !matches!(parsed.host(), Some(url::Host::Domain(_)));
    if production || literal {
        destination::resolve(&parsed, &policy, &SystemResolver)
            .await
            .map_err(|why| invalid(format!("`url`: {why}")))?;
    }
    Ok(())
}

fn kinds(event_types: &[models::WebhookEventType]) -> Vec<String> {
    event_types.iter().map(ToString::to_string).collect()
}

fn addresses(ip_whitelist: &[models::IpAddressOrRange]) -> Vec<String> {
    ip_whitelist.iter().map(|entry| entry.to_string()).collect()
}

fn json_list(values: &[String]) -> Result<String, Error> {
    serde_json::to_string(values).or_internal()
}

fn parse<T: std::str::FromStr>(value: String) -> Result<T, Error> {
    value
        .parse()
        .map_err(|_| Error::internal(format!("an unreadable stored value `{value}`")))
}

fn configuration_of(row: &AnyRow) -> Result<models::WebhookConfiguration, Error> {
    let list = |column: &str| -> Result<Vec<String>, Error> {
        serde_json::from_str(&store::text(row, column)?).or_internal()
    };
    Ok(models::WebhookConfiguration {
        id: store::uuid(row, "id")?,
        url: store::text(row, "url")?,
        is_active: store::flag(row, "is_active")?,
        ip_whitelist: list("ip_whitelist")?
            .into_iter()
            .map(parse)
            .collect::<Result<_, _>>()?,
        event_types: list("event_types")?
            .into_iter()
            .map(parse)
            .collect::<Result<_, _>>()?,
        created_at: store::time(row, "created_at")?,
        updated_at: store::time(row, "updated_at")?,
    })
}

async fn configuration<'e, E>(
    executor: E,
    business_id: &str,
) -> Result<Option<models::WebhookConfiguration>, Error>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    let row = sqlx::query(
        "SELECT id, url, is_active, ip_whitelist, event_types, created_at, updated_at \
         FROM webhook_configurations WHERE business_id = $1",
    )
    .bind(business_id)
    .fetch_optional(executor)
    .await
    .or_internal()?;
    row.as_ref().map(configuration_of).transpose()
}

pub async fn create_configuration(
    store: &Store,
    config: &Config,
    clock: &Clock,
    caller: &Caller,
    body: models::WebhookConfigurationRequest,
) -> Result<models::CreatedWebhookConfiguration, Error> {
    let business_id = caller.principal.business_id.clone();
    let url = body.url.to_string();
    let ip_whitelist = addresses(&body.ip_whitelist.clone().unwrap_or_default());
    let event_types = kinds(&body.event_types.clone().unwrap_or_default());
    let prepare = async || {
        check_destination(config, &url, &ip_whitelist).await?;
        Ok(Prepared::plain(()))
    };
    let write = async |tx: &mut Tx, (), _: &mut Completion| {
        let now = clock.now();
        let id = store::new_id();
        let secret = signing::new_secret();
        let inserted = sqlx::query(
            "INSERT INTO webhook_configurations (id, business_id, url, is_active, ip_whitelist, \
               event_types, secret, created_at, updated_at) \
             VALUES ($1, $2, $3, 1, $4, $5, $6, $7, $7) ON CONFLICT (business_id) DO NOTHING",
        )
        .bind(&id)
        .bind(&business_id)
        .bind(&url)
        .bind(json_list(&ip_whitelist)?)
        .bind(json_list(&event_types)?)
        .bind(&secret)
        .bind(store::timestamp(now))
        .execute(&mut **tx)
        .await?
        .rows_affected();
        if inserted == 0 {
            return Err(Error::new(ResponseCode::Duplicate).with_message(
                "The business already has a webhook configuration: change it with \
                 update_webhook_configuration",
            ));
        }
        // Events from before the endpoint existed are not sent now (they stay replayable).
        sqlx::query(
            "UPDATE events SET delivery_status = 'skipped', next_attempt_at = NULL \
             WHERE business_id = $1 AND delivery_status = 'pending'",
        )
        .bind(&business_id)
        .execute(&mut **tx)
        .await?;
        let stored = configuration(&mut **tx, &business_id)
            .await?
            .ok_or_else(|| Error::internal("the new webhook configuration vanished"))?;
        let entry = AuditEntry::by(caller, AuditAction::CreateWebhookConfiguration)
            .target("webhook_configuration", id);
        logs::audit(tx, now, entry).await?;
        Ok(models::CreatedWebhookConfiguration {
            id: stored.id,
            url: stored.url,
            is_active: stored.is_active,
            ip_whitelist: stored.ip_whitelist,
            event_types: stored.event_types,
            secret: parse(secret)?,
            created_at: stored.created_at,
            updated_at: stored.updated_at,
        })
    };
    Keyed::new(store, clock, caller, &body)
        .run(prepare, write)
        .await
}

pub async fn update_configuration(
    store: &Store,
    config: &Config,
    clock: &Clock,
    caller: &Caller,
    body: models::UpdateWebhookConfigurationRequest,
) -> Result<models::WebhookConfiguration, Error> {
    let business_id = &caller.principal.business_id;
    if body.url.is_none()
        && body.is_active.is_none()
        && body.ip_whitelist.is_none()
        && body.event_types.is_none()
    {
        return Err(invalid(
            "Send at least one of url, is_active, ip_whitelist and event_types".into(),
        ));
    }
    let current = configuration(store.pool(), business_id)
        .await?
        .ok_or_else(no_configuration)?;
    let url = body.url.as_ref().map(|url| url.as_str().to_owned());
    let ip_whitelist = body.ip_whitelist.as_deref().map(addresses);
    if url.is_some() || ip_whitelist.is_some() {
        let checked_url = url.clone().unwrap_or_else(|| current.url.clone());
        let checked_whitelist = ip_whitelist
            .clone()
            .unwrap_or_else(|| addresses(&current.ip_whitelist));
        check_destination(config, &checked_url, &checked_whitelist).await?;
    }
    let event_types = body.event_types.as_deref().map(kinds);
    let _turn = store.write_turn().await;
    let updated = sqlx::query(
        "UPDATE webhook_configurations SET url = COALESCE($2, url), \
           is_active = COALESCE($3, is_active), ip_whitelist = COALESCE($4, ip_whitelist), \
           event_types = COALESCE($5, event_types), updated_at = $6 WHERE business_id = $1",
    )
    .bind(business_id)
    .bind(url)
    .bind(body.is_active.map(i64::from))
    .bind(ip_whitelist.as_deref().map(json_list).transpose()?)
    .bind(event_types.as_deref().map(json_list).transpose()?)
    .bind(store::timestamp(clock.now()))
    .execute(store.pool())
    .await
    .or_internal()?
    .rows_affected();
    if updated == 0 {
        return Err(no_configuration());
    }
    configuration(store.pool(), business_id)
        .await?
        .ok_or_else(no_configuration)
}

pub async fn get_configuration(
    store: &Store,
    caller: &Caller,
) -> Result<models::WebhookConfiguration, Error> {
    configuration(store.pool(), &caller.principal.business_id)
        .await?
        .ok_or_else(no_configuration)
}

pub async fn rotate_secret(
    store: &Store,
    config: &Config,
    clock: &Clock,
    caller: &Caller,
    body: models::EmptyObject,
) -> Result<models::RotatedWebhookSecret, Error> {
    let business_id = caller.principal.business_id.clone();
    Keyed::new(store, clock, caller, &body)
        .run_in_transaction(async |tx, _| {
            let now = clock.now();
            let secret = signing::new_secret();
            let expires_at =
                now + chrono::Duration::seconds(config.webhooks.secret_overlap_seconds);
            // The current secret becomes the previous one; an older previous one ends now.
            let rotated = sqlx::query(
                "UPDATE webhook_configurations SET previous_secret = secret, secret = $2, \
               previous_secret_expires_at = $3, updated_at = $4 WHERE business_id = $1",
            )
            .bind(&business_id)
            .bind(&secret)
            .bind(store::timestamp(expires_at))
            .bind(store::timestamp(now))
            .execute(&mut **tx)
            .await?
            .rows_affected();
            if rotated == 0 {
                return Err(no_configuration());
            }
            let id: String =
                sqlx::query_scalar("SELECT id FROM webhook_configurations WHERE business_id = $1")
                    .bind(&business_id)
                    .fetch_one(&mut **tx)
                    .await?;
            let entry = AuditEntry::by(caller, AuditAction::RotateWebhookSecret)
                .target("webhook_configuration", id);
            logs::audit(tx, now, entry).await?;
            Ok(models::RotatedWebhookSecret {
                secret: parse(secret)?,
                previous_secret_expires_at: expires_at,
            })
        })
        .await
}

/// Every column a [`models::WebhookDelivery`] is read from.
const SELECT_EVENTS: &str = "SELECT id, type, payload, created_at, delivery_status, attempts, \
     budget_start, next_attempt_at, last_attempt_at, last_response_status, last_error FROM events";

/// The newest [`ATTEMPT_LOG_MAX`] attempts of each of `ids`, newest first, in one query.
async fn attempt_logs(
    store: &Store,
    ids: &[String],
) -> Result<HashMap<String, Vec<models::WebhookAttempt>>, Error> {
    let mut logs: HashMap<String, Vec<models::WebhookAttempt>> = HashMap::new();
    if ids.is_empty() {
        return Ok(logs);
    }
    let mut sql = Sql::new(
        "SELECT event_id, attempted_at, response_status, error, latency_ms, response_body \
         FROM (SELECT a.*, ROW_NUMBER() OVER ( \
           PARTITION BY event_id ORDER BY attempted_at DESC, id DESC) AS position \
           FROM webhook_attempts a WHERE event_id IN (",
    );
    let placeholders: Vec<String> = ids.iter().map(|id| sql.arg(id.as_str())).collect();
    sql.push(&placeholders.join(", "));
    let limit = sql.arg(ATTEMPT_LOG_MAX);
    sql.push(&format!(
        ")) newest WHERE position <= {limit} ORDER BY event_id, position"
    ));
    for attempt in sql.fetch_all(store.pool()).await? {
        logs.entry(store::text(&attempt, "event_id")?)
            .or_default()
            .push(models::WebhookAttempt {
                attempted_at: store::time(&attempt, "attempted_at")?,
                response_status: attempt
                    .try_get::<Option<i64>, _>("response_status")
                    .or_internal()?,
                error: store::optional_text(&attempt, "error")?,
                latency_ms: attempt.try_get("latency_ms").or_internal()?,
                response_body: store::optional_text(&attempt, "response_body")?,
            });
    }
    Ok(logs)
}

/// One event as its business reads it, with the attempt log [`attempt_logs`] found for it.
fn delivery_of(
    config: &Config,
    row: &AnyRow,
    logs: &mut HashMap<String, Vec<models::WebhookAttempt>>,
) -> Result<models::WebhookDelivery, Error> {
    let id = store::text(row, "id")?;
    let kind = store::text(row, "type")?;
    let created_at = store::time(row, "created_at")?;
    let body = body_of(&id, &kind, created_at, &store::text(row, "payload")?);
    let attempts: i64 = row.try_get("attempts").or_internal()?;
    let budget_start: i64 = row.try_get("budget_start").or_internal()?;
    let status = store::text(row, "delivery_status")?;
    let remaining = if status == "pending" {
        (config.webhooks.max_attempts() - (attempts - budget_start)).max(0)
    } else {
        0
    };
    let log = logs.remove(&id).unwrap_or_default();
    Ok(models::WebhookDelivery {
        id: parse(id)?,
        event_type: parse(kind)?,
        status: parse(status)?,
        attempts: u64::try_from(attempts).or_internal()?,
        remaining_attempts: u64::try_from(remaining).or_internal()?,
        last_attempt_at: store::optional_time(row, "last_attempt_at")?,
        next_attempt_at: if remaining > 0 {
            store::optional_time(row, "next_attempt_at")?
        } else {
            None
        },
        last_response_status: row
            .try_get::<Option<i64>, _>("last_response_status")
            .or_internal()?,
        last_error: store::optional_text(row, "last_error")?,
        attempt_log: log,
        payload: serde_json::from_str(&body).or_internal()?,
        created_at,
    })
}

async fn event_row(
    store: &Store,
    business_id: &str,
    event_id: &str,
    since: DateTime<Utc>,
) -> Result<AnyRow, Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "{SELECT_EVENTS} WHERE id = $1 AND business_id = $2 AND created_at >= $3"
    )))
    .bind(event_id)
    .bind(business_id)
    .bind(store::timestamp(since))
    .fetch_optional(store.pool())
    .await
    .or_internal()?
    .ok_or_else(|| {
        Error::new(ResponseCode::NotFound)
            .with_message(format!("No webhook event {event_id} in this business"))
    })
}

pub async fn fetch_events(
    store: &Store,
    config: &Config,
    clock: &Clock,
    caller: &Caller,
    body: models::FetchWebhookEventsRequest,
) -> Result<Page<Vec<models::WebhookDelivery>>, Error> {
    let cursor = paging::keyset_cursor(body.cursor_created_at, body.cursor_id)?;
    let limit = body.limit.get().min(paging::PAGE_SIZE_MAX);
    let mut sql = Sql::new(SELECT_EVENTS);
    let mut conditions = Conditions::default();
    conditions.add(format!(
        "business_id = {}",
        sql.arg(caller.principal.business_id.as_str())
    ));
    let since = clock.now() - chrono::Duration::days(RETENTION_DAYS);
    conditions.add(format!(
        "created_at >= {}",
        sql.arg(store::timestamp(since))
    ));
    if let Some(filters) = &body.filters {
        let (from, until) = paging::day_range(filters.start_date, filters.end_date, "filters.")?;
        logs::add_time_range(&mut sql, &mut conditions, from, until);
        if let Some(status) = &filters.status {
            conditions.add(format!("delivery_status = {}", sql.arg(status.to_string())));
        }
        if let Some(kind) = &filters.event_type {
            conditions.add(format!("type = {}", sql.arg(kind.to_string())));
        }
    }
    if let Some(cursor) = cursor {
        let at = sql.arg(cursor.created_at);
        let id = sql.arg(cursor.id);
        conditions.add(format!(
            "(created_at < {at} OR (created_at = {at} AND id < {id}))"
        ));
    }
    sql.push(&conditions.where_clause());
    sql.push(" ORDER BY created_at DESC, id DESC")
        .limit(limit + 1);
    let rows = sql.fetch_all(store.pool()).await?;
    let ids = rows
        .iter()
        .map(|row| store::text(row, "id"))
        .collect::<Result<Vec<_>, _>>()?;
    let mut logs = attempt_logs(store, &ids).await?;
    let mut entries = Vec::with_capacity(rows.len());
    for row in &rows {
        entries.push(delivery_of(config, row, &mut logs)?);
    }
    let has_more = paging::trim_to_page(&mut entries, limit);
    let last = entries.last().map(|entry| (entry.created_at, entry.id));
    Ok(Page {
        data: entries,
        pagination: paging::keyset_pagination(has_more, last, limit),
    })
}

pub async fn replay_event(
    store: &Store,
    config: &Config,
    clock: &Clock,
    caller: &Caller,
    body: models::ReplayWebhookEventRequest,
) -> Result<models::WebhookDelivery, Error> {
    let business_id = caller.principal.business_id.clone();
    let event_id = body.event_id.to_string();
    let now = clock.now();
    let since = now - chrono::Duration::days(RETENTION_DAYS);
    event_row(store, &business_id, &event_id, since).await?;
    let mut tx = store.begin().await?;
    match configuration(&mut *tx, &business_id).await? {
        Some(endpoint) if endpoint.is_active => {}
        Some(_) => return Err(paused()),
        None => {
            return Err(Error::new(ResponseCode::InvalidState).with_message(
                "The business has no webhook configuration to deliver to: create one first",
            ))
        }
    }
    let queued = sqlx::query(
        "UPDATE events SET delivery_status = 'pending', budget_start = attempts, \
           next_attempt_at = $3 WHERE id = $1 AND business_id = $2 AND delivery_status <> 'pending'",
    )
    .bind(&event_id)
    .bind(&business_id)
    .bind(store::timestamp(now))
    .execute(&mut *tx)
    .await
    .or_internal()?
    .rows_affected();
    if queued == 0 {
        return Err(Error::new(ResponseCode::InvalidState)
            .with_message("The event is already queued for delivery"));
    }
    logs::audit(
        &mut tx,
        now,
        AuditEntry::by(caller, AuditAction::ReplayWebhookEvent).target("webhook_event", &event_id),
    )
    .await?;
    tx.commit().await.or_internal()?;
    let row = event_row(store, &business_id, &event_id, since).await?;
    let mut logs = attempt_logs(store, &[store::text(&row, "id")?]).await?;
    delivery_of(config, &row, &mut logs)
}

pub async fn test_event(
    store: &Store,
    config: &Config,
    clock: &Clock,
    caller: &Caller,
    _body: models::EmptyObject,
) -> Result<models::WebhookDelivery, Error> {
    let business_id = caller.principal.business_id.clone();
    let member = member_of(&caller.principal)?;
    let now = clock.now();
    let mut tx = store.begin().await?;
    match configuration(&mut *tx, &business_id).await? {
        Some(endpoint) if endpoint.is_active => {}
        Some(_) => return Err(paused()),
        None => return Err(no_configuration()),
    }
    let data = models::WebhookTest {
        message: "A test event from Kobo".into(),
        requested_by: format!("{} {}", member.first_name, member.last_name),
    };
    let event_id = events::record(&mut tx, &business_id, TEST_EVENT, &data, now).await?;
    logs::audit(
        &mut tx,
        now,
        AuditEntry::by(caller, AuditAction::TestWebhook).target("webhook_event", &event_id),
    )
    .await?;
    tx.commit().await.or_internal()?;
    let since = now - chrono::Duration::days(RETENTION_DAYS);
    let row = event_row(store, &business_id, &event_id, since).await?;
    let mut logs = attempt_logs(store, &[store::text(&row, "id")?]).await?;
    delivery_of(config, &row, &mut logs)
}
