//! One job, locally, with no forge: `forgeward run`. The same steps as the bot's worker jobs —
//! mirror and checkout, the sandbox, the bot's own commit and the detector — against a local or
//! cloneable repository, with progress reported through a callback and the branch left in the
//! repository when it is a local one.

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

use super::pipeline::{JobError, PipelineConfig, blocking};
use super::run::{self, JobFile, Task};

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
}

/// How a local job ended.
pub struct LocalOutcome {
    pub exit: Exit,
    pub duration: Duration,
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
    let (url, repo_name) = match &job.source {
        Source::Path(path) => {
            let abs = std::fs::canonicalize(path)
                .map_err(|e| JobError::fatal(format!("{}: {e}", path.display())))?;
            let name = abs
                .file_name()
                .map_or_else(|| "repo".to_owned(), |n| n.to_string_lossy().into_owned());
            (
                abs.to_string_lossy().into_owned(),
                RepoName(format!("local/{name}")),
            )
        }
        Source::Url(url) => {
            let name = url.trim_end_matches('/').trim_end_matches(".git");
            let name = name.rsplit(['/', ':']).next().unwrap_or("repo");
            (url.clone(), RepoName(format!("remote/{name}")))
        }
    };
    let base = match (&job.base, &job.source) {
        (Some(base), _) => base.clone(),
        (None, Source::Path(path)) => checked_out_branch(path)?,
        (None, Source::Url(_)) => "main".to_owned(),
    };

    progress(Progress::Phase("cloning"));
    let job_id = JobId(i64::from(std::process::id()));
    let mut prepared = run::prepare(
        config,
        Forge::GitHub,
        &repo_name,
        job_id,
        1,
        &url,
        None,
        &base,
        &job.branch,
    )
    .await?;

    progress(Progress::Phase("preparing sandbox"));
    let job_file = JobFile {
        forge: Forge::GitHub,
        repo: repo_name.to_string(),
        number: 0,
        branch: job.branch.clone(),
        attempt: 1,
        job: job_id.0,
    };
    let spec = run::sandbox_spec(config, &prepared, &job.task, &job_file, sandbox.as_ref()).await?;

    progress(Progress::Phase("working"));
    let template = spec.clone();
    let mut worker = run::start_worker(config, sandbox.clone(), spec);
    let mut shown = 0;
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    let done = loop {
        tokio::select! {
            done = worker.finished() => break done?,
            _ = tick.tick() => shown = show_new_lines(worker.log(), shown, progress),
        }
    };
    show_new_lines(&done.log, shown, progress);

    progress(Progress::Phase("checking"));
    let actor = Actor {
        login: std::env::var("USER").unwrap_or_else(|_| "you".to_owned()),
        id: 0,
    };
    let message = run::commit_message(
        &job.task,
        &config.worker.display_name(),
        &actor,
        Forge::GitHub,
    );
    let checked = run::check(config, &prepared, message).await?;
    let mut outcome = LocalOutcome {
        exit: done.exit,
        duration: started.elapsed(),
        report: None,
        branch: None,
        commit: None,
        log_tail: done.log.tail(10),
        summary: done.summary.clone(),
        question: done.question.clone(),
        tests: prepared.tests,
        verification: None,
    };
    let Some(mut checked) = checked else {
        return Ok(outcome);
    };
    if outcome.question.is_none() {
        progress(Progress::Phase("verifying"));
        outcome.verification = Some(
            super::verify::verify(
                config,
                &mut prepared,
                checked.commit,
                sandbox.as_ref(),
                &template,
                None,
                &mut checked.report,
                tokio_util::sync::CancellationToken::new(),
            )
            .await?,
        );
    }
    outcome.commit = Some(checked.commit.to_string());
    if let Source::Path(path) = &job.source {
        progress(Progress::Phase("publishing"));
        let (mirrors, repo_name, path, branch, commit) = (
            prepared.mirrors.clone(),
            repo_name.clone(),
            path.clone(),
            job.branch.clone(),
            checked.commit,
        );
        blocking(move || {
            let mirror = Mirror::open_or_create(&mirrors, Forge::GitHub, &repo_name)?;
            branch_into(&mirror, &path, commit, &branch, job_id)
        })
        .await?;
        outcome.branch = Some(job.branch.clone());
    }
    outcome.report = Some(checked.report);
    outcome.duration = started.elapsed();
    Ok(outcome)
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
