//! In-process doubles for the pipeline's unit tests: a forge that keeps its state in memory,
//! records every call in order and fails the calls a test scripts, and a sandbox whose "worker"
//! writes files. With them the pipeline's own logic (permission checks, retries, the order of
//! publishing) is tested in milliseconds; the end-to-end tests with real sandboxes and the fake
//! forge over HTTP stay beside them.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;

use crate::forge::api::{
    CheckResult, CheckStart, Comment, ForgeApi, ForgeError, ForgeErrorKind, ForgeResult,
    GitCredentials, Issue, Permission, PostedFlag, PullRequest, PullRequestSpec, Review,
};
use crate::forge::{Actor, CommitSha, Forge, Number, RepoName, Thread};
use crate::sandbox::{Exit, LogSink, Sandbox, SandboxError, SandboxSpec, Stream};

/// A sandbox in this process: the "worker" writes `files` into the workspace and prints a
/// line, or (with `hang`) waits until it is stopped.
pub(crate) struct FakeSandbox {
    pub files: Vec<(&'static str, &'static str)>,
    pub hang: bool,
}

#[async_trait]
impl Sandbox for FakeSandbox {
    fn name(&self) -> &'static str {
        "fake"
    }

    async fn check(&self) -> Result<(), SandboxError> {
        Ok(())
    }

    async fn run(
        &self,
        spec: &SandboxSpec,
        log: &dyn LogSink,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<Exit, SandboxError> {
        log.line(Stream::Stdout, "working on it");
        if self.hang {
            cancel.cancelled().await;
            return Ok(Exit::Cancelled);
        }
        for (path, text) in &self.files {
            let path = spec.workspace.join(path);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        Ok(Exit::Code(0))
    }
}

/// A bare repository on disk with one commit on `main`: what the double forge serves for git.
pub(crate) fn bare_repository(dir: &Path, files: &[(&str, &str)]) -> PathBuf {
    let path = dir.join("remote.git");
    let git = git2::Repository::init_bare(&path).expect("init a bare repository");
    let commit = crate::git::testing::commit(&git, files, None);
    git.branch("main", &git.find_commit(commit).expect("the commit"), true)
        .expect("main");
    git.set_head("refs/heads/main").expect("HEAD");
    path
}

/// What the double forge holds and saw.
#[derive(Default)]
pub(crate) struct ForgeState {
    /// Every call, in order: its name and what it was about (`create_pull_request forgeward/issue-1`).
    pub calls: Vec<String>,
    /// Calls that fail, by name, each failure once, in order.
    pub failures: HashMap<&'static str, VecDeque<ForgeErrorKind>>,
    pub permissions: HashMap<String, Permission>,
    pub issues: HashMap<u64, Issue>,
    /// Comments on threads, by (thread, number).
    pub comments: HashMap<(Thread, u64), Vec<Comment>>,
    pub pulls: Vec<PullRequest>,
    pub reviews: Vec<(u64, Review)>,
    /// The review flags resolved, by thread (`review index/flag index`).
    pub resolved: BTreeSet<String>,
    /// The checks begun and ended, in order, on the commit each was about.
    pub checks: Vec<(CommitSha, Check)>,
    pub labels: HashMap<u64, BTreeSet<String>>,
    next_id: u64,
}

/// A check as the double forge saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Check {
    Started(CheckStart),
    Finished(CheckResult),
}

impl ForgeState {
    /// The results of the checks that ended, in order.
    pub fn finished_checks(&self) -> Vec<(CommitSha, CheckResult)> {
        self.checks
            .iter()
            .filter_map(|(sha, check)| match check {
                Check::Finished(result) => Some((sha.clone(), result.clone())),
                Check::Started(_) => None,
            })
            .collect()
    }
}

/// A forge in this process, speaking for one repository served from a bare repository on
/// disk. Each call is recorded before it is answered; a scripted failure is returned instead of
/// the answer.
pub(crate) struct ForgeDouble {
    forge: Forge,
    remote: PathBuf,
    state: Mutex<ForgeState>,
}

impl ForgeDouble {
    pub fn new(forge: Forge, remote: PathBuf) -> ForgeDouble {
        ForgeDouble {
            forge,
            remote,
            state: Mutex::new(ForgeState::default()),
        }
    }

    pub fn state(&self) -> MutexGuard<'_, ForgeState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `call` fails with each of `kinds` in turn before it answers again.
    pub fn fail(&self, call: &'static str, kinds: impl IntoIterator<Item = ForgeErrorKind>) {
        self.state().failures.entry(call).or_default().extend(kinds);
    }

    pub fn calls(&self) -> Vec<String> {
        self.state().calls.clone()
    }

    /// The names of the calls made, in order, without what they were about.
    pub fn call_names(&self) -> Vec<String> {
        self.calls()
            .iter()
            .map(|c| c.split(' ').next().unwrap_or_default().to_owned())
            .collect()
    }

