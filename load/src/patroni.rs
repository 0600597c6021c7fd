//! A PostgreSQL that survives the death of a machine, as docs/deploying.md deploys it: three
//! PostgreSQL 15 servers ("machines") under Patroni, with synchronous replication and automatic
//! failover, etcd for Patroni's leader key, pgBackRest's repository for the archived WAL and the
//! base backups, and HAProxy in front, asking each Patroni which machine is the primary. Debian
//! 12's packages, with the configurations the repository ships in `deploy/` (`patroni.yml`,
//! `pgbackrest.conf`, `haproxy-postgres.cfg`, `patroni-wal-backfill`), only their names,
//! addresses and directories made local: every machine on loopback ports of this one.
//!
//! A machine dies ([`Patroni::kill`]): its Patroni and every process of its PostgreSQL get
//! SIGKILL at once, as when the power goes. It comes back ([`Patroni::rebuild`]) with its data
//! directory removed: Patroni starts on an empty directory and copies the new primary
//! (`pg_basebackup`), then follows it as a standby.
//!
//! PostgreSQL refuses to run as root: as root, everything of the cluster runs as PostgreSQL's
//! own user, `postgres`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::Value;
use tokio::process::{Child, Command};

use crate::cluster::free_port;

/// `deploy/patroni.yml`, as operators copy it.
const PATRONI_YML: &str = include_str!("../../deploy/patroni.yml");
/// `deploy/pgbackrest.conf`, as operators copy it.
const PGBACKREST_CONF: &str = include_str!("../../deploy/pgbackrest.conf");
/// `deploy/haproxy-postgres.cfg`, as operators copy it (its addresses come from the environment).
const HAPROXY_CFG: &str = include_str!("../../deploy/haproxy-postgres.cfg");
/// `deploy/patroni-wal-backfill`, Patroni's `on_role_change` callback.
const WAL_BACKFILL: &str = include_str!("../../deploy/patroni-wal-backfill");

/// PostgreSQL's programs, as Debian installs them.
const BIN: &str = "/usr/lib/postgresql/15/bin";

/// Who runs the cluster's processes: PostgreSQL's user when this program runs as root.
#[derive(Clone, Copy, Debug)]
struct Owner(Option<(u32, u32)>);

impl Owner {
    fn find() -> Result<Owner> {
        if !is_root() {
            return Ok(Owner(None));
        }
        let id = |flag: &str| -> Result<u32> {
            let output = std::process::Command::new("id")
                .args([flag, "postgres"])
                .output()?;
            String::from_utf8_lossy(&output.stdout)
                .trim()
                .parse()
                .context("no postgres user: on Debian, apt-get install postgresql-15")
        };
        Ok(Owner(Some((id("-u")?, id("-g")?))))
    }

    /// `program`, run as the owner, in `dir` (which it can enter).
    fn command(&self, program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
        let mut command = Command::new(program);
        command.current_dir(dir).env("HOME", dir);
        if let Some((uid, gid)) = self.0 {
            command.uid(uid).gid(gid);
        }
        command
    }

    /// Hands `path` (and all below it) to the owner.
    async fn own(&self, path: &Path) -> Result<()> {
        if let Some((uid, gid)) = self.0 {
            let status = Command::new("chown")
                .arg("-R")
                .arg(format!("{uid}:{gid}"))
                .arg(path)
                .status()
                .await?;
            if !status.success() {
                bail!("cannot hand {} to the postgres user", path.display());
            }
        }
        Ok(())
    }
}

/// One database machine: a Patroni and the PostgreSQL it runs.
pub struct Node {
    pub name: String,
    /// PostgreSQL's port.
    pub port: u16,
    /// Patroni's REST API.
    pub api_port: u16,
    dir: PathBuf,
    child: Option<Child>,
    pub starts: u32,
}

impl Node {
    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn pgbackrest_conf(&self) -> PathBuf {
        self.dir.join("pgbackrest.conf")
    }

    /// Whether its Patroni runs (the machine is up).
    pub fn is_up(&self) -> bool {
        self.child.is_some()
    }
}

