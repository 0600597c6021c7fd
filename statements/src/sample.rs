//! Deterministic pseudo-random statements and receipts: the same seed gives the same figures,
//! on every machine. For tests, the example and demonstrations; nothing here is real.
//!
//! The statements reconcile ([`Statement::check`]) and are made to be awkward: narrations with
//! commas, quotes, `&`, `<`, backslashes, parentheses, line breaks, a leading `=` or `+`, and
//! Yoruba names with combining marks; lines in the first and last minutes of the period's Lagos
//! days; pending lines; amounts from one kobo to millions of naira.

use chrono::{DateTime, Duration, NaiveDate, Utc};

use crate::{lagos, Bank, Counterparty, Direction, Line, Receipt, Source, Statement};

/// The narrations lines take in turn (fees have their own), so that any statement of at least
/// this many non-fee lines has every one of them.
pub const NARRATIONS: &[&str] = &[
    "Invoice 0042, part payment",
    "Payment for \"Premium\" plan",
    "Chukwu & Sons <supplies>",
    "=1+2 refund",
    "+2348012345678 airtime",
    "-50% discount",
    "@payroll November",
    "Transfer to Adébáyọ̀ Ògúnlẹ́yẹ",
    "Rent (Q4) \\ Lekki office",
    "School fees, 2nd term\nline two",
    "₦5,000 top-up",
    "POS settlement",
    "Salary advance",
    "Being payment for the supply of 40 bags of cement, 12 tons of granite and the haulage of both to the Ikeja site, as agreed on 3 November",
    "\tTab first",
    "Ọjà Ọba market stall",
];

const NAMES: &[&str] = &[
    "Adébáyọ̀ Stores",
    "Chukwu & Sons Ltd",
    "O'Neil \"Big\" Ventures",
    "Zainab Bello",
    "Emeka Okafor, Jr.",
    "Ngozi <Ada> Eze",
    "Ìbàdàn Foods",
];

const BANKS: &[&str] = &[
    "Access Bank",
    "GTBank",
    "First Bank of Nigeria",
    "Zenith Bank",
    "Opay",
    "Moniepoint MFB",
    "Kobo",
];

/// xorshift64: small, fast, and plenty for test data.
pub struct Rng(u64);

