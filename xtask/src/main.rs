//! Kobo's automation: `cargo xtask lint` checks `spec/openapi.yaml`;
//! `cargo xtask codegen [--check]` regenerates the crates generated from it;
//! `cargo xtask breaking` fails on changes that break clients of the released spec;
//! `cargo xtask shape` measures how `service/src` is cut.

mod breaking;
mod codegen;
mod lint;
mod shape;
mod spec;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  lint [PATH]        check spec/openapi.yaml (or PATH) against Kobo's rules
  codegen            regenerate generated-server/ and generated-client/ from the spec
  codegen --check    fail if the committed generated code differs from what the spec gives
  breaking [--base REF | --base-file PATH]
                     fail on changes that break clients of the released spec
                     (spec/released/openapi.yaml; or spec/openapi.yaml at git REF; or PATH)
  shape [N] [--src DIR]
                     how service/src (or DIR) is cut: generated_server per folder, the N
                     longest functions (default 20), the largest files, hand-written
                     idempotency, and the tidy rules it breaks";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["lint"] => lint::run(&spec::spec_path()),
        ["lint", path] => lint::run(std::path::Path::new(path)),
        ["codegen"] => codegen::run(false),
        ["codegen", "--check"] => codegen::run(true),
        ["breaking"] => breaking::run(breaking::Base::Released),
        ["breaking", "--base", reference] => {
            breaking::run(breaking::Base::GitRef(reference.to_string()))
        }
        ["breaking", "--base-file", path] => breaking::run(breaking::Base::File(path.into())),
        ["shape"] => shape::run(20, None),
        ["shape", "--src", dir] => shape::run(20, Some(std::path::Path::new(dir))),
        ["shape", count, rest @ ..] => match (count.parse(), rest) {
            (Ok(count), []) => shape::run(count, None),
            (Ok(count), ["--src", dir]) => shape::run(count, Some(std::path::Path::new(dir))),
            _ => Err(anyhow::anyhow!(
                "shape: [N] [--src DIR], N a number of functions"
            )),
        },
        ["help"] | ["--help"] | ["-h"] => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(anyhow::anyhow!("unknown command\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
