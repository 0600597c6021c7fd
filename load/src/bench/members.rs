//! (b) The Dashboard's transfer: a member generates an OTP, then sends the transfer with it.
//!
//! A member may generate at most 5 OTPs in 15 minutes, and a new OTP voids the previous one,
//! so each client keeps a member of its own for 5 operations, then takes the next unused one.
//! The members (Makers, invited by the owners, accepted and logged in as a person would) are
//! made beforehand, as many as the expected throughput needs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::driver::{in_parallel, judge, Answer, Failure};
use super::scenarios::{transfer_body, two_accounts, Target, GENERATE_OTP, OUR_BANK, PAYOUT_WEB};
use crate::api::{Api, Outcome};
use crate::cluster::Cluster;
use crate::provision::{Login, Token, OWNER_PASSWORD};

/// OTPs a member may generate in 15 minutes (`generate_otp` answers `29` beyond).
pub const OTPS_PER_MEMBER: u32 = 5;
/// The most messages `kobo outbox` lists: invitations are made in batches of this many.
const OUTBOX_MAX: usize = 1000;
/// Requests that hash a password at once: the server hashes 8 at a time and answers `29`
/// beyond.
const HASHING: usize = 8;

pub struct Member {
    pub business: usize,
    pub token: Token,
}

pub struct Dashboard {
    pub target: Arc<Target>,
    pub members: Vec<Member>,
    next: AtomicUsize,
    /// Per client: the member it uses and how many OTPs that member generated.
    slots: Vec<Mutex<Option<(usize, u32)>>>,
}

impl Dashboard {
    pub fn new(target: Arc<Target>, members: Vec<Member>, clients: usize) -> Dashboard {
        Dashboard {
            target,
            members,
            next: AtomicUsize::new(0),
            slots: (0..clients).map(|_| Mutex::new(None)).collect(),
        }
    }

    /// Members for `operations` operations by `clients` clients (each client's last member
    /// may be left partly used).
    pub fn members_for(operations: f64, clients: usize) -> usize {
        (operations / f64::from(OTPS_PER_MEMBER)).ceil() as usize + clients
    }

    /// The member `client` uses for its next operation; `None` when the pool is spent.
    fn member_for(&self, client: usize) -> Option<usize> {
        let mut slot = self.slots[client].lock().expect("not poisoned");
        match *slot {
            Some((member, used)) if used < OTPS_PER_MEMBER => {
                *slot = Some((member, used + 1));
                Some(member)
            }
            _ => {
                let member = self.next.fetch_add(1, Ordering::Relaxed);
                if member >= self.members.len() {
                    return None;
                }
                *slot = Some((member, 1));
                Some(member)
            }
        }
    }

    /// Whether every member was taken (the run may have ended before the duration).
    pub fn spent(&self) -> bool {
        self.next.load(Ordering::Relaxed) >= self.members.len()
    }
}

/// One Dashboard transfer: `generate_otp`, then `funds_transfer` with the OTP, between two
/// accounts of the member's business.
pub async fn dashboard_transfer(dashboard: Arc<Dashboard>, client: usize, sequence: u64) -> Answer {
    let Some(index) = dashboard.member_for(client) else {
        return Err(Failure::stop(format!(
            "the {} members are spent (5 OTPs each per 15 minutes)",
            dashboard.members.len()
        )));
    };
    let member = &dashboard.members[index];
    let target = &dashboard.target;
    let outcome = member
        .token
        .post(&target.api, client, GENERATE_OTP, &json!({}))
        .await;
    let otp = judge(&outcome)
        .map_err(|failure| failure.at("generate_otp"))?
        .get("otp")
        .and_then(Value::as_str)
        .ok_or_else(|| Failure::new("generate_otp: no otp", "not the sandbox environment?"))?
        .to_owned();
    let mut rng = target.rng(client, sequence);
    let business = &target.businesses[member.business];
    let (source, beneficiary) = two_accounts(&mut rng, &business.accounts);
    let key = target.key("b", client, sequence);
    let mut body = transfer_body(
        source,
        (&beneficiary.number, &beneficiary.name),
        OUR_BANK,
        rng.between(100, 1000),
        &key,
    );
    body["otp"] = json!(otp);
    let outcome = member
        .token
        .post_keyed(&target.api, client, PAYOUT_WEB, &key, &body)
        .await;
    judge(&outcome)
        .map(drop)
        .map_err(|failure| failure.at("funds_transfer"))
}

