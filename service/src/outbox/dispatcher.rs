//! Delivery of the notification outbox (`notify` writes it).
//!
//! A [`Channel`] sends one stored message. [`SmtpChannel`] does it over SMTP and is used when
//! `KOBO_SMTP_URL` is set; without it no channel runs and messages stay in the outbox, where an
//! operator reads them with `kobo outbox` ([`recent`]). The [`Dispatcher`] of `kobo serve` sends
//! what is due, a bounded batch per pass, and records the outcome on the row: `sent_at`, or
//! `last_error` and the next attempt after a backoff, giving up after
//! [`DispatcherConfig::max_attempts`].
//!
//! Several `kobo` processes may share one database: a message is claimed by a conditional
//! update that moves its `next_attempt_at` past a lease before it is sent, so only one process
//! sends it at a time, on SQLite and PostgreSQL alike.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use anyhow::Context;
use chrono::{DateTime, Utc};
use lettre::message::header::ContentType;
use lettre::message::Mailbox;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use serde::Serialize;

use crate::datastore::notifications;
use crate::kernel::clock::Clock;
use crate::kernel::store::Store;

/// The only kind of message today.
const EMAIL: &str = "email";
/// The longest `last_error` kept, in characters.
const LAST_ERROR_LENGTH_MAX: usize = 500;
/// The most messages `recent` returns.
pub const RECENT_LIMIT_MAX: u32 = 1000;

/// One message of the outbox, as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StoredNotification {
    pub id: String,
    pub business_id: Option<String>,
    pub channel: String,
    pub recipient: String,
    pub subject: String,
    pub body: String,
    pub created_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
    pub attempts: i64,
    pub last_error: Option<String>,
}

impl From<notifications::Notification> for StoredNotification {
    fn from(row: notifications::Notification) -> StoredNotification {
        StoredNotification {
            id: row.id,
            business_id: row.business_id,
            channel: row.channel,
            recipient: row.recipient,
            subject: row.subject,
            body: row.body,
            created_at: row.created_at,
            sent_at: row.sent_at,
            attempts: row.attempts,
            last_error: row.last_error,
        }
    }
}

/// Why a message could not be sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryError {
    pub message: String,
    /// The server refused the message for good (an SMTP 5xx): trying again will not help.
    pub permanent: bool,
}

impl DeliveryError {
    pub fn transient(message: impl Into<String>) -> Self {
        DeliveryError {
            message: message.into(),
            permanent: false,
        }
    }

    pub fn permanent(message: impl Into<String>) -> Self {
        DeliveryError {
            message: message.into(),
            permanent: true,
        }
    }
}

impl fmt::Display for DeliveryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DeliveryError {}

/// A way to deliver a stored message to its recipient.
pub trait Channel: Send + Sync + 'static {
    fn send(
        &self,
        notification: &StoredNotification,
    ) -> impl Future<Output = Result<(), DeliveryError>> + Send;
}

/// How to reach the SMTP server.
#[derive(Clone, Debug)]
pub struct SmtpSettings {
    /// `smtp://host:port` (plain), `smtp://user:pass@host:587?tls=required` (STARTTLS) or
    /// `smtps://user:pass@host` (TLS from the start).
    pub url: String,
    /// The `From` of every message, `Name <address>` or a bare address.
    pub from: String,
    /// How long one SMTP exchange may take.
    pub timeout: Duration,
}

/// Sends messages as plain-text email over SMTP (lettre, rustls for TLS).
pub struct SmtpChannel {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl SmtpChannel {
    pub fn new(settings: &SmtpSettings) -> anyhow::Result<SmtpChannel> {
        let from: Mailbox = settings.from.parse().with_context(|| {
            format!("KOBO_SMTP_FROM {:?} is not an email address", settings.from)
        })?;
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(&settings.url)
            .with_context(|| {
                format!(
                    "KOBO_SMTP_URL is not a usable SMTP URL ({})",
                    redact_smtp_url(&settings.url)
                )
            })?
            .timeout(Some(settings.timeout))
            .build();
        Ok(SmtpChannel { transport, from })
    }
}

impl Channel for SmtpChannel {
    async fn send(&self, notification: &StoredNotification) -> Result<(), DeliveryError> {
        let to: Mailbox = notification.recipient.parse().map_err(|error| {
            DeliveryError::permanent(format!(
                "recipient {:?} is not an email address: {error}",
                notification.recipient
            ))
        })?;
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(notification.subject.clone())
            .header(ContentType::TEXT_PLAIN)
            .body(notification.body.clone())
            .map_err(|error| {
                DeliveryError::permanent(format!("cannot build the email: {error}"))
            })?;
        self.transport
            .send(message)
            .await
            .map(|_| ())
            .map_err(|error| DeliveryError {
                message: format!("SMTP: {error}"),
                permanent: error.is_permanent(),
            })
    }
}

/// Hides the password of an SMTP URL in messages.
fn redact_smtp_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            format!("{}***{}", &url[..scheme_end + 3], &url[at..])
        }
        _ => url.to_string(),
    }
}

