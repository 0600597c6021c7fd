//! The version gate: `spec/openapi.yaml`'s `info.version` against the released one.
//!
//! - It is never older than the released version.
//! - Newer, `spec/CHANGELOG.md` has a `## <version>` section for it.
//! - Equal, the document is the released one wherever a client can see it ([`visible`]); a
//!   patch (`2.4.0` to `2.4.1`) may change no more than that either. Any other change needs a
//!   new minor (additions) or a new major (breaks, which [`super::changelog`] accepts only
//!   then).
//!
//! What a client cannot see is the prose and the examples: `description`, `summary`, `example`
//! and `examples` (where they are keywords, not names: a property called `description` is
//! seen), and `info.version` itself. Everything else (operations, paths, parameters, bodies,
//! schemas and their keywords, `title`s, which name generated types, response codes and the
//! catalog, headers, security, tags, servers, the `x-` extensions) is seen: a generated client,
//! or the server's answers, may differ with it.

use std::cmp::Ordering;
use std::fmt;

use serde_json::{Map, Value};

use super::changelog::{self, CHANGELOG};
use super::RELEASED;
use crate::spec::escape;

/// The keywords a client cannot see: prose and examples.
const UNSEEN: &[&str] = &["description", "summary", "example", "examples"];

/// The keywords whose value maps names (of properties, paths, components, media types, status
/// codes, headers, events, codes, permissions...) to objects: those names are never taken for
/// keywords.
const NAME_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "paths",
    "schemas",
    "responses",
    "parameters",
    "requestBodies",
    "headers",
    "securitySchemes",
    "links",
    "callbacks",
    "content",
    "encoding",
    "variables",
    "x-webhooks",
    "x-response-codes",
    "x-token-families",
];

/// Places shown when the document differs from the released one; more are counted.
const SHOWN_MAX: usize = 10;

/// A `MAJOR.MINOR.PATCH` version (a leading `v` allowed, pre-release and build suffixes not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
}

impl Version {
    pub fn parse(text: &str) -> Option<Version> {
        let text = text.trim();
        let text = text.strip_prefix('v').unwrap_or(text);
        let mut parts = text.split('.').map(|part| {
            let digits = !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
            digits.then(|| part.parse::<u64>().ok()).flatten()
        });
        let version = Version {
            major: parts.next()??,
            minor: parts.next()??,
            patch: parts.next()??,
        };
        parts.next().is_none().then_some(version)
    }

    /// The `info.version` of an OpenAPI document, or what is wrong with it (to follow the
    /// document's name: `: ...` or ` has no ...`).
    pub fn of(doc: &Value) -> Result<Version, String> {
        let written = match doc.pointer("/info/version") {
            None | Some(Value::Null) => {
                return Err(" has no `info.version`: write one, as MAJOR.MINOR.PATCH".into())
            }
            Some(Value::String(text)) => text.clone(),
            // YAML reads `version: 2.5` as a number.
            Some(other) => other.to_string(),
        };
        Version::parse(&written).ok_or_else(|| {
            format!(
                ": `info.version` is `{written}`: write it as MAJOR.MINOR.PATCH, a string \
                 (`version: 2.5.0`)"
            )
        })
    }

    /// The next minor: for additions.
    pub fn next_minor(self) -> Version {
        Version {
            minor: self.minor + 1,
            patch: 0,
            ..self
        }
    }

