//! The check of a pull request's own diff (no worker, no sandbox, only reads, so fork pull
//! requests are checked too), and publishing any check's result on a pull request: the commit
//! status, review flags not already posted on an earlier push, and the `forgeward:flagged` label.

use git2::Oid;

use crate::detect::{Flag, Report, Severity};
use crate::forge::api::{
    CommitStatus, ForgeApi, PullRequest, Review, ReviewFlag, Side, StatusState as CommitState,
};
use crate::forge::{CommitSha, Number, Repo, RepoName, Thread};
use crate::git::{Mirror, change_request_refspec};
use crate::report;
use crate::store::{Job, Outcome};

use super::JobContext;
use super::pipeline::{JobError, Pipeline, blocking};
use super::run::check_commit;
use super::work::FLAGGED_LABEL;

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
        ctx.phase("cloning").await;
        let pr = forge.pull_request(name, number).await?;
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
        let mirrors = self.config.data_dir.join("mirrors");
        let (forge_kind, repo_name, base_sha) = (repo.forge, name.clone(), pr.base_sha.0.clone());
        ctx.phase("checking").await;
        let report = blocking(move || {
            let lock = super::run::mirror_lock(&mirrors, forge_kind, &repo_name);
            let _held = lock.lock().unwrap_or_else(|p| p.into_inner());
            let mirror = Mirror::open_or_create(&mirrors, forge_kind, &repo_name)?;
            let specs: Vec<&str> = refspecs.iter().map(String::as_str).collect();
            mirror.fetch(&url, Some(&credentials), &specs)?;
            let git = mirror.repo();
            let head = git.resolve(&local_ref)?;
            let base_tip = match Oid::from_str(&base_sha) {
                Ok(oid) if git.git2().find_commit(oid).is_ok() => oid,
                _ => git.resolve(&format!("refs/heads/{base_branch}"))?,
            };
            let base = git.merge_base(base_tip, head)?.unwrap_or(base_tip);
            check_commit(git, base, head)
        })
        .await?;

        ctx.phase("publishing").await;
        if ctx.cancelled() {
            return Err(JobError::transient("the job's lease was lost"));
        }
        let flagged = report.fails();
        // On a person's pull request only warnings and errors are line comments; notes are
        // listed in the review's body.
        self.publish_check(forge, name, pr, &head_sha, &report, Severity::Warning, None)
            .await?;
        Ok(if flagged {
            Outcome::Flagged
        } else {
            Outcome::Succeeded
        })
    }

    /// The commit status (its description ending with `verified`, what the bot's own test runs
    /// showed, where they ran), the review flags not posted before (as line comments from
    /// `comment_from` up, the others listed in the review's body), and the label.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn publish_check(
        &self,
        forge: &dyn ForgeApi,
        repo: &RepoName,
        pr: &PullRequest,
        head_sha: &str,
        report: &Report,
        comment_from: Severity,
        verified: Option<&str>,
    ) -> Result<(), JobError> {
        let flags = &report.flags;
        let failing = report.failing();
        let status = CommitStatus {
            state: if failing == 0 {
                CommitState::Success
            } else {
                CommitState::Failure
            },
            description: status_description(
                match (failing, flags.len()) {
                    (_, 0) => "no sign of sabotage".to_owned(),
                    (0, n) => format!(
                        "{n} note{} for a person to read",
                        if n == 1 { "" } else { "s" }
                    ),
                    (n, _) => format!(
                        "{n} review flag{} for a person to look at",
                        if n == 1 { "" } else { "s" }
                    ),
                },
                verified,
            ),
            target_url: Some(pr.web_url.clone()),
        };
        forge
            .set_commit_status(repo, &CommitSha(head_sha.to_owned()), &status)
            .await?;
        let new = new_flags(forge, repo, pr.number, flags).await?;
        if !new.is_empty() {
            post_flags(forge, repo, pr, flags, &new, comment_from).await?;
        }
        if failing == 0 {
            forge
                .remove_label(repo, Thread::PullRequest, pr.number, FLAGGED_LABEL)
                .await?;
        } else {
            forge
                .add_labels(
                    repo,
                    Thread::PullRequest,
                    pr.number,
                    &[FLAGGED_LABEL.to_owned()],
                )
                .await?;
        }
        Ok(())
    }
}

