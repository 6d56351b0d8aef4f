//! A worker job, from the issue to the reviewed pull request:
//! queued → cloning → preparing sandbox → working → checking → publishing → done.
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
use std::time::{Duration, Instant};

use crate::config::pipeline::TestsAccess;
use crate::detect::{Flag, Report, Severity};
use crate::forge::api::{ForgeApi, PullRequest, PullRequestSpec};
use crate::forge::status::StatusCommentPoster;
use crate::forge::{CommitSha, Event, Thread};
use crate::report::{
    self, ChangeSummary, ForgeLinks, PullRequestBody, PullRequestLink, StatusComment, StatusState,
    WorkerExit, WorkerQuestion,
};
use crate::sandbox::Exit;
use crate::store::{Job, Outcome};
use crate::trigger::{Command, parse_command};

use super::JobContext;
use super::pipeline::{JobError, Pipeline, WorkRequest};
use super::run::{self, Task, WorkerRun};

/// The label put on a pull request the detector flagged, and taken off when a later push is
/// clean.
pub const FLAGGED_LABEL: &str = "forgeward:flagged";

/// Lines of the worker's log the status comment shows.
const LOG_TAIL_LINES: usize = 8;

/// How often a running worker's job looks for a `/forgeward cancel` queued behind it: a person
/// who asks sees the worker stop within seconds.
const CANCEL_POLL: Duration = Duration::from_secs(2);

/// What the status comment shows, gathered as the job goes.
struct Story {
    job: Job,
    worker: String,
    started: Instant,
    exit: Option<WorkerExit>,
    changes: Option<ChangeSummary>,
    flags: Vec<Flag>,
    branch: Option<String>,
    pull_request: Option<PullRequest>,
    log_tail: Vec<String>,
    links: ForgeLinks,
    /// Why the job ended as it did, when it did not finish (shown as the comment's "Why").
    note: Option<String>,
    /// Who asked, with `/forgeward cancel`, for the job to stop.
    cancelled_by: Option<String>,
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
}

impl Story {
    fn render(&self, state: StatusState, error: Option<&str>) -> String {
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
        };
        report::render_status(&status)
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
            exit: None,
            changes: None,
            flags: Vec::new(),
            branch: None,
            pull_request: None,
            log_tail: Vec::new(),
            note: None,
            cancelled_by: None,
            question: None,
            requested_by: request.actor.login.clone(),
            command: self.config.trigger.command.clone(),
            tests: None,
            verification: None,
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
        let job = story.job.id;
        status
            .progress(&story.render(StatusState::Queued, None))
            .await?;

        // Cloning: what to work on, and where it goes.
        self.enter(ctx, "cloning", story, status).await?;
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
        story.branch = Some(branch.clone());
        let url = forge.git_url(repo);
        let credentials = forge.git_credentials(repo).await?;
        let mut prepared = run::prepare(
            &self.config,
            request.repo.forge,
            repo,
            job,
            story.job.attempts,
            &url,
            Some(credentials.clone()),
            &base_ref,
            &branch,
        )
        .await?;
        story.links.sha = CommitSha(prepared.base.to_string());
        story.tests = Some(prepared.tests);

        // The worker, in its sandbox.
        self.enter(ctx, "preparing sandbox", story, status).await?;
        let job_file = run::JobFile {
            forge: request.repo.forge,
            repo: repo.to_string(),
            number: request.number.0,
            branch: branch.clone(),
            attempt: story.job.attempts,
            job: job.0,
        };
        let spec = run::sandbox_spec(
            &self.config,
            &prepared,
            &task,
            &job_file,
            self.sandbox.as_ref(),
        )
        .await?;
        self.enter(ctx, "working", story, status).await?;
        let worker = self
            .run_worker(ctx, &spec, forge, request, story, status)
            .await?;
        story.exit = Some(worker_exit(worker.exit));
        story.log_tail = worker.log.tail(LOG_TAIL_LINES);
        run::keep_log(&self.config, job, story.job.attempts, &worker.log).await;
        if worker.exit == Exit::Cancelled {
            let who = story.cancelled_by.as_deref().unwrap_or("a maintainer");
            story.note = Some(format!("cancelled by @{who}; nothing was pushed"));
            return Ok((StatusState::Cancelled, Outcome::Cancelled));
        }
        // A question is the job's result however the worker exited: it stopped on purpose.
        story.question = worker.question.clone();
        let asked = |question: &str| {
            let outcome = Outcome::Question {
                question: question.to_owned(),
            };
            Ok((StatusState::Question, outcome))
        };

