//! `beneficiaries`: accounts a business saved to pay again (`kobo_store::beneficiaries`).

use super::contract::*;

use kobo_store::paging::Cursor;

pub use kobo_store::beneficiaries::{BeneficiaryRow, NewBeneficiary};

kobo_store::beneficiaries_functions!(dispatch);