/// The flags not already on the pull request from an earlier push.
async fn new_flags<'f>(
    forge: &dyn ForgeApi,
    repo: &RepoName,
    number: Number,
    flags: &'f [Flag],
) -> Result<Vec<&'f Flag>, JobError> {
    if flags.is_empty() {
        return Ok(Vec::new());
    }
    let posted = forge.review_flags(repo, number).await?;
    let keys: Vec<&str> = posted
        .iter()
        .filter_map(|p| report::posted_flag_key(&p.body))
        .collect();
    Ok(flags
        .iter()
        .filter(|f| !keys.contains(&report::flag_key(f).as_str()))
        .collect())
}

/// One review with a line comment per new flag from `comment_from` up (on the base side of
/// the diff for something the change removed). Flags below it, and flags with no line, are
/// listed in the review's body. When the forge refuses a line (not in the diff it shows), the
/// review is posted again with every flag as a file-level note in its body.
async fn post_flags(
    forge: &dyn ForgeApi,
    repo: &RepoName,
    pr: &PullRequest,
    all: &[Flag],
    new: &[&Flag],
    comment_from: Severity,
) -> Result<(), JobError> {
    let commented =
        |f: &Flag| f.severity >= comment_from && (f.line.is_some() || f.removed_line.is_some());
    let file_level: Vec<&Flag> = new.iter().copied().filter(|f| !commented(f)).collect();
    let review = Review {
        body: report::render_review_body(all, &file_level),
        flags: new
            .iter()
            .filter(|f| commented(f))
            .map(|f| ReviewFlag {
                path: f.path.to_string(),
                line: f.line.or(f.removed_line),
                side: if f.line.is_none() {
                    Side::Old
                } else {
                    Side::New
                },
                body: report::render_flag_comment(f),
            })
            .collect(),
    };
    match forge.post_review(repo, pr, &review).await {
        Ok(()) => Ok(()),
        Err(err) if matches!(err.kind, crate::forge::ForgeErrorKind::Invalid(_)) => {
            tracing::warn!(error = %err, "a flagged line is not in the diff: posting file-level notes");
            let review = Review {
                body: report::render_review_body(all, new),
                flags: Vec::new(),
            };
            Ok(forge.post_review(repo, pr, &review).await?)
        }
        Err(err) => Err(err.into()),
    }
}

/// The most of a commit status's description GitHub keeps.
const STATUS_DESCRIPTION_MAX: usize = 140;

/// `verdict`, then what verification showed, cut to what a forge keeps.
fn status_description(verdict: String, verified: Option<&str>) -> String {
    let Some(verified) = verified else {
        return verdict;
    };
    let full = format!("{verdict} · {verified}");
    if full.chars().count() <= STATUS_DESCRIPTION_MAX {
        return full;
    }
    let cut: String = full.chars().take(STATUS_DESCRIPTION_MAX - 1).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_description_says_what_verification_showed_within_what_a_forge_keeps() {
        assert_eq!(
            status_description("no sign of sabotage".to_owned(), None),
            "no sign of sabotage"
        );
        assert_eq!(
            status_description(
                "1 review flag for a person to look at".to_owned(),
                Some("the base's tests: 0 of 1 pass on the change")
            ),
            "1 review flag for a person to look at · the base's tests: 0 of 1 pass on the change"
        );
        let long = status_description("x".repeat(100), Some(&"y".repeat(100)));
        assert_eq!(long.chars().count(), STATUS_DESCRIPTION_MAX);
        assert!(long.ends_with('…'));
    }
}
