//! `cargo xtask breaking`: the changes from the last released spec to `spec/openapi.yaml` that
//! break existing clients.
//!
//! The base is the released copy kept at `spec/released/openapi.yaml` (or `spec/openapi.yaml` at
//! a git ref, or any file). [`compare`] lists every break once, at its JSON-pointer-like location
//! (a shared schema's change at the schema, with each operation and webhook it reaches), with a
//! one-line reason; [`changelog::judge`] accepts the ones a major release lists in
//! `spec/CHANGELOG.md`; any other fails the gate. Against the released copy, [`version::judge`]
//! holds the version rule too (`info.version` goes up with every change clients can see, with
//! its changelog section), and [`release`] (`cargo xtask release`) makes the spec the released
//! copy. The rules, the enum-growth policy and the changelog format are in docs/api-design.md
//! (`Changing the spec without breaking clients`, `Releasing the spec`).

mod changelog;
mod compare;
pub mod release;
#[cfg(test)]
mod release_tests;
mod schema;
#[cfg(test)]
mod tests;
mod version;

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::spec;

pub use compare::compare;
pub use schema::EXTENSIBLE_ENUM;

/// The released copy of the spec, relative to the workspace root.
pub const RELEASED: &str = "spec/released/openapi.yaml";

/// One change that breaks existing clients, reported once however many operations it reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Break {
    /// Where. A change of a schema is at the schema object that holds what changed, as a JSON
    /// pointer into the spec (`#/components/schemas/<name>`, or `#/paths/...` for an inline
    /// schema), then what changed (`properties/<name>`, `required/<name>`, `enum/<value>`,
    /// `oneOf/<component>`, or the keyword: `type`, `nullable`, ...): in the new spec, or in
    /// the base where the new spec no longer has it. Any other break is at what it removes or
    /// changes: `#/operations/<operationId>/...`, `#/x-response-codes/<code>/...` or
    /// `#/x-webhooks/<event>`. Names are escaped as in JSON pointers (`~1` for `/`).
    pub location: String,
    /// Why it breaks clients, in one line (two, `; `-separated, for a schema that is both sent
    /// and received and breaks each way).
    pub reason: String,
    /// For a change of a schema, each place it reaches clients, in document order: from
    /// `#/operations/<operationId>` or `#/x-webhooks/<event>`, then `request/body`,
    /// `request/parameters/<in>/<name>/schema`, `responses/<status>/body` or
    /// `responses/<status>/headers/<name>/schema`, then the path through the schemas. Empty for
    /// any other break.
    pub reaches: Vec<String>,
}

impl fmt::Display for Break {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.reason)?;
        for reach in &self.reaches {
            write!(f, "\n    reaches {reach}")?;
        }
        Ok(())
    }
}

/// What to compare `spec/openapi.yaml` with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base {
    /// `spec/released/openapi.yaml`, the last released version.
    Released,
    /// `spec/openapi.yaml` at a git ref (`git show REF:spec/openapi.yaml`).
    GitRef(String),
    /// Any file.
    File(PathBuf),
}

/// What the gate concluded, to be printed.
#[derive(Debug)]
pub struct Report {
    /// For standard output: the breaks the changelog accepts, the locations it lists that match
    /// none, and what the version gate checked when it passes.
    pub out: Vec<String>,
    /// For standard error: each refused break, why none could be accepted, and each problem of
    /// the version gate.
    pub err: Vec<String>,
    /// One line: the versions compared and the breaks found.
    pub summary: String,
    /// Why the gate fails and what to do; `None` when it passes.
    pub failure: Option<String>,
}

/// Compares the spec with `base`: prints every break (and every accepted one), fails if any
/// break is not accepted by the changelog or (against the released spec) if `info.version` does
/// not follow the release rule.
pub fn run(base: Base) -> Result<()> {
    let report = gate(&spec::workspace_root(), &base)?;
    for line in &report.out {
        println!("{line}");
    }
    for line in &report.err {
        eprintln!("{line}");
    }
    match report.failure {
        None => {
            println!("{}", report.summary);
            Ok(())
        }
        Some(failure) => bail!("{}\n{failure}", report.summary),
    }
}

