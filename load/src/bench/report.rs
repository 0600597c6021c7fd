//! A run's results: the measurements of each store, the references, the ratios the issue's
//! targets are stated in, and three ways to show them (a table on stdout, JSON, a section of
//! BENCHMARKS.md).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{json, Value};

use super::driver::{round, Measurement, SLOW};
use super::reference::Reference;
use super::soak::{Soak, P99_MAX_MS};
use crate::cluster::StoreKind;

/// Where the section a run writes into BENCHMARKS.md begins and ends.
pub const SECTION_BEGIN: &str = "<!-- kobo-load bench: results begin -->";
pub const SECTION_END: &str = "<!-- kobo-load bench: results end -->";

pub const PAYOUTS: &str = "payouts";
pub const DASHBOARD: &str = "dashboard";
pub const HOT: &str = "hot";
pub const CREDITS: &str = "credits";
pub const INTERBANK: &str = "interbank";
pub const HEALTHZ: &str = "healthz";
pub const PROFILE: &str = "get_profile";

pub fn reads_first(rows: &str) -> String {
    format!("reads first page @{rows}")
}

pub fn reads_deep(rows: &str) -> String {
    format!("reads deep page @{rows}")
}

pub fn statement_first(rows: &str) -> String {
    format!("statement first page @{rows}")
}

pub fn statement_month(rows: &str) -> String {
    format!("statement month @{rows}")
}

/// `100000` → `100k`, `10000000` → `10M`.
pub fn rows_label(rows: u64) -> String {
    match rows {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1000 && n % 1000 == 0 => format!("{}k", n / 1000),
        n => n.to_string(),
    }
}

/// One measured scenario.
pub struct Row {
    pub scenario: String,
    pub measurement: Measurement,
    /// What else to know to read it (how the rows were made, the depth of a page ...).
    pub note: Option<String>,
}

/// Everything measured on one store.
pub struct StoreReport {
    pub store: StoreKind,
    pub rows: Vec<Row>,
    /// (what, why) for what was not measured.
    pub skipped: Vec<(String, String)>,
    /// (what, the error) for what could not run: the harness broke.
    pub failed: Vec<(String, String)>,
    pub ledger: Option<Reference>,
    /// The export scenario's rows per second and the server's memory while it ran.
    pub export: Option<Reference>,
    /// The payroll scenario: a bulk transfer's items per second.
    pub payroll: Option<Reference>,
    pub soak: Option<Soak>,
    /// The row counts of the reads' small and large accounts, when measured.
    pub reads_small: Option<String>,
    pub reads_big: Option<String>,
    /// The history labels of the statement's small and large accounts, when measured.
    pub statement_small: Option<String>,
    pub statement_big: Option<String>,
    pub notes: Vec<String>,
}

impl StoreReport {
    pub fn new(store: StoreKind) -> StoreReport {
        StoreReport {
            store,
            rows: Vec::new(),
            skipped: Vec::new(),
            failed: Vec::new(),
            ledger: None,
            export: None,
            payroll: None,
            soak: None,
            reads_small: None,
            reads_big: None,
            statement_small: None,
            statement_big: None,
            notes: Vec::new(),
        }
    }

