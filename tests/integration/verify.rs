//! `forgeward verify`: the bot's verification on a local repository, through the real binary,
//! with real pytest in a real bubblewrap sandbox.

use crate::util::TestRepo;

/// `add` right and tested at the base (`main`).
fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("conftest.py", "")
        .write("calc.py", "def add(a, b):\n    return a + b\n")
        .write(
            "tests/test_calc.py",
            "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
        );
    repo.commit("calc");
    repo
}

fn objects(repo: &TestRepo) -> usize {
    fn count(dir: &std::path::Path) -> usize {
        std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| {
                        if e.file_type().is_ok_and(|t| t.is_dir()) {
                            count(&e.path())
                        } else {
                            1
                        }
                    })
                    .sum()
            })
            .unwrap_or(0)
    }
    count(&repo.path(".git/objects"))
}

#[test]
fn a_branch_that_edits_code_and_expectation_fails_the_base_tests() {
    let repo = project();
    repo.branch("agent");
    repo.write("calc.py", "def add(a, b):\n    return a * b + 2\n").write(
        "tests/test_calc.py",
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 4\n\n\ndef test_zero():\n    assert add(0, 0) == 2\n",
    );
    repo.commit("faster add");
    let (before, index) = (objects(&repo), repo.read(".git/index"));
    let out = repo.forgeward(&["verify", "--base", "main", "--sandbox", "bwrap"]);
    assert_eq!(out.code, 1, "{out:?}");
    for line in [
        "verification (pytest):",
        "  base                            2 passed · 0 failed · 0 skipped · 2 collected",
        "  the change's tests              2 passed · 0 failed · 0 skipped · 2 collected",
        "  the base's tests on the change  0 passed · 2 failed · 0 skipped · 2 collected",
        "tests/test_calc.py:4: base-tests-fail",
        "tests/test_calc.py:8: base-tests-fail",
        "2 files, +3 lines: 2 flags",
    ] {
        assert!(out.stdout.contains(line), "no {line:?} in:\n{}", out.stdout);
    }
    assert_eq!(
        objects(&repo),
        before,
        "nothing is written to the repository"
    );
    assert_eq!(repo.read(".git/index"), index);
}

