//! Random values and how secrets are kept.
//!
//! - Passwords are hashed with argon2id (the crate's defaults: 19 MiB, 2 passes), off the async
//!   threads, because a hash costs tens of milliseconds on purpose.
//! - Client secrets and invitation tokens carry 32 random bytes: a plain SHA-256 of them is
//!   enough, since nobody can guess the input.
//! - OTPs have 6 digits, so their SHA-256 is salted with the OTP's id; what protects them is
//!   their 5-minute life and 5 attempts.

use std::sync::OnceLock;

use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::Argon2;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use generated_server::{ApiError, ResponseCode};
use sha2::{Digest, Sha256};

use crate::kernel::store::internal;

/// Passwords are 8 to 128 characters (the spec's `Password` schema).
pub const PASSWORD_MIN_CHARS: usize = 8;
pub const PASSWORD_MAX_CHARS: usize = 128;

/// `n` bytes from the operating system's CSPRNG.
pub fn random_bytes(n: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).expect("the operating system's random number generator failed");
    bytes
}

/// `prefix` followed by 32 random bytes in URL-safe base64 (43 characters).
pub fn random_token(prefix: &str) -> String {
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(random_bytes(32)))
}

/// Six decimal digits, uniformly distributed (rejection sampling, no modulo bias).
pub fn otp_code() -> String {
    const RANGE: u32 = 1_000_000;
    // The largest multiple of RANGE that fits in a u32: values at or above it are redrawn.
    const LIMIT: u32 = u32::MAX - (u32::MAX % RANGE);
    loop {
        let bytes = random_bytes(4);
        let value = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        if value < LIMIT {
            return format!("{:06}", value % RANGE);
        }
    }
}

/// Lower-case hex SHA-256 of `value`.
pub fn sha256_hex(value: &str) -> String {
    hex::encode(Sha256::digest(value.as_bytes()))
}

/// The stored form of an OTP: salted with its row id so equal codes hash differently.
pub fn otp_hash(otp_id: &str, code: &str) -> String {
    sha256_hex(&format!("{otp_id}:{code}"))
}

/// Checks the length rule of a new password; `field` names it in the `01` message.
pub fn check_password_rules(field: &str, password: &str) -> Result<(), ApiError> {
    let chars = password.chars().count();
    if chars < PASSWORD_MIN_CHARS {
        return Err(invalid(format!(
            "`{field}`: must be at least {PASSWORD_MIN_CHARS} characters"
        )));
    }
    if chars > PASSWORD_MAX_CHARS {
        return Err(invalid(format!(
            "`{field}`: must be at most {PASSWORD_MAX_CHARS} characters"
        )));
    }
    Ok(())
}

/// The argon2id PHC string of `password`.
pub async fn hash_password(password: &str) -> Result<String, ApiError> {
    let password = password.to_owned();
    tokio::task::spawn_blocking(move || hash_password_blocking(&password))
        .await
        .map_err(internal)?
}

pub fn hash_password_blocking(password: &str) -> Result<String, ApiError> {
    Argon2::default()
        .hash_password(password.as_bytes())
        .map(|hash| hash.to_string())
        .map_err(|error| internal(format!("cannot hash a password: {error}")))
}

/// Whether `password` matches `stored` (an argon2 PHC string). With `stored == None` (no such
/// member, or no password yet) a dummy hash is checked anyway, so the answer takes as long
/// whether or not the email exists.
pub async fn verify_password(password: &str, stored: Option<&str>) -> bool {
    let password = password.to_owned();
    let stored = stored.map(str::to_owned);
    tokio::task::spawn_blocking(move || {
        let known = stored.is_some();
        let phc = stored.unwrap_or_else(|| dummy_hash().to_owned());
        verify_password_blocking(&password, &phc) && known
    })
    .await
    .unwrap_or(false)
}

fn verify_password_blocking(password: &str, phc: &str) -> bool {
    match PasswordHash::new(phc) {
        Ok(parsed) => Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| {
        hash_password_blocking("not the password of anyone at all")
            .expect("argon2 hashes a constant")
    })
}

fn invalid(message: String) -> ApiError {
    ApiError::new(ResponseCode::InvalidRequest).with_message(message)
}

/// Masks an email for display: `adaeze.okafor@adaezefoods.ng` -> `a*****.o*****@adaezefoods.ng`.
pub fn mask_email(email: &str) -> String {
    let (local, domain) = email.rsplit_once('@').unwrap_or((email, ""));
    let masked: Vec<String> = local
        .split('.')
        .map(|part| match part.chars().next() {
            Some(first) => format!("{first}*****"),
            None => String::new(),
        })
        .collect();
    format!("{}@{domain}", masked.join("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn password_rules_count_characters_not_bytes() {
        let check = |password: &str| {
            check_password_rules("new_password", password).map_err(|e| e.message().to_owned())
        };
        assert_eq!(
            check("short"),
            Err("`new_password`: must be at least 8 characters".into())
        );
        assert!(check("eight ch").is_ok());
        // Eight characters, sixteen bytes.
        assert!(check("ọọọọọọọọ").is_ok());
        assert!(check(&"x".repeat(128)).is_ok());
        assert_eq!(
            check(&"x".repeat(129)),
            Err("`new_password`: must be at most 128 characters".into())
        );
    }

    #[test]
    fn otp_codes_are_six_digits() {
        for _ in 0..200 {
            let code = otp_code();
            assert_eq!(code.len(), 6);
            assert!(code.bytes().all(|b| b.is_ascii_digit()), "{code}");
        }
    }

    #[test]
    fn tokens_are_prefixed_and_distinct() {
        let a = random_token("inv_");
        let b = random_token("inv_");
        assert!(a.starts_with("inv_") && a.len() == 4 + 43);
        assert_ne!(a, b);
    }

    #[test]
    fn emails_are_masked_per_dotted_part() {
        assert_eq!(
            mask_email("adaeze.okafor@adaezefoods.ng"),
            "a*****.o*****@adaezefoods.ng"
        );
        assert_eq!(mask_email("ife@x.ng"), "i*****@x.ng");
    }

    #[test]
    fn password_hashes_verify_only_the_right_password() {
        let hash = hash_password_blocking("Jollof-Rice-2026").unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_password_blocking("Jollof-Rice-2026", &hash));
        assert!(!verify_password_blocking("Jollof-Rice-2027", &hash));
        assert!(!verify_password_blocking("Jollof-Rice-2026", "not a hash"));
    }
}
