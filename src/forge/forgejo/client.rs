//! The Forgejo/Gitea REST v1 client: [`ForgeApi`] on Codeberg or a self-hosted Forgejo or Gitea,
//! with an access token (repository and issue scopes). Forgejo's JSON is read into the private
//! structs of `models` and stops there; callers see the forge-neutral types of `forge::api`.
//!
//! Every path, parameter and field is the one Forgejo's own API description names
//! (`tests/data/forgejo/swagger.v1.json`, Forgejo 11). Where Forgejo differs from the other
//! forges, the difference is handled here:
//! - a pull request is an issue: its conversation, labels and reactions are the issue's;
//! - labels are added by id, so a label the repository lacks is created first;
//! - a draft is a pull request whose title starts `WIP:` (Forgejo's default prefix);
//! - a review's line comments are created as a pending review and submitted with it; when
//!   Forgejo cannot place one (it answers 500, or 422), the pending review it kept is discarded
//!   and the review is posted again with every flag listed in its body.
//!
//! Sending, retrying and turning statuses into [`ForgeError`](crate::forge::api::ForgeError)s is
//! `transport`'s work; this file says which call means what. It keeps no state between calls
//! and never puts the token anywhere but the header and git's callback.

use std::fmt;

use async_trait::async_trait;
use http::Method;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::models::{
    CommentJson, IssueJson, LabelJson, PermissionJson, PullJson, RepositoryJson, ReviewCommentJson,
    ReviewJson, UserJson, cut_chars, file_path, permission_of, review_text, state_of, title_of,
    total_count,
};
use super::transport::{Call, Transport, Tried, decode};
use crate::forge::api::{
    CheckResult, CheckStart, Comment, CommitStatus, ForgeApi, ForgeError, ForgeErrorKind,
    ForgeResult, GitCredentials, Issue, Permission, PostedFlag, PullRequest, PullRequestSpec,
    RESOLVED_MARKER, Review, ReviewFlag, STATUS_CONTEXT, Side,
};
use crate::forge::http::{Retry, RetryPolicy, encode, next_link};
use crate::forge::webhook::Secret;
use crate::forge::{Actor, CommitSha, Forge, Number, RepoName, Thread};

/// Where a Forgejo or Gitea is and how the bot authenticates to it.
#[derive(Clone, Debug)]
pub struct ForgejoConfig {
    /// `https://codeberg.org`, or a self-hosted instance; the API is at `{url}/api/v1`.
    pub url: String,
    /// The base of clone URLs: `{git_url}/{owner}/{name}.git` (usually the same as `url`).
    pub git_url: String,
    /// Sent as `Authorization: token …`, and as git's password.
    pub token: Secret,
}

/// A Forgejo REST v1 client for one instance and one token.
pub struct Client {
    transport: Transport,
    git_url: String,
    token: Secret,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("git_url", &self.git_url)
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

/// The user name git presents. Forgejo reads a token from the password of HTTP basic
/// authentication and ignores the user name then (`services/auth/basic.go`), so no call is
/// needed to learn the token's user, and the token needs no `read:user` scope for git.
const GIT_USER: &str = "forgeward";

/// A page of a list: Forgejo's largest by default (`[api] MAX_RESPONSE_ITEMS = 50`); a larger
/// `limit` is cut to it anyway.
const LIMIT: usize = 50;

/// Pages read at most from one list (5,000 entries): a guard against a server whose pages
/// never end, far above any repository's labels or a pull request's reviews.
const MAX_PAGES: usize = 100;

/// Forgejo keeps a status description of any length (a TEXT column) and shows it whole in a
/// commit's status list; 255 characters keep it to a line there.
pub const MAX_DESCRIPTION_CHARS: usize = 255;

/// The colour of a label the bot creates: Forgejo requires one.
const LABEL_COLOR: &str = "#e99695";

/// Statuses with which Forgejo refuses a review it cannot place a line comment of: a 500 from
/// `CreateCodeComment` (its message hidden on a production instance), or a 422/400.
const REVIEW_REFUSALS: [u16; 3] = [400, 422, 500];

/// The state of a review not yet submitted.
const PENDING: &str = "PENDING";

impl Client {
    /// A client with the default retries. Fails only when no HTTP client can be built (no TLS
    /// roots), the URL is not absolute, or the token cannot be a header value.
    pub fn new(config: ForgejoConfig) -> Result<Client, String> {
        Client::with_retry(config, Retry::new(RetryPolicy::forgejo()))
    }

