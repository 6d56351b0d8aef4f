//! The real [`JobHandler`]: what a job does with the event it was made from.
//!
//! - The trigger label on an issue, or `/forgeward run` / `retry` on an issue or a pull request:
//!   a **worker job** ([`super::work`]): clone, sandbox, the worker, the bot's own diff and the
//!   detector, then a branch, a pull request, review flags, a commit status and the status
//!   comment.
//! - A pull request opened, given new commits or reopened, or `/forgeward check` on one: a
//!   **check** of its own diff ([`super::review`]): no worker, no sandbox, only reads.
//!
//! Who may start a job is asked of the forge here, before anything else: someone without write
//! access gets no job (and, when they asked in a comment, a short reply saying so).

use std::sync::Arc;

use crate::forge::api::ForgeApi;
use crate::forge::{Actor, Event, Forge, Number, Repo, Thread};
use crate::sandbox::Sandbox;
use crate::store::{Job, JobState, Outcome};
use crate::trigger::{Command, parse_command};

use super::config::PipelineConfig;
use super::error::JobError;
use super::{JobContext, JobHandler};

/// The forges the bot has credentials for.
#[derive(Clone, Default)]
pub struct Forges {
    pub github: Option<Arc<dyn ForgeApi>>,
    pub gitlab: Option<Arc<dyn ForgeApi>>,
    pub forgejo: Option<Arc<dyn ForgeApi>>,
    /// Where people read each forge's repositories (links in comments).
    pub github_web_url: String,
    pub gitlab_web_url: String,
    pub forgejo_web_url: String,
}

impl Forges {
    pub fn get(&self, forge: Forge) -> Option<&Arc<dyn ForgeApi>> {
        match forge {
            Forge::GitHub => self.github.as_ref(),
            Forge::GitLab => self.gitlab.as_ref(),
            Forge::Forgejo => self.forgejo.as_ref(),
        }
    }

    pub fn web_url(&self, forge: Forge) -> &str {
        match forge {
            Forge::GitHub => &self.github_web_url,
            Forge::GitLab => &self.gitlab_web_url,
            Forge::Forgejo => &self.forgejo_web_url,
        }
    }
}

/// The pipeline: one per runner process, shared by its jobs.
pub struct Pipeline {
    pub(super) forges: Forges,
    pub(super) sandbox: Arc<dyn Sandbox>,
    pub(super) config: PipelineConfig,
}

impl Pipeline {
    pub fn new(forges: Forges, sandbox: Arc<dyn Sandbox>, config: PipelineConfig) -> Pipeline {
        Pipeline {
            forges,
            sandbox,
            config,
        }
    }
}

/// What a worker job is asked to do, and for whom.
#[derive(Clone, Debug)]
pub struct WorkRequest {
    pub repo: Repo,
    /// The issue (or pull request) the job works on, and where its status comment goes.
    pub number: Number,
    pub thread: Thread,
    pub actor: Actor,
    /// The comment that asked for the job, to put 👀 on.
    pub comment_id: Option<u64>,
    /// More instructions given with `/forgeward run …`; after a question, the answer.
    pub instructions: String,
    /// The question the previous job of this target ended with, when this job is a
    /// `/forgeward run` after it: the task gives it back to the worker with the answer.
    pub earlier_question: Option<String>,
}

