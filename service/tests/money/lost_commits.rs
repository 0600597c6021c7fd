//! A payout whose `COMMIT` PostgreSQL carried out but whose answer never reached Kobo (the
//! connection cut after the `COMMIT` was sent: a pooler killed, a network gone) is answered as
//! what happened, never as "nothing was written": every payout is either acknowledged and
//! written once, or refused and not written, or, where Kobo could not find out in time,
//! answered `98` (outcome unknown). Lone payouts and a business's group commits, with and
//! without an `Idempotency-Key`, through a proxy between Kobo and PostgreSQL that cuts the
//! connection at every third `COMMIT`, in turn after PostgreSQL committed and before. PostgreSQL only: the
//! answer of an embedded SQLite's commit cannot be lost on the way.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use generated_server::{Operation, ResponseCode};
use kobo::platform::permissions::MAKER_ROLE_ID;
use kobo::testkit::{Call, Process, Reply, StoreKind, TestKit};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::races::roomy_budget;
use crate::support::otp;

/// A TCP proxy between Kobo and PostgreSQL that, while armed, cuts the connection at every
/// `every`-th `COMMIT` of a payment (a simple query, as the driver sends it, of a transaction
/// that ran a statement inserting a transfer), in turn after PostgreSQL
/// carried it out and before: it forwards the `COMMIT`, waits until PostgreSQL is done with it
/// (`ReadyForQuery`) and swallows its answer, then closes both connections, so the transaction
/// is committed and its client never hears so; or it closes them without forwarding it, so
/// the transaction is rolled back.
struct CommitEater {
    address: SocketAddr,
    every: Arc<AtomicUsize>,
    eaten: Arc<AtomicUsize>,
    /// Milliseconds by which to hold PostgreSQL's answer to every `COMMIT` (0: none).
    hold_ms: Arc<AtomicUsize>,
}

impl CommitEater {
    async fn start(upstream: SocketAddr) -> CommitEater {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let every = Arc::new(AtomicUsize::new(0));
        let eaten = Arc::new(AtomicUsize::new(0));
        let hold_ms = Arc::new(AtomicUsize::new(0));
        let commits = Arc::new(AtomicUsize::new(0));
        tokio::spawn({
            let (every, eaten, hold_ms) = (every.clone(), eaten.clone(), hold_ms.clone());
            async move {
                while let Ok((client, _)) = listener.accept().await {
                    let Ok(server) = TcpStream::connect(upstream).await else {
                        continue;
                    };
                    let connection = Connection {
                        every: every.clone(),
                        eaten: eaten.clone(),
                        commits: commits.clone(),
                        eating: Arc::new(AtomicBool::new(false)),
                        hold_ms: hold_ms.clone(),
                        holding: Arc::new(AtomicBool::new(false)),
                    };
                    tokio::spawn(connection.relay(client, server));
                }
            }
        });
        CommitEater {
            address,
            every,
            eaten,
            hold_ms,
        }
    }

    /// Holds PostgreSQL's answer to every `COMMIT` from now on for `hold`, then passes it on.
    fn hold(&self, hold: Duration) {
        self.hold_ms
            .store(hold.as_millis() as usize, Ordering::SeqCst);
    }

    /// Swallows the answer to every `every`-th `COMMIT` from now on; `0`: none.
    fn arm(&self, every: usize) {
        self.every.store(every, Ordering::SeqCst);
    }

    fn eaten(&self) -> usize {
        self.eaten.load(Ordering::SeqCst)
    }

    /// `url` (a PostgreSQL URL on 127.0.0.1:5432) through this proxy.
    fn url(&self, url: &str) -> String {
        let (before, after) = url.split_once("@").expect("a URL with a user");
        let (_, database) = after.split_once('/').expect("a URL with a database");
        format!("{before}@{}/{database}?sslmode=disable", self.address)
    }
}

struct Connection {
    every: Arc<AtomicUsize>,
    eaten: Arc<AtomicUsize>,
    commits: Arc<AtomicUsize>,
    /// PostgreSQL's answers on this connection are being swallowed.
    eating: Arc<AtomicBool>,
    hold_ms: Arc<AtomicUsize>,
    /// PostgreSQL's next answer on this connection is to be held.
    holding: Arc<AtomicBool>,
}