    /// A client that retries as `retry` says (tests use short waits).
    pub fn with_retry(config: ForgejoConfig, retry: Retry) -> Result<Client, String> {
        Ok(Client {
            transport: Transport::new(&config.url, &config.token, retry)?,
            git_url: config.git_url.trim_end_matches('/').to_owned(),
            token: config.token,
        })
    }

    /// Whom the token belongs to (`GET /user`): its login. The one call that names no
    /// repository, for `forgeward doctor`; a refusal is its kind (`Unauthorized` for a token
    /// Forgejo does not accept, `Forbidden` for one without the `read:user` scope, which the
    /// bot's other calls do not need).
    pub async fn token_user(&self) -> Result<String, ForgeErrorKind> {
        let none = RepoName(String::new());
        let call = Call::new(&none, Method::GET, "GET /user", "/user".to_owned());
        let user: UserJson = self.transport.json(&call).await.map_err(|e| e.kind)?;
        Ok(user.login)
    }
}

/// `/repos/{owner}/{repo}`, each part encoded.
fn repo_path(repo: &RepoName) -> String {
    format!("/repos/{}", crate::forge::http::repo_path(repo))
}

#[async_trait]
impl ForgeApi for Client {
    fn forge(&self) -> Forge {
        Forge::Forgejo
    }

    fn git_url(&self, repo: &RepoName) -> String {
        format!("{}/{}.git", self.git_url, repo.0)
    }

    async fn git_credentials(&self, _repo: &RepoName) -> ForgeResult<GitCredentials> {
        Ok(GitCredentials {
            username: GIT_USER.to_owned(),
            password: self.token.expose().to_owned(),
        })
    }

    async fn default_branch(&self, repo: &RepoName) -> ForgeResult<String> {
        let call = Call::new(
            repo,
            Method::GET,
            "GET /repos/{owner}/{repo}",
            repo_path(repo),
        );
        let found: RepositoryJson = self.transport.json(&call).await?;
        if found.default_branch.is_empty() {
            return Err(call.error(ForgeErrorKind::Decode(
                "the repository has no default branch".to_owned(),
            )));
        }
        Ok(found.default_branch)
    }

    async fn issue(&self, repo: &RepoName, number: Number) -> ForgeResult<Issue> {
        let path = format!("{}/issues/{number}", repo_path(repo));
        let call = Call::new(
            repo,
            Method::GET,
            "GET /repos/{owner}/{repo}/issues/{index}",
            path,
        );
        let issue: IssueJson = self.transport.json(&call).await?;
        Ok(Issue {
            number: Number(issue.number),
            title: issue.title,
            body: issue.body.unwrap_or_default(),
            web_url: issue.html_url,
        })
    }

    /// A pull request's conversation is its issue's comments. Forgejo answers every comment at
    /// once (the call takes no `page`); a `Link` to a next page is followed all the same.
    async fn comments(
        &self,
        repo: &RepoName,
        _thread: Thread,
        number: Number,
    ) -> ForgeResult<Vec<Comment>> {
        let path = format!("{}/issues/{number}/comments", repo_path(repo));
        let comments: Vec<CommentJson> = self
            .all(
                || {
                    Call::new(
                        repo,
                        Method::GET,
                        "GET /repos/{owner}/{repo}/issues/{index}/comments",
                        path.clone(),
                    )
                },
                false,
            )
            .await?;
        Ok(comments.into_iter().map(CommentJson::into_domain).collect())
    }

