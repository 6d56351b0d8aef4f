//! The steps of a worker job that do not talk to a forge, shared by the bot's jobs and by
//! `forgeward run` (one job, locally): mirror and checkout, the task files, the sandbox with its
//! live log, the bot's own commit of what the worker left and the detector's look at it, the push.
//!
//! Everything git does here runs on the bot's own mirror; the worker's directory is only read,
//! never trusted (its `.git` is ignored, its symlinks are not followed).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use git2::Oid;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::check::{Author, check_change, repo_config};
use crate::config::RepoConfig;
use crate::config::pipeline::TestsAccess;
use crate::detect::{Classifier, Flag, Report, Rule, Tree};
use crate::forge::api::{GitCredentials, Issue, PullRequest};
use crate::forge::{Actor, Forge, RepoName};
use crate::git::{Checkout, CommitTree, Head, Repo, co_authored_by, remove_tree};
use crate::sandbox::{Exit, Sandbox, SandboxSpec};
use crate::sandbox::{JobLog, Redactor};
use crate::store::JobId;

use super::config::PipelineConfig;
use super::egress::{JobEgress, NetworkPolicy};
use super::error::{JobError, blocking};
use super::mirrors::Mirrors;
use crate::egress::Totals;
use crate::sandbox::Network;

/// What the worker is asked to do: `/job/task.md`.
#[derive(Clone, Debug)]
pub struct Task {
    pub title: String,
    pub body: String,
    /// More instructions given with `/forgeward run …`; after a question, the answer.
    pub instructions: String,
    /// The question the worker asked in the previous job of the same issue or pull request,
    /// when this job was started by `/forgeward run [answer]` after it.
    pub earlier_question: Option<String>,
}

/// The paragraph every task ends with: a worker that finds the task or the tests wrong has a
/// way to say so other than bending the tests.
const MAY_ASK: &str = "If the task or the tests look wrong to you (contradictory, impossible, or \
only passable by weakening the tests), do not work around them: write your question to \
`/job-out/question.md` and stop. A person will read it and answer, and the next job will give \
you your question and their answer.";

impl Task {
    pub fn from_issue(issue: &Issue, instructions: &str) -> Task {
        Task {
            title: issue.title.clone(),
            body: issue.body.clone(),
            instructions: instructions.to_owned(),
            earlier_question: None,
        }
    }

    pub fn from_pull_request(pr: &PullRequest, instructions: &str) -> Task {
        Task {
            title: pr.title.clone(),
            body: String::new(),
            instructions: instructions.to_owned(),
            earlier_question: None,
        }
    }

    /// `/job/task.md`: the title and body; after a question, the question quoted and the answer
    /// (or a line saying none was given); else any more instructions; then [`MAY_ASK`].
    pub fn markdown(&self) -> String {
        let mut out = format!("# {}\n\n{}\n", self.title.trim(), self.body.trim());
        let instructions = self.instructions.trim();
        match self.earlier_question.as_deref().map(str::trim) {
            Some(question) if !question.is_empty() => {
                out.push_str("\n## Your earlier question\n\n");
                for line in question.lines() {
                    out.push_str(format!("> {line}").trim_end());
                    out.push('\n');
                }
                out.push_str("\n## Answer\n\n");
                if instructions.is_empty() {
                    out.push_str(
                        "No answer was given: the person who started this job read your \
                         question and asked you to go on. Use your judgement.",
                    );
                } else {
                    out.push_str(instructions);
                }
                out.push('\n');
            }
            _ if !instructions.is_empty() => {
                out.push_str("\n## More instructions\n\n");
                out.push_str(instructions);
                out.push('\n');
            }
            _ => {}
        }
        out.push_str("\n## If something looks wrong\n\n");
        out.push_str(MAY_ASK);
        out.push('\n');
        out
    }
}

/// `/job/job.json`.
#[derive(Clone, Debug, Serialize)]
pub struct JobFile {
    pub forge: Forge,
    pub repo: String,
    pub number: u64,
    pub branch: String,
    pub attempt: u32,
    pub job: i64,
}

/// A job's own directory: the checkout, the task, and what the worker leaves for the bot.
/// Removed when dropped.
pub struct JobDir {
    pub root: PathBuf,
}

