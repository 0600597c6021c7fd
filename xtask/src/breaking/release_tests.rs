//! The version gate, `cargo xtask release`, and the released spec as the gate's base.
//!
//! Each test that runs a command builds a workspace of its own in a temporary directory
//! ([`Workspace`]: `spec/openapi.yaml`, `spec/released/`, `spec/CHANGELOG.md`), so that nothing
//! here reads or writes the real files but [`super::RELEASED`], read only. The documents are the
//! lint's valid fixture (`xtask/tests/fixtures/lint/valid.yaml`), released at 1.0.0, and edited.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::release::{release, README};
use super::version::{self, Version};
use super::{compare, gate, Base, RELEASED};
use crate::spec;

const FIXTURE: &str = include_str!("../../tests/fixtures/lint/valid.yaml");

/// The released README of the temporary workspaces (as the real one writes it).
const README_TEXT: &str = "# The released spec\n\nReleased version (its `info.version`): **1.0.0**\n\nNever edit it by hand.\n";

/// An optional response field: an addition clients can see, no break.
const ADD_NICKNAME: (&str, &str) = (
    "        created_at:\n          type: string\n          format: date-time\n",
    "        created_at:\n          type: string\n          format: date-time\n        nickname:\n          type: string\n          nullable: true\n",
);

/// A request field narrowed: a break.
const NARROW_AMOUNT: (&str, &str) = (
    "          pattern: '^[0-9]+(\\.[0-9]{1,2})?$'\n",
    "          pattern: '^[0-9]+(\\.[0-9]{1,2})?$'\n          maxLength: 12\n",
);

/// Prose and examples only: what a client cannot see.
const PROSE: &[(&str, &str)] = &[
    (
        "summary: Get one account",
        "summary: Get an account of the business",
    ),
    (
        "description: Read account details and balances.",
        "description: Read accounts.",
    ),
    (
        "                  reference: TRF-0001",
        "                  reference: TRF-0002",
    ),
];

/// The fixture at `version` with each `(from, to)` applied; `from` must occur exactly once.
#[track_caller]
fn document(version: &str, edits: &[(&str, &str)]) -> String {
    let mut text = FIXTURE.replace("  version: 0.0.0", &format!("  version: {version}"));
    for (from, to) in edits {
        assert_eq!(
            text.matches(from).count(),
            1,
            "the edit must match once: {from:?}"
        );
        text = text.replace(from, to);
    }
    text
}

fn parse(text: &str) -> Value {
    spec::parse(text).expect("the document parses")
}

