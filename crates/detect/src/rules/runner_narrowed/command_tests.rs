//! The shell reader's and the script comparison's tests.

use super::*;

fn inv(s: &str) -> Vec<Invocation> {
    invocations(&one_line(s, Some(1)))
}

fn narrowed(base: &str, head: &str) -> Vec<String> {
    compare_scopes(
        &inv(base),
        &inv(head),
        Shell::LastStatus,
        "the script",
        None,
        true,
    )
    .into_iter()
    .map(|n| n.message)
    .collect()
}

#[test]
fn runners_are_recognised_through_wrappers() {
    for (s, name) in [
        ("pytest -q", "pytest"),
        ("python -m pytest tests", "pytest"),
        ("poetry run pytest", "pytest"),
        ("uv run --with x pytest", "pytest"),
        ("coverage run -m pytest", "pytest"),
        ("CI=1 npx jest --ci", "jest"),
        ("vitest run", "vitest"),
        ("nyc mocha", "mocha"),
        ("go test ./...", "go test"),
        ("cargo nextest run", "cargo nextest run"),
        ("./gradlew test", "gradle"),
        ("bundle exec rspec", "rspec"),
        ("npm run test:unit", "npm run test:unit"),
        ("make test", "make test"),
        ("dotnet test", "dotnet test"),
    ] {
        let i = inv(s);
        assert_eq!(i.len(), 1, "{s}");
        assert_eq!(i[0].name, name, "{s}");
    }
    for s in [
        "echo pytest",
        "python setup.py build",
        "make build",
        "npm run lint",
        "go vet ./...",
    ] {
        assert!(inv(s).is_empty(), "{s}");
    }
}

#[test]
fn selections_and_paths() {
    assert_eq!(
        narrowed("pytest tests", "pytest tests -k 'not slow'"),
        vec![
            "the script newly passes `-k not slow` to `pytest`, which runs only the tests it selects"
        ]
    );
    assert_eq!(
        narrowed("pytest", "pytest --deselect tests/test_a.py::test_b").len(),
        1
    );
    assert_eq!(narrowed("pytest", "pytest -pno:randomly").len(), 1);
    assert!(narrowed("pytest", "pytest -p no:cacheprovider").is_empty());
    assert_eq!(
        narrowed("pytest tests/unit tests/integration", "pytest tests/unit"),
        vec![
            "the script no longer passes `tests/integration` to `pytest`: those tests no longer run"
        ]
    );
    assert!(
        narrowed("pytest tests/unit", "pytest tests").is_empty(),
        "wider"
    );
    assert!(narrowed("pytest tests", "pytest").is_empty(), "wider");
    assert_eq!(narrowed("pytest", "pytest tests/test_a.py").len(), 1);
    // A directory inside the test directory is part of the suite; the test directory itself,
    // or a source directory, may be all of it.
    assert_eq!(
        narrowed("jest", "jest test/other"),
        vec!["the script now runs only `test/other` with `jest`, not the whole suite"]
    );
    assert_eq!(narrowed("pytest", "pytest tests/unit/").len(), 1);
    for h in [
        "pytest tests",
        "jest src",
        "jest test/",
        "pytest tests/fixtures",
        "jest 'test/**'",
    ] {
        assert!(
            narrowed(h.split(' ').next().unwrap_or(h), h).is_empty(),
            "{h}"
        );
    }
    assert_eq!(narrowed("go test ./...", "go test ./pkg/...").len(), 1);
    assert!(narrowed("go test ./pkg/...", "go test ./...").is_empty());
    assert_eq!(
        narrowed("go test ./...", "go test -run TestA ./...").len(),
        1
    );
    assert_eq!(narrowed("cargo test", "cargo test parser").len(), 1);
    assert_eq!(narrowed("cargo test", "cargo test -- --skip slow").len(), 1);
    assert_eq!(narrowed("mvn verify", "mvn verify -DskipTests").len(), 1);
    assert_eq!(narrowed("jest", "jest --passWithNoTests").len(), 1);
    assert_eq!(narrowed("npm test", "npm test -- -t login").len(), 1);
    // More output, strictness, other options: not narrower.
    for (b, h) in [
        ("pytest", "pytest -v --strict-markers -x -n auto"),
        ("jest", "jest --ci --coverage --maxWorkers 2"),
        ("go test ./...", "go test -race -count=1 ./..."),
        ("pytest -k 'not slow'", "pytest -k 'not slow and not db'"),
        ("cargo test", "cargo test --all-features --workspace"),
    ] {
        assert!(
            narrowed(b, h).is_empty(),
            "{b} -> {h}: {:?}",
            narrowed(b, h)
        );
    }
}

