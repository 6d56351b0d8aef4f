//! Verification's runners, for real: each ecosystem's usual test command, as `verify::runner`
//! detects it, run by `verify::suite` in the bubblewrap sandbox on a small project with a passing, a failing and a
//! skipped test and a test file that does not load, and its report read back as per-test
//! outcomes. pytest and Go come from Debian, Jest and Vitest from npm (`tests/setup/runners.sh`).

use std::path::{Path, PathBuf};

use forgeward::config::repo::ResultsFormat;
use forgeward::detect::{RepoPath, Tree};
use forgeward::sandbox::{Bwrap, Sandbox};
use forgeward::verify::runner::{Runner, detect};
use forgeward::verify::{Outcome, RunResults, suite};
use tokio_util::sync::CancellationToken;

use crate::sandbox::harness::Job;

/// A directory on disk as the detector's tree.
struct Dir(PathBuf);

impl Tree for Dir {
    fn exists(&self, path: &RepoPath) -> bool {
        self.0.join(path.display().as_ref()).exists()
    }
    fn read(&self, path: &RepoPath) -> Option<Vec<u8>> {
        std::fs::read(self.0.join(path.display().as_ref())).ok()
    }
    fn files(&self) -> Vec<RepoPath> {
        fn walk(root: &Path, dir: &Path, out: &mut Vec<RepoPath>) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(root, &path, out);
                } else if let Ok(rel) = path.strip_prefix(root) {
                    out.push(RepoPath::from(rel.to_str().expect("UTF-8")));
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.0, &self.0, &mut out);
        out
    }
}

/// Writes `files` into a job's workspace, runs the detected runner in the sandbox and reads its
/// report.
async fn run_project(
    files: &[(&str, &str)],
    links: &[(&str, &str)],
    expected_runner: &str,
) -> RunResults {
    let backend = Bwrap::new();
    if let Err(e) = backend.check().await {
        panic!("bubblewrap cannot run here: {e} (tests/setup/bwrap.sh installs it)");
    }
    let job = Job::new();
    for (path, text) in files {
        let path = job.workspace.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&path, text).expect("writing");
    }
    for (path, target) in links {
        std::os::unix::fs::symlink(target, job.workspace.join(path)).expect("linking");
    }
    let runner: Runner = detect(&Dir(job.workspace.clone()))
        .unwrap_or_else(|| panic!("no runner detected for {expected_runner}"));
    assert_eq!(runner.name, expected_runner);
    let mut template = job.spec("true", None);
    template.limits.disk_bytes = 512 << 20;
    // A test binary with its debug information is larger than the harness's default.
    template.limits.file_size_bytes = 256 << 20;
    // bubblewrap bounds address space, and V8 reserves far more than it uses (WebAssembly's
    // guard regions alone are several GiB an instance): the bound is the host's here.
    template.limits.memory_bytes = 1 << 40;
    let scratch = job.data.join("verify");
    let run = suite::run(
        &suite::Place {
            sandbox: &backend,
            template: &template,
            log: None,
        },
        &runner,
        &job.workspace,
        &scratch,
        std::time::Duration::from_secs(120),
        CancellationToken::new(),
    )
    .await;
    run.results.unwrap_or_else(|e| panic!("{e}"))
}

fn outcomes(r: &RunResults) -> Vec<(String, Outcome)> {
    let mut v: Vec<(String, Outcome)> = r.tests.iter().map(|t| (t.id.clone(), t.outcome)).collect();
    v.sort();
    v
}

#[tokio::test]
async fn pytest_in_the_sandbox() {
    let r = run_project(
        &[
            ("calc.py", "def add(a, b):\n    return a + b\n"),
            (
                "tests/test_calc.py",
                "import pytest\nfrom calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_sub():\n    assert add(7, -2) == 9\n\n\n@pytest.mark.skip(reason='later')\ndef test_later():\n    pass\n",
            ),
            ("tests/test_broken.py", "from calc import mul\n"),
            ("conftest.py", "import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n"),
        ],
        &[],
        "pytest",
    )
    .await;
    assert_eq!(
        outcomes(&r),
        [
            ("tests/test_calc.py::test_add".to_owned(), Outcome::Passed),
            (
                "tests/test_calc.py::test_later".to_owned(),
                Outcome::Skipped
            ),
            ("tests/test_calc.py::test_sub".to_owned(), Outcome::Failed),
        ]
    );
    let sub = r
        .tests
        .iter()
        .find(|t| t.id.ends_with("test_sub"))
        .expect("test_sub");
    assert_eq!(sub.file.as_deref(), Some("tests/test_calc.py"));
    assert_eq!(
        sub.line,
        Some(9),
        "the line of the def (pytest counts from 0, the report from 1)"
    );
    assert!(
        sub.message
            .as_deref()
            .unwrap_or_default()
            .contains("assert 5 == 9"),
        "{sub:?}"
    );
    assert_eq!(r.collection_errors.len(), 1, "{:?}", r.collection_errors);
    assert!(
        r.collection_errors[0].contains("ImportError"),
        "{:?}",
        r.collection_errors
    );
}

