//! The GitLab REST v4 client: [`ForgeApi`] on gitlab.com or a self-managed GitLab, with a
//! project, group or personal access token. GitLab's JSON is read into the private structs
//! below and stops here; callers see the forge-neutral types of `forge::api`.
//!
//! A project is named by its full path, URL-encoded, wherever GitLab takes a project id, so the
//! client needs no lookup of numeric ids. Sending, retrying and turning statuses into
//! [`ForgeError`](crate::forge::api::ForgeError)s is `transport`'s work; this file says which call means what. It keeps no
//! state between calls (what to find again, such as the status comment, is found by callers
//! through these calls) and never puts the token anywhere but the header and git's callback.

use async_trait::async_trait;
use base64::Engine as _;
use reqwest::Method;
use serde::Deserialize;
use serde_json::json;

use super::transport::{Call, Transport, decode};
use crate::forge::api::{
    CheckResult, CheckStart, Comment, CommitStatus, ForgeApi, ForgeErrorKind, ForgeResult,
    GitCredentials, Issue, Permission, PostedFlag, PullRequest, PullRequestSpec, Review,
    ReviewFlag, STATUS_CONTEXT, Side, StatusState,
};
use crate::forge::http::encode as encode_segment;
use crate::forge::http::{Retry, RetryPolicy};
use crate::forge::webhook::Secret;
use crate::forge::{Actor, CommitSha, Forge, Number, RepoName, Thread};

/// Where a GitLab is and how the bot authenticates to it.
#[derive(Clone, Debug)]
pub struct GitlabConfig {
    /// `https://gitlab.com`, or a self-managed instance; the API is at `{url}/api/v4`.
    pub url: String,
    /// The base of clone URLs: `{git_url}/{path}.git` (usually the same as `url`).
    pub git_url: String,
    /// Sent as `PRIVATE-TOKEN`, and as git's password for the user `oauth2`.
    pub token: Secret,
}

/// A GitLab REST v4 client for one instance and one token.
pub struct Client {
    transport: Transport,
    git_url: String,
    token: Secret,
}

/// The user name git authenticates as with an access token.
const GIT_USER: &str = "oauth2";

/// GitLab's largest page: the fewest calls to read a long thread.
const PER_PAGE: &str = "100";

/// Pages read at most from one list (10,000 entries): a guard against a forge whose
/// `x-next-page` never ends, far above any thread a person reads.
const MAX_PAGES: u32 = 100;

/// GitLab keeps at most this many characters of a commit status's description.
const MAX_DESCRIPTION_LEN: usize = 255;

/// The prefix that makes a merge request a draft, on creation and on every title update.
const DRAFT_PREFIX: &str = "Draft: ";

impl Client {
    /// A client with the default retries. Fails only when no HTTP client can be built (no TLS
    /// roots), which is a broken installation, not a GitLab problem.
    pub fn new(config: GitlabConfig) -> Result<Client, String> {
        Client::with_retry(config, Retry::new(RetryPolicy::gitlab()))
    }

    /// A client that retries as `retry` says (tests use short waits).
    pub fn with_retry(config: GitlabConfig, retry: Retry) -> Result<Client, String> {
        Ok(Client {
            transport: Transport::new(&config.url, &config.token, retry)?,
            git_url: config.git_url.trim_end_matches('/').to_owned(),
            token: config.token,
        })
    }

    /// Whom the token belongs to (`GET /user`): its user name. The one call that names no
    /// project, for `forgeward doctor`; a refusal is its kind (`Unauthorized` for a token
    /// GitLab does not accept, `Forbidden` for one without the `api` or `read_user` scope).
    pub async fn token_user(&self) -> Result<String, ForgeErrorKind> {
        let none = RepoName(String::new());
        let call = Call::new(&none, Method::GET, "GET /user", "/user".to_owned());
        let user: UserJson = self.transport.json(&call).await.map_err(|e| e.kind)?;
        Ok(user.username)
    }
}

