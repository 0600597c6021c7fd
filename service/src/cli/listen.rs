//! `kobo webhooks listen`: a local receiver for developers. It verifies each delivery's
//! Standard Webhooks signature and timestamp with the secret it is given, prints the event, and
//! answers `204` (or `401` with the reason), so a partner can watch the sandbox's events on
//! their machine and see exactly what their own receiver must do.

use std::collections::HashSet;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::Router;
use clap::Args;
use serde_json::json;
use tokio::net::TcpListener;

use crate::http;
use crate::kernel::clock::Clock;
use crate::outbox::webhooks::signing;

#[derive(Clone, Debug, Args)]
pub struct ListenArgs {
    /// The signing secret (`whsec_...`) that webhook_configuration or rotate_webhook_secret
    /// returned.
    #[arg(long, env = "KOBO_WEBHOOK_SECRET", hide_env_values = true)]
    pub secret: String,

    /// Address and port to listen on; point the configuration's `url` at it.
    #[arg(long, default_value = "127.0.0.1:9000")]
    pub listen: SocketAddr,

    /// Also append every verified delivery (headers and raw body) to this file, one JSON
    /// object a line, to check signatures with another implementation.
    #[arg(long)]
    pub capture: Option<PathBuf>,

    /// Print one JSON object a line instead of text.
    #[arg(long)]
    pub json: bool,
}

struct Receiver {
    key: Vec<u8>,
    clock: Clock,
    capture: Option<Mutex<std::fs::File>>,
    json: bool,
    seen: Mutex<HashSet<String>>,
}

/// Runs the receiver until Ctrl-C or SIGTERM.
pub async fn listen(args: ListenArgs) -> Result<()> {
    let key = signing::key_of(&args.secret).map_err(|why| anyhow::anyhow!("--secret: {why}"))?;
    let capture = args
        .capture
        .as_ref()
        .map(|path| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("cannot open {}", path.display()))
        })
        .transpose()?
        .map(Mutex::new);
    let receiver = Arc::new(Receiver {
        key,
        clock: Clock::system(),
        capture,
        json: args.json,
        seen: Mutex::new(HashSet::new()),
    });
    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let address = listener.local_addr()?;
    eprintln!(
        "Listening for webhooks on http://{address}/ (any path). Point the configuration at it:\n  \
         update_webhook_configuration {{\"url\": \"http://{address}/webhooks\"}}\nCtrl-C stops."
    );
    let app = Router::new().fallback(receive).with_state(receiver);
    axum::serve(listener, app)
        .with_graceful_shutdown(http::shutdown_signal())
        .await
        .context("the receiver failed")?;
    Ok(())
}

async fn receive(
    State(receiver): State<Arc<Receiver>>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, String) {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    let (id, timestamp, signature) = (
        header("webhook-id"),
        header("webhook-timestamp"),
        header("webhook-signature"),
    );
    let now = receiver.clock.now().timestamp();
    if let Err(refusal) = signing::verify(&receiver.key, &id, &timestamp, &signature, &body, now) {
        let line = format!("refused a delivery (webhook-id `{id}`): {refusal}");
        print(
            &receiver,
            json!({"verified": false, "id": id, "error": refusal.to_string()}),
            &line,
        );
        return (StatusCode::UNAUTHORIZED, refusal.to_string());
    }
    let event: serde_json::Value = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
    let repeat = !receiver
        .seen
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id.clone());
    if let Some(file) = &receiver.capture {
        let record = json!({
            "webhook-id": id,
            "webhook-timestamp": timestamp,
            "webhook-signature": signature,
            "body": String::from_utf8_lossy(&body),
        });
        let mut file = file.lock().unwrap_or_else(|p| p.into_inner());
        let _ = writeln!(file, "{record}");
        let _ = file.flush();
    }
    let kind = event["type"].as_str().unwrap_or("?");
    let text = format!(
        "{kind} {id}{} (signature verified)\n{}",
        if repeat {
            " [repeat: already received]"
        } else {
            ""
        },
        serde_json::to_string_pretty(&event).unwrap_or_default()
    );
    print(
        &receiver,
        json!({"verified": true, "repeat": repeat, "id": id, "event": event}),
        &text,
    );
    (StatusCode::NO_CONTENT, String::new())
}

fn print(receiver: &Receiver, json: serde_json::Value, text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = if receiver.json {
        writeln!(out, "{json}")
    } else {
        writeln!(out, "{text}")
    };
    let _ = out.flush();
}