impl JobDir {
    /// The directory at `root`, made afresh (whatever an earlier attempt left is removed), with
    /// its workspace, task and output directories, readable by the bot alone.
    fn create(root: PathBuf) -> Result<JobDir, JobError> {
        remove_tree(&root)
            .map_err(|e| JobError::transient(format!("clearing {}: {e}", root.display())))?;
        let dir = JobDir { root };
        for d in [dir.workspace(), dir.task_dir(), dir.out_dir()] {
            std::fs::create_dir_all(&d)
                .map_err(|e| JobError::transient(format!("creating {}: {e}", d.display())))?;
        }
        // The bot's alone: no other user of the host reaches the checkout, nor the egress
        // gateway's socket (which the worker reaches through its mount, not through this path).
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir.root, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| JobError::transient(format!("restricting {}: {e}", dir.root.display())))?;
        Ok(dir)
    }

    pub fn workspace(&self) -> PathBuf {
        self.root.join("workspace")
    }
    pub fn task_dir(&self) -> PathBuf {
        self.root.join("job")
    }
    pub fn out_dir(&self) -> PathBuf {
        self.root.join("out")
    }
    /// The egress gateway's directory (made by the gateway: it must not exist before).
    pub fn egress_dir(&self) -> PathBuf {
        self.root.join("egress")
    }
}

impl Drop for JobDir {
    fn drop(&mut self) {
        if let Err(err) = remove_tree(&self.root) {
            tracing::warn!(dir = %self.root.display(), error = %err, "could not remove a job's directory");
        }
    }
}

/// Removes the job directories a crashed run of this bot left under `data_dir` (called at start,
/// before any job runs: a data directory belongs to one bot process), first unmounting the
/// environments it had lent there as overlays.
pub fn clear_leftover_job_dirs(data_dir: &Path) -> std::io::Result<()> {
    let jobs = data_dir.join("jobs");
    let unmounted = crate::mounts::unmount_under(&jobs)?;
    if unmounted > 0 {
        tracing::info!(
            unmounted,
            "mounts a crashed run left in its job directories unmounted"
        );
    }
    remove_tree(&jobs)
}

/// A checkout ready for the worker.
pub struct Prepared {
    pub mirrors: Mirrors,
    pub forge: Forge,
    pub repo: RepoName,
    pub dir: JobDir,
    pub base: Oid,
    /// The branch's tip before this job pushes, if it exists: what the push's lease expects.
    pub branch_tip: Option<Oid>,
    /// The worker's checkout, removed with it.
    pub checkout: Checkout,
    /// What the worker may do to the base's tests (`[job] tests`, else `worker.tests`).
    pub tests: TestsAccess,
    /// With read-only tests, every file that is a test at the base, relative to the checkout.
    pub protected: Vec<PathBuf>,
    /// What the base says its environment is (`[environment]`, else its files).
    pub plan: crate::environment::plan::Plan,
    /// The environment prepared for the job, lent to each of its sandboxes (empty until the
    /// "preparing environment" phase).
    pub environment: super::environment::Environment,
}

/// What a job works on, once its source has been asked.
#[derive(Clone)]
pub struct Target {
    pub forge: Forge,
    pub repo: RepoName,
    /// Where the repository is cloned from.
    pub url: String,
    /// `url` is a repository on this machine (`forgeward run` on a path): its objects are
    /// borrowed, not copied ([`crate::git::Mirror::borrow`]).
    pub local: bool,
    pub credentials: Option<GitCredentials>,
    /// The branch the work starts from.
    pub base_ref: String,
    /// The branch the result goes to.
    pub branch: String,
    pub task: Task,
    /// The issue or pull request, for the worker's `job.json` (0: none).
    pub number: u64,
    /// Who asked: credited in the commit.
    pub actor: Actor,
}

