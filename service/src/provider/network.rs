//! A provider over the network: [`CoreBanking`] through the client generated from
//! `spec/provider.yaml` (`provider-client`), to `kobo-provider` or a real adapter of the same
//! document (`kobo serve --provider-url`).
//!
//! Each NIP code comes back as what the in-process sandbox would have said, so the bank above
//! behaves the same on both:
//!
//! | call | `00` | refused (`Refused`) | not known (`Unavailable`: never reversed) |
//! |---|---|---|---|
//! | identity | the name | `05`, `07`, `12` | the rest |
//! | name enquiry | the holder | `06` (`07` is no holder) | the rest |
//! | screening | accepted | `05`, `13`, `57`, `61` | the rest |
//! | transfer, status | `Success` | `Failed`: `03`, `05`, `06`, `07`, `12`, `13`, `51`, `57`, `61` | `Pending` for `01`, `09`; `Unavailable` for the rest, `26` among them |
//!
//! A transfer is final only on `00` or a definite refusal; a lost answer, a timeout or a `97`
//! leaves it pending, asked again later. A status query answered `25` (the provider never
//! received it) submits it again: the provider deduplicates by payment reference, so a
//! submission still on its way is not sent twice.
//!
//! Calls that could not connect are retried at once, twice, with the same request. After
//! [`BREAKER_THRESHOLD`] calls in a row that found the provider down, the circuit opens: for
//! [`BREAKER_COOLDOWN`] every call answers `Unavailable` (`80` to the API's callers) without
//! waiting for a timeout; then calls go out again, and the first that finds the provider down
//! opens the circuit again at once.

use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use provider_client::{error_envelope, types, ApiError, Provider};
use serde_json::json;

use super::sandbox;
use super::{new_session_id, KOBO_INSTITUTION};
use super::{
    AccountOpening, BankInfo, BoxFuture, CoreBanking, Holder, IdentityNumbers, NipOutcome,
    NipTransfer, ProviderError, VerifiedIdentity,
};
use crate::kernel::clock::Clock;

/// Calls in a row that found the provider down before the circuit opens.
pub const BREAKER_THRESHOLD: u32 = 5;
/// How long an open circuit answers at once.
pub const BREAKER_COOLDOWN: Duration = Duration::from_secs(10);
/// How long one call may take (connection and answer).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// NIP's channel code for a third-party payment platform.
const CHANNEL: u8 = 7;

/// The provider at a URL, with the shared secret as its bearer token.
pub struct NetworkProvider {
    client: provider_client::Client,
    clock: Clock,
    breaker: Mutex<Breaker>,
}

#[derive(Default)]
struct Breaker {
    failures: u32,
    open_until: Option<Instant>,
}

/// What one call came to.
enum Answer<T> {
    Done(T),
    /// The provider answered this code (not `00`) with this message.
    Code(String, String),
    /// No answer that says anything: down, timed out, or an answer that does not read.
    Down(String),
}

impl NetworkProvider {
    /// The provider at `url`: over TLS when it is `https://` (through [`super::tls`], its
    /// certificate checked against `ca_file`'s roots, or the Mozilla roots without one).
    pub async fn connect(
        url: &str,
        secret: &str,
        ca_file: Option<&std::path::Path>,
        clock: Clock,
    ) -> anyhow::Result<NetworkProvider> {
        let parsed = url::Url::parse(url)?;
        if parsed.scheme() != "https" {
            return NetworkProvider::new(url, secret, clock);
        }
        let mut origin = parsed.clone();
        origin.set_path("");
        origin.set_query(None);
        let local = super::tls::forward(&origin, super::tls::roots(ca_file)?).await?;
        let prefix = parsed.path().trim_end_matches('/');
        NetworkProvider::new(&format!("{local}{prefix}"), secret, clock)
    }

    /// The provider at a plain `http://` URL.
    pub fn new(url: &str, secret: &str, clock: Clock) -> anyhow::Result<NetworkProvider> {
        let client = Provider::new(url)
            .with_token(secret)
            .with_timeout(CALL_TIMEOUT)
            .build()
            .map_err(|error| anyhow::anyhow!("the provider's client: {error}"))?;
        Ok(NetworkProvider {
            client,
            clock,
            breaker: Mutex::default(),
        })
    }

