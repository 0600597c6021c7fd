//! Signing and verifying the JWTs of both token families.
//!
//! A token is an HS256 JWT signed with the server's key. It only says which session it stands
//! for: `sessions::authenticate` then checks the session row on every request, so revoking a
//! session (logout, password change, deactivation, secret regeneration) takes effect at once.

use generated_server::TokenFamily;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

/// The shortest key accepted: HS256 wants at least as many bytes as its output.
pub const MIN_KEY_BYTES: usize = 32;

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
}

impl TokenKeys {
    /// Keys from the secret bytes of the key file. Panics on a key shorter than
    /// [`MIN_KEY_BYTES`]: that is a configuration mistake to catch at start-up.
    pub fn new(secret: Vec<u8>) -> Self {
        assert!(
            secret.len() >= MIN_KEY_BYTES,
            "the token signing key must have at least {MIN_KEY_BYTES} bytes"
        );
        TokenKeys {
            encoding: EncodingKey::from_secret(&secret),
            decoding: DecodingKey::from_secret(&secret),
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
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = 0;
        validation.validate_aud = false;
        validation.validate_exp = false;
        validation.required_spec_claims = ["exp".to_owned()].into();
        jsonwebtoken::decode::<Claims>(token, &self.decoding, &validation)
            .ok()
            .map(|data| data.claims)
            .filter(|claims| claims.exp > now.timestamp())
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
}