    pub fn name(&self) -> &'static str {
        store_name(self.store)
    }

    /// Adds a measurement and says how it went, at once (a run is long).
    pub fn add(
        &mut self,
        scenario: impl Into<String>,
        measurement: Measurement,
        note: Option<String>,
    ) {
        let row = Row {
            scenario: scenario.into(),
            measurement,
            note,
        };
        println!("  {:<9} {}", self.name(), summary(&row));
        self.rows.push(row);
    }

    pub fn skip(&mut self, scenario: impl Into<String>, why: impl Into<String>) {
        let (scenario, why) = (scenario.into(), why.into());
        println!("  {:<9} {scenario}: skipped: {why}", self.name());
        self.skipped.push((scenario, why));
    }

    /// A scenario that could not run (the rest of the store's still do).
    pub fn fail(&mut self, scenario: impl Into<String>, error: &anyhow::Error) {
        let (scenario, error) = (scenario.into(), format!("{error:#}"));
        println!("  {:<9} {scenario}: FAILED: {error}", self.name());
        self.failed.push((scenario, error));
    }

    pub fn get(&self, scenario: &str) -> Option<&Measurement> {
        self.rows
            .iter()
            .find(|row| row.scenario == scenario)
            .map(|row| &row.measurement)
    }

    fn throughput(&self, scenario: &str) -> Option<f64> {
        self.get(scenario)
            .filter(|m| m.ok > 0)
            .map(Measurement::throughput)
    }

    fn p99(&self, scenario: &str) -> Option<f64> {
        self.get(scenario).filter(|m| m.ok > 0).map(|m| m.ms(0.99))
    }

    /// The scenarios that show the harness (not the system) broke: nothing succeeded, or
    /// something failed (every request is one that should succeed).
    pub fn broken(&self) -> Vec<String> {
        let mut broken: Vec<String> = self
            .rows
            .iter()
            .filter(|row| row.measurement.ok == 0 || row.measurement.failed() > 0)
            .map(|row| format!("{} {}", self.name(), row.scenario))
            .collect();
        if let Some(soak) = &self.soak {
            if soak.measurement.ok == 0 || soak.measurement.failed() > 0 {
                broken.push(format!("{} soak", self.name()));
            }
        }
        broken.extend(
            self.failed
                .iter()
                .map(|(scenario, _)| format!("{} {scenario}", self.name())),
        );
        broken
    }
}

pub fn store_name(store: StoreKind) -> &'static str {
    match store {
        StoreKind::Sqlite => "sqlite",
        StoreKind::Postgres => "postgres",
    }
}

/// The machine a run measured.
pub struct Machine {
    pub cpu: String,
    pub cores: usize,
    pub memory_gib: f64,
    pub kernel: String,
    /// `/proc/loadavg` (1, 5 and 15 minutes) when the run began: anything else running on
    /// the machine takes from the figures.
    pub load_before: String,
}

impl Machine {
    pub fn here() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|line| line.strip_prefix("model name"))
            .and_then(|rest| rest.split_once(':'))
            .map_or("unknown".to_owned(), |(_, model)| model.trim().to_owned());
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let memory_kib: f64 = meminfo
            .lines()
            .find_map(|line| line.strip_prefix("MemTotal:"))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse().ok())
            .unwrap_or(0.0);
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map_or(0, usize::from),
            memory_gib: round(memory_kib / 1024.0 / 1024.0, 1),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map_or("unknown".to_owned(), |release| release.trim().to_owned()),
            load_before: load_average(),
        }
    }

    pub fn describe(&self) -> String {
        format!(
            "{}, {} cores, {} GiB, Linux {}; load average {} before the run",
            self.cpu, self.cores, self.memory_gib, self.kernel, self.load_before
        )
    }
}

/// The 1, 5 and 15-minute load averages.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".into())
}

/// The whole run.
pub struct Report {
    /// "full run", "smoke run" ...: how far the figures can be trusted.
    pub kind: String,
    pub machine: Machine,
    pub date: String,
    pub commit: String,
    pub command: String,
    pub kobo: String,
    pub settings: Value,
    pub pgbench: Option<Reference>,
    pub skipped: Vec<(String, String)>,
    /// References that could not run (the harness broke).
    pub failed: Vec<(String, String)>,
    pub stores: Vec<StoreReport>,
}

/// Which way a ratio must go.
#[derive(Clone, Copy, Debug)]
pub enum Bound {
    AtLeast(f64),
    AtMost(f64),
    /// For information: no target.
    None,
}

pub struct Ratio {
    pub name: &'static str,
    pub store: &'static str,
    /// `None`: an input was not measured (`why`).
    pub value: Option<f64>,
    pub bound: Bound,
    pub why: &'static str,
}

