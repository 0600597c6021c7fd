//! Who makes a request and from where: what an operation knows of its request besides its
//! body. The HTTP edge builds a [`Caller`] from the router's request context; the domain never
//! sees the router's types.

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};

use generated_server::Operation;

use crate::platform::principal::Principal;

/// One call of an operation. `P` is the [`Principal`] for operations that take a token and
/// `()` for public ones (`login`, `generate_token`, `accept_invite`).
#[derive(Debug)]
pub struct Caller<P = Principal> {
    pub principal: P,
    pub operation: Operation,
    /// The request id the response carries (`X-Request-Id`), for logs and audit entries.
    pub request_id: String,
    /// The request's `Idempotency-Key`, on operations that take one.
    pub idempotency_key: Option<String>,
    pub client_ip: IpAddr,
    replayed: AtomicBool,
    logged: AtomicBool,
    committing: AtomicBool,
}

impl<P> Caller<P> {
    pub fn new(
        principal: P,
        operation: Operation,
        request_id: String,
        idempotency_key: Option<String>,
        client_ip: IpAddr,
    ) -> Caller<P> {
        Caller {
            principal,
            operation,
            request_id,
            idempotency_key,
            client_ip,
            replayed: AtomicBool::new(false),
            logged: AtomicBool::new(false),
            committing: AtomicBool::new(false),
        }
    }

    /// Notes that the answer is the stored answer of an earlier call with the same
    /// `Idempotency-Key` (the response says so: `Idempotent-Replayed: true`).
    pub fn mark_replayed(&self) {
        self.replayed.store(true, Ordering::Relaxed);
    }

    /// Notes that the call's payment is being committed (`true`) or that its commit's outcome
    /// is known (`false`): a call whose time runs out in between cannot say "nothing was
    /// kept" (`http::answer::serve`).
    pub fn mark_committing(&self, committing: bool) {
        self.committing.store(committing, Ordering::SeqCst);
    }

    /// Whether the call's payment was being committed ([`Caller::mark_committing`]).
    pub fn committing(&self) -> bool {
        self.committing.load(Ordering::SeqCst)
    }

    /// Whether [`Caller::mark_replayed`] was called.
    pub fn replayed(&self) -> bool {
        self.replayed.load(Ordering::Relaxed)
    }

    /// Notes that the operation wrote this call's activity-log entry, as a success, in the
    /// transaction that did its work (`logs::activity_into`): if that transaction commits
    /// and the call is answered with its success, the entry is the call's, and the log of
    /// the answer writes none. Any other answer is logged as answered.
    pub fn mark_logged(&self) {
        self.logged.store(true, Ordering::Relaxed);
    }

    /// Whether [`Caller::mark_logged`] was called.
    pub fn logged(&self) -> bool {
        self.logged.load(Ordering::Relaxed)
    }
}
