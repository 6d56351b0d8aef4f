//! A worker job, from the issue to the reviewed pull request: queued, then the phases of
//! [`super::driver`] (cloning → preparing sandbox → working → checking → verifying), told in the
//! status comment by [`StatusObserver`] and recorded for the job page by
//! [`super::journal::Journal`], then publishing → done.
//!
//! A worker that leaves a question (`/job-out/question.md`) instead gets no pull request: its
//! changes, if any, are committed and pushed as usual, and the status comment quotes the
//! question and asks the person who started the job to answer with `/forgeward run <answer>`.
//!
//! The worker only ever sees a checkout and the task. Everything after it is the bot's own doing,
//! outside the sandbox, trusting nothing the worker left: the change is computed by comparing the
//! checkout's files with the base tree in the bot's own mirror, committed by the bot, checked by
//! the detector with the **base** revision's `.forgeward.toml`, and pushed with the forge's
//! credentials, which never enter the sandbox.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::status::StatusCommentPoster;
use crate::config::pipeline::TestsAccess;
use crate::detect::{Flag, Report, Severity};
use crate::forge::api::{ForgeApi, PullRequest, PullRequestSpec};
use crate::forge::{CommitSha, Event, Thread};
use crate::report::{
    self, ChangeSummary, ForgeLinks, PullRequestBody, PullRequestLink, StatusComment, StatusState,
    WorkerExit, WorkerQuestion,
};
use crate::sandbox::{Exit, JobLog};
use crate::store::{Job, Outcome};
use crate::trigger::{Command, parse_command};

use super::JobContext;
use super::driver::{Both, Changed, Drive, Driven, Observer, Phase, PhaseClock, Stop, Target};
use super::error::JobError;
use super::journal::Journal;
use super::pipeline::{Pipeline, WorkRequest};
use super::publish;
use super::run::{self, Checked, Prepared, Task, WorkerRun};
use super::verify::Verification;

/// Lines of the worker's log the status comment shows.
const LOG_TAIL_LINES: usize = 8;

/// The longest summary a check carries: GitHub's limit for a check run's (characters), which
/// the forges whose check is a commit status do not show.
pub(super) const CHECK_SUMMARY_MAX: usize = 65_535;

/// What the status comment shows, gathered as the job goes.
struct Story {
    job: Job,
    worker: String,
    started: Instant,
    /// When each phase began.
    phases: PhaseClock,
    exit: Option<WorkerExit>,
    changes: Option<ChangeSummary>,
    flags: Vec<Flag>,
    /// What the detector could not read in the change.
    unread: Vec<String>,
    branch: Option<String>,
    pull_request: Option<PullRequest>,
    log_tail: Vec<String>,
    links: ForgeLinks,
    /// Why the job ended as it did, when it did not finish (shown as the comment's "Why").
    note: Option<String>,
    /// The question the worker asked instead of making the change.
    question: Option<String>,
    /// Who started the job: asked to answer a question.
    requested_by: String,
    /// The bot's comment command, for the answer's instructions.
    command: String,
    /// Whether the worker may change the base's tests, once the checkout is ready.
    tests: Option<TestsAccess>,
    /// The bot's own runs of the tests, once they ran.
    verification: Option<crate::report::VerificationView>,
    /// Why those runs could not judge the change, when they could not.
    unjudged: Option<String>,
    /// How the comment links to the job's page, when the bot's public address is known.
    page: Option<Arc<crate::links::JobLinks>>,
    /// What the worker may reach, and once it has run, what it reached.
    network: String,
    /// The environment prepared for the job, once it is.
    environment: Option<String>,
}

