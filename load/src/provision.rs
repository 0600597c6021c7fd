//! A run's businesses, made the way an operator and a partner make them: the operator CLI
//! creates and activates each business, then the partner takes an integration token, opens
//! current accounts, funds them with (sandbox) inbound credits and, as the owner, registers a
//! webhook endpoint and an approval policy.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use tokio::sync::RwLock;

use crate::api::{naira, Api, Keep, Outcome};
use crate::cluster::Cluster;
use crate::history::History;
use crate::receiver::Receiver;

pub const OWNER_PASSWORD: &str = "Load-Test-Owner-2026!";

/// What to make.
#[derive(Clone)]
pub struct Plan {
    pub businesses: usize,
    pub accounts_per_business: usize,
    /// Credited to every account at the start, in kobo.
    pub funding: i64,
    /// An approval policy on the first business from this amount (kobo).
    pub approval_from: Option<i64>,
    /// The webhook receiver and its base URL: each business registers `<base>/hooks/<index>`
    /// before anything happens to it, so every one of its events is for the endpoint, and the
    /// receiver learns the secret at once.
    pub webhooks: Option<(Receiver, String)>,
}

#[derive(Clone, Debug)]
pub struct Account {
    pub number: String,
    pub name: String,
}

/// How a credential gets a fresh token when its token stops working.
#[derive(Clone, Debug)]
pub enum Login {
    Integration {
        client_id: String,
        client_secret: String,
    },
    Owner {
        email: String,
    },
}

/// A bearer token that is taken again when the API answers `41`.
pub struct Token {
    login: Login,
    value: RwLock<String>,
}

impl Token {
    pub async fn take(api: &Api, login: Login) -> Result<Token> {
        let value = Self::fetch(api, &login).await?;
        Ok(Token {
            login,
            value: RwLock::new(value),
        })
    }

