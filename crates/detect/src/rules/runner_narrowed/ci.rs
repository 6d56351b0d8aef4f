//! CI workflows: GitHub Actions (`.github/workflows/*.yml`) and GitLab CI (`.gitlab-ci.yml`).
//!
//! A job *runs tests* when one of its commands invokes a test runner. For such a job: its
//! commands compared as scripts (see [`super::command`]), `continue-on-error: true` (job or
//! step), `allow_failure: true`, `if: false`, `when: manual` / `when: never` newly set, and the
//! job removed (unless a new job runs the same runners: a rename). Jobs that run no test, new
//! jobs and matrix changes are not read.

use super::Narrowed;
use super::command::{self, Invocation, Shell};
use super::yaml::{self, Node};

fn is_true(n: Option<&Node>) -> bool {
    n.and_then(Node::text)
        .is_some_and(|t| matches!(t.trim(), "true" | "True" | "yes" | "on"))
}

fn is_off(n: Option<&Node>) -> bool {
    n.and_then(Node::text).is_some_and(|t| {
        let t: String = t.chars().filter(|c| !c.is_whitespace()).collect();
        matches!(t.as_str(), "false" | "${{false}}" | "0" | "${{0}}")
    })
}

/// True when some value under `node` mentions `text` (a command kept in a matrix and run as
/// `${{ matrix.command }}`).
fn mentions(node: &Node, text: &str) -> bool {
    match node {
        Node::Scalar(_) => node.text().is_some_and(|t| t.contains(text)),
        Node::Seq(_) => node.items().into_iter().any(|n| mentions(n, text)),
        Node::Map(entries) => entries.iter().any(|(_, _, n)| mentions(n, text)),
    }
}

/// Where a job keeps a command it runs by reference: its matrix and variables (GitHub's
/// `strategy` and `env`, GitLab's `parallel` and `variables`), and its steps' `with` and `env`
/// (an action given the command as an input).
fn keeps(job: &Node, text: &str) -> bool {
    const KEYS: &[&str] = &["strategy", "env", "variables", "parallel"];
    KEYS.iter()
        .filter_map(|k| job.get(k))
        .any(|n| mentions(n, text))
        || gh_steps(job).into_iter().any(|st| {
            ["with", "env"]
                .iter()
                .filter_map(|k| st.get(k))
                .any(|n| mentions(n, text))
        })
}

/// Drops "no longer runs `x`" where the head job still names `x` in a matrix, a variable or an
/// action's input (not where it only installs it: `pip install pytest`).
fn still_named(found: Vec<Narrowed>, job: &Node, base: &[Invocation]) -> Vec<Narrowed> {
    found
        .into_iter()
        .filter(|n| {
            !base.iter().any(|b| {
                n.message.ends_with(&format!("no longer runs `{}`", b.name)) && keeps(job, &b.name)
            })
        })
        .collect()
}

fn names(inv: &[Invocation]) -> Vec<String> {
    let mut n: Vec<String> = inv.iter().map(|i| i.name.clone()).collect();
    n.sort();
    n.dedup();
    n
}

