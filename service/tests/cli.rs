//! The `kobo` binary as an operator and a newcomer use it: each test runs the real executable
//! on a fresh data directory (SQLite) and a free loopback port.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

#[path = "cli/provider.rs"]
mod provider;

fn kobo(data_dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kobo"));
    command
        .env_remove("KOBO_DATABASE_URL")
        .env_remove("KOBO_SMTP_URL")
        .env_remove("KOBO_LISTEN")
        .env_remove("KOBO_ENVIRONMENT")
        .env_remove("KOBO_TOKEN_KEY_FILE")
        .env_remove("KOBO_SANDBOX_FAULTS")
        .env("KOBO_DATA_DIR", data_dir)
        .env("RUST_LOG", "warn");
    command
}

/// Runs `kobo args...` to completion; panics with its output unless it succeeded.
fn run(data_dir: &Path, args: &[&str]) -> String {
    let output = kobo(data_dir).args(args).output().unwrap();
    assert!(
        output.status.success(),
        "kobo {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn run_json(data_dir: &Path, args: &[&str]) -> Value {
    let stdout = run(data_dir, args);
    serde_json::from_str(&stdout).unwrap_or_else(|error| panic!("{error}: {stdout}"))
}

/// A `kobo` server process, stopped with SIGTERM when dropped.
struct Server {
    child: Child,
    /// What the server printed before its first request could be served.
    banner: String,
    base_url: String,
}

impl Server {
    /// Starts `kobo <args> --listen 127.0.0.1:0`-like: a port the OS picked just before, then
    /// waits until `/healthz` answers (bounded: 200 tries).
    fn start(data_dir: &Path, args: &[&str], banner_lines: usize) -> Server {
        let port = free_port();
        let address = format!("127.0.0.1:{port}");
        let mut child = kobo(data_dir)
            .args(args)
            .args(["--listen", &address])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut banner = String::new();
        for _ in 0..banner_lines {
            let mut line = String::new();
            if stdout.read_line(&mut line).unwrap() == 0 {
                break;
            }
            banner.push_str(&line);
        }
        let base_url = format!("http://{address}");
        let server = Server {
            child,
            banner,
            base_url,
        };
        for _ in 0..200 {
            if curl(&[
                "-s",
                "-o",
                "/dev/null",
                &format!("{}/healthz", server.base_url),
            ])
            .is_ok()
            {
                return server;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("kobo did not start listening on {address}");
    }

    /// SIGTERM, then the exit status and everything the process wrote to stderr.
    fn stop(mut self) -> (std::process::ExitStatus, String) {
        terminate(&self.child);
        let status = self.child.wait().unwrap();
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            pipe.read_to_string(&mut stderr).unwrap();
        }
        (status, stderr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn terminate(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

fn curl(args: &[&str]) -> Result<String, String> {
    let output = Command::new("curl")
        .args(["--max-time", "10"])
        .args(args)
        .output()
        .unwrap();
    if output.status.success() {
        Ok(String::from_utf8(output.stdout).unwrap())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

fn post(base_url: &str, path: &str, token: Option<&str>, body: &Value) -> Value {
    let url = format!("{base_url}{path}");
    let body = body.to_string();
    let authorization = token.map(|token| format!("Authorization: Bearer {token}"));
    let mut args = vec![
        "-s",
        "-X",
        "POST",
        &url,
        "-H",
        "Content-Type: application/json",
        "-d",
        &body,
    ];
    if let Some(header) = &authorization {
        args.extend(["-H", header.as_str()]);
    }
    let reply = curl(&args).unwrap();
    serde_json::from_str(&reply).unwrap_or_else(|error| panic!("{error}: {reply}"))
}

/// The two commands of the banner's "Try it" block.
fn try_it_block(banner: &str) -> String {
    let start = banner.find("TOKEN=$(curl").expect("a first request to try");
    let end = banner[start..]
        .find("\n\n")
        .map_or(banner.len(), |end| start + end);
    banner[start..end].to_string()
}

/// The envelope `fetch_customer_accounts` answered with the token the first command got: not
/// `41`, so the token was extracted and accepted. (`04` until the accounts issue lands.)
fn assert_token_accepted(reply: &Value) {
    let code = reply["response_code"].as_str().unwrap_or_default();
    assert!(
        code == "00" || code == "04",
        "the printed request should work: {reply}"
    );
}

#[test]
fn the_demo_prints_credentials_and_a_first_request_that_works() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &["demo"], 22);
    assert!(
        server.banner.contains("created Adaeze Foods Ltd"),
        "{}",
        server.banner
    );
    assert!(server.banner.contains("adaeze.okafor@adaezefoods.ng"));
    assert!(server.banner.contains("client_secret:  kbs_sandbox_"));
    // The Dashboard's address, where a newcomer goes on with no terminal.
    let dashboard = format!(
        "Dashboard: open {}/dashboard/ in a browser",
        server.base_url
    );
    assert!(server.banner.contains(&dashboard), "{}", server.banner);

    // The printed commands, run as a newcomer would paste them into a POSIX shell.
    let script = try_it_block(&server.banner);
    let output = Command::new("sh").args(["-c", &script]).output().unwrap();
    assert!(output.status.success(), "{script}");
    let reply: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("{error}: {}", String::from_utf8_lossy(&output.stdout)));
    assert_token_accepted(&reply);
    // The first request shows the demo's history: a customer's account and balances.
    let accounts = reply["data"].as_array().unwrap();
    assert_eq!(accounts.len(), 2, "{reply}");
    assert_eq!(accounts[0]["account_name"], "Chinedu Obi");
    assert_eq!(accounts[0]["balance"], "22500.500000000");
    assert_eq!(accounts[1]["balance"], "2450000.000000000");

    // The owner login printed works too.
    let login = post(
        &server.base_url,
        "/api/v1/auth/web/login",
        None,
        &serde_json::json!({"email": "adaeze.okafor@adaezefoods.ng", "password": "Jollof-Rice-2026"}),
    );
    assert_eq!(login["response_code"], "00", "{login}");

    let (status, stderr) = server.stop();
    assert!(status.success(), "kobo exits 0 after SIGTERM: {stderr}");

    // A second run reuses the business and prints a new secret that works.
    let again = Server::start(dir.path(), &["demo"], 22);
    assert!(
        again.banner.contains("reusing Adaeze Foods Ltd"),
        "{}",
        again.banner
    );
    let script = try_it_block(&again.banner);
    let output = Command::new("sh").args(["-c", &script]).output().unwrap();
    let reply: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_token_accepted(&reply);
    assert_eq!(
        reply["data"].as_array().unwrap().len(),
        2,
        "the history is seeded once: {reply}"
    );
    let (status, _) = again.stop();
    assert!(status.success());

    // The ledger the demo wrote balances.
    let report = run_json(dir.path(), &["ledger", "verify", "--json"]);
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(report["journal_entries"], 3);
    assert_eq!(report["ledger_total"], "0.00");
}

/// The README's transfer story, run as written against a fresh demo, then again against the
/// same demo (as a newcomer does), printing the same: it keeps the README true (issue 57: the
/// second run failed on the OTP limit and the policy the first made).
#[test]
fn the_readme_transfer_story_runs_against_the_demo_twice() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &["demo"], 22);
    let first = readme_transfer_story(&server.base_url);
    let second = readme_transfer_story(&server.base_url);
    assert_eq!(first[..7], second[..7]);
    let (status, _) = server.stop();
    assert!(status.success());
    let report = run_json(dir.path(), &["ledger", "verify", "--json"]);
    assert_eq!(report["ok"], true, "{report}");
}

/// Runs the README's transfer story (a name enquiry, an intra-bank payout, a NIP payout that
/// succeeds and one that is reversed, an approval) against the server at `base_url`, and
/// checks what it prints; returns the lines printed.
fn readme_transfer_story(base_url: &str) -> Vec<String> {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let marker = readme
        .find("**A transfer story with curl alone.**")
        .expect("the story in README");
    let start = marker + readme[marker..].find("```sh\n").expect("its script") + 6;
    let end = start + readme[start..].find("```").expect("the script's end");
    let script = &readme[start..end];
    let output = Command::new("sh")
        .args(["-ec", script])
        .env("KOBO", base_url)
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{printed}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = printed.lines().collect();
    assert!(lines[0].contains("Emeka Nwosu"), "{printed}");
    assert_eq!(
        lines[1..7],
        [
            "success",
            "success",
            "reversed",
            "True",
            "pending_approval",
            "cancelled"
        ],
        "{printed}"
    );
    assert!(
        printed.contains(" credit 12026.88 success"),
        "the reversal: {printed}"
    );
    lines.iter().map(|line| line.to_string()).collect()
}

/// `--sandbox-faults` puts the fault injector in front of the sandbox provider of a real
/// server: with every call unavailable, a name enquiry answers `80`, and the startup warning
/// names the seed. Production refuses the flag before it starts.
#[test]
fn sandbox_faults_are_injected_in_the_sandbox_and_refused_in_production() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        dir.path(),
        &["demo", "--sandbox-faults", "unavailable=1,seed=7"],
        22,
    );
    let login = post(
        &server.base_url,
        "/api/v1/auth/web/login",
        None,
        &serde_json::json!({"email": "adaeze.okafor@adaezefoods.ng", "password": "Jollof-Rice-2026"}),
    );
    let token = login["data"]["access_token"].as_str().unwrap().to_owned();
    let enquiry = post(
        &server.base_url,
        "/api/v1/transaction/transfer/web/name_enquiry",
        Some(&token),
        &serde_json::json!({"beneficiary_account_number": "0123456788", "bank_code": "000013",
                            "source_account_number": "1000000014"}),
    );
    assert_eq!(enquiry["response_code"], "80", "{enquiry}");
    assert!(
        enquiry["message"]
            .as_str()
            .unwrap()
            .contains("injected fault"),
        "{enquiry}"
    );
    let (status, stderr) = server.stop();
    assert!(status.success());
    assert!(
        stderr.contains("unavailable=1") && stderr.contains("seed=7"),
        "{stderr}"
    );

    let output = kobo(dir.path())
        .args([
            "serve",
            "--environment",
            "production",
            "--listen",
            "127.0.0.1:0",
        ])
        .env("KOBO_SANDBOX_FAULTS", "status_unknown=0.5")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("in the sandbox only"), "{stderr}");
    let output = kobo(dir.path())
        .args(["serve", "--sandbox-faults", "unavailable=2"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("a rate is a probability"), "{stderr}");
}

#[test]
fn ledger_verify_names_a_discrepancy_and_exits_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    run(
        dir.path(),
        &[
            "business",
            "create",
            "--name",
            "Lagos Fresh Produce Ltd",
            "--owner-email",
            "bola.ade@lagosfresh.ng",
            "--active",
        ],
    );
    // The operator sets a daily transfer limit, then goes back to the default.
    let id: String = {
        let listed = run(dir.path(), &["ledger", "verify", "--json"]);
        assert!(listed.contains("\"ok\": true"), "{listed}");
        let db = dir.path().join("kobo.db");
        let output = Command::new("python3")
            .args([
                "-c",
                "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT id FROM businesses').fetchone()[0])",
                db.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    };
    let set = run_json(
        dir.path(),
        &["business", "daily-limit", &id, "2500000.5", "--json"],
    );
    assert_eq!(set["daily_transfer_limit"], "2500000.50", "{set}");
    let reset = run(dir.path(), &["business", "daily-limit", &id, "--default"]);
    assert!(reset.contains("the configured default"), "{reset}");
    let refused = kobo(dir.path())
        .args(["business", "daily-limit", &id, "-5"])
        .output()
        .unwrap();
    assert!(!refused.status.success());

    let clean = run(dir.path(), &["ledger", "verify"]);
    assert!(clean.contains("The ledger balances."), "{clean}");

    // A balance changed behind the ledger's back.
    let database = dir.path().join("kobo.db");
    let status = Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); \
             c.execute(\"UPDATE accounts SET balance = 12345\"); c.commit()",
            database.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(status.success());
    let output = kobo(dir.path())
        .args(["ledger", "verify", "--json"])
        .output()
        .unwrap();
    assert!(!output.status.success(), "a discrepancy exits non-zero");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["ok"], false);
    assert_eq!(report["discrepancies"][0]["kind"], "balance");
    assert_eq!(report["discrepancies"][0]["subject"], "1000000014");
    assert!(
        report["discrepancies"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("stored balance 123.45 but its postings sum to 0.00"),
        "{report}"
    );
}

#[test]
fn serve_answers_probes_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &["serve"], 0);

    let health = curl(&["-s", "-i", &format!("{}/healthz", server.base_url)]).unwrap();
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(
        health.to_ascii_lowercase().contains("x-request-id: "),
        "{health}"
    );
    assert!(health.ends_with(r#"{"status":"ok"}"#), "{health}");
    let ready = curl(&["-s", &format!("{}/readyz", server.base_url)]).unwrap();
    assert_eq!(ready, r#"{"status":"ready","database":"ok"}"#);
    let spec = curl(&[
        "-s",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &format!("{}/openapi.json", server.base_url),
    ])
    .unwrap();
    assert_eq!(spec, "200");

    let key = dir.path().join("token.key");
    assert_eq!(std::fs::read(&key).unwrap().len(), 32);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    let (status, stderr) = server.stop();
    assert!(status.success(), "{stderr}");
    assert!(stderr.is_empty() || !stderr.contains("ERROR"), "{stderr}");
}

/// Sandbox and production never share money: a database serves the environment it was first
/// opened for, and the operator cannot create a business of the other one in it (issue 56).
#[test]
fn a_database_refuses_a_business_of_the_other_environment() {
    let dir = tempfile::tempdir().unwrap();
    let business = |name: &str, email: &str, environment: &str| {
        kobo(dir.path())
            .args(["business", "create", "--name", name, "--owner-email", email])
            .args(["--environment", environment, "--json"])
            .output()
            .unwrap()
    };
    let sandbox = business(
        "Lagos Fresh Produce Ltd",
        "bola.ade@lagosfresh.ng",
        "sandbox",
    );
    assert!(sandbox.status.success(), "{sandbox:?}");
    let production = business("Chika Stores Ltd", "chika@chikastores.ng", "production");
    assert!(!production.status.success(), "{production:?}");
    let said = String::from_utf8_lossy(&production.stderr);
    assert!(
        said.contains("this database serves the sandbox environment, not production"),
        "{said}"
    );
    let another = business("Ogun Grains Ltd", "tayo@ogungrains.ng", "sandbox");
    assert!(another.status.success(), "{another:?}");
}

#[test]
fn the_operator_creates_and_deactivates_a_business_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let migrated = run_json(dir.path(), &["migrate", "--json"]);
    assert_eq!(migrated["migrated"], true);

    let created = run_json(
        dir.path(),
        &[
            "business",
            "create",
            "--name",
            "Lagos Fresh Produce Ltd",
            "--owner-email",
            "bola.ade@lagosfresh.ng",
            "--active",
            "--json",
        ],
    );
    let id = created["business_id"].as_str().unwrap().to_string();
    assert_eq!(created["active"], true);
    assert_eq!(created["environment"], "sandbox");
    assert!(created["client_id"]
        .as_str()
        .unwrap()
        .starts_with("kb_sandbox_"));
    assert!(created["client_secret"]
        .as_str()
        .unwrap()
        .starts_with("kbs_sandbox_"));
    // Without a password the owner is invited, and the invitation is in the outbox.
    assert_eq!(created["owner"]["password_set"], false);
    let invitation = created["owner"]["invitation_token"]
        .as_str()
        .unwrap()
        .to_string();
    let outbox = run_json(dir.path(), &["outbox", "--json", "--limit", "5"]);
    let messages = outbox.as_array().unwrap();
    assert_eq!(messages.len(), 1, "{outbox}");
    assert_eq!(messages[0]["recipient"], "bola.ade@lagosfresh.ng");
    assert!(messages[0]["body"].as_str().unwrap().contains(&invitation));
    assert_eq!(messages[0]["sent_at"], Value::Null);
    let text = run(dir.path(), &["outbox"]);
    assert!(text.contains("to bola.ade@lagosfresh.ng"), "{text}");
    assert!(text.contains(&invitation), "{text}");

    let with_password = run_json(
        dir.path(),
        &[
            "business",
            "create",
            "--name",
            "Kano Grains",
            "--owner-email",
            "musa.ibrahim@kanograins.ng",
            "--owner-password",
            "Tuwo-Shinkafa-2026",
            "--json",
        ],
    );
    assert_eq!(with_password["active"], false);
    // The password the operator gave is never printed back (it would land in logs and
    // terminals); the output says only that it is set.
    assert_eq!(with_password["owner"]["password_set"], true);
    assert!(
        !with_password.to_string().contains("Tuwo-Shinkafa-2026"),
        "{with_password}"
    );
    assert_eq!(with_password["owner"]["invitation_token"], Value::Null);

    let deactivated = run_json(dir.path(), &["business", "deactivate", &id, "--json"]);
    assert_eq!(deactivated["status"], "inactive");
    let activated = run(dir.path(), &["business", "activate", &id]);
    assert!(activated.contains("is now active"), "{activated}");

    // An unknown id fails with a message, not a panic.
    let output = kobo(dir.path())
        .args([
            "business",
            "activate",
            "00000000-0000-4000-8000-000000000000",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("kobo: "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_created_business_can_be_used_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let created = run_json(
        dir.path(),
        &[
            "business",
            "create",
            "--name",
            "Lagos Fresh Produce Ltd",
            "--owner-email",
            "bola.ade@lagosfresh.ng",
            "--owner-password",
            "Ewa-Agoyin-2026",
            "--active",
            "--json",
        ],
    );
    let server = Server::start(dir.path(), &["serve"], 0);
    let token = post(
        &server.base_url,
        "/api/v1/auth/api/generate_token",
        None,
        &serde_json::json!({"client_id": created["client_id"], "client_secret": created["client_secret"]}),
    );
    assert_eq!(token["response_code"], "00", "{token}");
    let login = post(
        &server.base_url,
        "/api/v1/auth/web/login",
        None,
        &serde_json::json!({"email": "bola.ade@lagosfresh.ng", "password": "Ewa-Agoyin-2026"}),
    );
    assert_eq!(login["response_code"], "00", "{login}");
    let profile = post(
        &server.base_url,
        "/api/v1/auth/web/get_profile",
        login["data"]["access_token"].as_str(),
        &serde_json::json!({}),
    );
    assert_eq!(profile["data"]["member"]["first_name"], "Bola", "{profile}");
    assert_eq!(
        profile["data"]["business"]["name"],
        "Lagos Fresh Produce Ltd"
    );
    let (status, _) = server.stop();
    assert!(status.success());
}

#[test]
fn the_demo_refuses_production() {
    let dir = tempfile::tempdir().unwrap();
    let output = kobo(dir.path())
        .args([
            "demo",
            "--environment",
            "production",
            "--listen",
            "127.0.0.1:0",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("sandbox only"), "{stderr}");
}

/// Webhooks to loopback addresses are for local development only (issue 28, item 6): `kobo
/// serve` names the flag that allows them, refuses it in production, and `kobo demo` sets it.
#[test]
fn loopback_webhooks_are_a_flag_of_local_development() {
    let dir = tempfile::tempdir().unwrap();
    let help = run(dir.path(), &["serve", "--help"]);
    assert!(help.contains("--allow-loopback-webhooks"), "{help}");
    assert!(help.contains("KOBO_ALLOW_LOOPBACK_WEBHOOKS"), "{help}");
    let demo_help = run(dir.path(), &["demo", "--help"]);
    assert!(demo_help.contains("loopback"), "{demo_help}");
    let output = kobo(dir.path())
        .args([
            "serve",
            "--environment",
            "production",
            "--allow-loopback-webhooks",
            "--listen",
            "127.0.0.1:0",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("sandbox only"), "{stderr}");
}

/// A one-connection-at-a-time SMTP server on a loopback port, in a thread: enough SMTP for
/// lettre. Each message's DATA is sent on the channel.
fn fake_smtp() -> (u16, std::sync::mpsc::Receiver<String>) {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let mut writer = stream.try_clone().unwrap();
            let mut lines = BufReader::new(stream).lines();
            let _ = writer.write_all(b"220 fake.test ESMTP\r\n");
            while let Some(Ok(line)) = lines.next() {
                let upper = line.to_ascii_uppercase();
                let reply: &[u8] = if upper.starts_with("EHLO") || upper.starts_with("HELO") {
                    b"250-fake.test\r\n250 8BITMIME\r\n"
                } else if upper == "DATA" {
                    let _ = writer.write_all(b"354 go ahead\r\n");
                    let mut data = String::new();
                    for line in lines.by_ref() {
                        let line = line.unwrap_or_default();
                        if line == "." {
                            break;
                        }
                        data.push_str(&line);
                        data.push('\n');
                    }
                    let _ = sender.send(data);
                    b"250 OK queued\r\n"
                } else if upper == "QUIT" {
                    let _ = writer.write_all(b"221 bye\r\n");
                    break;
                } else {
                    b"250 OK\r\n"
                };
                if writer.write_all(reply).is_err() {
                    break;
                }
            }
        }
    });
    (port, receiver)
}

#[test]
fn serve_delivers_the_outbox_over_smtp_when_configured() {
    let dir = tempfile::tempdir().unwrap();
    // The owner is invited: the invitation waits in the outbox.
    let created = run_json(
        dir.path(),
        &[
            "business",
            "create",
            "--name",
            "Lagos Fresh Produce Ltd",
            "--owner-email",
            "bola.ade@lagosfresh.ng",
            "--json",
        ],
    );
    let invitation = created["owner"]["invitation_token"]
        .as_str()
        .unwrap()
        .to_string();
    let (port, messages) = fake_smtp();
    let smtp_url = format!("smtp://127.0.0.1:{port}");

    let server = Server::start(
        dir.path(),
        &[
            "serve",
            "--smtp-url",
            &smtp_url,
            "--smtp-from",
            "Kobo <no-reply@kobo.test>",
        ],
        0,
    );

    let data = messages
        .recv_timeout(Duration::from_secs(30))
        .expect("the dispatcher sends the invitation");
    assert!(data.contains("To: bola.ade@lagosfresh.ng"), "{data}");
    assert!(data.contains("From: Kobo <no-reply@kobo.test>"), "{data}");
    // Long lines may come quoted-printable: undo its soft line breaks.
    let unfolded = data.replace("=\n", "");
    assert!(unfolded.contains(&invitation), "{data}");
    // The row records the delivery (written right after the server's answer: a few tries).
    let mut sent_at = Value::Null;
    for _ in 0..100 {
        let outbox = run_json(dir.path(), &["outbox", "--json"]);
        sent_at = outbox[0]["sent_at"].clone();
        if !sent_at.is_null() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(sent_at.is_string(), "sent_at is set after delivery");
    let (status, stderr) = server.stop();
    assert!(status.success(), "{stderr}");
}