impl Story {
    /// `f` over the status comment the story makes in `state`.
    fn with_comment<T>(
        &self,
        state: StatusState,
        error: Option<&str>,
        f: impl FnOnce(&StatusComment) -> T,
    ) -> T {
        let phases = self.phases.times();
        let error = match state {
            StatusState::Unjudged => error.or(self.unjudged.as_deref()),
            _ => error,
        };
        // A token good for the TTL from now: each edit of the comment renews it.
        let page = self.page.as_ref().and_then(|links| {
            links.url(
                crate::links::Scope::Job(self.job.id),
                crate::links::now_secs(),
            )
        });
        let status = StatusComment {
            job: self.job.id,
            state,
            attempt: self.job.attempts,
            max_attempts: self.job.max_attempts,
            worker: Some(&self.worker),
            exit: self.exit.clone(),
            duration: Some(self.started.elapsed()),
            changes: self.changes,
            flags: &self.flags,
            unread: &self.unread,
            branch: self.branch.as_deref(),
            pull_request: self.pull_request.as_ref().map(|pr| PullRequestLink {
                forge: self.links.forge,
                number: pr.number.0,
                url: &pr.web_url,
            }),
            links: &self.links,
            log_tail: &self.log_tail,
            error,
            question: self.question.as_deref().map(|text| WorkerQuestion {
                text,
                asked_by: &self.requested_by,
                command: &self.command,
            }),
            tests: self.tests,
            verification: self.verification.as_ref(),
            phases: &phases,
            page: page.as_deref(),
            network: Some(&self.network),
            environment: self.environment.as_deref(),
        };
        f(&status)
    }

    fn render(&self, state: StatusState, error: Option<&str>) -> String {
        self.with_comment(state, error, report::render_status)
    }

    /// The story as the summary of the commit's check.
    fn check_summary(&self, state: StatusState) -> String {
        self.with_comment(state, None, |status| {
            report::render_check_summary(status, CHECK_SUMMARY_MAX)
        })
    }
}

impl Pipeline {
    /// Runs a worker job to its end and reports it on the forge. Errors are reported in the
    /// status comment before they are returned to the runner.
    pub(super) async fn work(&self, job: &Job, ctx: &JobContext, request: WorkRequest) -> Outcome {
        let forge = match self.forge(request.repo.forge) {
            Ok(forge) => forge,
            Err(err) => return err.outcome(),
        };
        let mut story = Story {
            job: job.clone(),
            worker: self.config.worker.display_name(),
            started: Instant::now(),
            phases: PhaseClock::default(),
            exit: None,
            changes: None,
            flags: Vec::new(),
            unread: Vec::new(),
            branch: None,
            pull_request: None,
            log_tail: Vec::new(),
            note: None,
            question: None,
            requested_by: request.actor.login.clone(),
            command: self.config.trigger.command.clone(),
            tests: None,
            verification: None,
            unjudged: None,
            page: self.config.job_links.clone(),
            network: self.config.network.describe(),
            environment: None,
            links: ForgeLinks {
                forge: request.repo.forge,
                web_url: self.forges.web_url(request.repo.forge).to_owned(),
                repo: request.repo.name.clone(),
                sha: CommitSha(String::new()),
            },
        };
        let mut status = StatusCommentPoster::new(
            forge.clone(),
            request.repo.name.clone(),
            request.thread,
            request.number,
            job.id,
        );
        let result = self
            .work_steps(ctx, &request, forge.as_ref(), &mut story, &mut status)
            .await;
        let (state, outcome, error) = match result {
            Ok((state, outcome)) => (state, outcome, story.note.clone()),
            Err(err) => {
                let message =
                    crate::sandbox::Redactor::new(&self.config.secrets).redact(&err.message);
                // A job that will be tried again says so, rather than showing a verdict.
                let state = if err.retry && job.attempts < job.max_attempts {
                    StatusState::Queued
                } else {
                    StatusState::Failed
                };
                (state, err.outcome(), Some(message))
            }
        };
        if ctx.cancelled() {
            return outcome; // Another runner owns the job now: say nothing more.
        }
        if let Err(err) = status.finish(&story.render(state, error.as_deref())).await {
            tracing::warn!(error = %err, "could not write the final status comment");
        }
        outcome
    }

