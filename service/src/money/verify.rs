//! `kobo ledger verify`: the ledger checked against itself.
//!
//! Recomputes every account balance from its postings, checks that each journal entry has at
//! least two postings summing to zero, that the whole ledger sums to zero, that no balance is
//! negative, that every posting names a known account, that every transaction is backed by
//! the posting it claims, that every row names the parents it should (its entry, its
//! business's account), that no business's ledger head handed out a place twice, that the
//! daily limit's running totals match the transfers, and that every transaction's running
//! balance is its account's transactions summed in order, the last one its account's balance. Sums are exact ([`Total`]) whatever
//! the number of rows.

use crate::datastore::audit::{self, Counted};
use crate::datastore::{Store, StoreError};
use crate::money::amount::{self, Total};
use serde::Serialize;

/// One thing that does not add up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Discrepancy {
    /// `balance`, `unbalanced_entry`, `short_entry`, `ledger_total`, `negative_balance`,
    /// `unknown_account`, `transaction_without_posting`, `missing_parent`, `repeated_sequence`,
    /// `daily_total`, `running_balance`, `closing_balance`.
    pub kind: &'static str,
    /// The account, entry or transaction it concerns.
    pub subject: String,
    pub detail: String,
}

/// What [`verify`] found.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub ok: bool,
    pub accounts: u64,
    pub journal_entries: u64,
    pub postings: u64,
    pub transactions: u64,
    /// The sum of every posting: `0.00` in a sound ledger.
    pub ledger_total: String,
    pub discrepancies: Vec<Discrepancy>,
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or_default()
}

/// Checks the whole ledger.
pub async fn verify(store: &Store) -> Result<Report, StoreError> {
    let mut discrepancies = Vec::new();
    balances(store, &mut discrepancies).await?;
    running_balances(store, &mut discrepancies).await?;
    entries(store, &mut discrepancies).await?;
    let total = ledger_total(store, &mut discrepancies).await?;
    references(store, &mut discrepancies).await?;
    sequences(store, &mut discrepancies).await?;
    daily_totals(store, &mut discrepancies).await?;
    Ok(Report {
        ok: discrepancies.is_empty(),
        accounts: count(audit::count(store, Counted::Accounts).await?),
        journal_entries: count(audit::count(store, Counted::JournalEntries).await?),
        postings: count(audit::count(store, Counted::Postings).await?),
        transactions: count(audit::count(store, Counted::Transactions).await?),
        ledger_total: total.amount_text(),
        discrepancies,
    })
}

/// Every account's stored balance is the sum of its postings, and none is negative.
async fn balances(store: &Store, found: &mut Vec<Discrepancy>) -> Result<(), StoreError> {
    for account in audit::account_balances(store).await? {
        let balance = i128::from(account.balance);
        if balance != account.posted {
            found.push(Discrepancy {
                kind: "balance",
                subject: account.account_number.clone(),
                detail: format!(
                    "stored balance {} but its postings sum to {}",
                    amount::amount_text(balance),
                    Total(account.posted).amount_text()
                ),
            });
        }
        if account.balance < 0 {
            found.push(Discrepancy {
                kind: "negative_balance",
                subject: account.account_number,
                detail: format!("balance {}", amount::amount_text(balance)),
            });
        }
    }
    Ok(())
}

/// Every transaction's running balance (`balance_after`, what statements read) is its
/// account's transactions summed in order up to it, and every account's balance is its last
/// transaction's: together, every change of a balance has its transaction.
async fn running_balances(store: &Store, found: &mut Vec<Discrepancy>) -> Result<(), StoreError> {
    for row in audit::running_balances_astray(store).await? {
        let stored = row
            .stored
            .map_or("none".into(), |kobo| amount::amount_text(i128::from(kobo)));
        found.push(Discrepancy {
            kind: "running_balance",
            subject: row.reference_number,
            detail: format!(
                "running balance {stored} but its account's transactions sum to {} up to it",
                amount::amount_text(i128::from(row.summed))
            ),
        });
    }
    for account in audit::closing_balances_astray(store).await? {
        found.push(Discrepancy {
            kind: "closing_balance",
            subject: account.account_number,
            detail: format!(
                "balance {} but its last transaction's running balance is {}",
                amount::amount_text(i128::from(account.balance)),
                amount::amount_text(i128::from(account.last))
            ),
        });
    }
    Ok(())
}

/// Every journal entry has at least two postings, and they sum to zero.
async fn entries(store: &Store, found: &mut Vec<Discrepancy>) -> Result<(), StoreError> {
    for (entry, postings) in audit::short_entries(store).await? {
        found.push(Discrepancy {
            kind: "short_entry",
            subject: entry,
            detail: format!("{postings} posting(s); an entry needs at least two"),
        });
    }
    for (entry, total) in audit::unbalanced_entries(store).await? {
        found.push(Discrepancy {
            kind: "unbalanced_entry",
            subject: entry,
            detail: format!(
                "its postings sum to {}",
                amount::amount_text(i128::from(total))
            ),
        });
    }
    Ok(())
}

/// The whole ledger sums to zero; returns its sum.
async fn ledger_total(store: &Store, found: &mut Vec<Discrepancy>) -> Result<Total, StoreError> {
    let total = Total(audit::postings_total(store).await?);
    if total != Total(0) {
        found.push(Discrepancy {
            kind: "ledger_total",
            subject: "ledger".into(),
            detail: format!("all postings sum to {}", total.amount_text()),
        });
    }
    Ok(total)
}

/// Every posting names a known account, every transaction is backed by its posting, and every
/// row of the ledger and of transfers names the parents it should.
async fn references(store: &Store, found: &mut Vec<Discrepancy>) -> Result<(), StoreError> {
    for (posting, account) in audit::postings_to_unknown_accounts(store).await? {
        found.push(Discrepancy {
            kind: "unknown_account",
            subject: posting,
            detail: format!("posting to {account}, which is no account"),
        });
    }
    for reference in audit::transactions_without_posting(store).await? {
        found.push(Discrepancy {
            kind: "transaction_without_posting",
            subject: reference,
            detail: "no posting of its entry moves its amount on its account".into(),
        });
    }
    for (what, row) in audit::rows_without_parent(store).await? {
        found.push(Discrepancy {
            kind: "missing_parent",
            subject: row,
            detail: what,
        });
    }
    Ok(())
}

/// No two transactions of a business hold one place of its ledger: the head hands each out
/// once (no index refuses a repeat since migration 0020; the head's lock is the guarantee).
async fn sequences(store: &Store, found: &mut Vec<Discrepancy>) -> Result<(), StoreError> {
    for (business, sequence, transactions) in audit::repeated_sequences(store).await? {
        found.push(Discrepancy {
            kind: "repeated_sequence",
            subject: format!("{business} {sequence}"),
            detail: format!("{transactions} transactions hold this place of the business's ledger"),
        });
    }
    Ok(())
}

/// The daily limit's running totals match the transfers that count toward them.
async fn daily_totals(store: &Store, found: &mut Vec<Discrepancy>) -> Result<(), StoreError> {
    for day in audit::daily_totals_astray(store).await? {
        found.push(Discrepancy {
            kind: "daily_total",
            subject: format!("{} {}", day.business_id, day.day),
            detail: format!(
                "the daily limit's running total is {} but the day's transfers sum to {}",
                amount::amount_text(i128::from(day.kept)),
                amount::amount_text(i128::from(day.spent))
            ),
        });
    }
    Ok(())
}
