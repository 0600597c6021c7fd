//! Kobo's HTTP API as a partner sees it: JSON bodies, the envelope's `response_code`, and no
//! answer at all when a process dies under a request.

use std::time::{Duration, Instant};

use serde_json::Value;

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
    /// internal error (`96`) or the database unavailable (`97`).
    pub fn is_failure(&self) -> bool {
        matches!(self.code(), None | Some("" | "96" | "97"))
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
    failed: std::sync::Arc<std::sync::atomic::AtomicU64>,
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
        }
    }

    /// How many requests failed for the platform's reasons so far ([`Outcome::is_failure`]).
    pub fn failed_requests(&self) -> u64 {
        self.failed.load(std::sync::atomic::Ordering::SeqCst)
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
            self.failed
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
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
        let base = &self.bases[process % self.bases.len()];
        let mut request = self.http.post(format!("{base}{path}")).json(body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let started = Instant::now();
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

    /// GETs `path` (the probes) and reads the whole answer; `None` when nothing answered.
    pub async fn get_status(&self, process: usize, path: &str) -> Option<u16> {
        let base = &self.bases[process % self.bases.len()];
        let response = self.http.get(format!("{base}{path}")).send().await.ok()?;
        let status = response.status().as_u16();
        response.bytes().await.ok()?;
        Some(status)
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
