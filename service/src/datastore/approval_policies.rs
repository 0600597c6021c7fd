//! `approval_policies`: a business's maker-checker policy, at most one per business.

use super::contract::*;
use chrono::{DateTime, Utc};
pub use kobo_store::approval_policies::ApprovalPolicy;

kobo_store::approval_policies_functions!(dispatch);