impl Ratio {
    pub fn verdict(&self) -> &'static str {
        match (self.value, self.bound) {
            (None, _) => "n/a",
            (Some(_), Bound::None) => "info",
            (Some(value), Bound::AtLeast(min)) if value >= min => "PASS",
            (Some(value), Bound::AtMost(max)) if value <= max => "PASS",
            _ => "FAIL",
        }
    }

    fn target(&self) -> String {
        match self.bound {
            Bound::AtLeast(min) => format!(">= {min}"),
            Bound::AtMost(max) => format!("<= {max}"),
            Bound::None => "-".into(),
        }
    }

    fn value_text(&self) -> String {
        self.value
            .map_or_else(|| format!("n/a ({})", self.why), |v| format!("{v:.2}"))
    }
}

fn divide(numerator: Option<f64>, denominator: Option<f64>) -> Option<f64> {
    match (numerator, denominator) {
        (Some(n), Some(d)) if d > 0.0 => Some(n / d),
        _ => None,
    }
}

impl Report {
    /// The ratios, store by store, each against its target.
    pub fn ratios(&self) -> Vec<Ratio> {
        let mut ratios = Vec::new();
        for store in &self.stores {
            let name = store.name();
            let payouts = store.throughput(PAYOUTS);
            let ledger = store.ledger.as_ref().map(|r| r.per_second);
            match store.store {
                StoreKind::Postgres => ratios.push(Ratio {
                    name: "payouts / pgbench tps",
                    store: name,
                    value: divide(payouts, self.pgbench.as_ref().map(|r| r.per_second)),
                    bound: Bound::AtLeast(0.5),
                    why: "not measured",
                }),
                StoreKind::Sqlite => {}
            }
            ratios.push(Ratio {
                name: "payouts / raw ledger loop",
                store: name,
                value: divide(payouts, ledger),
                bound: match store.store {
                    StoreKind::Sqlite => Bound::AtLeast(0.7),
                    StoreKind::Postgres => Bound::None,
                },
                why: "not measured",
            });
            ratios.push(Ratio {
                name: "hot / payouts",
                store: name,
                value: divide(store.throughput(HOT), payouts),
                bound: Bound::AtLeast(0.7),
                why: "not measured",
            });
            // Issue 60: a salary run paid as one bulk transfer against the same run paid one
            // payout request at a time from the same account.
            ratios.push(Ratio {
                name: "payroll items/s / hot",
                store: name,
                value: divide(
                    store.payroll.as_ref().map(|r| r.per_second),
                    store.throughput(HOT),
                ),
                bound: Bound::AtLeast(3.0),
                why: "not measured",
            });
            ratios.push(Ratio {
                name: "hot p99, ms",
                store: name,
                value: store.p99(HOT),
                bound: Bound::AtMost(100.0),
                why: "not measured",
            });
            let healthz = store.throughput(HEALTHZ);
            ratios.push(Ratio {
                name: "reads first page / healthz",
                store: name,
                value: divide(
                    store
                        .reads_small
                        .as_deref()
                        .and_then(|rows| store.throughput(&reads_first(rows))),
                    healthz,
                ),
                bound: Bound::AtLeast(0.3),
                why: "not measured",
            });
            ratios.push(Ratio {
                name: "p99 deep page: big / small",
                store: name,
                value: match (&store.reads_big, &store.reads_small) {
                    (Some(big), Some(small)) => {
                        divide(store.p99(&reads_deep(big)), store.p99(&reads_deep(small)))
                    }
                    _ => None,
                },
                bound: Bound::AtMost(1.5),
                why: "no big account",
            });
            // Issue 61: the same month's statement, whole (every page), of an account with
            // a long history against one with a short one; its first page for information.
            let statement =
                |label: fn(&str) -> String| match (&store.statement_big, &store.statement_small) {
                    (Some(big), Some(small)) => {
                        divide(store.p99(&label(big)), store.p99(&label(small)))
                    }
                    _ => None,
                };
            ratios.push(Ratio {
                name: "p99 statement: big / small",
                store: name,
                value: statement(statement_month),
                bound: Bound::AtMost(1.5),
                why: "no big account",
            });
            ratios.push(Ratio {
                name: "p99 statement p.1: big / small",
                store: name,
                value: statement(statement_first),
                bound: Bound::None,
                why: "no big account",
            });
            ratios.push(Ratio {
                name: "get_profile / healthz",
                store: name,
                value: divide(store.throughput(PROFILE), healthz),
                bound: Bound::AtLeast(0.5),
                why: "not measured",
            });
            // The same, by the server's own CPU per request (`cpu`): without the generator's
            // and the database's shares of the cores.
            let server_cpu = |scenario| store.get(scenario)?.cpu.map(|cpu| cpu.server);
            ratios.push(Ratio {
                name: "get_profile / healthz, server CPU",
                store: name,
                value: divide(server_cpu(HEALTHZ), server_cpu(PROFILE)),
                bound: Bound::None,
                why: "not measured",
            });
        }
        ratios
    }

