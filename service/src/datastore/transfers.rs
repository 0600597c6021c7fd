//! `transfers`: every payout, held, settled, failed or reversed, with its NIP bookkeeping
//! (submitted, attempts, the worker's lease) and its review.

use super::contract::*;

use crate::kernel::paging::Cursor;
use chrono::{DateTime, Utc};
pub use kobo_store::transfers::{
    Filters, HeldRow, LeasedRow, Lookup, NewTransfer, Review, TransferRow,
};

pub use kobo_store::batch::transfer_into as insert_into;

kobo_store::transfers_functions!(dispatch);
