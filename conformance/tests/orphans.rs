//! The orphaned-snapshot check must be able to fail: a snapshot file no step asserts is named.

use std::collections::BTreeSet;
use std::path::PathBuf;

use conformance::{check_snapshot_files, orphaned_snapshots};

/// A fresh directory under the system's temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn with_files(test: &str, files: &[&str]) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("conformance-orphans-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for file in files {
            std::fs::write(dir.join(file), "---\nsource: x\n---\n{}\n").unwrap();
        }
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn asserted(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|name| name.to_string()).collect()
}

#[test]
fn a_snapshot_file_no_step_asserts_is_named() {
    let dir = Scratch::with_files(
        "named",
        &[
            "login.owner.snap",
            "create_role.analyst.duplicate.snap",
            // Left behind by a step that was renamed, and by the old position-based names.
            "login.owner_renamed_since.snap",
            "examples__100_cancel_transfer_cancel.snap",
            // insta's pending review and anything else are not snapshots.
            "login.owner.snap.new",
            "README",
        ],
    );
    let story = asserted(&["login.owner", "create_role.analyst.duplicate"]);
    assert_eq!(
        orphaned_snapshots(&dir.0, &story).unwrap(),
        [
            "examples__100_cancel_transfer_cancel.snap",
            "login.owner_renamed_since.snap"
        ]
    );
    let problem = check_snapshot_files(&dir.0, &story).unwrap_err();
    assert!(
        problem.contains("2 snapshot file(s)")
            && problem.contains("\n  examples__100_cancel_transfer_cancel.snap")
            && problem.contains("\n  login.owner_renamed_since.snap"),
        "{problem}"
    );
}

#[test]
fn snapshot_files_the_story_asserts_pass() {
    let dir = Scratch::with_files("pass", &["login.owner.snap", "login.owner.snap.new"]);
    // A name asserted without a file yet is insta's to report (a new snapshot), not an orphan.
    let story = asserted(&["login.owner", "logout.empty"]);
    assert_eq!(check_snapshot_files(&dir.0, &story), Ok(()));
}

#[test]
fn a_missing_directory_is_a_failure() {
    let dir = std::env::temp_dir().join("conformance-orphans-no-such-directory");
    let problem = check_snapshot_files(&dir, &asserted(&[])).unwrap_err();
    assert!(problem.starts_with("cannot list"), "{problem}");
}
