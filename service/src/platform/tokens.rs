//! Signing and verifying the JWTs of both token families.
//!
//! A token is an HS256 JWT signed with the server's key. It only says which session it stands
//! for: `sessions::authenticate` then checks the session as this process last read it, kept
//! only while nothing about it changed, so revoking a session (logout, password change,
//! deactivation, secret regeneration) takes effect at once.
//!
//! Every request of a session carries the same token, so the keys remember the tokens they
//! verified with their claims: a token seen again costs a lookup, not a decoding and an
//! HMAC. Only a token whose signature verified is remembered, so the memo holds nothing a
//! caller could not have had verified; its expiry is still judged on every use.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use generated_server::TokenFamily;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

/// The shortest key accepted: HS256 wants at least as many bytes as its output.
pub const MIN_KEY_BYTES: usize = 32;

/// Verified tokens remembered beyond this many: the expired ones are forgotten, and if that
/// is not enough, all of them (each is verified again when next used). Small in unit tests,
/// which fill it.
const VERIFIED_TOKENS_MAX: usize = if cfg!(test) { 8 } else { 100_000 };

/// What a token says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// The session id (`sessions.id`).
    pub sid: String,
    /// `dashboard` or `integration`.
    pub fam: String,
    /// The business id.
    pub bid: String,
    /// Issued at, Unix seconds.
    pub iat: i64,
    /// Expires at, Unix seconds.
    pub exp: i64,
}

impl Claims {
    pub fn family(&self) -> Option<TokenFamily> {
        family_from_str(&self.fam)
    }
}

pub fn family_str(family: TokenFamily) -> &'static str {
    match family {
        TokenFamily::Dashboard => "dashboard",
        TokenFamily::Integration => "integration",
    }
}

pub fn family_from_str(value: &str) -> Option<TokenFamily> {
    match value {
        "dashboard" => Some(TokenFamily::Dashboard),
        "integration" => Some(TokenFamily::Integration),
        _ => None,
    }
}

/// The server's token signing key.
#[derive(Clone)]
pub struct TokenKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    /// Built once: HS256 only, `exp` required (judged by [`TokenKeys::verify`]'s clock).
    validation: Validation,
    /// The tokens these keys verified, with their claims (module docs); shared by clones.
    verified: Arc<RwLock<HashMap<Box<str>, Claims>>>,
}

impl TokenKeys {
    /// Keys from the secret bytes of the key file. Panics on a key shorter than
    /// [`MIN_KEY_BYTES`]: that is a configuration mistake to catch at start-up.
    pub fn new(secret: Vec<u8>) -> Self {
        assert!(
            secret.len() >= MIN_KEY_BYTES,
            "the token signing key must have at least {MIN_KEY_BYTES} bytes"
        );
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = 0;
        validation.validate_aud = false;
        validation.validate_exp = false;
        validation.required_spec_claims = ["exp".to_owned()].into();
        TokenKeys {
            encoding: EncodingKey::from_secret(&secret),
            decoding: DecodingKey::from_secret(&secret),
            validation,
            verified: Arc::default(),
        }
    }

    /// A fresh random key (tests, and a first start without a key file).
    pub fn random() -> Self {
        TokenKeys::new(crate::kernel::secrets::random_bytes(MIN_KEY_BYTES))
    }

    pub fn sign(&self, claims: &Claims) -> String {
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &self.encoding)
            .expect("HS256 signing of plain claims cannot fail")
    }

    /// The claims of a token this server signed and that has not expired at `now`; `None`
    /// otherwise. Expiry is judged by the caller's clock, not by the library's reading of the
    /// system time, like every other decision that reads time.
    pub fn verify(&self, token: &str, now: chrono::DateTime<chrono::Utc>) -> Option<Claims> {
        let now = now.timestamp();
        let remembered = self
            .verified
            .read()
            .unwrap_or_else(|poison| poison.into_inner())
            .get(token)
            .cloned();
        let claims = match remembered {
            Some(claims) => claims,
            None => {
                let claims =
                    jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
                        .ok()?
                        .claims;
                if claims.exp > now {
                    self.remember(token, &claims, now);
                }
                claims
            }
        };
        (claims.exp > now).then_some(claims)
    }

    /// Keeps `token`, just verified, with its `claims`.
    fn remember(&self, token: &str, claims: &Claims, now: i64) {
        let mut verified = self
            .verified
            .write()
            .unwrap_or_else(|poison| poison.into_inner());
        if verified.len() >= VERIFIED_TOKENS_MAX {
            verified.retain(|_, claims| claims.exp > now);
        }
        if verified.len() >= VERIFIED_TOKENS_MAX {
            verified.clear();
        }
        verified.insert(token.into(), claims.clone());
    }
}

