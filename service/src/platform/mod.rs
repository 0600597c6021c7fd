//! The platform every bank operation stands on: who is calling (`caller`, `principal`, `sessions`,
//! `tokens`, `rate_limit`), credentials and one-time passwords (`identity`, `throttle`), the
//! team (`team`, `team_views`, `roles`, `permissions`), the logs (`logs`), the business as requests see
//! it (`business`), the environment a database serves (`deployment`), `Idempotency-Key` claims (`idempotency`), the webhook endpoint and its
//! delivery log (`webhook_endpoints`) and the purge of expired rows (`housekeeping`). Uses `kernel` and
//! `outbox`; nothing outer.

pub(crate) mod audit_targets;
pub(crate) mod business;
pub mod caller;
pub mod context;
pub mod deployment;
pub mod housekeeping;
pub mod idempotency;
pub mod identity;
pub(crate) mod invitation_preview;
pub(crate) mod logs;
pub mod permissions;
pub mod principal;
pub mod rate_limit;
pub mod roles;
pub(crate) mod sessions;
pub(crate) mod team;
pub(crate) mod team_views;
pub(crate) mod throttle;
pub mod tokens;
pub(crate) mod webhook_endpoints;
