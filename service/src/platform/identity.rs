//! Identity: tokens of both families, login, logout, passwords, OTPs, the integration secret
//! and the caller's profile.
//!
//! Failed credential checks are throttled progressively (`throttle`), and every failure of
//! `login` looks the same (`41`). Sessions themselves are `sessions`'.

use chrono::{DateTime, Duration, Utc};
use generated_server::models::{self, AuditAction};
use generated_server::{Operation, ResponseCode, TokenFamily};

use crate::datastore::members::{self, Membership};
use crate::datastore::otps::{self, NewOtp};
use crate::datastore::{businesses, roles, sessions as stored_sessions};
use crate::error::{Error, OrInternal};
use crate::kernel::clock::Clock;
use crate::kernel::config::{Config, Environment};
use crate::kernel::secrets::{self, Passwords};
use crate::kernel::store::{self, Store, Tx};
use crate::outbox::{self, Notification};
use crate::platform::business;
use crate::platform::caller::Caller;
use crate::platform::context::Platform;
use crate::platform::logs::{self, AuditEntry};
use crate::platform::permissions;
use crate::platform::principal::member_of;
use crate::platform::sessions::{self, expires_in, NewSession};
use crate::platform::team_views;
use crate::platform::throttle::{self, Limit, OnSuccess};
use crate::platform::tokens::TokenKeys;

fn unauthenticated() -> Error {
    Error::new(ResponseCode::Unauthenticated)
}

/// `generate_token` is public, so the router's `on_response` has no principal to log it under:
/// the operation records its own activity-log entries (outcome given as a code and message).
fn token_activity(
    caller: &Caller<()>,
    business_id: &str,
    code: ResponseCode,
    message: &str,
) -> logs::Activity {
    logs::Activity {
        business_id: business_id.to_owned(),
        endpoint: Operation::GenerateToken.path(),
        http_status: code.http_status(),
        success: code == ResponseCode::Success,
        message: message.to_owned(),
        ip_address: caller.client_ip.to_string(),
        request_id: caller.request_id.clone(),
    }
}

pub async fn generate_token(
    platform: &Platform,
    caller: &Caller<()>,
    body: models::GenerateTokenRequest,
) -> Result<models::TokenGrant, Error> {
    let Platform {
        store,
        config,
        tokens,
        clock,
        ..
    } = platform;
    let client_id = body.client_id.as_str();
    let credential = format!("token:{client_id}");
    let address = throttle::network_of(caller.client_ip);
    let now = clock.now();
    let limits = throttle::credential_limits(store, &credential, &address, &config.token).await?;
    let attempt = throttle::claim(store, limits, now).await?;

    let credentials = businesses::credentials_of_client(store, client_id).await?;
    // A server serves the businesses of its own environment only; the client_id says which.
    if credentials.is_some() {
        if let Err(refused) = business::ensure_served(config.environment, client_id) {
            attempt.abandoned(store).await?;
            return Err(refused);
        }
    }
    let presented = secrets::sha256_hex(body.client_secret.as_str());
    let business_id = match credentials {
        Some(known) if secrets::constant_time_eq(&known.client_secret_hash, &presented) => {
            if !known.usable {
                attempt.abandoned(store).await?;
                return Err(sessions::credentials_unusable());
            }
            known.id
        }
        known => {
            let known_business = known.map(|known| known.id);
            attempt.failed(store, now).await?;
            let refused = unauthenticated().with_message("Invalid client_id or client_secret");
            // A wrong secret for a real client is that business's activity; an unknown
            // client_id has no business to file it under.
            if let Some(business_id) = known_business {
                let activity =
                    token_activity(caller, &business_id, refused.code(), &refused.message());
                let _turn = store.write_turn().await;
                logs::record_activity(store, now, &activity).await?;
            }
            return Err(refused);
        }
    };

    let mut tx = store.begin().await?;
    attempt.succeeded(&mut tx).await?;
    throttle::remember_address(&mut tx, &credential, &address, now).await?;
    let ip_address = caller.client_ip.to_string();
    let session = NewSession {
        business_id: &business_id,
        family: TokenFamily::Integration,
        member_id: None,
        ip_address: &ip_address,
        ttl_seconds: config.integration_token_ttl_seconds,
        idle_seconds: None,
    };
    let (token, ttl) = sessions::open_session(&mut tx, tokens, now, &session).await?;
    let granted = token_activity(
        caller,
        &business_id,
        ResponseCode::Success,
        Operation::GenerateToken.success_message(),
    );
    logs::record_activity(&mut tx, now, &granted).await?;
    tx.commit().await.or_internal()?;
    Ok(models::TokenGrant {
        access_token: token,
        expires_in: expires_in(ttl),
        token_type: models::TokenType::Bearer,
    })
}