fn project(repo: &RepoName) -> String {
    format!("/projects/{}", encode_segment(&repo.0))
}

/// `issues` or `merge_requests`: where a thread's notes and labels live.
fn noteable(thread: Thread) -> &'static str {
    match thread {
        Thread::Issue => "issues",
        Thread::PullRequest => "merge_requests",
    }
}

#[derive(Deserialize)]
struct ProjectJson {
    path_with_namespace: String,
    default_branch: Option<String>,
}

#[derive(Deserialize)]
struct IssueJson {
    iid: u64,
    title: String,
    description: Option<String>,
    web_url: String,
}

#[derive(Deserialize)]
struct UserJson {
    username: String,
}

#[derive(Deserialize)]
struct NoteJson {
    id: u64,
    body: String,
    author: UserJson,
    #[serde(default)]
    system: bool,
    position: Option<PositionJson>,
    /// Set on a note of a resolvable discussion.
    #[serde(default)]
    resolved: Option<bool>,
}

#[derive(Deserialize)]
struct PositionJson {
    new_path: Option<String>,
    old_path: Option<String>,
    new_line: Option<u32>,
}

#[derive(Deserialize)]
struct DiscussionJson {
    id: String,
    notes: Vec<NoteJson>,
}

#[derive(Deserialize)]
struct MemberJson {
    access_level: u32,
}

#[derive(Deserialize)]
struct FileJson {
    encoding: String,
    content: String,
}

#[derive(Deserialize)]
struct DiffRefsJson {
    base_sha: Option<String>,
    start_sha: Option<String>,
}

#[derive(Deserialize)]
struct MergeRequestJson {
    iid: u64,
    title: String,
    web_url: String,
    source_branch: String,
    target_branch: String,
    project_id: u64,
    /// `null` when the source project was deleted.
    source_project_id: Option<u64>,
    sha: Option<String>,
    /// `null` until GitLab has computed the diff of a new merge request.
    diff_refs: Option<DiffRefsJson>,
    #[serde(default)]
    draft: bool,
    author: Option<MergeRequestAuthorJson>,
}

/// A merge request's author; `bot` where GitLab says (its bot users: project and group access
/// tokens, service accounts).
#[derive(Deserialize)]
struct MergeRequestAuthorJson {
    username: String,
    #[serde(default)]
    bot: bool,
}

#[async_trait]
impl ForgeApi for Client {
    fn forge(&self) -> Forge {
        Forge::GitLab
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
        let call = Call::new(repo, Method::GET, "GET /projects/:id", project(repo));
        let project: ProjectJson = self.transport.json(&call).await?;
        project.default_branch.ok_or_else(|| {
            call.error(ForgeErrorKind::Decode(
                "the project has no default branch (it is empty)".to_owned(),
            ))
        })
    }

    async fn issue(&self, repo: &RepoName, number: Number) -> ForgeResult<Issue> {
        let path = format!("{}/issues/{number}", project(repo));
        let call = Call::new(repo, Method::GET, "GET /projects/:id/issues/:iid", path);
        let issue: IssueJson = self.transport.json(&call).await?;
        Ok(Issue {
            number: Number(issue.iid),
            title: issue.title,
            body: issue.description.unwrap_or_default(),
            web_url: issue.web_url,
        })
    }

    /// Every note people wrote, oldest first; GitLab's system notes ("added 1 commit") are not
    /// comments and are left out.
    async fn comments(
        &self,
        repo: &RepoName,
        thread: Thread,
        number: Number,
    ) -> ForgeResult<Vec<Comment>> {
        let path = format!("{}/{}/{number}/notes", project(repo), noteable(thread));
        let name = match thread {
            Thread::Issue => "GET /projects/:id/issues/:iid/notes",
            Thread::PullRequest => "GET /projects/:id/merge_requests/:iid/notes",
        };
        let notes: Vec<NoteJson> = self
            .all_pages(|| {
                Call::new(repo, Method::GET, name, path.clone())
                    .query("sort", "asc")
                    .query("order_by", "created_at")
            })
            .await?;
        Ok(notes
            .into_iter()
            .filter(|note| !note.system)
            .map(|note| Comment {
                id: note.id,
                author: note.author.username,
                body: note.body,
            })
            .collect())
    }