/// What Patroni says of one member (`GET /cluster`).
#[derive(Clone, Debug)]
pub struct Member {
    pub name: String,
    /// `leader`, `sync_standby` or `replica`.
    pub role: String,
    /// `running`, `streaming`, `starting`, `creating replica`, `stopped`, ...
    pub state: String,
}

/// The cluster of the run.
pub struct Patroni {
    dir: PathBuf,
    owner: Owner,
    etcd: Child,
    pub nodes: Vec<Node>,
    /// Started once the machines are up.
    haproxy: Option<Child>,
    /// HAProxy's address: always the primary.
    pub port: u16,
    stats_port: u16,
    http: reqwest::Client,
    /// Restored copies started by [`Patroni::restore`], stopped with the cluster.
    restored: Vec<PathBuf>,
}

impl Patroni {
    /// Starts etcd, `nodes` machines and HAProxy in `dir/patroni`, and waits until there is a
    /// primary with a synchronous standby and every standby follows it.
    pub async fn start(dir: &Path, nodes: usize) -> Result<Patroni> {
        if nodes < 2 {
            bail!("a primary needs a synchronous standby: two machines at least");
        }
        let owner = Owner::find()?;
        let dir = dir.join("patroni");
        std::fs::create_dir_all(&dir)?;
        for sub in ["repo", "log", "lock", "spool", "etcd"] {
            std::fs::create_dir_all(dir.join(sub))?;
        }
        let backfill = dir.join("patroni-wal-backfill");
        std::fs::write(&backfill, WAL_BACKFILL)?;
        set_mode(&backfill, 0o755)?;

        let etcd_port = free_port()?;
        let etcd_peer = free_port()?;
        let etcd_log = std::fs::File::create(dir.join("etcd.log"))?;
        let mut etcd = Command::new(debian_binary("etcd")?)
            .args([
                "--name",
                "kobo-etcd",
                "--data-dir",
                &dir.join("etcd/data").display().to_string(),
                "--listen-client-urls",
                &format!("http://127.0.0.1:{etcd_port}"),
                "--advertise-client-urls",
                &format!("http://127.0.0.1:{etcd_port}"),
                "--listen-peer-urls",
                &format!("http://127.0.0.1:{etcd_peer}"),
                "--initial-advertise-peer-urls",
                &format!("http://127.0.0.1:{etcd_peer}"),
                "--initial-cluster",
                &format!("kobo-etcd=http://127.0.0.1:{etcd_peer}"),
                "--logger",
                "zap",
            ])
            .stdin(Stdio::null())
            .stdout(etcd_log.try_clone()?)
            .stderr(etcd_log)
            .kill_on_drop(true)
            .spawn()
            .context("cannot start etcd (Debian's etcd-server)")?;
        wait_for_port(etcd_port, &mut etcd, &dir.join("etcd.log")).await?;

        let mut made = Vec::new();
        for index in 0..nodes {
            let name = format!("db{}", index + 1);
            let node_dir = dir.join(&name);
            std::fs::create_dir_all(&node_dir)?;
            let node = Node {
                name,
                port: free_port()?,
                api_port: free_port()?,
                dir: node_dir,
                child: None,
                starts: 0,
            };
            std::fs::write(
                node.dir.join("patroni.yml"),
                local_patroni_yml(&node, etcd_port, &backfill)?,
            )?;
            std::fs::write(node.pgbackrest_conf(), local_pgbackrest_conf(&dir, &node)?)?;
            made.push(node);
        }
        owner.own(&dir).await?;
        let mut patroni = Patroni {
            dir: dir.clone(),
            owner,
            etcd,
            nodes: made,
            haproxy: None,
            port: free_port()?,
            stats_port: free_port()?,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(2))
                .build()?,
            restored: Vec::new(),
        };
        for index in 0..nodes {
            patroni.start_node(index)?;
        }
        patroni
            .wait_healthy(Duration::from_secs(120))
            .await
            .context("the Patroni cluster did not come up")?;
        // The repository: the primary's archive_command pushes to it from now on.
        patroni
            .pgbackrest(&["stanza-create"])
            .await
            .context("pgbackrest stanza-create")?;
        patroni.haproxy = Some(patroni.start_haproxy().await?);
        Ok(patroni)
    }

    /// HAProxy's `host:port`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn start_node(&mut self, index: usize) -> Result<()> {
        let node = &mut self.nodes[index];
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(node.dir.join("patroni.log"))?;
        let child = self
            .owner
            .command("patroni", &node.dir)
            .arg(node.dir.join("patroni.yml"))
            .env("PGBACKREST_CONFIG", node.pgbackrest_conf())
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .context("cannot start patroni (Debian's patroni)")?;
        node.child = Some(child);
        node.starts += 1;
        Ok(())
    }

    async fn start_haproxy(&self) -> Result<Child> {
        let binary = debian_binary("haproxy")?;
        let config = self.dir.join("haproxy-postgres.cfg");
        std::fs::write(&config, HAPROXY_CFG)?;
        let log = self.dir.join("haproxy.log");
        let output = std::fs::File::create(&log)?;
        let mut command = Command::new(&binary);
        command
            .args(["-db", "-f"])
            .arg(&config)
            .env("KOBO_DB_LISTEN", self.address())
            .env("KOBO_DB_STATS", format!("127.0.0.1:{}", self.stats_port));
        if self.nodes.len() != 3 {
            bail!(
                "deploy/haproxy-postgres.cfg names three machines, not {}",
                self.nodes.len()
            );
        }
        for (index, node) in self.nodes.iter().enumerate() {
            command
                .env(
                    format!("KOBO_DB_{}", index + 1),
                    format!("127.0.0.1:{}", node.port),
                )
                .env(
                    format!("KOBO_DB_{}_PATRONI", index + 1),
                    node.api_port.to_string(),
                );
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(output.try_clone()?)
            .stderr(output)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {}", binary.display()))?;
        wait_for_port(self.stats_port, &mut child, &log).await?;
        // HAProxy starts with every machine up until its checks say otherwise: wait until the
        // primary is the only one in use.
        let started = Instant::now();
        while self.in_use().await.is_none() {
            if started.elapsed() > Duration::from_secs(20) {
                bail!("HAProxy found no primary in 20 s; see {}", log.display());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(child)
    }

    /// The one machine HAProxy sends connections to, if there is exactly one: the state of
    /// each in its statistics, `UP` (`UP 1/2`, still up but failing, counts too: it is still
    /// sent connections).
    pub async fn in_use(&self) -> Option<usize> {
        let csv = self
            .http
            .get(format!("http://127.0.0.1:{}/stats;csv", self.stats_port))
            .send()
            .await
            .ok()?
            .text()
            .await
            .ok()?;
        let up: Vec<usize> = csv
            .lines()
            .filter_map(|line| {
                let fields: Vec<&str> = line.split(',').collect();
                let name = fields.get(1)?.strip_prefix("db")?;
                (fields.first() == Some(&"postgres") && fields.get(17)?.starts_with("UP"))
                    .then(|| name.parse::<usize>().ok().map(|n| n - 1))
                    .flatten()
            })
            .collect();
        match up.as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }

    /// The members as Patroni sees them, asked of the first machine that answers.
    pub async fn members(&self) -> Option<Vec<Member>> {
        for node in self.nodes.iter().filter(|node| node.is_up()) {
            let url = format!("http://127.0.0.1:{}/cluster", node.api_port);
            let Ok(response) = self.http.get(&url).send().await else {
                continue;
            };
            let Ok(cluster) = response.json::<Value>().await else {
                continue;
            };
            let members = cluster["members"].as_array()?;
            return Some(
                members
                    .iter()
                    .map(|member| Member {
                        name: member["name"].as_str().unwrap_or_default().to_owned(),
                        role: member["role"].as_str().unwrap_or_default().to_owned(),
                        state: member["state"].as_str().unwrap_or_default().to_owned(),
                    })
                    .collect(),
            );
        }
        None
    }

    /// The index of the machine whose Patroni holds the leader key and runs, if one does.
    pub async fn leader(&self) -> Option<usize> {
        let members = self.members().await?;
        let leader = members
            .iter()
            .find(|member| member.role == "leader" && member.state == "running")?;
        self.index_of(&leader.name)
            .filter(|index| self.nodes[*index].is_up())
    }

    fn index_of(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|node| node.name == name)
    }

    /// Waits until a running machine leads, another is its synchronous standby, and every
    /// machine that is up follows it; the leader's index.
    pub async fn wait_healthy(&self, patience: Duration) -> Result<usize> {
        self.wait_following(patience, true).await
    }

    /// Waits until a running machine leads and every machine that is up follows it, one of
    /// them as its synchronous standby when `synchronous`; the leader's index.
    pub async fn wait_following(&self, patience: Duration, synchronous: bool) -> Result<usize> {
        let started = Instant::now();
        let mut last = None;
        loop {
            if let Some(members) = self.members().await {
                let up = self.nodes.iter().filter(|node| node.is_up()).count();
                let leader = self.leader().await;
                let following = members
                    .iter()
                    .filter(|m| {
                        matches!(m.role.as_str(), "sync_standby" | "replica")
                            && matches!(m.state.as_str(), "running" | "streaming")
                    })
                    .count();
                let sync = members.iter().any(|m| {
                    m.role == "sync_standby" && matches!(m.state.as_str(), "running" | "streaming")
                });
                if let Some(leader) = leader {
                    if (sync || !synchronous) && following + 1 >= up {
                        return Ok(leader);
                    }
                }
                last = Some(members);
            }
            if started.elapsed() > patience {
                bail!(
                    "no primary{} and every machine following it after {patience:?}: {last:?}; \
                     see the logs in {}",
                    if synchronous {
                        " with a synchronous standby"
                    } else {
                        ""
                    },
                    self.dir.display()
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The machine dies: SIGKILL to its Patroni and to every process of its PostgreSQL at
    /// once (the postmaster and its backends are one process group). Nothing of it is shut
    /// down: its connections are cut, its leader key (if it held it) expires after Patroni's
    /// `ttl`.
    pub async fn kill(&mut self, index: usize) -> Result<()> {
        let node = &mut self.nodes[index];
        let postmaster = postmaster_group(&node.data());
        if let Some(child) = node.child.as_mut() {
            child.start_kill()?;
        }
        if let Some(group) = postmaster {
            kill_group(group);
        }
        if let Some(mut child) = node.child.take() {
            child.wait().await?;
        }
        Ok(())
    }

    /// The machine comes back empty: its data directory removed, Patroni started on it, which
    /// copies the primary (`pg_basebackup`) and follows it. Returns once every machine that is
    /// up follows the primary and one of them is its synchronous standby.
    pub async fn rebuild(&mut self, index: usize, patience: Duration) -> Result<()> {
        if self.nodes[index].is_up() {
            bail!("{} is up: kill it first", self.nodes[index].name);
        }
        let data = self.nodes[index].data();
        if data.exists() {
            std::fs::remove_dir_all(&data)
                .with_context(|| format!("cannot remove {}", data.display()))?;
        }
        self.start_node(index)?;
        self.wait_healthy(patience).await?;
        Ok(())
    }

    /// A machine shut down cleanly (SIGTERM: Patroni stops its PostgreSQL, then exits; a
    /// primary hands over first).
    pub async fn shut_down(&mut self, index: usize) -> Result<()> {
        if let Some(mut child) = self.nodes[index].child.take() {
            if let Some(pid) = child.id() {
                Command::new("kill")
                    .args(["-TERM", &pid.to_string()])
                    .status()
                    .await?;
            }
            if tokio::time::timeout(Duration::from_secs(60), child.wait())
                .await
                .is_err()
            {
                bail!("{} did not stop within 60 s", self.nodes[index].name);
            }
        }
        Ok(())
    }

    /// A machine shut down by [`Patroni::shut_down`] started again on its data.
    pub fn start_again(&mut self, index: usize) -> Result<()> {
        if self.nodes[index].is_up() {
            bail!("{} is up", self.nodes[index].name);
        }
        self.start_node(index)
    }

    /// Changes the cluster's settings in etcd (`PATCH /config` of Patroni's REST API, as
    /// `patronictl edit-config` does): `patch` is merged into them, and every Patroni applies it
    /// at its next loop.
    pub async fn configure(&self, patch: &Value) -> Result<()> {
        let leader = self.leader().await.context("no primary to configure")?;
        let url = format!("http://127.0.0.1:{}/config", self.nodes[leader].api_port);
        let response = self.http.patch(&url).json(patch).send().await?;
        if !response.status().is_success() {
            bail!("PATCH /config {patch}: {}", response.text().await?);
        }
        Ok(())
    }

    /// `pgbackrest --stanza=kobo ARGS...` on the primary's machine (its configuration), as the
    /// cluster's owner.
    pub async fn pgbackrest(&self, args: &[&str]) -> Result<String> {
        let leader = self.leader().await.context("no primary to back up")?;
        let node = &self.nodes[leader];
        let output = self
            .owner
            .command("pgbackrest", &self.dir)
            .arg(format!("--config={}", node.pgbackrest_conf().display()))
            .arg("--stanza=kobo")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .await
            .context("cannot run pgbackrest (Debian's pgbackrest)")?;
        if !output.status.success() {
            bail!(
                "pgbackrest {}: {}{}",
                args.join(" "),
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// A full base backup, from the primary.
    pub async fn backup(&self) -> Result<Duration> {
        let started = Instant::now();
        self.pgbackrest(&["--type=full", "backup"]).await?;
        Ok(started.elapsed())
    }

    /// Makes sure what was committed until now is archived: the primary switches to a new
    /// segment of WAL and pgBackRest waits until the last one is in its repository
    /// (`pgbackrest check`).
    pub async fn archive_now(&self) -> Result<()> {
        self.pgbackrest(&["check"]).await.map(|_| ())
    }

    /// Restores the cluster as it was at `target` into `dir` (a new data directory), from the
    /// last base backup before it and the archived WAL, and starts it as a PostgreSQL of its
    /// own on a free port, promoted once recovery reached `target`. Timelines are followed:
    /// the moment may be after any number of failovers.
    pub async fn restore(
        &mut self,
        target: chrono::DateTime<chrono::Utc>,
        dir: &Path,
    ) -> Result<Restored> {
        self.restore_from(target, dir, None).await
    }

    /// [`Patroni::restore`] from the base backup `set` (a label of `pgbackrest info`), not
    /// the last one before `target`.
    pub async fn restore_from(
        &mut self,
        target: chrono::DateTime<chrono::Utc>,
        dir: &Path,
        set: Option<&str>,
    ) -> Result<Restored> {
        std::fs::create_dir_all(dir)?;
        self.owner.own(dir).await?;
        let data = dir.join("data");
        let started = Instant::now();
        let mut args = vec![
            format!("--pg1-path={}", data.display()),
            "--type=time".to_owned(),
            format!("--target={}", target.format("%Y-%m-%d %H:%M:%S%.6f+00")),
            "--target-action=promote".to_owned(),
        ];
        if let Some(set) = set {
            args.push(format!("--set={set}"));
        }
        args.push("restore".to_owned());
        self.pgbackrest(&args.iter().map(String::as_str).collect::<Vec<_>>())
            .await?;
        let copied = started.elapsed();
        let port = free_port()?;
        // The copy is a PostgreSQL of its own: no archiving into the cluster's repository, no
        // synchronous standby to wait for, its own files and port.
        let options = [
            format!("-c port={port}"),
            "-c listen_addresses=127.0.0.1".to_owned(),
            format!("-c unix_socket_directories={}", dir.display()),
            "-c archive_mode=off".to_owned(),
            "-c synchronous_standby_names=".to_owned(),
            format!("-c hba_file={}", data.join("pg_hba.conf").display()),
            format!("-c ident_file={}", data.join("pg_ident.conf").display()),
        ]
        .join(" ");
        self.restored.push(data.clone());
        let output = self
            .owner
            .command(Path::new(BIN).join("pg_ctl"), dir)
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(dir.join("postgresql.log"))
            .args(["-w", "-t", "3600", "-o", &options, "start"])
            .stdin(Stdio::null())
            .output()
            .await?;
        if !output.status.success() {
            bail!(
                "the restored copy did not start: {}; see {}",
                String::from_utf8_lossy(&output.stdout),
                dir.join("postgresql.log").display()
            );
        }
        let restored = Restored {
            port,
            data: data.clone(),
            copied,
            recovered: Duration::ZERO,
        };
        // Ready for reads while it replays; writable once promoted at the target.
        loop {
            let recovering = psql_at(&restored.address(), "SELECT pg_is_in_recovery()").await;
            match recovering.as_deref().map(str::trim) {
                Ok("f") => break,
                Ok(_) => {}
                Err(_) if postmaster_group(&data).is_none() => bail!(
                    "the restored copy stopped during recovery; see {}",
                    dir.join("postgresql.log").display()
                ),
                Err(_) => {}
            }
            if started.elapsed() > Duration::from_secs(3600) {
                bail!("the restored copy still recovering after an hour");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(Restored {
            recovered: started.elapsed(),
            ..restored
        })
    }

    /// Stops a restored copy and removes its data.
    pub async fn discard(&mut self, restored: Restored) -> Result<()> {
        let _ = self
            .owner
            .command(Path::new(BIN).join("pg_ctl"), &self.dir)
            .arg("-D")
            .arg(&restored.data)
            .args(["-m", "fast", "-w", "stop"])
            .stdin(Stdio::null())
            .output()
            .await?;
        if let Some(group) = postmaster_group(&restored.data) {
            kill_group(group);
        }
        self.restored.retain(|data| *data != restored.data);
        std::fs::remove_dir_all(&restored.data)?;
        Ok(())
    }

    /// The labels of the base backups in the repository, oldest first, with their size in the
    /// repository and the database's (bytes).
    pub async fn backups(&self) -> Result<Vec<(String, u64, u64)>> {
        let info: Value =
            serde_json::from_str(&self.pgbackrest(&["--output=json", "info"]).await?)?;
        Ok(info[0]["backup"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|backup| {
                (
                    backup["label"].as_str().unwrap_or_default().to_owned(),
                    backup["info"]["repository"]["delta"].as_u64().unwrap_or(0),
                    backup["info"]["size"].as_u64().unwrap_or(0),
                )
            })
            .collect())
    }

    /// Stops every machine (SIGTERM: Patroni stops its PostgreSQL and exits), the restored
    /// copies, HAProxy and etcd; removes the data directories and the repository when
    /// `remove` (the logs stay).
    pub async fn stop(mut self, remove: bool) {
        for node in &mut self.nodes {
            if let Some(mut child) = node.child.take() {
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
        self.kill_postmasters();
        if let Some(mut haproxy) = self.haproxy.take() {
            let _ = haproxy.start_kill();
            let _ = haproxy.wait().await;
        }
        let _ = self.etcd.start_kill();
        let _ = self.etcd.wait().await;
        if remove {
            for node in &self.nodes {
                let _ = std::fs::remove_dir_all(node.data());
            }
            for data in &self.restored {
                let _ = std::fs::remove_dir_all(data);
            }
            for sub in ["repo", "etcd", "spool"] {
                let _ = std::fs::remove_dir_all(self.dir.join(sub));
            }
        }
    }

    /// SIGKILL to every PostgreSQL of the cluster still running (its own process group each:
    /// Patroni starts them in a session of their own, so they outlive a Patroni killed).
    fn kill_postmasters(&self) {
        let datas = self
            .nodes
            .iter()
            .map(Node::data)
            .chain(self.restored.iter().cloned());
        for data in datas {
            if let Some(group) = postmaster_group(&data) {
                kill_group(group);
            }
        }
    }
}

impl Drop for Patroni {
    /// Whatever happened (an error, Ctrl-C), no PostgreSQL of the run is left running; Patroni,
    /// etcd and HAProxy are killed on drop.
    fn drop(&mut self) {
        self.kill_postmasters();
    }
}

/// A copy restored to a moment ([`Patroni::restore`]), running on `port`.
pub struct Restored {
    pub port: u16,
    data: PathBuf,
    /// How long pgBackRest took to copy the backup and write the recovery settings.
    pub copied: Duration,
    /// From the start of the restore until the copy was promoted at the target.
    pub recovered: Duration,
}

impl Restored {
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

/// `deploy/patroni.yml` for `node`: its name, addresses and directories, etcd's address, trust
/// on loopback (no passwords on a test machine), and the callback's path; every other setting
/// as shipped. A setting the file no longer has is an error, so the test follows the file.
fn local_patroni_yml(node: &Node, etcd_port: u16, backfill: &Path) -> Result<String> {
    use serde_norway::Value as Yaml;
    let mut doc: Yaml = serde_norway::from_str(PATRONI_YML).context("deploy/patroni.yml")?;
    let string = |s: String| Yaml::String(s);
    let api = format!("127.0.0.1:{}", node.api_port);
    let pg = format!("127.0.0.1:{}", node.port);
    let hba = [
        "host replication replicator 127.0.0.1/32 trust",
        "host all all 127.0.0.1/32 trust",
        "local all all trust",
    ];
    let values = [
        ("name", string(node.name.clone())),
        ("restapi.listen", string(api.clone())),
        ("restapi.connect_address", string(api)),
        ("etcd3.hosts", string(format!("127.0.0.1:{etcd_port}"))),
        (
            "bootstrap.pg_hba",
            Yaml::Sequence(hba.iter().map(|line| string(line.to_string())).collect()),
        ),
        ("postgresql.listen", string(pg.clone())),
        ("postgresql.connect_address", string(pg)),
        (
            "postgresql.data_dir",
            string(node.data().display().to_string()),
        ),
        (
            "postgresql.pgpass",
            string(node.dir.join("pgpass").display().to_string()),
        ),
        (
            "postgresql.parameters.unix_socket_directories",
            string(node.dir.display().to_string()),
        ),
        (
            "postgresql.callbacks.on_role_change",
            string(format!("{} {}", backfill.display(), node.data().display())),
        ),
    ];
    for (path, value) in values {
        let mut at = &mut doc;
        for key in path.split('.') {
            at = at
                .get_mut(key)
                .with_context(|| format!("deploy/patroni.yml has no {path}"))?;
        }
        *at = value;
    }
    Ok(serde_norway::to_string(&doc)?)
}

/// `deploy/pgbackrest.conf` for `node`, its lines marked `local` made this run's: the
/// repository, logs and locks in `dir`, `node`'s data directory, port and socket.
fn local_pgbackrest_conf(dir: &Path, node: &Node) -> Result<String> {
    let path = |p: PathBuf| p.display().to_string();
    let values = [
        ("repo1-path", path(dir.join("repo"))),
        ("log-path", path(dir.join("log"))),
        ("lock-path", path(dir.join("lock").join(&node.name))),
        ("spool-path", path(dir.join("spool"))),
        ("pg1-path", path(node.data())),
        ("pg1-port", node.port.to_string()),
        ("pg1-socket-path", path(node.dir.clone())),
    ];
    let mut replaced = 0;
    let mut local = false;
    let mut out = Vec::new();
    for line in PGBACKREST_CONF.lines() {
        if local {
            let key = line.split('=').next().unwrap_or_default().trim();
            let (_, value) = values
                .iter()
                .find(|(name, _)| *name == key)
                .with_context(|| format!("deploy/pgbackrest.conf: no local value for {key}"))?;
            out.push(format!("{key}={value}"));
            replaced += 1;
        } else {
            out.push(line.to_owned());
        }
        local = line.starts_with("# local");
    }
    if replaced != values.len() {
        bail!(
            "deploy/pgbackrest.conf marks {replaced} lines local, not {}",
            values.len()
        );
    }
    Ok(out.join("\n") + "\n")
}

/// The process group of the PostgreSQL running on `data`, from its `postmaster.pid`, while it
/// runs.
fn postmaster_group(data: &Path) -> Option<u32> {
    let pid_file = std::fs::read_to_string(data.join("postmaster.pid")).ok()?;
    let pid: u32 = pid_file.lines().next()?.trim().parse().ok()?;
    // /proc/PID/stat: "pid (comm) state ppid pgrp ..."; comm may hold spaces.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(')')?.1;
    let group: u32 = after.split_whitespace().nth(2)?.parse().ok()?;
    // A pid reused by something else is not ours to kill.
    let command = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).ok()?;
    command.contains("postgres").then_some(group)
}

/// SIGKILL to process group `group`.
fn kill_group(group: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{group}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Runs one statement as the superuser on the PostgreSQL at `address`; its output.
pub async fn psql_at(address: &str, statement: &str) -> Result<String> {
    let output = Command::new("psql")
        .args([
            &format!("postgres://postgres@{address}/postgres?connect_timeout=5"),
            "-v",
            "ON_ERROR_STOP=1",
            "-Atqc",
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
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn set_mode(path: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    Ok(())
}

fn is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).trim() == "0")
}

/// Debian installs some in `/usr/sbin`, not on every user's `PATH`.
fn debian_binary(name: &str) -> Result<PathBuf> {
    for dir in ["/usr/sbin", "/usr/bin"] {
        let path = Path::new(dir).join(name);
        if path.exists() {
            return Ok(path);
        }
    }
    bail!("no {name}: on Debian, apt-get install patroni etcd-server pgbackrest haproxy")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn node() -> Node {
        Node {
            name: "db2".into(),
            port: 6002,
            api_port: 7002,
            dir: PathBuf::from("/run/kobo/db2"),
            child: None,
            starts: 0,
        }
    }

    #[test]
    fn the_shipped_patroni_yml_is_localized_and_keeps_its_settings() {
        let text = local_patroni_yml(&node(), 2379, Path::new("/run/kobo/backfill")).unwrap();
        let doc: serde_norway::Value = serde_norway::from_str(&text).unwrap();
        assert_eq!(doc["name"].as_str(), Some("db2"));
        assert_eq!(doc["postgresql"]["listen"].as_str(), Some("127.0.0.1:6002"));
        assert_eq!(doc["restapi"]["listen"].as_str(), Some("127.0.0.1:7002"));
        assert_eq!(
            doc["postgresql"]["data_dir"].as_str(),
            Some("/run/kobo/db2/data")
        );
        let dcs = &doc["bootstrap"]["dcs"];
        assert_eq!(dcs["synchronous_mode"].as_bool(), Some(true));
        assert_eq!(dcs["synchronous_mode_strict"].as_bool(), Some(true));
        assert_eq!(
            dcs["postgresql"]["parameters"]["synchronous_commit"].as_str(),
            Some("on")
        );
        assert_eq!(
            doc["postgresql"]["callbacks"]["on_role_change"].as_str(),
            Some("/run/kobo/backfill /run/kobo/db2/data")
        );
    }

    /// A payment whose COMMIT the primary's death cut is found out by asking again, through
    /// HAProxy, for 10 s (`kobo_store_postgres::outcome::FIND_OUT_MAX`): the failover, the
    /// leader key's expiry plus the promotion and HAProxy's check (a second each at most),
    /// must fit in it. And Patroni's own rule on its timings.
    #[test]
    fn the_shipped_failover_fits_in_the_time_kobo_finds_a_lost_commit_out() {
        let doc: serde_norway::Value = serde_norway::from_str(PATRONI_YML).unwrap();
        let dcs = &doc["bootstrap"]["dcs"];
        let ttl = dcs["ttl"].as_u64().unwrap();
        let loop_wait = dcs["loop_wait"].as_u64().unwrap();
        let retry_timeout = dcs["retry_timeout"].as_u64().unwrap();
        assert!(loop_wait + 2 * retry_timeout <= ttl, "{dcs:?}");
        assert!(
            ttl + 2 < 10,
            "ttl {ttl}: a failover would outlast the 10 s of finding out"
        );
    }

    /// HAProxy sends connections to a machine once its PostgreSQL is promoted, not as soon as
    /// its Patroni holds the leader key: until then every write is refused read-only.
    #[test]
    fn haproxy_waits_for_the_promotion_to_finish() {
        for line in [
            "http-check send meth GET uri /primary",
            "http-check expect status 200",
            r#"http-check expect rstring "\"role\": \"(master|primary)\"""#,
        ] {
            assert!(HAPROXY_CFG.contains(line), "no {line:?} in {HAPROXY_CFG}");
        }
    }

    #[test]
    fn the_shipped_pgbackrest_conf_is_localized_line_by_line() {
        let text = local_pgbackrest_conf(Path::new("/run/kobo"), &node()).unwrap();
        assert!(text.contains("\nrepo1-path=/run/kobo/repo\n"), "{text}");
        assert!(text.contains("\npg1-path=/run/kobo/db2/data\n"), "{text}");
        assert!(text.contains("\npg1-port=6002\n"), "{text}");
        assert!(text.contains("\nrepo1-retention-full=2\n"), "{text}");
        assert!(!text.contains("/var/lib/postgresql"), "{text}");
    }
}