/// The credential a login attempt is throttled under (see `throttle::credential_limits`).
pub fn login_credential(email: &str) -> String {
    format!("login:{}", email.to_lowercase())
}

/// The memberships of one email a login looks at, at most.
const MEMBERSHIPS_MAX: usize = 20;

/// `login`: the email's memberships in this server's businesses, each password checked (at
/// least one hash always, so the time taken does not tell whether the email exists), then the
/// one usable membership's session. Every failure looks the same (`41`); several memberships
/// that the password opens ask for `business_id` (`01`).
pub async fn login(
    platform: &Platform,
    caller: &Caller<()>,
    body: models::LoginRequest,
) -> Result<models::LoginResult, Error> {
    let Platform {
        store,
        config,
        tokens,
        passwords,
        clock,
        ..
    } = platform;
    let email = body.email.trim().to_lowercase();
    let credential = login_credential(&email);
    let address = throttle::network_of(caller.client_ip);
    let now = clock.now();
    let limits = throttle::credential_limits(store, &credential, &address, &config.login).await?;
    let attempt = throttle::claim(store, limits, now).await?;
    let candidates = memberships(store, config, &email, body.business_id).await?;
    let usable = match usable_memberships(passwords, &candidates, &body.password).await {
        Ok(usable) => usable,
        Err(busy) => {
            attempt.abandoned(store).await?;
            return Err(busy);
        }
    };
    let member = match usable.as_slice() {
        [member] => *member,
        [] => {
            attempt.failed(store, now).await?;
            for membership in &candidates {
                audit_failed_login(store, now, caller, membership, &email).await?;
            }
            return Err(unauthenticated().with_message("Invalid email or password"));
        }
        _ => {
            attempt.abandoned(store).await?;
            return Err(invalid(
                "`business_id`: this email and password open several businesses: say which",
            ));
        }
    };
    let mut tx = store.begin().await?;
    attempt.succeeded(&mut tx).await?;
    throttle::remember_address(&mut tx, &credential, &address, now).await?;
    let signed_in = sign_in(&mut tx, config, tokens, caller, member, &email, now).await?;
    tx.commit().await.or_internal()?;
    Ok(signed_in)
}

/// The memberships of `email` in the businesses this server serves (its environment's), of
/// one business when `business_id` says which; at most [`MEMBERSHIPS_MAX`].
async fn memberships(
    store: &Store,
    config: &Config,
    email: &str,
    business_id: Option<uuid::Uuid>,
) -> Result<Vec<Membership>, Error> {
    let prefix = business::client_id_prefix(config.environment);
    let business_id = business_id.map(|id| id.to_string());
    let found = members::memberships(
        store,
        email,
        &prefix,
        business_id.as_deref(),
        MEMBERSHIPS_MAX,
    )
    .await?;
    Ok(found)
}

/// The memberships whose password `password` is, active and accepted. At least one hash is
/// always checked (a dummy one when there is no membership). `29` when hashing is busy.
async fn usable_memberships<'r>(
    passwords: &Passwords,
    candidates: &'r [Membership],
    password: &str,
) -> Result<Vec<&'r Membership>, Error> {
    let mut hashes: Vec<Option<&str>> = candidates
        .iter()
        .map(|membership| membership.password_hash.as_deref())
        .collect();
    if hashes.is_empty() {
        hashes.push(None);
    }
    let mut usable = Vec::new();
    for (n, stored) in hashes.iter().enumerate() {
        let matches = passwords.verify(password, *stored).await?;
        let Some(membership) = candidates.get(n).filter(|_| matches) else {
            continue;
        };
        if membership.is_active && membership.invitation_status == "accepted" {
            usable.push(membership);
        }
    }
    Ok(usable)
}

