//! Kobo's HTTP API as a partner sees it: JSON bodies, the envelope's `response_code`, and no
//! answer at all when a process dies under a request.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// What one request got back.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// An HTTP answer: its status, its JSON body (`Null` when it had none or was not JSON), the
    /// envelope's `response_code` and `Retry-After`.
    Answer {
        status: u16,
        code: String,
        body: Value,
        retry_after: Option<u64>,
        elapsed: Duration,
    },
    /// No answer: the connection was refused or broke, or the client's timeout passed.
    NoAnswer { error: String, elapsed: Duration },
}

impl Outcome {
    pub fn code(&self) -> Option<&str> {
        match self {
            Outcome::Answer { code, .. } => Some(code),
            Outcome::NoAnswer { .. } => None,
        }
    }

    /// Whether the request failed for the platform's reasons, not the caller's or the bank's:
    /// no answer, an answer that is not Kobo's envelope (a load balancer's error page), an
    /// internal error (`96`), the database unavailable (`97`) or a payment's outcome unknown
    /// (`98`).
    pub fn is_failure(&self) -> bool {
        matches!(self.code(), None | Some("" | "96" | "97" | "98"))
    }

    fn elapsed(&self) -> Duration {
        match self {
            Outcome::Answer { elapsed, .. } | Outcome::NoAnswer { elapsed, .. } => *elapsed,
        }
    }

    pub fn is(&self, wanted: &str) -> bool {
        self.code() == Some(wanted)
    }

    /// The envelope's `data` of a `00` answer.
    pub fn data(&self) -> Option<&Value> {
        match self {
            Outcome::Answer { code, body, .. } if code == "00" => body.get("data"),
            _ => None,
        }
    }

    /// A short form for the history file.
    pub fn summary(&self) -> Value {
        match self {
            Outcome::Answer {
                status,
                code,
                body,
                elapsed,
                ..
            } => serde_json::json!({
                "status": status,
                "code": code,
                "message": body.get("message"),
                "ms": elapsed.as_millis() as u64,
            }),
            Outcome::NoAnswer { error, elapsed } => serde_json::json!({
                "no_answer": error,
                "ms": elapsed.as_millis() as u64,
            }),
        }
    }
}

/// What a caller keeps of an answer's body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// All of it, as a JSON tree ([`Outcome::data`]).
    Body,
    /// Its envelope's `response_code` and `message` only, read without building a tree of the
    /// rest: what a load that only checks the code needs. A tree of maps and strings for each
    /// answer cost the load generator, on the cores it shares with the server, more than
    /// the server spent writing a large answer (`get_profile`'s 1.5 KB).
    Envelope,
}

/// The part of an envelope [`Keep::Envelope`] reads.
#[derive(serde::Deserialize)]
struct Envelope {
    #[serde(default)]
    response_code: String,
    #[serde(default)]
    message: Option<String>,
}

/// A client of one or several `kobo` processes behind no load balancer: the caller picks the
/// process, as a balancer would.
#[derive(Clone)]
pub struct Api {
    http: reqwest::Client,
    pub bases: Vec<String>,
    /// Requests that failed for the platform's reasons ([`Outcome::is_failure`]).
    failed: Arc<AtomicU64>,
    /// Every attempt's answer and duration, as the client measured them.
    answers: Arc<Mutex<Answers>>,
    /// Numbers the attempts' `X-Request-Id`s.
    attempts: Arc<AtomicU64>,
    started: Instant,
}

/// One HTTP attempt, as [`Answers`] keeps it: enough to find it in the history and in the
/// servers' logs (its `X-Request-Id`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Attempt {
    /// Milliseconds from the client's creation (the run's history begins a moment before) to
    /// the attempt's start.
    pub at_ms: u64,
    /// How long it took to be answered (or to fail), on the client's clock.
    pub ms: u64,
    /// The request: method, path, process, `X-Request-Id`, `Idempotency-Key`.
    pub request: String,
    /// Its answer: `97 (HTTP 503)`, or `no answer (timeout)`.
    pub answer: String,
}

