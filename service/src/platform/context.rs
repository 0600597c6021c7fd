//! [`Platform`]: what the platform's operations stand on, built once by the edge and handed
//! to each operation whole (`platform::team::add_member(&platform, caller, body)`), so that a
//! new dependency is added here, not threaded through every call.

use std::sync::Arc;

use crate::kernel::clock::Clock;
use crate::kernel::config::Config;
use crate::kernel::secrets::Passwords;
use crate::kernel::store::Store;
use crate::platform::logs::ActivityLog;
use crate::platform::rate_limit::RateLimiter;
use crate::platform::sessions::SessionCache;
use crate::platform::tokens::TokenKeys;

/// The store, the configuration, the clock, the keys that sign tokens, the password hasher,
/// the per-credential request budgets (`29`), the sessions this process authenticated and
/// the activity log's writer. An operation reads the parts it uses:
/// `let Platform { store, clock, .. } = platform;`.
pub struct Platform {
    pub store: Store,
    pub config: Arc<Config>,
    pub clock: Clock,
    pub tokens: TokenKeys,
    pub passwords: Passwords,
    pub rate_limiter: RateLimiter,
    pub sessions: Arc<SessionCache>,
    pub activity_log: ActivityLog,
}

impl Platform {
    pub fn new(store: Store, config: Config, clock: Clock, tokens: TokenKeys) -> Platform {
        Platform {
            rate_limiter: RateLimiter::new(config.request_budget),
            passwords: Passwords::new(&config.passwords),
            activity_log: ActivityLog::default(),
            sessions: Arc::default(),
            store,
            config: Arc::new(config),
            clock,
            tokens,
        }
    }
}