    async fn work_steps(
        &self,
        ctx: &JobContext,
        request: &WorkRequest,
        forge: &dyn ForgeApi,
        story: &mut Story,
        status: &mut StatusCommentPoster,
    ) -> Result<(StatusState, Outcome), JobError> {
        let repo = &request.repo.name;
        status
            .progress(&story.render(StatusState::Queued, None))
            .await?;
        let drive = Drive {
            config: &self.config,
            sandbox: self.sandbox.clone(),
            store: Some(&ctx.store),
            job: story.job.id,
            attempt: story.job.attempts,
        };
        // What to work on, and where it goes: asked of the forge once cloning has begun.
        let target = async {
            let (mut task, base_ref, branch) = match request.thread {
                Thread::Issue => {
                    let issue = forge.issue(repo, request.number).await?;
                    let base = forge.default_branch(repo).await?;
                    let branch = format!("{}{}", self.config.git.branch_prefix, request.number);
                    (
                        Task::from_issue(&issue, &request.instructions),
                        base,
                        branch,
                    )
                }
                Thread::PullRequest => {
                    let pr = forge.pull_request(repo, request.number).await?;
                    if pr.head_repo != *repo {
                        return Err(JobError::fatal(format!(
                            "the pull request's branch lives in {}, a fork the bot cannot push to",
                            pr.head_repo
                        )));
                    }
                    let task = Task::from_pull_request(&pr, &request.instructions);
                    (task, pr.head_branch.clone(), pr.head_branch)
                }
            };
            task.earlier_question = request.earlier_question.clone();
            Ok(Target {
                forge: request.repo.forge,
                repo: repo.clone(),
                url: forge.git_url(repo),
                local: false,
                credentials: Some(forge.git_credentials(repo).await?),
                base_ref,
                branch,
                task,
                number: request.number.0,
                actor: request.actor.clone(),
            })
        };
        let mut observer = Both(
            StatusObserver {
                pipeline: self,
                ctx,
                forge,
                request,
                story,
                status,
                judged: HashSet::new(),
            },
            Journal { ctx },
        );
        let driven = drive.run(target, &mut observer).await?;
        let change = match driven {
            Driven::Stopped { phase, by } => {
                let who = by.as_deref().unwrap_or("a maintainer");
                observer.0.story.note = Some(match phase {
                    Phase::Working => format!("cancelled by @{who}; nothing was pushed"),
                    _ => format!("cancelled by @{who} while {phase}; nothing was pushed"),
                });
                return Ok((StatusState::Cancelled, Outcome::Cancelled));
            }
            Driven::Unchanged { worker } => {
                if let Some(question) = &worker.question {
                    return Ok(asked(question));
                }
                let error = if worker.exit.success() {
                    "the worker made no changes".to_owned()
                } else {
                    format!("the worker {} and made no changes", worker.exit)
                };
                observer.0.story.note = Some(error.clone());
                return Ok((exit_state(worker.exit), JobError::fatal(error).outcome()));
            }
            Driven::Changed(change) => change,
        };
        let Changed {
            target,
            prepared,
            worker,
            checked,
            ..
        } = *change;

        // Publishing: the branch always, the pull request only for a worker that finished.
        observer.enter(Phase::Publishing).await?;
        if ctx.cancelled() {
            return Err(JobError::transient("the job's lease was lost"));
        }
        let branch = &target.branch;
        publish::push(
            &prepared,
            &target.url,
            target.credentials.clone(),
            checked.commit,
            branch,
        )
        .await?;
        if let Some(question) = &worker.question {
            // No pull request: the branch is there for whoever answers to look at.
            return Ok(asked(question));
        }
        if !worker.exit.success() {
            let error = format!(
                "the worker {}; its changes are on the branch `{branch}` for a person to look at",
                worker.exit
            );
            observer.0.story.note = Some(error.clone());
            return Ok((exit_state(worker.exit), JobError::fatal(error).outcome()));
        }
        // The commit's check begins as soon as the forge has the commit; a job that stops
        // before its result ends it as an error, unless it is tried again (and takes it up).
        let sha = CommitSha(checked.commit.to_string());
        let mut check = publish::CommitCheck::start(forge, repo, sha, None).await;
        let proposed = self
            .propose(
                request,
                forge,
                &mut observer,
                &mut check,
                &target,
                &worker,
                &checked,
            )
            .await;
        let job = &observer.0.story.job;
        if let Err(err) = &proposed
            && !(err.retry && job.attempts < job.max_attempts)
            && !ctx.cancelled()
        {
            let why = crate::sandbox::Redactor::new(&self.config.secrets).redact(&err.message);
            let url = observer
                .0
                .story
                .pull_request
                .as_ref()
                .map(|pr| pr.web_url.clone());
            check.fail(&why, url.as_deref()).await;
        }
        proposed
    }

