//! Which test command a repository uses, when its `.forgeward.toml` does not say: told from the
//! files of the base tree, and run offline (the sandbox has no network; Docker's language
//! images already hold the dependencies).
//!
//! A runner is chosen for the tests the base has, not for a name in a manifest: a
//! `package.json` that names Jest beside a Python project's pytest tests (for its web assets'
//! tooling, say) does not make it a Jest project. Where a repository has tests of two
//! ecosystems, the one with more test files runs, and [`Runner::reason`] says why and what was
//! left. A JavaScript runner that is not installed where the tests run (no
//! `node_modules/.bin/jest`, none on `PATH`) is reported missing at once, never looked for on a
//! network the sandbox does not have.

use crate::config::repo::{ResultsFormat, VerifyConfig};
use crate::detect::{RepoPath, Tree};

/// A test command and what it reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Runner {
    /// What the report calls it: `pytest`, `jest`, `vitest`, `go test`, `cargo test`, `maven`,
    /// `gradle`, or `configured` for `[verify] command`.
    pub name: String,
    /// The program and its arguments, run in `/workspace`.
    pub command: Vec<String>,
    pub format: ResultsFormat,
    /// The report file (a glob for one file per suite); `None`: the command's output.
    pub path: Option<String>,
    /// Why this runner, when the base could have had another: `2 Python test files; Jest
    /// named in package.json, but no JavaScript test file`.
    pub reason: Option<String>,
}

impl Runner {
    fn new(name: &str, command: &[&str], format: ResultsFormat, path: Option<&str>) -> Runner {
        Runner {
            name: name.to_owned(),
            command: command.iter().map(|s| (*s).to_owned()).collect(),
            format,
            path: path.map(str::to_owned),
            reason: None,
        }
    }

    /// The program the runner runs: the command's first word, or for a command run through
    /// `sh -c SCRIPT NAME …` the name the script is given.
    pub fn program(&self) -> &str {
        match self.command.as_slice() {
            [sh, c, _, name, ..] if sh == "sh" && c == "-c" => name,
            [first, ..] => first,
            [] => "",
        }
    }

    /// A Node runner, run from the repository's own `node_modules` or else from `PATH` (where
    /// Docker's Node image installs the dependencies), never fetched: missing, it exits 127
    /// with a line saying so.
    fn node(name: &str, program: &str, args: &[&str], format: ResultsFormat, path: &str) -> Runner {
        let script = format!(
            "if [ -x node_modules/.bin/{program} ]; then exec node_modules/.bin/{program} \"$@\"; fi; \
             command -v {program} >/dev/null 2>&1 || {{ echo \"{program}: not installed where the tests run (no node_modules/.bin/{program}, none on PATH)\" >&2; exit 127; }}; \
             exec {program} \"$@\""
        );
        let mut command = vec!["sh", "-c", &script, program];
        command.extend_from_slice(args);
        Runner::new(name, &command, format, Some(path))
    }
}

/// Whether `path` is a JavaScript or TypeScript test file by the runners' conventions:
/// `*.test.*` or `*.spec.*`, or anything under `__tests__/`; not in `node_modules`.
fn is_js_test(path: &RepoPath) -> bool {
    let bytes = path.as_bytes();
    if path.dirs().any(|d| d == b"node_modules") {
        return false;
    }
    let name = path.file_name();
    let script = [".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts"]
        .iter()
        .any(|ext| name.ends_with(ext.as_bytes()));
    let conventional = memchr::memmem::find(name, b".test.").is_some()
        || memchr::memmem::find(name, b".spec.").is_some()
        || path.dirs().any(|d| d == b"__tests__");
    script && conventional && !bytes.is_empty()
}

/// Whether `path` is a file pytest collects by its default names.
fn is_python_test(path: &RepoPath) -> bool {
    let name = path.file_name();
    name.ends_with(b".py") && (name.starts_with(b"test_") || name.ends_with(b"_test.py"))
}

/// The runner for a repository: its configured command, else the usual one for what the base
/// tree holds; `None` when neither says (verification then reports that it could not run).
pub fn runner(config: &VerifyConfig, tree: &dyn Tree) -> Option<Runner> {
    if let (Some(command), Some(results)) = (&config.command, &config.results) {
        let results = results.get_ref();
        return Some(Runner {
            name: "configured".to_owned(),
            command: command.get_ref().clone(),
            format: results.format,
            path: results.path.as_ref().map(|p| p.get_ref().clone()),
            reason: None,
        });
    }
    detect(tree)
}