    /// Every scenario that shows the harness broke.
    pub fn broken(&self) -> Vec<String> {
        self.failed
            .iter()
            .map(|(what, _)| what.clone())
            .chain(self.stores.iter().flat_map(StoreReport::broken))
            .collect()
    }

    pub fn to_json(&self) -> Value {
        json!({
            "kind": self.kind,
            "generator": generator(),
            "date": self.date,
            "commit": self.commit,
            "command": self.command,
            "kobo": self.kobo,
            "machine": {
                "cpu": self.machine.cpu,
                "cores": self.machine.cores,
                "memory_gib": self.machine.memory_gib,
                "kernel": self.machine.kernel,
                "load_average_before": self.machine.load_before,
                "load_average_after": load_average(),
            },
            "settings": self.settings,
            "pgbench": self.pgbench.as_ref().map(Reference::to_json),
            "skipped": skipped_json(&self.skipped),
            "failed": skipped_json(&self.failed),
            "stores": self.stores.iter().map(|store| json!({
                "store": store.store,
                "scenarios": store.rows.iter().map(|row| {
                    let mut value = row.measurement.to_json();
                    value["scenario"] = json!(row.scenario);
                    value["note"] = json!(row.note);
                    value
                }).collect::<Vec<_>>(),
                "ledger": store.ledger.as_ref().map(Reference::to_json),
                "export": store.export.as_ref().map(Reference::to_json),
                "payroll": store.payroll.as_ref().map(Reference::to_json),
                "soak": store.soak.as_ref().map(Soak::to_json),
                "skipped": skipped_json(&store.skipped),
                "failed": store.failed.iter().map(|(what, error)| json!({"what": what, "error": error})).collect::<Vec<_>>(),
                "notes": store.notes,
            })).collect::<Vec<_>>(),
            "ratios": self.ratios().iter().map(|ratio| json!({
                "ratio": ratio.name,
                "store": ratio.store,
                "value": ratio.value.map(|v| round(v, 3)),
                "target": ratio.target(),
                "verdict": ratio.verdict(),
            })).collect::<Vec<_>>(),
            "broken": self.broken(),
        })
    }