/// Fetches the target's repository into its mirror and checks its base out into the job's
/// directory.
pub async fn prepare(
    config: &PipelineConfig,
    target: &Target,
    job: JobId,
    attempt: u32,
) -> Result<Prepared, JobError> {
    let mirrors = Mirrors::at(&config.mirrors);
    let root = attempt_dir(config, job, attempt);
    let forge = target.forge;
    let (url, local, repo_name, base_ref, branch, credentials) = (
        target.url.clone(),
        target.local,
        target.repo.clone(),
        target.base_ref.clone(),
        target.branch.clone(),
        target.credentials.clone(),
    );
    let default_tests = config.worker.tests;
    blocking(move || {
        let dir = JobDir::create(root)?;
        mirrors.with(forge, &repo_name, |mirror| {
            if local {
                mirror.borrow(Path::new(&url))?;
            } else {
                let wanted = job_refspecs(&base_ref, &branch);
                let wanted: Vec<&str> = wanted.iter().map(String::as_str).collect();
                mirror.fetch(&url, credentials.as_ref(), &wanted)?;
            }
            let base_name = format!("refs/heads/{base_ref}");
            let Ok(tip) = mirror.repo().git2().refname_to_id(&base_name) else {
                return Err(JobError::fatal(format!(
                    "the branch '{base_ref}' does not exist"
                )));
            };
            let damaged = |repo: &crate::git::Repo, err: JobError| match repo.missing_object(tip) {
                Some((object, path)) => JobError::fatal(damage(&base_ref, tip, object, &path)),
                None => err,
            };
            let base = mirror
                .repo()
                .resolve(&base_name)
                .map_err(|e| damaged(mirror.repo(), e.into()))?;
            let branch_tip = mirror.repo().resolve(&format!("refs/heads/{branch}")).ok();
            let at = (forge, &repo_name);
            let mut prepared = checkout_base(&mirror, &mirrors, at, dir, base, default_tests)
                .map_err(|e| damaged(mirror.repo(), e))?;
            prepared.branch_tip = branch_tip;
            Ok(prepared)
        })
    })
    .await
}

/// A job's checkout of `base`, a commit already in the repository's mirror, for verifying a
/// change made elsewhere (a pull request's head): the job's own directory, the base's
/// configuration and environment plan. Nothing is fetched.
pub async fn prepare_at(
    config: &PipelineConfig,
    forge: Forge,
    repo: &RepoName,
    base: Oid,
    job: JobId,
    attempt: u32,
) -> Result<Prepared, JobError> {
    let mirrors = Mirrors::at(&config.mirrors);
    let root = attempt_dir(config, job, attempt);
    let (repo, default_tests) = (repo.clone(), config.worker.tests);
    blocking(move || {
        let dir = JobDir::create(root)?;
        mirrors.with(forge, &repo, |mirror| {
            checkout_base(&mirror, &mirrors, (forge, &repo), dir, base, default_tests)
        })
    })
    .await
}

/// The directory of one attempt of a job: a run that lost its lease and has not noticed yet
/// never removes the files of the attempt that took over.
fn attempt_dir(config: &PipelineConfig, job: JobId, attempt: u32) -> PathBuf {
    config
        .data_dir
        .join("jobs")
        .join(format!("{job}-{attempt}"))
}

/// `base` checked out into `dir`'s workspace, with what its configuration says.
fn checkout_base(
    mirror: &crate::git::Mirror,
    mirrors: &Mirrors,
    (forge, repo): (Forge, &RepoName),
    dir: JobDir,
    base: Oid,
    default_tests: TestsAccess,
) -> Result<Prepared, JobError> {
    let repo_config = repo_config(mirror.repo(), Head::Commit(base))?;
    let tests = repo_config.job.tests.unwrap_or(default_tests);
    let protected = match tests {
        TestsAccess::ReadOnly => base_tests(mirror.repo(), base, &repo_config)?,
        TestsAccess::Writable => Vec::new(),
    };
    let plan = crate::environment::plan::Plan::read(
        &CommitTree::new(mirror.repo().git2(), base),
        &repo_config,
    );
    let checkout = mirror.checkout(base, &dir.workspace())?;
    Ok(Prepared {
        mirrors: mirrors.clone(),
        forge,
        repo: repo.clone(),
        dir,
        base,
        branch_tip: None,
        checkout,
        tests,
        protected,
        plan,
        environment: Default::default(),
    })
}

/// What a job fetches: the branch it starts from, and its own branch (which its push leases
/// against), when the remote has it; not every branch, which on a repository with many costs
/// the first fetch the history of all of them. A branch that is gone from the remote is pruned.
fn job_refspecs(base: &str, branch: &str) -> Vec<String> {
    let mut specs = vec![format!("+refs/heads/{base}:refs/heads/{base}")];
    if branch != base {
        specs.push(format!("+refs/heads/{branch}:refs/heads/{branch}"));
    }
    specs
}

/// The job's base cannot be read: which object is missing, and where the branch needs it.
fn damage(branch: &str, tip: Oid, object: Oid, path: &str) -> String {
    let at = if path.is_empty() {
        String::new()
    } else {
        format!(" (the file or directory '{path}')")
    };
    format!(
        "the history of the branch '{branch}' is damaged: object {object}{at}, which its commit {tip} needs, is missing from the repository"
    )
}

