//! Publishing a job's result, in one place: the bot's commit pushed to its branch, the pull
//! request opened or brought up to date, and any check's result on a pull request — the commit
//! status, the review flags not already posted on an earlier push, and the `forgeward:flagged`
//! label.

use git2::Oid;

use super::error::JobError;
use super::run::Prepared;
use crate::detect::{Flag, Report, Severity};
use crate::forge::api::{
    CommitStatus, ForgeApi, GitCredentials, PullRequest, PullRequestSpec, Review, ReviewFlag, Side,
    StatusState as CommitState,
};
use crate::forge::{CommitSha, Number, RepoName, Thread};
use crate::git::Lease;
use crate::report;

/// The label put on a pull request the detector flagged, and taken off when a later push is
/// clean.
pub const FLAGGED_LABEL: &str = "forgeward:flagged";

/// Pushes the bot's commit to `branch`, expecting the branch where it was when the job fetched.
pub async fn push(
    prepared: &Prepared,
    url: &str,
    credentials: Option<GitCredentials>,
    commit: Oid,
    branch: &str,
) -> Result<(), JobError> {
    let (mirrors, forge, repo, url, branch) = (
        prepared.mirrors.clone(),
        prepared.forge,
        prepared.repo.clone(),
        url.to_owned(),
        branch.to_owned(),
    );
    let lease = match prepared.branch_tip {
        Some(tip) => Lease::At(tip),
        None => Lease::Absent,
    };
    mirrors
        .locked(forge, &repo, move |mirror| {
            // A local repository asks for no credentials: git2 never calls back for them.
            let credentials = credentials.unwrap_or(GitCredentials {
                username: String::new(),
                password: String::new(),
            });
            mirror.push(&url, &credentials, commit, &branch, lease)?;
            Ok(())
        })
        .await
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

/// The commit status (its description ending with `verified`, what the bot's own test runs
/// showed, where they ran), the review flags not posted before (as line comments from
/// `comment_from` up, the others listed in the review's body), and the label. The status goes
/// first: a pull request whose flags fail to post still carries its failing status.
#[allow(clippy::too_many_arguments)]
pub(super) async fn publish_check(
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
