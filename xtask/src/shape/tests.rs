//! The reader's precision on small fixtures, and the rules on the real tree. Each rule's own
//! fixture test (failing on a violation, passing on compliant code) is beside it, in
//! `rules.rs` and `layers.rs`.

use super::facts::Function;
use super::reader::{Kind, SourceFile};
use super::*;

fn file(path: &str, text: &str) -> SourceFile {
    SourceFile::parse(path, text).unwrap()
}

fn paths(file: &SourceFile) -> Vec<String> {
    file.facts
        .paths
        .iter()
        .map(|named| named.path.join("::"))
        .collect()
}

#[test]
fn functions_are_measured_from_the_signature_and_tests_left_out() {
    let source = file(
        "service/src/money/a.rs",
        "/// Doc.\n#[inline]\npub fn short() {\n    let s = \"}\";\n}\n\n\
         impl A {\n    fn method(&self) {\n\n\n    }\n    #[test]\n    fn in_impl() {}\n}\n\
         #[cfg(test)]\nmod tests {\n    fn helper() {}\n}\n#[tokio::test]\nasync fn alone() {}\n\
         trait T {\n    fn provided() {\n    }\n    fn required();\n}\n",
    );
    assert_eq!(
        source.facts.functions,
        [
            Function {
                name: "short".into(),
                line: 3,
                lines: 3
            },
            Function {
                name: "method".into(),
                line: 8,
                lines: 4
            },
            Function {
                name: "provided".into(),
                line: 22,
                lines: 2
            },
        ]
    );
}

/// The text rules stopped at a file's first `#[cfg(test)]`: here, code after a test-only
/// helper is read, and every kind of test-only code is left out wherever it stands.
#[test]
fn code_after_a_test_only_item_is_read_and_test_code_is_not() {
    let source = file(
        "service/src/kernel/store/postgres.rs",
        "#[cfg(test)]\nfn helper() { crate::testkit::a(); }\n\
         fn after() { sqlx::query(\"x\"); }\n\
         #[cfg(all(test, target_os = \"linux\"))]\nuse crate::testkit::b;\n\
         #[cfg(any(test, feature = \"testkit\"))]\nuse crate::testkit::c;\n\
         #[cfg(not(test))]\nuse crate::testkit::d;\n\
         fn g(x: u8) {\n    #[cfg(test)]\n    let y = crate::testkit::e();\n    \
         #[cfg(test)]\n    crate::testkit::f();\n    \
         match x {\n        #[cfg(test)]\n        0 => crate::testkit::g(),\n        _ => {}\n    }\n}\n\
         struct S {\n    #[cfg(test)]\n    t: crate::testkit::H,\n    u: crate::kernel::U,\n}\n\
         impl S {\n    #[cfg(test)]\n    const C: crate::testkit::I = 0;\n}\n",
    );
    let code: Vec<String> = paths(&source)
        .into_iter()
        .filter(|path| path.starts_with("crate::") || path.starts_with("sqlx::"))
        .collect();
    assert_eq!(
        code,
        [
            "sqlx::query",
            "crate::testkit::c",
            "crate::testkit::d",
            "crate::kernel::U",
        ]
    );
}

#[test]
fn a_whole_file_under_cfg_test_is_test_only() {
    let source = file(
        "service/src/money/t.rs",
        "#![cfg(test)]\nfn f() { sqlx::x(); }",
    );
    assert!(source.test_only && source.facts.paths.is_empty());
    assert!(!source.shipped());
}

#[test]
fn paths_are_read_in_use_trees_macros_and_attributes_and_resolved() {
    let source = file(
        "service/src/platform/team.rs",
        "use crate::kernel::{clock::Clock, store::{self, Tx}};\n\
         use super::sessions as s;\nuse crate::money;\nmod inner { use super::super::super::http::x; }\n\
         fn f() {\n    crate::money::nuban::check();\n    s::revoke();\n    money::fees::f();\n    \
         store::begin();\n    format!(\"{}\", crate::outbox::events::x());\n}\n\
         macro_rules! m {\n    () => { $crate::testkit::x(); super::testkit::y(); crate::error::z(); };\n}\n\
         #[derive(sqlx::FromRow)]\n#[serde(rename = \"processing\")]\nstruct R;\n\
         /// crate::http::prose\nfn g() {}\n",
    );
    let named = paths(&source);
    for expected in [
        "crate::kernel::clock::Clock",
        "crate::kernel::store",
        "crate::kernel::store::Tx",
        "crate::platform::sessions",
        "crate::money",
        "crate::http::x",
        "crate::money::nuban::check",
        "crate::platform::sessions::revoke",
        "crate::money::fees::f",
        "crate::kernel::store::begin",
        "crate::outbox::events::x",
        "sqlx::FromRow",
        "crate::error::z",
    ] {
        assert!(
            named.contains(&expected.to_owned()),
            "{expected} in {named:?}"
        );
    }
    assert!(
        !named
            .iter()
            .any(|p| p.contains("testkit") || p.contains("prose")),
        "{named:?}"
    );
    let strings: Vec<&str> = source
        .facts
        .strings
        .iter()
        .map(|(_, s)| s.as_str())
        .collect();
    assert_eq!(
        strings,
        ["{}", "processing"],
        "an attribute's strings are read, prose is not"
    );
}

