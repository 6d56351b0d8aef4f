//! The bot's bare mirror of a repository: where it lives under the data directory, and how it
//! is fetched.
//!
//! One bare repository per forge repository, fetched incrementally with git2 through an
//! anonymous remote, so the mirror's configuration never names a URL. Credentials reach only
//! git's HTTP transport ([`super::http`]), for the operation that was given them: never a URL
//! (URLs carrying userinfo or a query are refused), a config file, `FETCH_HEAD` (not written) or
//! a log line. Every network operation is bounded: a connect and a stall timeout on the socket,
//! and a deadline over the whole transfer.
//! Submodules are never fetched. This module runs no git CLI and no hook.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use git2::{
    AutotagOption, ErrorCode, FetchOptions, FetchPrune, Reference, RemoteCallbacks, RemoteRedirect,
    Repository, RepositoryInitOptions,
};

use super::http::{self, Failure, Outcome};
use super::{GitError, Repo};
use crate::forge::api::GitCredentials;
use crate::forge::event::{Forge, RepoName};

/// The refspec that mirrors every branch (forced: a force-push upstream is mirrored as it is).
pub const BRANCHES: &str = "+refs/heads/*:refs/heads/*";

/// GitLab nests groups (`group/subgroup/project`); more levels than this is not a real name.
const MAX_NAME_COMPONENTS: usize = 20;

/// Longer than any name GitHub or GitLab accept (GitLab's full path is capped at 255 per level).
const MAX_NAME_LEN: usize = 1024;

/// A whole fetch or push may take this long: the first fetch of a repository of a few GiB over
/// an ordinary link fits; anything slower is stuck, and the job says so.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(20 * 60);

/// More than the largest repositories the bot is meant for; a remote sending more is not a
/// repository but a disk-filling attempt.
const MAX_TRANSFER_BYTES: usize = 8 << 30;

/// The refspec that fetches the head of pull request (GitHub, Forgejo) or merge request (GitLab)
/// `number` into the same name in the mirror. Fetched on demand: a forge has thousands of them.
pub fn change_request_refspec(forge: Forge, number: u64) -> String {
    match forge {
        Forge::GitHub | Forge::Forgejo => {
            format!("+refs/pull/{number}/head:refs/pull/{number}/head")
        }
        Forge::GitLab => {
            format!("+refs/merge-requests/{number}/head:refs/merge-requests/{number}/head")
        }
    }
}

/// A bare mirror of one forge repository.
pub struct Mirror {
    repo: Repo,
    path: PathBuf,
    deadline: Duration,
}

impl Mirror {
    /// Opens the mirror of `repo` under `root` (`root/<forge>/<owner>/<name>.git`), creating an
    /// empty bare repository the first time.
    ///
    /// Each component of the name is escaped (every byte but ASCII letters, digits, `-` and `_`
    /// as `%XX`, and lowercased, as forges match names case-insensitively), so no name reaches
    /// outside `root` or into another mirror.
    pub fn open_or_create(root: &Path, forge: Forge, repo: &RepoName) -> Result<Mirror, GitError> {
        let path = mirror_path(root, forge, repo)?;
        let git = if path.exists() {
            Repository::open_bare(&path)
                .map_err(|e| GitError::git(format!("opening the mirror of {repo}"), e))?
        } else {
            let mut opts = RepositoryInitOptions::new();
            // No template: no sample hooks, nothing the system's git installation adds.
            opts.bare(true)
                .mkpath(true)
                .external_template(false)
                .initial_head("main");
            Repository::init_opts(&path, &opts)
                .map_err(|e| GitError::git(format!("creating the mirror of {repo}"), e))?
        };
        if !git.is_bare() {
            return Err(GitError::Git {
                context: format!("opening the mirror of {repo}"),
                message: "not a bare repository".to_owned(),
            });
        }
        Ok(Mirror {
            repo: Repo::from_git2(git),
            path,
            deadline: DEFAULT_DEADLINE,
        })
    }

