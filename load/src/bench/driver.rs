//! How load is offered and measured. Closed loop: N clients, each sending its next operation
//! as soon as the previous one is answered, so the figure is the system's capacity at that
//! concurrency. Open loop: operations scheduled at a fixed rate whatever happens, each one's
//! latency counted from the moment it was due (a late start is part of its latency), so a
//! stall cannot hide behind the clients waiting for it.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde_json::{json, Value};
use tokio::sync::Semaphore;

use crate::api::Outcome;

/// Why an operation did not succeed: `label` is what the table counts (the envelope's
/// `response_code` with the HTTP status, or how the request got no answer), `message` an
/// example to say what it was.
#[derive(Clone, Debug)]
pub struct Failure {
    pub label: String,
    pub message: String,
    /// Not a failure but the end of what the scenario could do (its budget is spent): the
    /// closed loop ends there, as at the end of its duration.
    pub stop: bool,
}

impl Failure {
    pub fn new(label: impl Into<String>, message: impl Into<String>) -> Failure {
        Failure {
            label: label.into(),
            message: message.into(),
            stop: false,
        }
    }

    /// The scenario can do no more (see [`Failure::stop`]).
    pub fn stop(why: impl Into<String>) -> Failure {
        Failure {
            stop: true,
            ..Failure::new("stop", why)
        }
    }

    /// The same failure, its label prefixed by the step of a multi-request operation.
    pub fn at(self, step: &str) -> Failure {
        Failure {
            label: format!("{step}: {}", self.label),
            ..self
        }
    }
}

/// What one operation came to.
pub type Answer = Result<(), Failure>;

/// The `data` of a `00` answer, or the [`Failure`] the answer was.
pub fn judge(outcome: &Outcome) -> Result<&Value, Failure> {
    match outcome {
        Outcome::Answer { code, body, .. } if code == "00" => {
            Ok(body.get("data").unwrap_or(&Value::Null))
        }
        Outcome::Answer {
            status, code, body, ..
        } => {
            let label = if code.is_empty() {
                format!("HTTP {status}")
            } else {
                format!("{code} (HTTP {status})")
            };
            let message = body
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default();
            Err(Failure::new(label, message))
        }
        Outcome::NoAnswer { error, .. } => Err(Failure::new("no answer", error.clone())),
    }
}

/// The latencies of the successful operations (µs), and the failures by label.
#[derive(Clone, Debug)]
pub struct Measurement {
    pub histogram: Histogram<u64>,
    pub ok: u64,
    /// label → (count, an example message)
    pub errors: BTreeMap<String, (u64, String)>,
    /// The measured span (warm-up excluded), the denominator of the throughput.
    pub seconds: f64,
    /// Open loop only: second of the run (when due) → (operations due then, how many took
    /// longer than [`SLOW`], the longest in µs). A tail that clusters in a few seconds is a
    /// stall; one spread evenly is a queue.
    pub by_second: BTreeMap<u64, (u64, u64, u64)>,
    /// What an operation cost the server, PostgreSQL and the generator in CPU, when known.
    pub cpu: Option<super::cpu::PerOp>,
}

/// What [`Measurement::by_second`] counts as slow.
pub const SLOW: Duration = Duration::from_millis(10);

impl Measurement {
    pub fn new() -> Measurement {
        Measurement {
            // 1 µs to an hour, 3 significant digits.
            histogram: Histogram::new_with_bounds(1, 3_600_000_000, 3)
                .expect("valid histogram bounds"),
            ok: 0,
            errors: BTreeMap::new(),
            seconds: 0.0,
            by_second: BTreeMap::new(),
            cpu: None,
        }
    }

    /// [`Measurement::record`], and the operation counted in the second it was due in.
    pub fn record_at(&mut self, second: u64, latency: Duration, answer: Answer) {
        let entry = self.by_second.entry(second).or_default();
        entry.0 += 1;
        entry.1 += u64::from(latency > SLOW);
        entry.2 = entry.2.max(latency.as_micros() as u64);
        self.record(latency, answer);
    }

    /// How many seconds had an operation slower than [`SLOW`].
    pub fn seconds_with_slow(&self) -> usize {
        self.by_second.values().filter(|s| s.1 > 0).count()
    }

