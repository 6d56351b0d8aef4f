//! Verifying and parsing GitLab webhook deliveries: the `X-Gitlab-Token` shared secret, then the
//! payload by its `X-Gitlab-Event` name into an [`Event`]. GitLab's JSON stops here; the private
//! structs below hold only the fields the bot uses.
//!
//! A payload is read in two steps: first what decides whether the bot acts on it (the action,
//! the kind of thing commented on, which labels changed), and only then the fields that event
//! needs. A delivery the bot ignores is acknowledged whatever else its payload holds.

use std::collections::HashSet;

use serde::Deserialize;

use crate::forge::event::{
    Actor, CommitSha, Event, Forge, Number, PullRequestAction, Repo, RepoName, Thread,
};
use crate::forge::webhook::{
    Parsed, Secret, WebhookError, from_json, ignored, matches_any, missing,
};

/// The header carrying the hook's secret token, in clear.
pub const TOKEN_HEADER: &str = "X-Gitlab-Token";
/// The header naming the event (`Issue Hook`, `Note Hook`, …).
pub const EVENT_HEADER: &str = "X-Gitlab-Event";

/// Checks that `X-Gitlab-Token` equals one of `tokens` (several while one is rotated out),
/// comparing every one in constant time.
pub fn verify(tokens: &[Secret], token: Option<&str>) -> Result<(), WebhookError> {
    if tokens.is_empty() {
        return Err(unauthorized("no webhook token is configured"));
    }
    let token = token
        .filter(|token| !token.is_empty())
        .ok_or(unauthorized("missing X-Gitlab-Token"))?;
    if matches_any(tokens, token.as_bytes()) {
        Ok(())
    } else {
        Err(unauthorized("X-Gitlab-Token does not match"))
    }
}

/// Parses a delivery by its `X-Gitlab-Event` name.
pub fn parse(event: &str, body: &[u8]) -> Result<Parsed, WebhookError> {
    match event {
        "" => Err(WebhookError::BadHeader {
            header: EVENT_HEADER,
            reason: "is empty".to_owned(),
        }),
        "Issue Hook" | "Confidential Issue Hook" => issue(body),
        "Note Hook" | "Confidential Note Hook" => note(body),
        "Merge Request Hook" => merge_request(body),
        // System hooks carry merge request events too, for every project of an instance: the
        // bot is configured per project, so they are not its business.
        other => {
            let kind = other.strip_suffix(" Hook").unwrap_or(other);
            Ok(ignored(&kind.to_ascii_lowercase()))
        }
    }
}

fn unauthorized(reason: &'static str) -> WebhookError {
    WebhookError::Unauthorized { reason }
}

/// `<kind>.<action>`, or `<kind>` for a payload without an action (older GitLab).
fn ignored_action(kind: &str, action: Option<&str>) -> Parsed {
    match action {
        Some(action) => ignored(&format!("{kind}.{action}")),
        None => ignored(kind),
    }
}

#[derive(Deserialize)]
struct Project {
    id: u64,
    path_with_namespace: String,
}

impl Project {
    fn into_repo(self) -> Repo {
        Repo {
            forge: Forge::GitLab,
            name: RepoName(self.path_with_namespace),
            id: self.id,
        }
    }
}

#[derive(Deserialize)]
struct User {
    id: u64,
    username: String,
}

impl From<User> for Actor {
    fn from(user: User) -> Actor {
        Actor {
            login: user.username,
            id: user.id,
        }
    }
}

#[derive(Deserialize)]
struct Label {
    title: String,
}

/// The first step of an issue event: what says whether a label was put on it.
#[derive(Deserialize)]
struct IssueTriage {
    /// `issue`; other work items (tasks, epics, …) are `work_item`.
    object_kind: Option<String>,
    object_attributes: IssueTriageAttributes,
    changes: Option<IssueChanges>,
    /// The labels the issue has now.
    labels: Option<Vec<Label>>,
}

#[derive(Deserialize)]
struct IssueTriageAttributes {
    action: Option<String>,
}

#[derive(Deserialize)]
struct IssueChanges {
    /// Present only when the labels changed.
    labels: Option<LabelChange>,
}

#[derive(Deserialize)]
struct LabelChange {
    previous: Option<Vec<Label>>,
    current: Option<Vec<Label>>,
}

impl IssueTriage {
    /// The labels this delivery put on the issue: those in `current` that are not in
    /// `previous`. An issue just opened has no label change; the labels it was created with all
    /// count as added (GitHub sends `labeled` for those too).
    fn added_labels(self) -> Vec<String> {
        match self.changes.and_then(|changes| changes.labels) {
            Some(change) => {
                let previous: HashSet<String> = change
                    .previous
                    .unwrap_or_default()
                    .into_iter()
                    .map(|label| label.title)
                    .collect();
                change
                    .current
                    .unwrap_or_default()
                    .into_iter()
                    .map(|label| label.title)
                    .filter(|title| !previous.contains(title))
                    .collect()
            }
            None if self.object_attributes.action.as_deref() == Some("open") => self
                .labels
                .unwrap_or_default()
                .into_iter()
                .map(|label| label.title)
                .collect(),
            None => Vec::new(),
        }
    }
}

#[derive(Deserialize)]
struct IssueEvent {
    project: Project,
    user: User,
    object_attributes: IssueAttributes,
}

