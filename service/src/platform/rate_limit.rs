//! Per-credential request budgets: every authenticated request spends one unit of its
//! credential's budget (the integration client of a business, or a Dashboard member); over it the
//! answer is `29` with `Retry-After`.
//!
//! The budget is a GCRA: a steady rate with a burst allowance.
//! - On PostgreSQL it is one budget for every process on the database (behind a load balancer, a
//!   credential gets its budget once, whichever process its requests reach): `request_budgets`
//!   keeps it, and a process claims a small lease of requests at a time in one statement
//!   ([`lease_units`], spent here within [`LEASE_TTL`]), so a request rarely waits on the
//!   database. A lease is paid for before it is spent, so the budget is never overspent; a
//!   lease that expires unused is lost (the credential gets a little less, never more). After a
//!   refusal the process answers `29` itself until the budget has room again.
//! - On SQLite (one process) and whenever the database does not answer the claim, this
//!   process's memory keeps it (`governor`): with several processes each would enforce its
//!   own.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};

use generated_server::ResponseCode;

use crate::datastore::request_budgets::{self, Claimed, SharedBudgets};
use crate::error::Error;
use crate::kernel::config::RequestBudget;
use crate::kernel::store::Store;
use crate::platform::principal::Principal;

/// The limiter shared by every request of this process.
pub struct RateLimiter {
    budget: RequestBudget,
    /// This process's own count (SQLite, or the database unreachable).
    limiter: DefaultKeyedRateLimiter<String>,
    clock: DefaultClock,
    /// What this process holds of each credential's shared budget.
    held: Mutex<HashMap<String, Held>>,
    /// One claim at a time per credential: the requests that find no lease wait for the claim
    /// in flight and spend what it brought, instead of each claiming a lease of its own (a
    /// burst of requests would lease the whole budget for a few of them).
    claiming: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Requests since the idle credentials were last forgotten.
    spent: AtomicU64,
}

/// What a process holds of a credential's shared budget.
#[derive(Clone, Copy, Debug)]
enum Held {
    /// Requests claimed and not spent yet, spendable until `until`.
    Lease { left: u32, until: Instant },
    /// The database refused a single request: none is granted before `until`.
    Refused { until: Instant },
}

/// Every this many requests, the credentials whose budget is full again are forgotten.
const FORGET_IDLE_EVERY: u64 = 10_000;

/// How long a lease of requests may be spent: a process cannot keep a lease to spend it
/// later, on top of the rate.
pub const LEASE_TTL: Duration = Duration::from_secs(1);

/// Requests a process claims at once from a credential's shared budget: a twentieth of the
/// burst, from 1 to 100 (10 with the default budget: one statement for ten requests).
pub fn lease_units(budget: RequestBudget) -> u32 {
    (budget.burst.get() / 20).clamp(1, 100)
}

impl RateLimiter {
    pub fn new(budget: RequestBudget) -> RateLimiter {
        let quota = Quota::per_minute(budget.per_minute).allow_burst(budget.burst);
        RateLimiter {
            budget,
            limiter: DefaultKeyedRateLimiter::keyed(quota),
            clock: DefaultClock::default(),
            held: Mutex::default(),
            claiming: Mutex::default(),
            spent: AtomicU64::new(0),
        }
    }

    /// Spends one request of `principal`'s credential, or answers `29` with the seconds to wait.
    pub async fn spend(&self, store: &Store, principal: &Principal) -> Result<(), Error> {
        self.forget_idle_now_and_then();
        let key = credential_key(principal);
        let Some(budgets) = request_budgets::shared(store) else {
            return self.spend_here(&key);
        };
        if let Some(answer) = self.answer_from_held(&key) {
            return answer;
        }
        let turn = self.claim_turn(&key);
        let _claiming = turn.lock().await;
        // The claim this request waited for may have brought enough for it too.
        if let Some(answer) = self.answer_from_held(&key) {
            return answer;
        }
        // Boxed: one request in a lease's worth claims (docs/decisions.md, "Cold paths boxed").
        match Box::pin(self.claim(budgets, &key)).await {
            Some(answer) => answer,
            None => self.spend_here(&key),
        }
    }

