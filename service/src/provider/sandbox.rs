//! The sandbox's core banking provider: deterministic, following the spec's identity test
//! table (the overview's "Sandbox" section) to the letter.
//!
//! | BVN / NIN | Result |
//! |---|---|
//! | `22212345678` (BVN) | Chinedu Obi |
//! | `22287654321` (BVN) | Amaka Nwosu |
//! | `70123456789` (NIN) | Funke Adeyemi |
//! | `70198765432` (NIN) | Ibrahim Musa |
//! | other 11 digits ending in `83` | verification fails (`83`) |
//! | other 11 digits ending in `80` | provider unavailable (`80`) |
//! | any other 11 digits | `Test Customer <last 4 digits>` |

use super::{
    mask, AccountOpening, BoxFuture, CoreBanking, IdentityNumbers, ProviderError, VerifiedIdentity,
};

/// The documented test identities: `(number, is_bvn, name)`.
const KNOWN: &[(&str, bool, &str)] = &[
    ("22212345678", true, "Chinedu Obi"),
    ("22287654321", true, "Amaka Nwosu"),
    ("70123456789", false, "Funke Adeyemi"),
    ("70198765432", false, "Ibrahim Musa"),
];

#[derive(Clone, Copy, Debug, Default)]
pub struct SandboxProvider;

impl SandboxProvider {
    fn verify_one(&self, number: &str, is_bvn: bool) -> Result<String, ProviderError> {
        let kind = if is_bvn { "BVN" } else { "NIN" };
        if let Some((_, _, name)) = KNOWN
            .iter()
            .find(|(known, known_is_bvn, _)| *known == number && *known_is_bvn == is_bvn)
        {
            return Ok((*name).to_owned());
        }
        if number.ends_with("83") {
            return Err(ProviderError::Refused(format!(
                "Identity verification failed for {kind} {}",
                mask(number)
            )));
        }
        if number.ends_with("80") {
            return Err(ProviderError::Unavailable(
                "The identity provider is unavailable: retry later".into(),
            ));
        }
        Ok(format!("Test Customer {}", &number[number.len() - 4..]))
    }
}

impl CoreBanking for SandboxProvider {
    fn verify_identity<'a>(
        &'a self,
        numbers: &'a IdentityNumbers,
    ) -> BoxFuture<'a, Result<VerifiedIdentity, ProviderError>> {
        Box::pin(async move {
            let by_bvn = numbers
                .bvn
                .as_deref()
                .map(|bvn| self.verify_one(bvn, true))
                .transpose()?;
            let by_nin = numbers
                .nin
                .as_deref()
                .map(|nin| self.verify_one(nin, false))
                .transpose()?;
            match (by_bvn, by_nin) {
                (Some(a), Some(b)) if a != b => Err(ProviderError::Refused(
                    "Identity verification failed: the BVN and the NIN belong to different people"
                        .into(),
                )),
                (Some(name), _) | (None, Some(name)) => Ok(VerifiedIdentity { name }),
                (None, None) => Err(ProviderError::Refused(
                    "Identity verification needs a BVN or a NIN".into(),
                )),
            }
        })
    }

    fn open_account<'a>(
        &'a self,
        _opening: &'a AccountOpening<'a>,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        Box::pin(async { Ok(()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn verify(bvn: Option<&str>, nin: Option<&str>) -> Result<String, ProviderError> {
        let numbers = IdentityNumbers {
            bvn: bvn.map(str::to_owned),
            nin: nin.map(str::to_owned),
        };
        SandboxProvider
            .verify_identity(&numbers)
            .await
            .map(|identity| identity.name)
    }

    #[tokio::test]
    async fn follows_the_documented_table() {
        assert_eq!(
            verify(Some("22212345678"), None).await.unwrap(),
            "Chinedu Obi"
        );
        assert_eq!(
            verify(Some("22287654321"), None).await.unwrap(),
            "Amaka Nwosu"
        );
        assert_eq!(
            verify(None, Some("70123456789")).await.unwrap(),
            "Funke Adeyemi"
        );
        assert_eq!(
            verify(None, Some("70198765432")).await.unwrap(),
            "Ibrahim Musa"
        );
        assert_eq!(
            verify(Some("12345671234"), None).await.unwrap(),
            "Test Customer 1234"
        );
        assert!(matches!(
            verify(Some("12345678983"), None).await,
            Err(ProviderError::Refused(message)) if message.contains("123*****983")
        ));
        assert!(matches!(
            verify(None, Some("12345678980")).await,
            Err(ProviderError::Unavailable(_))
        ));
        // A known BVN is not a known NIN: the table names the kind.
        assert_eq!(
            verify(None, Some("22212345678")).await.unwrap(),
            "Test Customer 5678"
        );
    }

    #[tokio::test]
    async fn both_numbers_must_name_one_person() {
        assert_eq!(
            verify(Some("22212345678"), Some("70123456789")).await,
            Err(ProviderError::Refused(
                "Identity verification failed: the BVN and the NIN belong to different people"
                    .into()
            ))
        );
        assert_eq!(
            verify(Some("12345671234"), Some("99999991234"))
                .await
                .unwrap(),
            "Test Customer 1234"
        );
    }
}
