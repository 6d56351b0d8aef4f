//! The "verifying" phase: the repository's own tests, run by the bot on the base, on the
//! worker's commit, and on the worker's commit with the base's tests put back, each in a fresh
//! sandbox over its own checkout; the comparison's findings become flags on the report.

use std::path::PathBuf;
use std::time::Duration;

use git2::Oid;
use tokio_util::sync::CancellationToken;

use super::pipeline::{JobError, PipelineConfig, blocking};
use super::run::{Prepared, mirror_lock, test_classifier};
use crate::check::repo_config;
use crate::detect::{Flag, RepoPath, Report, Rule};
use crate::git::{CommitTree, Head, Mirror};
use crate::sandbox::{Sandbox, SandboxSpec};
use crate::verify::compare::{Finding, compare};
use crate::verify::runner::runner;
use crate::verify::suite::{self, SuiteRun};
use crate::verify::{Outcome, RunResults};

/// What verification did, for the report.
#[derive(Debug, Clone)]
pub enum Verification {
    /// Off for this repository or this bot.
    Off,
    /// No test command configured and none recognised.
    NoRunner,
    Ran(Box<Ran>),
}

/// The three runs and what they showed.
#[derive(Debug, Clone)]
pub struct Ran {
    pub runner: String,
    pub base: SuiteRun,
    pub head: SuiteRun,
    pub restored: SuiteRun,
    pub findings: Vec<Finding>,
}

impl Ran {
    /// The tests whose outcome differs between the worker's run and the restored one.
    pub fn changed(&self) -> Vec<(String, Outcome, Outcome)> {
        let (Ok(head), Ok(restored)) = (&self.head.results, &self.restored.results) else {
            return Vec::new();
        };
        let at_head: std::collections::BTreeMap<&str, Outcome> = head
            .tests
            .iter()
            .map(|t| (t.id.as_str(), t.outcome))
            .collect();
        restored
            .tests
            .iter()
            .filter_map(|t| {
                let h = at_head.get(t.id.as_str())?;
                (*h != t.outcome).then(|| (t.id.clone(), *h, t.outcome))
            })
            .collect()
    }
}

impl Verification {
    /// How long each run took, in the order of [`Verification::view`]'s runs.
    pub fn durations(&self) -> Vec<Duration> {
        match self {
            Verification::Ran(ran) => {
                vec![ran.base.duration, ran.head.duration, ran.restored.duration]
            }
            _ => Vec::new(),
        }
    }

    /// What the status comment shows; `None` when verification is off.
    pub fn view(&self) -> Option<crate::report::VerificationView> {
        use crate::report::VerificationView;
        match self {
            Verification::Off => None,
            Verification::NoRunner => Some(VerificationView {
                note: Some(
                    "no test command recognised (set [verify] command in .forgeward.toml)"
                        .to_owned(),
                ),
                ..VerificationView::default()
            }),
            Verification::Ran(ran) => {
                let runs = [
                    ("base", &ran.base),
                    ("the change's tests", &ran.head),
                    ("the base's tests on the change", &ran.restored),
                ]
                .into_iter()
                .map(|(name, run)| {
                    let counts = match &run.results {
                        Ok(r) => {
                            let (p, f, k, c) = counts(r);
                            Ok([p, f, k, c])
                        }
                        Err(e) => Err(e.to_string()),
                    };
                    (name.to_owned(), counts)
                })
                .collect();
                let changed = ran
                    .changed()
                    .into_iter()
                    .map(|(id, head, base)| (id, word(head).to_owned(), word(base).to_owned()))
                    .collect();
                Some(VerificationView {
                    runner: Some(ran.runner.clone()),
                    runs,
                    changed,
                    note: None,
                })
            }
        }
    }
}

/// How a test ended, as a sentence says it.
pub fn word(o: Outcome) -> &'static str {
    match o {
        Outcome::Passed => "passes",
        Outcome::Failed => "fails",
        Outcome::Skipped => "is skipped",
    }
}

/// The counts of one run as the report shows them: passed · failed · skipped · collected.
pub fn counts(r: &RunResults) -> (usize, usize, usize, usize) {
    (
        r.count(Outcome::Passed),
        r.count(Outcome::Failed),
        r.count(Outcome::Skipped),
        r.collected(),
    )
}

