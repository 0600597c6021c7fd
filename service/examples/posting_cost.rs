//! The measured cost of the posting path: an inbound credit (`simulate_inbound_transfer`)
//! through the real router and domain code, on each store, without a socket.
//!
//! ```text
//! cargo run -p kobo --example posting_cost [-- CREDITS]
//! ```
//!
//! Prints, per store: the SQL statements one credit runs (counted from sqlx's own statement
//! events, so nothing is estimated), the mean time per credit one after another, and the
//! throughput with 8 credits in flight on 4 accounts; then the PostgreSQL/SQLite ratios, which
//! are what to compare between runs (these machines are shared and noisy). PostgreSQL needs
//! `KOBO_TEST_POSTGRES_URL` or the local server, as the tests do.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use generated_server::{Operation, ResponseCode};
use kobo::kernel::config::{Config, RequestBudget};
use kobo::testkit::{Call, StoreKind, TestKit};
use serde_json::json;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::Layer;

/// Counts sqlx's statement events; with `POSTING_COST_TRACE=1` prints each one's summary.
struct Statements(Arc<AtomicU64>, bool);

/// The `summary` field of a sqlx statement event (its first words).
struct Summary(String);

impl tracing::field::Visit for Summary {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "summary" {
            self.0 = format!("{value:?}");
        }
    }
}

impl<S: tracing::Subscriber> Layer<S> for Statements {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() == "sqlx::query" {
            self.0.fetch_add(1, Ordering::Relaxed);
            if self.1 && TRACING.load(Ordering::Relaxed) {
                let mut summary = Summary(String::new());
                event.record(&mut summary);
                eprintln!("  statement: {}", summary.0);
            }
        }
    }
}

/// Whether the measured credit is running (only its statements are printed).
static TRACING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

struct Measured {
    statements: u64,
    sequential: Duration,
    concurrent: Duration,
    credits: u32,
}

async fn measure(kind: StoreKind, credits: u32, counter: &AtomicU64) -> Measured {
    let config = Config {
        request_budget: RequestBudget {
            per_minute: NonZeroU32::new(10_000_000).unwrap(),
            burst: NonZeroU32::new(1_000_000).unwrap(),
        },
        ..Config::default()
    };
    let kit = Arc::new(TestKit::start(kind, config).await);
    let token = kit.integration_token().await;
    let mut accounts = vec![kit.business.main_account_number.clone()];
    for bvn in ["22212345678", "22287654321", "12345671234"] {
        let reply = kit
            .op(
                Operation::CreateCustomerAccount,
                &token,
                json!({"bvn": bvn}),
            )
            .await;
        accounts.push(
            reply.expect(ResponseCode::Success)["account_number"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    for _ in 0..20 {
        kit.credit(&token, &accounts[0], "1.00").await;
    }

    let before = counter.load(Ordering::Relaxed);
    TRACING.store(true, Ordering::Relaxed);
    kit.credit(&token, &accounts[0], "1.00").await;
    TRACING.store(false, Ordering::Relaxed);
    let statements = counter.load(Ordering::Relaxed) - before;

    let started = Instant::now();
    for n in 0..credits {
        kit.credit(&token, &accounts[n as usize % accounts.len()], "1.00")
            .await;
    }
    let sequential = started.elapsed();

    let started = Instant::now();
    let tasks: Vec<_> = (0..8)
        .map(|task| {
            let kit = kit.clone();
            let token = token.clone();
            let account = accounts[task % accounts.len()].clone();
            tokio::spawn(async move {
                for _ in 0..credits / 8 {
                    kit.send(Call::new(
                        Operation::SimulateInboundTransfer.path(),
                        Some(&token),
                        json!({"account_number": account, "amount": "1.00"}),
                    ))
                    .await
                    .expect(ResponseCode::Success);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let concurrent = started.elapsed();
    kit.assert_ledger_balances().await;
    Measured {
        statements,
        sequential,
        concurrent,
        credits: credits / 8 * 8,
    }
}

fn main() {
    let credits: u32 = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(400);
    let counter = Arc::new(AtomicU64::new(0));
    let trace = std::env::var("POSTING_COST_TRACE").is_ok_and(|value| value == "1");
    let subscriber = tracing_subscriber::registry().with(Statements(counter.clone(), trace));
    tracing::subscriber::set_global_default(subscriber).expect("one subscriber");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    let mut results = Vec::new();
    for (name, kind) in [
        ("sqlite", StoreKind::Sqlite),
        ("postgres", StoreKind::Postgres),
    ] {
        let measured = runtime.block_on(measure(kind, credits, &counter));
        let per_credit = measured.sequential / credits;
        let throughput = f64::from(measured.credits) / measured.concurrent.as_secs_f64();
        println!(
            "{name:8} statements/credit {:3}  sequential {:>8.2?}/credit  8 in flight {:>7.0} credits/s",
            measured.statements, per_credit, throughput
        );
        results.push((per_credit, throughput));
    }
    let (sqlite, postgres) = (results[0], results[1]);
    println!(
        "ratios postgres/sqlite: time per sequential credit {:.2}, concurrent throughput {:.2}",
        postgres.0.as_secs_f64() / sqlite.0.as_secs_f64(),
        postgres.1 / sqlite.1
    );
}
