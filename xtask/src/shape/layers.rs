//! The rules on how `service/src` is cut, as ARCHITECTURE.md draws it:
//!
//! - the layers: a module uses only layers inside its own (`kernel` → `datastore`, `error` →
//!   `outbox`, `provider` → `platform` → `money` → `operator`, `workers`, `bench` → `http` →
//!   `cli` and `simulator` (`kobo-provider`), and `testkit` above all);
//! - no circle of imports between files, inside a layer too (this one for every crate);
//! - the crates each layer may use: the kernel nothing of `generated_server`; the domain
//!   only the spec's data from it (`models`, `ResponseCode`, `Operation`, `Permission`,
//!   `TokenFamily`, the spec's text), never its runtime (`ApiError`, `RequestContext`,
//!   `Page`, the router, the server); `axum` only at the edge (`http`, `cli`, `testkit`,
//!   `simulator`).
//!
//! A module's imports are the `crate::` paths it names once `self::`, `super::`, its own
//! modules and its imported names are resolved (see `facts`), each landing in the longest
//! module of the tree it starts with. A parent using (or re-exporting) its own descendants is
//! not counted: a module is made of its children, so `mod.rs` re-exporting `payout::initiate`
//! while `payout.rs` uses `super::Transfer` is no circle; two siblings using each other are.

use std::collections::{BTreeMap, BTreeSet};

use super::reader::SourceFile;

/// The layers from the innermost; a module may use its own layer and those of lower rank.
pub const LAYERS: &[(&str, u8)] = &[
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

/// The layers that are the HTTP edge: they may use the router's runtime and `axum`.
pub const EDGE: &[&str] = &["http", "cli", "testkit", "simulator"];

/// What the layers inside the edge may use of `generated_server`: the spec's data.
pub const SPEC_DATA: &[&str] = &[
    "models",
    "ResponseCode",
    "Operation",
    "Permission",
    "TokenFamily",
    "OPENAPI_JSON",
];

fn layer_of(module: &str) -> Option<u8> {
    let top = module.split("::").next().unwrap_or(module);
    LAYERS
        .iter()
        .find(|(name, _)| *name == top)
        .map(|(_, rank)| *rank)
}

/// The module a path from the crate's root lands in: its longest prefix that is a module of
/// the tree.
fn module_of(path: &[String], modules: &BTreeSet<String>) -> Option<String> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|candidate| modules.contains(candidate))
}

/// The file-to-file imports of one crate's `files`, and a problem for each `crate::` path
/// that lands in no module (a re-export of the crate's root).
fn imports(files: &[&SourceFile]) -> (BTreeMap<String, BTreeSet<String>>, Vec<String>) {
    let modules: BTreeSet<String> = files.iter().map(|file| file.module_name()).collect();
    let mut graph = BTreeMap::new();
    let mut problems = Vec::new();
    for file in files {
        let module = file.module_name();
        let used: &mut BTreeSet<String> = graph.entry(module.clone()).or_default();
        for named in file
            .facts
            .paths
            .iter()
            .filter(|named| named.starts_with("crate"))
        {
            let path = &named.path[1..];
            match module_of(path, &modules) {
                // A module is made of its children: a parent using or re-exporting its
                // own descendants is no import between files.
                Some(target) if target != module && !target.starts_with(&format!("{module}::")) => {
                    used.insert(target);
                }
                Some(_) => {}
                None => problems.push(format!(
                    "{}:{} names crate::{}: name a module's full path, not a re-export of \
                     the crate's root",
                    file.path,
                    named.line,
                    path.join("::")
                )),
            }
        }
    }
    (graph, problems)
}

