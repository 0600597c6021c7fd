//! Sessions: every token stands for a row of `sessions`, checked on every request by
//! [`authenticate`], so revocation is immediate.
//!
//! Checked without a read of the database: [`SessionCache`] keeps each session as it was read,
//! with the generation of what authentication reads at that moment (the stores'
//! `auth_generation`, moved by triggers in the transaction of any change that can refuse a live
//! token) and this process's own count of such changes ([`store::auth_epoch`]). A cached session
//! is used only while neither has moved since: a change made in this process takes effect at
//! once in it, and one made elsewhere (another process, the operator's command line, a
//! statement by hand) once this process has read the new generation, which it does every
//! [`GENERATION_POLL`].

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use generated_server::{Permission, ResponseCode, TokenFamily};

use crate::datastore::sessions::{self as stored, NewSession as StoredSession};
use crate::error::{Error, OrInternal};
use crate::kernel::clock::Clock;
use crate::kernel::config::Config;
use crate::kernel::store::{self, Store, Tx};
use crate::platform::business;
use crate::platform::permissions::{self, OWNER_ROLE_ID};
use crate::platform::principal::{MemberPrincipal, Principal};
use crate::platform::rate_limit::RateLimiter;
use crate::platform::team_views;
use crate::platform::tokens::{self, Claims, TokenKeys};

/// How often a process reads the generation of what authentication reads: a revocation made
/// elsewhere takes effect here within this (and the time a read takes).
pub const GENERATION_POLL: std::time::Duration = std::time::Duration::from_millis(200);

/// A cache whose last read of the generation is older than this is not used: sessions are read
/// from the database until the poll answers again (the database unreachable, the poll stuck).
const GENERATION_TRUSTED_FOR: std::time::Duration = std::time::Duration::from_millis(1_000);

/// After its connection is lost, the listener for generations is taken again at most this
/// often, each attempt given this long.
const LISTEN_AGAIN: std::time::Duration = std::time::Duration::from_secs(1);

/// Milliseconds since this process first asked (never 0).
fn process_millis() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_millis() as u64
        + 1
}

/// Sessions kept beyond this many are all forgotten at once (each is read again when next used).
const CACHED_SESSIONS_MAX: usize = 100_000;

/// The sessions this process authenticated, as they were read ([module docs](self)).
#[derive(Debug, Default)]
pub struct SessionCache {
    /// The newest generation this process has seen (read by the poll or with a session).
    generation: std::sync::atomic::AtomicI64,
    entries: std::sync::RwLock<std::collections::HashMap<String, Cached>>,
    polling: std::sync::atomic::AtomicBool,
    /// When the poll last read the generation ([`process_millis`]; 0: never).
    polled_at: std::sync::atomic::AtomicU64,
}

#[derive(Clone, Debug)]
struct Cached {
    epoch: u64,
    /// Kept with the generation it was read at (`session.session.generation`); shared with
    /// the requests it answers, not copied for each.
    session: Arc<Known>,
}

/// A session as read, with what every request it answers needs made once per read, not per
/// request: its member as the requests' principal carries them, with their permissions parsed
/// from their stored JSON (parsing was a twentieth of an authenticated read's time in the
/// server) and their profile as `get_profile` answers it, shared by every request.
#[derive(Debug)]
struct Known {
    session: stored::Authenticated,
    /// `None` without a member, or when the session names a member it was not read with.
    member: Option<Arc<MemberPrincipal>>,
}

impl Known {
    /// The profile is made at `now`: only a member who accepted their invitation signs in, so
    /// the invitation's status it shows does not age.
    fn of(mut session: stored::Authenticated, now: DateTime<Utc>) -> Result<Known, Error> {
        let profile = match session.profile.take() {
            Some(profile) => Some(team_views::profile_from(
                profile,
                session.credentials_usable,
                now,
            )?),
            None => None,
        };
        let member = match (&session.member_id, &session.member) {
            (Some(member_id), Some(member)) => {
                let codes = member.permission_codes.as_deref().unwrap_or("[]");
                Some(Arc::new(MemberPrincipal {
                    id: member_id.clone(),
                    email: member.email.clone(),
                    first_name: member.first_name.clone(),
                    last_name: member.last_name.clone(),
                    is_owner: member.role_id == OWNER_ROLE_ID,
                    permissions: permissions::parse_stored(codes)?,
                    role_id: member.role_id.clone(),
                    profile,
                }))
            }
            _ => None,
        };
        Ok(Known { session, member })
    }
}

