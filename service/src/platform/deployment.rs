//! The environment a database serves. Sandbox and production never share money (no transfer,
//! credit, name or credential crosses), whatever the deployment: so a database belongs to one
//! environment, recorded the first time a server or the operator's CLI opens it, and a process
//! of the other environment is refused before it serves anything or creates a business.
//!
//! A database written before the record existed takes the environment of its businesses (told
//! by their credentials); one holding businesses of both is refused until the operator moves
//! one environment's businesses to a database of its own (docs/operating.md).

use anyhow::{bail, Result};

use crate::datastore::deployment;
use crate::kernel::clock::Clock;
use crate::kernel::config::Environment;
use crate::kernel::store::Store;

/// Records `environment` as the database's, unless it has one; refuses if it has the other.
pub async fn bind(store: &Store, environment: Environment, clock: &Clock) -> Result<()> {
    let mut tx = store.begin().await?;
    let recorded = match deployment::environment(&mut tx).await? {
        Some(recorded) => recorded,
        None => {
            let claim = match deployment::businesses_by_environment(&mut tx).await? {
                (0, 0) => environment,
                (_, 0) => Environment::Sandbox,
                (0, _) => Environment::Production,
                (sandbox, production) => bail!(
                    "this database holds businesses of both environments ({sandbox} sandbox, \
                     {production} production), and sandbox and production must never share \
                     money: give one environment a database of its own and move its \
                     businesses there (docs/operating.md, \"One environment per database\")"
                ),
            };
            deployment::record(&mut tx, claim.as_str(), clock.now()).await?
        }
    };
    tx.commit().await?;
    if recorded != environment.as_str() {
        bail!(
            "this database serves the {recorded} environment, not {}: sandbox and production \
             never share a database (they must never share money); use a database of the {} \
             environment's own",
            environment.as_str(),
            environment.as_str()
        );
    }
    Ok(())
}
