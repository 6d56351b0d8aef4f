//! What the fake forge holds: repositories (GitHub) and projects (GitLab) with their issues,
//! pull/merge requests, comments, files, branches and statuses, plus what it saw — the writes a
//! test has not looked at yet, the requests it could not route, the credentials each request
//! carried. Forge-neutral: `github` and `gitlab` render it in each forge's JSON.

use std::collections::{BTreeMap, BTreeSet};

use forgeward::forge::Forge;
use forgeward::forge::api::Permission;

/// The whole state, behind the fake forge's one mutex.
#[derive(Default)]
pub struct State {
    /// `http://127.0.0.1:<port>`, for the URLs answers carry.
    pub base_url: String,
    pub repos: Vec<Repo>,
    /// Every comment and note, on every repository: one id space, as on both forges.
    pub comments: Vec<Comment>,
    pub writes: Vec<Write>,
    /// Requests no route matched: `GET /repos/acme/widgets/hooks`.
    pub unexpected: Vec<String>,
    pub requests: Vec<Seen>,
    /// Answers to give instead of routing, oldest first (failure injection).
    pub injected: Vec<Injected>,
    /// Installation tokens handed out: the token, its installation, when it expires.
    pub installation_tokens: Vec<(String, u64, chrono::DateTime<chrono::Utc>)>,
    /// How long a new installation token lives; GitHub's live an hour. `None`: an hour.
    pub token_lifetime: Option<chrono::Duration>,
    /// The GitHub App `GET /app` describes, once a test seeds one.
    pub app: Option<App>,
    next_id: u64,
}

/// The GitHub App: what `GET /app` answers to a JWT signed with the test key for its id.
#[derive(Clone, Debug)]
pub struct App {
    pub id: u64,
    pub slug: String,
    /// Permission name → `read`, `write` or `admin`.
    pub permissions: BTreeMap<String, String>,
    pub events: Vec<String>,
}

/// A request as the fake forge saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    /// Path and query.
    pub uri: String,
    /// `Authorization` (GitHub) or `PRIVATE-TOKEN` (GitLab), as sent.
    pub credential: Option<String>,
}

/// An answer given instead of routing the next request.
#[derive(Clone, Debug)]
pub struct Injected {
    pub status: u16,
    pub headers: Vec<(String, String)>,
}

/// What a write changed, so that a reader of that thing consumes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topic {
    /// Comments, notes and reactions on an issue, pull or merge request.
    Comments(Kind, u64),
    Labels(Kind, u64),
    /// Review comments, reviews and diff discussions on a pull/merge request.
    Review(u64),
    /// A pull/merge request created or edited, by its head branch.
    PullRequest(String),
    /// Commit statuses and check runs on a commit.
    Status(String),
}

/// A write the forge received and a test has not consumed yet.
#[derive(Clone, Debug)]
pub struct Write {
    pub forge: Forge,
    pub repo: String,
    pub method: String,
    pub path: String,
    pub body: serde_json::Value,
    pub topic: Topic,
}

impl std::fmt::Display for Write {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} {}", self.method, self.path, self.body)
    }
}

/// Issues and pull/merge requests: one number space on GitHub, two on GitLab.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Issue,
    Pull,
}

pub struct Repo {
    pub forge: Forge,
    pub name: String,
    pub id: u64,
    pub default_branch: String,
    /// Branch name → head sha.
    pub branches: BTreeMap<String, String>,
    /// Login → (user id, permission).
    pub members: BTreeMap<String, (u64, Permission)>,
    pub issues: BTreeMap<u64, Issue>,
    pub pulls: BTreeMap<u64, Pull>,
    /// (revision, path) → bytes.
    pub files: BTreeMap<(String, String), Vec<u8>>,
    pub statuses: Vec<Status>,
    pub check_runs: Vec<CheckRun>,
    /// Forgejo's repository labels, by name: their ids.
    pub label_ids: BTreeMap<String, u64>,
    /// The GitHub App's installation on this repository, if it is installed.
    pub installation: Option<u64>,
    /// A real bare repository whose branches this one has (the remote the bot pushes to in
    /// end-to-end tests); its branches win over the seeded ones.
    pub git_dir: Option<std::path::PathBuf>,
}