    async fn create_comment(
        &self,
        repo: &RepoName,
        _thread: Thread,
        number: Number,
        body: &str,
    ) -> ForgeResult<Comment> {
        let path = format!("{}/issues/{number}/comments", repo_path(repo));
        let call = Call::new(
            repo,
            Method::POST,
            "POST /repos/{owner}/{repo}/issues/{index}/comments",
            path,
        )
        .json(json!({ "body": body }));
        let comment: CommentJson = self.transport.json(&call).await?;
        Ok(comment.into_domain())
    }

    async fn update_comment(
        &self,
        repo: &RepoName,
        _thread: Thread,
        _number: Number,
        comment_id: u64,
        body: &str,
    ) -> ForgeResult<()> {
        let path = format!("{}/issues/comments/{comment_id}", repo_path(repo));
        let call = Call::new(
            repo,
            Method::PATCH,
            "PATCH /repos/{owner}/{repo}/issues/comments/{id}",
            path,
        )
        .json(json!({ "body": body }));
        self.transport.success(&call).await.map(drop)
    }

    /// Forgejo answers 200 instead of 201 when the reaction is already there.
    async fn react_eyes(
        &self,
        repo: &RepoName,
        _thread: Thread,
        _number: Number,
        comment_id: u64,
    ) -> ForgeResult<()> {
        let path = format!("{}/issues/comments/{comment_id}/reactions", repo_path(repo));
        let call = Call::new(
            repo,
            Method::POST,
            "POST /repos/{owner}/{repo}/issues/comments/{id}/reactions",
            path,
        )
        .json(json!({ "content": "eyes" }));
        self.transport.success(&call).await.map(drop)
    }

    /// Forgejo adds labels by id: each is found among the repository's labels, or created (and
    /// looked for again when the creation is refused: another job may have made it meanwhile).
    async fn add_labels(
        &self,
        repo: &RepoName,
        _thread: Thread,
        number: Number,
        labels: &[String],
    ) -> ForgeResult<()> {
        if labels.is_empty() {
            return Ok(());
        }
        let mut existing = self.repo_labels(repo).await?;
        let mut ids = Vec::with_capacity(labels.len());
        for name in labels {
            if let Some(label) = existing.iter().find(|label| label.name == *name) {
                ids.push(label.id);
                continue;
            }
            match self.create_label(repo, name).await {
                Ok(id) => ids.push(id),
                // Another job made it since the list was read.
                Err(err)
                    if matches!(
                        err.kind,
                        ForgeErrorKind::Conflict(_) | ForgeErrorKind::Invalid(_)
                    ) =>
                {
                    existing = self.repo_labels(repo).await?;
                    match existing.iter().find(|label| label.name == *name) {
                        Some(label) => ids.push(label.id),
                        None => return Err(err),
                    }
                }
                Err(err) => return Err(err),
            }
        }
        let path = format!("{}/issues/{number}/labels", repo_path(repo));
        let call = Call::new(
            repo,
            Method::POST,
            "POST /repos/{owner}/{repo}/issues/{index}/labels",
            path,
        )
        .json(json!({ "labels": ids }));
        self.transport.success(&call).await.map(drop)
    }

    /// The label is looked for among the issue's own; absent there, or gone by the time it is
    /// removed (Forgejo answers 404, or 422 for a label id it no longer has), is not an error.
    async fn remove_label(
        &self,
        repo: &RepoName,
        _thread: Thread,
        number: Number,
        label: &str,
    ) -> ForgeResult<()> {
        let path = format!("{}/issues/{number}/labels", repo_path(repo));
        let call = Call::new(
            repo,
            Method::GET,
            "GET /repos/{owner}/{repo}/issues/{index}/labels",
            path,
        );
        let on_issue: Vec<LabelJson> = match self.transport.json(&call).await {
            Ok(labels) => labels,
            Err(err) if err.kind == ForgeErrorKind::NotFound => return Ok(()),
            Err(err) => return Err(err),
        };
        let Some(found) = on_issue.iter().find(|l| l.name == label) else {
            return Ok(());
        };
        let path = format!("{}/issues/{number}/labels/{}", repo_path(repo), found.id);
        let call = Call::new(
            repo,
            Method::DELETE,
            "DELETE /repos/{owner}/{repo}/issues/{index}/labels/{id}",
            path,
        );
        match self.transport.success(&call).await {
            Ok(_) => Ok(()),
            Err(err)
                if matches!(
                    err.kind,
                    ForgeErrorKind::NotFound | ForgeErrorKind::Invalid(_)
                ) =>
            {
                Ok(())
            }
            Err(err) => Err(err),
        }
    }

