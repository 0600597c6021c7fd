//! `cargo xtask shape`: the tidy rules of the workspace, and how `service/src` is cut, in
//! figures anyone can rerun before and after a restructuring.
//!
//! Every Rust file of every crate of the workspace is parsed with `syn` ([`reader`]); what a
//! rule reads of a file ([`facts`]) leaves out exactly the code under `#[cfg(test)]` or a test
//! attribute, wherever it stands. The rules ([`rules::RULES`], the layers' in [`layers`]) each
//! read the files their meaning covers: function and file lengths every hand-written crate,
//! the SQL and clock rules every crate of the bank, the layers `service/src`. The command
//! prints, per rule, the files and lines it read and what breaks it, and fails when anything
//! does; `workspace_keeps_the_tidy_rules` below runs the same on the real tree under
//! `cargo test -p xtask`.

pub mod facts;
pub mod layers;
pub mod reader;
pub mod rules;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;

use reader::SourceFile;
use rules::{Rule, RULES};

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

/// One rule's outcome: what breaks it, what is let stand (with why), and the files and lines
/// it read.
pub struct Outcome {
    pub rule: &'static Rule,
    pub violations: Vec<String>,
    pub allowed: Vec<(String, &'static str)>,
    pub files: usize,
    pub lines: usize,
}

/// The tidy rules applied to a tree, and the files they were applied to.
pub struct Shape<'a> {
    pub files: &'a [SourceFile],
    pub outcomes: Vec<Outcome>,
}

pub fn measure(files: &[SourceFile]) -> Shape<'_> {
    let outcomes = RULES
        .iter()
        .map(|rule| {
            let (found, read, lines) = rules::apply(rule, files);
            let (allowed, violations): (Vec<String>, Vec<String>) = found
                .into_iter()
                .partition(|violation| rules::allowed(rule.name, violation).is_some());
            let allowed = allowed
                .into_iter()
                .map(|violation| {
                    let why = rules::allowed(rule.name, &violation).unwrap_or_default();
                    (violation, why)
                })
                .collect();
            Outcome {
                rule,
                violations,
                allowed,
                files: read,
                lines,
            }
        })
        .collect();
    Shape { files, outcomes }
}

/// The folder of a module (`money` for `money::transfers`, `.` at the root).
fn folder(module: &[String]) -> String {
    match module.split_last() {
        Some((_, [])) | None => ".".to_owned(),
        Some((_, parents)) => parents.join("/"),
    }
}

