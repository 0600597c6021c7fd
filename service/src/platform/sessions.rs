//! Sessions: every token stands for a row of `sessions`, checked on every request by
//! [`authenticate`], so revocation is immediate.

use chrono::{DateTime, Duration, Utc};
use generated_server::{Permission, ResponseCode, TokenFamily};
use sqlx::Row;

use crate::error::{Error, OrInternal};
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
    let row = sqlx::query(
        "SELECT s.business_id, s.family, s.member_id, s.expires_at, s.revoked_at, \
           m.email, m.first_name, m.last_name, m.role_id, m.is_active, r.permission_codes, \
           b.status AS business_status, b.client_id, b.secret_issued_by \
         FROM sessions s \
         JOIN businesses b ON b.id = s.business_id \
         LEFT JOIN members m ON m.id = s.member_id AND m.business_id = s.business_id \
         LEFT JOIN roles r ON r.id = m.role_id \
         WHERE s.id = $1",
    )
    .bind(&claims.sid)
    .fetch_optional(store.pool())
    .await
    .or_internal()?
    .ok_or_else(unauthenticated)?;

    let business_id = store::text(&row, "business_id")?;
    let live = business_id == claims.bid
        && store::text(&row, "family")? == claims.fam
        && store::optional_text(&row, "revoked_at")?.is_none()
        && store::time(&row, "expires_at")? > clock.now();
    if !live {
        return Err(unauthenticated());
    }
    business::ensure_served(environment, &store::text(&row, "client_id")?)?;
    let member = match family {
        TokenFamily::Integration => None,
        TokenFamily::Dashboard => {
            let Some(member_id) = store::optional_text(&row, "member_id")? else {
                return Err(unauthenticated());
            };
            // A member deleted from under a session (never done today) or deactivated.
            let Some(email) = store::optional_text(&row, "email")? else {
                return Err(unauthenticated());
            };
            let active: Option<i64> = row.try_get("is_active").or_internal()?;
            if active != Some(1) {
                return Err(unauthenticated());
            }
            let role_id = store::text(&row, "role_id")?;
            let codes: Option<String> = row.try_get("permission_codes").or_internal()?;
            Some(MemberPrincipal {
                id: member_id,
                email,
                first_name: store::text(&row, "first_name")?,
                last_name: store::text(&row, "last_name")?,
                is_owner: role_id == OWNER_ROLE_ID,
                role_id,
                permissions: permissions::parse_stored(codes.as_deref().unwrap_or("[]"))?,
            })
        }
    };
    let principal = Principal {
        business_id,
        session_id: claims.sid,
        family,
        business_active: store::text(&row, "business_status")? == "active",
        credential_issuer: match family {
            TokenFamily::Integration => store::optional_text(&row, "secret_issued_by")?,
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
    sqlx::query(
        "INSERT INTO sessions (id, business_id, family, member_id, ip_address, created_at, \
           expires_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)",
    )
    .bind(&session_id)
    .bind(new.business_id)
    .bind(tokens::family_str(new.family))
    .bind(new.member_id)
    .bind(new.ip_address)
    .bind(store::timestamp(now))
    .bind(store::timestamp(expires_at))
    .execute(&mut **tx)
    .await
    .or_internal()?;
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
    sqlx::query("UPDATE sessions SET revoked_at = $2 WHERE member_id = $1 AND revoked_at IS NULL")
        .bind(member_id)
        .bind(store::timestamp(now))
        .execute(&mut **tx)
        .await
        .or_internal()?;
    Ok(())
}
