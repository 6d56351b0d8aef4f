//! git2: opening repositories, resolving revisions, and turning a range into the detector's
//! input; for the bot, a bare mirror per repository, job checkouts, the commit built from what a
//! worker left, and the push, over `http`, git's smart HTTP on the bot's own client; `probe`,
//! whether a git server answers (for `forgeward doctor`).
//! No core path shells out to `git`, and no diff driver, filter or hook is ever run.

mod checkout;
mod diff;
mod entries;
mod http;
mod mirror;
mod pack;
pub mod probe;
mod publish;
mod replica;
mod tree;
mod workspace;

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use git2::{ErrorCode, Oid, Repository};

pub use checkout::{CHECKOUT_BRANCH, Checkout};
pub use diff::{Head, analyze_range};
pub use entries::remove_tree;
pub use http::{NetworkTimeouts, set_network_timeouts};
pub use mirror::{BRANCHES, DEFAULT_DEADLINE, Mirror, MirrorLock, change_request_refspec};
pub use publish::{Lease, co_authored_by};
pub use replica::{Replica, Switched};
pub use tree::{CommitTree, WorkTree};
pub use workspace::{
    MAX_FILE_BYTES, MAX_WORKSPACE_BYTES, MAX_WORKSPACE_DEPTH, MAX_WORKSPACE_ENTRIES,
};

/// Initialises libgit2 for this process, once, before any thread starts: git's HTTP goes
/// through [`http`]'s transport (nothing of it is set up until a remote is asked for), and
/// objects are not re-hashed as they are read.
///
/// # Safety
/// No other thread may be using libgit2 yet: transports are registered.
pub unsafe fn init() {
    // git itself does not re-hash objects as it reads them; libgit2 does by default, at a
    // quarter of a large check's reading time. Corruption still fails inflation and the
    // pack's checksums. (The first call into git2 initialises libgit2.)
    git2::opts::strict_hash_verification(false);
    http::register();
}

/// A git error as a user reads it: one line, naming what was asked for.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("{0}: not a git repository")]
    NotARepository(String),
    #[error("unknown revision '{0}'")]
    UnknownRevision(String),
    #[error("the repository has no commits yet: nothing to compare against")]
    NoCommits,
    #[error("'{0}' is a bare repository: it has no working tree to check")]
    Bare(String),
    #[error("{context}: {message}")]
    Git { context: String, message: String },
    #[error("{context}: {message}")]
    Io { context: String, message: String },
    #[error("'{0}' is not a repository name the bot can keep a mirror for")]
    BadRepoName(String),
    #[error("a remote URL must not carry credentials: they go through the credential callback")]
    CredentialsInUrl,
    #[error("{0}: the remote refused the credentials")]
    Auth(String),
    #[error("{what}: timed out after {secs} s")]
    Timeout { what: String, secs: u64 },
    #[error("{0}: the transfer exceeds the bot's size limit")]
    TransferTooLarge(String),
    #[error("the remote branch '{branch}' is at {found}, not at {expected} as expected")]
    LeaseRejected {
        branch: String,
        expected: String,
        found: String,
    },
    #[error("the remote refused the push to '{branch}': {reason}")]
    PushRejected { branch: String, reason: String },
    #[error("the workspace is too large to commit: {0}")]
    WorkspaceTooLarge(String),
}

impl GitError {
    pub(crate) fn git(context: impl Into<String>, e: git2::Error) -> GitError {
        GitError::Git {
            context: context.into(),
            message: e.message().to_owned(),
        }
    }

    pub(crate) fn io(context: impl Into<String>, e: &std::io::Error) -> GitError {
        GitError::Io {
            context: context.into(),
            message: e.to_string(),
        }
    }
}

/// Where a check starts when no base is given, and what it was found from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefaultBase {
    /// The merge base of the head with `against`.
    pub base: Oid,
    /// The branch the base was found from, as git shortens it (`origin/main`, `main`).
    pub against: String,
    /// The commit `against` is at.
    pub against_commit: Oid,
    /// `against` is `HEAD`'s upstream (else a default branch).
    pub upstream: bool,
}

/// `refs/remotes/origin/main` → `origin/main`, `refs/heads/main` → `main`, as git shows them.
pub fn short_ref_name(name: &str) -> &str {
    ["refs/heads/", "refs/remotes/", "refs/tags/"]
        .iter()
        .find_map(|prefix| name.strip_prefix(prefix))
        .unwrap_or(name)
}

/// A repository opened for checking.
pub struct Repo {
    repo: Repository,
}

