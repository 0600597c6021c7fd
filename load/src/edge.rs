//! The edge of a deployment of several `kobo serve` processes on one PostgreSQL
//! (docs/deploying.md): Debian's PgBouncer in transaction mode between the processes and
//! PostgreSQL, and Debian's HAProxy in front of them, each run with the configuration the
//! repository ships in `deploy/`, only its addresses and files made local.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use tokio::process::{Child, Command};

use crate::cluster::free_port;

/// `deploy/pgbouncer.ini`, as operators copy it.
const PGBOUNCER_INI: &str = include_str!("../../deploy/pgbouncer.ini");
/// `deploy/haproxy.cfg`, as operators copy it (its addresses come from the environment).
const HAPROXY_CFG: &str = include_str!("../../deploy/haproxy.cfg");

/// PgBouncer, in transaction mode, in front of the machine's PostgreSQL (127.0.0.1:5432).
pub struct PgBouncer {
    pub port: u16,
    binary: PathBuf,
    /// Its configuration, log and pid file.
    dir: PathBuf,
    child: Option<Child>,
}

impl PgBouncer {
    /// Starts PgBouncer with `deploy/pgbouncer.ini`: any database of the local server
    /// (`* = ...`), trust authentication, its files in `dir`.
    pub async fn start(dir: &Path) -> Result<PgBouncer> {
        let binary = debian_binary("pgbouncer")?;
        let dir = dir.join("pgbouncer");
        std::fs::create_dir_all(&dir)?;
        let port = free_port()?;
        let ini = local_pgbouncer_ini(&dir, port);
        std::fs::write(dir.join("pgbouncer.ini"), ini)?;
        std::fs::write(dir.join("userlist.txt"), "\"postgres\" \"\"\n")?;
        if is_root() {
            let chowned = Command::new("chown")
                .args(["-R", "postgres"])
                .arg(&dir)
                .status()
                .await?;
            if !chowned.success() {
                bail!("cannot hand {} to the postgres user", dir.display());
            }
        }
        let mut bouncer = PgBouncer {
            port,
            binary,
            dir,
            child: None,
        };
        bouncer.restart().await?;
        Ok(bouncer)
    }

