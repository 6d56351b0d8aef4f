//! `shadow-module`: a new local module named like a declared dependency, which the language
//! would import instead of the real package (`sqlglot.py` beside the tests that import
//! `sqlglot`).
//!
//! Python: a new `name.py` or `name/__init__.py` whose directory is a root of imports rather than
//! a package of its own (no `__init__.py` beside it); inside a package, absolute imports do not
//! reach it. A module among the tests counts too (`tests/requests.py`): pytest puts a test
//! directory without `__init__.py` first on `sys.path`. JavaScript/TypeScript: a new `name.js`
//! or `name/index.js` (any JS or TS extension)
//! where a bare `import 'name'` is resolved — Node and bundlers look only in `node_modules`
//! directories, never beside the importer, so only a file under `node_modules/`, or in a
//! directory a `tsconfig.json`/`jsconfig.json` makes a root of bare imports (`baseUrl`, a
//! `paths` entry `"*"`) or a `paths` entry mapping `name` itself, reaches it — and that does
//! not itself import `name`: a wrapper that configures the real package is not a shadow.
//! Dependencies come from every manifest in the head tree (monorepos); names compare
//! normalised and by import name (PyYAML is imported as `yaml`). Go: `go.mod` newly replacing
//! a dependency with a directory the change writes (see [`go`]).

use crate::rules::prelude::*;
use std::collections::HashMap;
use std::sync::LazyLock;

use regex::bytes::Regex;

mod go;

use super::{FileRules, new_path};
use crate::change::{Change, ChangeKind, RepoPath};
use crate::flag::{Flag, Rule};
use crate::manifest::{self, Dependency, Ecosystem};
use crate::paths;

/// A module a new file would be imported as.
struct Module {
    ecosystem: Ecosystem,
    /// Normalised, as [`manifest::normalize`] gives it.
    name: String,
    /// The directory the module is found from, for Python's package check.
    root: Vec<u8>,
    /// How the module reads in a message: `sqlglot.py`, package `yaml/`.
    shown: String,
}

const PY_NOT_MODULES: &[&[u8]] = &[b"__init__", b"__main__", b"setup", b"conftest", b"manage"];
const JS_EXTS: &[&[u8]] = &[b"js", b"mjs", b"cjs", b"jsx", b"ts", b"mts", b"cts", b"tsx"];

fn module(path: &RepoPath) -> Option<Module> {
    let name = path.file_name();
    let dot = name.iter().rposition(|&b| b == b'.')?;
    let (stem, ext) = (&name[..dot], &name[dot + 1..]);
    let parent = path.parent();
    let parent_name = parent.rsplit(|&b| b == b'/').next().unwrap_or(parent);
    let grandparent = match parent.iter().rposition(|&b| b == b'/') {
        Some(i) => &parent[..i],
        None => &[][..],
    };
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let (ecosystem, module, root, shown) = if ext == b"py" {
        if stem == b"__init__" {
            if parent.is_empty() {
                return None;
            }
            let shown = format!("package `{}/`", text(parent_name));
            (Ecosystem::Python, parent_name, grandparent, shown)
        } else if PY_NOT_MODULES.contains(&stem) {
            return None;
        } else {
            (Ecosystem::Python, stem, parent, format!("`{}`", text(name)))
        }
    } else if JS_EXTS.contains(&ext) && !stem.ends_with(b".d") {
        if stem == b"index" {
            if parent.is_empty() {
                return None;
            }
            let shown = format!("package `{}/`", text(parent_name));
            (Ecosystem::Node, parent_name, grandparent, shown)
        } else {
            (Ecosystem::Node, stem, parent, format!("`{}`", text(name)))
        }
    } else {
        return None;
    };
    Some(Module {
        ecosystem,
        name: manifest::normalize(&text(module)),
        root: root.to_vec(),
        shown,
    })
}