impl SessionCache {
    /// The session `id` as kept, if neither generation has moved since it was read.
    fn get(&self, id: &str, epoch: u64) -> Option<Arc<Known>> {
        let polled_at = self.polled_at.load(std::sync::atomic::Ordering::SeqCst);
        if polled_at == 0
            || process_millis().saturating_sub(polled_at)
                > GENERATION_TRUSTED_FOR.as_millis() as u64
        {
            return None;
        }
        let generation = self.generation.load(std::sync::atomic::Ordering::SeqCst);
        let entries = self
            .entries
            .read()
            .unwrap_or_else(|poison| poison.into_inner());
        let cached = entries.get(id)?;
        (cached.session.session.generation == generation && cached.epoch == epoch)
            .then(|| cached.session.clone())
    }

    /// Keeps `session`, read after this process's count was `epoch`.
    fn keep(&self, id: &str, epoch: u64, session: &Arc<Known>) {
        self.saw(session.session.generation);
        let mut entries = self
            .entries
            .write()
            .unwrap_or_else(|poison| poison.into_inner());
        if entries.len() >= CACHED_SESSIONS_MAX {
            entries.clear();
        }
        entries.insert(
            id.to_owned(),
            Cached {
                epoch,
                session: session.clone(),
            },
        );
    }

    /// Records that the database's generation is at least `generation`.
    fn saw(&self, generation: i64) {
        self.generation
            .fetch_max(generation, std::sync::atomic::Ordering::SeqCst);
    }

    /// Starts reading the generation every [`GENERATION_POLL`] (once per cache), until the
    /// cache is dropped.
    fn poll(self: &std::sync::Arc<Self>, store: &Store) {
        // Every request asks: a read first, so that only the first one writes the flag.
        if self.polling.load(std::sync::atomic::Ordering::Relaxed)
            || self.polling.swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        let cache = std::sync::Arc::downgrade(self);
        let store = store.clone();
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(GENERATION_POLL);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            // PostgreSQL announces each generation at commit: seen at once, the poll only
            // covers what a lost connection dropped. A connection lost (a failover, a
            // restart) is replaced: the process listens again, on whichever server answers
            // now, trying at most every LISTEN_AGAIN (SQLite has nothing to listen to).
            let first = store.listen_auth().await;
            let listens = !matches!(first, Ok(None));
            let mut listener = first.ok().flatten();
            let mut listen_again_at = tokio::time::Instant::now() + LISTEN_AGAIN;
            loop {
                if listens && listener.is_none() && tokio::time::Instant::now() >= listen_again_at {
                    listen_again_at = tokio::time::Instant::now() + LISTEN_AGAIN;
                    listener = tokio::time::timeout(LISTEN_AGAIN, store.listen_auth())
                        .await
                        .ok()
                        .and_then(Result::ok)
                        .flatten();
                }
                if let Some(listening) = listener.as_mut() {
                    tokio::select! {
                        _ = ticks.tick() => {}
                        announced = listening.next() => {
                            match (announced, cache.upgrade()) {
                                (Ok(generation), Some(cache)) => cache.saw(generation),
                                (Ok(_), None) => return,
                                (Err(error), _) => {
                                    tracing::debug!(%error, "stopped listening for sessions' generations");
                                    listener = None;
                                }
                            }
                            continue;
                        }
                    }
                } else {
                    ticks.tick().await;
                }
                let Some(cache) = cache.upgrade() else {
                    return;
                };
                match stored::auth_generation(&store).await {
                    Ok(generation) => {
                        cache.saw(generation);
                        cache
                            .polled_at
                            .store(process_millis(), std::sync::atomic::Ordering::SeqCst);
                    }
                    // Past GENERATION_TRUSTED_FOR, sessions are read again until it answers.
                    Err(error) => tracing::debug!(%error, "cannot read the sessions' generation"),
                }
            }
        });
    }
}

fn unauthenticated() -> Error {
    Error::new(ResponseCode::Unauthenticated)
}

