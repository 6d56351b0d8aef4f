//! The GitHub REST client behind [`ForgeApi`]: comments, labels, reactions, permissions, files,
//! pull requests, reviews and the `forgeward` check (an App's check run, in
//! [`checks`](super::checks); a token's commit status), as GitHub's REST documentation describes
//! each endpoint; review threads, which only GraphQL has, in the `graphql` module.
//!
//! It authenticates either as a GitHub App (an installation token per repository, from
//! [`tokens`](super::tokens)) or with one configured token (classic or fine-grained). Requests go
//! through the shared [`Api`](crate::forge::http::Api), which retries and waits out rate
//! limits; this module builds each request, names the call in its errors, and turns GitHub's
//! JSON into the forge-neutral types. GitHub's JSON must not leave this module, and neither may
//! a token.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine as _;
use http::Method;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::app::{AppError, GithubApp};
use super::http::{Answer, Api, Retry, RetryPolicy, encode, next_link, repo_path};
use super::models::{
    BlobJson, CommentJson, FileJson, IssueJson, PermissionJson, PullJson, RepoJson, UserJson,
    review_body, status_state,
};
use super::runs::{FlaggedConclusion, OpenRuns};
use super::tokens::Installations;
use crate::forge::api::{
    CheckResult, CheckStart, Comment, CommitStatus, ForgeApi, ForgeError, ForgeErrorKind,
    ForgeResult, GitCredentials, Issue, Permission, PostedFlag, PullRequest, PullRequestSpec,
    Review, STATUS_CONTEXT,
};
use crate::forge::http::{decode, decode_value};
use crate::forge::webhook::Secret;
use crate::forge::{Actor, CommitSha, Forge, Number, RepoName, Thread};

/// GitHub cuts nothing itself: a status description longer than this is refused.
pub const MAX_DESCRIPTION_CHARS: usize = 140;

/// A page of a list: GitHub's largest.
const PER_PAGE: u32 = 100;

/// Pages followed at most for one list (100 000 items): a guard against a server whose `Link`
/// header never ends, far beyond any real thread.
const MAX_PAGES: usize = 1000;

/// The user name git presents with an installation token or a personal token.
const GIT_USER: &str = "x-access-token";

/// Where the GitHub API, its web pages and its git remotes are.
#[derive(Clone, Debug)]
pub struct GithubConfig {
    /// `https://api.github.com`, or GitHub Enterprise Server's `https://host/api/v3`.
    pub api_url: String,
    /// `https://github.com`: the base of links a person follows.
    pub web_url: String,
    /// The base of clone URLs, `{git_url}/{owner}/{repo}.git`: `https://github.com`, or a
    /// directory of bare repositories in tests (`file:///tmp/remotes`).
    pub git_url: String,
    pub auth: GithubAuth,
    /// What an App's check run concludes when the bot flags a commit.
    pub flagged_conclusion: FlaggedConclusion,
}

/// Whom a token belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenUser {
    pub login: String,
    /// A classic token's OAuth scopes (`repo`, `public_repo`, …); `None` for a token GitHub
    /// sends none for (fine-grained tokens: their permissions are per repository).
    pub scopes: Option<Vec<String>>,
}

/// How the client proves who it is.
#[derive(Clone)]
pub enum GithubAuth {
    /// As a GitHub App: an installation token for each repository, commit state as check runs.
    App(Arc<GithubApp>),
    /// With one token (a personal access token, classic or fine-grained): commit statuses.
    Token(Secret),
}

impl fmt::Debug for GithubAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GithubAuth::App(app) => f.debug_tuple("App").field(app).finish(),
            GithubAuth::Token(_) => f.write_str("Token(***)"),
        }
    }
}

enum Auth {
    App(Installations),
    Token(Secret),
}

/// The GitHub client.
pub struct Client {
    pub(super) api: Api,
    /// The GraphQL API beside it ([`graphql_url`](super::http::graphql_url)).
    pub(super) graphql: Api,
    web_url: String,
    git_url: String,
    auth: Auth,
    pub(super) flagged_conclusion: FlaggedConclusion,
    /// An App's check runs begun and not yet completed by this process.
    pub(super) open_runs: OpenRuns,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let auth = match &self.auth {
            Auth::App(installations) => format!("App({})", installations.app().id()),
            Auth::Token(_) => "Token(***)".to_owned(),
        };
        f.debug_struct("Client")
            .field("api", &self.api)
            .field("web_url", &self.web_url)
            .field("git_url", &self.git_url)
            .field("auth", &auth)
            .finish()
    }
}

