//! The "verifying" phase: the repository's own tests, run by the bot on the base, on the
//! worker's commit, and on the worker's commit with the base's tests put back, each in a fresh
//! sandbox; the comparison's findings become flags on the report.
//!
//! The three runs share one [`Replica`] of the files, moved from commit to commit: each run
//! starts on exactly its commit's files (whatever the last run wrote is undone), and only the
//! files that differ are written again. The base's run is kept in the store, per base commit and
//! way of running it, so the next job on the same base runs two suites, not three.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use git2::Oid;
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::config::PipelineConfig;
use super::environment::Environment;
use super::error::{JobError, blocking};
use super::run::{Prepared, test_classifier};
use crate::check::repo_config;
use crate::config::pipeline::VerifySection;
use crate::config::repo::RepoConfig;
use crate::detect::{Flag, RepoPath, Report, Rule};
use crate::git::{CommitTree, Head, Replica, Repo};
use crate::sandbox::SandboxSpec;
use crate::store::Store;
use crate::text::shortened;
use crate::verify::compare::{Finding, compare, vacuous};
use crate::verify::runner::{Runner, runner};
use crate::verify::suite::{self, Place, SuiteError, SuiteRun};
use crate::verify::{Outcome, RunResults, TestResult};

/// What verification did, for the report.
#[derive(Debug, Clone)]
pub enum Verification {
    /// Off for this repository or this bot.
    Off,
    /// No test command configured and none recognised.
    NoRunner,
    Ran(Box<Ran>),
}

/// Why a repository's tests were not run: no runner was recognised.
pub const NO_RUNNER: &str = "no test command recognised (set [verify] command in .forgeward.toml)";

/// The three runs and what they showed.
#[derive(Debug, Clone)]
pub struct Ran {
    pub runner: String,
    pub base: SuiteRun,
    pub head: SuiteRun,
    pub restored: SuiteRun,
    /// The change's tests on the base's code, where the change has new or changed tests and
    /// production changes too ([`Plan::on_base`]): what shows whether its tests show its fix.
    /// It only adds findings; when it cannot be judged, none is claimed and the view says so.
    pub on_base: Option<SuiteRun>,
    pub findings: Vec<Finding>,
    /// The base's run was kept from an earlier job on the same base.
    pub base_kept: bool,
    /// The base's suite ran in this verification (it was not kept, and was not cancelled
    /// before it began).
    pub base_fresh: bool,
}

impl Ran {
    /// Whether all three runs were judged: only then does the comparison say anything.
    pub fn judged(&self) -> bool {
        [&self.base, &self.head, &self.restored]
            .iter()
            .all(|run| run.results.is_ok())
    }

    /// Why the runs could not be judged (the first run that was not, and why), if one was not.
    pub fn unjudged(&self) -> Option<String> {
        RUN_NAMES
            .iter()
            .zip([&self.base, &self.head, &self.restored])
            .find_map(|(name, run)| match &run.results {
                Err(err) => Some(format!("the {name} run: {err}")),
                Ok(_) => None,
            })
    }

    /// The tests whose outcome differs between the worker's run and the restored one.
    fn changed(&self) -> Vec<(String, Outcome, Outcome)> {
        let (Ok(head), Ok(restored)) = (&self.head.results, &self.restored.results) else {
            return Vec::new();
        };
        let at_head: std::collections::BTreeMap<&str, Outcome> =
            head.last().map(|t| (t.id.as_str(), t.outcome)).collect();
        restored
            .last()
            .filter_map(|t| {
                let h = at_head.get(t.id.as_str())?;
                (*h != t.outcome).then(|| (t.id.clone(), *h, t.outcome))
            })
            .collect()
    }
}

impl Verification {
    /// Why the repository's tests could not be judged on the change, when they could not: no
    /// runner, or a run that did not report (a job saying so is never "ready for review").
    pub fn unjudged(&self) -> Option<String> {
        match self {
            Verification::Off => None,
            Verification::NoRunner => Some(NO_RUNNER.to_owned()),
            Verification::Ran(ran) => ran.unjudged(),
        }
    }