#[tokio::test]
async fn go_test_in_the_sandbox() {
    let r = run_project(
        &[
            ("go.mod", "module example.com/calc\n\ngo 1.19\n"),
            ("calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n"),
            (
                "calc_test.go",
                "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"2+3\")\n\t}\n}\n\nfunc TestSub(t *testing.T) {\n\tif got := Add(7, -2); got != 9 {\n\t\tt.Errorf(\"got %d, want 9\", got)\n\t}\n}\n\nfunc TestLater(t *testing.T) { t.Skip(\"later\") }\n",
            ),
            ("broken/broken_test.go", "package broken\n\nimport \"testing\"\n\nfunc TestMul(t *testing.T) { _ = Mul(2, 3) }\n"),
        ],
        &[],
        "go test",
    )
    .await;
    assert_eq!(
        outcomes(&r),
        [
            ("example.com/calc::TestAdd".to_owned(), Outcome::Passed),
            ("example.com/calc::TestLater".to_owned(), Outcome::Skipped),
            ("example.com/calc::TestSub".to_owned(), Outcome::Failed),
        ]
    );
    let sub = r
        .tests
        .iter()
        .find(|t| t.id.ends_with("TestSub"))
        .expect("TestSub");
    assert!(
        sub.message
            .as_deref()
            .unwrap_or_default()
            .contains("got 5, want 9"),
        "{sub:?}"
    );
    assert_eq!(r.collection_errors.len(), 1, "{:?}", r.collection_errors);
    assert!(
        r.collection_errors[0].starts_with("example.com/calc/broken"),
        "{:?}",
        r.collection_errors
    );
}

/// A Node project whose `node_modules` is a link to the packages `tests/setup/runners.sh`
/// installed (under /opt, which the sandbox sees read-only).
#[tokio::test]
async fn cargo_test_in_the_sandbox() {
    let r = run_project(
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            (
                "src/lib.rs",
                "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 3), 5);\n    }\n\n    #[test]\n    fn subtracts() {\n        assert_eq!(add(7, -2), 9, \"7 - 2\");\n    }\n\n    #[test]\n    #[ignore]\n    fn later() {}\n}\n",
            ),
            (
                "tests/more.rs",
                "#[test]\nfn from_outside() {\n    assert_eq!(calc::add(1, 1), 2);\n}\n",
            ),
        ],
        &[],
        "cargo test",
    )
    .await;
    assert_eq!(
        outcomes(&r),
        [
            ("from_outside".to_owned(), Outcome::Passed),
            ("tests::adds".to_owned(), Outcome::Passed),
            ("tests::later".to_owned(), Outcome::Skipped),
            ("tests::subtracts".to_owned(), Outcome::Failed),
        ]
    );
}

