//! `exports` and `export_parts`: files written in the background, a part at a time, each part
//! committed with where the next one starts (`kobo_store::exports`).

use super::contract::*;

use chrono::{DateTime, Utc};
use kobo_store::paging::Cursor;
use kobo_store::transactions::TransactionRow;

pub use kobo_store::exports::{ExportRow, NewExport, NewPart};

kobo_store::exports_functions!(dispatch);
