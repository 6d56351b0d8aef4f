//! The check of a pull request's own diff (no worker, no sandbox, only reads, so fork pull
//! requests are checked too); its result is published as a worker's is ([`super::publish`]),
//! and recorded for the job's page as a worker job's run is (its phases, the pull request's
//! title and branch, the commits checked, the flags; the pull request is the job's own target,
//! not one it published).

use git2::Oid;

use crate::detect::Severity;
use crate::forge::api::{CommitStatus, ForgeApi, PullRequest, StatusState as CommitState};
use crate::forge::{Number, Repo};
use crate::git::change_request_refspec;
use crate::store::{Job, MAX_RUN_FLAGS, Outcome, RunEvent};

use super::JobContext;
use super::driver::Phase;
use super::error::JobError;
use super::journal::run_flag;
use super::mirrors::Mirrors;
use super::pipeline::Pipeline;
use super::publish::publish_check;
use super::run::check_commit;

impl Pipeline {
    /// Checks a pull request's diff: from where it left its base branch to its head. The
    /// commit status is pending while it runs; a check that cannot be done, and will not be
    /// tried again, leaves it at `error` with the reason rather than pending forever.
    pub(super) async fn check_pull_request(
        &self,
        job: &Job,
        ctx: &JobContext,
        repo: &Repo,
        number: Number,
    ) -> Result<Outcome, JobError> {
        let forge = self.forge(repo.forge)?;
        let name = &repo.name;
        enter(ctx, Phase::Cloning).await;
        let pr = forge.pull_request(name, number).await?;
        ctx.record(RunEvent::Target {
            title: pr.title.clone(),
            branch: pr.head_branch.clone(),
        })
        .await;
        let pending = CommitStatus {
            state: CommitState::Pending,
            description: "checking the change".to_owned(),
            target_url: None,
        };
        forge
            .set_commit_status(name, &pr.head_sha, &pending)
            .await?;
        let result = self
            .check_steps(ctx, repo, number, forge.as_ref(), &pr)
            .await;
        if let Err(err) = &result
            && !(err.retry && job.attempts < job.max_attempts)
            && !ctx.cancelled()
        {
            let status = CommitStatus {
                state: CommitState::Error,
                description: format!("forgeward could not check the change: {}", err.message),
                target_url: None,
            };
            if let Err(e) = forge.set_commit_status(name, &pr.head_sha, &status).await {
                tracing::warn!(error = %e, "could not report the failed check");
            }
        }
        result
    }

    async fn check_steps(
        &self,
        ctx: &JobContext,
        repo: &Repo,
        number: Number,
        forge: &dyn ForgeApi,
        pr: &PullRequest,
    ) -> Result<Outcome, JobError> {
        let name = &repo.name;
        let head_sha = pr.head_sha.0.clone();

        let url = forge.git_url(name);
        let credentials = forge.git_credentials(name).await?;
        let head_refspec = change_request_refspec(repo.forge, number.0);
        // The refspec fetches the head into the same name in the mirror.
        let local_ref = head_refspec
            .rsplit_once(':')
            .map_or_else(String::new, |(_, dst)| dst.to_owned());
        let base_branch = pr.base_branch.clone();
        let refspecs = [
            format!("+refs/heads/{base_branch}:refs/heads/{base_branch}"),
            head_refspec,
        ];
        let mirrors = Mirrors::under(&self.config.data_dir);
        let (forge_kind, repo_name, base_sha) = (repo.forge, name.clone(), pr.base_sha.0.clone());
        enter(ctx, Phase::Checking).await;
        let (report, base, head) = mirrors
            .locked(forge_kind, &repo_name, move |mirror| {
                let specs: Vec<&str> = refspecs.iter().map(String::as_str).collect();
                mirror.fetch(&url, Some(&credentials), &specs)?;
                let git = mirror.repo();
                let head = git.resolve(&local_ref)?;
                let base_tip = match Oid::from_str(&base_sha) {
                    Ok(oid) if git.git2().find_commit(oid).is_ok() => oid,
                    _ => git.resolve(&format!("refs/heads/{base_branch}"))?,
                };
                let base = git.merge_base(base_tip, head)?.unwrap_or(base_tip);
                Ok((check_commit(git, base, head)?, base, head))
            })
            .await?;
        ctx.record(RunEvent::Base(base.to_string())).await;
        let flags = &report.flags;
        ctx.record(RunEvent::Checked {
            commit: head.to_string(),
            flags: flags.iter().take(MAX_RUN_FLAGS).map(run_flag).collect(),
            total: flags.len(),
        })
        .await;

        enter(ctx, Phase::Publishing).await;
        if ctx.cancelled() {
            return Err(JobError::transient("the job's lease was lost"));
        }
        let flagged = report.fails();
        // On a person's pull request only warnings and errors are line comments; notes are
        // listed in the review's body.
        publish_check(forge, name, pr, &head_sha, &report, Severity::Warning, None).await?;
        Ok(if flagged {
            Outcome::Flagged
        } else {
            Outcome::Succeeded
        })
    }
}

/// A phase of the check begins: in the job's row and in its run's record.
async fn enter(ctx: &JobContext, phase: Phase) {
    ctx.phase(phase.as_str()).await;
    ctx.record(RunEvent::Phase(phase.as_str().to_owned())).await;
}