impl Repo {
    /// Opens the repository holding `dir` (searching upwards, as git does).
    pub fn discover(dir: &Path) -> Result<Repo, GitError> {
        match Repository::discover(dir) {
            Ok(repo) => Ok(Repo { repo }),
            Err(e) if e.code() == ErrorCode::NotFound => {
                Err(GitError::NotARepository(dir.display().to_string()))
            }
            Err(e) => Err(GitError::git(dir.display().to_string(), e)),
        }
    }

    /// Wraps a repository opened elsewhere (a bare mirror, a fresh checkout).
    pub fn from_git2(repo: Repository) -> Repo {
        Repo { repo }
    }

    pub fn git2(&self) -> &Repository {
        &self.repo
    }

    /// The `.git` directory (where another thread may open the repository again).
    pub fn git_dir(&self) -> PathBuf {
        self.repo.path().to_path_buf()
    }

    pub fn workdir(&self) -> Result<&Path, GitError> {
        self.repo
            .workdir()
            .ok_or_else(|| GitError::Bare(self.repo.path().display().to_string()))
    }

    /// The first object `commit`'s files need that the repository lacks, with the path that
    /// needs it (empty for the commit itself or its root tree); `None` when nothing is missing.
    /// Reads every tree of the commit: it is for an error's message, after something failed.
    pub fn missing_object(&self, commit: Oid) -> Option<(Oid, String)> {
        let odb = self.repo.odb().ok()?;
        if !odb.exists(commit) {
            return Some((commit, String::new()));
        }
        let tree = self.repo.find_commit(commit).ok()?.tree_id();
        if !odb.exists(tree) {
            return Some((tree, String::new()));
        }
        let tree = self.repo.find_tree(tree).ok()?;
        let mut missing = None;
        let _ = tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            // A submodule's commit lives in another repository.
            if entry.kind() == Some(git2::ObjectType::Commit) || odb.exists(entry.id()) {
                return git2::TreeWalkResult::Ok;
            }
            let name = String::from_utf8_lossy(entry.name_bytes());
            missing = Some((entry.id(), format!("{dir}{name}")));
            git2::TreeWalkResult::Abort
        });
        missing
    }

    /// The commit a revision names (`HEAD~2`, a branch, a tag, a sha).
    pub fn resolve(&self, rev: &str) -> Result<Oid, GitError> {
        if rev == "HEAD"
            && self
                .repo
                .head()
                .is_err_and(|e| e.code() == ErrorCode::UnbornBranch)
        {
            return Err(GitError::NoCommits);
        }
        self.repo
            .revparse_single(rev)
            .and_then(|o| o.peel_to_commit())
            .map(|c| c.id())
            .map_err(|_| GitError::UnknownRevision(rev.to_owned()))
    }

    /// The commit an object is or points to (a commit, or a tag of one); `None` for anything
    /// else (a tag of a tree or blob) or an object this repository does not have.
    pub fn peel_to_commit(&self, oid: Oid) -> Option<Oid> {
        let object = self.repo.find_object(oid, None).ok()?;
        object.peel_to_commit().ok().map(|c| c.id())
    }

    /// The commit `HEAD` points at.
    pub fn head(&self) -> Result<Oid, GitError> {
        self.resolve("HEAD")
    }

    pub fn merge_base(&self, a: Oid, b: Oid) -> Result<Option<Oid>, GitError> {
        match self.repo.merge_base(a, b) {
            Ok(oid) => Ok(Some(oid)),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(GitError::git("merge-base", e)),
        }
    }

    /// The default base of a check of `head`: where it left `HEAD`'s upstream, or else the
    /// default branch (`<remote>/HEAD`, then `main`, `master`, `trunk`, `develop`).
    pub fn default_base(&self, head: Oid) -> Result<DefaultBase, GitError> {
        let mut candidates = Vec::new();
        if let Ok(head_ref) = self.repo.head()
            && head_ref.is_branch()
            && let Some(name) = head_ref.name()
            && let Ok(upstream) = self.repo.branch_upstream_name(name)
            && let Some(upstream) = upstream.as_str()
        {
            candidates.push((upstream.to_owned(), true));
        }
        candidates.extend(self.default_branches().into_iter().map(|r| (r, false)));
        for (rev, upstream) in candidates {
            if let Ok(oid) = self.resolve(&rev)
                && let Some(base) = self.merge_base(head, oid)?
            {
                return Ok(DefaultBase {
                    base,
                    against: short_ref_name(&rev).to_owned(),
                    against_commit: oid,
                    upstream,
                });
            }
        }
        let shallow = if self.repo.is_shallow() {
            " (this clone is shallow: fetch the base branch with enough history)"
        } else {
            ""
        };
        Err(GitError::Git {
            context: "no base to check against".to_owned(),
            message: format!(
                "HEAD has no upstream and no default branch was found{shallow}; pass --base REV or a range such as main..HEAD"
            ),
        })
    }

    /// The number of commits `head` has that `base` does not (`git rev-list --count base..head`).
    pub fn count_commits(&self, base: Oid, head: Oid) -> Result<usize, GitError> {
        let count = || -> Result<usize, git2::Error> {
            let mut walk = self.repo.revwalk()?;
            walk.push(head)?;
            walk.hide(base)?;
            let mut n = 0;
            for oid in walk {
                oid?;
                n += 1;
            }
            Ok(n)
        };
        count().map_err(|e| GitError::git("counting commits", e))
    }

    /// Whether this clone was cut short (`git clone --depth`): history past its grafts is not
    /// here, so a merge base may be missing.
    pub fn is_shallow(&self) -> bool {
        self.repo.is_shallow()
    }

    /// Names of the default branch, most likely first: each remote's `HEAD`, then the usual
    /// names as remote-tracking and local branches.
    fn default_branches(&self) -> Vec<String> {
        let mut out = Vec::new();
        let remotes: Vec<String> = self
            .repo
            .remotes()
            .map(|r| r.iter().flatten().map(str::to_owned).collect())
            .unwrap_or_default();
        let mut remotes = remotes;
        remotes.sort_by_key(|r| r != "origin");
        for r in &remotes {
            out.push(format!("refs/remotes/{r}/HEAD"));
        }
        for name in ["main", "master", "trunk", "develop"] {
            for r in &remotes {
                out.push(format!("refs/remotes/{r}/{name}"));
            }
            out.push(format!("refs/heads/{name}"));
        }
        out
    }

    /// For a branch the remote does not have yet: the base to check it from — the merge-base
    /// with the remote's default branch, else with the nearest of its remote-tracking refs.
    /// `None` when nothing on the remote is related (never the root commit).
    pub fn base_for_new_branch(&self, remote: &str, local: Oid) -> Result<Option<Oid>, GitError> {
        let prefix = if self.repo.find_remote(remote).is_ok() {
            format!("refs/remotes/{remote}/")
        } else {
            // Pushing to a URL: any remote-tracking ref may be the nearest.
            "refs/remotes/".to_owned()
        };
        if let Ok(oid) = self.resolve(&format!("{prefix}HEAD"))
            && let Some(base) = self.merge_base(local, oid)?
        {
            return Ok(Some(base));
        }
        let refs = self
            .repo
            .references_glob(&format!("{prefix}*"))
            .map_err(|e| GitError::git("listing remote-tracking refs", e))?;
        let mut best: Option<(usize, Oid)> = None;
        for r in refs.flatten() {
            let Some(target) = r.resolve().ok().and_then(|r| r.target()) else {
                continue;
            };
            let Some(base) = self.merge_base(local, target)? else {
                continue;
            };
            let (ahead, _) = self
                .repo
                .graph_ahead_behind(local, base)
                .map_err(|e| GitError::git("counting commits", e))?;
            if best.is_none_or(|(n, _)| ahead < n) {
                best = Some((ahead, base));
            }
        }
        Ok(best.map(|(_, base)| base))
    }

    /// A commit (on no branch) holding `head`'s files with the tests put back as they were at
    /// `base`: every file `is_test` accepts takes its base version, and the test files that
    /// only `head` has are left out. Production files stay as `head` has them. Verification
    /// runs the base's tests on this.
    pub fn with_base_tests(
        &self,
        base: Oid,
        head: Oid,
        is_test: impl Fn(&crate::detect::RepoPath) -> bool,
    ) -> Result<Oid, GitError> {
        let git = &self.repo;
        let commit = |oid: Oid| {
            git.find_commit(oid)
                .map_err(|e| GitError::git(format!("reading {oid}"), e))
        };
        let head_commit = commit(head)?;
        let tree_of = |oid: Oid| {
            git.find_commit(oid)
                .and_then(|c| c.tree())
                .map_err(|e| GitError::git(format!("reading the tree of {oid}"), e))
        };
        let (base_tree, head_tree) = (tree_of(base)?, tree_of(head)?);
        let failed = |e| GitError::git("building the tree with the base's tests", e);
        let mut index = git2::Index::new().map_err(failed)?;
        index.read_tree(&head_tree).map_err(failed)?;
        let head_tests: Vec<Vec<u8>> = index
            .iter()
            .filter(|e| is_test(&crate::detect::RepoPath::new(e.path.clone())))
            .map(|e| e.path)
            .collect();
        for path in &head_tests {
            index
                .remove_path(Path::new(std::ffi::OsStr::from_bytes(path)))
                .map_err(failed)?;
        }
        let mut base_index = git2::Index::new().map_err(failed)?;
        base_index.read_tree(&base_tree).map_err(failed)?;
        for entry in base_index.iter() {
            if is_test(&crate::detect::RepoPath::new(entry.path.clone())) {
                index.add(&entry).map_err(failed)?;
            }
        }
        let tree_id = index.write_tree_to(git).map_err(failed)?;
        let tree = git.find_tree(tree_id).map_err(failed)?;
        let signature = head_commit.committer();
        git.commit(
            None,
            &signature,
            &signature,
            "the worker's change with the base's tests",
            &tree,
            &[&head_commit],
        )
        .map_err(failed)
    }

    /// The text of a file at a commit, if it exists there.
    pub fn read_at(&self, commit: Oid, path: &str) -> Result<Option<Vec<u8>>, GitError> {
        let tree = self
            .repo
            .find_commit(commit)
            .and_then(|c| c.tree())
            .map_err(|e| GitError::git(format!("reading {commit}"), e))?;
        let Ok(entry) = tree.get_path(Path::new(path)) else {
            return Ok(None);
        };
        match entry.to_object(&self.repo).map(|o| o.into_blob()) {
            Ok(Ok(blob)) => Ok(Some(blob.content().to_vec())),
            _ => Ok(None),
        }
    }
}