    async fn create_comment(
        &self,
        repo: &RepoName,
        thread: Thread,
        number: Number,
        body: &str,
    ) -> ForgeResult<Comment> {
        let path = format!("{}/{}/{number}/notes", project(repo), noteable(thread));
        let name = match thread {
            Thread::Issue => "POST /projects/:id/issues/:iid/notes",
            Thread::PullRequest => "POST /projects/:id/merge_requests/:iid/notes",
        };
        let call = Call::new(repo, Method::POST, name, path).json(json!({ "body": body }));
        let note: NoteJson = self.transport.json(&call).await?;
        Ok(Comment {
            id: note.id,
            author: note.author.username,
            body: note.body,
        })
    }

    async fn update_comment(
        &self,
        repo: &RepoName,
        thread: Thread,
        number: Number,
        comment_id: u64,
        body: &str,
    ) -> ForgeResult<()> {
        let path = format!(
            "{}/{}/{number}/notes/{comment_id}",
            project(repo),
            noteable(thread)
        );
        let name = match thread {
            Thread::Issue => "PUT /projects/:id/issues/:iid/notes/:note_id",
            Thread::PullRequest => "PUT /projects/:id/merge_requests/:iid/notes/:note_id",
        };
        let call = Call::new(repo, Method::PUT, name, path).json(json!({ "body": body }));
        self.transport.success(&call).await.map(drop)
    }

    async fn react_eyes(
        &self,
        repo: &RepoName,
        thread: Thread,
        number: Number,
        comment_id: u64,
    ) -> ForgeResult<()> {
        let path = format!(
            "{}/{}/{number}/notes/{comment_id}/award_emoji",
            project(repo),
            noteable(thread)
        );
        let name = match thread {
            Thread::Issue => "POST /projects/:id/issues/:iid/notes/:note_id/award_emoji",
            Thread::PullRequest => {
                "POST /projects/:id/merge_requests/:iid/notes/:note_id/award_emoji"
            }
        };
        let call = Call::new(repo, Method::POST, name, path).json(json!({ "name": "eyes" }));
        // GitLab refuses a second award of the same emoji with "Award Emoji Name has already
        // been taken" (a 404 on older versions, a 4xx on all): the 👀 is there, as wanted.
        self.transport.effect(&call, "already been taken").await
    }

    async fn add_labels(
        &self,
        repo: &RepoName,
        thread: Thread,
        number: Number,
        labels: &[String],
    ) -> ForgeResult<()> {
        if labels.is_empty() {
            return Ok(());
        }
        // GitLab creates a label the project lacks when it is added this way.
        self.edit_labels(
            repo,
            thread,
            number,
            json!({ "add_labels": labels.join(",") }),
        )
        .await
    }

    async fn remove_label(
        &self,
        repo: &RepoName,
        thread: Thread,
        number: Number,
        label: &str,
    ) -> ForgeResult<()> {
        // Removing a label that is not there changes nothing and is not an error on GitLab.
        self.edit_labels(repo, thread, number, json!({ "remove_labels": label }))
            .await
    }

    async fn permission(&self, repo: &RepoName, actor: &Actor) -> ForgeResult<Permission> {
        // `members/all` counts members inherited from the project's groups too.
        let path = format!("{}/members/all/{}", project(repo), actor.id);
        let call = Call::new(
            repo,
            Method::GET,
            "GET /projects/:id/members/all/:user_id",
            path,
        );
        let member: MemberJson = match self.transport.json(&call).await {
            Ok(member) => member,
            Err(err) if err.kind == ForgeErrorKind::NotFound => return Ok(Permission::None),
            Err(err) => return Err(err),
        };
        Ok(permission_of(member.access_level))
    }

