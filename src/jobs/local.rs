//! One job, locally, with no forge: `forgeward run`. The same phases as the bot's worker jobs,
//! through the same driver ([`super::driver`]) — mirror and checkout, the sandbox, the bot's own
//! commit and the detector, verification — against a local or cloneable repository, with
//! progress reported through a callback and the branch left in the repository when it is a
//! local one.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::verify::Verification;
use crate::config::pipeline::TestsAccess;
use crate::detect::Report;
use crate::forge::{Actor, Forge, RepoName};
use crate::git::Mirror;
use crate::sandbox::{Exit, JobLog, Sandbox};
use crate::store::JobId;

use super::config::PipelineConfig;
use super::driver::{Changed, Drive, Driven, Observer, Phase, PhaseClock, Target};
use super::error::JobError;
use super::run::{self, Prepared, Task};

/// Where the repository comes from.
#[derive(Clone, Debug)]
pub enum Source {
    /// A repository on this machine: the result is pushed back to it as a branch.
    Path(PathBuf),
    /// A URL git can clone without credentials: the result stays in the bot's mirror.
    Url(String),
}

/// What a local job is asked to do.
pub struct LocalJob {
    pub source: Source,
    pub task: Task,
    /// The branch to start from; by default the repository's checked-out branch (a path) or its
    /// default branch (a URL).
    pub base: Option<String>,
    /// The branch the result is pushed to.
    pub branch: String,
}

