//! The CI workflows users copy from `deploy/` (GitHub Actions, GitLab CI, Forgejo Actions):
//! each file through its forge's checker (actionlint, GitLab's CI schema with
//! check-jsonschema), and the commands each runs — read from the file itself, never copied
//! here — on a checkout shaped like the forge's own: shallow, HEAD detached at the commit the
//! forge builds. They must find the pull request's range and report its flags, in the forge's
//! format.
//!
//! The steps that install forgeward are not run (the binary under test is on the `PATH`
//! instead), nor the opt-in `forgeward verify` step. A missing checker fails its test with one
//! line naming tests/setup/workflows.sh; none skips.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

use crate::util::{Output, TEST_X, TEST_X_SKIPPED, TestRepo, path_with_forgeward};

const SETUP: &str = "run tests/setup/workflows.sh and source its exports";

fn deploy_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy")
        .join(rel)
}

fn checker(var: &str) -> PathBuf {
    let path = std::env::var_os(var)
        .unwrap_or_else(|| panic!("{var} is not set: {SETUP}"))
        .into();
    assert!(
        Path::new(&path).exists(),
        "{var} names {path:?}, which is not there: {SETUP}"
    );
    path
}

/// Runs a checker on `args`; its exit code and what it printed.
fn run_checker(program: &Path, args: &[&Path]) -> Output {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program:?} cannot run ({e}): {SETUP}"));
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        raw_stdout: out.stdout,
    }
}

fn actionlint(path: &Path) -> Output {
    run_checker(&checker("FORGEWARD_TEST_ACTIONLINT"), &[path])
}

fn gitlab_schema(path: &Path) -> Output {
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/gitlab-ci/ci.json");
    run_checker(
        &checker("FORGEWARD_TEST_CHECK_JSONSCHEMA"),
        &[Path::new("--schemafile"), &schema, path],
    )
}

/// A copy of `path` with `from` replaced by `to`, in `dir`.
fn with_typo(dir: &Path, path: &Path, from: &str, to: &str) -> PathBuf {
    let text = std::fs::read_to_string(path).expect("reading a workflow");
    assert!(text.contains(from), "{path:?} has no {from:?}");
    let copy = dir.join(path.file_name().expect("a file name"));
    std::fs::write(&copy, text.replacen(from, to, 1)).expect("writing a copy");
    copy
}

#[test]
fn the_github_actions_workflow_passes_actionlint() {
    let out = actionlint(&deploy_file("github-actions/forgeward.yml"));
    assert_eq!(out.code, 0, "{out:?}");

    // And actionlint is really reading it: a mistyped property of the `github` context is found.
    let dir = tempfile::tempdir().expect("tempdir");
    let typo = with_typo(
        dir.path(),
        &deploy_file("github-actions/forgeward.yml"),
        "github.base_ref",
        "github.base_reff",
    );
    let out = actionlint(&typo);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stdout.contains("property \"base_reff\" is not defined"),
        "{out:?}"
    );
}

#[test]
fn the_forgejo_workflow_passes_actionlint_but_for_its_runner_label() {
    let out = actionlint(&deploy_file("forgejo-actions/forgeward.yml"));
    // actionlint knows GitHub's hosted runners only; a Forgejo runner's labels are its own.
    let findings: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains(".yml:") && l.ends_with(']'))
        .collect();
    assert_eq!(findings.len(), 1, "{out:?}");
    assert!(
        findings[0].contains("label \"docker\" is unknown")
            && findings[0].ends_with("[ runner-label ]"),
        "{out:?}"
    );
}

#[test]
fn the_gitlab_job_passes_gitlabs_ci_schema() {
    let out = gitlab_schema(&deploy_file("gitlab-ci/forgeward.gitlab-ci.yml"));
    assert_eq!(out.code, 0, "{out:?}");

    let dir = tempfile::tempdir().expect("tempdir");
    let typo = with_typo(
        dir.path(),
        &deploy_file("gitlab-ci/forgeward.gitlab-ci.yml"),
        "codequality:",
        "code_quality:",
    );
    let out = gitlab_schema(&typo);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stdout.contains("code_quality"), "{out:?}");
}

