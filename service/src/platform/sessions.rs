//! Sessions: every token stands for a row of `sessions`, checked on every request by
//! [`authenticate`], so revocation is immediate.

use chrono::{DateTime, Duration, Utc};
use generated_server::{Permission, ResponseCode, TokenFamily};

use crate::datastore::sessions::{self as stored, NewSession as StoredSession};
use crate::error::Error;
use crate::kernel::clock::Clock;
use crate::kernel::config::Environment;
use crate::kernel::store::{self, Store, Tx};
use crate::platform::business;
use crate::platform::permissions::{self, OWNER_ROLE_ID};
use crate::platform::principal::{MemberPrincipal, Principal};
use crate::platform::rate_limit::RateLimiter;
use crate::platform::tokens::{self, Claims, TokenKeys};

fn unauthenticated() -> Error {
    Error::new(ResponseCode::Unauthenticated)
}

/// Resolves a bearer token to its principal: a valid signature of this server, the family the
/// operation wants, and a live session (not revoked, not expired) of the business the token
/// names, a business of this server's `environment`; for Dashboard tokens an active member,
/// whose role's permissions are loaded now, so a role change applies from the next request.
pub async fn authenticate(
    store: &Store,
    environment: Environment,
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
    let session = stored::find_for_token(store, &claims.sid)
        .await?
        .ok_or_else(unauthenticated)?;

    let live = session.business_id == claims.bid
        && session.family == claims.fam
        && session.revoked_at.is_none()
        && session.expires_at > clock.now();
    if !live {
        return Err(unauthenticated());
    }
    business::ensure_served(environment, &session.client_id)?;
    let member = match family {
        TokenFamily::Integration => None,
        TokenFamily::Dashboard => {
            let Some(member_id) = session.member_id else {
                return Err(unauthenticated());
            };
            // A member deleted from under a session (never done today) or deactivated.
            let Some(member) = session.member else {
                return Err(unauthenticated());
            };
            if !member.is_active {
                return Err(unauthenticated());
            }
            let codes = member.permission_codes.as_deref().unwrap_or("[]");
            Some(MemberPrincipal {
                id: member_id,
                email: member.email,
                first_name: member.first_name,
                last_name: member.last_name,
                is_owner: member.role_id == OWNER_ROLE_ID,
                permissions: permissions::parse_stored(codes)?,
                role_id: member.role_id,
            })
        }
    };
    let principal = Principal {
        business_id: session.business_id,
        session_id: claims.sid,
        family,
        business_active: session.business_status == "active",
        credential_issuer: match family {
            TokenFamily::Integration => session.secret_issued_by,
            TokenFamily::Dashboard => None,
        },
        member,
    };
    rate_limiter.spend(&principal)?;
    Ok(principal)
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
    let row = StoredSession {
        id: &session_id,
        business_id: new.business_id,
        family: tokens::family_str(new.family),
        member_id: new.member_id,
        ip_address: new.ip_address,
        created_at: now,
        expires_at,
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
