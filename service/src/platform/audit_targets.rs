//! What people call the objects audit-log entries name (`AuditLogEntry.target_name`, issue 59):
//! a transfer's reference number, a member's name and email, a role's name, an account's
//! number, the webhook endpoint's URL. Looked up once per object on a page; an object that can
//! no longer be found, and the kinds nobody names (a policy, an event), are `None`.

use std::collections::HashMap;

use generated_server::models;

use crate::datastore::transfers::Lookup;
use crate::datastore::{accounts, members, roles, transfers, webhook_endpoints};
use crate::error::Error;
use crate::kernel::store::Store;

/// Sets `target_name` on each of `entries`, the business's.
pub async fn name_targets(
    store: &Store,
    business_id: &str,
    entries: &mut [models::AuditLogEntry],
) -> Result<(), Error> {
    let mut known: HashMap<(String, String), Option<String>> = HashMap::new();
    for entry in entries.iter_mut() {
        let (Some(kind), Some(id)) = (&entry.target_type, &entry.target_id) else {
            continue;
        };
        let key = (kind.clone(), id.clone());
        if !known.contains_key(&key) {
            let name = name_of(store, business_id, kind, id).await?;
            known.insert(key.clone(), name);
        }
        entry.target_name = known.get(&key).cloned().flatten();
    }
    Ok(())
}

async fn name_of(
    store: &Store,
    business_id: &str,
    kind: &str,
    id: &str,
) -> Result<Option<String>, Error> {
    Ok(match kind {
        "transfer" => transfers::find(store, business_id, Lookup::Id(id))
            .await?
            .map(|transfer| transfer.reference_number),
        "member" => members::find(store, business_id, id).await?.map(|member| {
            format!(
                "{} {} <{}>",
                member.first_name, member.last_name, member.email
            )
        }),
        "role" => roles::find(store, business_id, id)
            .await?
            .map(|role| role.name),
        "account" => accounts::find_by_id(store, id)
            .await?
            .map(|account| account.account_number),
        "webhook_configuration" => webhook_endpoints::find(store, business_id)
            .await?
            .filter(|configuration| configuration.id.to_string() == id)
            .map(|configuration| configuration.url),
        _ => None,
    })
}
