//! The part of the spec the server generator needs, read once, through [`spec::Document`], into
//! plain Rust values.
//!
//! [`super::precheck`] has already refused the shapes this module cannot express, so what is
//! left to fail here is a broken reference.

use std::collections::BTreeMap;

use anyhow::{anyhow, bail, Context, Result};
use heck::ToUpperCamelCase;
use serde_json::Value;

use crate::spec::{self, component_name, examples_of, object, Document};

/// The API as the generated server sees it; every list is sorted, so output is deterministic.
#[derive(Debug)]
pub struct Api {
    /// Operations sorted by `operationId`.
    pub operations: Vec<Operation>,
    /// Token families (bearer security schemes) that operations use, sorted by scheme name.
    pub families: Vec<Family>,
    pub permissions: Vec<Permission>,
    /// The catalog, sorted by code.
    pub response_codes: Vec<ResponseCode>,
    /// The component every non-2xx response uses.
    pub error_schema: String,
    /// The component that list envelopes use for `pagination`, if any operation is a list.
    pub pagination_schema: Option<String>,
}

#[derive(Debug)]
pub struct Operation {
    pub id: String,
    pub path: String,
    pub summary: Option<String>,
    pub description: Option<String>,
    /// `None` for a public operation (`security: []`).
    pub family: Option<String>,
    /// The variant name of the `x-permission`.
    pub permission: Option<String>,
    pub success_message: String,
    pub request_schema: String,
    pub response_schema: String,
    pub data: Data,
    pub paginated: bool,
    pub headers: Vec<Header>,
    /// The `ResponseCode` variants of the codes the operation lists in `x-response-codes`, in
    /// the spec's order.
    pub response_codes: Vec<String>,
    /// The request body's examples, in the spec's order, `$ref`s resolved.
    pub request_examples: Vec<Example>,
}

/// A named example value.
#[derive(Debug)]
pub struct Example {
    /// The key under `examples`, or `example` for a lone `example`.
    pub name: String,
    /// The value as compact JSON text.
    pub json: String,
}

/// What an operation's success envelope carries in `data`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Data {
    /// `$ref` to a component: the trait returns that model.
    Model(String),
    /// An array of `$ref`s: the trait returns a `Vec` of that model.
    List(String),
    /// An object schema without properties (`EmptyObject`): the trait returns `()`.
    Empty,
}

#[derive(Debug)]
pub struct Header {
    pub name: String,
    pub required: bool,
    /// The header's schema translated to JSON Schema.
    pub schema: Value,
}

#[derive(Debug)]
pub struct Family {
    /// The security scheme's name, e.g. `dashboardToken`.
    pub scheme: String,
    /// The `TokenFamily` variant, e.g. `Dashboard`.
    pub variant: String,
    pub description: Option<String>,
}

#[derive(Debug)]
pub struct Permission {
    pub code: String,
    pub variant: String,
    pub name: Option<String>,
    pub description: Option<String>,
    pub implicit: bool,
}

#[derive(Debug)]
pub struct ResponseCode {
    pub code: String,
    pub variant: String,
    pub http_status: u16,
    pub meaning: String,
    /// The router roles it answers (`router`).
    pub router: Vec<String>,
}

impl Api {
    pub fn read(document: &Document<'_>) -> Result<Api> {
        let doc = document.doc;
        let permissions = read_permissions(doc);
        let response_codes = read_response_codes(document)?;
        let mut operations = Vec::new();
        let mut error_schema = None;
        let mut pagination_schema = None;
        for operation in &document.operations {
            let read = Operation::read(document, operation, &permissions, &response_codes)
                .with_context(|| operation.label())?;
            if let Some(name) = pagination_of(document, &read.response_schema) {
                pagination_schema = Some(name);
            }
            error_schema = error_schema.or_else(|| error_schema_of(document, operation));
            operations.push(read);
        }
        operations.sort_by(|a, b| a.id.cmp(&b.id));
        let mut used: Vec<&str> = operations
            .iter()
            .filter_map(|o| o.family.as_deref())
            .collect();
        used.sort_unstable();
        used.dedup();
        let families = used
            .into_iter()
            .map(|scheme| Family {
                scheme: scheme.to_string(),
                variant: family_variant(scheme),
                description: object(doc.pointer("/components/securitySchemes"))
                    .get(scheme)
                    .and_then(|scheme| scheme.get("description"))
                    .and_then(Value::as_str)
                    .map(str::to_string),
            })
            .collect();
        Ok(Api {
            operations,
            families,
            permissions,
            response_codes,
            error_schema: error_schema
                .ok_or_else(|| anyhow!("no operation declares an error response"))?,
            pagination_schema,
        })
    }

