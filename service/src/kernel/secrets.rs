//! Random values and how secrets are kept.
//!
//! - Passwords are hashed with argon2id ([`Passwords`]; in production the crate's defaults:
//!   19 MiB, 2 passes), off the async threads, because a hash costs tens of milliseconds and
//!   its memory on purpose. At most [`PasswordPolicy::max_concurrent`] hashes run at once; past
//!   that the answer is `29`, so a flood of logins cannot take the process's memory.
//! - Client secrets and invitation tokens carry 32 random bytes: a plain SHA-256 of them is
//!   enough, since nobody can guess the input.
//! - OTPs have 6 digits, so their SHA-256 is salted with the OTP's id; what protects them is
//!   their 5-minute life and 5 attempts.

use std::sync::{Arc, OnceLock};

use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::{Algorithm, Argon2, Params, Version};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sha2::{Digest, Sha256};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::kernel::config::PasswordPolicy;
use crate::kernel::Invalid;

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

/// Equality of two hex digests that does not stop at the first difference.
pub fn constant_time_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |difference, (x, y)| difference | (x ^ y))
            == 0
}

/// Whether `presented` is `secret`, compared as digests of equal length to the end, so the time
/// taken tells nothing of either.
pub fn is_the_secret(presented: &str, secret: &str) -> bool {
    constant_time_eq(&sha256_hex(presented), &sha256_hex(secret))
}

/// Creates `path` for its owner alone (mode 0600 on Unix) holding `contents`, flushed to disk: a
/// key or a secret. An error of kind `AlreadyExists` when something is there already.
pub fn create_private_file(path: &std::path::Path, contents: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    std::io::Write::write_all(&mut file, contents)?;
    file.sync_all()
}

/// Lower-case hex SHA-256 of `value`.
pub fn sha256_hex(value: &str) -> String {
    hex::encode(Sha256::digest(value.as_bytes()))
}

/// The stored form of an OTP: salted with its row id so equal codes hash differently.
pub fn otp_hash(otp_id: &str, code: &str) -> String {
    sha256_hex(&format!("{otp_id}:{code}"))
}

/// Checks the length rule of a new password; `field` names it in the refusal.
pub fn check_password_rules(field: &str, password: &str) -> Result<(), Invalid> {
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

/// Hashes and verifies passwords with the policy's argon2id parameters, a bounded number at
/// a time. Verification reads the parameters from the stored hash, so hashes made under
/// another policy still verify.
pub struct Passwords {
    argon2: Argon2<'static>,
    permits: Arc<Semaphore>,
    /// A hash of nothing, checked when there is no stored hash so that the answer takes as
    /// long whether or not the account exists.
    dummy: OnceLock<String>,
}

impl Passwords {
    pub fn new(policy: &PasswordPolicy) -> Passwords {
        let params = Params::new(
            policy.memory_kib,
            policy.iterations,
            policy.parallelism,
            None,
        )
        .expect("argon2 parameters within the algorithm's bounds");
        Passwords {
            argon2: Argon2::new(Algorithm::Argon2id, Version::V0x13, params),
            permits: Arc::new(Semaphore::new(policy.max_concurrent.max(1))),
            dummy: OnceLock::new(),
        }
    }

    /// The argon2id PHC string of `password`.
    pub async fn hash(&self, password: &str) -> Result<String, PasswordError> {
        let permit = self.permit()?;
        let argon2 = self.argon2.clone();
        let password = password.to_owned();
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            hash_with(&argon2, &password)
        })
        .await
        .map_err(|error| PasswordError::Failed(format!("the hashing task failed: {error}")))?
    }

    /// Whether `password` matches `stored` (an argon2 PHC string). With `stored == None` (no
    /// such member, or no password yet) a dummy hash is checked anyway. `29` when the hashing
    /// capacity is in use.
    pub async fn verify(
        &self,
        password: &str,
        stored: Option<&str>,
    ) -> Result<bool, PasswordError> {
        let permit = self.permit()?;
        let known = stored.is_some();
        let phc = match stored {
            Some(stored) => stored.to_owned(),
            None => self.dummy_hash()?.to_owned(),
        };
        let argon2 = self.argon2.clone();
        let password = password.to_owned();
        let matches = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            verify_with(&argon2, &password, &phc)
        })
        .await
        .map_err(|error| PasswordError::Failed(format!("the hashing task failed: {error}")))?;
        Ok(matches && known)
    }

    /// A hashing slot, or `29`: a hash holds its memory for tens of milliseconds, so a caller
    /// that finds every slot taken is told to come back in a second rather than queued.
    fn permit(&self) -> Result<OwnedSemaphorePermit, PasswordError> {
        self.permits
            .clone()
            .try_acquire_owned()
            .map_err(|_| PasswordError::Busy {
                retry_after_seconds: 1,
            })
    }

    fn dummy_hash(&self) -> Result<&str, PasswordError> {
        if let Some(hash) = self.dummy.get() {
            return Ok(hash);
        }
        let hash = hash_with(&self.argon2, "not the password of anyone at all")?;
        Ok(self.dummy.get_or_init(|| hash))
    }
}