/// The gate over the workspace at `root`: `spec/openapi.yaml` against `base`, with
/// `spec/CHANGELOG.md`; against the released spec, the version gate too ([`version::judge`]).
pub fn gate(root: &Path, base: &Base) -> Result<Report> {
    let (old, base_name) = load_base(root, base)?;
    let current = spec::load(&root.join(spec::KOBO.spec))?;
    let breaks = compare(&old, &current);
    let changelog_path = root.join(changelog::CHANGELOG);
    let changelog = match std::fs::read_to_string(&changelog_path) {
        Ok(text) => Some(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => {
            return Err(error).with_context(|| format!("cannot read {}", changelog_path.display()))
        }
    };
    let (base_version, new_version) = (version(&old), version(&current));
    let versions = match base {
        Base::Released => Some(version::judge(
            &old,
            &current,
            !breaks.is_empty(),
            changelog.as_deref(),
        )),
        Base::GitRef(_) | Base::File(_) => None,
    };
    let verdict = changelog::judge(breaks, base_version, new_version, changelog.as_deref());
    let mut out = Vec::new();
    let mut err = Vec::new();
    for accepted in &verdict.accepted {
        out.push(format!("accepted by the changelog: {accepted}"));
    }
    for location in &verdict.unmatched {
        out.push(format!(
            "note: {} lists `{location}`, which is not a breaking change found",
            changelog::CHANGELOG
        ));
    }
    for refused in &verdict.refused {
        err.push(refused.to_string());
    }
    if !verdict.refused.is_empty() {
        err.extend(verdict.notes.iter().map(|note| format!("note: {note}")));
    }
    match &versions {
        Some(versions) if versions.problems.is_empty() => {
            out.push(format!("version gate: {}", versions.passed));
        }
        Some(versions) => {
            err.extend(
                versions
                    .problems
                    .iter()
                    .map(|problem| format!("version gate: {problem}")),
            );
        }
        None => out.push(format!(
            "version gate: not run (it judges `info.version` against the released spec, \
             {RELEASED}: run `cargo xtask breaking` without a base)"
        )),
    }
    let summary = summary(&verdict, &base_name, base_version, new_version);
    let mut failures = Vec::new();
    if !verdict.refused.is_empty() {
        failures.push(format!(
            "To break clients on purpose: bump the major of `info.version` and list each \
             change's location above (once, not the places it reaches) under `## <new version>` \
             in {} (docs/api-design.md: Changing the spec without breaking clients).",
            changelog::CHANGELOG
        ));
    }
    if versions.as_ref().is_some_and(|v| !v.problems.is_empty()) {
        failures.push(
            "The version gate fails (above): `info.version` goes up with every change clients \
             can see, and a version newer than the released one has its section in \
             spec/CHANGELOG.md (docs/api-design.md: Releasing the spec)."
                .to_string(),
        );
    }
    Ok(Report {
        out,
        err,
        summary,
        failure: (!failures.is_empty()).then(|| failures.join("\n")),
    })
}

/// The gate's one-line summary: the versions compared, the breaking changes found and the
/// places they reach, how many the changelog accepts.
fn summary(
    verdict: &changelog::Verdict,
    base_name: &str,
    base_version: Option<&str>,
    new_version: Option<&str>,
) -> String {
    let reaches: usize = verdict
        .refused
        .iter()
        .chain(&verdict.accepted)
        .map(|found| found.reaches.len())
        .sum();
    let changes = verdict.refused.len() + verdict.accepted.len();
    let reaching = match reaches {
        0 => String::new(),
        1 => " (reaching 1 place in operations and webhooks)".into(),
        _ => format!(" (reaching {reaches} places in operations and webhooks)"),
    };
    format!(
        "spec/openapi.yaml ({}) against {base_name} ({}): {changes} breaking change{}{reaching}, \
         {} accepted by the changelog",
        new_version.unwrap_or("no version"),
        base_version.unwrap_or("no version"),
        if changes == 1 { "" } else { "s" },
        verdict.accepted.len(),
    )
}

/// The base document and how the summary names it.
fn load_base(root: &Path, base: &Base) -> Result<(Value, String)> {
    match base {
        Base::Released => Ok((spec::load(&root.join(RELEASED))?, RELEASED.to_string())),
        Base::File(path) => Ok((spec::load(path)?, path.display().to_string())),
        Base::GitRef(reference) => {
            let object = format!("{reference}:spec/openapi.yaml");
            let output = Command::new("git")
                .arg("show")
                .arg(&object)
                .current_dir(root)
                .output()
                .context("cannot run git")?;
            if !output.status.success() {
                bail!(
                    "git show {object} failed: {}",
                    String::from_utf8_lossy(&output.stderr).trim()
                );
            }
            let text = String::from_utf8(output.stdout)
                .with_context(|| format!("{object} is not UTF-8"))?;
            let doc = spec::parse(&text).with_context(|| format!("cannot parse {object}"))?;
            Ok((doc, format!("spec/openapi.yaml at {reference}")))
        }
    }
}

fn version(doc: &Value) -> Option<&str> {
    doc.pointer("/info/version").and_then(Value::as_str)
}
