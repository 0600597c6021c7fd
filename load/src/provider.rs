//! `kobo-provider` as the run's core banking provider (`kobo-load chaos --network-provider`):
//! started beside the `kobo` processes, killed with SIGKILL and restarted on the same port and
//! data directory by the nemesis, and asked by the clients to send inbound credits.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::Value;
use tokio::process::{Child, Command};

/// One `kobo-provider serve`, on a port and a data directory it keeps across restarts.
pub struct Provider {
    binary: PathBuf,
    dir: PathBuf,
    port: u16,
    child: Option<Child>,
    log: PathBuf,
    /// `--faults`, when it fails on purpose.
    pub faults: Option<String>,
    /// `--notify-url`: where inbound credits go.
    pub notify_url: Option<String>,
    pub starts: u32,
}

impl Provider {
    /// Starts it in `dir/provider`, beside the `kobo` binary given.
    pub async fn start(kobo: &Path, dir: &Path) -> Result<Provider> {
        let binary = kobo.with_file_name(format!("kobo-provider{}", std::env::consts::EXE_SUFFIX));
        if !binary.exists() {
            bail!(
                "no kobo-provider beside {}: build it with kobo",
                kobo.display()
            );
        }
        let mut provider = Provider {
            binary,
            dir: dir.join("provider"),
            port: crate::cluster::free_port()?,
            child: None,
            log: dir.join("kobo-provider.log"),
            faults: None,
            notify_url: None,
            starts: 0,
        };
        provider.restart().await?;
        Ok(provider)
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn secret_file(&self) -> PathBuf {
        self.dir.join("secret")
    }

    /// The shared secret (written by the provider at its first start).
    pub fn secret(&self) -> Result<String> {
        Ok(std::fs::read_to_string(self.secret_file())?
            .trim()
            .to_owned())
    }

    /// What `kobo serve` needs to call it.
    pub fn serve_args(&self) -> Vec<String> {
        vec![
            "--provider-url".to_owned(),
            self.url(),
            "--provider-secret-file".to_owned(),
            self.secret_file().display().to_string(),
        ]
    }

    /// Starts it (again, killing the one running) with its current faults and notification
    /// URL; returns once it answers.
    pub async fn restart(&mut self) -> Result<()> {
        self.kill().await?;
        let mut args = vec![
            "serve".to_owned(),
            "--listen".to_owned(),
            format!("127.0.0.1:{}", self.port),
            "--data-dir".to_owned(),
            self.dir.display().to_string(),
        ];
        if let Some(faults) = &self.faults {
            args.extend(["--faults".to_owned(), faults.clone()]);
        }
        if let Some(url) = &self.notify_url {
            args.extend(["--notify-url".to_owned(), url.clone()]);
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)?;
        let child = Command::new(&self.binary)
            .args(&args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {}", self.binary.display()))?;
        self.child = Some(child);
        self.starts += 1;
        let url = format!("{}/openapi.yaml", self.url());
        let http = reqwest::Client::new();
        let started = Instant::now();
        loop {
            if let Ok(response) = http.get(&url).send().await {
                if response.status().is_success() {
                    return Ok(());
                }
            }
            if started.elapsed() > Duration::from_secs(30) {
                bail!(
                    "kobo-provider not up after 30 s; see {}",
                    self.log.display()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// SIGKILL: whatever it was doing is cut.
    pub async fn kill(&mut self) -> Result<()> {
        if let Some(mut child) = self.child.take() {
            child.start_kill()?;
            child.wait().await?;
        }
        Ok(())
    }
}

/// Where clients ask for inbound credits: the provider's URL and the shared secret.
#[derive(Clone, Debug)]
pub struct Credits {
    pub url: String,
    pub secret: String,
    pub http: reqwest::Client,
}

impl Credits {
    /// Asks for an inbound credit (`POST /simulator/credit`) under the client's `reference`,
    /// again after a lost answer or while the provider is down, at most `patience`: the same
    /// reference is the same credit. Its NIP session id, or `None` if never answered.
    pub async fn credit(&self, body: &Value, patience: Duration) -> Option<String> {
        let started = Instant::now();
        while started.elapsed() < patience {
            let sent = self
                .http
                .post(format!("{}/simulator/credit", self.url))
                .bearer_auth(&self.secret)
                .json(body)
                .timeout(Duration::from_secs(5))
                .send()
                .await;
            if let Ok(response) = sent {
                if response.status().is_success() {
                    if let Ok(answer) = response.json::<Value>().await {
                        if let Some(session) = answer["session_id"].as_str() {
                            return Some(session.to_owned());
                        }
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        None
    }
}
