//! The part of the spec the server generator needs, read once into plain Rust values.
//!
//! [`super::precheck`] has already refused the shapes this module cannot express, so what is
//! left to fail here is a broken reference.

use std::collections::BTreeMap;

use anyhow::{anyhow, Context, Result};
use heck::ToUpperCamelCase;
use serde_json::Value;

use crate::spec;

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
}

impl Api {
    pub fn read(doc: &Value) -> Result<Api> {
        let permissions = read_permissions(doc);
        let response_codes = read_response_codes(doc)?;
        let mut operations = Vec::new();
        let mut error_schema = None;
        let mut pagination_schema = None;
        for (path, item) in doc["paths"].as_object().into_iter().flatten() {
            let operation = &item["post"];
            let read = Operation::read(doc, path, operation, &permissions)
                .with_context(|| format!("operation at POST {path}"))?;
            if let Some(name) = pagination_of(doc, &read.response_schema) {
                pagination_schema = Some(name);
            }
            error_schema = error_schema.or_else(|| error_schema_of(doc, operation));
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
                description: doc
                    .pointer(&format!("/components/securitySchemes/{scheme}/description"))
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
        doc: &Value,
        path: &str,
        operation: &Value,
        permissions: &[Permission],
    ) -> Result<Operation> {
        let text = |key: &str| {
            operation
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let id = text("operationId").ok_or_else(|| anyhow!("no operationId"))?;
        let request_schema = component_ref(spec::deref(doc, &operation["requestBody"]))
            .ok_or_else(|| anyhow!("`{id}`: the request body is not a component `$ref`"))?;
        let response_schema = component_ref(spec::deref(doc, &operation["responses"]["200"]))
            .ok_or_else(|| anyhow!("`{id}`: the 200 response is not a component `$ref`"))?;
        let envelope = component(doc, &response_schema)?;
        let data = read_data(doc, &envelope["properties"]["data"])
            .with_context(|| format!("`{id}`: `{response_schema}.data`"))?;
        let paginated = envelope.pointer("/properties/pagination").is_some();
        let security = operation.get("security").or_else(|| doc.get("security"));
        let family = security
            .and_then(Value::as_array)
            .and_then(|list| list.first())
            .and_then(Value::as_object)
            .and_then(|requirement| requirement.keys().next().cloned());
        let permission = text("x-permission").map(|code| {
            permissions
                .iter()
                .find(|p| p.code == code)
                .map(|p| p.variant.clone())
                .unwrap_or_else(|| permission_variant(&code))
        });
        let headers = operation
            .get("parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|parameter| {
                let parameter = spec::deref(doc, parameter);
                Header {
                    name: parameter["name"].as_str().unwrap_or_default().to_string(),
                    required: parameter["required"].as_bool().unwrap_or(false),
                    schema: spec::json_schema_for(doc, &parameter["schema"]),
                }
            })
            .collect();
        Ok(Operation {
            path: path.to_string(),
            summary: text("summary"),
            description: text("description"),
            family,
            permission,
            success_message: text("x-success-message").unwrap_or_default(),
            request_schema,
            response_schema,
            data,
            paginated,
            headers,
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

fn read_data(doc: &Value, data: &Value) -> Result<Data> {
    if let Some(name) = component_name(data) {
        let schema = component(doc, &name)?;
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
            Data::Model(name)
        });
    }
    if let Some(name) = data.get("items").and_then(component_name) {
        return Ok(Data::List(name));
    }
    Err(anyhow!("must be a `$ref` or an array of `$ref`s"))
}

fn pagination_of(doc: &Value, envelope: &str) -> Option<String> {
    doc.pointer(&format!(
        "/components/schemas/{envelope}/properties/pagination"
    ))
    .and_then(component_name)
}

fn error_schema_of(doc: &Value, operation: &Value) -> Option<String> {
    operation["responses"]
        .as_object()?
        .iter()
        .filter(|(status, _)| !status.starts_with('2'))
        .find_map(|(_, response)| component_ref(spec::deref(doc, response)))
}

/// The component name of a body's or response's `application/json` schema `$ref`.
fn component_ref(body: &Value) -> Option<String> {
    component_name(body.pointer("/content/application~1json/schema")?)
}

fn component_name(schema: &Value) -> Option<String> {
    schema
        .get("$ref")?
        .as_str()?
        .strip_prefix("#/components/schemas/")
        .map(str::to_string)
}

fn component<'a>(doc: &'a Value, name: &str) -> Result<&'a Value> {
    doc.pointer(&format!("/components/schemas/{name}"))
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

fn read_response_codes(doc: &Value) -> Result<Vec<ResponseCode>> {
    let catalog = doc
        .get("x-response-codes")
        .and_then(Value::as_object)
        .ok_or_else(|| anyhow!("`x-response-codes` is missing"))?;
    let mut codes: Vec<ResponseCode> = catalog
        .iter()
        .map(|(code, entry)| {
            let meaning = entry["meaning"].as_str().unwrap_or_default().to_string();
            let variant = match entry.get("name").and_then(Value::as_str) {
                Some(name) => name.to_upper_camel_case(),
                None => code_variant(&meaning),
            };
            ResponseCode {
                code: code.clone(),
                variant,
                http_status: entry["http_status"].as_u64().unwrap_or(500) as u16,
                meaning,
            }
        })
        .collect();
    codes.sort_by(|a, b| a.code.cmp(&b.code));
    // Two meanings that start alike ("Account not found: ..." twice) would give one name to two
    // codes: such names carry their code.
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for code in &codes {
        *seen.entry(code.variant.clone()).or_default() += 1;
    }
    for code in &mut codes {
        if seen[&code.variant] > 1 || code.variant.is_empty() {
            code.variant = format!("{}{}", code.variant, code.code);
            if !code.variant.starts_with(|c: char| c.is_ascii_alphabetic()) {
                code.variant = format!("Code{}", code.variant);
            }
        }
    }
    Ok(codes)
}

/// A variant name from a catalog meaning: its first clause, in UpperCamelCase
/// ("Customer not found: credentials ..." -> `CustomerNotFound`).
fn code_variant(meaning: &str) -> String {
    let clause = meaning
        .split([':', '(', ';', ',', '.', '-', '\u{2014}'])
        .next()
        .unwrap_or_default();
    let words: String = clause
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' })
        .collect();
    words.to_upper_camel_case()
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
    fn code_variants_come_from_the_first_clause() {
        for (meaning, expected) in [
            (
                "Customer not found: credentials or session invalid or expired",
                "CustomerNotFound",
            ),
            ("Invalid or expired OTP", "InvalidOrExpiredOtp"),
            (
                "Account not found (check account number)",
                "AccountNotFound",
            ),
            ("Success", "Success"),
        ] {
            assert_eq!(code_variant(meaning), expected);
        }
    }

    #[test]
    fn clashing_meanings_carry_their_codes() {
        let doc = serde_json::json!({"x-response-codes": {
            "06": {"http_status": 404, "meaning": "Account not found (check the number)"},
            "44": {"http_status": 404, "meaning": "Account not found: nothing matches"},
            "41": {"http_status": 401, "meaning": "Unauthenticated", "name": "session_invalid"},
        }});
        let names: Vec<String> = read_response_codes(&doc)
            .unwrap()
            .into_iter()
            .map(|code| code.variant)
            .collect();
        assert_eq!(
            names,
            ["AccountNotFound06", "SessionInvalid", "AccountNotFound44"]
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