/// Imports that go outward (a module using a layer of higher rank, or one of the same rank
/// that is not its own: `operator` and `workers` are beside each other), paths through the
/// crate's root, and modules in no layer.
pub fn layer_problems(files: &[&SourceFile]) -> Vec<String> {
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

/// Circles of imports between the files of a crate: each reported once, as the path that
/// closes it.
pub fn cycle_problems(files: &[&SourceFile]) -> Vec<String> {
    let mut crates: BTreeMap<&str, Vec<&SourceFile>> = BTreeMap::new();
    for file in files {
        crates.entry(file.krate.as_str()).or_default().push(file);
    }
    let mut problems = Vec::new();
    for (krate, files) in crates {
        let (graph, _) = imports(&files);
        let mut done = BTreeSet::new();
        for start in graph.keys() {
            let mut stack = vec![start.clone()];
            visit(&graph, &mut stack, &mut done, &mut |circle| {
                problems.push(format!("import circle in {krate}: {}", circle.join(" -> ")));
            });
        }
    }
    problems
}

fn visit(
    graph: &BTreeMap<String, BTreeSet<String>>,
    stack: &mut Vec<String>,
    done: &mut BTreeSet<String>,
    found: &mut dyn FnMut(Vec<String>),
) {
    let current = stack.last().expect("a module being visited").clone();
    if done.contains(&current) {
        return;
    }
    for next in graph.get(&current).into_iter().flatten() {
        if let Some(at) = stack.iter().position(|module| module == next) {
            let mut circle = stack[at..].to_vec();
            circle.push(next.clone());
            found(circle);
            continue;
        }
        stack.push(next.clone());
        visit(graph, stack, done, found);
        stack.pop();
    }
    done.insert(current);
}

/// Crates used where their layer may not: `generated_server` in the kernel, its runtime
/// inside the edge, `axum` inside the edge.
pub fn crate_problems(files: &[&SourceFile]) -> Vec<String> {
    let mut problems = Vec::new();
    for file in files {
        let module = file.module_name();
        let top = file.module.first().map(String::as_str).unwrap_or_default();
        if EDGE.contains(&top) {
            continue;
        }
        for named in &file.facts.paths {
            let at = format!("{}:{}", file.path, named.line);
            if named.starts_with("generated_server") {
                let name = named.path.get(1).map(String::as_str).unwrap_or("");
                if top == "kernel" {
                    problems.push(format!(
                        "{module} uses generated_server::{name} ({at}): the kernel knows nothing of the API"
                    ));
                } else if !SPEC_DATA.contains(&name) {
                    problems.push(format!(
                        "{module} uses generated_server::{name} ({at}), the HTTP layer's: only the edge may"
                    ));
                }
            }
            if named.starts_with("axum") {
                problems.push(format!("{module} uses axum ({at}): only the HTTP edge may"));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::super::rules::{crate_module, service_module};
    use super::*;

    fn tree(files: &[(&str, &str)]) -> Vec<SourceFile> {
        files
            .iter()
            .map(|(path, text)| SourceFile::parse(path, text).unwrap())
            .collect()
    }

    fn modules(files: &[SourceFile]) -> Vec<&SourceFile> {
        files.iter().filter(|file| service_module(file)).collect()
    }

    #[test]
    fn an_inner_layer_importing_an_outer_one_fails() {
        let files = tree(&[
            (
                "service/src/kernel/store/mod.rs",
                "use crate::platform::team::Invitee;",
            ),
            (
                "service/src/platform/team.rs",
                "use crate::kernel::store::Tx;",
            ),
            (
                "service/src/operator/businesses.rs",
                "use crate::workers::Workers;",
            ),
            ("service/src/workers.rs", ""),
            (
                "service/src/http/mod.rs",
                "use crate::operator::businesses;",
            ),
            // Relative paths and imported names are resolved: both reach `money`.
            (
                "service/src/platform/logs.rs",
                "fn f() { super::super::money::fees::f(); }",
            ),
            (
                "service/src/platform/sessions.rs",
                "use crate::money;\nfn f() { money::fees::f(); }",
            ),
            ("service/src/money/mod.rs", "pub mod fees;"),
            (
                "service/src/money/fees.rs",
                "use super::super::kernel::store::Tx;",
            ),
            // A test-only helper, then code: the code is read.
            (
                "service/src/kernel/paging.rs",
                "#[cfg(test)]\nfn helper() { crate::money::fees::f(); }\n\
                 fn after() { crate::http::x(); }\n",
            ),
            (
                "service/src/lib.rs",
                "pub use http::KoboApi; use crate::cli::run;",
            ),
        ]);
        assert_eq!(
            layer_problems(&modules(&files)),
            [
                "kernel::paging (an inner layer) imports http",
                "kernel::store (an inner layer) imports platform::team",
                "operator::businesses (an inner layer) imports workers",
                "platform::logs (an inner layer) imports money::fees",
                "platform::sessions (an inner layer) imports money",
                "platform::sessions (an inner layer) imports money::fees",
            ]
        );
        let inward = tree(&[
            ("service/src/kernel/store/mod.rs", "pub struct Tx;"),
            (
                "service/src/platform/team.rs",
                "use crate::kernel::store::Tx;",
            ),
            (
                "service/src/money/fees.rs",
                "use super::super::platform::team;",
            ),
        ]);
        assert!(layer_problems(&modules(&inward)).is_empty());
    }

    #[test]
    fn paths_through_the_crate_root_and_unknown_layers_fail() {
        let files = tree(&[
            ("service/src/platform/team.rs", "use crate::KoboApi;"),
            ("service/src/plugins.rs", ""),
        ]);
        let problems = layer_problems(&modules(&files));
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("service/src/platform/team.rs:1 names crate::KoboApi"));
        assert!(problems[1].starts_with("plugins is in no layer"));
    }

    #[test]
    fn a_circle_inside_a_crate_fails() {
        let files = tree(&[
            (
                "service/src/platform/identity.rs",
                "use crate::platform::team::member_view;",
            ),
            (
                "service/src/platform/team.rs",
                "use super::sessions::revoke;",
            ),
            (
                "service/src/platform/sessions.rs",
                "fn f() { crate::platform::identity::login(); }",
            ),
            ("store-postgres/src/batch.rs", "use crate::groups::Undo;"),
            (
                "store-postgres/src/groups.rs",
                "fn f() { crate::batch::run(); }",
            ),
            ("store-sqlite/src/batch.rs", "use crate::groups::Undo;"),
            (
                "store-sqlite/src/groups.rs",
                "#[cfg(test)]\nuse crate::batch::run;",
            ),
        ]);
        let read: Vec<&SourceFile> = files.iter().filter(|file| crate_module(file)).collect();
        assert_eq!(
            cycle_problems(&read),
            [
                "import circle in service: platform::identity -> platform::team -> platform::sessions -> platform::identity",
                "import circle in store-postgres: batch -> groups -> batch",
            ]
        );
        assert!(cycle_problems(&read[5..]).is_empty());
    }

    #[test]
    fn crates_used_out_of_their_layer_fail() {
        let files = tree(&[
            (
                "service/src/kernel/paging.rs",
                "use generated_server::models;\nfn f() {}",
            ),
            (
                "service/src/money/transfers/mod.rs",
                "use generated_server::{models, ApiError, ResponseCode};\n\
                 fn f(ctx: generated_server::RequestContext<()>) {}",
            ),
            (
                "service/src/outbox/webhooks/mod.rs",
                "fn f() -> axum::Router { todo!() }",
            ),
            (
                "service/src/platform/team.rs",
                "use generated_server::{models, Permission, TokenFamily};",
            ),
            (
                "service/src/http/api.rs",
                "use generated_server::{Api, ApiError, RequestContext};\nuse axum::Router;",
            ),
            (
                "service/src/money/fees.rs",
                "// generated_server::ApiError in a comment is no use\nfn f() {}",
            ),
        ]);
        assert_eq!(
            crate_problems(&modules(&files)),
            [
                "kernel::paging uses generated_server::models (service/src/kernel/paging.rs:1): the kernel knows nothing of the API",
                "money::transfers uses generated_server::ApiError (service/src/money/transfers/mod.rs:1), the HTTP layer's: only the edge may",
                "money::transfers uses generated_server::RequestContext (service/src/money/transfers/mod.rs:2), the HTTP layer's: only the edge may",
                "outbox::webhooks uses axum (service/src/outbox/webhooks/mod.rs:1): only the HTTP edge may",
            ]
        );
        assert!(crate_problems(&modules(&files[3..])).is_empty());
    }
}
