//! How a test speaks to the fake forge: seeding a repository through a [`RepoHandle`]
//! (`forge.github_repo("acme/widgets").collaborator("alice", Write).issue(7, "t", "b")`),
//! and reading back what the clients did (`forge.comments(&repo, 7)`). Seeding is not a write;
//! each reader consumes the writes on what it reads (see the module doc of `fake_forge`).

use forgeward::forge::api::{Permission, RESOLVED_MARKER};
use forgeward::forge::{Actor, Forge, RepoName};

use super::state::{Annotation, Comment, Issue, Kind, Position, Pull, Repo, State, Topic, sha_of};
use super::{FakeForge, Shared, lock};

/// The marker that makes a comment the bot's status comment.
const STATUS_MARKER: &str = "<!-- forgeward:status";

/// The first user id the fake hands out; ids are per forge-wide, as on the forges.
const FIRST_USER_ID: u64 = 5000;

/// What a reader is about: a number (an issue or pull request on GitHub; on GitLab whichever
/// of issue and merge request has it, ambiguity being a test error), or one said outright.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    Number(u64),
    Issue(u64),
    Pull(u64),
}

impl From<u64> for Target {
    fn from(number: u64) -> Target {
        Target::Number(number)
    }
}

/// Issue `n` (on GitLab, where issues and merge requests are numbered apart).
pub fn issue(n: u64) -> Target {
    Target::Issue(n)
}

/// Pull request or merge request `n`.
pub fn pr(n: u64) -> Target {
    Target::Pull(n)
}

fn resolve(repo: &Repo, target: Target) -> (Kind, u64) {
    let n = match target {
        Target::Issue(n) => return (Kind::Issue, n),
        Target::Pull(n) => return (Kind::Pull, n),
        Target::Number(n) => n,
    };
    match (repo.issues.contains_key(&n), repo.pulls.contains_key(&n)) {
        (true, false) => (Kind::Issue, n),
        (false, true) => (Kind::Pull, n),
        (true, true) => panic!(
            "{}: both an issue and a merge request are #{n}; say issue({n}) or pr({n})",
            repo.name
        ),
        (false, false) => panic!("{}: there is no issue or pull request #{n}", repo.name),
    }
}

/// A comment as a test reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommentView {
    pub id: u64,
    pub author: String,
    pub body: String,
    /// Reaction contents (GitHub) or emoji names (GitLab) on it.
    pub reactions: Vec<String>,
}

/// A line comment as a test reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlagView {
    pub path: String,
    pub line: Option<u32>,
    pub body: String,
    /// Resolved: GitHub's thread or GitLab's discussion, or, on Forgejo (whose API cannot
    /// resolve one), the comment edited to say so.
    pub resolved: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PullView {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub draft: bool,
    pub open: bool,
    pub head_branch: String,
    pub base_branch: String,
    pub head_sha: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusView {
    pub name: String,
    /// As the forge spells it (`success`, `failed`, a check run's `completed/success`).
    pub state: String,
    pub description: String,
    pub target_url: Option<String>,
    pub check_run: bool,
}

/// A GitHub check run as a test reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckRunView {
    pub id: u64,
    pub name: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub details_url: Option<String>,
    pub annotations: Vec<Annotation>,
    /// The requests that made and updated it.
    pub requests: usize,
}

/// A seeded repository (GitHub) or project (GitLab). Every method seeds and returns the
/// handle, so seeding chains.
#[derive(Clone)]
pub struct RepoHandle {
    shared: Shared,
    forge: Forge,
    name: String,
}

impl RepoHandle {
    pub fn name(&self) -> RepoName {
        RepoName(self.name.clone())
    }

    pub fn id(&self) -> u64 {
        self.read(|repo| repo.id)
    }

    fn read<T>(&self, f: impl FnOnce(&Repo) -> T) -> T {
        let state = lock(&self.shared);
        f(state
            .repo(self.forge, &self.name)
            .expect("the handle's repository"))
    }