#[test]
fn files_declared_by_a_test_only_module_are_test_only() {
    let mut files = vec![
        file(
            "xtask/src/lint/mod.rs",
            "#[cfg(test)]\nmod tests;\nmod rules;\n",
        ),
        file("xtask/src/lint/tests.rs", "fn long() {}"),
        file("xtask/src/lint/tests/more.rs", "fn long() {}"),
        file("xtask/src/lint/rules.rs", "fn f() {}"),
        file("xtask/src/main.rs", "mod a { #[cfg(test)] mod b; }"),
        file("xtask/src/a/b.rs", ""),
    ];
    reader::mark_test_modules(&mut files);
    let test_only: Vec<&str> = files
        .iter()
        .filter(|file| file.test_only)
        .map(|file| file.path.as_str())
        .collect();
    assert_eq!(
        test_only,
        [
            "xtask/src/lint/tests.rs",
            "xtask/src/lint/tests/more.rs",
            "xtask/src/a/b.rs"
        ]
    );
}

#[test]
fn files_are_placed_in_their_crate_target_and_module() {
    let placed = |path: &str| {
        let file = file(path, "");
        (file.krate.clone(), file.kind, file.module_name())
    };
    let s = |text: &str| text.to_owned();
    assert_eq!(
        placed("service/src/lib.rs"),
        (s("service"), Kind::Src, s(""))
    );
    assert_eq!(
        placed("service/src/money/mod.rs"),
        (s("service"), Kind::Src, s("money"))
    );
    assert_eq!(
        placed("service/src/money/transfers/status.rs"),
        (s("service"), Kind::Src, s("money::transfers::status"))
    );
    assert_eq!(
        placed("service/src/bin/kobo-provider.rs"),
        (s("service"), Kind::Src, s(""))
    );
    assert_eq!(
        placed("service/tests/money/main.rs"),
        (s("service"), Kind::Tests, s(""))
    );
    assert_eq!(
        placed("service/tests/money/dashboard.rs"),
        (s("service"), Kind::Tests, s("dashboard"))
    );
    assert_eq!(
        placed("service/build.rs"),
        (s("service"), Kind::Build, s(""))
    );
    let generated = file(
        "generated-client/src/generated.rs",
        "// Generated by `cargo xtask codegen` from spec/openapi.yaml. Do not edit.\n",
    );
    assert!(generated.generated && !rules::hand_written(&generated));
}

fn workspace() -> Vec<SourceFile> {
    reader::read_workspace(&crate::spec::workspace_root()).unwrap()
}

/// The tidy rules, on the real tree: functions short enough to read at once (split along
/// their decisions: read the inputs, decide, write), no file too big to live in, the layers
/// of `service/src` and no import circle in any crate, SQL only in the stores, the clock
/// injected, idempotency in one wrapper (`platform::idempotency::Keyed::run`), and transfer
/// statuses named through `TransferStatus`, spelt once in `money/transfers/status.rs`.
#[test]
fn workspace_keeps_the_tidy_rules() {
    let files = workspace();
    let violations = measure(&files).violations();
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

/// Every crate is read, and every rule reads something of the real tree.
#[test]
fn every_crate_is_read_and_every_rule_reads_files() {
    let files = workspace();
    let members = reader::members(&crate::spec::workspace_root()).unwrap();
    for member in &members {
        assert!(
            files.iter().any(|file| &file.krate == member),
            "no file of {member} was read"
        );
    }
    for outcome in measure(&files).outcomes {
        assert!(outcome.files > 0, "{} reads no file", outcome.rule.name);
    }
    for krate in ["store", "store-sqlite", "store-postgres", "service", "load"] {
        let read = files
            .iter()
            .filter(|file| file.krate == krate && rules::hand_written(file))
            .count();
        assert!(read > 0, "{krate}'s code is under the length rules");
    }
}

#[test]
fn every_layer_has_files() {
    let files = workspace();
    for (layer, _) in layers::LAYERS {
        assert!(
            files
                .iter()
                .any(|file| rules::service_module(file) && file.module[0] == *layer),
            "LAYERS names {layer}, which has no file"
        );
    }
}
