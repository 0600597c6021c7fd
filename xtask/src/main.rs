//! Kobo's automation: `cargo xtask lint` checks the OpenAPI documents (`spec/openapi.yaml`,
//! `spec/provider.yaml`); `cargo xtask codegen [--check]` regenerates the crates generated from
//! them;
//! `cargo xtask breaking` fails on changes that break clients of the released spec, or on an
//! `info.version` that does not follow the release rule; `cargo xtask release` makes the spec
//! the released one;
//! `cargo xtask shape` checks the tidy rules on every crate and measures how `service/src` is cut.

mod breaking;
mod codegen;
mod lint;
mod shape;
mod spec;

use std::path::PathBuf;
use std::process::ExitCode;

/// Each command's usage, as `cargo xtask <command> --help` prints it and as [`usage`] lists them.
const COMMANDS: &[(&str, &str)] = &[
    (
        "lint",
        "  lint [PATH]        check every document (spec/openapi.yaml, spec/provider.yaml), or PATH,
                     against the toolkit's rules",
    ),
    (
        "codegen",
        "  codegen            regenerate each document's server and client crates
                     (generated-* from spec/openapi.yaml, provider-* from spec/provider.yaml)
  codegen --check    fail if the committed generated code differs from what a document gives",
    ),
    (
        "breaking",
        "  breaking [--base REF | --base-file PATH]
                     fail on changes that break clients of the released spec
                     (spec/released/openapi.yaml; or spec/openapi.yaml at git REF; or PATH);
                     against the released spec, also fail when `info.version` is older, or
                     equal while clients see a change, or newer without its CHANGELOG section",
    ),
    (
        "release",
        "  release [--dry-run]
                     release spec/openapi.yaml: check its lint, a version newer than the
                     released one, its `## <version>` section in spec/CHANGELOG.md and the
                     breaking gate, then copy it to spec/released/ (--dry-run: check only)",
    ),
    (
        "shape",
        "  shape [N] [--root DIR]
                     the tidy rules on every crate of the workspace (or of the checkout at
                     DIR), parsed with syn: per rule the files and lines read and what breaks
                     it (fails if anything does); generated_server per folder of service/src,
                     the N longest functions (default 20), the largest files",
    ),
];

/// The usage of `command` when it is one of [`COMMANDS`], else of every command.
fn usage(command: Option<&str>) -> String {
    match COMMANDS.iter().find(|(name, _)| Some(*name) == command) {
        Some((name, lines)) => format!("usage: cargo xtask {name} ...\n\n{lines}"),
        None => {
            let lines: Vec<&str> = COMMANDS.iter().map(|(_, lines)| *lines).collect();
            format!(
                "usage: cargo xtask <command> [--help]\n\ncommands:\n{}",
                lines.join("\n")
            )
        }
    }
}

/// What the arguments ask for.
#[derive(Debug, PartialEq)]
enum Command {
    /// Print the usage (of one command, when named) and succeed.
    Help(Option<String>),
    /// One document, or (none named) every document of `spec::TARGETS`.
    Lint(Option<PathBuf>),
    Codegen {
        check: bool,
    },
    Breaking(breaking::Base),
    Release {
        dry_run: bool,
    },
    Shape {
        count: usize,
        root: Option<PathBuf>,
    },
}

