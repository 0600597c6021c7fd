//! Delivery of the notification outbox: the SMTP channel against a small SMTP server on a
//! loopback port in this process, and the dispatcher's retries with a scripted channel. Time is
//! passed to `dispatch_due` explicitly, so nothing here waits for a clock.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use kobo::kernel::store::Store;
use kobo::outbox::dispatcher::{
    self, Channel, DeliveryError, DispatchReport, Dispatcher, DispatcherConfig, SmtpChannel,
    SmtpSettings, StoredNotification,
};
use kobo::outbox::{self, Notification};
use kobo::testkit::TestKit;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

async fn enqueue(store: &Store, recipient: &str, subject: &str) -> String {
    let mut tx = store.begin().await.unwrap();
    let id = outbox::enqueue(
        &mut tx,
        Utc::now(),
        &Notification {
            business_id: None,
            channel: "email",
            recipient: recipient.to_string(),
            subject: subject.to_string(),
            body: format!("Hello {recipient},\n\nyour code is 482913.\n"),
        },
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    id
}

async fn stored(store: &Store, id: &str) -> StoredNotification {
    dispatcher::recent(store, 1000)
        .await
        .unwrap()
        .into_iter()
        .find(|notification| notification.id == id)
        .unwrap()
}

/// What the fake SMTP server received in one transaction.
#[derive(Clone, Debug, Default)]
struct Received {
    from: String,
    to: Vec<String>,
    data: String,
}

/// Speaks just enough SMTP for lettre: greeting, EHLO, MAIL, RCPT, DATA, QUIT. A recipient
/// containing `refuse-permanently` gets `550` at RCPT, one containing `refuse-for-now` `451`.
struct FakeSmtp {
    port: u16,
    received: Arc<Mutex<Vec<Received>>>,
}

impl FakeSmtp {
    async fn start() -> FakeSmtp {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let sink = received.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(session(socket, sink.clone()));
            }
        });
        FakeSmtp { port, received }
    }

    fn settings(&self) -> SmtpSettings {
        SmtpSettings {
            url: format!("smtp://127.0.0.1:{}", self.port),
            from: "Kobo <no-reply@kobo.test>".into(),
            timeout: Duration::from_secs(10),
        }
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

async fn session(socket: tokio::net::TcpStream, sink: Arc<Mutex<Vec<Received>>>) {
    let (reader, mut writer) = socket.into_split();
    let mut lines = BufReader::new(reader).lines();
    let mut current = Received::default();
    writer.write_all(b"220 fake.test ESMTP\r\n").await.unwrap();
    while let Ok(Some(line)) = lines.next_line().await {
        let upper = line.to_ascii_uppercase();
        let reply: &[u8] = if upper.starts_with("EHLO") || upper.starts_with("HELO") {
            b"250-fake.test\r\n250 8BITMIME\r\n"
        } else if upper.starts_with("MAIL FROM:") {
            current = Received {
                from: line[10..].trim().to_string(),
                ..Received::default()
            };
            b"250 OK\r\n"
        } else if upper.starts_with("RCPT TO:") {
            if line.contains("refuse-permanently") {
                b"550 5.1.1 no such mailbox\r\n"
            } else if line.contains("refuse-for-now") {
                b"451 4.3.0 try again later\r\n"
            } else {
                current.to.push(line[8..].trim().to_string());
                b"250 OK\r\n"
            }
        } else if upper == "DATA" {
            writer.write_all(b"354 go ahead\r\n").await.unwrap();
            let mut data = String::new();
            while let Ok(Some(line)) = lines.next_line().await {
                if line == "." {
                    break;
                }
                data.push_str(&line);
                data.push('\n');
            }
            current.data = data;
            sink.lock().unwrap().push(std::mem::take(&mut current));
            b"250 OK queued\r\n"
        } else if upper == "QUIT" {
            let _ = writer.write_all(b"221 bye\r\n").await;
            return;
        } else if upper == "RSET" || upper == "NOOP" {
            b"250 OK\r\n"
        } else {
            b"502 not implemented\r\n"
        };
        if writer.write_all(reply).await.is_err() {
            return;
        }
    }
}

fn config() -> DispatcherConfig {
    DispatcherConfig {
        batch_size: 10,
        max_attempts: 3,
        ..DispatcherConfig::default()
    }
}

fn at(text: &str) -> DateTime<Utc> {
    text.parse().unwrap()
}

async fn the_smtp_channel_delivers_a_stored_notification(kit: TestKit) {
    let store = kit.store.clone();
    let smtp = FakeSmtp::start().await;
    let id = enqueue(
        &store,
        "ngozi.eze@adaezefoods.ng",
        "Your Kobo one-time password",
    )
    .await;
    let dispatcher = Dispatcher::new(
        store.clone(),
        SmtpChannel::new(&smtp.settings()).unwrap(),
        config(),
    );

    let report = dispatcher.dispatch_due(Utc::now()).await.unwrap();

    assert_eq!(report, DispatchReport { sent: 1, failed: 0 });
    let received = smtp.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].from, "<no-reply@kobo.test>");
    assert_eq!(received[0].to, ["<ngozi.eze@adaezefoods.ng>"]);
    assert!(
        received[0]
            .data
            .contains("Subject: Your Kobo one-time password"),
        "{}",
        received[0].data
    );
    assert!(received[0].data.contains("your code is 482913."));
    let row = stored(&store, &id).await;
    assert!(row.sent_at.is_some());
    assert_eq!((row.attempts, row.last_error), (1, None));

    // Sent is sent: the next pass has nothing to do.
    let report = dispatcher.dispatch_due(Utc::now()).await.unwrap();
    assert_eq!(report, DispatchReport::default());
    assert_eq!(smtp.received().len(), 1);
}

