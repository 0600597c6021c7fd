//! The CPU each party spent in a scenario's measured span, per operation: the server (`kobo
//! serve`), PostgreSQL's processes, and this load generator, read from `/proc/<pid>/stat`
//! (Linux; elsewhere nothing is reported).
//!
//! The three share the machine's cores, so a throughput ratio moves with the generator's and
//! the database's shares too: a scenario whose answers cost the generator more (a larger
//! body) looks slower than the server made it. The server's CPU per operation is its own cost.
//! PostgreSQL's processes are read every [`SAMPLE_EVERY`], so a backend that ends inside the
//! span (each of pgbench's, when it finishes) is counted up to its last reading; its final
//! fraction of a sample is lost. One started inside the span counts from its start.

use std::time::Duration;

use serde_json::{json, Value};

/// Ticks of `utime` and `stime` per second: `USER_HZ`, 100 on every Linux ABI.
const TICKS_PER_SECOND: f64 = 100.0;

/// What an operation cost each party, in µs of CPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PerOp {
    pub server: f64,
    pub postgres: f64,
    pub generator: f64,
}

impl PerOp {
    pub fn to_json(self) -> Value {
        json!({
            "server": self.server.round(),
            "postgres": self.postgres.round(),
            "generator": self.generator.round(),
        })
    }
}

impl std::fmt::Display for PerOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CPU per op: server {:.0} µs, PostgreSQL {:.0} µs, generator {:.0} µs",
            self.server, self.postgres, self.generator
        )
    }
}

/// How often PostgreSQL's processes are read: a backend that ends inside the span (a
/// client's connection closed) is counted up to its last reading.
const SAMPLE_EVERY: Duration = Duration::from_millis(200);

/// The CPU spent from the end of a warm-up to [`Watch::per_op`].
pub struct Watch {
    server: Option<u32>,
    stop: tokio::sync::oneshot::Sender<()>,
    sampler: tokio::task::JoinHandle<Option<Spans>>,
}

/// What the sampler counted: the server's and the generator's CPU at the span's start, and
/// each PostgreSQL process's at its first and last readings.
struct Spans {
    server: f64,
    generator: f64,
    /// The name of PostgreSQL's processes.
    database: &'static str,
    /// By process id: its CPU when the span began (0 for one started since), and at its last
    /// reading.
    postgres: std::collections::HashMap<u32, (f64, f64)>,
}

impl Watch {
    /// Starts counting once `warmup` has passed, for the server process `server`.
    pub fn after(warmup: Duration, server: Option<u32>) -> Watch {
        Watch::of(warmup, server, "postgres")
    }

    /// [`Watch::after`], counting the processes named `database` as PostgreSQL's.
    fn of(warmup: Duration, server: Option<u32>, database: &'static str) -> Watch {
        let (stop, mut stopped) = tokio::sync::oneshot::channel();
        let sampler = tokio::spawn(async move {
            tokio::time::sleep(warmup).await;
            let mut spans = Spans {
                server: server.map_or(Some(0.0), |pid| seconds(&stat_of(pid)))?,
                generator: seconds("/proc/self/stat")?,
                database,
                postgres: pids_named(database)
                    .into_iter()
                    .filter_map(|pid| Some((pid, seconds(&stat_of(pid))?)))
                    .map(|(pid, spent)| (pid, (spent, spent)))
                    .collect(),
            };
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    () = tokio::time::sleep(SAMPLE_EVERY) => {}
                }
                spans.read_postgres();
            }
            spans.read_postgres();
            Some(spans)
        });
        Watch {
            server,
            stop,
            sampler,
        }
    }

    /// The CPU spent since the warm-up, divided among `operations`; `None` when `/proc` could
    /// not be read or nothing was done.
    pub async fn per_op(self, operations: u64) -> Option<PerOp> {
        let _ = self.stop.send(());
        let spans = self.sampler.await.ok()??;
        let server = self
            .server
            .map_or(Some(0.0), |pid| seconds(&stat_of(pid)))?;
        let generator = seconds("/proc/self/stat")?;
        let postgres: f64 = spans.postgres.values().map(|(from, to)| to - from).sum();
        let per_op = |spent: f64| spent.max(0.0) * 1e6 / operations as f64;
        (operations > 0).then(|| PerOp {
            server: per_op(server - spans.server),
            postgres: per_op(postgres),
            generator: per_op(generator - spans.generator),
        })
    }
}

impl Spans {
    /// Reads every PostgreSQL process again; one new since the span began counts from 0.
    fn read_postgres(&mut self) {
        for pid in pids_named(self.database) {
            if let Some(spent) = seconds(&stat_of(pid)) {
                self.postgres.entry(pid).or_insert((0.0, 0.0)).1 = spent;
            }
        }
    }
}

fn stat_of(pid: u32) -> String {
    format!("/proc/{pid}/stat")
}

/// `utime + stime` of the process whose `stat` file is at `path`, in seconds.
fn seconds(path: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(path).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // Fields 14 and 15 of the file, 12 and 13 after the name's closing parenthesis.
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / TICKS_PER_SECOND)
}

/// The processes named `name` (PostgreSQL's: the server and its backends, whichever
/// database).
fn pids_named(name: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|comm| comm.trim_end() == name)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_cpu_is_read_and_grows_as_it_works() {
        let Some(before) = seconds("/proc/self/stat") else {
            return; // not Linux
        };
        let began = std::time::Instant::now();
        let mut x = 0u64;
        let mut now = before;
        while now <= before && began.elapsed() < Duration::from_secs(10) {
            for _ in 0..1_000_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
            now = seconds("/proc/self/stat").expect("read once, read again");
        }
        assert!(
            now > before,
            "{before} s of CPU, then {now} s after 10 s of work"
        );
    }

    /// A process that works and ends inside the span (as each of pgbench's backends does) is
    /// counted up to its last reading, not lost with its `/proc` entry.
    #[tokio::test]
    async fn a_process_that_ends_inside_the_span_is_counted() {
        if seconds("/proc/self/stat").is_none() {
            return; // not Linux
        }
        let watch = Watch::of(Duration::ZERO, None, "python3");
        tokio::time::sleep(2 * SAMPLE_EVERY).await;
        // Half a second of CPU at least, then the process is gone.
        let busy =
            "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass";
        let status = tokio::process::Command::new("python3")
            .args(["-c", busy])
            .status()
            .await
            .expect("python3 runs");
        assert!(status.success());
        tokio::time::sleep(2 * SAMPLE_EVERY).await;
        let per_op = watch.per_op(1).await.expect("/proc is read");
        // Up to one sample's time (and a tick) of its last work may be missed.
        let counted = per_op.postgres / 1e6;
        assert!(
            counted >= 0.5 - SAMPLE_EVERY.as_secs_f64() - 0.02,
            "{counted} s of a process's 0.5 s counted"
        );
    }

    #[test]
    fn the_name_may_hold_spaces_and_parentheses() {
        let dir = tempfile_dir();
        let path = dir.join("stat");
        std::fs::write(
            &path,
            "42 (a (b) c) S 1 42 42 0 -1 4194304 100 0 0 0 250 150 0 0 20 0 1 0 5 0 0\n",
        )
        .unwrap();
        assert_eq!(seconds(path.to_str().unwrap()), Some(4.0));
        std::fs::remove_dir_all(dir).unwrap();
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("kobo-load-cpu-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
