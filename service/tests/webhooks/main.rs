//! Webhooks: the six operations and `test_webhook`, and delivery to a real HTTP receiver on a
//! loopback port that can fail, hang and recover.

mod delivery;
mod operations;
mod receiver;
mod safety;

use kobo::kernel::config::{Config, Environment};

/// The configuration of `kobo demo`: a sandbox whose webhooks may go to loopback addresses,
/// where this suite's receivers listen. (`kobo serve` refuses them, as production does.)
pub fn local_development() -> Config {
    let mut config = Config::new(Environment::Sandbox);
    config.webhooks.loopback_allowed = true;
    config
}
