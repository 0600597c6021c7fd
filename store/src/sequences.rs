//! `sequences`: named counters (the account number series).

crate::contract! {
    /// `sequences`, in each store.
    pub trait Sequences in sequences, functions sequences_functions {
        /// Takes the next value of the counter `name` (1 for a new one), in `tx`.
        tx fn next(name: &str) -> i64;
    }
}
