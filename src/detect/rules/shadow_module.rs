//! `shadow-module`: a new local module named like a declared dependency, which the language
//! would import instead of the real package (`sqlglot.py` beside the tests that import
//! `sqlglot`).
//!
//! Python: a new `name.py` or `name/__init__.py` whose directory is a root of imports rather than
//! a package of its own (no `__init__.py` beside it); inside a package, absolute imports do not
//! reach it. JavaScript/TypeScript: a new `name.js` or `name/index.js` (any JS or TS extension)
//! that does not itself import `name` — a wrapper that configures the real package is not a
//! shadow. Dependencies come from every manifest in the head tree (monorepos); names compare
//! normalised and by import name (PyYAML is imported as `yaml`).

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::bytes::Regex;

use super::{FileRules, new_path};
use crate::detect::change::{Change, ChangeKind, RepoPath};
use crate::detect::flag::{Flag, Rule};
use crate::detect::manifest::{self, Dependency, Ecosystem};
use crate::detect::paths;

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
        && !ctx.classifier.is_test(path)
        && !ctx.classifier.is_ignored(path)
        && !paths::is_doc(path)
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

pub(crate) fn check(changes: &[&Change], ctx: &mut FileRules<'_>) -> Vec<Flag> {
    // Manifests are read only when some new file could shadow something.
    let any = changes.iter().any(|c| {
        !matches!(c.kind, ChangeKind::Modified | ChangeKind::Deleted)
            && c.new_path.as_ref().is_some_and(|p| candidate(ctx, p))
    });
    if !any {
        return Vec::new();
    }
    let deps = dependencies(ctx);
    let shadowed = |p: &RepoPath| -> Option<(Module, &Dependency)> {
        let m = module(p)?;
        let dep = deps.get(&(m.ecosystem, m.name.clone()))?;
        Some((m, dep))
    };
    let mut flags = Vec::new();
    for change in changes {
        let Some(path) = new_path(change, |p| candidate(ctx, p) && shadowed(p).is_some()) else {
            continue;
        };
        let Some((m, dep)) = shadowed(path) else {
            continue;
        };
        let reaches = match m.ecosystem {
            Ecosystem::Python => !ctx.head.exists(&RepoPath::join(&m.root, b"__init__.py")),
            Ecosystem::Node => !ctx
                .head
                .read(path)
                .is_some_and(|content| imports_itself(&content, &dep.name)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::testing::{Spec::*, run};

    fn shadow(specs: &[crate::detect::testing::Spec<'_>]) -> Vec<String> {
        run(specs)
            .flags
            .into_iter()
            .filter(|f| f.rule == Rule::ShadowModule)
            .map(|f| f.path.to_string())
            .collect()
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
        assert_eq!(
            shadow(&[
                Keep("web/package.json", pkg),
                Add("web/src/lodash.js", "module.exports = {}\n")
            ]),
            vec!["web/src/lodash.js"]
        );
        assert_eq!(
            shadow(&[
                Keep("web/package.json", pkg),
                Add("web/left-pad/index.ts", "export default 1\n")
            ]),
            vec!["web/left-pad/index.ts"]
        );
    }

    #[test]
    fn negatives() {
        // Not a dependency; a test file; a different ecosystem; a pure move.
        assert!(shadow(&[Keep("requirements.txt", REQS), Add("parser.py", "x = 1\n")]).is_empty());
        assert!(
            shadow(&[
                Keep("requirements.txt", REQS),
                Add("tests/sqlglot.py", "x = 1\n")
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