        // The bot's own look at what the worker left.
        self.enter(ctx, "checking", story, status).await?;
        let message = run::commit_message(&task, &story.worker, &request.actor, request.repo.forge);
        let checked = run::check(&self.config, &prepared, message).await?;
        let Some(mut checked) = checked else {
            if let Some(question) = &worker.question {
                return asked(question);
            }
            let error = if worker.exit.success() {
                "the worker made no changes".to_owned()
            } else {
                format!("the worker {} and made no changes", worker.exit)
            };
            story.note = Some(error.clone());
            return Ok((exit_state(worker.exit), JobError::fatal(error).outcome()));
        };
        // The repository's own tests, run by the bot, on a change the worker finished.
        if worker.question.is_none() && worker.exit.success() {
            self.enter(ctx, "verifying", story, status).await?;
            let cancel = tokio_util::sync::CancellationToken::new();
            let verifying = super::verify::verify(
                &self.config,
                &mut prepared,
                checked.commit,
                self.sandbox.as_ref(),
                &spec,
                Some(&ctx.store),
                &mut checked.report,
                cancel.clone(),
            );
            tokio::pin!(verifying);
            let mut cancel_poll = tokio::time::interval(CANCEL_POLL);
            // A phase shown within the throttle's interval is shown again until it sticks.
            let mut tick = tokio::time::interval(self.config.progress_interval);
            tick.tick().await;
            let mut judged = HashSet::new();
            let verification = loop {
                tokio::select! {
                    done = &mut verifying => break done?,
                    _ = tick.tick() => {
                        let body = story.render(StatusState::Working { phase: "verifying".to_owned() }, None);
                        if let Err(err) = status.progress(&body).await {
                            tracing::warn!(error = %err, "could not show the verification's progress");
                        }
                    }
                    _ = cancel_poll.tick(), if story.cancelled_by.is_none() => {
                        if ctx.cancelled() {
                            cancel.cancel();
                        }
                        if let Some(who) = self.cancel_request(ctx, forge, request, &mut judged).await {
                            tracing::info!(by = %who, "cancelled on request while verifying");
                            story.cancelled_by = Some(who);
                            cancel.cancel();
                        }
                    }
                }
            };
            if let Some(who) = &story.cancelled_by {
                story.note = Some(format!(
                    "cancelled by @{who} while verifying; nothing was pushed"
                ));
                return Ok((StatusState::Cancelled, Outcome::Cancelled));
            }
            story.verification = verification.view();
        }
        story.changes = Some(summary_of(&checked.report));
        story.flags = checked.report.flags.clone();
        story.links.sha = CommitSha(checked.commit.to_string());