    /// Forgejo names the access a person has: `none`, `read`, `write`, `admin` or `owner` (the
    /// repository's owner, or an owner of its organisation). A user Forgejo does not know is a
    /// 404. A 403 means the bot's own account may not read others' permissions (only an admin
    /// of the repository may): nobody is let trigger a job then, and the log says why.
    async fn permission(&self, repo: &RepoName, actor: &Actor) -> ForgeResult<Permission> {
        let path = format!(
            "{}/collaborators/{}/permission",
            repo_path(repo),
            encode(&actor.login)
        );
        let call = Call::new(
            repo,
            Method::GET,
            "GET /repos/{owner}/{repo}/collaborators/{collaborator}/permission",
            path,
        );
        match self.transport.json::<PermissionJson>(&call).await {
            Ok(found) => Ok(permission_of(found.permission.as_deref().unwrap_or(""))),
            Err(err) if err.kind == ForgeErrorKind::NotFound => Ok(Permission::None),
            Err(err) if matches!(err.kind, ForgeErrorKind::Forbidden(_)) => {
                tracing::warn!(
                    error = %err,
                    "Forgejo lets only an admin of the repository read others' permissions: \
                     the bot's account needs admin access to let anyone trigger a job"
                );
                Ok(Permission::None)
            }
            Err(err) => Err(err),
        }
    }

    /// The file's raw bytes; a directory or a submodule is a 404 there, so `None`.
    async fn read_file(
        &self,
        repo: &RepoName,
        path: &str,
        revision: &str,
    ) -> ForgeResult<Option<Vec<u8>>> {
        let url = format!("{}/raw/{}", repo_path(repo), file_path(path));
        let call = Call::new(
            repo,
            Method::GET,
            "GET /repos/{owner}/{repo}/raw/{filepath}",
            url,
        )
        .query("ref", revision);
        match self.transport.success(&call).await {
            Ok(answer) => Ok(Some(answer.body)),
            Err(err) if err.kind == ForgeErrorKind::NotFound => Ok(None),
            Err(err) => Err(err),
        }
    }

    async fn pull_request(&self, repo: &RepoName, number: Number) -> ForgeResult<PullRequest> {
        let path = format!("{}/pulls/{number}", repo_path(repo));
        let call = Call::new(
            repo,
            Method::GET,
            "GET /repos/{owner}/{repo}/pulls/{index}",
            path,
        );
        let pull: PullJson = self.transport.json(&call).await?;
        Ok(pull.into_domain())
    }

    /// Forgejo finds a pull request by its base and head branches, but the base is not known
    /// here: the open pull requests are listed and the one from `head_branch` of `repo` itself
    /// kept (a fork's branch of the same name is someone else's).
    async fn find_pull_request(
        &self,
        repo: &RepoName,
        head_branch: &str,
    ) -> ForgeResult<Option<PullRequest>> {
        let path = format!("{}/pulls", repo_path(repo));
        let pulls: Vec<PullJson> = self
            .all(
                || {
                    Call::new(
                        repo,
                        Method::GET,
                        "GET /repos/{owner}/{repo}/pulls",
                        path.clone(),
                    )
                    .query("state", "open")
                },
                true,
            )
            .await?;
        Ok(pulls
            .into_iter()
            .find(|pull| pull.head.branch == head_branch && pull.head_in(repo))
            .map(PullJson::into_domain))
    }

