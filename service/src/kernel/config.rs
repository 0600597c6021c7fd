//! How a `kobo` process is configured (flags and environment variables, see `cli`).

use std::num::NonZeroU32;
use std::time::Duration;

/// Sandbox or production: the sandbox returns OTPs in responses, accepts `http://` webhook
/// URLs and offers the sandbox-only operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Environment {
    Sandbox,
    Production,
}

impl Environment {
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Sandbox => "sandbox",
            Environment::Production => "production",
        }
    }

    /// The word integration credentials carry: `kb_sandbox_...`, `kb_live_...`.
    pub fn credential_tag(self) -> &'static str {
        match self {
            Environment::Sandbox => "sandbox",
            Environment::Production => "live",
        }
    }
}

/// The settings the bank reads while serving requests. [`Config::new`] gives the documented
/// defaults (the numbers the spec states); tests and operators change single fields.
#[derive(Clone, Debug)]
pub struct Config {
    pub environment: Environment,
    /// Lifetime of a Dashboard token and its session (`login`): 12 hours.
    pub dashboard_token_ttl_seconds: u64,
    /// A Dashboard session ends after this long without a request (its idle timeout, every
    /// request restarting it, within `dashboard_token_ttl_seconds`): 30 minutes.
    pub dashboard_idle_seconds: u64,
    /// Lifetime of an integration token and its session (`generate_token`): 1 hour.
    pub integration_token_ttl_seconds: u64,
    /// Lifetime of an invitation link (`add_member`, `resend_invite`): 72 hours.
    pub invitation_ttl_seconds: u64,
    pub otp: OtpPolicy,
    /// `login` attempts, the credential being the email.
    pub login: CredentialThrottle,
    /// `generate_token` attempts, the credential being the `client_id`.
    pub token: CredentialThrottle,
    /// Wrong `old_password` in `change_password`, per member.
    pub password_change_per_member: ThrottlePolicy,
    /// Unknown or spent invitation tokens in `accept_invite`, per client address.
    pub invitation_per_address: ThrottlePolicy,
    /// Where an invited person accepts: the invitation email shows `<this><token>`.
    pub invitation_link_base: String,
    /// The Dashboard's address (ending in `/`), which the emails about approvals link to.
    pub dashboard_url: String,
    /// Requests each credential (integration client, Dashboard member) may make.
    pub request_budget: RequestBudget,
    /// How passwords are hashed.
    pub passwords: PasswordPolicy,
    /// The most current accounts a business may hold (`83` past it): 100, 20 in the sandbox.
    pub max_current_accounts: u32,
    /// Webhook delivery: timeouts, the retry schedule, concurrency.
    pub webhooks: WebhookPolicy,
}

/// How webhooks are delivered (the numbers the spec's overview states).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookPolicy {
    /// How long one attempt may take, connection included: 15 seconds.
    pub timeout: Duration,
    /// The delays before each retry; the budget is one attempt more than its length (10).
    pub retry_delays: Vec<Duration>,
    /// Jitter on each delay, in per mille either way (100: ±10%).
    pub jitter_per_mille: u64,
    /// Deliveries in flight to one business's endpoint, per process.
    pub per_endpoint: usize,
    /// Deliveries in flight in all, per process.
    pub in_flight_max: usize,
    /// How long a claimed event is reserved for its attempt (past the timeout).
    pub lease: Duration,
    /// How often the dispatcher looks for due events when idle.
    pub poll_interval: Duration,
    /// After a rotation, how long the previous secret signs too: 24 hours.
    pub secret_overlap_seconds: i64,
    /// The largest body sent: 256 KiB.
    pub body_max_bytes: usize,
    /// Local development (sandbox only, `kobo demo`): deliveries may go to loopback addresses,
    /// where a developer's receiver listens. Never private, link-local or other addresses,
    /// and never in production, whatever this says.
    pub loopback_allowed: bool,
}

