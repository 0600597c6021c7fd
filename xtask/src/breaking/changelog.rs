//! Breaking on purpose: a release that bumps the major of `info.version` may break clients in
//! the places its `spec/CHANGELOG.md` section lists, and nowhere else.
//!
//! The format, kept explicit so that the gate and a reader agree: a `## <version>` heading (the
//! new `info.version`, optionally in brackets and followed by more text: `## 2.0.0 (2027-01-15)`),
//! then any prose; every backticked span in that section that starts with `#/` is a location the
//! release breaks on purpose, spelled exactly as the gate prints it. The section ends at the next
//! `#` or `##` heading.
//!
//! A change is accepted once, by its location, for every operation and webhook it reaches.
//! Listing every place it reaches instead (what the gate printed before it reported a shared
//! schema's change once) accepts it too; listing only some of them does not.

use std::collections::BTreeSet;

use super::Break;

/// Where the changelog lives, relative to the workspace root.
pub const CHANGELOG: &str = "spec/CHANGELOG.md";

/// What the gate concludes from the breaks it found and the changelog.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Breaks the changelog section of the new version lists.
    pub accepted: Vec<Break>,
    /// Every other break: each one fails the gate.
    pub refused: Vec<Break>,
    /// Why nothing could be accepted, when the changelog was not consulted.
    pub notes: Vec<String>,
    /// Locations the changelog section lists that match no break found (a typo, or a break
    /// undone since).
    pub unmatched: Vec<String>,
}

/// Whether `listed` accepts `found`: its location, or every place it reaches.
fn accepts(listed: &BTreeSet<String>, found: &Break) -> bool {
    listed.contains(&found.location)
        || (!found.reaches.is_empty() && found.reaches.iter().all(|reach| listed.contains(reach)))
}

/// Splits `breaks` into accepted and refused: a break is accepted when the major of
/// `new_version` is greater than that of `base_version` and the changelog's section for
/// `new_version` lists its location (or every place it reaches).
pub fn judge(
    breaks: Vec<Break>,
    base_version: Option<&str>,
    new_version: Option<&str>,
    changelog: Option<&str>,
) -> Verdict {
    let mut verdict = Verdict::default();
    let listed = match acceptance(base_version, new_version, changelog) {
        Ok(listed) => listed,
        Err(note) => {
            if !breaks.is_empty() {
                verdict.notes.push(note);
            }
            BTreeSet::new()
        }
    };
    for found in breaks {
        if accepts(&listed, &found) {
            verdict.accepted.push(found);
        } else {
            verdict.refused.push(found);
        }
    }
    for found in &verdict.refused {
        let some = found.reaches.iter().filter(|reach| listed.contains(*reach));
        if some.count() > 0 {
            verdict.notes.push(format!(
                "{CHANGELOG} lists some of the places `{}` reaches, not all: list `{}` itself \
                 to accept it everywhere",
                found.location, found.location
            ));
        }
    }
    // A place a change reaches counts as listed on purpose, even when the change is refused
    // (the note above says why).
    let matched: BTreeSet<&str> = verdict
        .accepted
        .iter()
        .map(|found| found.location.as_str())
        .chain(
            verdict
                .accepted
                .iter()
                .chain(&verdict.refused)
                .flat_map(|found| found.reaches.iter().map(String::as_str)),
        )
        .collect();
    verdict.unmatched = listed
        .iter()
        .filter(|location| !matched.contains(location.as_str()))
        .cloned()
        .collect();
    verdict
}

/// The locations the changelog accepts, or why it accepts none.
fn acceptance(
    base_version: Option<&str>,
    new_version: Option<&str>,
    changelog: Option<&str>,
) -> Result<BTreeSet<String>, String> {
    let (Some(base), Some(new)) = (base_version, new_version) else {
        return Err("a document has no `info.version`, so no break can be accepted".into());
    };
    if base == new {
        return Err(format!(
            "`info.version` is still {new}: to break clients on purpose, bump its major and list \
             each location under `## <new version>` in {CHANGELOG}"
        ));
    }
    match (major(base), major(new)) {
        (Some(before), Some(after)) if after > before => {}
        _ => {
            return Err(format!(
                "`info.version` goes from {base} to {new}: breaks are accepted only with a new \
                 major version"
            ))
        }
    }
    let Some(changelog) = changelog else {
        return Err(format!(
            "{CHANGELOG} does not exist: list each intended break under `## {new}` there"
        ));
    };
    listed(changelog, new).ok_or_else(|| {
        format!("{CHANGELOG} has no `## {new}` section: list each intended break there")
    })
}

/// The major of a `MAJOR.MINOR.PATCH` version (a leading `v` allowed).
fn major(version: &str) -> Option<u64> {
    let version = version.trim();
    let version = version.strip_prefix('v').unwrap_or(version);
    version.split('.').next()?.parse().ok()
}

/// The locations listed in the changelog's `## <version>` section; `None` without that section.
pub fn listed(changelog: &str, version: &str) -> Option<BTreeSet<String>> {
    let mut lines = changelog.lines();
    lines.find(|line| heading_version(line) == Some(version))?;
    let section = lines.take_while(|line| !is_heading(line));
    let mut locations = BTreeSet::new();
    for line in section {
        // Backticked spans are the odd pieces between backticks.
        for span in line.split('`').skip(1).step_by(2) {
            if span.starts_with("#/") {
                locations.insert(span.to_string());
            }
        }
    }
    Some(locations)
}

/// The version a `## <version>` heading names (its first word, brackets removed).
fn heading_version(line: &str) -> Option<&str> {
    let title = line.strip_prefix("## ")?.trim();
    let word = title.split_whitespace().next()?;
    Some(word.trim_start_matches('[').trim_end_matches(']'))
}

/// A `#` or `##` heading: where a version's section ends.
fn is_heading(line: &str) -> bool {
    line.starts_with("# ") || line.starts_with("## ")
}
