//! The detector's [`Tree`] over a commit of a repository, or over its working tree.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use git2::{ObjectType, Repository, StatusOptions, TreeWalkMode, TreeWalkResult};

use crate::detect::{MAX_TEXT_SIZE, RepoPath, Tree};

pub(crate) fn os_path(path: &RepoPath) -> &Path {
    Path::new(OsStr::from_bytes(path.as_bytes()))
}

/// The files of one commit.
pub struct CommitTree<'r> {
    repo: &'r Repository,
    tree: Option<git2::Tree<'r>>,
}

impl<'r> CommitTree<'r> {
    /// The tree of `commit`; an unreadable commit is an empty tree.
    pub fn new(repo: &'r Repository, commit: git2::Oid) -> CommitTree<'r> {
        let tree = repo.find_commit(commit).and_then(|c| c.tree()).ok();
        CommitTree { repo, tree }
    }
}

impl Tree for CommitTree<'_> {
    fn exists(&self, path: &RepoPath) -> bool {
        self.tree.as_ref().is_some_and(|t| {
            t.get_path(os_path(path))
                .is_ok_and(|e| e.kind() == Some(ObjectType::Blob))
        })
    }

    fn read(&self, path: &RepoPath) -> Option<Vec<u8>> {
        let entry = self.tree.as_ref()?.get_path(os_path(path)).ok()?;
        // A symlink's blob is its target, not a file's contents.
        if entry.filemode() == i32::from(git2::FileMode::Link) {
            return None;
        }
        let blob = self.repo.find_blob(entry.id()).ok()?;
        (blob.size() <= MAX_TEXT_SIZE).then(|| blob.content().to_vec())
    }

    fn files(&self) -> Vec<RepoPath> {
        let mut out = Vec::new();
        if let Some(tree) = &self.tree {
            let _ = tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
                if entry.kind() == Some(ObjectType::Blob) {
                    out.push(RepoPath::join(
                        dir.trim_end_matches('/').as_bytes(),
                        entry.name_bytes(),
                    ));
                }
                TreeWalkResult::Ok
            });
        }
        out
    }
}

/// A side's contents, as far as they are read.
pub enum Read {
    Text(Vec<u8>),
    /// Over the limit, this many bytes: not read.
    TooLarge(u64),
    /// No file there, a symlink, or a blob git cannot find.
    Nothing,
}

impl Read {
    pub fn text(self) -> Option<Vec<u8>> {
        match self {
            Read::Text(t) => Some(t),
            _ => None,
        }
    }

    pub fn too_large(&self) -> Option<u64> {
        match self {
            Read::TooLarge(size) => Some(*size),
            _ => None,
        }
    }
}

/// The working tree: tracked files as they are on disk, and untracked files git does not
/// ignore. Symlinks are never followed.
pub struct WorkTree<'r> {
    repo: &'r Repository,
    root: PathBuf,
}

impl<'r> WorkTree<'r> {
    pub fn new(repo: &'r Repository, root: &Path) -> WorkTree<'r> {
        WorkTree {
            repo,
            root: root.to_path_buf(),
        }
    }

    /// Reads a regular file of the working tree, without following a symlink.
    pub fn read_file(root: &Path, path: &RepoPath) -> Option<Vec<u8>> {
        WorkTree::read_within(root, path, MAX_TEXT_SIZE as u64).text()
    }

    /// Reads a regular file of the working tree of at most `limit` bytes, without following a
    /// symlink.
    pub fn read_within(root: &Path, path: &RepoPath, limit: u64) -> Read {
        let full = root.join(os_path(path));
        match std::fs::symlink_metadata(&full) {
            Ok(meta) if meta.is_file() && meta.len() > limit => Read::TooLarge(meta.len()),
            Ok(meta) if meta.is_file() => std::fs::read(full).map_or(Read::Nothing, Read::Text),
            _ => Read::Nothing,
        }
    }
}

impl Tree for WorkTree<'_> {
    fn exists(&self, path: &RepoPath) -> bool {
        let on_disk = std::fs::symlink_metadata(self.root.join(os_path(path)))
            .is_ok_and(|m| m.is_file() || m.is_symlink());
        on_disk && !self.repo.is_path_ignored(os_path(path)).unwrap_or(false)
    }

    fn read(&self, path: &RepoPath) -> Option<Vec<u8>> {
        WorkTree::read_file(&self.root, path)
    }

    fn files(&self) -> Vec<RepoPath> {
        let mut out: Vec<RepoPath> = Vec::new();
        if let Ok(index) = self.repo.index() {
            out.extend(
                index
                    .iter()
                    .map(|e| RepoPath::new(e.path))
                    .filter(|p| std::fs::symlink_metadata(self.root.join(os_path(p))).is_ok()),
            );
        }
        let mut opts = StatusOptions::new();
        opts.include_untracked(true)
            .recurse_untracked_dirs(true)
            .include_ignored(false)
            .exclude_submodules(true);
        if let Ok(statuses) = self.repo.statuses(Some(&mut opts)) {
            out.extend(
                statuses
                    .iter()
                    .filter(|s| s.status().is_wt_new())
                    .map(|s| RepoPath::new(s.path_bytes())),
            );
        }
        out.sort();
        out.dedup();
        out
    }
}
