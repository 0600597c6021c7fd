//! The comparison itself: every change from the base document to the new one that breaks a client
//! written against the base.
//!
//! Operations are matched by `operationId`; within one, the request (body and parameters) and
//! each response (body and headers) are compared schema by schema, recursively, after
//! [`schema::resolve`] has followed `$ref`s and merged `allOf` wrappers. What a client sends is
//! judged in the [`Direction::Request`] direction (the new spec must accept everything the old one
//! did), what it receives in the [`Direction::Response`] direction (the new spec must promise
//! everything the old one did). Webhook payloads are received, so they are responses here.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

mod schemas;

use super::schema::{self, Resolved};
use super::Break;
use crate::spec::{self, component_name, escape, object, Document, Operation, HTTP_METHODS, JSON};

/// Which way a schema's values travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Direction {
    /// From the client to Kobo: narrowing what is accepted breaks clients.
    Request,
    /// From Kobo to the client: widening what may arrive breaks clients.
    Response,
}

impl Direction {
    fn side(self) -> &'static str {
        match self {
            Direction::Request => "request",
            Direction::Response => "response",
        }
    }
}

/// Every change from `base` to `new` that breaks existing clients, in document order.
pub fn compare(base: &Value, new: &Value) -> Vec<Break> {
    let (base, new) = (Document::new(base), Document::new(new));
    let mut comparison = Comparison {
        base: &base,
        new: &new,
        breaks: Vec::new(),
        on_path: BTreeSet::new(),
    };
    comparison.operations();
    comparison.response_codes();
    comparison.webhooks();
    comparison.breaks
}

/// The `$ref`s of the base and new schema being compared, and the direction: a pair already on
/// the path from the root is a cycle (a recursive schema), compared once.
type PathKey = (Vec<String>, Vec<String>, Direction);

struct Comparison<'a, 'd> {
    base: &'d Document<'a>,
    new: &'d Document<'a>,
    breaks: Vec<Break>,
    on_path: BTreeSet<PathKey>,
}

