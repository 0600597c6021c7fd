//! Throttling of credential checks (`throttles` table), so that guessing a password, a client
//! secret or an invitation token is slow whatever the concurrency.
//!
//! A key names what is counted (`login:pair:<email>:<ip>`, `login:address:<ip>`, ...). Each
//! attempt **claims** its keys before the credential is looked at: one statement per key
//! counts the attempt and, when the count reaches the policy's free attempts, locks the key at
//! once, in the same transaction, so concurrent attempts queue on the row and find it locked.
//! However many requests arrive together, at most `free_attempts` of them per key are
//! evaluated. Then:
//!
//! - the credential was wrong: [`Attempt::failed`] sets each key's lock to the policy's length
//!   for that many failures (`ThrottlePolicy::lock_seconds`);
//! - it was right: [`Attempt::succeeded`] gives the claims back inside the operation's
//!   transaction (a key of this credential at this address is forgotten; a key shared with
//!   others, the address or the credential as a whole, loses just this attempt);
//! - the operation failed otherwise: the claim stays counted, which errs on the safe side.
//!
//! Claims are committed in their own transactions: the operation that fails rolls its own
//! back, and its attempts must still count.

use std::net::IpAddr;

use chrono::{DateTime, Duration, Utc};
use generated_server::ResponseCode;

use crate::datastore::throttles;
use crate::error::{Error, OrInternal};
use crate::kernel::config::{CredentialThrottle, ThrottlePolicy};
use crate::kernel::store::{Store, Tx};

/// What a successful attempt does to a key's count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnSuccess {
    /// The key is this credential at this address: a success forgets its failures.
    Forget,
    /// The key is shared (an address, a credential from every address): a success takes back
    /// only its own claim, so one person's success does not clear another's failures.
    GiveBack,
}

/// One throttled key and how it is counted.
#[derive(Clone, Debug)]
pub struct Limit {
    pub key: String,
    pub policy: ThrottlePolicy,
    pub on_success: OnSuccess,
}

impl Limit {
    pub fn new(key: String, policy: ThrottlePolicy, on_success: OnSuccess) -> Limit {
        Limit {
            key,
            policy,
            on_success,
        }
    }
}

/// The claims of one attempt, to settle with [`Attempt::failed`] or [`Attempt::succeeded`].
#[must_use = "an attempt is settled as failed or succeeded"]
#[derive(Debug)]
pub struct Attempt {
    /// Each key with the count its claim reached.
    claims: Vec<(Limit, i64)>,
}

/// Claims one attempt on every key at `now`. `29` with `Retry-After` when a key is locked; the
/// claims already taken on the other keys are then given back.
pub async fn claim(
    store: &Store,
    limits: Vec<Limit>,
    now: DateTime<Utc>,
) -> Result<Attempt, Error> {
    let mut claims = Vec::with_capacity(limits.len());
    for limit in limits {
        match claim_key(store, &limit, now).await? {
            Ok(count) => claims.push((limit, count)),
            Err(wait_seconds) => {
                Attempt { claims }.abandoned(store).await?;
                return Err(too_many(wait_seconds));
            }
        }
    }
    Ok(Attempt { claims })
}

/// Counts one attempt on `limit.key`, locking the key when the count reaches the free
/// attempts. `Ok(count)`, or `Err(seconds to wait)` when the key is locked at `now`.
async fn claim_key(
    store: &Store,
    limit: &Limit,
    now: DateTime<Utc>,
) -> Result<Result<i64, u64>, Error> {
    let policy = &limit.policy;
    let window_start = now - Duration::seconds(policy.window_seconds as i64);
    let mut tx = store.begin().await?;
    // One statement: on PostgreSQL it holds the row until this transaction ends, so a
    // concurrent claim waits and then sees the lock written below.
    let claimed = throttles::count_attempt(&mut tx, &limit.key, now, window_start).await?;
    let Some(count) = claimed else {
        let until = throttles::locked_until(&mut tx, &limit.key).await?;
        tx.rollback().await.or_internal()?;
        return Ok(Err(seconds_until(until.unwrap_or(now), now)));
    };
    let lock_seconds = policy.lock_seconds(count);
    if lock_seconds > 0 {
        lock(&mut tx, &limit.key, now, lock_seconds).await?;
    }
    tx.commit().await.or_internal()?;
    Ok(Ok(count))
}

impl Attempt {
    /// The credential was wrong: each key stays locked for its policy's length from `now`.
    pub async fn failed(self, store: &Store, now: DateTime<Utc>) -> Result<(), Error> {
        let mut tx = store.begin().await?;
        for (limit, count) in &self.claims {
            let lock_seconds = limit.policy.lock_seconds(*count);
            if lock_seconds > 0 {
                lock(&mut tx, &limit.key, now, lock_seconds).await?;
            }
        }
        tx.commit().await.or_internal()
    }

    /// The credential was right: inside the operation's `tx`, the failures of this credential
    /// at this address are forgotten and the claims on shared keys given back.
    pub async fn succeeded(self, tx: &mut Tx) -> Result<(), Error> {
        for (limit, _) in &self.claims {
            match limit.on_success {
                OnSuccess::Forget => clear(tx, &limit.key).await?,
                OnSuccess::GiveBack => give_back(tx, limit).await?,
            }
        }
        Ok(())
    }