/// The member's session, in `tx`: the last login, the session and its token, the audit entry,
/// and the answer with the member and their permissions.
async fn sign_in(
    tx: &mut Tx,
    config: &Config,
    tokens: &TokenKeys,
    caller: &Caller<()>,
    member: &Membership,
    email: &str,
    now: DateTime<Utc>,
) -> Result<models::LoginResult, Error> {
    let member_id = member.id.clone();
    let business_id = member.business_id.clone();
    members::record_login(tx, &member_id, now).await?;
    let ip_address = caller.client_ip.to_string();
    let session = NewSession {
        business_id: &business_id,
        family: TokenFamily::Dashboard,
        member_id: Some(&member_id),
        ip_address: &ip_address,
        ttl_seconds: config.dashboard_token_ttl_seconds,
        idle_seconds: Some(config.dashboard_idle_seconds),
    };
    let (token, ttl) = sessions::open_session(tx, tokens, now, &session).await?;
    let view = team_views::member_view(&mut *tx, &business_id, &member_id, now)
        .await?
        .ok_or_else(|| Error::internal("the member vanished during login"))?;
    let permission_codes = role_codes(tx, &view.user_role_id.to_string()).await?;
    let entry = AuditEntry {
        business_id: business_id.clone(),
        action: AuditAction::Login,
        user_name: display_name(&view.first_name, &view.last_name, email),
        user_id: Some(member_id.clone()),
        ip_address,
        response_code: 200,
        target_type: None,
        target_id: None,
        request_id: caller.request_id.clone(),
    };
    logs::audit(tx, now, entry).await?;
    Ok(models::LoginResult {
        access_token: token,
        expires_in: expires_in(ttl),
        idle_expires_in: expires_in(config.dashboard_idle_seconds.min(ttl)),
        member: view,
        permission_codes,
        token_type: models::TokenType::Bearer,
    })
}

async fn role_codes(tx: &mut Tx, role_id: &str) -> Result<Vec<String>, Error> {
    let codes = roles::permission_codes_of(tx, role_id).await?;
    Ok(permissions::codes_in_catalog_order(
        &permissions::parse_stored(&codes)?,
    ))
}

/// A failed login of an existing member is an audit-log entry (401), in its own transaction.
async fn audit_failed_login(
    store: &Store,
    now: chrono::DateTime<chrono::Utc>,
    caller: &Caller<()>,
    member: &Membership,
    email: &str,
) -> Result<(), Error> {
    let mut tx = store.begin().await?;
    logs::audit(
        &mut tx,
        now,
        AuditEntry {
            business_id: member.business_id.clone(),
            action: AuditAction::Login,
            user_name: display_name(&member.first_name, &member.last_name, email),
            user_id: Some(member.id.clone()),
            ip_address: caller.client_ip.to_string(),
            response_code: ResponseCode::Unauthenticated.http_status(),
            target_type: None,
            target_id: None,
            request_id: caller.request_id.clone(),
        },
    )
    .await?;
    tx.commit().await.or_internal()
}

fn display_name(first_name: &str, last_name: &str, email: &str) -> String {
    format!("{first_name} {last_name} <{email}>")
}

pub async fn logout(
    platform: &Platform,
    caller: &Caller,
    _body: models::EmptyObject,
) -> Result<(), Error> {
    let Platform { store, clock, .. } = platform;
    let now = clock.now();
    let mut tx = store.begin().await?;
    let principal = &caller.principal;
    stored_sessions::revoke(&mut tx, &principal.session_id, &principal.business_id, now).await?;
    logs::audit(&mut tx, now, AuditEntry::by(caller, AuditAction::Logout)).await?;
    tx.commit().await.or_internal()
}

pub async fn change_password(
    platform: &Platform,
    caller: &Caller,
    body: models::ChangePasswordRequest,
) -> Result<(), Error> {
    let Platform {
        store,
        config,
        passwords,
        clock,
        ..
    } = platform;
    let member = member_of(&caller.principal)?;
    let new_password = body.new_password.as_str();
    secrets::check_password_rules("new_password", new_password)?;
    if body.confirm_password.as_str() != new_password {
        return Err(invalid("`confirm_password`: must equal new_password"));
    }
    let now = clock.now();
    let limit = Limit::new(
        format!("password:member:{}", member.id),
        config.password_change_per_member,
        OnSuccess::Forget,
    );
    let attempt = throttle::claim(store, vec![limit], now).await?;
    let stored = members::password_hash(store, &member.id, &caller.principal.business_id).await?;
    let old_password_ok = match passwords
        .verify(body.old_password.as_str(), stored.as_deref())
        .await
    {
        Ok(matches) => matches,
        Err(busy) => {
            attempt.abandoned(store).await?;
            return Err(busy.into());
        }
    };
    let Some(stored) = stored.filter(|_| old_password_ok) else {
        attempt.failed(store, now).await?;
        return Err(Error::new(ResponseCode::OldPasswordIncorrect));
    };
    if body.old_password.as_str() == new_password {
        return Err(invalid(
            "`new_password`: must differ from the current password",
        ));
    }
    let hash = passwords.hash(new_password).await?;

    let mut tx = store.begin().await?;
    // Compare-and-set on the hash that was verified: of concurrent changes only the first
    // takes effect, and the others learn that their old password is no longer the current one.
    let business_id = &caller.principal.business_id;
    let changed =
        members::change_password(&mut tx, &member.id, business_id, &stored, &hash, now).await?;
    if !changed {
        return Err(Error::new(ResponseCode::OldPasswordIncorrect)
            .with_message("Old password is incorrect: the password was changed meanwhile"));
    }
    sessions::revoke_member_sessions(&mut tx, &member.id, now).await?;
    attempt.succeeded(&mut tx).await?;
    logs::audit(
        &mut tx,
        now,
        AuditEntry::by(caller, AuditAction::ChangePassword),
    )
    .await?;
    tx.commit().await.or_internal()
}