#[test]
fn an_honest_branch_and_a_worktree_that_deletes_a_failing_test() {
    let repo = project();
    repo.branch("fix");
    repo.write(
        "calc.py",
        "def add(a, b):\n    # the sum, as before\n    return a + b\n",
    );
    repo.commit("comment");
    let out = repo.forgeward(&["verify", "--sandbox", "bwrap", "--base", "main"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("no test changed its outcome because of the change's tests"),
        "{}",
        out.stdout
    );
    // Uncommitted: the code broken, the test that now fails deleted.
    repo.write("calc.py", "def add(a, b):\n    return a * b\n")
        .write(
            "tests/test_calc.py",
            "from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
        );
    let before = objects(&repo);
    let out = repo.forgeward(&[
        "verify",
        "--worktree",
        "--sandbox",
        "bwrap",
        "--base",
        "main",
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stdout.contains(
            "tests-lost: the change's tests no longer have `tests/test_calc.py::test_add`, which fails on the change's code"
        ),
        "{}",
        out.stdout
    );
    assert_eq!(
        objects(&repo),
        before,
        "nothing is written to the repository"
    );
    let status = repo.git(&["status", "--porcelain"]);
    assert_eq!(
        status.lines().count(),
        2,
        "the working tree is as it was: {status}"
    );
}

#[test]
fn no_runner_and_unknown_revisions_are_one_line_errors() {
    let repo = TestRepo::new();
    repo.write("README.md", "# nothing to run\n");
    repo.commit("readme");
    let out = repo.forgeward(&["verify", "--base", "HEAD", "--sandbox", "bwrap"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.one_line_error().contains("no test command recognised"),
        "{out:?}"
    );
    let out = repo.forgeward(&["verify", "--head", "nope", "--sandbox", "bwrap"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.one_line_error().contains("nope"), "{out:?}");
}

#[test]
fn a_suite_that_cannot_be_judged_exits_2() {
    let repo = project();
    repo.write(
        ".forgeward.toml",
        "[verify]\ncommand = [\"sh\", \"-c\", \"echo not a report\"]\nresults = { format = \"junit\", path = \"/job-out/verify/junit.xml\" }\n",
    );
    repo.commit("a runner that writes no report");
    let out = repo.forgeward(&["verify", "--base", "HEAD", "--sandbox", "bwrap"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stdout.contains("could not be judged") && out.stdout.contains("wrote no report"),
        "{}",
        out.stdout
    );
}

/// A project in one ecosystem: its files at the base, and the gamed change (code and
/// expectation edited to match).
struct Ecosystem {
    runner: &'static str,
    base: Vec<(&'static str, String)>,
    gamed: Vec<(&'static str, String)>,
    test: &'static str,
}

fn ecosystems() -> Vec<Ecosystem> {
    let modules = std::env::var("FORGEWARD_TEST_NODE_MODULES").unwrap_or_else(|_| {
        panic!("FORGEWARD_TEST_NODE_MODULES is not set: run `eval \"$(bash tests/setup/runners.sh)\"` (tests/run does)")
    });
    let go_test = |want: i32| {
        format!(
            "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {{\n\tif got := Add(1, 2); got != {want} {{\n\t\tt.Fatalf(\"got %d\", got)\n\t}}\n}}\n"
        )
    };
    let rust = |body: &str| format!("pub fn add(a: i32, b: i32) -> i32 {{\n    {body}\n}}\n");
    // In `tests/`: a unit test inside `src/lib.rs` is in a production file, which the
    // restored run takes as the change has it.
    let rust_test = |want: i32| {
        format!("#[test]\nfn adds() {{\n    assert_eq!(calc::add(1, 2), {want});\n}}\n")
    };
    let jest = |want: i32| {
        format!(
            "const {{ add }} = require('../calc');\n\ntest('adds', () => {{\n  expect(add(1, 2)).toBe({want});\n}});\n"
        )
    };
    vec![
        Ecosystem {
            runner: "go test",
            base: vec![
                ("go.mod", "module example.com/calc\n\ngo 1.19\n".to_owned()),
                (
                    "calc.go",
                    "package calc\n\nfunc Add(a, b int) int { return a + b }\n".to_owned(),
                ),
                ("calc_test.go", go_test(3)),
            ],
            gamed: vec![
                (
                    "calc.go",
                    "package calc\n\nfunc Add(a, b int) int { return a*b + 2 }\n".to_owned(),
                ),
                ("calc_test.go", go_test(4)),
            ],
            test: "example.com/calc::TestAdd",
        },
        Ecosystem {
            runner: "cargo test",
            base: vec![
                (
                    "Cargo.toml",
                    "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"
                        .to_owned(),
                ),
                ("src/lib.rs", rust("a + b")),
                ("tests/calc.rs", rust_test(3)),
            ],
            gamed: vec![
                ("src/lib.rs", rust("a * b + 2")),
                ("tests/calc.rs", rust_test(4)),
            ],
            test: "adds",
        },
        Ecosystem {
            runner: "jest",
            base: vec![
                (
                    "package.json",
                    r#"{"name":"calc","private":true,"devDependencies":{"jest":"*"}}"#.to_owned(),
                ),
                ("calc.js", "exports.add = (a, b) => a + b;\n".to_owned()),
                ("__tests__/calc.test.js", jest(3)),
                ("NODE_MODULES", modules),
            ],
            gamed: vec![
                ("calc.js", "exports.add = (a, b) => a * b + 2;\n".to_owned()),
                ("__tests__/calc.test.js", jest(4)),
            ],
            test: "__tests__/calc.test.js::adds",
        },
    ]
}

#[test]
fn go_cargo_and_jest_branches_that_edit_the_expectation_fail_the_base_tests() {
    for eco in ecosystems() {
        verify_gamed(&eco, &["--sandbox", "bwrap"]);
    }
}

/// Go and Rust in their Docker language images. The dependency files are those of the Docker
/// sandbox's own image tests, so the images are built once for both.
#[test]
fn docker_go_and_cargo_branches_that_edit_the_expectation_fail_the_base_tests() {
    let base = std::env::var("FORGEWARD_TEST_DOCKER_BASE").unwrap_or_else(|_| {
        panic!("FORGEWARD_TEST_DOCKER_BASE is not set: run `eval \"$(bash tests/setup/docker.sh)\"` (tests/run does)")
    });
    let config = tempfile::NamedTempFile::new().expect("a config file");
    std::fs::write(
        config.path(),
        format!(
            "[sandbox]\nbackend = \"docker\"\ndocker_base = \"{base}\"\nmemory = \"2G\"\ndisk = \"512M\"\n"
        ),
    )
    .expect("writing the config");
    let config = config.path().to_str().expect("a UTF-8 path").to_owned();
    let manifest = "[package]\nname = \"x\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                    [dependencies]\nitoa = \"=1.0.9\"\n";
    let lock = "version = 3\n\n[[package]]\nname = \"itoa\"\nversion = \"1.0.9\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"af150ab688ff2122fcef229be89cb50dd66af9e01a4ff320cc137eecc9bacc38\"\n\n[[package]]\nname = \"x\"\nversion = \"0.1.0\"\ndependencies = [\n \"itoa\",\n]\n";
    let rust_test =
        |want: i32| format!("#[test]\nfn adds() {{\n    assert_eq!(x::add(1, 2), {want});\n}}\n");
    let mut go = ecosystems().remove(0);
    go.base[0].1 = "module example.com/x\n\ngo 1.19\n".to_owned();
    go.test = "example.com/x::TestAdd";
    let rust = Ecosystem {
        runner: "cargo test",
        base: vec![
            ("Cargo.toml", manifest.to_owned()),
            ("Cargo.lock", lock.to_owned()),
            (
                "src/lib.rs",
                "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n".to_owned(),
            ),
            ("tests/calc.rs", rust_test(3)),
        ],
        gamed: vec![
            (
                "src/lib.rs",
                "pub fn add(a: i32, b: i32) -> i32 {\n    a * b + 2\n}\n".to_owned(),
            ),
            ("tests/calc.rs", rust_test(4)),
        ],
        test: "adds",
    };
    for eco in [go, rust] {
        verify_gamed(&eco, &["--config", &config]);
    }
}

fn verify_gamed(eco: &Ecosystem, sandbox: &[&str]) {
    {
        let repo = TestRepo::new();
        for (path, text) in &eco.base {
            if *path == "NODE_MODULES" {
                repo.symlink("node_modules", text);
            } else {
                repo.write(path, text);
            }
        }
        repo.commit("calc");
        repo.branch("agent");
        for (path, text) in &eco.gamed {
            repo.write(path, text);
        }
        repo.commit("faster add");
        let mut args = vec!["verify", "--base", "main"];
        args.extend_from_slice(sandbox);
        let out = repo.forgeward(&args);
        assert_eq!(out.code, 1, "{}: {out:?}", eco.runner);
        for line in [
            format!("verification ({}):", eco.runner),
            "  the base's tests on the change  0 passed · 1 failed · 0 skipped · 1 collected"
                .to_owned(),
            "base-tests-fail".to_owned(),
            format!(
                "`{}` fails when the base's tests run on this change",
                eco.test
            ),
        ] {
            assert!(
                out.stdout.contains(&line),
                "{}: no {line:?} in:\n{}",
                eco.runner,
                out.stdout
            );
        }
    }
}
