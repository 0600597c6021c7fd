//! `cargo xtask lint`: checks `spec/openapi.yaml` against the conventions Kobo's generators and
//! partners rely on.
//!
//! Every rule is one function in [`RULES`]; each reports all the problems it finds, so one run
//! shows everything that is wrong. Rules read the document as plain JSON (the same value the
//! code generator reads) and never stop at the first problem.

mod catalogs;
mod document;
mod examples;
mod operations;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use anyhow::Result;
use serde_json::Value;

use crate::spec;

/// One thing wrong with the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The name of the rule that found it (see [`RULES`]).
    pub rule: &'static str,
    /// Where: an operation (`operation `get_account``), a path, or a JSON pointer (`#/...`).
    pub location: String,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}: {}", self.rule, self.location, self.message)
    }
}

/// A named check over the whole document.
struct Rule {
    name: &'static str,
    check: fn(&Document<'_>, &mut Sink),
}

/// Every rule, in the order problems are reported. Add a rule by writing a function and
/// listing it here (and a test in `tests.rs` that makes it fire).
#[rustfmt::skip]
const RULES: &[Rule] = &[
    Rule { name: "openapi-version", check: document::openapi_version },
    Rule { name: "refs-resolve", check: document::refs_resolve },
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
    Rule { name: "response-code-examples", check: catalogs::response_code_examples },
    Rule { name: "response-codes-documented", check: catalogs::response_codes_documented },
    Rule { name: "examples-present", check: catalogs::examples_present },
    Rule { name: "examples-valid", check: examples::examples_valid },
    Rule { name: "headers", check: operations::headers },
    Rule { name: "unused-components", check: document::unused_components },
    Rule { name: "x-origin", check: document::x_origin },
];

/// Lints the document at `path`: prints every problem, fails if there is any, prints a one-line
/// summary when there is none.
pub fn run(path: &Path) -> Result<()> {
    let doc = spec::load(path)?;
    let problems = check(&doc);
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

/// Runs every rule over `doc` and returns every problem found.
pub fn check(doc: &Value) -> Vec<Problem> {
    let document = Document::new(doc);
    let mut problems = Vec::new();
    for rule in RULES {
        let mut sink = Sink {
            rule: rule.name,
            problems: Vec::new(),
        };
        (rule.check)(&document, &mut sink);
        problems.append(&mut sink.problems);
    }
    problems
}

/// Collects the problems of the rule being run.
struct Sink {
    rule: &'static str,
    problems: Vec<Problem>,
}

impl Sink {
    fn report(&mut self, location: impl Into<String>, message: impl Into<String>) {
        self.problems.push(Problem {
            rule: self.rule,
            location: location.into(),
            message: message.into(),
        });
    }
}

/// The document plus the index every rule needs: its operations.
struct Document<'a> {
    doc: &'a Value,
    operations: Vec<Operation<'a>>,
}

/// One operation (`paths./x.post`).
struct Operation<'a> {
    path: &'a str,
    method: &'a str,
    /// The path item the operation sits in (for path-level parameters).
    item: &'a Value,
    value: &'a Value,
}

const HTTP_METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

const JSON: &str = "application/json";
const COMPONENT_SCHEMA_PREFIX: &str = "#/components/schemas/";
const COMPONENT_RESPONSE_PREFIX: &str = "#/components/responses/";
const ERROR_ENVELOPE_REF: &str = "#/components/schemas/ErrorEnvelope";

impl<'a> Document<'a> {
    fn new(doc: &'a Value) -> Self {
        let mut operations = Vec::new();
        for (path, item) in object(doc.get("paths")) {
            let item = spec::deref(doc, item);
            for method in HTTP_METHODS {
                if let Some(value) = item.get(method) {
                    operations.push(Operation {
                        path,
                        method,
                        item,
                        value,
                    });
                }
            }
        }
        Document { doc, operations }
    }

    /// Follows `$ref`s; `None` when one does not resolve (the `refs-resolve` rule reports it, so
    /// other rules skip it rather than report a consequence).
    fn deref(&self, value: &'a Value) -> Option<&'a Value> {
        let target = spec::deref(self.doc, value);
        target.get("$ref").is_none().then_some(target)
    }

    /// The root-level `x-response-codes` catalog (empty when missing: a rule of its own says so).
    fn response_code_catalog(&self) -> &'a serde_json::Map<String, Value> {
        self.doc
            .get("x-response-codes")
            .and_then(Value::as_object)
            .unwrap_or(&EMPTY)
    }

    /// The HTTP status the catalog gives a response code, if the catalog knows it.
    fn http_status_of(&self, code: &str) -> Option<u64> {
        self.response_code_catalog()
            .get(code)?
            .get("http_status")?
            .as_u64()
    }

    /// Where every response is defined, once each: the inline responses of each operation, and
    /// each component response with every status it is used under.
    fn response_sites(&self) -> Vec<ResponseSite<'a>> {
        let mut sites = Vec::new();
        let mut used_under: BTreeMap<&str, BTreeSet<&'a str>> = BTreeMap::new();
        for operation in &self.operations {
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
        for (name, response) in object(self.doc.pointer("/components/responses")) {
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
}

/// A response object where it is defined, and the statuses it answers.
struct ResponseSite<'a> {
    label: String,
    statuses: BTreeSet<&'a str>,
    response: &'a Value,
}

static EMPTY: std::sync::LazyLock<serde_json::Map<String, Value>> =
    std::sync::LazyLock::new(serde_json::Map::new);

impl<'a> Operation<'a> {
    fn id(&self) -> Option<&'a str> {
        self.value.get("operationId").and_then(Value::as_str)
    }