    fn breaker(&self) -> std::sync::MutexGuard<'_, Breaker> {
        self.breaker
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Sends one request (again, when it could not connect), through the circuit.
    async fn call<T, F, Fut>(&self, what: &str, send: F) -> Answer<T>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, ApiError>>,
    {
        if let Some(until) = self.breaker().open_until {
            if Instant::now() < until {
                return Answer::Down(format!(
                    "The core banking provider is unavailable ({what}): retry later"
                ));
            }
        }
        let mut attempt = 0;
        let answer = loop {
            match send().await {
                Ok(value) => break Answer::Done(value),
                Err(ApiError::CommunicationError(error)) if error.is_connect() && attempt < 2 => {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(50 << attempt)).await;
                }
                Err(error) => break answer_of(what, &error),
            }
        };
        let mut breaker = self.breaker();
        match &answer {
            Answer::Down(reason) => {
                breaker.failures += 1;
                if breaker.failures >= BREAKER_THRESHOLD {
                    tracing::warn!(failures = breaker.failures, %reason, "the provider's circuit opens");
                    breaker.open_until = Some(Instant::now() + BREAKER_COOLDOWN);
                }
            }
            _ => *breaker = Breaker::default(),
        }
        answer
    }
}

/// A failed call, read: the envelope's code, or down.
fn answer_of<T>(what: &str, error: &ApiError) -> Answer<T> {
    match error_envelope(error) {
        Some(envelope) => {
            Answer::Code(envelope.response_code.to_string(), envelope.message.clone())
        }
        None => {
            tracing::warn!(%error, what, "the provider did not answer");
            Answer::Down(format!(
                "The core banking provider did not answer ({what}): retry later"
            ))
        }
    }
}

fn down(reason: String) -> ProviderError {
    ProviderError::Unavailable(reason)
}

/// A refusal for `refused` codes, else the provider is taken as down (`63`, a wrong secret,
/// is logged: it is the operator's to fix).
fn refused_or_down(code: &str, message: String, refused: &[&str]) -> ProviderError {
    if refused.contains(&code) {
        return ProviderError::Refused(message);
    }
    if code == "63" {
        tracing::error!("the provider refuses Kobo's secret (63): check --provider-secret-file");
    }
    down(format!(
        "The core banking provider answered {code}: {message}"
    ))
}

/// A call that moves no money, settled: its value, a refusal for the `refused` codes, or the
/// provider down.
fn settled<T>(answer: Answer<T>, refused: &[&str]) -> Result<T, ProviderError> {
    match answer {
        Answer::Done(value) => Ok(value),
        Answer::Code(code, message) => Err(refused_or_down(&code, message, refused)),
        Answer::Down(reason) => Err(down(reason)),
    }
}

/// Naira with two decimals, as NIP writes amounts.
fn naira(kobo: i64) -> String {
    format!("{}.{:02}", kobo / 100, kobo % 100)
}

/// A request body of the document's types, from JSON (its patterns checked on the way).
fn body<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<T, ProviderError> {
    serde_json::from_value(value)
        .map_err(|error| ProviderError::Refused(format!("cannot be sent over NIP: {error}")))
}

/// A transfer's message that could not be written was never sent: its outcome is not known,
/// and it is never reversed blindly.
fn unsent(error: ProviderError) -> ProviderError {
    match error {
        ProviderError::Refused(message) | ProviderError::Unavailable(message) => down(message),
    }
}

fn funds_transfer(transfer: &NipTransfer) -> Result<types::FundsTransferRequest, ProviderError> {
    let clip = |text: &str| text.chars().take(100).collect::<String>();
    body(json!({
        "destination_institution_code": transfer.bank_code,
        "channel_code": CHANNEL,
        "beneficiary_account_number": transfer.beneficiary_account_number,
        "beneficiary_account_name": clip(&transfer.beneficiary_account_name),
        "originator_account_number": transfer.source_account_number,
        "originator_account_name": clip(&transfer.originator_account_name),
        "narration": clip(&transfer.narration),
        "payment_reference": transfer.reference_number,
        "amount": naira(transfer.amount_kobo),
    }))
}

/// What NIP said of a transfer, as the sandbox would say it.
fn outcome_of(answer: Answer<types::TransferStatusEnvelope>) -> Result<NipOutcome, ProviderError> {
    const FAILED: &[&str] = &["03", "05", "06", "07", "12", "13", "51", "57", "61"];
    match answer {
        Answer::Done(envelope) => Ok(NipOutcome::Success {
            session_id: envelope.data.session_id.to_string(),
        }),
        Answer::Code(code, _) if code == "01" || code == "09" => {
            Ok(NipOutcome::Pending { session_id: None })
        }
        Answer::Code(code, message) if FAILED.contains(&code.as_str()) => Ok(NipOutcome::Failed {
            session_id: None,
            reason: message,
        }),
        Answer::Code(code, message) => {
            if code == "26" {
                tracing::error!(%code, %message, "the provider knows the reference as another transfer: it stays pending");
            }
            Err(down(format!(
                "The transfer's outcome is not known yet ({code}): {message}"
            )))
        }
        Answer::Down(reason) => Err(down(reason)),
    }
}

