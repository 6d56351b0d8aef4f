//! The small, forge-neutral surface the rest of the bot asks a forge through: comments, labels,
//! reactions, permissions, files at a revision, pull/merge requests, review flags and the check
//! of a commit (a check run or a commit status, as the forge's client decides). [`ForgeApi`] is implemented once per forge (`github::Client`, `gitlab::Client`,
//! `forgejo::Client`);
//! the logic built on top (finding the status comment again, upserting a pull request, not
//! repeating a flag) lives once, forge-neutral, beside it in `forge/` and in the job pipeline.
//!
//! Every method names the repository it acts on. Errors are [`ForgeError`]s: one line naming
//! the call and the repository, never a token.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;

use super::{Actor, CommitSha, Forge, Number, RepoName, Thread};

/// What a call on a forge came to.
pub type ForgeResult<T> = Result<T, ForgeError>;

/// A forge call that failed: which call, on which repository, and why. `Display` is one line
/// and never holds a token.
#[derive(Debug, thiserror::Error)]
#[error("{forge} {call} on {repo}: {kind}")]
pub struct ForgeError {
    pub forge: Forge,
    /// The call, as the API documents it: `POST /repos/{owner}/{repo}/pulls`.
    pub call: String,
    pub repo: RepoName,
    pub kind: ForgeErrorKind,
}

/// Why a forge call failed; callers match on it (a missing file is `NotFound`, a lost race on
/// a branch is `Conflict`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ForgeErrorKind {
    #[error("not found")]
    NotFound,
    /// The credentials were refused (401).
    #[error("unauthorized: the forge refused the bot's credentials")]
    Unauthorized,
    /// Authenticated, but not allowed (403 that is not a rate limit).
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// The state changed under the call (409, or a 422 saying it already exists).
    #[error("conflict: {0}")]
    Conflict(String),
    /// The forge refused the request as invalid (400/422): its message.
    #[error("invalid request: {0}")]
    Invalid(String),
    /// Still rate limited after the retries the client allows itself.
    #[error("rate limited, retry after {}s", .retry_after.as_secs())]
    RateLimited { retry_after: Duration },
    /// A 5xx that outlived the retries.
    #[error("server error {0}")]
    Server(u16),
    /// The forge could not be reached (after retries).
    #[error("network error: {0}")]
    Network(String),
    /// The answer did not have the documented shape.
    #[error("unexpected response: {0}")]
    Decode(String),
    /// The bot is not configured to act on this repository (no installation, no token).
    #[error("not configured: {0}")]
    NotConfigured(String),
}

/// A comment on an issue, pull request or merge request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comment {
    /// The forge's id of the comment (GitHub and Forgejo issue comment id, GitLab note id).
    pub id: u64,
    pub author: String,
    pub body: String,
}

/// What an issue says: what a job's task is made of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    pub number: Number,
    pub title: String,
    pub body: String,
    pub web_url: String,
}

/// A pull request (GitHub) or merge request (GitLab) as the bot needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PullRequest {
    pub number: Number,
    pub title: String,
    pub web_url: String,
    /// The branch it merges from, and the repository that branch lives in (a fork or this one).
    pub head_branch: String,
    pub head_repo: RepoName,
    pub head_sha: CommitSha,
    /// The branch it merges into.
    pub base_branch: String,
    /// The base commit the forge diffs against (GitHub `base.sha`, GitLab `diff_refs.base_sha`,
    /// Forgejo `merge_base`).
    pub base_sha: CommitSha,
    /// GitLab's `diff_refs.start_sha` (the target branch's tip when the diff was made); the base
    /// sha on GitHub; Forgejo's `base.sha` (the base branch's tip). Review flags on GitLab need it in their positions.
    pub start_sha: CommitSha,
    pub draft: bool,
    /// Who opened it, when the forge says (GitHub's `user`, GitLab's `author`, Forgejo's
    /// `user`), and whether the forge calls the account a bot.
    pub author: Option<crate::agents::Account>,
}

/// What the bot wants a pull/merge request for one of its branches to say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PullRequestSpec {
    pub head_branch: String,
    pub base_branch: String,
    pub title: String,
    pub body: String,
    pub draft: bool,
}