    /// The human table.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "\n{:<9} {:<28} {:>8} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8}  errors",
            "store", "scenario", "ok", "ops/s", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms"
        );
        for store in &self.stores {
            for row in &store.rows {
                let m = &row.measurement;
                let _ = writeln!(
                    out,
                    "{:<9} {:<28} {:>8} {:>9.1} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3}  {}",
                    store.name(),
                    row.scenario,
                    m.ok,
                    m.throughput(),
                    m.ms(0.5),
                    m.ms(0.9),
                    m.ms(0.99),
                    m.ms(0.999),
                    m.max_ms(),
                    errors_text(m)
                );
            }
            if let Some(soak) = &store.soak {
                let m = &soak.measurement;
                let _ = writeln!(
                    out,
                    "{:<9} {:<28} {:>8} {:>9.1} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3}  {}",
                    store.name(),
                    format!("soak @{:.0}/s", soak.rate),
                    m.ok,
                    m.throughput(),
                    m.ms(0.5),
                    m.ms(0.9),
                    m.ms(0.99),
                    m.ms(0.999),
                    m.max_ms(),
                    errors_text(m)
                );
            }
            for (what, why) in &store.skipped {
                let _ = writeln!(out, "{:<9} {:<28} skipped: {why}", store.name(), what);
            }
            for (what, error) in &store.failed {
                let _ = writeln!(out, "{:<9} {:<28} !! FAILED: {error}", store.name(), what);
            }
        }
        let _ = writeln!(out, "\nreferences");
        self.write_references(&mut out, "  ");
        let _ = writeln!(
            out,
            "\n{:<30} {:<9} {:>16} {:>8}  verdict",
            "ratio", "store", "value", "target"
        );
        for ratio in self.ratios() {
            let _ = writeln!(
                out,
                "{:<30} {:<9} {:>16} {:>8}  {}",
                ratio.name,
                ratio.store,
                ratio.value_text(),
                ratio.target(),
                ratio.verdict()
            );
        }
        let failures: Vec<String> = self
            .stores
            .iter()
            .flat_map(|store| {
                store.rows.iter().flat_map(move |row| {
                    row.measurement
                        .errors
                        .iter()
                        .map(move |(label, (count, example))| {
                            format!(
                                "  {} {}: {count} x {label}: {example}",
                                store.name(),
                                row.scenario
                            )
                        })
                })
            })
            .collect();
        if !failures.is_empty() {
            let _ = writeln!(
                out,
                "\n!!! ERRORS: operations that should have succeeded did not"
            );
            for line in failures {
                let _ = writeln!(out, "{line}");
            }
        }
        out
    }

    /// The references and the soaks, a line each after `bullet`, for the terminal and for
    /// BENCHMARKS.md alike.
    fn write_references(&self, out: &mut String, bullet: &str) {
        let references = self.reference_lines();
        if references.is_empty() {
            let _ = writeln!(out, "{bullet}none measured");
        }
        for line in references {
            let _ = writeln!(out, "{bullet}{line}");
        }
        for store in &self.stores {
            if let Some(soak) = &store.soak {
                let _ = writeln!(out, "{bullet}{} soak: {}", store.name(), soak_text(soak));
            }
        }
    }

    fn reference_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        match &self.pgbench {
            Some(pgbench) => lines.push(format!(
                "pgbench: {:.1} tps ({})",
                pgbench.per_second,
                pgbench.detail["command"].as_str().unwrap_or_default()
            )),
            None => lines.extend(
                self.skipped
                    .iter()
                    .map(|(what, why)| format!("{what}: skipped: {why}")),
            ),
        }
        lines.extend(
            self.failed
                .iter()
                .map(|(what, error)| format!("{what}: FAILED: {error}")),
        );
        for store in &self.stores {
            if let Some(ledger) = &store.ledger {
                lines.push(format!(
                    "{} raw ledger loop (kobo bench ledger): {:.1} transfers/s ({} transfers in {:.2} s)",
                    store.name(),
                    ledger.per_second,
                    ledger.detail["transfers"],
                    ledger.detail["seconds"].as_f64().unwrap_or(0.0)
                ));
            }
            if let Some(export) = &store.export {
                let mib = |field: &str| export.detail[field].as_u64().unwrap_or(0) / 1024;
                lines.push(format!(
                    "{} export of {} rows (transaction_csv): {:.0} rows/s ({:.2} s, {} parts); server RSS {} MiB before, {} MiB at its peak",
                    store.name(),
                    export.detail["rows"],
                    export.per_second,
                    export.detail["seconds"].as_f64().unwrap_or(0.0),
                    export.detail["parts"],
                    mib("rss_before_kib"),
                    mib("rss_peak_kib")
                ));
            }
            if let Some(payroll) = &store.payroll {
                lines.push(format!(
                    "{} payroll: {} intra-bank items of one bulk transfer paid in {:.2} s after its authorisation: {:.1} items/s (the first taken after {:.2} s; {:.1} items/s from there; validated in {:.2} s)",
                    store.name(),
                    payroll.detail["items"],
                    payroll.detail["seconds"].as_f64().unwrap_or(0.0),
                    payroll.per_second,
                    payroll.detail["first_item_seconds"].as_f64().unwrap_or(0.0),
                    payroll.detail["items_per_second_after_first"].as_f64().unwrap_or(0.0),
                    payroll.detail["validate_seconds"].as_f64().unwrap_or(0.0),
                ));
            }
            for note in &store.notes {
                lines.push(format!("{} {note}", store.name()));
            }
        }
        lines
    }

    /// The section of BENCHMARKS.md, markers included.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{SECTION_BEGIN}");
        let _ = writeln!(out, "## Results: {}\n", self.kind);
        let _ = writeln!(
            out,
            "- **Date**: {}\n- **Machine**: {} (after: {})\n- **Commit**: `{}`\n- **Server**: `{}`\n- **Load generator**: kobo-load, {}\n- **Command**: `{}`\n- **Settings**: `{}`\n",
            self.date,
            self.machine.describe(),
            load_average(),
            self.commit,
            self.kobo,
            generator(),
            self.command,
            self.settings
        );
        let _ = writeln!(
            out,
            "| store | scenario | ok | ops/s | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | errors |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
        );
        for store in &self.stores {
            for row in &store.rows {
                let m = &row.measurement;
                let scenario = match &row.note {
                    Some(note) => format!("{} ({note})", row.scenario),
                    None => row.scenario.clone(),
                };
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {:.1} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {} |",
                    store.name(),
                    scenario,
                    m.ok,
                    m.throughput(),
                    m.ms(0.5),
                    m.ms(0.9),
                    m.ms(0.99),
                    m.ms(0.999),
                    m.max_ms(),
                    errors_text(m)
                );
            }
            for (what, why) in &store.skipped {
                let _ = writeln!(
                    out,
                    "| {} | {what} | | | | | | | | skipped: {why} |",
                    store.name()
                );
            }
            for (what, error) in &store.failed {
                let _ = writeln!(
                    out,
                    "| {} | {what} | | | | | | | | FAILED: {} |",
                    store.name(),
                    error.replace('|', "/")
                );
            }
        }
        let _ = writeln!(out, "\n**References**\n");
        self.write_references(&mut out, "- ");
        let _ = writeln!(
            out,
            "\n**Ratios**\n\n| ratio | store | value | target | verdict |\n|---|---|---:|---|---|"
        );
        for ratio in self.ratios() {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                ratio.name,
                ratio.store,
                ratio.value_text(),
                ratio.target(),
                ratio.verdict()
            );
        }
        let broken = self.broken();
        if !broken.is_empty() {
            let _ = writeln!(
                out,
                "\n**Errors** in: {} (see the JSON for the codes).",
                broken.join(", ")
            );
        }
        let _ = writeln!(out, "{SECTION_END}");
        out
    }

    /// Replaces the results section of the Markdown file at `path` (appends one when it has
    /// none; creates the file when there is none).
    pub fn write_markdown(&self, path: &Path) -> Result<()> {
        let existing = std::fs::read_to_string(path).unwrap_or_default();
        let updated = replace_section(&existing, &self.markdown());
        std::fs::write(path, updated).with_context(|| format!("cannot write {}", path.display()))
    }
}