#[derive(Deserialize)]
struct IssueAttributes {
    iid: u64,
    title: String,
    description: Option<String>,
}

fn issue(body: &[u8]) -> Result<Parsed, WebhookError> {
    let triage: IssueTriage = from_json(body)?;
    if let Some(kind) = &triage.object_kind
        && kind != "issue"
    {
        return Ok(ignored(kind));
    }
    let action = triage.object_attributes.action.clone();
    let labels = triage.added_labels();
    if labels.is_empty() {
        return Ok(ignored_action("issue", action.as_deref()));
    }
    let payload: IssueEvent = from_json(body)?;
    Ok(Parsed::Event(Event::IssueLabeled {
        repo: payload.project.into_repo(),
        number: Number(payload.object_attributes.iid),
        labels,
        actor: payload.user.into(),
        title: payload.object_attributes.title,
        body: payload.object_attributes.description.unwrap_or_default(),
    }))
}

/// The first step of a comment event: what it is on, and whether it is new.
#[derive(Deserialize)]
struct NoteTriage {
    object_attributes: NoteTriageAttributes,
}

#[derive(Deserialize)]
struct NoteTriageAttributes {
    noteable_type: String,
    /// `create` or `update`; absent before GitLab 16.11, which sent only new comments.
    action: Option<String>,
    system: Option<bool>,
}

#[derive(Deserialize)]
struct NoteEvent {
    project: Project,
    user: User,
    object_attributes: NoteAttributes,
    issue: Option<Noteable>,
    merge_request: Option<Noteable>,
}

#[derive(Deserialize)]
struct NoteAttributes {
    id: u64,
    note: String,
}

#[derive(Deserialize)]
struct Noteable {
    iid: u64,
}

fn note(body: &[u8]) -> Result<Parsed, WebhookError> {
    let NoteTriage {
        object_attributes: triage,
    } = from_json(body)?;
    if let Some(action) = triage.action.as_deref()
        && action != "create"
    {
        return Ok(ignored(&format!("note.{action}")));
    }
    if triage.system == Some(true) {
        return Ok(ignored("note.system"));
    }
    let thread = match triage.noteable_type.as_str() {
        "Issue" => Thread::Issue,
        "MergeRequest" => Thread::PullRequest,
        other => return Ok(ignored(&format!("note.{}", other.to_ascii_lowercase()))),
    };
    let payload: NoteEvent = from_json(body)?;
    let number = match thread {
        Thread::Issue => payload.issue.ok_or_else(|| missing("issue"))?.iid,
        Thread::PullRequest => {
            payload
                .merge_request
                .ok_or_else(|| missing("merge_request"))?
                .iid
        }
    };
    Ok(Parsed::Event(Event::Comment {
        repo: payload.project.into_repo(),
        number: Number(number),
        thread,
        comment_id: payload.object_attributes.id,
        author: payload.user.into(),
        body: payload.object_attributes.note,
    }))
}

/// The first step of a merge request event: the action, and whether it brought commits.
#[derive(Deserialize)]
struct MergeRequestTriage {
    object_attributes: MergeRequestTriageAttributes,
}

#[derive(Deserialize)]
struct MergeRequestTriageAttributes {
    action: Option<String>,
    /// The head before this update; present only when the update pushed commits.
    oldrev: Option<String>,
}

#[derive(Deserialize)]
struct MergeRequestEvent {
    project: Project,
    user: User,
    object_attributes: MergeRequestAttributes,
}

#[derive(Deserialize)]
struct MergeRequestAttributes {
    iid: u64,
    source_project_id: Option<u64>,
    target_project_id: u64,
    /// `null` when the source project was deleted.
    source: Option<SourceProject>,
    /// `null` when the merge request has no commits.
    last_commit: Option<Commit>,
}

#[derive(Deserialize)]
struct SourceProject {
    path_with_namespace: String,
}

#[derive(Deserialize)]
struct Commit {
    id: String,
}

fn merge_request(body: &[u8]) -> Result<Parsed, WebhookError> {
    let MergeRequestTriage {
        object_attributes: triage,
    } = from_json(body)?;
    let action = match triage.action.as_deref() {
        Some("open") => PullRequestAction::Opened,
        Some("reopen") => PullRequestAction::Reopened,
        Some("update") if triage.oldrev.is_some_and(|rev| !rev.is_empty()) => {
            PullRequestAction::Synchronized
        }
        other => return Ok(ignored_action("merge_request", other)),
    };
    let payload: MergeRequestEvent = from_json(body)?;
    let mr = payload.object_attributes;
    let Some(last_commit) = mr.last_commit else {
        return Ok(ignored("merge_request.no_commits"));
    };
    Ok(Parsed::Event(Event::PullRequest {
        repo: payload.project.into_repo(),
        number: Number(mr.iid),
        action,
        // GitLab's merge request payload names the target branch but no base commit: the job
        // asks the API for the merge request's `diff_refs`.
        base_sha: CommitSha(String::new()),
        head_sha: CommitSha(last_commit.id),
        head_repo: RepoName(
            mr.source
                .map(|source| source.path_with_namespace)
                .unwrap_or_default(),
        ),
        is_fork: mr.source_project_id != Some(mr.target_project_id),
        author: payload.user.into(),
    }))
}

#[cfg(test)]
#[path = "webhook_tests.rs"]
mod tests;