impl<'a> Comparison<'a, '_> {
    /// A break of an operation, a webhook or the catalog itself (not of a schema they share).
    fn report(&mut self, location: impl Into<String>, reason: impl Into<String>) {
        self.breaks.push(Break {
            location: location.into(),
            reason: reason.into(),
            reaches: Vec::new(),
        });
    }

    /// A break of a schema, at `location` (its JSON pointer in the spec), reached at `reach` (the
    /// path from an operation or webhook). The same change reached again is listed once, with
    /// every place it reaches; a schema both sent and received may break for two reasons.
    fn report_schema(&mut self, location: String, reach: String, reason: impl Into<String>) {
        let reason = reason.into();
        match self.breaks.iter_mut().find(|b| b.location == location) {
            Some(found) => {
                if !found.reason.split("; ").any(|known| known == reason) {
                    found.reason = format!("{}; {reason}", found.reason);
                }
                if !found.reaches.contains(&reach) {
                    found.reaches.push(reach);
                }
            }
            None => self.breaks.push(Break {
                location,
                reason,
                reaches: vec![reach],
            }),
        }
    }

    /// [`Self::report_schema`] for what changed at `keyword` (`suffix` below it: `enum/<value>`,
    /// `properties/<name>`...): located where the new spec writes the keyword, or the base did
    /// when the new one no longer has it.
    fn report_keyword(
        &mut self,
        at: &str,
        old: &Resolved,
        current: &Resolved,
        suffix: &str,
        reason: impl Into<String>,
    ) {
        let keyword = suffix.split('/').next().unwrap_or(suffix);
        let origin = if current.origins.contains_key(keyword) || !old.origins.contains_key(keyword)
        {
            current.origin(keyword)
        } else {
            old.origin(keyword)
        };
        self.report_schema(
            format!("{origin}/{suffix}"),
            format!("{at}/{suffix}"),
            reason,
        );
    }

    /// [`Self::report_schema`] for `name` in the `required` of `schema` (the side that lists it).
    fn report_required(&mut self, at: &str, schema: &Resolved, name: &str, reason: &str) {
        let holder = schema.required_origins.get(name).unwrap_or(&schema.pointer);
        let suffix = format!("required/{}", escape(name));
        self.report_schema(
            format!("{holder}/{suffix}"),
            format!("{at}/{suffix}"),
            reason,
        );
    }

    // ---- Operations -------------------------------------------------------------------------

    fn operations(&mut self) {
        let (base, new) = (self.base, self.new);
        let current_by_id: BTreeMap<&str, &Operation<'a>> = new
            .operations
            .iter()
            .filter_map(|operation| Some((operation.id()?, operation)))
            .collect();
        for old in &base.operations {
            // The lint requires an operationId; without one there is nothing to match on.
            let Some(id) = old.id() else { continue };
            let location = format!("#/operations/{}", escape(id));
            let Some(current) = current_by_id.get(id) else {
                let successor = new
                    .operations
                    .iter()
                    .find(|other| other.path == old.path && other.method == old.method)
                    .and_then(Operation::id);
                let reason = match successor {
                    Some(other) => format!(
                        "the operation is renamed to `{other}` (same {}): clients generated from \
                         the old spec call it by its old name",
                        endpoint(old)
                    ),
                    None => format!(
                        "the operation ({}) is removed: clients that call it break",
                        endpoint(old)
                    ),
                };
                self.report(location, reason);
                continue;
            };
            if (old.method, old.path) != (current.method, current.path) {
                self.report(
                    format!("{location}/path"),
                    format!(
                        "the operation moves from {} to {}: clients call the old one",
                        endpoint(old),
                        endpoint(current)
                    ),
                );
            }
            let sites = (operation_pointer(old), operation_pointer(current));
            self.request_body(&location, old, current, &sites);
            self.parameters(&location, old, current, &sites);
            self.responses(&location, old, current, &sites);
        }
    }

    fn request_body(
        &mut self,
        location: &str,
        old: &Operation<'a>,
        current: &Operation<'a>,
        (old_site, new_site): &Sites,
    ) {
        let at = format!("{location}/request/body");
        let old = old
            .value
            .get("requestBody")
            .map(|body| deref_at(self.base.doc, body, format!("{old_site}/requestBody")));
        let current = current
            .value
            .get("requestBody")
            .map(|body| deref_at(self.new.doc, body, format!("{new_site}/requestBody")));
        match (old, current) {
            (None, None) => {}
            (None, Some((current, _))) => {
                if is_required(current) {
                    self.report(
                        at,
                        "a required request body is added: clients that send none are refused",
                    );
                }
            }
            (Some(_), None) => self.report(
                at,
                "the request body is removed: what clients send is no longer read",
            ),
            (Some((old, old_site)), Some((current, new_site))) => {
                if !is_required(old) && is_required(current) {
                    self.report(
                        at.clone(),
                        "the request body becomes required: clients that send none are refused",
                    );
                }
                self.contents(Direction::Request, &at, old, current, &(old_site, new_site));
            }
        }
    }

    fn parameters(
        &mut self,
        location: &str,
        old: &Operation<'a>,
        current: &Operation<'a>,
        (old_site, new_site): &Sites,
    ) {
        let old = parameters_of(self.base.doc, old, old_site);
        let current = parameters_of(self.new.doc, current, new_site);
        for (key, (name, old_parameter, old_pointer)) in &old {
            let at = format!(
                "{location}/request/parameters/{}/{}",
                escape(&key.0),
                escape(name)
            );
            let Some((_, new_parameter, new_pointer)) = current.get(key) else {
                self.report(
                    at,
                    "the request parameter is removed: what clients send in it is no longer read",
                );
                continue;
            };
            if !is_required(old_parameter) && is_required(new_parameter) {
                self.report(
                    format!("{at}/required"),
                    "the request parameter becomes required: clients that omit it are refused",
                );
            }
            self.schema(
                Direction::Request,
                &format!("{at}/schema"),
                old_parameter.get("schema").unwrap_or(&Value::Null),
                new_parameter.get("schema").unwrap_or(&Value::Null),
                &(
                    format!("{old_pointer}/schema"),
                    format!("{new_pointer}/schema"),
                ),
            );
        }
        for (key, (name, new_parameter, _)) in &current {
            if !old.contains_key(key) && is_required(new_parameter) {
                self.report(
                    format!(
                        "{location}/request/parameters/{}/{}",
                        escape(&key.0),
                        escape(name)
                    ),
                    "a new required request parameter: clients that omit it are refused",
                );
            }
        }
    }

    fn responses(
        &mut self,
        location: &str,
        old: &Operation<'a>,
        current: &Operation<'a>,
        (old_site, new_site): &Sites,
    ) {
        for (status, old_response) in old.responses() {
            let at = format!("{location}/responses/{}", escape(status));
            let Some(new_response) = current.response(status) else {
                // Fewer error statuses narrow what a client may receive; a success it expects
                // is gone.
                if status.starts_with('2') {
                    self.report(
                        at,
                        format!(
                            "the success response `{status}` is removed: clients that expect it \
                             break"
                        ),
                    );
                }
                continue;
            };
            let status = escape(status);
            let (old_response, old_pointer) = deref_at(
                self.base.doc,
                old_response,
                format!("{old_site}/responses/{status}"),
            );
            let (new_response, new_pointer) = deref_at(
                self.new.doc,
                new_response,
                format!("{new_site}/responses/{status}"),
            );
            let sites = (old_pointer, new_pointer);
            self.contents(
                Direction::Response,
                &format!("{at}/body"),
                old_response,
                new_response,
                &sites,
            );
            self.headers(&at, old_response, new_response, &sites);
        }
    }

    fn headers(
        &mut self,
        location: &str,
        old: &'a Value,
        current: &'a Value,
        (old_site, new_site): &Sites,
    ) {
        let current_headers = object(current.get("headers"));
        for (name, old_header) in object(old.get("headers")) {
            let at = format!("{location}/headers/{}", escape(name));
            // Header names are case-insensitive.
            let new_header = current_headers
                .iter()
                .find(|(other, _)| other.eq_ignore_ascii_case(name));
            let Some((new_name, new_header)) = new_header else {
                self.report(
                    at,
                    format!("the response header `{name}` is removed: clients that read it break"),
                );
                continue;
            };
            let (old_header, old_pointer) = deref_at(
                self.base.doc,
                old_header,
                format!("{old_site}/headers/{}", escape(name)),
            );
            let (new_header, new_pointer) = deref_at(
                self.new.doc,
                new_header,
                format!("{new_site}/headers/{}", escape(new_name)),
            );
            self.schema(
                Direction::Response,
                &format!("{at}/schema"),
                old_header.get("schema").unwrap_or(&Value::Null),
                new_header.get("schema").unwrap_or(&Value::Null),
                &(
                    format!("{old_pointer}/schema"),
                    format!("{new_pointer}/schema"),
                ),
            );
        }
    }

    /// The bodies of a request body or response, media type by media type: `location` itself
    /// for `application/json`, `location/<media type>` for any other.
    fn contents(
        &mut self,
        direction: Direction,
        location: &str,
        old: &'a Value,
        current: &'a Value,
        (old_site, new_site): &Sites,
    ) {
        let current_content = object(current.get("content"));
        for (media, old_media) in object(old.get("content")) {
            let at = if media == JSON {
                location.to_string()
            } else {
                format!("{location}/{}", escape(media))
            };
            let Some(new_media) = current_content.get(media) else {
                let reason = match direction {
                    Direction::Request => format!(
                        "the operation no longer accepts a `{media}` body: clients that send one \
                         are refused"
                    ),
                    Direction::Response => format!(
                        "the response no longer has a `{media}` body: clients that read it break"
                    ),
                };
                self.report(at, reason);
                continue;
            };
            let media = escape(media);
            self.schema(
                direction,
                &at,
                old_media.get("schema").unwrap_or(&Value::Null),
                new_media.get("schema").unwrap_or(&Value::Null),
                &(
                    format!("{old_site}/content/{media}/schema"),
                    format!("{new_site}/content/{media}/schema"),
                ),
            );
        }
    }

    // ---- The catalogs -----------------------------------------------------------------------

    fn response_codes(&mut self) {
        let old = self.base.response_code_catalog();
        let current = self.new.response_code_catalog();
        for code in old.keys() {
            let at = format!("#/x-response-codes/{}", escape(code));
            if !current.contains_key(code) {
                self.report(
                    at,
                    format!(
                        "the response code `{code}` is removed from the catalog: clients that \
                         branch on it break"
                    ),
                );
                continue;
            }
            let (before, after) = (
                self.base.http_status_of(code),
                self.new.http_status_of(code),
            );
            if before != after {
                self.report(
                    format!("{at}/http_status"),
                    format!(
                        "the HTTP status of `{code}` changes from {} to {}: clients that branch on \
                         the status break",
                        show_status(before),
                        show_status(after)
                    ),
                );
            }
        }
    }

    /// Whether an enum is the enum of response codes: its base values are codes of the base
    /// catalog and the values it gains are codes of the new catalog. New codes are additive, so
    /// this enum is open whatever its description says.
    fn is_response_code_enum(&self, old: &[Value], current: &[Value]) -> bool {
        let in_catalog = |catalog: &serde_json::Map<String, Value>, value: &Value| {
            value
                .as_str()
                .is_some_and(|code| catalog.contains_key(code))
        };
        let (base_catalog, new_catalog) = (
            self.base.response_code_catalog(),
            self.new.response_code_catalog(),
        );
        !old.is_empty()
            && old.iter().all(|value| in_catalog(base_catalog, value))
            && current
                .iter()
                .filter(|value| !old.contains(value))
                .all(|value| in_catalog(new_catalog, value))
    }

    fn webhooks(&mut self) {
        let current_hooks = object(self.new.doc.get("x-webhooks"));
        for (name, old_item) in object(self.base.doc.get("x-webhooks")) {
            let at = format!("#/x-webhooks/{}", escape(name));
            let Some(new_item) = current_hooks.get(name) else {
                self.report(
                    at,
                    "the webhook event kind is removed: clients that wait for it never get it",
                );
                continue;
            };
            let pointer = format!("#/x-webhooks/{}", escape(name));
            let (old_item, old_site) = deref_at(self.base.doc, old_item, pointer.clone());
            let (new_item, new_site) = deref_at(self.new.doc, new_item, pointer);
            for method in HTTP_METHODS {
                let old_body = old_item.get(method).and_then(|o| o.get("requestBody"));
                let new_body = new_item.get(method).and_then(|o| o.get("requestBody"));
                if let (Some(old_body), Some(new_body)) = (old_body, new_body) {
                    let old_body = deref_at(
                        self.base.doc,
                        old_body,
                        format!("{old_site}/{method}/requestBody"),
                    );
                    let new_body = deref_at(
                        self.new.doc,
                        new_body,
                        format!("{new_site}/{method}/requestBody"),
                    );
                    // The payload travels to the client: it is judged as a response.
                    self.contents(
                        Direction::Response,
                        &format!("{at}/body"),
                        old_body.0,
                        new_body.0,
                        &(old_body.1, new_body.1),
                    );
                }
            }
        }
    }
}