    /// The `count` seconds with the most slow operations: (second, due, slow, longest ms).
    pub fn worst_seconds(&self, count: usize) -> Vec<(u64, u64, u64, f64)> {
        let mut seconds: Vec<_> = self
            .by_second
            .iter()
            .filter(|(_, (_, slow, _))| *slow > 0)
            .map(|(second, (due, slow, max))| (*second, *due, *slow, *max as f64 / 1000.0))
            .collect();
        seconds.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
        seconds.truncate(count);
        seconds
    }

    pub fn record(&mut self, latency: Duration, answer: Answer) {
        match answer {
            Ok(()) => {
                self.ok += 1;
                self.histogram
                    .saturating_record((latency.as_micros() as u64).max(1));
            }
            Err(failure) => {
                let entry = self
                    .errors
                    .entry(failure.label)
                    .or_insert((0, failure.message));
                entry.0 += 1;
            }
        }
    }

    pub fn merge(&mut self, other: &Measurement) {
        self.histogram
            .add(&other.histogram)
            .expect("histograms with the same bounds");
        self.ok += other.ok;
        for (label, (count, message)) in &other.errors {
            self.errors
                .entry(label.clone())
                .or_insert((0, message.clone()))
                .0 += count;
        }
    }

    /// Successful operations per second.
    pub fn throughput(&self) -> f64 {
        if self.seconds > 0.0 {
            self.ok as f64 / self.seconds
        } else {
            0.0
        }
    }

    pub fn failed(&self) -> u64 {
        self.errors.values().map(|(count, _)| count).sum()
    }

    /// The latency at `quantile` (0.5, 0.99 ...), in ms with µs resolution.
    pub fn ms(&self, quantile: f64) -> f64 {
        self.histogram.value_at_quantile(quantile) as f64 / 1000.0
    }

    pub fn max_ms(&self) -> f64 {
        self.histogram.max() as f64 / 1000.0
    }

    pub fn to_json(&self) -> Value {
        json!({
            "ok": self.ok,
            "failed": self.failed(),
            "seconds": self.seconds,
            "per_second": round(self.throughput(), 1),
            "latency_ms": {
                "p50": self.ms(0.5),
                "p90": self.ms(0.9),
                "p99": self.ms(0.99),
                "p99_9": self.ms(0.999),
                "max": self.max_ms(),
                "mean": round(self.histogram.mean() / 1000.0, 3),
            },
            "errors": self.errors.iter().map(|(label, (count, message))| {
                json!({"code": label, "count": count, "example": message})
            }).collect::<Vec<_>>(),
            "cpu_us_per_op": self.cpu.map(super::cpu::PerOp::to_json),
            "slow_ms": SLOW.as_millis() as u64,
            "seconds_with_slow": self.seconds_with_slow(),
            "worst_seconds": self.worst_seconds(10).iter().map(|(second, due, slow, max)| {
                json!({"second": second, "due": due, "slow": slow, "max_ms": max})
            }).collect::<Vec<_>>(),
            // [second, due, slow, longest ms] for every second of an open loop.
            "by_second": self.by_second.iter().map(|(second, (due, slow, max))| {
                json!([second, due, slow, round(*max as f64 / 1000.0, 1)])
            }).collect::<Vec<_>>(),
        })
    }
}

pub fn round(value: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (value * scale).round() / scale
}

/// How a closed-loop measurement runs.
#[derive(Clone, Copy, Debug)]
pub struct Load {
    pub clients: usize,
    /// Operations run but not recorded first, so caches, connections and the JIT-less rest
    /// are warm.
    pub warmup: Duration,
    pub duration: Duration,
}

