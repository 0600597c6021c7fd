//! The platform issue's behaviours, through the router, each on SQLite and on PostgreSQL
//! (`kobo::on_both_stores!`). One test binary, so the machine links it once:
//! `cargo test -p kobo --test platform <module or scenario>`.

mod child;
mod dashboard_sessions;
mod draining;
mod hardening;
mod idempotency;
mod isolation;
mod logs;
mod otp;
mod permission_walk;
mod provisioning;
mod races;
mod roles;
mod sessions;
mod team;
mod throttling;
mod upgrade;
