//! Fault injection: a provider that wraps another and fails on command, the way NIP fails in
//! production: unavailable before anything happens, a timeout after a transfer was submitted
//! (the outcome unknown), status queries that cannot answer, and slowness.
//!
//! Two ways to turn faults on, which add up:
//! - switches ([`Faults`]' `AtomicBool`s), flipped by tests at run time; every one is off by
//!   default;
//! - seeded random rates ([`FaultRates`]), which `kobo serve` reads from `--sandbox-faults` /
//!   `KOBO_SANDBOX_FAULTS` in the sandbox: each call fails with its fault's probability, drawn
//!   from a generator seeded by `seed`, so a run's sequence of faults can be had again.

use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::{
    AccountOpening, BankInfo, BoxFuture, CoreBanking, Holder, IdentityNumbers, NipOutcome,
    NipTransfer, ProviderError, VerifiedIdentity,
};

/// Parts per million: a probability without floating point (`0.05` is 50 000).
const MILLION: u64 = 1_000_000;
/// The most latency a configuration may add to each call.
const MAX_LATENCY_MS: u64 = 60_000;

/// Random faults, as `kobo serve --sandbox-faults` configures them: each rate is the
/// probability (0 to 1, at most six fraction digits) that one call meets the fault.
///
/// The syntax is `name=value` pairs separated by commas, every one optional:
/// `unavailable=0.1,refuse=0.01,timeout_after_submit=0.05,status_unknown=0.2,latency_ms=200,seed=7`.
///
/// - `unavailable`: any call answers "unavailable" (`80`) before doing anything;
/// - `refuse`: identity checks, account openings and transfer screening answer "refused" (`83`);
/// - `timeout_after_submit`: a NIP submission goes out, then the answer is lost;
/// - `status_unknown`: a NIP status query cannot answer;
/// - `latency_ms`: every call first waits this long (at most 60000);
/// - `seed`: the generator's seed (default: random, and logged at startup).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultRates {
    /// Each rate in parts per million.
    pub unavailable: u32,
    pub refuse: u32,
    pub timeout_after_submit: u32,
    pub status_unknown: u32,
    pub latency: Duration,
    pub seed: Option<u64>,
}

impl FaultRates {
    /// True when no rate and no latency is set (the seed alone does nothing).
    pub fn is_none(&self) -> bool {
        self.unavailable == 0
            && self.refuse == 0
            && self.timeout_after_submit == 0
            && self.status_unknown == 0
            && self.latency.is_zero()
    }
}

/// A probability as parts per million: `0`, `1`, `0.05`, `1.0`; at most six fraction digits.
fn parse_rate(name: &str, text: &str) -> Result<u32, String> {
    let bad = || {
        format!(
            "`{name}={text}`: a rate is a probability from 0 to 1 with at most six fraction \
             digits, such as 0.05"
        )
    };
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) || fraction.len() > 6 {
        return Err(bad());
    }
    let whole: u64 = whole.parse().map_err(|_| bad())?;
    let fraction: u64 = if fraction.is_empty() {
        0
    } else {
        format!("{fraction:0<6}").parse().map_err(|_| bad())?
    };
    let ppm = whole
        .checked_mul(MILLION)
        .and_then(|w| w.checked_add(fraction))
        .ok_or_else(bad)?;
    if ppm > MILLION {
        return Err(bad());
    }
    u32::try_from(ppm).map_err(|_| bad())
}

impl FromStr for FaultRates {
    type Err = String;

    /// Parses the documented syntax; the error names the offending pair and what is allowed.
    fn from_str(text: &str) -> Result<FaultRates, String> {
        let mut rates = FaultRates::default();
        let mut seen = std::collections::BTreeSet::new();
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((name, value)) = pair.split_once('=') else {
                return Err(format!("`{pair}`: expected name=value"));
            };
            let (name, value) = (name.trim(), value.trim());
            if !seen.insert(name.to_owned()) {
                return Err(format!("`{name}` is given twice"));
            }
            match name {
                "unavailable" => rates.unavailable = parse_rate(name, value)?,
                "refuse" => rates.refuse = parse_rate(name, value)?,
                "timeout_after_submit" => rates.timeout_after_submit = parse_rate(name, value)?,
                "status_unknown" => rates.status_unknown = parse_rate(name, value)?,
                "latency_ms" => {
                    let ms: u64 = value
                        .parse()
                        .ok()
                        .filter(|ms| *ms <= MAX_LATENCY_MS)
                        .ok_or_else(|| {
                            format!(
                                "`latency_ms={value}`: whole milliseconds from 0 to {MAX_LATENCY_MS}"
                            )
                        })?;
                    rates.latency = Duration::from_millis(ms);
                }
                "seed" => {
                    rates.seed = Some(value.parse().map_err(|_| {
                        format!("`seed={value}`: a whole number from 0 to {}", u64::MAX)
                    })?)
                }
                other => {
                    return Err(format!(
                        "`{other}`: unknown fault; the faults are unavailable, refuse, \
                         timeout_after_submit, status_unknown, latency_ms and seed"
                    ))
                }
            }
        }
        Ok(rates)
    }
}