    pub fn family(&self, scheme: &str) -> &Family {
        self.families
            .iter()
            .find(|family| family.scheme == scheme)
            .expect("families are collected from the operations")
    }
}

impl Operation {
    fn read(
        document: &Document<'_>,
        operation: &spec::Operation<'_>,
        permissions: &[Permission],
        catalog: &[ResponseCode],
    ) -> Result<Operation> {
        let text = |key: &str| operation.text(key).map(str::to_string);
        let id = text("operationId").ok_or_else(|| anyhow!("no operationId"))?;
        let request_schema = document
            .request_media(operation)
            .and_then(media_component)
            .ok_or_else(|| anyhow!("the request body is not a component `$ref`"))?;
        let response_schema = document
            .response_media(operation, "200")
            .and_then(media_component)
            .ok_or_else(|| anyhow!("the 200 response is not a component `$ref`"))?;
        let envelope = component(document, &response_schema)?;
        let data = read_data(document, &envelope["properties"]["data"])
            .with_context(|| format!("`{response_schema}.data`"))?;
        let paginated = envelope.pointer("/properties/pagination").is_some();
        let permission = match operation.text("x-permission") {
            None => None,
            Some(code) => Some(
                permissions
                    .iter()
                    .find(|permission| permission.code == code)
                    .map(|permission| permission.variant.clone())
                    .ok_or_else(|| anyhow!("`x-permission: {code}` is not in the catalog"))?,
            ),
        };
        let headers = operation
            .parameters()
            .map(|parameter| {
                let parameter = spec::deref(document.doc, parameter);
                Header {
                    name: parameter["name"].as_str().unwrap_or_default().to_string(),
                    required: parameter["required"].as_bool().unwrap_or(false),
                    schema: spec::json_schema_for(document.doc, &parameter["schema"]),
                }
            })
            .collect();
        let response_codes = operation
            .response_codes()
            .unwrap_or_default()
            .into_iter()
            .map(|code| {
                catalog
                    .iter()
                    .find(|entry| entry.code == code)
                    .map(|entry| entry.variant.clone())
                    .ok_or_else(|| anyhow!("`x-response-codes` lists `{code}`, not in the catalog"))
            })
            .collect::<Result<_>>()?;
        let request_examples = document
            .request_media(operation)
            .map(|media| examples_of(document.doc, media))
            .unwrap_or_default()
            .into_iter()
            .map(|(name, value)| Example {
                name,
                json: value.to_string(),
            })
            .collect();
        Ok(Operation {
            path: operation.path.to_string(),
            summary: text("summary"),
            description: text("description"),
            family: operation.security_scheme().map(str::to_string),
            permission,
            success_message: text("x-success-message")
                .ok_or_else(|| anyhow!("no `x-success-message`"))?,
            request_schema,
            response_schema,
            data,
            paginated,
            headers,
            response_codes,
            request_examples,
            id,
        })
    }

    /// `fetch_members` -> `FetchMembers`.
    pub fn variant(&self) -> String {
        self.id.to_upper_camel_case()
    }

    pub fn idempotent(&self) -> bool {
        self.headers
            .iter()
            .any(|header| header.name.eq_ignore_ascii_case("Idempotency-Key"))
    }
}

fn read_data(document: &Document<'_>, data: &Value) -> Result<Data> {
    if let Some(name) = component_name(data) {
        let schema = component(document, name)?;
        let empty_object = schema.get("type").and_then(Value::as_str) == Some("object")
            && schema
                .get("properties")
                .and_then(Value::as_object)
                .is_none_or(|properties| properties.is_empty())
            && schema.get("additionalProperties") != Some(&Value::Bool(true))
            && schema.get("allOf").is_none()
            && schema.get("oneOf").is_none()
            && schema.get("anyOf").is_none();
        return Ok(if empty_object {
            Data::Empty
        } else {
            Data::Model(name.to_string())
        });
    }
    if let Some(name) = data.get("items").and_then(component_name) {
        return Ok(Data::List(name.to_string()));
    }
    Err(anyhow!("must be a `$ref` or an array of `$ref`s"))
}

fn pagination_of(document: &Document<'_>, envelope: &str) -> Option<String> {
    let pagination = document
        .component_schema(envelope)?
        .pointer("/properties/pagination")?;
    component_name(pagination).map(str::to_string)
}

