//! No code: see Cargo.toml. kobo and kobo-load depend on this crate so that `cargo run -p kobo`
//! and `cargo run -p kobo-load` build their dependencies with the workspace build's features.