    /// A pull request that already exists for the branch is a `Conflict` (Forgejo's 409).
    async fn create_pull_request(
        &self,
        repo: &RepoName,
        spec: &PullRequestSpec,
    ) -> ForgeResult<PullRequest> {
        let path = format!("{}/pulls", repo_path(repo));
        let call =
            Call::new(repo, Method::POST, "POST /repos/{owner}/{repo}/pulls", path).json(json!({
                "head": spec.head_branch,
                "base": spec.base_branch,
                "title": title_of(spec),
                "body": spec.body,
            }));
        let pull: PullJson = self.transport.json(&call).await?;
        Ok(pull.into_domain())
    }

    /// Sets the title and body; the draft state goes with the title's `WIP:` prefix.
    async fn update_pull_request(
        &self,
        repo: &RepoName,
        number: Number,
        spec: &PullRequestSpec,
    ) -> ForgeResult<PullRequest> {
        let path = format!("{}/pulls/{number}", repo_path(repo));
        let call = Call::new(
            repo,
            Method::PATCH,
            "PATCH /repos/{owner}/{repo}/pulls/{index}",
            path,
        )
        .json(json!({ "title": title_of(spec), "body": spec.body }));
        let pull: PullJson = self.transport.json(&call).await?;
        Ok(pull.into_domain())
    }

    /// The line comments of every submitted review (a pending one is not posted yet).
    async fn review_flags(&self, repo: &RepoName, number: Number) -> ForgeResult<Vec<PostedFlag>> {
        let mut flags = Vec::new();
        for review in self.reviews(repo, number).await? {
            if review.state == PENDING || review.comments_count == Some(0) {
                continue;
            }
            for comment in self.review_comments(repo, number, review.id).await? {
                flags.push(PostedFlag {
                    thread: comment.id.to_string(),
                    path: comment.path,
                    line: line_of(comment.position).or(line_of(comment.original_position)),
                    resolved: comment.resolver.is_some()
                        || comment.body.starts_with(RESOLVED_MARKER),
                    body: comment.body,
                });
            }
        }
        Ok(flags)
    }

    /// Forgejo's API cannot resolve a conversation: the comment is edited to say it no longer
    /// holds, the flag folded away below, and read back as resolved by its first line.
    async fn resolve_flag(
        &self,
        repo: &RepoName,
        number: Number,
        flag: &PostedFlag,
        why: &str,
    ) -> ForgeResult<()> {
        const CALL: &str = "PATCH /repos/{owner}/{repo}/issues/comments/{id}";
        let id: u64 = flag.thread.parse().map_err(|_| ForgeError {
            forge: Forge::Forgejo,
            call: CALL.to_owned(),
            repo: repo.clone(),
            kind: ForgeErrorKind::Invalid(format!("'{}' is not a comment id", flag.thread)),
        })?;
        let body = format!(
            "{RESOLVED_MARKER}✅ **Resolved:** {why}\n\n<details><summary>The flag</summary>\n\n{}\n\n</details>\n",
            flag.body.trim_end()
        );
        self.update_comment(repo, Thread::PullRequest, number, id, &body)
            .await
    }

    /// One review (`event: COMMENT`) at the head commit, with a line comment per flag with a
    /// line and the flags without one listed in its body. When Forgejo refuses a line, the
    /// review is posted again with every flag in its body.
    async fn post_review(
        &self,
        repo: &RepoName,
        pr: &PullRequest,
        review: &Review,
    ) -> ForgeResult<()> {
        let placed: Vec<&ReviewFlag> = review.flags.iter().filter(|f| f.line.is_some()).collect();
        let unplaced: Vec<&ReviewFlag> = review.flags.iter().filter(|f| f.line.is_none()).collect();
        let body = review_text(&review.body, &unplaced);
        if placed.is_empty() {
            return self.submit_review(repo, pr, &body).await;
        }
        let call = review_call(repo, pr, &body, &placed);
        let refused = match self.transport.refusable(&call, &REVIEW_REFUSALS).await? {
            Tried::Done => return Ok(()),
            Tried::Refused(kind) => call.error(kind),
        };
        tracing::warn!(
            error = %refused,
            "Forgejo did not place a line comment: posting the flags in the review's body"
        );
        let bodies: Vec<&str> = placed.iter().map(|f| f.body.as_str()).collect();
        self.discard_pending(repo, pr.number, &bodies).await;
        let all: Vec<&ReviewFlag> = review.flags.iter().collect();
        self.submit_review(repo, pr, &review_text(&review.body, &all))
            .await
    }