impl std::fmt::Display for Attempt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} after {} ms, sent {:.1} s into the run",
            self.request,
            self.answer,
            self.ms,
            self.at_ms as f64 / 1000.0
        )
    }
}

/// What every attempt of an [`Api`] got: the answers by code, the slowest, the `96`s and,
/// once a limit is set ([`Api::answer_within`]), the attempts that took longer.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Answers {
    /// Attempts by the envelope's `response_code`: `""` for an answer that is not Kobo's
    /// envelope (a balancer's page), `none` for no answer, `probe` for the probes' answers.
    pub by_code: BTreeMap<String, u64>,
    pub slowest: Option<Attempt>,
    /// Answered `96` (the first [`Answers::KEPT`]), and how many.
    pub internal_errors: Vec<Attempt>,
    pub internal_error_count: u64,
    /// The limit, and the attempts answered later (or not at all) (the first
    /// [`Answers::KEPT`]), and how many.
    pub limit_ms: Option<u64>,
    pub late: Vec<Attempt>,
    pub late_count: u64,
}

impl Answers {
    const KEPT: usize = 50;

    /// A short form for the run's summary.
    pub fn summary(&self) -> Value {
        json!({
            "by_code": self.by_code,
            "slowest": self.slowest,
            "limit_ms": self.limit_ms,
            "late": self.late_count,
            "internal_errors": self.internal_error_count,
        })
    }
}

impl Api {
    /// `timeout` is the client's own patience for one request.
    pub fn new(bases: Vec<String>, timeout: Duration) -> Api {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(Duration::from_secs(2))
            .pool_max_idle_per_host(256)
            .build()
            .expect("an HTTP client with default TLS settings");
        Api {
            http,
            bases,
            failed: Default::default(),
            answers: Default::default(),
            attempts: Default::default(),
            started: Instant::now(),
        }
    }

    /// How many requests failed for the platform's reasons so far ([`Outcome::is_failure`]).
    pub fn failed_requests(&self) -> u64 {
        self.failed.load(Ordering::SeqCst)
    }

    /// From now on, counts the attempts (of every clone of this client) not answered within
    /// `limit` ([`Answers::late`]).
    pub fn answer_within(&self, limit: Duration) {
        self.answers.lock().unwrap().limit_ms = Some(limit.as_millis() as u64);
    }

    /// What every attempt so far got.
    pub fn answers(&self) -> Answers {
        self.answers.lock().unwrap().clone()
    }

    /// Counts one attempt's answer; `describe` names its request, called only when the attempt
    /// is kept.
    fn note(
        &self,
        started: Instant,
        outcome: &Outcome,
        probe: bool,
        describe: impl FnOnce() -> String,
    ) {
        let elapsed = outcome.elapsed();
        let ms = elapsed.as_millis() as u64;
        let mut answers = self.answers.lock().unwrap();
        let code = match outcome {
            Outcome::Answer { .. } if probe => "probe",
            Outcome::Answer { code, .. } => code.as_str(),
            Outcome::NoAnswer { .. } => "none",
        };
        match answers.by_code.get_mut(code) {
            Some(count) => *count += 1,
            None => {
                answers.by_code.insert(code.to_owned(), 1);
            }
        }
        let slowest = answers.slowest.as_ref().is_none_or(|s| ms > s.ms);
        let late = answers.limit_ms.is_some_and(|limit| ms > limit);
        let internal = code == "96";
        if !(slowest || late || internal) {
            return;
        }
        let attempt = Attempt {
            at_ms: started.duration_since(self.started).as_millis() as u64,
            ms,
            request: describe(),
            answer: match outcome {
                Outcome::Answer { status, code, .. } if code.is_empty() => {
                    format!("HTTP {status}")
                }
                Outcome::Answer { status, code, .. } => format!("{code} (HTTP {status})"),
                Outcome::NoAnswer { error, .. } => format!("no answer ({error})"),
            },
        };
        if late {
            answers.late_count += 1;
            if answers.late.len() < Answers::KEPT {
                answers.late.push(attempt.clone());
            }
        }
        if internal {
            answers.internal_error_count += 1;
            if answers.internal_errors.len() < Answers::KEPT {
                answers.internal_errors.push(attempt.clone());
            }
        }
        if slowest {
            answers.slowest = Some(attempt);
        }
    }

