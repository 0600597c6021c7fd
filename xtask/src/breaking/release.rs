//! `cargo xtask release [--dry-run]`: makes `spec/openapi.yaml` the released spec, the base of
//! the breaking-change gate, once it passes every check a release needs:
//!
//! 1. `cargo xtask lint`'s rules find no problem in it;
//! 2. its `info.version` is newer than the released one;
//! 3. `spec/CHANGELOG.md` has a `## <version>` section for it;
//! 4. the breaking-change gate passes against the released spec, with that changelog (a break
//!    only in a new major that lists it), and so does the version gate.
//!
//! Then it copies `spec/openapi.yaml` to `spec/released/openapi.yaml` byte for byte, writes the
//! version in `spec/released/README.md`, and says what to commit. `--dry-run` checks the same
//! and writes nothing.

use std::path::Path;

use anyhow::{bail, Context, Result};

use super::version::{self, Version};
use super::{changelog, gate, Base, RELEASED};
use crate::lint;
use crate::spec::{self, Document, KOBO};

/// The released spec's README, relative to the workspace root: it names the released version.
pub const README: &str = "spec/released/README.md";

/// The line of [`README`] that names the released version, up to the version.
const README_LINE: &str = "Released version (its `info.version`): ";

/// Releases the workspace's spec (see the module's documentation); prints what it did.
pub fn run(dry_run: bool) -> Result<()> {
    for line in release(&spec::workspace_root(), dry_run)? {
        println!("{line}");
    }
    Ok(())
}

/// Releases the spec of the workspace at `root`, or with `dry_run` only checks that it could;
/// returns what it did, line by line. Fails, saying what to do, at the first check that fails,
/// having written nothing.
pub fn release(root: &Path, dry_run: bool) -> Result<Vec<String>> {
    let mut said = Vec::new();
    let spec_path = root.join(KOBO.spec);
    let text = std::fs::read_to_string(&spec_path)
        .with_context(|| format!("cannot read {}", spec_path.display()))?;
    let doc = spec::parse(&text).with_context(|| format!("cannot parse {}", KOBO.spec))?;

    let mut problems = lint::check(&doc);
    lint::locate(&mut problems, &text);
    if !problems.is_empty() {
        let listed: Vec<String> = problems.iter().map(ToString::to_string).collect();
        bail!(
            "{}\nnot released: {} has {} lint problem{} (above; `cargo xtask lint` shows them \
             too): fix them first",
            listed.join("\n"),
            KOBO.spec,
            problems.len(),
            if problems.len() == 1 { "" } else { "s" }
        );
    }
    let operations = Document::new(&doc).operations.len();
    said.push(format!(
        "lint: {}, {operations} operations, no problems",
        KOBO.spec
    ));

    let (base, current) = newer_version(root, &doc)?;
    said.push(format!(
        "version: {current}, newer than the released {base}"
    ));

    let changelog_path = root.join(changelog::CHANGELOG);
    let has_section = std::fs::read_to_string(&changelog_path)
        .ok()
        .and_then(|text| changelog::listed(&text, &current.to_string()))
        .is_some();
    if !has_section {
        bail!(
            "not released: {} has no `## {current}` section: add one above `## {base}` saying \
             what {current} changes (and, for a major, listing each break by its location, as \
             `cargo xtask breaking` prints it)",
            changelog::CHANGELOG
        );
    }
    said.push(format!(
        "changelog: {} has a `## {current}` section",
        changelog::CHANGELOG
    ));

    let report = gate(root, &Base::Released)?;
    if let Some(failure) = &report.failure {
        bail!(
            "{}\n{}\n{failure}\nnot released: the breaking-change gate fails (above; `cargo \
             xtask breaking` shows the same)",
            report.err.join("\n"),
            report.summary
        );
    }
    said.extend(report.out);
    said.push(report.summary);

    let readme_path = root.join(README);
    let readme = std::fs::read_to_string(&readme_path)
        .with_context(|| format!("cannot read {}", readme_path.display()))?;
    let readme = with_version(&readme, current)?;
    if dry_run {
        said.push(format!(
            "dry run: {current} can be released; `cargo xtask release` copies {} to {RELEASED} \
             and writes **{current}** in {README}. Nothing was written.",
            KOBO.spec
        ));
        return Ok(said);
    }
    std::fs::copy(&spec_path, root.join(RELEASED))
        .with_context(|| format!("cannot copy {} to {RELEASED}", KOBO.spec))?;
    std::fs::write(&readme_path, readme)
        .with_context(|| format!("cannot write {}", readme_path.display()))?;
    said.push(format!(
        "released {current}: {RELEASED} is now {}, and {README} says **{current}**; from now on \
         the gate judges changes against {current}.",
        KOBO.spec
    ));
    said.push(format!(
        "Commit the release (with {} and {} too, if their {current} changes are not committed \
         yet):",
        KOBO.spec,
        changelog::CHANGELOG
    ));
    said.push(format!("    git add {RELEASED} {README}"));
    said.push(format!("    git commit -m \"Release the API {current}\""));
    Ok(said)
}

/// The released spec's version and `doc`'s, when `doc`'s is newer; else why not to release.
fn newer_version(root: &Path, doc: &serde_json::Value) -> Result<(Version, Version)> {
    let released = spec::load(&root.join(RELEASED))?;
    let base = version_of(&released, RELEASED)?;
    let current = version_of(doc, KOBO.spec)?;
    if current <= base {
        let unchanged = current == base && version::differences(&released, doc).is_empty();
        if unchanged {
            bail!(
                "not released: {} is the released {base} ({RELEASED}) wherever clients can see \
                 it: there is nothing to release",
                KOBO.spec
            );
        }
        bail!(
            "not released: `info.version` is {current}, not newer than the released {base} \
             ({RELEASED}). Set it to the version being released: {} for additions, {} for \
             breaks; then describe it under `## <version>` in {}",
            base.next_minor(),
            base.next_major(),
            changelog::CHANGELOG
        );
    }
    Ok((base, current))
}

/// The `info.version` of `doc` (`name` in messages).
fn version_of(doc: &serde_json::Value, name: &str) -> Result<Version> {
    Version::of(doc).map_err(|problem| anyhow::anyhow!("{name}{problem}"))
}

/// `readme` with its [`README_LINE`] naming `version`.
fn with_version(readme: &str, version: Version) -> Result<String> {
    let mut found = false;
    let lines: Vec<String> = readme
        .lines()
        .map(|line| {
            if line.starts_with(README_LINE) {
                found = true;
                format!("{README_LINE}**{version}**")
            } else {
                line.to_string()
            }
        })
        .collect();
    if !found {
        bail!("{README} has no line `{README_LINE}**<version>**`: put it back, it names the released version");
    }
    let mut text = lines.join("\n");
    if readme.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}
