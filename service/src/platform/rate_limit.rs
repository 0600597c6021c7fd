//! Per-credential request budgets: every authenticated request spends one unit of its
//! credential's budget (the integration client of a business, or a Dashboard member); over it the
//! answer is `29` with `Retry-After`.
//!
//! The budget is a GCRA limiter (`governor`): a steady rate with a burst allowance, kept in this
//! process's memory. With several `kobo` processes behind a load balancer each enforces its own
//! share, so the effective budget is at most `processes x` the configured one.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};

use generated_server::ResponseCode;

use crate::error::Error;
use crate::kernel::config::RequestBudget;
use crate::platform::principal::Principal;

/// The limiter shared by every request of this process.
pub struct RateLimiter {
    limiter: DefaultKeyedRateLimiter<String>,
    clock: DefaultClock,
    /// Requests since the idle credentials were last forgotten.
    spent: AtomicU64,
}

/// Every this many requests, the credentials whose budget is full again are forgotten.
const FORGET_IDLE_EVERY: u64 = 10_000;

impl RateLimiter {
    pub fn new(budget: RequestBudget) -> RateLimiter {
        let quota = Quota::per_minute(budget.per_minute).allow_burst(budget.burst);
        RateLimiter {
            limiter: DefaultKeyedRateLimiter::keyed(quota),
            clock: DefaultClock::default(),
            spent: AtomicU64::new(0),
        }
    }

    /// Spends one request of `principal`'s credential, or answers `29` with the seconds to wait.
    pub fn spend(&self, principal: &Principal) -> Result<(), Error> {
        if self.spent.fetch_add(1, Ordering::Relaxed) % FORGET_IDLE_EVERY == FORGET_IDLE_EVERY - 1 {
            self.forget_idle();
        }
        let key = credential_key(principal);
        match self.limiter.check_key(&key) {
            Ok(()) => Ok(()),
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.clock.now());
                let seconds = wait_seconds(wait);
                Err(Error::new(ResponseCode::TooManyRequests)
                    .with_message(format!("Too many requests; retry in {seconds} seconds"))
                    .with_retry_after_seconds(seconds))
            }
        }
    }

    /// Forgets credentials whose budget is full again, so memory stays bounded by the number
    /// of recently active credentials (every [`FORGET_IDLE_EVERY`] requests; before, nothing
    /// called it).
    fn forget_idle(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }
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
            limiter.spend(&a).unwrap();
        }
        let refused = limiter.spend(&a).unwrap_err();
        assert_eq!(refused.code(), ResponseCode::TooManyRequests);
        let retry = refused.retry_after_seconds().unwrap();
        assert!((1..=60).contains(&retry), "retry after {retry}");
        // Another business has its own budget.
        limiter.spend(&integration("b")).unwrap();
    }

    #[test]
    fn idle_credentials_are_forgotten_as_requests_go_by() {
        let limiter = RateLimiter::new(RequestBudget::default());
        for business in ["a", "b", "c"] {
            limiter.spend(&integration(business)).unwrap();
        }
        assert_eq!(limiter.limiter.len(), 3);
        // Long enough for one request's cost to be paid back at 20 a second.
        std::thread::sleep(Duration::from_millis(200));
        let busy = integration("d");
        for _ in 0..FORGET_IDLE_EVERY {
            let _ = limiter.spend(&busy);
        }
        assert_eq!(
            limiter.limiter.len(),
            1,
            "only the busy credential is remembered"
        );
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        assert_eq!(wait_seconds(Duration::ZERO), 1);
        assert_eq!(wait_seconds(Duration::from_millis(1)), 1);
        assert_eq!(wait_seconds(Duration::from_secs(2)), 2);
        assert_eq!(wait_seconds(Duration::from_millis(2001)), 3);
    }
}