#[test]
fn failures_swallowed_and_runners_dropped() {
    assert_eq!(
        narrowed("jest", "jest || true"),
        vec!["the script can no longer fail: `jest` is followed by `|| true`"]
    );
    assert_eq!(narrowed("pytest", "pytest || exit 0").len(), 1);
    assert_eq!(narrowed("pytest", "pytest; exit 0").len(), 1);
    assert_eq!(narrowed("pytest", "pytest || echo failed").len(), 1);
    assert!(narrowed("pytest || true", "pytest -v || true").is_empty());
    assert!(narrowed("pytest", "pytest && echo done").is_empty());
    assert_eq!(narrowed("jest", "echo \"tests pass\"").len(), 1);
    assert!(narrowed("jest", "vitest run").is_empty(), "a migration");
    assert!(narrowed("npm test", "echo 'no tests' && exit 1").len() == 1);
    assert_eq!(
        narrowed(
            "pytest --cov=app --cov-fail-under=90",
            "pytest --cov=app --cov-fail-under=70"
        ),
        vec!["the script lowers the coverage threshold from 90 to 70"]
    );
    assert!(narrowed("pytest --cov-fail-under=70", "pytest --cov-fail-under=90").is_empty());
    let base = inv("set -e\npytest\n");
    let head = inv("set +e\npytest\necho done\n");
    assert_eq!(
        compare_scopes(&base, &head, Shell::ErrExit, "job `t`", None, true).len(),
        1
    );
    let (b, h) = (inv("pytest\njest\n"), inv("set +e\npytest\njest\n"));
    assert_eq!(
        compare_scopes(&b, &h, Shell::ErrExit, "job `t`", None, true).len(),
        1
    );
    // Placeholders and wrappers with options.
    assert!(narrowed("pytest {posargs:tests}", "pytest {posargs}").is_empty());
    assert!(narrowed("go test -v ./...", "go test -v $(GO_TEST_FLAGS) ./...").is_empty());
    assert!(narrowed("tox run -e py", "uv run --locked tox run -e py").is_empty());
    assert!(
        narrowed(
            "nyc --reporter=text npm test",
            "nyc --exclude examples --reporter=text npm test"
        )
        .is_empty()
    );
    assert!(narrowed("make test", "make richtest").is_empty());
    assert!(
        narrowed(
            "uv run pytest tests",
            "xargs -0 uv run --no-sync pytest tests < f > out.txt"
        )
        .is_empty()
    );
    assert!(narrowed("pnpm run test:ci", "pnpm run test:ci:all").is_empty());
    // A build tool skipping tests outside a test scope is its business.
    let (b, h) = (inv("mvn install"), inv("mvn install -DskipTests"));
    assert!(compare_scopes(&b, &h, Shell::ErrExit, "job `release`", None, false).is_empty());
    assert_eq!(
        compare_scopes(&b, &h, Shell::ErrExit, "job `test`", None, true).len(),
        1
    );
}

#[test]
fn paths_cover() {
    assert!(covers("tests", "tests/unit"));
    assert!(covers("./tests/", "tests"));
    assert!(covers("./...", "./pkg/x"));
    assert!(!covers("tests/unit", "tests"));
    assert!(covers("tests/test_a.py", "tests/test_a.py::test_b"));
}

#[test]
fn one_command_split_in_several_runs_the_same_paths() {
    let base = "uv run --no-sync pytest tests/base tests/pandas tests/fastapi";
    let head = "uv run --no-sync pytest tests/base\nuv run --no-sync pytest tests/pandas\nuv run --no-sync pytest tests/fastapi\n";
    assert!(
        narrowed(base, head).is_empty(),
        "{:?}",
        narrowed(base, head)
    );
    assert!(narrowed(head, base).is_empty(), "joined again");
    assert!(
        narrowed(
            base,
            "pytest tests/base tests/fastapi\npytest tests/pandas -v"
        )
        .is_empty()
    );
    // A path dropped is flagged once, whichever command used to pass it.
    let head = "uv run --no-sync pytest tests/base\nuv run --no-sync pytest tests/fastapi\n";
    assert_eq!(
        narrowed(base, head),
        vec!["the script no longer passes `tests/pandas` to `pytest`: those tests no longer run"]
    );
    assert_eq!(
        narrowed(
            "pytest tests/a tests/b\npytest tests/c tests/b",
            "pytest tests/a\npytest tests/c"
        ),
        vec!["the script no longer passes `tests/b` to `pytest`: those tests no longer run"]
    );
    // Split, but each part narrowed to files: the whole suite no longer runs.
    assert_eq!(
        narrowed("pytest", "pytest tests/test_a.py\npytest tests/test_b.py").len(),
        1
    );
    // Another runner's paths do not cover this one's.
    assert_eq!(
        narrowed("pytest tests/a tests/b", "pytest tests/a\njest tests/b").len(),
        1
    );
}

#[test]
fn a_narrower_run_added_beside_the_full_one_narrows_nothing() {
    let base = "cargo nextest run --workspace --features full\ncargo test --doc --workspace --features full\n";
    let head = "cargo nextest run --workspace --features full\ncargo nextest run --workspace --exclude tokio --features full\ncargo test --doc --workspace --features full\n";
    assert!(
        narrowed(base, head).is_empty(),
        "{:?}",
        narrowed(base, head)
    );
    assert!(narrowed("pytest tests", "pytest tests\npytest tests -k slow").is_empty());
    // The full run itself narrowed is still flagged, once.
    let head = "cargo nextest run --workspace --exclude tokio --features full\ncargo test --doc --workspace --features full\n";
    assert_eq!(narrowed(base, head).len(), 1);
    assert_eq!(
        narrowed("pytest tests", "pytest tests -k a\npytest tests -k b").len(),
        1
    );
    // Two runs at the base, each narrowed in its own way: both flagged.
    assert_eq!(
        narrowed(
            "pytest tests/a\npytest tests/b -k x",
            "pytest tests/a -k y\npytest tests/b -k x --deselect tests/b/t.py::c"
        )
        .len(),
        2
    );
}