/// Resolves a bearer token to its principal: a valid signature of this server, the family the
/// operation wants, and a live session (not revoked, not expired) of the business the token
/// names, a business of this server's `environment`; for Dashboard tokens an active member,
/// whose role's permissions are loaded now, so a role change applies from the next request.
#[allow(clippy::too_many_arguments)]
pub async fn authenticate(
    store: &Store,
    cache: &std::sync::Arc<SessionCache>,
    config: &Config,
    tokens: &TokenKeys,
    rate_limiter: &RateLimiter,
    clock: &Clock,
    family: TokenFamily,
    token: &str,
) -> Result<Principal, Error> {
    let claims = tokens
        .verify(token, clock.now())
        .ok_or_else(unauthenticated)?;
    if claims.family() != Some(family) {
        return Err(unauthenticated().with_message(match family {
            TokenFamily::Dashboard => "This operation needs a Dashboard token (from login)",
            TokenFamily::Integration => {
                "This operation needs an integration token (from generate_token)"
            }
        }));
    }
    let now = clock.now();
    let known = session_of(store, cache, &claims.sid, now).await?;
    let Known { session, member } = &*known;

    let live = session.business_id == claims.bid
        && session.family == claims.fam
        && session.revoked_at.is_none()
        && session.expires_at > now;
    if !live {
        return Err(unauthenticated());
    }
    business::ensure_served(config.environment, &session.client_id)?;
    let member = match family {
        TokenFamily::Integration if !session.credentials_usable => {
            return Err(credentials_unusable())
        }
        TokenFamily::Integration => None,
        TokenFamily::Dashboard => {
            // A member deleted from under a session (never done today) or deactivated.
            let (Some(stored), Some(member)) = (&session.member, member) else {
                return Err(unauthenticated());
            };
            if !stored.is_active {
                return Err(unauthenticated());
            }
            keep_alive(store, config, &claims, session.expires_at, now).await?;
            Some(member.clone())
        }
    };
    let principal = Principal {
        business_id: session.business_id.clone(),
        session_id: claims.sid,
        family,
        business_active: session.business_status == "active",
        credential_issuer: match family {
            TokenFamily::Integration => session.secret_issued_by.clone(),
            TokenFamily::Dashboard => None,
        },
        member,
    };
    rate_limiter.spend(store, &principal).await?;
    Ok(principal)
}

/// The refusal of credentials whose issuer left or may no longer manage credentials (`41`):
/// a member who may must issue a new secret.
pub(crate) fn credentials_unusable() -> Error {
    unauthenticated().with_message(
        "These integration credentials no longer work: the member who issued them was \
         deactivated or may no longer manage credentials. A member with credential.manage must \
         regenerate the client secret (regenerate_secret)",
    )
}

/// A Dashboard session's idle time is moved on by each of its requests at most once a
/// [`IDLE_STEP`]: its row's end is written then, so a session in use costs one write a minute.
const IDLE_STEP: Duration = Duration::seconds(60);

/// Moves the end of a Dashboard session's idle time (its row's `expires_at`, now `ends`) to
/// `now` plus the idle timeout, within the token's own expiry, once it has come closer than
/// that by [`IDLE_STEP`]. The change is one of what authentication reads: cached copies of the
/// session, here and in other processes, are read again.
async fn keep_alive(
    store: &Store,
    config: &Config,
    claims: &Claims,
    ends: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    let idle = Duration::seconds(config.dashboard_idle_seconds as i64);
    let Some(token_ends) = DateTime::from_timestamp(claims.exp, 0) else {
        return Ok(());
    };
    let until = (now + idle).min(token_ends);
    if until - ends < IDLE_STEP {
        return Ok(());
    }
    // Boxed: the rare path (docs/decisions.md, "Cold paths boxed").
    Box::pin(async {
        let mut tx = store.begin().await?;
        if stored::extend_idle(&mut tx, &claims.sid, now, until).await? {
            tx.touch_auth();
        }
        tx.commit().await.or_internal()
    })
    .await
}

