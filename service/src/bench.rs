//! Benchmark tools on a sandbox store (`kobo bench ...`), never the API:
//!
//! - [`seed_credits`]: the fast path that gives an account a long history (millions of
//!   inbound credits) in minutes, so listing can be measured at depth. It writes what
//!   [`inbound::post_credit`](crate::money::inbound::post_credit) writes (journal entry, two postings,
//!   transaction, settlement; the account's balance and the business's ledger head move with
//!   them), in multi-row statements and large transactions. It writes no events: this is
//!   history, not news, and no webhook is sent for it. `kobo ledger verify` stays clean.
//!   The credits are written now, a microsecond apart ([`When::Now`]), or spread evenly over a
//!   past span ([`When::Over`]), so that a statement of one month can hold a few thousand of
//!   them with millions before it. The business's ledger head only moves forward, so a past
//!   span can be seeded only into a business with no entry at or after its start (a fresh
//!   business, or one whose history all lies before the span): anything else is refused and
//!   nothing is written. The statement and `kobo ledger verify` read an account's history by
//!   its transactions' times and running balances, not by the account's `created_at`, so a
//!   history older than the account reads and verifies like any other.
//! - [`ledger_loop`]: a payout's ledger statements (the head, a two-posting entry, both
//!   accounts' transactions, the event) in a plain loop, one database transaction each, with no
//!   HTTP, authentication, idempotency or audit: the in-process reference the payout benchmark
//!   on SQLite is compared with.
//!
//! Both post against the sandbox's internal accounts and refuse a store that holds production
//! postings.

use chrono::{DateTime, Duration, Utc};
use generated_server::{models, ResponseCode};

use crate::datastore::batch::{self, Batch};
use crate::datastore::ledger as datastore_ledger;
use crate::datastore::seeding::{self, SeedRows, SeededCredit};
use crate::error::{Error, OrInternal};
use crate::kernel::config::Environment;
use crate::kernel::store::{Store, Tx};
use crate::money::accounts::{self, AccountRow};
use crate::money::amount::{Kobo, MAX_BALANCE};
use crate::money::ledger::{self, Entry, Internal, LedgerAccount, Posting, Refusal};
use crate::money::nuban;
use crate::money::transactions::{self, NewTransaction};
use crate::outbox::events;

/// Credits per database transaction of [`seed_credits`], unless told otherwise.
pub const SEED_BATCH: usize = 20_000;
/// Refuses a store with production postings: these tools are for benchmark stores.
async fn ensure_sandbox(store: &Store) -> Result<(), Error> {
    let production: Vec<&str> = Internal::ALL
        .iter()
        .map(|account| account.id(Environment::Production))
        .collect();
    let found = seeding::any_posting_to(
        store,
        [production[0], production[1], production[2], production[3]],
    )
    .await?;
    if found {
        return Err(Error::new(ResponseCode::InvalidState)
            .with_message("this store has production postings: benchmark tools refuse it"));
    }
    Ok(())
}

/// The account numbered `number`, with its business, if it is active.
async fn active_account(store: &Store, number: &str) -> Result<(String, AccountRow), Error> {
    let business_id = seeding::business_of_account(store, number).await?;
    let business_id = business_id.ok_or_else(|| {
        Error::new(ResponseCode::AccountNotFound).with_message(format!("no account {number}"))
    })?;
    let account = accounts::find_by_number(store, &business_id, number)
        .await?
        .ok_or_else(|| Error::internal("the account vanished"))?;
    if account.status != "active" {
        return Err(Error::new(ResponseCode::InvalidState)
            .with_message(format!("account {number} is {}", account.status)));
    }
    Ok((business_id, account))
}

/// A seeded credit's reference: unique within the business by its sequence, the last two
/// characters from the business (`COL-<YYYYMMDD>-<8 of sequence><2 of business>`).
fn seed_reference(business_id: &str, sequence: i64, at: DateTime<Utc>) -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let business = business_id.bytes().fold(0u64, |hash, byte| {
        hash.wrapping_mul(31).wrapping_add(u64::from(byte))
    });
    let value = (u64::try_from(sequence).unwrap_or_default() & ((1 << 40) - 1))
        | ((business & 0x3ff) << 40);
    let suffix: String = (0..10)
        .rev()
        .map(|i| char::from(ALPHABET[((value >> (5 * i)) & 31) as usize]))
        .collect();
    format!("COL-{}-{suffix}", at.format("%Y%m%d"))
}