        // Publishing: the branch always, the pull request only for a worker that finished.
        self.enter(ctx, "publishing", story, status).await?;
        if ctx.cancelled() {
            return Err(JobError::transient("the job's lease was lost"));
        }
        run::push(&prepared, &url, Some(credentials), checked.commit, &branch).await?;
        if let Some(question) = &worker.question {
            // No pull request: the branch is there for whoever answers to look at.
            return asked(question);
        }
        if !worker.exit.success() {
            let error = format!(
                "the worker {}; its changes are on the branch `{branch}` for a person to look at",
                worker.exit
            );
            story.note = Some(error.clone());
            return Ok((exit_state(worker.exit), JobError::fatal(error).outcome()));
        }
        let body = report::render_pull_request_body(&PullRequestBody {
            issue_ref: &format!("#{}", request.number),
            issue_title: &task.title,
            summary: worker.summary.as_deref(),
            worker: &story.worker,
            flags: &checked.report.flags,
            requested_by: &request.actor.login,
        });
        let pr = match request.thread {
            Thread::Issue => {
                let spec = PullRequestSpec {
                    head_branch: branch.clone(),
                    base_branch: base_ref.clone(),
                    title: report::pull_request_title(&task.title, &format!("#{}", request.number)),
                    body,
                    draft: false,
                };
                upsert_pull_request(forge, repo, &spec).await?
            }
            Thread::PullRequest => forge.pull_request(repo, request.number).await?,
        };
        story.pull_request = Some(pr.clone());
        let flagged = checked.report.fails();
        // On a worker's change every flag is a line comment, notes included.
        self.publish_check(
            forge,
            repo,
            &pr,
            &checked.commit.to_string(),
            &checked.report,
            Severity::Note,
            story
                .verification
                .as_ref()
                .and_then(|v| v.status_line())
                .as_deref(),
        )
        .await?;
        Ok(if flagged {
            (StatusState::Flagged, Outcome::Flagged)
        } else {
            (StatusState::ReadyForReview, Outcome::Succeeded)
        })
    }

    /// Records a new phase and shows it.
    async fn enter(
        &self,
        ctx: &JobContext,
        phase: &str,
        story: &Story,
        status: &mut StatusCommentPoster,
    ) -> Result<(), JobError> {
        ctx.phase(phase).await;
        if ctx.cancelled() {
            return Err(JobError::transient("the job's lease was lost"));
        }
        let body = story.render(
            StatusState::Working {
                phase: phase.to_owned(),
            },
            None,
        );
        status.progress(&body).await?;
        Ok(())
    }

    /// Runs the worker, showing its last lines in the status comment as it goes. A lost lease,
    /// or `/forgeward cancel` from someone with write access, stops it.
    async fn run_worker(
        &self,
        ctx: &JobContext,
        spec: &crate::sandbox::SandboxSpec,
        forge: &dyn ForgeApi,
        request: &WorkRequest,
        story: &mut Story,
        status: &mut StatusCommentPoster,
    ) -> Result<WorkerRun, JobError> {
        let mut running = run::start_worker(&self.config, self.sandbox.clone(), spec.clone());
        let (log, cancel) = (running.log().clone(), running.canceller());
        let mut tick = tokio::time::interval(self.config.progress_interval);
        tick.tick().await;
        let mut cancel_poll = tokio::time::interval(CANCEL_POLL);
        let mut judged = HashSet::new();
        loop {
            tokio::select! {
                done = running.finished() => return done,
                _ = cancel_poll.tick(), if story.cancelled_by.is_none() => {
                    if let Some(who) = self.cancel_request(ctx, forge, request, &mut judged).await {
                        tracing::info!(by = %who, "cancelled on request");
                        story.cancelled_by = Some(who);
                        cancel.cancel();
                    }
                }
                _ = tick.tick() => {
                    if ctx.cancelled() {
                        cancel.cancel();
                    }
                    story.log_tail = log.tail(LOG_TAIL_LINES);
                    let body = story.render(StatusState::Working { phase: "working".to_owned() }, None);
                    if let Err(err) = status.progress(&body).await {
                        tracing::warn!(error = %err, "could not show the worker's progress");
                    }
                }
            }
        }
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

/// Opens the pull request for `spec.head_branch`, or brings the open one up to date.
pub(super) async fn upsert_pull_request(
    forge: &dyn ForgeApi,
    repo: &crate::forge::RepoName,
    spec: &PullRequestSpec,
) -> Result<PullRequest, JobError> {
    match forge.find_pull_request(repo, &spec.head_branch).await? {
        Some(pr) => Ok(forge.update_pull_request(repo, pr.number, spec).await?),
        None => Ok(forge.create_pull_request(repo, spec).await?),
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
