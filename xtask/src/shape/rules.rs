//! The tidy rules: each reads a set of the workspace's files (its scope) and says what breaks
//! it, one line per violation. Every rule has a fixture test below that shows it failing on a
//! violation and passing on compliant code; `workspace_keeps_the_tidy_rules` (in `mod.rs`)
//! runs them all on the real tree.

use super::layers;
use super::reader::{Kind, SourceFile};

/// The longest a function may be, tests aside, from its signature to its closing brace.
pub const FUNCTION_LINES_MAX: usize = 100;
/// The longest a file may be.
pub const FILE_LINES_MAX: usize = 900;

/// The crates that are tools around the bank, not the bank: they read the real time and the
/// database from outside by design (a load generator timing its requests and checking that
/// no acknowledged payment was lost, the conformance runner, the spec's toolkit).
pub const TOOLS: &[&str] = &["xtask", "load", "conformance"];

/// The crates that are the stores: their statements, their driver.
pub const STORE_CRATES: &[&str] = &["store", "store-sqlite", "store-postgres"];

/// The layers of `service/src` that may name `sqlx`: the kernel's store, the datastore, the
/// test kit, and the simulator (its own file of transfers and notifications, none of the
/// bank's data).
pub const SQL_LAYERS: &[&str] = &["kernel", "datastore", "testkit", "simulator"];

/// The only file that may read the system clock.
pub const CLOCK_FILE: &str = "service/src/kernel/clock.rs";

/// The only file that may match `Claim::Replay`: the idempotency wrapper (`Keyed::run`).
pub const IDEMPOTENCY_FILE: &str = "service/src/platform/idempotency.rs";

/// The only files that may spell a transfer's status: `TransferStatus`'s, and the bulk
/// transfers' statuses and outcomes (several spelt as a transfer's are).
pub const STATUS_FILES: &[&str] = &[
    "service/src/money/transfers/status.rs",
    "service/src/money/bulk/status.rs",
];

/// The statuses of a transfer, which `money/` names through its `TransferStatus` type.
pub const TRANSFER_STATUSES: &[&str] = &[
    "pending_approval",
    "processing",
    "success",
    "rejected",
    "cancelled",
    "expired",
    "failed",
    "reversed",
];

/// What no code of the workspace may name any more: `sqlx::Any` ran one SQL for both stores
/// (issue 30); each store now has its own crate, types and checked queries.
pub const ANY_DRIVER: &[&str] = &["AnyPool", "AnyRow", "AnyConnection"];

/// The modules of `service/src` that may branch on the store (`Backend::`): the kernel's
/// store and the test kit (which checks both).
pub const BACKEND_MODULES: &[&str] = &["kernel::store", "testkit"];

/// Violations let stand for now, each with why: the rule, a text each such violation contains,
/// and the reason. They are in files other engineers are changing at the time of writing
/// (issue 58): each goes when its file is next reworked. `cargo xtask shape` lists them, and
/// names an allowance that no longer matches anything so it can be deleted.
pub const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "function-length",
        "load/src/",
        "kobo-load, the load and chaos tool, is being changed by the failover work",
    ),
    (
        "file-length",
        "load/src/",
        "kobo-load, the load and chaos tool, is being changed by the failover work",
    ),
    (
        "import-circles",
        "import circle in load:",
        "kobo-load, the load and chaos tool, is being changed by the failover work",
    ),
];

/// Why `violation` of `rule` is let stand, when it is.
pub fn allowed(rule: &str, violation: &str) -> Option<&'static str> {
    ALLOWED
        .iter()
        .find(|(name, text, _)| *name == rule && violation.contains(text))
        .map(|(_, _, why)| *why)
}

/// A tidy rule.
pub struct Rule {
    pub name: &'static str,
    /// What it keeps, in a few words.
    pub keeps: &'static str,
    /// Whether it reads a file.
    pub reads: fn(&SourceFile) -> bool,
    /// What breaks it in the files it reads.
    pub check: fn(&[&SourceFile]) -> Vec<String>,
}