/// What is a test for the jobs (protected tests, the tests verification puts back): the
/// detector's conventions and the repository's `test_paths`; ignored files are tests too.
pub(super) fn test_classifier(config: &RepoConfig) -> Result<Classifier, JobError> {
    let options = config.check.options();
    Classifier::new(
        options.test_paths.iter().map(String::as_str),
        std::iter::empty::<&str>(),
    )
    .map_err(|e| JobError::fatal(format!("{}: {e}", crate::config::FILE_NAME)))
}

/// The files that are tests at `base`, by the detector's conventions and the repository's
/// `test_paths`, relative to a checkout.
fn base_tests(repo: &Repo, base: Oid, config: &RepoConfig) -> Result<Vec<PathBuf>, JobError> {
    use std::os::unix::ffi::OsStrExt;
    let classifier = test_classifier(config)?;
    let tree = CommitTree::new(repo.git2(), base);
    Ok(tree
        .files()
        .into_iter()
        .filter(|p| classifier.is_test(p))
        .map(|p| PathBuf::from(std::ffi::OsStr::from_bytes(p.as_bytes())))
        .collect())
}

/// How to run the worker: the sandbox's spec, and the job's egress gateway when the worker
/// goes out through one.
pub struct WorkerSpec {
    pub sandbox: SandboxSpec,
    pub egress: Option<JobEgress>,
    /// The environment lent to the workspace, taken back as soon as the sandbox's run ends.
    pub loan: crate::environment::lend::Loan,
}

/// Writes the task files and says how to run the worker.
pub async fn sandbox_spec(
    config: &PipelineConfig,
    prepared: &Prepared,
    task: &Task,
    job_file: &JobFile,
    sandbox: &dyn Sandbox,
) -> Result<WorkerSpec, JobError> {
    if config.worker.command.is_empty() {
        return Err(JobError::fatal(
            "no worker is configured: set worker.command (FORGEWARD_WORKER_COMMAND)",
        ));
    }
    let task_dir = prepared.dir.task_dir();
    let json = serde_json::to_vec_pretty(job_file)
        .map_err(|e| JobError::fatal(format!("writing job.json: {e}")))?;
    let markdown = task.markdown();
    let write_dir = task_dir.clone();
    blocking(move || {
        std::fs::write(write_dir.join("task.md"), markdown)
            .and_then(|()| std::fs::write(write_dir.join("job.json"), json))
            .map_err(|e| JobError::transient(format!("writing the task: {e}")))
    })
    .await?;
    let mut env = config.worker_env.clone();
    env.push(("FORGEWARD_TASK_FILE".to_owned(), "/job/task.md".to_owned()));
    env.push(("FORGEWARD_JOB_ID".to_owned(), job_file.job.to_string()));
    let (network, egress) = match &config.network {
        NetworkPolicy::None => (Network::None, None),
        NetworkPolicy::Full => (Network::Full, None),
        NetworkPolicy::Allowlist(list) => {
            let (list, dir) = (list.clone(), prepared.dir.egress_dir());
            let prepared = blocking(move || JobEgress::prepare(&list, &dir)).await?;
            env.extend(prepared.placeholders);
            (Network::Gateway(prepared.mount), Some(prepared.gateway))
        }
    };
    let mut spec = SandboxSpec {
        workspace: prepared.dir.workspace(),
        job_dir: task_dir,
        out_dir: prepared.dir.out_dir(),
        command: config.worker.command.clone(),
        image: config.worker.image.clone(),
        env,
        limits: config.limits.clone(),
        network,
        read_only: prepared.protected.clone(),
        path: Vec::new(),
    };
    prepared.environment.apply(&mut spec);
    sandbox.prepare(&mut spec).await?;
    Ok(WorkerSpec {
        sandbox: spec,
        egress,
        loan: crate::environment::lend::Loan::none(),
    })
}

/// How the worker's run ended, with its log and summary.
pub struct WorkerRun {
    pub exit: Exit,
    /// From the worker's start to its exit: its own time, not the job's.
    pub duration: std::time::Duration,
    pub log: Arc<JobLog>,
    /// `/job-out/summary.md`, if the worker left one (capped).
    pub summary: Option<String>,
    /// `/job-out/question.md`, if the worker left one that is not blank (capped): the worker
    /// asks instead of changing anything, and no pull request is opened.
    pub question: Option<String>,
    /// What the egress gateway let through and refused, when the worker went out through one.
    pub egress: Option<Totals>,
}