/// The limits of the dispatcher.
#[derive(Clone, Debug)]
pub struct DispatcherConfig {
    /// Messages claimed per pass.
    pub batch_size: u32,
    /// Attempts per message before giving up (it stays in the outbox with its `last_error`).
    pub max_attempts: u32,
    /// The pause between passes.
    pub poll_interval: Duration,
    /// How long a claimed message is reserved for the process that claimed it.
    pub lease: Duration,
    /// How long one send may take before it counts as failed.
    pub send_timeout: Duration,
}

impl Default for DispatcherConfig {
    fn default() -> Self {
        DispatcherConfig {
            batch_size: 20,
            max_attempts: 6,
            poll_interval: Duration::from_secs(2),
            lease: Duration::from_secs(120),
            send_timeout: Duration::from_secs(60),
        }
    }
}

/// What one pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DispatchReport {
    pub sent: usize,
    pub failed: usize,
}

/// The wait before attempt `attempts + 1`, after `attempts` failures (OTPs live five minutes,
/// so the first retries come quickly).
pub fn retry_delay(attempts: u32) -> Duration {
    const DELAYS_SECONDS: [u64; 5] = [10, 30, 120, 600, 1800];
    let index = (attempts.max(1) as usize - 1).min(DELAYS_SECONDS.len() - 1);
    Duration::from_secs(DELAYS_SECONDS[index])
}

/// Sends the outbox's due messages through one channel.
pub struct Dispatcher<C> {
    store: Store,
    channel: C,
    config: DispatcherConfig,
    clock: Clock,
}

impl<C: Channel> Dispatcher<C> {
    /// A dispatcher on the system clock.
    pub fn new(store: Store, channel: C, config: DispatcherConfig) -> Self {
        Dispatcher {
            store,
            channel,
            config,
            clock: Clock::system(),
        }
    }

