//! What a transfer costs and may be: the bank's transfer policy (the NIP fee tiers and VAT,
//! the amount bounds, the default daily limit, how long a hold lasts), the narration NIP
//! carries, and the Lagos day the daily limit counts.

use crate::kernel::config::Environment;

/// What transfers cost and how much may leave, in kobo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransferPolicy {
    /// The NIP fee tiers: `(up to this amount, fee)`, in increasing order; the last tier's fee
    /// applies above the last bound.
    pub nip_fee_tiers: Vec<(i64, i64)>,
    /// VAT on a fee, in basis points (750: 7.5%).
    pub vat_basis_points: i64,
    pub min_amount: i64,
    pub max_amount: i64,
    /// A business's daily limit when the operator set none.
    pub default_daily_limit: i64,
    /// How long a transfer may await approval before it expires, in seconds (72 hours).
    pub approval_hold_seconds: i64,
}

impl TransferPolicy {
    /// The policy of a bank in `environment` (the sandbox has a lower default daily limit).
    pub fn for_environment(environment: Environment) -> TransferPolicy {
        TransferPolicy {
            nip_fee_tiers: vec![(500_000, 1_000), (5_000_000, 2_500), (i64::MAX, 5_000)],
            vat_basis_points: 750,
            min_amount: 100,
            max_amount: 1_000_000_000,
            default_daily_limit: match environment {
                Environment::Sandbox => 500_000_000,
                Environment::Production => 5_000_000_000,
            },
            approval_hold_seconds: 72 * 3600,
        }
    }
}

/// The fee and VAT of a transfer, in kobo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Charges {
    pub fee: i64,
    pub vat: i64,
}

impl Charges {
    pub fn total(self) -> i64 {
        self.fee + self.vat
    }
}

/// Intra-bank transfers are free; inter-bank ones pay the tier's fee and VAT on it, rounded
/// half up to the kobo (7.5% of NGN 25.00 is 1.875: NGN 1.88).
pub fn charges(policy: &TransferPolicy, inter_bank: bool, amount: i64) -> Charges {
    if !inter_bank {
        return Charges::default();
    }
    let fee = policy
        .nip_fee_tiers
        .iter()
        .find(|(up_to, _)| amount <= *up_to)
        .or(policy.nip_fee_tiers.last())
        .map_or(0, |(_, fee)| *fee);
    let vat = (fee * policy.vat_basis_points + 5_000) / 10_000;
    Charges { fee, vat }
}

/// The characters NIP carries in a narration.
fn nip_character(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            ' ' | '-' | '_' | '.' | ',' | '/' | '&' | '(' | ')' | '\''
        )
}

/// A narration as NIP carries it: other characters become spaces, runs of spaces one, trimmed,
/// at most 100 characters; blank gives `default`.
pub fn narration(given: Option<&str>, default: &str) -> String {
    let clean = |text: &str| {
        let kept: String = text
            .chars()
            .map(|c| if nip_character(c) { c } else { ' ' })
            .collect();
        kept.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let mut chosen = clean(given.unwrap_or(""));
    if chosen.is_empty() {
        chosen = clean(default);
    }
    chosen
        .chars()
        .take(100)
        .collect::<String>()
        .trim()
        .to_owned()
}

/// The calendar day in Lagos (UTC+1, no daylight saving) of a time, as the stores count it.
pub use kobo_store::ledger::lagos_day;

/// Names compared as NIP names are: case and spacing ignored.
pub fn same_name(a: &str, b: &str) -> bool {
    let key = |s: &str| {
        s.split_whitespace()
            .map(str::to_lowercase)
            .collect::<Vec<_>>()
            .join(" ")
    };
    key(a) == key(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::config::Environment;
    use chrono::{DateTime, Utc};

    #[test]
    fn nip_fees_follow_the_tiers_with_vat_rounded_half_up() {
        let policy = TransferPolicy::for_environment(Environment::Sandbox);
        assert_eq!(charges(&policy, false, 5_000_000), Charges::default());
        assert_eq!(
            charges(&policy, true, 500_000),
            Charges {
                fee: 1_000,
                vat: 75
            }
        );
        assert_eq!(
            charges(&policy, true, 500_001),
            Charges {
                fee: 2_500,
                vat: 188
            }
        );
        assert_eq!(
            charges(&policy, true, 5_000_000),
            Charges {
                fee: 2_500,
                vat: 188
            }
        );
        assert_eq!(
            charges(&policy, true, 5_000_001),
            Charges {
                fee: 5_000,
                vat: 375
            }
        );
    }

    #[test]
    fn narrations_keep_what_nip_carries() {
        assert_eq!(
            narration(Some("Supplier payment - Ofada rice"), "x"),
            "Supplier payment - Ofada rice"
        );
        assert_eq!(
            narration(Some("Rent\u{1F3E0} #12;  May"), "x"),
            "Rent 12 May"
        );
        assert_eq!(
            narration(Some("   "), "Transfer from Adaeze Foods Ltd"),
            "Transfer from Adaeze Foods Ltd"
        );
        assert_eq!(narration(None, "Transfer from Ọja"), "Transfer from ja");
        assert_eq!(narration(Some(&"a".repeat(150)), "x").len(), 100);
    }

    #[test]
    fn the_daily_limit_counts_lagos_days() {
        let at = |s: &str| s.parse::<DateTime<Utc>>().unwrap();
        assert_eq!(lagos_day(at("2026-11-02T22:59:59Z")), "2026-11-02");
        assert_eq!(lagos_day(at("2026-11-02T23:00:00Z")), "2026-11-03");
    }

    #[test]
    fn names_match_without_case_or_spacing() {
        assert!(same_name("Emeka  Nwosu", "emeka nwosu"));
        assert!(!same_name("Emeka Nwosu", "Emeka Nwosuu"));
    }
}