/// An Actions workflow, as much of it as the tests run.
#[derive(Deserialize)]
struct Workflow {
    jobs: BTreeMap<String, ActionsJob>,
}

#[derive(Deserialize)]
struct ActionsJob {
    steps: Vec<ActionsStep>,
}

#[derive(Deserialize)]
struct ActionsStep {
    id: Option<String>,
    name: Option<String>,
    uses: Option<String>,
    #[serde(default)]
    with: BTreeMap<String, serde_norway::Value>,
    run: Option<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(rename = "if")]
    condition: Option<String>,
}

/// The one job of the workflow at `rel` under deploy/.
fn actions_job(rel: &str) -> ActionsJob {
    let text = std::fs::read_to_string(deploy_file(rel)).expect("reading the workflow");
    let workflow: Workflow = serde_norway::from_str(&text).expect("the workflow's YAML");
    let mut jobs = workflow.jobs.into_values();
    let job = jobs.next().expect("a job");
    assert!(jobs.next().is_none(), "{rel} has one job");
    job
}

/// `text` with each `${{ expression }}` replaced by its value in `known`; an expression the
/// test does not know fails it, so a new one is a decision, not a silent empty string.
fn expand(text: &str, known: &[(&str, &str)]) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        let end = rest[start..].find("}}").expect("a closed expression") + start;
        let expr = rest[start + 3..end].trim();
        let value = known
            .iter()
            .find(|(k, _)| *k == expr)
            .unwrap_or_else(|| panic!("the test knows no value for `{expr}`"))
            .1;
        out.push_str(&rest[..start]);
        out.push_str(value);
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// What the repository and the pull request look like, and the checkout a CI job starts with.
struct PullRequest {
    repo: TestRepo,
    checkout: PathBuf,
}

/// Filler commits on `main` below the fork point: more than the workflows fetch at first, so
/// the checkout stays shallow after they deepen it.
const HISTORY: usize = 100;

impl PullRequest {
    /// `main` with a test and a long history, a branch `pr` that skips the test in the second
    /// of its two commits, `main` two commits further on, and the merge of `pr` into `main`
    /// as GitHub makes it (`refs/pull/1/merge`: `main`'s tip first, then `pr`'s), all pushed
    /// to a bare remote with `pr` as Forgejo and GitLab name it.
    fn new() -> PullRequest {
        let repo = TestRepo::new();
        repo.write("tests/test_x.py", TEST_X);
        repo.commit("a test");
        for n in 0..HISTORY {
            repo.write("history.txt", format!("{n}\n"));
            repo.commit(&format!("history {n}"));
        }
        repo.branch("pr");
        repo.write("src/app.py", "x = 1\n");
        repo.commit("some code");
        repo.write("tests/test_x.py", TEST_X_SKIPPED);
        repo.commit("skip the test");
        repo.checkout("main");
        for n in 0..2 {
            repo.write("src/main.py", format!("y = {n}\n"));
            repo.commit(&format!("main moves on {n}"));
        }
        repo.git(&["checkout", "-q", "--detach", "main"]);
        repo.git(&["merge", "-q", "--no-ff", "--no-edit", "pr"]);
        repo.add_remote();
        repo.git(&[
            "push",
            "-q",
            "origin",
            "main",
            "pr",
            "HEAD:refs/pull/1/merge",
        ]);
        repo.git(&[
            "push",
            "-q",
            "origin",
            "pr:refs/pull/1/head",
            "pr:refs/merge-requests/1/head",
        ]);
        repo.checkout("main");
        let checkout = repo.outside("checkout");
        PullRequest { repo, checkout }
    }