/// Every tidy rule, in the order the report lists them.
pub const RULES: &[Rule] = &[
    Rule {
        name: "function-length",
        keeps: "functions short enough to read at once",
        reads: hand_written,
        check: long_functions,
    },
    Rule {
        name: "file-length",
        keeps: "no file too big to live in",
        reads: hand_written,
        check: long_files,
    },
    Rule {
        name: "layers",
        keeps: "service/src's layers: a module uses only its own layer and inner ones",
        reads: service_module,
        check: layers::layer_problems,
    },
    Rule {
        name: "import-circles",
        keeps: "no circle of imports between the files of a crate",
        reads: crate_module,
        check: layers::cycle_problems,
    },
    Rule {
        name: "crates-per-layer",
        keeps:
            "generated_server's runtime and axum only at the HTTP edge, nothing of it in the kernel",
        reads: service_module,
        check: layers::crate_problems,
    },
    Rule {
        name: "sql-in-the-stores",
        keeps:
            "sqlx named only by the stores and service/src's kernel, datastore, testkit, simulator",
        reads: bank,
        check: sql_outside_the_stores,
    },
    Rule {
        name: "one-driver-per-store",
        keeps: "no sqlx::Any anywhere, tests included",
        reads: any_file,
        check: any_driver,
    },
    Rule {
        name: "store-branches",
        keeps: "only kernel::store and testkit branch on the store (Backend::)",
        reads: service_code,
        check: store_branches,
    },
    Rule {
        name: "clock",
        keeps: "Utc::now only in service/src/kernel/clock.rs: time comes from the injected Clock",
        reads: bank,
        check: clock_reads,
    },
    Rule {
        name: "idempotency-wrapper",
        keeps: "Claim::Replay matched only in platform/idempotency.rs",
        reads: service_code,
        check: replay_matches,
    },
    Rule {
        name: "transfer-status-literals",
        keeps: "transfer statuses spelt only in money/transfers/status.rs and money/bulk/status.rs",
        reads: money_code,
        check: status_literals,
    },
];

/// Hand-written code the crates compile outside tests: `src/`, `examples/`, `benches/`,
/// `build.rs`, of every crate; generated and test-only files left out.
pub fn hand_written(file: &SourceFile) -> bool {
    file.kind != Kind::Tests && !file.generated && !file.test_only
}

/// The shipped code of the crates that make the bank (every crate but [`TOOLS`]).
pub fn bank(file: &SourceFile) -> bool {
    file.shipped() && !TOOLS.contains(&file.krate.as_str())
}

/// The shipped code of `service`.
pub fn service_code(file: &SourceFile) -> bool {
    file.shipped() && file.krate == "service"
}

/// `service/src/money/`, where transfers are decided. Not wider: elsewhere the same words
/// are other things' statuses (an activity-log entry's `success`, a webhook event's
/// `failed`, a transaction's `success` in the stores' rows), not a transfer's.
fn money_code(file: &SourceFile) -> bool {
    service_code(file) && file.module.first().is_some_and(|top| top == "money")
}

/// A module of `service`'s library, its roots (`lib.rs`, `main.rs`, `bin/`) left out: they
/// only declare, re-export and call `cli` or `simulator`.
pub fn service_module(file: &SourceFile) -> bool {
    service_code(file) && !file.module.is_empty() && !file.path.starts_with("service/src/bin/")
}

/// A module (not a root, not generated, not test-only) of any crate's `src/`.
pub fn crate_module(file: &SourceFile) -> bool {
    file.shipped() && !file.module.is_empty() && !file.path.contains("/src/bin/")
}

fn any_file(_: &SourceFile) -> bool {
    true
}

fn long_functions(files: &[&SourceFile]) -> Vec<String> {
    let mut found = Vec::new();
    for file in files {
        for f in &file.facts.functions {
            if f.lines > FUNCTION_LINES_MAX {
                found.push(format!(
                    "function over {FUNCTION_LINES_MAX} lines: {}:{} {} ({} lines)",
                    file.path, f.line, f.name, f.lines
                ));
            }
        }
    }
    found
}

