//! Tidy checks that read `service/src` as text, so the architecture stays as ARCHITECTURE.md
//! says without anyone remembering it:
//!
//! - the layers: a module uses only layers inside its own (`kernel` → `datastore`, `error` → `outbox`,
//!   `provider` → `platform` → `money` → `operator`, `workers` → `http` → `cli` and
//!   `simulator` (`kobo-provider`), and `testkit` above all);
//! - no circle of imports between files, inside a layer too;
//! - no `Utc::now()` outside `kernel/clock.rs`: time comes from the injected `Clock`;
//! - no `sqlx` outside `kernel`, `datastore`, `testkit` and `simulator` (its own file): every
//!   statement of the bank lives in the datastore, one module per resource, and the domain
//!   calls it;
//! - the crates each layer may use: the kernel nothing of `generated_server`; the domain
//!   (`error`, `outbox`, `provider`, `platform`, `money`, `operator`, `workers`) only the
//!   spec's data from it (`models`, `ResponseCode`, `Operation`, `Permission`, `TokenFamily`,
//!   the spec's text),
//!   never its runtime (`ApiError`, `RequestContext`, `Page`, the router, the server); `axum`
//!   only at the edge (`http`, `cli`, `testkit`, `simulator`).
//!
//! Each check is a function over `(module path, source)` pairs, exercised below on small
//! made-up trees as well as on the real one, so a check that could never fail would show.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers from the innermost; a module may use its own layer and those of lower rank.
const LAYERS: &[(&str, u8)] = &[
    ("kernel", 0),
    ("datastore", 1),
    ("error", 1),
    ("outbox", 2),
    ("provider", 2),
    ("platform", 3),
    ("money", 4),
    ("operator", 5),
    ("workers", 5),
    ("bench", 5),
    ("http", 6),
    ("cli", 7),
    // `kobo-provider`, a program of its own: the provider's edge, over the sandbox's tables.
    ("simulator", 7),
    ("testkit", 8),
];

/// The layers that may name `sqlx`: the kernel's store, the datastore, the test kit, and the
/// simulator (its own file of transfers and notifications, none of the bank's data).
const SQL_LAYERS: &[&str] = &["kernel", "datastore", "testkit", "simulator"];

/// The only file that may read the system clock.
const CLOCK_FILE: &str = "kernel::clock";

/// Every `.rs` file under `service/src` as `(module path, source)`: `platform/team.rs` is
/// `platform::team`, `outbox/mod.rs` is `outbox`. `lib.rs`, `main.rs` and `bin/*.rs` are the
/// roots and are left out (they only declare, re-export and call `cli` or `simulator`).
fn source_tree() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    files.sort();
    files
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("service/src is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            collect(root, &path, files);
            continue;
        }
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let relative = path.strip_prefix(root).unwrap().with_extension("");
        let mut parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.last().map(String::as_str) == Some("mod") {
            parts.pop();
        }
        let module = parts.join("::");
        if module == "lib" || module == "main" || module.starts_with("bin::") {
            continue;
        }
        files.push((module, std::fs::read_to_string(&path).unwrap()));
    }
}

