//! Which test command a repository uses, when its `.forgeward.toml` does not say: told from the
//! files at the root of the base tree, and run offline (the sandbox has no network; Docker's
//! language images already hold the dependencies).

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
}

impl Runner {
    fn new(name: &str, command: &[&str], format: ResultsFormat, path: Option<&str>) -> Runner {
        Runner {
            name: name.to_owned(),
            command: command.iter().map(|s| (*s).to_owned()).collect(),
            format,
            path: path.map(str::to_owned),
        }
    }
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
    if let Some(package) = text("package.json").and_then(|t| serde_json::from_str(&t).ok()) {
        let package: serde_json::Value = package;
        let depends = |name: &str| {
            ["dependencies", "devDependencies"]
                .iter()
                .any(|k| package.get(k).and_then(|d| d.get(name)).is_some())
        };
        if depends("vitest") {
            return Some(Runner::new(
                "vitest",
                &[
                    "npx",
                    "--no-install",
                    "vitest",
                    "run",
                    "--reporter=junit",
                    "--outputFile=/job-out/verify/junit.xml",
                ],
                ResultsFormat::Junit,
                Some("/job-out/verify/junit.xml"),
            ));
        }
        if depends("jest") {
            return Some(Runner::new(
                "jest",
                &[
                    "npx",
                    "--no-install",
                    "jest",
                    "--ci",
                    "--json",
                    "--outputFile=/job-out/verify/jest.json",
                ],
                ResultsFormat::JestJson,
                Some("/job-out/verify/jest.json"),
            ));
        }
    }
    let pytest_config = has("pytest.ini")
        || has("conftest.py")
        || text("pyproject.toml").is_some_and(|t| t.contains("[tool.pytest"))
        || text("setup.cfg").is_some_and(|t| t.contains("[tool:pytest]"))
        || text("tox.ini").is_some_and(|t| t.contains("[pytest]"));
    let python_tests = || {
        tree.files().iter().any(|p| {
            let name = p.file_name();
            name.ends_with(b".py") && (name.starts_with(b"test_") || name.ends_with(b"_test.py"))
        })
    };
    if pytest_config || python_tests() {
        return Some(Runner::new(
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
        ));
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
