//! `cargo xtask shape`: how `service/src` is cut, in figures anyone can rerun before and after
//! a restructuring, and the tidy rules that keep the cut (its tests, run by `cargo test -p
//! xtask`, read the real tree).
//!
//! - which files import `generated_server`, per folder, and which of its runtime names (the
//!   HTTP layer's: `ApiError`, `RequestContext`, `Page`, ...) they use;
//! - the longest functions outside tests (rule: none over [`FUNCTION_LINES_MAX`]);
//! - the largest files (rule: none over [`FILE_LINES_MAX`]);
//! - hand-written idempotency (`Claim::Replay` matches) and transfer statuses written as
//!   string literals outside SQL in `money/`.
//!
//! Functions are found by parsing with `syn`, so braces in strings and comments do not count.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use syn::spanned::Spanned;
use syn::visit::Visit;

/// The longest a function of `service/src` may be, tests aside.
pub const FUNCTION_LINES_MAX: usize = 100;
/// The longest a file of `service/src` may be.
pub const FILE_LINES_MAX: usize = 900;

/// What `generated_server` offers that only the HTTP edge may use: the server's runtime, not
/// the spec's data (`models`, `ResponseCode`, `Operation`, `Permission`, `TokenFamily`).
pub const RUNTIME_NAMES: &[&str] = &[
    "ApiError",
    "OrInternal",
    "RequestContext",
    "CallRecord",
    "Page",
    "Api",
    "router",
    "JsonApi",
    "JsonAdapter",
    "JsonSuccess",
    "set_error_classifier",
    "Deadline",
    "RequestId",
    "assign_request_id",
    "mock",
    "BODY_LIMIT_BYTES",
    "REQUEST_ID_HEADER",
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

/// A source file of `service/src`: its path below `src/` (`money/transfers.rs`) and its text.
pub struct SourceFile {
    pub path: String,
    pub text: String,
}

/// Every `.rs` file below `dir`, sorted by path.
pub fn read_tree(dir: &Path) -> Result<Vec<SourceFile>> {
    let mut files = Vec::new();
    collect(dir, dir, &mut files)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<SourceFile>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            collect(root, &path, files)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path
                .strip_prefix(root)?
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            files.push(SourceFile {
                path: relative,
                text,
            });
        }
    }
    Ok(())
}

/// The folder a file is in (`money` for `money/transfers.rs`, `.` at the root).
fn folder(path: &str) -> &str {
    path.rsplit_once('/').map_or(".", |(folder, _)| folder)
}

/// A function and its length in lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub file: String,
    pub name: String,
    pub line: usize,
    pub lines: usize,
}

/// The functions of `file` outside tests (`#[cfg(test)]` modules, `#[test]` functions), with
/// their lengths from the signature to the closing brace.
pub fn functions(file: &SourceFile) -> Result<Vec<Function>> {
    let parsed = syn::parse_file(&file.text).with_context(|| format!("parsing {}", file.path))?;
    let mut finder = FunctionFinder {
        file: &file.path,
        found: Vec::new(),
    };
    finder.visit_file(&parsed);
    Ok(finder.found)
}

struct FunctionFinder<'a> {
    file: &'a str,
    found: Vec<Function>,
}

fn is_test(attributes: &[syn::Attribute]) -> bool {
    attributes.iter().any(|attribute| {
        let path = attribute.path();
        if path.is_ident("test") || path.segments.last().is_some_and(|s| s.ident == "test") {
            return true;
        }
        path.is_ident("cfg")
            && attribute
                .parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

impl FunctionFinder<'_> {
    fn record(&mut self, name: &syn::Ident, span: proc_macro2::Span) {
        let (start, end) = (span.start().line, span.end().line);
        self.found.push(Function {
            file: self.file.to_owned(),
            name: name.to_string(),
            line: start,
            lines: end + 1 - start,
        });
    }
}

impl<'ast> Visit<'ast> for FunctionFinder<'_> {
    fn visit_item_mod(&mut self, module: &'ast syn::ItemMod) {
        if !is_test(&module.attrs) {
            syn::visit::visit_item_mod(self, module);
        }
    }

    fn visit_item_fn(&mut self, function: &'ast syn::ItemFn) {
        if !is_test(&function.attrs) {
            self.record(&function.sig.ident, function.span());
            syn::visit::visit_item_fn(self, function);
        }
    }

    fn visit_impl_item_fn(&mut self, function: &'ast syn::ImplItemFn) {
        if !is_test(&function.attrs) {
            self.record(&function.sig.ident, function.span());
            syn::visit::visit_impl_item_fn(self, function);
        }
    }
}

/// The names a file uses from `generated_server` that belong to its runtime
/// ([`RUNTIME_NAMES`]), in `use` trees and in paths alike.
pub fn runtime_names(file: &SourceFile) -> Vec<&'static str> {
    let code = code_without_tests(&file.text);
    let mut found = Vec::new();
    for name in RUNTIME_NAMES {
        let path = format!("generated_server::{name}");
        let named_in_a_path = code.match_indices(&path).any(|(at, _)| {
            !code[at + path.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        });
        let used = imported_from_generated_server(&code, name) || named_in_a_path;
        if used {
            found.push(*name);
        }
    }
    found
}

/// Whether a `use generated_server::...` tree of `code` names `name`.
fn imported_from_generated_server(code: &str, name: &str) -> bool {
    code.match_indices("use generated_server::").any(|(at, _)| {
        let tree = &code[at..];
        let end = tree.find(';').unwrap_or(tree.len());
        tree[..end]
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|word| word == name)
    })
}