/// A seeded row's id: a UUID in time order (version 7: the posting's millisecond, then its
/// microsecond within it, then random bits), where the API's ids are random (version 4).
/// Rows in time order go to the end of each primary key's index; random ids would land all
/// over indexes of millions of entries, and every batch would rewrite about one page per row
/// (on SQLite, into the WAL; on PostgreSQL, full-page images after each checkpoint).
fn seed_id(at: DateTime<Utc>) -> String {
    let millis = u64::try_from(at.timestamp_millis()).unwrap_or_default();
    let micros = at.timestamp_subsec_micros() % 1_000;
    let random = *uuid::Uuid::new_v4().as_bytes();
    let mut tail = [0u8; 10];
    // 12 bits after the version (`rand_a`): the microsecond within the millisecond.
    tail[..2].copy_from_slice(&u16::try_from(micros).unwrap_or_default().to_be_bytes());
    tail[2..].copy_from_slice(&random[8..]);
    uuid::Builder::from_unix_timestamp_millis(millis, &tail)
        .into_uuid()
        .to_string()
}

/// What [`seed_credits`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seeded {
    pub inserted: u64,
}

/// When [`seed_credits`] puts the credits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// At the time of each batch, a microsecond apart (as many as the API would make at once).
    Now,
    /// Evenly over `[from, until)`, in the past: the `i`th of `count` credits at
    /// `from + (until - from) * i / count`, to the microsecond. `until` must not be after now,
    /// the span must hold a microsecond for each credit, and the business's ledger must have no
    /// entry at or after `from`.
    Over {
        from: DateTime<Utc>,
        until: DateTime<Utc>,
    },
}

/// The times of [`When::Over`], checked: the first microsecond and the span's microseconds.
#[derive(Clone, Copy, Debug)]
struct Spread {
    from: DateTime<Utc>,
    micros: i64,
    count: u64,
}

impl Spread {
    /// `None` for [`When::Now`]; `01` if the span is not one the credits fit into by `now`.
    fn of(when: When, count: u64, now: DateTime<Utc>) -> Result<Option<Spread>, Error> {
        let When::Over { from, until } = when else {
            return Ok(None);
        };
        let invalid =
            |message: String| Error::new(ResponseCode::InvalidRequest).with_message(message);
        let (from, until) = (
            ledger::to_the_microsecond(from)?,
            ledger::to_the_microsecond(until)?,
        );
        if until <= from {
            return Err(invalid(format!(
                "--until {until} is not after --from {from}"
            )));
        }
        if until > now {
            return Err(invalid(format!(
                "--until {until} is in the future: seeded history must lie in the past"
            )));
        }
        let micros = (until - from)
            .num_microseconds()
            .ok_or_else(|| invalid("the span is too long".into()))?;
        if u64::try_from(micros).unwrap_or_default() < count {
            return Err(invalid(format!(
                "{count} credits do not fit in {micros} µs, a microsecond each"
            )));
        }
        Ok(Some(Spread {
            from,
            micros,
            count,
        }))
    }

    /// The time of credit `index` (0-based) of the span's `count`.
    fn at(&self, index: u64) -> DateTime<Utc> {
        let offset = i128::from(self.micros) * i128::from(index) / i128::from(self.count.max(1));
        self.from + Duration::microseconds(i64::try_from(offset).unwrap_or(i64::MAX))
    }
}

/// Gives the account numbered `account_number` `count` inbound credits of `amount` each,
/// from a fixed originator at another bank, `batch` credits per database transaction, at the
/// times `when` says (see the module documentation).
pub async fn seed_credits(
    store: &Store,
    now: impl Fn() -> DateTime<Utc>,
    account_number: &str,
    count: u64,
    amount: Kobo,
    batch: usize,
    when: When,
) -> Result<Seeded, Error> {
    ensure_sandbox(store).await?;
    let spread = Spread::of(when, count, now())?;
    let (business_id, account) = active_account(store, account_number).await?;
    let mut done = 0u64;
    while done < count {
        let batch = usize::try_from((count - done).min(batch.max(1) as u64)).or_internal()?;
        let mut tx = store.begin().await?;
        let size = u32::try_from(batch).or_internal()?;
        let times = match spread {
            None => Times::Now(ledger::advance_head_by(&mut tx, &business_id, size, now()).await?),
            Some(spread) => {
                let head = place_in_past(&mut tx, &business_id, &spread, done, batch).await;
                // Refused: the transaction is dropped, nothing of this batch is kept.
                let head = head.map_err(|error| match done {
                    0 => error,
                    _ => {
                        let message =
                            format!("{} ({done} credits were written before)", error.message());
                        error.with_message(message)
                    }
                })?;
                Times::Spread { head, spread, done }
            }
        };
        let last_at = times.at(batch - 1);
        let balance = credit_balance(&mut tx, &account, amount, last_at, batch).await?;
        let mut rows = SeedRows::for_tx(&tx, batch);
        for offset in 0..batch {
            // The batch's later credits are in the balance the update left.
            let later = i64::try_from(batch - 1 - offset).or_internal()? * amount.get();
            let place = Place {
                sequence: times.first().sequence + i64::try_from(offset).or_internal()?,
                at: times.at(offset),
            };
            rows.push(&seeded_credit(
                &business_id,
                &account,
                amount,
                place,
                balance - later,
            ));
        }
        rows.insert(&mut tx).await?;
        tx.commit().await.or_internal()?;
        done += batch as u64;
    }
    // Fresh statistics, as a deployment of that size would have them.
    seeding::analyze_transactions(store).await?;
    Ok(Seeded { inserted: count })
}

