//! `sequences`: named counters (the account number series).

use super::contract::*;

kobo_store::sequences_functions!(dispatch);