    fn seed(&self, f: impl FnOnce(&mut State, &str)) -> RepoHandle {
        f(&mut lock(&self.shared), &self.name);
        self.clone()
    }

    fn seed_repo(&self, f: impl FnOnce(&mut Repo)) -> RepoHandle {
        let forge = self.forge;
        self.seed(|state, name| {
            f(state
                .repo_mut(forge, name)
                .expect("the handle's repository"))
        })
    }

    pub fn default_branch(&self, branch: &str) -> RepoHandle {
        self.seed_repo(|repo| {
            repo.default_branch = branch.to_owned();
            repo.branches
                .entry(branch.to_owned())
                .or_insert_with(|| sha_of(branch));
        })
    }

    /// Branches as a real bare repository has them (the remote the bot pushes to).
    pub fn git_dir(&self, dir: &std::path::Path) -> RepoHandle {
        let dir = dir.to_path_buf();
        self.seed_repo(move |repo| repo.git_dir = Some(dir))
    }

    /// A branch at `sha`.
    pub fn branch(&self, branch: &str, sha: &str) -> RepoHandle {
        self.seed_repo(|repo| {
            repo.branches.insert(branch.to_owned(), sha.to_owned());
        })
    }

    /// A collaborator (GitHub) or member (GitLab) with a role; each login gets its own id.
    pub fn collaborator(&self, login: &str, permission: Permission) -> RepoHandle {
        self.seed(|state, name| {
            let id = FIRST_USER_ID + state.next_id();
            let repo = state
                .repo_mut(self.forge, name)
                .expect("the handle's repository");
            repo.members.insert(login.to_owned(), (id, permission));
        })
    }

    /// A seeded collaborator as the webhook parsers name people.
    pub fn actor(&self, login: &str) -> Actor {
        let id = self.read(|repo| repo.members.get(login).map(|(id, _)| *id));
        Actor {
            login: login.to_owned(),
            id: id.unwrap_or_else(|| panic!("{login} is not a collaborator of {}", self.name)),
        }
    }

    pub fn issue(&self, number: u64, title: &str, body: &str) -> RepoHandle {
        self.seed_repo(|repo| {
            repo.issues.insert(
                number,
                Issue {
                    title: title.to_owned(),
                    body: body.to_owned(),
                    author: "alice".to_owned(),
                    labels: Vec::new(),
                },
            );
        })
    }

    /// An open pull/merge request from `head_branch` of this repository into `base_branch`;
    /// branches not seeded yet are made, each at a sha of its own.
    pub fn pull(&self, number: u64, head_branch: &str, base_branch: &str) -> RepoHandle {
        let name = self.name.clone();
        self.fork_pull(number, &name, head_branch, base_branch)
    }

    /// An open pull/merge request from a branch of `head_repo` (a fork).
    pub fn fork_pull(
        &self,
        number: u64,
        head_repo: &str,
        head_branch: &str,
        base_branch: &str,
    ) -> RepoHandle {
        self.seed_repo(|repo| {
            let mut sha = |branch: &str| {
                repo.branches
                    .entry(branch.to_owned())
                    .or_insert_with(|| sha_of(branch))
                    .clone()
            };
            let (head_sha, base_sha) = (sha(head_branch), sha(base_branch));
            repo.pulls.insert(
                number,
                Pull {
                    title: format!("Pull request {number}"),
                    body: String::new(),
                    author: "alice".to_owned(),
                    labels: Vec::new(),
                    head_branch: head_branch.to_owned(),
                    head_sha,
                    head_repo: head_repo.to_owned(),
                    base_branch: base_branch.to_owned(),
                    base_sha,
                    draft: false,
                    open: true,
                    commentable: None,
                    reviews: Vec::new(),
                },
            );
        })
    }

    /// Pull request `number` was opened by `login` (`name[bot]`: an App's bot account).
    pub fn pull_author(&self, number: u64, login: &str) -> RepoHandle {
        self.seed_repo(|repo| {
            let pull = repo.pulls.get_mut(&number).expect("a seeded pull request");
            pull.author = login.to_owned();
        })
    }