    /// The same mirror with another bound on each fetch or push.
    pub fn with_deadline(mut self, deadline: Duration) -> Mirror {
        self.deadline = deadline;
        self
    }

    pub(super) fn deadline(&self) -> Duration {
        self.deadline
    }

    /// The mirror's repository, to read from where the mirror itself is not needed.
    pub fn into_repo(self) -> Repo {
        self.repo
    }

    pub fn repo(&self) -> &Repo {
        &self.repo
    }

    /// The mirror's directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Fetches `refspecs` (all branches, [`BRANCHES`], when empty) from `url`; only objects the
    /// mirror lacks are transferred. Refs the refspecs cover that the remote no longer has are
    /// pruned; tags are not fetched.
    pub fn fetch(
        &self,
        url: &str,
        credentials: Option<&GitCredentials>,
        refspecs: &[&str],
    ) -> Result<(), GitError> {
        check_url(url)?;
        let what = format!("fetching from {url}");
        let watch = Watch::new(self.deadline);
        let mut remote = self
            .repo
            .git2()
            .remote_anonymous(url)
            .map_err(|e| GitError::git(&what, e))?;
        let mut callbacks = RemoteCallbacks::new();
        callbacks.transfer_progress(|p| {
            if p.received_bytes() > MAX_TRANSFER_BYTES {
                watch.too_large.set(true);
                return false;
            }
            !watch.expired()
        });
        callbacks.sideband_progress(|_| !watch.expired());
        let mut opts = FetchOptions::new();
        opts.remote_callbacks(callbacks)
            .prune(FetchPrune::On)
            // FETCH_HEAD would record the URL in the mirror.
            .update_fetchhead(false)
            .download_tags(AutotagOption::None)
            // A redirect could hand the credentials to another host.
            .follow_redirects(RemoteRedirect::None);
        let refspecs: &[&str] = if refspecs.is_empty() {
            &[BRANCHES]
        } else {
            refspecs
        };
        let result = watch.run(credentials, || {
            remote.fetch(refspecs, Some(&mut opts), None)
        });
        drop(opts);
        result.map_err(|e| watch.error(what, e))
    }

    /// Mirrors the branches of a repository on this machine without copying its objects: the
    /// mirror borrows them through `objects/info/alternates` (as `git clone --shared` does)
    /// and takes its branches' tips as they are there, pruning the ones it no longer has. Only
    /// what the mirror itself writes (the bot's commits) lands in the mirror's own store.
    ///
    /// Nothing is read beyond each branch's tip, so a history damaged on a branch the job does
    /// not start from does not stop it; a commit whose objects are missing is found where it is
    /// checked out ([`super::Repo::damaged`] names what is missing). The borrowed repository
    /// must keep its objects: one that drops them (`git gc --prune` after a branch is deleted)
    /// leaves the mirror's copy of that branch pointing at nothing until the next run takes
    /// the branches again.
    pub fn borrow(&self, source: &Path) -> Result<(), GitError> {
        let what = format!("reading the repository at {}", source.display());
        let from = Repository::open(source).map_err(|e| GitError::git(&what, e))?;
        let objects = std::fs::canonicalize(from.path().join("objects"))
            .map_err(|e| GitError::io(&what, &e))?;
        let git = self.repo.git2();
        let alternates = self.path.join("objects").join("info").join("alternates");
        let wanted = format!("{}\n", objects.display());
        let current = std::fs::read_to_string(&alternates).unwrap_or_default();
        if current != wanted {
            let context = || format!("borrowing the objects of {}", source.display());
            std::fs::create_dir_all(self.path.join("objects").join("info"))
                .and_then(|()| std::fs::write(&alternates, &wanted))
                .map_err(|e| GitError::io(context(), &e))?;
            git.odb()
                .and_then(|odb| odb.add_disk_alternate(&objects.to_string_lossy()))
                .map_err(|e| GitError::git(context(), e))?;
        }
        let mut tips = std::collections::HashMap::new();
        let refs = from
            .references_glob("refs/heads/*")
            .map_err(|e| GitError::git(&what, e))?;
        for reference in refs {
            let reference = reference.map_err(|e| GitError::git(&what, e))?;
            if let (Some(name), Some(oid)) = (reference.name(), reference.target()) {
                tips.insert(name.to_owned(), oid);
            }
        }
        let update = |e| GitError::git("updating the mirror's branches", e);
        for reference in git.references_glob("refs/heads/*").map_err(update)? {
            let mut reference = reference.map_err(update)?;
            let gone = reference.name().is_none_or(|name| !tips.contains_key(name));
            if gone {
                reference.delete().map_err(update)?;
            }
        }
        for (name, oid) in tips {
            if git.refname_to_id(&name).ok() != Some(oid) {
                git.reference(&name, oid, true, "borrowed")
                    .map_err(update)?;
            }
        }
        Ok(())
    }