async fn a_permanent_smtp_refusal_is_recorded_and_not_retried(kit: TestKit) {
    let store = kit.store.clone();
    let smtp = FakeSmtp::start().await;
    let id = enqueue(&store, "refuse-permanently@adaezefoods.ng", "Invitation").await;
    let dispatcher = Dispatcher::new(
        store.clone(),
        SmtpChannel::new(&smtp.settings()).unwrap(),
        config(),
    );
    let now = at("2026-11-02T10:00:00Z");

    let report = dispatcher.dispatch_due(now).await.unwrap();

    assert_eq!(report, DispatchReport { sent: 0, failed: 1 });
    let row = stored(&store, &id).await;
    assert_eq!(row.sent_at, None);
    assert_eq!(row.attempts, 3, "a permanent refusal uses up every attempt");
    let error = row.last_error.unwrap();
    assert!(error.contains("no such mailbox"), "{error}");
    let a_day_later = now + chrono::Duration::days(1);
    assert_eq!(
        dispatcher.dispatch_due(a_day_later).await.unwrap(),
        DispatchReport::default()
    );
}

async fn a_temporary_smtp_refusal_is_retried(kit: TestKit) {
    let store = kit.store.clone();
    let smtp = FakeSmtp::start().await;
    let id = enqueue(&store, "refuse-for-now@adaezefoods.ng", "Invitation").await;
    let dispatcher = Dispatcher::new(
        store.clone(),
        SmtpChannel::new(&smtp.settings()).unwrap(),
        config(),
    );

    let report = dispatcher
        .dispatch_due(at("2026-11-02T10:00:00Z"))
        .await
        .unwrap();

    assert_eq!(report, DispatchReport { sent: 0, failed: 1 });
    let row = stored(&store, &id).await;
    assert_eq!(row.attempts, 1);
    assert!(row.last_error.unwrap().contains("try again later"));
}