/// Runs verification for the worker's `commit` and adds its flags to `report`.
pub async fn verify(
    config: &PipelineConfig,
    prepared: &Prepared,
    commit: Oid,
    sandbox: &dyn Sandbox,
    template: &SandboxSpec,
    report: &mut Report,
    cancel: CancellationToken,
) -> Result<Verification, JobError> {
    let (mirrors, forge, repo, base) = (
        prepared.mirrors.clone(),
        prepared.forge,
        prepared.repo.clone(),
        prepared.base,
    );
    let root = prepared.dir.root.join("verify");
    let root_for_plan = root.clone();
    let default_enabled = config.verify.enabled;
    let default_timeout = config.verify.timeout.0;
    let planned = blocking(move || {
        let lock = mirror_lock(&mirrors, forge, &repo);
        let _held = lock.lock().unwrap_or_else(|p| p.into_inner());
        let mirror = Mirror::open_or_create(&mirrors, forge, &repo)?;
        let repo_config = repo_config(mirror.repo(), Head::Commit(base))?;
        let verify = &repo_config.verify;
        if !verify.enabled.unwrap_or(default_enabled) {
            return Ok(None);
        }
        let tree = CommitTree::new(mirror.repo().git2(), base);
        let Some(runner) = runner(verify, &tree) else {
            return Ok(Some(None));
        };
        let classifier = test_classifier(&repo_config)?;
        let restored = mirror
            .repo()
            .with_base_tests(base, commit, |p| classifier.is_test(p))?;
        let root = root_for_plan;
        let mut checkouts = Vec::new();
        for (name, oid) in [("base", base), ("head", commit), ("restored", restored)] {
            let dir = root.join(name);
            std::fs::create_dir_all(&dir)
                .map_err(|e| JobError::transient(format!("{}: {e}", dir.display())))?;
            checkouts.push((mirror.checkout(oid, &dir.join("workspace"))?, dir));
        }
        let timeout = verify.timeout.map_or(default_timeout, |t| t.0);
        Ok(Some(Some((runner, checkouts, timeout))))
    })
    .await?;
    let Some(planned) = planned else {
        return Ok(Verification::Off);
    };
    let Some((runner, checkouts, timeout)) = planned else {
        return Ok(Verification::NoRunner);
    };
    let mut runs: Vec<SuiteRun> = Vec::new();
    for (_checkout, dir) in &checkouts {
        if cancel.is_cancelled() {
            break;
        }
        let run = suite::run(
            sandbox,
            template,
            &runner,
            &dir.join("workspace"),
            &dir.join("scratch"),
            timeout,
            cancel.clone(),
        )
        .await;
        runs.push(run);
    }
    // A cancelled verification judges nothing: its job ends as cancelled.
    let complete = runs.len() == 3;
    let restored = runs.pop().unwrap_or_else(empty_run);
    let head = runs.pop().unwrap_or_else(empty_run);
    let base_run = runs.pop().unwrap_or_else(empty_run);
    let findings = match (&base_run.results, &head.results, &restored.results) {
        (Ok(b), Ok(h), Ok(r)) if complete => compare(b, h, r),
        _ => Vec::new(),
    };
    report.flags.extend(findings.iter().map(flag));
    drop(checkouts);
    let _ = remove(root).await;
    Ok(Verification::Ran(Box::new(Ran {
        runner: runner.name,
        base: base_run,
        head,
        restored,
        findings,
    })))
}

fn empty_run() -> SuiteRun {
    SuiteRun {
        results: Ok(RunResults::default()),
        duration: Duration::ZERO,
    }
}

async fn remove(root: PathBuf) -> Result<(), JobError> {
    blocking(move || {
        crate::git::remove_tree(&root)
            .map_err(|e| JobError::transient(format!("{}: {e}", root.display())))
    })
    .await
}

/// A finding as a flag: on the test's file and line where the runner said.
fn flag(finding: &Finding) -> Flag {
    match finding {
        Finding::BaseTestsFail { test } => Flag {
            rule: Rule::BaseTestsFail,
            severity: Rule::BaseTestsFail.severity(),
            path: RepoPath::from(test.file.as_deref().unwrap_or(".")),
            line: test.line.filter(|&l| l > 0),
            removed_line: None,
            message: format!(
                "`{}` fails when the base's tests run on this change{}, and passes with the change's own tests",
                test.id,
                test.message
                    .as_deref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default()
            ),
            snippet: None,
        },
        Finding::TestsLost {
            base,
            head,
            restored,
            errors,
        } => {
            let path = errors
                .first()
                .and_then(|e| e.split(':').next())
                .filter(|p| p.contains('/') || p.contains('.'))
                .unwrap_or(".");
            let mut message = format!(
                "the base's suite collected {base} tests; the change's tests collect {head}, and the base's tests on the change's code {restored}"
            );
            if !errors.is_empty() {
                message.push_str(&format!(
                    "; no longer loading: {}",
                    errors
                        .iter()
                        .take(3)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join("; ")
                ));
            }
            Flag {
                rule: Rule::TestsLost,
                severity: Rule::TestsLost.severity(),
                path: RepoPath::from(path),
                line: None,
                removed_line: None,
                message,
                snippet: None,
            }
        }
    }
}
