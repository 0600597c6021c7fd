//! The webhook operations: the business's endpoint (create, change, read, rotate its secret),
//! the delivery log, replays and test events. Delivery itself is `outbox::webhooks`.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use generated_server::models::{self, AuditAction};
use generated_server::ResponseCode;

use crate::datastore::events::{self as stored_events, Delivery, DeliveryFilter};
use crate::datastore::webhook_endpoints::{self as endpoints, Change, NewEndpoint};
use crate::datastore::Conn;
use crate::error::{Error, OrInternal};
use crate::kernel::config::{Config, Environment};
use crate::kernel::paging::{self, Page};
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
use crate::platform::context::Platform;
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

fn parse<T: std::str::FromStr>(value: String) -> Result<T, Error> {
    value
        .parse()
        .map_err(|_| Error::internal(format!("an unreadable stored value `{value}`")))
}

fn configuration_view(
    stored: endpoints::Configuration,
) -> Result<models::WebhookConfiguration, Error> {
    Ok(models::WebhookConfiguration {
        id: stored.id,
        url: stored.url,
        is_active: stored.is_active,
        ip_whitelist: stored
            .ip_whitelist
            .into_iter()
            .map(parse)
            .collect::<Result<_, _>>()?,
        event_types: stored
            .event_types
            .into_iter()
            .map(parse)
            .collect::<Result<_, _>>()?,
        created_at: stored.created_at,
        updated_at: stored.updated_at,
    })
}

async fn configuration(
    conn: impl Into<Conn<'_>>,
    business_id: &str,
) -> Result<Option<models::WebhookConfiguration>, Error> {
    endpoints::find(conn, business_id)
        .await?
        .map(configuration_view)
        .transpose()
}