impl Connection {
    async fn relay(self, client: TcpStream, server: TcpStream) {
        let (mut client_in, mut client_out) = client.into_split();
        let (mut server_in, mut server_out) = server.into_split();
        let eating = self.eating.clone();
        let (holding, hold_ms) = (self.holding.clone(), self.hold_ms.clone());
        let upstream = async {
            // The startup message has no type byte.
            let mut typed = false;
            // Each prepared statement's text, by name, and whether the transaction now open
            // ran one that writes a transfer (a payment's): only its COMMIT is cut.
            let mut statements = std::collections::HashMap::<Vec<u8>, bool>::new();
            let mut pays = false;
            while let Some((message, tag)) = read_message(&mut client_in, typed).await {
                typed = true;
                let body = &message[5..];
                match tag {
                    Some(b'P') => {
                        let mut parts = body.split(|byte| *byte == 0);
                        let name = parts.next().unwrap_or_default().to_vec();
                        let text = String::from_utf8_lossy(parts.next().unwrap_or_default());
                        statements.insert(name, text.contains("INSERT INTO transfers"));
                    }
                    Some(b'B') => {
                        let mut parts = body.split(|byte| *byte == 0);
                        let _portal = parts.next();
                        let name = parts.next().unwrap_or_default();
                        pays |= statements.get(name).copied().unwrap_or(false);
                    }
                    _ => {}
                }
                if tag == Some(b'Q') && is_rollback(&message) {
                    pays = false;
                }
                let payment = tag == Some(b'Q') && is_commit(&message) && std::mem::take(&mut pays);
                if payment {
                    if self.hold_ms.load(Ordering::SeqCst) > 0 {
                        self.holding.store(true, Ordering::SeqCst);
                    }
                    let n = self.commits.fetch_add(1, Ordering::SeqCst) + 1;
                    let every = self.every.load(Ordering::SeqCst);
                    if every > 0 && n.is_multiple_of(every) {
                        // Every other time, the COMMIT itself is lost: PostgreSQL rolls the
                        // transaction back when the connection goes.
                        if self.eaten.fetch_add(1, Ordering::SeqCst) % 2 == 1 {
                            return;
                        }
                        self.eating.store(true, Ordering::SeqCst);
                    }
                }
                if server_out.write_all(&message).await.is_err() {
                    return;
                }
            }
        };
        let downstream = async {
            while let Some((message, tag)) = read_message(&mut server_in, true).await {
                if holding.swap(false, Ordering::SeqCst) {
                    let hold = hold_ms.load(Ordering::SeqCst) as u64;
                    tokio::time::sleep(Duration::from_millis(hold)).await;
                }
                if eating.load(Ordering::SeqCst) {
                    // PostgreSQL is done with the COMMIT: cut both connections.
                    if tag == Some(b'Z') {
                        return;
                    }
                    continue;
                }
                if client_out.write_all(&message).await.is_err() {
                    return;
                }
            }
        };
        tokio::select! {
            () = upstream => {}
            () = downstream => {}
        }
    }
}

/// One protocol message, whole (its type byte, if `typed`, and its length included).
async fn read_message(
    stream: &mut tokio::net::tcp::OwnedReadHalf,
    typed: bool,
) -> Option<(Vec<u8>, Option<u8>)> {
    let mut message = Vec::new();
    let tag = if typed {
        let tag = stream.read_u8().await.ok()?;
        message.push(tag);
        Some(tag)
    } else {
        None
    };
    let length = stream.read_u32().await.ok()?;
    message.extend_from_slice(&length.to_be_bytes());
    let mut body = vec![0; (length as usize).checked_sub(4)?];
    stream.read_exact(&mut body).await.ok()?;
    message.extend_from_slice(&body);
    Some((message, tag))
}

/// Whether a simple query message (`Q`, its length, the text) is a `COMMIT`.
fn is_commit(message: &[u8]) -> bool {
    query_text(message).starts_with("COMMIT")
}

/// Whether a simple query message rolls the whole transaction back.
fn is_rollback(message: &[u8]) -> bool {
    let text = query_text(message);
    text.starts_with("ROLLBACK") && !text.starts_with("ROLLBACK TO")
}

