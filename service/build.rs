//! Lists the Dashboard's bundle (`dashboard/dist`, committed, built by `npm run build` in
//! `dashboard/`) for `src/http/dashboard.rs`, which embeds it: its script and style sheet are
//! named by their content's hash, so their names change with every build of the Dashboard and
//! no hand-written list can name them. Writes `$OUT_DIR/dashboard_assets.rs`, an array of
//! `Asset`s, each with its `.br` and `.gz` twins when the build made them. Cargo runs this
//! again when anything in `dashboard/dist` changes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let dist = manifest.join("../dashboard/dist");
    println!("cargo:rerun-if-changed={}", dist.display());
    let mut files = Vec::new();
    walk(&dist, &dist, &mut files);
    files.sort();
    let twin = |file: &str, extension: &str| {
        let name = format!("{file}.{extension}");
        if files.contains(&name) {
            format!("Some(include_bytes!({:?}))", absolute(&dist, &name))
        } else {
            "None".to_owned()
        }
    };
    let mut out = String::from("&[\n");
    for file in files
        .iter()
        .filter(|f| !f.ends_with(".br") && !f.ends_with(".gz"))
    {
        let _ = writeln!(
            out,
            "    Asset {{ path: {file:?}, bytes: include_bytes!({:?}), brotli: {}, gzip: {} }},",
            absolute(&dist, file),
            twin(file, "br"),
            twin(file, "gz"),
        );
    }
    out.push(']');
    let target = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    std::fs::write(target.join("dashboard_assets.rs"), out).expect("OUT_DIR is writable");
}

/// Every file under `folder`, by its path relative to `root` with `/` between its parts.
fn walk(root: &Path, folder: &Path, files: &mut Vec<String>) {
    let entries = std::fs::read_dir(folder)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", folder.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            walk(root, &path, files);
        } else {
            let relative = path.strip_prefix(root).expect("under the root");
            let parts: Vec<_> = relative
                .components()
                .map(|part| part.as_os_str().to_string_lossy().into_owned())
                .collect();
            files.push(parts.join("/"));
        }
    }
}

fn absolute(root: &Path, file: &str) -> String {
    root.join(file)
        .canonicalize()
        .unwrap_or_else(|error| panic!("cannot find {file} in dashboard/dist: {error}"))
        .to_string_lossy()
        .into_owned()
}
