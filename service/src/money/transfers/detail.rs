//! A transfer as the Dashboard shows it to the people who review it or keep its receipt
//! (`TransferDetail`, issue 59): every field of the transfer, the names of its maker and its
//! reviewer, and the account it leaves with its balance now.

use std::collections::HashMap;

use generated_server::{models, Permission};
use serde_json::Value;

use crate::datastore::{members, transfers as stored};
use crate::error::{Error, OrInternal};
use crate::kernel::store::Store;
use crate::money::accounts::{self, AccountRow};
use crate::money::amount;
use crate::money::bank::Bank;
use crate::platform::principal::Principal;

/// Names and accounts already read while making one answer (a page reads each once).
struct Known<'a> {
    store: &'a Store,
    business_id: &'a str,
    names: HashMap<String, Option<String>>,
    accounts: HashMap<String, Option<AccountRow>>,
}

impl Known<'_> {
    /// `First Last` of the business's member `id`, if there is one.
    async fn name(&mut self, id: &str) -> Result<Option<String>, Error> {
        if let Some(name) = self.names.get(id) {
            return Ok(name.clone());
        }
        let member = members::find(self.store, self.business_id, id).await?;
        let name = member.map(|member| format!("{} {}", member.first_name, member.last_name));
        self.names.insert(id.to_owned(), name.clone());
        Ok(name)
    }

    async fn account(&mut self, number: &str) -> Result<Option<AccountRow>, Error> {
        if let Some(account) = self.accounts.get(number) {
            return Ok(account.clone());
        }
        let account = accounts::find_by_number(self.store, self.business_id, number).await?;
        self.accounts.insert(number.to_owned(), account.clone());
        Ok(account)
    }
}

/// `transfers` as `TransferDetail`s for the member `principal` (balances only with
/// `account.view`).
pub async fn details(
    store: &Store,
    principal: &Principal,
    transfers: Vec<models::Transfer>,
) -> Result<Vec<models::TransferDetail>, Error> {
    let sees_balances = principal
        .member
        .as_ref()
        .is_some_and(|member| member.permissions.contains(&Permission::AccountView));
    let mut known = Known {
        store,
        business_id: &principal.business_id,
        names: HashMap::new(),
        accounts: HashMap::new(),
    };
    let mut out = Vec::with_capacity(transfers.len());
    for transfer in transfers {
        out.push(detail_of(&mut known, sees_balances, transfer).await?);
    }
    Ok(out)
}

/// One transfer as a `TransferDetail`.
pub async fn detail(
    bank: &Bank,
    principal: &Principal,
    transfer: models::Transfer,
) -> Result<models::TransferDetail, Error> {
    let store = &bank.store;
    let mut all = details(store, principal, vec![transfer]).await?;
    all.pop()
        .ok_or_else(|| Error::internal("a transfer vanished"))
}

async fn detail_of(
    known: &mut Known<'_>,
    sees_balances: bool,
    transfer: models::Transfer,
) -> Result<models::TransferDetail, Error> {
    // The maker: the member who made it, or whoever had issued the integration's credentials.
    let maker = match transfer.initiated_via {
        models::TransferInitiatedVia::Dashboard => Some(transfer.initiated_by.to_string()),
        models::TransferInitiatedVia::Integration => stored::held(
            known.store,
            known.business_id,
            transfer.reference_number.as_str(),
        )
        .await?
        .and_then(|row| row.credential_issued_by),
    };
    let initiated_by_name = match maker {
        Some(id) => known.name(&id).await?,
        None => None,
    };
    let reviewed_by_name = match transfer.reviewed_by {
        Some(id) => known.name(&id.to_string()).await?,
        None => None,
    };
    let source = known
        .account(transfer.source_account_number.as_str())
        .await?;
    let mut fields = match serde_json::to_value(&transfer).or_internal()? {
        Value::Object(fields) => fields,
        _ => return Err(Error::internal("a transfer is not a JSON object")),
    };
    let balance = source
        .as_ref()
        .filter(|_| sees_balances)
        .map(|account| amount::balance_text(i128::from(account.balance)));
    fields.insert("initiated_by_name".into(), initiated_by_name.into());
    fields.insert("reviewed_by_name".into(), reviewed_by_name.into());
    fields.insert(
        "source_account_name".into(),
        source
            .map(|account| account.account_name)
            .unwrap_or_default()
            .into(),
    );
    fields.insert("source_account_balance".into(), balance.into());
    serde_json::from_value(Value::Object(fields)).or_internal()
}