    /// A push to the head branch of pull request `number`: its head is now `sha`.
    pub fn push(&self, number: u64, sha: &str) -> RepoHandle {
        self.seed_repo(|repo| {
            let pull = repo.pulls.get_mut(&number).expect("a seeded pull request");
            pull.head_sha = sha.to_owned();
            let branch = pull.head_branch.clone();
            if pull.head_repo == repo.name {
                repo.branches.insert(branch, sha.to_owned());
            }
        })
    }

    /// Only these (path, new line) pairs of pull request `number` take line comments.
    pub fn commentable(&self, number: u64, lines: &[(&str, u32)]) -> RepoHandle {
        self.seed_repo(|repo| {
            let pull = repo.pulls.get_mut(&number).expect("a seeded pull request");
            pull.commentable = Some(lines.iter().map(|(p, l)| ((*p).to_owned(), *l)).collect());
        })
    }

    /// A file's content at a revision (a branch name or a sha).
    pub fn file(&self, revision: &str, path: &str, content: impl AsRef<[u8]>) -> RepoHandle {
        self.seed_repo(|repo| {
            repo.files.insert(
                (revision.to_owned(), path.to_owned()),
                content.as_ref().to_vec(),
            );
        })
    }

    /// The GitHub App is installed on this repository as installation `id`.
    pub fn installation(&self, id: u64) -> RepoHandle {
        self.seed_repo(|repo| repo.installation = Some(id))
    }

    pub fn label(&self, target: impl Into<Target>, label: &str) -> RepoHandle {
        self.seed_repo(|repo| {
            let (kind, n) = resolve(repo, target.into());
            repo.labels_mut(kind, n)
                .expect("a seeded issue or pull request")
                .push(label.to_owned());
        })
    }

    /// The labels on an issue or pull request as seeded or set, without consuming writes.
    pub fn labels_of(&self, target: impl Into<Target>) -> Vec<String> {
        self.read(|repo| {
            let (kind, n) = resolve(repo, target.into());
            match kind {
                Kind::Issue => repo.issues.get(&n).map(|i| i.labels.clone()),
                Kind::Pull => repo.pulls.get(&n).map(|p| p.labels.clone()),
            }
            .unwrap_or_default()
        })
    }

    /// A comment by `author`; returns its id.
    pub fn comment(&self, target: impl Into<Target>, author: &str, body: &str) -> u64 {
        self.add_comment(target.into(), author, body, None)
    }

    /// A line comment (GitHub review comment, GitLab diff note) on pull request `number`.
    pub fn line_comment(
        &self,
        number: u64,
        author: &str,
        path: &str,
        line: u32,
        body: &str,
    ) -> u64 {
        let pull = self.read(|repo| {
            let p = repo.pulls.get(&number).expect("a seeded pull request");
            (p.head_sha.clone(), p.base_sha.clone())
        });
        let position = Position {
            path: path.to_owned(),
            line: Some(line),
            commit: pull.0,
            base_sha: pull.1.clone(),
            start_sha: pull.1,
            resolved: false,
        };
        self.add_comment(Target::Pull(number), author, body, Some(position))
    }

    fn add_comment(
        &self,
        target: Target,
        author: &str,
        body: &str,
        position: Option<Position>,
    ) -> u64 {
        let mut state = lock(&self.shared);
        let repo = state
            .repo(self.forge, &self.name)
            .expect("the handle's repository");
        let (kind, number) = resolve(repo, target);
        let id = state.next_id();
        state.comments.push(Comment {
            id,
            repo: self.name.clone(),
            kind,
            number,
            author: author.to_owned(),
            body: body.to_owned(),
            reactions: Vec::new(),
            position,
            discussion: id,
            system: false,
        });
        id
    }

    /// A GitLab system note ("added 1 commit") on `target`.
    pub fn system_note(&self, target: impl Into<Target>, body: &str) -> u64 {
        let id = self.add_comment(target.into(), "forgeward-bot", body, None);
        if let Some(c) = lock(&self.shared).comments.iter_mut().find(|c| c.id == id) {
            c.system = true;
        }
        id
    }
}