/// Building repositories in unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use git2::{Oid, Repository};

    /// Commits `files` (path, contents) as a whole tree, on top of `parent`.
    pub(crate) fn commit(git: &Repository, files: &[(&str, &str)], parent: Option<Oid>) -> Oid {
        let mut index = git2::Index::new().expect("index");
        for (path, text) in files {
            let id = git.blob(text.as_bytes()).expect("blob");
            index
                .add(&git2::IndexEntry {
                    ctime: git2::IndexTime::new(0, 0),
                    mtime: git2::IndexTime::new(0, 0),
                    dev: 0,
                    ino: 0,
                    mode: 0o100644,
                    uid: 0,
                    gid: 0,
                    file_size: 0,
                    id,
                    flags: 0,
                    flags_extended: 0,
                    path: path.as_bytes().to_vec(),
                })
                .expect("add");
        }
        let tree = git
            .find_tree(index.write_tree_to(git).expect("tree"))
            .expect("tree");
        let signature = git2::Signature::now("t", "t@example.com").expect("signature");
        let parents: Vec<git2::Commit<'_>> = parent
            .map(|p| git.find_commit(p).expect("parent"))
            .into_iter()
            .collect();
        let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
        git.commit(None, &signature, &signature, "c", &tree, &parents)
            .expect("commit")
    }
}

