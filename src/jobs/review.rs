//! The check of a pull request's own diff (no worker, no sandbox, only reads, so fork pull
//! requests are checked too); its result is published as a worker's is ([`super::publish`]),
//! and recorded for the job's page as a worker job's run is (its phases, the pull request's
//! title and branch, the commits checked, the flags; the pull request is the job's own target,
//! not one it published).

use git2::Oid;

use std::time::Instant;

use crate::detect::Severity;
use crate::forge::api::PullRequest;
use crate::forge::{Number, Repo};
use crate::git::{Head, change_request_refspec};
use crate::report::{self, ChangeSummary, ForgeLinks, StatusComment, StatusState};
use crate::store::{Job, MAX_RUN_FLAGS, Outcome, RunEvent};

use super::JobContext;
use super::driver::{Drive, Observer, Phase, Stop};
use super::error::JobError;
use super::journal::run_flag;
use super::mirrors::Mirrors;
use super::pipeline::Pipeline;
use super::publish::{CommitCheck, publish_check};
use super::run::{self, Checked};
use super::verify::Verification;
use super::work::CHECK_SUMMARY_MAX;
use crate::agents::{self, Authorship, CommitEvidence, Evidence, Signature};
use crate::check::Author;
use crate::config::pipeline::ReviewVerify;

/// The most commits of a pull request read for who wrote them: the newest, which an agent
/// pushing to a person's branch would have made.
const MAX_EVIDENCE_COMMITS: usize = 250;

/// Who wrote each commit of `base..head` (newest first, [`MAX_EVIDENCE_COMMITS`] at most).
fn commit_evidence(
    repo: &crate::git::Repo,
    base: Oid,
    head: Oid,
) -> Result<Vec<CommitEvidence>, JobError> {
    let git = repo.git2();
    let read =
        |e: git2::Error| JobError::transient(format!("reading the pull request's commits: {e}"));
    let mut walk = git.revwalk().map_err(read)?;
    walk.push(head).map_err(read)?;
    walk.hide(base).map_err(read)?;
    let signature = |s: git2::Signature<'_>| Signature {
        name: String::from_utf8_lossy(s.name_bytes()).into_owned(),
        email: String::from_utf8_lossy(s.email_bytes()).into_owned(),
    };
    let mut commits = Vec::new();
    for oid in walk.take(MAX_EVIDENCE_COMMITS) {
        let commit = git.find_commit(oid.map_err(read)?).map_err(read)?;
        commits.push(CommitEvidence {
            author: signature(commit.author()),
            committer: signature(commit.committer()),
            co_authors: agents::co_authors(&String::from_utf8_lossy(commit.message_bytes())),
        });
    }
    Ok(commits)
}

impl Pipeline {
    /// Checks a pull request's diff: from where it left its base branch to its head. The
    /// head's check is in progress while it runs; a check that cannot be done, and will not be
    /// tried again, ends as an error with the reason rather than in progress for ever.
    pub(super) async fn check_pull_request(
        &self,
        job: &Job,
        ctx: &JobContext,
        repo: &Repo,
        number: Number,
    ) -> Result<Outcome, JobError> {
        let started = Instant::now();
        let forge = self.forge(repo.forge)?;
        let name = &repo.name;
        enter(ctx, Phase::Cloning).await;
        let pr = forge.pull_request(name, number).await?;
        ctx.record(RunEvent::Target {
            title: pr.title.clone(),
            branch: pr.head_branch.clone(),
        })
        .await;
        let mut check =
            CommitCheck::start(forge.as_ref(), name, pr.head_sha.clone(), Some(&pr.web_url)).await;
        let result = self
            .check_steps(job, ctx, repo, number, &mut check, &pr, started)
            .await;
        if let Err(err) = &result
            && !(err.retry && job.attempts < job.max_attempts)
            && !ctx.cancelled()
        {
            check.fail(&err.message, Some(&pr.web_url)).await;
        }
        result
    }