/// The worker, running: its live log, a way to stop it, and its end.
pub struct RunningWorker {
    log: Arc<JobLog>,
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<Result<Ran, crate::sandbox::SandboxError>>,
    out_dir: PathBuf,
}

/// The most of `/job-out/summary.md` that goes into a pull request: GitHub refuses bodies over
/// 65,536 characters, and the rest of the description needs room too.
const SUMMARY_MAX: usize = 32 * 1024;

/// The most of `/job-out/question.md` kept: a question is a few sentences, and it is stored with
/// the job, quoted in the status comment and handed back in the next task.
const QUESTION_MAX: usize = 8 * 1024;

impl RunningWorker {
    pub fn log(&self) -> &Arc<JobLog> {
        &self.log
    }

    /// What kills the worker's process tree; [`RunningWorker::finished`] then returns
    /// [`Exit::Cancelled`].
    pub fn canceller(&self) -> CancellationToken {
        self.cancel.clone()
    }

    pub async fn finished(&mut self) -> Result<WorkerRun, JobError> {
        let (exit, duration, egress) = (&mut self.task)
            .await
            .map_err(|e| JobError::transient(format!("the sandbox task failed: {e}")))??;
        let out = self.out_dir.clone();
        let (summary, question) = blocking(move || {
            Ok((
                read_out_file(&out.join("summary.md"), SUMMARY_MAX),
                read_question(&out.join("question.md")),
            ))
        })
        .await?;
        Ok(WorkerRun {
            exit,
            duration,
            log: self.log.clone(),
            summary,
            question,
            egress,
        })
    }
}

/// How the sandbox's run ended: the exit, the worker's own time, the gateway's totals.
type Ran = (Exit, std::time::Duration, Option<Totals>);

/// Where the log of a job's attempt is kept: `logs/<job>-<attempt>.log` in the data directory.
/// Written line by line while the worker runs (the job page follows it), whole at its end.
pub fn log_path(data_dir: &Path, job: JobId, attempt: u32) -> PathBuf {
    data_dir.join("logs").join(format!("{job}-{attempt}.log"))
}

/// Where the "preparing environment" phase's output is kept: beside [`log_path`], as
/// `logs/<job>-<attempt>.environment.log`.
pub fn environment_log_path(data_dir: &Path, job: JobId, attempt: u32) -> PathBuf {
    data_dir
        .join("logs")
        .join(format!("{job}-{attempt}.environment.log"))
}

/// Where the runners' output of a job's verification is kept: beside [`log_path`], as
/// `logs/<job>-<attempt>.verify.log`.
pub fn verify_log_path(data_dir: &Path, job: JobId, attempt: u32) -> PathBuf {
    data_dir
        .join("logs")
        .join(format!("{job}-{attempt}.verify.log"))
}

/// Starts the worker in `sandbox`, and its egress gateway first when it has one; its output
/// is redacted into the job log as it comes, and written to `live_log` too when given (a log
/// that cannot be created there is a warning, and the job goes on without the file).
pub fn start_worker(
    config: &PipelineConfig,
    sandbox: Arc<dyn Sandbox>,
    spec: WorkerSpec,
    live_log: Option<&Path>,
) -> Result<RunningWorker, JobError> {
    let mut secrets = config.secrets.clone();
    secrets.extend(config.worker_env.iter().map(|(_, v)| v.clone()));
    let redactor = Redactor::new(&secrets);
    let log = match live_log {
        Some(path) => JobLog::with_file(redactor.clone(), path).unwrap_or_else(|err| {
            tracing::warn!(path = %path.display(), error = %err, "the live job log cannot be created");
            JobLog::new(redactor)
        }),
        None => JobLog::new(redactor),
    };
    let log = Arc::new(log);
    let egress = spec.egress.map(|e| e.start(log.clone())).transpose()?;
    let cancel = CancellationToken::new();
    let (spec, loan) = (spec.sandbox, spec.loan);
    let out_dir = spec.out_dir.clone();
    let task = {
        let (log, cancel) = (log.clone(), cancel.clone());
        // The task owns the loan: it is taken back when the sandbox's run has ended, even when
        // the job that started it has stopped waiting.
        tokio::spawn(async move {
            let started = std::time::Instant::now();
            let exit = sandbox.run(&spec, log.as_ref(), cancel).await;
            let took = started.elapsed();
            let taken_back = super::environment::Environment::take_back(loan).await;
            let totals = match egress {
                Some(egress) => Some(egress.finish().await),
                None => None,
            };
            let exit = exit?;
            taken_back.map_err(|e| crate::sandbox::SandboxError {
                backend: "environment",
                message: e.message,
            })?;
            Ok((exit, took, totals))
        })
    };
    Ok(RunningWorker {
        log,
        cancel,
        task,
        out_dir,
    })
}