    /// Starts PgBouncer (again, after [`PgBouncer::kill`]) on its port with its configuration,
    /// and waits until it accepts connections.
    pub async fn restart(&mut self) -> Result<()> {
        // A pid file left by a SIGKILL names a process that is gone: PgBouncer would remove it
        // itself, unless the pid was taken again meanwhile.
        let _ = std::fs::remove_file(self.dir.join("pgbouncer.pid"));
        // PgBouncer refuses to run as root: as root, it switches to PostgreSQL's user itself
        // (`-u`), so that the child killed on drop is PgBouncer (under `runuser`, killing
        // `runuser` left PgBouncer running after every CI run).
        let mut command = Command::new(&self.binary);
        if is_root() {
            command.args(["-u", "postgres"]);
        }
        let child = command
            .arg(self.dir.join("pgbouncer.ini"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {}", self.binary.display()))?;
        let child = self.child.insert(child);
        wait_for_port(self.port, child, &self.dir.join("pgbouncer.log")).await
    }

    /// SIGKILL: PgBouncer's connections, to the processes and to PostgreSQL, are cut at once,
    /// whatever they were doing; its port refuses connections until [`PgBouncer::restart`].
    pub async fn kill(&mut self) -> Result<()> {
        if let Some(mut child) = self.child.take() {
            child.start_kill()?;
            child.wait().await?;
        }
        Ok(())
    }

    pub async fn stop(mut self) {
        let _ = self.kill().await;
    }
}

/// `deploy/pgbouncer.ini` with the lines marked `local` made this machine's: every database
/// of the local server, `port`, trust, and files in `dir`.
fn local_pgbouncer_ini(dir: &Path, port: u16) -> String {
    let file = |name: &str| dir.join(name).display().to_string();
    PGBOUNCER_INI
        .lines()
        .map(|line| {
            let key = line.split('=').next().unwrap_or_default().trim();
            match key {
                "kobo" => "* = host=127.0.0.1 port=5432".to_owned(),
                "listen_port" => format!("listen_port = {port}"),
                "auth_type" => "auth_type = trust".to_owned(),
                "auth_file" => format!("auth_file = {}", file("userlist.txt")),
                "logfile" => format!("logfile = {}", file("pgbouncer.log")),
                "pidfile" => format!("pidfile = {}", file("pgbouncer.pid")),
                _ => line.to_owned(),
            }
        })
        .chain(["unix_socket_dir =".to_owned()])
        .collect::<Vec<_>>()
        .join("\n")
}

/// HAProxy in front of three processes, with `deploy/haproxy.cfg`.
pub struct HaProxy {
    pub port: u16,
    stats_port: u16,
    child: Child,
    http: reqwest::Client,
}

impl HaProxy {
    /// Starts HAProxy in front of the processes listening on `backends` (three, as the
    /// configuration names them), and waits until it sends traffic to all of them.
    pub async fn start(dir: &Path, backends: &[u16]) -> Result<HaProxy> {
        if backends.len() != 3 {
            bail!(
                "deploy/haproxy.cfg names three kobo processes: run three (--processes 3), not {}",
                backends.len()
            );
        }
        let binary = debian_binary("haproxy")?;
        let dir = dir.join("haproxy");
        std::fs::create_dir_all(&dir)?;
        let config = dir.join("haproxy.cfg");
        std::fs::write(&config, HAPROXY_CFG)?;
        let port = free_port()?;
        let stats_port = free_port()?;
        let log = dir.join("haproxy.log");
        let output = std::fs::File::create(&log)?;
        let mut command = Command::new(&binary);
        command
            .args(["-db", "-f"])
            .arg(&config)
            .env("KOBO_EDGE_LISTEN", format!("127.0.0.1:{port}"))
            .env("KOBO_EDGE_STATS", format!("127.0.0.1:{stats_port}"));
        for (index, backend) in backends.iter().enumerate() {
            command.env(
                format!("KOBO_{}", index + 1),
                format!("127.0.0.1:{backend}"),
            );
        }
        let child = command
            .stdin(Stdio::null())
            .stdout(output.try_clone()?)
            .stderr(output)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {}", binary.display()))?;
        let mut haproxy = HaProxy {
            port,
            stats_port,
            child,
            http: reqwest::Client::new(),
        };
        wait_for_port(stats_port, &mut haproxy.child, &log).await?;
        for index in 0..backends.len() {
            haproxy
                .wait_until(index, true, Duration::from_secs(30))
                .await?;
        }
        Ok(haproxy)
    }

    /// Where clients send their requests.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Each backend's state as HAProxy's statistics give it (`UP`, `DOWN`, `UP 1/2`, ...).
    pub async fn states(&self) -> Result<Vec<String>> {
        Ok(self
            .servers("status")
            .await?
            .into_iter()
            .map(|(_, status)| status)
            .collect())
    }

    /// Requests HAProxy sent again (to the same process or, redispatched, to another) because a
    /// connection to a process failed: what the processes' drain should keep at 0.
    pub async fn retries(&self) -> Result<u64> {
        let mut total = 0;
        for column in ["wretr", "wredis"] {
            for (_, value) in self.servers(column).await? {
                total += value.parse::<u64>().unwrap_or(0);
            }
        }
        Ok(total)
    }

    /// `column` of HAProxy's statistics for each kobo process: (name, value).
    async fn servers(&self, column: &str) -> Result<Vec<(String, String)>> {
        let csv = self
            .http
            .get(format!("http://127.0.0.1:{}/stats;csv", self.stats_port))
            .send()
            .await?
            .text()
            .await?;
        let mut lines = csv.lines();
        let header: Vec<&str> = lines
            .next()
            .unwrap_or_default()
            .trim_start_matches("# ")
            .split(',')
            .collect();
        let wanted = column;
        let column = |name: &str| header.iter().position(|field| *field == name);
        let (Some(proxy), Some(server), Some(value)) =
            (column("pxname"), column("svname"), column(wanted))
        else {
            bail!("HAProxy's statistics have no pxname, svname or {wanted} column");
        };
        let mut servers = Vec::new();
        for line in lines {
            let fields: Vec<&str> = line.split(',').collect();
            let name = fields.get(server).copied().unwrap_or_default();
            if fields.get(proxy) == Some(&"kobo") && name.starts_with("kobo") {
                let field = fields.get(value).copied().unwrap_or_default();
                servers.push((name.to_owned(), field.to_owned()));
            }
        }
        Ok(servers)
    }

    /// Waits until HAProxy has backend `index` fully up (`up`) or down.
    pub async fn wait_until(&self, index: usize, up: bool, patience: Duration) -> Result<()> {
        let wanted = if up { "UP" } else { "DOWN" };
        let started = Instant::now();
        loop {
            let states = self.states().await.unwrap_or_default();
            if states.get(index).map(String::as_str) == Some(wanted) {
                return Ok(());
            }
            if started.elapsed() > patience {
                bail!(
                    "HAProxy does not see kobo{} {wanted} after {patience:?}: {states:?}",
                    index + 1
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub async fn stop(mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }
}

/// Debian installs both in `/usr/sbin`, which is not on every user's `PATH`.
fn debian_binary(name: &str) -> Result<PathBuf> {
    let sbin = PathBuf::from("/usr/sbin").join(name);
    if sbin.exists() {
        return Ok(sbin);
    }
    let on_path = std::env::var_os("PATH")
        .map(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(name))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .find(|candidate| candidate.exists());
    on_path.with_context(|| format!("no {name}: on Debian, apt-get install {name}"))
}

fn is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).trim() == "0")
}

/// Waits until something accepts connections on `port`, or `child` exits.
async fn wait_for_port(port: u16, child: &mut Child, log: &Path) -> Result<()> {
    let started = Instant::now();
    loop {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return Ok(());
        }
        if let Some(status) = child.try_wait()? {
            bail!("exited at start ({status}); see {}", log.display());
        }
        if started.elapsed() > Duration::from_secs(20) {
            bail!("not listening on {port} after 20 s; see {}", log.display());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Runs `command` with a PgBouncer of its own in front of the local PostgreSQL, its address in
/// `KOBO_TEST_POSTGRES_POOLER_URL`; whether `command` succeeded.
pub async fn with_pgbouncer(command: &[String]) -> Result<bool> {
    let dir = std::env::temp_dir().join(format!("kobo-pgbouncer-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let bouncer = PgBouncer::start(&dir).await.context("starting PgBouncer")?;
    let (program, args) = command.split_first().context("no command")?;
    let status = Command::new(program)
        .args(args)
        .env(
            "KOBO_TEST_POSTGRES_POOLER_URL",
            format!("postgres://postgres@127.0.0.1:{}/postgres", bouncer.port),
        )
        .status()
        .await
        .with_context(|| format!("cannot run {program}"))?;
    bouncer.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(status.success())
}
