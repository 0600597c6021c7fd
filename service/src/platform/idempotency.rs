//! `Idempotency-Key`: a retry of a creating or money-moving operation returns the first answer.
//!
//! Every keyed operation runs through [`Keyed::run`], which owns the whole protocol:
//!
//! 1. **Peek.** A key already answered is answered at once, before any work (one read, no
//!    transaction, no write turn): the stored answer, or the stored refusal, marked replayed.
//! 2. **Prepare.** The operation's work that needs no transaction: its checks, its reads, its
//!    provider calls (a slow provider never holds a lock) and the single-use OTP, which the
//!    check spends.
//! 3. **Claim.** The transaction begins (plain, or posting to ledgers: [`Begin`]), and the key
//!    is claimed by its first statement. A concurrent request with the same key waits for the
//!    first one's transaction (SQLite's single writer, PostgreSQL's unique index) and then
//!    replays it; one still running is `28`; the key with another body is `27`. A payout
//!    claims its key last instead, with its answer in its batch ([`Keyed::claiming_last`]): a
//!    concurrent send then finds the key taken when its batch runs, rolls back, and replays.
//! 4. **Write** the operation's rows, then **complete**: the answer is stored in the same
//!    transaction (in the operation's own batch when it writes one: [`Completion::into`]), so
//!    a request that fails leaves no claim behind and its retry runs afresh.
//! 5. **Refuse.** A refusal that a retry would meet again (a payout's `06`, `26`, `42`, `49`:
//!    [`LASTING_PAYOUT_REFUSALS`], which an operation opts into with [`Keyed::storing`]) is
//!    stored under the key, in its own transaction, and replayed like an answer. Before answering any other refusal, the key is peeked at again: a retry racing
//!    its own first send may be refused for what that send did (the customer it opened, the
//!    transfer it approved, the OTP it spent), and the first send's answer is the retry's.
//!
//! Keys are scoped to the business and the operation, and kept 24 hours ([`RETENTION_HOURS`]);
//! an expired key is forgotten when it is claimed again, and [`purge_expired`] deletes the rest.

use chrono::{DateTime, Duration, Utc};
use generated_server::{Operation, ResponseCode};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::datastore::batch::{self, Batch, KeyClaim};
use crate::datastore::idempotency_keys::{self, KeyOf, StoredKey};
use crate::error::{Error, OrInternal};
use crate::kernel::clock::Clock;
use crate::kernel::secrets::sha256_hex;
use crate::kernel::store::{Store, Tx};
use crate::platform::caller::Caller;

pub const RETENTION_HOURS: i64 = 24;

/// The outcome of [`claim`].
#[derive(Debug)]
pub enum Claim {
    /// No key was sent: run the operation, store nothing.
    NoKey,
    /// The key is new: run the operation and [`complete`] it.
    New(Key),
    /// Not claimed yet: the operation's batch claims it with the answer ([`Keyed::claiming_last`]).
    Last(LastClaim),
    /// The key was used with the same body: answer the stored `data`.
    Replay(Value),
}

/// A claimed key.
#[derive(Debug)]
pub struct Key {
    business_id: String,
    operation: Operation,
    key: String,
}

impl Key {
    fn of(&self) -> KeyOf<'_> {
        KeyOf {
            business_id: &self.business_id,
            operation: self.operation.id(),
            key: &self.key,
        }
    }
}

/// A key to claim with the answer, for a request hashing to `request_hash`, at `at`.
#[derive(Debug)]
pub struct LastClaim {
    key: Key,
    request_hash: String,
    at: DateTime<Utc>,
}

/// The retention's cutoff at `now`: keys written before it have expired.
fn cutoff(now: DateTime<Utc>) -> DateTime<Utc> {
    now - Duration::hours(RETENTION_HOURS)
}

/// Claims `caller.idempotency_key` (if any) within `tx`, for a body hashing to `request_hash`.
async fn claim<P>(
    tx: &mut Tx,
    now: DateTime<Utc>,
    caller: &Caller<P>,
    business_id: &str,
    request_hash: &str,
) -> Result<Claim, Error> {
    let Some(key) = caller.idempotency_key.as_deref() else {
        return Ok(Claim::NoKey);
    };
    let claimed = claim_key(tx, now, business_id, caller.operation, key, request_hash).await;
    marked_if_stored(caller, claimed)
}