    /// Records `call` (`name` and what it is about) and answers with its scripted failure, if
    /// one is left.
    fn enter(&self, repo: &RepoName, name: &'static str, about: &str) -> ForgeResult<()> {
        let mut state = self.state();
        state.calls.push(if about.is_empty() {
            name.to_owned()
        } else {
            format!("{name} {about}")
        });
        match state.failures.get_mut(name).and_then(VecDeque::pop_front) {
            Some(kind) => Err(ForgeError {
                forge: self.forge,
                call: name.to_owned(),
                repo: repo.clone(),
                kind,
            }),
            None => Ok(()),
        }
    }

    fn missing(&self, repo: &RepoName, name: &str) -> ForgeError {
        ForgeError {
            forge: self.forge,
            call: name.to_owned(),
            repo: repo.clone(),
            kind: ForgeErrorKind::NotFound,
        }
    }

    /// The tip of `branch` in the served repository, if it is there.
    pub fn branch_tip(&self, branch: &str) -> Option<String> {
        let git = git2::Repository::open_bare(&self.remote).ok()?;
        let reference = git.find_reference(&format!("refs/heads/{branch}")).ok()?;
        reference.target().map(|oid| oid.to_string())
    }

    fn next_id(&self) -> u64 {
        let mut state = self.state();
        state.next_id += 1;
        state.next_id
    }
}

#[async_trait]
impl ForgeApi for ForgeDouble {
    fn forge(&self) -> Forge {
        self.forge
    }

    fn git_url(&self, _repo: &RepoName) -> String {
        self.remote.display().to_string()
    }

    async fn git_credentials(&self, repo: &RepoName) -> ForgeResult<GitCredentials> {
        self.enter(repo, "git_credentials", "")?;
        Ok(GitCredentials {
            username: "x-access-token".to_owned(),
            password: "double-token".to_owned(),
        })
    }

    async fn default_branch(&self, repo: &RepoName) -> ForgeResult<String> {
        self.enter(repo, "default_branch", "")?;
        Ok("main".to_owned())
    }

    async fn issue(&self, repo: &RepoName, number: Number) -> ForgeResult<Issue> {
        self.enter(repo, "issue", &number.0.to_string())?;
        self.state()
            .issues
            .get(&number.0)
            .cloned()
            .ok_or_else(|| self.missing(repo, "issue"))
    }

    async fn comments(
        &self,
        repo: &RepoName,
        thread: Thread,
        number: Number,
    ) -> ForgeResult<Vec<Comment>> {
        self.enter(repo, "comments", &number.0.to_string())?;
        Ok(self
            .state()
            .comments
            .get(&(thread, number.0))
            .cloned()
            .unwrap_or_default())
    }

    async fn create_comment(
        &self,
        repo: &RepoName,
        thread: Thread,
        number: Number,
        body: &str,
    ) -> ForgeResult<Comment> {
        self.enter(repo, "create_comment", &number.0.to_string())?;
        let comment = Comment {
            id: self.next_id(),
            author: "forgeward[bot]".to_owned(),
            body: body.to_owned(),
        };
        self.state()
            .comments
            .entry((thread, number.0))
            .or_default()
            .push(comment.clone());
        Ok(comment)
    }

    async fn update_comment(
        &self,
        repo: &RepoName,
        thread: Thread,
        number: Number,
        comment_id: u64,
        body: &str,
    ) -> ForgeResult<()> {
        self.enter(repo, "update_comment", &comment_id.to_string())?;
        let mut state = self.state();
        let comment = state
            .comments
            .get_mut(&(thread, number.0))
            .and_then(|comments| comments.iter_mut().find(|c| c.id == comment_id));
        match comment {
            Some(comment) => {
                comment.body = body.to_owned();
                Ok(())
            }
            None => Err(self.missing(repo, "update_comment")),
        }
    }

    async fn react_eyes(
        &self,
        repo: &RepoName,
        _thread: Thread,
        _number: Number,
        comment_id: u64,
    ) -> ForgeResult<()> {
        self.enter(repo, "react_eyes", &comment_id.to_string())
    }

    async fn add_labels(
        &self,
        repo: &RepoName,
        _thread: Thread,
        number: Number,
        labels: &[String],
    ) -> ForgeResult<()> {
        self.enter(repo, "add_labels", &labels.join(","))?;
        self.state()
            .labels
            .entry(number.0)
            .or_default()
            .extend(labels.iter().cloned());
        Ok(())
    }

    async fn remove_label(
        &self,
        repo: &RepoName,
        _thread: Thread,
        number: Number,
        label: &str,
    ) -> ForgeResult<()> {
        self.enter(repo, "remove_label", label)?;
        if let Some(labels) = self.state().labels.get_mut(&number.0) {
            labels.remove(label);
        }
        Ok(())
    }

    async fn permission(&self, repo: &RepoName, actor: &Actor) -> ForgeResult<Permission> {
        self.enter(repo, "permission", &actor.login)?;
        Ok(self
            .state()
            .permissions
            .get(&actor.login)
            .copied()
            .unwrap_or(Permission::None))
    }