/// Keeps the worker's log (redacted and capped as it came) as [`log_path`] in the data
/// directory, for the operator and the job page: a log written as it came is finished there
/// (its last lines added when it was cut), any other is written whole. Best effort: a log that
/// cannot be written is a warning.
pub async fn keep_log(config: &PipelineConfig, job: JobId, attempt: u32, log: &Arc<JobLog>) {
    if log.has_file() {
        let log = log.clone();
        let _ = blocking(move || {
            log.finish_file();
            Ok(())
        })
        .await;
        return;
    }
    let path = log_path(&config.data_dir, job, attempt);
    let text = log.text();
    let written = blocking(move || {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| JobError::transient(format!("{}: {e}", dir.display())))?;
        }
        std::fs::write(&path, text)
            .map_err(|e| JobError::transient(format!("{}: {e}", path.display())))
    })
    .await;
    if let Err(err) = written {
        tracing::warn!(error = %err.message, "could not keep the worker's log");
    }
}

/// A file the worker left in `/job-out`, if any: a regular file (never followed through a
/// symlink), at most `max` bytes of it read, invalid UTF-8 (a character cut at the end
/// included) shown as U+FFFD.
fn read_out_file(path: &Path, max: usize) -> Option<String> {
    use std::io::Read as _;
    let (file, _) = crate::files::open_regular(path).ok()??;
    let mut bytes = Vec::new();
    file.take(u64::try_from(max).unwrap_or(u64::MAX))
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The question the worker left in `question.md`: as [`read_out_file`], capped at
/// [`QUESTION_MAX`]; a blank file is no question.
fn read_question(path: &Path) -> Option<String> {
    let text = read_out_file(path, QUESTION_MAX)?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The bot's commit of what the worker left, and the detector's report on it.
pub struct Checked {
    pub commit: Oid,
    pub report: Report,
}

/// The commit message of a worker's change, crediting the person who asked for it.
pub fn commit_message(task: &Task, worker: &str, actor: &Actor, forge: Forge, url: &str) -> String {
    let message = format!(
        "{}\n\nWritten by the worker {worker} in forgeward's sandbox, at the request of @{}.",
        crate::text::one_line(&task.title),
        actor.login,
    );
    let email = match forge {
        Forge::GitHub => format!("{}+{}@users.noreply.github.com", actor.id, actor.login),
        Forge::GitLab => format!("{}-{}@users.noreply.gitlab.com", actor.id, actor.login),
        // Forgejo's and Gitea's default no-reply address: `noreply.` and the instance's domain.
        Forge::Forgejo => format!("{}@noreply.{}", actor.login, host_of(url)),
    };
    co_authored_by(&message, &actor.login, &email)
}

/// The host of a clone URL (`https://codeberg.org/o/r.git` → `codeberg.org`), without user or
/// port; the URL itself when it has no scheme.
fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or(rest);
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => host.split(':').next().unwrap_or(host),
    }
}

/// Commits the workspace onto the base in the mirror (`None`: the worker changed nothing) and
/// runs the detector over base..commit with the base's `.forgeward.toml`. A change to
/// `.forgeward.toml` itself is a flag of its own.
pub async fn check(
    config: &PipelineConfig,
    prepared: &Prepared,
    message: String,
) -> Result<Option<Checked>, JobError> {
    let (mirrors, forge, repo, base, workspace) = (
        prepared.mirrors.clone(),
        prepared.forge,
        prepared.repo.clone(),
        prepared.base,
        prepared.dir.workspace(),
    );
    let (name, email) = (
        config.git.author_name.clone(),
        config.git.author_email.clone(),
    );
    let protected = prepared.protected.clone();
    mirrors
        .locked(forge, &repo, move |mirror| {
            let signature = git2::Signature::now(&name, &email)
                .map_err(|e| JobError::fatal(format!("the bot's git identity: {e}")))?;
            let Some(commit) =
                mirror.commit_workspace(base, &workspace, &message, &signature, &signature)?
            else {
                return Ok(None);
            };
            let mut report = check_commit(mirror.repo(), base, commit, Author::Agent)?;
            protected_changes(mirror.repo(), base, commit, &protected, &mut report)?;
            Ok(Some(Checked { commit, report }))
        })
        .await
}

