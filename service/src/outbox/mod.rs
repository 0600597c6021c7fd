//! What leaves the bank after a change commits: messages to people (invitations, OTPs) and
//! webhook deliveries of domain events.
//!
//! A message is written to the `notifications` table inside the transaction of the change that
//! causes it, so it is never lost and never sent for a change that rolled back. Delivery
//! happens afterwards: by SMTP when configured, otherwise the stored message is what an operator
//! reads with `kobo outbox`. Domain events ([`events`]) are written the same way and delivered
//! to each business's endpoint by [`webhooks`]: its dispatcher, signed
//! ([`webhooks::signing`]), to checked addresses only ([`webhooks::destination`]).

pub mod dispatcher;
pub mod events;
pub mod webhooks;

use chrono::{DateTime, Utc};

use crate::datastore::notifications::{self, NewNotification};
use crate::datastore::Tx;
use crate::error::Error;

/// One message to one person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    /// The business it concerns, if any.
    pub business_id: Option<String>,
    /// `email` today.
    pub channel: &'static str,
    pub recipient: String,
    pub subject: String,
    pub body: String,
}

/// Stores `notification`, written at `now`, in the outbox, as part of `tx`. Returns its id.
pub async fn enqueue(
    tx: &mut Tx,
    now: DateTime<Utc>,
    notification: &Notification,
) -> Result<String, Error> {
    let new = NewNotification {
        business_id: notification.business_id.as_deref(),
        channel: notification.channel,
        recipient: &notification.recipient,
        subject: &notification.subject,
        body: &notification.body,
    };
    Ok(notifications::insert(tx, &new, now).await?)
}