async fn an_unreachable_smtp_server_is_a_temporary_failure(kit: TestKit) {
    let store = kit.store.clone();
    // A port that was just free: nothing listens there.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let settings = SmtpSettings {
        url: format!("smtp://127.0.0.1:{port}"),
        from: "no-reply@kobo.test".into(),
        timeout: Duration::from_secs(5),
    };
    let id = enqueue(&store, "adaeze.okafor@adaezefoods.ng", "Invitation").await;
    let dispatcher = Dispatcher::new(
        store.clone(),
        SmtpChannel::new(&settings).unwrap(),
        config(),
    );

    let report = dispatcher.dispatch_due(Utc::now()).await.unwrap();

    assert_eq!(report, DispatchReport { sent: 0, failed: 1 });
    assert_eq!(stored(&store, &id).await.attempts, 1);
}

#[test]
fn a_bad_smtp_configuration_is_refused_at_start() {
    let settings = |url: &str, from: &str| SmtpSettings {
        url: url.into(),
        from: from.into(),
        timeout: Duration::from_secs(5),
    };
    let error = SmtpChannel::new(&settings("smtp://127.0.0.1:2525", "not an address"))
        .err()
        .unwrap();
    assert!(error.to_string().contains("KOBO_SMTP_FROM"), "{error}");
    let error = SmtpChannel::new(&settings("http://user:hunter2@mail", "a@b.test"))
        .err()
        .unwrap();
    let message = format!("{error:#}");
    assert!(message.contains("KOBO_SMTP_URL"), "{message}");
    assert!(!message.contains("hunter2"), "{message}");
}

/// Fails the first `failures` sends, then succeeds; counts the sends.
struct Scripted {
    failures: usize,
    sends: Mutex<usize>,
}

impl Channel for Scripted {
    async fn send(&self, _: &StoredNotification) -> Result<(), DeliveryError> {
        let mut sends = self.sends.lock().unwrap();
        *sends += 1;
        if *sends <= self.failures {
            Err(DeliveryError::transient(format!("failure {sends}")))
        } else {
            Ok(())
        }
    }
}

async fn failures_are_retried_after_a_backoff_until_delivered(kit: TestKit) {
    let store = kit.store.clone();
    let id = enqueue(&store, "tunde.bakare@adaezefoods.ng", "Invitation").await;
    let channel = Scripted {
        failures: 2,
        sends: Mutex::new(0),
    };
    let dispatcher = Dispatcher::new(store.clone(), channel, config());
    let start = at("2026-11-02T10:00:00Z");
    let seconds = |n: i64| start + chrono::Duration::seconds(n);

    assert_eq!(dispatcher.dispatch_due(start).await.unwrap().failed, 1);
    let row = stored(&store, &id).await;
    assert_eq!(
        (row.attempts, row.last_error.as_deref()),
        (1, Some("failure 1"))
    );

    // Not due before its backoff (10 s after the first failure).
    assert_eq!(
        dispatcher.dispatch_due(seconds(9)).await.unwrap(),
        DispatchReport::default()
    );
    assert_eq!(
        dispatcher.dispatch_due(seconds(10)).await.unwrap().failed,
        1
    );
    assert_eq!(stored(&store, &id).await.attempts, 2);

    // The second backoff is 30 s.
    assert_eq!(
        dispatcher.dispatch_due(seconds(39)).await.unwrap(),
        DispatchReport::default()
    );
    assert_eq!(dispatcher.dispatch_due(seconds(40)).await.unwrap().sent, 1);
    let row = stored(&store, &id).await;
    assert!(row.sent_at.is_some());
    assert_eq!((row.attempts, row.last_error), (3, None));
}

