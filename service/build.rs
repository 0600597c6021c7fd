//! Rebuilds the crate when a migration is added or changed: `sqlx::migrate!` embeds
//! `migrations/` at compile time, and Cargo reruns a macro only when a file it knows changed.
//! Without this, a new migration alone left the binary and the tests migrating to the schema
//! of the last build. The build script sqlx recommends (`sqlx migrate build-script`).
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