    /// The pull request opened (or, for a job on one, found), then the check's result on it.
    #[allow(clippy::too_many_arguments)]
    async fn propose(
        &self,
        request: &WorkRequest,
        forge: &dyn ForgeApi,
        observer: &mut Both<StatusObserver<'_>, Journal<'_>>,
        check: &mut publish::CommitCheck<'_>,
        target: &Target,
        worker: &WorkerRun,
        checked: &Checked,
    ) -> Result<(StatusState, Outcome), JobError> {
        let repo = &request.repo.name;
        let task = &target.task;
        let ready = !checked.report.fails() && observer.0.story.unjudged.is_none();
        let body = report::render_pull_request_body(&PullRequestBody {
            issue_ref: &format!("#{}", request.number),
            issue_title: &task.title,
            summary: worker.summary.as_deref(),
            worker: &observer.0.story.worker,
            flags: &checked.report.flags,
            requested_by: &request.actor.login,
            ready,
        });
        let pr = match request.thread {
            Thread::Issue => {
                let spec = PullRequestSpec {
                    head_branch: target.branch.clone(),
                    base_branch: target.base_ref.clone(),
                    title: report::pull_request_title(&task.title, &format!("#{}", request.number)),
                    body,
                    draft: false,
                };
                publish::upsert_pull_request(forge, repo, &spec).await?
            }
            Thread::PullRequest => forge.pull_request(repo, request.number).await?,
        };
        observer.published(&pr).await;
        let flagged = checked.report.fails();
        let unjudged = observer.0.story.unjudged.clone();
        let state = if flagged {
            StatusState::Flagged
        } else if unjudged.is_some() {
            StatusState::Unjudged
        } else {
            StatusState::ReadyForReview
        };
        // On a worker's change every flag is a line comment, notes included.
        publish::publish_check(
            check,
            &pr,
            &checked.report,
            Severity::Note,
            observer
                .0
                .story
                .verification
                .as_ref()
                .and_then(|v| v.status_line())
                .as_deref(),
            unjudged.as_deref(),
            observer.0.story.check_summary(state.clone()),
        )
        .await?;
        Ok(if flagged {
            (state, Outcome::Flagged)
        } else {
            (state, Outcome::Succeeded)
        })
    }

    /// Records a new phase and shows it.
    async fn enter(
        &self,
        ctx: &JobContext,
        phase: Phase,
        story: &mut Story,
        status: &mut StatusCommentPoster,
    ) -> Result<(), JobError> {
        story.phases.enter(phase);
        ctx.phase(phase.as_str()).await;
        if ctx.cancelled() {
            return Err(JobError::transient("the job's lease was lost"));
        }
        let body = story.render(
            StatusState::Working {
                phase: phase.as_str().to_owned(),
            },
            None,
        );
        status.progress(&body).await?;
        Ok(())
    }
}

/// A question is the job's result however the worker exited: it stopped on purpose.
fn asked(question: &str) -> (StatusState, Outcome) {
    let outcome = Outcome::Question {
        question: question.to_owned(),
    };
    (StatusState::Question, outcome)
}

/// A forge job's observer: the job's phase in the store, the story in the status comment, and
/// `/forgeward cancel` from someone with write access (or a lost lease) to stop it.
struct StatusObserver<'a> {
    pipeline: &'a Pipeline,
    ctx: &'a JobContext,
    forge: &'a dyn ForgeApi,
    request: &'a WorkRequest,
    story: &'a mut Story,
    status: &'a mut StatusCommentPoster,
    /// The comments queued behind the job already judged for a cancel.
    judged: HashSet<i64>,
}