/// The detector over `base..head` of a repository, a change by `author`, with the base's
/// configuration, plus a flag when the change edits that configuration.
pub fn check_commit(repo: &Repo, base: Oid, head: Oid, author: Author) -> Result<Report, JobError> {
    Ok(check_change(repo, base, Head::Commit(head), author)?.report)
}

/// Flags each protected test whose blob at `head` is not the base's (changed, removed, made a
/// symlink): the sandbox keeps them read-only, so this is the protection got round.
fn protected_changes(
    repo: &Repo,
    base: Oid,
    head: Oid,
    protected: &[PathBuf],
    report: &mut Report,
) -> Result<(), JobError> {
    if protected.is_empty() {
        return Ok(());
    }
    let git = repo.git2();
    let tree = |oid: Oid| {
        git.find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(|e| JobError::transient(format!("reading commit {oid}: {e}")))
    };
    let (base_tree, head_tree) = (tree(base)?, tree(head)?);
    let entry = |t: &git2::Tree<'_>, p: &Path| t.get_path(p).ok().map(|e| (e.id(), e.filemode()));
    let severity = Rule::ProtectedTestChanged.severity();
    let mut flags: Vec<Flag> = protected
        .iter()
        .filter(|p| entry(&base_tree, p) != entry(&head_tree, p))
        .map(|p| Flag {
            rule: Rule::ProtectedTestChanged,
            severity,
            path: crate::detect::RepoPath::new(std::os::unix::ffi::OsStrExt::as_bytes(
                p.as_os_str(),
            )),
            line: None,
            removed_line: None,
            message: "this test was read-only in the sandbox, yet the worker's change alters it"
                .to_owned(),
            snippet: None,
        })
        .collect();
    flags.append(&mut report.flags);
    report.flags = flags;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_commit_credits_the_asker_at_their_forge_s_no_reply_address() {
        let task = Task {
            title: "Fix the parser\non two lines".to_owned(),
            body: String::new(),
            instructions: String::new(),
            earlier_question: None,
        };
        let actor = Actor {
            login: "alice".to_owned(),
            id: 7,
        };
        let at = |forge, url| {
            let message = commit_message(&task, "claude", &actor, forge, url);
            assert!(
                message.starts_with("Fix the parser; on two lines\n\n"),
                "{message}"
            );
            message.lines().last().unwrap_or_default().to_owned()
        };
        assert_eq!(
            at(Forge::GitHub, "https://github.com/acme/w.git"),
            "Co-authored-by: alice <7+alice@users.noreply.github.com>"
        );
        assert_eq!(
            at(Forge::GitLab, "https://gitlab.com/acme/w.git"),
            "Co-authored-by: alice <7-alice@users.noreply.gitlab.com>"
        );
        assert_eq!(
            at(Forge::Forgejo, "https://bot@codeberg.org:443/acme/w.git"),
            "Co-authored-by: alice <alice@noreply.codeberg.org>"
        );
    }

    /// A repository with `base` (a protected test and the code) and `head` commits.
    fn two_commits(head_files: &[(&str, &str)]) -> (tempfile::TempDir, Repo, Oid, Oid) {
        use crate::git::testing::commit;
        let dir = tempfile::tempdir().expect("a temporary directory");
        let git = git2::Repository::init(dir.path()).expect("init");
        let base_files = [
            ("tests/test_calc.py", TEST),
            ("calc.py", "def add(a, b):\n    return a - b\n"),
        ];
        let base = commit(&git, &base_files, None);
        let head = commit(&git, head_files, Some(base));
        let repo = Repo::discover(dir.path()).expect("discover");
        (dir, repo, base, head)
    }

    fn flagged(head_files: &[(&str, &str)]) -> Vec<String> {
        let (_dir, repo, base, head) = two_commits(head_files);
        let mut report = Report::default();
        protected_changes(
            &repo,
            base,
            head,
            &[PathBuf::from("tests/test_calc.py")],
            &mut report,
        )
        .expect("compared");
        report
            .flags
            .iter()
            .map(|f| format!("{} {}", f.rule.id(), f.path))
            .collect()
    }

    const TEST: &str = "def test_add():\n    assert add(2, 3) == 5\n";

    #[test]
    fn a_protected_test_left_alone_is_not_flagged() {
        assert!(
            flagged(&[
                ("tests/test_calc.py", TEST),
                ("calc.py", "def add(a, b):\n    return a + b\n"),
                ("tests/test_new.py", "def test_new():\n    pass\n"),
            ])
            .is_empty()
        );
    }

    #[test]
    fn a_protected_test_changed_or_removed_is_flagged() {
        let changed = [(
            "tests/test_calc.py",
            "def test_add():\n    assert add(2, 3) == -1\n",
        )];
        assert_eq!(
            flagged(&changed),
            ["protected-test-changed tests/test_calc.py"]
        );
        assert_eq!(
            flagged(&[("calc.py", "x = 1\n")]),
            ["protected-test-changed tests/test_calc.py"]
        );
    }

    fn task(instructions: &str, earlier_question: Option<&str>) -> Task {
        Task {
            title: "add() subtracts".to_owned(),
            body: "`add(1, 2)` gives -1.".to_owned(),
            instructions: instructions.to_owned(),
            earlier_question: earlier_question.map(str::to_owned),
        }
    }

    #[test]
    fn every_task_says_the_worker_may_ask() {
        let text = task("", None).markdown();
        assert!(
            text.starts_with("# add() subtracts\n\n`add(1, 2)` gives -1.\n"),
            "{text}"
        );
        assert!(text.contains("## If something looks wrong"), "{text}");
        assert!(
            text.contains(
                "If the task or the tests look wrong to you (contradictory, impossible, or only \
                 passable by weakening the tests), do not work around them: write your question \
                 to `/job-out/question.md` and stop."
            ),
            "{text}"
        );
        assert!(!text.contains("## More instructions"), "{text}");
        let text = task("and add a test", None).markdown();
        assert!(
            text.contains("## More instructions\n\nand add a test\n"),
            "{text}"
        );
        assert!(!text.contains("## Answer"), "{text}");
    }

    #[test]
    fn the_next_task_carries_the_question_and_its_answer() {
        let question = "The test expects 4.\n\nIs the test wrong?";
        let text = task("  the test is wrong: 3 is right  ", Some(question)).markdown();
        assert!(
            text.contains(
                "## Your earlier question\n\n> The test expects 4.\n>\n> Is the test wrong?\n\n\
                 ## Answer\n\nthe test is wrong: 3 is right\n"
            ),
            "{text}"
        );
        assert!(!text.contains("## More instructions"), "{text}");
        // `/forgeward run` alone after a question: the question, and no answer given.
        let text = task("", Some(question)).markdown();
        assert!(
            text.contains("## Answer\n\nNo answer was given: the person who started this job read your question and asked you to go on."),
            "{text}"
        );
        // The paragraph is still there: the worker may ask again.
        assert!(text.contains("/job-out/question.md"), "{text}");
    }

    #[test]
    fn a_question_is_a_regular_file_that_is_not_blank() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("question.md");
        assert_eq!(read_question(&path), None, "no file, no question");
        std::fs::write(&path, "").expect("write");
        assert_eq!(read_question(&path), None, "an empty file is no question");
        std::fs::write(&path, " \n\t\n").expect("write");
        assert_eq!(read_question(&path), None, "a blank file is no question");
        std::fs::write(&path, "\n  Is the test right?\n\n").expect("write");
        assert_eq!(read_question(&path).as_deref(), Some("Is the test right?"));
        std::fs::write(&path, b"caf\xc3\xa9 \xff?").expect("write");
        assert_eq!(read_question(&path).as_deref(), Some("café \u{FFFD}?"));

        // Never through a symlink, even to a question-looking file.
        let secret = dir.path().join("secret.txt");
        std::fs::write(&secret, "the bot's token").expect("write");
        std::fs::remove_file(&path).expect("rm");
        std::os::unix::fs::symlink(&secret, &path).expect("symlink");
        assert_eq!(read_question(&path), None);
        std::fs::remove_file(&path).expect("rm");
        std::fs::create_dir(&path).expect("mkdir");
        assert_eq!(read_question(&path), None, "a directory is no question");
    }

    #[test]
    fn a_long_question_is_capped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("question.md");
        // A multi-byte character across the cap becomes one U+FFFD, not an error.
        let text = format!("{}é{}", "a".repeat(QUESTION_MAX - 1), "b".repeat(100_000));
        std::fs::write(&path, text).expect("write");
        let question = read_question(&path).expect("a question");
        assert!(question.len() <= QUESTION_MAX + 3, "{}", question.len());
        assert!(question.starts_with("aaaa"));
        assert!(
            question.ends_with('\u{FFFD}'),
            "{}",
            &question[question.len() - 8..]
        );
        assert!(!question.contains('b'));
    }
}