/// Session `id`, from the cache while it holds, read (and kept) otherwise. A cached session
/// whose end has passed is read again: another process may have moved it on
/// ([`keep_alive`]).
async fn session_of(
    store: &Store,
    cache: &std::sync::Arc<SessionCache>,
    id: &str,
    now: DateTime<Utc>,
) -> Result<Arc<Known>, Error> {
    cache.poll(store);
    // This process's count first: a change committed here after it makes what is read now
    // stale, whichever finishes first.
    let epoch = store::auth_epoch();
    if let Some(session) = cache.get(id, epoch) {
        if session.session.expires_at > now || session.session.revoked_at.is_some() {
            return Ok(session);
        }
    }
    // Boxed: the read is the rare path, and its future, kept inline, would make every
    // request's pipeline several kilobytes larger, copied at each await that moves it
    // (docs/decisions.md, "Cold paths boxed").
    let session = Box::pin(stored::find_for_token(store, id))
        .await?
        .ok_or_else(unauthenticated)?;
    let known = Arc::new(Known::of(session, now)?);
    cache.keep(id, epoch, &known);
    Ok(known)
}

pub fn authorize(principal: &Principal, permission: Permission) -> Result<(), Error> {
    match &principal.member {
        Some(member) if permission.implicit() || member.permissions.contains(&permission) => Ok(()),
        Some(_) => Err(
            Error::new(ResponseCode::PermissionDenied).with_message(format!(
                "Permission denied: your role lacks {}",
                permission.as_str()
            )),
        ),
        // Integration tokens act for the whole business; the router never asks for them.
        None => Ok(()),
    }
}

/// A session to open: whose, of which family, from where, for how long.
pub struct NewSession<'a> {
    pub business_id: &'a str,
    pub family: TokenFamily,
    /// The member behind a Dashboard session; `None` for integration sessions.
    pub member_id: Option<&'a str>,
    pub ip_address: &'a str,
    pub ttl_seconds: u64,
    /// With an idle timeout, the session's row ends this long after now, and every request
    /// moves its end on ([`authenticate`]), within `ttl_seconds`, the token's own expiry.
    pub idle_seconds: Option<u64>,
}

/// Creates a session row starting at `now` and signs its token. Returns
/// `(token, expires_in_seconds)`.
pub async fn open_session(
    tx: &mut Tx,
    tokens: &TokenKeys,
    now: DateTime<Utc>,
    new: &NewSession<'_>,
) -> Result<(String, u64), Error> {
    let expires_at = now + Duration::seconds(new.ttl_seconds as i64);
    let session_id = store::new_id();
    let idle_ends = new
        .idle_seconds
        .map(|idle| now + Duration::seconds(idle.min(new.ttl_seconds) as i64));
    let row = StoredSession {
        id: &session_id,
        business_id: new.business_id,
        family: tokens::family_str(new.family),
        member_id: new.member_id,
        ip_address: new.ip_address,
        created_at: now,
        expires_at: idle_ends.unwrap_or(expires_at),
    };
    stored::insert(tx, &row).await?;
    let token = tokens.sign(&Claims {
        sid: session_id,
        fam: tokens::family_str(new.family).to_owned(),
        bid: new.business_id.to_owned(),
        iat: now.timestamp(),
        exp: expires_at.timestamp(),
    });
    Ok((token, new.ttl_seconds))
}

/// `expires_in` of a token grant: whole seconds, at least 1.
pub fn expires_in(seconds: u64) -> std::num::NonZeroU64 {
    std::num::NonZeroU64::new(seconds.max(1)).expect("at least 1")
}

