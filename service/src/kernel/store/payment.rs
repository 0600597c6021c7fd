//! A payout's write, the store's business, in one call ([`Tx::pay`]): the caller hands over
//! what the payout moves ([`Payment`]) and how to make its rows once its places in the ledger
//! are known, and gets back [`Paid`]: written, refused (with what the movement decided), or a
//! row another payment holds. How it is written is the store's:
//!
//! - on PostgreSQL, a payout in its business's group commit whose ledger head the group knows
//!   (`kobo_store_postgres::groups::Member::known_head`) has its places foreseen, its rows made
//!   first, and everything written in one statement (`payout_in_one.sql`), which writes nothing
//!   if the head was elsewhere or, for a member that held the head before its own work, if its
//!   gate finds the payout would be refused; then, as for every other payout, the member's
//!   savepoint (when it needs one), the movement (`advance_and_move.sql`) and the rows' batch;
//! - on SQLite, the movement's steps in the writer's transaction, then the batch.
//!
//! Whether the commit kept it is the commit's to tell ([`Tx::commit`], with the transfer as
//! its witness: [`Tx::witness`]): committed, undone, or [`StoreError::OutcomeUnknown`].

use chrono::{DateTime, Utc};
use kobo_store::batch::{Batch, Batches};
use kobo_store::ledger::{AdvancedHead, HeadsAndMoney, InOne, Ledger, Money};

use super::{StoreError, Tx, TxOn};

/// What a payout moves ([`Tx::pay`]).
pub struct Payment<'a> {
    /// The businesses whose heads it advances, in id order (the lock order), with the places
    /// each takes; the source business is `money.business_id`.
    pub places: &'a [(&'a str, i64)],
    /// When, to the microsecond: a head's next place is at `now`, or just after its last.
    pub now: DateTime<Utc>,
    pub money: &'a Money<'a>,
    /// Whether its rows are only a payout's own (its transactions, its transfer, their events,
    /// its key with its answer) on its business's ledger alone: an intra-bank payout that is
    /// not held. Only such a payout is written in one statement with its movement.
    pub rows_only: bool,
}

/// What [`Tx::pay`] did.
#[derive(Debug)]
pub enum Paid<T> {
    /// Moved and written: what the rows' maker returned, and what the movement decided.
    Written(T, HeadsAndMoney),
    /// The movement refused ([`HeadsAndMoney::all_done`] is false: an account, the business's
    /// status, its daily limit): nothing of the payout may be kept, and the caller rolls back;
    /// the transaction still reads, to say why.
    Refused(HeadsAndMoney),
    /// A row of the payout is another's (a unique index refused it: a client reference). Its
    /// own work is undone; `reads_group`: the transaction goes on and reads what the payouts
    /// before it in its group commit wrote, which the pool cannot see yet. Otherwise what it
    /// conflicts with was committed, and the pool reads it.
    Conflict {
        error: StoreError,
        reads_group: bool,
    },
}

impl Tx {
    /// Writes a payout: its movement, then the rows `make` makes from its heads as advanced
    /// (each business's last sequence and time: the places are the last `places` of each).
    /// `make` may be called twice (once for a foreseen head, once for the head found); only the
    /// rows of its last call are written.
    pub async fn pay<T, E>(
        &mut self,
        payment: &Payment<'_>,
        mut make: impl FnMut(&[AdvancedHead]) -> Result<(T, Batch), E>,
    ) -> Result<Paid<T>, E>
    where
        E: From<StoreError>,
    {
        let money = payment.money;
        self.check_standing(money)?;
        if let Some(foreseen) = self.foresee(payment) {
            let (made, batch) = make(std::slice::from_ref(&foreseen.advanced))?;
            match self.write_in_one(payment, &foreseen, batch).await {
                Ok(InOne::Written(done)) => {
                    return Ok(self.foreseen_done(payment, &foreseen, made, done)?)
                }
                // Nothing written: the two statements follow.
                Ok(InOne::HeadElsewhere | InOne::Gated) => self.missed_head(),
                Err(error) => return Ok(self.refused_row(error).await?),
            }
        }
        self.guard().await?;
        let done = self.advance_and_move(payment).await?;
        if !done.all_done(money) {
            return Ok(Paid::Refused(done));
        }
        if let [head] = done.heads.as_slice() {
            self.advanced(head, false);
        }
        let (made, batch) = make(&done.heads)?;
        match self.run(batch).await {
            Ok(()) => Ok(Paid::Written(made, done)),
            Err(error) => Ok(self.refused_row(error).await?),
        }
    }

