//! Where deliveries may go, in production: https only, public addresses only, checked when the
//! configuration is saved and again at every connection (DNS rebinding), the whitelist too.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;

use generated_server::{Operation, ResponseCode};
use kobo::kernel::config::{Config, Environment};
use kobo::kernel::store;
use kobo::on_both_stores;
use kobo::outbox::destination::Resolver;
use kobo::outbox::webhooks::WebhookDispatcher;
use kobo::testkit::{StoreKind, TestKit};
use serde_json::json;

use crate::receiver::{configure, events, Receiver};

async fn production_refuses_private_destinations_when_saved(kind: StoreKind) {
    let kit = TestKit::start(kind, Config::new(Environment::Production)).await;
    for url in [
        "http://8.8.8.8/hooks",
        "https://127.0.0.1/hooks",
        "https://localhost/hooks",
        "https://10.0.0.8/",
        "https://192.168.0.1/",
        "https://169.254.169.254/latest/meta-data/",
        "https://[::1]/",
        "https://[::ffff:127.0.0.1]/",
        "https://[fd00:ec2::254]/",
        "https://2130706433/",
    ] {
        let reply = kit
            .op(
                Operation::WebhookConfiguration,
                &kit.owner_token,
                json!({"url": url}),
            )
            .await;
        reply.expect(ResponseCode::InvalidRequest);
    }
}

/// Resolves every name to one address, whatever it resolved to when the URL was saved.
struct Rebound(IpAddr);

impl Resolver for Rebound {
    fn lookup(
        &self,
        _host: &str,
        port: u16,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<Vec<SocketAddr>>> + Send + '_>> {
        let address = SocketAddr::new(self.0, port);
        Box::pin(async move { Ok(vec![address]) })
    }
}

/// A name that passed the check when saved now resolves to loopback: the delivery is refused
/// at connection time and nothing reaches the loopback receiver.
async fn a_rebound_name_is_refused_at_delivery(kind: StoreKind) {
    let kit = TestKit::start(kind, Config::new(Environment::Production)).await;
    let receiver = Receiver::start().await;
    // As if `hooks.adaezefoods.ng` had resolved to a public address when it was saved.
    sqlx::query(
        "INSERT INTO webhook_configurations (id, business_id, url, is_active, ip_whitelist, \
           event_types, secret, created_at, updated_at) VALUES ($1, $2, $3, 1, '[]', '[]', $4, $5, $5)",
    )
    .bind(store::new_id())
    .bind(&kit.business.business_id)
    .bind(format!("https://hooks.adaezefoods.ng:{}/kobo", receiver.address.port()))
    .bind(kobo::outbox::signing::new_secret())
    .bind(store::timestamp(kit.clock.now() - chrono::Duration::seconds(1)))
    .execute(kit.store.pool())
    .await
    .unwrap();
    let mut tx = kit.store.begin().await.unwrap();
    kobo::outbox::events::record(
        &mut tx,
        &kit.business.business_id,
        "webhook.test",
        &json!({"message": "x", "requested_by": "y"}),
        kit.clock.now(),
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    let dispatcher = WebhookDispatcher::with_resolver(
        kit.store.clone(),
        kit.clock.clone(),
        kit.api.config().webhooks.clone(),
        Environment::Production,
        Arc::new(Rebound("127.0.0.1".parse().unwrap())),
    );
    assert_eq!(dispatcher.deliver_due().await.unwrap(), 1);
    assert!(receiver.deliveries().is_empty());
    let entry = events(&kit, &kit.owner_token, json!({})).await[0].clone();
    assert_eq!(
        entry["status"], "pending",
        "retried later: the name may be fixed"
    );
    let error = entry["last_error"].as_str().unwrap();
    assert!(
        error.contains("127.0.0.1") && error.contains("loopback"),
        "{error}"
    );
    assert_eq!(entry["last_response_status"], serde_json::Value::Null);
}

/// The whitelist pins the addresses, in the sandbox too.
async fn the_whitelist_is_enforced_at_delivery(kit: TestKit) {
    let receiver = Receiver::start().await;
    configure(
        &kit,
        &kit.owner_token,
        &receiver.url(),
        json!({"ip_whitelist": ["10.0.0.0/8"]}),
    )
    .await;
    kit.op(Operation::TestWebhook, &kit.owner_token, json!({}))
        .await
        .expect(ResponseCode::Success);
    kit.webhooks().deliver_due().await.unwrap();
    assert!(receiver.deliveries().is_empty());
    let entry = events(&kit, &kit.owner_token, json!({})).await[0].clone();
    assert!(
        entry["last_error"]
            .as_str()
            .unwrap()
            .contains("ip_whitelist"),
        "{entry}"
    );
    // Allowing the receiver's address lets the next attempt through.
    let integration = kit.integration_token().await;
    kit.op(
        Operation::UpdateWebhookConfiguration,
        &integration,
        json!({"ip_whitelist": ["127.0.0.1"]}),
    )
    .await
    .expect(ResponseCode::Success);
    kit.clock.advance(chrono::Duration::seconds(6));
    kit.webhooks().deliver_due().await.unwrap();
    assert_eq!(receiver.deliveries().len(), 1);
}

on_both_stores!(kind: production_refuses_private_destinations_when_saved, a_rebound_name_is_refused_at_delivery);
on_both_stores!(the_whitelist_is_enforced_at_delivery);