/// Every declared dependency by ecosystem and normalised import name.
fn dependencies(ctx: &mut FileRules<'_>) -> HashMap<(Ecosystem, String), Dependency> {
    let classifier = ctx.classifier;
    let manifests: Vec<RepoPath> = ctx
        .head_files()
        .iter()
        .filter(|p| manifest::is_manifest(p) && !classifier.is_ignored(p))
        .cloned()
        .collect();
    let mut deps = HashMap::new();
    for path in manifests {
        let Some(content) = ctx.head.read(&path) else {
            continue;
        };
        match manifest::parse(&path, &content) {
            Ok(found) => {
                for dep in found {
                    for name in manifest::import_names(&dep) {
                        deps.entry((dep.ecosystem, name))
                            .or_insert_with(|| dep.clone());
                    }
                }
            }
            Err(e) => ctx.warn(format!("skipped a manifest that does not parse: {e}")),
        }
    }
    deps
}

fn candidate(ctx: &FileRules<'_>, path: &RepoPath) -> bool {
    module(path).is_some()
        && (!ctx.classifier.is_test(path) || beside_tests(path))
        && !ctx.classifier.is_ignored(path)
        && !paths::is_doc(path)
}

/// A Python module among the tests that is not a test itself (`tests/requests.py`): pytest
/// puts a test directory without `__init__.py` first on `sys.path`, so the tests, and the code
/// they import, get it instead of the dependency. Test data is not imported.
fn beside_tests(path: &RepoPath) -> bool {
    let name = path.file_name();
    let Some(stem) = name.strip_suffix(b".py") else {
        return false;
    };
    !stem.starts_with(b"test")
        && !stem.ends_with(b"_test")
        && !stem.ends_with(b"_tests")
        && !paths::is_fixture(path)
}

/// True when the new file imports the package it is named after: a wrapper, not a shadow.
fn imports_itself(content: &[u8], dep: &str) -> bool {
    static SPEC: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?:\brequire\s*\(|\bimport\s*\(|\bfrom\s|\bimport\s)\s*['"]([^'"]+)['"]"#)
            .expect("valid pattern")
    });
    SPEC.captures_iter(content)
        .filter_map(|c| c.get(1))
        .any(|m| {
            let spec = m.as_bytes();
            spec == dep.as_bytes()
                || spec
                    .strip_prefix(dep.as_bytes())
                    .is_some_and(|rest| rest.starts_with(b"/"))
        })
}

