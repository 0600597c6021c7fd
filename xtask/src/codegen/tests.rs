//! The generator's tests: golden snapshots of what it makes from its own fixture spec, the
//! write/check cycle on a scratch tree, and the real check of the committed tree.
//!
//! Bless changed snapshots with `INSTA_UPDATE=always cargo test -p xtask codegen` (or
//! `cargo insta review`), then read the diff.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::{apply, header, GeneratedFile, Mode};
use crate::spec::KOBO;

fn generate(text: &str) -> anyhow::Result<Vec<GeneratedFile>> {
    super::generate(&KOBO, text)
}
use crate::spec;

const FIXTURE: &str = include_str!("../../tests/fixtures/codegen/fixture.yaml");

fn fixture_files() -> Vec<GeneratedFile> {
    generate(FIXTURE).expect("the fixture generates")
}

/// A scratch folder under the target directory, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = spec::workspace_root()
        .join("target")
        .join("codegen-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `doc` with one more (optional) property on a component schema, as spec text.
fn with_added_field(doc: &Value, component: &str) -> String {
    let mut doc = doc.clone();
    doc["components"]["schemas"][component]["properties"]["added_in_a_test"] =
        json!({"type": "string"});
    serde_json::to_string_pretty(&doc).unwrap()
}

fn paths(files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .map(|path| path.display().to_string())
        .collect()
}

#[test]
fn the_fixture_generates_the_golden_files() {
    let files = fixture_files();
    let names: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
    assert_eq!(
        names,
        [
            "generated-client/src/generated.rs",
            "generated-server/src/generated/api.rs",
            "generated-server/src/generated/json_api.rs",
            "generated-server/src/generated/models.rs",
            "generated-server/src/generated/response_code.rs",
            "generated-server/src/generated/router.rs",
            "generated-server/src/generated/schemas.rs",
            "generated-server/src/generated/spec.rs",
        ]
    );
    for file in &files {
        let name = file
            .path
            .to_str()
            .unwrap()
            .trim_end_matches(".rs")
            .replace(['/', '-'], "_");
        insta::assert_snapshot!(name, &file.contents);
    }
}

#[test]
fn generation_is_deterministic_and_every_file_has_the_header() {
    let first = fixture_files();
    assert_eq!(first, fixture_files());
    for file in &first {
        assert!(
            file.contents.starts_with(&format!("{}\n", header(&KOBO))),
            "{}",
            file.path.display()
        );
        assert!(file.contents.ends_with("}\n") || file.contents.ends_with(";\n"));
    }
}

/// Asserts that the trait (`api.rs`) and the client each have exactly one method per operation.
fn assert_one_method_per_operation(api: &str, client: &str, operations: &[String]) {
    for operation in operations {
        assert_eq!(
            api.matches(&format!("    fn {operation}(\n")).count(),
            1,
            "trait method {operation}"
        );
        // `pub fn name(&self)`, possibly wrapped after the parenthesis.
        let client_methods = client
            .match_indices(&format!("    pub fn {operation}("))
            .filter(|(at, found)| client[at + found.len()..].trim_start().starts_with("&self"))
            .count();
        assert_eq!(client_methods, 1, "client method {operation}");
    }
    // No other trait method takes a request context: exactly one per operation.
    assert_eq!(
        api.matches("ctx: RequestContext<").count(),
        operations.len()
    );
}

fn operation_ids(doc: &Value) -> Vec<String> {
    doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|item| item["post"]["operationId"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_trait_and_the_client_have_one_method_per_operation() {
    let files = fixture_files();
    let text = |path: &str| {
        &files
            .iter()
            .find(|f| f.path == Path::new(path))
            .unwrap()
            .contents
    };
    let operations = operation_ids(&spec::parse(FIXTURE).unwrap());
    assert_eq!(operations.len(), 4);
    assert_one_method_per_operation(
        text("generated-server/src/generated/api.rs"),
        text("generated-client/src/generated.rs"),
        &operations,
    );
}

#[test]
fn the_committed_trait_and_client_have_one_method_per_operation() {
    let root = spec::workspace_root();
    let read = |path: &str| std::fs::read_to_string(root.join(path)).unwrap();
    let operations = operation_ids(&spec::load(&spec::spec_path()).unwrap());
    assert_one_method_per_operation(
        &read("generated-server/src/generated/api.rs"),
        &read("generated-client/src/generated.rs"),
        &operations,
    );
}

#[test]
fn check_mode_names_every_stale_file_after_a_spec_edit() {
    let root = scratch("stale");
    let text = std::fs::read_to_string(spec::spec_path()).expect("spec/openapi.yaml exists");
    let doc = spec::parse(&text).unwrap();
    apply(&root, &KOBO, &generate(&text).unwrap(), Mode::Write).unwrap();
    let fresh = apply(&root, &KOBO, &generate(&text).unwrap(), Mode::Check).unwrap();
    assert!(fresh.changed.is_empty() && fresh.removed.is_empty());

    let edited = with_added_field(&doc, "Bank");
    let report = apply(&root, &KOBO, &generate(&edited).unwrap(), Mode::Check).unwrap();
    let changed = paths(&report.changed);
    for file in [
        "generated-client/src/generated.rs",
        "generated-server/src/generated/models.rs",
        "generated-server/src/generated/schemas.rs",
        "generated-server/src/generated/spec.rs",
    ] {
        assert!(changed.contains(&file.to_string()), "{file} in {changed:?}");
    }
    let message = format!("{:#}", report.into_result().unwrap_err());
    assert!(
        message.contains(
            "`generated-server/src/generated/models.rs` is not up to date: run `cargo xtask \
             codegen` and commit the result"
        ),
        "{message}"
    );
    // Check mode wrote nothing.
    let again = apply(&root, &KOBO, &generate(&text).unwrap(), Mode::Check).unwrap();
    assert!(again.changed.is_empty());
}

#[test]
fn a_crlf_copy_of_a_generated_file_passes_the_check() {
    let root = scratch("crlf");
    let files = fixture_files();
    apply(&root, &KOBO, &files, Mode::Write).unwrap();
    let path = root.join("generated-server/src/generated/api.rs");
    let lf = std::fs::read_to_string(&path).unwrap();
    let crlf = lf.replace('\n', "\r\n");
    std::fs::write(&path, &crlf).unwrap();

    let report = apply(&root, &KOBO, &files, Mode::Check).unwrap();
    assert!(report.changed.is_empty(), "{:?}", report.changed);
    // Write mode leaves it alone too.
    let report = apply(&root, &KOBO, &files, Mode::Write).unwrap();
    assert!(report.changed.is_empty(), "{:?}", report.changed);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), crlf);

    // A difference other than line endings is still one.
    std::fs::write(
        &path,
        crlf.replace("pub enum Operation", "pub enum Operations"),
    )
    .unwrap();
    let report = apply(&root, &KOBO, &files, Mode::Check).unwrap();
    assert_eq!(
        paths(&report.changed),
        ["generated-server/src/generated/api.rs"]
    );
}

#[test]
fn a_crlf_spec_generates_the_same_files() {
    let crlf = FIXTURE.replace('\n', "\r\n");
    assert_ne!(crlf, FIXTURE);
    assert_eq!(generate(&crlf).unwrap(), fixture_files());
}

#[test]
fn write_mode_removes_files_the_spec_no_longer_makes() {
    let root = scratch("orphans");
    let files = fixture_files();
    apply(&root, &KOBO, &files, Mode::Write).unwrap();
    let orphan = root.join("generated-server/src/generated/retired.rs");
    std::fs::write(&orphan, "// gone\n").unwrap();
    let report = apply(&root, &KOBO, &files, Mode::Check).unwrap();
    assert_eq!(
        paths(&report.removed),
        ["generated-server/src/generated/retired.rs"]
    );
    assert!(orphan.exists());
    apply(&root, &KOBO, &files, Mode::Write).unwrap();
    assert!(!orphan.exists());
    assert!(apply(&root, &KOBO, &files, Mode::Check)
        .unwrap()
        .into_result()
        .is_ok());
}

#[test]
fn limits_are_reported_before_progenitor_runs() {
    // A second success type makes progenitor panic; the precheck names the operation instead.
    let mut doc = spec::parse(FIXTURE).unwrap();
    let responses = &mut doc["paths"]["/v1/auth/api/generate_token"]["post"]["responses"];
    responses["201"] = responses["200"].clone();
    let error = generate(&serde_json::to_string(&doc).unwrap()).unwrap_err();
    assert!(
        format!("{error:#}").contains(
            "[success-response] operation `generate_token`: has success responses [\"200\", \"201\"]"
        ),
        "{error:#}"
    );
}

#[test]
fn default_error_responses_reach_the_client_as_error_ranges() {
    // progenitor counts `default` as a success response; the client view turns it into 4XX/5XX.
    let doc = spec::parse(FIXTURE).unwrap();
    let view = super::client::client_view(&doc);
    let responses = view["paths"]["/v1/auth/api/generate_token"]["post"]["responses"]
        .as_object()
        .unwrap();
    let statuses: Vec<&String> = responses.keys().collect();
    assert_eq!(statuses, ["200", "4XX", "5XX"]);
    assert_eq!(
        responses["4XX"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/ErrorEnvelope"
    );
}

/// The fixture with `TransferStatus` open: `Transfer.status` is its wrapper `OpenTransferStatus`,
/// a plain string naming it by `x-known-values` (`known` false: without it), as spec text.
fn with_open_transfer_status(known: bool) -> String {
    let mut doc = spec::parse(FIXTURE).unwrap();
    let schemas = &mut doc["components"]["schemas"];
    schemas["TransferStatus"]["x-extensible-enum"] = json!(true);
    let mut wrapper = json!({
        "type": "string",
        "x-extensible-enum": true,
        "description": "A `TransferStatus`: a plain string, one of the values known today \
            (`pending`, `success`, `failed`: `TransferStatus` names them) or a value added later.",
    });
    if known {
        wrapper["x-known-values"] = json!("#/components/schemas/TransferStatus");
    }
    schemas["OpenTransferStatus"] = wrapper;
    schemas["Transfer"]["properties"]["status"] =
        json!({"$ref": "#/components/schemas/OpenTransferStatus"});
    serde_json::to_string_pretty(&doc).unwrap()
}

/// The file of `files` at `path`.
fn contents<'f>(files: &'f [GeneratedFile], path: &str) -> &'f str {
    &files
        .iter()
        .find(|file| file.path == Path::new(path))
        .unwrap_or_else(|| panic!("no {path}"))
        .contents
}