impl FakeForge {
    /// Seeds a GitHub repository `owner/name` (default branch `main`).
    /// The GitHub App `GET /app` describes: `id` (its JWT must be signed with the test key and
    /// name it), with these permissions and events. Its installations are those seeded on
    /// repositories ([`RepoHandle::installation`]).
    pub fn github_app(&self, id: u64, permissions: &[(&str, &str)], events: &[&str]) {
        lock(&self.shared).app = Some(super::state::App {
            id,
            slug: "forgeward".to_owned(),
            permissions: permissions
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            events: events.iter().map(|e| (*e).to_owned()).collect(),
        });
    }

    pub fn github_repo(&self, name: &str) -> RepoHandle {
        self.add_repo(Forge::GitHub, name)
    }

    /// Seeds a GitLab project by its full path (default branch `main`).
    pub fn gitlab_project(&self, path: &str) -> RepoHandle {
        self.add_repo(Forge::GitLab, path)
    }

    /// Seeds a Forgejo repository `owner/name` (default branch `main`).
    pub fn forgejo_repo(&self, name: &str) -> RepoHandle {
        self.add_repo(Forge::Forgejo, name)
    }

    fn add_repo(&self, forge: Forge, name: &str) -> RepoHandle {
        let mut state = self.state();
        let id = state.next_id();
        state.repos.push(Repo::new(forge, name, id));
        RepoHandle {
            shared: self.shared.clone(),
            forge,
            name: name.to_owned(),
        }
    }

    fn consume(&self, repo: &RepoHandle, topic: Topic) {
        self.state().consume(repo.forge, &repo.name, &topic);
    }

    fn target(&self, repo: &RepoHandle, target: Target) -> (Kind, u64) {
        let state = self.state();
        resolve(
            state
                .repo(repo.forge, &repo.name)
                .expect("a seeded repository"),
            target,
        )
    }

    /// Every comment on an issue or pull request (not line comments), oldest first.
    pub fn comments(&self, repo: &RepoHandle, target: impl Into<Target>) -> Vec<CommentView> {
        let (kind, n) = self.target(repo, target.into());
        self.consume(repo, Topic::Comments(kind, n));
        self.state()
            .comments
            .iter()
            .filter(|c| {
                c.repo == repo.name && c.kind == kind && c.number == n && c.position.is_none()
            })
            .map(|c| CommentView {
                id: c.id,
                author: c.author.clone(),
                body: c.body.clone(),
                reactions: c.reactions.iter().map(|(_, r)| r.clone()).collect(),
            })
            .collect()
    }

    /// The comment holding the status marker; panics if there are two.
    pub fn status_comment(
        &self,
        repo: &RepoHandle,
        target: impl Into<Target>,
    ) -> Option<CommentView> {
        let found: Vec<CommentView> = self
            .comments(repo, target)
            .into_iter()
            .filter(|c| c.body.contains(STATUS_MARKER))
            .collect();
        assert!(found.len() <= 1, "more than one status comment: {found:#?}");
        found.into_iter().next()
    }

    pub fn labels(&self, repo: &RepoHandle, target: impl Into<Target>) -> Vec<String> {
        let (kind, n) = self.target(repo, target.into());
        self.consume(repo, Topic::Labels(kind, n));
        let mut state = self.state();
        let repo = state
            .repo_mut(repo.forge, &repo.name)
            .expect("a seeded repository");
        repo.labels_mut(kind, n)
            .map(|l| l.clone())
            .unwrap_or_default()
    }

    /// The line comments on pull request `number`, oldest first.
    pub fn review_flags(&self, repo: &RepoHandle, number: u64) -> Vec<FlagView> {
        self.consume(repo, Topic::Review(number));
        self.state()
            .comments
            .iter()
            .filter(|c| c.repo == repo.name && c.kind == Kind::Pull && c.number == number)
            .filter_map(|c| {
                let p = c.position.as_ref()?;
                Some(FlagView {
                    path: p.path.clone(),
                    line: p.line,
                    body: c.body.clone(),
                    resolved: p.resolved || c.body.starts_with(RESOLVED_MARKER),
                })
            })
            .collect()
    }