/// One flag to post as a line comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReviewFlag {
    pub path: String,
    /// The line on the new side of the diff. `None` when the line is not in the diff the forge
    /// shows: the flag goes into the review's body as a file-level note instead.
    pub line: Option<u32>,
    /// Which side of the diff `line` is on: the head's, or the base's for something the change
    /// removed (a deleted test).
    pub side: Side,
    /// The comment's Markdown (rendered by `report`).
    pub body: String,
}

/// A side of a diff.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The head: a line the change has.
    New,
    /// The base: a line the change removed.
    Old,
}

/// A review: one body and a line comment per flag, posted at one head commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Review {
    pub body: String,
    pub flags: Vec<ReviewFlag>,
}

/// A line comment the bot finds already on a pull/merge request: so that no flag is posted
/// twice, and so that the flags a later push undid are resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostedFlag {
    /// What the forge resolves it by: GitHub the review thread's node id, GitLab the
    /// discussion's id, Forgejo the comment's id.
    pub thread: String,
    pub path: String,
    pub line: Option<u32>,
    pub body: String,
    /// Resolved already, by a person or by the bot on an earlier push.
    pub resolved: bool,
}

/// What begins the body of a Forgejo line comment the bot marked resolved: Forgejo's API
/// cannot resolve a conversation, so the bot says so in the comment and reads it back.
pub const RESOLVED_MARKER: &str = "<!-- forgeward:resolved -->";

/// The state of the `forgeward` commit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusState {
    Pending,
    Success,
    Failure,
    Error,
}

/// The `forgeward` commit status on one commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitStatus {
    pub state: StatusState,
    /// One line; clients cut it to what the forge accepts (GitHub: 140 characters).
    pub description: String,
    pub target_url: Option<String>,
}

/// The name the bot's commit status and check run carry.
pub const STATUS_CONTEXT: &str = "forgeward";

/// The longest commit status description every forge keeps (GitHub: 140 characters; GitLab and
/// Forgejo take 255): a check's title is cut to it, with an ellipsis, where it becomes one.
pub const STATUS_DESCRIPTION_MAX: usize = 140;

/// How the bot's check of one commit came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckConclusion {
    /// Nothing flagged.
    Passed,
    /// Flags only below the repository's `fail_on` (notes): for a person to read, nothing that
    /// fails the check.
    Noted,
    /// Flags at or above the repository's `fail_on`.
    Flagged,
    /// The bot could not check the commit; the title says why.
    Error,
    /// Nothing flagged that fails the check, but the repository's tests could not be run on
    /// the change: neither a pass nor a failure (GitHub's `neutral`; an error where a forge
    /// has only commit statuses).
    Unjudged,
}

/// How much a flag weighs, as a check shows it (the detector's severity).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagLevel {
    Note,
    Warning,
    Error,
}

/// One flag of a check (GitHub: an annotation of the check run).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckFlag {
    pub path: String,
    /// The flagged line of the head; `None` for a flag on the whole file, or on something the
    /// change removed.
    pub line: Option<u32>,
    /// For something the change removed (a deleted test): its line in the base.
    pub base_line: Option<u32>,
    pub level: FlagLevel,
    /// The rule's id: `skip-marker`.
    pub rule: String,
    /// What the flag says, one line.
    pub message: String,
    /// What the rule looks for, for a reader who does not know it.
    pub details: String,
}

/// A check of a commit that has begun.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckStart {
    /// One line: what the bot is doing.
    pub title: String,
    /// Where a person reads more (the pull request).
    pub details_url: Option<String>,
}

/// What a check of a commit came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckResult {
    pub conclusion: CheckConclusion,
    /// One line: the verdict, and what the bot's own test runs showed.
    pub title: String,
    /// Markdown: the story of the check (the status comment's, for a worker's change). Clients
    /// cut it to what their forge keeps.
    pub summary: String,
    /// Every flag of the check.
    pub flags: Vec<CheckFlag>,
    pub details_url: Option<String>,
}

impl CheckStart {
    /// The check as a pending commit status, for the forges (and the GitHub token) that have
    /// no check runs.
    pub fn commit_status(&self) -> CommitStatus {
        CommitStatus {
            state: StatusState::Pending,
            description: status_description(&self.title),
            target_url: self.details_url.clone(),
        }
    }
}

