//! `daily_transfer_totals`: what each business has sent on each Lagos day, the running total
//! its daily limit is checked against (`kobo_store::daily_totals`).

use super::contract::*;

kobo_store::daily_totals_functions!(dispatch);