/// The usual test command for the files at the root of `tree`.
pub fn detect(tree: &dyn Tree) -> Option<Runner> {
    let has = |p: &str| tree.exists(&RepoPath::from(p));
    let text = |p: &str| {
        tree.read(&RepoPath::from(p))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    };
    if has("Cargo.toml") {
        return Some(Runner::new(
            "cargo test",
            &["cargo", "test", "--offline", "--no-fail-fast"],
            ResultsFormat::Libtest,
            None,
        ));
    }
    if has("go.mod") {
        return Some(Runner::new(
            "go test",
            &["go", "test", "-json", "./..."],
            ResultsFormat::GoTestJson,
            None,
        ));
    }
    let files = tree.files();
    let js_tests = files.iter().filter(|p| is_js_test(p)).count();
    let py_tests = files.iter().filter(|p| is_python_test(p)).count();
    let package: Option<serde_json::Value> =
        text("package.json").and_then(|t| serde_json::from_str(&t).ok());
    let depends = |name: &str| {
        package.as_ref().is_some_and(|package| {
            ["dependencies", "devDependencies"]
                .iter()
                .any(|k| package.get(k).and_then(|d| d.get(name)).is_some())
        })
    };
    let node = if depends("vitest") {
        Some(Runner::node(
            "vitest",
            "vitest",
            &[
                "run",
                "--reporter=junit",
                "--outputFile=/job-out/verify/junit.xml",
            ],
            ResultsFormat::Junit,
            "/job-out/verify/junit.xml",
        ))
    } else if depends("jest") {
        Some(Runner::node(
            "jest",
            "jest",
            &["--ci", "--json", "--outputFile=/job-out/verify/jest.json"],
            ResultsFormat::JestJson,
            "/job-out/verify/jest.json",
        ))
    } else {
        None
    };
    let pytest_config = has("pytest.ini")
        || has("conftest.py")
        || text("pyproject.toml").is_some_and(|t| t.contains("[tool.pytest"))
        || text("setup.cfg").is_some_and(|t| t.contains("[tool:pytest]"))
        || text("tox.ini").is_some_and(|t| t.contains("[pytest]"));
    let pytest = (pytest_config || py_tests > 0).then(|| {
        Runner::new(
            "pytest",
            &[
                "python3",
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-o",
                "junit_family=xunit1",
                // One file that does not import must not hide the rest of the suite.
                "--continue-on-collection-errors",
                "--junitxml=/job-out/verify/junit.xml",
            ],
            ResultsFormat::Junit,
            Some("/job-out/verify/junit.xml"),
        )
    });
    let files_of =
        |n: usize, what: &str| format!("{n} {what} test file{}", if n == 1 { "" } else { "s" });
    match (node, pytest) {
        (Some(node), Some(mut pytest)) if js_tests == 0 || py_tests > js_tests => {
            let why = if js_tests == 0 {
                format!(
                    "{} named in package.json, but no JavaScript test file",
                    node.name
                )
            } else {
                format!(
                    "{} for {} not run",
                    node.name,
                    files_of(js_tests, "JavaScript")
                )
            };
            pytest.reason = Some(format!("{}; {why}", files_of(py_tests, "Python")));
            return Some(pytest);
        }
        (Some(mut node), Some(pytest)) => {
            node.reason = Some(format!(
                "{}; {} for {} not run",
                files_of(js_tests, "JavaScript"),
                pytest.name,
                files_of(py_tests, "Python")
            ));
            return Some(node);
        }
        (Some(node), None) => return Some(node),
        (None, Some(pytest)) => return Some(pytest),
        (None, None) => {}
    }
    if has("pom.xml") {
        return Some(Runner::new(
            "maven",
            &[
                "mvn",
                "--offline",
                "--batch-mode",
                "-Dmaven.test.failure.ignore=true",
                "test",
            ],
            ResultsFormat::Junit,
            Some("/workspace/target/surefire-reports/TEST-*.xml"),
        ));
    }
    if has("build.gradle") || has("build.gradle.kts") {
        let gradle = if has("gradlew") {
            "./gradlew"
        } else {
            "gradle"
        };
        return Some(Runner::new(
            "gradle",
            &[gradle, "--offline", "test", "--continue"],
            ResultsFormat::Junit,
            Some("/workspace/build/test-results/test/*.xml"),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::testing::MemTree;

    fn name(files: &[(&str, &str)]) -> Option<String> {
        let tree = MemTree(
            files
                .iter()
                .map(|(p, t)| (RepoPath::from(*p), t.as_bytes().to_vec()))
                .collect(),
        );
        detect(&tree).map(|r| r.name)
    }

    #[test]
    fn the_usual_runner_for_each_ecosystem() {
        assert_eq!(
            name(&[("Cargo.toml", "[package]\n")]).as_deref(),
            Some("cargo test")
        );
        assert_eq!(
            name(&[("go.mod", "module x\n")]).as_deref(),
            Some("go test")
        );
        assert_eq!(
            name(&[("package.json", r#"{"devDependencies":{"jest":"^29"}}"#)]).as_deref(),
            Some("jest")
        );
        assert_eq!(
            name(&[(
                "package.json",
                r#"{"devDependencies":{"vitest":"^2","jest":"^29"}}"#
            )])
            .as_deref(),
            Some("vitest")
        );
        assert_eq!(
            name(&[("pyproject.toml", "[tool.pytest.ini_options]\n")]).as_deref(),
            Some("pytest")
        );
        assert_eq!(
            name(&[("calc.py", ""), ("tests/test_calc.py", "")]).as_deref(),
            Some("pytest")
        );
        assert_eq!(name(&[("pom.xml", "<project/>")]).as_deref(), Some("maven"));
        assert_eq!(name(&[("build.gradle.kts", "")]).as_deref(), Some("gradle"));
    }

    fn chosen(files: &[(&str, &str)]) -> (String, Option<String>) {
        let tree = MemTree(
            files
                .iter()
                .map(|(p, t)| (RepoPath::from(*p), t.as_bytes().to_vec()))
                .collect(),
        );
        let r = detect(&tree).expect("a runner");
        (r.name, r.reason)
    }

    #[test]
    fn a_manifest_that_names_a_runner_does_not_outvote_the_tests_there_are() {
        let jest = ("package.json", r#"{"devDependencies":{"jest":"^29"}}"#);
        assert_eq!(
            chosen(&[jest, ("tests/test_slug.py", ""), ("slug.py", "")]),
            (
                "pytest".to_owned(),
                Some(
                    "1 Python test file; jest named in package.json, but no JavaScript test file"
                        .to_owned()
                )
            )
        );
        assert_eq!(
            chosen(&[
                jest,
                ("tests/test_a.py", ""),
                ("src/a.test.js", ""),
                ("src/b.test.ts", "")
            ]),
            (
                "jest".to_owned(),
                Some("2 JavaScript test files; pytest for 1 Python test file not run".to_owned())
            )
        );
        // One ecosystem's tests alone need no word on why.
        assert_eq!(
            chosen(&[jest, ("src/__tests__/a.js", "")]),
            ("jest".to_owned(), None)
        );
        assert_eq!(chosen(&[jest, ("lib/a.js", "")]), ("jest".to_owned(), None));
        // Files in node_modules are nobody's tests.
        assert_eq!(
            chosen(&[
                jest,
                ("node_modules/x/a.test.js", ""),
                ("tests/test_a.py", "")
            ])
            .0,
            "pytest"
        );
    }

    #[test]
    fn nothing_to_run_is_none() {
        // A package.json without a test framework, a Python file that is not a test.
        assert_eq!(
            name(&[
                ("package.json", r#"{"devDependencies":{"eslint":"^9"}}"#),
                ("setup.py", "")
            ]),
            None
        );
        assert_eq!(name(&[("package.json", "not json")]), None);
    }

    #[test]
    fn a_configured_command_comes_first() {
        let config = crate::config::RepoConfig::parse(
            ".forgeward.toml",
            "[verify]\ncommand = [\"make\", \"check\"]\nresults = { format = \"libtest\" }\n",
        )
        .expect("valid");
        let tree = MemTree([(RepoPath::from("go.mod"), Vec::new())].into());
        let r = runner(&config.verify, &tree).expect("a runner");
        assert_eq!(r.name, "configured");
        assert_eq!(r.command, ["make", "check"]);
        assert_eq!(r.format, ResultsFormat::Libtest);
        assert_eq!(
            runner(&VerifyConfig::default(), &tree)
                .map(|r| r.name)
                .as_deref(),
            Some("go test")
        );
    }
}
