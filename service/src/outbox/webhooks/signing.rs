//! Standard Webhooks signatures (<https://www.standardwebhooks.com/>).
//!
//! A secret is `whsec_` followed by the base64 of 24 random bytes. A delivery's signature is
//! `v1,<base64 HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the
//! decoded bytes; during a rotation a delivery carries one signature per live secret, separated
//! by spaces. [`verify`] is the receiver's side (used by `kobo webhooks listen` and the tests).

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::kernel::secrets::random_bytes;

/// What every secret starts with.
pub const SECRET_PREFIX: &str = "whsec_";
/// How far a delivery's timestamp may be from the receiver's clock, in seconds.
pub const TIMESTAMP_TOLERANCE_SECONDS: i64 = 5 * 60;

/// The signing secret kept in the file at `path` (`whsec_...`, surrounding whitespace left out)
/// and its key: how Kobo and `kobo-provider` read the secret they share.
pub fn read_secret_file(path: &std::path::Path) -> anyhow::Result<(String, Vec<u8>)> {
    use anyhow::Context;
    let secret = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the secret {}", path.display()))?
        .trim()
        .to_owned();
    let key = key_of(&secret).map_err(|error| anyhow::anyhow!("{}: {error}", path.display()))?;
    Ok((secret, key))
}

/// A new random signing secret.
pub fn new_secret() -> String {
    format!("{SECRET_PREFIX}{}", STANDARD.encode(random_bytes(24)))
}

/// The key bytes of `secret` (`whsec_<base64>`), or why it is not one.
pub fn key_of(secret: &str) -> Result<Vec<u8>, String> {
    let encoded = secret
        .strip_prefix(SECRET_PREFIX)
        .ok_or_else(|| format!("a signing secret starts with `{SECRET_PREFIX}`"))?;
    let key = STANDARD
        .decode(encoded)
        .map_err(|_| "the part after `whsec_` is not base64".to_string())?;
    if key.is_empty() {
        return Err("the signing secret is empty".into());
    }
    Ok(key)
}

fn mac(key: &[u8], id: &str, timestamp: i64, body: &[u8]) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

/// The `webhook-signature` header value for `body`: one `v1,` signature per secret, in order.
pub fn signature_header(keys: &[Vec<u8>], id: &str, timestamp: i64, body: &[u8]) -> String {
    keys.iter()
        .map(|key| {
            let tag = mac(key, id, timestamp, body).finalize().into_bytes();
            format!("v1,{}", STANDARD.encode(tag))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Why a delivery was refused by [`verify`].
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The timestamp is not a number, or too far from `now`.
    Timestamp(String),
    /// No `v1,` signature of the header matches.
    Signature,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Timestamp(why) => write!(f, "webhook-timestamp refused: {why}"),
            Refusal::Signature => f.write_str("no signature matches the secret"),
        }
    }
}

/// Checks a delivery as a receiver must: the timestamp within the tolerance of `now` (Unix
/// seconds), and one of the header's `v1,` signatures made with `key` (compared in constant
/// time).
pub fn verify(
    key: &[u8],
    id: &str,
    timestamp: &str,
    signatures: &str,
    body: &[u8],
    now: i64,
) -> Result<(), Refusal> {
    let at: i64 = timestamp
        .trim()
        .parse()
        .map_err(|_| Refusal::Timestamp(format!("`{timestamp}` is not Unix seconds")))?;
    if (now - at).abs() > TIMESTAMP_TOLERANCE_SECONDS {
        return Err(Refusal::Timestamp(format!(
            "{} seconds from this machine's clock (at most {TIMESTAMP_TOLERANCE_SECONDS})",
            (now - at).abs()
        )));
    }
    for candidate in signatures.split_whitespace() {
        let Some(encoded) = candidate.strip_prefix("v1,") else {
            continue;
        };
        let Ok(tag) = STANDARD.decode(encoded) else {
            continue;
        };
        if mac(key, id, at, body).verify_slice(&tag).is_ok() {
            return Ok(());
        }
    }
    Err(Refusal::Signature)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Standard Webhooks specification's reference libraries.
    #[test]
    fn signs_the_standard_webhooks_example() {
        let key = key_of("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        let header = signature_header(
            std::slice::from_ref(&key),
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            body,
        );
        assert_eq!(header, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        assert_eq!(
            verify(
                &key,
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                "1614265330",
                &header,
                body,
                1614265330
            ),
            Ok(())
        );
    }

    #[test]
    fn refuses_other_bodies_old_timestamps_and_other_secrets() {
        let key = key_of(&new_secret()).unwrap();
        let other = key_of(&new_secret()).unwrap();
        let header = signature_header(std::slice::from_ref(&key), "e1", 1_000, b"{}");
        assert_eq!(
            verify(&key, "e1", "1000", &header, b"{ }", 1_000),
            Err(Refusal::Signature)
        );
        assert_eq!(
            verify(&key, "e2", "1000", &header, b"{}", 1_000),
            Err(Refusal::Signature)
        );
        assert_eq!(
            verify(&other, "e1", "1000", &header, b"{}", 1_000),
            Err(Refusal::Signature)
        );
        assert!(matches!(
            verify(&key, "e1", "1000", &header, b"{}", 1_000 + 301),
            Err(Refusal::Timestamp(_))
        ));
        assert!(verify(&key, "e1", "1000", &header, b"{}", 1_000 + 300).is_ok());
    }

    #[test]
    fn during_a_rotation_either_secret_verifies() {
        let new = key_of(&new_secret()).unwrap();
        let old = key_of(&new_secret()).unwrap();
        let header = signature_header(&[new.clone(), old.clone()], "e1", 5, b"x");
        assert_eq!(header.split(' ').count(), 2);
        assert!(verify(&new, "e1", "5", &header, b"x", 5).is_ok());
        assert!(verify(&old, "e1", "5", &header, b"x", 5).is_ok());
    }

    #[test]
    fn secrets_are_checked() {
        assert!(key_of("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").is_err());
        assert!(key_of("whsec_!!!").is_err());
        assert_eq!(key_of(&new_secret()).unwrap().len(), 24);
    }
}