fn listed(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn step_invocations(step: &Node) -> Vec<Invocation> {
    step.get("run")
        .map(|r| command::invocations(&r.lines()))
        .unwrap_or_default()
}

/// A job's steps, with the steps grouped inside one (`- parallel: [ … ]`) in their place.
fn gh_steps(job: &Node) -> Vec<&Node> {
    fn flatten<'n>(steps: Vec<&'n Node>, out: &mut Vec<&'n Node>) {
        for step in steps {
            out.push(step);
            for (_, _, value) in step.entries() {
                let nested = value.items();
                if nested
                    .iter()
                    .any(|n| n.get("run").is_some() || n.get("uses").is_some())
                {
                    flatten(nested, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    flatten(
        job.get("steps").map(Node::items).unwrap_or_default(),
        &mut out,
    );
    out
}

fn gh_job_invocations(job: &Node) -> Vec<Invocation> {
    gh_steps(job)
        .into_iter()
        .flat_map(step_invocations)
        .collect()
}

pub(super) fn github(base: &str, head: &str) -> Vec<Narrowed> {
    let b = yaml::parse(base);
    let h = yaml::parse(head);
    let (Some(bj), Some((jobs_line, hj))) = (b.get("jobs"), h.entry("jobs")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (id, _, bjob) in bj.entries() {
        let b_inv = gh_job_invocations(bjob);
        if b_inv.is_empty() {
            continue;
        }
        let what = format!("job `{id}`");
        let Some((job_line, hjob)) = hj.entry(id) else {
            let wanted = names(&b_inv);
            let renamed = hj.entries().iter().any(|(other, _, job)| {
                bj.get(other).is_none() && {
                    let have = names(&gh_job_invocations(job));
                    wanted.iter().all(|w| have.contains(w))
                }
            });
            if !renamed {
                out.push(Narrowed {
                    moved_from: None,
                    line: Some(jobs_line),
                    message: format!("{what}, which ran {}, was removed", listed(&wanted)),
                });
            }
            continue;
        };
        let h_inv = gh_job_invocations(hjob);
        let test_job = command::is_test_job(id)
            || hjob
                .get("name")
                .and_then(Node::text)
                .is_some_and(|n| command::is_test_job(&n))
            || gh_steps(hjob).iter().any(|st| {
                st.get("name")
                    .and_then(Node::text)
                    .is_some_and(|n| command::is_test_job(&n))
                    && !step_invocations(st).is_empty()
            });
        let found = command::compare_scopes(
            &b_inv,
            &h_inv,
            Shell::ErrExit,
            &what,
            Some(job_line),
            test_job,
        );
        out.extend(still_named(found, hjob, &b_inv));
        if let Some((line, v)) = hjob.entry("continue-on-error")
            && is_true(Some(v))
            && !is_true(bjob.get("continue-on-error"))
        {
            out.push(Narrowed {
 moved_from: None,
                line: Some(line),
                message: format!("{what}, which runs {}, newly has `continue-on-error: true`: its failure no longer fails the workflow", listed(&names(&h_inv))),
            });
        }
        if let Some((line, v)) = hjob.entry("if")
            && is_off(Some(v))
            && !is_off(bjob.get("if"))
        {
            out.push(Narrowed {
                moved_from: None,
                line: Some(line),
                message: format!(
                    "{what}, which runs {}, is newly turned off with `if: false`",
                    listed(&names(&h_inv))
                ),
            });
        }
        let base_steps = gh_steps(bjob);
        for step in gh_steps(hjob) {
            let inv = step_invocations(step);
            if inv.is_empty() {
                continue;
            }
            let step_names = names(&inv);
            let name = step.get("name").and_then(Node::text);
            // The same step at the base: by name, else by what it runs.
            let base_step =
                base_steps
                    .iter()
                    .find(|s| match (&name, s.get("name").and_then(Node::text)) {
                        (Some(a), Some(b)) => *a == b,
                        _ => names(&step_invocations(s)) == step_names,
                    });
            let Some(base_step) = base_step else {
                continue;
            };
            let shown = name.map_or_else(
                || format!("the step running {}", listed(&step_names)),
                |n| format!("step `{n}`"),
            );
            if let Some((line, v)) = step.entry("continue-on-error")
                && is_true(Some(v))
                && !is_true(base_step.get("continue-on-error"))
            {
                out.push(Narrowed {
 moved_from: None,
                    line: Some(line),
                    message: format!("{shown} of {what} newly has `continue-on-error: true`: the tests may fail and the job still passes"),
                });
            }
            if let Some((line, v)) = step.entry("if")
                && is_off(Some(v))
                && !is_off(base_step.get("if"))
            {
                out.push(Narrowed {
                    moved_from: None,
                    line: Some(line),
                    message: format!("{shown} of {what} is newly turned off with `if: false`"),
                });
            }
        }
    }
    out
}

/// Top-level keys of `.gitlab-ci.yml` that are not jobs.
const GITLAB_KEYWORDS: &[&str] = &[
    "stages",
    "variables",
    "default",
    "include",
    "workflow",
    "image",
    "services",
    "before_script",
    "after_script",
    "cache",
    "spec",
];

fn gl_job_invocations(job: &Node) -> Vec<Invocation> {
    job.get("script")
        .map(|s| command::invocations(&s.lines()))
        .unwrap_or_default()
}

pub(super) fn gitlab(base: &str, head: &str) -> Vec<Narrowed> {
    let b = yaml::parse(base);
    let h = yaml::parse(head);
    let jobs = |doc: &Node| -> Vec<(String, u32, Node)> {
        doc.entries()
            .iter()
            .filter(|(k, _, v)| !GITLAB_KEYWORDS.contains(&k.as_str()) && matches!(v, Node::Map(_)))
            .cloned()
            .collect()
    };
    let (bjobs, hjobs) = (jobs(&b), jobs(&h));
    let mut out = Vec::new();
    for (id, _, bjob) in &bjobs {
        let b_inv = gl_job_invocations(bjob);
        if b_inv.is_empty() {
            continue;
        }
        let what = format!("job `{id}`");
        let Some((_, job_line, hjob)) = hjobs.iter().find(|(k, _, _)| k == id) else {
            let wanted = names(&b_inv);
            let renamed = hjobs.iter().any(|(other, _, job)| {
                !bjobs.iter().any(|(k, _, _)| k == other) && {
                    let have = names(&gl_job_invocations(job));
                    wanted.iter().all(|w| have.contains(w))
                }
            });
            if !renamed {
                out.push(Narrowed {
                    moved_from: None,
                    line: None,
                    message: format!("{what}, which ran {}, was removed", listed(&wanted)),
                });
            }
            continue;
        };
        let h_inv = gl_job_invocations(hjob);
        let test_job = command::is_test_job(id)
            || hjob
                .get("stage")
                .and_then(Node::text)
                .is_some_and(|s| command::is_test_job(&s));
        let found = command::compare_scopes(
            &b_inv,
            &h_inv,
            Shell::ErrExit,
            &what,
            Some(*job_line),
            test_job,
        );
        out.extend(still_named(found, hjob, &b_inv));
        let runs = listed(&names(&h_inv));
        if let Some((line, v)) = hjob.entry("allow_failure")
            && is_true(Some(v))
            && !is_true(bjob.get("allow_failure"))
        {
            out.push(Narrowed {
 moved_from: None,
                line: Some(line),
                message: format!("{what}, which runs {runs}, newly has `allow_failure: true`: its failure no longer fails the pipeline"),
            });
        }
        if let Some((line, v)) = hjob.entry("when")
            && let Some(when) = v.text()
            && matches!(when.trim(), "manual" | "never")
            && bjob
                .get("when")
                .and_then(Node::text)
                .as_deref()
                .map(str::trim)
                != Some(when.trim())
        {
            out.push(Narrowed {
                moved_from: None,
                line: Some(line),
                message: format!(
                    "{what}, which runs {runs}, newly runs only `when: {}`",
                    when.trim()
                ),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::Rule;
    use crate::testing::{self, Spec::*, lines, run};

    fn flagged(path: &str, old: &str, new: &str) -> Vec<u32> {
        lines(&run(&[Modify(path, old, new)]), Rule::RunnerNarrowed)
    }

    fn messages(path: &str, old: &str, new: &str) -> Vec<String> {
        testing::messages(&run(&[Modify(path, old, new)]), Rule::RunnerNarrowed)
    }

    const GH: &str = "name: CI\non: [push, pull_request]\njobs:\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n      - run: ruff check .\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - name: Unit tests\n        run: |\n          pip install -e .\n          pytest tests\n      - name: Go tests\n        run: go test ./...\n";

    #[test]
    fn github_actions() {
        let path = ".github/workflows/ci.yml";
        for (new, line) in [
            (
                GH.replace(
                    "        run: |\n",
                    "        continue-on-error: true\n        run: |\n",
                ),
                13,
            ),
            (
                GH.replace(
                    "  test:\n    runs-on: ubuntu-latest\n",
                    "  test:\n    runs-on: ubuntu-latest\n    continue-on-error: true\n",
                ),
                10,
            ),
            (GH.replace("pytest tests", "pytest tests || true"), 15),
            (
                GH.replace(
                    "pytest tests",
                    "pytest tests --deselect tests/test_a.py::test_b",
                ),
                15,
            ),
            (
                GH.replace("      - name: Go tests\n        run: go test ./...\n", ""),
                8,
            ),
            (
                GH.replace(
                    "        run: go test ./...\n",
                    "        if: false\n        run: go test ./...\n",
                ),
                17,
            ),
        ] {
            assert_eq!(flagged(path, GH, &new), vec![line], "{new}");
        }
        let removed = GH.replace("  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - name: Unit tests\n        run: |\n          pip install -e .\n          pytest tests\n      - name: Go tests\n        run: go test ./...\n", "");
        assert_eq!(
            messages(path, GH, &removed),
            vec!["job `test`, which ran `go test`, `pytest`, was removed"]
        );
        assert_eq!(flagged(path, GH, &removed), vec![3]);
        // Steps grouped to run side by side still run.
        let grouped = GH.replace(
            "      - name: Go tests\n        run: go test ./...\n",
            "      - parallel:\n          - name: Go tests\n            run: go test ./...\n          - run: go vet ./...\n",
        );
        assert!(flagged(path, GH, &grouped).is_empty());
        // A step that ran tests removed from a job that installs the runner all the same.
        let installs = GH.replace("pip install -e .\n", "pip install -e . pytest\n");
        let step_gone = installs.replace("          pytest tests\n", "");
        assert_eq!(
            messages(path, &installs, &step_gone),
            vec!["job `test` no longer runs `pytest`"]
        );
        for new in [
            // A lint step may fail; verbosity; a new job; a renamed job; a new matrix.
            GH.replace(
                "      - run: ruff check .\n",
                "      - run: ruff check .\n        continue-on-error: true\n",
            ),
            GH.replace("pytest tests", "pytest -v tests"),
            format!(
                "{GH}  e2e:\n    runs-on: ubuntu-latest\n    continue-on-error: true\n    steps:\n      - run: npx playwright test\n"
            ),
            GH.replace("  test:\n", "  unit:\n"),
            // The command moved into the matrix.
            GH.replace("        run: go test ./...\n", "        run: ${{ matrix.cmd }}\n").replace("    runs-on: ubuntu-latest\n    steps:\n      - uses", "    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n        cmd: [go test ./...]\n    steps:\n      - uses"),
            GH.replace("# x", ""),
        ] {
            assert!(flagged(path, GH, &new).is_empty(), "{new}");
        }
    }

    #[test]
    fn a_narrower_run_added_beside_the_full_one() {
        let path = ".github/workflows/ci.yml";
        let base = "jobs:\n  test-workspace:\n    runs-on: ubuntu-latest\n    steps:\n      - run: |\n          cargo nextest run --workspace --features full\n          cargo test --doc --workspace --features full\n";
        let added = base.replace(
            "--features full\n          cargo test",
            "--features full\n          cargo nextest run --workspace --exclude tokio --features full\n          cargo test",
        );
        assert!(flagged(path, base, &added).is_empty());
        // The full run narrowed in place, or replaced by the narrower one.
        let narrowed = base.replace(
            "run --workspace --features",
            "run --workspace --exclude tokio --features",
        );
        assert_eq!(flagged(path, base, &narrowed), vec![6]);
        let replaced = added.replace(
            "          cargo nextest run --workspace --features full\n",
            "",
        );
        assert_eq!(flagged(path, base, &replaced), vec![6]);
    }

    #[test]
    fn a_command_split_in_one_step_or_across_steps_is_not_narrowed() {
        let path = ".github/workflows/third-party.yml";
        let job = |steps: &str| {
            format!("on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n{steps}")
        };
        let base = job(
            "      - name: Run tests\n        run: uv run --no-sync pytest tests/base tests/pandas tests/fastapi\n",
        );
        let split = job(
            "      - name: Run tests\n        run: |\n          uv run --no-sync pytest tests/base\n          uv run --no-sync pytest tests/pandas\n          uv run --no-sync pytest tests/fastapi\n",
        );
        assert!(flagged(path, &base, &split).is_empty());
        let steps = job(
            "      - name: Run base tests\n        run: uv run --no-sync pytest tests/base\n      - name: Run pandas tests\n        run: uv run --no-sync pytest tests/pandas tests/fastapi\n",
        );
        assert!(flagged(path, &base, &steps).is_empty());
        let dropped = job(
            "      - name: Run tests\n        run: |\n          uv run --no-sync pytest tests/base\n          uv run --no-sync pytest tests/fastapi\n",
        );
        assert_eq!(
            messages(path, &base, &dropped),
            vec![
                "job `test` no longer passes `tests/pandas` to `pytest`: those tests no longer run"
            ]
        );
        assert_eq!(flagged(path, &base, &dropped), vec![8]);
    }

    const GL: &str = "stages:\n  - test\n\nvariables:\n  PIP_CACHE_DIR: .cache\n\nunit:\n  stage: test\n  script:\n    - pip install .\n    - pytest tests/\n\nlint:\n  script:\n    - ruff check .\n";

    #[test]
    fn gitlab_ci() {
        let path = ".gitlab-ci.yml";
        for (new, line) in [
            (
                GL.replace("  stage: test\n", "  stage: test\n  allow_failure: true\n"),
                9,
            ),
            (
                GL.replace("    - pytest tests/\n", "    - pytest tests/ || true\n"),
                11,
            ),
            (
                GL.replace("  stage: test\n", "  stage: test\n  when: manual\n"),
                9,
            ),
            (
                GL.replace("    - pytest tests/\n", "    - pytest tests/test_fast.py\n"),
                11,
            ),
        ] {
            assert_eq!(flagged(path, GL, &new), vec![line], "{new}");
        }
        let removed = GL.replace(
            "unit:\n  stage: test\n  script:\n    - pip install .\n    - pytest tests/\n\n",
            "",
        );
        assert_eq!(
            messages(path, GL, &removed),
            vec!["job `unit`, which ran `pytest`, was removed"]
        );
        for new in [
            GL.replace("lint:\n", "lint:\n  allow_failure: true\n"),
            GL.replace("pytest tests/", "pytest -x --strict-markers tests/"),
            GL.replace("unit:", "unit-tests:"),
        ] {
            assert!(flagged(path, GL, &new).is_empty(), "{new}");
        }
    }
}