    /// POSTs `body` to `path` on process `process` (modulo the number of processes).
    pub async fn post(
        &self,
        process: usize,
        path: &str,
        token: Option<&str>,
        headers: &[(&str, &str)],
        body: &Value,
    ) -> Outcome {
        self.post_keeping(process, path, token, headers, body, Keep::Body)
            .await
    }

    /// [`Api::post`], keeping `keep` of the answer's body.
    pub async fn post_keeping(
        &self,
        process: usize,
        path: &str,
        token: Option<&str>,
        headers: &[(&str, &str)],
        body: &Value,
        keep: Keep,
    ) -> Outcome {
        let outcome = self
            .send_post(process, path, token, headers, body, keep)
            .await;
        if outcome.is_failure() {
            self.failed.fetch_add(1, Ordering::SeqCst);
        }
        outcome
    }

    async fn send_post(
        &self,
        process: usize,
        path: &str,
        token: Option<&str>,
        headers: &[(&str, &str)],
        body: &Value,
        keep: Keep,
    ) -> Outcome {
        let process = process % self.bases.len();
        let base = &self.bases[process];
        // Each attempt's own request id, which the server's log lines carry.
        let request_id = format!("load-{}", self.attempts.fetch_add(1, Ordering::Relaxed) + 1);
        let mut request = self
            .http
            .post(format!("{base}{path}"))
            .json(body)
            .header("X-Request-Id", &request_id);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let started = Instant::now();
        let outcome = exchange(request, keep, started).await;
        self.note(started, &outcome, false, || {
            let mut described =
                format!("POST {path} to process {process}, X-Request-Id {request_id}");
            for (name, value) in headers {
                described.push_str(&format!(", {name} {value}"));
            }
            described
        });
        outcome
    }

    /// GETs `path` (the probes) and reads the whole answer; `None` when nothing answered.
    pub async fn get_status(&self, process: usize, path: &str) -> Option<u16> {
        let process = process % self.bases.len();
        let base = &self.bases[process];
        let started = Instant::now();
        let status = async {
            let response = self.http.get(format!("{base}{path}")).send().await.ok()?;
            let status = response.status().as_u16();
            response.bytes().await.ok()?;
            Some(status)
        }
        .await;
        let outcome = match status {
            Some(status) => Outcome::Answer {
                status,
                code: String::new(),
                body: Value::Null,
                retry_after: None,
                elapsed: started.elapsed(),
            },
            None => Outcome::NoAnswer {
                error: "no answer".into(),
                elapsed: started.elapsed(),
            },
        };
        self.note(started, &outcome, true, || {
            format!("GET {path} to process {process}")
        });
        status
    }
}

/// Sends `request` and reads its answer as `keep` says.
async fn exchange(request: reqwest::RequestBuilder, keep: Keep, started: Instant) -> Outcome {
    let response = match request.send().await {
        Ok(response) => response,
        Err(error) => {
            return Outcome::NoAnswer {
                error: describe(&error),
                elapsed: started.elapsed(),
            }
        }
    };
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse().ok());
    match response.bytes().await {
        Ok(bytes) => {
            let (code, body) = match keep {
                Keep::Body => {
                    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                    let code = body
                        .get("response_code")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned();
                    (code, body)
                }
                Keep::Envelope => match serde_json::from_slice::<Envelope>(&bytes) {
                    Ok(envelope) => (
                        envelope.response_code,
                        serde_json::json!({"message": envelope.message}),
                    ),
                    Err(_) => (String::new(), Value::Null),
                },
            };
            Outcome::Answer {
                status,
                code,
                body,
                retry_after,
                elapsed: started.elapsed(),
            }
        }
        Err(error) => Outcome::NoAnswer {
            error: describe(&error),
            elapsed: started.elapsed(),
        },
    }
}