/// `load.clients` clients call `op(state, client, sequence)` back to back for the warm-up and
/// the duration, or until an operation answers [`Failure::stop`]. Every operation that ends
/// after the warm-up is recorded, the last ones (started before the end) too, and the measured
/// span runs to the last answer: an operation slower than the warm-up or the duration is
/// still counted, and counted once.
pub async fn closed_loop<S, F, Fut>(load: Load, state: Arc<S>, op: F) -> Measurement
where
    S: Send + Sync + 'static,
    F: Fn(Arc<S>, usize, u64) -> Fut + Copy + Send + Sync + 'static,
    Fut: Future<Output = Answer> + Send + 'static,
{
    let measured_from = Instant::now() + load.warmup;
    let until = measured_from + load.duration;
    // When the first client was told to stop.
    let stopped: Arc<Mutex<Option<Instant>>> = Arc::default();
    let mut clients = Vec::new();
    for client in 0..load.clients {
        let (state, stopped) = (state.clone(), stopped.clone());
        clients.push(tokio::spawn(async move {
            let mut own = Measurement::new();
            let mut last_answer = None;
            let mut sequence = 0u64;
            loop {
                let began = Instant::now();
                let end = stopped.lock().expect("not poisoned").unwrap_or(until);
                if began >= end {
                    break;
                }
                sequence += 1;
                let answer = op(state.clone(), client, sequence).await;
                let answered = Instant::now();
                match answer {
                    Err(failure) if failure.stop => {
                        stopped
                            .lock()
                            .expect("not poisoned")
                            .get_or_insert(answered);
                        break;
                    }
                    answer if answered >= measured_from => {
                        own.record(answered - began, answer);
                        last_answer = Some(answered);
                    }
                    _ => {}
                }
            }
            (own, last_answer)
        }));
    }
    let mut total = Measurement::new();
    let mut last_answer = None;
    for client in clients {
        let (own, last) = client.await.expect("a load client panicked");
        total.merge(&own);
        last_answer = last_answer.max(last);
    }
    total.seconds = last_answer
        .map_or(Duration::ZERO, |last| last - measured_from)
        .as_secs_f64();
    total
}

/// Operations due at `rate` per second for `duration`, at most `in_flight` at once (beyond,
/// the next waits, and its wait counts in its latency); each latency runs from when the
/// operation was due.
pub async fn open_loop<S, F, Fut>(
    rate: f64,
    duration: Duration,
    in_flight: usize,
    state: Arc<S>,
    op: F,
) -> Measurement
where
    S: Send + Sync + 'static,
    F: Fn(Arc<S>, usize, u64) -> Fut + Copy + Send + Sync + 'static,
    Fut: Future<Output = Answer> + Send + 'static,
{
    let started = Instant::now();
    let until = started + duration;
    let slots = Arc::new(Semaphore::new(in_flight));
    let measured = Arc::new(Mutex::new(Measurement::new()));
    let interval = Duration::from_secs_f64(1.0 / rate.max(0.001));
    let mut sequence = 0u64;
    loop {
        let due = started + interval.mul_f64(sequence as f64);
        if due >= until {
            break;
        }
        tokio::time::sleep_until(due.into()).await;
        let slot = slots
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        sequence += 1;
        let (state, measured) = (state.clone(), measured.clone());
        // The sequence spreads the operations over clients as the closed loop's do.
        let client = (sequence % in_flight as u64) as usize;
        tokio::spawn(async move {
            let answer = op(state, client, sequence).await;
            let second = (due - started).as_secs();
            measured
                .lock()
                .expect("not poisoned")
                .record_at(second, due.elapsed(), answer);
            drop(slot);
        });
    }
    // Every slot back: every operation answered.
    let _all = slots
        .acquire_many(in_flight as u32)
        .await
        .expect("the semaphore is never closed");
    let mut total = measured.lock().expect("not poisoned").clone();
    total.seconds = duration.as_secs_f64();
    total
}