fn long_files(files: &[&SourceFile]) -> Vec<String> {
    files
        .iter()
        .filter(|file| file.lines > FILE_LINES_MAX)
        .map(|file| {
            format!(
                "file over {FILE_LINES_MAX} lines: {} ({} lines)",
                file.path, file.lines
            )
        })
        .collect()
}

/// Each path of `files` for which `breaks` holds, as `what: path:line`, except in the files
/// `allowed` accepts.
fn paths_where(
    files: &[&SourceFile],
    allowed: impl Fn(&SourceFile) -> bool,
    breaks: impl Fn(&super::facts::Named) -> bool,
    what: &str,
) -> Vec<String> {
    let mut found = Vec::new();
    for file in files.iter().filter(|file| !allowed(file)) {
        for named in file.facts.paths.iter().filter(|named| breaks(named)) {
            found.push(format!(
                "{what}: {}:{} {}",
                file.path,
                named.line,
                named.path.join("::")
            ));
        }
    }
    found
}

fn sql_outside_the_stores(files: &[&SourceFile]) -> Vec<String> {
    let allowed = |file: &SourceFile| {
        STORE_CRATES.contains(&file.krate.as_str())
            || (file.krate == "service"
                && file
                    .module
                    .first()
                    .is_some_and(|top| SQL_LAYERS.contains(&top.as_str())))
    };
    paths_where(
        files,
        allowed,
        |named| named.starts_with("sqlx"),
        "sqlx outside the stores (its statements belong in a store)",
    )
}

fn any_driver(files: &[&SourceFile]) -> Vec<String> {
    paths_where(
        files,
        |_| false,
        |named| {
            named.contains(&["sqlx", "Any"])
                || named.contains(&["sqlx", "any"])
                || named.path.iter().any(|s| ANY_DRIVER.contains(&s.as_str()))
        },
        "the Any driver (each store has its own)",
    )
}

fn store_branches(files: &[&SourceFile]) -> Vec<String> {
    let allowed = |file: &SourceFile| {
        let module = file.module_name();
        BACKEND_MODULES
            .iter()
            .any(|m| module == *m || module.starts_with(&format!("{m}::")))
    };
    paths_where(
        files,
        allowed,
        |named| {
            let (_, init) = named.path.split_last().unwrap_or((&String::new(), &[]));
            init.iter().any(|segment| segment == "Backend")
        },
        "a branch on the store (Backend::)",
    )
}

fn clock_reads(files: &[&SourceFile]) -> Vec<String> {
    paths_where(
        files,
        |file| file.path == CLOCK_FILE,
        |named| named.contains(&["Utc", "now"]),
        "the system clock read (take the time from a Clock)",
    )
}

fn replay_matches(files: &[&SourceFile]) -> Vec<String> {
    paths_where(
        files,
        |file| file.path == IDEMPOTENCY_FILE,
        |named| named.contains(&["Claim", "Replay"]),
        "`Claim::Replay` outside the wrapper",
    )
}

fn status_literals(files: &[&SourceFile]) -> Vec<String> {
    let mut found = Vec::new();
    for file in files
        .iter()
        .filter(|file| !STATUS_FILES.contains(&file.path.as_str()))
    {
        for (line, text) in &file.facts.strings {
            if TRANSFER_STATUSES.contains(&text.as_str()) {
                found.push(format!(
                    "transfer status as a literal: {}:{line} {text:?}",
                    file.path
                ));
            }
        }
    }
    found
}