/// `document` with its results section replaced by `section`, or `section` appended.
fn replace_section(document: &str, section: &str) -> String {
    match (document.find(SECTION_BEGIN), document.find(SECTION_END)) {
        (Some(begin), Some(end)) if begin < end => {
            let after = &document[end + SECTION_END.len()..];
            format!("{}{}{}", &document[..begin], section.trim_end(), after)
        }
        _ if document.is_empty() => section.to_owned(),
        _ => format!("{}\n\n{section}", document.trim_end()),
    }
}

/// How this program was built: a debug build takes CPU the server would otherwise have.
fn generator() -> &'static str {
    if cfg!(debug_assertions) {
        "debug build"
    } else {
        "release build"
    }
}

fn errors_text(measurement: &Measurement) -> String {
    if measurement.errors.is_empty() {
        return if measurement.ok == 0 {
            "!! NOTHING SUCCEEDED".into()
        } else {
            "none".into()
        };
    }
    let list: Vec<String> = measurement
        .errors
        .iter()
        .map(|(label, (count, _))| format!("{count} x {label}"))
        .collect();
    format!("!! ERRORS: {}", list.join("; "))
}

fn soak_text(soak: &Soak) -> String {
    let m = &soak.measurement;
    let p99 = m.ms(0.99);
    let worst: Vec<String> = m
        .worst_seconds(3)
        .iter()
        .map(|(second, due, slow, max)| {
            format!("{slow} of {due} at {second} s, longest {max:.0} ms")
        })
        .collect();
    format!(
        "{:.0} payouts/s offered for {:.0} s, {:.1}/s done; p99 {:.3} ms (target < {P99_MAX_MS} ms: {}); \
         over {} ms in {} of {} seconds{}; \
         RSS idle {} MiB, after settling {} MiB, last {} MiB, max {} MiB: {}",
        soak.rate,
        m.seconds,
        m.throughput(),
        p99,
        if p99 < P99_MAX_MS { "PASS" } else { "FAIL" },
        SLOW.as_millis(),
        m.seconds_with_slow(),
        m.by_second.len(),
        if worst.is_empty() {
            String::new()
        } else {
            format!(" (worst: {})", worst.join("; "))
        },
        soak.idle_kib() / 1024,
        soak.first_kib() / 1024,
        soak.last_kib() / 1024,
        soak.max_kib() / 1024,
        if soak.flat() {
            "flat within 10% (PASS)"
        } else {
            "NOT flat within 10% (FAIL)"
        }
    )
}

