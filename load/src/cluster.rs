//! The system under test: `kobo serve` processes on one store, started, killed with SIGKILL and
//! restarted from outside, and the operator CLI run against the same store.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::Value;
use tokio::process::{Child, Command};

/// Which database the processes share.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreKind {
    Sqlite,
    Postgres,
}

/// The machine's local PostgreSQL server, where a run's database is made unless it names
/// another ([`Cluster::start_at`]).
pub const LOCAL_POSTGRES: &str = "127.0.0.1:5432";

/// The `kobo` processes of a run and the store they share.
pub struct Cluster {
    kobo: PathBuf,
    dir: PathBuf,
    database_url: Option<String>,
    database_name: Option<String>,
    /// The PostgreSQL server (`host:port`) of the database, on PostgreSQL.
    postgres: String,
    /// Added to every start of a process; change it, then restart, to change how they run.
    pub serve_args: Vec<String>,
    /// The processes reach PostgreSQL through this transaction pooler (PgBouncer), the
    /// operator CLI directly.
    pooler: Option<u16>,
    pub processes: Vec<Process>,
}

/// One `kobo serve`, on a port it keeps across restarts.
pub struct Process {
    pub port: u16,
    child: Option<Child>,
    log: PathBuf,
    pub starts: u32,
}

impl Cluster {
    /// A fresh store in `dir` (SQLite) or a fresh database (PostgreSQL), and `count` processes
    /// serving it with `serve_args` added to every start.
    ///
    /// With `pooler`, the processes reach PostgreSQL through the transaction pooler listening
    /// on it (`--database-pool-mode transaction`), the operator CLI directly.
    pub async fn start_through(
        kobo: &Path,
        dir: &Path,
        store: StoreKind,
        count: usize,
        serve_args: Vec<String>,
        pooler: Option<u16>,
    ) -> Result<Cluster> {
        Self::start_at(kobo, dir, store, count, serve_args, pooler, LOCAL_POSTGRES).await
    }

    /// [`Cluster::start_through`], the database made on the PostgreSQL server at `postgres`
    /// (`host:port`; e.g. the HAProxy in front of a Patroni cluster, [`crate::patroni`]).
    pub async fn start_at(
        kobo: &Path,
        dir: &Path,
        store: StoreKind,
        count: usize,
        serve_args: Vec<String>,
        pooler: Option<u16>,
        postgres: &str,
    ) -> Result<Cluster> {
        if pooler.is_some() && store != StoreKind::Postgres {
            bail!("a connection pooler is for PostgreSQL");
        }
        std::fs::create_dir_all(dir)?;
        let (database_url, database_name) = match store {
            StoreKind::Sqlite => (None, None),
            StoreKind::Postgres => {
                let name = format!(
                    "kobo_load_{}_{}",
                    std::process::id(),
                    chrono::Utc::now().timestamp_millis()
                );
                psql_at(postgres, &format!("CREATE DATABASE {name}")).await?;
                (
                    Some(format!("postgres://postgres@{postgres}/{name}")),
                    Some(name),
                )
            }
        };
        let cluster = Cluster {
            kobo: kobo.to_owned(),
            dir: dir.to_owned(),
            database_url,
            database_name,
            postgres: postgres.to_owned(),
            serve_args,
            pooler,
            processes: Vec::new(),
        };
        cluster.serve(count).await
    }

    /// `count` processes serving the existing database `name` of the PostgreSQL server at
    /// `postgres` (a restored copy, say), their token key and logs in `dir`.
    pub async fn on_database(
        kobo: &Path,
        dir: &Path,
        postgres: &str,
        name: &str,
        count: usize,
        serve_args: Vec<String>,
    ) -> Result<Cluster> {
        std::fs::create_dir_all(dir)?;
        let cluster = Cluster {
            kobo: kobo.to_owned(),
            dir: dir.to_owned(),
            database_url: Some(format!("postgres://postgres@{postgres}/{name}")),
            database_name: Some(name.to_owned()),
            postgres: postgres.to_owned(),
            serve_args,
            pooler: None,
            processes: Vec::new(),
        };
        cluster.serve(count).await
    }