    async fn read_file(
        &self,
        repo: &RepoName,
        path: &str,
        revision: &str,
    ) -> ForgeResult<Option<Vec<u8>>> {
        let url = format!(
            "{}/repository/files/{}",
            project(repo),
            encode_segment(path)
        );
        let call = Call::new(
            repo,
            Method::GET,
            "GET /projects/:id/repository/files/:file_path",
            url,
        )
        .query("ref", revision);
        let file: FileJson = match self.transport.json(&call).await {
            Ok(file) => file,
            Err(err) if err.kind == ForgeErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(err),
        };
        if file.encoding != "base64" {
            return Err(call.error(ForgeErrorKind::Decode(format!(
                "file content in unknown encoding {:?}",
                file.encoding
            ))));
        }
        // Some GitLab versions wrap long base64; the decoder wants it in one piece.
        let content: String = file.content.split_whitespace().collect();
        base64::engine::general_purpose::STANDARD
            .decode(content)
            .map(Some)
            .map_err(|_| call.error(ForgeErrorKind::Decode("file content is not base64".into())))
    }

    async fn pull_request(&self, repo: &RepoName, number: Number) -> ForgeResult<PullRequest> {
        let path = format!("{}/merge_requests/{number}", project(repo));
        let call = Call::new(
            repo,
            Method::GET,
            "GET /projects/:id/merge_requests/:iid",
            path,
        );
        let mr: MergeRequestJson = self.transport.json(&call).await?;
        self.neutral_pull_request(repo, mr).await
    }

    async fn find_pull_request(
        &self,
        repo: &RepoName,
        head_branch: &str,
    ) -> ForgeResult<Option<PullRequest>> {
        let path = format!("{}/merge_requests", project(repo));
        let call = Call::new(repo, Method::GET, "GET /projects/:id/merge_requests", path)
            .query("source_branch", head_branch)
            .query("state", "opened");
        let found: Vec<MergeRequestJson> = self.transport.json(&call).await?;
        // A fork's branch of the same name is someone else's merge request.
        let Some(mr) = found
            .into_iter()
            .find(|mr| mr.source_project_id == Some(mr.project_id))
        else {
            return Ok(None);
        };
        // Lists leave out `diff_refs`: the merge request itself has them.
        self.pull_request(repo, Number(mr.iid)).await.map(Some)
    }

    async fn create_pull_request(
        &self,
        repo: &RepoName,
        spec: &PullRequestSpec,
    ) -> ForgeResult<PullRequest> {
        let path = format!("{}/merge_requests", project(repo));
        let call = Call::new(
            repo,
            Method::POST,
            "POST /projects/:id/merge_requests",
            path,
        )
        .json(json!({
            "source_branch": spec.head_branch,
            "target_branch": spec.base_branch,
            "title": title_of(spec),
            "description": spec.body,
        }));
        let mr: MergeRequestJson = self.transport.json(&call).await?;
        self.neutral_pull_request(repo, mr).await
    }

    async fn update_pull_request(
        &self,
        repo: &RepoName,
        number: Number,
        spec: &PullRequestSpec,
    ) -> ForgeResult<PullRequest> {
        let path = format!("{}/merge_requests/{number}", project(repo));
        let call = Call::new(
            repo,
            Method::PUT,
            "PUT /projects/:id/merge_requests/:iid",
            path,
        )
        .json(json!({ "title": title_of(spec), "description": spec.body }));
        let mr: MergeRequestJson = self.transport.json(&call).await?;
        self.neutral_pull_request(repo, mr).await
    }

    async fn review_flags(&self, repo: &RepoName, number: Number) -> ForgeResult<Vec<PostedFlag>> {
        let path = format!("{}/merge_requests/{number}/discussions", project(repo));
        let discussions: Vec<DiscussionJson> = self
            .all_pages(|| {
                Call::new(
                    repo,
                    Method::GET,
                    "GET /projects/:id/merge_requests/:iid/discussions",
                    path.clone(),
                )
            })
            .await?;
        // A discussion is a flag by its first note; replies to it are a person's.
        Ok(discussions
            .into_iter()
            .filter_map(|discussion| {
                let note = discussion.notes.into_iter().next()?;
                let position = note.position?;
                Some(PostedFlag {
                    thread: discussion.id,
                    path: position.new_path.or(position.old_path)?,
                    line: position.new_line,
                    body: note.body,
                    resolved: note.resolved.unwrap_or(false),
                })
            })
            .collect())
    }