/// Reads the arguments after `cargo xtask`. `--help` or `-h` anywhere, or `help [COMMAND]`,
/// asks for the usage; anything else unknown is an error carrying the usage.
fn parse(args: &[&str]) -> anyhow::Result<Command> {
    let is_help = |arg: &&str| matches!(*arg, "--help" | "-h");
    match args {
        [] | ["help"] => return Ok(Command::Help(None)),
        ["help", command, ..] => return Ok(Command::Help(Some(command.to_string()))),
        [command, rest @ ..] if is_help(command) || rest.iter().any(is_help) => {
            let command = (!is_help(command)).then(|| command.to_string());
            return Ok(Command::Help(command));
        }
        _ => {}
    }
    Ok(match args {
        ["lint"] => Command::Lint(None),
        ["lint", path] => Command::Lint(Some(PathBuf::from(path))),
        ["codegen"] => Command::Codegen { check: false },
        ["codegen", "--check"] => Command::Codegen { check: true },
        ["breaking"] => Command::Breaking(breaking::Base::Released),
        ["breaking", "--base", reference] => {
            Command::Breaking(breaking::Base::GitRef(reference.to_string()))
        }
        ["breaking", "--base-file", path] => Command::Breaking(breaking::Base::File(path.into())),
        ["release"] => Command::Release { dry_run: false },
        ["release", "--dry-run"] => Command::Release { dry_run: true },
        ["shape"] => Command::Shape {
            count: 20,
            root: None,
        },
        ["shape", "--root", dir] => Command::Shape {
            count: 20,
            root: Some(dir.into()),
        },
        ["shape", count, rest @ ..] => match (count.parse(), rest) {
            (Ok(count), []) => Command::Shape { count, root: None },
            (Ok(count), ["--root", dir]) => Command::Shape {
                count,
                root: Some(dir.into()),
            },
            _ => anyhow::bail!(
                "shape: [N] [--root DIR], N a number of functions\n\n{}",
                usage(Some("shape"))
            ),
        },
        [command, ..] if COMMANDS.iter().any(|(name, _)| name == command) => anyhow::bail!(
            "unexpected arguments for `{command}`\n\n{}",
            usage(Some(command))
        ),
        _ => anyhow::bail!("unknown command\n\n{}", usage(None)),
    })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = parse(&args).and_then(|command| match command {
        Command::Help(command) => {
            println!("{}", usage(command.as_deref()));
            Ok(())
        }
        Command::Lint(Some(path)) => lint::run(&path),
        Command::Lint(None) => lint::run_all(),
        Command::Codegen { check } => codegen::run(check),
        Command::Breaking(base) => breaking::run(base),
        Command::Release { dry_run } => breaking::release::run(dry_run),
        Command::Shape { count, root } => shape::run(count, root.as_deref()),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod cli_tests {
    use super::*;

    #[test]
    fn help_of_every_command_is_its_usage_not_an_error() {
        for (name, lines) in COMMANDS {
            for flag in ["--help", "-h"] {
                let command = parse(&[name, flag]).unwrap();
                assert_eq!(
                    command,
                    Command::Help(Some(name.to_string())),
                    "{name} {flag}"
                );
                let text = usage(Some(name));
                assert!(text.contains(lines), "{name}: {text}");
            }
            // After other arguments too: `breaking --base main --help` does not run.
            assert_eq!(
                parse(&[name, "--check", "--help"]).unwrap(),
                Command::Help(Some(name.to_string()))
            );
            assert_eq!(
                parse(&["help", name]).unwrap(),
                Command::Help(Some(name.to_string()))
            );
        }
        for args in [&[][..], &["help"], &["--help"], &["-h"]] {
            assert_eq!(parse(args).unwrap(), Command::Help(None), "{args:?}");
        }
    }

    #[test]
    fn the_full_usage_lists_every_command() {
        let text = usage(None);
        for (_, lines) in COMMANDS {
            assert!(text.contains(lines));
        }
    }

    #[test]
    fn unknown_commands_and_arguments_are_errors_with_the_usage() {
        let error = parse(&["frobnicate"]).unwrap_err().to_string();
        assert!(error.contains("unknown command") && error.contains("commands:"));
        let error = parse(&["breaking", "--bogus"]).unwrap_err().to_string();
        assert!(error.contains("`breaking`") && error.contains("--base-file"));
        assert!(parse(&["shape", "many"]).is_err());
    }

    #[test]
    fn commands_read_their_arguments() {
        assert_eq!(
            parse(&["codegen", "--check"]).unwrap(),
            Command::Codegen { check: true }
        );
        assert_eq!(
            parse(&["release", "--dry-run"]).unwrap(),
            Command::Release { dry_run: true }
        );
        assert!(parse(&["release", "--check"]).is_err());
        assert_eq!(
            parse(&["lint", "x.yaml"]).unwrap(),
            Command::Lint(Some("x.yaml".into()))
        );
        assert_eq!(
            parse(&["shape", "5", "--root", "d"]).unwrap(),
            Command::Shape {
                count: 5,
                root: Some("d".into())
            }
        );
    }
}
