//! The operations the scenarios repeat, each `fn(state, client, sequence)` as the drivers
//! call them: a payout between accounts of one business, a payout from one pool account, an
//! inter-bank payout, a Dashboard transfer with its OTP, a page of transactions, the probes.

use std::sync::Arc;

use serde_json::{json, Value};

use super::driver::{judge, Answer, Failure};
use crate::api::{naira, Api, Keep};
use crate::provision::{Account, Business};
use crate::rng::Rng;

pub const PAYOUT_API: &str = "/api/v1/transaction/transfer/api/funds_transfer";
pub const PAYOUT_WEB: &str = "/api/v1/transaction/transfer/web/funds_transfer";
pub const GENERATE_OTP: &str = "/api/v1/auth/web/generate_otp";
pub const FETCH_TRANSACTIONS: &str = "/api/v1/transaction/api/fetch_transactions";
pub const GET_PROFILE: &str = "/api/v1/auth/web/get_profile";
pub const SIMULATE_CREDIT: &str = "/api/v1/sandbox/api/simulate_inbound_transfer";

/// Kobo's own bank code: a transfer to it is `intra` and settles in one transaction.
pub const OUR_BANK: &str = "090823";
/// The sandbox provider's external account whose transfers succeed, and its bank.
pub const EXTERNAL: (&str, &str, &str) = ("0123456788", "Emeka Nwosu", "000013");

/// What every scenario of one store shares: the API and the provisioned businesses.
pub struct Target {
    pub api: Api,
    pub businesses: Vec<Business>,
    /// Unique to the run: the start of every idempotency key and transfer reference.
    pub run: String,
    pub seed: u64,
}

impl Target {
    /// The random stream of one operation: reproducible from the seed, the client and the
    /// sequence.
    pub fn rng(&self, client: usize, sequence: u64) -> Rng {
        Rng::new(self.seed, ((client as u64) << 40) ^ sequence)
    }

    /// A key no other operation of the run uses (also the transfer's `reference`).
    pub fn key(&self, scenario: &str, client: usize, sequence: u64) -> String {
        format!("{}-{scenario}-{client}-{sequence}", self.run)
    }

    /// The account every `hot` payout leaves from: the first business's main account.
    pub fn pool(&self) -> &Account {
        &self.businesses[0].accounts[0]
    }
}

/// A small amount, in kobo: NGN 1.00 to 10.00, so funding never runs out.
fn small_amount(rng: &mut Rng) -> i64 {
    rng.between(100, 1000)
}

/// A `funds_transfer` body (`otp` is added for the Dashboard's).
pub fn transfer_body(
    source: &Account,
    beneficiary: (&str, &str),
    bank: &str,
    amount: i64,
    reference: &str,
) -> Value {
    json!({
        "source_account_number": source.number,
        "source_account_name": source.name,
        "beneficiary_account_number": beneficiary.0,
        "beneficiary_account_name": beneficiary.1,
        "bank_code": bank,
        "amount": naira(amount),
        "narration": "bench",
        "transfer_type": if bank == OUR_BANK { "intra" } else { "inter" },
        "reference": reference,
    })
}

/// Two different accounts of `accounts`, at random.
pub fn two_accounts<'a>(rng: &mut Rng, accounts: &'a [Account]) -> (&'a Account, &'a Account) {
    let source = rng.below(accounts.len() as u64) as usize;
    let offset = 1 + rng.below(accounts.len() as u64 - 1) as usize;
    (
        &accounts[source],
        &accounts[(source + offset) % accounts.len()],
    )
}

/// (a) An integration payout between two accounts of one business, chosen at random.
pub async fn payout(target: Arc<Target>, client: usize, sequence: u64) -> Answer {
    intra_payout(&target, "a", client, sequence).await
}

/// The soak's payouts: the same, under keys of their own.
pub async fn soak_payout(target: Arc<Target>, client: usize, sequence: u64) -> Answer {
    intra_payout(&target, "s", client, sequence).await
}

/// A payout between two random accounts of a random business; `scenario` keeps its keys
/// apart from other scenarios'.
async fn intra_payout(target: &Target, scenario: &str, client: usize, sequence: u64) -> Answer {
    let mut rng = target.rng(client, sequence);
    let business = rng.pick(&target.businesses);
    let (source, beneficiary) = two_accounts(&mut rng, &business.accounts);
    let key = target.key(scenario, client, sequence);
    let body = transfer_body(
        source,
        (&beneficiary.number, &beneficiary.name),
        OUR_BANK,
        small_amount(&mut rng),
        &key,
    );
    send_payout(target, business, client, &key, &body).await
}