impl CoreBanking for NetworkProvider {
    fn banks(&self) -> Vec<BankInfo> {
        sandbox::BANKS.to_vec()
    }

    fn verify_identity<'a>(
        &'a self,
        numbers: &'a IdentityNumbers,
    ) -> BoxFuture<'a, Result<VerifiedIdentity, ProviderError>> {
        Box::pin(async move {
            let request: types::VerifyIdentityRequest =
                body(json!({"bvn": numbers.bvn, "nin": numbers.nin}))?;
            let send = || async {
                let answer = self
                    .client
                    .verify_identity()
                    .body(request.clone())
                    .send()
                    .await?;
                Ok(answer.into_inner().data.name)
            };
            let name = settled(self.call("identity", send).await, &["05", "07", "12"])?;
            Ok(VerifiedIdentity { name })
        })
    }

    fn open_account<'a>(
        &'a self,
        opening: &'a AccountOpening<'a>,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        Box::pin(async move {
            let request: types::OpenAccountRequest = body(json!({
                "business_id": opening.business_id,
                "account_name": opening.account_name,
                "account_type": opening.account_type,
            }))?;
            let send = || async {
                self.client
                    .open_account()
                    .body(request.clone())
                    .send()
                    .await?;
                Ok(())
            };
            settled(self.call("account opening", send).await, &["12", "57"])
        })
    }

    fn name_enquiry<'a>(
        &'a self,
        bank_code: &'a str,
        account_number: &'a str,
    ) -> BoxFuture<'a, Result<Option<Holder>, ProviderError>> {
        Box::pin(async move {
            let request: types::NameEnquiryRequest = match body(json!({
                "session_id": new_session_id(KOBO_INSTITUTION, self.clock.now()),
                "destination_institution_code": bank_code,
                "channel_code": CHANNEL,
                "account_number": account_number,
            })) {
                Ok(request) => request,
                // Not a NUBAN or not an institution code: no such account.
                Err(_) => return Ok(None),
            };
            let send = || async {
                let answer = self
                    .client
                    .name_enquiry()
                    .body(request.clone())
                    .send()
                    .await?;
                Ok(answer.into_inner().data)
            };
            let found = match self.call("name enquiry", send).await {
                Answer::Code(code, _) if code == "07" => return Ok(None),
                answer => settled(answer, &["06"])?,
            };
            Ok(Some(Holder {
                account_name: found.account_name,
                bvn: found.bvn,
                kyc: u8::try_from(found.kyc_level.get()).unwrap_or(1),
            }))
        })
    }

    fn screen_transfer<'a>(
        &'a self,
        transfer: &'a NipTransfer,
    ) -> BoxFuture<'a, Result<(), ProviderError>> {
        Box::pin(async move {
            let request = funds_transfer(transfer)?;
            let send = || async {
                self.client
                    .screen_transfer()
                    .body(request.clone())
                    .send()
                    .await?;
                Ok(())
            };
            settled(
                self.call("screening", send).await,
                &["05", "13", "57", "61"],
            )
        })
    }

    fn submit_transfer<'a>(
        &'a self,
        transfer: &'a NipTransfer,
    ) -> BoxFuture<'a, Result<NipOutcome, ProviderError>> {
        Box::pin(async move {
            let request = funds_transfer(transfer).map_err(unsent)?;
            let send = || async {
                let answer = self
                    .client
                    .funds_transfer()
                    .body(request.clone())
                    .send()
                    .await?;
                Ok(answer.into_inner())
            };
            outcome_of(self.call("transfer", send).await)
        })
    }

    fn transfer_status<'a>(
        &'a self,
        transfer: &'a NipTransfer,
    ) -> BoxFuture<'a, Result<NipOutcome, ProviderError>> {
        Box::pin(async move {
            let request: types::StatusQueryRequest = body(json!({
                "payment_reference": transfer.reference_number,
                "source_institution_code": KOBO_INSTITUTION,
                "channel_code": CHANNEL,
            }))
            .map_err(unsent)?;
            let send = || async {
                let answer = self
                    .client
                    .transaction_status_query()
                    .body(request.clone())
                    .send()
                    .await?;
                Ok(answer.into_inner())
            };
            match self.call("status query", send).await {
                // The provider never received it: sent again under the same reference, which
                // the provider deduplicates, so a submission still on its way is not doubled.
                Answer::Code(code, _) if code == "25" => {
                    tracing::warn!(
                        reference = %transfer.reference_number,
                        "the provider does not know a transfer: it is submitted again"
                    );
                    self.submit_transfer(transfer).await
                }
                answer => outcome_of(answer),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::*;

    /// A provider that takes each connection and closes it unanswered; counts them.
    async fn silent_provider() -> (String, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                drop(socket);
            }
        });
        (url, accepted)
    }

    fn enquiry(provider: &NetworkProvider) -> BoxFuture<'_, Result<Option<Holder>, ProviderError>> {
        provider.name_enquiry("000013", "0123456788")
    }

    /// After five calls that found the provider down, the circuit answers at once, without a
    /// connection, until its cooldown ends.
    #[tokio::test]
    async fn the_circuit_opens_after_five_failures_and_answers_at_once() {
        let (url, accepted) = silent_provider().await;
        let secret = "whsec_c2VjcmV0IHNlY3JldCBzZWNyZXQ=";
        let provider = NetworkProvider::new(&url, secret, Clock::system()).unwrap();
        for _ in 0..BREAKER_THRESHOLD {
            assert!(matches!(
                enquiry(&provider).await,
                Err(ProviderError::Unavailable(_))
            ));
        }
        let reached = accepted.load(Ordering::SeqCst);
        assert!(reached >= BREAKER_THRESHOLD as usize, "{reached}");
        let started = Instant::now();
        for _ in 0..20 {
            assert!(matches!(
                enquiry(&provider).await,
                Err(ProviderError::Unavailable(_))
            ));
        }
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            reached,
            "no call left the process"
        );
        assert!(started.elapsed() < BREAKER_COOLDOWN);
        // The cooldown over, one call goes out again.
        provider.breaker().open_until = Some(Instant::now());
        let _ = enquiry(&provider).await;
        assert!(accepted.load(Ordering::SeqCst) > reached);
    }

    /// A status query the provider answers `25` (it never received the transfer) submits the
    /// transfer again, and its outcome is the answer: here `kobo-provider`'s in this process.
    #[tokio::test]
    async fn a_transfer_the_provider_never_received_is_submitted_again() {
        let dir = tempfile::tempdir().unwrap();
        let secret = "whsec_c2VjcmV0IHNlY3JldCBzZWNyZXQ=";
        let clock = Clock::system();
        let simulator = crate::simulator::Simulator {
            sandbox: crate::provider::sandbox::SandboxProvider::new(clock.clone()),
            provider: Arc::new(crate::provider::sandbox::SandboxProvider::new(
                clock.clone(),
            )),
            state: crate::simulator::State::open(dir.path()).await.unwrap(),
            clock: clock.clone(),
            secret: secret.to_owned(),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let app = provider_server::router(Arc::new(simulator));
        tokio::spawn(async move {
            let service = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
            axum::serve(listener, service).await.unwrap();
        });
        let provider = NetworkProvider::new(&url, secret, clock).unwrap();
        let transfer = transfer("TRF-20261127-NEVER1");
        let first = provider.transfer_status(&transfer).await.unwrap();
        assert!(matches!(first, NipOutcome::Success { .. }), "{first:?}");
        // Known now: the same answer, from a status query.
        assert_eq!(provider.transfer_status(&transfer).await.unwrap(), first);
    }

    /// NGN 1,500.00 from Adaeze Foods to the sandbox's external account, under `reference`.
    fn transfer(reference: &str) -> NipTransfer {
        NipTransfer {
            reference_number: reference.into(),
            source_account_number: "1000000014".into(),
            originator_account_name: "Adaeze Foods Ltd".into(),
            beneficiary_account_number: "0123456788".into(),
            beneficiary_account_name: "Emeka Nwosu".into(),
            bank_code: "000013".into(),
            amount_kobo: 150_000,
            narration: "Invoice".into(),
        }
    }

    /// Nothing listening: each call is tried three times, then answers `Unavailable`.
    #[tokio::test]
    async fn a_refused_connection_is_retried_then_unavailable() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let secret = "whsec_c2VjcmV0IHNlY3JldCBzZWNyZXQ=";
        let provider =
            NetworkProvider::new(&format!("http://127.0.0.1:{port}"), secret, Clock::system())
                .unwrap();
        let transfer = transfer("TRF-20261127-ABCDEF");
        // A lost submission is not known: never a failure that would reverse it.
        assert!(matches!(
            provider.submit_transfer(&transfer).await,
            Err(ProviderError::Unavailable(_))
        ));
    }

    #[test]
    fn amounts_are_naira_with_two_decimals() {
        assert_eq!(naira(150_000), "1500.00");
        assert_eq!(naira(5), "0.05");
        assert_eq!(naira(1_000_050), "10000.50");
    }
}
