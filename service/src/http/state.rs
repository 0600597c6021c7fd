//! [`KoboApi`]: the state behind the API (the bank, whether the process is stopping, the
//! provider's notification key) and how it is built; its [`generated_server::Api`] methods are
//! in `http/api.rs`.

use std::sync::Arc;

use crate::kernel::clock::Clock;
use crate::kernel::config::Config;
use crate::kernel::store::Store;
use crate::money::bank::Bank;
use crate::money::fees::TransferPolicy;
use crate::platform::context::Platform;
use crate::platform::permissions;
use crate::platform::tokens::TokenKeys;
use crate::provider::sandbox::SandboxProvider;
use crate::provider::CoreBanking;

/// The state behind the API: the [`Bank`] every operation is handed (the platform's
/// operations take it as their [`crate::platform::context::Platform`]), whether the process
/// is stopping, and the provider's notification key.
pub struct KoboApi {
    pub(super) bank: Arc<Bank>,
    /// Set once the process is stopping: `/readyz` answers `503` from then on.
    draining: crate::http::Draining,
    /// The key of a network provider's notifications (`http::provider`).
    pub(super) provider_key: Option<Vec<u8>>,
}

impl KoboApi {
    pub fn new(store: Store, config: Config, clock: Clock, tokens: TokenKeys) -> KoboApi {
        let transfers = TransferPolicy::for_environment(config.environment);
        let provider = Arc::new(SandboxProvider::new(clock.clone()));
        KoboApi {
            bank: Arc::new(Bank {
                platform: Platform::new(store, config, clock, tokens),
                transfers,
                provider,
                bulk_work: tokio::sync::Notify::new(),
            }),
            draining: Default::default(),
            provider_key: None,
        }
    }

    /// The same API with another core banking provider (tests put one that is down here).
    pub fn with_provider(mut self, provider: Arc<dyn CoreBanking>) -> KoboApi {
        Arc::get_mut(&mut self.bank)
            .expect("the provider is chosen before the bank is shared")
            .provider = provider;
        self
    }

    /// An API ready to serve: migrated, bound to its environment, built-in roles upserted.
    pub async fn open(
        store: Store,
        config: Config,
        clock: Clock,
        tokens: TokenKeys,
    ) -> anyhow::Result<KoboApi> {
        store.migrate().await?;
        crate::platform::deployment::bind(&store, config.environment, &clock).await?;
        permissions::seed_built_in_roles(&store).await?;
        permissions::rekey_role_names(&store).await?;
        Ok(KoboApi::new(store, config, clock, tokens))
    }

    /// The bank behind the API, for the edge's other routes and the test kit.
    pub fn bank(&self) -> &Bank {
        &self.bank
    }

    /// The bank, shared with the background work that needs it (the export writer).
    pub fn shared_bank(&self) -> Arc<Bank> {
        self.bank.clone()
    }

    pub fn store(&self) -> &Store {
        &self.bank.store
    }

    /// Returns once the activity-log entries of every call answered so far are committed: a
    /// graceful stop calls it after the last request ([`logs::ActivityLog`]).
    pub async fn flush_activity_log(&self) {
        self.bank.activity_log.flush().await;
    }

    pub fn config(&self) -> &Config {
        &self.bank.config
    }

    pub fn draining(&self) -> &crate::http::Draining {
        &self.draining
    }

    pub fn clock(&self) -> &Clock {
        &self.bank.clock
    }

    pub fn tokens(&self) -> &TokenKeys {
        &self.bank.tokens
    }

    pub fn provider(&self) -> &Arc<dyn CoreBanking> {
        &self.bank.provider
    }
}