impl Client {
    /// A client for `config` that retries as [`RetryPolicy::github`] says. Must be called
    /// inside a tokio runtime: the connection pool runs on it.
    pub fn new(config: GithubConfig) -> Result<Client, AppError> {
        Client::with_retry(config, Retry::new(RetryPolicy::github()))
    }

    /// A client that retries and sleeps as `retry` says.
    pub fn with_retry(config: GithubConfig, retry: Retry) -> Result<Client, AppError> {
        let graphql = super::http::graphql_api(&config.api_url, retry.clone())?;
        let api = super::http::api(&config.api_url, retry)?;
        let auth = match config.auth {
            GithubAuth::App(app) => Auth::App(Installations::new(app)),
            GithubAuth::Token(token) => Auth::Token(token),
        };
        Ok(Client {
            api,
            graphql,
            web_url: config.web_url.trim_end_matches('/').to_owned(),
            git_url: config.git_url.trim_end_matches('/').to_owned(),
            auth,
            flagged_conclusion: config.flagged_conclusion,
            open_runs: OpenRuns::default(),
        })
    }

    /// The web page of `repo`: `https://github.com/owner/repo`.
    pub fn web_url(&self, repo: &RepoName) -> String {
        format!("{}/{}", self.web_url, repo)
    }

    /// The App's id, when the client is one.
    pub(super) fn app_id(&self) -> Option<u64> {
        match &self.auth {
            Auth::App(installations) => Some(installations.app().id()),
            Auth::Token(_) => None,
        }
    }

    /// The token requests on `repo` carry.
    async fn token(&self, repo: &RepoName) -> ForgeResult<String> {
        match &self.auth {
            Auth::Token(token) => Ok(token.expose().to_owned()),
            Auth::App(installations) => Ok(installations
                .token(&self.api, repo)
                .await?
                .expose()
                .to_owned()),
        }
    }

    /// Sends one request on `repo`; `call` names it in errors as GitHub documents it.
    pub(super) async fn send(
        &self,
        repo: &RepoName,
        call: &'static str,
        method: Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> ForgeResult<Answer> {
        self.send_to(&self.api, repo, call, method, path, body)
            .await
    }

    /// [`send`](Client::send) to `api`: the REST API or the GraphQL API beside it.
    pub(super) async fn send_to(
        &self,
        api: &Api,
        repo: &RepoName,
        call: &'static str,
        method: Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> ForgeResult<Answer> {
        let token = self.token(repo).await?;
        let auth = super::http::Auth::bearer(&token).ok_or_else(|| {
            failure(
                repo,
                call,
                ForgeErrorKind::NotConfigured("the token is not a valid header value".to_owned()),
            )
        })?;
        api.send(method, path, &auth, body.as_ref())
            .await
            .map_err(|kind| failure(repo, call, kind))
    }

    /// Sends one request and decodes its JSON answer.
    pub(super) async fn fetch<T: DeserializeOwned>(
        &self,
        repo: &RepoName,
        call: &'static str,
        method: Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> ForgeResult<T> {
        let answer = self.send(repo, call, method, path, body).await?;
        decode(&answer.body).map_err(|kind| failure(repo, call, kind))
    }

    /// Every item of a paginated list, following `Link: rel="next"` on the API's own host.
    async fn fetch_all<T: DeserializeOwned>(
        &self,
        repo: &RepoName,
        call: &'static str,
        first: String,
    ) -> ForgeResult<Vec<T>> {
        let mut items = Vec::new();
        let mut path = first;
        for _ in 0..MAX_PAGES {
            let answer = self.send(repo, call, Method::GET, &path, None).await?;
            let page: Vec<T> = decode(&answer.body).map_err(|kind| failure(repo, call, kind))?;
            items.extend(page);
            match next_link(&answer.headers).and_then(|url| self.api.api_path(&url)) {
                Some(next) => path = next,
                None => return Ok(items),
            }
        }
        Err(failure(
            repo,
            call,
            ForgeErrorKind::Decode(format!("more than {MAX_PAGES} pages")),
        ))
    }

    async fn pull(&self, repo: &RepoName, number: Number) -> ForgeResult<PullRequest> {
        const CALL: &str = "GET /repos/{owner}/{repo}/pulls/{pull_number}";
        let path = format!("/repos/{}/pulls/{number}", repo_path(repo));
        let pull: PullJson = self.fetch(repo, CALL, Method::GET, &path, None).await?;
        Ok(pull.into_domain())
    }

    /// Whom the configured token belongs to (`GET /user`), and a classic token's scopes
    /// (`X-OAuth-Scopes`; a fine-grained token has none to show). For `forgeward doctor`; an
    /// App has no such user, and is [`ForgeErrorKind::NotConfigured`] here.
    pub async fn token_user(&self) -> Result<TokenUser, ForgeErrorKind> {
        let Auth::Token(token) = &self.auth else {
            return Err(ForgeErrorKind::NotConfigured(
                "a GitHub App has no user; GET /app describes it".to_owned(),
            ));
        };
        let auth = super::http::Auth::bearer(token.expose()).ok_or_else(|| {
            ForgeErrorKind::NotConfigured("the token is not a valid header value".to_owned())
        })?;
        let answer = self.api.send(Method::GET, "/user", &auth, None).await?;
        let user: UserJson = decode(&answer.body)?;
        let scopes = answer
            .headers
            .get("x-oauth-scopes")
            .and_then(|v| v.to_str().ok())
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            });
        Ok(TokenUser {
            login: user.login,
            scopes,
        })
    }

    /// The bytes of a blob, for files the contents API does not inline (over 1 MB).
    async fn blob(&self, repo: &RepoName, sha: &str) -> ForgeResult<Vec<u8>> {
        const CALL: &str = "GET /repos/{owner}/{repo}/git/blobs/{file_sha}";
        let path = format!("/repos/{}/git/blobs/{}", repo_path(repo), encode(sha));
        let blob: BlobJson = self.fetch(repo, CALL, Method::GET, &path, None).await?;
        match blob.encoding.as_str() {
            "base64" => decode_base64(&blob.content).map_err(|kind| failure(repo, CALL, kind)),
            "utf-8" | "utf8" => Ok(blob.content.into_bytes()),
            other => Err(failure(
                repo,
                CALL,
                ForgeErrorKind::Decode(format!("unknown blob encoding '{other}'")),
            )),
        }
    }
}

#[async_trait]
impl ForgeApi for Client {
    fn forge(&self) -> Forge {
        Forge::GitHub
    }

