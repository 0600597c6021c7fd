//! `deployment`: the environment the database serves, once recorded.

use chrono::{DateTime, Utc};

crate::contract! {
    /// `deployment`, in each store.
    pub trait Deployment in deployment, functions deployment_functions {
        /// The environment recorded for the database, if any.
        tx fn environment() -> Option<String>;
        /// Records `environment` unless one is recorded (a concurrent recorder's wins); returns the
        /// one recorded.
        tx fn record(environment: &str, at: DateTime<Utc>) -> String;
        /// How many businesses the database holds of each environment, told by their credentials
        /// (`kb_live_...` is production): `(sandbox, production)`.
        tx fn businesses_by_environment() -> (i64, i64);
    }
}