    /// The places of a payout whose business's head the transaction knows ([`Tx::known_head`])
    /// and that takes only that head, as `advance_and_move.sql` would advance it: its first
    /// place at `now`, or just after the last place's time if that is not before `now`.
    fn foresee(&self, payment: &Payment<'_>) -> Option<Foreseen> {
        let [(business_id, places)] = payment.places else {
            return None;
        };
        if !payment.rows_only || *business_id != payment.money.business_id {
            return None;
        }
        let known = self.known_head(business_id)?;
        let last_micros = known.last_posted_micros?;
        let now_micros = payment.now.timestamp_micros();
        let first_micros = if last_micros < now_micros {
            now_micros
        } else {
            last_micros + 1
        };
        Some(Foreseen {
            last_sequence: known.last_sequence,
            advanced: AdvancedHead {
                business_id: (*business_id).to_owned(),
                last_sequence: known.last_sequence + places,
                last_posted_micros: Some(first_micros + places - 1),
                last_posted_at: known.last_posted_at,
            },
        })
    }

    /// The movement and `batch` in one statement, from the foreseen head (PostgreSQL only: on
    /// SQLite no head is foreseen).
    async fn write_in_one(
        &mut self,
        payment: &Payment<'_>,
        foreseen: &Foreseen,
        batch: Batch,
    ) -> Result<InOne, StoreError> {
        let holds_head = self.holds_head(payment.money.business_id);
        match &mut self.on {
            TxOn::Sqlite(_) => Err(StoreError::Misuse("SQLite foresees no ledger head".into())),
            TxOn::Postgres(tx) => {
                kobo_store_postgres::batch::run_moving(
                    tx.inner(),
                    batch,
                    payment.places,
                    payment.now,
                    payment.money,
                    foreseen.last_sequence,
                    holds_head,
                )
                .await
            }
        }
    }

    /// What the one statement decided, once its head is seen where it was foreseen (a time
    /// elsewhere is a fault: the payout is undone, and the head no longer foreseen).
    fn foreseen_done<T>(
        &mut self,
        payment: &Payment<'_>,
        foreseen: &Foreseen,
        made: T,
        done: HeadsAndMoney,
    ) -> Result<Paid<T>, StoreError> {
        let expected = &foreseen.advanced;
        let head = done
            .heads
            .iter()
            .find(|head| head.business_id == expected.business_id);
        let at = head.map(|head| (head.last_sequence, head.last_posted_micros));
        if at != Some((expected.last_sequence, expected.last_posted_micros)) {
            // Not guessed again: a group's first member would otherwise foresee the same wrong
            // time from the same remembered head, payout after payout.
            self.missed();
            return Err(StoreError::Misuse(format!(
                "a payout's ledger head moved to {at:?}, not to ({}, {:?}) as foreseen",
                expected.last_sequence, expected.last_posted_micros
            )));
        }
        if !done.all_done(payment.money) {
            return Ok(Paid::Refused(done));
        }
        self.advanced(expected, true);
        Ok(Paid::Written(made, done))
    }

    /// The one statement wrote nothing: the head is forgotten, and the transaction, which has
    /// nothing of the payout to undo, can still be guarded.
    fn missed_head(&mut self) {
        self.missed();
        self.wrote_nothing();
    }

    /// The payout's movement in one step ([`Ledger::advance_and_move`]).
    async fn advance_and_move(
        &mut self,
        payment: &Payment<'_>,
    ) -> Result<HeadsAndMoney, StoreError> {
        let (places, now, money) = (payment.places, payment.now, payment.money);
        match &mut self.on {
            TxOn::Sqlite(tx) => {
                <kobo_store_sqlite::Backend as Ledger>::advance_and_move(tx, places, now, money)
                    .await
            }
            TxOn::Postgres(tx) => {
                <kobo_store_postgres::Backend as Ledger>::advance_and_move(
                    tx.inner(),
                    places,
                    now,
                    money,
                )
                .await
            }
        }
    }

    /// Runs the payout's rows ([`Batches::run`]).
    async fn run(&mut self, batch: Batch) -> Result<(), StoreError> {
        match &mut self.on {
            TxOn::Sqlite(tx) => <kobo_store_sqlite::Backend as Batches>::run(tx, batch).await,
            TxOn::Postgres(tx) => {
                <kobo_store_postgres::Backend as Batches>::run(tx.inner(), batch).await
            }
        }
    }

    /// A write of the payout failed with `error`: a row another holds is [`Paid::Conflict`],
    /// its own work undone; anything else is the caller's error.
    async fn refused_row<T>(&mut self, error: StoreError) -> Result<Paid<T>, StoreError> {
        if !error.is_conflict() {
            return Err(error);
        }
        let reads_group = self.undo_own_work().await?;
        Ok(Paid::Conflict { error, reads_group })
    }
}

/// A payout's places, foreseen from the head its transaction knows.
struct Foreseen {
    /// The head's last sequence before the payout, where its statement must find it.
    last_sequence: i64,
    /// The head as the payout must leave it.
    advanced: AdvancedHead,
}
