//! How a `kobo` process is configured (flags and environment variables, see `cli`).

use std::num::NonZeroU32;

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
    /// Lifetime of an integration token and its session (`generate_token`): 1 hour.
    pub integration_token_ttl_seconds: u64,
    /// Lifetime of an invitation link (`add_member`, `resend_invite`): 72 hours.
    pub invitation_ttl_seconds: u64,
    pub otp: OtpPolicy,
    /// Failed `login` attempts, per email.
    pub login_per_email: ThrottlePolicy,
    /// Failed `login` attempts, per client address (looser: offices share an address).
    pub login_per_address: ThrottlePolicy,
    /// Failed `generate_token` attempts, per `client_id` and per client address.
    pub token_per_client: ThrottlePolicy,
    /// Wrong `old_password` in `change_password`, per member.
    pub password_change_per_member: ThrottlePolicy,
    /// Unknown or spent invitation tokens in `accept_invite`, per client address.
    pub invitation_per_address: ThrottlePolicy,
    /// Where an invited person accepts: the invitation email shows `<this><token>`.
    pub invitation_link_base: String,
    /// Requests each credential (integration client, Dashboard member) may make.
    pub request_budget: RequestBudget,
    /// How passwords are hashed.
    pub passwords: PasswordPolicy,
}

impl Config {
    pub fn new(environment: Environment) -> Config {
        Config {
            environment,
            dashboard_token_ttl_seconds: 12 * 3600,
            integration_token_ttl_seconds: 3600,
            invitation_ttl_seconds: 72 * 3600,
            otp: OtpPolicy::default(),
            login_per_email: ThrottlePolicy::new(5),
            login_per_address: ThrottlePolicy::new(20),
            token_per_client: ThrottlePolicy::new(10),
            password_change_per_member: ThrottlePolicy::new(5),
            invitation_per_address: ThrottlePolicy::new(10),
            invitation_link_base: "https://dashboard.kobo.example/accept-invite?token=".into(),
            request_budget: RequestBudget::default(),
            passwords: PasswordPolicy::default(),
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

/// One-time passwords (`generate_otp`, `identity::verify_otp`).
#[derive(Clone, Copy, Debug)]
pub struct OtpPolicy {
    pub ttl_seconds: u64,
    /// Wrong codes allowed before the OTP is spent.
    pub max_attempts: i64,
    /// At most `issue_limit` OTPs per member in any `issue_window_seconds`.
    pub issue_limit: i64,
    pub issue_window_seconds: u64,
}

impl Default for OtpPolicy {
    fn default() -> Self {
        OtpPolicy {
            ttl_seconds: 300,
            max_attempts: 5,
            issue_limit: 5,
            issue_window_seconds: 15 * 60,
        }
    }
}

/// Progressive throttling of failed credential checks for one kind of key: the first
/// `free_failures` failures in a window cost nothing; each one after that locks the key for
/// `first_lock_seconds`, doubling per failure up to `max_lock_seconds`.
#[derive(Clone, Copy, Debug)]
pub struct ThrottlePolicy {
    pub free_failures: i64,
    /// Failures older than this are forgotten.
    pub window_seconds: u64,
    pub first_lock_seconds: u64,
    pub max_lock_seconds: u64,
}

impl ThrottlePolicy {
    pub const fn new(free_failures: i64) -> ThrottlePolicy {
        ThrottlePolicy {
            free_failures,
            window_seconds: 15 * 60,
            first_lock_seconds: 30,
            max_lock_seconds: 15 * 60,
        }
    }

    /// How long a key with `failures` failures in its window stays locked (0: not locked).
    pub fn lock_seconds(&self, failures: i64) -> u64 {
        if failures < self.free_failures {
            return 0;
        }
        let doublings = (failures - self.free_failures).min(32) as u32;
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
    }
}