    /// A clone of `depth` commits at `git_ref` on the remote, HEAD detached there, as
    /// actions/checkout and GitLab's runner make it.
    fn clone_at(&self, git_ref: &str, depth: usize) {
        let url = format!("file://{}", self.repo.outside("remote.git").display());
        std::fs::create_dir(&self.checkout).expect("creating the checkout");
        let refspec = format!(
            "+{git_ref}:refs/remotes/{}",
            git_ref.trim_start_matches("refs/")
        );
        for args in [
            &["init", "-q"][..],
            &["remote", "add", "origin", &url],
            &[
                "fetch",
                "-q",
                "--no-tags",
                &format!("--depth={depth}"),
                "origin",
                &refspec,
            ],
            &["checkout", "-q", "--force", "--detach", "FETCH_HEAD"],
        ] {
            let out = self.git(args);
            assert_eq!(out.code, 0, "git {args:?}:\n{out:?}");
        }
        assert_eq!(
            self.git(&["rev-parse", "--is-shallow-repository"]).stdout,
            "true\n"
        );
    }

    fn git(&self, args: &[&str]) -> Output {
        self.repo.run_in(
            &self.checkout,
            "git",
            args,
            None,
            &crate::util::default_path(),
        )
    }

    /// Runs `script` as a CI step does, in the checkout with `env`, forgeward on the `PATH`.
    fn step(&self, script: &str, env: &[(String, String)]) -> Output {
        let home = self.repo.home();
        let mut cmd = Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
            .current_dir(&self.checkout)
            .env_clear()
            .env("PATH", path_with_forgeward())
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("LC_ALL", "C")
            .env("CI", "true")
            .envs(
                env.iter()
                    .map(|(k, v)| (OsString::from(k), OsString::from(v))),
            );
        let out = cmd.output().expect("running bash");
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            raw_stdout: out.stdout,
        }
    }

    /// `text` with the commits the checks name replaced by `<name>`, for snapshots.
    fn normalized(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for rev in ["main", "main~2", "pr", "refs/pull/1/merge"] {
            let sha = self.repo.git(&[
                "--git-dir",
                &self.repo.outside("remote.git").display().to_string(),
                "rev-parse",
                rev,
            ]);
            text = text.replace(&sha[..7], &format!("<{rev}>"));
        }
        text
    }
}

/// Runs an Actions job's steps on the checkout: `run` steps with their `env`, the install step
/// and opt-in steps (an `if:` on a repository variable none is set here) left out; returns a
/// transcript of each forgeward step and the `uses` of the rest.
fn run_actions_job(pr: &PullRequest, job: &ActionsJob) -> (String, Vec<String>) {
    let known = [("github.base_ref", "main")];
    let mut transcript = String::new();
    let mut uses = Vec::new();
    for step in &job.steps {
        if let Some(action) = &step.uses {
            uses.push(action.clone());
            continue;
        }
        let name = step.name.as_deref().expect("a named step");
        if step.id.as_deref() == Some("install") {
            continue;
        }
        if let Some(condition) = &step.condition {
            assert!(
                condition.contains("vars."),
                "{name}: an unexpected condition"
            );
            continue;
        }
        let env: Vec<(String, String)> = step
            .env
            .iter()
            .map(|(k, v)| (k.clone(), expand(v, &known)))
            .collect();
        let script = expand(step.run.as_deref().expect("a run step"), &known);
        let out = pr.step(&script, &env);
        if !script.contains("forgeward ") {
            assert_eq!(out.code, 0, "{name}:\n{out:?}");
            continue;
        }
        transcript.push_str(&format!(
            "## {name}\n[exit {}]\n--- stdout\n{}--- stderr\n{}",
            out.code, out.stdout, out.stderr
        ));
    }
    (pr.normalized(&transcript), uses)
}