/// `result`, with the call marked replayed when it is a stored refusal ([`stored_refusal`]).
fn marked_if_stored<P, T>(caller: &Caller<P>, result: Result<T, Error>) -> Result<T, Error> {
    if let Err(error) = &result {
        if stored_refusal(error.code()) {
            caller.mark_replayed();
        }
    }
    result
}

/// The refusals of a payout that a retry would meet again, so they are stored under its key
/// and replayed like an answer: the beneficiary does not exist (`06`), the client reference is
/// taken (`26`), the source account is not the business's (`42`), the name does not match
/// (`49`). Every other refusal may pass later (a new OTP, funds, the provider back).
pub const LASTING_PAYOUT_REFUSALS: &[ResponseCode] = &[
    ResponseCode::BeneficiaryAccountNotFound,
    ResponseCode::Duplicate,
    ResponseCode::SourceAccountNotFound,
    ResponseCode::BeneficiaryNameMismatch,
];

/// Whether a refusal is of a kind that may be stored ([`LASTING_PAYOUT_REFUSALS`]).
fn stored_refusal(code: ResponseCode) -> bool {
    LASTING_PAYOUT_REFUSALS.contains(&code)
}

/// The response code of a stored refusal.
fn refusal_code(text: &str) -> Option<ResponseCode> {
    LASTING_PAYOUT_REFUSALS
        .iter()
        .copied()
        .find(|code| code.as_str() == text)
}

/// Stores `refusal` as the answer of a [`Claim::New`] when it is one that lasts
/// ([`stored_refusal`]); the caller commits `tx` and answers the refusal.
async fn complete_refusal(tx: &mut Tx, claim: &Claim, refusal: &Error) -> Result<(), Error> {
    let Claim::New(key) = claim else {
        return Ok(());
    };
    if !stored_refusal(refusal.code()) {
        return Ok(());
    }
    let message = refusal.message();
    idempotency_keys::store_refusal(tx, &key.of(), refusal.code().as_str(), &message).await?;
    Ok(())
}

/// [`claim`] with its parts spelled out.
pub async fn claim_key(
    tx: &mut Tx,
    now: DateTime<Utc>,
    business_id: &str,
    operation: Operation,
    key: &str,
    request_hash: &str,
) -> Result<Claim, Error> {
    // A new key is inserted, a key older than the retention replaced (as if it had been
    // deleted first); an unexpired one is left alone and read below.
    let of = KeyOf {
        business_id,
        operation: operation.id(),
        key,
    };
    let expired_before = cutoff(now);
    if idempotency_keys::claim(tx, &of, request_hash, now, expired_before).await? {
        return Ok(Claim::New(Key {
            business_id: business_id.to_owned(),
            operation,
            key: key.to_owned(),
        }));
    }
    let stored = idempotency_keys::find_unexpired(tx, &of, expired_before)
        .await?
        .ok_or_else(|| Error::internal("a key neither claimed nor stored"))?;
    claim_of_stored(&stored, request_hash)
}

/// Whether a retry can be answered before the operation does any work: [`claim`]'s verdict on
/// a key already stored, read outside any transaction and writing nothing (on SQLite it waits
/// for no write turn). `None` when no key was sent or the key is new or expired: the
/// operation then runs, and its own [`claim`] decides a race with a concurrent request.
async fn peek<B: Serialize>(
    store: &Store,
    now: DateTime<Utc>,
    caller: &Caller,
    body: &B,
) -> Result<Option<Value>, Error> {
    Peek::new(caller, now, body)?.read(store).await?.transpose()
}

/// A keyed call's key as a read looks it up, and the verdict on what it found: [`peek`]'s own
/// read, or an operation's first read that reads the key with its rows ([`Keyed::run_peeking`]).
pub struct Peek<'a> {
    caller: &'a Caller,
    now: DateTime<Utc>,
    /// The body's fingerprint; `None` without a key.
    request_hash: Option<String>,
}

impl<'a> Peek<'a> {
    fn new<B: Serialize>(caller: &'a Caller, now: DateTime<Utc>, body: &B) -> Result<Self, Error> {
        let request_hash = match caller.idempotency_key {
            Some(_) => Some(request_hash(body)?),
            None => None,
        };
        Ok(Peek {
            caller,
            now,
            request_hash,
        })
    }