impl std::fmt::Display for FaultRates {
    /// The configuration in the syntax it is parsed from (rates as decimals).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rate = |ppm: u32| {
            let text = format!("{}.{:06}", ppm / 1_000_000, ppm % 1_000_000);
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        };
        write!(
            f,
            "unavailable={},refuse={},timeout_after_submit={},status_unknown={},latency_ms={}",
            rate(self.unavailable),
            rate(self.refuse),
            rate(self.timeout_after_submit),
            rate(self.status_unknown),
            self.latency.as_millis()
        )?;
        if let Some(seed) = self.seed {
            write!(f, ",seed={seed}")?;
        }
        Ok(())
    }
}

/// Which faults are on.
#[derive(Debug, Default)]
pub struct Faults {
    /// Every call answers `Unavailable` before doing anything.
    pub down: AtomicBool,
    /// Identity checks, account openings and transfer screening answer `Refused`.
    pub refuse: AtomicBool,
    /// `submit_transfer` submits, then answers `Unavailable`: the transfer went out, the caller
    /// does not know it.
    pub timeout_after_submit: AtomicBool,
    /// `transfer_status` answers `Unavailable`.
    pub status_unknown: AtomicBool,
    /// Random faults on top of the switches (none by default).
    rates: FaultRates,
    /// The generator's state (xorshift64*; never 0).
    state: AtomicU64,
}

impl Faults {
    pub fn set(flag: &AtomicBool, on: bool) {
        flag.store(on, Ordering::SeqCst);
    }

    fn on(flag: &AtomicBool) -> bool {
        flag.load(Ordering::SeqCst)
    }

    /// Faults at random with `rates` (every switch off). `rates.seed` must be set: the caller
    /// chooses (and logs) a random one when the configuration has none.
    pub fn random(rates: FaultRates, seed: u64) -> Faults {
        Faults {
            rates,
            state: AtomicU64::new(seed | 1),
            ..Faults::default()
        }
    }

    pub fn rates(&self) -> FaultRates {
        self.rates
    }

    /// The next number of the seeded generator (xorshift64*), shared by every call.
    fn next(&self) -> u64 {
        let step = |mut x: u64| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x
        };
        let previous = self
            .state
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |x| Some(step(x)))
            .unwrap_or(1);
        step(previous).wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// True with probability `ppm` parts per million (never draws for a rate of 0).
    fn draw(&self, ppm: u32) -> bool {
        ppm > 0 && self.next() % MILLION < u64::from(ppm)
    }

    fn unavailable(&self) -> bool {
        Faults::on(&self.down) || self.draw(self.rates.unavailable)
    }

    fn refusing(&self) -> bool {
        Faults::on(&self.refuse) || self.draw(self.rates.refuse)
    }

    fn losing_submission(&self) -> bool {
        Faults::on(&self.timeout_after_submit) || self.draw(self.rates.timeout_after_submit)
    }

    fn status_lost(&self) -> bool {
        Faults::on(&self.status_unknown) || self.draw(self.rates.status_unknown)
    }

    async fn delay(&self) {
        if !self.rates.latency.is_zero() {
            tokio::time::sleep(self.rates.latency).await;
        }
    }
}

/// `inner`, failing as `faults` say.
pub struct FaultyProvider {
    pub inner: Arc<dyn CoreBanking>,
    pub faults: Arc<Faults>,
}

fn unavailable() -> ProviderError {
    ProviderError::Unavailable("The provider did not answer (injected fault)".into())
}