pub async fn generate_otp(
    platform: &Platform,
    caller: &Caller,
    _body: models::EmptyObject,
) -> Result<models::OtpDelivery, Error> {
    issue_otp(platform, caller, None).await
}

/// What an OTP is bound to: only a check that names the same `key` accepts it
/// ([`check_bound_otp`]); its email says what it authorises (`purpose`).
pub struct OtpBinding {
    pub key: String,
    pub purpose: String,
}

/// The hash an OTP is kept as: of its id and code and, for a bound OTP, its binding's key, so
/// that a code checked for anything else than what it was issued for does not match.
fn otp_hash(otp_id: &str, code: &str, binding: Option<&str>) -> String {
    match binding {
        None => secrets::otp_hash(otp_id, code),
        Some(key) => secrets::otp_hash(otp_id, &format!("{code}@{key}")),
    }
}

/// Issues the member's OTP (replacing the previous one), bound to `binding` if given, and
/// sends it by email (`generate_otp`'s limits).
pub async fn issue_otp(
    platform: &Platform,
    caller: &Caller,
    binding: Option<&OtpBinding>,
) -> Result<models::OtpDelivery, Error> {
    let Platform {
        store,
        config,
        clock,
        ..
    } = platform;
    let member = member_of(&caller.principal)?;
    let policy = config.otp;
    let now = clock.now();
    let mut tx = store.begin().await?;
    business::lock_business(&mut tx, &caller.principal.business_id).await?;

    let window_start = now - Duration::seconds(policy.issue_window_seconds as i64);
    let issued = otps::issued_since(&mut tx, &member.id, window_start).await?;
    if issued.count >= policy.issue_limit {
        let oldest = issued.oldest.unwrap_or(now);
        let free_at = oldest + Duration::seconds(policy.issue_window_seconds as i64);
        let wait = ((free_at - now).num_milliseconds() + 999) / 1000;
        return Err(throttle::too_many(wait.max(1) as u64).with_message(format!(
            "At most {} OTPs per {} minutes: try again in {} seconds",
            policy.issue_limit,
            policy.issue_window_seconds / 60,
            wait.max(1)
        )));
    }

    // A new OTP replaces the previous one.
    otps::use_up_all_of_member(&mut tx, &member.id, now).await?;
    let otp_id = store::new_id();
    let code = secrets::otp_code();
    let code_hash = otp_hash(&otp_id, &code, binding.map(|b| b.key.as_str()));
    let otp = NewOtp {
        id: &otp_id,
        business_id: &caller.principal.business_id,
        member_id: &member.id,
        code_hash: &code_hash,
        expires_at: now + Duration::seconds(policy.ttl_seconds as i64),
        created_at: now,
    };
    otps::insert(&mut tx, &otp).await?;
    outbox::enqueue(
        &mut tx,
        now,
        &Notification {
            business_id: Some(caller.principal.business_id.clone()),
            channel: "email",
            recipient: member.email.clone(),
            subject: "Your Kobo one-time password".into(),
            body: format!(
                "Hello {},\n\nYour one-time password is {code}.{} It expires in {} minutes and \
                 works once. Kobo will never ask you for it by phone or email.\n\nIf you did not \
                 ask for it, change your password.\n",
                member.first_name,
                binding.map_or(String::new(), |b| format!(" It can only {}.", b.purpose)),
                policy.ttl_seconds / 60
            ),
        },
    )
    .await?;
    tx.commit().await.or_internal()?;
    let sandbox = config.environment == Environment::Sandbox;
    Ok(models::OtpDelivery {
        channel: models::OtpDeliveryChannel::Email,
        destination: secrets::mask_email(&member.email),
        expires_in: expires_in(policy.ttl_seconds),
        otp: if sandbox {
            Some(code.parse().or_internal()?)
        } else {
            None
        },
    })
}