    /// The same dispatcher reading time from `clock`.
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Passes until `shutdown` resolves. A pass in progress is finished first (each send is
    /// bounded by `send_timeout`); a message claimed but not sent is retried after its lease.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        loop {
            match self.dispatch_due(self.clock.now()).await {
                Ok(report) if report.sent + report.failed > 0 => {
                    tracing::info!(sent = report.sent, failed = report.failed, "notifications");
                }
                Ok(_) => {}
                Err(error) => tracing::warn!(error = %format!("{error:#}"), "notification pass"),
            }
            tokio::select! {
                () = &mut shutdown => return,
                () = tokio::time::sleep(self.config.poll_interval) => {}
            }
        }
    }

    /// One pass at time `now`: claims up to `batch_size` due messages and sends each.
    pub async fn dispatch_due(&self, now: DateTime<Utc>) -> anyhow::Result<DispatchReport> {
        let due = self.due(now).await?;
        let mut report = DispatchReport::default();
        for notification in due {
            if !self.claim(&notification.id, now).await? {
                continue; // another process took it
            }
            let outcome = match tokio::time::timeout(
                self.config.send_timeout,
                self.channel.send(&notification),
            )
            .await
            {
                Ok(outcome) => outcome,
                Err(_) => Err(DeliveryError::transient(format!(
                    "no answer within {} s",
                    self.config.send_timeout.as_secs()
                ))),
            };
            match outcome {
                Ok(()) => {
                    self.mark_sent(&notification.id, self.clock.now()).await?;
                    report.sent += 1;
                }
                Err(error) => {
                    tracing::warn!(
                        notification_id = %notification.id,
                        attempt = notification.attempts + 1,
                        error = %error,
                        "notification not delivered"
                    );
                    self.mark_failed(&notification, &error, now).await?;
                    report.failed += 1;
                }
            }
        }
        Ok(report)
    }

    async fn due(&self, now: DateTime<Utc>) -> anyhow::Result<Vec<StoredNotification>> {
        let due = notifications::due(
            &self.store,
            EMAIL,
            i64::from(self.config.max_attempts),
            now,
            i64::from(self.config.batch_size),
        )
        .await
        .context("cannot read the due notifications")?;
        Ok(due.into_iter().map(StoredNotification::from).collect())
    }

    /// Reserves the message for this process for `lease`; false when another process has it.
    async fn claim(&self, id: &str, now: DateTime<Utc>) -> anyhow::Result<bool> {
        let lease_end = now + chrono::Duration::from_std(self.config.lease)?;
        let _turn = self.store.write_turn().await;
        notifications::claim(&self.store, id, lease_end, now)
            .await
            .context("cannot claim a notification")
    }

    async fn mark_sent(&self, id: &str, at: DateTime<Utc>) -> anyhow::Result<()> {
        let _turn = self.store.write_turn().await;
        notifications::mark_sent(&self.store, id, at)
            .await
            .context("cannot mark a notification sent")
    }

    async fn mark_failed(
        &self,
        notification: &StoredNotification,
        error: &DeliveryError,
        now: DateTime<Utc>,
    ) -> anyhow::Result<()> {
        let attempts = u32::try_from(notification.attempts + 1).unwrap_or(u32::MAX);
        // A permanent refusal uses up the remaining attempts at once.
        let attempts = if error.permanent {
            attempts.max(self.config.max_attempts)
        } else {
            attempts
        };
        let next_attempt_at = (attempts < self.config.max_attempts)
            .then(|| now + chrono::Duration::from_std(retry_delay(attempts)).unwrap_or_default());
        let last_error: String = error.message.chars().take(LAST_ERROR_LENGTH_MAX).collect();
        let _turn = self.store.write_turn().await;
        notifications::mark_failed(
            &self.store,
            &notification.id,
            i64::from(attempts),
            &last_error,
            next_attempt_at,
        )
        .await
        .context("cannot record a failed notification")
    }
}

/// The newest `limit` messages of the outbox (at most [`RECENT_LIMIT_MAX`]), newest first.
pub async fn recent(store: &Store, limit: u32) -> anyhow::Result<Vec<StoredNotification>> {
    let recent = notifications::recent(store, i64::from(limit.min(RECENT_LIMIT_MAX)))
        .await
        .context("cannot read the outbox")?;
    Ok(recent.into_iter().map(StoredNotification::from).collect())
}

/// The messages waiting to be sent: neither sent nor given up (fewer than `max_attempts`
/// attempts), whether due now or waiting for a retry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    pub unsent: i64,
    /// When the oldest of them was written; `None` when none waits.
    pub oldest_created_at: Option<DateTime<Utc>>,
}

/// The outbox's [`Backlog`] (for `/metrics`).
pub async fn backlog(store: &Store, config: &DispatcherConfig) -> anyhow::Result<Backlog> {
    let unsent = notifications::unsent(store, i64::from(config.max_attempts))
        .await
        .context("cannot count the outbox's unsent messages")?;
    Ok(Backlog {
        unsent: unsent.count,
        oldest_created_at: unsent.oldest_created_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_and_stay_bounded() {
        let delays: Vec<u64> = (1..=8).map(|n| retry_delay(n).as_secs()).collect();
        assert_eq!(delays, [10, 30, 120, 600, 1800, 1800, 1800, 1800]);
        assert_eq!(retry_delay(0).as_secs(), 10);
    }

    #[test]
    fn smtp_passwords_are_hidden() {
        assert_eq!(
            redact_smtp_url("smtps://kobo:s3cret@mail.example:465"),
            "smtps://***@mail.example:465"
        );
        assert_eq!(
            redact_smtp_url("smtp://127.0.0.1:2525"),
            "smtp://127.0.0.1:2525"
        );
    }
}
