//! Verifying and parsing Forgejo and Gitea webhook deliveries: the `X-Forgejo-Signature` (or
//! Gitea's `X-Gitea-Signature`) HMAC over the raw body, then the payload by its `X-Forgejo-Event`
//! (`X-Gitea-Event`) name into an [`Event`]. Forgejo's JSON stops here; the private structs below
//! hold only the fields the bot uses.
//!
//! What the instance sends, from its source (Forgejo is a fork of Gitea and sends the same):
//! `services/webhook/shared/payloader.go` (`AddDefaultHeaders`) signs the body with HMAC-SHA256
//! under the hook's secret and puts the bare lower-case hex in `X-Forgejo-Signature` and
//! `X-Gitea-Signature` (the `sha256=` form goes only into `X-Hub-Signature-256`, for GitHub's
//! receivers); the event in `X-Forgejo-Event` / `X-Gitea-Event` is the coarse name of
//! `modules/webhook/type.go` (`HookEventType.Event`): `issues` for `issue_label` too,
//! `pull_request` for `pull_request_sync` and `pull_request_label`, `issue_comment` for a comment
//! on an issue and on a pull request (`pull_request_comment`) alike. The finer type is in
//! `X-Forgejo-Event-Type`; the payload's `action` says all the bot needs, so it is not read. The
//! payloads are the structs of `modules/structs/hook.go` (`IssuePayload`, `IssueCommentPayload`,
//! `PullRequestPayload`).
//!
//! A payload is read in two steps: first its `action` alone, to decide whether the bot acts on
//! it, and only then the fields that event needs. An action the bot ignores is acknowledged
//! whatever else its payload holds.

use serde::Deserialize;

use crate::forge::event::{
    Actor, CommitSha, Event, Forge, Number, PullRequestAction, Repo, RepoName, Thread,
};
use crate::forge::webhook::{
    Parsed, Secret, WebhookError, from_json, ignored, missing, signed_by_any,
};

/// The header carrying the hex HMAC-SHA256 of the body (Forgejo).
pub const SIGNATURE_HEADER: &str = "X-Forgejo-Signature";
/// The same signature under Gitea's name, which Forgejo sends too.
pub const GITEA_SIGNATURE_HEADER: &str = "X-Gitea-Signature";
/// The header naming the event (`issues`, `issue_comment`, `pull_request`, …).
pub const EVENT_HEADER: &str = "X-Forgejo-Event";
pub const GITEA_EVENT_HEADER: &str = "X-Gitea-Event";
/// The header carrying the delivery's id (a UUID), the same when it is redelivered.
pub const DELIVERY_HEADER: &str = "X-Forgejo-Delivery";
pub const GITEA_DELIVERY_HEADER: &str = "X-Gitea-Delivery";

/// Verifies the signature header (`X-Forgejo-Signature`, or `X-Gitea-Signature` from Gitea):
/// the hex HMAC-SHA256 of the raw `body` under any of `secrets` (several while one is rotated
/// out). Every secret is tried, each in constant time.
///
/// Forgejo and Gitea send the bare hex, never `sha256=<hex>` in these headers, so a prefixed value
/// is refused as malformed. A hook saved without a secret sends the header empty: refused as
/// missing, as is everything when the bot has no secret configured.
pub fn verify(
    secrets: &[Secret],
    signature: Option<&str>,
    body: &[u8],
) -> Result<(), WebhookError> {
    if secrets.is_empty() {
        return Err(unauthorized("no webhook secret is configured"));
    }
    let signature = signature
        .filter(|signature| !signature.is_empty())
        .ok_or(unauthorized(
            "missing X-Forgejo-Signature (is the webhook's secret set?)",
        ))?;
    let expected = hex::decode(signature)
        .ok()
        .filter(|digest| digest.len() == 32)
        .ok_or(unauthorized("malformed X-Forgejo-Signature"))?;

    if signed_by_any(secrets, &expected, body) {
        Ok(())
    } else {
        Err(unauthorized("signature does not match"))
    }
}

/// Parses a delivery by its `X-Forgejo-Event` (or `X-Gitea-Event`) name. There is no ping: the
/// "Test delivery" button of a hook's settings sends a `push`, which is acknowledged and ignored.
pub fn parse(event: &str, body: &[u8]) -> Result<Parsed, WebhookError> {
    match event {
        "" => Err(WebhookError::BadHeader {
            header: EVENT_HEADER,
            reason: "is empty".to_owned(),
        }),
        "issues" => issues(body),
        "issue_comment" => issue_comment(body),
        "pull_request" => pull_request(body),
        other => Ok(ignored(other)),
    }
}

fn unauthorized(reason: &'static str) -> WebhookError {
    WebhookError::Unauthorized { reason }
}

/// The first step of every event: the action alone.
#[derive(Deserialize)]
struct Action {
    action: String,
}

#[derive(Deserialize)]
struct Repository {
    id: u64,
    full_name: String,
}

impl Repository {
    fn into_repo(self) -> Repo {
        Repo {
            forge: Forge::Forgejo,
            name: RepoName(self.full_name),
            id: self.id,
        }
    }
}

#[derive(Deserialize)]
struct User {
    id: u64,
    login: String,
}

impl From<User> for Actor {
    fn from(user: User) -> Actor {
        Actor {
            login: user.login,
            id: user.id,
        }
    }
}

#[derive(Deserialize)]
struct Label {
    name: String,
}

/// The first step of an issue event: which labels it is about.
#[derive(Deserialize)]
struct IssueTriage {
    action: String,
    issue: IssueLabels,
    /// The label this change added or removed. Forgejo's `IssuePayload` has the field
    /// (`label,omitempty`), but fills it only for Forgejo Actions (`services/actions/notifier.go`,
    /// one payload per label); its webhooks (`services/webhook/notifier.go`,
    /// `IssueChangeLabels`) leave it out. Used when present.
    label: Option<Label>,
}