    async fn resolve_flag(
        &self,
        repo: &RepoName,
        number: Number,
        flag: &PostedFlag,
        _why: &str,
    ) -> ForgeResult<()> {
        let path = format!(
            "{}/merge_requests/{number}/discussions/{}",
            project(repo),
            encode_segment(&flag.thread)
        );
        let name = "PUT /projects/:id/merge_requests/:iid/discussions/:discussion_id";
        let call = Call::new(repo, Method::PUT, name, path).json(json!({ "resolved": true }));
        self.transport.success(&call).await.map(drop)
    }

    /// A discussion per flag with a line; a flag GitLab will not place on its line (the line
    /// is not in the diff it shows) joins the flags without one, which the note with the
    /// review's body lists.
    async fn post_review(
        &self,
        repo: &RepoName,
        pr: &PullRequest,
        review: &Review,
    ) -> ForgeResult<()> {
        let mut unplaced: Vec<&ReviewFlag> = Vec::new();
        for flag in &review.flags {
            let Some(line) = flag.line else {
                unplaced.push(flag);
                continue;
            };
            let path = format!("{}/merge_requests/{}/discussions", project(repo), pr.number);
            let call = Call::new(
                repo,
                Method::POST,
                "POST /projects/:id/merge_requests/:iid/discussions",
                path,
            )
            .json({
                let mut position = json!({
                    "position_type": "text",
                    "base_sha": pr.base_sha.0,
                    "start_sha": pr.start_sha.0,
                    "head_sha": pr.head_sha.0,
                    "old_path": flag.path,
                    "new_path": flag.path,
                });
                // A removed line is placed by its number in the old file.
                let key = match flag.side {
                    Side::New => "new_line",
                    Side::Old => "old_line",
                };
                position[key] = json!(line);
                json!({ "body": flag.body, "position": position })
            });
            match self.transport.success(&call).await {
                Ok(_) => {}
                Err(err) if matches!(err.kind, ForgeErrorKind::Invalid(_)) => unplaced.push(flag),
                Err(err) => return Err(err),
            }
        }
        let body = review_body(&review.body, &unplaced);
        if body.is_empty() {
            return Ok(());
        }
        self.create_comment(repo, Thread::PullRequest, pr.number, &body)
            .await
            .map(drop)
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
        let path = format!("{}/statuses/{}", project(repo), encode_segment(&sha.0));
        let mut body = json!({
            "state": state_of(status.state),
            "name": STATUS_CONTEXT,
            "description": status.description.chars().take(MAX_DESCRIPTION_LEN).collect::<String>(),
        });
        if let Some(url) = &status.target_url {
            body["target_url"] = json!(url);
        }
        let call =
            Call::new(repo, Method::POST, "POST /projects/:id/statuses/:sha", path).json(body);
        // GitLab refuses to set a status to the state it is already in ("Cannot transition
        // status via :run from :running"): the commit already says what the bot wanted.
        self.transport
            .effect(&call, "Cannot transition status")
            .await
    }