/// An open enum's wrapper is a plain string for partners' generators; the Rust models and client
/// keep the enum its `x-known-values` names (the server sends only the values it knows).
#[test]
fn an_open_enums_wrapper_is_typed_as_the_enum_it_names() {
    let files = generate(&with_open_transfer_status(true)).unwrap();
    for path in [
        "generated-server/src/generated/models.rs",
        "generated-client/src/generated.rs",
    ] {
        let code = contents(&files, path);
        assert!(code.contains("pub status: TransferStatus,"), "{path}");
        assert!(!code.contains("pub status: OpenTransferStatus,"), "{path}");
        // The wrapper's own component is a copy of the enum.
        assert!(code.contains("pub enum OpenTransferStatus {"), "{path}");
    }
    // The fixture's models are otherwise the same.
    let before = fixture_files();
    let models = "generated-server/src/generated/models.rs";
    let added: Vec<&str> = contents(&files, models)
        .lines()
        .filter(|line| !contents(&before, models).contains(line))
        .filter(|line| !line.contains("OpenTransferStatus"))
        .collect();
    assert!(added.is_empty(), "{added:#?}");

    // Without `x-known-values` the wrapper would be a `String` newtype: the test above can fail.
    let text = with_open_transfer_status(false);
    let mut doc = spec::parse(&text).unwrap();
    let view = super::client::client_view(&doc);
    assert_eq!(
        view["components"]["schemas"]["Transfer"]["properties"]["status"]["$ref"],
        "#/components/schemas/OpenTransferStatus"
    );
    // And the generators refuse an `x-known-values` that names no open enum (`known-values`).
    doc["components"]["schemas"]["OpenTransferStatus"]["x-known-values"] =
        json!("#/components/schemas/AccountStatus");
    let error = generate(&serde_json::to_string(&doc).unwrap()).unwrap_err();
    assert!(
        format!("{error:#}").contains(
            "[known-values] #/components/schemas/OpenTransferStatus: `x-known-values: \"#/components/schemas/AccountStatus\"` must name an open enum"
        ),
        "{error:#}"
    );
}