/// The code of a file without its `#[cfg(test)]` tail and without comments (a path named in
/// a doc comment is no import).
fn code_of(source: &str) -> String {
    let source = match source.find("#[cfg(test)]") {
        Some(at) => &source[..at],
        None => source,
    };
    source
        .lines()
        .map(|line| match line.trim_start().starts_with("//") {
            true => "",
            false => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::...` path a file names, in `use` trees (`use crate::a::{b, c::d};`) and
/// inline (`crate::a::b::f()`), each as its list of segments.
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let preceded_by_dollar = at > 0 && rest.as_bytes()[at - 1] == b'$';
        let tail = &rest[at + "crate::".len()..];
        if !preceded_by_dollar {
            expand(tail, Vec::new(), &mut paths);
        }
        rest = tail;
    }
    paths
}

/// Every `krate::...` path a file names (`generated_server::models::Account`, the items of
/// `use generated_server::{ApiError, models};`), each as its list of segments after the crate.
fn paths_into(code: &str, krate: &str) -> Vec<Vec<String>> {
    let root = format!("{krate}::");
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(&root) {
        let preceded_by_name = at > 0 && {
            let before = rest.as_bytes()[at - 1];
            before.is_ascii_alphanumeric() || before == b'_' || before == b':'
        };
        let tail = &rest[at + root.len()..];
        if !preceded_by_name {
            expand(tail, Vec::new(), &mut paths);
        }
        rest = tail;
    }
    paths
}

/// The layers that are the HTTP edge: they may use the router's runtime and `axum`.
const EDGE: &[&str] = &["http", "cli", "testkit", "simulator"];

/// What the layers inside the edge may use of `generated_server`: the spec's data.
const SPEC_DATA: &[&str] = &[
    "models",
    "ResponseCode",
    "Operation",
    "Permission",
    "TokenFamily",
    "OPENAPI_JSON",
];

/// Crates used where their layer may not: `generated_server` in the kernel, its runtime
/// inside the edge, `axum` inside the edge.
fn crate_problems(files: &[(String, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    for (module, source) in files {
        let top = module.split("::").next().unwrap_or_default();
        if EDGE.contains(&top) {
            continue;
        }
        let code = code_of(source);
        for path in paths_into(&code, "generated_server") {
            let name = path.first().map(String::as_str).unwrap_or("");
            if top == "kernel" {
                problems.push(format!(
                    "{module} uses generated_server::{name}: the kernel knows nothing of the API"
                ));
            } else if !SPEC_DATA.contains(&name) {
                problems.push(format!(
                    "{module} uses generated_server::{name}, the HTTP layer's: only http may"
                ));
            }
        }
        if !paths_into(&code, "axum").is_empty() {
            problems.push(format!("{module} uses axum: only the HTTP edge may"));
        }
    }
    problems
}

/// Reads one path (or use tree) at the start of `text` after the segments in `prefix`.
fn expand(text: &str, prefix: Vec<String>, paths: &mut Vec<Vec<String>>) {
    let text = text.trim_start();
    if let Some(inner) = text.strip_prefix('{') {
        for item in split_group(inner) {
            expand(item, prefix.clone(), paths);
        }
        return;
    }
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let segment = &text[..end];
    let mut path = prefix;
    if !segment.is_empty() && segment != "self" {
        path.push(segment.to_owned());
    }
    match text[end..].strip_prefix("::") {
        Some(more) => expand(more, path, paths),
        None => paths.push(path),
    }
}

/// The comma-separated items of a `{...}` group whose opening brace is already consumed.
fn split_group(text: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&text[start..i]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items
}

/// The module a path lands in: its longest prefix that is a file of the tree.
fn module_of(path: &[String], modules: &BTreeSet<String>) -> Option<String> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|candidate| modules.contains(candidate))
}

fn layer_of(module: &str) -> Option<u8> {
    let top = module.split("::").next().unwrap_or(module);
    LAYERS
        .iter()
        .find(|(name, _)| *name == top)
        .map(|(_, rank)| *rank)
}

/// The file-to-file imports of the tree, and a problem for each path that names no file.
fn imports(files: &[(String, String)]) -> (BTreeMap<String, BTreeSet<String>>, Vec<String>) {
    let modules: BTreeSet<String> = files.iter().map(|(module, _)| module.clone()).collect();
    let mut graph = BTreeMap::new();
    let mut problems = Vec::new();
    for (module, source) in files {
        let used: &mut BTreeSet<String> = graph.entry(module.clone()).or_default();
        for path in crate_paths(&code_of(source)) {
            match module_of(&path, &modules) {
                Some(target) if &target != module => {
                    used.insert(target);
                }
                Some(_) => {}
                None => problems.push(format!(
                    "{module} names crate::{}: name a module's full path, not a re-export \
                     of the crate root",
                    path.join("::")
                )),
            }
        }
    }
    (graph, problems)
}

/// Imports that go outward: a module using a layer of higher rank, or one of the same rank
/// that is not its own (`operator` and `workers` are beside each other).
fn layer_problems(files: &[(String, String)]) -> Vec<String> {
    let (graph, mut problems) = imports(files);
    for (module, used) in &graph {
        let Some(rank) = layer_of(module) else {
            problems.push(format!(
                "{module} is in no layer: add it to LAYERS and ARCHITECTURE.md"
            ));
            continue;
        };
        let own_top = module.split("::").next().unwrap_or_default();
        for target in used {
            let target_top = target.split("::").next().unwrap_or_default();
            let target_rank = layer_of(target).unwrap_or(u8::MAX);
            if target_top != own_top && target_rank >= rank {
                problems.push(format!("{module} (an inner layer) imports {target}"));
            }
        }
    }
    problems
}

/// Circles of imports between files: each reported once, as the path that closes it.
fn cycle_problems(files: &[(String, String)]) -> Vec<String> {
    let (graph, _) = imports(files);
    let mut problems = Vec::new();
    let mut done = BTreeSet::new();
    for start in graph.keys() {
        let mut stack = vec![start.clone()];
        visit(&graph, &mut stack, &mut done, &mut problems);
    }
    problems
}

fn visit(
    graph: &BTreeMap<String, BTreeSet<String>>,
    stack: &mut Vec<String>,
    done: &mut BTreeSet<String>,
    problems: &mut Vec<String>,
) {
    let current = stack.last().unwrap().clone();
    if done.contains(&current) {
        return;
    }
    for next in graph.get(&current).into_iter().flatten() {
        if let Some(at) = stack.iter().position(|module| module == next) {
            let mut circle = stack[at..].to_vec();
            circle.push(next.clone());
            problems.push(format!("import circle: {}", circle.join(" -> ")));
            continue;
        }
        stack.push(next.clone());
        visit(graph, stack, done, problems);
        stack.pop();
    }
    done.insert(current);
}

/// Files other than the clock that read the system clock.
fn clock_problems(files: &[(String, String)]) -> Vec<String> {
    files
        .iter()
        .filter(|(module, source)| module != CLOCK_FILE && code_of(source).contains("Utc::now()"))
        .map(|(module, _)| format!("{module} calls Utc::now(): take the time from a Clock"))
        .collect()
}

/// Files outside [`SQL_LAYERS`] that name `sqlx` (a statement, a row, a pool): the domain
/// calls the datastore instead.
fn sql_problems(files: &[(String, String)]) -> Vec<String> {
    files
        .iter()
        .filter(|(module, source)| {
            let top = module.split("::").next().unwrap_or_default();
            !SQL_LAYERS.contains(&top) && code_of(source).contains("sqlx::")
        })
        .map(|(module, _)| format!("{module} names sqlx: its statements belong in the datastore"))
        .collect()
}

fn tree(files: &[(&str, &str)]) -> Vec<(String, String)> {
    files
        .iter()
        .map(|(module, source)| (module.to_string(), source.to_string()))
        .collect()
}

#[test]
fn service_src_keeps_its_layers() {
    let problems = layer_problems(&source_tree());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn each_layer_uses_only_the_crates_it_may() {
    let problems = crate_problems(&source_tree());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn crates_used_out_of_their_layer_are_reported() {
    let files = tree(&[
        ("kernel::paging", "use generated_server::models;\nfn f() {}"),
        (
            "money::transfers",
            "use generated_server::{models, ApiError, ResponseCode};\n\
             fn f(ctx: generated_server::RequestContext<()>) {}",
        ),
        (
            "platform::team",
            "use generated_server::{models, Permission, TokenFamily};",
        ),
        ("outbox::webhooks", "use axum::Router;"),
        (
            "http::api",
            "use generated_server::{Api, ApiError, RequestContext};\nuse axum::Router;",
        ),
        (
            "money::fees",
            "// generated_server::ApiError in a comment is no use\nfn f() {}",
        ),
    ]);
    assert_eq!(
        crate_problems(&files),
        vec![
            "kernel::paging uses generated_server::models: the kernel knows nothing of the API",
            "money::transfers uses generated_server::ApiError, the HTTP layer's: only http may",
            "money::transfers uses generated_server::RequestContext, the HTTP layer's: only http may",
            "outbox::webhooks uses axum: only the HTTP edge may",
        ]
    );
}

#[test]
fn sql_lives_in_the_datastore() {
    let problems = sql_problems(&source_tree());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn sql_outside_the_datastore_is_reported() {
    let files = tree(&[
        (
            "datastore::accounts",
            "fn f() { sqlx::query(\"SELECT 1\"); }",
        ),
        ("kernel::store", "use sqlx::AnyPool;"),
        ("money::ledger", "fn f() { sqlx::query(\"SELECT 1\"); }"),
        (
            "money::fees",
            "// sqlx::query in a comment is no statement\nfn f() {}",
        ),
        ("platform::team", "fn f() {}"),
    ]);
    assert_eq!(
        sql_problems(&files),
        vec!["money::ledger names sqlx: its statements belong in the datastore"]
    );
}

/// What no code of the workspace may name any more: `sqlx::Any` ran one SQL for both stores
/// (issue 30); each store now has its own crate, types and checked queries.
const ANY_DRIVER: &[&str] = &[
    "sqlx::Any",
    "sqlx::any",
    "AnyPool",
    "AnyRow",
    "AnyConnection",
];

/// Which store a statement runs on is the stores' business: nothing but `kernel::store` and
/// the test kit (which checks both) branches on it.
const BACKEND_FILES: &[&str] = &["kernel::store", "testkit"];

fn store_problems(files: &[(String, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    for (module, source) in files {
        let code = code_of(source);
        for name in ANY_DRIVER {
            if code.contains(name) {
                problems.push(format!(
                    "{module} names {name}: each store has its own driver"
                ));
            }
        }
        let allowed = BACKEND_FILES
            .iter()
            .any(|file| module == file || module.starts_with(&format!("{file}::")));
        if !allowed && code.contains("Backend::") {
            problems.push(format!("{module} branches on the store (Backend::)"));
        }
    }
    problems
}

/// Every Rust file of the workspace's crates, named by its path.
fn workspace_tree() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for krate in [
        "service",
        "store",
        "store-sqlite",
        "store-postgres",
        "load",
        "conformance",
    ] {
        for dir in ["src", "tests"] {
            let dir = root.join(krate).join(dir);
            if dir.is_dir() {
                collect_paths(&dir, &format!("{krate}/"), &mut files);
            }
        }
    }
    files
}

fn collect_paths(dir: &Path, prefix: &str, files: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("a readable folder") {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            collect_paths(&path, &format!("{prefix}{name}/"), files);
        } else if name.ends_with(".rs") {
            let source = std::fs::read_to_string(&path).expect("a readable file");
            files.push((format!("{prefix}{name}"), source));
        }
    }
}

#[test]
fn no_store_goes_through_sqlx_any() {
    let files = workspace_tree();
    assert!(files.len() > 100, "the workspace's files were found");
    let mut problems: Vec<String> = store_problems(&files)
        .into_iter()
        .filter(|problem| problem.contains("names"))
        .collect();
    // Backend branches: in service/src, by module.
    problems.extend(
        store_problems(&source_tree())
            .into_iter()
            .filter(|problem| problem.contains("branches")),
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_any_driver_and_store_branches_are_reported() {
    let files = tree(&[
        (
            "kernel::store",
            "fn f(b: Backend) { match b { Backend::Sqlite => {} } }",
        ),
        ("money::ledger", "use sqlx::AnyPool;"),
        ("platform::team", "fn f() { if b == Backend::Postgres {} }"),
        (
            "datastore::accounts",
            "// sqlx::Any in a comment\nfn f() {}",
        ),
    ]);
    assert_eq!(
        store_problems(&files),
        vec![
            "money::ledger names sqlx::Any: each store has its own driver",
            "money::ledger names AnyPool: each store has its own driver",
            "platform::team branches on the store (Backend::)",
        ]
    );
}

#[test]
fn service_src_has_no_import_circle() {
    let problems = cycle_problems(&source_tree());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn only_the_clock_reads_the_system_time() {
    let problems = clock_problems(&source_tree());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_layer_is_in_the_tree() {
    let tops: BTreeSet<String> = source_tree()
        .into_iter()
        .map(|(module, _)| module.split("::").next().unwrap().to_owned())
        .collect();
    for (layer, _) in LAYERS {
        assert!(
            tops.contains(*layer),
            "LAYERS names {layer}, which has no file"
        );
    }
}

#[test]
fn use_trees_and_inline_paths_are_all_read() {
    let code = "use crate::kernel::{clock::Clock, store::{self, Tx}};\n\
                use crate::platform::team;\n\
                fn f() { crate::money::nuban::check(); $crate::testkit::x(); }";
    let paths: Vec<String> = crate_paths(code).iter().map(|p| p.join("::")).collect();
    assert_eq!(
        paths,
        [
            "kernel::clock::Clock",
            "kernel::store",
            "kernel::store::Tx",
            "platform::team",
            "money::nuban::check",
        ]
    );
    // Comments and the test module are not code.
    assert!(crate_paths(&code_of("// crate::http::x\n#[cfg(test)]\nuse crate::cli;")).is_empty());
}

#[test]
fn an_inner_layer_importing_an_outer_one_is_reported() {
    let files = tree(&[
        ("kernel::store", "use crate::platform::team::Invitee;"),
        ("platform::team", "use crate::kernel::store::Tx;"),
        ("operator::businesses", "use crate::workers::Workers;"),
        ("workers", ""),
        ("http", "use crate::operator::businesses;"),
    ]);
    assert_eq!(
        layer_problems(&files),
        [
            "kernel::store (an inner layer) imports platform::team",
            "operator::businesses (an inner layer) imports workers",
        ]
    );
}

#[test]
fn a_circle_inside_a_layer_is_reported() {
    let files = tree(&[
        (
            "platform::identity",
            "use crate::platform::team::member_view;",
        ),
        ("platform::team", "use crate::platform::sessions::revoke;"),
        (
            "platform::sessions",
            "fn f() { crate::platform::identity::login(); }",
        ),
        ("kernel::store", ""),
    ]);
    let problems = cycle_problems(&files);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].starts_with("import circle: platform::identity -> platform::team"));
}

#[test]
fn paths_through_the_crate_root_and_unknown_layers_are_reported() {
    let files = tree(&[("platform::team", "use crate::KoboApi;"), ("plugins", "")]);
    let problems = layer_problems(&files);
    assert!(
        problems.iter().any(|p| p.contains("crate::KoboApi")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("plugins is in no layer")),
        "{problems:?}"
    );
}

#[test]
fn reading_the_system_clock_elsewhere_is_reported() {
    let files = tree(&[
        ("kernel::clock", "fn now() { Utc::now() }"),
        ("platform::team", "fn f() { let now = Utc::now(); }"),
        ("platform::logs", "#[cfg(test)]\nfn t() { Utc::now() }"),
    ]);
    assert_eq!(
        clock_problems(&files),
        ["platform::team calls Utc::now(): take the time from a Clock"]
    );
}
