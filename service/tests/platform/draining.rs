//! A process told to stop leaves a load balancer's rotation before it stops accepting: for a
//! rolling restart that loses no request (`kobo serve --drain-seconds`, docs/deploying.md).

use generated_server::Operation;
use kobo::on_both_stores;
use kobo::testkit::{TestKit, OWNER_PASSWORD};

use crate::child::Server;

/// After SIGTERM, for `--drain-seconds`: `/readyz` answers `503` (`draining`), while `/healthz`
/// and the API still answer; then the process stops accepting and exits cleanly.
async fn a_stopping_process_is_unready_but_serves_until_its_drain_ends(kit: TestKit) {
    let mut server = Server::start_with(&kit, &["--drain-seconds", "3"]).await;
    assert_eq!(server.get("/readyz").0, 200);
    let token = server.login(OWNER_PASSWORD);
    server.terminate();
    let started = std::time::Instant::now();
    // The signal is handled at once: within a moment the probe says so.
    let mut draining = (0, String::new());
    while started.elapsed() < std::time::Duration::from_secs(2) {
        draining = server.get("/readyz");
        if draining.0 == 503 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(draining.0, 503, "{draining:?}");
    assert!(draining.1.contains("draining"), "{draining:?}");
    assert_eq!(server.get("/healthz").0, 200);
    assert_eq!(
        server.profile_code(&token),
        "00",
        "requests are still served"
    );
    let reply = server.post(Operation::GetProfile, Some(&token), &serde_json::json!({}));
    assert_eq!(reply["response_code"], "00", "{reply}");
    assert!(
        server.exited().is_none(),
        "the process waits out its drain before it stops"
    );
    // Then it stops accepting and exits cleanly.
    let mut status = None;
    while status.is_none() && started.elapsed() < std::time::Duration::from_secs(20) {
        status = server.exited();
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let status = status.expect("the process exits after its drain");
    assert!(status.success(), "{status:?}");
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(3),
        "it stopped before its drain ended: {:?}",
        started.elapsed()
    );
    assert_eq!(server.get("/healthz").0, 0, "nothing accepts any more");
}

on_both_stores!(a_stopping_process_is_unready_but_serves_until_its_drain_ends);
