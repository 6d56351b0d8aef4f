//! The crate's layering: no two files of `src/` import each other. A module that needs another
//! sits above it; what both need lives in a third, below both. (A folder's `mod.rs` and its
//! files are one unit and are left out; so are tests.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A file's module path: `src/forge/github/client.rs` → `forge::github::client`.
fn module_of(path: &str) -> Vec<String> {
    let inner = path.trim_start_matches("src/").trim_end_matches(".rs");
    let mut parts: Vec<String> = inner.split('/').map(str::to_owned).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts == ["lib"] || parts == ["main"] {
        parts.clear();
    }
    parts
}

/// The code of a file without its comments and its `#[cfg(test)] mod tests { … }`.
fn code_of(text: &str) -> String {
    let text = text
        .split("#[cfg(test)]\nmod tests {")
        .next()
        .unwrap_or(text);
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `super::…` and `crate::…` path in `code`, as module paths seen from `module`.
fn paths_named(module: &[String], code: &str) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    for start in ["super::", "crate::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(start).map(|i| i + from) {
            from = at + start.len();
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
                continue;
            }
            let rest: String = code[from..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let mut base: Vec<String> = if start == "crate::" {
                Vec::new()
            } else {
                // A `mod.rs`'s module is its folder, so `super` is the parent for every file.
                module[..module.len().saturating_sub(1)].to_vec()
            };
            base.extend(
                rest.split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned),
            );
            out.push(base);
        }
    }
    out
}

/// The pairs of files (neither a `mod.rs`) that import each other, given each file's path
/// (relative to the crate, `src/…`) and text.
fn mutual_imports(files: &BTreeMap<String, String>) -> Vec<(String, String)> {
    let modules: BTreeMap<Vec<String>, &String> =
        files.keys().map(|path| (module_of(path), path)).collect();
    let mut edges: BTreeSet<(String, String)> = BTreeSet::new();
    for (path, text) in files {
        let module = module_of(path);
        for named in paths_named(&module, &code_of(text)) {
            // The longest prefix that is a file of the crate is what the path imports.
            let target = (1..=named.len())
                .rev()
                .find_map(|k| modules.get(&named[..k]).copied());
            if let Some(target) = target.filter(|t| *t != path) {
                edges.insert((path.clone(), target.clone()));
            }
        }
    }
    edges
        .iter()
        .filter(|(a, b)| a < b && edges.contains(&(b.clone(), a.clone())))
        .filter(|(a, b)| !a.ends_with("/mod.rs") && !b.ends_with("/mod.rs"))
        .cloned()
        .collect()
}

fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == "tests.rs"
        || name.ends_with("_tests.rs")
        || path.components().any(|c| c.as_os_str() == "tests")
}

fn sources(dir: &Path, root: &Path, into: &mut BTreeMap<String, String>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path: PathBuf = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, root, into);
        } else if path.extension().is_some_and(|e| e == "rs") && !is_test_file(&path) {
            let relative = path.strip_prefix(root).expect("under the crate");
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            into.insert(relative.to_string_lossy().into_owned(), text);
        }
    }
}

#[test]
fn no_two_files_of_the_crate_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = BTreeMap::new();
    sources(&root.join("src"), root, &mut files);
    assert!(files.len() > 100, "the crate's files were not found");
    let pairs = mutual_imports(&files);
    assert!(
        pairs.is_empty(),
        "these files import each other (move what both need into a third): {pairs:#?}"
    );
}

#[test]
fn a_pair_that_imports_each_other_is_found_and_a_layered_one_is_not() {
    let files = |entries: &[(&str, &str)]| -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect()
    };
    let cycle = files(&[
        ("src/a/mod.rs", "mod b;\nmod c;\n"),
        ("src/a/b.rs", "use super::c::Thing;\n"),
        ("src/a/c.rs", "fn f() { crate::a::b::g() }\n"),
    ]);
    assert_eq!(
        mutual_imports(&cycle),
        [("src/a/b.rs".to_owned(), "src/a/c.rs".to_owned())]
    );
    let layered = files(&[
        ("src/a/mod.rs", "mod b;\nmod c;\nuse b::X;\n"),
        (
            "src/a/b.rs",
            "use super::c::Thing;\n// super::b in a comment\n",
        ),
        (
            "src/a/c.rs",
            "pub struct Thing;\n#[cfg(test)]\nmod tests {\n    use super::super::b;\n}\n",
        ),
    ]);
    assert_eq!(mutual_imports(&layered), []);
}
