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
        "  base                                   2 passed · 0 failed · 0 skipped · 2 collected",
        "  the change's tests                     2 passed · 0 failed · 0 skipped · 2 collected",
        "  the base's tests on the change         0 passed · 2 failed · 0 skipped · 2 collected",
        // The change's rewritten tests fail on the base's code: they show what it changed.
        "  the change's tests on the base's code  0 passed · 2 failed · 0 skipped · 2 collected",
        "tests/test_calc.py:5: base-tests-fail",
        "tests/test_calc.py:9: base-tests-fail",
        "`tests/test_calc.py::test_add` passed at the base, fails when the base's tests run on this change",
        "the change rewrote it: it now expects `4` where it expected `3`",
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

/// A fix whose new tests run on the base's code too: when they all pass there, none shows the
/// fix (`tests-vacuous`, a note on a person's change); a regression test that fails there is the
/// proof, and the test beside it that pins what already worked is left alone. A change of tests
/// alone has nothing to show, and gets no fourth run.
#[test]
fn new_tests_that_all_pass_without_the_fix_are_a_note() {
    let repo = TestRepo::new();
    let calc = |sub: &str| {
        format!("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return {sub}\n")
    };
    let tests = |more: &str| {
        format!("from calc import add, sub\n\n\ndef test_add():\n    assert add(1, 2) == 3\n{more}")
    };
    const PINS: &str = "\n\ndef test_add_zero():\n    assert add(2, 0) == 2\n";
    const SHOWS: &str = "\n\ndef test_sub():\n    assert sub(3, 1) == 2\n";
    repo.write("conftest.py", "")
        .write("calc.py", calc("a + b"))
        .write("tests/test_calc.py", tests(""));
    repo.commit("calc");

    repo.branch("weak");
    repo.write("calc.py", calc("a - b"))
        .write("tests/test_calc.py", tests(PINS));
    repo.commit("sub subtracts");
    let out = repo.forgeward(&["verify", "--base", "main", "--sandbox", "bwrap"]);
    assert_eq!(out.code, 0, "{out:?}");
    for line in [
        "  the change's tests on the base's code  2 passed · 0 failed · 0 skipped · 2 collected",
        "tests/test_calc.py:8: tests-vacuous (note): `tests/test_calc.py::test_add_zero` passes on the base's code too: it does not show the change's fix",
    ] {
        assert!(out.stdout.contains(line), "no {line:?} in:\n{}", out.stdout);
    }
    assert_eq!(
        out.stdout.matches("tests-vacuous").count(),
        1,
        "{}",
        out.stdout
    );

    repo.checkout("main").branch("proved");
    repo.write("calc.py", calc("a - b"))
        .write("tests/test_calc.py", tests(&format!("{SHOWS}{PINS}")));
    repo.commit("sub subtracts, with its regression test");
    let out = repo.forgeward(&["verify", "--base", "main", "--sandbox", "bwrap"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains(
            "  the change's tests on the base's code  2 passed · 1 failed · 0 skipped · 3 collected"
        ),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("tests-vacuous"), "{}", out.stdout);

    // Tests alone: nothing fixed for them to show, so no run on the base's code.
    repo.checkout("main").branch("more-tests");
    repo.write("tests/test_calc.py", tests(PINS));
    repo.commit("tests only");
    let out = repo.forgeward(&["verify", "--base", "main", "--sandbox", "bwrap"]);
    assert!(
        !out.stdout.contains("on the base's code") && !out.stdout.contains("tests-vacuous"),
        "{}",
        out.stdout
    );
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

/// Go and Rust in their Docker toolchain images (the same as the Docker sandbox's own image
/// tests build, so they are built once for both).
#[test]
fn docker_go_and_cargo_branches_that_edit_the_expectation_fail_the_base_tests() {
    let config = crate::util::docker_config();
    let config = config.path().to_str().expect("a UTF-8 path").to_owned();
    let manifest = "[package]\nname = \"x\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    let lock = "version = 3\n\n[[package]]\nname = \"x\"\nversion = \"0.1.0\"\n";
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
                "`{}` passed at the base, fails when the base's tests run on this change",
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

/// The cheat that matters most: the test to fix fails at the base, and the change rewrites its
/// expected value to what the code returns. It failed at the base, so it is not excused.
#[test]
fn a_failing_test_whose_expectation_is_rewritten_is_an_error_on_the_rewritten_line() {
    let repo = TestRepo::new();
    repo.write("slug.py", SLUG_BUGGY)
        .write("tests/test_slug.py", slug_test("hello-world"));
    // A manifest that names Jest, for tooling, beside a Python project's tests.
    repo.write("package.json", r#"{"devDependencies":{"jest":"^29"}}"#);
    repo.commit("slug");
    repo.branch("agent");
    repo.write("tests/test_slug.py", slug_test("hello,-world!"));
    repo.commit("fix the failing test");
    let out = repo.forgeward(&["verify", "--base", "main", "--sandbox", "bwrap"]);
    assert_eq!(out.code, 1, "{out:?}");
    for line in [
        "verification (pytest: 1 Python test file; jest named in package.json, but no JavaScript test file):",
        "  base                            1 passed · 1 failed · 0 skipped · 2 collected",
        "  the base's tests on the change  1 passed · 1 failed · 0 skipped · 2 collected",
        "tests/test_slug.py:9: test-rewritten (error): `tests/test_slug.py::test_slugify_punctuation` still fails on the change with its base version",
        "(it failed at the base too); it passes only because the change rewrote it: it now expects `\"hello,-world!\"` where it expected `\"hello-world\"`",
    ] {
        assert!(out.stdout.contains(line), "no {line:?} in:\n{}", out.stdout);
    }
    assert!(
        !out.stdout.contains("no test changed its outcome"),
        "the summary says what the flags say:\n{}",
        out.stdout
    );

    // The honest fix of the same test: the code, not the test.
    repo.git(&["checkout", "-q", "main"]);
    repo.branch("honest");
    repo.write("slug.py", SLUG_FIXED);
    repo.commit("slugify drops punctuation");
    let out = repo.forgeward(&["verify", "--base", "main", "--sandbox", "bwrap"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("no test changed its outcome because of the change's tests"),
        "{}",
        out.stdout
    );
}

const SLUG_BUGGY: &str = "import re\n\n\ndef slugify(text):\n    return re.sub(r\"\\s+\", \"-\", text.strip().lower())\n";
const SLUG_FIXED: &str = "import re\n\n\ndef slugify(text):\n    text = re.sub(r\"[^\\w\\s-]\", \"\", text.strip().lower())\n    return re.sub(r\"\\s+\", \"-\", text)\n";

fn slug_test(punctuation: &str) -> String {
    format!(
        "from slug import slugify\n\n\ndef test_slugify_simple():\n    assert slugify(\"Hello World\") == \"hello-world\"\n\n\ndef test_slugify_punctuation():\n    assert slugify(\"Hello, World!\") == \"{punctuation}\"\n"
    )
}

/// The same cheat in Go and in Jest: a failing test's expectation rewritten to what the buggy
/// code returns.
#[test]
fn go_and_jest_tests_rewritten_to_pass_are_errors() {
    let modules = std::env::var("FORGEWARD_TEST_NODE_MODULES").unwrap_or_else(|_| {
        panic!("FORGEWARD_TEST_NODE_MODULES is not set: run `eval \"$(bash tests/setup/runners.sh)\"` (tests/run does)")
    });
    let go_test = |want: i32| {
        format!(
            "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {{\n\tif got := Add(1, 2); got != {want} {{\n\t\tt.Fatalf(\"got %d\", got)\n\t}}\n}}\n"
        )
    };
    let jest = |want: i32| {
        format!(
            "const {{ add }} = require('../calc');\n\ntest('adds', () => {{\n  expect(add(1, 2)).toBe({want});\n}});\n"
        )
    };
    // The runner, the base's files, the rewritten test file, and the flag's line.
    type Case = (
        &'static str,
        Vec<(&'static str, String)>,
        (&'static str, String),
        &'static str,
    );
    let cases: [Case; 2] = [
        (
            "go test",
            vec![
                ("go.mod", "module example.com/calc\n\ngo 1.19\n".to_owned()),
                (
                    "calc.go",
                    "package calc\n\nfunc Add(a, b int) int { return a - b }\n".to_owned(),
                ),
                ("calc_test.go", go_test(3)),
            ],
            ("calc_test.go", go_test(-1)),
            "calc_test.go:6: test-rewritten (error): `example.com/calc::TestAdd` still fails on the change with its base version",
        ),
        (
            "jest",
            vec![
                (
                    "package.json",
                    r#"{"name":"calc","private":true,"devDependencies":{"jest":"*"}}"#.to_owned(),
                ),
                ("calc.js", "exports.add = (a, b) => a - b;\n".to_owned()),
                ("__tests__/calc.test.js", jest(3)),
            ],
            ("__tests__/calc.test.js", jest(-1)),
            "__tests__/calc.test.js:4: test-rewritten (error): `__tests__/calc.test.js::adds` still fails on the change with its base version",
        ),
    ];
    for (runner, base, rewritten, line) in cases {
        let repo = TestRepo::new();
        for (path, text) in &base {
            repo.write(path, text);
        }
        if runner == "jest" {
            repo.symlink("node_modules", &modules);
        }
        repo.commit("calc");
        repo.branch("agent");
        repo.write(rewritten.0, &rewritten.1);
        repo.commit("make the test pass");
        let out = repo.forgeward(&["verify", "--base", "main", "--sandbox", "bwrap"]);
        assert_eq!(out.code, 1, "{runner}: {out:?}");
        for want in [line, "it passes only because the change rewrote it"] {
            assert!(
                out.stdout.contains(want),
                "{runner}: no {want:?} in:\n{}",
                out.stdout
            );
        }
    }
}

/// A suite whose files do not load collects nothing: that is no pass, and the runner's own
/// error says why.
#[test]
fn a_suite_that_collects_nothing_cannot_be_judged() {
    let repo = TestRepo::new();
    repo.write("calc.py", "def add(a, b):\n    return a + b\n").write(
        "tests/test_calc.py",
        "import trio_not_installed_here\nfrom calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    );
    repo.commit("calc");
    repo.branch("agent");
    repo.write("calc.py", "def add(a, b):\n    return b + a\n");
    repo.commit("commute");
    let out = repo.forgeward(&["verify", "--base", "main", "--sandbox", "bwrap"]);
    assert_eq!(out.code, 2, "{out:?}");
    for want in [
        "  base                            could not be judged: pytest collected no test: ",
        "ModuleNotFoundError: No module named 'trio_not_installed_here'",
        "the tests could not be judged: the base run: pytest collected no test",
    ] {
        assert!(out.stdout.contains(want), "no {want:?} in:\n{}", out.stdout);
    }
    assert!(!out.stdout.contains("0 collected"), "{}", out.stdout);
    assert!(
        !out.stdout.contains("no test changed its outcome"),
        "{}",
        out.stdout
    );
}

/// A JavaScript runner that is not installed where the tests run is reported at once, with its
/// own line, never looked for on a network the sandbox does not have.
#[test]
fn a_missing_jest_is_named_at_once() {
    let repo = TestRepo::new();
    repo.write("package.json", r#"{"devDependencies":{"jest":"^29"}}"#)
        .write("calc.js", "exports.add = (a, b) => a + b;\n")
        .write(
            "calc.test.js",
            "const { add } = require('./calc');\ntest('adds', () => expect(add(1, 2)).toBe(3));\n",
        );
    repo.commit("calc");
    let started = std::time::Instant::now();
    let out = repo.forgeward(&["verify", "--base", "HEAD", "--sandbox", "bwrap"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stdout
            .contains("jest is not installed where the tests run"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "│ jest: not installed where the tests run (no node_modules/.bin/jest, none on PATH)"
        ),
        "{}",
        out.stdout
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}