impl Rng {
    /// Any seed, zero included (xorshift's state must not be zero).
    pub fn new(seed: u64) -> Rng {
        // One round of splitmix64 spreads nearby seeds apart.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Rng(if z == 0 { 1 } else { z })
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// A number in `low..=high`.
    pub fn between(&mut self, low: i64, high: i64) -> i64 {
        let span = high.abs_diff(low) + 1;
        low + self.below(span) as i64
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    fn code(&mut self, length: usize) -> String {
        const ALPHABET: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
        (0..length)
            .map(|_| char::from(*self.pick(ALPHABET)))
            .collect()
    }

    fn digits(&mut self, length: usize) -> String {
        (0..length)
            .map(|_| char::from(b'0' + self.below(10) as u8))
            .collect()
    }

    fn uuid(&mut self) -> String {
        let (a, b) = (self.next_u64(), self.next_u64());
        format!(
            "{:08x}-{:04x}-4{:03x}-{:x}{:03x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            8 + (b >> 62),
            (b >> 48) & 0xfff,
            b & 0xffff_ffff_ffff
        )
    }

    /// Kobo, anywhere from one kobo to five million naira, mostly in between.
    fn amount(&mut self) -> i64 {
        match self.below(4) {
            0 => self.between(1, 10_000),
            1 | 2 => self.between(10_000, 20_000_000),
            _ => self.between(20_000_000, 500_000_000),
        }
    }
}

/// The bank every sample is from; `bic` leaves the BIC out on some seeds, to show both ways.
pub fn bank(with_bic: bool) -> Bank {
    Bank {
        name: "Kobo".into(),
        code: "090999".into(),
        bic: with_bic.then(|| "KOBONGLA".into()),
    }
}

/// A statement of `lines` lines that reconciles, for a month of Lagos days chosen by `seed`.
pub fn statement(seed: u64, lines: usize) -> Statement {
    let mut rng = Rng::new(seed);
    let from = NaiveDate::from_ymd_opt(2026, 1 + rng.below(11) as u32, 1).expect("a valid day");
    let to = from + Duration::days(29);
    let start = lagos::start_of_day(from).with_timezone(&Utc);
    let seconds = (lagos::end_of_day(to).with_timezone(&Utc) - start).num_seconds();

    let times = times(&mut rng, start, seconds, lines);

    let opening_balance = rng.between(0, 10_000_000_000);
    let mut balance = opening_balance;
    let mut statement = Statement {
        bank: bank(seed.is_multiple_of(2)),
        business_name: "Adébáyọ̀ & Daughters Trading Ltd".into(),
        account_number: format!("01{}", rng.digits(8)),
        account_name: "Adébáyọ̀ & Daughters (Operations)".into(),
        currency: "NGN".into(),
        from,
        to,
        opening_balance,
        closing_balance: 0,
        total_credits: 0,
        total_debits: 0,
        credit_count: 0,
        debit_count: 0,
        generated_at: lagos::end_of_day(to).with_timezone(&Utc) + Duration::hours(9),
        lines: Vec::with_capacity(lines),
    };
    let offset = rng.below(NARRATIONS.len() as u64) as usize;
    let mut told = 0;
    for at in times {
        let (kind, category, channel, amount) = movement(&mut rng, balance);
        let narration = if category == "fee" {
            "NIP transfer fee incl. VAT".to_string()
        } else {
            told += 1;
            NARRATIONS[(offset + told) % NARRATIONS.len()].to_string()
        };
        let counterparty = (category != "fee").then(|| Counterparty {
            account_number: rng.digits(10),
            account_name: rng.pick(NAMES).to_string(),
            bank_name: rng.pick(BANKS).to_string(),
        });
        match kind {
            Direction::Credit => {
                balance += amount;
                statement.total_credits += amount;
                statement.credit_count += 1;
            }
            Direction::Debit => {
                balance -= amount;
                statement.total_debits += amount;
                statement.debit_count += 1;
            }
        }
        let prefix = match category {
            "collection" => "COL",
            "reversal" => "REV",
            "fee" => "FEE",
            _ => "TRF",
        };
        statement.lines.push(Line {
            id: rng.uuid(),
            reference_number: format!(
                "{prefix}-{}-{}",
                lagos::date(at).format("%Y%m%d"),
                rng.code(10)
            ),
            at,
            kind,
            amount,
            balance_after: balance,
            narration,
            category: category.into(),
            status: if rng.below(12) == 0 {
                "pending"
            } else {
                "success"
            }
            .into(),
            channel: channel.into(),
            counterparty,
        });
    }
    statement.closing_balance = balance;
    statement
}

/// `lines` times in the `seconds` from `start`, in order; on some seeds the first and last
/// minutes of the period: 00:00 Lagos is 23:00 UTC the day before, which is where day
/// boundaries go wrong.
fn times(rng: &mut Rng, start: DateTime<Utc>, seconds: i64, lines: usize) -> Vec<DateTime<Utc>> {
    let mut times: Vec<DateTime<Utc>> = (0..lines)
        .map(|_| start + Duration::seconds(rng.between(0, seconds)))
        .collect();
    if lines >= 2 && rng.below(2) == 0 {
        times[0] = start + Duration::seconds(rng.between(0, 59));
        times[1] = start + Duration::seconds(seconds - rng.between(0, 59));
    }
    times.sort();
    times
}

/// A line's direction, category, channel and amount, never more out than `balance` holds (no
/// overdrafts in the samples: a debit the balance cannot cover becomes a credit).
fn movement(rng: &mut Rng, balance: i64) -> (Direction, &'static str, &'static str, i64) {
    let (mut kind, category, channel) = match rng.below(10) {
        0..=3 => (Direction::Credit, "collection", "nip"),
        4..=6 => (Direction::Debit, "transfer", *rng.pick(&["api", "web"])),
        7 => (Direction::Debit, "fee", "system"),
        8 => (Direction::Credit, "reversal", "system"),
        _ => (Direction::Credit, "transfer", "nip"),
    };
    let mut amount = if category == "fee" {
        *rng.pick(&[1_075, 2_688, 5_375])
    } else {
        rng.amount()
    };
    if kind == Direction::Debit && amount > balance {
        kind = Direction::Credit;
        amount = rng.amount();
    }
    let category = if category == "fee" && kind == Direction::Credit {
        "collection"
    } else {
        category
    };
    (kind, category, channel, amount)
}

/// A transfer receipt.
pub fn receipt(seed: u64) -> Receipt {
    let mut rng = Rng::new(seed ^ 0x5EED);
    let day = NaiveDate::from_ymd_opt(2026, 1 + rng.below(12) as u32, 1 + rng.below(28) as u32)
        .expect("a valid day");
    let at =
        lagos::start_of_day(day).with_timezone(&Utc) + Duration::seconds(rng.between(0, 86_399));
    let fee = *rng.pick(&[1_000, 2_500, 5_000]);
    let session = format!(
        "090999{}{}",
        lagos::time(at).format("%y%m%d%H%M%S"),
        rng.digits(12)
    );
    Receipt {
        bank: bank(seed.is_multiple_of(2)),
        reference_number: format!("TRF-{}-{}", lagos::date(at).format("%Y%m%d"), rng.code(10)),
        session_id: Some(session),
        at,
        status: "success".into(),
        amount: rng.amount(),
        fee,
        // 7.5% VAT on the fee, rounded half up.
        vat: (fee * 75 + 500) / 1000,
        narration: NARRATIONS[rng.below(NARRATIONS.len() as u64) as usize].into(),
        source: Source {
            business_name: "Adébáyọ̀ & Daughters Trading Ltd".into(),
            account_number: format!("01{}", rng.digits(8)),
            account_name: "Adébáyọ̀ & Daughters (Operations)".into(),
        },
        beneficiary: Counterparty {
            account_number: rng.digits(10),
            account_name: rng.pick(NAMES).to_string(),
            bank_name: rng.pick(BANKS).to_string(),
        },
        generated_at: at + Duration::seconds(rng.between(1, 600)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_statement() {
        assert_eq!(statement(42, 50), statement(42, 50));
        assert_ne!(statement(42, 50), statement(43, 50));
        assert_eq!(receipt(9), receipt(9));
    }

    #[test]
    fn a_long_statement_has_every_narration() {
        let statement = statement(1, 120);
        for narration in NARRATIONS {
            assert!(
                statement
                    .lines
                    .iter()
                    .any(|line| line.narration == *narration),
                "{narration:?}"
            );
        }
        assert!(statement.lines.iter().any(|line| line.is_pending()));
        assert!(statement
            .lines
            .iter()
            .any(|line| line.counterparty.is_none()));
    }

    #[test]
    fn uuids_look_like_uuids() {
        let mut rng = Rng::new(0);
        for _ in 0..100 {
            let id = rng.uuid();
            assert_eq!(id.len(), 36, "{id}");
            assert_eq!(id.matches('-').count(), 4, "{id}");
            assert_eq!(&id[14..15], "4");
        }
    }
}