impl CheckResult {
    /// The result as a commit status: success when nothing fails the check (notes included),
    /// failure on flags, error when the bot could not check; the title is the description.
    pub fn commit_status(&self) -> CommitStatus {
        CommitStatus {
            state: match self.conclusion {
                CheckConclusion::Passed | CheckConclusion::Noted => StatusState::Success,
                CheckConclusion::Flagged => StatusState::Failure,
                CheckConclusion::Error | CheckConclusion::Unjudged => StatusState::Error,
            },
            description: status_description(&self.title),
            target_url: self.details_url.clone(),
        }
    }
}

/// `title` on one line within [`STATUS_DESCRIPTION_MAX`] characters, an ellipsis where cut.
fn status_description(title: &str) -> String {
    let title = crate::text::one_line(title);
    if title.chars().count() <= STATUS_DESCRIPTION_MAX {
        return title;
    }
    let mut cut: String = title.chars().take(STATUS_DESCRIPTION_MAX - 1).collect();
    cut.push('…');
    cut
}

/// A person's role on a repository, forge-neutral, lowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Permission {
    None,
    Read,
    /// GitHub triage, GitLab Reporter.
    Triage,
    /// GitHub write, GitLab Developer (30): may trigger jobs.
    Write,
    /// GitHub maintain, GitLab Maintainer.
    Maintain,
    /// GitHub admin, GitLab Owner.
    Admin,
}

impl Permission {
    /// Whether someone with this permission may start, retry or cancel a job.
    pub fn may_trigger(self) -> bool {
        self >= Permission::Write
    }
}

/// How git authenticates to fetch and push: a user name and a password-like token, handed to
/// git2's credential callback only — never written into a URL, a config file or a log.
#[derive(Clone)]
pub struct GitCredentials {
    pub username: String,
    pub password: String,
}

impl fmt::Debug for GitCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GitCredentials")
            .field("username", &self.username)
            .field("password", &"***")
            .finish()
    }
}

/// Everything the bot asks of a forge. One implementation per forge; the fake forge in the
/// tests speaks every forge's API, so each implementation can be exercised end to end.
#[async_trait]
pub trait ForgeApi: Send + Sync {
    fn forge(&self) -> Forge;

    /// The URL git clones and pushes `repo` with (no credentials in it).
    fn git_url(&self, repo: &RepoName) -> String;

    /// The credentials git uses for `repo` (GitHub: `x-access-token` + an installation token or
    /// the configured token; GitLab: `oauth2` + the token; Forgejo: `forgeward` + the token).
    async fn git_credentials(&self, repo: &RepoName) -> ForgeResult<GitCredentials>;

    /// The repository's default branch.
    async fn default_branch(&self, repo: &RepoName) -> ForgeResult<String>;

    async fn issue(&self, repo: &RepoName, number: Number) -> ForgeResult<Issue>;

    /// Every comment on the issue, pull request or merge request, oldest first (all pages).
    async fn comments(
        &self,
        repo: &RepoName,
        thread: Thread,
        number: Number,
    ) -> ForgeResult<Vec<Comment>>;

    async fn create_comment(
        &self,
        repo: &RepoName,
        thread: Thread,
        number: Number,
        body: &str,
    ) -> ForgeResult<Comment>;

    async fn update_comment(
        &self,
        repo: &RepoName,
        thread: Thread,
        number: Number,
        comment_id: u64,
        body: &str,
    ) -> ForgeResult<()>;

    /// Puts 👀 on a comment (the one that triggered a job). Already there is not an error.
    async fn react_eyes(
        &self,
        repo: &RepoName,
        thread: Thread,
        number: Number,
        comment_id: u64,
    ) -> ForgeResult<()>;

    /// Adds labels (creating them on the repository when the forge needs that).
    async fn add_labels(
        &self,
        repo: &RepoName,
        thread: Thread,
        number: Number,
        labels: &[String],
    ) -> ForgeResult<()>;

    /// Removes a label; absent is not an error.
    async fn remove_label(
        &self,
        repo: &RepoName,
        thread: Thread,
        number: Number,
        label: &str,
    ) -> ForgeResult<()>;

    /// What `actor` may do on `repo`. Someone the forge does not know there is `Permission::None`.
    async fn permission(&self, repo: &RepoName, actor: &Actor) -> ForgeResult<Permission>;

    /// A file's bytes at a revision (branch, tag or sha); `None` when it does not exist there.
    async fn read_file(
        &self,
        repo: &RepoName,
        path: &str,
        revision: &str,
    ) -> ForgeResult<Option<Vec<u8>>>;

