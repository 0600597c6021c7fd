//! `kobo-provider`, the core banking provider as a process of its own (issue 32): the real
//! executable on a fresh data directory and a loopback port, called with the client generated
//! from `spec/provider.yaml`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kobo::outbox::webhooks::signing;
use provider_client::{error_envelope, types, Provider};

/// A `kobo-provider serve` process, killed when dropped.
struct Simulator {
    child: Child,
    url: String,
    secret: String,
}

impl Drop for Simulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Simulator {
    /// Starts it on `dir` and a port of its choosing; returns once it listens.
    fn start(dir: &Path, extra: &[&str]) -> Simulator {
        Simulator::start_on("127.0.0.1:0", dir, extra)
    }

    /// Starts it on `dir` and `listen`; returns once it listens.
    fn start_on(listen: &str, dir: &Path, extra: &[&str]) -> Simulator {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kobo-provider"))
            .args(["serve", "--listen", listen, "--data-dir"])
            .arg(dir)
            .args(extra)
            .env("RUST_LOG", "warn")
            .env_remove("KOBO_PROVIDER_FAULTS")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("kobo-provider listening on ")
            .unwrap_or_else(|| panic!("an unexpected first line: {line:?}"))
            .to_owned();
        let secret = std::fs::read_to_string(dir.join("secret")).unwrap();
        Simulator {
            child,
            url,
            secret: secret.trim().to_owned(),
        }
    }

    fn client(&self) -> provider_client::Client {
        Provider::new(&self.url)
            .with_token(&self.secret)
            .build()
            .unwrap()
    }
}

fn transfer(reference: &str, beneficiary: &str, amount: &str) -> types::FundsTransferRequest {
    serde_json::from_value(serde_json::json!({
        "destination_institution_code": "000013",
        "channel_code": 7,
        "beneficiary_account_number": beneficiary,
        "beneficiary_account_name": "Emeka Nwosu",
        "originator_account_number": "1000000018",
        "originator_account_name": "Adaeze Foods Ltd",
        "narration": "Invoice 1042",
        "payment_reference": reference,
        "amount": amount,
    }))
    .unwrap()
}

fn by_reference(reference: &str) -> types::StatusQueryRequest {
    serde_json::from_value(serde_json::json!({
        "payment_reference": reference,
        "source_institution_code": "090823",
        "channel_code": 7,
    }))
    .unwrap()
}

fn code_of(error: &provider_client::ApiError) -> String {
    let envelope = error_envelope(error).unwrap_or_else(|| panic!("not an envelope: {error}"));
    envelope.response_code.to_string()
}