/// The text before a file's `#[cfg(test)]` tail, without line comments.
fn code_without_tests(text: &str) -> String {
    let text = text.find("#[cfg(test)]").map_or(text, |at| &text[..at]);
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether a file names `generated_server` at all, outside its tests.
pub fn imports_generated_server(file: &SourceFile) -> bool {
    code_without_tests(&file.text).contains("generated_server")
}

/// String literals of a file (outside tests) whose whole text is a transfer status: a status
/// named in code rather than through a type. Statuses inside SQL are longer literals.
pub fn status_literals(file: &SourceFile) -> Result<Vec<(usize, String)>> {
    let parsed = syn::parse_file(&file.text).with_context(|| format!("parsing {}", file.path))?;
    let mut finder = LiteralFinder { found: Vec::new() };
    finder.visit_file(&parsed);
    Ok(finder.found)
}

struct LiteralFinder {
    found: Vec<(usize, String)>,
}

impl<'ast> Visit<'ast> for LiteralFinder {
    fn visit_item_mod(&mut self, module: &'ast syn::ItemMod) {
        if !is_test(&module.attrs) {
            syn::visit::visit_item_mod(self, module);
        }
    }

    fn visit_item_fn(&mut self, function: &'ast syn::ItemFn) {
        if !is_test(&function.attrs) {
            syn::visit::visit_item_fn(self, function);
        }
    }

    fn visit_lit_str(&mut self, literal: &'ast syn::LitStr) {
        let value = literal.value();
        if TRANSFER_STATUSES.contains(&value.as_str()) {
            self.found.push((literal.span().start().line, value));
        }
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        // Literals inside macro calls (`format!`, `matches!`) are tokens, not parsed.
        self.visit_tokens(mac.tokens.clone());
    }
}

impl LiteralFinder {
    fn visit_tokens(&mut self, tokens: proc_macro2::TokenStream) {
        for token in tokens {
            match token {
                proc_macro2::TokenTree::Literal(literal) => {
                    let text = literal.to_string();
                    let inner = text.trim_matches('"');
                    if text.starts_with('"') && TRANSFER_STATUSES.contains(&inner) {
                        self.found
                            .push((literal.span().start().line, inner.to_owned()));
                    }
                }
                proc_macro2::TokenTree::Group(group) => self.visit_tokens(group.stream()),
                _ => {}
            }
        }
    }
}

/// The shape of a tree, as `cargo xtask shape` prints it.
pub struct Shape {
    /// Per folder: (files naming `generated_server`, files, runtime names used with the files).
    pub generated_server: BTreeMap<String, (usize, usize, BTreeMap<&'static str, usize>)>,
    pub functions: Vec<Function>,
    pub files: Vec<(String, usize)>,
    pub replay_matches: Vec<(String, usize)>,
    pub status_literals: Vec<(String, usize, String)>,
}

pub fn measure(files: &[SourceFile]) -> Result<Shape> {
    let mut shape = Shape {
        generated_server: BTreeMap::new(),
        functions: Vec::new(),
        files: Vec::new(),
        replay_matches: Vec::new(),
        status_literals: Vec::new(),
    };
    for file in files {
        let entry = shape
            .generated_server
            .entry(folder(&file.path).to_owned())
            .or_default();
        entry.1 += 1;
        if imports_generated_server(file) {
            entry.0 += 1;
        }
        for name in runtime_names(file) {
            *entry.2.entry(name).or_default() += 1;
        }
        shape.functions.extend(functions(file)?);
        shape
            .files
            .push((file.path.clone(), file.text.lines().count()));
        let replays = code_without_tests(&file.text)
            .matches("Claim::Replay")
            .count();
        if replays > 0 {
            shape.replay_matches.push((file.path.clone(), replays));
        }
        if file.path.starts_with("money/") {
            for (line, status) in status_literals(file)? {
                shape
                    .status_literals
                    .push((file.path.clone(), line, status));
            }
        }
    }
    shape.functions.sort_by_key(|f| std::cmp::Reverse(f.lines));
    shape
        .files
        .sort_by_key(|(_, lines)| std::cmp::Reverse(*lines));
    Ok(shape)
}

impl Shape {
    /// What breaks the tidy rules, one line each: functions over [`FUNCTION_LINES_MAX`]
    /// lines, files over [`FILE_LINES_MAX`], `Claim::Replay` outside the idempotency wrapper,
    /// transfer statuses spelt outside `money/transfers/status.rs`.
    pub fn violations(&self) -> Vec<String> {
        let mut found = Vec::new();
        for f in self
            .functions
            .iter()
            .filter(|f| f.lines > FUNCTION_LINES_MAX)
        {
            found.push(format!(
                "function over {FUNCTION_LINES_MAX} lines: {}::{} ({} lines)",
                f.file, f.name, f.lines
            ));
        }
        for (path, lines) in self.files.iter().filter(|(_, n)| *n > FILE_LINES_MAX) {
            found.push(format!(
                "file over {FILE_LINES_MAX} lines: {path} ({lines} lines)"
            ));
        }
        for (path, n) in &self.replay_matches {
            if path != "platform/idempotency.rs" {
                found.push(format!("`Claim::Replay` outside the wrapper: {path} ({n})"));
            }
        }
        for (path, line, status) in &self.status_literals {
            if path != "money/transfers/status.rs" {
                found.push(format!(
                    "transfer status as a literal: {path}:{line} {status:?}"
                ));
            }
        }
        found
    }

    pub fn report(&self, longest: usize) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "files naming generated_server, per folder of service/src:"
        );
        for (folder, (naming, all, runtime)) in &self.generated_server {
            let names: Vec<String> = runtime
                .iter()
                .map(|(name, files)| format!("{name} {files}"))
                .collect();
            let _ = writeln!(
                out,
                "  {folder:<10} {naming:>2}/{all:<2}  runtime names: {}",
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            );
        }
        let over = |limit: usize| self.functions.iter().filter(|f| f.lines > limit).count();
        let _ = writeln!(
            out,
            "\nfunctions outside tests: {}; over 80 lines: {}; over {FUNCTION_LINES_MAX}: {}; the longest:",
            self.functions.len(),
            over(80),
            over(FUNCTION_LINES_MAX)
        );
        for function in self.functions.iter().take(longest) {
            let _ = writeln!(
                out,
                "  {:>4}  {}::{} (line {})",
                function.lines, function.file, function.name, function.line
            );
        }
        let total: usize = self.files.iter().map(|(_, lines)| lines).sum();
        let _ = writeln!(
            out,
            "\nfiles: {} ({total} lines); over {FILE_LINES_MAX} lines: {}; the largest:",
            self.files.len(),
            self.files
                .iter()
                .filter(|(_, lines)| *lines > FILE_LINES_MAX)
                .count()
        );
        for (path, lines) in self.files.iter().take(8) {
            let _ = writeln!(out, "  {lines:>5}  {path}");
        }
        let replays: usize = self.replay_matches.iter().map(|(_, n)| n).sum();
        let _ = writeln!(out, "\n`Claim::Replay` matches outside tests: {replays}");
        for (path, n) in &self.replay_matches {
            let _ = writeln!(out, "  {n:>3}  {path}");
        }
        let _ = writeln!(
            out,
            "\ntransfer statuses as string literals in money/, outside SQL: {}",
            self.status_literals.len()
        );
        let mut per_file: BTreeMap<&str, usize> = BTreeMap::new();
        for (path, _, _) in &self.status_literals {
            *per_file.entry(path).or_default() += 1;
        }
        for (path, n) in per_file {
            let _ = writeln!(out, "  {n:>3}  {path}");
        }
        let violations = self.violations();
        let _ = writeln!(out, "\ntidy rules broken: {}", violations.len());
        for violation in violations {
            let _ = writeln!(out, "  {violation}");
        }
        out
    }
}

