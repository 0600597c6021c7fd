//! `bulk_transfers` and `bulk_transfer_items`: batches of payments (`kobo_store::bulk_transfers`).

use super::contract::*;

use chrono::{DateTime, Utc};
use kobo_store::paging::Cursor;

pub use kobo_store::bulk_transfers::{
    Authorisation, BulkItemRow, BulkTransferRow, HoldEnd, Judgement, NewBulkItem, NewBulkTransfer,
    Outcomes,
};

kobo_store::bulk_transfers_functions!(dispatch);
