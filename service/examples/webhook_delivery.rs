//! Webhook delivery, measured: the dispatcher of `kobo serve` (its real loop, real HTTP to a
//! receiver on a loopback port, real signatures) on each store.
//!
//! ```text
//! cargo run -p kobo --example webhook_delivery [-- EVENTS]
//! ```
//!
//! Prints, per store:
//! - throughput: EVENTS events (default 2000) already queued for one business, then for 8
//!   businesses, delivered by one dispatcher (events per second, wall time);
//! - delay: 200 events committed one every 10 ms while the loop runs; the delay from each
//!   event's commit to its first attempt (p50, p95, max), read from the attempt log.
//!
//! These machines are shared and noisy: compare runs by the ratios printed at the end.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use axum::Router;
use generated_server::{Operation, ResponseCode};
use kobo::kernel::config::Config;
use kobo::outbox::events;
use kobo::testkit::{StoreKind, TestKit};
use serde_json::json;

async fn receiver() -> (String, Arc<AtomicU64>) {
    let received = Arc::new(AtomicU64::new(0));
    let counter = received.clone();
    let app = Router::new().fallback(move || {
        let counter = counter.clone();
        async move {
            counter.fetch_add(1, Ordering::SeqCst);
            StatusCode::NO_CONTENT
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hooks", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, received)
}

async fn configure(kit: &TestKit, token: &str, url: &str) {
    kit.op(Operation::WebhookConfiguration, token, json!({"url": url}))
        .await
        .expect(ResponseCode::Success);
}

/// Commits `n` events for `business_id` (one transaction each, as changes do).
async fn record(kit: &TestKit, business_id: &str, n: usize) {
    for i in 0..n {
        let mut tx = kit.store.begin().await.unwrap();
        events::record(
            &mut tx,
            business_id,
            "webhook.test",
            &json!({"message": format!("bench {i}"), "requested_by": "bench"}),
            kit.clock.now(),
        )
        .await
        .unwrap();
        tx.commit().await.unwrap();
    }
}

/// Runs the dispatcher loop until `received` reaches `target`; the wall time.
async fn drain(kit: &TestKit, received: &AtomicU64, target: u64) -> Duration {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let dispatcher = kit.webhooks();
    let started = Instant::now();
    let loop_task = tokio::spawn(dispatcher.run(async {
        let _ = stopped.await;
    }));
    while received.load(Ordering::SeqCst) < target {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let elapsed = started.elapsed();
    let _ = stop.send(());
    loop_task.await.unwrap();
    elapsed
}

struct Figures {
    one_business: f64,
    eight_businesses: f64,
    delays_ms: Vec<i64>,
}

async fn measure(kind: StoreKind, n: usize) -> Figures {
    // As `kobo demo` runs: the receiver listens on loopback.
    let mut config = Config::default();
    config.webhooks.loopback_allowed = true;
    let kit = TestKit::start(kind, config).await;
    let (url, received) = receiver().await;
    configure(&kit, &kit.owner_token, &url).await;

    record(&kit, &kit.business.business_id, n).await;
    let one = drain(&kit, &received, n as u64).await;

    let mut businesses = vec![kit.business.business_id.clone()];
    for b in 1..8 {
        let (business, token) = kit
            .other_business(&format!("Bench {b}"), &format!("bench{b}@example.ng"))
            .await;
        configure(&kit, &token, &url).await;
        businesses.push(business.business_id);
    }
    received.store(0, Ordering::SeqCst);
    for business in &businesses {
        record(&kit, business, n / 8).await;
    }
    let eight = drain(&kit, &received, (n / 8 * 8) as u64).await;

    // Delay: events committed while the loop runs.
    received.store(0, Ordering::SeqCst);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let loop_task = tokio::spawn(kit.webhooks().run(async {
        let _ = stopped.await;
    }));
    let delays_from = kit.clock.now();
    for _ in 0..200 {
        record(&kit, &kit.business.business_id, 1).await;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    while received.load(Ordering::SeqCst) < 200 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let _ = stop.send(());
    loop_task.await.unwrap();
    let rows: Vec<(String, String)> = kit
        .sql(
            "SELECT e.created_at, MIN(a.attempted_at) FROM events e \
             JOIN webhook_attempts a ON a.event_id = e.id \
             WHERE e.created_at >= $1 GROUP BY e.id, e.created_at",
        )
        .bind(kobo::kernel::store::timestamp(delays_from))
        .rows()
        .await
        .into_iter()
        .map(|row| {
            let mut columns = row.into_iter().map(|column| column.expect("a time"));
            (columns.next().unwrap(), columns.next().unwrap())
        })
        .collect();
    let mut delays_ms: Vec<i64> = rows
        .iter()
        .map(|(created, attempted)| {
            let created: chrono::DateTime<chrono::Utc> = created.parse().unwrap();
            let attempted: chrono::DateTime<chrono::Utc> = attempted.parse().unwrap();
            (attempted - created).num_milliseconds()
        })
        .collect();
    delays_ms.sort_unstable();
    Figures {
        one_business: n as f64 / one.as_secs_f64(),
        eight_businesses: (n / 8 * 8) as f64 / eight.as_secs_f64(),
        delays_ms,
    }
}

fn percentile(sorted: &[i64], p: usize) -> i64 {
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|arg| arg.parse().expect("EVENTS is a number"))
        .unwrap_or(2000);
    let mut all = Vec::new();
    for kind in [StoreKind::Sqlite, StoreKind::Postgres] {
        let figures = measure(kind, n).await;
        let d = &figures.delays_ms;
        println!(
            "{kind:?}: {:.0} events/s (one business, {} in flight), {:.0} events/s (8 businesses); \
             commit to first attempt: p50 {} ms, p95 {} ms, max {} ms ({} events)",
            figures.one_business,
            Config::default().webhooks.per_endpoint,
            figures.eight_businesses,
            percentile(d, 50),
            percentile(d, 95),
            d.last().copied().unwrap_or_default(),
            d.len()
        );
        all.push(figures);
    }
    println!(
        "PostgreSQL/SQLite: throughput one business {:.2}, 8 businesses {:.2}",
        all[1].one_business / all[0].one_business,
        all[1].eight_businesses / all[0].eight_businesses
    );
}