    async fn start_check(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        check: &CheckStart,
    ) -> ForgeResult<()> {
        self.set_commit_status(repo, sha, &check.commit_status())
            .await
    }

    async fn finish_check(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        result: &CheckResult,
    ) -> ForgeResult<()> {
        self.set_commit_status(repo, sha, &result.commit_status())
            .await
    }
}

impl Client {
    /// Sets the `forgeward` commit status on `sha`: what a check of it comes to here.
    pub async fn set_commit_status(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        status: &CommitStatus,
    ) -> ForgeResult<()> {
        let path = format!("{}/statuses/{}", repo_path(repo), encode(&sha.0));
        let mut body = json!({
            "state": state_of(status.state),
            "context": STATUS_CONTEXT,
            "description": cut_chars(&status.description, MAX_DESCRIPTION_CHARS),
        });
        if let Some(url) = &status.target_url {
            body["target_url"] = json!(url);
        }
        let call = Call::new(
            repo,
            Method::POST,
            "POST /repos/{owner}/{repo}/statuses/{sha}",
            path,
        )
        .json(body);
        self.transport.success(&call).await.map(drop)
    }

    /// Every item of a list. A `Link: rel="next"` on the instance's own host is followed; a
    /// `paged` call (one that takes `page` and `limit`) is also asked for its next page while
    /// `X-Total-Count` says there are more (Forgejo sends no `Link` for some lists, labels and
    /// reviews among them), or, without that header, while pages come back full.
    async fn all<'r, T: DeserializeOwned>(
        &self,
        call: impl Fn() -> Call<'r>,
        paged: bool,
    ) -> ForgeResult<Vec<T>> {
        let mut items: Vec<T> = Vec::new();
        let mut next: Option<String> = None;
        for page in 1..=MAX_PAGES {
            let call = match next.take() {
                Some(path) => {
                    let first = call();
                    Call::new(first.repo, Method::GET, first.name, path)
                }
                None if paged => call()
                    .query("page", page.to_string())
                    .query("limit", LIMIT.to_string()),
                None => call(),
            };
            let answer = self.transport.success(&call).await?;
            let got: Vec<T> = decode(&call, &answer)?;
            let count = got.len();
            items.extend(got);
            if count == 0 {
                return Ok(items);
            }
            if let Some(path) =
                next_link(&answer.headers).and_then(|url| self.transport.api_path(&url))
            {
                next = Some(path);
                continue;
            }
            let more = match total_count(&answer.headers) {
                Some(total) => items.len() < total,
                None => count >= LIMIT,
            };
            if !(paged && more) {
                return Ok(items);
            }
        }
        let last = call();
        Err(last.error(ForgeErrorKind::Decode(format!(
            "more than {MAX_PAGES} pages"
        ))))
    }

    /// Every label of the repository (its organisation's are not listed there).
    async fn repo_labels(&self, repo: &RepoName) -> ForgeResult<Vec<LabelJson>> {
        let path = format!("{}/labels", repo_path(repo));
        self.all(
            || {
                Call::new(
                    repo,
                    Method::GET,
                    "GET /repos/{owner}/{repo}/labels",
                    path.clone(),
                )
            },
            true,
        )
        .await
    }

    /// Creates a label on the repository; its id.
    async fn create_label(&self, repo: &RepoName, name: &str) -> ForgeResult<u64> {
        let path = format!("{}/labels", repo_path(repo));
        let call = Call::new(
            repo,
            Method::POST,
            "POST /repos/{owner}/{repo}/labels",
            path,
        )
        .json(json!({ "name": name, "color": LABEL_COLOR }));
        let label: LabelJson = self.transport.json(&call).await?;
        Ok(label.id)
    }

