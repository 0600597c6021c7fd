//! The one way xtask reads the spec's operations: [`Document`] indexes them once, and the lint's
//! rules, the generator's precheck and the generator's model all read them through it (their
//! labels, bodies, responses, codes, examples, security).
//!
//! Nothing here judges the document: readers return `None` (or nothing) where the document is
//! not what they expect, and the lint's rules say why.

use serde_json::{Map, Value};

/// Every HTTP method an OpenAPI path item may hold.
pub const HTTP_METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// The only media type of every body.
pub const JSON: &str = "application/json";
pub const COMPONENT_SCHEMA_PREFIX: &str = "#/components/schemas/";
pub const COMPONENT_RESPONSE_PREFIX: &str = "#/components/responses/";
pub const ERROR_ENVELOPE_REF: &str = "#/components/schemas/ErrorEnvelope";

/// A role the generated router answers with by itself, from a code of the catalog that names
/// it (`x-response-codes.<code>.router`). The runtime knows the code as
/// `ResponseCode::<ROLE>` (the role in upper case).
pub struct RouterRole {
    pub name: &'static str,
    /// What the router answers it for.
    pub answers: &'static str,
}

/// Every role the generated router answers with: a document's catalog gives each one code.
#[rustfmt::skip]
pub const ROUTER_ROLES: &[RouterRole] = &[
    RouterRole { name: "success", answers: "success" },
    RouterRole { name: "invalid_request", answers: "invalid request (malformed JSON, validation failure)" },
    RouterRole { name: "unknown_operation", answers: "unknown operation (no such path)" },
    RouterRole { name: "method_not_allowed", answers: "method not allowed" },
    RouterRole { name: "unsupported_media_type", answers: "unsupported media type" },
    RouterRole { name: "body_too_large", answers: "request body too large" },
    RouterRole {
        name: "not_implemented",
        answers: "an operation the server does not serve yet (`ApiError::not_implemented`)",
    },
    RouterRole { name: "unauthenticated", answers: "missing or rejected bearer token" },
    RouterRole { name: "internal_error", answers: "internal error" },
    RouterRole {
        name: "timed_out",
        answers: "a request not answered before its deadline: dropped, nothing of it kept",
    },
];

/// The document plus the index every reader needs: its operations, in document order.
pub struct Document<'a> {
    pub doc: &'a Value,
    pub operations: Vec<Operation<'a>>,
}

/// One operation (`paths./x.post`).
pub struct Operation<'a> {
    pub path: &'a str,
    pub method: &'a str,
    /// The path item the operation sits in (for path-level parameters).
    pub item: &'a Value,
    pub value: &'a Value,
}

impl<'a> Document<'a> {
    pub fn new(doc: &'a Value) -> Self {
        let mut operations = Vec::new();
        for (path, item) in object(doc.get("paths")) {
            let item = super::deref(doc, item);
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
    /// readers skip it rather than report a consequence).
    pub fn deref(&self, value: &'a Value) -> Option<&'a Value> {
        let target = super::deref(self.doc, value);
        target.get("$ref").is_none().then_some(target)
    }

    /// The root-level `x-response-codes` catalog (empty when missing: a rule of its own says so).
    pub fn response_code_catalog(&self) -> &'a Map<String, Value> {
        object(self.doc.get("x-response-codes"))
    }

    /// The root-level `x-token-families`: each bearer scheme an operation may require, in
    /// document order (none when missing: the `security` rule says so).
    pub fn token_families(&self) -> Vec<TokenFamily<'a>> {
        object(self.doc.get("x-token-families"))
            .iter()
            .map(|(scheme, family)| TokenFamily {
                scheme,
                path_segment: family.get("path_segment").and_then(Value::as_str),
                permissions: family.get("permissions").and_then(Value::as_bool) == Some(true),
            })
            .collect()
    }

    /// The family whose `path_segment` is `path`'s second-to-last segment, if one is.
    pub fn family_of_path(&self, path: &str) -> Option<TokenFamily<'a>> {
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let segment = segments.iter().rev().nth(1)?;
        self.token_families()
            .into_iter()
            .find(|family| family.path_segment == Some(*segment))
    }