#[test]
fn the_github_workflow_on_a_shallow_detached_checkout_finds_the_range_and_annotates_it() {
    let pr = PullRequest::new();
    pr.clone_at("refs/pull/1/merge", 1);
    let job = actions_job("github-actions/forgeward.yml");

    let (transcript, uses) = run_actions_job(&pr, &job);

    // Still shallow: the steps fetched what the range needs, not the whole history.
    assert_eq!(
        pr.git(&["rev-parse", "--is-shallow-repository"]).stdout,
        "true\n"
    );
    assert_eq!(uses[0], "actions/checkout@v4");
    insta::assert_snapshot!(transcript);
    // The SARIF the upload step sends.
    let upload = job
        .steps
        .iter()
        .find(|s| {
            s.uses
                .as_deref()
                .is_some_and(|u| u.contains("upload-sarif"))
        })
        .expect("an upload step");
    let file = upload.with["sarif_file"].as_str().expect("sarif_file");
    let sarif: serde_json::Value =
        serde_json::from_slice(&std::fs::read(pr.checkout.join(file)).expect("the SARIF file"))
            .expect("SARIF is JSON");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 1, "{sarif:#}");
    assert_eq!(results[0]["ruleId"], "skip-marker");
    assert_eq!(
        results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "tests/test_x.py"
    );
}

#[test]
fn the_forgejo_workflow_on_a_shallow_detached_checkout_finds_the_range() {
    let pr = PullRequest::new();
    pr.clone_at("refs/pull/1/head", 1);
    let job = actions_job("forgejo-actions/forgeward.yml");

    let (transcript, _) = run_actions_job(&pr, &job);

    assert_eq!(
        pr.git(&["rev-parse", "--is-shallow-repository"]).stdout,
        "true\n"
    );
    insta::assert_snapshot!(transcript);
}

/// The GitLab job, as much of it as the test runs.
#[derive(Deserialize)]
struct GitlabJob {
    variables: BTreeMap<String, String>,
    script: Vec<String>,
}

#[test]
fn the_gitlab_job_on_a_shallow_detached_checkout_finds_the_range_and_writes_code_quality() {
    let text = std::fs::read_to_string(deploy_file("gitlab-ci/forgeward.gitlab-ci.yml"))
        .expect("reading the job");
    let mut jobs: BTreeMap<String, GitlabJob> =
        serde_norway::from_str(&text).expect("the job's YAML");
    let job = jobs.remove("forgeward").expect("a forgeward job");
    let pr = PullRequest::new();
    let depth: usize = job.variables["GIT_DEPTH"]
        .parse()
        .expect("GIT_DEPTH a number");
    pr.clone_at("refs/merge-requests/1/head", depth);
    let env = [(
        "CI_MERGE_REQUEST_TARGET_BRANCH_NAME".to_owned(),
        "main".to_owned(),
    )];

    // The runner runs the script's lines one after another; each is run here on its own, to
    // read what it printed.
    let mut transcript = String::new();
    for line in &job.script {
        let out = pr.step(line, &env);
        if !line.contains("forgeward ") {
            assert_eq!(out.code, 0, "{line}:\n{out:?}");
            continue;
        }
        transcript.push_str(&format!(
            "$ {line}\n[exit {}]\n--- stdout\n{}--- stderr\n{}",
            out.code, out.stdout, out.stderr
        ));
    }

    assert_eq!(
        pr.git(&["rev-parse", "--is-shallow-repository"]).stdout,
        "true\n"
    );
    insta::assert_snapshot!(pr.normalized(&transcript));
    let report: serde_json::Value = serde_json::from_slice(
        &std::fs::read(pr.checkout.join("gl-code-quality-report.json")).expect("the report"),
    )
    .expect("the report is JSON");
    let issues = report.as_array().expect("an array of issues");
    assert_eq!(issues.len(), 1, "{report:#}");
    assert_eq!(issues[0]["check_name"], "skip-marker");
    assert_eq!(issues[0]["location"]["path"], "tests/test_x.py");
    assert_eq!(issues[0]["location"]["lines"]["begin"], 3);
}