fn describe(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "timeout".into()
    } else if error.is_connect() {
        "connect".into()
    } else {
        let mut text = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            text = format!("{text}: {cause}");
            source = cause.source();
        }
        text
    }
}

/// An amount in kobo as the API writes it: `"1234.50"`.
pub fn naira(kobo: i64) -> String {
    let sign = if kobo < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", kobo.abs() / 100, kobo.abs() % 100)
}

/// An API amount (`"1234.50"`, `"1234.500000000"`, `"15000"`) in kobo; `None` for anything
/// else, including a fraction of a kobo.
pub fn kobo(text: &str) -> Option<i64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (kept, rest) = fraction.split_at(fraction.len().min(2));
    if rest.bytes().any(|b| b != b'0') {
        return None;
    }
    let cents: i64 = format!("{kept:0<2}").parse().ok()?;
    let value = whole
        .parse::<i64>()
        .ok()?
        .checked_mul(100)?
        .checked_add(cents)?;
    Some(if negative { -value } else { value })
}

/// The `kobo` of a JSON field holding an API amount.
pub fn amount_of(value: &Value, field: &str) -> Option<i64> {
    value.get(field).and_then(Value::as_str).and_then(kobo)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(code: &str, ms: u64) -> Outcome {
        Outcome::Answer {
            status: 200,
            code: code.into(),
            body: Value::Null,
            retry_after: None,
            elapsed: Duration::from_millis(ms),
        }
    }

    #[test]
    fn answers_count_codes_the_slowest_96s_and_late_attempts() {
        let api = Api::new(vec!["http://127.0.0.1:9".into()], Duration::from_secs(1));
        let now = Instant::now();
        api.note(now, &answered("00", 5), false, || "a".into());
        api.note(now, &answered("97", 9_500), false, || "b".into());
        api.answer_within(Duration::from_secs(12));
        api.note(now, &answered("96", 12_001), false, || "c".into());
        let late = Outcome::NoAnswer {
            error: "timeout".into(),
            elapsed: Duration::from_secs(40),
        };
        api.note(now, &late, false, || "d".into());
        api.note(now, &answered("", 20), true, || "e".into());
        let answers = api.answers();
        let codes: Vec<(&str, u64)> = answers
            .by_code
            .iter()
            .map(|(code, n)| (code.as_str(), *n))
            .collect();
        assert_eq!(
            codes,
            [("00", 1), ("96", 1), ("97", 1), ("none", 1), ("probe", 1)]
        );
        assert_eq!(answers.slowest.map(|s| s.request), Some("d".to_owned()));
        assert_eq!(answers.internal_error_count, 1);
        assert_eq!(answers.internal_errors[0].answer, "96 (HTTP 200)");
        assert_eq!(answers.late_count, 2);
        assert_eq!(answers.late[1].answer, "no answer (timeout)");
    }

    #[test]
    fn amounts_round_trip_exactly() {
        assert_eq!(naira(123_450), "1234.50");
        assert_eq!(naira(5), "0.05");
        assert_eq!(kobo("1234.50"), Some(123_450));
        assert_eq!(kobo("15000"), Some(1_500_000));
        assert_eq!(kobo("15000.000000000"), Some(1_500_000));
        assert_eq!(kobo("0.5"), Some(50));
        assert_eq!(kobo("-2.00"), Some(-200));
        assert_eq!(kobo("1.001"), None);
        assert_eq!(kobo("1e3"), None);
        assert_eq!(kobo(""), None);
    }
}