    /// Keeps `commit` reachable from `refs/forgeward/jobs/<job>`. The bot never collects garbage
    /// in a mirror, but an operator's `git gc` would drop a commit no ref names once it is two
    /// weeks old; a job pins the commit it built until it is pushed.
    pub fn pin(&self, job: &str, commit: git2::Oid) -> Result<(), GitError> {
        let name = pin_ref(job)?;
        self.repo
            .git2()
            .reference(&name, commit, true, "pin")
            .map(|_| ())
            .map_err(|e| GitError::git(format!("pinning {commit}"), e))
    }

    /// Removes the pin of `job`, if any.
    pub fn unpin(&self, job: &str) -> Result<(), GitError> {
        let name = pin_ref(job)?;
        match self.repo.git2().find_reference(&name) {
            Ok(mut r) => r
                .delete()
                .map_err(|e| GitError::git(format!("unpinning {job}"), e)),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(()),
            Err(e) => Err(GitError::git(format!("unpinning {job}"), e)),
        }
    }
}

/// A mirror held by this process against every other: an exclusive `flock` on a file beside
/// it, released when dropped (or when the process dies). Two processes sharing mirrors — the
/// bot and `forgeward run` over one data directory, two `forgeward run`s over one cache — take
/// turns; libgit2 alone would fail the second writer.
pub struct MirrorLock {
    _file: std::fs::File,
}

impl MirrorLock {
    /// Waits for and takes the lock on the mirror of `repo` under `root`.
    pub fn take(root: &Path, forge: Forge, repo: &RepoName) -> Result<MirrorLock, GitError> {
        let mut path = mirror_path(root, forge, repo)?.into_os_string();
        path.push(".lock");
        let path = PathBuf::from(path);
        let what = || format!("locking the mirror of {repo}");
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| GitError::io(what(), &e))?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| GitError::io(what(), &e))?;
        file.lock().map_err(|e| GitError::io(what(), &e))?;
        Ok(MirrorLock { _file: file })
    }
}

fn pin_ref(job: &str) -> Result<String, GitError> {
    let name = format!("refs/forgeward/jobs/{job}");
    if job.contains('/') || !Reference::is_valid_name(&name) {
        return Err(GitError::Git {
            context: "pinning a commit".to_owned(),
            message: format!("'{}' is not a valid job name", job.escape_debug()),
        });
    }
    Ok(name)
}

