//! The bot's mirrors: one bare mirror per repository under one directory, each handed out under
//! a lock for that repository, this process's and every other's.
//!
//! Jobs on different issues of one repository run at once and share its mirror, and libgit2
//! makes a second writer fail rather than wait: two first jobs both creating the mirror, or two
//! fetches updating the same refs (`failed to lock file …`), would fail the job. Every step that
//! uses a mirror (create and fetch, commit, verify, push) takes it from here; the workers
//! themselves still run side by side. Another process may share the directory (`forgeward run`
//! keeps its mirrors in a cache, or in the bot's data directory): a file lock beside each mirror
//! ([`MirrorLock`]) makes the processes take turns too.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use super::error::{JobError, blocking};
use crate::forge::{Forge, RepoName};
use crate::git::{Mirror, MirrorLock};

/// Where the mirrors are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mirrors {
    root: PathBuf,
}

impl Mirrors {
    /// The mirrors under `root`.
    pub fn at(root: &Path) -> Mirrors {
        Mirrors {
            root: root.to_path_buf(),
        }
    }

    /// Runs `f` on the mirror of `repo` (created when new), holding the locks on it for as long
    /// as `f` runs: this process's first, so its threads queue without holding a descriptor,
    /// then the file lock other processes honour. Blocking: call it from blocking work, or use
    /// [`Mirrors::locked`].
    pub fn with<T>(
        &self,
        forge: Forge,
        repo: &RepoName,
        f: impl FnOnce(Mirror) -> Result<T, JobError>,
    ) -> Result<T, JobError> {
        let lock = self.lock(forge, repo);
        let _held = lock.lock().unwrap_or_else(|p| p.into_inner());
        let _across = MirrorLock::take(&self.root, forge, repo)?;
        f(Mirror::open_or_create(&self.root, forge, repo)?)
    }

    /// [`Mirrors::with`], off the async runtime.
    pub async fn locked<T, F>(&self, forge: Forge, repo: &RepoName, f: F) -> Result<T, JobError>
    where
        T: Send + 'static,
        F: FnOnce(Mirror) -> Result<T, JobError> + Send + 'static,
    {
        let (mirrors, repo) = (self.clone(), repo.clone());
        blocking(move || mirrors.with(forge, &repo, f)).await
    }

    /// The lock over one repository's mirror in this process.
    fn lock(&self, forge: Forge, repo: &RepoName) -> Arc<Mutex<()>> {
        type Locks = Mutex<HashMap<(PathBuf, Forge, String), Arc<Mutex<()>>>>;
        static LOCKS: OnceLock<Locks> = OnceLock::new();
        // Forges match names case-insensitively, and so do mirror paths.
        let key = (self.root.clone(), forge, repo.0.to_lowercase());
        let mut locks = LOCKS
            .get_or_init(Mutex::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        locks.entry(key).or_default().clone()
    }
}