impl JobHandler for Pipeline {
    async fn run(&self, job: &Job, ctx: &JobContext) -> Outcome {
        match &job.event {
            Event::IssueLabeled {
                repo,
                number,
                actor,
                ..
            } => {
                let request = WorkRequest {
                    repo: repo.clone(),
                    number: *number,
                    thread: Thread::Issue,
                    actor: actor.clone(),
                    comment_id: None,
                    instructions: String::new(),
                    earlier_question: None,
                };
                self.gated(job, ctx, request, None).await
            }
            Event::Comment {
                repo,
                number,
                thread,
                comment_id,
                author,
                body,
            } => {
                let Some(command) = parse_command(body, &self.config.trigger.command) else {
                    return Outcome::Succeeded;
                };
                let request = WorkRequest {
                    repo: repo.clone(),
                    number: *number,
                    thread: *thread,
                    actor: author.clone(),
                    comment_id: Some(*comment_id),
                    instructions: match &command {
                        Command::Run { instructions } => instructions.clone(),
                        _ => String::new(),
                    },
                    earlier_question: None,
                };
                self.gated(job, ctx, request, Some(command)).await
            }
            Event::PullRequest { repo, number, .. } => {
                match self.check_pull_request(job, ctx, repo, *number).await {
                    Ok(outcome) => outcome,
                    Err(err) => err.outcome(),
                }
            }
            Event::Ping | Event::Installation { .. } => Outcome::Succeeded,
        }
    }
}

impl Pipeline {
    /// Asks the forge whether the person may trigger jobs, then runs what they asked for.
    async fn gated(
        &self,
        job: &Job,
        ctx: &JobContext,
        request: WorkRequest,
        command: Option<Command>,
    ) -> Outcome {
        let result = async {
            let forge = self.forge(request.repo.forge)?;
            let permission = forge.permission(&request.repo.name, &request.actor).await?;
            if !permission.may_trigger() {
                tracing::info!(actor = %request.actor.login, "no write access: no job");
                if request.comment_id.is_some() && self.config.reply_to_unauthorized {
                    let reply = format!(
                        "@{} only people with write access to this repository can ask forgeward \
                         for a job.",
                        request.actor.login
                    );
                    forge
                        .create_comment(&request.repo.name, request.thread, request.number, &reply)
                        .await?;
                }
                return Ok(Outcome::Cancelled);
            }
            if let Some(id) = request.comment_id
                && let Err(err) = forge
                    .react_eyes(&request.repo.name, request.thread, request.number, id)
                    .await
            {
                tracing::warn!(error = %err, "could not react to the comment");
            }
            match command {
                Some(Command::Check) => {
                    self.check_pull_request(job, ctx, &request.repo, request.number)
                        .await
                }
                Some(Command::Cancel) => {
                    // Jobs of one target run one at a time: a running job sees this request
                    // queued behind it and stops (its status comment says so). By the time this
                    // one runs, there is nothing left to do unless nothing was running.
                    let previous = ctx
                        .previous()
                        .await
                        .map_err(|e| JobError::transient(e.to_string()))?;
                    if previous.is_some_and(|p| p.state == JobState::Cancelled) {
                        return Ok(Outcome::Succeeded);
                    }
                    let reply = "forgeward: there is no job running here to cancel.";
                    forge
                        .create_comment(&request.repo.name, request.thread, request.number, reply)
                        .await?;
                    Ok(Outcome::Succeeded)
                }
                Some(Command::Run { .. }) => {
                    let mut request = request;
                    request.earlier_question = earlier_question(ctx).await?;
                    Ok(self.work(job, ctx, request).await)
                }
                _ => Ok(self.work(job, ctx, request).await),
            }
        }
        .await;
        result.unwrap_or_else(JobError::outcome)
    }

    pub(super) fn forge(&self, forge: Forge) -> Result<Arc<dyn ForgeApi>, JobError> {
        self.forges
            .get(forge)
            .cloned()
            .ok_or_else(|| JobError::fatal(format!("the bot has no credentials for {forge}")))
    }
}

/// The question the job just before this one on the same target ended with, if it did: the
/// answer is whatever this `/forgeward run` says. Only the job just before counts, so a question
/// is answered once, and a later trigger starts afresh.
async fn earlier_question(ctx: &JobContext) -> Result<Option<String>, JobError> {
    let previous = ctx
        .previous()
        .await
        .map_err(|e| JobError::transient(e.to_string()))?;
    Ok(previous.and_then(|job| job.question))
}

#[cfg(test)]
#[path = "pipeline_tests.rs"]
mod tests;