/// A workspace of its own, in a temporary directory removed when dropped.
struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// `spec/openapi.yaml` is `spec`, `spec/released/openapi.yaml` is `released` (with its
    /// README naming 1.0.0), and `spec/CHANGELOG.md` is `changelog` (none when `None`).
    fn new(name: &str, spec: &str, released: &str, changelog: Option<&str>) -> Workspace {
        let root = std::env::temp_dir().join(format!("xtask-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let workspace = Workspace { root };
        workspace.write(spec::KOBO.spec, spec);
        workspace.write(RELEASED, released);
        workspace.write(README, README_TEXT);
        if let Some(changelog) = changelog {
            workspace.write(super::changelog::CHANGELOG, changelog);
        }
        workspace
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().expect("a file in a folder")).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative)).unwrap()
    }

    fn root(&self) -> &Path {
        &self.root
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// A changelog with a section for `version` (saying `body`) above 1.0.0's.
fn changelog(version: &str, body: &str) -> String {
    format!("# Changelog\n\n## {version}\n\n{body}\n\n## 1.0.0\n\nThe first release.\n")
}

/// The version gate's problems for `new` against the fixture released at 1.0.0.
fn version_problems(new: &str, changelog: Option<&str>) -> Vec<String> {
    let released = parse(&document("1.0.0", &[]));
    let new = parse(new);
    let breaks = !compare(&released, &new).is_empty();
    let verdict = version::judge(&released, &new, breaks, changelog);
    assert_eq!(
        verdict.problems.is_empty(),
        !verdict.passed.is_empty(),
        "a verdict passes or fails: {verdict:?}"
    );
    verdict.problems
}

#[track_caller]
fn assert_one_problem(problems: &[String], parts: &[&str]) {
    assert_eq!(problems.len(), 1, "{problems:#?}");
    for part in parts {
        assert!(problems[0].contains(part), "{part:?} in {}", problems[0]);
    }
}

// ---- Versions -----------------------------------------------------------------------------

#[test]
fn versions_are_major_minor_patch() {
    let parsed = Version::parse("2.4.0").expect("a version");
    assert_eq!((parsed.major, parsed.minor, parsed.patch), (2, 4, 0));
    assert_eq!(
        Version::parse("v2.10.3").map(|v| v.to_string()).as_deref(),
        Some("2.10.3")
    );
    for wrong in ["2.4", "2.4.0.1", "2.4.0-rc1", "two", "", "2..0"] {
        assert_eq!(Version::parse(wrong), None, "{wrong}");
    }
    assert!(Version::parse("2.10.0") > Version::parse("2.9.9"));
    assert_eq!(parsed.next_minor().to_string(), "2.5.0");
    assert_eq!(parsed.next_major().to_string(), "3.0.0");
}

// ---- The version gate ---------------------------------------------------------------------

#[test]
fn the_released_document_at_its_version_passes() {
    assert!(version_problems(&document("1.0.0", &[]), None).is_empty());
}

#[test]
fn prose_and_examples_may_change_without_a_new_version() {
    let new = document("1.0.0", PROSE);
    assert!(version::differences(&parse(&document("1.0.0", &[])), &parse(&new)).is_empty());
    assert!(version_problems(&new, None).is_empty());
}

#[test]
fn a_change_clients_see_needs_a_new_version() {
    let problems = version_problems(&document("1.0.0", &[ADD_NICKNAME]), None);
    assert_one_problem(
        &problems,
        &[
            "`info.version` is still the released 1.0.0",
            "Bump `info.version`: a minor for additions, a major for breaks; here 1.1.0",
            "#/components/schemas/Account/properties/nickname: added",
        ],
    );
    // A break: the bump to make is a major.
    let problems = version_problems(&document("1.0.0", &[NARROW_AMOUNT]), None);
    assert_one_problem(
        &problems,
        &[
            "here 2.0.0 (a major",
            "#/components/schemas/CreateTransferRequest/properties/amount/maxLength: added",
        ],
    );
}

#[test]
fn what_a_client_sees_is_everything_but_prose_and_examples() {
    let released = parse(&document("1.0.0", &[]));
    let differs =
        |edit: (&str, &str)| version::differences(&released, &parse(&document("1.0.0", &[edit])));
    // A property named like a prose keyword is a property.
    let described = differs((
        "        reference:\n          type: string\n",
        "        reference:\n          type: string\n        description:\n          type: string\n",
    ));
    assert_eq!(
        described,
        ["#/components/schemas/Transfer/properties/description: added"]
    );
    // A `title` names generated types; a code's meaning is in the catalog clients read.
    assert_eq!(
        differs((
            "    Transfer:\n      type: object",
            "    Transfer:\n      title: Payment\n      type: object"
        )),
        ["#/components/schemas/Transfer/title: added"]
    );
    assert_eq!(
        differs(("meaning: Too many requests,", "meaning: Slow down,")),
        ["#/x-response-codes/29/meaning: changed"]
    );
    // Lists are compared whole; a removed key is located in the released document.
    assert_eq!(
        differs((
            "x-response-codes: ['00', '01', '41']",
            "x-response-codes: ['00', '41']"
        )),
        ["#/paths/~1api~1v1~1account~1web~1get_account/post/x-response-codes: changed"]
    );
    assert_eq!(
        differs(("          x-origin: extension\n    Transfer:", "    Transfer:")),
        ["#/components/schemas/CreateTransferRequest/properties/beneficiary_email/x-origin: removed"]
    );
}

#[test]
fn a_version_older_than_the_released_one_fails() {
    let released = parse(&document("1.2.0", &[]));
    let new = parse(&document("1.1.9", &[]));
    let verdict = version::judge(&released, &new, false, None);
    assert_one_problem(
        &verdict.problems,
        &[
            "`info.version` is 1.1.9, older than the released 1.2.0",
            "versions only go up",
            "Set it to 1.2.0 if nothing a client sees changed, else to 1.3.0",
        ],
    );
}

#[test]
fn a_newer_version_needs_its_changelog_section() {
    let new = document("1.1.0", &[ADD_NICKNAME]);
    let problems = version_problems(&new, Some(&changelog("1.0.1", "Something else.")));
    assert_one_problem(
        &problems,
        &["`info.version` is 1.1.0, newer than the released 1.0.0, but spec/CHANGELOG.md has no `## 1.1.0` section: add one above `## 1.0.0`"],
    );
    let problems = version_problems(&new, None);
    assert_one_problem(
        &problems,
        &["there is no spec/CHANGELOG.md: create it with a `## 1.1.0` section"],
    );
    let with_section = changelog("1.1.0 (2027-02-01)", "Accounts have a nickname.");
    assert!(version_problems(&new, Some(&with_section)).is_empty());
}

#[test]
fn a_patch_changes_only_what_clients_cannot_see() {
    let with_section = changelog("1.0.1", "A fix.");
    assert!(version_problems(&document("1.0.1", PROSE), Some(&with_section)).is_empty());
    let problems = version_problems(&document("1.0.1", &[ADD_NICKNAME]), Some(&with_section));
    assert_one_problem(
        &problems,
        &[
            "1.0.1 is a patch of the released 1.0.0",
            "Make it 1.1.0",
            "nickname: added",
        ],
    );
}

#[test]
fn a_version_that_is_not_major_minor_patch_fails() {
    let problems = version_problems(&document("1.1", &[]), None);
    assert_one_problem(
        &problems,
        &["`info.version` is `1.1`: write it as MAJOR.MINOR.PATCH"],
    );
}

// ---- The gate, with its version gate ------------------------------------------------------

/// The gate of `cargo xtask breaking` over a workspace of `spec` with `changelog`, the fixture
/// released at 1.0.0.
fn run_gate(name: &str, spec: &str, changelog: Option<&str>, base: &Base) -> super::Report {
    let workspace = Workspace::new(name, spec, &document("1.0.0", &[]), changelog);
    gate(workspace.root(), base).expect("the gate runs")
}

#[test]
fn the_gate_fails_on_an_unversioned_addition() {
    let report = run_gate(
        "unversioned",
        &document("1.0.0", &[ADD_NICKNAME]),
        None,
        &Base::Released,
    );
    let failure = report.failure.expect("it fails");
    assert!(failure.contains("The version gate fails"), "{failure}");
    assert!(
        report.summary.contains("0 breaking changes"),
        "{}",
        report.summary
    );
    assert!(
        report
            .err
            .iter()
            .any(|line| line.starts_with("version gate: `info.version` is still")),
        "{:#?}",
        report.err
    );
}

#[test]
fn the_gate_passes_a_minor_with_its_section() {
    let log = changelog("1.1.0", "Accounts have a nickname.");
    let report = run_gate(
        "minor",
        &document("1.1.0", &[ADD_NICKNAME]),
        Some(&log),
        &Base::Released,
    );
    assert!(report.failure.is_none(), "{report:#?}");
    assert!(
        report.out.iter().any(|line| line.contains("version gate: version 1.1.0: newer than the released 1.0.0")),
        "{:#?}",
        report.out
    );
}

#[test]
fn the_gate_accepts_a_break_only_in_a_new_major_that_lists_it() {
    let location = "#/components/schemas/CreateTransferRequest/properties/amount/maxLength";
    let listed = format!("- `{location}`: amounts are shorter.");
    // A minor with the break listed: refused, the version gate passing.
    let report = run_gate(
        "break-minor",
        &document("1.1.0", &[NARROW_AMOUNT]),
        Some(&changelog("1.1.0", &listed)),
        &Base::Released,
    );
    let failure = report.failure.expect("a break in a minor fails");
    assert!(failure.contains("To break clients on purpose"), "{failure}");
    assert!(!failure.contains("version gate"), "{failure}");
    assert!(
        report.err.iter().any(|line| line.starts_with(location)),
        "{:#?}",
        report.err
    );
    assert!(
        report
            .err
            .iter()
            .any(|line| line.contains("breaks are accepted only with a new major version")),
        "{:#?}",
        report.err
    );
    // A major that lists it: accepted.
    let report = run_gate(
        "break-major",
        &document("2.0.0", &[NARROW_AMOUNT]),
        Some(&changelog("2.0.0", &listed)),
        &Base::Released,
    );
    assert!(report.failure.is_none(), "{report:#?}");
    assert!(
        report.summary.contains(
            "1 breaking change (reaching 1 place in operations and webhooks), 1 accepted"
        ),
        "{}",
        report.summary
    );
}

#[test]
fn against_another_base_the_version_gate_is_not_run() {
    let workspace = Workspace::new(
        "other-base",
        &document("1.0.0", &[ADD_NICKNAME]),
        &document("1.0.0", &[]),
        None,
    );
    let base = Base::File(workspace.path(RELEASED));
    let report = gate(workspace.root(), &base).expect("the gate runs");
    assert!(report.failure.is_none(), "{report:#?}");
    assert!(
        report
            .out
            .iter()
            .any(|line| line.starts_with("version gate: not run")),
        "{:#?}",
        report.out
    );
}

// ---- What 2.1 to 2.4 shipped is protected -------------------------------------------------

/// The path of `create_customer_account_web`, added in 2.3.0.
const CREATE_CUSTOMER_ACCOUNT_WEB: &str = "/api/v1/account/web/create_customer_account";

/// The released spec without `create_customer_account_web`, at `version`.
fn released_without_the_web_twin(version: &str) -> (Value, Value) {
    let released =
        spec::load(&spec::workspace_root().join(RELEASED)).expect("the released spec loads");
    let mut new = released.clone();
    let removed = new["paths"]
        .as_object_mut()
        .expect("paths")
        .shift_remove(CREATE_CUSTOMER_ACCOUNT_WEB)
        .expect("the released spec has create_customer_account_web (added in 2.3.0)");
    assert_eq!(
        removed["post"]["operationId"],
        "create_customer_account_web"
    );
    new["info"]["version"] = version.into();
    (released, new)
}

#[test]
fn the_released_spec_is_at_least_2_4_0() {
    let released =
        spec::load(&spec::workspace_root().join(RELEASED)).expect("the released spec loads");
    let version = released["info"]["version"]
        .as_str()
        .and_then(Version::parse);
    assert!(
        version >= Version::parse("2.4.0"),
        "{RELEASED} is {version:?}: it must be the last release, 2.4.0 or later"
    );
}

#[test]
fn removing_an_operation_added_in_2_3_0_is_a_break() {
    let (released, new) = released_without_the_web_twin("2.4.0");
    let found = compare(&released, &new);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        found[0].location,
        "#/operations/create_customer_account_web"
    );
    assert!(found[0].reason.contains("is removed"), "{}", found[0]);

    // Through the whole gate, as `.ci/breaking` runs it: refused at the released version, and
    // in a new minor with its section.
    let released_text = serde_json::to_string(&released).unwrap();
    for (name, version, log) in [
        ("web-twin-same", "2.4.0", None),
        (
            "web-twin-minor",
            "2.5.0",
            Some(changelog("2.5.0", "Removes the twin.")),
        ),
    ] {
        let (_, new) = released_without_the_web_twin(version);
        let workspace = Workspace::new(
            name,
            &serde_json::to_string(&new).unwrap(),
            &released_text,
            log.as_deref(),
        );
        let report = gate(workspace.root(), &Base::Released).expect("the gate runs");
        assert!(report.failure.is_some(), "{version}: {report:#?}");
        assert!(
            report
                .err
                .iter()
                .any(|line| line.starts_with("#/operations/create_customer_account_web: ")),
            "{version}: {:#?}",
            report.err
        );
        assert!(
            report.summary.contains("1 breaking change, 0 accepted"),
            "{}",
            report.summary
        );
    }
}