/// `count` logged-in Makers, spread over the businesses: each owner invites, the invitation's
/// token is read from the outbox (`kobo outbox`), the member accepts it and logs in.
pub async fn enlist(cluster: &Cluster, target: &Target, count: usize) -> Result<Vec<Member>> {
    let started = Instant::now();
    let mut makers = Vec::new();
    for business in &target.businesses {
        makers.push(maker_role(&target.api, &business.owner).await?);
    }
    let businesses = target.businesses.len();
    let email = |index: usize| format!("m{index}.{}@bench.kobo.test", target.run);
    let mut members = Vec::with_capacity(count);
    let mut first = 0;
    while first < count {
        let batch = (count - first).min(OUTBOX_MAX);
        let invites: Vec<(String, String, String)> = {
            let mut invites = Vec::with_capacity(batch);
            for index in first..first + batch {
                let owner = &target.businesses[index % businesses].owner;
                invites.push((
                    email(index),
                    owner.get().await,
                    makers[index % businesses].clone(),
                ));
            }
            invites
        };
        in_parallel(batch, HASHING, |n| {
            let (address, owner, role) = invites[n].clone();
            let api = target.api.clone();
            async move {
                let body = json!({"email": address, "first_name": "Bench", "last_name": "Member", "role_id": role});
                patient(&api, "add_member", "/api/v1/auth/web/add_member", Some(&owner), &body).await
            }
        })
        .await?;
        let tokens = invitation_tokens(cluster).await?;
        in_parallel(batch, HASHING, |n| {
            let address = invites[n].0.clone();
            let token = tokens.get(&address).cloned();
            let api = target.api.clone();
            async move {
                let token = token.with_context(|| format!("no invitation for {address} in the outbox"))?;
                let body = json!({"token": token, "password": OWNER_PASSWORD, "confirm_password": OWNER_PASSWORD});
                patient(&api, "accept_invite", "/api/v1/auth/web/accept_invite", None, &body).await
            }
        })
        .await?;
        let tokens = in_parallel(batch, HASHING, |n| {
            let email = invites[n].0.clone();
            let api = target.api.clone();
            async move { Token::take(&api, Login::Owner { email }).await }
        })
        .await?;
        members.extend(tokens.into_iter().enumerate().map(|(n, token)| Member {
            business: (first + n) % businesses,
            token,
        }));
        first += batch;
    }
    println!(
        "  {count} Dashboard members invited, accepted and logged in in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(members)
}

/// The id of the business's built-in Maker role (`transfer.initiate`, no approvals).
async fn maker_role(api: &Api, owner: &Token) -> Result<String> {
    let outcome = owner
        .post(api, 0, "/api/v1/auth/web/fetch_roles", &json!({}))
        .await;
    let roles = judge(&outcome).map_err(|failure| anyhow::anyhow!("fetch_roles: {failure:?}"))?;
    roles
        .as_array()
        .into_iter()
        .flatten()
        .find(|role| role["name"] == "Maker")
        .and_then(|role| role["id"].as_str())
        .map(str::to_owned)
        .with_context(|| format!("fetch_roles without a Maker: {roles}"))
}

/// recipient → invitation token, from the newest messages of the outbox.
async fn invitation_tokens(cluster: &Cluster) -> Result<HashMap<String, String>> {
    let listed = cluster
        .cli(&["outbox", "--limit", &OUTBOX_MAX.to_string()])
        .await?;
    let mut tokens = HashMap::new();
    for message in listed
        .as_array()
        .context("kobo outbox --json: not a list")?
    {
        let (Some(recipient), Some(body)) =
            (message["recipient"].as_str(), message["body"].as_str())
        else {
            continue;
        };
        if let Some(token) = invitation_token_in(body) {
            // Newest first: an older invitation to the same address does not count.
            tokens
                .entry(recipient.to_owned())
                .or_insert_with(|| token.to_owned());
        }
    }
    Ok(tokens)
}

/// The invitation token (`inv_...`) in an invitation email.
fn invitation_token_in(body: &str) -> Option<&str> {
    let start = body.find("inv_")?;
    let token = &body[start..];
    let end = token
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(token.len());
    Some(&token[..end])
}

/// POSTs until an answer that is not "try again" (`29`, `97`, no answer) comes, for a minute
/// at most; the `data` of a `00`, or an error naming the operation.
async fn patient(
    api: &Api,
    operation: &str,
    path: &str,
    token: Option<&str>,
    body: &Value,
) -> Result<Value> {
    let started = Instant::now();
    loop {
        let outcome = api.post(0, path, token, &[], body).await;
        let wait = match &outcome {
            Outcome::Answer { code, .. } if code == "00" => {
                return Ok(outcome.data().cloned().unwrap_or(Value::Null))
            }
            Outcome::Answer {
                code, retry_after, ..
            } if code == "29" || code == "97" => retry_after.unwrap_or(1).min(2) * 1000,
            Outcome::NoAnswer { .. } => 200,
            _ => bail!("{operation}: {outcome:?}"),
        };
        if started.elapsed() > Duration::from_secs(60) {
            bail!("{operation}: still refused after a minute: {outcome:?}");
        }
        tokio::time::sleep(Duration::from_millis(wait)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invitation_tokens_are_found_in_email_bodies() {
        let body = "Accept here:\nhttps://x/accept-invite?token=inv_AbC-_9\n\nOr send {\"token\": \"inv_AbC-_9\"}";
        assert_eq!(invitation_token_in(body), Some("inv_AbC-_9"));
        assert_eq!(invitation_token_in("no token"), None);
    }

    #[test]
    fn the_pool_covers_every_operation_and_a_member_per_client() {
        assert_eq!(Dashboard::members_for(100.0, 16), 20 + 16);
        assert_eq!(Dashboard::members_for(101.0, 1), 21 + 1);
    }
}