/// The committed generated code is what each committed document gives: plain `cargo test`
/// catches a stale tree, like `cargo xtask codegen --check` in CI.
#[test]
fn generated_code_is_up_to_date() {
    for target in spec::TARGETS {
        let text = std::fs::read_to_string(target.path()).expect("the document exists");
        let files = super::generate(target, &text).unwrap();
        let report = apply(&spec::workspace_root(), target, &files, Mode::Check).unwrap();
        if let Err(error) = report.into_result() {
            panic!("{error:#}");
        }
    }
}

/// The second document's files go to its own crates, each under its own header: nothing of
/// Kobo's document leaks into the provider's.
#[test]
fn the_provider_document_generates_its_own_crates() {
    let text = std::fs::read_to_string(spec::PROVIDER.path()).unwrap();
    let files = super::generate(&spec::PROVIDER, &text).unwrap();
    let header = header(&spec::PROVIDER);
    for file in &files {
        let path = file.path.to_string_lossy();
        assert!(
            path.starts_with("provider-server/src/generated/")
                || path == "provider-client/src/generated.rs",
            "{path}"
        );
        assert!(file.contents.starts_with(&format!("{header}\n")), "{path}");
    }
    let codes = files
        .iter()
        .find(|file| file.path.ends_with("response_code.rs"))
        .unwrap();
    // The router's roles come from the document's catalog: NIP's codes, not Kobo's.
    for constant in [
        "pub(crate) const INVALID_REQUEST: Self = Self::InvalidTransaction;",
        "pub(crate) const UNAUTHENTICATED: Self = Self::SecurityViolation;",
        "pub(crate) const UNKNOWN_OPERATION: Self = Self::WrongMethodCall;",
        "pub(crate) const METHOD_NOT_ALLOWED: Self = Self::WrongMethodCall;",
    ] {
        assert!(codes.contents.contains(constant), "{constant}");
    }
}

#[test]
fn embedded_text_arrives_byte_for_byte() {
    for text in [
        "plain",
        "quote \" and \"# and \"## inside",
        "crlf\r\nlines\r\n",
    ] {
        let literal: syn::LitStr = syn::parse2(super::raw_string_literal(text)).unwrap();
        assert_eq!(literal.value(), text);
    }
}
