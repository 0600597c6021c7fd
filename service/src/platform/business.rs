//! A business as the platform sees it while serving requests: its status lock, its
//! environment, its integration secret. Provisioning (creating, activating, the demo) is the
//! operator's, in `operator::businesses`.

use chrono::{DateTime, Utc};
use generated_server::ResponseCode;

use crate::datastore::{businesses, sessions};
use crate::error::Error;
use crate::kernel::config::Environment;
use crate::kernel::secrets;
use crate::kernel::store::Tx;

/// The environment a business belongs to, read from its `client_id` (`kb_sandbox_...` or
/// `kb_live_...`): credentials say where they work, so no column repeats it.
pub fn environment_of_client_id(client_id: &str) -> Environment {
    if client_id.starts_with("kb_live_") {
        Environment::Production
    } else {
        Environment::Sandbox
    }
}

/// `41` unless the business of `client_id` belongs to `environment`: a server serves only the
/// businesses of its own environment, so a sandbox business's credentials, members and tokens
/// do nothing on a production server over the same database (and the other way round).
pub fn ensure_served(environment: Environment, client_id: &str) -> Result<(), Error> {
    if environment_of_client_id(client_id) == environment {
        return Ok(());
    }
    Err(
        Error::new(ResponseCode::Unauthenticated).with_message(match environment {
            Environment::Production => {
                "These credentials belong to the sandbox: call the sandbox server"
            }
            Environment::Sandbox => {
                "These credentials belong to production: call the production server"
            }
        }),
    )
}

/// The beginning of every `client_id` of `environment` (`kb_sandbox_`, `kb_live_`).
pub fn client_id_prefix(environment: Environment) -> String {
    format!("kb_{}_", environment.credential_tag())
}

/// Issues a new client secret for the business, revoking the old one and every integration
/// session at `now`, inside `tx`; `issuer` is the member who asked for it (who controls the
/// credentials from now on). Returns `(client_id, client_secret)`.
pub async fn rotate_client_secret(
    tx: &mut Tx,
    business_id: &str,
    issuer: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(String, String), Error> {
    let client_id = businesses::client_id_of(tx, business_id).await?;
    let secret = new_client_secret(environment_of_client_id(&client_id));
    let hash = secrets::sha256_hex(&secret);
    businesses::set_client_secret(tx, business_id, &hash, issuer, now).await?;
    sessions::revoke_integration_of_business(tx, business_id, now).await?;
    Ok((client_id, secret))
}

/// Serializes changes to a business's team (the last-Owner rule, OTP quotas): takes the
/// business's lock until `tx` ends ([`businesses::lock`]: a row lock on PostgreSQL, where
/// transactions run concurrently; nothing on SQLite, whose write transactions are serialized
/// already).
pub async fn lock_business(tx: &mut Tx, business_id: &str) -> Result<(), Error> {
    businesses::lock(tx, business_id).await?;
    Ok(())
}

/// `kb_sandbox_<12 hex>` / `kb_live_<12 hex>`: the first 12 hex digits of the (random) business
/// id, as in the spec's examples (`kb_sandbox_5b6f8a523c1e` for `5b6f8a52-3c1e-...`).
pub(crate) fn client_id_for(environment: Environment, business_id: &str) -> String {
    let hex: String = business_id.chars().filter(|c| *c != '-').take(12).collect();
    format!("kb_{}_{hex}", environment.credential_tag())
}

/// `kbs_sandbox_<43 characters>`: 32 random bytes.
pub(crate) fn new_client_secret(environment: Environment) -> String {
    secrets::random_token(&format!("kbs_{}_", environment.credential_tag()))
}

/// Lower-cased and trimmed, or `None` when it does not look like an address.
pub fn normalize_email(email: &str) -> Option<String> {
    let email = email.trim().to_lowercase();
    let (local, domain) = email.split_once('@')?;
    let plausible = !local.is_empty()
        && !domain.is_empty()
        && !domain.contains('@')
        && email.len() <= 255
        && !email.chars().any(char::is_whitespace);
    plausible.then_some(email)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_ids_carry_the_environment_and_the_business_id() {
        let id = "5b6f8a52-3c1e-4d2b-9a7f-1e2d3c4b5a60";
        assert_eq!(
            client_id_for(Environment::Sandbox, id),
            "kb_sandbox_5b6f8a523c1e"
        );
        assert_eq!(
            client_id_for(Environment::Production, id),
            "kb_live_5b6f8a523c1e"
        );
        assert_eq!(
            environment_of_client_id("kb_live_5b6f8a523c1e"),
            Environment::Production
        );
        assert!(new_client_secret(Environment::Sandbox).starts_with("kbs_sandbox_"));
    }

    #[test]
    fn emails_are_normalized_or_refused() {
        assert_eq!(
            normalize_email("  Adaeze.Okafor@AdaezeFoods.ng "),
            Some("adaeze.okafor@adaezefoods.ng".into())
        );
        for bad in ["", "no-at-sign", "@x.ng", "a@", "a@b@c", "a b@c.ng"] {
            assert_eq!(normalize_email(bad), None, "{bad}");
        }
    }
}
