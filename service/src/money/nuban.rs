//! NUBAN account numbers for Kobo's own bank code, and the serials they are made from.
//!
//! A NUBAN is a 9-digit serial plus a check digit computed over the bank code and the serial
//! (CBN's algorithm: weights 3,7,3 repeated over the 15 digits, check = (10 - sum % 10) % 10).
//! Serials come from the `sequences` table, one counter per [`Series`], incremented inside the
//! caller's transaction so a rolled-back account leaves no hole in use.

use crate::datastore::sequences;
use crate::error::Error;
use crate::kernel::store::Tx;

/// Kobo's own NIP institution code.
pub const BANK_CODE: &str = crate::provider::KOBO_INSTITUTION;

const WEIGHTS: [u32; 15] = [3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3];

/// The check digit of `serial` (9 digits) under `bank_code` (6 digits).
pub fn check_digit(bank_code: &str, serial: &str) -> u32 {
    assert!(
        bank_code.len() == 6 && serial.len() == 9,
        "a NUBAN check digit needs a 6-digit bank code and a 9-digit serial"
    );
    let sum: u32 = bank_code
        .chars()
        .chain(serial.chars())
        .zip(WEIGHTS)
        .map(|(digit, weight)| digit.to_digit(10).expect("digits only") * weight)
        .sum();
    (10 - sum % 10) % 10
}

/// The account number of `serial` at Kobo.
pub fn account_number(serial: u32) -> String {
    assert!(serial < 1_000_000_000, "a NUBAN serial has 9 digits");
    let serial = format!("{serial:09}");
    format!("{serial}{}", check_digit(BANK_CODE, &serial))
}

/// Whether `number` is a well-formed NUBAN of `bank_code`.
pub fn is_valid(bank_code: &str, number: &str) -> bool {
    number.len() == 10
        && number.bytes().all(|b| b.is_ascii_digit())
        && bank_code.len() == 6
        && bank_code.bytes().all(|b| b.is_ascii_digit())
        && check_digit(bank_code, &number[..9]).to_string() == number[9..]
}

/// The kinds of account numbers, each with its own counter and leading digit, so a number
/// tells at a glance what it is (as in the spec's examples: pool and current accounts
/// `1000000014`, `1000000021`; virtual accounts `2000000011`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Series {
    /// A business's own accounts: its main pool account and its current accounts.
    Business,
    /// Virtual accounts of a business's customers.
    Virtual,
}

impl Series {
    fn sequence_name(self) -> &'static str {
        match self {
            Series::Business => "nuban.business",
            Series::Virtual => "nuban.virtual",
        }
    }

    fn base(self) -> u32 {
        match self {
            Series::Business => 100_000_000,
            Series::Virtual => 200_000_000,
        }
    }
}

/// The next account number of `series`, taken inside `tx`.
pub async fn next_account_number(tx: &mut Tx, series: Series) -> Result<String, Error> {
    let value = sequences::next(tx, series.sequence_name()).await?;
    let serial = u32::try_from(value)
        .ok()
        .and_then(|value| series.base().checked_add(value))
        .filter(|serial| *serial < series.base() + 100_000_000)
        .ok_or_else(|| {
            Error::internal(format!("the {series:?} account number series is exhausted"))
        })?;
    Ok(account_number(serial))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_digits_match_the_specs_examples() {
        // Account numbers the spec shows for Kobo accounts.
        for number in [
            "1000000014",
            "1000000021",
            "1000000038",
            "2000000011",
            "3000000018",
        ] {
            assert!(is_valid(BANK_CODE, number), "{number}");
        }
        assert_eq!(account_number(100_000_001), "1000000014");
        assert_eq!(account_number(100_000_002), "1000000021");
        assert_eq!(account_number(200_000_001), "2000000011");
    }

    #[test]
    fn check_digit_follows_the_weights() {
        // 0*3+9*7+0*3+8*3+2*7+3*3 = 110 for the bank code; a zero serial adds nothing.
        assert_eq!(check_digit("090823", "000000000"), 0);
        // 110 + 1*3 (last serial digit, weight 3) = 113 -> 7.
        assert_eq!(check_digit("090823", "000000001"), 7);
        // 110 + 1*7 (eighth serial digit, weight 7) = 117 -> 3.
        assert_eq!(check_digit("090823", "000000010"), 3);
    }

    #[test]
    fn wrong_check_digits_and_shapes_are_invalid() {
        assert!(!is_valid(BANK_CODE, "1000000015"));
        assert!(!is_valid(BANK_CODE, "100000001"));
        assert!(!is_valid(BANK_CODE, "10000000140"));
        assert!(!is_valid(BANK_CODE, "10000000a4"));
        // The same serial under another bank code has another check digit.
        assert!(!is_valid("000013", "1000000014"));
    }
}
