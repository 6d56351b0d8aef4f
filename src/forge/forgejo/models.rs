//! Forgejo's JSON for the REST client: the shapes it reads (only the fields the bot uses), and
//! the pure parts of what it sends: draft titles, review bodies, status states, file paths.
//! Nothing here sends a request; nothing outside `forge::forgejo` sees these types.

use http::HeaderMap;
use serde::Deserialize;

use crate::forge::api::{
    Comment, Permission, PullRequest, PullRequestSpec, ReviewFlag, StatusState,
};
use crate::forge::http::encode;
use crate::forge::{CommitSha, Number, RepoName};

/// The title prefix the client gives a draft: Forgejo's first default work-in-progress prefix
/// (`[repository.pull-request] WORK_IN_PROGRESS_PREFIXES = WIP:,[WIP]`).
const DRAFT_PREFIX: &str = "WIP: ";

/// The prefixes Forgejo reads as a draft by default, compared without case as Forgejo does.
const WIP_PREFIXES: [&str; 2] = ["WIP:", "[WIP]"];

// Fields Forgejo may leave out or send as `null` are `Option`s or have defaults.

#[derive(Deserialize)]
pub(super) struct RepositoryJson {
    #[serde(default)]
    pub(super) default_branch: String,
}

#[derive(Deserialize)]
pub(super) struct UserJson {
    pub(super) login: String,
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
    /// A comment whose author was deleted is Forgejo's `Ghost`.
    pub(super) fn into_domain(self) -> Comment {
        Comment {
            id: self.id,
            author: self.user.map_or_else(|| "Ghost".to_owned(), |u| u.login),
            body: self.body.unwrap_or_default(),
        }
    }
}

#[derive(Deserialize)]
pub(super) struct LabelJson {
    pub(super) id: u64,
    pub(super) name: String,
}

#[derive(Deserialize)]
pub(super) struct PermissionJson {
    pub(super) permission: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct PullJson {
    pub(super) number: u64,
    pub(super) title: String,
    pub(super) html_url: String,
    pub(super) head: BranchJson,
    pub(super) base: BranchJson,
    /// The commit the pull request's diff starts at: where the head left the base branch.
    pub(super) merge_base: Option<String>,
    /// Older Gitea leaves it out; the title says it then.
    pub(super) draft: Option<bool>,
    pub(super) user: Option<UserJson>,
}

#[derive(Deserialize)]
pub(super) struct BranchJson {
    #[serde(rename = "ref")]
    pub(super) branch: String,
    #[serde(default)]
    pub(super) sha: String,
    pub(super) repo_id: Option<u64>,
    /// `null` when the head's fork was deleted.
    pub(super) repo: Option<BranchRepoJson>,
}

#[derive(Deserialize)]
pub(super) struct BranchRepoJson {
    pub(super) full_name: String,
}

impl PullJson {
    /// The base the forge diffs against is the merge base; `base.sha` is the base branch's tip,
    /// which is also the start of the diff as GitLab names it.
    pub(super) fn into_domain(self) -> PullRequest {
        let merge_base = self.merge_base.filter(|sha| !sha.is_empty());
        let draft = self
            .draft
            .unwrap_or_else(|| wip_prefix_len(&self.title).is_some());
        PullRequest {
            number: Number(self.number),
            title: self.title,
            web_url: self.html_url,
            head_branch: self.head.branch,
            head_repo: RepoName(self.head.repo.map(|r| r.full_name).unwrap_or_default()),
            head_sha: CommitSha(self.head.sha),
            base_branch: self.base.branch,
            base_sha: CommitSha(merge_base.unwrap_or_else(|| self.base.sha.clone())),
            start_sha: CommitSha(self.base.sha),
            draft,
            // Forgejo does not say which accounts are bots; their names may.
            author: self.user.map(|u| crate::agents::Account {
                login: u.login,
                bot: false,
            }),
        }
    }

    /// Whether the head branch lives in `repo` itself, not in a fork.
    pub(super) fn head_in(&self, repo: &RepoName) -> bool {
        match (self.head.repo_id, self.base.repo_id) {
            (Some(head), Some(base)) if head != 0 && base != 0 => head == base,
            _ => self
                .head
                .repo
                .as_ref()
                .is_some_and(|r| r.full_name.eq_ignore_ascii_case(&repo.0)),
        }
    }
}

#[derive(Deserialize)]
pub(super) struct ReviewJson {
    pub(super) id: u64,
    #[serde(default)]
    pub(super) state: String,
    /// Older Gitea leaves it out; the comments are asked for then.
    pub(super) comments_count: Option<u64>,
}

#[derive(Deserialize)]
pub(super) struct ReviewCommentJson {
    pub(super) id: u64,
    #[serde(default)]
    pub(super) path: String,
    #[serde(default)]
    pub(super) body: String,
    /// The line on the new side (0 when the comment is on the old side).
    pub(super) position: Option<u64>,
    /// The line on the old side, for a comment on a removed line.
    pub(super) original_position: Option<u64>,
    /// Who resolved the conversation in Forgejo's web interface; `null` while it is open.
    #[serde(default)]
    pub(super) resolver: Option<serde::de::IgnoredAny>,
}

/// A file's path in a URL: each segment encoded, the slashes between them kept.
pub(super) fn file_path(path: &str) -> String {
    path.split('/')
        .filter(|segment| !segment.is_empty())
        .map(encode)
        .collect::<Vec<_>>()
        .join("/")
}

/// `X-Total-Count`, when the answer has a readable one.
pub(super) fn total_count(headers: &HeaderMap) -> Option<usize> {
    headers
        .get("x-total-count")?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The forge-neutral role of Forgejo's access mode; a mode it does not name is no access.
pub fn permission_of(mode: &str) -> Permission {
    match mode {
        "owner" | "admin" => Permission::Admin,
        "write" => Permission::Write,
        "read" => Permission::Read,
        _ => Permission::None,
    }
}

pub(super) fn state_of(state: StatusState) -> &'static str {
    match state {
        StatusState::Pending => "pending",
        StatusState::Success => "success",
        StatusState::Failure => "failure",
        StatusState::Error => "error",
    }
}

/// The first `max` characters of `text`.
pub(super) fn cut_chars(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// The length of the work-in-progress prefix `title` starts with, if any.
pub(super) fn wip_prefix_len(title: &str) -> Option<usize> {
    WIP_PREFIXES.iter().find_map(|prefix| {
        title
            .get(..prefix.len())
            .filter(|start| start.eq_ignore_ascii_case(prefix))
            .map(str::len)
    })
}

/// The title Forgejo is sent: a draft's starts `WIP: ` once, any other's without the prefix.
pub(super) fn title_of(spec: &PullRequestSpec) -> String {
    let bare = match wip_prefix_len(&spec.title) {
        Some(len) => spec.title[len..].trim_start(),
        None => &spec.title,
    };
    if spec.draft {
        format!("{DRAFT_PREFIX}{bare}")
    } else {
        bare.to_owned()
    }
}

/// The review's body, then each of `flags` as `- path: note` (`path:line` for a flag with a
/// line), as the GitHub client lists the flags without a line.
pub(super) fn review_text(body: &str, flags: &[&ReviewFlag]) -> String {
    let mut out = body.trim_end().to_owned();
    let notes: Vec<String> = flags
        .iter()
        .map(|flag| match flag.line {
            Some(line) => format!("- `{}:{line}`: {}", flag.path, flag.body.trim_end()),
            None => format!("- `{}`: {}", flag.path, flag.body.trim_end()),
        })
        .collect();
    if !notes.is_empty() {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(&notes.join("\n"));
    }
    out
}