impl Repo {
    pub fn new(forge: Forge, name: &str, id: u64) -> Repo {
        Repo {
            forge,
            name: name.to_owned(),
            id,
            default_branch: "main".to_owned(),
            branches: BTreeMap::from([("main".to_owned(), sha_of("main"))]),
            members: BTreeMap::new(),
            issues: BTreeMap::new(),
            pulls: BTreeMap::new(),
            files: BTreeMap::new(),
            statuses: Vec::new(),
            check_runs: Vec::new(),
            label_ids: BTreeMap::new(),
            installation: None,
            git_dir: None,
        }
    }

    /// Where a branch points: in the backing git repository if there is one, else as seeded.
    pub fn branch_sha(&self, branch: &str) -> Option<String> {
        let from_git = self.git_dir.as_ref().and_then(|dir| {
            let repo = git2::Repository::open_bare(dir).ok()?;
            let oid = repo.refname_to_id(&format!("refs/heads/{branch}")).ok()?;
            Some(oid.to_string())
        });
        from_git.or_else(|| self.branches.get(branch).cloned())
    }

    /// The owner part of `owner/name` (GitHub) or the namespace of a project (GitLab).
    pub fn owner(&self) -> &str {
        self.name.rsplit_once('/').map_or("", |(owner, _)| owner)
    }

    pub fn labels_mut(&mut self, kind: Kind, number: u64) -> Option<&mut Vec<String>> {
        match kind {
            Kind::Issue => self.issues.get_mut(&number).map(|i| &mut i.labels),
            Kind::Pull => self.pulls.get_mut(&number).map(|p| &mut p.labels),
        }
    }

    /// A file at a revision: seeded at that revision (a branch or a sha), or at a branch that
    /// points at the sha asked for, or at the sha of the branch asked for.
    pub fn file_at(&self, revision: &str, path: &str) -> Option<&Vec<u8>> {
        let at = |rev: &str| self.files.get(&(rev.to_owned(), path.to_owned()));
        at(revision)
            .or_else(|| self.branches.get(revision).and_then(|sha| at(sha)))
            .or_else(|| {
                self.branches
                    .iter()
                    .filter(|(_, sha)| *sha == revision)
                    .find_map(|(branch, _)| at(branch))
            })
    }

    /// The next free number: GitHub shares it between issues and pulls, GitLab does not.
    pub fn next_number(&self, kind: Kind) -> u64 {
        let issues = self.issues.keys().max().copied().unwrap_or(0);
        let pulls = self.pulls.keys().max().copied().unwrap_or(0);
        match (self.forge, kind) {
            (Forge::GitHub | Forge::Forgejo, _) => issues.max(pulls) + 1,
            (Forge::GitLab, Kind::Issue) => issues + 1,
            (Forge::GitLab, Kind::Pull) => pulls + 1,
        }
    }
}

pub struct Issue {
    pub title: String,
    pub body: String,
    pub author: String,
    pub labels: Vec<String>,
}

pub struct Pull {
    pub title: String,
    pub body: String,
    pub author: String,
    pub labels: Vec<String>,
    pub head_branch: String,
    pub head_sha: String,
    /// The repository the head branch lives in (a fork, or this one).
    pub head_repo: String,
    pub base_branch: String,
    pub base_sha: String,
    pub draft: bool,
    pub open: bool,
    /// The (path, line) pairs on the new side of the diff a line comment may go on; `None`
    /// means any.
    pub commentable: Option<BTreeSet<(String, u32)>>,
    /// GitHub reviews: (id, body, commit).
    pub reviews: Vec<(u64, String, String)>,
}