    #[allow(clippy::too_many_arguments)]
    async fn check_steps(
        &self,
        job: &Job,
        ctx: &JobContext,
        repo: &Repo,
        number: Number,
        check: &mut CommitCheck<'_>,
        pr: &PullRequest,
        started: Instant,
    ) -> Result<Outcome, JobError> {
        let forge = check.forge();
        let name = &repo.name;
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
        let mirrors = Mirrors::at(&self.config.mirrors);
        let (forge_kind, repo_name, base_sha) = (repo.forge, name.clone(), pr.base_sha.0.clone());
        let (pr_author, pr_branch) = (pr.author.clone(), pr.head_branch.clone());
        let agents = self.config.review.agents();
        enter(ctx, Phase::Checking).await;
        let (report, base, head, authorship, repo_verify) = mirrors
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
                let evidence = Evidence {
                    author: pr_author,
                    branch: pr_branch,
                    commits: commit_evidence(git, base, head)?,
                };
                let authorship = agents::authorship(&evidence, &agents);
                // An agent's test edits are judged as a worker's are: every test rule is at
                // least a warning.
                let author = match authorship {
                    Authorship::Agent(_) => Author::Agent,
                    Authorship::Person => Author::Person,
                };
                let checked = crate::check::check_change(git, base, Head::Commit(head), author)?;
                let repo_verify = checked.config.review.verify;
                Ok((checked.report, base, head, authorship, repo_verify))
            })
            .await?;
        tracing::info!(%authorship, "pull request checked");
        ctx.record(RunEvent::Base(base.to_string())).await;

        // The repository's own tests on the pull request's head, as on a worker's change.
        let mode = self.config.review.verify.narrowed(repo_verify);
        let verify = match mode {
            ReviewVerify::Off => false,
            ReviewVerify::Agents => authorship.is_agent(),
            ReviewVerify::All => true,
        };
        let mut checked = Checked {
            commit: head,
            report,
        };
        let mut verification = None;
        if verify {
            let mut prepared =
                run::prepare_at(&self.config, repo.forge, name, base, job.id, job.attempts).await?;
            let drive = Drive {
                config: &self.config,
                sandbox: self.sandbox.clone(),
                store: Some(&ctx.store),
                job: job.id,
                attempt: job.attempts,
            };
            let mut observer = CheckObserver { ctx };
            verification = drive
                .verify_change(&mut prepared, &mut checked, &mut observer)
                .await?;
            if verification.is_none() {
                return Err(JobError::transient(
                    "the check was stopped while it verified",
                ));
            }
            enter(ctx, Phase::Checking).await;
        }
        let report = checked.report;
        let view = verification.as_ref().and_then(Verification::view);
        let unjudged = verification.as_ref().and_then(Verification::unjudged);
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
        let state = if flagged {
            StatusState::Flagged
        } else if unjudged.is_some() {
            StatusState::Unjudged
        } else {
            StatusState::ReadyForReview
        };
        // Rendered apart: the story borrows what cannot be held across an await.
        let summary = {
            let links = ForgeLinks {
                forge: repo.forge,
                web_url: self.forges.web_url(repo.forge).to_owned(),
                repo: name.clone(),
                sha: pr.head_sha.clone(),
            };
            let story = StatusComment {
                job: job.id,
                state,
                attempt: job.attempts,
                max_attempts: job.max_attempts,
                worker: None,
                exit: None,
                duration: Some(started.elapsed()),
                changes: Some(ChangeSummary {
                    files: report.files,
                    added: report.added_lines,
                    removed: report.removed_lines,
                }),
                flags: &report.flags,
                branch: None,
                pull_request: None,
                links: &links,
                log_tail: &[],
                error: unjudged.as_deref().filter(|_| !flagged),
                question: None,
                tests: None,
                verification: view.as_ref(),
                phases: &[],
                page: None,
                network: None,
                environment: None,
                unread: &report.warnings,
            };
            let summary = report::render_check_summary(&story, CHECK_SUMMARY_MAX);
            match &authorship {
                Authorship::Agent(why) => format!(
                    "{summary}\n\nChecked as an agent's pull request ({}): every test rule is \
                     at least a warning.\n",
                    crate::text::one_line(why)
                ),
                Authorship::Person => summary,
            }
        };
        // Only warnings and errors are line comments; notes are listed in the review's body.
        // An agent's pull request has its test rules raised to warnings already.
        let verified = view.as_ref().and_then(|v| v.status_line());
        publish_check(
            check,
            pr,
            &report,
            Severity::Warning,
            verified.as_deref(),
            unjudged.as_deref(),
            summary,
        )
        .await?;
        Ok(if flagged {
            Outcome::Flagged
        } else {
            Outcome::Succeeded
        })
    }
}

/// What a check's verification tells: each phase, in the job's row and in its run's record; a
/// verification that could not judge, in the record; a lost lease, as the reason to stop.
struct CheckObserver<'a> {
    ctx: &'a JobContext,
}

#[async_trait::async_trait]
impl Observer for CheckObserver<'_> {
    fn interval(&self) -> std::time::Duration {
        super::driver::STOP_POLL
    }

    async fn enter(&mut self, phase: Phase) -> Result<(), JobError> {
        enter(self.ctx, phase).await;
        Ok(())
    }

    async fn stop(&mut self) -> Option<Stop> {
        self.ctx.cancelled().then_some(Stop::LeaseLost)
    }

    async fn verified(&mut self, verification: &Verification) {
        if let Some(why) = verification.unjudged() {
            self.ctx.record(RunEvent::Unjudged(why)).await;
        }
    }
}

/// A phase of the check begins: in the job's row and in its run's record.
async fn enter(ctx: &JobContext, phase: Phase) {
    ctx.phase(phase.as_str()).await;
    ctx.record(RunEvent::Phase(phase.as_str().to_owned())).await;
}