    /// The key to look up, and the time before which a stored one has expired; `None` when
    /// the call sent no key.
    pub fn key(&self) -> Option<(KeyOf<'_>, DateTime<Utc>)> {
        let key = self.caller.idempotency_key.as_deref()?;
        let of = KeyOf {
            business_id: &self.caller.principal.business_id,
            operation: self.caller.operation.id(),
            key,
        };
        Some((of, cutoff(self.now)))
    }

    /// The verdict on the key as `stored` (unexpired, as read for [`Peek::key`]): `None` when
    /// no key was sent or none is stored, and the operation runs; otherwise the stored answer to
    /// replay, or the refusal (`27` another body, a stored refusal marked replayed, `28`).
    pub fn verdict(&self, stored: Option<&StoredKey>) -> Option<Result<Value, Error>> {
        let (stored, request_hash) = (stored?, self.request_hash.as_deref()?);
        Some(
            match marked_if_stored(self.caller, claim_of_stored(stored, request_hash)) {
                Ok(Claim::Replay(data)) => Ok(data),
                Ok(_) => Err(Error::internal("a stored key was judged new")),
                Err(error) => Err(error),
            },
        )
    }

    /// The key read by a statement of its own, and the verdict on it.
    async fn read(&self, store: &Store) -> Result<Option<Result<Value, Error>>, Error> {
        let Some((key, expired_before)) = self.key() else {
            return Ok(None);
        };
        let stored = idempotency_keys::find_unexpired(store, &key, expired_before).await?;
        Ok(self.verdict(stored.as_ref()))
    }
}

/// What a preparation that reads the key itself ([`Keyed::run_peeking`]) hands back.
pub enum Peeked<R> {
    /// The key was stored: its verdict ([`Peek::verdict`]) is the answer.
    Stored(Result<Value, Error>),
    /// The key is new: the operation goes on.
    Prepared(Prepared<R>),
}

/// The verdict on a stored key for a request hashing to `request_hash`: another body (`27`),
/// a refusal that lasts (its code), no answer yet (`28`), or the answer to replay.
fn claim_of_stored(stored: &StoredKey, request_hash: &str) -> Result<Claim, Error> {
    if stored.request_hash != request_hash {
        return Err(Error::new(ResponseCode::IdempotencyKeyReused)
            .with_message("This Idempotency-Key was used with a different request body"));
    }
    if let Some(code) = stored.refusal_code.as_deref().and_then(refusal_code) {
        let message = stored.refusal_message.clone();
        return Err(Error::new(code).with_message(message.unwrap_or_default()));
    }
    match &stored.response_data {
        None => Err(in_progress()),
        Some(data) => Ok(Claim::Replay(serde_json::from_str(data).or_internal()?)),
    }
}

/// `28`: the key's first request has not answered yet.
fn in_progress() -> Error {
    Error::new(ResponseCode::IdempotencyKeyInProgress)
        .with_message("A request with this Idempotency-Key is still being processed; retry later")
}

/// Stores the answer of a [`Claim::New`] in `tx`; does nothing for the other outcomes.
async fn complete<T: Serialize>(tx: &mut Tx, claim: &Claim, data: &T) -> Result<(), Error> {
    let mut batch = Batch::new();
    complete_into(&mut batch, claim, data)?;
    Ok(batch::run(tx, batch).await?)
}

/// [`complete`] as a statement of `batch`, which runs in the claim's transaction: the answer
/// of a key claimed, or the key claimed with its answer ([`Claim::Last`]).
fn complete_into<T: Serialize>(batch: &mut Batch, claim: &Claim, data: &T) -> Result<(), Error> {
    match claim {
        Claim::NoKey | Claim::Replay(_) => Ok(()),
        Claim::New(key) => {
            let data = serde_json::to_string(data).or_internal()?;
            idempotency_keys::complete_into(batch, &key.of(), data);
            Ok(())
        }
        Claim::Last(last) => {
            let data = serde_json::to_string(data).or_internal()?;
            let claim = KeyClaim {
                request_hash: last.request_hash.clone(),
                at: last.at,
                expired_before: cutoff(last.at),
            };
            idempotency_keys::claim_into(batch, &last.key.of(), data, claim);
            Ok(())
        }
    }
}

/// The stored answer, marked as a replay for the `Idempotent-Replayed` header.
fn replay<P, T: DeserializeOwned>(caller: &Caller<P>, data: Value) -> Result<T, Error> {
    caller.mark_replayed();
    serde_json::from_value(data).or_internal()
}

