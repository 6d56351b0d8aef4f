//! Verifying and parsing GitHub webhook deliveries: the `X-Hub-Signature-256` HMAC over the raw
//! body, then the payload by its `X-GitHub-Event` name into an [`Event`]. GitHub's JSON stops
//! here; the private structs below hold only the fields the bot uses.
//!
//! A payload is read in two steps: first its `action` alone, to decide whether the bot acts on
//! it, and only then the fields that event needs. An action the bot ignores is acknowledged
//! whatever else its payload holds.

use serde::Deserialize;

use crate::forge::event::{
    Actor, CommitSha, Event, Forge, InstallationAction, Number, PullRequestAction, Repo, RepoName,
    Thread,
};
use crate::forge::webhook::{Parsed, Secret, WebhookError, from_json, ignored, signed_by_any};

/// The header carrying `sha256=<hex>` of the body's HMAC.
pub const SIGNATURE_HEADER: &str = "X-Hub-Signature-256";
/// The header naming the event (`issues`, `pull_request`, …).
pub const EVENT_HEADER: &str = "X-GitHub-Event";
/// The header carrying the delivery's id, the same on a redelivery.
pub const DELIVERY_HEADER: &str = "X-GitHub-Delivery";

/// Verifies `X-Hub-Signature-256: sha256=<hex>` as the HMAC-SHA256 of the raw `body` under any of
/// `secrets` (several while one is rotated out). Every secret is tried, each in constant time.
pub fn verify(
    secrets: &[Secret],
    signature: Option<&str>,
    body: &[u8],
) -> Result<(), WebhookError> {
    if secrets.is_empty() {
        return Err(unauthorized("no webhook secret is configured"));
    }
    let signature = signature.ok_or(unauthorized("missing X-Hub-Signature-256"))?;
    let expected = signature
        .strip_prefix("sha256=")
        .and_then(|digits| hex::decode(digits).ok())
        .filter(|digest| digest.len() == 32)
        .ok_or(unauthorized("malformed X-Hub-Signature-256"))?;

    if signed_by_any(secrets, &expected, body) {
        Ok(())
    } else {
        Err(unauthorized("signature does not match"))
    }
}

/// Parses a delivery by its `X-GitHub-Event` name.
pub fn parse(event: &str, body: &[u8]) -> Result<Parsed, WebhookError> {
    match event {
        "" => Err(WebhookError::BadHeader {
            header: EVENT_HEADER,
            reason: "is empty".to_owned(),
        }),
        "ping" => Ok(Parsed::Event(Event::Ping)),
        "issues" => issues(body),
        "issue_comment" => issue_comment(body),
        "pull_request" => pull_request(body),
        "installation" => installation(body),
        "installation_repositories" => installation_repositories(body),
        other => Ok(ignored(other)),
    }
}

fn unauthorized(reason: &'static str) -> WebhookError {
    WebhookError::Unauthorized { reason }
}

/// The first step of every event with actions: the action alone.
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
            forge: Forge::GitHub,
            name: RepoName(self.full_name),
            id: self.id,
        }
    }
}

#[derive(Deserialize)]
struct User {
    login: String,
    id: u64,
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
struct Issue {
    number: u64,
    title: String,
    body: Option<String>,
    /// Present (an object) when the issue is a pull request.
    pull_request: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct Label {
    name: String,
}

#[derive(Deserialize)]
struct IssuesLabeled {
    repository: Repository,
    issue: Issue,
    /// GitHub's schema lets it be absent; such a delivery says nothing the bot can act on.
    label: Option<Label>,
    sender: User,
}

fn issues(body: &[u8]) -> Result<Parsed, WebhookError> {
    let Action { action } = from_json(body)?;
    if action != "labeled" {
        return Ok(ignored(&format!("issues.{action}")));
    }
    let payload: IssuesLabeled = from_json(body)?;
    let Some(label) = payload.label else {
        return Ok(ignored("issues.labeled"));
    };
    Ok(Parsed::Event(Event::IssueLabeled {
        repo: payload.repository.into_repo(),
        number: Number(payload.issue.number),
        labels: vec![label.name],
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
}

fn issue_comment(body: &[u8]) -> Result<Parsed, WebhookError> {
    let Action { action } = from_json(body)?;
    if action != "created" {
        return Ok(ignored(&format!("issue_comment.{action}")));
    }
    let payload: IssueComment = from_json(body)?;
    let thread = if payload.issue.pull_request.is_some() {
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
    repo: Repository,
}

#[derive(Deserialize)]
struct Head {
    sha: String,
    /// `null` when the fork the pull request came from was deleted.
    repo: Option<Repository>,
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
    pull_request: PullRequest,
}

fn pull_request(body: &[u8]) -> Result<Parsed, WebhookError> {
    let Action { action } = from_json(body)?;
    let action = match action.as_str() {
        "opened" => PullRequestAction::Opened,
        "synchronize" => PullRequestAction::Synchronized,
        "reopened" => PullRequestAction::Reopened,
        _ => return Ok(ignored(&format!("pull_request.{action}"))),
    };
    let payload: PullRequestEvent = from_json(body)?;
    let pr = payload.pull_request;
    // A deleted fork leaves no head repository: the head commit is still fetchable from the
    // base repository's `refs/pull/<n>/head`, and it is certainly not the base repository's
    // own branch, so it counts as a fork with no name.
    let (head_repo, is_fork) = match pr.head.repo {
        Some(head) => (head.full_name, head.id != pr.base.repo.id),
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

#[derive(Deserialize)]
struct Account {
    login: String,
}

#[derive(Deserialize)]
struct Installation {
    id: u64,
    account: Account,
}

#[derive(Deserialize)]
struct RepositoryName {
    full_name: String,
}

fn names(repositories: Option<Vec<RepositoryName>>) -> Vec<RepoName> {
    repositories
        .unwrap_or_default()
        .into_iter()
        .map(|repository| RepoName(repository.full_name))
        .collect()
}

#[derive(Deserialize)]
struct InstallationEvent {
    installation: Installation,
    /// Absent when the installation covers all of an account's repositories.
    repositories: Option<Vec<RepositoryName>>,
}

fn installation(body: &[u8]) -> Result<Parsed, WebhookError> {
    let Action { action } = from_json(body)?;
    let action = match action.as_str() {
        "created" => InstallationAction::Added,
        "deleted" => InstallationAction::Removed,
        _ => return Ok(ignored(&format!("installation.{action}"))),
    };
    let payload: InstallationEvent = from_json(body)?;
    Ok(Parsed::Event(Event::Installation {
        action,
        installation_id: payload.installation.id,
        account: payload.installation.account.login,
        repos: names(payload.repositories),
    }))
}

#[derive(Deserialize)]
struct InstallationRepositoriesEvent {
    installation: Installation,
    repositories_added: Option<Vec<RepositoryName>>,
    repositories_removed: Option<Vec<RepositoryName>>,
}

fn installation_repositories(body: &[u8]) -> Result<Parsed, WebhookError> {
    let Action { action } = from_json(body)?;
    if action != "added" && action != "removed" {
        return Ok(ignored(&format!("installation_repositories.{action}")));
    }
    let payload: InstallationRepositoriesEvent = from_json(body)?;
    let (action, repos) = if action == "added" {
        (InstallationAction::Added, payload.repositories_added)
    } else {
        (InstallationAction::Removed, payload.repositories_removed)
    };
    Ok(Parsed::Event(Event::Installation {
        action,
        installation_id: payload.installation.id,
        account: payload.installation.account.login,
        repos: names(repos),
    }))
}

#[cfg(test)]
#[path = "webhook_tests.rs"]
mod tests;