impl std::fmt::Debug for TokenKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenKeys(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> chrono::DateTime<chrono::Utc> {
        "2026-11-02T09:00:00Z".parse().unwrap()
    }

    fn claims(exp_from_now: i64) -> Claims {
        let now = now().timestamp();
        Claims {
            sid: "s".into(),
            fam: "dashboard".into(),
            bid: "b".into(),
            iat: now,
            exp: now + exp_from_now,
        }
    }

    #[test]
    fn a_signed_token_verifies_with_the_same_key_only() {
        let keys = TokenKeys::random();
        let claims = claims(60);
        let token = keys.sign(&claims);
        assert_eq!(keys.verify(&token, now()), Some(claims));
        assert_eq!(TokenKeys::random().verify(&token, now()), None);
        assert_eq!(keys.verify("garbage", now()), None);
        let mut tampered = token.clone();
        tampered.pop();
        assert_eq!(keys.verify(&tampered, now()), None);
    }

    #[test]
    fn expired_tokens_do_not_verify() {
        let keys = TokenKeys::random();
        assert_eq!(keys.verify(&keys.sign(&claims(-1)), now()), None);
        // The caller's clock decides, not the system's: a token of a clock set in the past is
        // live at that time and dead a minute after it expires.
        let token = keys.sign(&claims(60));
        assert!(keys
            .verify(&token, now() + chrono::Duration::seconds(59))
            .is_some());
        assert_eq!(
            keys.verify(&token, now() + chrono::Duration::seconds(60)),
            None
        );
    }

    #[test]
    fn a_remembered_token_is_still_judged_by_its_bytes_and_its_expiry() {
        let keys = TokenKeys::random();
        let token = keys.sign(&claims(60));
        assert!(keys.verify(&token, now()).is_some());
        // One character of the signature changed: not the token remembered, and not signed.
        let mut tampered = token.clone().into_bytes();
        let at = tampered.len() - 10;
        tampered[at] = if tampered[at] == b'x' { b'y' } else { b'x' };
        let tampered = String::from_utf8(tampered).unwrap();
        assert_eq!(keys.verify(&tampered, now()), None);
        // Remembered, and expired all the same once its time has passed.
        assert_eq!(
            keys.verify(&token, now() + chrono::Duration::seconds(60)),
            None
        );
        // Other keys remember nothing of it.
        assert_eq!(TokenKeys::random().verify(&token, now()), None);
    }

    #[test]
    fn the_tokens_remembered_are_bounded_expired_ones_first() {
        let keys = TokenKeys::random();
        let remembered = |keys: &TokenKeys| keys.verified.read().unwrap().len();
        for seconds in 1..=VERIFIED_TOKENS_MAX as i64 {
            assert!(keys.verify(&keys.sign(&claims(seconds)), now()).is_some());
        }
        assert_eq!(remembered(&keys), VERIFIED_TOKENS_MAX);
        // Three have expired by then: they make room for the new one.
        let later = now() + chrono::Duration::seconds(3);
        let token = keys.sign(&claims(600));
        assert!(keys.verify(&token, later).is_some());
        assert_eq!(remembered(&keys), VERIFIED_TOKENS_MAX - 2);
        // None has expired: all are forgotten, the new one kept.
        for seconds in 0..2 {
            assert!(keys
                .verify(&keys.sign(&claims(700 + seconds)), later)
                .is_some());
        }
        assert_eq!(remembered(&keys), VERIFIED_TOKENS_MAX);
        let newest = keys.sign(&claims(800));
        assert!(keys.verify(&newest, later).is_some());
        assert_eq!(remembered(&keys), 1);
        // Forgotten is not refused: verified again.
        assert!(keys.verify(&token, later).is_some());
    }
}