/// Revokes every live session of a member at `now`, inside `tx`.
pub async fn revoke_member_sessions(
    tx: &mut Tx,
    member_id: &str,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    Ok(stored::revoke_all_of_member(tx, member_id, now).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    use tokio::net::{TcpListener, TcpStream};

    /// PostgreSQL behind a failover, as Kobo sees one through HAProxy: [`Failover::cut`] cuts
    /// every connection and, for a while, closes each new one at once (no primary yet), then
    /// passes them on again (to the new primary: the same server here).
    struct Failover {
        address: std::net::SocketAddr,
        started: Instant,
        /// Connections made before the current epoch are cut.
        epoch: Arc<AtomicU64>,
        /// New connections are closed at once until this many milliseconds after `started`.
        refuse_until_ms: Arc<AtomicU64>,
    }

    impl Failover {
        async fn start() -> Failover {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let failover = Failover {
                address: listener.local_addr().unwrap(),
                started: Instant::now(),
                epoch: Arc::default(),
                refuse_until_ms: Arc::default(),
            };
            let (started, epoch) = (failover.started, failover.epoch.clone());
            let refuse_until_ms = failover.refuse_until_ms.clone();
            tokio::spawn(async move {
                while let Ok((mut client, _)) = listener.accept().await {
                    let now = started.elapsed().as_millis() as u64;
                    if now < refuse_until_ms.load(Ordering::SeqCst) {
                        continue;
                    }
                    let Ok(mut server) = TcpStream::connect("127.0.0.1:5432").await else {
                        continue;
                    };
                    let epoch = epoch.clone();
                    let born = epoch.load(Ordering::SeqCst);
                    tokio::spawn(async move {
                        let cut = async {
                            while epoch.load(Ordering::SeqCst) == born {
                                tokio::time::sleep(Duration::from_millis(20)).await;
                            }
                        };
                        tokio::select! {
                            _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                            _ = cut => {}
                        }
                    });
                }
            });
            failover
        }

        /// Every connection cut now; new ones closed at once for `refusing`.
        fn cut(&self, refusing: Duration) {
            let until = self.started.elapsed() + refusing;
            self.refuse_until_ms
                .store(until.as_millis() as u64, Ordering::SeqCst);
            self.epoch.fetch_add(1, Ordering::SeqCst);
        }

        /// `url` (a PostgreSQL URL on 127.0.0.1:5432) through this failover.
        fn url(&self, url: &str) -> String {
            let (before, after) = url.split_once('@').expect("a URL with a user");
            let (_, database) = after.split_once('/').expect("a URL with a database");
            format!("{before}@{}/{database}?sslmode=disable", self.address)
        }
    }

    /// The backends of the kit's database listening for generations (a listener's last
    /// statement is its `LISTEN`).
    async fn listeners(pool: &sqlx::PgPool) -> Vec<i32> {
        // The simple protocol (nothing prepared), as the other tests of the pool.
        sqlx::raw_sql(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() \
             AND query ILIKE 'LISTEN%' ORDER BY pid",
        )
        .fetch_all(pool)
        .await
        .unwrap()
        .iter()
        .map(|row| sqlx::Row::get(row, 0))
        .collect()
    }

    /// Waits (30 s at most: the process tries again every second, but a loaded CI machine's
    /// server can be slow to take a connection) until backends listen that are none of `not`
    /// (the kit's own process may listen too, directly); those.
    async fn until_listening(pool: &sqlx::PgPool, not: &[i32]) -> Vec<i32> {
        for _ in 0..300 {
            let new: Vec<i32> = listeners(pool)
                .await
                .into_iter()
                .filter(|pid| !not.contains(pid))
                .collect();
            if !new.is_empty() {
                return new;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let connections: Vec<(String, i64)> = sqlx::query_as(
            "SELECT coalesce(state, '?') || ' ' || left(query, 40), count(*) \
             FROM pg_stat_activity GROUP BY 1 ORDER BY 2 DESC LIMIT 8",
        )
        .fetch_all(pool)
        .await
        .unwrap_or_default();
        panic!(
            "no new listener after 30 s (the ones before: {not:?}; the server's connections: \
             {connections:?})"
        );
    }

    /// A failover cuts the connection that listens for revocations (`kobo_auth`), and for a
    /// few seconds no server takes a new one: the process listens again once the new primary
    /// answers, rather than falling back to the poll alone for the rest of its life (sqlx's
    /// listener reconnects once, at once, and gives up when that fails).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_revocations_listener_listens_again_after_a_failover() {
        let kit = crate::testkit::TestKit::postgres().await;
        let direct = kit.store.postgres_pool().expect("a PostgreSQL kit").clone();
        let failover = Failover::start().await;
        let store = Store::connect(&failover.url(kit.url())).await.unwrap();
        let cache = std::sync::Arc::new(SessionCache::default());
        cache.poll(&store);
        let before = listeners(&direct).await;
        let first = until_listening(&direct, &before).await;
        assert_eq!(first.len(), 1, "{first:?}");
        failover.cut(Duration::from_millis(1_500));
        let again = until_listening(&direct, &[before, first].concat()).await;
        assert_eq!(again.len(), 1, "{again:?}");
        drop(cache);
    }
}