    async fn pull_request(&self, repo: &RepoName, number: Number) -> ForgeResult<PullRequest>;

    /// The open pull/merge request from `head_branch` (a branch of `repo` itself), if any.
    async fn find_pull_request(
        &self,
        repo: &RepoName,
        head_branch: &str,
    ) -> ForgeResult<Option<PullRequest>>;

    async fn create_pull_request(
        &self,
        repo: &RepoName,
        spec: &PullRequestSpec,
    ) -> ForgeResult<PullRequest>;

    /// Sets the title and body (and draft state, where the forge allows changing it).
    async fn update_pull_request(
        &self,
        repo: &RepoName,
        number: Number,
        spec: &PullRequestSpec,
    ) -> ForgeResult<PullRequest>;

    /// The line comments already on a pull/merge request (every author; callers filter).
    async fn review_flags(&self, repo: &RepoName, number: Number) -> ForgeResult<Vec<PostedFlag>>;

    /// Marks one of the bot's line comments resolved: the flag it carries no longer holds;
    /// `why` says so in a line ("no longer holds at `1a2b3c4`"). GitHub resolves the review
    /// thread (GraphQL's `resolveReviewThread`), GitLab the discussion; Forgejo, whose API
    /// cannot resolve a conversation, edits the comment to begin with [`RESOLVED_MARKER`] and
    /// `why`, the flag's text kept below.
    async fn resolve_flag(
        &self,
        repo: &RepoName,
        number: Number,
        flag: &PostedFlag,
        why: &str,
    ) -> ForgeResult<()>;

    /// Posts a review on `pr` at its `head_sha`: GitHub one review (`event: COMMENT`) holding a
    /// line comment per flag with a line; GitLab a discussion per such flag with a text position,
    /// and one note with the body; Forgejo one review (`event: COMMENT`) with a line comment per
    /// such flag, posted again with them in its body when Forgejo refuses one. Flags without a
    /// line are listed in the body by the client.
    async fn post_review(
        &self,
        repo: &RepoName,
        pr: &PullRequest,
        review: &Review,
    ) -> ForgeResult<()>;

    /// The `forgeward` check of `sha` has begun. GitHub as an App: a check run in progress (an
    /// unfinished one of the App's on the commit, left by an earlier try, is taken up again);
    /// else a pending commit status.
    async fn start_check(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        check: &CheckStart,
    ) -> ForgeResult<()>;

    /// The `forgeward` check of `sha` has ended. GitHub as an App: the check run completed with
    /// its conclusion, title and summary, and an annotation per flag; else a commit status
    /// ([`CheckResult::commit_status`]).
    async fn finish_check(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        result: &CheckResult,
    ) -> ForgeResult<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(conclusion: CheckConclusion, title: &str) -> CheckResult {
        CheckResult {
            conclusion,
            title: title.to_owned(),
            summary: "the story".to_owned(),
            flags: Vec::new(),
            details_url: Some("https://forge.example/pr/1".to_owned()),
        }
    }

    #[test]
    fn a_check_as_a_commit_status_fails_only_on_flags_and_errors() {
        let states: Vec<StatusState> = [
            CheckConclusion::Passed,
            CheckConclusion::Noted,
            CheckConclusion::Flagged,
            CheckConclusion::Error,
        ]
        .into_iter()
        .map(|c| result(c, "t").commit_status().state)
        .collect();
        assert_eq!(
            states,
            [
                StatusState::Success,
                StatusState::Success,
                StatusState::Failure,
                StatusState::Error
            ]
        );
        let start = CheckStart {
            title: "checking the change".to_owned(),
            details_url: None,
        };
        assert_eq!(
            start.commit_status(),
            CommitStatus {
                state: StatusState::Pending,
                description: "checking the change".to_owned(),
                target_url: None,
            }
        );
    }

    #[test]
    fn the_title_becomes_a_description_every_forge_keeps() {
        let status = result(CheckConclusion::Flagged, &"x".repeat(300)).commit_status();
        assert_eq!(status.description.chars().count(), STATUS_DESCRIPTION_MAX);
        assert!(status.description.ends_with('…'));
        assert_eq!(
            status.target_url.as_deref(),
            Some("https://forge.example/pr/1")
        );
        let status = result(CheckConclusion::Passed, "two\nlines").commit_status();
        assert!(!status.description.contains('\n'), "{}", status.description);
    }
}