    fn git_url(&self, repo: &RepoName) -> String {
        format!("{}/{}.git", self.git_url, repo)
    }

    async fn git_credentials(&self, repo: &RepoName) -> ForgeResult<GitCredentials> {
        Ok(GitCredentials {
            username: GIT_USER.to_owned(),
            password: self.token(repo).await?,
        })
    }

    async fn default_branch(&self, repo: &RepoName) -> ForgeResult<String> {
        const CALL: &str = "GET /repos/{owner}/{repo}";
        let path = format!("/repos/{}", repo_path(repo));
        let found: RepoJson = self.fetch(repo, CALL, Method::GET, &path, None).await?;
        Ok(found.default_branch)
    }

    async fn issue(&self, repo: &RepoName, number: Number) -> ForgeResult<Issue> {
        const CALL: &str = "GET /repos/{owner}/{repo}/issues/{issue_number}";
        let path = format!("/repos/{}/issues/{number}", repo_path(repo));
        let issue: IssueJson = self.fetch(repo, CALL, Method::GET, &path, None).await?;
        Ok(Issue {
            number: Number(issue.number),
            title: issue.title,
            body: issue.body.unwrap_or_default(),
            web_url: issue.html_url,
        })
    }

    /// Pull requests are issues to GitHub: their conversation is the issue's comments.
    async fn comments(
        &self,
        repo: &RepoName,
        _thread: Thread,
        number: Number,
    ) -> ForgeResult<Vec<Comment>> {
        const CALL: &str = "GET /repos/{owner}/{repo}/issues/{issue_number}/comments";
        let path = format!(
            "/repos/{}/issues/{number}/comments?per_page={PER_PAGE}&page=1",
            repo_path(repo)
        );
        let comments: Vec<CommentJson> = self.fetch_all(repo, CALL, path).await?;
        Ok(comments.into_iter().map(CommentJson::into_domain).collect())
    }

    async fn create_comment(
        &self,
        repo: &RepoName,
        _thread: Thread,
        number: Number,
        body: &str,
    ) -> ForgeResult<Comment> {
        const CALL: &str = "POST /repos/{owner}/{repo}/issues/{issue_number}/comments";
        let path = format!("/repos/{}/issues/{number}/comments", repo_path(repo));
        let comment: CommentJson = self
            .fetch(
                repo,
                CALL,
                Method::POST,
                &path,
                Some(json!({ "body": body })),
            )
            .await?;
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
        const CALL: &str = "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}";
        let path = format!("/repos/{}/issues/comments/{comment_id}", repo_path(repo));
        self.send(
            repo,
            CALL,
            Method::PATCH,
            &path,
            Some(json!({ "body": body })),
        )
        .await?;
        Ok(())
    }