// ---- cargo xtask release ------------------------------------------------------------------

/// A workspace ready to release 1.1.0 (an addition, its changelog section).
fn releasable(name: &str) -> Workspace {
    Workspace::new(
        name,
        &document("1.1.0", &[ADD_NICKNAME]),
        &document("1.0.0", &[]),
        Some(&changelog("1.1.0", "Accounts have a nickname.")),
    )
}

#[track_caller]
fn assert_nothing_written(workspace: &Workspace) {
    assert_eq!(workspace.read(RELEASED), document("1.0.0", &[]));
    assert_eq!(workspace.read(README), README_TEXT);
}

#[test]
fn a_release_copies_the_spec_and_names_its_version() {
    let workspace = releasable("release");
    let said = release(workspace.root(), false).expect("it releases");
    assert_eq!(workspace.read(RELEASED), workspace.read(spec::KOBO.spec));
    assert_eq!(
        workspace.read(README),
        README_TEXT.replace("**1.0.0**", "**1.1.0**")
    );
    let said = said.join("\n");
    for part in [
        "lint: spec/openapi.yaml, 2 operations, no problems",
        "version: 1.1.0, newer than the released 1.0.0",
        "changelog: spec/CHANGELOG.md has a `## 1.1.0` section",
        "0 breaking changes",
        "released 1.1.0",
        "    git add spec/released/openapi.yaml spec/released/README.md",
        "    git commit -m \"Release the API 1.1.0\"",
    ] {
        assert!(said.contains(part), "{part:?} in:\n{said}");
    }
    // Released: the same spec is now the released one, with nothing to release.
    let error = release(workspace.root(), true).unwrap_err().to_string();
    assert!(error.contains("there is nothing to release"), "{error}");
    let report = gate(workspace.root(), &Base::Released).unwrap();
    assert!(report.failure.is_none(), "{report:#?}");
}