impl Default for WebhookPolicy {
    fn default() -> Self {
        let minutes = |m: u64| Duration::from_secs(m * 60);
        WebhookPolicy {
            timeout: Duration::from_secs(15),
            retry_delays: vec![
                Duration::from_secs(5),
                minutes(5),
                minutes(30),
                minutes(120),
                minutes(300),
                minutes(600),
                minutes(600),
                minutes(840),
                minutes(1200),
            ],
            jitter_per_mille: 100,
            per_endpoint: 4,
            in_flight_max: 64,
            lease: Duration::from_secs(60),
            poll_interval: Duration::from_millis(200),
            secret_overlap_seconds: 24 * 3600,
            body_max_bytes: 256 * 1024,
            loopback_allowed: false,
        }
    }
}

impl WebhookPolicy {
    /// Attempts in one retry budget.
    pub fn max_attempts(&self) -> i64 {
        self.retry_delays.len() as i64 + 1
    }
}

impl Config {
    pub fn new(environment: Environment) -> Config {
        Config {
            environment,
            dashboard_token_ttl_seconds: 12 * 3600,
            dashboard_idle_seconds: 30 * 60,
            integration_token_ttl_seconds: 3600,
            invitation_ttl_seconds: 72 * 3600,
            otp: OtpPolicy::default(),
            login: CredentialThrottle {
                per_address_and_credential: ThrottlePolicy::new(5),
                per_address: ThrottlePolicy::new(20),
                per_credential: ThrottlePolicy::slowing(20, 10),
            },
            token: CredentialThrottle {
                per_address_and_credential: ThrottlePolicy::new(10),
                per_address: ThrottlePolicy::new(20),
                per_credential: ThrottlePolicy::slowing(20, 10),
            },
            password_change_per_member: ThrottlePolicy::new(5),
            invitation_per_address: ThrottlePolicy::new(10),
            invitation_link_base: "https://dashboard.kobo.example/accept-invite?token=".into(),
            dashboard_url: "https://dashboard.kobo.example/".into(),
            request_budget: RequestBudget::default(),
            passwords: PasswordPolicy::default(),
            max_current_accounts: match environment {
                Environment::Sandbox => 20,
                Environment::Production => 100,
            },
            webhooks: WebhookPolicy::default(),
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config::new(Environment::Sandbox)
    }
}

/// argon2id parameters of new password hashes, and how many hashes may run at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PasswordPolicy {
    pub memory_kib: u32,
    pub iterations: u32,
    pub parallelism: u32,
    /// Hashes (and verifications) in progress at once; past it `29`.
    pub max_concurrent: usize,
}

impl Default for PasswordPolicy {
    /// argon2's recommended defaults (19 MiB, 2 passes, 1 lane), 8 at a time: at most about
    /// 152 MiB of hashing memory whatever the load.
    fn default() -> Self {
        PasswordPolicy {
            memory_kib: 19 * 1024,
            iterations: 2,
            parallelism: 1,
            max_concurrent: 8,
        }
    }
}

impl PasswordPolicy {
    /// The cheapest parameters argon2 accepts, for tests only: a test suite logs in thousands
    /// of times. Never a production setting (no flag selects it).
    pub fn cheapest_for_tests() -> Self {
        PasswordPolicy {
            memory_kib: argon2::Params::MIN_M_COST,
            iterations: 1,
            parallelism: 1,
            max_concurrent: 64,
        }
    }
}

/// One-time passwords (`generate_otp`, `identity::check_otp`).
#[derive(Clone, Copy, Debug)]
pub struct OtpPolicy {
    pub ttl_seconds: u64,
    /// Wrong codes allowed before the OTP is spent.
    pub max_attempts: i64,
    /// At most `issue_limit` OTPs per member in any `issue_window_seconds`: a bound on the
    /// emails a member's session can send, far above a person's work (an OTP a transfer).
    pub issue_limit: i64,
    pub issue_window_seconds: u64,
    /// The wrong codes a member may send, whatever OTPs they were sent against: what keeps
    /// guessing infeasible, since codes issued no longer bound it.
    pub wrong_codes: ThrottlePolicy,
}