    /// The bodies of the GitHub reviews on pull request `number`.
    pub fn review_bodies(&self, repo: &RepoHandle, number: u64) -> Vec<String> {
        self.consume(repo, Topic::Review(number));
        let state = self.state();
        let repo = state
            .repo(repo.forge, &repo.name)
            .expect("a seeded repository");
        repo.pulls
            .get(&number)
            .map(|p| p.reviews.iter().map(|(_, body, _)| body.clone()).collect())
            .unwrap_or_default()
    }

    /// The open pull/merge request from `branch`, if any.
    pub fn pull_request_for_branch(&self, repo: &RepoHandle, branch: &str) -> Option<PullView> {
        self.consume(repo, Topic::PullRequest(branch.to_owned()));
        let state = self.state();
        let repo = state
            .repo(repo.forge, &repo.name)
            .expect("a seeded repository");
        repo.pulls
            .iter()
            .find(|(_, p)| p.open && p.head_branch == branch)
            .map(|(n, p)| PullView {
                number: *n,
                title: p.title.clone(),
                body: p.body.clone(),
                draft: p.draft,
                open: p.open,
                head_branch: p.head_branch.clone(),
                base_branch: p.base_branch.clone(),
                head_sha: p.head_sha.clone(),
            })
    }

    /// Every status and check run on `sha`, oldest first (a check run's state is its status,
    /// or `completed/<conclusion>`; its description, its output's title).
    pub fn commit_statuses(&self, repo: &RepoHandle, sha: &str) -> Vec<StatusView> {
        self.consume(repo, Topic::Status(sha.to_owned()));
        let state = self.state();
        let repo = state
            .repo(repo.forge, &repo.name)
            .expect("a seeded repository");
        let statuses = repo.statuses.iter().filter(|s| s.sha == sha).map(|s| {
            (
                s.id,
                StatusView {
                    name: s.name.clone(),
                    state: s.state.clone(),
                    description: s.description.clone(),
                    target_url: s.target_url.clone(),
                    check_run: false,
                },
            )
        });
        let runs = repo.check_runs.iter().filter(|r| r.sha == sha).map(|r| {
            (
                r.id,
                StatusView {
                    name: r.name.clone(),
                    state: match &r.conclusion {
                        Some(c) => format!("completed/{c}"),
                        None => r.status.clone(),
                    },
                    description: r.title.clone().unwrap_or_default(),
                    target_url: r.details_url.clone(),
                    check_run: true,
                },
            )
        });
        let mut all: Vec<(u64, StatusView)> = statuses.chain(runs).collect();
        all.sort_by_key(|(id, _)| *id);
        all.into_iter().map(|(_, view)| view).collect()
    }

    /// Every check run on `sha`, oldest first, whole: output and annotations.
    pub fn check_runs(&self, repo: &RepoHandle, sha: &str) -> Vec<CheckRunView> {
        self.consume(repo, Topic::Status(sha.to_owned()));
        let state = self.state();
        let repo = state
            .repo(repo.forge, &repo.name)
            .expect("a seeded repository");
        repo.check_runs
            .iter()
            .filter(|r| r.sha == sha)
            .map(|r| CheckRunView {
                id: r.id,
                name: r.name.clone(),
                status: r.status.clone(),
                conclusion: r.conclusion.clone(),
                title: r.title.clone(),
                summary: r.summary.clone(),
                details_url: r.details_url.clone(),
                annotations: r.annotations.clone(),
                requests: r.requests,
            })
            .collect()
    }

    /// The latest `forgeward` status or check run on `sha`.
    pub fn commit_status(&self, repo: &RepoHandle, sha: &str) -> Option<StatusView> {
        self.commit_statuses(repo, sha)
            .into_iter()
            .rev()
            .find(|s| s.name == forgeward::forge::api::STATUS_CONTEXT)
    }
}
