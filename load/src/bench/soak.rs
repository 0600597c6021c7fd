//! The soak: payouts at a steady rate (half the measured maximum) for a long while, the
//! server's resident memory sampled as it goes. Memory that keeps growing is a leak; a p99
//! that drifts up is a queue that does not drain.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::driver::{open_loop, round, Measurement};
use super::scenarios::{soak_payout, Target};

/// Payouts in flight at most: far above what the rate needs, so a stall shows as latency.
const IN_FLIGHT: usize = 256;
/// How much the resident memory may grow from the baseline sample to the last.
pub const RSS_GROWTH_MAX: f64 = 0.10;
/// The part of the soak whose memory samples are not the baseline: the server grows to the
/// load (connections, buffers, caches) at first, which is not a leak.
const SETTLING: f64 = 0.10;
/// The p99 payout latency the soak must keep.
pub const P99_MAX_MS: f64 = 10.0;

pub struct Soak {
    pub rate: f64,
    pub seconds: f64,
    pub measurement: Measurement,
    /// (seconds into the soak, VmRSS in KiB)
    pub rss_kib: Vec<(f64, u64)>,
}

impl Soak {
    /// The first sample after the settling part of the soak.
    pub fn first_kib(&self) -> u64 {
        let settled = self.seconds * SETTLING;
        self.rss_kib
            .iter()
            .find(|sample| sample.0 >= settled)
            .or(self.rss_kib.first())
            .map_or(0, |sample| sample.1)
    }

    /// The sample before the payouts began.
    pub fn idle_kib(&self) -> u64 {
        self.rss_kib.first().map_or(0, |sample| sample.1)
    }

    pub fn last_kib(&self) -> u64 {
        self.rss_kib.last().map_or(0, |sample| sample.1)
    }

    pub fn max_kib(&self) -> u64 {
        self.rss_kib
            .iter()
            .map(|sample| sample.1)
            .max()
            .unwrap_or(0)
    }

    /// The last sample within [`RSS_GROWTH_MAX`] of the first after settling.
    pub fn flat(&self) -> bool {
        self.rss_kib.len() >= 2
            && self.last_kib() as f64 <= self.first_kib() as f64 * (1.0 + RSS_GROWTH_MAX)
    }

    pub fn to_json(&self) -> Value {
        json!({
            "rate": round(self.rate, 1),
            "payouts": self.measurement.to_json(),
            "rss_kib": {
                "idle": self.idle_kib(),
                "first_after_settling": self.first_kib(),
                "settling_seconds": round(self.seconds * SETTLING, 1),
                "last": self.last_kib(),
                "max": self.max_kib(),
                "flat_within_10_percent": self.flat(),
                "samples": self.rss_kib.iter().map(|(s, kib)| json!([round(*s, 1), kib])).collect::<Vec<_>>(),
            },
            "p99_ms_target": P99_MAX_MS,
        })
    }
}

/// Payouts at `rate` per second for `duration` (open loop), while the memory of the server
/// process `pid` is sampled.
pub async fn soak(target: Arc<Target>, pid: u32, rate: f64, duration: Duration) -> Soak {
    let every = (duration / 30).clamp(Duration::from_secs(1), Duration::from_secs(5));
    let samples = Arc::new(Mutex::new(Vec::new()));
    let started = Instant::now();
    let sampler = {
        let samples = samples.clone();
        tokio::spawn(async move {
            loop {
                if let Some(kib) = rss_kib(pid) {
                    let at = started.elapsed().as_secs_f64();
                    samples.lock().expect("not poisoned").push((at, kib));
                }
                tokio::time::sleep(every).await;
            }
        })
    };
    let measurement = open_loop(rate, duration, IN_FLIGHT, target, soak_payout).await;
    sampler.abort();
    let mut samples = samples.lock().expect("not poisoned").clone();
    if let Some(kib) = rss_kib(pid) {
        samples.push((started.elapsed().as_secs_f64(), kib));
    }
    Soak {
        rate,
        seconds: duration.as_secs_f64(),
        measurement,
        rss_kib: samples,
    }
}

/// The process's resident set (`VmRSS` in `/proc/<pid>/status`), in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_a_resident_set() {
        assert!(rss_kib(std::process::id()).is_some_and(|kib| kib > 0));
    }

    #[test]
    fn memory_is_flat_within_ten_percent_of_its_first_sample() {
        let soak = |samples: Vec<(f64, u64)>| Soak {
            rate: 1.0,
            seconds: 10.0,
            measurement: Measurement::new(),
            rss_kib: samples,
        };
        // Idle at 0 s, 60 MiB after settling (1 s), within 10% of it at the end.
        assert!(soak(vec![
            (0.0, 40_000),
            (1.0, 100_000),
            (5.0, 130_000),
            (10.0, 109_000)
        ])
        .flat());
        assert!(!soak(vec![(0.0, 40_000), (1.0, 100_000), (10.0, 111_000)]).flat());
        assert!(!soak(vec![(0.0, 100_000)]).flat());
    }
}