    async fn reviews(&self, repo: &RepoName, number: Number) -> ForgeResult<Vec<ReviewJson>> {
        let path = format!("{}/pulls/{number}/reviews", repo_path(repo));
        self.all(
            || {
                Call::new(
                    repo,
                    Method::GET,
                    "GET /repos/{owner}/{repo}/pulls/{index}/reviews",
                    path.clone(),
                )
            },
            true,
        )
        .await
    }

    /// A review's line comments: Forgejo answers them all at once.
    async fn review_comments(
        &self,
        repo: &RepoName,
        number: Number,
        review: u64,
    ) -> ForgeResult<Vec<ReviewCommentJson>> {
        let path = format!(
            "{}/pulls/{number}/reviews/{review}/comments",
            repo_path(repo)
        );
        let call = Call::new(
            repo,
            Method::GET,
            "GET /repos/{owner}/{repo}/pulls/{index}/reviews/{id}/comments",
            path,
        );
        self.transport.json(&call).await
    }

    /// Posts a review of `body` alone; none at all when it is empty (Forgejo refuses a comment
    /// review with neither a body nor a line comment).
    async fn submit_review(
        &self,
        repo: &RepoName,
        pr: &PullRequest,
        body: &str,
    ) -> ForgeResult<()> {
        if body.trim().is_empty() {
            return Ok(());
        }
        let call = review_call(repo, pr, body, &[]);
        self.transport.success(&call).await.map(drop)
    }

    /// Deletes the pending review a refused review left behind: the comments Forgejo placed
    /// before the one it refused wait there, and would be submitted with the next review. Only
    /// a pending review holding nothing but these flags is deleted (an admin's token also
    /// sees other people's pending reviews). Best effort: what fails is logged.
    async fn discard_pending(&self, repo: &RepoName, number: Number, bodies: &[&str]) {
        let result: ForgeResult<()> = async {
            for review in self.reviews(repo, number).await? {
                if review.state != PENDING {
                    continue;
                }
                let comments = self.review_comments(repo, number, review.id).await?;
                if comments.is_empty() || !comments.iter().all(|c| bodies.contains(&&*c.body)) {
                    continue;
                }
                let path = format!("{}/pulls/{number}/reviews/{}", repo_path(repo), review.id);
                let call = Call::new(
                    repo,
                    Method::DELETE,
                    "DELETE /repos/{owner}/{repo}/pulls/{index}/reviews/{id}",
                    path,
                );
                self.transport.success(&call).await?;
            }
            Ok(())
        }
        .await;
        if let Err(err) = result {
            tracing::warn!(
                error = %err,
                "could not discard the pending review a refused review left"
            );
        }
    }
}

/// A review comment's line: Forgejo's 0 is none.
fn line_of(position: Option<u64>) -> Option<u32> {
    position
        .filter(|&line| line > 0)
        .and_then(|line| u32::try_from(line).ok())
}

/// `POST /repos/{owner}/{repo}/pulls/{index}/reviews`: a comment review at the head commit, a
/// line comment per flag, on the new side by `new_position` or the old by `old_position`.
fn review_call<'a>(
    repo: &'a RepoName,
    pr: &PullRequest,
    body: &str,
    flags: &[&ReviewFlag],
) -> Call<'a> {
    let comments: Vec<serde_json::Value> = flags
        .iter()
        .filter_map(|flag| {
            let line = flag.line?;
            let key = match flag.side {
                Side::New => "new_position",
                Side::Old => "old_position",
            };
            let mut comment = json!({ "path": flag.path, "body": flag.body });
            comment[key] = json!(line);
            Some(comment)
        })
        .collect();
    let path = format!("{}/pulls/{}/reviews", repo_path(repo), pr.number);
    Call::new(
        repo,
        Method::POST,
        "POST /repos/{owner}/{repo}/pulls/{index}/reviews",
        path,
    )
    .json(json!({
        "event": "COMMENT",
        "commit_id": pr.head_sha.0,
        "body": body,
        "comments": comments,
    }))
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
