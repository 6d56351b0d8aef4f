//! git2: opening repositories, resolving revisions, and turning a range into the detector's
//! input; for the bot, a bare mirror per repository, job checkouts, the commit built from what a
//! worker left, and the push. No core path shells out to `git`, and no diff driver, filter or
//! hook is ever run.

mod checkout;
mod diff;
mod mirror;
mod pack;
mod publish;
mod tree;
mod workspace;

use std::path::{Path, PathBuf};

use git2::{ErrorCode, Oid, Repository};

pub use checkout::{CHECKOUT_BRANCH, Checkout, remove_tree};
pub use diff::{Head, analyze_range, line_diff};
pub use mirror::{
    BRANCHES, DEFAULT_DEADLINE, Mirror, NetworkTimeouts, change_request_refspec,
    set_network_timeouts,
};
pub use publish::{Lease, co_authored_by};
pub use tree::{CommitTree, WorkTree};
pub use workspace::{
    MAX_FILE_BYTES, MAX_WORKSPACE_BYTES, MAX_WORKSPACE_DEPTH, MAX_WORKSPACE_ENTRIES,
};

/// What a process will ask of git: only local repositories, or remotes too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// `check`, the hook, `--version`: no remote is ever fetched from or pushed to.
    Local,
    /// The bot and `forgeward run`: fetches and pushes over HTTPS.
    Remote,
}

/// Initialises libgit2 for this process, once, before any thread starts.
///
/// libgit2 built against a static OpenSSL initialises its TLS context eagerly, reading the
/// system's whole CA bundle (3 ms, most of a small check's start-up). A process that never
/// talks to a remote points that read at an empty bundle for the duration of the
/// initialisation (whatever `SSL_CERT_FILE` says), and leaves its environment as it found it.
///
/// # Safety
/// No other thread may be running: the environment is changed for a moment.
pub unsafe fn init(reach: Reach) {
    const CERT_FILE: &str = "SSL_CERT_FILE";
    let saved = (reach == Reach::Local).then(|| std::env::var_os(CERT_FILE));
    if saved.is_some() {
        // SAFETY: the caller guarantees that no other thread reads or writes the environment.
        unsafe { std::env::set_var(CERT_FILE, "/dev/null") };
    }
    // git itself does not re-hash objects as it reads them; libgit2 does by default, at a
    // quarter of a large check's reading time. Corruption still fails inflation and the
    // pack's checksums. (The first call into git2 initialises libgit2.)
    git2::opts::strict_hash_verification(false);
    match saved {
        // SAFETY: as above.
        Some(Some(value)) => unsafe { std::env::set_var(CERT_FILE, value) },
        Some(None) => unsafe { std::env::remove_var(CERT_FILE) },
        None => {}
    }
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
    pub fn default_base(&self, head: Oid) -> Result<Oid, GitError> {
        let mut candidates = Vec::new();
        if let Ok(head_ref) = self.repo.head()
            && head_ref.is_branch()
            && let Some(name) = head_ref.name()
            && let Ok(upstream) = self.repo.branch_upstream_name(name)
            && let Some(upstream) = upstream.as_str()
        {
            candidates.push(upstream.to_owned());
        }
        candidates.extend(self.default_branches());
        for rev in candidates {
            if let Ok(oid) = self.resolve(&rev)
                && let Some(base) = self.merge_base(head, oid)?
            {
                return Ok(base);
            }
        }
        Err(GitError::Git {
            context: "no base to check against".to_owned(),
            message: "HEAD has no upstream and no default branch was found; pass --base REV"
                .to_owned(),
        })
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
