//! The workspace's layering: in each crate, no two files of `src/` import each other. A module
//! that needs another sits above it; what both need lives in a third, below both. (A folder's
//! `mod.rs` and its files are one unit and are left out; so are tests.) And the detector's
//! crate depends on nothing that would let it do IO or know of git, forges or the bot.

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

/// Every `super::…` and `crate::…` path in `code`, as module paths seen from `module`. A
/// grouped import names each of its paths (`use super::{lexer, rules};`, nested groups too).
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
            let base: Vec<String> = if start == "crate::" {
                Vec::new()
            } else {
                // A `mod.rs`'s module is its folder, so `super` is the parent for every file.
                module[..module.len().saturating_sub(1)].to_vec()
            };
            let mut at = from;
            for tail in use_tree(bytes, &mut at) {
                let mut path = base.clone();
                for segment in tail {
                    match segment.as_str() {
                        "super" => {
                            path.pop();
                        }
                        "self" | "" => {}
                        _ => path.push(segment),
                    }
                }
                out.push(path);
            }
        }
    }
    out
}

fn skip_space(bytes: &[u8], at: &mut usize) {
    while bytes.get(*at).is_some_and(|b| b.is_ascii_whitespace()) {
        *at += 1;
    }
}

/// The paths of the use tree at `at` (`a::b`, `a::{b, c::{d}}`), each as its segments.
fn use_tree(bytes: &[u8], at: &mut usize) -> Vec<Vec<String>> {
    skip_space(bytes, at);
    if bytes.get(*at) == Some(&b'{') {
        *at += 1;
        let mut out = Vec::new();
        loop {
            skip_space(bytes, at);
            match bytes.get(*at) {
                None => return out,
                Some(b'}') => {
                    *at += 1;
                    return out;
                }
                Some(b',') => *at += 1,
                _ => {
                    let before = *at;
                    out.extend(use_tree(bytes, at));
                    // What follows a path inside a group (`as name`) up to its end.
                    while bytes
                        .get(*at)
                        .is_some_and(|b| !matches!(b, b',' | b'}' | b'{'))
                    {
                        *at += 1;
                    }
                    if *at == before || bytes.get(*at) == Some(&b'{') {
                        *at += 1;
                    }
                }
            }
        }
    }
    let start = *at;
    while bytes
        .get(*at)
        .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
    {
        *at += 1;
    }
    let ident = String::from_utf8_lossy(&bytes[start..*at]).into_owned();
    if bytes[*at..].starts_with(b"::") {
        *at += 2;
        let rest = use_tree(bytes, at);
        if rest.is_empty() {
            return vec![vec![ident]];
        }
        return rest
            .into_iter()
            .map(|mut tail| {
                tail.insert(0, ident.clone());
                tail
            })
            .collect();
    }
    vec![vec![ident]]
}

