//! Empty: a package's `[build-dependencies]` are resolved only when it has a build script, and
//! this one exists so that `workspace-hack`'s are (see Cargo.toml).

fn main() {}