    /// GitHub answers 200 instead of 201 when the reaction is already there.
    async fn react_eyes(
        &self,
        repo: &RepoName,
        _thread: Thread,
        _number: Number,
        comment_id: u64,
    ) -> ForgeResult<()> {
        const CALL: &str = "POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions";
        let path = format!(
            "/repos/{}/issues/comments/{comment_id}/reactions",
            repo_path(repo)
        );
        let body = json!({ "content": "eyes" });
        self.send(repo, CALL, Method::POST, &path, Some(body))
            .await?;
        Ok(())
    }

    /// GitHub creates a label the repository does not have yet.
    async fn add_labels(
        &self,
        repo: &RepoName,
        _thread: Thread,
        number: Number,
        labels: &[String],
    ) -> ForgeResult<()> {
        const CALL: &str = "POST /repos/{owner}/{repo}/issues/{issue_number}/labels";
        if labels.is_empty() {
            return Ok(());
        }
        let path = format!("/repos/{}/issues/{number}/labels", repo_path(repo));
        let body = json!({ "labels": labels });
        self.send(repo, CALL, Method::POST, &path, Some(body))
            .await?;
        Ok(())
    }

    async fn remove_label(
        &self,
        repo: &RepoName,
        _thread: Thread,
        number: Number,
        label: &str,
    ) -> ForgeResult<()> {
        const CALL: &str = "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}";
        let path = format!(
            "/repos/{}/issues/{number}/labels/{}",
            repo_path(repo),
            encode(label)
        );
        match self.send(repo, CALL, Method::DELETE, &path, None).await {
            Ok(_) => Ok(()),
            Err(e) if e.kind == ForgeErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// GitHub's `role_name` names the role exactly (maintain, triage); `permission` folds those
    /// into write and read, and is what a custom role is read as.
    async fn permission(&self, repo: &RepoName, actor: &Actor) -> ForgeResult<Permission> {
        const CALL: &str = "GET /repos/{owner}/{repo}/collaborators/{username}/permission";
        let path = format!(
            "/repos/{}/collaborators/{}/permission",
            repo_path(repo),
            encode(&actor.login)
        );
        match self
            .fetch::<PermissionJson>(repo, CALL, Method::GET, &path, None)
            .await
        {
            Ok(found) => Ok(found.into_domain()),
            Err(e) if e.kind == ForgeErrorKind::NotFound => Ok(Permission::None),
            Err(e) => Err(e),
        }
    }

    /// A directory, a submodule or a symlink out of the repository is not a file: `None`.
    async fn read_file(
        &self,
        repo: &RepoName,
        path: &str,
        revision: &str,
    ) -> ForgeResult<Option<Vec<u8>>> {
        const CALL: &str = "GET /repos/{owner}/{repo}/contents/{path}";
        let file_path = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(encode)
            .collect::<Vec<_>>()
            .join("/");
        let url = format!(
            "/repos/{}/contents/{file_path}?ref={}",
            repo_path(repo),
            encode(revision)
        );
        let found: serde_json::Value = match self.fetch(repo, CALL, Method::GET, &url, None).await {
            Ok(found) => found,
            Err(e) if e.kind == ForgeErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        if found.is_array() {
            return Ok(None);
        }
        let file: FileJson = decode_value(found).map_err(|kind| failure(repo, CALL, kind))?;
        if file.kind != "file" {
            return Ok(None);
        }
        match (file.encoding.as_deref(), file.content.as_deref()) {
            (Some("base64"), Some(content)) if !(content.is_empty() && file.size > 0) => {
                decode_base64(content)
                    .map(Some)
                    .map_err(|kind| failure(repo, CALL, kind))
            }
            // Over 1 MB the contents API leaves `content` empty (encoding `none`).
            _ => self.blob(repo, &file.sha).await.map(Some),
        }
    }

    async fn pull_request(&self, repo: &RepoName, number: Number) -> ForgeResult<PullRequest> {
        self.pull(repo, number).await
    }

    async fn find_pull_request(
        &self,
        repo: &RepoName,
        head_branch: &str,
    ) -> ForgeResult<Option<PullRequest>> {
        const CALL: &str = "GET /repos/{owner}/{repo}/pulls";
        let owner = repo.0.split('/').next().unwrap_or_default();
        let path = format!(
            "/repos/{}/pulls?head={}&state=open&per_page={PER_PAGE}",
            repo_path(repo),
            encode(&format!("{owner}:{head_branch}"))
        );
        let pulls: Vec<PullJson> = self.fetch(repo, CALL, Method::GET, &path, None).await?;
        Ok(pulls.into_iter().next().map(PullJson::into_domain))
    }

    /// A pull request that already exists for the branch is a `Conflict`.
    async fn create_pull_request(
        &self,
        repo: &RepoName,
        spec: &PullRequestSpec,
    ) -> ForgeResult<PullRequest> {
        const CALL: &str = "POST /repos/{owner}/{repo}/pulls";
        let path = format!("/repos/{}/pulls", repo_path(repo));
        let body = json!({
            "title": spec.title,
            "head": spec.head_branch,
            "base": spec.base_branch,
            "body": spec.body,
            "draft": spec.draft,
        });
        let pull: PullJson = self
            .fetch(repo, CALL, Method::POST, &path, Some(body))
            .await?;
        Ok(pull.into_domain())
    }

    /// Sets the title and body. GitHub's REST API cannot change a pull request's draft state
    /// (only GraphQL's `markPullRequestReadyForReview` can), so `spec.draft` is not applied here.
    async fn update_pull_request(
        &self,
        repo: &RepoName,
        number: Number,
        spec: &PullRequestSpec,
    ) -> ForgeResult<PullRequest> {
        const CALL: &str = "PATCH /repos/{owner}/{repo}/pulls/{pull_number}";
        let path = format!("/repos/{}/pulls/{number}", repo_path(repo));
        let body = json!({ "title": spec.title, "body": spec.body });
        let pull: PullJson = self
            .fetch(repo, CALL, Method::PATCH, &path, Some(body))
            .await?;
        Ok(pull.into_domain())
    }

    /// The review threads, through GraphQL: REST's review comments do not say which thread
    /// each belongs to or whether it is resolved.
    async fn review_flags(&self, repo: &RepoName, number: Number) -> ForgeResult<Vec<PostedFlag>> {
        self.review_threads(repo, number).await
    }

    async fn resolve_flag(
        &self,
        repo: &RepoName,
        _number: Number,
        flag: &PostedFlag,
        _why: &str,
    ) -> ForgeResult<()> {
        self.resolve_thread(repo, &flag.thread).await
    }

    async fn post_review(
        &self,
        repo: &RepoName,
        pr: &PullRequest,
        review: &Review,
    ) -> ForgeResult<()> {
        const CALL: &str = "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews";
        let path = format!("/repos/{}/pulls/{}/reviews", repo_path(repo), pr.number);
        self.send(
            repo,
            CALL,
            Method::POST,
            &path,
            Some(review_body(pr, review)),
        )
        .await?;
        Ok(())
    }

    async fn start_check(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        check: &CheckStart,
    ) -> ForgeResult<()> {
        match &self.auth {
            Auth::App(_) => self.start_check_run(repo, sha, check).await,
            Auth::Token(_) => {
                self.set_commit_status(repo, sha, &check.commit_status())
                    .await
            }
        }
    }

    async fn finish_check(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        result: &CheckResult,
    ) -> ForgeResult<()> {
        match &self.auth {
            Auth::App(_) => self.finish_check_run(repo, sha, result).await,
            Auth::Token(_) => {
                self.set_commit_status(repo, sha, &result.commit_status())
                    .await
            }
        }
    }
}

impl Client {
    /// Sets the `forgeward` commit status on `sha` (what a check comes to with a token: a
    /// token cannot make check runs), its description cut to what GitHub keeps.
    pub async fn set_commit_status(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        status: &CommitStatus,
    ) -> ForgeResult<()> {
        const CALL: &str = "POST /repos/{owner}/{repo}/statuses/{sha}";
        let path = format!("/repos/{}/statuses/{}", repo_path(repo), encode(&sha.0));
        let mut body = json!({
            "state": status_state(status.state),
            "description": cut_chars(&status.description, MAX_DESCRIPTION_CHARS),
            "context": STATUS_CONTEXT,
        });
        if let Some(url) = &status.target_url {
            body["target_url"] = json!(url);
        }
        self.send(repo, CALL, Method::POST, &path, Some(body))
            .await?;
        Ok(())
    }
}

/// The first `max` characters of `text`.
pub(crate) fn cut_chars(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// GitHub's base64, which wraps lines.
fn decode_base64(content: &str) -> Result<Vec<u8>, ForgeErrorKind> {
    let compact: String = content.split_ascii_whitespace().collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map_err(|e| ForgeErrorKind::Decode(format!("content is not base64: {e}")))
}

pub(super) fn failure(repo: &RepoName, call: &str, kind: ForgeErrorKind) -> ForgeError {
    ForgeError {
        forge: Forge::GitHub,
        call: call.to_owned(),
        repo: repo.clone(),
        kind,
    }
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