    /// How problems name this operation: by its operationId, else by method and path.
    fn label(&self) -> String {
        match self.id() {
            Some(id) if !id.is_empty() => format!("operation `{id}`"),
            _ => format!("operation `{} {}`", self.method.to_uppercase(), self.path),
        }
    }

    /// The responses as written (possibly `$ref`s), keyed by status.
    fn responses(&self) -> impl Iterator<Item = (&'a str, &'a Value)> {
        object(self.value.get("responses"))
            .iter()
            .map(|(status, response)| (status.as_str(), response))
    }

    fn response(&self, status: &str) -> Option<&'a Value> {
        self.value.get("responses")?.get(status)
    }

    /// The codes listed in the operation's `x-response-codes` (strings only).
    fn response_codes(&self) -> Option<Vec<&'a str>> {
        let list = self.value.get("x-response-codes")?.as_array()?;
        Some(list.iter().filter_map(Value::as_str).collect())
    }

    /// Parameters of the operation and of its path item, as written.
    fn parameters(&self) -> impl Iterator<Item = &'a Value> {
        let own = self.value.get("parameters").and_then(Value::as_array);
        let shared = self.item.get("parameters").and_then(Value::as_array);
        own.into_iter().chain(shared).flatten()
    }

    /// The security requirement as declared: `None` when absent.
    fn access(&self) -> Option<Access> {
        Access::of(self.value.get("security")?)
    }
}

/// What an operation's `security` allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Public,
    Dashboard,
    Integration,
    /// Anything other than the three allowed forms.
    Other,
}

const DASHBOARD_SCHEME: &str = "dashboardToken";
const INTEGRATION_SCHEME: &str = "integrationToken";

impl Access {
    fn of(security: &Value) -> Option<Access> {
        let requirements = security.as_array()?;
        let access = match requirements.as_slice() {
            [] => Access::Public,
            [single] => match single.as_object() {
                Some(map) if map.len() == 1 => {
                    let (scheme, scopes) = map.iter().next().expect("one entry");
                    let no_scopes = scopes.as_array().is_some_and(Vec::is_empty);
                    match scheme.as_str() {
                        DASHBOARD_SCHEME if no_scopes => Access::Dashboard,
                        INTEGRATION_SCHEME if no_scopes => Access::Integration,
                        _ => Access::Other,
                    }
                }
                _ => Access::Other,
            },
            _ => Access::Other,
        };
        Some(access)
    }
}

/// The token family a path belongs to, by its second-to-last segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Dashboard,
    Integration,
}

impl Family {
    fn of(path: &str) -> Option<Family> {
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        match segments.iter().rev().nth(1) {
            Some(&"web") => Some(Family::Dashboard),
            Some(&"api") => Some(Family::Integration),
            _ => None,
        }
    }
}

/// An object's entries, or none when the value is missing or not an object.
fn object(value: Option<&Value>) -> &serde_json::Map<String, Value> {
    value.and_then(Value::as_object).unwrap_or(&EMPTY)
}

/// The `application/json` media type of a request body or response, if it has exactly that one.
fn json_media(container: &Value) -> Result<&Value, String> {
    let content = object(container.get("content"));
    let types: Vec<&str> = content.keys().map(String::as_str).collect();
    match types.as_slice() {
        [JSON] => Ok(&content[JSON]),
        [] => Err(format!("has no content; it must have exactly `{JSON}`")),
        _ => Err(format!(
            "has content {types:?}; it must have exactly `{JSON}`"
        )),
    }
}

/// The component schema a media type's schema points at, if it is a plain `$ref` to one.
fn component_schema_ref(media: &Value) -> Option<&str> {
    media
        .get("schema")?
        .get("$ref")?
        .as_str()
        .filter(|reference| reference.starts_with(COMPONENT_SCHEMA_PREFIX))
}

/// The examples of a media type, parameter or header: `example` and each `examples` entry
/// (following `$ref`s to components/examples), as (name, value).
fn examples_of<'a>(doc: &'a Value, carrier: &'a Value) -> Vec<(String, &'a Value)> {
    let mut found = Vec::new();
    if let Some(value) = carrier.get("example") {
        found.push(("example".to_string(), value));
    }
    for (name, example) in object(carrier.get("examples")) {
        if let Some(value) = spec::deref(doc, example).get("value") {
            found.push((name.clone(), value));
        }
    }
    found
}

/// Whether a response (or any object with `headers`) declares `name`, case-insensitively
/// (HTTP header names are).
fn declares_header(response: &Value, name: &str) -> bool {
    object(response.get("headers"))
        .keys()
        .any(|header| header.eq_ignore_ascii_case(name))
}

/// Escapes one JSON pointer token.
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Calls `visit` with every value in the document and its JSON pointer (without the `#`).
fn walk<'a>(value: &'a Value, pointer: &mut String, visit: &mut dyn FnMut(&str, &'a Value)) {
    visit(pointer, value);
    let length = pointer.len();
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                pointer.push('/');
                pointer.push_str(&escape(key));
                walk(child, pointer, visit);
                pointer.truncate(length);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                pointer.push('/');
                pointer.push_str(&index.to_string());
                walk(child, pointer, visit);
                pointer.truncate(length);
            }
        }
        _ => {}
    }
}