/// Checks `code` against the live OTP of `member_id`, before the operation's transaction
/// begins, and spends it: an OTP authorises one attempt, whatever the operation's outcome.
/// Each check first claims one of the OTP's attempts in a statement of its own, so that
/// however many checks run at once, at most the policy's attempts compare a code:
///
/// - right code: the OTP is used up in the same transaction, by a conditional update that
///   only one of several concurrent checks of the same code wins (the others get `45`);
/// - wrong code: `45`, and the attempt stays counted; the last attempt spends the OTP;
/// - no live OTP (none, used, replaced by a newer one, expired, out of attempts): `45`.
///
/// Spent at the check and not with the operation's writes: an OTP that a refused transfer
/// left usable authorised the next transfer too (issue 28, item 7).
pub async fn check_otp(
    store: &Store,
    config: &Config,
    clock: &Clock,
    member_id: &str,
    code: &str,
) -> Result<(), Error> {
    check_bound_otp(store, config, clock, member_id, code, None).await
}

/// [`check_otp`] for what `binding` names: only an OTP issued bound to the same key matches
/// (and an unbound check refuses a bound OTP), so a code for one batch authorises no other.
pub async fn check_bound_otp(
    store: &Store,
    config: &Config,
    clock: &Clock,
    member_id: &str,
    code: &str,
    binding: Option<&str>,
) -> Result<(), Error> {
    let invalid_otp = || Error::new(ResponseCode::InvalidOtp);
    let max_attempts = config.otp.max_attempts;
    let now = clock.now();
    // Every check claims one of the member's wrong codes first (`29` while they are spent); a
    // right code gives its claim back.
    let limit = Limit::new(
        format!("otp:wrong:{member_id}"),
        config.otp.wrong_codes,
        OnSuccess::GiveBack,
    );
    let attempt = throttle::claim(store, vec![limit], now).await?;
    let mut tx = store.begin().await?;
    let claimed = otps::count_attempt(&mut tx, member_id, now, max_attempts).await?;
    let Some(otp) = claimed else {
        tx.rollback().await.or_internal()?;
        attempt.failed(store, now).await?;
        return Err(invalid_otp());
    };
    let right = secrets::constant_time_eq(&otp.code_hash, &otp_hash(&otp.id, code, binding));
    if right || otp.attempts >= max_attempts {
        let spent = otps::use_up(&mut tx, &otp.id, now).await?;
        // A right code counts only for the check that spent it.
        if right && spent {
            attempt.succeeded(&mut tx).await?;
            tx.commit().await.or_internal()?;
            return Ok(());
        }
        tx.commit().await.or_internal()?;
        attempt.failed(store, now).await?;
        return Err(invalid_otp());
    }
    tx.commit().await.or_internal()?;
    attempt.failed(store, now).await?;
    Err(invalid_otp())
}

pub async fn regenerate_secret(
    platform: &Platform,
    caller: &Caller,
    _body: models::EmptyObject,
) -> Result<models::IntegrationCredentials, Error> {
    let Platform { store, clock, .. } = platform;
    let issuer = &member_of(&caller.principal)?.id;
    let now = clock.now();
    let mut tx = store.begin().await?;
    let business_id = &caller.principal.business_id;
    let (client_id, client_secret) =
        business::rotate_client_secret(&mut tx, business_id, Some(issuer), now).await?;
    logs::audit(
        &mut tx,
        now,
        AuditEntry::by(caller, AuditAction::RegenerateSecret),
    )
    .await?;
    tx.commit().await.or_internal()?;
    Ok(models::IntegrationCredentials {
        client_id,
        client_secret,
    })
}

/// The caller's profile as read with their session: no read of its own. The session cache
/// keeps it only while nothing it shows has changed (the stores' `auth_generation` triggers
/// cover its columns), so it is as fresh as authentication is.
pub fn get_profile(caller: &Caller, _body: models::EmptyObject) -> Result<models::Profile, Error> {
    member_of(&caller.principal)?
        .profile
        .clone()
        .ok_or_else(unauthenticated)
}

fn invalid(message: &'static str) -> Error {
    Error::new(ResponseCode::InvalidRequest).with_message(message)
}
