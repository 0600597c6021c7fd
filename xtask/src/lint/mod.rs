//! `cargo xtask lint`: checks each OpenAPI document of the workspace (`spec/openapi.yaml`,
//! `spec/provider.yaml`) against the conventions the generators and partners rely on. What
//! differs between documents, each says of itself (`x-token-families`, `router` roles in
//! `x-response-codes`, `x-source-document`).
//!
//! Every rule is one function in [`RULES`]; each reports all the problems it finds, so one run
//! shows everything that is wrong. Rules read the document through [`spec::Document`], the same
//! reader the code generator uses, and never stop at the first problem.

mod catalogs;
mod document;
mod examples;
mod open_enums;
mod operations;
mod schemas;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::Value;

use crate::spec::{self, escape, object, Document, Position, COMPONENT_RESPONSE_PREFIX};

/// One thing wrong with the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The name of the rule that found it (see [`RULES`]).
    pub rule: &'static str,
    /// Where: an operation (`operation `get_account``), a path, or a JSON pointer (`#/...`).
    pub location: String,
    pub message: String,
    /// Where `location`, when it is a JSON pointer, sits in the document's text (see
    /// [`locate`]).
    pub position: Option<Position>,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some(at) => write!(
                f,
                "[{}] {} (line {}, column {}): {}",
                self.rule, self.location, at.line, at.column, self.message
            ),
            None => write!(f, "[{}] {}: {}", self.rule, self.location, self.message),
        }
    }
}

/// A named check over the whole document.
pub struct Rule {
    pub name: &'static str,
    pub check: fn(&Document<'_>, &mut Sink),
}

/// Every rule, in the order problems are reported. Add a rule by writing a function and
/// listing it here (and a test in `tests.rs` that makes it fire). The code generator's precheck
/// runs some of them by name (`codegen/precheck.rs`).
#[rustfmt::skip]
pub const RULES: &[Rule] = &[
    Rule { name: "openapi-version", check: document::openapi_version },
    Rule { name: "refs-resolve", check: document::refs_resolve },
    Rule { name: "schema-keywords", check: schemas::schema_keywords },
    Rule { name: "post-only", check: operations::post_only },
    Rule { name: "operation-id", check: operations::operation_id },
    Rule { name: "request-body", check: operations::request_body },
    Rule { name: "success-response", check: operations::success_response },
    Rule { name: "error-envelope", check: operations::error_envelope },
    Rule { name: "security", check: operations::security },
    Rule { name: "permission-catalog", check: catalogs::permission_catalog },
    Rule { name: "permission", check: catalogs::permission },
    Rule { name: "response-code-catalog", check: catalogs::response_code_catalog },
    Rule { name: "response-codes", check: catalogs::response_codes },
    Rule { name: "response-codes-exemplified", check: catalogs::response_codes_exemplified },
    Rule { name: "response-code-examples", check: catalogs::response_code_examples },
    Rule { name: "response-codes-documented", check: catalogs::response_codes_documented },
    Rule { name: "enum-varnames", check: catalogs::enum_varnames },
    Rule { name: "open-enums", check: open_enums::open_enums },
    Rule { name: "known-values", check: open_enums::known_values },
    Rule { name: "success-message", check: catalogs::success_message },
    Rule { name: "examples-present", check: catalogs::examples_present },
    Rule { name: "examples-valid", check: examples::examples_valid },
    Rule { name: "examples-declared", check: examples::examples_declared },
    Rule { name: "headers", check: operations::headers },
    Rule { name: "unused-components", check: document::unused_components },
    Rule { name: "schema-names", check: document::schema_names },
    Rule { name: "request-defaults", check: document::request_defaults },
    Rule { name: "x-origin", check: document::x_origin },
];

/// Lints the document at `path`: prints every problem, fails if there is any, prints a one-line
/// summary when there is none.
pub fn run(path: &Path) -> Result<()> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let doc = spec::parse(&text).with_context(|| format!("cannot parse {}", path.display()))?;
    let mut problems = check(&doc);
    locate(&mut problems, &text);
    let operations = Document::new(&doc).operations.len();
    let shown = path.strip_prefix(spec::workspace_root()).unwrap_or(path);
    for problem in &problems {
        eprintln!("{problem}");
    }
    let summary = format!(
        "{}: {operations} operations, {} problem{}",
        shown.display(),
        problems.len(),
        if problems.len() == 1 { "" } else { "s" }
    );
    if problems.is_empty() {
        println!("{summary}");
        Ok(())
    } else {
        anyhow::bail!(summary)
    }
}