fn error_schema_of(document: &Document<'_>, operation: &spec::Operation<'_>) -> Option<String> {
    operation
        .responses()
        .filter(|(status, _)| !status.starts_with('2'))
        .find_map(|(status, _)| media_component(document.response_media(operation, status)?))
}

/// The component name of a media type's schema `$ref`.
fn media_component(media: &Value) -> Option<String> {
    component_name(media.get("schema")?).map(str::to_string)
}

fn component<'a>(document: &Document<'a>, name: &str) -> Result<&'a Value> {
    document
        .component_schema(name)
        .ok_or_else(|| anyhow!("component schema `{name}` does not exist"))
}

fn read_permissions(doc: &Value) -> Vec<Permission> {
    let mut permissions: Vec<Permission> = doc
        .get("x-permissions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let code = entry.get("code")?.as_str()?.to_string();
            let text = |key: &str| entry.get(key).and_then(Value::as_str).map(str::to_string);
            Some(Permission {
                variant: permission_variant(&code),
                name: text("name"),
                description: text("description"),
                implicit: entry
                    .get("implicit")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                code,
            })
        })
        .collect();
    permissions.sort_by(|a, b| a.code.cmp(&b.code));
    permissions
}

/// The catalog, sorted by code; each code's variant is its `name` in UpperCamelCase (the lint's
/// `response-code-catalog` rule, which the precheck runs, requires one).
fn read_response_codes(document: &Document<'_>) -> Result<Vec<ResponseCode>> {
    let mut codes = Vec::new();
    for (code, entry) in document.response_code_catalog() {
        let name = entry
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| anyhow!("`x-response-codes.{code}` has no `name`"))?;
        codes.push(ResponseCode {
            code: code.clone(),
            variant: name.to_upper_camel_case(),
            http_status: entry["http_status"].as_u64().unwrap_or(500) as u16,
            meaning: entry["meaning"].as_str().unwrap_or_default().to_string(),
            router: entry
                .get("router")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
        });
    }
    codes.sort_by(|a, b| a.code.cmp(&b.code));
    let mut named: BTreeMap<&str, &str> = BTreeMap::new();
    for code in &codes {
        if let Some(other) = named.insert(&code.variant, &code.code) {
            bail!(
                "`x-response-codes`: the names of `{other}` and `{}` both give the variant `{}`",
                code.code,
                code.variant
            );
        }
    }
    Ok(codes)
}

/// `transfer.initiate` -> `TransferInitiate`.
fn permission_variant(code: &str) -> String {
    code.replace(['.', '-'], "_").to_upper_camel_case()
}

/// `dashboardToken` -> `Dashboard`.
fn family_variant(scheme: &str) -> String {
    let camel = scheme.to_upper_camel_case();
    match camel.strip_suffix("Token") {
        Some(stem) if !stem.is_empty() => stem.to_string(),
        _ => camel,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_variants_come_from_their_names() {
        let doc = serde_json::json!({"x-response-codes": {
            "41": {"http_status": 401, "meaning": "Unauthenticated", "name": "session_invalid"},
            "06": {"http_status": 404, "meaning": "Account not found", "name": "beneficiary_account_not_found"},
        }});
        let codes = read_response_codes(&Document::new(&doc)).unwrap();
        let names: Vec<(&str, &str, u16)> = codes
            .iter()
            .map(|code| (code.code.as_str(), code.variant.as_str(), code.http_status))
            .collect();
        assert_eq!(
            names,
            [
                ("06", "BeneficiaryAccountNotFound", 404),
                ("41", "SessionInvalid", 401)
            ]
        );
    }

    #[test]
    fn names_that_give_one_variant_are_refused() {
        let doc = serde_json::json!({"x-response-codes": {
            "06": {"http_status": 404, "meaning": "a", "name": "not_found_1"},
            "44": {"http_status": 404, "meaning": "b", "name": "not_found1"},
        }});
        let error = read_response_codes(&Document::new(&doc)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "`x-response-codes`: the names of `06` and `44` both give the variant `NotFound1`"
        );
    }

    #[test]
    fn families_and_permissions_are_named_from_the_spec() {
        assert_eq!(family_variant("dashboardToken"), "Dashboard");
        assert_eq!(family_variant("integrationToken"), "Integration");
        assert_eq!(family_variant("apiKey"), "ApiKey");
        assert_eq!(permission_variant("transfer.initiate"), "TransferInitiate");
        assert_eq!(permission_variant("audit_log.view"), "AuditLogView");
    }
}