/// The places of one batch and their times.
enum Times {
    /// From the head's first place, a microsecond apart.
    Now(ledger::Head),
    /// The head's places at the span's times of credits `done..`.
    Spread {
        head: ledger::Head,
        spread: Spread,
        done: u64,
    },
}

impl Times {
    fn first(&self) -> ledger::Head {
        match self {
            Times::Now(head) | Times::Spread { head, .. } => *head,
        }
    }

    /// The time of the batch's credit `offset`.
    fn at(&self, offset: usize) -> DateTime<Utc> {
        match self {
            Times::Now(head) => head.posted_at + Duration::microseconds(offset as i64),
            Times::Spread { spread, done, .. } => spread.at(*done + offset as u64),
        }
    }
}

/// Takes `batch` places of the business's ledger for the span's credits `done..done + batch`:
/// the first at the first credit's time, the head left at the last credit's time (the places
/// between are the credits', later than a microsecond apart). `09` when the head was already
/// past the first credit's time: the ledger's time only moves forward, and the credit would
/// land elsewhere than asked.
async fn place_in_past(
    tx: &mut Tx,
    business_id: &str,
    spread: &Spread,
    done: u64,
    batch: usize,
) -> Result<ledger::Head, Error> {
    let first_at = spread.at(done);
    let size = u32::try_from(batch).or_internal()?;
    let head = ledger::advance_head_by(tx, business_id, size, first_at).await?;
    if head.posted_at != first_at {
        let last = head.posted_at - Duration::microseconds(1);
        return Err(Error::new(ResponseCode::InvalidState).with_message(format!(
            "the business of this account has ledger entries up to {last}, at or after {first_at}: \
             history goes into the past only before a business's first entry there \
             (seed an account of a fresh business, or a span after {last})"
        )));
    }
    let last_at = spread.at(done + batch as u64 - 1);
    datastore_ledger::set_head_time(tx, business_id, last_at).await?;
    Ok(head)
}

/// Adds a batch of `batch` credits of `amount` to the account's balance in one update, its
/// last update at `last_at`, the batch's last credit (`48` if the account cannot hold them);
/// returns the balance after.
async fn credit_balance(
    tx: &mut Tx,
    account: &AccountRow,
    amount: Kobo,
    last_at: DateTime<Utc>,
    batch: usize,
) -> Result<i64, Error> {
    let batch = i64::try_from(batch).or_internal()?;
    let total = amount
        .get()
        .checked_mul(batch)
        .ok_or_else(|| Error::internal("the seeded total overflows"))?;
    seeding::add_to_balance(tx, &account.id, total, last_at, MAX_BALANCE)
        .await?
        .ok_or_else(|| {
            Error::new(ResponseCode::InvalidState).with_message("the account cannot hold that much")
        })
}

/// A credit's place in its business's ledger and its time.
struct Place {
    sequence: i64,
    at: DateTime<Utc>,
}

/// The credit at its place, its ids in time order ([`seed_id`]), the account's balance
/// `balance_after` right after it.
fn seeded_credit<'a>(
    business_id: &'a str,
    account: &'a AccountRow,
    amount: Kobo,
    Place { sequence, at }: Place,
    balance_after: i64,
) -> SeededCredit<'a> {
    SeededCredit {
        business_id,
        account_id: &account.id,
        settlement_account_id: Internal::NipSettlement.id(Environment::Sandbox),
        entry_id: seed_id(at),
        posting_ids: [seed_id(at), seed_id(at)],
        id: seed_id(at),
        sequence,
        reference: seed_reference(business_id, sequence, at),
        narration: format!("Seeded credit {sequence}"),
        amount: amount.get(),
        balance_after,
        at,
    }
}

