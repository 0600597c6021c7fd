//! What both stores' group commits share (`kobo-store-sqlite`'s writer, `kobo-store-postgres`'s
//! payout groups): a transaction that finishes while others wait for the turn is left open for
//! them, so each counts the transactions waiting.

use std::sync::atomic::{AtomicUsize, Ordering};

/// One transaction counted in a turn's count of those waiting for it, while it exists: a
/// caller that gives up waiting is counted out too.
pub struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    pub fn new(count: &'a AtomicUsize) -> Waiting<'a> {
        count.fetch_add(1, Ordering::SeqCst);
        Waiting(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