fn hash_with(argon2: &Argon2<'_>, password: &str) -> Result<String, PasswordError> {
    argon2
        .hash_password(password.as_bytes())
        .map(|hash| hash.to_string())
        .map_err(|error| PasswordError::Failed(format!("cannot hash a password: {error}")))
}

/// Why a password could not be hashed or checked.
#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    /// Every hashing slot is taken: a hash holds its memory for tens of milliseconds, so the
    /// caller is told to come back shortly rather than queued.
    #[error("too many sign-ins at once: try again in {retry_after_seconds} second")]
    Busy { retry_after_seconds: u64 },
    /// The hash could not be computed: a bug.
    #[error("{0}")]
    Failed(String),
}

fn verify_with(argon2: &Argon2<'_>, password: &str, phc: &str) -> bool {
    match PasswordHash::new(phc) {
        Ok(parsed) => argon2.verify_password(password.as_bytes(), &parsed).is_ok(),
        Err(_) => false,
    }
}

fn invalid(message: String) -> Invalid {
    Invalid::new(message)
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

    #[tokio::test]
    async fn password_hashes_verify_only_the_right_password() {
        let passwords = Passwords::new(&PasswordPolicy::cheapest_for_tests());
        let hash = passwords.hash("Jollof-Rice-2026").await.unwrap();
        assert!(hash.starts_with("$argon2id$v=19$m=8,t=1,p=1$"), "{hash}");
        assert!(passwords
            .verify("Jollof-Rice-2026", Some(&hash))
            .await
            .unwrap());
        assert!(!passwords
            .verify("Jollof-Rice-2027", Some(&hash))
            .await
            .unwrap());
        assert!(!passwords
            .verify("Jollof-Rice-2026", Some("not a hash"))
            .await
            .unwrap());
        // No stored hash: the dummy is checked and the answer is no.
        assert!(!passwords.verify("Jollof-Rice-2026", None).await.unwrap());
    }

    #[tokio::test]
    async fn production_parameters_are_argons_defaults_and_other_hashes_still_verify() {
        let production = Passwords::new(&PasswordPolicy::default());
        let hash = production.hash("Jollof-Rice-2026").await.unwrap();
        assert!(
            hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{hash}"
        );
        // Verification reads the parameters from the hash, whatever the verifier's policy.
        let cheap = Passwords::new(&PasswordPolicy::cheapest_for_tests());
        assert!(cheap.verify("Jollof-Rice-2026", Some(&hash)).await.unwrap());
    }

    #[tokio::test]
    async fn hashing_beyond_the_bound_answers_29_at_once() {
        let policy = PasswordPolicy {
            max_concurrent: 1,
            ..PasswordPolicy::cheapest_for_tests()
        };
        let passwords = Passwords::new(&policy);
        let held = passwords.permit().unwrap();
        let refused = passwords.hash("Jollof-Rice-2026").await.unwrap_err();
        assert!(
            matches!(
                refused,
                PasswordError::Busy {
                    retry_after_seconds: 1
                }
            ),
            "{refused:?}"
        );
        drop(held);
        passwords.hash("Jollof-Rice-2026").await.unwrap();
    }
}