    /// What this process holds of the credentials' shared budgets (a poisoned lock still
    /// holds consistent entries: each change is one insert or one decrement).
    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<String, Held>> {
        self.held
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// The lock that lets one request of `key` claim at a time.
    fn claim_turn(&self, key: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut claiming = self
            .claiming
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        claiming.entry(key.to_owned()).or_default().clone()
    }

    /// The answer from what this process holds of `key`'s shared budget, if it holds any.
    fn answer_from_held(&self, key: &str) -> Option<Result<(), Error>> {
        let now = Instant::now();
        let mut held = self.held();
        match held.get_mut(key)? {
            Held::Lease { left, until } if *left > 0 && *until > now => {
                *left -= 1;
                Some(Ok(()))
            }
            Held::Refused { until } if *until > now => Some(Err(too_many(*until - now))),
            _ => None,
        }
    }

    /// Claims from `key`'s shared budget: a lease, else a single request, else a refusal held
    /// until the budget has room. `None` when the database does not answer.
    async fn claim(&self, budgets: SharedBudgets<'_>, key: &str) -> Option<Result<(), Error>> {
        let lease = lease_units(self.budget);
        let interval =
            chrono::TimeDelta::microseconds(60_000_000 / i64::from(self.budget.per_minute.get()));
        let burst = i64::from(self.budget.burst.get());
        let mut units = lease;
        loop {
            let claimed = match budgets.claim(key, i64::from(units), interval, burst).await {
                Ok(claimed) => claimed,
                Err(error) => {
                    tracing::warn!(%error, "cannot claim from a shared request budget: counting in this process");
                    return None;
                }
            };
            let now = Instant::now();
            match claimed {
                Claimed::Granted => {
                    if units > 1 {
                        self.keep(key, units - 1, now + LEASE_TTL);
                    }
                    return Some(Ok(()));
                }
                Claimed::Refused { .. } if units > 1 => units = 1,
                Claimed::Refused { wait } => {
                    let wait = wait.to_std().unwrap_or(Duration::from_millis(1));
                    self.hold(key, Held::Refused { until: now + wait });
                    return Some(Err(too_many(wait)));
                }
            }
        }
    }

    /// Adds `units` claimed requests to what this process holds of `key`.
    fn keep(&self, key: &str, units: u32, until: Instant) {
        let mut held = self.held();
        let left = match held.get(key) {
            Some(Held::Lease { left, until: old }) if *old > Instant::now() => *left,
            _ => 0,
        };
        held.insert(
            key.to_owned(),
            Held::Lease {
                left: left + units,
                until,
            },
        );
    }

    fn hold(&self, key: &str, state: Held) {
        let mut held = self.held();
        held.insert(key.to_owned(), state);
    }

    /// Spends from this process's own count of `key`.
    fn spend_here(&self, key: &String) -> Result<(), Error> {
        match self.limiter.check_key(key) {
            Ok(()) => Ok(()),
            Err(not_until) => Err(too_many(not_until.wait_time_from(self.clock.now()))),
        }
    }

    /// Counts a request, and every [`FORGET_IDLE_EVERY`] forgets the idle credentials.
    fn forget_idle_now_and_then(&self) {
        if self.spent.fetch_add(1, Ordering::Relaxed) % FORGET_IDLE_EVERY == FORGET_IDLE_EVERY - 1 {
            self.forget_idle();
        }
    }

    /// Forgets credentials whose budget is full again, and leases and refusals that have
    /// lapsed, so memory stays bounded by the number of recently active credentials (every
    /// [`FORGET_IDLE_EVERY`] requests).
    fn forget_idle(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
        let now = Instant::now();
        let mut held = self.held();
        held.retain(|_, state| match state {
            Held::Lease { until, .. } | Held::Refused { until } => *until > now,
        });
        let mut claiming = self
            .claiming
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        claiming.retain(|_, turn| Arc::strong_count(turn) > 1);
    }
}

/// `29`, to retry after `wait`.
fn too_many(wait: Duration) -> Error {
    let seconds = wait_seconds(wait);
    Error::new(ResponseCode::TooManyRequests)
        .with_message(format!("Too many requests; retry in {seconds} seconds"))
        .with_retry_after_seconds(seconds)
}

/// Whose budget a request spends: the member for Dashboard tokens, the business's integration
/// client for integration tokens.
fn credential_key(principal: &Principal) -> String {
    match &principal.member {
        Some(member) => format!("member:{}", member.id),
        None => format!("integration:{}", principal.business_id),
    }
}

/// `Retry-After` is whole seconds, at least 1.
fn wait_seconds(wait: Duration) -> u64 {
    let rounded_up = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    rounded_up.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use generated_server::TokenFamily;
    use std::num::NonZeroU32;

    fn integration(business: &str) -> Principal {
        Principal {
            credential_issuer: None,
            business_id: business.into(),
            session_id: "s".into(),
            family: TokenFamily::Integration,
            business_active: true,
            member: None,
        }
    }

    #[test]
    fn a_credential_over_its_burst_gets_29_with_retry_after() {
        let limiter = RateLimiter::new(RequestBudget {
            per_minute: NonZeroU32::new(1).unwrap(),
            burst: NonZeroU32::new(3).unwrap(),
        });
        let a = integration("a");
        for _ in 0..3 {
            limiter.spend_here(&credential_key(&a)).unwrap();
        }
        let refused = limiter.spend_here(&credential_key(&a)).unwrap_err();
        assert_eq!(refused.code(), ResponseCode::TooManyRequests);
        let retry = refused.retry_after_seconds().unwrap();
        assert!((1..=60).contains(&retry), "retry after {retry}");
        // Another business has its own budget.
        limiter
            .spend_here(&credential_key(&integration("b")))
            .unwrap();
    }

    #[test]
    fn idle_credentials_are_forgotten_as_requests_go_by() {
        let limiter = RateLimiter::new(RequestBudget::default());
        for business in ["a", "b", "c"] {
            limiter
                .spend_here(&credential_key(&integration(business)))
                .unwrap();
        }
        assert_eq!(limiter.limiter.len(), 3);
        // Long enough for one request's cost to be paid back at 20 a second.
        std::thread::sleep(Duration::from_millis(200));
        let busy = integration("d");
        for _ in 0..FORGET_IDLE_EVERY {
            let _ = limiter.spend_here(&credential_key(&busy));
            limiter.forget_idle_now_and_then();
        }
        assert_eq!(
            limiter.limiter.len(),
            1,
            "only the busy credential is remembered"
        );
    }

    /// A database that does not answer the claim leaves each process counting in memory: the
    /// same burst, then `29`, rather than refusing everyone or letting everyone through.
    #[tokio::test]
    async fn without_an_answer_from_the_database_the_process_counts_alone() {
        let kit = crate::testkit::TestKit::postgres().await;
        let store = kit.store.clone();
        let limiter = RateLimiter::new(RequestBudget {
            per_minute: NonZeroU32::new(1).unwrap(),
            burst: NonZeroU32::new(3).unwrap(),
        });
        let a = integration(&kit.business.business_id);
        // Shared while the database answers: a claim is a row of `request_budgets`.
        limiter.spend(&store, &a).await.unwrap();
        let rows = kit
            .sql("SELECT credential FROM request_budgets")
            .texts()
            .await;
        assert_eq!(rows, [credential_key(&a)]);
        // The pool closed: every claim fails, and the process's own count takes over.
        store.close().await;
        for _ in 0..3 {
            limiter.spend(&store, &a).await.unwrap();
        }
        let refused = limiter.spend(&store, &a).await.unwrap_err();
        assert_eq!(refused.code(), ResponseCode::TooManyRequests);
    }

    /// SQLite's store is one process's: a request spends from this process's count at once,
    /// without the turn that claims from PostgreSQL's shared budget queue behind.
    #[tokio::test]
    async fn on_sqlite_a_request_spends_from_the_process_count_without_a_turn() {
        let kit = crate::testkit::TestKit::sqlite().await;
        let limiter = RateLimiter::new(RequestBudget {
            per_minute: NonZeroU32::new(1).unwrap(),
            burst: NonZeroU32::new(3).unwrap(),
        });
        let a = integration(&kit.business.business_id);
        for _ in 0..3 {
            limiter.spend(&kit.store, &a).await.unwrap();
        }
        let refused = limiter.spend(&kit.store, &a).await.unwrap_err();
        assert_eq!(refused.code(), ResponseCode::TooManyRequests);
        let turns = limiter.claiming.lock().unwrap().len();
        assert_eq!(turns, 0, "no claim's turn was taken");
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        assert_eq!(wait_seconds(Duration::ZERO), 1);
        assert_eq!(wait_seconds(Duration::from_millis(1)), 1);
        assert_eq!(wait_seconds(Duration::from_secs(2)), 2);
        assert_eq!(wait_seconds(Duration::from_millis(2001)), 3);
    }
}