async fn retries_stop_after_the_last_attempt(kit: TestKit) {
    let store = kit.store.clone();
    let id = enqueue(&store, "tunde.bakare@adaezefoods.ng", "Invitation").await;
    let dispatcher = Dispatcher::new(
        store.clone(),
        Scripted {
            failures: usize::MAX,
            sends: Mutex::new(0),
        },
        config(),
    );
    let mut now = at("2026-11-02T10:00:00Z");
    let mut failed = 0;
    // Far more passes than attempts, each a day apart: only `max_attempts` sends happen.
    for _ in 0..10 {
        failed += dispatcher.dispatch_due(now).await.unwrap().failed;
        now += chrono::Duration::days(1);
    }
    assert_eq!(failed, 3);
    let row = stored(&store, &id).await;
    assert_eq!((row.attempts, row.sent_at), (3, None));
    assert_eq!(row.last_error.as_deref(), Some("failure 3"));
}

async fn a_pass_is_bounded_by_the_batch_size_and_oldest_go_first(kit: TestKit) {
    let store = kit.store.clone();
    let mut ids = Vec::new();
    for n in 0..5 {
        ids.push(enqueue(&store, &format!("member{n}@adaezefoods.ng"), "Invitation").await);
    }
    let dispatcher = Dispatcher::new(
        store.clone(),
        Scripted {
            failures: 0,
            sends: Mutex::new(0),
        },
        DispatcherConfig {
            batch_size: 2,
            ..config()
        },
    );

    assert_eq!(dispatcher.dispatch_due(Utc::now()).await.unwrap().sent, 2);
    assert!(stored(&store, &ids[0]).await.sent_at.is_some());
    assert!(stored(&store, &ids[1]).await.sent_at.is_some());
    assert!(stored(&store, &ids[2]).await.sent_at.is_none());
    assert_eq!(dispatcher.dispatch_due(Utc::now()).await.unwrap().sent, 2);
    assert_eq!(dispatcher.dispatch_due(Utc::now()).await.unwrap().sent, 1);
    assert_eq!(
        dispatcher.dispatch_due(Utc::now()).await.unwrap(),
        DispatchReport::default()
    );
}

async fn two_dispatchers_on_one_database_send_each_message_once(kit: TestKit) {
    let store = kit.store.clone();
    for n in 0..6 {
        enqueue(&store, &format!("member{n}@adaezefoods.ng"), "Invitation").await;
    }
    let first = Dispatcher::new(
        store.clone(),
        Scripted {
            failures: 0,
            sends: Mutex::new(0),
        },
        config(),
    );
    let second = Dispatcher::new(
        store.clone(),
        Scripted {
            failures: 0,
            sends: Mutex::new(0),
        },
        config(),
    );
    let now = Utc::now();

    let (a, b) = tokio::join!(first.dispatch_due(now), second.dispatch_due(now));

    assert_eq!(a.unwrap().sent + b.unwrap().sent, 6);
}

async fn the_outbox_lists_newest_first_within_the_limit(kit: TestKit) {
    let store = kit.store.clone();
    let first = enqueue(&store, "a@adaezefoods.ng", "first").await;
    let second = enqueue(&store, "b@adaezefoods.ng", "second").await;
    let third = enqueue(&store, "c@adaezefoods.ng", "third").await;

    let all: Vec<String> = dispatcher::recent(&store, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|notification| notification.id)
        .collect();
    assert_eq!(all, [third.clone(), second, first]);
    let newest = dispatcher::recent(&store, 1).await.unwrap();
    assert_eq!(newest.len(), 1);
    assert_eq!(newest[0].id, third);
}

kobo::on_both_stores!(
    the_smtp_channel_delivers_a_stored_notification,
    a_permanent_smtp_refusal_is_recorded_and_not_retried,
    a_temporary_smtp_refusal_is_retried,
    an_unreachable_smtp_server_is_a_temporary_failure,
    failures_are_retried_after_a_backoff_until_delivered,
    retries_stop_after_the_last_attempt,
    a_pass_is_bounded_by_the_batch_size_and_oldest_go_first,
    two_dispatchers_on_one_database_send_each_message_once,
    the_outbox_lists_newest_first_within_the_limit,
);