#[test]
fn a_dry_run_checks_everything_and_writes_nothing() {
    let workspace = releasable("dry-run");
    let said = release(workspace.root(), true)
        .expect("it could release")
        .join("\n");
    assert!(said.contains("dry run: 1.1.0 can be released"), "{said}");
    assert!(said.contains("Nothing was written"), "{said}");
    assert_nothing_written(&workspace);
}

#[test]
fn a_release_is_refused_with_what_to_do() {
    let released = document("1.0.0", &[]);
    let section = changelog("1.1.0", "Accounts have a nickname.");
    let cases: &[(&str, String, Option<&str>, &[&str])] = &[
        (
            "lint",
            document(
                "1.1.0",
                &[
                    ADD_NICKNAME,
                    ("      x-success-message: Transfer created\n", ""),
                ],
            ),
            Some(&section),
            &[
                "[success-message]",
                "not released: spec/openapi.yaml has",
                "lint problem",
            ],
        ),
        (
            "same-version",
            document("1.0.0", &[ADD_NICKNAME]),
            Some(&section),
            &[
                "not released: `info.version` is 1.0.0, not newer than the released 1.0.0",
                "1.1.0 for additions, 2.0.0 for breaks",
            ],
        ),
        (
            "older",
            document("0.9.0", &[]),
            Some(&section),
            &["not newer than the released 1.0.0"],
        ),
        (
            "no-section",
            document("1.1.0", &[ADD_NICKNAME]),
            None,
            &["not released: spec/CHANGELOG.md has no `## 1.1.0` section"],
        ),
        (
            "break",
            document("1.1.0", &[ADD_NICKNAME, NARROW_AMOUNT]),
            Some(&section),
            &[
                "#/components/schemas/CreateTransferRequest/properties/amount/maxLength: ",
                "To break clients on purpose",
                "not released: the breaking-change gate fails",
            ],
        ),
        (
            "patch",
            document("1.0.1", &[ADD_NICKNAME]),
            Some(&changelog("1.0.1", "A fix.")),
            &[
                "version gate: `info.version` 1.0.1 is a patch",
                "not released: the breaking-change gate fails",
            ],
        ),
    ];
    for (name, spec, log, parts) in cases {
        let workspace = Workspace::new(&format!("refused-{name}"), spec, &released, *log);
        for dry_run in [true, false] {
            let error = format!("{:#}", release(workspace.root(), dry_run).unwrap_err());
            for part in *parts {
                assert!(error.contains(part), "{name}: {part:?} in:\n{error}");
            }
            assert_nothing_written(&workspace);
        }
    }
}

#[test]
fn a_readme_without_its_version_line_stops_the_release() {
    let workspace = releasable("readme");
    workspace.write(README, "# The released spec\n");
    let error = release(workspace.root(), false).unwrap_err().to_string();
    assert!(
        error.contains("spec/released/README.md has no line"),
        "{error}"
    );
    assert_eq!(workspace.read(RELEASED), document("1.0.0", &[]));
}