    /// The last lines of each run that could not be judged, for the person who reads why.
    pub fn unjudged_tails(&self) -> Vec<(&'static str, &[String])> {
        let Verification::Ran(ran) = self else {
            return Vec::new();
        };
        RUN_NAMES
            .iter()
            .zip(
                [&ran.base, &ran.head, &ran.restored]
                    .into_iter()
                    .chain(&ran.on_base),
            )
            .filter(|(_, run)| run.results.is_err() && !run.tail.is_empty())
            .map(|(name, run)| (*name, run.tail.as_slice()))
            .collect()
    }

    /// How long each run took, in the order of [`Verification::view`]'s runs.
    pub fn durations(&self) -> Vec<Duration> {
        match self {
            Verification::Ran(ran) => [&ran.base, &ran.head, &ran.restored]
                .into_iter()
                .chain(&ran.on_base)
                .map(|run| run.duration)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// What the status comment shows; `None` when verification is off.
    pub fn view(&self) -> Option<crate::report::VerificationView> {
        use crate::report::VerificationView;
        match self {
            Verification::Off => None,
            Verification::NoRunner => Some(VerificationView {
                note: Some(NO_RUNNER.to_owned()),
                ..VerificationView::default()
            }),
            Verification::Ran(ran) => {
                let base = if ran.base_kept {
                    "base (kept from an earlier job)"
                } else {
                    "base"
                };
                let on_base = ran
                    .on_base
                    .as_ref()
                    .map(|run| ("the change's tests on the base's code", run));
                let runs = [
                    (base, &ran.base),
                    ("the change's tests", &ran.head),
                    ("the base's tests on the change", &ran.restored),
                ]
                .into_iter()
                .chain(on_base)
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
fn word(o: Outcome) -> &'static str {
    match o {
        Outcome::Passed => "passes",
        Outcome::Failed => "fails",
        Outcome::Skipped => "is skipped",
    }
}

/// The counts of one run as the report shows them: passed · failed · skipped · collected.
fn counts(r: &RunResults) -> (usize, usize, usize, usize) {
    (
        r.count(Outcome::Passed),
        r.count(Outcome::Failed),
        r.count(Outcome::Skipped),
        r.collected(),
    )
}

/// What verification will do for one change, decided from the base's configuration.
#[derive(Debug)]
pub enum Planned {
    Off,
    NoRunner,
    Run(Box<Plan>),
}

/// The three runs to make: one runner, on the base, the change, and the change with the base's
/// tests put back; and a fourth where it can say something, the change's tests on the base's
/// code.
#[derive(Debug, Clone)]
pub struct Plan {
    pub runner: Runner,
    pub timeout: Duration,
    pub base: Oid,
    pub head: Oid,
    pub restored: Oid,
    /// The base's files with the change's tests, when the change edits tests and production
    /// files both (a change of tests alone fixes nothing for its tests to show).
    pub on_base: Option<Oid>,
    /// What the change did to the test files: where a test it made pass was rewritten.
    pub edits: TestEdits,
}

/// What a change did to each test file, hunk by hunk: where a test the change made pass by
/// rewriting it was rewritten, and from what to what.
#[derive(Debug, Clone, Default)]
pub struct TestEdits(std::collections::BTreeMap<RepoPath, Vec<Edit>>);

/// One hunk of a test file's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The hunk's first line in the change's version of the file, 1-based.
    pub line: u32,
    /// How many lines it wrote there (0 for a hunk that only removed).
    pub lines: u32,
    /// The first line it removed and the first it wrote, trimmed, where it has them.
    pub old: Option<String>,
    pub new: Option<String>,
}

/// The largest test file whose hunks are read: a generated fixture says nothing about a test.
const EDIT_MAX_BYTES: usize = 1024 * 1024;

impl TestEdits {
    /// The hunks of every test file that differs between `base` and `head`.
    pub fn read(
        repo: &Repo,
        base: Oid,
        head: Oid,
        is_test: impl Fn(&RepoPath) -> bool,
    ) -> Result<TestEdits, JobError> {
        let git = repo.git2();
        let failed = |e: git2::Error| JobError::transient(format!("comparing the tests: {e}"));
        let tree = |oid: Oid| git.find_commit(oid).and_then(|c| c.tree()).map_err(failed);
        let (base_tree, head_tree) = (tree(base)?, tree(head)?);
        let diff = git
            .diff_tree_to_tree(Some(&base_tree), Some(&head_tree), None)
            .map_err(failed)?;
        let blob = |id: Oid| -> Vec<u8> {
            if id.is_zero() {
                return Vec::new();
            }
            git.find_blob(id)
                .ok()
                .filter(|b| b.size() <= EDIT_MAX_BYTES && !b.is_binary())
                .map(|b| b.content().to_vec())
                .unwrap_or_default()
        };
        let mut out = std::collections::BTreeMap::new();
        for delta in diff.deltas() {
            let Some(path) = delta
                .new_file()
                .path_bytes()
                .or(delta.old_file().path_bytes())
            else {
                continue;
            };
            let path = RepoPath::new(path);
            if !is_test(&path) {
                continue;
            }
            let (old, new) = (blob(delta.old_file().id()), blob(delta.new_file().id()));
            let (old_lines, new_lines): (Vec<&[u8]>, Vec<&[u8]>) = (
                old.split(|&b| b == b'\n').collect(),
                new.split(|&b| b == b'\n').collect(),
            );
            // A hunk's first line on one side, where that side has any.
            let first = |lines: &[&[u8]], range: std::ops::Range<u32>| {
                (!range.is_empty())
                    .then(|| lines.get(range.start as usize - 1))
                    .flatten()
                    .map(|l| String::from_utf8_lossy(l).trim().to_owned())
            };
            let edits: Vec<Edit> = crate::detect::diff::hunks(&old, &new)
                .into_iter()
                .map(|(removed, added)| Edit {
                    line: added.start.max(1),
                    lines: added.end.saturating_sub(added.start),
                    old: first(&old_lines, removed),
                    new: first(&new_lines, added),
                })
                .collect();
            if !edits.is_empty() {
                out.insert(path, edits);
            }
        }
        Ok(TestEdits(out))
    }

    /// The hunk a test at `line` of `path` was rewritten in: the first at or after its line,
    /// else the file's last before it.
    fn at(&self, path: &RepoPath, line: Option<u32>) -> Option<&Edit> {
        let edits = self.0.get(path)?;
        let line = line.unwrap_or(0);
        edits
            .iter()
            .find(|e| e.line >= line)
            .or_else(|| edits.last())
    }

    /// The test files the change rewrote.
    fn files(&self) -> impl Iterator<Item = &RepoPath> {
        self.0.keys()
    }
}

/// Decides what verification does for `head` (a commit in `repo`) against `base`, from the
/// base's `.forgeward.toml` (`config`) and the bot's defaults; builds the commit with the
/// base's tests put back.
pub fn plan(
    repo: &Repo,
    config: &RepoConfig,
    defaults: &VerifySection,
    base: Oid,
    head: Oid,
) -> Result<Planned, JobError> {
    let verify = &config.verify;
    if !verify.enabled.unwrap_or(defaults.enabled) {
        return Ok(Planned::Off);
    }
    let tree = CommitTree::new(repo.git2(), base);
    let Some(runner) = runner(verify, &tree) else {
        return Ok(Planned::NoRunner);
    };
    let classifier = test_classifier(config)?;
    let restored = repo.with_base_tests(base, head, |p| classifier.is_test(p))?;
    let edits = TestEdits::read(repo, base, head, |p| classifier.is_test(p))?;
    // The base's files with the change's tests (`with_base_tests` the other way round): worth
    // a run only when it differs from both the base and the change.
    let on_base = if edits.0.is_empty() {
        None
    } else {
        let commit = repo.with_base_tests(head, base, |p| classifier.is_test(p))?;
        let tree = |oid: Oid| {
            repo.git2()
                .find_commit(oid)
                .map(|c| c.tree_id())
                .map_err(|e| JobError::transient(format!("reading commit {oid}: {e}")))
        };
        let same = tree(commit)?;
        (same != tree(head)? && same != tree(base)?).then_some(commit)
    };
    Ok(Planned::Run(Box::new(Plan {
        runner,
        timeout: verify.timeout.map_or(defaults.timeout.0, |t| t.0),
        base,
        head,
        restored,
        on_base,
        edits,
    })))
}

/// Runs `plan`'s suites over `files` (moved from commit to commit, and removed after), each in
/// a fresh sandbox of `place` with its own scratch directory under `dir`; each run's output
/// goes to `place`'s log after a line naming the run. With `base_run` (kept from an earlier
/// job) the base's suite does not run again. Each run gets its own view of `environment`, lent
/// afresh after the files moved and taken back when the run ends, before they move again
/// (nothing the worker or an earlier run did to it carries over).
/// A cancelled verification compares nothing, and neither does one whose base's run collected
/// no test: nothing ran, so nothing is judged.
#[allow(clippy::too_many_arguments)]
pub async fn run_plan(
    repo: Repo,
    plan: &Plan,
    files: Replica,
    dir: &Path,
    place: &Place<'_>,
    environment: &Environment,
    base_run: Option<SuiteRun>,
    cancel: CancellationToken,
) -> Result<Ran, JobError> {
    let mut replica = Some(files);
    let mut repo = Some(repo);
    let base_kept = base_run.is_some();
    let mut runs: Vec<SuiteRun> = base_run.into_iter().collect();
    let commits = [
        Some(plan.base),
        Some(plan.head),
        Some(plan.restored),
        plan.on_base,
    ];
    // The tests the change added or edited, once the change's run has said which there are.
    let mut changed = BTreeSet::new();
    for (i, commit) in commits.into_iter().enumerate().skip(runs.len()) {
        if cancel.is_cancelled() {
            break;
        }
        if i == ON_BASE {
            let results = |i: usize| runs.get(i).map(|r: &SuiteRun| &r.results);
            changed = match (results(0), results(1)) {
                (Some(Ok(base)), Some(Ok(head))) => new_or_changed(base, head, &plan.edits),
                _ => BTreeSet::new(),
            };
        }
        let Some(commit) = commit.filter(|_| i != ON_BASE || !changed.is_empty()) else {
            break;
        };
        let (Some(mut files), Some(git)) = (replica.take(), repo.take()) else {
            break;
        };
        let (files, git) = blocking(move || {
            files.switch(git.git2(), commit)?;
            Ok((files, git))
        })
        .await?;
        // Lent afresh for this run (a fresh upper layer), taken back before the replica moves
        // again: the switch must never walk into a lent overlay.
        let loan = environment.lend(files.path()).await?;
        let scratch = dir.join(format!("scratch-{i}"));
        if let Some(log) = place.log {
            log.line(
                crate::sandbox::Stream::Stderr,
                &format!("── {}: {} ──", RUN_NAMES[i], plan.runner.name),
            );
        }
        let run = suite::run(
            place,
            &plan.runner,
            files.path(),
            &scratch,
            plan.timeout,
            cancel.clone(),
        )
        .await;
        // The base's suite must have run something for the others to be compared with it; the
        // change's may collect nothing (its code no longer loads the tests: `tests-lost`),
        // unless there is no base to compare with either.
        let base_unjudged = runs.first().is_some_and(|r| r.results.is_err());
        let run = if i == 0 || base_unjudged {
            run.judge_empty(&plan.runner.name)
        } else {
            run
        };
        Environment::take_back(loan).await?;
        log_run(RUN_NAMES[i], &plan.runner.name, &run);
        // A sandbox that could not vouch for its end (processes that outlived the run, a
        // container not removed) leaves nothing the next run may share: the replica goes.
        let broken = matches!(run.results, Err(SuiteError::Sandbox { .. }));
        runs.push(run);
        let _ = remove(scratch).await;
        if broken {
            replica = Some(files);
            break;
        }
        (replica, repo) = (Some(files), Some(git));
    }
    // The base's suite ran here, not kept from an earlier job.
    let base_fresh = !base_kept && !runs.is_empty();
    let mut runs = runs.into_iter();
    let mut next = || {
        runs.next().unwrap_or_else(|| SuiteRun {
            results: Err(SuiteError::NotRun {
                runner: plan.runner.name.clone(),
            }),
            duration: Duration::ZERO,
            tail: Vec::new(),
        })
    };
    let (base, head, restored) = (next(), next(), next());
    let on_base = runs.next();
    let mut findings = match (&base.results, &head.results, &restored.results) {
        (Ok(b), Ok(h), Ok(r)) => compare(b, h, r),
        _ => Vec::new(),
    };
    if let (Ok(h), Some(Ok(o))) = (&head.results, on_base.as_ref().map(|r| &r.results)) {
        findings.extend(vacuous(h, o, &changed));
    }
    if let Some(replica) = replica {
        blocking(move || {
            drop(replica);
            Ok(())
        })
        .await?;
    }
    Ok(Ran {
        runner: match &plan.runner.reason {
            Some(reason) => format!("{}: {reason}", plan.runner.name),
            None => plan.runner.name.clone(),
        },
        base,
        head,
        restored,
        on_base,
        findings,
        base_kept,
        base_fresh,
    })
}

/// Runs verification for the worker's `commit` and adds its flags to `report`. With a `store`,
/// the base's run is taken from it when an earlier job on the same base kept one, and kept
/// there otherwise.
#[allow(clippy::too_many_arguments)]
pub async fn verify(
    config: &PipelineConfig,
    prepared: &mut Prepared,
    commit: Oid,
    place: &Place<'_>,
    store: Option<&Store>,
    report: &mut Report,
    cancel: CancellationToken,
) -> Result<Verification, JobError> {
    let (sandbox, template) = (place.sandbox, place.template);
    let (mirrors, forge, repo, base) = (
        prepared.mirrors.clone(),
        prepared.forge,
        prepared.repo.clone(),
        prepared.base,
    );
    let defaults = config.verify.clone();
    let (planned, git) = mirrors
        .locked(forge, &repo, move |mirror| {
            let repo_config = repo_config(mirror.repo(), Head::Commit(base))?;
            let planned = plan(mirror.repo(), &repo_config, &defaults, base, commit)?;
            Ok((planned, mirror.into_repo()))
        })
        .await?;
    let plan = match planned {
        Planned::Off => return Ok(Verification::Off),
        Planned::NoRunner => return Ok(Verification::NoRunner),
        Planned::Run(plan) => plan,
    };
    let key = base_run_key(prepared, &plan, sandbox.name(), template);
    let kept = match store {
        Some(store) => kept_base_run(store, &key).await,
        None => None,
    };
    // The worker's checkout becomes the replica: only what the worker and the change touched
    // is written again.
    let dir = prepared.dir.root.join("verify");
    let files = match prepared.checkout.take_replica() {
        Some(files) => files,
        None => {
            let at = dir.join("workspace");
            blocking(move || {
                std::fs::create_dir_all(at.parent().unwrap_or(&at))
                    .map_err(|e| JobError::transient(format!("{}: {e}", at.display())))?;
                Ok(Replica::create(&at)?)
            })
            .await?
        }
    };
    let ran = run_plan(
        git,
        &plan,
        files,
        &dir,
        place,
        &prepared.environment,
        kept,
        cancel,
    )
    .await?;
    let _ = remove(dir).await;
    if let (Some(store), true, Ok(results)) = (store, ran.base_fresh, &ran.base.results) {
        match serde_json::to_string(results) {
            Ok(json) => {
                if let Err(err) = store.put_base_run(&key, json, ran.base.duration).await {
                    tracing::warn!(error = %err, "could not keep the base's test results");
                }
            }
            Err(err) => tracing::warn!(error = %err, "could not encode the base's test results"),
        }
    }
    if ran.base_kept {
        tracing::info!(runner = %ran.runner, "verification's base run kept from an earlier job");
    }
    tracing::info!(findings = ran.findings.len(), "verification judged");
    let found = flags(&ran.findings, &report.flags, &plan.edits);
    report.flags.extend(found);
    Ok(Verification::Ran(Box::new(ran)))
}

/// What the base's run is kept under: the same repository, base commit, runner and sandbox
/// give the same results (a suite whose outcome depends on anything else is flaky either way).
fn base_run_key(prepared: &Prepared, plan: &Plan, backend: &str, template: &SandboxSpec) -> String {
    let mut hash = Sha256::new();
    let mut field = |bytes: &[u8]| {
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    };
    field(prepared.forge.as_str().as_bytes());
    field(prepared.repo.0.to_lowercase().as_bytes());
    field(plan.base.as_bytes());
    for arg in &plan.runner.command {
        field(arg.as_bytes());
    }
    field(format!("{:?}", plan.runner.format).as_bytes());
    field(plan.runner.path.as_deref().unwrap_or("").as_bytes());
    field(backend.as_bytes());
    field(template.image.as_deref().unwrap_or("").as_bytes());
    field(&plan.timeout.as_millis().to_le_bytes());
    // What the sandbox allows (a suite out of memory fails differently), and how this bot reads
    // reports (a new version may name or judge tests differently).
    field(format!("{:?}", template.limits).as_bytes());
    field(env!("CARGO_PKG_VERSION").as_bytes());
    hex::encode(hash.finalize())
}

/// The base's run an earlier job kept, if it can be read; anything unreadable runs again.
async fn kept_base_run(store: &Store, key: &str) -> Option<SuiteRun> {
    let (json, duration) = match store.base_run(key).await {
        Ok(found) => found?,
        Err(err) => {
            tracing::warn!(error = %err, "could not read the base's kept test results");
            return None;
        }
    };
    match serde_json::from_str::<RunResults>(&json) {
        Ok(results) => Some(SuiteRun {
            results: Ok(results),
            duration,
            tail: Vec::new(),
        }),
        Err(err) => {
            tracing::warn!(error = %err, "the base's kept test results do not decode; running it again");
            None
        }
    }
}

/// The three runs, as the job log names them.
const RUN_NAMES: [&str; 4] = [
    "base",
    "head",
    "head with the base's tests",
    "the base's code with the change's tests",
];

/// The fourth run's place in [`RUN_NAMES`] and in a plan's commits.
const ON_BASE: usize = 3;

/// The tests of the change's run (`head`) that it added or edited: those the base's run did
/// not have, and those of a test file the change edited whose lines hold an edit (from the
/// test's line to the next test's in the same file), where the runner says where tests are. A
/// hunk in which another test begins wrote that test, not this one.
fn new_or_changed(base: &RunResults, head: &RunResults, edits: &TestEdits) -> BTreeSet<String> {
    let at_base: BTreeSet<&str> = base.last().map(|t| t.id.as_str()).collect();
    let tests: Vec<&TestResult> = head.last().collect();
    // Where each test of a file begins, read once for every test of it.
    let mut starts: std::collections::BTreeMap<&str, Vec<u32>> = Default::default();
    for t in &tests {
        if let (Some(file), Some(line)) = (t.file.as_deref(), t.line) {
            starts.entry(file).or_default().push(line);
        }
    }
    let edited = |t: &TestResult| {
        let (Some(file), Some(line)) = (t.file.as_deref(), t.line.filter(|&l| l > 0)) else {
            return false;
        };
        let Some(hunks) = edits.0.get(&RepoPath::from(file)) else {
            return false;
        };
        let starts = starts.get(file).map_or(&[][..], Vec::as_slice);
        let next = starts
            .iter()
            .copied()
            .filter(|&l| l > line)
            .min()
            .unwrap_or(u32::MAX);
        hunks.iter().any(|h| {
            let written = h.line..h.line + h.lines.max(1);
            let overlaps = written.start < next && line < written.end;
            let another = starts.iter().any(|&s| s != line && written.contains(&s));
            overlaps && !another
        })
    };
    tests
        .iter()
        .filter(|t| !at_base.contains(t.id.as_str()) || edited(t))
        .map(|t| t.id.clone())
        .collect()
}

/// One run in the job log: its counts, or why it could not be judged.
fn log_run(name: &str, runner: &str, run: &SuiteRun) {
    let ms = run.duration.as_millis() as u64;
    match &run.results {
        Ok(results) => {
            let (passed, failed, skipped, collected) = counts(results);
            tracing::info!(
                run = name,
                runner,
                passed,
                failed,
                skipped,
                collected,
                load_errors = results.collection_errors.len(),
                duration_ms = ms,
                "verification run"
            );
        }
        Err(err) => {
            tracing::warn!(run = name, runner, error = %err, duration_ms = ms, "verification run could not be judged")
        }
    }
}

async fn remove(root: PathBuf) -> Result<(), JobError> {
    blocking(move || {
        crate::git::remove_tree(&root)
            .map_err(|e| JobError::transient(format!("{}: {e}", root.display())))
    })
    .await
}

/// The findings as flags. A test the change made pass by rewriting it is flagged on the line the
/// change rewrote, saying what it changed there: the detector's own word on that test where it
/// raised a flag on it (`detector`: the change's other flags), else the hunk of the test's file
/// at or after the test's line (`edits`).
pub fn flags(findings: &[Finding], detector: &[Flag], edits: &TestEdits) -> Vec<Flag> {
    findings
        .iter()
        .map(|finding| flag(finding, detector, edits))
        .collect()
}

/// Where and how the change rewrote a test: the line, and a clause saying what it did.
fn rewrite(test: &TestResult, head: &TestResult, detector: &[Flag], edits: &TestEdits) -> Rewrite {
    let path = head
        .file
        .as_deref()
        .or(test.file.as_deref())
        .map(RepoPath::from);
    // The detector names the test it flags first, in backticks: `test_x` now expects …
    let named = detector
        .iter()
        .filter(|f| f.rule.judges_tests())
        .find_map(|f| {
            let rest = f.message.strip_prefix('`')?;
            let (name, rest) = rest.split_once('`')?;
            let same_file = path.as_ref().is_none_or(|p| *p == f.path);
            (same_file && names(&head.id, name)).then(|| (f, rest.trim_start().to_owned()))
        });
    if let Some((f, what)) = named {
        return Rewrite {
            path: f.path.clone(),
            line: f.line,
            what: Some(format!("it {what}")),
        };
    }
    if let Some(path) = path {
        let line = head.line.filter(|&l| l > 0);
        if let Some(edit) = edits.at(&path, line) {
            let short = |line: &str| shortened(line, LINE_MAX_CHARS);
            let what = match (&edit.old, &edit.new) {
                (Some(old), Some(new)) => format!("`{}` became `{}`", short(old), short(new)),
                (None, Some(new)) => format!("it added `{}`", short(new)),
                (Some(old), None) => format!("it removed `{}`", short(old)),
                (None, None) => "it changed the file".to_owned(),
            };
            return Rewrite {
                line: Some(edit.line),
                path,
                what: Some(what),
            };
        }
        let files: Vec<String> = edits.files().take(3).map(|p| format!("`{p}`")).collect();
        return Rewrite {
            path,
            line,
            what: (!files.is_empty()).then(|| {
                format!(
                    "the test is as it was, but the change rewrote {}",
                    files.join(", ")
                )
            }),
        };
    }
    Rewrite {
        path: RepoPath::from("."),
        line: None,
        what: None,
    }
}

/// Where a test was rewritten, and what the change did there.
struct Rewrite {
    path: RepoPath,
    line: Option<u32>,
    what: Option<String>,
}

/// Whether the runner's test id `id` is the test a flag names `name`: its last part, or that
/// part's last words (Jest's full names run the describe blocks' titles together), or a Go
/// test's name before its subtests.
fn names(id: &str, name: &str) -> bool {
    let name = name.replace(" > ", " ");
    let last = id.rsplit("::").next().unwrap_or(id);
    let last = last.split('[').next().unwrap_or(last);
    last == name
        || last.ends_with(&format!(" {name}"))
        || last.split('/').next() == Some(name.as_str())
}

/// The most of a failure's message a flag quotes: the runner's whole message is in the job's
/// verification log.
const MESSAGE_MAX_CHARS: usize = 120;

/// The most of a test's line a flag quotes: enough to see the value in an assertion.
const LINE_MAX_CHARS: usize = 80;

/// A finding as a flag: on the line the change rewrote where there is one, else on the test's
/// file and line where the runner said.
fn flag(finding: &Finding, detector: &[Flag], edits: &TestEdits) -> Flag {
    let why = |test: &TestResult| {
        test.message
            .as_deref()
            .map(|m| format!(" ({})", shortened(m, MESSAGE_MAX_CHARS)))
            .unwrap_or_default()
    };
    match finding {
        Finding::TestRewritten {
            test,
            head,
            at_base,
        } => {
            let at = rewrite(test, head, detector, edits);
            let before = match at_base {
                Some(Outcome::Failed) => "it failed at the base too",
                Some(Outcome::Skipped) => "it was skipped at the base",
                _ => "the base did not run it",
            };
            let how = at
                .what
                .map(|w| format!("; it passes only because the change rewrote it: {w}"))
                .unwrap_or_else(|| "; it passes only with the change's version of it".to_owned());
            Flag {
                rule: Rule::TestRewritten,
                severity: Rule::TestRewritten.severity(),
                path: at.path,
                line: at.line,
                removed_line: None,
                message: format!(
                    "`{}` still fails on the change with its base version{} ({before}){how}",
                    test.id,
                    why(test)
                ),
                snippet: None,
            }
        }
        Finding::BaseTestsFail { test, head } => {
            let at = rewrite(test, head, detector, edits);
            let how = at
                .what
                .map(|w| format!("; the change rewrote it: {w}"))
                .unwrap_or_default();
            Flag {
                rule: Rule::BaseTestsFail,
                severity: Rule::BaseTestsFail.severity(),
                path: at.path,
                line: at.line,
                removed_line: None,
                message: format!(
                    "`{}` passed at the base, fails when the base's tests run on this change{}, and passes with the change's own tests{how}",
                    test.id,
                    why(test)
                ),
                snippet: None,
            }
        }
        Finding::TestsVacuous { test, more } => {
            let more = match more {
                0 => String::new(),
                1 => " (and 1 more test like it)".to_owned(),
                n => format!(" (and {n} more tests like it)"),
            };
            Flag {
                rule: Rule::TestsVacuous,
                severity: Rule::TestsVacuous.severity(),
                path: RepoPath::from(test.file.as_deref().unwrap_or(".")),
                line: test.line.filter(|&l| l > 0),
                removed_line: None,
                message: format!(
                    "`{}` passes on the base's code too: it does not show the change's fix{more}",
                    test.id
                ),
                // What tells one such test from another in the same file, for the review.
                snippet: Some(test.id.clone()),
            }
        }
        Finding::TestsLost {
            base,
            head,
            restored,
            errors,
            deleted,
        } => {
            let from_error = errors
                .first()
                .and_then(|e| e.split(':').next())
                .filter(|p| p.contains('/') || p.contains('.'));
            let path = deleted
                .first()
                .and_then(|t| t.file.as_deref())
                .or(from_error)
                .unwrap_or(".");
            let mut message = if deleted.is_empty() {
                format!(
                    "the base's suite collected {base} tests; the base's tests on the change's code collect {restored} (the change's own tests: {head})"
                )
            } else {
                let names: Vec<String> = deleted
                    .iter()
                    .take(3)
                    .map(|t| format!("`{}`", t.id))
                    .collect();
                let more = deleted.len().saturating_sub(3);
                format!(
                    "the change's tests no longer have {}{}, which fail{} on the change's code",
                    names.join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    },
                    if deleted.len() == 1 { "s" } else { "" }
                )
            };
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
                line: deleted.first().and_then(|t| t.line).filter(|&l| l > 0),
                removed_line: None,
                message,
                snippet: None,
            }
        }
    }
}