impl Shape<'_> {
    /// What breaks the tidy rules, one line each.
    pub fn violations(&self) -> Vec<String> {
        self.outcomes
            .iter()
            .flat_map(|outcome| outcome.violations.iter().cloned())
            .collect()
    }

    pub fn report(&self, longest: usize) -> String {
        let mut out = String::new();
        self.report_service(&mut out);
        self.report_lengths(&mut out, longest);
        let read: Vec<&SourceFile> = self.files.iter().collect();
        let total: usize = read.iter().map(|file| file.lines).sum();
        let _ = writeln!(
            out,
            "\ntidy rules: {} Rust files of the workspace parsed ({total} lines); per rule, \
             the files and lines it reads and what breaks it:",
            read.len()
        );
        for outcome in &self.outcomes {
            let _ = writeln!(
                out,
                "  {:<25} {:>4} files {:>7} lines  broken {:>3}  let stand {:>3}  ({})",
                outcome.rule.name,
                outcome.files,
                outcome.lines,
                outcome.violations.len(),
                outcome.allowed.len(),
                outcome.rule.keeps
            );
        }
        let allowed: Vec<&(String, &str)> = self.outcomes.iter().flat_map(|o| &o.allowed).collect();
        let _ = writeln!(
            out,
            "\nlet stand for now (rules::ALLOWED): {}",
            allowed.len()
        );
        for (violation, why) in allowed {
            let _ = writeln!(out, "  {violation}\n      because {why}");
        }
        for (rule, text, _) in rules::ALLOWED {
            let used = self.outcomes.iter().any(|outcome| {
                outcome.rule.name == *rule && outcome.allowed.iter().any(|(v, _)| v.contains(text))
            });
            if !used {
                let _ = writeln!(
                    out,
                    "  an allowance matches nothing now, delete it: ({rule:?}, {text:?})"
                );
            }
        }
        let violations = self.violations();
        let _ = writeln!(out, "\ntidy rules broken: {}", violations.len());
        for violation in violations {
            let _ = writeln!(out, "  {violation}");
        }
        out
    }

    /// `generated_server` per folder of `service/src`, and the runtime names used.
    fn report_service(&self, out: &mut String) {
        let mut per_folder: BTreeMap<String, (usize, usize, BTreeMap<&str, usize>)> =
            BTreeMap::new();
        for file in self.files.iter().filter(|file| rules::service_code(file)) {
            let entry = per_folder.entry(folder(&file.module)).or_default();
            entry.1 += 1;
            let named: Vec<&facts::Named> = file
                .facts
                .paths
                .iter()
                .filter(|named| named.starts_with("generated_server"))
                .collect();
            if !named.is_empty() {
                entry.0 += 1;
            }
            for name in RUNTIME_NAMES {
                if named
                    .iter()
                    .any(|n| n.path.get(1).is_some_and(|s| s == name))
                {
                    *entry.2.entry(name).or_default() += 1;
                }
            }
        }
        let _ = writeln!(
            out,
            "files naming generated_server, per folder of service/src:"
        );
        for (folder, (naming, all, runtime)) in per_folder {
            let names: Vec<String> = runtime
                .iter()
                .map(|(name, files)| format!("{name} {files}"))
                .collect();
            let names = if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            };
            let _ = writeln!(
                out,
                "  {folder:<16} {naming:>2}/{all:<2}  runtime names: {names}"
            );
        }
    }

    /// The longest functions and files of the hand-written code, per crate.
    fn report_lengths(&self, out: &mut String, longest: usize) {
        let hand_written: Vec<&SourceFile> = self
            .files
            .iter()
            .filter(|file| rules::hand_written(file))
            .collect();
        let mut functions: Vec<(usize, String)> = hand_written
            .iter()
            .flat_map(|file| {
                file.facts
                    .functions
                    .iter()
                    .map(|f| (f.lines, format!("{}:{} {}", file.path, f.line, f.name)))
            })
            .collect();
        functions.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let over = |limit: usize| functions.iter().filter(|(n, _)| *n > limit).count();
        let _ = writeln!(
            out,
            "\nhand-written functions outside tests: {}; over 80 lines: {}; over {}: {}; the longest:",
            functions.len(),
            over(80),
            rules::FUNCTION_LINES_MAX,
            over(rules::FUNCTION_LINES_MAX)
        );
        for (lines, at) in functions.iter().take(longest) {
            let _ = writeln!(out, "  {lines:>4}  {at}");
        }
        let mut per_crate: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for file in &hand_written {
            let entry = per_crate.entry(file.krate.as_str()).or_default();
            entry.0 += 1;
            entry.1 += file.lines;
        }
        let _ = writeln!(out, "\nhand-written files outside tests, per crate:");
        for (krate, (files, lines)) in per_crate {
            let _ = writeln!(out, "  {krate:<17} {files:>4} files {lines:>7} lines");
        }
        let mut files: Vec<&&SourceFile> = hand_written.iter().collect();
        files.sort_by(|a, b| b.lines.cmp(&a.lines).then_with(|| a.path.cmp(&b.path)));
        let _ = writeln!(out, "the largest:");
        for file in files.iter().take(8) {
            let _ = writeln!(out, "  {:>5}  {}", file.lines, file.path);
        }
    }
}

/// Prints the tidy rules' report on the workspace at `root` (default: this one; another
/// checkout's to compare, e.g. a `git worktree` of an older commit), and fails when a rule
/// is broken.
pub fn run(longest: usize, root: Option<&Path>) -> Result<()> {
    let root = root.map_or_else(crate::spec::workspace_root, Path::to_path_buf);
    let files = reader::read_workspace(&root)?;
    let shape = measure(&files);
    print!("{}", shape.report(longest));
    let broken = shape.violations().len();
    anyhow::ensure!(broken == 0, "{broken} tidy rule violation(s)");
    Ok(())
}

#[cfg(test)]
mod tests;