fn query_text(message: &[u8]) -> String {
    String::from_utf8_lossy(&message[5..])
        .trim_start()
        .to_ascii_uppercase()
}

/// A payout sent to a server behind the proxy, and what it was answered.
struct Sent {
    body: Value,
    key: Option<String>,
    token: String,
    operation: Operation,
    reply: Option<Reply>,
}

impl Sent {
    fn call(&self) -> Call<'_> {
        let call = Call::new(self.operation.path(), Some(&self.token), self.body.clone());
        match &self.key {
            Some(key) => call.header("idempotency-key", key.clone()),
            None => call,
        }
    }

    fn code(&self) -> Option<ResponseCode> {
        self.reply.as_ref().and_then(Reply::code)
    }

    fn narration(&self) -> &str {
        self.body["narration"].as_str().unwrap()
    }
}

/// How many transfers carry `narration` (each payout's is its own).
async fn transfers_named(kit: &TestKit, narration: &str) -> i64 {
    kit.sql("SELECT COUNT(*) FROM transfers WHERE narration = $1")
        .bind(narration)
        .int()
        .await
}

/// Every answer is one that tells what happened, and what was written says the same: `00`
/// once, `97` nothing, `98` (the outcome unknown) either.
async fn assert_answers_tell_what_happened(kit: &TestKit, sent: &[Sent]) {
    for payout in sent {
        let written = transfers_named(kit, payout.narration()).await;
        match payout.code() {
            Some(ResponseCode::Success) => assert_eq!(
                written,
                1,
                "{}: answered 00, written {written} times",
                payout.narration()
            ),
            Some(ResponseCode::ServiceUnavailable) => assert_eq!(
                written,
                0,
                "{}: answered 97 (nothing written, retry) but written {written} times: {:?}",
                payout.narration(),
                payout.reply
            ),
            Some(ResponseCode::OutcomeUnknown) => assert!(written <= 1, "{}", payout.narration()),
            _ => panic!(
                "{}: an answer that is no outcome: {:?}",
                payout.narration(),
                payout.reply
            ),
        }
    }
}

/// The proxy cut connections at commits, some of them payouts', which the server found out
/// about before answering: some kept, some not.
fn assert_payouts_commits_were_lost(eater: &CommitEater, server: &Process) {
    assert!(eater.eaten() > 0, "no connection was cut at a COMMIT");
    let lost = server.api.store().lost_commits();
    assert!(
        lost.kept > 0 && lost.not_kept > 0,
        "no payout's lost commit was found kept, or none found not kept: {lost:?}, {} \
         connections cut",
        eater.eaten()
    );
}

/// Each payout not acknowledged is sent again as a client would (after looking a `98` up: a
/// payout found written is not sent again), until it is: then each is written exactly once.
async fn retry_until_each_is_paid_once(kit: &TestKit, server: &Process, sent: &mut [Sent]) {
    for payout in sent.iter_mut() {
        for _ in 0..5 {
            if payout.code() == Some(ResponseCode::Success) {
                break;
            }
            if payout.code() == Some(ResponseCode::OutcomeUnknown)
                && payout.key.is_none()
                && transfers_named(kit, payout.narration()).await == 1
            {
                break;
            }
            if payout.operation == Operation::FundsTransfer {
                payout.body["otp"] = json!(otp(kit, &payout.token).await);
            }
            payout.reply = Some(server.send(payout.call()).await);
        }
        assert_eq!(
            transfers_named(kit, payout.narration()).await,
            1,
            "{}: {:?}",
            payout.narration(),
            payout.reply
        );
    }
}

/// Sends `payouts` to `server` at once (each in a task of its own).
async fn send_at_once(server: &Arc<Process>, payouts: Vec<Sent>) -> Vec<Sent> {
    let tasks: Vec<_> = payouts
        .into_iter()
        .map(|mut payout| {
            let server = server.clone();
            tokio::spawn(async move {
                payout.reply = Some(server.send(payout.call()).await);
                payout
            })
        })
        .collect();
    let mut sent = Vec::new();
    for task in tasks {
        sent.push(task.await.unwrap());
    }
    sent
}