/// Whether a bare `import 'name'` can resolve to the module: it sits in a `node_modules`
/// directory, or a TypeScript/JavaScript project configuration makes its directory a root of
/// bare imports or maps the dependency's name. The configuration is read as text, for the few
/// keys that matter (it is JSON with comments, which a JSON parser refuses).
fn node_resolves(ctx: &mut FileRules<'_>, m: &Module, dep: &str) -> bool {
    if m.root == b"node_modules" || m.root.ends_with(b"/node_modules") {
        return true;
    }
    static BASE_URL: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""baseUrl"\s*:\s*"([^"]*)""#).expect("valid pattern"));
    static STAR: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""\*"\s*:\s*\[([^\]]*)\]"#).expect("valid pattern"));
    static TARGET: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""([^"]*)""#).expect("valid pattern"));
    let configs: Vec<RepoPath> = ctx
        .head_files()
        .iter()
        .filter(|p| {
            let n = p.file_name();
            (n.starts_with(b"tsconfig") || n.starts_with(b"jsconfig")) && n.ends_with(b".json")
        })
        .cloned()
        .collect();
    let maps_name = Regex::new(&format!(r#""{}(?:/\*)?"\s*:\s*\["#, regex::escape(dep)));
    for config in configs {
        let Some(text) = ctx.head.read(&config) else {
            continue;
        };
        if maps_name.as_ref().is_ok_and(|r| r.is_match(&text)) {
            return true;
        }
        let dir = config.parent();
        let base = BASE_URL
            .captures(&text)
            .and_then(|c| c.get(1))
            .map(|b| join_dir(dir, b.as_bytes()));
        if base.as_deref() == Some(&m.root[..]) {
            return true;
        }
        let from = base.unwrap_or_else(|| dir.to_vec());
        for list in STAR.captures_iter(&text).filter_map(|c| c.get(1)) {
            for t in TARGET
                .captures_iter(list.as_bytes())
                .filter_map(|c| c.get(1))
            {
                let t = t.as_bytes();
                let t = t.strip_suffix(b"*").unwrap_or(t);
                if join_dir(&from, t) == m.root {
                    return true;
                }
            }
        }
    }
    false
}

/// `dir` joined with the relative directory `rel` (`.`, `..` and trailing `/` resolved), as a
/// repository path without a leading or trailing `/`.
fn join_dir(dir: &[u8], rel: &[u8]) -> Vec<u8> {
    let mut parts: Vec<&[u8]> = dir
        .split(|&b| b == b'/')
        .filter(|p| !p.is_empty())
        .collect();
    for p in rel.split(|&b| b == b'/') {
        match p {
            b"" | b"." => {}
            b".." => {
                parts.pop();
            }
            _ => parts.push(p),
        }
    }
    parts.join(&b'/')
}

/// `go.mod` files whose new `replace` directives point at a directory the change writes.
fn go_replaces(changes: &[&Change], ctx: &FileRules<'_>) -> Vec<Flag> {
    let mut flags = Vec::new();
    for change in changes {
        let Some(path) = change.new_path.as_ref() else {
            continue;
        };
        if path.file_name() != b"go.mod"
            || ctx.classifier.is_ignored(path)
            || (change.kind == ChangeKind::Modified && change.added.is_empty())
        {
            continue;
        }
        let Some(head) = ctx.head.read(path) else {
            continue;
        };
        let base = change.old_path.as_ref().and_then(|p| ctx.base.read(p));
        for (line, message) in go::replaces(path, base.as_deref(), &head, changes) {
            flags.push(Flag {
                rule: Rule::ShadowModule,
                severity: Rule::ShadowModule.severity(),
                path: path.clone(),
                line: Some(line),
                removed_line: None,
                message,
                snippet: Some(crate::snippet(&head, line)),
            });
        }
    }
    flags
}

pub(crate) fn check(changes: &[&Change], ctx: &mut FileRules<'_>) -> Vec<Flag> {
    let mut flags = go_replaces(changes, ctx);
    // Manifests are read only when some new file could shadow something.
    let any = changes.iter().any(|c| {
        !matches!(c.kind, ChangeKind::Modified | ChangeKind::Deleted)
            && c.new_path.as_ref().is_some_and(|p| candidate(ctx, p))
    });
    if !any {
        return flags;
    }
    let deps = dependencies(ctx);
    let shadowed = |p: &RepoPath| -> Option<(Module, &Dependency)> {
        let m = module(p)?;
        let dep = deps.get(&(m.ecosystem, m.name.clone()))?;
        Some((m, dep))
    };
    for change in changes {
        let Some(path) = new_path(change, |p| candidate(ctx, p) && shadowed(p).is_some()) else {
            continue;
        };
        let Some((m, dep)) = shadowed(path) else {
            continue;
        };
        let reaches = match m.ecosystem {
            Ecosystem::Python => !ctx.head.exists(&RepoPath::join(&m.root, b"__init__.py")),
            Ecosystem::Node => {
                node_resolves(ctx, &m, &dep.name)
                    && !ctx
                        .head
                        .read(path)
                        .is_some_and(|content| imports_itself(&content, &dep.name))
            }
        };
        if !reaches {
            continue;
        }
        let named = if manifest::normalize(&dep.name) == m.name {
            format!("the dependency `{}`", dep.name)
        } else {
            format!(
                "`{}`, the import name of the dependency `{}`",
                m.name, dep.name
            )
        };
        flags.push(Flag {
            rule: Rule::ShadowModule,
            severity: Rule::ShadowModule.severity(),
            path: path.clone(),
            line: None,
            removed_line: None,
            message: format!(
                "new module {} is named like {named} (declared in {}) and would be imported instead of it",
                m.shown, dep.manifest
            ),
            snippet: None,
        });
    }
    flags
}

/// The rule's registry entry and what the detector runs for it.
pub(crate) const RULE: RuleInfo = RuleInfo {
    rule: Rule::ShadowModule,
    id: "shadow-module",
    severity: Severity::Warning,
    source: Source::Detector,
    languages: "Python, JS/TS (dependency manifests), Go (go.mod)",
    summary: "A new local module is named like a declared dependency and would be imported instead of it.",
    help: "A local `yaml.py` beside the code hides the real PyYAML. Flags a new module or \
           package named like a dependency the repository declares, where the language \
           would import it: in Python also among the tests (`tests/requests.py`, which \
           pytest puts first on `sys.path`); in JS/TS only under `node_modules/` or a root of bare imports \
           that a `tsconfig.json`/`jsconfig.json` declares (`baseUrl`, `paths`); and a \
           `go.mod` `replace` newly pointing a dependency at a directory the same change \
           writes.",
    judges_tests: false,
    passes: &[Pass::Change(new_files)],
};

/// New files, by name, against the trees (the files a repository ignores are not read).
fn new_files(across: &mut Across<'_, '_>) -> Vec<(Flag, Option<String>)> {
    across.by_name(check)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{Spec::*, run};

    fn shadow(specs: &[crate::testing::Spec<'_>]) -> Vec<String> {
        run(specs)
            .flags
            .into_iter()
            .filter(|f| f.rule == Rule::ShadowModule)
            .map(|f| f.path.to_string())
            .collect()
    }

    const GO_MOD: &str =
        "module example.com/ids\n\ngo 1.22\n\nrequire github.com/google/uuid v1.6.0\n";

    #[test]
    fn go_replace_with_a_directory_the_change_writes() {
        let new = format!("{GO_MOD}\nreplace github.com/google/uuid => ./third_party/uuid\n");
        let fake = "package uuid\n\nfunc NewString() string { return \"0\" }\n";
        let r = run(&[
            Modify("go.mod", GO_MOD, &new),
            Add("third_party/uuid/go.mod", "module github.com/google/uuid\n"),
            Add("third_party/uuid/uuid.go", fake),
        ]);
        let flags: Vec<_> = r
            .flags
            .iter()
            .filter(|f| f.rule == Rule::ShadowModule)
            .collect();
        assert_eq!(flags.len(), 1);
        assert_eq!(flags[0].path.to_string(), "go.mod");
        assert_eq!(flags[0].line, Some(7));
        assert_eq!(
            flags[0].message,
            "`go.mod` newly replaces the dependency `github.com/google/uuid` with `./third_party/uuid`, a directory this change writes: the build compiles that code in its place"
        );
        // In a block, from a module in a subdirectory, to `../`.
        let block = "module example.com/svc/api\n\nreplace (\n\tgithub.com/lib/pq v1.10.0 => ../fakes/pq\n)\n";
        assert_eq!(
            shadow(&[
                Add("api/go.mod", block),
                Add("fakes/pq/pq.go", "package pq\n")
            ]),
            vec!["api/go.mod"]
        );
        // A sibling of the same owner, a version, a directory the change leaves alone, or a
        // replace the base had: not flagged.
        for (new, written) in [
            (
                format!("{GO_MOD}\nreplace example.com/lib => ./lib\n"),
                "lib/lib.go",
            ),
            (
                format!(
                    "{GO_MOD}\nreplace github.com/google/uuid => github.com/fork/uuid v1.6.1\n"
                ),
                "third_party/uuid/uuid.go",
            ),
            (
                format!("{GO_MOD}\nreplace github.com/google/uuid => ./third_party/uuid\n"),
                "other/uuid.go",
            ),
        ] {
            assert!(
                shadow(&[Modify("go.mod", GO_MOD, &new), Add(written, fake)]).is_empty(),
                "{new}"
            );
        }
        let had = format!("{GO_MOD}\nreplace github.com/google/uuid => ./third_party/uuid\n");
        let more = format!("{had}require golang.org/x/text v0.3.0\n");
        assert!(
            shadow(&[
                Modify("go.mod", &had, &more),
                Add("third_party/uuid/extra.go", fake)
            ])
            .is_empty()
        );
    }

    const REQS: &str = "sqlglot>=20\nPyYAML==6.0\nbeautifulsoup4\nscikit-learn ; python_version > '3.8'\nPillow\npython-dateutil\n";

    #[test]
    fn python_module_and_package() {
        assert_eq!(
            shadow(&[
                Keep("requirements.txt", REQS),
                Add("sqlglot.py", "def parse(s): return []\n")
            ]),
            vec!["sqlglot.py"]
        );
        assert_eq!(
            shadow(&[
                Keep("requirements.txt", REQS),
                Add("yaml/__init__.py", "def safe_load(s): return {}\n")
            ]),
            vec!["yaml/__init__.py"]
        );
        for (file, dep) in [
            ("bs4.py", "bs4"),
            ("sklearn/__init__.py", "sklearn"),
            ("PIL/__init__.py", "PIL"),
            ("dateutil.py", "dateutil"),
            ("SqlGlot.py", "sqlglot"),
        ] {
            assert_eq!(
                shadow(&[Keep("requirements.txt", REQS), Add(file, "x = 1\n")]),
                vec![file],
                "{dep}"
            );
        }
    }

    #[test]
    fn python_module_inside_a_package_is_not_reached() {
        assert!(
            shadow(&[
                Keep("requirements.txt", REQS),
                Keep("app/__init__.py", ""),
                Add("app/yaml.py", "x = 1\n")
            ])
            .is_empty()
        );
        // A directory of tests without `__init__.py` is an import root for pytest.
        assert_eq!(
            shadow(&[
                Keep("requirements.txt", REQS),
                Add("src/sqlglot.py", "x = 1\n")
            ]),
            vec!["src/sqlglot.py"]
        );
    }

    #[test]
    fn python_module_among_the_tests() {
        let pyproject = "[project]\nname = \"weather\"\ndependencies = [\"requests>=2.31\"]\n";
        assert_eq!(
            shadow(&[
                Keep("pyproject.toml", pyproject),
                Keep("tests/test_weather.py", "import requests\n"),
                Add("tests/requests.py", "def get(url): return None\n")
            ]),
            vec!["tests/requests.py"]
        );
        // Inside a test package, in test data, or a test module itself: not an import root's.
        for (i, specs) in [
            vec![
                Keep("pyproject.toml", pyproject),
                Keep("tests/__init__.py", ""),
                Add("tests/requests.py", "x = 1\n"),
            ],
            vec![
                Keep("pyproject.toml", pyproject),
                Add("tests/fixtures/requests.py", "x = 1\n"),
            ],
            vec![
                Keep("pyproject.toml", pyproject),
                Add("tests/requests_test.py", "x = 1\n"),
            ],
            vec![
                Keep("pyproject.toml", pyproject),
                Add("tests/helpers.py", "x = 1\n"),
            ],
        ]
        .into_iter()
        .enumerate()
        {
            assert!(shadow(&specs).is_empty(), "case {i}");
        }
    }

    #[test]
    fn monorepo_manifests_and_formats() {
        let pyproject =
            "[project]\nname = \"svc\"\ndependencies = [\"httpx>=0.27\", \"ruamel.yaml\"]\n";
        assert_eq!(
            shadow(&[
                Keep("services/api/pyproject.toml", pyproject),
                Add("httpx.py", "x = 1\n")
            ]),
            vec!["httpx.py"]
        );
        assert_eq!(
            shadow(&[
                Keep("services/api/pyproject.toml", pyproject),
                Add("ruamel/__init__.py", "")
            ]),
            vec!["ruamel/__init__.py"]
        );
        let pkg =
            "{\"dependencies\": {\"lodash\": \"^4\"}, \"devDependencies\": {\"left-pad\": \"1\"}}";
        // Where bare imports resolve: `node_modules`, a `baseUrl`, a `"*"` path, a mapped name.
        assert_eq!(
            shadow(&[
                Keep("web/package.json", pkg),
                Add("web/node_modules/lodash.js", "module.exports = {}\n")
            ]),
            vec!["web/node_modules/lodash.js"]
        );
        assert_eq!(
            shadow(&[
                Keep("web/package.json", pkg),
                Keep(
                    "web/tsconfig.json",
                    "{\n  // roots\n  \"compilerOptions\": { \"baseUrl\": \"./src\" }\n}\n"
                ),
                Add("web/src/lodash.js", "module.exports = {}\n")
            ]),
            vec!["web/src/lodash.js"]
        );
        assert_eq!(
            shadow(&[
                Keep("web/package.json", pkg),
                Keep(
                    "web/tsconfig.json",
                    "{\"compilerOptions\": {\"paths\": {\"*\": [\"./vendor/*\"]}}}"
                ),
                Add("web/vendor/left-pad/index.ts", "export default 1\n")
            ]),
            vec!["web/vendor/left-pad/index.ts"]
        );
        assert_eq!(
            shadow(&[
                Keep("web/package.json", pkg),
                Keep(
                    "tsconfig.base.json",
                    "{\"compilerOptions\": {\"paths\": {\"lodash\": [\"web/stubs/lodash.ts\"]}}}"
                ),
                Add("web/stubs/lodash.ts", "export default {}\n")
            ]),
            vec!["web/stubs/lodash.ts"]
        );
        // Anywhere else a bare import never reaches a file beside the importer.
        assert!(
            shadow(&[
                Keep("web/package.json", pkg),
                Add("web/src/lodash.js", "module.exports = {}\n")
            ])
            .is_empty()
        );
        assert!(
            shadow(&[
                Keep("web/package.json", pkg),
                Keep(
                    "web/tsconfig.json",
                    "{\"compilerOptions\": {\"baseUrl\": \".\"}}"
                ),
                Add("web/src/__tests_dts__/lodash.ts", "export {}\n")
            ])
            .is_empty()
        );
    }

    #[test]
    fn negatives() {
        // Not a dependency; a test file; a different ecosystem; a pure move.
        assert!(shadow(&[Keep("requirements.txt", REQS), Add("parser.py", "x = 1\n")]).is_empty());
        assert!(
            shadow(&[
                Keep("requirements.txt", REQS),
                Add("tests/test_sqlglot.py", "x = 1\n")
            ])
            .is_empty()
        );
        assert!(shadow(&[Keep("requirements.txt", REQS), Add("yaml.js", "x = 1\n")]).is_empty());
        assert!(
            shadow(&[
                Keep("requirements.txt", REQS),
                Rename("lib/sqlglot.py", "sqlglot.py", "x = 1\n", "x = 1\n")
            ])
            .is_empty()
        );
        assert!(
            shadow(&[
                Keep("requirements.txt", REQS),
                Modify("sqlglot.py", "x = 1\n", "x = 2\n")
            ])
            .is_empty()
        );
        // A JS wrapper that imports the real package is not a shadow.
        let pkg = "{\"dependencies\": {\"axios\": \"^1\"}}";
        assert!(
            shadow(&[
                Keep("package.json", pkg),
                Add(
                    "src/axios.ts",
                    "import axios from 'axios';\nexport default axios.create({});\n"
                )
            ])
            .is_empty()
        );
    }

    #[test]
    fn rename_into_a_dependency_name_is_new() {
        assert_eq!(
            shadow(&[
                Keep("requirements.txt", REQS),
                Rename("fake_parser.py", "sqlglot.py", "x = 1\n", "x = 1\n")
            ]),
            vec!["sqlglot.py"]
        );
    }

    #[test]
    fn a_broken_manifest_is_a_warning_not_an_error() {
        let r = run(&[
            Keep("pyproject.toml", "[project\n"),
            Keep("requirements.txt", REQS),
            Add("sqlglot.py", "x = 1\n"),
        ]);
        assert_eq!(r.flags.len(), 1);
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        assert!(r.warnings[0].contains("pyproject.toml"), "{:?}", r.warnings);
    }

    #[test]
    fn message() {
        let r = run(&[Keep("requirements.txt", REQS), Add("yaml.py", "x = 1\n")]);
        assert_eq!(
            r.flags[0].message,
            "new module `yaml.py` is named like `yaml`, the import name of the dependency `PyYAML` (declared in requirements.txt) and would be imported instead of it"
        );
        assert_eq!(r.flags[0].line, None);
    }
}