/// `job(index)` for every index below `count`, at most `concurrency` at once; the results in
/// index order, or the first error.
pub async fn in_parallel<T, F, Fut>(
    count: usize,
    concurrency: usize,
    job: F,
) -> anyhow::Result<Vec<T>>
where
    T: Send + 'static,
    F: Fn(usize) -> Fut,
    Fut: Future<Output = anyhow::Result<T>> + Send + 'static,
{
    let slots = Arc::new(Semaphore::new(concurrency.max(1)));
    let mut running = Vec::with_capacity(count);
    for index in 0..count {
        let slot = slots
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        let work = job(index);
        running.push(tokio::spawn(async move {
            let result = work.await;
            drop(slot);
            result
        }));
    }
    let mut results = Vec::with_capacity(count);
    for task in running {
        results.push(task.await??);
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_counted_by_label_and_successes_timed() {
        let mut measurement = Measurement::new();
        measurement.record(Duration::from_micros(1500), Ok(()));
        measurement.record(Duration::from_micros(2500), Ok(()));
        measurement.record(Duration::ZERO, Err(Failure::new("83 (HTTP 402)", "funds")));
        measurement.record(Duration::ZERO, Err(Failure::new("83 (HTTP 402)", "later")));
        measurement.seconds = 2.0;
        assert_eq!(measurement.ok, 2);
        assert_eq!(measurement.failed(), 2);
        assert_eq!(measurement.errors["83 (HTTP 402)"], (2, "funds".to_owned()));
        assert_eq!(measurement.throughput(), 1.0);
        assert!((measurement.ms(0.5) - 1.5).abs() < 0.01);
        assert!((measurement.max_ms() - 2.5).abs() < 0.01);
    }

    #[tokio::test]
    async fn a_closed_loop_records_only_after_the_warmup() {
        let load = Load {
            clients: 2,
            warmup: Duration::from_millis(100),
            duration: Duration::from_millis(200),
        };
        let measurement = closed_loop(load, Arc::new(()), |_, _, _| async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            Ok(())
        })
        .await;
        // About 2 clients × 200 ms / 10 ms; none of the warm-up's.
        assert!((20..=44).contains(&measurement.ok), "{}", measurement.ok);
        assert!(measurement.ms(0.5) >= 10.0);
    }

    #[tokio::test]
    async fn operations_slower_than_the_run_are_counted_once() {
        let load = Load {
            clients: 2,
            warmup: Duration::from_millis(50),
            duration: Duration::from_millis(50),
        };
        let measurement = closed_loop(load, Arc::new(()), |_, _, _| async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Ok(())
        })
        .await;
        assert_eq!(measurement.ok, 2);
        // From the end of the warm-up to the last answer.
        assert!(
            (0.24..0.35).contains(&measurement.seconds),
            "{}",
            measurement.seconds
        );
    }

    #[tokio::test]
    async fn a_stop_ends_the_loop_early() {
        let load = Load {
            clients: 4,
            warmup: Duration::ZERO,
            duration: Duration::from_secs(10),
        };
        let measurement = closed_loop(load, Arc::new(()), |_, _, sequence| async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            if sequence > 3 {
                Err(Failure::stop("spent"))
            } else {
                Ok(())
            }
        })
        .await;
        // Each client does 3 unless another's stop came first; the stops are not failures.
        assert!((8..=12).contains(&measurement.ok), "{}", measurement.ok);
        assert_eq!(measurement.failed(), 0);
        assert!(measurement.seconds < 1.0);
    }

    #[tokio::test]
    async fn an_open_loop_keeps_its_rate() {
        let measurement = open_loop(
            100.0,
            Duration::from_millis(500),
            8,
            Arc::new(()),
            |_, _, _| async { Ok(()) },
        )
        .await;
        assert_eq!(measurement.ok, 50);
        assert_eq!(measurement.by_second.values().map(|s| s.0).sum::<u64>(), 50);
    }

    /// Which seconds were slow is counted from the latencies recorded, not from this machine's
    /// speed (the open loop above once met a 10 ms stall of a shared CI host).
    #[test]
    fn the_worst_seconds_are_those_with_the_most_slow_operations() {
        let mut measurement = Measurement::new();
        let fast = Duration::from_millis(2);
        let slow = SLOW + Duration::from_millis(5);
        for (second, latency) in [
            (0, fast),
            (1, slow),
            (1, fast),
            (2, slow),
            (2, slow),
            (3, fast),
        ] {
            measurement.record_at(second, latency, Ok(()));
        }
        assert_eq!(measurement.seconds_with_slow(), 2);
        assert_eq!(
            measurement.worst_seconds(3),
            vec![(2, 2, 2, 15.0), (1, 2, 1, 15.0)]
        );
        assert_eq!(measurement.worst_seconds(1).len(), 1);
    }
}