/// Moves `amount` `transfers` times between the business's active accounts, round robin from
/// the richest, with a payout's ledger statements only (see the module documentation). Returns the
/// number of transfers made.
pub async fn ledger_loop(
    store: &Store,
    now: impl Fn() -> DateTime<Utc>,
    business_id: &str,
    transfers: u64,
    amount: Kobo,
) -> Result<u64, Error> {
    ensure_sandbox(store).await?;
    // The richest first: with two accounts, the first transfer leaves the one with money.
    let accounts = seeding::active_accounts_by_balance(store, business_id).await?;
    if accounts.len() < 2 {
        return Err(Error::new(ResponseCode::InvalidState)
            .with_message("the business needs two active accounts"));
    }
    for index in 0..transfers {
        let from = &accounts[(index as usize) % accounts.len()];
        let to = &accounts[(index as usize + 1) % accounts.len()];
        let mut tx = store.begin().await?;
        // Two places: the debit's and the credit's.
        let head = ledger::advance_head_by(&mut tx, business_id, 2, now()).await?;
        let source = accounts::find_by_number(&mut tx, business_id, from)
            .await?
            .ok_or_else(|| Error::internal("the source vanished"))?;
        let destination = accounts::find_by_number(&mut tx, business_id, to)
            .await?
            .ok_or_else(|| Error::internal("the destination vanished"))?;
        // As a payout writes them: the balances at once, the rows in one statement.
        let mut batch = Batch::new();
        let entry_id = post_move(
            &mut tx,
            &mut batch,
            business_id,
            &source,
            &destination,
            amount,
            head,
        )
        .await?;
        let recorded = record_move(
            &mut batch,
            business_id,
            &entry_id,
            [&source, &destination],
            amount,
            head,
        )?;
        events::record_into(
            &mut batch,
            business_id,
            "transfer.successful",
            &recorded,
            head.posted_at,
        )?;
        batch::run(&mut tx, batch).await?;
        tx.commit().await.or_internal()?;
    }
    Ok(transfers)
}

/// Posts `amount` from `source` to `destination` (the balances at once, the rows in `batch`);
/// returns the entry's id.
async fn post_move(
    tx: &mut Tx,
    batch: &mut Batch,
    business_id: &str,
    source: &AccountRow,
    destination: &AccountRow,
    amount: Kobo,
    head: ledger::Head,
) -> Result<String, Error> {
    let entry = Entry {
        business_id,
        kind: "transfer",
        postings: vec![
            Posting {
                account: LedgerAccount::Customer(source.id.clone()),
                amount: -amount.get(),
            },
            Posting {
                account: LedgerAccount::Customer(destination.id.clone()),
                amount: amount.get(),
            },
        ],
    };
    match ledger::post_into(tx, batch, &entry, head).await? {
        Ok(entry_id) => Ok(entry_id),
        Err(
            Refusal::InsufficientFunds { account_id }
            | Refusal::BalanceLimit { account_id }
            | Refusal::Inactive { account_id, .. },
        ) => Err(Error::new(ResponseCode::ProviderError)
            .with_message(format!("account {account_id} refused the posting"))),
    }
}

/// Each side of a move as a transaction of the business, in `batch`: the debit at `head`, the
/// credit at the next place. Returns the credit's view.
fn record_move(
    batch: &mut Batch,
    business_id: &str,
    entry_id: &str,
    [source, destination]: [&AccountRow; 2],
    amount: Kobo,
    head: ledger::Head,
) -> Result<Option<models::IntegrationTransaction>, Error> {
    let reference_number = transactions::new_reference("TRF", head.posted_at);
    let mut recorded = None;
    for (account, transaction_type, head, suffix) in [
        (source, models::TransactionType::Debit, head, ""),
        (
            destination,
            models::TransactionType::Credit,
            head.next(),
            "-CR",
        ),
    ] {
        recorded = Some(transactions::record_into(
            batch,
            &NewTransaction {
                business_id,
                account,
                entry_id,
                head,
                reference_number: format!("{reference_number}{suffix}"),
                transaction_type,
                category: models::TransactionCategory::Transfer,
                status: models::TransactionStatus::Success,
                channel: models::Channel::Intra,
                amount,
                narration: format!("Benchmark transfer to {}", nuban::BANK_CODE),
                session_id: None,
                originator: None,
            },
        )?);
    }
    Ok(recorded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_ids_sort_as_their_times_do() {
        let start = DateTime::parse_from_rfc3339("2026-11-24T01:02:03.999998Z")
            .unwrap()
            .with_timezone(&Utc);
        let times: Vec<_> = (0..3_000)
            .map(|offset| start + Duration::microseconds(offset))
            .collect();
        let ids: Vec<String> = times.iter().map(|at| seed_id(*at)).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted, "text order is time order, across milliseconds");
        for id in &ids {
            let parsed = uuid::Uuid::parse_str(id).unwrap();
            assert_eq!(parsed.get_version_num(), 7);
        }
        let unique: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len());
    }
}