impl FaultyProvider {
    /// The injected failure of a call that may be refused, if any (after the latency).
    async fn refusal(&self) -> Option<ProviderError> {
        self.faults.delay().await;
        if self.faults.unavailable() {
            Some(unavailable())
        } else if self.faults.refusing() {
            Some(ProviderError::Refused(
                "The provider refused the request (injected fault)".into(),
            ))
        } else {
            None
        }
    }

    /// The injected failure of a call that cannot be refused, if any (after the latency).
    async fn outage(&self) -> Option<ProviderError> {
        self.faults.delay().await;
        self.faults.unavailable().then(unavailable)
    }
}

impl CoreBanking for FaultyProvider {
    fn verify_identity<'a>(
        &'a self,
        numbers: &'a IdentityNumbers,
    ) -> BoxFuture<'a, Result<VerifiedIdentity, ProviderError>> {
        Box::pin(async move {
            if let Some(error) = self.refusal().await {
                return Err(error);
            }
            self.inner.verify_identity(numbers).await
        })
    }

    fn open_account<'a>(
        &'a self,
        opening: &'a AccountOpening<'a>,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        Box::pin(async move {
            if let Some(error) = self.refusal().await {
                return Err(error);
            }
            self.inner.open_account(opening).await
        })
    }

    fn banks(&self) -> Vec<BankInfo> {
        self.inner.banks()
    }

    fn name_enquiry<'a>(
        &'a self,
        bank_code: &'a str,
        account_number: &'a str,
    ) -> BoxFuture<'a, Result<Option<Holder>, ProviderError>> {
        Box::pin(async move {
            if let Some(error) = self.outage().await {
                return Err(error);
            }
            self.inner.name_enquiry(bank_code, account_number).await
        })
    }

    fn screen_transfer<'a>(
        &'a self,
        transfer: &'a NipTransfer,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        Box::pin(async move {
            if let Some(error) = self.refusal().await {
                return Err(error);
            }
            self.inner.screen_transfer(transfer).await
        })
    }

    fn submit_transfer<'a>(
        &'a self,
        transfer: &'a NipTransfer,
    ) -> BoxFuture<'a, Result<NipOutcome, ProviderError>> {
        Box::pin(async move {
            if let Some(error) = self.outage().await {
                return Err(error);
            }
            let outcome = self.inner.submit_transfer(transfer).await;
            if self.faults.losing_submission() {
                return Err(unavailable());
            }
            outcome
        })
    }

    fn transfer_status<'a>(
        &'a self,
        transfer: &'a NipTransfer,
    ) -> BoxFuture<'a, Result<NipOutcome, ProviderError>> {
        Box::pin(async move {
            if let Some(error) = self.outage().await {
                return Err(error);
            }
            if self.faults.status_lost() {
                return Err(unavailable());
            }
            self.inner.transfer_status(transfer).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::sandbox::SandboxProvider;

    #[test]
    fn the_syntax_parses_every_fault() {
        let rates: FaultRates = "unavailable=0.1, refuse=0, timeout_after_submit=0.05,\
                                 status_unknown=1,latency_ms=200,seed=7"
            .parse()
            .unwrap();
        assert_eq!(
            rates,
            FaultRates {
                unavailable: 100_000,
                refuse: 0,
                timeout_after_submit: 50_000,
                status_unknown: 1_000_000,
                latency: Duration::from_millis(200),
                seed: Some(7),
            }
        );
        assert_eq!(
            rates.to_string(),
            "unavailable=0.1,refuse=0,timeout_after_submit=0.05,status_unknown=1,latency_ms=200,seed=7"
        );
        assert_eq!(rates.to_string().parse::<FaultRates>().unwrap(), rates);
        assert_eq!("".parse::<FaultRates>().unwrap(), FaultRates::default());
        assert!(FaultRates::default().is_none());
        assert!("seed=3".parse::<FaultRates>().unwrap().is_none());
        assert_eq!(
            "unavailable=0.000001"
                .parse::<FaultRates>()
                .unwrap()
                .unavailable,
            1
        );
        assert_eq!(
            "unavailable=1.000000"
                .parse::<FaultRates>()
                .unwrap()
                .unavailable,
            1_000_000
        );
    }

    #[test]
    fn bad_input_is_refused_with_a_clear_error() {
        let error = |text: &str| text.parse::<FaultRates>().unwrap_err();
        assert!(
            error("unavailable=1.5").contains("from 0 to 1"),
            "{}",
            error("unavailable=1.5")
        );
        assert!(error("unavailable=-0.1").contains("`unavailable=-0.1`"));
        assert!(error("unavailable=0.1234567").contains("six fraction digits"));
        assert!(error("unavailable=.5").contains("probability"));
        assert!(error("unavailable=abc").contains("probability"));
        assert!(error("unavailable").contains("expected name=value"));
        assert!(error("down=0.1").contains("unknown fault"));
        assert!(error("down=0.1").contains("timeout_after_submit"));
        assert!(error("seed=1,seed=2").contains("given twice"));
        assert!(error("seed=-1").contains("whole number"));
        assert!(error("latency_ms=60001").contains("0 to 60000"));
        assert!(error("latency_ms=1.5").contains("whole milliseconds"));
    }

    fn transfer(n: usize) -> NipTransfer {
        NipTransfer {
            reference_number: format!("TRF-20261102-{n:06}"),
            source_account_number: "1000000014".into(),
            originator_account_name: "Ada Foods".into(),
            beneficiary_account_number: "0123456788".into(),
            beneficiary_account_name: "Emeka Nwosu".into(),
            bank_code: "000013".into(),
            amount_kobo: 100_000,
            narration: "Test".into(),
        }
    }

    /// How many of `calls` submissions and status queries answered `Unavailable`.
    async fn failures(faults: Arc<Faults>, calls: usize) -> (usize, usize) {
        let provider = FaultyProvider {
            inner: Arc::new(SandboxProvider::default()),
            faults,
        };
        let (mut submits, mut statuses) = (0, 0);
        for n in 0..calls {
            let transfer = transfer(n);
            submits += usize::from(provider.submit_transfer(&transfer).await.is_err());
            statuses += usize::from(provider.transfer_status(&transfer).await.is_err());
        }
        (submits, statuses)
    }

    #[tokio::test]
    async fn configured_rates_produce_their_faults() {
        // Certain faults, then none.
        let always: FaultRates = "timeout_after_submit=1,status_unknown=1".parse().unwrap();
        assert_eq!(
            failures(Arc::new(Faults::random(always, 7)), 50).await,
            (50, 50)
        );
        assert_eq!(
            failures(Arc::new(Faults::random(FaultRates::default(), 7)), 50).await,
            (0, 0)
        );
        // A rate of 0.2: about a fifth of 2000 calls (a binomial's 5 sigma is about 90).
        let some: FaultRates = "unavailable=0.2".parse().unwrap();
        let (submits, statuses) = failures(Arc::new(Faults::random(some, 7)), 2_000).await;
        assert!((310..=490).contains(&submits), "{submits}");
        // A status query draws once for `unavailable` and never for `status_unknown` (0).
        assert!((310..=490).contains(&statuses), "{statuses}");
        // The same seed gives the same faults; another seed other ones.
        let again = failures(Arc::new(Faults::random(some, 7)), 2_000).await;
        assert_eq!(again, (submits, statuses));
        let other = failures(Arc::new(Faults::random(some, 8)), 2_000).await;
        assert_ne!(other, (submits, statuses));
        // Refusals reach screening (83), never name enquiry.
        let refusing = FaultyProvider {
            inner: Arc::new(SandboxProvider::default()),
            faults: Arc::new(Faults::random("refuse=1".parse().unwrap(), 1)),
        };
        assert!(matches!(
            refusing.screen_transfer(&transfer(1)).await,
            Err(ProviderError::Refused(_))
        ));
        assert!(refusing
            .name_enquiry("000013", "0123456788")
            .await
            .unwrap()
            .is_some());
        // The switches still work, on top of the rates.
        let switched = Arc::new(Faults::random(FaultRates::default(), 1));
        Faults::set(&switched.status_unknown, true);
        assert_eq!(failures(switched, 10).await, (0, 10));
    }

    #[tokio::test(start_paused = true)]
    async fn latency_delays_every_call() {
        let provider = FaultyProvider {
            inner: Arc::new(SandboxProvider::default()),
            faults: Arc::new(Faults::random("latency_ms=250".parse().unwrap(), 1)),
        };
        let started = tokio::time::Instant::now();
        provider.name_enquiry("000013", "0123456788").await.unwrap();
        assert_eq!(started.elapsed(), Duration::from_millis(250));
    }
}