/// The violations of `rule` in `files`, and the files and lines it read.
pub fn apply(rule: &Rule, files: &[SourceFile]) -> (Vec<String>, usize, usize) {
    let read: Vec<&SourceFile> = files.iter().filter(|file| (rule.reads)(file)).collect();
    let lines = read.iter().map(|file| file.lines).sum();
    ((rule.check)(&read), read.len(), lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn file(path: &str, text: &str) -> SourceFile {
        SourceFile::parse(path, text).unwrap()
    }

    fn rule(name: &str) -> &'static Rule {
        RULES.iter().find(|rule| rule.name == name).unwrap()
    }

    /// The violations `name` finds in `files`, each cut at its first `" ("` or at the end.
    fn broken(name: &str, files: &[SourceFile]) -> Vec<String> {
        apply(rule(name), files).0
    }

    #[test]
    fn function_length_fails_on_a_long_function_only() {
        let long = format!(
            "/// Doc lines do not count.\npub fn long() {{\n{}}}\n",
            "    let _ = 1;\n".repeat(FUNCTION_LINES_MAX - 2)
        );
        let longer = long.replace("let _ = 1;\n}", "let _ = 1;\n    let _ = 2;\n}");
        let files = [
            file("store-postgres/src/batch.rs", &longer),
            file("service/src/money/a.rs", &long),
            file(
                "service/src/money/b.rs",
                &format!("#[cfg(test)]\nmod t {{ {longer} }}\nfn f() {{}}\n"),
            ),
            file("service/tests/t.rs", &longer),
        ];
        assert_eq!(
            broken("function-length", &files),
            ["function over 100 lines: store-postgres/src/batch.rs:2 long (101 lines)"]
        );
        assert!(broken("function-length", &files[1..]).is_empty());
    }

    #[test]
    fn file_length_fails_on_a_long_file_only() {
        let big = "// line\n".repeat(FILE_LINES_MAX + 1);
        let fits = "// line\n".repeat(FILE_LINES_MAX);
        let files = [
            file("store-sqlite/src/a.rs", &big),
            file("service/src/b.rs", &fits),
            file("store/tests/c.rs", &big),
        ];
        assert_eq!(
            broken("file-length", &files),
            ["file over 900 lines: store-sqlite/src/a.rs (901 lines)"]
        );
        assert!(broken("file-length", &files[1..]).is_empty());
    }

    #[test]
    fn sql_fails_outside_the_stores_only() {
        let files = [
            file(
                "service/src/money/ledger.rs",
                "fn f() { sqlx::query(\"SELECT 1\"); }",
            ),
            file(
                "service/src/platform/team.rs",
                "use sqlx::Row;\n#[cfg(test)]\nfn t() { sqlx::query(\"x\"); }\n",
            ),
            file(
                "generated-server/src/runtime/x.rs",
                "#[derive(sqlx::FromRow)] struct S;",
            ),
            file(
                "service/src/datastore/accounts.rs",
                "fn f() { sqlx::query!(\"SELECT 1\"); }",
            ),
            file("store-postgres/src/batch.rs", "use sqlx::PgPool;"),
            file("store/src/error.rs", "fn f(e: sqlx::Error) {}"),
            file(
                "service/src/money/fees.rs",
                "// sqlx::query in a comment\n/// sqlx::x\nfn f() {}",
            ),
            file("load/src/chaos.rs", "use sqlx::PgPool;"),
        ];
        assert_eq!(
            broken("sql-in-the-stores", &files),
            [
                "sqlx outside the stores (its statements belong in a store): service/src/money/ledger.rs:1 sqlx::query",
                "sqlx outside the stores (its statements belong in a store): service/src/platform/team.rs:1 sqlx::Row",
                "sqlx outside the stores (its statements belong in a store): generated-server/src/runtime/x.rs:1 sqlx::FromRow",
            ]
        );
        assert!(broken("sql-in-the-stores", &files[3..]).is_empty());
    }

    #[test]
    fn the_any_driver_fails_anywhere() {
        let files = [
            file("service/src/money/ledger.rs", "use sqlx::AnyPool;"),
            file(
                "store-postgres/tests/t.rs",
                "fn f(p: sqlx::any::AnyPool) {}",
            ),
            file(
                "service/src/datastore/a.rs",
                "// sqlx::Any in a comment\nfn f(p: sqlx::PgPool) {}",
            ),
        ];
        let found = broken("one-driver-per-store", &files);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].ends_with("service/src/money/ledger.rs:1 sqlx::AnyPool"));
        assert!(found[1].ends_with("store-postgres/tests/t.rs:1 sqlx::any::AnyPool"));
        assert!(broken("one-driver-per-store", &files[2..]).is_empty());
    }

    #[test]
    fn store_branches_fail_outside_the_store_and_testkit() {
        let files = [
            file(
                "service/src/platform/team.rs",
                "fn f() { if b == Backend::Postgres {} }",
            ),
            file(
                "service/src/kernel/store/mod.rs",
                "fn f(b: Backend) { match b { Backend::Sqlite => {} } }",
            ),
            file(
                "service/src/testkit/mod.rs",
                "use crate::kernel::store::Backend::Sqlite;",
            ),
            file(
                "service/src/money/a.rs",
                "use crate::kernel::store::Backend;",
            ),
        ];
        assert_eq!(
            broken("store-branches", &files),
            ["a branch on the store (Backend::): service/src/platform/team.rs:1 Backend::Postgres"]
        );
        assert!(broken("store-branches", &files[1..]).is_empty());
    }

    #[test]
    fn the_clock_fails_outside_its_file_in_the_bank_only() {
        let files = [
            file(
                "store-postgres/src/a.rs",
                "use chrono::Utc;\nfn f() { let _ = Utc::now(); }",
            ),
            file(
                "service/src/platform/team.rs",
                "fn f() -> u8 { 1 }\n#[cfg(test)]\nfn t() { chrono::Utc::now(); }\n\
                 fn g() { x.unwrap_or_else(chrono::Utc::now); }\n",
            ),
            file(
                "service/src/kernel/clock.rs",
                "fn now() { chrono::Utc::now() }",
            ),
            file("load/src/bench.rs", "fn f() { chrono::Utc::now(); }"),
            file("service/tests/t.rs", "fn f() { chrono::Utc::now(); }"),
        ];
        assert_eq!(
            broken("clock", &files),
            [
                "the system clock read (take the time from a Clock): store-postgres/src/a.rs:2 chrono::Utc::now",
                "the system clock read (take the time from a Clock): service/src/platform/team.rs:4 chrono::Utc::now",
            ]
        );
        assert!(broken("clock", &files[2..]).is_empty());
    }

    #[test]
    fn replay_fails_outside_the_wrapper() {
        let code = "fn f(c: Claim) { if let Claim::Replay(x) = c {} }\n";
        let files = [
            file("service/src/money/c.rs", code),
            file("service/src/platform/idempotency.rs", code),
        ];
        assert_eq!(
            broken("idempotency-wrapper", &files),
            ["`Claim::Replay` outside the wrapper: service/src/money/c.rs:1 Claim::Replay"]
        );
        assert!(broken("idempotency-wrapper", &files[1..]).is_empty());
    }

    #[test]
    fn status_literals_fail_outside_status_rs() {
        let files = [
            file(
                "service/src/money/t.rs",
                "fn f(s: &str) -> bool {\n    let q = \"UPDATE t SET s = 'processing'\";\n    \
                 matches!(s, \"success\" | \"x\") || s == \"reversed\"\n}\n\
                 #[cfg(test)]\nmod tests { fn g() { let _ = \"failed\"; } }\n",
            ),
            file(
                "service/src/money/transfers/status.rs",
                "fn f() -> &'static str { \"expired\" }\n",
            ),
            file(
                "service/src/money/bulk/status.rs",
                "pub const REJECTED: &str = \"rejected\";\n",
            ),
            file(
                "service/src/money/u.rs",
                "/// \"expired\" in prose\nfn f() -> &'static str { \"expire\" }\n",
            ),
        ];
        assert_eq!(
            broken("transfer-status-literals", &files),
            [
                "transfer status as a literal: service/src/money/t.rs:3 \"success\"",
                "transfer status as a literal: service/src/money/t.rs:3 \"reversed\"",
            ]
        );
        assert!(broken("transfer-status-literals", &files[1..]).is_empty());
    }
}