    /// The next major: for breaks.
    pub fn next_major(self) -> Version {
        Version {
            major: self.major + 1,
            minor: 0,
            patch: 0,
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// What the version gate concludes.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Why it fails, each saying what to do; empty when it passes.
    pub problems: Vec<String>,
    /// One line saying what it checked, when it passes.
    pub passed: String,
}

/// Judges `new`'s `info.version` against `released`'s. `breaks` is whether the breaking-change
/// gate found any (to say which bump to make); `changelog` is `spec/CHANGELOG.md`, if any.
pub fn judge(released: &Value, new: &Value, breaks: bool, changelog: Option<&str>) -> Verdict {
    let mut verdict = Verdict::default();
    let base = parsed(released, RELEASED, &mut verdict);
    let current = parsed(new, crate::spec::KOBO.spec, &mut verdict);
    let (Some(base), Some(current)) = (base, current) else {
        return verdict;
    };
    let bump = if breaks {
        format!("{} (a major: it breaks clients)", base.next_major())
    } else {
        format!("{} (a minor: additions)", base.next_minor())
    };
    match current.cmp(&base) {
        Ordering::Less => verdict.problems.push(format!(
            "`info.version` is {current}, older than the released {base} ({RELEASED}): versions \
             only go up. Set it to {base} if nothing a client sees changed, else to {bump}."
        )),
        Ordering::Equal => {
            let places = differences(released, new);
            if places.is_empty() {
                verdict.passed = format!(
                    "version {current}: the released version, and the document is the released \
                     one wherever clients can see it"
                );
            } else {
                verdict.problems.push(format!(
                    "`info.version` is still the released {base}, but the document differs from \
                     {RELEASED} where clients can see it. Bump `info.version`: a minor for \
                     additions, a major for breaks; here {bump}. Then say what changed under \
                     `## <new version>` in {CHANGELOG}. It differs at:\n{}",
                    show(&places)
                ));
            }
        }
        Ordering::Greater => {
            let places = differences(released, new);
            let patch = (current.major, current.minor) == (base.major, base.minor);
            if patch && !places.is_empty() {
                verdict.problems.push(format!(
                    "`info.version` {current} is a patch of the released {base}, but the \
                     document differs from it where clients can see it (a patch may change \
                     only prose and examples). Make it {bump}. It differs at:\n{}",
                    show(&places)
                ));
            }
            match changelog {
                Some(text) if changelog::listed(text, &current.to_string()).is_some() => {}
                Some(_) => verdict.problems.push(format!(
                    "`info.version` is {current}, newer than the released {base}, but \
                     {CHANGELOG} has no `## {current}` section: add one above `## {base}` \
                     saying what changed (and, for a major, listing each break by its location)."
                )),
                None => verdict.problems.push(format!(
                    "`info.version` is {current}, newer than the released {base}, but there is \
                     no {CHANGELOG}: create it with a `## {current}` section saying what changed."
                )),
            }
            if verdict.problems.is_empty() {
                verdict.passed = format!(
                    "version {current}: newer than the released {base}, with its `## {current}` \
                     section in {CHANGELOG}"
                );
            }
        }
    }
    verdict
}

/// The version of `doc`, or a problem saying how to write it.
fn parsed(doc: &Value, name: &str, verdict: &mut Verdict) -> Option<Version> {
    let version = Version::of(doc);
    if let Err(problem) = &version {
        verdict.problems.push(format!("{name}{problem}"));
    }
    version.ok()
}

/// The places listed one a line, at most [`SHOWN_MAX`], and how many more.
fn show(places: &[String]) -> String {
    let mut lines: Vec<String> = places
        .iter()
        .take(SHOWN_MAX)
        .map(|place| format!("    {place}"))
        .collect();
    if places.len() > SHOWN_MAX {
        lines.push(format!("    and {} more", places.len() - SHOWN_MAX));
    }
    lines.join("\n")
}

/// `doc` as a client sees it: without `info.version` and without the [`UNSEEN`] keywords.
pub fn visible(doc: &Value) -> Value {
    let mut seen = strip(doc, false);
    if let Some(Value::Object(info)) = seen.get_mut("info") {
        info.remove("version");
    }
    seen
}

/// `value` without the [`UNSEEN`] keywords; `names` when it is a map of names (none of its keys
/// is a keyword).
fn strip(value: &Value, names: bool) -> Value {
    match value {
        Value::Object(map) => {
            let kept: Map<String, Value> = map
                .iter()
                .filter(|(key, _)| names || !UNSEEN.contains(&key.as_str()))
                .map(|(key, child)| {
                    let child_names = !names && NAME_MAPS.contains(&key.as_str());
                    (key.clone(), strip(child, child_names))
                })
                .collect();
            Value::Object(kept)
        }
        Value::Array(items) => Value::Array(items.iter().map(|item| strip(item, false)).collect()),
        other => other.clone(),
    }
}

/// Where `new` differs from `released` as clients see them ([`visible`]), one line each:
/// `#/<pointer>: added`, `removed` or `changed`, in document order. Lists that differ are
/// reported as a whole.
pub fn differences(released: &Value, new: &Value) -> Vec<String> {
    let mut found = Vec::new();
    diff(
        &visible(released),
        &visible(new),
        &mut "#".to_string(),
        &mut found,
    );
    found
}

fn diff(old: &Value, new: &Value, pointer: &mut String, found: &mut Vec<String>) {
    if old == new {
        return;
    }
    let (Value::Object(old), Value::Object(new)) = (old, new) else {
        found.push(format!("{pointer}: changed"));
        return;
    };
    let length = pointer.len();
    for (key, value) in new {
        pointer.push('/');
        pointer.push_str(&escape(key));
        match old.get(key) {
            Some(before) => diff(before, value, pointer, found),
            None => found.push(format!("{pointer}: added")),
        }
        pointer.truncate(length);
    }
    for key in old.keys().filter(|key| !new.contains_key(*key)) {
        found.push(format!("{pointer}/{}: removed", escape(key)));
    }
}