    /// The PostgreSQL database's name, on PostgreSQL.
    pub fn database_name(&self) -> Option<&str> {
        self.database_name.as_deref()
    }

    /// Starts `count` processes, one after the other.
    async fn serve(mut self, count: usize) -> Result<Cluster> {
        let dir = self.dir.clone();
        let cluster = &mut self;
        for index in 0..count {
            let port = free_port()?;
            cluster.processes.push(Process {
                port,
                child: None,
                // Beside the store, not in it: a disk fault must not take the logs.
                log: dir
                    .parent()
                    .unwrap_or(&dir)
                    .join(format!("kobo-{index}.log")),
                starts: 0,
            });
            // One at a time: the first applies the migrations.
            cluster.restart(index).await?;
        }
        Ok(self)
    }

    /// Each process's log, its restarts' lines included.
    pub fn logs(&self) -> Vec<PathBuf> {
        self.processes
            .iter()
            .map(|process| process.log.clone())
            .collect()
    }

    pub fn bases(&self) -> Vec<String> {
        self.processes
            .iter()
            .map(|process| format!("http://127.0.0.1:{}", process.port))
            .collect()
    }

    /// The store arguments every `kobo` command of this cluster takes.
    fn store_args(&self) -> Vec<String> {
        let mut args = vec!["--data-dir".to_owned(), self.dir.display().to_string()];
        if let Some(url) = &self.database_url {
            args.extend(["--database-url".to_owned(), url.clone()]);
        }
        args
    }

    /// The store arguments of `kobo serve`: through the pooler when there is one.
    fn serve_store_args(&self) -> Vec<String> {
        match (self.pooler, &self.database_url, &self.database_name) {
            (Some(port), Some(direct), Some(name)) => vec![
                "--data-dir".to_owned(),
                self.dir.display().to_string(),
                "--database-url".to_owned(),
                format!("postgres://postgres@127.0.0.1:{port}/{name}"),
                "--database-pool-mode".to_owned(),
                "transaction".to_owned(),
                "--database-direct-url".to_owned(),
                direct.clone(),
            ],
            _ => self.store_args(),
        }
    }

    /// The ports the processes listen on.
    pub fn ports(&self) -> Vec<u16> {
        self.processes.iter().map(|process| process.port).collect()
    }

