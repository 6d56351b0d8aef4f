//! The record of a run that the job page reads: an [`Observer`] of the driver that writes what
//! the run does to the store as it happens — each phase as it begins, what it works on, the
//! commit it starts from, the bot's commit of the change with its flags, the pull request it
//! published. Every write goes under the job's lease (a runner that lost it writes nothing)
//! and is best effort: a write that fails is a warning, never the job's failure.

use std::time::Duration;

use async_trait::async_trait;

use super::JobContext;
use super::driver::{Observer, Phase, Target};
use super::error::JobError;
use super::run::{Checked, Prepared};
use super::verify::Verification;
use crate::detect::Flag;
use crate::forge::api::PullRequest;
use crate::store::{MAX_RUN_FLAGS, RunEvent, RunFlag};

/// The journal has nothing to do on progress: it asks for it as seldom as it can.
const NO_PROGRESS: Duration = Duration::from_secs(24 * 3600);

/// A forge job's run, recorded for its page.
pub(super) struct Journal<'a> {
    pub ctx: &'a JobContext,
}

#[async_trait]
impl Observer for Journal<'_> {
    fn interval(&self) -> Duration {
        NO_PROGRESS
    }

    async fn enter(&mut self, phase: Phase) -> Result<(), JobError> {
        self.ctx
            .record(RunEvent::Phase(phase.as_str().to_owned()))
            .await;
        Ok(())
    }

    async fn targeted(&mut self, target: &Target) {
        let event = RunEvent::Target {
            title: target.task.title.clone(),
            branch: target.branch.clone(),
        };
        self.ctx.record(event).await;
    }

    async fn prepared(&mut self, prepared: &Prepared) {
        self.ctx
            .record(RunEvent::Base(prepared.base.to_string()))
            .await;
    }

    async fn checked(&mut self, checked: &Checked) {
        let flags = &checked.report.flags;
        let event = RunEvent::Checked {
            commit: checked.commit.to_string(),
            flags: flags.iter().take(MAX_RUN_FLAGS).map(run_flag).collect(),
            total: flags.len(),
        };
        self.ctx.record(event).await;
    }

    async fn verified(&mut self, verification: &Verification) {
        if let Some(why) = verification.unjudged() {
            self.ctx.record(RunEvent::Unjudged(why)).await;
        }
    }

    async fn published(&mut self, pull_request: &PullRequest) {
        let event = RunEvent::Published {
            number: pull_request.number.0,
            url: pull_request.web_url.clone(),
        };
        self.ctx.record(event).await;
    }
}

/// A flag as the page shows it.
pub(super) fn run_flag(flag: &Flag) -> RunFlag {
    RunFlag {
        rule: flag.rule.id().to_owned(),
        severity: flag.severity.as_str().to_owned(),
        path: flag.path.display().into_owned(),
        line: flag.line,
        message: flag.message.clone(),
        snippet: flag.snippet.clone(),
    }
}