fn payout(
    operation: Operation,
    token: &str,
    to: (&str, &str),
    narration: String,
    keyed: bool,
) -> Sent {
    Sent {
        body: json!({
            "source_account_number": "1000000014",
            "source_account_name": "Adaeze Foods Ltd",
            "beneficiary_account_number": to.0,
            "beneficiary_account_name": to.1,
            "bank_code": "090823",
            "amount": "10",
            "narration": narration,
            "transfer_type": "intra",
        }),
        key: keyed.then(|| format!("key-{}", narration.replace(' ', "-"))),
        token: token.to_owned(),
        operation,
        reply: None,
    }
}

/// A Dashboard payout of the business's owner, with a fresh OTP.
async fn web_payout(kit: &TestKit, to: (&str, &str), narration: String, keyed: bool) -> Sent {
    maker_payout(kit, &kit.owner_token, to, narration, keyed).await
}

/// A Dashboard payout of the member of `token`, with a fresh OTP (each member has one at a
/// time).
async fn maker_payout(
    kit: &TestKit,
    token: &str,
    to: (&str, &str),
    narration: String,
    keyed: bool,
) -> Sent {
    let mut payout = payout(Operation::FundsTransfer, token, to, narration, keyed);
    payout.body["otp"] = json!(otp(kit, token).await);
    payout
}