/// How a keyed operation's transaction begins.
#[derive(Debug)]
pub enum Begin {
    /// `Store::begin`.
    Plain,
    /// `Store::begin_posting`: it posts to the ledgers of these businesses.
    Posting(Vec<String>),
    /// `Store::begin_payout`: a payout, posting to the ledgers of `businesses`, holding the
    /// standing of the business money leaves, if any.
    Payout {
        businesses: Vec<String>,
        standing: Option<String>,
    },
}

/// What a keyed operation's preparation hands its write: the value it computed, and how its
/// transaction begins.
#[derive(Debug)]
pub struct Prepared<R> {
    pub value: R,
    pub begin: Begin,
}

impl<R> Prepared<R> {
    /// `value`, for a plain transaction.
    pub fn plain(value: R) -> Prepared<R> {
        Prepared {
            value,
            begin: Begin::Plain,
        }
    }

    /// `value`, for a transaction that posts to the ledgers of `businesses`.
    pub fn posting(value: R, businesses: Vec<String>) -> Prepared<R> {
        Prepared {
            value,
            begin: Begin::Posting(businesses),
        }
    }

    /// `value`, for a payout's transaction, posting to the ledgers of `businesses`, holding
    /// the standing of the business money leaves (`standing`), if any.
    pub fn payout(value: R, businesses: Vec<String>, standing: Option<String>) -> Prepared<R> {
        Prepared {
            value,
            begin: Begin::Payout {
                businesses,
                standing,
            },
        }
    }
}

/// The claimed key's completion, for an operation that writes its rows in one batch: the
/// answer goes into that batch ([`Completion::into`]) rather than a statement of its own.
pub struct Completion {
    claim: Claim,
    done: bool,
}

impl Completion {
    /// Stores `answer` as a statement of `batch`, which runs in the claim's transaction.
    pub fn into<T: Serialize>(&mut self, batch: &mut Batch, answer: &T) -> Result<(), Error> {
        complete_into(batch, &self.claim, answer)?;
        self.done = true;
        Ok(())
    }
}

/// One call of a keyed operation, ready to [`Keyed::run`]: the caller (with its key, if it
/// sent one), the body as the key's fingerprint, and the refusals that are stored under the
/// key ([`Keyed::storing`]; none unless the operation says so).
pub struct Keyed<'a, B> {
    store: &'a Store,
    clock: &'a Clock,
    caller: &'a Caller,
    fingerprint: &'a B,
    lasting: &'static [ResponseCode],
    /// The key is claimed with the answer, by the operation's batch ([`Keyed::claiming_last`]).
    claims_last: bool,
}

impl<'a, B: Serialize> Keyed<'a, B> {
    pub fn new(store: &'a Store, clock: &'a Clock, caller: &'a Caller, fingerprint: &'a B) -> Self {
        Keyed {
            store,
            clock,
            caller,
            fingerprint,
            lasting: &[],
            claims_last: false,
        }
    }

    /// Claims the key with the answer, in the operation's batch at the end of its transaction,
    /// instead of by the transaction's first statement: one statement fewer (on PostgreSQL a
    /// round trip fewer, and no second write of the key's row). A concurrent request with the
    /// same key then runs its own transaction until its batch finds the key taken
    /// (`StoreError::KeyTaken`: PostgreSQL's unique index makes it wait for the first one's
    /// commit), rolls everything back and answers what the first one stored
    /// ([`Keyed::answer_taken`]). Only for an operation whose transaction does nothing but
    /// write the database, so that rolling it back undoes all of it: a payout and an inbound
    /// credit (their ledger heads also make a second send of a key wait for the first one's
    /// commit).
    pub fn claiming_last(mut self) -> Self {
        self.claims_last = true;
        self
    }

    /// Stores these refusals under the key (a retry would meet them again): see
    /// [`LASTING_PAYOUT_REFUSALS`].
    pub fn storing(mut self, lasting: &'static [ResponseCode]) -> Self {
        self.lasting = lasting;
        self
    }

