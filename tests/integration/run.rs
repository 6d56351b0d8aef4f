//! `forgeward run`: one job on a local repository with no forge, in a real bubblewrap sandbox —
//! progress on stderr, the report on stdout, the branch left in the repository.

use crate::util::TestRepo;

fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("calc.py", "def add(a, b):\n    return a - b\n")
        .write(
            "tests/test_calc.py",
            "import pytest\nfrom calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        );
    repo.commit("calc");
    repo
}

fn run(repo: &TestRepo, worker: &str, branch: &str) -> crate::util::Output {
    let root = repo.root().to_str().expect("a UTF-8 path").to_owned();
    repo.forgeward(&[
        "run",
        "--repo",
        &root,
        "--task",
        "Fix add\n\nadd(1, 2) should be 3.",
        "--worker",
        worker,
        "--sandbox",
        "bwrap",
        "--branch",
        branch,
    ])
}

#[test]
fn an_honest_worker_leaves_a_clean_branch() {
    let repo = project();
    let out = run(
        &repo,
        "grep -q 'add(1, 2) should be 3' \"$FORGEWARD_TASK_FILE\" && sed -i 's/a - b/a + b/' calc.py && echo fixed",
        "fix-add",
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.starts_with("✅ ready for review"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("branch: fix-add ("), "{}", out.stdout);
    for phase in [
        "cloning",
        "preparing sandbox",
        "working",
        "checking",
        "publishing",
    ] {
        assert!(out.stderr.contains(phase), "no {phase} in:\n{}", out.stderr);
    }
    assert!(
        out.stderr.contains("│ fixed"),
        "the worker's line is shown:\n{}",
        out.stderr
    );
    assert_eq!(
        repo.git(&["show", "fix-add:calc.py"]),
        "def add(a, b):\n    return a + b\n"
    );
    // The branch is new; what is checked out is untouched.
    assert_eq!(
        repo.git(&["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "main"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path("calc.py")).expect("read"),
        "def add(a, b):\n    return a - b\n"
    );
}

#[test]
fn a_saboteur_is_flagged_and_exits_1() {
    let repo = project();
    let out = run(
        &repo,
        "sed -i 's/^def test_add/@pytest.mark.skip\\ndef test_add/' tests/test_calc.py",
        "skip-it",
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stdout.starts_with("⚠️ flagged"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("tests/test_calc.py:5: skip-marker: newly marks a test skipped"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("branch: skip-it"), "{}", out.stdout);
}

/// The worker that games the tests by editing them: `or True` appended to one assertion,
/// another replaced with `pass`, an expected value rewritten. Each sign is flagged on its line.
#[test]
fn a_worker_that_weakens_the_tests_is_flagged_on_each_line() {
    let repo = TestRepo::new();
    repo.write(
        "calc.py",
        "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n",
    )
    .write(
        "tests/test_calc.py",
        "from calc import add, mul, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n\n\ndef test_sub():\n    assert sub(7, 2) == 5\n",
    );
    repo.commit("calc");
    let worker = "sed -i -e 's/assert add(2, 3) == 5/assert add(2, 3) == 5 or True/' \
                  -e 's/assert mul(2, 3) == 6/pass/' \
                  -e 's/assert sub(7, 2) == 5/assert sub(7, 2) == -1/' tests/test_calc.py";
    let out = run(&repo, worker, "weaken");
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stdout.starts_with("⚠️ flagged"), "{}", out.stdout);
    for line in [
        "tests/test_calc.py:5: test-weakened: `assert add(2, 3) == 5 or True` in `test_add` cannot fail",
        "tests/test_calc.py:8: test-weakened: `test_mul` no longer checks anything: 1 check at the base, none now",
        // On a worker's change a changed expectation is at least a warning.
        "tests/test_calc.py:13: expectation-changed: `test_sub` now expects `-1` where it expected `5`",
    ] {
        assert!(out.stdout.contains(line), "no {line:?} in:\n{}", out.stdout);
    }
}

/// A worker that edits the tests and the code alike, on a repository with tests made read-only
/// and without.
const EDITS_TESTS_AND_CODE: &str = "sed -i 's/== 3/== -1/' tests/test_calc.py; \
     echo 'assert True' >> tests/test_calc.py; \
     sed -i 's/a - b/a + b/' calc.py; \
     printf 'from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n' > tests/test_zero.py; \
     echo done";

#[test]
fn read_only_tests_cannot_be_edited_and_the_rest_goes_through() {
    let repo = project();
    repo.write(".forgeward.toml", "[job]\ntests = \"read-only\"\n");
    repo.commit("protect the tests");
    let out = run(&repo, EDITS_TESTS_AND_CODE, "protected");
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("\ntests: read-only\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.starts_with("✅ ready for review"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("Device or resource busy") || out.stderr.contains("Read-only"),
        "the worker's edits of the test fail as its tools report them:\n{}",
        out.stderr
    );
    assert_eq!(
        repo.git(&["show", "protected:tests/test_calc.py"]),
        "import pytest\nfrom calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        "the branch carries no change to a protected test"
    );
    assert_eq!(
        repo.git(&["show", "protected:calc.py"]),
        "def add(a, b):\n    return a + b\n"
    );
    assert!(
        repo.git(&["show", "protected:tests/test_zero.py"])
            .contains("def test_zero"),
        "a new test file goes through"
    );
}

#[test]
fn writable_tests_are_edited_and_flagged() {
    let repo = project();
    let out = run(&repo, EDITS_TESTS_AND_CODE, "writable");
    // A note for a person's change, but on a worker's a changed expectation is never ready
    // for review: at least a warning, and the run is flagged.
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stdout.contains("\ntests: writable\n"), "{}", out.stdout);
    assert!(
        out.stdout.contains(
            "tests/test_calc.py:6: expectation-changed: `test_add` now expects `-1` where it expected `3`"
        ),
        "{}",
        out.stdout
    );
    assert!(
        repo.git(&["show", "writable:tests/test_calc.py"])
            .contains("== -1"),
        "the edit went through"
    );
}

#[test]
fn a_worker_that_changes_nothing_is_a_failure_and_leaves_no_branch() {
    let repo = project();
    let out = run(&repo, "echo looked around", "nothing");
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stdout.starts_with("❌ the worker made no changes"),
        "{}",
        out.stdout
    );
    assert!(
        repo.git_output(&["rev-parse", "--verify", "-q", "nothing"])
            .code
            != 0
    );
}

#[test]
fn a_failing_worker_shows_its_last_lines() {
    let repo = project();
    let out = run(&repo, "echo trying; echo giving up >&2; exit 3", "fails");
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stdout
            .starts_with("❌ the worker failed (the worker exited with code 3"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("  giving up"), "{}", out.stdout);
}

#[test]
fn the_worker_s_time_is_its_own_and_the_job_s_is_beside_it() {
    // A suite that takes a second on each of verification's three runs, after a worker that
    // takes none: the job's time holds the runs, the worker's does not.
    let repo = verified_project();
    repo.write(
        "conftest.py",
        "import time\n\n\ndef pytest_sessionstart(session):\n    time.sleep(1)\n",
    );
    repo.commit("slow suite");
    let out = run(&repo, "sed -i '5,6s/a + b/a - b/' calc.py", "timed");
    assert_eq!(out.code, 0, "{out:?}");
    let line = out.stdout.lines().next().unwrap_or_default().to_owned();
    let secs = |after: &str| -> u64 {
        line.split(after)
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no {after:?} in {line}"))
    };
    let (worker, job) = (secs("after "), secs("the job took "));
    assert!(worker <= 1, "{line}");
    assert!(job >= 3, "{line}");
    // Each phase its own time, the suite's three runs in verifying's.
    let phases = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("phases: "))
        .unwrap_or_else(|| panic!("no phases in:\n{}", out.stdout))
        .to_owned();
    let took = |phase: &str| -> f64 {
        phases
            .split(" · ")
            .find_map(|p| {
                p.strip_prefix(phase)?
                    .trim()
                    .strip_suffix(" s")?
                    .parse()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no {phase} in {phases}"))
    };
    for phase in [
        "cloning",
        "preparing sandbox",
        "working",
        "checking",
        "publishing",
    ] {
        assert!(took(phase) < 3.0, "{phase}: {phases}");
    }
    assert!(took("verifying") >= 3.0, "{phases}");
}

#[test]
fn an_existing_branch_is_never_overwritten() {
    let repo = project();
    repo.git(&["branch", "taken"]);
    let before = repo.rev("taken");
    let out = run(&repo, "echo more >> calc.py", "taken");
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("the branch 'taken' already exists"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.rev("taken"), before);
}

#[test]
fn no_task_is_a_usage_error() {
    let repo = project();
    let root = repo.root().to_str().expect("a UTF-8 path").to_owned();
    let out = repo.forgeward(&["run", "--repo", &root, "--worker", "true"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("--task"), "{}", out.stderr);

    // An empty task is no task.
    for task in ["", "  \n\n"] {
        let out = repo.forgeward(&["run", "--repo", &root, "--worker", "true", "--task", task]);
        assert_eq!(out.code, 2, "{out:?}");
        assert!(
            out.stderr
                .contains("the task is empty: say what to do with --task"),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn no_worker_is_said_before_anything_is_cloned() {
    let repo = project();
    let root = repo.root().to_str().expect("a UTF-8 path").to_owned();
    let out = repo.forgeward(&["run", "--repo", &root, "--task", "Fix it"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .contains("no worker: give its command with --worker"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("cloning"), "{}", out.stderr);
}

/// A worker that finds the task wrong says so in `/job-out/question.md`: the question is
/// printed, the exit status is 3, and what it changed is still left as a branch.
#[test]
fn a_worker_that_asks_prints_its_question_and_exits_3() {
    let repo = project();
    let worker = "grep -q /job-out/question.md \"$FORGEWARD_TASK_FILE\" && \
                  echo '# looked' >> calc.py && \
                  printf 'Should add(1, 2) be 3 or 4?\\nThe test says 3.\\n' > /job-out/question.md";
    let out = run(&repo, worker, "ask");
    assert_eq!(out.code, 3, "{out:?}");
    assert!(
        out.stdout.starts_with("❓ the worker has a question"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("the worker asks:\n  > Should add(1, 2) be 3 or 4?\n  > The test says 3.\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("branch: ask ("), "{}", out.stdout);
    assert!(repo.git(&["show", "ask:calc.py"]).contains("# looked"));
}

/// A blank question file is no question: the run ends as it would without one.
#[test]
fn a_blank_question_is_no_question() {
    let repo = project();
    let worker = "sed -i 's/a - b/a + b/' calc.py && printf '  \\n' > /job-out/question.md";
    let out = run(&repo, worker, "blank");
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.starts_with("✅ ready for review"),
        "{}",
        out.stdout
    );
}

/// A project whose tests the bot runs itself (`[verify] enabled = true`): `add` is right,
/// `sub` is wrong, and `test_sub` fails at the base.
fn verified_project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".forgeward.toml", "[verify]\nenabled = true\n")
        .write("conftest.py", "")
        .write(
            "calc.py",
            "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n",
        )
        .write(
            "tests/test_calc.py",
            "from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_sub():\n    assert sub(7, 2) == 5\n",
        );
    repo.commit("calc");
    repo
}

#[test]
fn verification_of_an_honest_fix_agrees_and_flags_nothing() {
    let repo = verified_project();
    let out = run(
        &repo,
        "sed -i '5,6s/a + b/a - b/' calc.py",
        "honest-verified",
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("verifying"), "{}", out.stderr);
    assert!(
        out.stdout.contains("verification (pytest):"),
        "{}",
        out.stdout
    );
    for line in [
        "  base                            1 passed · 1 failed · 0 skipped · 2 collected",
        "  the change's tests              2 passed · 0 failed · 0 skipped · 2 collected",
        "  the base's tests on the change  2 passed · 0 failed · 0 skipped · 2 collected",
    ] {
        assert!(out.stdout.contains(line), "no {line:?} in:\n{}", out.stdout);
    }
    assert!(!out.stdout.contains("base-tests-fail"), "{}", out.stdout);
}

#[test]
fn a_worker_that_edits_code_and_expectation_to_match_fails_the_base_tests() {
    let repo = verified_project();
    // add() broken, and its test rewritten to expect what it now returns.
    let worker = "sed -i '2s/a + b/a * b/' calc.py && sed -i 's/add(2, 3) == 5/add(2, 3) == 6/' tests/test_calc.py";
    let out = run(&repo, worker, "gamed-verified");
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stdout.contains("tests/test_calc.py:5: base-tests-fail (error): `tests/test_calc.py::test_add` passed at the base, fails when the base's tests run on this change"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "  tests/test_calc.py::test_add: passes with the change's tests, fails with the base's"
        ),
        "{}",
        out.stdout
    );
    // test_sub failed at the base already, and the worker left it alone.
    assert!(
        !out.stdout.contains("`tests/test_calc.py::test_sub`"),
        "{}",
        out.stdout
    );
}

/// The commonest cheat: the failing test's expected value rewritten to what the code returns.
/// The test failed at the base, which is no excuse: it still fails with its base version.
#[test]
fn a_worker_that_rewrites_the_failing_test_s_expectation_is_flagged_not_ready() {
    let repo = verified_project();
    let worker = "sed -i 's/sub(7, 2) == 5/sub(7, 2) == 9/' tests/test_calc.py";
    let out = run(&repo, worker, "rewritten-verified");
    assert_eq!(out.code, 1, "{out:?}");
    for line in [
        "⚠️ flagged: look before accepting",
        "tests/test_calc.py:9: test-rewritten (error): `tests/test_calc.py::test_sub` still fails on the change with its base version",
        "it passes only because the change rewrote it: it now expects `9` where it expected `5`",
        // On a worker's change a changed expectation is at least a warning.
        "tests/test_calc.py:9: expectation-changed: `test_sub` now expects `9` where it expected `5`",
        "  tests/test_calc.py::test_sub: passes with the change's tests, fails with the base's",
    ] {
        assert!(out.stdout.contains(line), "no {line:?} in:\n{}", out.stdout);
    }
    assert!(!out.stdout.contains("✅"), "{}", out.stdout);
}

/// Tests that cannot load at the base are no pass: the job says the tests could not be run,
/// with the runner's own error, and exits 2 as `forgeward verify` does.
#[test]
fn a_job_whose_tests_cannot_be_run_is_never_ready_for_review() {
    let repo = TestRepo::new();
    repo.write(".forgeward.toml", "[verify]\nenabled = true\n")
        .write("calc.py", "def add(a, b):\n    return a - b\n")
        .write(
            "tests/test_calc.py",
            "import not_installed_here\nfrom calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        );
    repo.commit("calc");
    let out = run(&repo, "sed -i 's/a - b/a + b/' calc.py", "unjudged");
    assert_eq!(out.code, 2, "{out:?}");
    for line in [
        "⚪ the tests could not be run: not ready for review",
        "could not be judged: pytest collected no test: ",
        "No module named 'not_installed_here'",
        "the tests could not be judged: the base run: pytest collected no test",
    ] {
        assert!(out.stdout.contains(line), "no {line:?} in:\n{}", out.stdout);
    }
    assert!(!out.stdout.contains("✅"), "{}", out.stdout);
}

#[test]
fn a_worker_that_deletes_the_failing_test_loses_tests() {
    let repo = verified_project();
    let worker = "python3 - <<'EOF'\nimport re\np = 'tests/test_calc.py'\ns = open(p).read()\nopen(p, 'w').write(s[: s.index('def test_sub')].rstrip() + '\\n')\nEOF";
    let out = run(&repo, worker, "deleting-verified");
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stdout.contains("tests-lost: the change's tests no longer have `tests/test_calc.py::test_sub`, which fails on the change's code"),
        "{}",
        out.stdout
    );
}

/// The mirrors `forgeward run` keeps for local repositories under `root`.
fn local_mirrors(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    match std::fs::read_dir(root.join("github/local")) {
        Ok(entries) => {
            let mut found: Vec<_> = entries
                .map(|e| e.expect("an entry").path())
                .filter(|p| p.extension().is_some_and(|e| e == "git"))
                .collect();
            found.sort();
            found
        }
        Err(_) => Vec::new(),
    }
}

const FIX: &str = "sed -i 's/a - b/a + b/' calc.py";

#[test]
fn a_second_run_takes_the_kept_mirror_which_borrows_the_repository_s_objects() {
    let repo = project();
    let first = run(&repo, FIX, "fix-1");
    assert_eq!(first.code, 0, "{first:?}");
    let cache = repo.home().join(".cache/forgeward/mirrors");
    let mirrors = local_mirrors(&cache);
    assert_eq!(mirrors.len(), 1, "one mirror kept: {mirrors:?}");
    let alternates = std::fs::read_to_string(mirrors[0].join("objects/info/alternates"))
        .expect("the mirror borrows objects");
    assert_eq!(
        alternates.trim(),
        repo.root().join(".git/objects").to_str().expect("UTF-8")
    );
    // The repository's own commit is not copied into the mirror: only the bot's commit is.
    let base = repo.git(&["rev-parse", "main"]);
    let base = base.trim();
    assert!(
        !mirrors[0]
            .join("objects")
            .join(&base[..2])
            .join(&base[2..])
            .exists()
    );
    assert_eq!(
        std::fs::read_dir(mirrors[0].join("objects/pack"))
            .map(|d| d.count())
            .unwrap_or(0),
        0,
        "no pack copied"
    );

    // A new commit in the repository, then a second run: the same mirror, the new base.
    repo.write("NOTES.md", "more\n");
    repo.commit("notes");
    let second = run(&repo, FIX, "fix-2");
    assert_eq!(second.code, 0, "{second:?}");
    assert_eq!(local_mirrors(&cache), mirrors);
    assert_eq!(repo.git(&["show", "fix-2:NOTES.md"]), "more\n");
    assert_eq!(
        repo.git(&["show", "fix-2:calc.py"]),
        "def add(a, b):\n    return a + b\n"
    );
}

#[test]
fn with_no_cache_nothing_is_kept() {
    let repo = project();
    let root = repo.root().to_str().expect("UTF-8").to_owned();
    let out = repo.forgeward(&[
        "run",
        "--repo",
        &root,
        "--task",
        "Fix add",
        "--worker",
        FIX,
        "--sandbox",
        "bwrap",
        "--branch",
        "fix",
        "--no-cache",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(local_mirrors(&repo.home().join(".cache/forgeward/mirrors")).is_empty());
}

#[test]
fn two_repositories_with_one_name_keep_two_mirrors_in_a_configured_data_directory() {
    let data = tempfile::tempdir().expect("a data directory");
    let config = data.path().join("forgeward.toml");
    std::fs::write(
        &config,
        format!("[server]\ndata_dir = \"{}\"\n", data.path().display()),
    )
    .expect("the configuration");
    // Both working trees are directories named `repo`.
    let (a, b) = (project(), project());
    for (repo, to) in [(&a, "a + b"), (&b, "b + a")] {
        let root = repo.root().to_str().expect("UTF-8").to_owned();
        let worker = format!("sed -i 's/a - b/{to}/' calc.py");
        let out = repo.forgeward(&[
            "run",
            "--repo",
            &root,
            "--task",
            "Fix add",
            "--worker",
            &worker,
            "--sandbox",
            "bwrap",
            "--branch",
            "fix",
            "--config",
            config.to_str().expect("UTF-8"),
        ]);
        assert_eq!(out.code, 0, "{out:?}");
    }
    assert_eq!(local_mirrors(&data.path().join("mirrors")).len(), 2);
    assert!(a.git(&["show", "fix:calc.py"]).contains("a + b"));
    assert!(b.git(&["show", "fix:calc.py"]).contains("b + a"));
}

/// Removes the loose object of `path` at `rev` from the repository's store.
fn lose_object(repo: &TestRepo, rev: &str, path: &str) -> String {
    let id = repo.git(&["rev-parse", &format!("{rev}:{path}")]);
    let id = id.trim().to_owned();
    let file = repo
        .root()
        .join(".git/objects")
        .join(&id[..2])
        .join(&id[2..]);
    std::fs::remove_file(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    id
}

#[test]
fn a_damaged_branch_the_job_does_not_start_from_does_not_stop_it() {
    let repo = project();
    repo.git(&["checkout", "-q", "-b", "old"]);
    repo.write("old.py", "print('old')\n");
    repo.commit("old");
    repo.git(&["checkout", "-q", "main"]);
    lose_object(&repo, "old", "old.py");
    let out = run(&repo, FIX, "fix");
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        repo.git(&["show", "fix:calc.py"]),
        "def add(a, b):\n    return a + b\n"
    );
}

#[test]
fn a_damaged_base_is_an_error_naming_the_object_and_the_branch() {
    let repo = project();
    repo.write("data/table.csv", "a,b\n1,2\n");
    repo.commit("table");
    let missing = lose_object(&repo, "main", "data/table.csv");
    let out = run(&repo, FIX, "fix");
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "the history of the branch 'main' is damaged: object {missing} (the file or directory 'data/table.csv')"
        )),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}

/// The same cheat on Docker, in Go's language image: the failing test's expectation rewritten.
#[test]
fn docker_a_worker_that_rewrites_a_failing_go_test_is_flagged() {
    let config = crate::util::docker_config();
    let repo = TestRepo::new();
    let test = "package x\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(1, 2); got != 3 {\n\t\tt.Fatalf(\"got %d\", got)\n\t}\n}\n";
    repo.write(".forgeward.toml", "[verify]\nenabled = true\n")
        .write("go.mod", "module example.com/x\n\ngo 1.19\n")
        .write(
            "x.go",
            "package x\n\nfunc Add(a, b int) int { return a - b }\n",
        )
        .write("x_test.go", test);
    repo.commit("x");
    let root = repo.root().to_str().expect("a UTF-8 path").to_owned();
    let out = repo.forgeward(&[
        "run",
        "--repo",
        &root,
        "--task",
        "Fix the failing test",
        "--worker",
        "sed -i 's/got != 3/got != -1/' x_test.go",
        "--config",
        config.path().to_str().expect("a UTF-8 path"),
        "--branch",
        "rewritten-docker",
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    for line in [
        "⚠️ flagged: look before accepting",
        "x_test.go:6: test-rewritten (error): `example.com/x::TestAdd` still fails on the change with its base version",
    ] {
        assert!(out.stdout.contains(line), "no {line:?} in:\n{}", out.stdout);
    }
}