    async fn read_file(
        &self,
        repo: &RepoName,
        path: &str,
        revision: &str,
    ) -> ForgeResult<Option<Vec<u8>>> {
        self.enter(repo, "read_file", &format!("{path}@{revision}"))?;
        Ok(None)
    }

    async fn pull_request(&self, repo: &RepoName, number: Number) -> ForgeResult<PullRequest> {
        self.enter(repo, "pull_request", &number.0.to_string())?;
        self.state()
            .pulls
            .iter()
            .find(|p| p.number == number)
            .cloned()
            .ok_or_else(|| self.missing(repo, "pull_request"))
    }

    async fn find_pull_request(
        &self,
        repo: &RepoName,
        head_branch: &str,
    ) -> ForgeResult<Option<PullRequest>> {
        self.enter(repo, "find_pull_request", head_branch)?;
        Ok(self
            .state()
            .pulls
            .iter()
            .find(|p| p.head_branch == head_branch)
            .cloned())
    }

    async fn create_pull_request(
        &self,
        repo: &RepoName,
        spec: &PullRequestSpec,
    ) -> ForgeResult<PullRequest> {
        self.enter(repo, "create_pull_request", &spec.head_branch)?;
        // A forge refuses a pull request for a branch it does not have.
        let Some(head) = self.branch_tip(&spec.head_branch) else {
            return Err(ForgeError {
                forge: self.forge,
                call: "create_pull_request".to_owned(),
                repo: repo.clone(),
                kind: ForgeErrorKind::Invalid(format!("no branch {}", spec.head_branch)),
            });
        };
        let base = self.branch_tip(&spec.base_branch).unwrap_or_default();
        let number = Number(100 + self.next_id());
        let pr = PullRequest {
            number,
            title: spec.title.clone(),
            web_url: format!("https://forge.example/{repo}/pull/{}", number.0),
            head_branch: spec.head_branch.clone(),
            head_repo: repo.clone(),
            head_sha: CommitSha(head),
            base_branch: spec.base_branch.clone(),
            base_sha: CommitSha(base.clone()),
            start_sha: CommitSha(base),
            draft: spec.draft,
            author: None,
        };
        self.state().pulls.push(pr.clone());
        Ok(pr)
    }

    async fn update_pull_request(
        &self,
        repo: &RepoName,
        number: Number,
        spec: &PullRequestSpec,
    ) -> ForgeResult<PullRequest> {
        self.enter(repo, "update_pull_request", &number.0.to_string())?;
        let head = self.branch_tip(&spec.head_branch).unwrap_or_default();
        let mut state = self.state();
        let Some(pr) = state.pulls.iter_mut().find(|p| p.number == number) else {
            return Err(self.missing(repo, "update_pull_request"));
        };
        pr.title = spec.title.clone();
        pr.head_sha = CommitSha(head);
        Ok(pr.clone())
    }

    async fn review_flags(&self, repo: &RepoName, number: Number) -> ForgeResult<Vec<PostedFlag>> {
        self.enter(repo, "review_flags", &number.0.to_string())?;
        let state = self.state();
        let resolved = &state.resolved;
        Ok(state
            .reviews
            .iter()
            .enumerate()
            .filter(|(_, (n, _))| *n == number.0)
            .flat_map(|(r, (_, review))| {
                review.flags.iter().enumerate().map(move |(f, flag)| {
                    let thread = format!("{r}/{f}");
                    PostedFlag {
                        resolved: resolved.contains(&thread),
                        thread,
                        path: flag.path.clone(),
                        line: flag.line,
                        body: flag.body.clone(),
                    }
                })
            })
            .collect())
    }

    async fn resolve_flag(
        &self,
        repo: &RepoName,
        _number: Number,
        flag: &PostedFlag,
        _why: &str,
    ) -> ForgeResult<()> {
        self.enter(repo, "resolve_flag", &flag.thread)?;
        self.state().resolved.insert(flag.thread.clone());
        Ok(())
    }

    async fn post_review(
        &self,
        repo: &RepoName,
        pr: &PullRequest,
        review: &Review,
    ) -> ForgeResult<()> {
        self.enter(
            repo,
            "post_review",
            &format!("{} flags", review.flags.len()),
        )?;
        self.state().reviews.push((pr.number.0, review.clone()));
        Ok(())
    }

    async fn start_check(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        check: &CheckStart,
    ) -> ForgeResult<()> {
        self.enter(repo, "start_check", &sha.0)?;
        self.state()
            .checks
            .push((sha.clone(), Check::Started(check.clone())));
        Ok(())
    }

    async fn finish_check(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        result: &CheckResult,
    ) -> ForgeResult<()> {
        self.enter(
            repo,
            "finish_check",
            &format!("{:?}", result.conclusion).to_lowercase(),
        )?;
        self.state()
            .checks
            .push((sha.clone(), Check::Finished(result.clone())));
        Ok(())
    }
}
