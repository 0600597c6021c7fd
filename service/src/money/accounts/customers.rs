//! Customers' virtual accounts: `create_customer_account` verifies the customer's BVN or NIN
//! with the provider and opens one permanent account per customer and identity, under the
//! business's main account; a retry or a second opening finds the first.

use chrono::{DateTime, Utc};
use generated_server::models::{self, AuditAction};
use generated_server::ResponseCode;
use serde_json::Value;

use super::{
    account_name, ensure_business_active, find_by_number, insert_account, invalid, AccountRow,
    AccountView, NewAccount,
};
use crate::datastore::accounts;
use crate::datastore::customers::{self, Identity, NewCustomer};
use crate::error::{Error, OrInternal};
use crate::kernel::secrets::sha256_hex;
use crate::kernel::store::{self, Store, Tx};
use crate::money::bank::Bank;
use crate::money::nuban::Series;
use crate::outbox::events;
use crate::platform::business::{self, normalize_email};
use crate::platform::caller::Caller;
use crate::platform::context::Platform;
use crate::platform::idempotency::{Completion, Keyed, Prepared};
use crate::platform::logs::{self, AuditEntry};
use crate::provider::{AccountOpening, IdentityNumbers, VerifiedIdentity};

/// The key that tells two customers apart without keeping their identity numbers.
fn identity_hash(business_id: &str, kind: &str, number: &str) -> String {
    sha256_hex(&format!("kobo.identity.v1:{business_id}:{kind}:{number}"))
}

/// `create_customer_account`: verifies the identity with the provider, then opens a virtual
/// account with its own balance under the chosen parent (default: the main pool account).
pub async fn create_customer_account(
    bank: &Bank,
    caller: &Caller,
    body: models::CreateCustomerAccountRequest,
) -> Result<models::Account, Error> {
    let provider = &*bank.provider;
    let Platform { store, clock, .. } = &bank.platform;
    let business_id = caller.principal.business_id.clone();
    let numbers = IdentityNumbers {
        bvn: body.bvn.as_ref().map(|bvn| bvn.to_string()),
        nin: body.nin.as_ref().map(|nin| nin.to_string()),
    };
    if numbers.bvn.is_none() && numbers.nin.is_none() {
        return Err(
            Error::new(ResponseCode::IdentityNumberMissing).with_message("Provide a BVN or a NIN")
        );
    }
    let email = match body.email.as_deref() {
        Some(email) => {
            Some(normalize_email(email).ok_or_else(|| invalid("`email`: not an email address"))?)
        }
        None => None,
    };
    let chosen_name = account_name(body.account_name.as_deref().map(|name| name.as_str()))?;
    let prepare = async || {
        caller.principal.ensure_business_active()?;
        let parent_number = body.parent_account_number.as_deref().map(|n| n.as_str());
        check_customer_is_new(store, &business_id, &numbers, parent_number).await?;
        let verified = provider.verify_identity(&numbers).await?;
        let name = chosen_name.clone().unwrap_or_else(|| verified.name.clone());
        let opening = AccountOpening {
            business_id: &business_id,
            account_name: &name,
            account_type: "virtual",
        };
        provider.open_account(&opening).await?;
        Ok(Prepared::plain((verified, name)))
    };
    let write =
        async |tx: &mut Tx, (verified, name): (VerifiedIdentity, String), _: &mut Completion| {
            let now = clock.now();
            business::lock_business(tx, &business_id).await?;
            ensure_business_active(&mut *tx, &business_id).await?;
            let opening = CustomerOpening {
                business_id: &business_id,
                numbers: &numbers,
                verified_name: &verified.name,
                account_name: &name,
                email: email.as_deref(),
                phone: body.phone.as_ref().map(|phone| phone.as_str()),
                metadata: &body.metadata,
                parent_account_number: body.parent_account_number.as_deref().map(|n| n.as_str()),
            };
            let account = open_customer_account(tx, &opening, now).await?;
            let view = account.view()?;
            let entry = AuditEntry::by(caller, AuditAction::CreateCustomerAccount)
                .target("account", &account.id);
            logs::audit(tx, now, entry).await?;
            Ok(view)
        };
    Keyed::new(store, clock, caller, &body)
        .run(prepare, write)
        .await
}