/// The JSON pointers (`#/...`) of one thing in the base and in the new document.
type Sites = (String, String);

/// The JSON pointer of an operation (`#/paths/~1api~1v1~1.../post`).
fn operation_pointer(operation: &Operation<'_>) -> String {
    format!("#/paths/{}/{}", escape(operation.path), operation.method)
}

/// [`spec::deref`], with the JSON pointer of what it arrives at: `pointer` (where `value` is)
/// until a `$ref` is followed, then the `$ref`.
fn deref_at<'a>(doc: &'a Value, value: &'a Value, pointer: String) -> (&'a Value, String) {
    let mut current = (value, pointer);
    // References between components are bounded; a cycle of plain `$ref`s is a broken document.
    for _ in 0..16 {
        let Some(reference) = current.0.get("$ref").and_then(Value::as_str) else {
            break;
        };
        let Some(target) = spec::resolve_ref(doc, reference) else {
            break;
        };
        current = (target, reference.to_string());
    }
    current
}

/// An operation's parameters (its own first, then its path item's), `$ref`s followed, keyed by
/// location and name (lower-cased for headers, which are case-insensitive), with the name as
/// written and the parameter's JSON pointer.
fn parameters_of<'a>(
    doc: &'a Value,
    operation: &Operation<'a>,
    site: &str,
) -> BTreeMap<(String, String), (String, &'a Value, String)> {
    let own = operation
        .value
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(index, parameter)| (parameter, format!("{site}/parameters/{index}")));
    let item = format!("#/paths/{}/parameters", escape(operation.path));
    let shared = operation
        .item
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(index, parameter)| (parameter, format!("{item}/{index}")));
    let mut parameters = BTreeMap::new();
    for (parameter, pointer) in own.chain(shared) {
        let (parameter, pointer) = deref_at(doc, parameter, pointer);
        let (Some(place), Some(name)) = (
            parameter.get("in").and_then(Value::as_str),
            parameter.get("name").and_then(Value::as_str),
        ) else {
            continue;
        };
        let key_name = if place == "header" {
            name.to_ascii_lowercase()
        } else {
            name.to_string()
        };
        // An operation's own parameter overrides its path item's.
        parameters.entry((place.to_string(), key_name)).or_insert((
            name.to_string(),
            parameter,
            pointer,
        ));
    }
    parameters
}

/// Each variant of a `oneOf`/`anyOf` with its name: the component it is a `$ref` to, else its
/// position.
fn variants(list: &[Value]) -> Vec<(String, &Value)> {
    list.iter()
        .enumerate()
        .map(|(index, variant)| {
            let name = component_name(variant)
                .map(str::to_string)
                .unwrap_or_else(|| index.to_string());
            (name, variant)
        })
        .collect()
}

fn is_required(value: &Value) -> bool {
    value.get("required").and_then(Value::as_bool) == Some(true)
}

fn endpoint(operation: &Operation<'_>) -> String {
    format!("`{} {}`", operation.method.to_uppercase(), operation.path)
}

/// A value as the reports quote it: strings bare, anything else as JSON.
fn show(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn show_keyword(schema: &Resolved, keyword: &str) -> String {
    schema.get(keyword).map(show).unwrap_or_else(|| "0".into())
}

fn show_status(status: Option<u64>) -> String {
    status.map_or_else(|| "none".into(), |status| status.to_string())
}