async fn node_project(framework: &str, files: &[(&str, &str)]) -> RunResults {
    let modules = std::env::var("FORGEWARD_TEST_NODE_MODULES").unwrap_or_else(|_| {
        panic!("FORGEWARD_TEST_NODE_MODULES is not set: run `eval \"$(bash tests/setup/runners.sh)\"` (tests/run does)")
    });
    let package =
        format!(r#"{{"name":"calc","private":true,"devDependencies":{{"{framework}":"*"}}}}"#);
    let mut all: Vec<(&str, &str)> = vec![
        ("package.json", package.as_str()),
        ("calc.js", "exports.add = (a, b) => a + b;\n"),
    ];
    all.extend_from_slice(files);
    run_project(&all, &[("node_modules", modules.as_str())], framework).await
}

const JEST_TESTS: &str = "const { add } = require('./calc');\n\ndescribe('calc', () => {\n  test('adds', () => {\n    expect(add(2, 3)).toBe(5);\n  });\n  test('subtracts', () => {\n    expect(add(7, -2)).toBe(9);\n  });\n  test.skip('later', () => {});\n});\n";

#[tokio::test]
async fn jest_in_the_sandbox() {
    let r = node_project(
        "jest",
        &[
            ("calc.test.js", JEST_TESTS),
            ("broken.test.js", "const { mul } = require('./mul');\ntest('mul', () => expect(mul(2, 3)).toBe(6));\n"),
        ],
    )
    .await;
    assert_eq!(
        outcomes(&r),
        [
            ("calc.test.js::calc adds".to_owned(), Outcome::Passed),
            ("calc.test.js::calc later".to_owned(), Outcome::Skipped),
            ("calc.test.js::calc subtracts".to_owned(), Outcome::Failed),
        ]
    );
    assert_eq!(r.collection_errors.len(), 1, "{:?}", r.collection_errors);
    assert!(
        r.collection_errors[0].starts_with("broken.test.js: "),
        "{:?}",
        r.collection_errors
    );
}

#[tokio::test]
async fn vitest_in_the_sandbox() {
    let tests = JEST_TESTS.replace(
        "const { add } = require('./calc');",
        "import { describe, test, expect } from 'vitest';\nimport { add } from './calc';",
    );
    let r = node_project("vitest", &[("calc.test.js", tests.as_str())]).await;
    let got = outcomes(&r);
    assert_eq!(got.len(), 3, "{got:?}");
    let outcome_of = |suffix: &str| {
        got.iter()
            .find(|(id, _)| id.ends_with(suffix))
            .map(|(_, o)| *o)
            .unwrap_or_else(|| panic!("no {suffix} in {got:?}"))
    };
    assert_eq!(outcome_of("adds"), Outcome::Passed);
    assert_eq!(outcome_of("subtracts"), Outcome::Failed);
    assert_eq!(outcome_of("later"), Outcome::Skipped);
}

/// Runs `runner` on an empty project with the harness's limits and `timeout`.
async fn run_alone(runner: &Runner, timeout_secs: u64, scratch: &str) -> suite::SuiteRun {
    let backend = Bwrap::new();
    let job = Job::new();
    suite::run(
        &suite::Place {
            sandbox: &backend,
            template: &job.spec("true", None),
            log: None,
        },
        runner,
        &job.workspace,
        &job.data.join(scratch),
        std::time::Duration::from_secs(timeout_secs),
        CancellationToken::new(),
    )
    .await
}

fn configured(command: &[&str], format: ResultsFormat, path: Option<&str>) -> Runner {
    Runner {
        name: "configured".into(),
        command: command.iter().map(|s| (*s).to_owned()).collect(),
        format,
        path: path.map(str::to_owned),
        reason: None,
    }
}

/// A suite that outlives its time is reported so, never as passed.
#[tokio::test]
async fn a_runner_that_times_out_is_not_a_pass() {
    let runner = configured(&["sleep", "30"], ResultsFormat::Libtest, None);
    let run = run_alone(&runner, 1, "verify").await;
    assert_eq!(
        run.results.expect_err("timed out").to_string(),
        "configured ran out of its 1s"
    );
}

/// A report that is garbage is an error naming the runner and the file; a runner that is not
/// installed says so.
#[tokio::test]
async fn a_garbage_report_names_the_runner_and_the_file() {
    let garbage = configured(
        &["sh", "-c", "echo 'all green!' > /job-out/verify/junit.xml"],
        ResultsFormat::Junit,
        Some("/job-out/verify/junit.xml"),
    );
    let err = run_alone(&garbage, 30, "verify")
        .await
        .results
        .expect_err("garbage")
        .to_string();
    assert!(
        err.starts_with("configured: /job-out/verify/junit.xml: not JUnit XML"),
        "{err}"
    );
    let missing = configured(
        &["pytest-that-is-not-installed"],
        ResultsFormat::Junit,
        Some("/job-out/verify/junit.xml"),
    );
    let err = run_alone(&missing, 30, "verify")
        .await
        .results
        .expect_err("missing")
        .to_string();
    assert!(err.contains("is not installed"), "{err}");
}