#[async_trait::async_trait]
impl Observer for StatusObserver<'_> {
    fn interval(&self) -> Duration {
        self.pipeline.config.progress_interval
    }

    async fn enter(&mut self, phase: Phase) -> Result<(), JobError> {
        self.pipeline
            .enter(self.ctx, phase, self.story, self.status)
            .await
    }

    async fn targeted(&mut self, target: &Target) {
        self.story.branch = Some(target.branch.clone());
    }

    async fn prepared(&mut self, prepared: &Prepared) {
        self.story.links.sha = CommitSha(prepared.base.to_string());
        self.story.tests = Some(prepared.tests);
    }

    async fn progress(&mut self, phase: Phase, log: Option<&Arc<JobLog>>) {
        if let Some(log) = log {
            self.story.log_tail = log.tail(LOG_TAIL_LINES);
        }
        let body = self.story.render(
            StatusState::Working {
                phase: phase.as_str().to_owned(),
            },
            None,
        );
        if let Err(err) = self.status.progress(&body).await {
            tracing::warn!(error = %err, %phase, "could not show the job's progress");
        }
    }

    async fn stop(&mut self) -> Option<Stop> {
        if self.ctx.cancelled() {
            return Some(Stop::LeaseLost);
        }
        let who = self
            .pipeline
            .cancel_request(self.ctx, self.forge, self.request, &mut self.judged)
            .await?;
        Some(Stop::By(who))
    }

    async fn environment(
        &mut self,
        result: Result<&super::environment::Environment, &super::environment::EnvironmentError>,
    ) {
        let story = &mut *self.story;
        match result {
            Ok(environment) => story.environment = Some(environment.describe()),
            Err(failed) => story.log_tail = failed.tail.clone(),
        }
    }

    async fn worker_done(&mut self, worker: &WorkerRun) {
        let story = &mut *self.story;
        story.exit = Some(worker_exit(worker.exit));
        story.log_tail = worker.log.tail(LOG_TAIL_LINES);
        if let Some(totals) = &worker.egress {
            story.network = format!("{} · {}", story.network, super::egress::reached(totals));
        }
        run::keep_log(
            &self.pipeline.config,
            story.job.id,
            story.job.attempts,
            &worker.log,
        )
        .await;
        if worker.exit != Exit::Cancelled {
            story.question = worker.question.clone();
        }
    }

    async fn checked(&mut self, checked: &Checked) {
        self.story.changes = Some(summary_of(&checked.report));
        self.story.flags = checked.report.flags.clone();
        self.story.unread = checked.report.warnings.clone();
        self.story.links.sha = CommitSha(checked.commit.to_string());
    }

    async fn verified(&mut self, verification: &Verification) {
        self.story.verification = verification.view();
        self.story.unjudged = verification.unjudged();
    }

    async fn published(&mut self, pull_request: &PullRequest) {
        self.story.pull_request = Some(pull_request.clone());
    }
}

impl Pipeline {
    /// Who asked to cancel this job: the author of a `/forgeward cancel` queued behind it, if
    /// they have write access. Each comment is judged once.
    async fn cancel_request(
        &self,
        ctx: &JobContext,
        forge: &dyn ForgeApi,
        request: &WorkRequest,
        judged: &mut HashSet<i64>,
    ) -> Option<String> {
        let queued = match ctx.queued_behind().await {
            Ok(queued) => queued,
            Err(err) => {
                tracing::warn!(error = %err, "could not look for a cancel request");
                return None;
            }
        };
        for job in queued {
            if !judged.insert(job.id.0) {
                continue;
            }
            let Event::Comment { body, author, .. } = &job.event else {
                continue;
            };
            if parse_command(body, &self.config.trigger.command) != Some(Command::Cancel) {
                continue;
            }
            match forge.permission(&request.repo.name, author).await {
                Ok(permission) if permission.may_trigger() => return Some(author.login.clone()),
                Ok(_) => {}
                Err(err) => tracing::warn!(error = %err, "could not ask who asked to cancel"),
            }
        }
        None
    }
}

fn summary_of(report: &Report) -> ChangeSummary {
    ChangeSummary {
        files: report.files,
        added: report.added_lines,
        removed: report.removed_lines,
    }
}

fn worker_exit(exit: Exit) -> WorkerExit {
    match exit {
        Exit::Code(code) => WorkerExit::Exited(code),
        Exit::Signal(signal) => WorkerExit::Killed(crate::sandbox::signal_name(signal)),
        Exit::TimedOut => WorkerExit::TimedOut,
        Exit::Cancelled => WorkerExit::Killed("SIGKILL (cancelled)".to_owned()),
        Exit::DiskFull => WorkerExit::Killed("SIGKILL (disk limit)".to_owned()),
    }
}

fn exit_state(exit: Exit) -> StatusState {
    match exit {
        Exit::TimedOut => StatusState::TimedOut,
        Exit::Cancelled => StatusState::Cancelled,
        _ => StatusState::Failed,
    }
}