/// `service/src` of the workspace.
pub fn service_src() -> PathBuf {
    crate::spec::workspace_root().join("service/src")
}

/// Prints the shape of `dir` (default: this workspace's `service/src`; another checkout's to
/// compare, e.g. a `git worktree` of an older commit).
pub fn run(longest: usize, dir: Option<&Path>) -> Result<()> {
    let files = read_tree(dir.unwrap_or(&service_src()))?;
    print!("{}", measure(&files)?.report(longest));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, text: &str) -> SourceFile {
        SourceFile {
            path: path.to_owned(),
            text: text.to_owned(),
        }
    }

    #[test]
    fn functions_are_measured_and_tests_left_out() {
        let source = file(
            "money/a.rs",
            "fn short() {\n    let s = \"}\";\n}\n\nimpl A {\n    fn method(&self) {\n\n\n    }\n}\n\
             #[cfg(test)]\nmod tests {\n    fn helper() {}\n}\n#[test]\nfn alone() {}\n",
        );
        let found = functions(&source).unwrap();
        let lengths: Vec<(String, usize)> = found.into_iter().map(|f| (f.name, f.lines)).collect();
        assert_eq!(
            lengths,
            vec![("short".to_owned(), 3), ("method".to_owned(), 4)]
        );
    }

    #[test]
    fn runtime_names_are_told_from_the_specs_data() {
        let uses = file(
            "money/a.rs",
            "use generated_server::models::{self, AuditAction};\n\
             use generated_server::{ApiError, OrInternal, ResponseCode};\n\
             fn f(ctx: generated_server::RequestContext<()>) {}\n\
             fn g() -> generated_server::ApiErrorLike {}\n",
        );
        assert_eq!(
            runtime_names(&uses),
            vec!["ApiError", "OrInternal", "RequestContext"]
        );
        let data = file(
            "money/b.rs",
            "use generated_server::models;\nuse generated_server::{ResponseCode, Operation};\n",
        );
        assert!(runtime_names(&data).is_empty());
        assert!(imports_generated_server(&data));
        let tests_only = file(
            "kernel/c.rs",
            "#[cfg(test)]\nmod t { use generated_server::ApiError; }",
        );
        assert!(!imports_generated_server(&tests_only));
    }

    #[test]
    fn status_literals_are_found_outside_sql_and_tests() {
        let source = file(
            "money/t.rs",
            "fn f(s: &str) -> bool {\n    let q = \"UPDATE t SET s = 'processing'\";\n    \
             matches!(s, \"success\" | \"x\") || s == \"reversed\"\n}\n\
             #[cfg(test)]\nmod tests { fn g() { let _ = \"failed\"; } }\n",
        );
        let found: Vec<String> = status_literals(&source)
            .unwrap()
            .into_iter()
            .map(|(_, status)| status)
            .collect();
        assert_eq!(found, vec!["success", "reversed"]);
    }

    /// The tidy rules, on the real tree: functions short enough to read at once (split along
    /// their decisions: read the inputs, decide, write), no file too big to live in,
    /// idempotency in one wrapper (`platform::idempotency::Keyed::run`), and transfer statuses
    /// named through `TransferStatus`, spelt once in `money/transfers/status.rs`.
    #[test]
    fn service_src_keeps_the_tidy_rules() {
        let shape = measure(&read_tree(&service_src()).unwrap()).unwrap();
        let violations = shape.violations();
        assert!(violations.is_empty(), "{}", violations.join("\n"));
    }

    #[test]
    fn each_tidy_rule_can_fail() {
        let long = format!(
            "fn long() {{\n{}}}\n",
            "    let _ = 1;\n".repeat(FUNCTION_LINES_MAX)
        );
        let big = "// line\n".repeat(FILE_LINES_MAX + 1);
        let files = [
            file("money/a.rs", &long),
            file("money/b.rs", &big),
            file(
                "money/c.rs",
                "fn f(c: Claim) { if let Claim::Replay(x) = c {} }\n",
            ),
            file(
                "platform/idempotency.rs",
                "fn f(c: Claim) { if let Claim::Replay(x) = c {} }\n",
            ),
            file("money/d.rs", "fn f() -> &'static str { \"expired\" }\n"),
            file(
                "money/transfers/status.rs",
                "fn f() -> &'static str { \"expired\" }\n",
            ),
        ];
        let violations = measure(&files).unwrap().violations();
        let expected = [
            "function over 100 lines: money/a.rs::long",
            "file over 900 lines: money/b.rs",
            "`Claim::Replay` outside the wrapper: money/c.rs",
            "transfer status as a literal: money/d.rs:1",
        ];
        assert_eq!(violations.len(), expected.len(), "{violations:?}");
        for (violation, expected) in violations.iter().zip(expected) {
            assert!(
                violation.starts_with(expected),
                "{violation} is not {expected}"
            );
        }
    }
}