/// A kit with NGN 100,000 in the main account, a second process reaching the database
/// through a [`CommitEater`], and an integration token.
async fn behind_a_commit_eater() -> (TestKit, Arc<Process>, CommitEater, String) {
    let mut config = roomy_budget();
    config.otp.issue_limit = 1_000;
    let kit = TestKit::start(StoreKind::Postgres, config).await;
    let token = kit.integration_token().await;
    kit.credit(&token, "1000000014", "100000").await;
    let eater = CommitEater::start("127.0.0.1:5432".parse().unwrap()).await;
    let server = Arc::new(kit.another_process_at(&eater.url(kit.url())).await);
    (kit, server, eater, token)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_group_commit_whose_answer_is_lost_is_answered_as_it_happened() {
    let (kit, server, eater, token) = behind_a_commit_eater().await;
    let staff = "Adaeze Foods Ltd - Staff";
    let to = kit.open_account(&token, staff).await;
    let mut makers = Vec::new();
    for n in 0..8 {
        let email = format!("maker{n}@adaezefoods.ng");
        makers.push(kit.add_member(&email, MAKER_ROLE_ID).await.1);
    }
    eater.arm(3);
    let mut sent = Vec::new();
    for round in 0..4 {
        // A business's payouts at once share commits (its own ledger alone).
        // The Dashboard's, whose key is optional, and the integration's, whose is not.
        let mut payouts = Vec::new();
        for n in 0..12 {
            let narration = format!("group {round}-{n}");
            // Each maker has one OTP at a time: one payout each per round.
            let maker = &makers[(n - n / 3) % makers.len()];
            payouts.push(match n % 3 {
                0 => maker_payout(&kit, maker, (&to, staff), narration, false).await,
                1 => maker_payout(&kit, maker, (&to, staff), narration, true).await,
                _ => payout(
                    Operation::FundsTransferApi,
                    &token,
                    (&to, staff),
                    narration,
                    true,
                ),
            });
        }
        sent.extend(send_at_once(&server, payouts).await);
    }
    eater.arm(0);
    assert_answers_tell_what_happened(&kit, &sent).await;
    assert_payouts_commits_were_lost(&eater, &server);
    retry_until_each_is_paid_once(&kit, &server, &mut sent).await;
    let (commits, committed) = server.api.store().group_commits().await;
    assert!(
        commits < committed,
        "no group commit: {commits} for {committed}"
    );
    assert_eq!(crate::support::balance(&kit, &to).await, "480.00");
    kit.assert_ledger_balances().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lone_payouts_lost_commit_is_answered_as_it_happened() {
    let (kit, server, eater, token) = behind_a_commit_eater().await;
    // Intra-bank to another business: two ledgers, a transaction of its own.
    let (other, _) = kit
        .other_business("Chika Stores Ltd", "chika@chikastores.ng")
        .await;
    let to = (other.main_account_number.as_str(), "Chika Stores Ltd");
    eater.arm(3);
    let mut sent = Vec::new();
    for n in 0..18 {
        let narration = format!("lone {n}");
        let mut payout = match n % 3 {
            0 => web_payout(&kit, to, narration, false).await,
            1 => web_payout(&kit, to, narration, true).await,
            _ => payout(Operation::FundsTransferApi, &token, to, narration, true),
        };
        payout.reply = Some(server.send(payout.call()).await);
        sent.push(payout);
    }
    eater.arm(0);
    assert_answers_tell_what_happened(&kit, &sent).await;
    assert_payouts_commits_were_lost(&eater, &server);
    retry_until_each_is_paid_once(&kit, &server, &mut sent).await;
    assert_eq!(
        crate::support::balance(&kit, &other.main_account_number).await,
        "180.00"
    );
    kit.assert_ledger_balances().await;
}

/// A payout still waiting on the database when its time runs out (here for its business's
/// ledger, which the test holds) is answered `97` with `Retry-After` before the router's
/// deadline, never `96`, and nothing of it is kept.
async fn a_payout_out_of_time_waiting_on_the_database_is_97(kind: StoreKind) {
    let kit = TestKit::start(kind, roomy_budget()).await;
    let token = kit.integration_token().await;
    kit.credit(&token, "1000000014", "1000").await;
    let staff = "Adaeze Foods Ltd - Staff";
    let to = kit.open_account(&token, staff).await;
    let mut holding = kit.store.begin().await.unwrap();
    if kind == StoreKind::Postgres {
        kit.sql("SELECT last_sequence FROM ledger_heads WHERE business_id = $1 FOR UPDATE")
            .bind(&kit.business.business_id)
            .execute_in(&mut holding)
            .await;
    }
    let late = payout(
        Operation::FundsTransferApi,
        &token,
        (&to, staff),
        "late".into(),
        true,
    );
    let started = std::time::Instant::now();
    let reply = kit.send(late.call().within(Duration::from_secs(2))).await;
    let answered_in = started.elapsed();
    holding.rollback().await.unwrap();
    assert_eq!(
        reply.code(),
        Some(ResponseCode::ServiceUnavailable),
        "{reply:?}"
    );
    assert!(reply.header("retry-after").is_some(), "{reply:?}");
    assert!(
        answered_in < Duration::from_secs(2),
        "answered in {answered_in:?}"
    );
    assert_eq!(transfers_named(&kit, "late").await, 0);
    // Sent again, it is paid.
    let again = kit.send(late.call()).await;
    again.expect(ResponseCode::Success);
    assert_eq!(transfers_named(&kit, "late").await, 1);
    kit.assert_ledger_balances().await;
}

kobo::on_both_stores!(kind: a_payout_out_of_time_waiting_on_the_database_is_97);

/// A payout whose time runs out while its commit is under way (PostgreSQL's answer held up
/// on the way) cannot say nothing was kept: it is answered `98`; the commit goes on, and a
/// retry with the same key answers the transfer. Alone and in its business's group commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_payout_out_of_time_while_committing_is_98() {
    let (kit, server, eater, token) = behind_a_commit_eater().await;
    let staff = "Adaeze Foods Ltd - Staff";
    let to = kit.open_account(&token, staff).await;
    let (other, _) = kit
        .other_business("Chika Stores Ltd", "chika@chikastores.ng")
        .await;
    eater.hold(Duration::from_secs(3));
    for (narration, to) in [
        ("grouped", (to.as_str(), staff)),
        (
            "lone",
            (other.main_account_number.as_str(), "Chika Stores Ltd"),
        ),
    ] {
        let payout = payout(
            Operation::FundsTransferApi,
            &token,
            to,
            narration.into(),
            true,
        );
        let reply = server
            .send(payout.call().within(Duration::from_secs(2)))
            .await;
        assert_eq!(
            reply.code(),
            Some(ResponseCode::OutcomeUnknown),
            "{narration}: {reply:?}"
        );
        assert_eq!(reply.status.as_u16(), 504);
        // The commit was carried out: the retry answers it.
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(transfers_named(&kit, narration).await, 1, "{narration}");
        let again = kit.send(payout.call()).await;
        again.expect(ResponseCode::Success);
        assert_eq!(again.header("idempotent-replayed"), Some("true"));
        assert_eq!(transfers_named(&kit, narration).await, 1, "{narration}");
    }
    kit.assert_ledger_balances().await;
}