/// The cheap refusals of a customer's opening, before the provider is asked: a parent that
/// is not the business's pool or current account (`44`), an identity that already has an
/// account in the business (`26`). Read in a transaction that is rolled back.
async fn check_customer_is_new(
    store: &Store,
    business_id: &str,
    numbers: &IdentityNumbers,
    parent_number: Option<&str>,
) -> Result<(), Error> {
    let hashes = [
        ("bvn", numbers.bvn.as_deref()),
        ("nin", numbers.nin.as_deref()),
    ]
    .map(|(kind, number)| number.map(|number| identity_hash(business_id, kind, number)));
    let mut tx = store.begin().await?;
    let parent = parent_account(&mut tx, business_id, parent_number).await;
    let duplicate = existing_customer_account(&mut tx, business_id, &hashes).await;
    tx.rollback().await?;
    parent?;
    match duplicate? {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

/// A verified customer's virtual account, as [`open_customer_account`] opens it.
#[derive(Clone, Debug)]
pub struct CustomerOpening<'a> {
    pub business_id: &'a str,
    pub numbers: &'a IdentityNumbers,
    pub verified_name: &'a str,
    pub account_name: &'a str,
    pub email: Option<&'a str>,
    pub phone: Option<&'a str>,
    pub metadata: &'a serde_json::Map<String, Value>,
    pub parent_account_number: Option<&'a str>,
}

/// Writes a verified customer and their virtual account inside `tx` (the business locked by
/// the caller), with the `account.created` event: `44` for a wrong parent, `26` for an identity
/// that already has an account in the business.
pub async fn open_customer_account(
    tx: &mut Tx,
    opening: &CustomerOpening<'_>,
    now: DateTime<Utc>,
) -> Result<AccountRow, Error> {
    let business_id = opening.business_id;
    let numbers = opening.numbers;
    let hashes = [
        ("bvn", numbers.bvn.as_deref()),
        ("nin", numbers.nin.as_deref()),
    ]
    .map(|(kind, number)| number.map(|number| identity_hash(business_id, kind, number)));
    let parent = parent_account(tx, business_id, opening.parent_account_number).await?;
    if let Some(error) = existing_customer_account(tx, business_id, &hashes).await? {
        return Err(error);
    }
    let mut verified_identities = Vec::new();
    if numbers.bvn.is_some() {
        verified_identities.push("bvn");
    }
    if numbers.nin.is_some() {
        verified_identities.push("nin");
    }
    let customer_id = store::new_id();
    let verified_identities = serde_json::to_string(&verified_identities).or_internal()?;
    let metadata = serde_json::to_string(opening.metadata).or_internal()?;
    let customer = NewCustomer {
        id: &customer_id,
        business_id,
        email: opening.email,
        phone: opening.phone,
        bvn_hash: hashes[0].as_deref(),
        nin_hash: hashes[1].as_deref(),
        verified_identities: &verified_identities,
        verified_name: opening.verified_name,
        metadata: &metadata,
        created_at: now,
    };
    customers::insert(tx, &customer).await?;
    let account = insert_account(
        tx,
        business_id,
        NewAccount {
            name: opening.account_name,
            series: Series::Virtual,
            account_type: "virtual",
            parent_account_id: &parent.id,
            customer_id: Some(&customer_id),
        },
        now,
    )
    .await?;
    events::record(tx, business_id, "account.created", &account.view()?, now).await?;
    Ok(account)
}

/// The pool or current account a new virtual account is linked to: `number`, or the main pool
/// account. `44` when `number` is not a pool or current account of the business.
async fn parent_account(
    tx: &mut Tx,
    business_id: &str,
    number: Option<&str>,
) -> Result<AccountRow, Error> {
    let found = match number {
        Some(number) => find_by_number(&mut *tx, business_id, number)
            .await?
            .filter(|account| account.account_type != "virtual"),
        None => accounts::main_account(tx, business_id).await?,
    };
    found.ok_or_else(|| {
        Error::new(ResponseCode::AccountNotFound).with_message(format!(
            "No pool or current account {} in this business",
            number.unwrap_or("(main)")
        ))
    })
}

/// `26` naming the account a BVN or NIN already has in this business.
async fn existing_customer_account(
    tx: &mut Tx,
    business_id: &str,
    hashes: &[Option<String>; 2],
) -> Result<Option<Error>, Error> {
    for ((kind, identity), hash) in [("BVN", Identity::Bvn), ("NIN", Identity::Nin)]
        .iter()
        .zip(hashes)
    {
        let Some(hash) = hash else { continue };
        let number = customers::account_number_of(tx, business_id, *identity, hash).await?;
        if let Some(number) = number {
            return Ok(Some(Error::new(ResponseCode::Duplicate).with_message(
                format!("This {kind} already has account {number} in this business"),
            )));
        }
    }
    Ok(None)
}