    /// Starts process `index` (again), and waits until `/readyz` answers 200.
    pub async fn restart(&mut self, index: usize) -> Result<()> {
        let mut args = vec![
            "serve".to_owned(),
            "--listen".to_owned(),
            format!("127.0.0.1:{}", self.processes[index].port),
            "--token-key-file".to_owned(),
            self.dir.join("token.key").display().to_string(),
            "--log-format".to_owned(),
            "json".to_owned(),
        ];
        args.extend(self.serve_store_args());
        args.extend(self.serve_args.iter().cloned());
        let process = &mut self.processes[index];
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&process.log)?;
        let child = Command::new(&self.kobo)
            .args(&args)
            .env("RUST_LOG", "info,kobo::access=off,sqlx=warn")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {}", self.kobo.display()))?;
        process.child = Some(child);
        process.starts += 1;
        let url = format!("http://127.0.0.1:{}/readyz", process.port);
        let started = Instant::now();
        let http = reqwest::Client::new();
        loop {
            if let Ok(response) = http.get(&url).send().await {
                if response.status().is_success() {
                    return Ok(());
                }
            }
            if let Some(child) = process.child.as_mut() {
                if let Some(status) = child.try_wait()? {
                    bail!(
                        "kobo serve exited at start ({status}); see {}",
                        process.log.display()
                    );
                }
            }
            if started.elapsed() > Duration::from_secs(60) {
                bail!(
                    "kobo serve not ready after 60 s; see {}",
                    process.log.display()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// SIGKILL: no shutdown, no flush, whatever was in flight is cut.
    pub async fn kill(&mut self, index: usize) -> Result<()> {
        if let Some(mut child) = self.processes[index].child.take() {
            child.start_kill()?;
            child.wait().await?;
        }
        Ok(())
    }

    /// SIGTERM to process `index`, waiting for it to finish its requests and exit.
    pub async fn stop_one(&mut self, index: usize) {
        if let Some(mut child) = self.processes[index].child.take() {
            if let Some(pid) = child.id() {
                let _ = Command::new("kill")
                    .args(["-TERM", &pid.to_string()])
                    .status()
                    .await;
            }
            if tokio::time::timeout(Duration::from_secs(60), child.wait())
                .await
                .is_err()
            {
                let _ = child.start_kill();
                let _ = child.wait().await;
            }
        }
    }

    /// SIGTERM to every process.
    pub async fn stop(&mut self) {
        for index in 0..self.processes.len() {
            self.stop_one(index).await;
        }
    }

    /// Runs the operator CLI (`kobo ARGS... --json` plus the store) and parses its JSON.
    pub async fn cli(&self, args: &[&str]) -> Result<Value> {
        let mut command = Command::new(&self.kobo);
        command.args(args).args(self.store_args()).arg("--json");
        let output = command
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .output()
            .await?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let parsed: Option<Value> = serde_json::from_str(&stdout).ok();
        match parsed {
            Some(value) => Ok(value),
            None => bail!(
                "kobo {} failed ({}): {}{}",
                args.join(" "),
                output.status,
                stdout,
                String::from_utf8_lossy(&output.stderr)
            ),
        }
    }

    /// The operating system's id of process `index`, while it runs.
    pub fn pid(&self, index: usize) -> Option<u32> {
        self.processes[index].child.as_ref().and_then(Child::id)
    }

    /// Whether `kobo WORDS... --help` mentions `flag`: an older binary's subcommand may lack a
    /// flag a scenario needs, and the scenario is skipped instead of failing.
    pub async fn has_flag(&self, words: &[&str], flag: &str) -> bool {
        Command::new(&self.kobo)
            .args(words)
            .arg("--help")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .await
            .is_ok_and(|output| {
                output.status.success() && String::from_utf8_lossy(&output.stdout).contains(flag)
            })
    }

    /// Whether this `kobo` binary has the subcommand `words` (`kobo WORDS... --help` succeeds),
    /// so that a run can skip what an older binary cannot do instead of failing.
    pub async fn has_command(&self, words: &[&str]) -> bool {
        Command::new(&self.kobo)
            .args(words)
            .arg("--help")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .await
            .is_ok_and(|status| status.success())
    }

    /// Drops the PostgreSQL database of the run.
    pub async fn drop_database(&self) -> Result<()> {
        if let Some(name) = &self.database_name {
            psql_at(
                &self.postgres,
                &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            )
            .await?;
        }
        Ok(())
    }
}

/// Runs one statement as PostgreSQL's superuser, on the machine's local server.
pub async fn psql(statement: &str) -> Result<()> {
    psql_at(LOCAL_POSTGRES, statement).await
}

/// Runs one statement as PostgreSQL's superuser, on the server at `postgres` (`host:port`).
pub async fn psql_at(postgres: &str, statement: &str) -> Result<()> {
    let output = Command::new("psql")
        .args([
            &format!("postgres://postgres@{postgres}/postgres"),
            "-v",
            "ON_ERROR_STOP=1",
            "-qc",
            statement,
        ])
        .output()
        .await
        .context("cannot run psql (PostgreSQL's client)")?;
    if !output.status.success() {
        bail!(
            "psql -c {statement:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}

/// A loopback port nobody listens on now.
pub fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// The `kobo` binary beside this one (both built into the same target directory), unless the
/// caller names one.
pub fn kobo_binary(given: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(path) = given {
        return Ok(path);
    }
    let me = std::env::current_exe()?;
    let beside = me.with_file_name(format!("kobo{}", std::env::consts::EXE_SUFFIX));
    if beside.exists() {
        return Ok(beside);
    }
    bail!(
        "no kobo binary beside {}: build it (cargo build -p kobo, with the same profile) or pass --kobo",
        me.display()
    )
}
