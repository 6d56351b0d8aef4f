//! GitHub's JSON for the REST client: the shapes it reads (only the fields the bot uses) and
//! the bodies it sends, with the mapping to and from the forge-neutral types. Nothing here
//! sends a request; nothing outside `forge::github` sees these types.

use serde::Deserialize;
use serde_json::json;

use crate::forge::api::{Comment, Permission, PullRequest, Review, Side, StatusState};
use crate::forge::{CommitSha, Number, RepoName};

/// The review GitHub is sent: a line comment per flag with a line, and the flags without one
/// listed in the body as `path: note`.
pub(super) fn review_body(pr: &PullRequest, review: &Review) -> serde_json::Value {
    let mut body = review.body.clone();
    let notes: Vec<String> = review
        .flags
        .iter()
        .filter(|f| f.line.is_none())
        .map(|f| format!("- `{}`: {}", f.path, f.body))
        .collect();
    if !notes.is_empty() {
        if !body.is_empty() {
            body.push_str("\n\n");
        }
        body.push_str(&notes.join("\n"));
    }
    let comments: Vec<serde_json::Value> = review
        .flags
        .iter()
        .filter_map(|f| {
            f.line.map(|line| {
                let side = match f.side {
                    Side::New => "RIGHT",
                    Side::Old => "LEFT",
                };
                json!({ "path": f.path, "line": line, "side": side, "body": f.body })
            })
        })
        .collect();
    json!({
        "commit_id": pr.head_sha.0,
        "body": body,
        "event": "COMMENT",
        "comments": comments,
    })
}

pub(super) fn status_state(state: StatusState) -> &'static str {
    match state {
        StatusState::Pending => "pending",
        StatusState::Success => "success",
        StatusState::Failure => "failure",
        StatusState::Error => "error",
    }
}

// Fields GitHub's description marks nullable are `Option`s.

#[derive(Deserialize)]
pub(super) struct RepoJson {
    pub(super) default_branch: String,
}

#[derive(Deserialize)]
pub(super) struct UserJson {
    pub(super) login: String,
}

/// `GET /app`: GitHub's `integration`, the fields the doctor reads.
#[derive(Deserialize)]
pub(super) struct AppJson {
    pub(super) slug: Option<String>,
    pub(super) name: String,
    pub(super) html_url: String,
    pub(super) owner: Option<AppOwnerJson>,
    pub(super) permissions: std::collections::BTreeMap<String, String>,
    pub(super) events: Vec<String>,
    pub(super) installations_count: Option<u64>,
}

/// An App's owner: a user or an organization (`simple-user`), or an enterprise (no `login`).
#[derive(Deserialize)]
pub(super) struct AppOwnerJson {
    pub(super) login: Option<String>,
    #[serde(rename = "type")]
    pub(super) kind: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct IssueJson {
    pub(super) number: u64,
    pub(super) title: String,
    pub(super) body: Option<String>,
    pub(super) html_url: String,
}

#[derive(Deserialize)]
pub(super) struct CommentJson {
    pub(super) id: u64,
    pub(super) user: Option<UserJson>,
    pub(super) body: Option<String>,
}

impl CommentJson {
    /// A comment whose author was deleted is GitHub's `ghost`.
    pub(super) fn into_domain(self) -> Comment {
        Comment {
            id: self.id,
            author: self.user.map_or_else(|| "ghost".to_owned(), |u| u.login),
            body: self.body.unwrap_or_default(),
        }
    }
}

#[derive(Deserialize)]
pub(super) struct PermissionJson {
    pub(super) permission: String,
    pub(super) role_name: Option<String>,
}

impl PermissionJson {
    pub(super) fn into_domain(self) -> Permission {
        let named = |name: &str| match name {
            "admin" => Some(Permission::Admin),
            "maintain" => Some(Permission::Maintain),
            "write" => Some(Permission::Write),
            "triage" => Some(Permission::Triage),
            "read" => Some(Permission::Read),
            "none" => Some(Permission::None),
            _ => None,
        };
        self.role_name
            .as_deref()
            .and_then(named)
            .or_else(|| named(&self.permission))
            .unwrap_or(Permission::None)
    }
}

#[derive(Deserialize)]
pub(super) struct FileJson {
    #[serde(rename = "type")]
    pub(super) kind: String,
    pub(super) sha: String,
    #[serde(default)]
    pub(super) size: u64,
    pub(super) encoding: Option<String>,
    pub(super) content: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct BlobJson {
    pub(super) content: String,
    pub(super) encoding: String,
}

#[derive(Deserialize)]
pub(super) struct PullJson {
    pub(super) number: u64,
    pub(super) title: String,
    pub(super) html_url: String,
    pub(super) head: BranchJson,
    pub(super) base: BranchJson,
    pub(super) draft: Option<bool>,
    pub(super) user: Option<AccountJson>,
}

/// An account as a pull request names it: `type` is `Bot` for an App's bot user.
#[derive(Deserialize)]
pub(super) struct AccountJson {
    pub(super) login: String,
    #[serde(rename = "type", default)]
    pub(super) kind: String,
}

#[derive(Deserialize)]
pub(super) struct BranchJson {
    #[serde(rename = "ref")]
    pub(super) branch: String,
    pub(super) sha: String,
    pub(super) repo: Option<BranchRepoJson>,
}

#[derive(Deserialize)]
pub(super) struct BranchRepoJson {
    pub(super) full_name: String,
}

impl PullJson {
    /// A head repository GitHub no longer knows (a deleted fork) is named by an empty string.
    pub(super) fn into_domain(self) -> PullRequest {
        PullRequest {
            number: Number(self.number),
            title: self.title,
            web_url: self.html_url,
            head_branch: self.head.branch,
            head_repo: RepoName(self.head.repo.map(|r| r.full_name).unwrap_or_default()),
            head_sha: CommitSha(self.head.sha),
            base_branch: self.base.branch,
            base_sha: CommitSha(self.base.sha.clone()),
            start_sha: CommitSha(self.base.sha),
            draft: self.draft.unwrap_or(false),
            author: self.user.map(|u| crate::agents::Account {
                bot: u.kind == "Bot",
                login: u.login,
            }),
        }
    }
}