/// The paths used through `module`'s last name in `code` (`rules::x::f` with `module` the
/// crate's `rules`), as module paths.
fn paths_through(module: &[String], code: &str) -> Vec<Vec<String>> {
    let Some(name) = module.last() else {
        return Vec::new();
    };
    let bytes = code.as_bytes();
    let start = format!("{name}::");
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find(&start).map(|i| i + from) {
        from = at + start.len();
        let before = at.checked_sub(1).map(|i| bytes[i]);
        if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':') {
            continue;
        }
        let mut at = from;
        for tail in use_tree(bytes, &mut at) {
            let mut path = module.to_vec();
            path.extend(tail.into_iter().filter(|s| !s.is_empty() && s != "self"));
            out.push(path);
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
        let code = code_of(text);
        let mut named = paths_named(&module, &code);
        // A module imported by name (`use super::{lexer, rules};`) and then used through it
        // (`rules::focused_test::scan(…)`) imports what the use names.
        let aliases: Vec<Vec<String>> = named
            .iter()
            .filter(|n| !n.is_empty() && modules.contains_key(*n))
            .cloned()
            .collect();
        for alias in aliases {
            named.extend(paths_through(&alias, &code));
        }
        for named in named {
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

/// Each crate of the workspace, by its folder, and how many of its files the test must find
/// (so that a moved folder cannot make the test pass by reading nothing).
const CRATES: &[(&str, usize)] = &[(".", 100), ("crates/detect", 60), ("crates/text", 1)];

#[test]
fn no_two_files_of_a_crate_import_each_other() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (folder, at_least) in CRATES {
        let root = workspace.join(folder);
        let mut files = BTreeMap::new();
        sources(&root.join("src"), &root, &mut files);
        assert!(
            files.len() >= *at_least,
            "{folder}: the crate's files were not found"
        );
        let pairs = mutual_imports(&files);
        assert!(
            pairs.is_empty(),
            "{folder}: these files import each other (move what both need into a third): {pairs:#?}"
        );
    }
}

/// What the detector's crate may never depend on: git, an async runtime, an HTTP stack, a forge
/// client, a database, or the binary's crate itself.
const NOT_FOR_THE_DETECTOR: &[&str] = &[
    "git2",
    "tokio",
    "axum",
    "hyper",
    "reqwest",
    "octocrab",
    "sqlx",
    "forgeward",
];

/// The names of the `[dependencies]` of a Cargo.toml, as the crates they are (a `package = …`
/// rename counts by the real name).
fn dependencies(manifest: &str) -> Vec<String> {
    let manifest: toml::Table = toml::from_str(manifest).expect("a valid Cargo.toml");
    let Some(deps) = manifest.get("dependencies").and_then(toml::Value::as_table) else {
        return Vec::new();
    };
    deps.iter()
        .map(|(name, spec)| {
            spec.get("package")
                .and_then(toml::Value::as_str)
                .unwrap_or(name)
                .to_owned()
        })
        .collect()
}

/// The dependencies in `manifest` the detector may not have, sorted.
fn forbidden(manifest: &str) -> Vec<String> {
    let mut found: Vec<String> = dependencies(manifest)
        .into_iter()
        .filter(|d| NOT_FOR_THE_DETECTOR.contains(&d.as_str()))
        .collect();
    found.sort();
    found
}

#[test]
fn the_detector_depends_on_no_git_runtime_http_forge_or_database() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/detect/Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    assert!(
        dependencies(&text).iter().any(|d| d == "regex"),
        "the detector's dependencies were not read"
    );
    assert_eq!(forbidden(&text), Vec::<String>::new());
}

#[test]
fn a_forbidden_dependency_of_the_detector_is_found() {
    let manifest = r#"
[package]
name = "forgeward-detect"

[dependencies]
regex = "1"
git = { version = "0.20", package = "git2" }
tokio = { version = "1", features = ["rt"] }
forgeward = { path = "../.." }

[dev-dependencies]
hyper = "1"
"#;
    assert_eq!(forbidden(manifest), ["forgeward", "git2", "tokio"]);
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

#[test]
fn a_grouped_import_that_closes_a_cycle_is_found() {
    let files = |entries: &[(&str, &str)]| -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect()
    };
    let grouped = files(&[
        ("src/a/mod.rs", "mod b;\nmod c;\nmod d;\n"),
        ("src/a/b.rs", "use super::{lexer, c};\n"),
        ("src/a/c.rs", "use super::{d::Thing, b::{self}};\n"),
        ("src/a/d.rs", "pub struct Thing;\n"),
    ]);
    assert_eq!(
        mutual_imports(&grouped),
        [("src/a/b.rs".to_owned(), "src/a/c.rs".to_owned())]
    );
    let nested = files(&[
        ("src/a/mod.rs", "mod b;\nmod c;\n"),
        ("src/a/b.rs", "use crate::a::{x, c::{Y, z as w}};\n"),
        ("src/a/c.rs", "use crate::{a::{b::F}, other};\n"),
    ]);
    assert_eq!(
        mutual_imports(&nested),
        [("src/a/b.rs".to_owned(), "src/a/c.rs".to_owned())]
    );
    let through = files(&[
        ("src/a/mod.rs", "mod b;\nmod r;\n"),
        (
            "src/a/b.rs",
            "use super::{lexer, r};\nfn f() { r::c::scan() }\n",
        ),
        ("src/a/r/mod.rs", "mod c;\n"),
        ("src/a/r/c.rs", "use crate::a::b::Text;\n"),
    ]);
    assert_eq!(
        mutual_imports(&through),
        [("src/a/b.rs".to_owned(), "src/a/r/c.rs".to_owned())]
    );
    let layered = files(&[
        ("src/a/mod.rs", "mod b;\nmod c;\n"),
        ("src/a/b.rs", "use super::{c::Thing, lexer};\n"),
        (
            "src/a/c.rs",
            "pub struct Thing;\nfn f() -> super::d::X { todo!() }\n",
        ),
    ]);
    assert_eq!(mutual_imports(&layered), []);
}