impl Pull {
    pub fn may_comment(&self, path: &str, line: u32) -> bool {
        self.commentable
            .as_ref()
            .is_none_or(|lines| lines.contains(&(path.to_owned(), line)))
    }
}

/// A comment (GitHub issue or review comment, GitLab note).
#[derive(Clone, Debug)]
pub struct Comment {
    pub id: u64,
    pub repo: String,
    pub kind: Kind,
    pub number: u64,
    pub author: String,
    pub body: String,
    /// (user, reaction or emoji name).
    pub reactions: Vec<(String, String)>,
    /// Set on line comments: GitHub review comments, GitLab diff notes.
    pub position: Option<Position>,
    /// The GitLab discussion it belongs to (its own id for a lone note).
    pub discussion: u64,
    /// GitLab's "added 1 commit" notes.
    pub system: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    pub path: String,
    pub line: Option<u32>,
    /// The head commit it was made on.
    pub commit: String,
    /// GitLab: base and start sha of the position.
    pub base_sha: String,
    pub start_sha: String,
    /// The conversation resolved (GitHub's review thread, GitLab's discussion).
    pub resolved: bool,
}

/// A commit status (GitHub, GitLab or Forgejo).
#[derive(Clone, Debug)]
pub struct Status {
    pub id: u64,
    pub sha: String,
    /// The context (GitHub) or name (GitLab).
    pub name: String,
    /// As the forge spells it: `success`, `failure`, `failed`.
    pub state: String,
    pub description: String,
    pub target_url: Option<String>,
}

/// The GitHub App's id, as the fake's installations name it.
pub const APP_ID: u64 = 1;

/// A GitHub check run, as the App made and updated it.
#[derive(Clone, Debug)]
pub struct CheckRun {
    pub id: u64,
    pub sha: String,
    pub name: String,
    /// `queued`, `in_progress` or `completed`.
    pub status: String,
    pub conclusion: Option<String>,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub details_url: Option<String>,
    /// Every annotation, in the order the requests added them.
    pub annotations: Vec<Annotation>,
    /// The requests that made and updated it.
    pub requests: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Annotation {
    pub path: String,
    pub start_line: u64,
    pub end_line: u64,
    /// `notice`, `warning` or `failure`.
    pub level: String,
    pub title: Option<String>,
    pub message: String,
}

impl State {
    pub fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        1000 + self.next_id
    }

    pub fn repo(&self, forge: Forge, name: &str) -> Option<&Repo> {
        self.repos
            .iter()
            .find(|r| r.forge == forge && r.name == name)
    }

    pub fn repo_mut(&mut self, forge: Forge, name: &str) -> Option<&mut Repo> {
        self.repos
            .iter_mut()
            .find(|r| r.forge == forge && r.name == name)
    }

    pub fn repo_by_id(&self, forge: Forge, id: u64) -> Option<&Repo> {
        self.repos.iter().find(|r| r.forge == forge && r.id == id)
    }

    pub fn comment_mut(&mut self, repo: &str, id: u64) -> Option<&mut Comment> {
        self.comments
            .iter_mut()
            .find(|c| c.repo == repo && c.id == id)
    }

    /// Takes every unconsumed write on `topic` of `repo`.
    pub fn consume(&mut self, forge: Forge, repo: &str, topic: &Topic) -> Vec<Write> {
        let (taken, kept) = std::mem::take(&mut self.writes)
            .into_iter()
            .partition(|w| w.forge == forge && w.repo == repo && &w.topic == topic);
        self.writes = kept;
        taken
    }
}

/// A stable, made-up 40-digit sha for a name: tests name commits, the forge wants shas.
pub fn sha_of(name: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut out = String::new();
    for salt in 0..3u8 {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (salt, name).hash(&mut hasher);
        out.push_str(&format!("{:016x}", hasher.finish()));
    }
    out.truncate(40);
    out
}