/// `root/<forge>/<escaped components>.git`.
pub(super) fn mirror_path(root: &Path, forge: Forge, repo: &RepoName) -> Result<PathBuf, GitError> {
    let bad = || GitError::BadRepoName(repo.0.escape_debug().to_string());
    let parts: Vec<&str> = repo.0.split('/').collect();
    if repo.0.len() > MAX_NAME_LEN
        || parts.len() < 2
        || parts.len() > MAX_NAME_COMPONENTS
        || parts.iter().any(|p| p.is_empty())
    {
        return Err(bad());
    }
    let mut path = root.join(forge.as_str());
    let last = parts.len() - 1;
    for (i, part) in parts.iter().enumerate() {
        let mut component = escape_component(part);
        // No escaped component holds a `.`, so only the last ends in `.git`: one mirror is
        // never inside another.
        if i == last {
            component.push_str(".git");
        }
        path.push(component);
    }
    Ok(path)
}

fn escape_component(part: &str) -> String {
    let mut out = String::with_capacity(part.len());
    for b in part.bytes() {
        match b {
            b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' => out.push(char::from(b)),
            b'A'..=b'Z' => out.push(char::from(b.to_ascii_lowercase())),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Refuses URLs that could carry a secret (userinfo, a query, a fragment) and schemes the bot
/// does not speak. Checked before libgit2 sees the URL, so no error message ever repeats one.
pub(super) fn check_url(url: &str) -> Result<(), GitError> {
    let unsupported = || GitError::Git {
        context: "a remote URL".to_owned(),
        message: "only https://, http://, file:// URLs and absolute paths are supported".to_owned(),
    };
    match url.split_once("://") {
        Some((scheme, rest)) => {
            if !matches!(scheme, "https" | "http" | "file") {
                return Err(unsupported());
            }
            let authority = rest.split('/').next().unwrap_or_default();
            if authority.contains('@') || url.contains('?') || url.contains('#') {
                return Err(GitError::CredentialsInUrl);
            }
        }
        None if url.starts_with('/') => {}
        None => return Err(unsupported()),
    }
    if url.chars().any(char::is_control) {
        return Err(unsupported());
    }
    Ok(())
}

/// How one network operation is going: its deadline, and why it was cut, for the error.
pub(super) struct Watch {
    started: Instant,
    limit: Duration,
    pub(super) timed_out: Cell<bool>,
    pub(super) too_large: Cell<bool>,
    /// What the transport saw, once the operation ran.
    seen: RefCell<Outcome>,
}

impl Watch {
    pub(super) fn new(limit: Duration) -> Watch {
        Watch {
            started: Instant::now(),
            limit,
            timed_out: Cell::new(false),
            too_large: Cell::new(false),
            seen: RefCell::new(Outcome::default()),
        }
    }

    pub(super) fn expired(&self) -> bool {
        let expired = self.started.elapsed() > self.limit;
        if expired {
            self.timed_out.set(true);
        }
        expired
    }

    /// Runs `op`, the libgit2 call that talks to the remote, with `credentials` offered to it if
    /// it asks, keeping what the transport saw for [`Watch::error`].
    pub(super) fn run<T>(
        &self,
        credentials: Option<&GitCredentials>,
        op: impl FnOnce() -> Result<T, git2::Error>,
    ) -> Result<T, git2::Error> {
        let (result, seen) = http::session(credentials, op);
        *self.seen.borrow_mut() = seen;
        result
    }

    /// The error a failed operation reports, naming why it was cut when it was.
    pub(super) fn error(&self, what: String, e: git2::Error) -> GitError {
        let seen = self.seen.borrow();
        let stalled = matches!(seen.failure, Some(Failure::Timeout(_)));
        if self.timed_out.get() || self.started.elapsed() > self.limit {
            GitError::Timeout {
                what,
                secs: self.limit.as_secs(),
            }
        } else if e.code() == ErrorCode::Timeout || stalled {
            GitError::Timeout {
                what,
                secs: self.started.elapsed().as_secs(),
            }
        } else if self.too_large.get() {
            GitError::TransferTooLarge(what)
        } else if seen.refused || e.code() == ErrorCode::Auth {
            GitError::Auth(what)
        } else {
            GitError::git(what, e)
        }
    }
}

#[cfg(test)]
#[path = "mirror_tests.rs"]
mod tests;