/// Lints every document of [`spec::TARGETS`]; fails if any has a problem, after showing them all.
pub fn run_all() -> Result<()> {
    let failed: Vec<&str> = spec::TARGETS
        .iter()
        .filter(|target| {
            run(&target.path())
                .inspect_err(|e| eprintln!("{e:#}"))
                .is_err()
        })
        .map(|target| target.spec)
        .collect();
    match failed.as_slice() {
        [] => Ok(()),
        _ => anyhow::bail!("problems in {}", failed.join(", ")),
    }
}

/// Runs every rule over `doc` and returns every problem found.
pub fn check(doc: &Value) -> Vec<Problem> {
    run_rules(&Document::new(doc), RULES)
}

/// Gives every problem located at a JSON pointer (`#/...`) its line and column in `text`, the
/// document's YAML.
pub fn locate(problems: &mut [Problem], text: &str) {
    for problem in problems {
        if problem.location.starts_with("#/") {
            problem.position = spec::position(text, &problem.location);
        }
    }
}

/// The rule named `name` in [`RULES`].
///
/// # Panics
///
/// If there is none: callers name rules in constants, and their tests run them.
pub fn rule(name: &str) -> &'static Rule {
    RULES
        .iter()
        .find(|rule| rule.name == name)
        .unwrap_or_else(|| panic!("the lint has no rule `{name}`"))
}

/// Runs `rules`, in order, over `document` and returns every problem they find.
pub fn run_rules<'r>(
    document: &Document<'_>,
    rules: impl IntoIterator<Item = &'r Rule>,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    for rule in rules {
        let mut sink = Sink {
            rule: rule.name,
            problems: Vec::new(),
        };
        (rule.check)(document, &mut sink);
        problems.append(&mut sink.problems);
    }
    problems
}

/// Collects the problems of the rule being run.
pub struct Sink {
    rule: &'static str,
    problems: Vec<Problem>,
}

impl Sink {
    pub fn report(&mut self, location: impl Into<String>, message: impl Into<String>) {
        self.problems.push(Problem {
            rule: self.rule,
            location: location.into(),
            message: message.into(),
            position: None,
        });
    }
}

/// Where every response is defined, once each: the inline responses of each operation, and each
/// component response with every status it is used under.
fn response_sites<'a>(document: &Document<'a>) -> Vec<ResponseSite<'a>> {
    let mut sites = Vec::new();
    let mut used_under: BTreeMap<&str, BTreeSet<&'a str>> = BTreeMap::new();
    for operation in &document.operations {
        for (status, response) in operation.responses() {
            match response.get("$ref").and_then(Value::as_str) {
                Some(reference) => {
                    used_under.entry(reference).or_default().insert(status);
                }
                None => sites.push(ResponseSite {
                    label: format!("{}: response {status}", operation.label()),
                    statuses: BTreeSet::from([status]),
                    response,
                }),
            }
        }
    }
    for (name, response) in object(document.doc.pointer("/components/responses")) {
        // An alias of another component response is checked where it points.
        if response.get("$ref").is_some() {
            continue;
        }
        let reference = format!("{COMPONENT_RESPONSE_PREFIX}{}", escape(name));
        sites.push(ResponseSite {
            statuses: used_under.remove(reference.as_str()).unwrap_or_default(),
            label: format!("response `{reference}`"),
            response,
        });
    }
    sites
}

/// A response object where it is defined, and the statuses it answers.
struct ResponseSite<'a> {
    label: String,
    statuses: BTreeSet<&'a str>,
    response: &'a Value,
}

/// Whether a response (or any object with `headers`) declares `name`, case-insensitively
/// (HTTP header names are).
fn declares_header(response: &Value, name: &str) -> bool {
    object(response.get("headers"))
        .keys()
        .any(|header| header.eq_ignore_ascii_case(name))
}

/// Calls `visit` with every value in the document and its JSON pointer (without the `#`).
fn walk<'a>(value: &'a Value, pointer: &mut String, visit: &mut dyn FnMut(&str, &'a Value)) {
    walk_where(value, pointer, &mut |pointer, value| {
        visit(pointer, value);
        true
    });
}

/// [`walk`], going below a value only where `visit` returns `true`.
fn walk_where<'a>(
    value: &'a Value,
    pointer: &mut String,
    visit: &mut dyn FnMut(&str, &'a Value) -> bool,
) {
    if !visit(pointer, value) {
        return;
    }
    let length = pointer.len();
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                pointer.push('/');
                pointer.push_str(&escape(key));
                walk_where(child, pointer, visit);
                pointer.truncate(length);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                pointer.push('/');
                pointer.push_str(&index.to_string());
                walk_where(child, pointer, visit);
                pointer.truncate(length);
            }
        }
        _ => {}
    }
}