    /// Every page of a list, following `x-next-page`.
    async fn all_pages<'r, T: serde::de::DeserializeOwned>(
        &self,
        call: impl Fn() -> Call<'r>,
    ) -> ForgeResult<Vec<T>> {
        let mut all = Vec::new();
        let mut page = "1".to_owned();
        for _ in 0..MAX_PAGES {
            let call = call().query("per_page", PER_PAGE).query("page", &*page);
            let answer = self.transport.success(&call).await?;
            all.extend(decode::<Vec<T>>(&call, &answer)?);
            match answer
                .headers
                .get("x-next-page")
                .and_then(|v| v.to_str().ok())
                .map(str::trim)
            {
                Some(next) if !next.is_empty() => page = next.to_owned(),
                _ => return Ok(all),
            }
        }
        Ok(all)
    }

    async fn edit_labels(
        &self,
        repo: &RepoName,
        thread: Thread,
        number: Number,
        body: serde_json::Value,
    ) -> ForgeResult<()> {
        let path = format!("{}/{}/{number}", project(repo), noteable(thread));
        let name = match thread {
            Thread::Issue => "PUT /projects/:id/issues/:iid",
            Thread::PullRequest => "PUT /projects/:id/merge_requests/:iid",
        };
        let call = Call::new(repo, Method::PUT, name, path).json(body);
        self.transport.success(&call).await.map(drop)
    }

    /// The forge-neutral view of a merge request; its source project's path is looked up when
    /// it comes from a fork.
    async fn neutral_pull_request(
        &self,
        repo: &RepoName,
        mr: MergeRequestJson,
    ) -> ForgeResult<PullRequest> {
        let head_repo = match mr.source_project_id {
            Some(id) if id == mr.project_id => repo.clone(),
            Some(id) => {
                let call = Call::new(
                    repo,
                    Method::GET,
                    "GET /projects/:id",
                    format!("/projects/{id}"),
                );
                let source: ProjectJson = self.transport.json(&call).await?;
                RepoName(source.path_with_namespace)
            }
            // The fork was deleted: there is no head repository to fetch from.
            None => RepoName(String::new()),
        };
        let (base_sha, start_sha) = match mr.diff_refs {
            Some(refs) => (
                refs.base_sha.unwrap_or_default(),
                refs.start_sha.unwrap_or_default(),
            ),
            None => (String::new(), String::new()),
        };
        Ok(PullRequest {
            number: Number(mr.iid),
            title: mr.title,
            web_url: mr.web_url,
            head_branch: mr.source_branch,
            head_repo,
            head_sha: CommitSha(mr.sha.unwrap_or_default()),
            base_branch: mr.target_branch,
            base_sha: CommitSha(base_sha),
            start_sha: CommitSha(start_sha),
            draft: mr.draft,
            author: mr.author.map(|a| crate::agents::Account {
                login: a.username,
                bot: a.bot,
            }),
        })
    }
}

/// The forge-neutral role of a GitLab access level: 10 Guest, 20 Reporter, 30 Developer,
/// 40 Maintainer, 50 Owner; below Guest (5, minimal access) is no role at all. Levels between
/// (15, Planner) count as the role below them.
pub fn permission_of(access_level: u32) -> Permission {
    match access_level {
        50.. => Permission::Admin,
        40..=49 => Permission::Maintain,
        30..=39 => Permission::Write,
        20..=29 => Permission::Triage,
        10..=19 => Permission::Read,
        _ => Permission::None,
    }
}

/// GitLab's commit status state for the bot's. GitLab has no "error": a job that broke is
/// `failed`, and its description says why.
fn state_of(state: StatusState) -> &'static str {
    match state {
        StatusState::Pending => "pending",
        StatusState::Success => "success",
        StatusState::Failure | StatusState::Error => "failed",
    }
}

/// The title GitLab is sent: a draft is a merge request whose title starts `Draft: `.
fn title_of(spec: &PullRequestSpec) -> String {
    let title = spec.title.strip_prefix(DRAFT_PREFIX).unwrap_or(&spec.title);
    if spec.draft {
        format!("{DRAFT_PREFIX}{title}")
    } else {
        title.to_owned()
    }
}

/// The review's note: its body, then each flag that has no line of its own, under its path.
fn review_body(body: &str, unplaced: &[&ReviewFlag]) -> String {
    let mut out = body.trim_end().to_owned();
    for flag in unplaced {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(&format!("**`{}`**\n\n{}", flag.path, flag.body.trim_end()));
    }
    out
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
