//! What a forge tells the bot, in the bot's own terms: the events it acts on, with the forge's
//! JSON left behind in `forge/`.

use std::fmt;

/// The forges the bot speaks to.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Forge {
    #[serde(rename = "github")]
    GitHub,
    #[serde(rename = "gitlab")]
    GitLab,
    /// Forgejo or Gitea (Codeberg and self-hosted instances): one API, one webhook dialect.
    #[serde(rename = "forgejo")]
    Forgejo,
}

impl Forge {
    pub fn as_str(self) -> &'static str {
        match self {
            Forge::GitHub => "github",
            Forge::GitLab => "gitlab",
            Forge::Forgejo => "forgejo",
        }
    }
}

impl fmt::Display for Forge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Forge {
    type Err = String;

    fn from_str(s: &str) -> Result<Forge, String> {
        match s {
            "github" => Ok(Forge::GitHub),
            "gitlab" => Ok(Forge::GitLab),
            "forgejo" => Ok(Forge::Forgejo),
            _ => Err(format!("unknown forge '{s}'")),
        }
    }
}

/// A repository (GitHub, Forgejo) or project (GitLab): `owner/name`, or `group/subgroup/project`.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct RepoName(pub String);

impl fmt::Display for RepoName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A commit id as the forge sent it (40 or 64 hex digits).
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct CommitSha(pub String);

impl fmt::Display for CommitSha {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The number of an issue, pull request (GitHub, Forgejo) or merge request (GitLab `iid`) in its
/// repository.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct Number(pub u64);

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A repository on a forge: what a job's target is named by.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Repo {
    pub forge: Forge,
    pub name: RepoName,
    /// The forge's numeric id of the repository or project.
    pub id: u64,
}

/// A person or bot account on a forge.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Actor {
    pub login: String,
    pub id: u64,
}

/// What a comment was left on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Thread {
    Issue,
    /// A GitHub or Forgejo pull request, or a GitLab merge request.
    PullRequest,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PullRequestAction {
    Opened,
    /// New commits were pushed (GitHub `synchronize`, GitLab `update` with new commits, Forgejo
    /// `synchronized`).
    Synchronized,
    Reopened,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InstallationAction {
    Added,
    Removed,
}

/// An event the bot acts on. Anything else a forge sends is acknowledged and ignored.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The forge checks the hook works.
    Ping,
    /// Labels were put on an issue: one on GitHub, possibly several at once on GitLab. Forgejo
    /// and Gitea do not say which label a change put on: from them, `labels` is every label the
    /// issue has after the change, and the trigger label may have been there before
    /// ([`crate::trigger::labels_once`]). An issue opened with labels lists them all, on every
    /// forge.
    IssueLabeled {
        repo: Repo,
        number: Number,
        labels: Vec<String>,
        actor: Actor,
        title: String,
        body: String,
    },
    /// A comment on an issue, pull request or merge request, as it was created.
    Comment {
        repo: Repo,
        number: Number,
        thread: Thread,
        comment_id: u64,
        author: Actor,
        body: String,
    },
    /// A pull or merge request opened, given new commits, or reopened.
    PullRequest {
        repo: Repo,
        number: Number,
        action: PullRequestAction,
        /// Empty for GitLab, whose merge request hooks carry no base commit: the job reads the
        /// merge request's `diff_refs` instead.
        base_sha: CommitSha,
        head_sha: CommitSha,
        /// The repository the head branch lives in (`owner/name`), a fork or this one.
        head_repo: RepoName,
        is_fork: bool,
        author: Actor,
    },
    /// The GitHub App was installed on an account, or removed from it.
    Installation {
        action: InstallationAction,
        installation_id: u64,
        account: String,
        repos: Vec<RepoName>,
    },
}

impl Event {
    /// The issue or pull request a job for this event works on: jobs for one target run one
    /// at a time. `None` for events that are not about one (ping, installation).
    pub fn target(&self) -> Option<String> {
        let (repo, number) = match self {
            Event::IssueLabeled { repo, number, .. }
            | Event::Comment { repo, number, .. }
            | Event::PullRequest { repo, number, .. } => (repo, number),
            Event::Ping | Event::Installation { .. } => return None,
        };
        Some(format!("{}:{}#{}", repo.forge, repo.name, number))
    }

    /// The repository the event is about, if it is about one.
    pub fn repo(&self) -> Option<&Repo> {
        match self {
            Event::IssueLabeled { repo, .. }
            | Event::Comment { repo, .. }
            | Event::PullRequest { repo, .. } => Some(repo),
            Event::Ping | Event::Installation { .. } => None,
        }
    }

    /// A short name for logs and metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::Ping => "ping",
            Event::IssueLabeled { .. } => "issue_labeled",
            Event::Comment { .. } => "comment",
            Event::PullRequest { .. } => "pull_request",
            Event::Installation { .. } => "installation",
        }
    }
}
