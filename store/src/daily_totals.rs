//! `daily_transfer_totals`: what each business has sent on each Lagos day, the running total
//! its daily limit is checked against.

crate::contract! {
    /// `daily_transfer_totals`, in each store.
    pub trait DailyTotals in daily_totals, functions daily_totals_functions {
        /// Adds `amount` to the business's total of `day` unless the total would pass `limit`, in
        /// one conditional upsert whose row lock makes concurrent payouts of the business count one
        /// after another. Returns whether it was counted.
        tx fn add_within(business_id: &str, day: &str, amount: i64, limit: i64) -> bool;
        /// The business's total of `day` (kobo), if anything was counted on it.
        tx fn spent(business_id: &str, day: &str) -> Option<i64>;
        /// Takes transfer `transfer_id`'s amount back from its business's total of the day it
        /// counted on.
        tx fn subtract_transfer(transfer_id: &str) -> ();
    }
}