    /// The family of `scheme`, if `x-token-families` lists it.
    pub fn token_family(&self, scheme: &str) -> Option<TokenFamily<'a>> {
        self.token_families()
            .into_iter()
            .find(|family| family.scheme == scheme)
    }

    /// The codes of the catalog that name router `role` (`x-response-codes.<code>.router`).
    pub fn router_codes(&self, role: &str) -> Vec<&'a str> {
        self.response_code_catalog()
            .iter()
            .filter(|(_, entry)| {
                let roles = entry.get("router").and_then(Value::as_array);
                roles.into_iter().flatten().any(|named| named == role)
            })
            .map(|(code, _)| code.as_str())
            .collect()
    }

    /// The HTTP status the catalog gives a response code, if the catalog knows it.
    pub fn http_status_of(&self, code: &str) -> Option<u64> {
        self.response_code_catalog()
            .get(code)?
            .get("http_status")?
            .as_u64()
    }

    /// The component schema `name` (`#/components/schemas/<name>`), if it exists.
    pub fn component_schema(&self, name: &str) -> Option<&'a Value> {
        self.doc
            .pointer(&format!("/components/schemas/{}", escape(name)))
    }

    /// The `application/json` media type of the operation's request body, if it has exactly that
    /// one.
    pub fn request_media(&self, operation: &Operation<'a>) -> Option<&'a Value> {
        let body = self.deref(operation.value.get("requestBody")?)?;
        json_media(body).ok()
    }

    /// The `application/json` media type of the operation's response to `status`, if it has
    /// exactly that one.
    pub fn response_media(&self, operation: &Operation<'a>, status: &str) -> Option<&'a Value> {
        let response = self.deref(operation.response(status)?)?;
        json_media(response).ok()
    }
}

static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

impl<'a> Operation<'a> {
    pub fn id(&self) -> Option<&'a str> {
        self.value.get("operationId").and_then(Value::as_str)
    }

    /// How problems name this operation: by its operationId, else by method and path.
    pub fn label(&self) -> String {
        match self.id() {
            Some(id) if !id.is_empty() => format!("operation `{id}`"),
            _ => format!("operation `{} {}`", self.method.to_uppercase(), self.path),
        }
    }

    /// A string field of the operation (`summary`, `x-success-message`, ...).
    pub fn text(&self, key: &str) -> Option<&'a str> {
        self.value.get(key).and_then(Value::as_str)
    }

    /// The responses as written (possibly `$ref`s), keyed by status.
    pub fn responses(&self) -> impl Iterator<Item = (&'a str, &'a Value)> {
        object(self.value.get("responses"))
            .iter()
            .map(|(status, response)| (status.as_str(), response))
    }

    pub fn response(&self, status: &str) -> Option<&'a Value> {
        self.value.get("responses")?.get(status)
    }

    /// The codes listed in the operation's `x-response-codes` (strings only).
    pub fn response_codes(&self) -> Option<Vec<&'a str>> {
        let list = self.value.get("x-response-codes")?.as_array()?;
        Some(list.iter().filter_map(Value::as_str).collect())
    }

    /// Parameters of the operation and of its path item, as written.
    pub fn parameters(&self) -> impl Iterator<Item = &'a Value> {
        let own = self.value.get("parameters").and_then(Value::as_array);
        let shared = self.item.get("parameters").and_then(Value::as_array);
        own.into_iter().chain(shared).flatten()
    }

    /// The security requirement as declared: `None` when absent.
    pub fn access(&self) -> Option<Access<'a>> {
        Access::of(self.value.get("security")?)
    }

    /// The security scheme the operation's requirement names; `None` for a public operation
    /// (or a `security` other than one requirement of one scheme, which the lint refuses).
    pub fn security_scheme(&self) -> Option<&'a str> {
        let requirements = self.value.get("security")?.as_array()?;
        let [requirement] = requirements.as_slice() else {
            return None;
        };
        let requirement = requirement.as_object()?;
        let mut schemes = requirement.keys();
        match (schemes.next(), schemes.next()) {
            (Some(scheme), None) => Some(scheme.as_str()),
            _ => None,
        }
    }
}

/// What an operation's `security` allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access<'a> {
    Public,
    /// One requirement of one scheme, without scopes: its name.
    Scheme(&'a str),
    /// Anything other than those two forms.
    Other,
}

