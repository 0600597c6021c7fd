//! `kobo serve` as a child process on the kit's database: another process, with its own
//! caches and queues, reached over real HTTP (curl).

use generated_server::Operation;
use kobo::testkit::TestKit;
use serde_json::json;

const OWNER: &str = "adaeze.okafor@adaezefoods.ng";

/// `kobo serve` on the kit's database: another process, with its own cache of sessions.
pub struct Server {
    pub base: String,
    child: std::process::Child,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn curl_post(url: &str, token: Option<&str>, body: &serde_json::Value) -> serde_json::Value {
    let mut command = std::process::Command::new("curl");
    command.args([
        "-s",
        "-X",
        "POST",
        url,
        "-H",
        "Content-Type: application/json",
    ]);
    if let Some(token) = token {
        command.args(["-H", &format!("Authorization: Bearer {token}")]);
    }
    let output = command
        .args(["-d", &body.to_string()])
        .output()
        .expect("curl runs");
    serde_json::from_slice(&output.stdout).unwrap_or(serde_json::Value::Null)
}

impl Server {
    pub async fn start(kit: &TestKit) -> Server {
        Server::start_with(kit, &[]).await
    }

    /// [`Server::start`] with more flags for `kobo serve`.
    pub async fn start_with(kit: &TestKit, flags: &[&str]) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_kobo"))
            .args(["serve", "--database-url", kit.url(), "--data-dir"])
            .arg(dir.path())
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .args(flags)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("kobo serve starts");
        let server = Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
            _dir: dir,
        };
        for _ in 0..200 {
            let ready = std::process::Command::new("curl")
                .args(["-sf", &format!("{}/readyz", server.base)])
                .output()
                .is_ok_and(|output| output.status.success());
            if ready {
                return server;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("kobo serve did not get ready");
    }

    pub fn login(&self, password: &str) -> String {
        let reply = curl_post(
            &format!("{}{}", self.base, Operation::Login.path()),
            None,
            &json!({"email": OWNER, "password": password}),
        );
        reply["data"]["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("a token: {reply}"))
            .to_owned()
    }

    pub fn profile(&self, token: &str) -> serde_json::Value {
        curl_post(
            &format!("{}{}", self.base, Operation::GetProfile.path()),
            Some(token),
            &json!({}),
        )
    }

    pub fn profile_code(&self, token: &str) -> String {
        self.profile(token)["response_code"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// How long after now this server's `get_profile` answer for `token` first satisfies
    /// `shows` (at most 5 s of asking).
    pub async fn profile_changes_after(
        &self,
        token: &str,
        shows: impl Fn(&serde_json::Value) -> bool,
    ) -> std::time::Duration {
        let started = std::time::Instant::now();
        loop {
            let profile = self.profile(token);
            if shows(&profile) {
                return started.elapsed();
            }
            if started.elapsed() > std::time::Duration::from_secs(5) {
                panic!("the other process still answers this after 5 s: {profile}");
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// How long after now this server starts refusing `token` (at most 5 s of asking).
    pub async fn refuses_after(&self, token: &str) -> std::time::Duration {
        self.profile_changes_after(token, |profile| profile["response_code"] == "41")
            .await
    }
}

impl Server {
    /// POSTs `body` to `operation` on this server.
    pub fn post(
        &self,
        operation: Operation,
        token: Option<&str>,
        body: &serde_json::Value,
    ) -> serde_json::Value {
        curl_post(&format!("{}{}", self.base, operation.path()), token, body)
    }

    /// An integration token of the kit's business, issued by this server.
    pub fn integration_token(&self, kit: &TestKit) -> String {
        let business = &kit.business;
        let reply = self.post(
            Operation::GenerateToken,
            None,
            &json!({"client_id": business.client_id, "client_secret": business.client_secret}),
        );
        reply["data"]["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("a token: {reply}"))
            .to_owned()
    }

    /// Stops the server as an operator does (SIGTERM) and waits until it has exited.
    pub fn stop(&mut self) -> std::process::ExitStatus {
        self.terminate();
        self.child.wait().expect("kobo serve exits")
    }

    /// Sends SIGTERM, without waiting.
    pub fn terminate(&self) {
        let terminated = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(terminated.success());
    }

    /// The exit status, if the server has exited.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().expect("the child's status")
    }

    /// `GET path`: the HTTP status (0 when nothing answers) and the body.
    pub fn get(&self, path: &str) -> (u16, String) {
        let output = std::process::Command::new("curl")
            .args(["-s", "-o", "-", "-w", "\\n%{http_code}"])
            .arg(format!("{}{path}", self.base))
            .output()
            .expect("curl runs");
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let (body, status) = text.rsplit_once('\n').unwrap_or(("", "0"));
        (status.trim().parse().unwrap_or(0), body.to_owned())
    }
}
