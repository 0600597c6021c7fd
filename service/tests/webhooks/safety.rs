//! Where deliveries may go: public addresses only, in the sandbox as in production (which also
//! wants https), checked when the configuration is saved and again at every connection (DNS
//! rebinding), the whitelist too; loopback only for local development, when the server was
//! started for it (`kobo demo`).

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;

use generated_server::{Operation, ResponseCode};
use kobo::kernel::config::{Config, Environment};
use kobo::kernel::store;
use kobo::on_both_stores;
use kobo::outbox::webhooks::destination::Resolver;
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
    let url = format!(
        "https://hooks.adaezefoods.ng:{}/kobo",
        receiver.address.port()
    );
    let mut tx = kit.store.begin().await.unwrap();
    let saved = kobo::datastore::webhook_endpoints::insert(
        &mut tx,
        &kobo::datastore::webhook_endpoints::NewEndpoint {
            id: &store::new_id(),
            business_id: &kit.business.business_id,
            url: &url,
            ip_whitelist: &[],
            event_types: &[],
            secret: &kobo::outbox::webhooks::signing::new_secret(),
        },
        kit.clock.now() - chrono::Duration::seconds(1),
    )
    .await
    .unwrap();
    assert!(saved);
    tx.commit().await.unwrap();
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

/// The whitelist pins the addresses, in the sandbox too, at delivery (the name resolves to
/// the receiver's loopback address only then).
async fn the_whitelist_is_enforced_at_delivery(kit: TestKit) {
    let receiver = Receiver::start().await;
    let url = format!(
        "http://hooks.adaezefoods.test:{}/kobo",
        receiver.address.port()
    );
    configure(
        &kit,
        &kit.owner_token,
        &url,
        json!({"ip_whitelist": ["10.0.0.0/8"]}),
    )
    .await;
    let dispatcher = WebhookDispatcher::with_resolver(
        kit.store.clone(),
        kit.clock.clone(),
        kit.api.config().webhooks.clone(),
        Environment::Sandbox,
        Arc::new(Rebound("127.0.0.1".parse().unwrap())),
    );
    kit.op(Operation::TestWebhook, &kit.owner_token, json!({}))
        .await
        .expect(ResponseCode::Success);
    dispatcher.deliver_due().await.unwrap();
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
    dispatcher.deliver_due().await.unwrap();
    assert_eq!(receiver.deliveries().len(), 1);
}

/// Issue 28, item 6. A sandbox server is reachable by anyone who signs up, and the delivery
/// log shows the first KiB of each answer: its webhooks reached the cloud's metadata service,
/// private networks and the server's own loopback ports (a read SSRF). It refuses them as
/// production does: literal addresses when the configuration is saved, every address again at
/// delivery (a name is only known then).
async fn the_sandbox_refuses_private_and_loopback_destinations(kind: StoreKind) {
    let kit = TestKit::start(kind, Config::new(Environment::Sandbox)).await;
    let receiver = Receiver::start().await;
    let port = receiver.address.port();
    for url in [
        format!("http://127.0.0.1:{port}/hooks"),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://10.0.0.1/".to_owned(),
        "http://192.168.1.1/".to_owned(),
        format!("http://[::ffff:127.0.0.1]:{port}/metrics"),
        "http://[::1]:5432/".to_owned(),
    ] {
        let reply = kit
            .op(
                Operation::WebhookConfiguration,
                &kit.owner_token,
                json!({"url": url}),
            )
            .await;
        reply.expect(ResponseCode::InvalidRequest);
        let message = reply.body["message"].as_str().unwrap();
        assert!(message.starts_with("`url`"), "{url}: {message}");
    }
    // A name is checked at delivery, where it resolves to loopback: nothing is sent.
    configure(
        &kit,
        &kit.owner_token,
        &format!("http://localhost:{port}/hooks"),
        json!({}),
    )
    .await;
    kit.op(Operation::TestWebhook, &kit.owner_token, json!({}))
        .await
        .expect(ResponseCode::Success);
    assert_eq!(kit.webhooks().deliver_due().await.unwrap(), 1);
    assert!(receiver.deliveries().is_empty());
    let entry = events(&kit, &kit.owner_token, json!({})).await[0].clone();
    let error = entry["last_error"].as_str().unwrap();
    assert!(error.contains("loopback"), "{error}");
    assert_eq!(entry["last_response_status"], serde_json::Value::Null);
}

/// Local development (`kobo demo`, `kobo serve --allow-loopback-webhooks`): loopback
/// addresses are allowed, and only they: private and link-local ones stay refused.
async fn local_development_allows_loopback_only(kind: StoreKind) {
    let kit = TestKit::start(kind, crate::local_development()).await;
    let receiver = Receiver::start().await;
    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://[fd00:ec2::254]/",
    ] {
        kit.op(
            Operation::WebhookConfiguration,
            &kit.owner_token,
            json!({"url": url}),
        )
        .await
        .expect(ResponseCode::InvalidRequest);
    }
    configure(&kit, &kit.owner_token, &receiver.url(), json!({})).await;
    kit.op(Operation::TestWebhook, &kit.owner_token, json!({}))
        .await
        .expect(ResponseCode::Success);
    kit.webhooks().deliver_due().await.unwrap();
    assert_eq!(receiver.deliveries().len(), 1);
}

/// Production refuses the loopback allowance at startup, whatever the configuration says.
async fn production_never_delivers_to_loopback(kind: StoreKind) {
    let mut config = Config::new(Environment::Production);
    config.webhooks.loopback_allowed = true;
    let kit = TestKit::start(kind, config).await;
    kit.op(
        Operation::WebhookConfiguration,
        &kit.owner_token,
        json!({"url": "https://127.0.0.1/hooks"}),
    )
    .await
    .expect(ResponseCode::InvalidRequest);
}

on_both_stores!(
    kind: production_refuses_private_destinations_when_saved,
    a_rebound_name_is_refused_at_delivery,
    the_sandbox_refuses_private_and_loopback_destinations,
    local_development_allows_loopback_only,
    production_never_delivers_to_loopback,
);
on_both_stores!(config: crate::local_development() => the_whitelist_is_enforced_at_delivery);