#[cfg(test)]
mod tests {
    use super::testing::commit;
    use super::*;

    #[test]
    fn the_workers_change_with_the_base_tests() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let git = Repository::init(dir.path()).expect("init");
        let base = commit(
            &git,
            &[
                ("calc.py", "old code\n"),
                ("tests/test_calc.py", "base test\n"),
                ("tests/test_old.py", "a test the worker deleted\n"),
            ],
            None,
        );
        let head = commit(
            &git,
            &[
                ("calc.py", "new code\n"),
                ("tests/test_calc.py", "edited test\n"),
                ("tests/test_new.py", "a test the worker added\n"),
                ("README.md", "docs\n"),
            ],
            Some(base),
        );
        let repo = Repo::discover(dir.path()).expect("discover");
        let restored = repo
            .with_base_tests(base, head, |p| p.display().starts_with("tests/"))
            .expect("built");
        let read = |path: &str| {
            repo.read_at(restored, path)
                .expect("read")
                .map(|b| String::from_utf8(b).expect("UTF-8"))
        };
        assert_eq!(read("calc.py").as_deref(), Some("new code\n"));
        assert_eq!(read("README.md").as_deref(), Some("docs\n"));
        assert_eq!(read("tests/test_calc.py").as_deref(), Some("base test\n"));
        assert_eq!(
            read("tests/test_old.py").as_deref(),
            Some("a test the worker deleted\n")
        );
        assert_eq!(read("tests/test_new.py"), None);
        let parent = git
            .find_commit(restored)
            .expect("a commit")
            .parent_id(0)
            .expect("a parent");
        assert_eq!(parent, head);
    }
}