impl<'a> Access<'a> {
    fn of(security: &'a Value) -> Option<Access<'a>> {
        let requirements = security.as_array()?;
        let access = match requirements.as_slice() {
            [] => Access::Public,
            [single] => match single.as_object() {
                Some(map) if map.len() == 1 => {
                    let (scheme, scopes) = map.iter().next().expect("one entry");
                    match scopes.as_array().is_some_and(Vec::is_empty) {
                        true => Access::Scheme(scheme),
                        false => Access::Other,
                    }
                }
                _ => Access::Other,
            },
            _ => Access::Other,
        };
        Some(access)
    }
}

/// A token family (`x-token-families`): a bearer security scheme operations require. A document
/// can tie each family to a segment of its operations' paths (Kobo's `/web/` and `/api/`), and
/// have a family's operations name the permission that guards them (`x-permission`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenFamily<'a> {
    /// The security scheme's name, e.g. `dashboardToken`.
    pub scheme: &'a str,
    /// The second-to-last segment of the family's paths, when the document ties them to one.
    pub path_segment: Option<&'a str>,
    /// Whether the family's operations name a permission of `x-permissions`.
    pub permissions: bool,
}

/// An object's entries, or none when the value is missing or not an object.
pub fn object(value: Option<&Value>) -> &Map<String, Value> {
    value.and_then(Value::as_object).unwrap_or(&EMPTY)
}

/// The `application/json` media type of a request body or response, if it has exactly that one.
pub fn json_media(container: &Value) -> Result<&Value, String> {
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
pub fn component_schema_ref(media: &Value) -> Option<&str> {
    media
        .get("schema")?
        .get("$ref")?
        .as_str()
        .filter(|reference| reference.starts_with(COMPONENT_SCHEMA_PREFIX))
}

/// The name of the component a schema is a plain `$ref` to (`Account` for
/// `{$ref: '#/components/schemas/Account'}`).
pub fn component_name(schema: &Value) -> Option<&str> {
    schema
        .get("$ref")?
        .as_str()?
        .strip_prefix(COMPONENT_SCHEMA_PREFIX)
}

/// The examples of a media type, parameter or header: `example` and each `examples` entry
/// (following `$ref`s to components/examples), as (name, value), in document order.
pub fn examples_of<'a>(doc: &'a Value, carrier: &'a Value) -> Vec<(String, &'a Value)> {
    let mut found = Vec::new();
    if let Some(value) = carrier.get("example") {
        found.push(("example".to_string(), value));
    }
    for (name, example) in object(carrier.get("examples")) {
        if let Some(value) = super::deref(doc, example).get("value") {
            found.push((name.clone(), value));
        }
    }
    found
}

/// Whether `name` is snake_case: a lowercase ASCII letter, then lowercase letters, digits and
/// underscores. operationIds and response-code names are, because they name generated Rust items.
pub fn is_snake_case(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// Escapes one JSON pointer token.
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn snake_case_is_what_names_rust_items() {
        for good in ["login", "create_account_web", "v2_fetch", "a"] {
            assert!(is_snake_case(good), "{good}");
        }
        for bad in [
            "",
            "Login",
            "getAccount",
            "_private",
            "2fa",
            "fetch-banks",
            "caf\u{e9}",
        ] {
            assert!(!is_snake_case(bad), "{bad}");
        }
    }

    #[test]
    fn examples_follow_refs_in_document_order() {
        let doc = json!({
            "components": {"examples": {"Shared": {"value": {"b": 2}}}},
            "media": {
                "example": {"lone": true},
                "examples": {
                    "second": {"value": {"a": 1}},
                    "first": {"$ref": "#/components/examples/Shared"},
                }
            }
        });
        let found = examples_of(&doc, &doc["media"]);
        let names: Vec<&str> = found.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["example", "second", "first"]);
        assert_eq!(found[2].1, &json!({"b": 2}));
    }

    #[test]
    fn the_security_scheme_is_the_only_one_named() {
        let doc = json!({"paths": {
            "/a/web/x": {"post": {"security": [{"dashboardToken": []}]}},
            "/a/api/y": {"post": {"security": []}},
            "/a/api/z": {"post": {"security": [{"a": [], "b": []}]}},
        }});
        let document = Document::new(&doc);
        let schemes: Vec<Option<&str>> = document
            .operations
            .iter()
            .map(Operation::security_scheme)
            .collect();
        assert_eq!(schemes, [Some("dashboardToken"), None, None]);
    }
}