#[tokio::test]
async fn a_transfer_it_accepted_is_answered_the_same_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let simulator = Simulator::start(dir.path(), &[]);
    let client = simulator.client();
    let sent = transfer("TRF-20261127-AAAAAA", "0123456788", "1500.00");
    let first = client
        .funds_transfer()
        .body(sent.clone())
        .send()
        .await
        .unwrap();
    let session = first.into_inner().data.session_id;
    assert_eq!(session.len(), 30);
    // The same reference again is the same transfer; with another body it is a duplicate.
    let again = client.funds_transfer().body(sent).send().await.unwrap();
    assert_eq!(again.into_inner().data.session_id, session);
    let other = transfer("TRF-20261127-AAAAAA", "0123456788", "1600.00");
    let error = client
        .funds_transfer()
        .body(other)
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        (code_of(&error), error.status().unwrap().as_u16()),
        ("26".into(), 409)
    );
    // A transfer the bank declines, and one it never received.
    let declined = transfer("TRF-20261127-BBBBBB", "0690000036", "10.00");
    let error = client
        .funds_transfer()
        .body(declined)
        .send()
        .await
        .unwrap_err();
    assert_eq!(code_of(&error), "09", "accepted, failing while processing");
    drop(simulator);

    let simulator = Simulator::start(dir.path(), &[]);
    let client = simulator.client();
    let status = client
        .transaction_status_query()
        .body(by_reference("TRF-20261127-AAAAAA"))
        .send()
        .await
        .unwrap();
    assert_eq!(status.into_inner().data.session_id, session);
    let by_session: types::StatusQueryRequest = serde_json::from_value(serde_json::json!({
        "session_id": *session,
        "source_institution_code": "090823",
        "channel_code": 7,
    }))
    .unwrap();
    let status = client
        .transaction_status_query()
        .body(by_session)
        .send()
        .await
        .unwrap();
    assert_eq!(
        status.into_inner().data.payment_reference,
        "TRF-20261127-AAAAAA"
    );
    let error = client
        .transaction_status_query()
        .body(by_reference("TRF-20261127-BBBBBB"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        code_of(&error),
        "05",
        "the declined transfer, after the restart"
    );
    let error = client
        .transaction_status_query()
        .body(by_reference("TRF-NEVER-SENT"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        (code_of(&error), error.status().unwrap().as_u16()),
        ("25".into(), 404)
    );
}

#[tokio::test]
async fn enquiries_follow_the_sandbox_table_and_need_the_secret() {
    let dir = tempfile::tempdir().unwrap();
    let simulator = Simulator::start(dir.path(), &[]);
    let enquiry = |account: &str| -> types::NameEnquiryRequest {
        serde_json::from_value(serde_json::json!({
            "session_id": "090823261127093000000000000001",
            "destination_institution_code": "000013",
            "channel_code": 1,
            "account_number": account,
        }))
        .unwrap()
    };
    let holder = simulator
        .client()
        .name_enquiry()
        .body(enquiry("0123456788"))
        .send()
        .await
        .unwrap()
        .into_inner()
        .data;
    assert_eq!(holder.account_name, "Emeka Nwosu");
    assert_eq!(holder.bvn.as_deref(), Some("22298765432"));
    let error = simulator
        .client()
        .name_enquiry()
        .body(enquiry("0000000001"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        (code_of(&error), error.status().unwrap().as_u16()),
        ("07".into(), 404)
    );
    let wrong = Provider::new(&simulator.url)
        .with_token("whsec_bm90IGl0")
        .build()
        .unwrap();
    let error = wrong
        .name_enquiry()
        .body(enquiry("0123456788"))
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        (code_of(&error), error.status().unwrap().as_u16()),
        ("63".into(), 401)
    );
    let identity = simulator
        .client()
        .verify_identity()
        .body(types::VerifyIdentityRequest {
            bvn: Some("22212345678".parse().unwrap()),
            nin: Some("70123456789".parse().unwrap()),
        })
        .send()
        .await
        .unwrap_err();
    assert_eq!(code_of(&identity), "05", "a BVN and a NIN of two people");
}

/// What a notification receiver saw: each attempt's headers and body.
#[derive(Clone, Debug)]
struct Attempt {
    id: String,
    timestamp: String,
    signature: String,
    body: Vec<u8>,
}

/// A receiver on loopback that refuses its first attempt (500) and acknowledges the others.
async fn receiver() -> (String, Arc<Mutex<Vec<Attempt>>>) {
    let seen: Arc<Mutex<Vec<Attempt>>> = Arc::default();
    let kept = seen.clone();
    let app = axum::Router::new().route(
        "/provider/v1/inbound_credit",
        axum::routing::post(
            move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let seen = kept.clone();
                async move {
                    let header = |name: &str| {
                        headers
                            .get(name)
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or_default()
                            .to_owned()
                    };
                    let mut seen = seen.lock().unwrap();
                    seen.push(Attempt {
                        id: header("webhook-id"),
                        timestamp: header("webhook-timestamp"),
                        signature: header("webhook-signature"),
                        body: body.to_vec(),
                    });
                    match seen.len() {
                        1 => axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                        _ => axum::http::StatusCode::OK,
                    }
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}/provider/v1/inbound_credit",
        listener.local_addr().unwrap()
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}

#[tokio::test]
async fn an_inbound_credit_is_sent_signed_until_kobo_acknowledges_it() {
    let dir = tempfile::tempdir().unwrap();
    let (url, seen) = receiver().await;
    let simulator = Simulator::start(dir.path(), &["--notify-url", &url]);
    let secret_file: PathBuf = dir.path().join("secret");
    // Asked twice under one reference (a caller whose answer was lost): one credit.
    let ask = || {
        let output = Command::new(env!("CARGO_BIN_EXE_kobo-provider"))
            .args(["credit", "--provider-url", &simulator.url, "--secret-file"])
            .arg(&secret_file)
            .args(["--account", "2000000011", "--amount", "15000.5"])
            .args(["--sender-account", "0123456788", "--sender-bank", "000013"])
            .args([
                "--sender-name",
                "Emeka Nwosu",
                "--payment-reference",
                "GTB-1042",
            ])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    };
    let session_id = ask();
    assert_eq!(ask(), session_id, "the same reference, the same credit");
    assert!(
        session_id.starts_with("000013") && session_id.len() == 30,
        "{session_id}"
    );
    // The first attempt is refused; the next one, about a second later, is acknowledged.
    for _ in 0..100 {
        if seen.lock().unwrap().len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Acknowledged: nothing more comes, of this credit or of a second one.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let attempts = seen.lock().unwrap().clone();
    assert_eq!(attempts.len(), 2, "{attempts:?}");
    assert_eq!(
        attempts[0].id, attempts[1].id,
        "one notification, sent again"
    );
    assert_eq!(attempts[0].body, attempts[1].body);
    let key = signing::key_of(&simulator.secret).unwrap();
    let now = chrono::Utc::now().timestamp();
    for attempt in &attempts {
        signing::verify(
            &key,
            &attempt.id,
            &attempt.timestamp,
            &attempt.signature,
            &attempt.body,
            now,
        )
        .unwrap_or_else(|refusal| panic!("{refusal:?}"));
    }
    let credit: types::InboundCredit = serde_json::from_slice(&attempts[1].body).unwrap();
    assert_eq!(*credit.session_id, session_id);
    assert_eq!(*credit.amount, "15000.50");
    assert_eq!(*credit.beneficiary_account_number, "2000000011");
    assert_eq!(credit.originator_account_name.as_str(), "Emeka Nwosu");
}

/// Issue 32's walk-through: `kobo` on the network provider. The README's transfer story (a
/// name enquiry, a NIP payout that ends `success`, one that is reversed) runs against a demo
/// whose provider is `kobo-provider` over HTTP; `kobo-provider credit` books an inbound credit
/// through Kobo's notification route, once however often it is sent; with the simulator gone,
/// Kobo answers `80`.
#[test]
fn kobo_runs_the_transfer_story_on_kobo_provider_over_http() {
    let provider_dir = tempfile::tempdir().unwrap();
    let simulator = Simulator::start(provider_dir.path(), &[]);
    let dir = tempfile::tempdir().unwrap();
    let secret_file = provider_dir.path().join("secret");
    let server = super::Server::start(
        dir.path(),
        &[
            "demo",
            "--provider-url",
            &simulator.url,
            "--provider-secret-file",
            secret_file.to_str().unwrap(),
        ],
        22,
    );
    let _ = super::readme_transfer_story(&server.base_url);

    // The simulator again, on the same port, now told where Kobo takes notifications.
    let listen = simulator.url.trim_start_matches("http://").to_owned();
    drop(simulator);
    let notify_url = format!("{}/provider/v1/inbound_credit", server.base_url);
    let simulator =
        Simulator::start_on(&listen, provider_dir.path(), &["--notify-url", &notify_url]);
    let output = Command::new(env!("CARGO_BIN_EXE_kobo-provider"))
        .args(["credit", "--provider-url", &simulator.url, "--secret-file"])
        .arg(&secret_file)
        .args(["--account", "2000000011", "--amount", "150.50"])
        .args(["--sender-account", "0123456788", "--sender-bank", "000013"])
        .args(["--sender-name", "Emeka Nwosu", "--narration", "Order 2077"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let session_id = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    let login = super::post(
        &server.base_url,
        "/api/v1/auth/web/login",
        None,
        &serde_json::json!({"email": "adaeze.okafor@adaezefoods.ng", "password": "Jollof-Rice-2026"}),
    );
    let token = login["data"]["access_token"].as_str().unwrap().to_owned();
    let credits_of_session = || {
        let listed = super::post(
            &server.base_url,
            "/api/v1/transaction/web/fetch_transactions",
            Some(&token),
            &serde_json::json!({"filters": {"search": "Order 2077"}}),
        );
        let rows = listed["data"].as_array().cloned().unwrap_or_default();
        rows.into_iter()
            .filter(|row| row.to_string().contains("Order 2077"))
            .collect::<Vec<_>>()
    };
    let mut booked = Vec::new();
    for _ in 0..100 {
        booked = credits_of_session();
        if !booked.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(booked.len(), 1, "{booked:?}");
    assert_eq!(booked[0]["amount"], "150.50", "{booked:?}");
    assert_eq!(booked[0]["transaction_type"], "credit", "{booked:?}");

    // The same notification again, and a forged one: booked once, the forgery refused; the
    // session again with another amount, a discrepancy: `409`, nothing booked.
    let notification = |amount: &str| {
        serde_json::json!({
        "session_id": session_id,
        "originator_institution_code": "000013",
        "originator_account_number": "0123456788",
        "originator_account_name": "Emeka Nwosu",
        "beneficiary_account_number": "2000000011",
        "narration": "Order 2077",
        "payment_reference": "SIM-AGAIN",
        "amount": amount,
        "credited_at": "2026-11-27T10:00:00Z",
        })
        .to_string()
    };
    let body = notification("150.50");
    let key = signing::key_of(&simulator.secret).unwrap();
    let now = chrono::Utc::now().timestamp();
    let send = |body: &str, signature: String| {
        Command::new("curl")
            .args([
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "-X",
                "POST",
                &notify_url,
            ])
            .args([
                "-H",
                "content-type: application/json",
                "-H",
                "webhook-id: again-1",
            ])
            .args(["-H", &format!("webhook-timestamp: {now}")])
            .args(["-H", &format!("webhook-signature: {signature}")])
            .args(["-d", body])
            .output()
            .map(|output| String::from_utf8_lossy(&output.stdout).into_owned())
            .unwrap()
    };
    let signed =
        signing::signature_header(std::slice::from_ref(&key), "again-1", now, body.as_bytes());
    assert_eq!(send(&body, signed.clone()), "200");
    assert_eq!(send(&body, signed), "200");
    let forged =
        signing::signature_header(&[b"another key".to_vec()], "again-1", now, body.as_bytes());
    assert_eq!(send(&body, forged), "401");
    let altered = notification("1500.50");
    let signed = signing::signature_header(
        std::slice::from_ref(&key),
        "again-1",
        now,
        altered.as_bytes(),
    );
    assert_eq!(send(&altered, signed), "409");
    assert_eq!(credits_of_session().len(), 1, "booked once");
    // Issue 56: signed, but naming Kobo itself as the sender's bank (money between Kobo
    // accounts moves by funds_transfer): refused, nothing booked.
    let from_kobo = notification("150.50")
        .replace("again", "from-kobo")
        .replace("\"000013\"", "\"090823\"")
        .replace(session_id.as_str(), "999999999999999999999999999999");
    let signed = signing::signature_header(&[key], "again-1", now, from_kobo.as_bytes());
    assert_eq!(send(&from_kobo, signed), "400");

    drop(simulator);
    let enquiry = super::post(
        &server.base_url,
        "/api/v1/transaction/transfer/web/name_enquiry",
        Some(&token),
        &serde_json::json!({
            "beneficiary_account_number": "0123456788",
            "bank_code": "000013",
            "source_account_number": "1000000014",
        }),
    );
    assert_eq!(enquiry["response_code"], "80", "{enquiry}");
    let (status, _) = server.stop();
    assert!(status.success());
    let report = super::run_json(dir.path(), &["ledger", "verify", "--json"]);
    assert_eq!(report["ok"], true, "{report}");
}

/// Production does not start on the sandbox's tables, nor over plain HTTP to another host.
#[test]
fn production_needs_a_provider_url() {
    let dir = tempfile::tempdir().unwrap();
    let serve = |extra: &[&str]| {
        let output = super::kobo(dir.path())
            .args([
                "serve",
                "--environment",
                "production",
                "--listen",
                "127.0.0.1:0",
            ])
            .args(extra)
            .env_remove("KOBO_PROVIDER_URL")
            .env_remove("KOBO_PROVIDER_SECRET_FILE")
            .output()
            .unwrap();
        assert!(!output.status.success());
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let stderr = serve(&[]);
    assert!(
        stderr.contains("--provider-url (KOBO_PROVIDER_URL)"),
        "{stderr}"
    );
    let stderr = serve(&["--provider-url", "http://provider.invalid:9090"]);
    assert!(stderr.contains("loopback address only"), "{stderr}");
    let stderr = serve(&["--provider-url", "http://127.0.0.1:9"]);
    assert!(stderr.contains("--provider-secret-file"), "{stderr}");
}

/// Issue 32's "done when": `kobo serve --environment production` on `kobo-provider` over HTTP.
/// A live business is funded by an inbound NIP credit the provider notifies, then an
/// integration makes a name enquiry, a NIP payout that ends `success` and one that is
/// reversed.
#[test]
fn production_moves_money_through_kobo_provider() {
    let provider_dir = tempfile::tempdir().unwrap();
    let secret_file = provider_dir.path().join("secret");
    let simulator = Simulator::start(provider_dir.path(), &[]);
    let dir = tempfile::tempdir().unwrap();
    let created = live_business(dir.path());
    let main = created["main_account_number"].as_str().unwrap().to_owned();
    let server = super::Server::start(
        dir.path(),
        &[
            "serve",
            "--environment",
            "production",
            "--provider-url",
            &simulator.url,
            "--provider-secret-file",
            secret_file.to_str().unwrap(),
        ],
        0,
    );
    // The simulator again, on the same port, now sending inbound credits to Kobo.
    let listen = simulator.url.trim_start_matches("http://").to_owned();
    drop(simulator);
    let notify_url = format!("{}/provider/v1/inbound_credit", server.base_url);
    let simulator =
        Simulator::start_on(&listen, provider_dir.path(), &["--notify-url", &notify_url]);
    let credited = Command::new(env!("CARGO_BIN_EXE_kobo-provider"))
        .args(["credit", "--provider-url", &simulator.url, "--secret-file"])
        .arg(&secret_file)
        .args(["--account", &main, "--amount", "1000000.00"])
        .args(["--sender-account", "0123456788", "--sender-bank", "000013"])
        .args(["--sender-name", "Emeka Nwosu"])
        .output()
        .unwrap();
    assert!(
        credited.status.success(),
        "{}",
        String::from_utf8_lossy(&credited.stderr)
    );

    let token = integration_token(&server.base_url, &created);
    let call = |path: &str, body: serde_json::Value, key: Option<&str>| -> serde_json::Value {
        let mut args = vec![
            "-s".to_owned(),
            "-X".into(),
            "POST".into(),
            format!("{}{path}", server.base_url),
            "-H".into(),
            "Content-Type: application/json".into(),
            "-H".into(),
            format!("Authorization: Bearer {token}"),
            "-d".into(),
            body.to_string(),
        ];
        if let Some(key) = key {
            args.extend(["-H".into(), format!("Idempotency-Key: {key}")]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let reply = super::curl(&args).unwrap();
        serde_json::from_str(&reply).unwrap_or_else(|error| panic!("{error}: {reply}"))
    };
    // The credit, booked from the provider's notification.
    let mut funded = false;
    for _ in 0..100 {
        let accounts = call(
            "/api/v1/account/api/fetch_customer_accounts",
            serde_json::json!({}),
            None,
        );
        let balance = accounts["data"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|account| account["account_number"] == main.as_str())
            .map(|account| account["balance"].clone());
        if balance == Some(serde_json::json!("1000000.000000000")) {
            funded = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(funded, "the inbound credit was not booked");

    let enquiry = call(
        "/api/v1/transaction/transfer/api/name_enquiry",
        serde_json::json!({"beneficiary_account_number": "0123456788", "bank_code": "000013",
                           "source_account_number": main}),
        None,
    );
    assert_eq!(enquiry["data"]["account_name"], "Emeka Nwosu", "{enquiry}");
    let pay = |beneficiary: &str, name: &str, key: &str| {
        let paid = call(
            "/api/v1/transaction/transfer/api/funds_transfer",
            serde_json::json!({
                "source_account_number": main, "source_account_name": "Adaeze Foods Ltd",
                "beneficiary_account_number": beneficiary, "beneficiary_account_name": name,
                "bank_code": "000013", "amount": "25000.00", "transfer_type": "inter",
                "narration": "Invoice 1042",
            }),
            Some(key),
        );
        assert_eq!(paid["response_code"], "00", "{paid}");
        paid["data"]["reference_number"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let to_emeka = pay("0123456788", "Emeka Nwosu", "prod-1");
    let to_bisi = pay("0690000036", "Bisi Alade", "prod-2");
    let status_of = |reference: &str| {
        call(
            "/api/v1/transaction/transfer/api/get_transfer",
            serde_json::json!({"reference_number": reference}),
            None,
        )["data"]["transfer_status"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let mut statuses = (String::new(), String::new());
    for _ in 0..300 {
        statuses = (status_of(&to_emeka), status_of(&to_bisi));
        if statuses.0 == "success" && statuses.1 == "reversed" {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(statuses, ("success".into(), "reversed".into()));
    drop(simulator);
    let (status, _) = server.stop();
    assert!(status.success());
    let report = super::run_json(dir.path(), &["ledger", "verify", "--json"]);
    assert_eq!(report["ok"], true, "{report}");
}

/// A certificate authority and a certificate for 127.0.0.1 it signed, made with `openssl` in
/// `dir`: `(ca.pem, cert.pem, key.pem)`.
fn certificates(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let openssl = |args: &[&str]| {
        let output = Command::new("openssl")
            .current_dir(dir)
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-x509"][..],
            &ec,
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=Kobo test CA",
            ],
        ]
        .concat(),
    );
    openssl(
        &[
            &["req"][..],
            &ec,
            &[
                "-keyout",
                "key.pem",
                "-out",
                "cert.csr",
                "-subj",
                "/CN=127.0.0.1",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "cert.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "cert.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    ]);
    (
        dir.join("ca.pem"),
        dir.join("cert.pem"),
        dir.join("key.pem"),
    )
}

/// Production on an `https://` provider: the certificate checked against `--provider-ca-file`
/// (a name enquiry answers), and refused without it (the Mozilla roots do not know the CA:
/// `80`, the provider unreachable).
#[test]
fn production_reaches_an_https_provider_and_checks_its_certificate() {
    let certs = tempfile::tempdir().unwrap();
    let (ca, cert, key) = certificates(certs.path());
    let provider_dir = tempfile::tempdir().unwrap();
    let simulator = Simulator::start(
        provider_dir.path(),
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
    );
    assert!(simulator.url.starts_with("https://"), "{}", simulator.url);
    let secret_file = provider_dir.path().join("secret");
    let enquire = |ca_file: Option<&Path>| {
        let dir = tempfile::tempdir().unwrap();
        let created = live_business(dir.path());
        let mut args = vec![
            "serve".to_owned(),
            "--environment".into(),
            "production".into(),
            "--provider-url".into(),
            simulator.url.clone(),
            "--provider-secret-file".into(),
            secret_file.display().to_string(),
        ];
        if let Some(ca) = ca_file {
            args.extend(["--provider-ca-file".into(), ca.display().to_string()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let server = super::Server::start(dir.path(), &args, 0);
        let token = integration_token(&server.base_url, &created);
        let enquiry = super::post(
            &server.base_url,
            "/api/v1/transaction/transfer/api/name_enquiry",
            Some(&token),
            &serde_json::json!({"beneficiary_account_number": "0123456788", "bank_code": "000013",
                               "source_account_number": created["main_account_number"]}),
        );
        let (status, _) = server.stop();
        assert!(status.success());
        enquiry
    };
    let trusted = enquire(Some(&ca));
    assert_eq!(trusted["data"]["account_name"], "Emeka Nwosu", "{trusted}");
    let untrusted = enquire(None);
    assert_eq!(untrusted["response_code"], "80", "{untrusted}");
}

/// A live business made with the operator's command line in `dir`, before kobo serves it:
/// what `kobo business create --json` prints (credentials, main account).
fn live_business(dir: &Path) -> serde_json::Value {
    super::run_json(
        dir,
        &[
            "business",
            "create",
            "--name",
            "Adaeze Foods Ltd",
            "--owner-email",
            "adaeze.okafor@adaezefoods.ng",
            "--active",
            "--environment",
            "production",
            "--json",
        ],
    )
}

/// An integration token of the business `created` describes.
fn integration_token(base_url: &str, created: &serde_json::Value) -> String {
    let reply = super::post(
        base_url,
        "/api/v1/auth/api/generate_token",
        None,
        &serde_json::json!({"client_id": created["client_id"], "client_secret": created["client_secret"]}),
    );
    reply["data"]["access_token"].as_str().unwrap().to_owned()
}