    /// Runs the operation through the whole protocol (see the module's documentation): the
    /// peek, `prepare` (no transaction), the transaction and its claim, `write` in it, the
    /// completion and the commit; a lasting refusal stored, the peek again before any other.
    /// Without a key, only `prepare` and `write` run.
    pub async fn run<R, T>(
        self,
        prepare: impl AsyncFnOnce() -> Result<Prepared<R>, Error>,
        write: impl AsyncFnOnce(&mut Tx, R, &mut Completion) -> Result<T, Error>,
    ) -> Result<T, Error>
    where
        T: Serialize + DeserializeOwned,
    {
        let store = self.store;
        let peek_then_prepare = async |peek: &Peek<'_>| {
            if let Some(verdict) = peek.read(store).await? {
                return Ok(Peeked::Stored(verdict));
            }
            Ok(Peeked::Prepared(prepare().await?))
        };
        self.run_peeking(peek_then_prepare, write).await
    }

    /// [`Keyed::run`] for an operation whose first read looks its key up with its own rows,
    /// saving the peek's round trip: `prepare` reads the key ([`Peek::key`]) and, before any
    /// other work, returns [`Peek::verdict`] on what it found when that is an answer
    /// ([`Peeked::Stored`]). A call that stops before that read (a refusal) meets the key
    /// again on its way out: a refusal is answered only after the key is peeked at.
    pub async fn run_peeking<R, T>(
        self,
        prepare: impl AsyncFnOnce(&Peek<'_>) -> Result<Peeked<R>, Error>,
        write: impl AsyncFnOnce(&mut Tx, R, &mut Completion) -> Result<T, Error>,
    ) -> Result<T, Error>
    where
        T: Serialize + DeserializeOwned,
    {
        let peek = Peek::new(self.caller, self.clock.now(), self.fingerprint)?;
        let prepared = match prepare(&peek).await {
            Ok(Peeked::Stored(Ok(answer))) => return replay(self.caller, answer),
            Ok(Peeked::Stored(Err(refusal))) => return Err(refusal),
            Ok(Peeked::Prepared(prepared)) => prepared,
            Err(error) => return self.refuse(error).await,
        };
        match self.claim_and_write(&peek, prepared, write).await {
            Ok(Written::Answer(answer)) => Ok(answer),
            Ok(Written::Replay(stored)) => replay(self.caller, stored),
            Err(error) if error.is_key_taken() => self.answer_taken().await,
            Err(error) => self.refuse(error).await,
        }
    }

    /// [`Keyed::run`] for an operation with nothing to prepare and a plain transaction.
    pub async fn run_in_transaction<T>(
        self,
        write: impl AsyncFnOnce(&mut Tx, &mut Completion) -> Result<T, Error>,
    ) -> Result<T, Error>
    where
        T: Serialize + DeserializeOwned,
    {
        let prepare = async || Ok(Prepared::plain(()));
        let write =
            async |tx: &mut Tx, (): (), completion: &mut Completion| write(tx, completion).await;
        self.run(prepare, write).await
    }

    /// Begins the transaction, claims the key (the body hashed once, by `peek`), writes,
    /// completes and commits.
    async fn claim_and_write<R, T: Serialize>(
        &self,
        peek: &Peek<'_>,
        prepared: Prepared<R>,
        write: impl AsyncFnOnce(&mut Tx, R, &mut Completion) -> Result<T, Error>,
    ) -> Result<Written<T>, Error> {
        let business_id = self.caller.principal.business_id.as_str();
        let mut tx = match &prepared.begin {
            Begin::Plain => self.store.begin().await?,
            Begin::Posting(businesses) => self.store.begin_posting(&strs(businesses)).await?,
            Begin::Payout {
                businesses,
                standing,
            } => {
                self.store
                    .begin_payout(&strs(businesses), standing.as_deref())
                    .await?
            }
        };
        let now = self.clock.now();
        let key = self.caller.idempotency_key.as_ref();
        let claim = match (key, peek.request_hash.as_deref()) {
            (Some(key), Some(hash)) if self.claims_last => Claim::Last(LastClaim {
                key: Key {
                    business_id: business_id.to_owned(),
                    operation: self.caller.operation,
                    key: key.clone(),
                },
                request_hash: hash.to_owned(),
                at: now,
            }),
            (Some(_), Some(hash)) => claim(&mut tx, now, self.caller, business_id, hash).await?,
            _ => Claim::NoKey,
        };
        if let Claim::Replay(stored) = claim {
            return Ok(Written::Replay(stored));
        }
        let mut completion = Completion { claim, done: false };
        let answer = write(&mut tx, prepared.value, &mut completion).await?;
        if !completion.done {
            complete(&mut tx, &completion.claim, &answer).await?;
        }
        // A payment's commit is not abandoned with the call (the stores finish it): if the
        // call's time runs out before its outcome is known, the call says so.
        let payment = tx.witnessed();
        self.caller.mark_committing(payment);
        let committed = tx.commit().await;
        self.caller.mark_committing(false);
        committed.or_internal()?;
        Ok(Written::Answer(answer))
    }

    /// The answer when the operation's batch found its key claimed by a transaction that
    /// committed first ([`Keyed::claiming_last`]; the operation's was rolled back): the key
    /// claimed in a transaction of its own, which waits for any transaction still holding it
    /// (SQLite's writer), gives the stored answer or refusal, or `27` for another body. A key
    /// that is new again (the first transaction was rolled back after all) is not kept, and the
    /// call is answered `28`: nothing of it was written, and its retry runs afresh.
    async fn answer_taken<T: DeserializeOwned>(&self) -> Result<T, Error> {
        let business_id = self.caller.principal.business_id.as_str();
        let now = self.clock.now();
        let hash = request_hash(self.fingerprint)?;
        let mut tx = self.store.begin().await?;
        match claim(&mut tx, now, self.caller, business_id, &hash).await? {
            Claim::Replay(stored) => replay(self.caller, stored),
            _ => Err(in_progress()),
        }
    }

    /// Answers `error`: a lasting refusal is stored under the key first (in a transaction of
    /// its own: the operation's rolled back), so its retries meet it again; before any other
    /// refusal the key is peeked at again, and a stored answer (the key's first send, committed
    /// meanwhile) is the answer instead. Failures are answered as they are.
    async fn refuse<T: DeserializeOwned>(&self, error: Error) -> Result<T, Error> {
        let business_id = self.caller.principal.business_id.as_str();
        if self.caller.idempotency_key.is_none() || !matches!(error, Error::Refused { .. }) {
            return Err(error);
        }
        let now = self.clock.now();
        if !self.lasting.contains(&error.code()) {
            return match peek(self.store, now, self.caller, self.fingerprint).await? {
                Some(answer) => replay(self.caller, answer),
                None => Err(error),
            };
        }
        let hash = request_hash(self.fingerprint)?;
        let mut tx = self.store.begin().await?;
        let claim = claim(&mut tx, now, self.caller, business_id, &hash).await?;
        if let Claim::Replay(stored) = claim {
            return replay(self.caller, stored);
        }
        complete_refusal(&mut tx, &claim, &error).await?;
        tx.commit().await.or_internal()?;
        Err(error)
    }
}