    /// The credential could not be checked (no hashing capacity, another key locked): exactly
    /// this attempt's claims are given back at once, since nothing was tried and nothing is
    /// forgotten.
    pub async fn abandoned(self, store: &Store) -> Result<(), Error> {
        let mut tx = store.begin().await?;
        for (limit, _) in &self.claims {
            give_back(&mut tx, limit).await?;
        }
        tx.commit().await.or_internal()
    }
}

/// Takes one attempt off `limit.key`; below the free attempts the key is not locked any more,
/// and a key left with no attempt is deleted.
async fn give_back(tx: &mut Tx, limit: &Limit) -> Result<(), Error> {
    throttles::give_back(tx, &limit.key, limit.policy.free_attempts).await?;
    throttles::delete_if_spent(tx, &limit.key).await?;
    Ok(())
}

async fn lock(tx: &mut Tx, key: &str, now: DateTime<Utc>, seconds: u64) -> Result<(), Error> {
    let until = now + Duration::seconds(seconds as i64);
    Ok(throttles::lock(tx, key, until).await?)
}

/// Whole seconds from `now` to `until`, rounded up so that a client waiting exactly that long
/// gets through; at least 1.
fn seconds_until(until: DateTime<Utc>, now: DateTime<Utc>) -> u64 {
    let milliseconds = (until - now).num_milliseconds().max(0);
    (((milliseconds + 999) / 1000) as u64).max(1)
}

/// The `29` answer.
pub fn too_many(retry_after_seconds: u64) -> Error {
    Error::new(ResponseCode::TooManyRequests)
        .with_message(format!(
            "Too many attempts: try again in {retry_after_seconds} seconds"
        ))
        .with_retry_after_seconds(retry_after_seconds.max(1))
}

/// The keys of one attempt at `credential` (`login:<email>`, `token:<client_id>`) from
/// `address` under `policies`. The credential's own key, which slows every address, is left
/// out for an address the credential has succeeded from before: failures sent on purpose from
/// elsewhere do not keep its owner out.
pub async fn credential_limits(
    store: &Store,
    credential: &str,
    address: &str,
    policies: &CredentialThrottle,
) -> Result<Vec<Limit>, Error> {
    let mut limits = vec![
        Limit::new(
            format!("{credential}:address:{address}"),
            policies.per_address_and_credential,
            OnSuccess::Forget,
        ),
        Limit::new(
            format!("{}:address:{address}", kind_of(credential)),
            policies.per_address,
            OnSuccess::GiveBack,
        ),
    ];
    if !is_known_address(store, credential, address).await? {
        limits.push(Limit::new(
            credential.to_owned(),
            policies.per_credential,
            OnSuccess::GiveBack,
        ));
    }
    Ok(limits)
}

/// The network an address is throttled and remembered as: an IPv4 address itself, an IPv6
/// address its /64 (one subscriber's prefix: a client that rotates through the addresses of
/// its /64, as IPv6 privacy extensions do, is still one client). An IPv4-mapped IPv6 address
/// is its IPv4 address.
pub fn network_of(address: IpAddr) -> String {
    match address {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let [a, b, c, d, ..] = v6.segments();
                format!("{a:x}:{b:x}:{c:x}:{d:x}::/64")
            }
        },
    }
}

/// `login` of `login:<email>`.
fn kind_of(credential: &str) -> &str {
    credential.split(':').next().unwrap_or(credential)
}

async fn is_known_address(store: &Store, credential: &str, address: &str) -> Result<bool, Error> {
    Ok(throttles::is_known_address(store, credential, address).await?)
}

/// Remembers that `credential` succeeded from `address` at `now`, inside the caller's `tx`.
pub async fn remember_address(
    tx: &mut Tx,
    credential: &str,
    address: &str,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    Ok(throttles::remember_address(tx, credential, address, now).await?)
}

/// Forgets every attempt at `credential`, from every address (the demo's reset), inside `tx`.
pub async fn forget_credential(tx: &mut Tx, credential: &str) -> Result<(), Error> {
    let pair_prefix = format!("{credential}:address:");
    Ok(throttles::delete_credential(tx, credential, &pair_prefix).await?)
}

/// Forgets the attempts of `key`, inside the caller's transaction.
pub async fn clear(tx: &mut Tx, key: &str) -> Result<(), Error> {
    Ok(throttles::delete(tx, key).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_addresses_are_throttled_by_their_64_and_ipv4_ones_alone() {
        let network = |text: &str| network_of(text.parse().unwrap());
        assert_eq!(network("102.89.34.17"), "102.89.34.17");
        assert_eq!(
            network("2c0f:f5c0:1:2:aaaa:bbbb:cccc:dddd"),
            "2c0f:f5c0:1:2::/64"
        );
        assert_eq!(network("2c0f:f5c0:1:2::1"), "2c0f:f5c0:1:2::/64");
        assert_ne!(network("2c0f:f5c0:1:3::1"), "2c0f:f5c0:1:2::/64");
        assert_eq!(network("::ffff:102.89.34.17"), "102.89.34.17");
    }

    #[test]
    fn waits_round_up_to_whole_seconds() {
        let now: DateTime<Utc> = "2026-11-02T09:20:00Z".parse().unwrap();
        assert_eq!(seconds_until(now + Duration::milliseconds(1), now), 1);
        assert_eq!(seconds_until(now + Duration::seconds(30), now), 30);
        assert_eq!(seconds_until(now + Duration::milliseconds(30_001), now), 31);
        assert_eq!(seconds_until(now - Duration::seconds(5), now), 1);
    }
}