pub async fn create_configuration(
    platform: &Platform,
    caller: &Caller,
    body: models::WebhookConfigurationRequest,
) -> Result<models::CreatedWebhookConfiguration, Error> {
    let Platform {
        store,
        config,
        clock,
        ..
    } = platform;
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
        let new = NewEndpoint {
            id: &id,
            business_id: &business_id,
            url: &url,
            ip_whitelist: &ip_whitelist,
            event_types: &event_types,
            secret: &secret,
        };
        if !endpoints::insert(tx, &new, now).await? {
            return Err(Error::new(ResponseCode::Duplicate).with_message(
                "The business already has a webhook configuration: change it with \
                 update_webhook_configuration",
            ));
        }
        // Events from before the endpoint existed are not sent now (they stay replayable).
        stored_events::skip_pending_of_business(tx, &business_id).await?;
        let stored = configuration(&mut *tx, &business_id)
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

/// `update_webhook_configuration` and its Dashboard twin: changes what the body gives, checks
/// the destination it would deliver to, and audits the change as the caller.
pub async fn update_configuration(
    platform: &Platform,
    caller: &Caller,
    body: models::UpdateWebhookConfigurationRequest,
) -> Result<models::WebhookConfiguration, Error> {
    let Platform {
        store,
        config,
        clock,
        ..
    } = platform;
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
    let current = configuration(store, business_id)
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
    let change = Change {
        url: url.as_deref(),
        is_active: body.is_active,
        ip_whitelist: ip_whitelist.as_deref(),
        event_types: event_types.as_deref(),
    };
    // The change and its audit entry (as the member, or as the integration) commit together.
    let now = clock.now();
    let mut tx = store.begin().await?;
    if !endpoints::update(&mut tx, business_id, &change, now).await? {
        return Err(no_configuration());
    }
    let updated = configuration(&mut tx, business_id)
        .await?
        .ok_or_else(no_configuration)?;
    let entry = AuditEntry::by(caller, AuditAction::UpdateWebhookConfiguration)
        .target("webhook_configuration", updated.id.to_string());
    logs::audit(&mut tx, now, entry).await?;
    tx.commit().await.or_internal()?;
    Ok(updated)
}

pub async fn get_configuration(
    platform: &Platform,
    caller: &Caller,
) -> Result<models::WebhookConfiguration, Error> {
    let store = &platform.store;
    configuration(store, &caller.principal.business_id)
        .await?
        .ok_or_else(no_configuration)
}

pub async fn rotate_secret(
    platform: &Platform,
    caller: &Caller,
    body: models::EmptyObject,
) -> Result<models::RotatedWebhookSecret, Error> {
    let Platform {
        store,
        config,
        clock,
        ..
    } = platform;
    let business_id = caller.principal.business_id.clone();
    Keyed::new(store, clock, caller, &body)
        .run_in_transaction(async |tx, _| {
            let now = clock.now();
            let secret = signing::new_secret();
            let expires_at =
                now + chrono::Duration::seconds(config.webhooks.secret_overlap_seconds);
            // The current secret becomes the previous one; an older previous one ends now.
            if !endpoints::rotate_secret(tx, &business_id, &secret, expires_at, now).await? {
                return Err(no_configuration());
            }
            let id = endpoints::id_of(tx, &business_id).await?;
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

/// The newest [`ATTEMPT_LOG_MAX`] attempts of each of `ids`, newest first, in one query.
async fn attempt_logs(
    store: &Store,
    ids: &[String],
) -> Result<HashMap<String, Vec<models::WebhookAttempt>>, Error> {
    let mut logs: HashMap<String, Vec<models::WebhookAttempt>> = HashMap::new();
    for attempt in stored_events::newest_attempts(store, ids, ATTEMPT_LOG_MAX).await? {
        logs.entry(attempt.event_id)
            .or_default()
            .push(models::WebhookAttempt {
                attempted_at: attempt.attempted_at,
                response_status: attempt.response_status,
                error: attempt.error,
                latency_ms: attempt.latency_ms,
                response_body: attempt.response_body,
            });
    }
    Ok(logs)
}

/// One event as its business reads it, with the attempt log [`attempt_logs`] found for it.
fn delivery_of(
    config: &Config,
    event: Delivery,
    logs: &mut HashMap<String, Vec<models::WebhookAttempt>>,
) -> Result<models::WebhookDelivery, Error> {
    let body = body_of(&event.id, &event.kind, event.created_at, &event.payload);
    let attempts = event.attempts;
    let remaining = if event.delivery_status == "pending" {
        (config.webhooks.max_attempts() - (attempts - event.budget_start)).max(0)
    } else {
        0
    };
    let log = logs.remove(&event.id).unwrap_or_default();
    Ok(models::WebhookDelivery {
        id: parse(event.id)?,
        event_type: parse(event.kind)?,
        status: parse(event.delivery_status)?,
        attempts: u64::try_from(attempts).or_internal()?,
        remaining_attempts: u64::try_from(remaining).or_internal()?,
        last_attempt_at: event.last_attempt_at,
        next_attempt_at: if remaining > 0 {
            event.next_attempt_at
        } else {
            None
        },
        last_response_status: event.last_response_status,
        last_error: event.last_error,
        attempt_log: log,
        payload: serde_json::from_str(&body).or_internal()?,
        created_at: event.created_at,
    })
}

async fn event_row(
    store: &Store,
    business_id: &str,
    event_id: &str,
    since: DateTime<Utc>,
) -> Result<Delivery, Error> {
    stored_events::find_delivery(store, business_id, event_id, since)
        .await?
        .ok_or_else(|| {
            Error::new(ResponseCode::NotFound)
                .with_message(format!("No webhook event {event_id} in this business"))
        })
}

pub async fn fetch_events(
    platform: &Platform,
    caller: &Caller,
    body: models::FetchWebhookEventsRequest,
) -> Result<Page<Vec<models::WebhookDelivery>>, Error> {
    let Platform {
        store,
        config,
        clock,
        ..
    } = platform;
    let cursor = paging::keyset_cursor(body.cursor_created_at, body.cursor_id)?;
    let limit = body.limit.get().min(paging::PAGE_SIZE_MAX);
    let mut filter = DeliveryFilter {
        business_id: caller.principal.business_id.clone(),
        since: clock.now() - chrono::Duration::days(RETENTION_DAYS),
        from: None,
        until: None,
        delivery_status: None,
        kind: None,
        cursor,
        page_size: limit,
    };
    if let Some(filters) = &body.filters {
        let (from, until) = paging::day_range(filters.start_date, filters.end_date, "filters.")?;
        filter.from = from;
        filter.until = until;
        filter.delivery_status = filters.status.as_ref().map(ToString::to_string);
        filter.kind = filters.event_type.as_ref().map(ToString::to_string);
    }
    let rows = stored_events::list_deliveries(store, &filter).await?;
    let ids: Vec<String> = rows.iter().map(|row| row.id.clone()).collect();
    let mut logs = attempt_logs(store, &ids).await?;
    let mut entries = Vec::with_capacity(rows.len());
    for row in rows {
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
    platform: &Platform,
    caller: &Caller,
    body: models::ReplayWebhookEventRequest,
) -> Result<models::WebhookDelivery, Error> {
    let Platform {
        store,
        config,
        clock,
        ..
    } = platform;
    let business_id = caller.principal.business_id.clone();
    let event_id = body.event_id.to_string();
    let now = clock.now();
    let since = now - chrono::Duration::days(RETENTION_DAYS);
    event_row(store, &business_id, &event_id, since).await?;
    let mut tx = store.begin().await?;
    match configuration(&mut tx, &business_id).await? {
        Some(endpoint) if endpoint.is_active => {}
        Some(_) => return Err(paused()),
        None => {
            return Err(Error::new(ResponseCode::InvalidState).with_message(
                "The business has no webhook configuration to deliver to: create one first",
            ))
        }
    }
    if !stored_events::requeue(&mut tx, &event_id, &business_id, now).await? {
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
    let mut logs = attempt_logs(store, std::slice::from_ref(&row.id)).await?;
    delivery_of(config, row, &mut logs)
}

pub async fn test_event(
    platform: &Platform,
    caller: &Caller,
    _body: models::EmptyObject,
) -> Result<models::WebhookDelivery, Error> {
    let Platform {
        store,
        config,
        clock,
        ..
    } = platform;
    let business_id = caller.principal.business_id.clone();
    let member = member_of(&caller.principal)?;
    let now = clock.now();
    let mut tx = store.begin().await?;
    match configuration(&mut tx, &business_id).await? {
        Some(endpoint) if endpoint.is_active => {}
        Some(_) => return Err(paused()),
        None => return Err(no_configuration()),
    }
    let data = models::TestEventData {
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
    let mut logs = attempt_logs(store, std::slice::from_ref(&row.id)).await?;
    delivery_of(config, row, &mut logs)
}