fn strs(businesses: &[String]) -> Vec<&str> {
    businesses.iter().map(String::as_str).collect()
}

/// What the transaction of [`Keyed::run`] ended with.
enum Written<T> {
    Answer(T),
    /// The key was answered by a concurrent request meanwhile.
    Replay(Value),
}

/// Deletes keys older than [`RETENTION_HOURS`]. Returns how many.
pub async fn purge_expired(store: &Store, now: DateTime<Utc>) -> Result<u64, Error> {
    let expired_before = cutoff(now);
    let _turn = store.write_turn().await;
    Ok(idempotency_keys::purge_expired(store, expired_before).await?)
}

/// SHA-256 of the body's canonical JSON (object keys sorted at every level), so the same
/// request hashes the same whatever order its fields were sent in.
pub fn request_hash<B: Serialize>(body: &B) -> Result<String, Error> {
    let value = serde_json::to_value(body).or_internal()?;
    Ok(sha256_hex(&canonical_json(&value)))
}

fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let fields: Vec<String> = entries
                .into_iter()
                .map(|(key, value)| {
                    format!("{}:{}", Value::String(key.clone()), canonical_json(value))
                })
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_ignores_key_order_but_not_values() {
        let a = json!({"b": 1, "a": {"y": [1, 2], "x": "s"}});
        let b = json!({"a": {"x": "s", "y": [1, 2]}, "b": 1});
        let c = json!({"a": {"x": "s", "y": [2, 1]}, "b": 1});
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(canonical_json(&a), r#"{"a":{"x":"s","y":[1,2]},"b":1}"#);
        assert_ne!(request_hash(&a).unwrap(), request_hash(&c).unwrap());
    }
}
