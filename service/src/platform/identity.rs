//! Identity: tokens of both families, login, logout, passwords, OTPs, the integration secret
//! and the caller's profile.
//!
//! Failed credential checks are throttled progressively (`throttle`), and every failure of
//! `login` looks the same (`41`). Sessions themselves are `sessions`'.

use chrono::{DateTime, Duration, Utc};
use generated_server::models::{self, AuditAction};
use generated_server::{Operation, ResponseCode, TokenFamily};
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::error::{Error, OrInternal};
use crate::kernel::clock::Clock;
use crate::kernel::config::{Config, Environment};
use crate::kernel::paging::{Conditions, Sql};
use crate::kernel::secrets::{self, Passwords};
use crate::kernel::store::{self, Store, Tx};
use crate::outbox::{self, Notification};
use crate::platform::business;
use crate::platform::caller::Caller;
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
    store: &Store,
    config: &Config,
    tokens: &TokenKeys,
    clock: &Clock,
    caller: &Caller<()>,
    body: models::GenerateTokenRequest,
) -> Result<models::TokenGrant, Error> {
    let client_id = body.client_id.as_str();
    let credential = format!("token:{client_id}");
    let address = throttle::network_of(caller.client_ip);
    let now = clock.now();
    let limits = throttle::credential_limits(store, &credential, &address, &config.token).await?;
    let attempt = throttle::claim(store, limits, now).await?;

    let row = sqlx::query("SELECT id, client_secret_hash FROM businesses WHERE client_id = $1")
        .bind(client_id)
        .fetch_optional(store.pool())
        .await
        .or_internal()?;
    // A server serves the businesses of its own environment only; the client_id says which.
    if row.is_some() {
        if let Err(refused) = business::ensure_served(config.environment, client_id) {
            attempt.abandoned(store).await?;
            return Err(refused);
        }
    }
    let presented = secrets::sha256_hex(body.client_secret.as_str());
    let known_business = row.as_ref().map(|row| store::text(row, "id")).transpose()?;
    let business_id = match (&row, known_business) {
        (Some(row), Some(id))
            if constant_time_eq(&store::text(row, "client_secret_hash")?, &presented) =>
        {
            id
        }
        (_, known_business) => {
            attempt.failed(store, now).await?;
            let refused = unauthenticated().with_message("Invalid client_id or client_secret");
            // A wrong secret for a real client is that business's activity; an unknown
            // client_id has no business to file it under.
            if let Some(business_id) = known_business {
                let activity =
                    token_activity(caller, &business_id, refused.code(), &refused.message());
                let _turn = store.write_turn().await;
                logs::record_activity(store.pool(), now, &activity)
                    .await
                    .or_internal()?;
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
    };
    let (token, ttl) = sessions::open_session(&mut tx, tokens, now, &session).await?;
    let granted = token_activity(
        caller,
        &business_id,
        ResponseCode::Success,
        Operation::GenerateToken.success_message(),
    );
    logs::record_activity(&mut *tx, now, &granted)
        .await
        .or_internal()?;
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
    store: &Store,
    config: &Config,
    tokens: &TokenKeys,
    passwords: &Passwords,
    clock: &Clock,
    caller: &Caller<()>,
    body: models::LoginRequest,
) -> Result<models::LoginResult, Error> {
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
            for row in &candidates {
                audit_failed_login(store, now, caller, row, &email).await?;
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
) -> Result<Vec<AnyRow>, Error> {
    let mut query = Sql::new(
        "SELECT m.id, m.business_id, m.first_name, m.last_name, m.password_hash, m.is_active, \
           m.invitation_status FROM members m JOIN businesses b ON b.id = m.business_id",
    );
    let mut conditions = Conditions::default();
    conditions.add(format!("m.email = {}", query.arg(email)));
    let prefix = business::client_id_prefix(config.environment);
    let length = prefix.len();
    conditions.add(format!(
        "SUBSTR(b.client_id, 1, {length}) = {}",
        query.arg(prefix)
    ));
    if let Some(business_id) = business_id {
        conditions.add(format!(
            "m.business_id = {}",
            query.arg(business_id.to_string())
        ));
    }
    query.push(&conditions.where_clause());
    query.push(&format!(
        " ORDER BY m.created_at, m.id LIMIT {MEMBERSHIPS_MAX}"
    ));
    Ok(query.fetch_all(store.pool()).await?)
}

/// The memberships whose password `password` is, active and accepted. At least one hash is
/// always checked (a dummy one when there is no membership). `29` when hashing is busy.
async fn usable_memberships<'r>(
    passwords: &Passwords,
    candidates: &'r [AnyRow],
    password: &str,
) -> Result<Vec<&'r AnyRow>, Error> {
    let mut hashes = Vec::with_capacity(candidates.len().max(1));
    for row in candidates {
        hashes.push(store::optional_text(row, "password_hash")?);
    }
    if hashes.is_empty() {
        hashes.push(None);
    }
    let mut usable = Vec::new();
    for (n, stored) in hashes.iter().enumerate() {
        let matches = passwords.verify(password, stored.as_deref()).await?;
        let Some(row) = candidates.get(n).filter(|_| matches) else {
            continue;
        };
        if store::flag(row, "is_active")? && store::text(row, "invitation_status")? == "accepted" {
            usable.push(row);
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
    member: &AnyRow,
    email: &str,
    now: DateTime<Utc>,
) -> Result<models::LoginResult, Error> {
    let member_id = store::text(member, "id")?;
    let business_id = store::text(member, "business_id")?;
    sqlx::query("UPDATE members SET last_login = $2 WHERE id = $1")
        .bind(&member_id)
        .bind(store::timestamp(now))
        .execute(&mut **tx)
        .await?;
    let ip_address = caller.client_ip.to_string();
    let session = NewSession {
        business_id: &business_id,
        family: TokenFamily::Dashboard,
        member_id: Some(&member_id),
        ip_address: &ip_address,
        ttl_seconds: config.dashboard_token_ttl_seconds,
    };
    let (token, ttl) = sessions::open_session(tx, tokens, now, &session).await?;
    let view = team_views::member_view(&mut **tx, &business_id, &member_id, now)
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
        member: view,
        permission_codes,
        token_type: models::TokenType::Bearer,
    })
}

async fn role_codes(tx: &mut Tx, role_id: &str) -> Result<Vec<String>, Error> {
    let codes: String = sqlx::query_scalar("SELECT permission_codes FROM roles WHERE id = $1")
        .bind(role_id)
        .fetch_one(&mut **tx)
        .await
        .or_internal()?;
    Ok(permissions::codes_in_catalog_order(
        &permissions::parse_stored(&codes)?,
    ))
}

/// A failed login of an existing member is an audit-log entry (401), in its own transaction.
async fn audit_failed_login(
    store: &Store,
    now: chrono::DateTime<chrono::Utc>,
    caller: &Caller<()>,
    member: &sqlx::any::AnyRow,
    email: &str,
) -> Result<(), Error> {
    let mut tx = store.begin().await?;
    logs::audit(
        &mut tx,
        now,
        AuditEntry {
            business_id: store::text(member, "business_id")?,
            action: AuditAction::Login,
            user_name: display_name(
                &store::text(member, "first_name")?,
                &store::text(member, "last_name")?,
                email,
            ),
            user_id: Some(store::text(member, "id")?),
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
    store: &Store,
    clock: &Clock,
    caller: &Caller,
    _body: models::EmptyObject,
) -> Result<(), Error> {
    let now = clock.now();
    let mut tx = store.begin().await?;
    sqlx::query(
        "UPDATE sessions SET revoked_at = $3 \
         WHERE id = $1 AND business_id = $2 AND revoked_at IS NULL",
    )
    .bind(&caller.principal.session_id)
    .bind(&caller.principal.business_id)
    .bind(store::timestamp(now))
    .execute(&mut *tx)
    .await
    .or_internal()?;
    logs::audit(&mut tx, now, AuditEntry::by(caller, AuditAction::Logout)).await?;
    tx.commit().await.or_internal()
}

pub async fn change_password(
    store: &Store,
    config: &Config,
    passwords: &Passwords,
    clock: &Clock,
    caller: &Caller,
    body: models::ChangePasswordRequest,
) -> Result<(), Error> {
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
    let stored: Option<String> =
        sqlx::query_scalar("SELECT password_hash FROM members WHERE id = $1 AND business_id = $2")
            .bind(&member.id)
            .bind(&caller.principal.business_id)
            .fetch_optional(store.pool())
            .await
            .or_internal()?
            .flatten();
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
    let changed = sqlx::query(
        "UPDATE members SET password_hash = $3, updated_at = $4 \
         WHERE id = $1 AND business_id = $2 AND password_hash = $5",
    )
    .bind(&member.id)
    .bind(&caller.principal.business_id)
    .bind(&hash)
    .bind(store::timestamp(now))
    .bind(&stored)
    .execute(&mut *tx)
    .await
    .or_internal()?
    .rows_affected();
    if changed != 1 {
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
    store: &Store,
    config: &Config,
    clock: &Clock,
    caller: &Caller,
    _body: models::EmptyObject,
) -> Result<models::OtpDelivery, Error> {
    let member = member_of(&caller.principal)?;
    let policy = config.otp;
    let now = clock.now();
    let mut tx = store.begin().await?;
    business::lock_business(&mut tx, store.backend(), &caller.principal.business_id).await?;

    let window_start = now - Duration::seconds(policy.issue_window_seconds as i64);
    let row = sqlx::query(
        "SELECT COUNT(*) AS issued, MIN(created_at) AS oldest FROM otps \
         WHERE member_id = $1 AND created_at >= $2",
    )
    .bind(&member.id)
    .bind(store::timestamp(window_start))
    .fetch_one(&mut *tx)
    .await
    .or_internal()?;
    let issued: i64 = row.try_get("issued").or_internal()?;
    if issued >= policy.issue_limit {
        let oldest = store::optional_time(&row, "oldest")?.unwrap_or(now);
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
    sqlx::query("UPDATE otps SET used_at = $2 WHERE member_id = $1 AND used_at IS NULL")
        .bind(&member.id)
        .bind(store::timestamp(now))
        .execute(&mut *tx)
        .await
        .or_internal()?;
    let otp_id = store::new_id();
    let code = secrets::otp_code();
    sqlx::query(
        "INSERT INTO otps (id, business_id, member_id, code_hash, attempts, expires_at, used_at, \
           created_at) VALUES ($1, $2, $3, $4, 0, $5, NULL, $6)",
    )
    .bind(&otp_id)
    .bind(&caller.principal.business_id)
    .bind(&member.id)
    .bind(secrets::otp_hash(&otp_id, &code))
    .bind(store::timestamp(
        now + Duration::seconds(policy.ttl_seconds as i64),
    ))
    .bind(store::timestamp(now))
    .execute(&mut *tx)
    .await
    .or_internal()?;
    outbox::enqueue(
        &mut tx,
        now,
        &Notification {
            business_id: Some(caller.principal.business_id.clone()),
            channel: "email",
            recipient: member.email.clone(),
            subject: "Your Kobo one-time password".into(),
            body: format!(
                "Hello {},\n\nYour one-time password is {code}. It expires in {} minutes and \
                 works once. Kobo will never ask you for it by phone or email.\n\nIf you did not \
                 ask for it, change your password.\n",
                member.first_name,
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
    let invalid_otp = || Error::new(ResponseCode::InvalidOtp);
    let max_attempts = config.otp.max_attempts;
    let now = store::timestamp(clock.now());
    let mut tx = store.begin().await?;
    let claimed = sqlx::query(
        "UPDATE otps SET attempts = attempts + 1 \
         WHERE id = (SELECT id FROM otps WHERE member_id = $1 AND used_at IS NULL \
                     ORDER BY created_at DESC LIMIT 1) \
           AND used_at IS NULL AND expires_at > $2 AND attempts < $3 \
         RETURNING id, code_hash, attempts",
    )
    .bind(member_id)
    .bind(&now)
    .bind(max_attempts)
    .fetch_optional(&mut *tx)
    .await
    .or_internal()?;
    let Some(row) = claimed else {
        tx.rollback().await.or_internal()?;
        return Err(invalid_otp());
    };
    let otp_id = store::text(&row, "id")?;
    let attempts: i64 = row.try_get("attempts").or_internal()?;
    let right = constant_time_eq(
        &store::text(&row, "code_hash")?,
        &secrets::otp_hash(&otp_id, code),
    );
    if right || attempts >= max_attempts {
        let spent = sqlx::query("UPDATE otps SET used_at = $2 WHERE id = $1 AND used_at IS NULL")
            .bind(&otp_id)
            .bind(&now)
            .execute(&mut *tx)
            .await
            .or_internal()?
            .rows_affected();
        tx.commit().await.or_internal()?;
        // A right code counts only for the check that spent it.
        return if right && spent == 1 {
            Ok(())
        } else {
            Err(invalid_otp())
        };
    }
    tx.commit().await.or_internal()?;
    Err(invalid_otp())
}

pub async fn regenerate_secret(
    store: &Store,
    clock: &Clock,
    caller: &Caller,
    _body: models::EmptyObject,
) -> Result<models::IntegrationCredentials, Error> {
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

pub async fn get_profile(
    store: &Store,
    clock: &Clock,
    caller: &Caller,
    _body: models::EmptyObject,
) -> Result<models::Profile, Error> {
    let member_id = &member_of(&caller.principal)?.id;
    let business_id = &caller.principal.business_id;
    // One query for the three parts of the answer: this is the cheapest authenticated call,
    // and on both stores a query's round trip costs more than its work here.
    let sql = format!(
        "SELECT {}, {}, b.id AS b_id, b.name AS b_name, b.status AS b_status, b.client_id AS b_client_id, \
           b.created_at AS b_created_at \
         FROM members m \
         JOIN roles r ON r.id = m.role_id AND (r.business_id IS NULL OR r.business_id = m.business_id) \
         JOIN businesses b ON b.id = m.business_id \
         WHERE m.id = $1 AND m.business_id = $2",
        team_views::MEMBER_COLUMNS,
        team_views::ROLE_COLUMNS_AS_R,
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(member_id)
        .bind(business_id)
        .fetch_optional(store.pool())
        .await
        .or_internal()?
        .ok_or_else(unauthenticated)?;
    let member = team_views::member_from_row(&row, clock.now())?;
    let role = team_views::role_from_prefixed_row(&row, "r_")?;
    let environment = match business::environment_of_client_id(&store::text(&row, "b_client_id")?) {
        Environment::Sandbox => models::BusinessEnvironment::Sandbox,
        Environment::Production => models::BusinessEnvironment::Production,
    };
    let status = match store::text(&row, "b_status")?.as_str() {
        "active" => models::BusinessStatus::Active,
        _ => models::BusinessStatus::Inactive,
    };
    Ok(models::Profile {
        business: models::Business {
            created_at: store::time(&row, "b_created_at")?,
            environment,
            id: store::uuid(&row, "b_id")?,
            name: store::text(&row, "b_name")?,
            status,
        },
        member,
        role,
    })
}

/// Equality of two hex digests that does not stop at the first difference.
fn constant_time_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |difference, (x, y)| difference | (x ^ y))
            == 0
}

fn invalid(message: &'static str) -> Error {
    Error::new(ResponseCode::InvalidRequest).with_message(message)
}