/// (c) A payout from the pool account to another account of its business (a salary run).
pub async fn hot_payout(target: Arc<Target>, client: usize, sequence: u64) -> Answer {
    let mut rng = target.rng(client, sequence);
    let business = &target.businesses[0];
    let beneficiary =
        &business.accounts[1 + rng.below(business.accounts.len() as u64 - 1) as usize];
    let key = target.key("c", client, sequence);
    let body = transfer_body(
        target.pool(),
        (&beneficiary.number, &beneficiary.name),
        OUR_BANK,
        small_amount(&mut rng),
        &key,
    );
    send_payout(&target, business, client, &key, &body).await
}

/// (g) An inbound credit from another bank (the sandbox's `simulate_inbound_transfer`, under a
/// key of its own) to a random account of a random business: money coming in, as a business
/// collecting payments sees it.
pub async fn credit(target: Arc<Target>, client: usize, sequence: u64) -> Answer {
    let mut rng = target.rng(client, sequence);
    let business = rng.pick(&target.businesses);
    let account = rng.pick(&business.accounts);
    let key = target.key("g", client, sequence);
    let body = json!({
        "account_number": account.number,
        "amount": naira(small_amount(&mut rng)),
        "narration": "bench",
    });
    send_keyed(&target, business, client, SIMULATE_CREDIT, &key, &body).await
}

/// (d) An inter-bank payout to the sandbox's external account that succeeds.
pub async fn interbank_payout(target: Arc<Target>, client: usize, sequence: u64) -> Answer {
    let mut rng = target.rng(client, sequence);
    let business = rng.pick(&target.businesses);
    let source = rng.pick(&business.accounts);
    let key = target.key("d", client, sequence);
    let body = transfer_body(
        source,
        (EXTERNAL.0, EXTERNAL.1),
        EXTERNAL.2,
        small_amount(&mut rng),
        &key,
    );
    send_payout(&target, business, client, &key, &body).await
}

/// `body` as one `funds_transfer_api` of `business` under `key`, judged.
async fn send_payout(
    target: &Target,
    business: &Business,
    client: usize,
    key: &str,
    body: &Value,
) -> Answer {
    send_keyed(target, business, client, PAYOUT_API, key, body).await
}

/// `body` as one integration call of `business` to `path` under `key`, judged.
async fn send_keyed(
    target: &Target,
    business: &Business,
    client: usize,
    path: &str,
    key: &str,
    body: &Value,
) -> Answer {
    let outcome = business
        .integration
        .post_keyed(&target.api, client, path, key, body)
        .await;
    judge(&outcome).map(drop)
}

/// (f) `GET /healthz`: the floor of any request.
pub async fn healthz(target: Arc<Target>, client: usize, _sequence: u64) -> Answer {
    match target.api.get_status(client, "/healthz").await {
        Some(200) => Ok(()),
        Some(status) => Err(Failure::new(format!("HTTP {status}"), "/healthz")),
        None => Err(Failure::new("no answer", "/healthz")),
    }
}

/// (f) `get_profile`: the cheapest authenticated read (a session check and three small rows).
/// Like `/healthz`, the whole answer is read and only its code is judged: the load generator
/// shares the cores with the server, and a JSON tree of each answer would weigh on this
/// scenario alone ([`Keep::Envelope`]).
pub async fn profile(target: Arc<Target>, client: usize, _sequence: u64) -> Answer {
    let business = &target.businesses[client % target.businesses.len()];
    let outcome = business
        .owner
        .post_keeping(&target.api, client, GET_PROFILE, &json!({}), Keep::Envelope)
        .await;
    judge(&outcome).map(drop)
}

/// (e) One request for a page of transactions, repeated as it is: the first page, or the page
/// after a deep cursor.
pub struct Page {
    pub target: Arc<Target>,
    pub body: Value,
    /// How many items a good answer holds.
    pub expected: usize,
}

pub async fn page(page: Arc<Page>, client: usize, _sequence: u64) -> Answer {
    let outcome = page.target.businesses[0]
        .integration
        .post(&page.target.api, client, FETCH_TRANSACTIONS, &page.body)
        .await;
    let data = judge(&outcome)?;
    let items = data.as_array().map_or(0, Vec::len);
    if items != page.expected {
        return Err(Failure::new(
            "short page",
            format!("{items} items, {} expected", page.expected),
        ));
    }
    Ok(())
}