/// What the terminal shows while a local job runs.
pub enum Progress<'a> {
    Phase(&'a str),
    /// The worker printed a line (already redacted).
    WorkerLine(&'a str),
    /// What a phase came to, in a line of its own (`environment: kept from an earlier run…`).
    Said(&'a str),
    /// Time passed in a phase that runs something (working, verifying), printed or not: for a
    /// clock that ticks while the worker or the suite is silent.
    Tick,
}

/// How a local job ended.
pub struct LocalOutcome {
    pub exit: Exit,
    /// The worker's own time, from its start to its exit.
    pub worker_duration: Duration,
    /// The whole job's, cloning and checking included.
    pub duration: Duration,
    /// Each phase and the time it took.
    pub phases: Vec<(&'static str, Duration)>,
    /// `None` when the worker changed nothing.
    pub report: Option<Report>,
    /// The branch holding the result, when it was pushed to a local repository.
    pub branch: Option<String>,
    pub commit: Option<String>,
    pub log_tail: Vec<String>,
    pub summary: Option<String>,
    /// The question the worker left in `/job-out/question.md` instead of making the change.
    pub question: Option<String>,
    /// Whether the worker could change the base's tests.
    pub tests: TestsAccess,
    /// The bot's own runs of the repository's tests, when there was a change to run them on.
    pub verification: Option<Verification>,
}

/// Runs a job against a local or cloneable repository. `config.data_dir` holds the mirror and
/// the job's files.
pub async fn run_local(
    config: &PipelineConfig,
    sandbox: Arc<dyn Sandbox>,
    job: LocalJob,
    progress: &(dyn Fn(Progress<'_>) + Sync),
) -> Result<LocalOutcome, JobError> {
    let started = Instant::now();
    // Mirrors may be kept between runs (a cache, or the bot's data directory): each source has
    // its own, named by what it is and told apart by a digest of where it is.
    let (url, repo_name) = match &job.source {
        Source::Path(path) => {
            let abs = std::fs::canonicalize(path)
                .map_err(|e| JobError::fatal(format!("{}: {e}", path.display())))?;
            let name = abs
                .file_name()
                .map_or_else(|| "repo".to_owned(), |n| n.to_string_lossy().into_owned());
            let url = abs.to_string_lossy().into_owned();
            let repo_name = RepoName(format!("local/{name}-{}", digest(&url)));
            (url, repo_name)
        }
        Source::Url(url) => {
            let name = url.trim_end_matches('/').trim_end_matches(".git");
            let name = name.rsplit(['/', ':']).next().unwrap_or("repo");
            (
                url.clone(),
                RepoName(format!("remote/{name}-{}", digest(url))),
            )
        }
    };
    let base = match (&job.base, &job.source) {
        (Some(base), _) => base.clone(),
        (None, Source::Path(path)) => checked_out_branch(path)?,
        (None, Source::Url(_)) => "main".to_owned(),
    };

    let job_id = JobId(i64::from(std::process::id()));
    let drive = Drive {
        config,
        sandbox,
        store: None,
        job: job_id,
        attempt: 1,
    };
    let target = Target {
        forge: Forge::GitHub,
        repo: repo_name.clone(),
        url,
        local: matches!(job.source, Source::Path(_)),
        credentials: None,
        base_ref: base,
        branch: job.branch.clone(),
        task: job.task.clone(),
        number: 0,
        actor: Actor {
            login: std::env::var("USER").unwrap_or_else(|_| "you".to_owned()),
            id: 0,
        },
    };
    let mut terminal = Terminal {
        progress,
        shown: 0,
        following: Phase::Working,
        tests: TestsAccess::default(),
        phases: PhaseClock::default(),
    };
    let driven = drive
        .run(std::future::ready(Ok(target)), &mut terminal)
        .await?;
    let outcome = |worker: &run::WorkerRun| LocalOutcome {
        exit: worker.exit,
        worker_duration: worker.duration,
        duration: started.elapsed(),
        phases: terminal.phases.times(),
        report: None,
        branch: None,
        commit: None,
        log_tail: worker.log.tail(10),
        summary: worker.summary.clone(),
        question: worker.question.clone(),
        tests: terminal.tests,
        verification: None,
    };
    let change = match driven {
        Driven::Stopped { .. } => return Err(JobError::fatal("the job was stopped")),
        Driven::Unchanged { worker } => return Ok(outcome(&worker)),
        Driven::Changed(change) => change,
    };
    let Changed {
        prepared,
        worker,
        checked,
        verification,
        ..
    } = *change;
    let mut outcome = outcome(&worker);
    outcome.verification = verification;
    outcome.commit = Some(checked.commit.to_string());
    if let Source::Path(path) = &job.source {
        terminal.enter(Phase::Publishing);
        let (mirrors, repo_name, path, branch, commit) = (
            prepared.mirrors.clone(),
            repo_name.clone(),
            path.clone(),
            job.branch.clone(),
            checked.commit,
        );
        mirrors
            .locked(Forge::GitHub, &repo_name, move |mirror| {
                branch_into(&mirror, &path, commit, &branch, job_id)
            })
            .await?;
        outcome.branch = Some(job.branch.clone());
    }
    outcome.report = Some(checked.report);
    outcome.duration = started.elapsed();
    outcome.phases = terminal.phases.times();
    Ok(outcome)
}

/// Twelve hex digits of the SHA-256 of `source`: enough to tell a machine's repositories apart.
fn digest(source: &str) -> String {
    use sha2::Digest as _;
    let hash = sha2::Sha256::digest(source.as_bytes());
    hash.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// `forgeward run`'s observer: each phase and the worker's lines, through the callback.
struct Terminal<'a> {
    progress: &'a (dyn Fn(Progress<'_>) + Sync),
    /// The lines shown so far of the log of the phase `following`.
    shown: u64,
    following: Phase,
    tests: TestsAccess,
    phases: PhaseClock,
}

impl Terminal<'_> {
    fn enter(&mut self, phase: Phase) {
        self.phases.enter(phase);
        (self.progress)(Progress::Phase(phase.as_str()));
    }
}

#[async_trait::async_trait]
impl Observer for Terminal<'_> {
    fn interval(&self) -> Duration {
        Duration::from_millis(200)
    }

    async fn enter(&mut self, phase: Phase) -> Result<(), JobError> {
        Terminal::enter(self, phase);
        Ok(())
    }

    async fn prepared(&mut self, prepared: &Prepared) {
        self.tests = prepared.tests;
    }

    async fn environment(
        &mut self,
        result: Result<&super::environment::Environment, &super::environment::EnvironmentError>,
    ) {
        // A failed setup's lines were shown as they came; its reason ends the run.
        if let Ok(environment) = result {
            (self.progress)(Progress::Said(&format!(
                "environment: {}",
                environment.describe()
            )));
        }
    }

    async fn progress(&mut self, phase: Phase, log: Option<&Arc<JobLog>>) {
        if let Some(log) = log {
            // Verification's log is its own: its lines are counted from its start.
            if phase != self.following {
                self.following = phase;
                self.shown = 0;
            }
            self.shown = show_new_lines(log, self.shown, self.progress);
        }
        (self.progress)(Progress::Tick);
    }

    async fn worker_done(&mut self, worker: &run::WorkerRun) {
        self.shown = show_new_lines(&worker.log, self.shown, self.progress);
    }
}

/// The most lines shown at once when the worker prints faster than the terminal is refreshed.
const LINES_PER_REFRESH: u64 = 50;

/// Shows the lines the worker printed since `shown` of them were; returns the new count.
fn show_new_lines(log: &JobLog, shown: u64, progress: &(dyn Fn(Progress<'_>) + Sync)) -> u64 {
    let total = log.total_lines();
    let new = total.saturating_sub(shown).min(LINES_PER_REFRESH);
    for line in log.tail(usize::try_from(new).unwrap_or(usize::MAX)) {
        progress(Progress::WorkerLine(&line));
    }
    total
}

/// Makes `branch` in the local repository at `path` point at `commit`, which the mirror holds.
/// The repository fetches it from the mirror (libgit2 cannot push into a repository with a
/// working tree); an existing branch is never overwritten.
fn branch_into(
    mirror: &Mirror,
    path: &Path,
    commit: git2::Oid,
    branch: &str,
    job: JobId,
) -> Result<(), JobError> {
    let repo = git2::Repository::discover(path)
        .map_err(|e| JobError::fatal(format!("{}: {}", path.display(), e.message())))?;
    let refname = format!("refs/heads/{branch}");
    if repo.find_reference(&refname).is_ok() {
        return Err(JobError::fatal(format!(
            "the branch '{branch}' already exists in {}; name another with --branch",
            path.display()
        )));
    }
    let pin = job.to_string();
    mirror.pin(&pin, commit)?;
    let source = mirror.path().to_string_lossy().into_owned();
    let fetched = repo
        .remote_anonymous(&source)
        .and_then(|mut remote| {
            let mut opts = git2::FetchOptions::new();
            opts.update_fetchhead(false)
                .download_tags(git2::AutotagOption::None);
            remote.fetch(
                &[format!("refs/forgeward/jobs/{pin}:{refname}")],
                Some(&mut opts),
                None,
            )
        })
        .map_err(|e| JobError::fatal(format!("creating the branch '{branch}': {}", e.message())));
    mirror.unpin(&pin)?;
    fetched
}

/// The branch a local repository has checked out.
fn checked_out_branch(path: &Path) -> Result<String, JobError> {
    let repo = git2::Repository::discover(path)
        .map_err(|e| JobError::fatal(format!("{}: {}", path.display(), e.message())))?;
    let head = repo.head().map_err(|e| {
        JobError::fatal(format!(
            "{}: no branch checked out: {}",
            path.display(),
            e.message()
        ))
    })?;
    head.shorthand()
        .filter(|_| head.is_branch())
        .map(str::to_owned)
        .ok_or_else(|| {
            JobError::fatal(format!(
                "{}: HEAD is detached; say which branch to start from with --base",
                path.display()
            ))
        })
}