fn skipped_json(skipped: &[(String, String)]) -> Value {
    json!(skipped
        .iter()
        .map(|(what, why)| json!({"what": what, "why": why}))
        .collect::<Vec<_>>())
}

/// One line for a measurement as it finishes.
fn summary(row: &Row) -> String {
    let m = &row.measurement;
    format!(
        "{}: {:.1} ops/s, p50 {:.3} ms, p99 {:.3} ms, {}{}{}",
        row.scenario,
        m.throughput(),
        m.ms(0.5),
        m.ms(0.99),
        errors_text(m),
        row.note
            .as_ref()
            .map_or(String::new(), |note| format!(" ({note})")),
        m.cpu.map_or(String::new(), |cpu| format!("; {cpu}"))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_counts_are_labelled_shortly() {
        assert_eq!(rows_label(100_000), "100k");
        assert_eq!(rows_label(10_000_000), "10M");
        assert_eq!(rows_label(2_000), "2k");
        assert_eq!(rows_label(1_234), "1234");
    }

    #[test]
    fn the_results_section_is_replaced_or_appended() {
        let section = format!("{SECTION_BEGIN}\nnew\n{SECTION_END}\n");
        let document = format!("# B\n\nintro\n\n{SECTION_BEGIN}\nold\n{SECTION_END}\n\ntail\n");
        assert_eq!(
            replace_section(&document, &section),
            format!("# B\n\nintro\n\n{SECTION_BEGIN}\nnew\n{SECTION_END}\n\ntail\n")
        );
        assert_eq!(
            replace_section("# B\n", &section),
            format!("# B\n\n{section}")
        );
        assert_eq!(replace_section("", &section), section);
    }

    #[test]
    fn ratios_are_judged_against_their_bounds() {
        let ratio = |value, bound| Ratio {
            name: "x",
            store: "sqlite",
            value,
            bound,
            why: "",
        };
        assert_eq!(ratio(Some(0.6), Bound::AtLeast(0.5)).verdict(), "PASS");
        assert_eq!(ratio(Some(0.4), Bound::AtLeast(0.5)).verdict(), "FAIL");
        assert_eq!(ratio(Some(1.6), Bound::AtMost(1.5)).verdict(), "FAIL");
        assert_eq!(ratio(None, Bound::AtMost(1.5)).verdict(), "n/a");
        assert_eq!(ratio(Some(1.0), Bound::None).verdict(), "info");
    }
}
