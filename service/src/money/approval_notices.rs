//! The emails of maker-checker approval (issue 59), written to the outbox in the transaction of
//! the change they tell of: when the policy holds a transfer, each member who may approve it
//! (not its maker) is told it waits; when a checker approves or rejects it, its maker is told.
//! A checker need not watch the Dashboard, and a maker learns what became of a payment.

use chrono::{DateTime, Utc};
use generated_server::models;

use crate::datastore::members;
use crate::error::Error;
use crate::kernel::config::Config;
use crate::kernel::store::{Store, Tx};
use crate::money::transfers::status::TransferStatus;
use crate::outbox::{self, Notification};

/// The most approvers a held transfer is told of: a business's checkers, not a mailing list.
const APPROVERS_MAX: i64 = 50;

/// A member who may approve: whom to tell.
#[derive(Clone, Debug)]
pub(crate) struct Approver {
    id: String,
    email: String,
    first_name: String,
}

/// The business's active members who may approve transfers, but `maker`: read before a held
/// transfer's transaction (a member who joins meanwhile finds it in the Dashboard's queue).
pub(crate) async fn approvers_of(
    store: &Store,
    business_id: &str,
    maker: Option<&str>,
) -> Result<Vec<Approver>, Error> {
    let found = members::approvers(store, business_id, APPROVERS_MAX).await?;
    Ok(found
        .into_iter()
        .filter(|(id, _, _)| Some(id.as_str()) != maker)
        .map(|(id, email, first_name)| Approver {
            id,
            email,
            first_name,
        })
        .collect())
}

/// `NGN 12,500.00`: an amount of the API as a person reads it.
fn naira(amount: &str) -> String {
    let (whole, fraction) = amount.split_once('.').unwrap_or((amount, "00"));
    let mut grouped = String::with_capacity(whole.len() + whole.len() / 3);
    for (n, digit) in whole.chars().enumerate() {
        if n > 0 && (whole.len() - n) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("NGN {grouped}.{fraction}")
}

fn when(at: DateTime<Utc>) -> String {
    at.format("%-d %B %Y, %H:%M UTC").to_string()
}

/// Where and when a message is written: the business it concerns, the time of the change that
/// causes it, and the configuration (the Dashboard's address it links to).
pub(crate) struct Telling<'a> {
    pub config: &'a Config,
    pub now: DateTime<Utc>,
    pub business_id: &'a str,
}

/// Tells each of `approvers` that `transfer`, made by `maker_name` from the account
/// `source_name`, waits for their approval, inside `tx`.
pub(crate) async fn tell_approvers(
    tx: &mut Tx,
    telling: &Telling<'_>,
    approvers: &[Approver],
    maker_name: &str,
    source_name: &str,
    transfer: &models::Transfer,
) -> Result<(), Error> {
    let amount = naira(transfer.amount.as_str());
    let beneficiary = &transfer.beneficiary_account_name;
    let expiry = match transfer.expires_at {
        Some(at) => format!(
            "If nobody reviews it by {}, it expires and nothing is paid.\n",
            when(at)
        ),
        None => String::new(),
    };
    for approver in approvers {
        let body = format!(
            "Hello {first_name},\n\n{maker_name} asked to pay {amount} to {beneficiary} \
             ({bank}, account {account}) from {source_name} ({source}).\n\nNarration: \
             {narration}\nReference: {reference}\n\nApprove or reject it in the Kobo \
             Dashboard:\n{dashboard}approvals\n\n{expiry}",
            first_name = approver.first_name,
            bank = transfer.bank_name,
            account = transfer.beneficiary_account_number.as_str(),
            source = transfer.source_account_number.as_str(),
            narration = transfer.narration,
            reference = transfer.reference_number.as_str(),
            dashboard = telling.config.dashboard_url,
        );
        let notification = Notification {
            business_id: Some(telling.business_id.to_owned()),
            channel: "email",
            recipient: approver.email.clone(),
            subject: format!("A payment of {amount} to {beneficiary} waits for your approval"),
            body,
        };
        outbox::enqueue(tx, telling.now, &notification).await?;
        tracing::debug!(approver = %approver.id, "told of a held transfer");
    }
    Ok(())
}

/// How a checker decided.
pub(crate) enum Decision<'a> {
    Approved,
    Rejected { reason: &'a str },
}

/// Tells the maker (`maker_id`, a member of the business) that `reviewer_name` decided their
/// held `transfer`, inside `tx`. Nothing when the maker is not a member (credentials the
/// bank issued).
pub(crate) async fn tell_maker(
    tx: &mut Tx,
    telling: &Telling<'_>,
    maker_id: &str,
    reviewer_name: &str,
    decision: Decision<'_>,
    transfer: &models::Transfer,
) -> Result<(), Error> {
    let Some(maker) = members::find(&mut *tx, telling.business_id, maker_id).await? else {
        return Ok(());
    };
    let amount = naira(transfer.amount.as_str());
    let beneficiary = &transfer.beneficiary_account_name;
    let reference = transfer.reference_number.as_str();
    let (verb, outcome) = match decision {
        Decision::Approved => (
            "approved",
            "The money is on its way: the receipt shows when it arrives.".to_owned(),
        ),
        // The word is the status the transfer now has, as the Dashboard shows it.
        Decision::Rejected { reason } => (
            TransferStatus::Rejected.as_str(),
            format!(
                "Their reason: {reason}\nNothing was paid: the reserved amount is back in the account."
            ),
        ),
    };
    let notification = Notification {
        business_id: Some(telling.business_id.to_owned()),
        channel: "email",
        recipient: maker.email,
        subject: format!("Your payment of {amount} to {beneficiary} was {verb}"),
        body: format!(
            "Hello {first_name},\n\n{reviewer_name} {verb} your payment of {amount} to \
             {beneficiary} ({reference}).\n{outcome}\n\nIts receipt:\n{dashboard}transfers/{reference}\n",
            first_name = maker.first_name,
            dashboard = telling.config.dashboard_url,
        ),
    };
    outbox::enqueue(tx, telling.now, &notification).await?;
    Ok(())
}

/// A checker's or maker's name as a message names them.
pub(crate) fn full_name(first_name: &str, last_name: &str) -> String {
    format!("{first_name} {last_name}").trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_written_with_separators() {
        assert_eq!(naira("5000.00"), "NGN 5,000.00");
        assert_eq!(naira("1000000.50"), "NGN 1,000,000.50");
        assert_eq!(naira("999.00"), "NGN 999.00");
        assert_eq!(naira("0.75"), "NGN 0.75");
    }
}