#[derive(Deserialize)]
struct IssueLabels {
    /// The labels the issue has now, after the change.
    labels: Option<Vec<Label>>,
}

#[derive(Deserialize)]
struct Issue {
    number: u64,
    title: String,
    body: Option<String>,
    /// Present (an object) when the issue is a pull request.
    pull_request: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct IssueEvent {
    repository: Repository,
    issue: Issue,
    sender: User,
}

/// An issue opened, or its labels changed.
///
/// Forgejo and Gitea say less than the other forges here. A change of an issue's labels is one
/// `label_updated` delivery carrying the issue with **all its labels after the change**, whether
/// the change added a label or removed one (only removing them all at once is `label_cleared`);
/// it does not say which label changed. So the [`Event::IssueLabeled`] made of it lists every
/// label the issue has, and the trigger label in it may have been there before. The bot makes a
/// job of only the first such event of an issue ([`crate::trigger::labels_once`]): one that
/// someone changing another label later would otherwise repeat.
///
/// An issue opened with labels has no label change: its labels were all just put on (GitHub
/// sends `labeled` for those, and GitLab's parser counts them too).
fn issues(body: &[u8]) -> Result<Parsed, WebhookError> {
    let Action { action } = from_json(body)?;
    if action != "label_updated" && action != "opened" {
        return Ok(ignored(&format!("issues.{action}")));
    }
    let triage: IssueTriage = from_json(body)?;
    let labels: Vec<String> = match triage.label {
        Some(label) if triage.action == "label_updated" => vec![label.name],
        _ => triage
            .issue
            .labels
            .unwrap_or_default()
            .into_iter()
            .map(|label| label.name)
            .collect(),
    };
    if labels.is_empty() {
        return Ok(ignored(&format!("issues.{action}")));
    }
    let payload: IssueEvent = from_json(body)?;
    Ok(Parsed::Event(Event::IssueLabeled {
        repo: payload.repository.into_repo(),
        number: Number(payload.issue.number),
        labels,
        actor: payload.sender.into(),
        title: payload.issue.title,
        body: payload.issue.body.unwrap_or_default(),
    }))
}

#[derive(Deserialize)]
struct Comment {
    id: u64,
    user: User,
    body: String,
}

#[derive(Deserialize)]
struct IssueComment {
    repository: Repository,
    issue: Issue,
    comment: Comment,
    /// True for a comment on a pull request (sent as `issue_comment`, event type
    /// `pull_request_comment`).
    #[serde(default)]
    is_pull: bool,
}

fn issue_comment(body: &[u8]) -> Result<Parsed, WebhookError> {
    let Action { action } = from_json(body)?;
    if action != "created" {
        return Ok(ignored(&format!("issue_comment.{action}")));
    }
    let payload: IssueComment = from_json(body)?;
    let thread = if payload.is_pull || payload.issue.pull_request.is_some() {
        Thread::PullRequest
    } else {
        Thread::Issue
    };
    Ok(Parsed::Event(Event::Comment {
        repo: payload.repository.into_repo(),
        number: Number(payload.issue.number),
        thread,
        comment_id: payload.comment.id,
        author: payload.comment.user.into(),
        body: payload.comment.body,
    }))
}

#[derive(Deserialize)]
struct Base {
    sha: String,
    repo_id: i64,
}

#[derive(Deserialize)]
struct Head {
    /// Empty when the instance could not resolve the head (`services/convert/pull.go`).
    sha: String,
    /// `-1` when the repository the head branch was in is gone.
    repo_id: i64,
    /// `null` when that repository is gone.
    repo: Option<RepositoryName>,
}

#[derive(Deserialize)]
struct RepositoryName {
    full_name: String,
}

#[derive(Deserialize)]
struct PullRequest {
    number: u64,
    user: User,
    base: Base,
    head: Head,
}

#[derive(Deserialize)]
struct PullRequestEvent {
    repository: Repository,
    /// `null` when the instance failed to convert the pull request for the payload.
    pull_request: Option<PullRequest>,
}

fn pull_request(body: &[u8]) -> Result<Parsed, WebhookError> {
    let Action { action } = from_json(body)?;
    let action = match action.as_str() {
        "opened" => PullRequestAction::Opened,
        "synchronized" => PullRequestAction::Synchronized,
        "reopened" => PullRequestAction::Reopened,
        // `label_updated`, `closed`, `edited`, `assigned`, `reviewed`, …
        _ => return Ok(ignored(&format!("pull_request.{action}"))),
    };
    let payload: PullRequestEvent = from_json(body)?;
    let pr = payload
        .pull_request
        .ok_or_else(|| missing("pull_request"))?;
    if pr.head.sha.is_empty() {
        return Ok(ignored("pull_request.no_head_commit"));
    }
    // A deleted head repository leaves `repo` null and `repo_id` -1: the head commit is still
    // in the base repository's `refs/pull/<n>/head`, and it was not the base repository's own
    // branch, so it counts as a fork with no name.
    let (head_repo, is_fork) = match pr.head.repo {
        Some(head) => (head.full_name, pr.head.repo_id != pr.base.repo_id),
        None => (String::new(), true),
    };
    Ok(Parsed::Event(Event::PullRequest {
        repo: payload.repository.into_repo(),
        number: Number(pr.number),
        action,
        base_sha: CommitSha(pr.base.sha),
        head_sha: CommitSha(pr.head.sha),
        head_repo: RepoName(head_repo),
        is_fork,
        author: pr.user.into(),
    }))
}

#[cfg(test)]
#[path = "webhook_tests.rs"]
mod tests;