    async fn fetch(api: &Api, login: &Login) -> Result<String> {
        let (path, body) = match login {
            Login::Integration {
                client_id,
                client_secret,
            } => (
                "/api/v1/auth/api/generate_token",
                json!({"client_id": client_id, "client_secret": client_secret}),
            ),
            Login::Owner { email } => (
                "/api/v1/auth/web/login",
                json!({"email": email, "password": OWNER_PASSWORD}),
            ),
        };
        // Any process will do; a restart may be under way, so keep trying for a while.
        for attempt in 0..600 {
            let outcome = api.post(attempt, path, None, &[], &body).await;
            if let Some(token) = outcome
                .data()
                .and_then(|data| data.get("access_token"))
                .and_then(Value::as_str)
            {
                return Ok(token.to_owned());
            }
            // A login is tried again after a transient answer: `97` while the database (or
            // its pooler) is out of reach, too.
            if let Outcome::Answer { code, body, .. } = &outcome {
                if !crate::chaos::is_transient(code) {
                    bail!("{path} refused: {body}");
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        bail!("{path}: no token after a minute of trying")
    }

    pub async fn get(&self) -> String {
        self.value.read().await.clone()
    }

    /// How this credential signs in (for a token of its own elsewhere, e.g. on a restored copy).
    pub fn login(&self) -> &Login {
        &self.login
    }

    /// POSTs `body` to `path` on `process` with this token; after a `41` takes a new token
    /// for the next call (the answer is returned as it came).
    pub async fn post(&self, api: &Api, process: usize, path: &str, body: &Value) -> Outcome {
        self.post_keeping(api, process, path, body, Keep::Body)
            .await
    }

    /// [`Token::post`], keeping `keep` of the answer's body.
    pub async fn post_keeping(
        &self,
        api: &Api,
        process: usize,
        path: &str,
        body: &Value,
        keep: Keep,
    ) -> Outcome {
        let token = self.get().await;
        let outcome = api
            .post_keeping(process, path, Some(&token), &[], body, keep)
            .await;
        if outcome.is("41") {
            let _ = self.refresh(api, &token).await;
        }
        outcome
    }

    /// [`Token::post`] with an `Idempotency-Key`.
    pub async fn post_keyed(
        &self,
        api: &Api,
        process: usize,
        path: &str,
        key: &str,
        body: &Value,
    ) -> Outcome {
        let token = self.get().await;
        let outcome = api
            .post(
                process,
                path,
                Some(&token),
                &[("Idempotency-Key", key)],
                body,
            )
            .await;
        if outcome.is("41") {
            let _ = self.refresh(api, &token).await;
        }
        outcome
    }

    /// Takes a new token unless someone already replaced `stale`.
    pub async fn refresh(&self, api: &Api, stale: &str) -> Result<()> {
        let mut value = self.value.write().await;
        if *value == stale {
            *value = Self::fetch(api, &self.login).await?;
        }
        Ok(())
    }
}

pub struct Business {
    pub index: usize,
    /// The business's id, as `kobo business create` printed it.
    pub id: String,
    pub integration: Token,
    pub owner: Token,
    pub accounts: Vec<Account>,
    pub approval_from: Option<i64>,
}

/// Makes the plan's businesses; every credit is in the history.
pub async fn provision(
    cluster: &Cluster,
    api: &Api,
    history: &History,
    plan: &Plan,
) -> Result<Vec<Business>> {
    let mut businesses = Vec::new();
    for index in 0..plan.businesses {
        let name = format!("Load Test {index} Ltd");
        let email = format!("owner{index}@load-{}.kobo.test", std::process::id());
        let Created {
            id, integration, ..
        } = create_business(cluster, api, &name, &email).await?;
        let owner = Token::take(api, Login::Owner { email }).await?;
        if let Some((receiver, base)) = &plan.webhooks {
            let secret = register_webhook(api, &owner, &format!("{base}/hooks/{index}")).await?;
            receiver.add_secret(index, &secret)?;
        }
        let token = integration.get().await;
        for n in 1..plan.accounts_per_business {
            let body = json!({"account_name": format!("{name} - Load {n}")});
            expect_ok(
                api.post(
                    0,
                    "/api/v1/account/api/create_account",
                    Some(&token),
                    &[],
                    &body,
                )
                .await,
                "create_account_api",
            )?;
        }
        let listed = expect_ok(
            api.post(
                0,
                "/api/v1/account/api/fetch_customer_accounts",
                Some(&token),
                &[],
                &json!({"limit": 100}),
            )
            .await,
            "fetch_customer_accounts",
        )?;
        let accounts: Vec<Account> = listed
            .as_array()
            .context("fetch_customer_accounts: data is not a list")?
            .iter()
            .map(|account| Account {
                number: account["account_number"]
                    .as_str()
                    .unwrap_or_default()
                    .into(),
                name: account["account_name"].as_str().unwrap_or_default().into(),
            })
            .collect();
        for account in &accounts {
            let body = json!({
                "account_number": account.number,
                "amount": naira(plan.funding),
                "narration": "load test funding",
            });
            expect_ok(
                api.post(
                    0,
                    "/api/v1/sandbox/api/simulate_inbound_transfer",
                    Some(&token),
                    &[],
                    &body,
                )
                .await,
                "simulate_inbound_transfer",
            )?;
            history.record(
                "fund",
                json!({"business": index, "account": account.number, "amount": plan.funding}),
            );
        }
        let owner_token = owner.get().await;
        let mut approval_from = None;
        if index == 0 {
            if let Some(from) = plan.approval_from {
                expect_ok(
                    api.post(
                        0,
                        "/api/v1/transaction/transfer/web/create_approval_policy",
                        Some(&owner_token),
                        &[],
                        &json!({"min_amount": naira(from), "is_active": true}),
                    )
                    .await,
                    "create_approval_policy",
                )?;
                approval_from = Some(from);
            }
        }
        businesses.push(Business {
            index,
            id,
            integration,
            owner,
            accounts,
            approval_from,
        });
    }
    Ok(businesses)
}

/// A business just made by [`create_business`]: nothing on its ledger yet.
pub struct Created {
    pub id: String,
    pub integration: Token,
    pub main_account: Account,
}

/// An active business named `name`, owned by `email`, made by the operator CLI (`kobo business
/// create --active`) with a daily limit far above what a run moves; its integration token
/// taken. Its main account is opened, not funded.
pub async fn create_business(
    cluster: &Cluster,
    api: &Api,
    name: &str,
    email: &str,
) -> Result<Created> {
    let created = cluster
        .cli(&[
            "business",
            "create",
            "--name",
            name,
            "--owner-email",
            email,
            "--owner-password",
            OWNER_PASSWORD,
            "--active",
        ])
        .await?;
    let field = |name: &str| {
        created
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .with_context(|| format!("business create --json without {name}: {created}"))
    };
    let id = field("business_id")?;
    // Far above what a run moves: the limit is not what is under test here.
    cluster
        .cli(&["business", "daily-limit", &id, "1000000000"])
        .await?;
    let integration = Token::take(
        api,
        Login::Integration {
            client_id: field("client_id")?,
            client_secret: field("client_secret")?,
        },
    )
    .await?;
    Ok(Created {
        main_account: Account {
            number: field("main_account_number")?,
            name: field("name")?,
        },
        id,
        integration,
    })
}

/// Registers the owner's business's webhook endpoint at `url`; answers its signing secret.
async fn register_webhook(api: &Api, owner: &Token, url: &str) -> Result<String> {
    let data = expect_ok(
        api.post(
            0,
            "/api/v1/customer/web/webhook_configuration",
            Some(&owner.get().await),
            &[],
            &json!({"url": url}),
        )
        .await,
        "webhook_configuration",
    )?;
    Ok(data["secret"]
        .as_str()
        .context("webhook_configuration without a secret")?
        .to_owned())
}

/// The `data` of a `00` answer, or an error naming the operation and the answer.
pub fn expect_ok(outcome: Outcome, operation: &str) -> Result<Value> {
    match outcome.data() {
        Some(data) => Ok(data.clone()),
        None => bail!("{operation}: {outcome:?}"),
    }
}

/// Opens one more current account of the integration's business, named `name`.
pub async fn create_account(api: &Api, integration: &Token, name: &str) -> Result<Account> {
    let data = expect_ok(
        integration
            .post(
                api,
                0,
                "/api/v1/account/api/create_account",
                &json!({ "account_name": name }),
            )
            .await,
        "create_account_api",
    )?;
    Ok(Account {
        number: data["account_number"]
            .as_str()
            .context("create_account_api without an account_number")?
            .into(),
        name: data["account_name"].as_str().unwrap_or(name).into(),
    })
}

/// A (sandbox) inbound credit of `amount` kobo into `account`.
pub async fn credit(
    api: &Api,
    integration: &Token,
    process: usize,
    account: &str,
    amount: i64,
) -> Result<()> {
    let body = json!({
        "account_number": account,
        "amount": naira(amount),
        "narration": "load test funding",
    });
    expect_ok(
        integration
            .post(
                api,
                process,
                "/api/v1/sandbox/api/simulate_inbound_transfer",
                &body,
            )
            .await,
        "simulate_inbound_transfer",
    )?;
    Ok(())
}
