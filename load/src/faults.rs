//! Faults below `kobo`: the PostgreSQL server stopped and started, SQLite's disk filled (a
//! tmpfs of the run's own, mounted over the data directory; needs root), and SQLite's files
//! made read-only (`chattr +i`, which even root cannot write through; needs root).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use tokio::process::Command;

async fn run(program: &str, args: &[&str]) -> Result<()> {
    let output = Command::new(program)
        .args(args)
        .output()
        .await
        .with_context(|| format!("cannot run {program}"))?;
    if !output.status.success() {
        bail!(
            "{program} {}: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}

/// `pg_ctlcluster <version> main stop|start` for the machine's one cluster (fast shutdown:
/// every connection is cut, as in a crash of the server or a failover).
pub async fn postgres(action: &str) -> Result<()> {
    let versions: Vec<String> = std::fs::read_dir("/etc/postgresql")
        .context("no /etc/postgresql: PostgreSQL restarts need the Debian cluster tools")?
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    let [version] = versions.as_slice() else {
        bail!("expected one PostgreSQL cluster version in /etc/postgresql, found {versions:?}");
    };
    let mut args = vec![version.as_str(), "main", action];
    if action == "stop" {
        args.extend(["--", "-m", "fast"]);
    }
    run("pg_ctlcluster", &args).await
}

/// A tmpfs of its own over the data directory.
pub struct Disk {
    dir: PathBuf,
    filler: PathBuf,
}

impl Disk {
    /// Mounts a 1 GiB tmpfs over `dir` (empty).
    pub async fn mount(dir: &Path) -> Result<Disk> {
        let target = dir.display().to_string();
        run("mount", &["-t", "tmpfs", "-o", "size=1g", "tmpfs", &target])
            .await
            .context("disk faults need root (mount -t tmpfs)")?;
        Ok(Disk {
            dir: dir.to_owned(),
            filler: dir.join("filler"),
        })
    }

    /// Writes a file until the filesystem has no space left.
    pub async fn fill(&self) -> Result<()> {
        // dd stops with "No space left on device": that is the point.
        let _ = Command::new("dd")
            .args([
                "if=/dev/zero",
                &format!("of={}", self.filler.display()),
                "bs=1M",
            ])
            .output()
            .await?;
        Ok(())
    }

    pub async fn unfill(&self) -> Result<()> {
        tokio::fs::remove_file(&self.filler).await?;
        Ok(())
    }

    pub async fn unmount(self) {
        let _ = run("umount", &["-l", &self.dir.display().to_string()]).await;
    }
}

/// The SQLite files of `dir` (the database and its write-ahead log) made immutable, or
/// writable again: every write then fails with "operation not permitted", as on a volume
/// remounted read-only, while the process keeps its files open.
pub async fn read_only(dir: &Path, on: bool) -> Result<()> {
    for name in ["kobo.db", "kobo.db-wal"] {
        let path = dir.join(name);
        if path.exists() {
            let path = path.display().to_string();
            run("chattr", &[if on { "+i" } else { "-i" }, &path]).await?;
        }
    }
    Ok(())
}
