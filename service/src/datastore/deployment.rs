//! `deployment`: the environment the database serves, once recorded
//! (`kobo_store::deployment`).

use chrono::{DateTime, Utc};

use super::contract::*;

kobo_store::deployment_functions!(dispatch);