impl Default for OtpPolicy {
    /// Five minutes, five tries an OTP, 30 OTPs per quarter hour; 10 wrong codes a day, then a
    /// wait of a minute that doubles with each wrong code, up to an hour: about 40 guesses a
    /// day at most, one chance in 25,000 of guessing a code in a day (docs/decisions.md, "The
    /// OTP rule").
    fn default() -> Self {
        OtpPolicy {
            ttl_seconds: 300,
            max_attempts: 5,
            issue_limit: 30,
            issue_window_seconds: 15 * 60,
            wrong_codes: ThrottlePolicy {
                free_attempts: 10,
                window_seconds: 24 * 60 * 60,
                first_lock_seconds: 60,
                max_lock_seconds: 60 * 60,
            },
        }
    }
}

/// How the attempts at one kind of credential are throttled (see `platform::throttle`), so
/// that a correct credential from an address that is not failing still gets in:
///
/// - `per_address_and_credential`: this credential from this address; locks that grow;
/// - `per_address`: every credential from this address (looser: offices share an address);
/// - `per_credential`: this credential from every address except those it succeeded from
///   before; it slows (a short flat lock), so failures sent on purpose from elsewhere cannot
///   lock its owner out.
#[derive(Clone, Copy, Debug)]
pub struct CredentialThrottle {
    pub per_address_and_credential: ThrottlePolicy,
    pub per_address: ThrottlePolicy,
    pub per_credential: ThrottlePolicy,
}

/// Throttling of attempts at a credential for one kind of key: the first `free_attempts`
/// attempts in a window are evaluated; the last of them locks the key for
/// `first_lock_seconds` (lifted at once if it succeeds), and each attempt after a lock locks
/// it again for twice as long, up to `max_lock_seconds`.
#[derive(Clone, Copy, Debug)]
pub struct ThrottlePolicy {
    pub free_attempts: i64,
    /// Failures older than this are forgotten.
    pub window_seconds: u64,
    pub first_lock_seconds: u64,
    pub max_lock_seconds: u64,
}

impl ThrottlePolicy {
    pub const fn new(free_attempts: i64) -> ThrottlePolicy {
        ThrottlePolicy {
            free_attempts,
            window_seconds: 15 * 60,
            first_lock_seconds: 30,
            max_lock_seconds: 15 * 60,
        }
    }

    /// A policy that slows rather than locks: past `free_attempts`, one attempt per
    /// `interval_seconds`.
    pub const fn slowing(free_attempts: i64, interval_seconds: u64) -> ThrottlePolicy {
        ThrottlePolicy {
            free_attempts,
            window_seconds: 15 * 60,
            first_lock_seconds: interval_seconds,
            max_lock_seconds: interval_seconds,
        }
    }

    /// How long a key with `attempts` attempts in its window stays locked (0: not locked).
    pub fn lock_seconds(&self, attempts: i64) -> u64 {
        if attempts < self.free_attempts {
            return 0;
        }
        let doublings = (attempts - self.free_attempts).min(32) as u32;
        self.first_lock_seconds
            .saturating_mul(1u64 << doublings)
            .min(self.max_lock_seconds)
    }
}

/// How many requests a credential may make: `per_minute` sustained, `burst` at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestBudget {
    pub per_minute: NonZeroU32,
    pub burst: NonZeroU32,
}

impl Default for RequestBudget {
    /// 1,200 requests a minute (20 a second) with bursts of 200.
    fn default() -> Self {
        RequestBudget {
            per_minute: NonZeroU32::new(1200).expect("non-zero"),
            burst: NonZeroU32::new(200).expect("non-zero"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locks_start_after_the_free_failures_and_double_up_to_the_cap() {
        let policy = ThrottlePolicy::new(5);
        let locks: Vec<u64> = (1..=12).map(|n| policy.lock_seconds(n)).collect();
        assert_eq!(locks, [0, 0, 0, 0, 30, 60, 120, 240, 480, 900, 900, 900]);
        assert_eq!(policy.lock_seconds(10_000), 900);
        let slowing = ThrottlePolicy::slowing(3, 10);
        let locks: Vec<u64> = (1..=6).map(|n| slowing.lock_seconds(n)).collect();
        assert_eq!(locks, [0, 0, 10, 10, 10, 10]);
    }
}
