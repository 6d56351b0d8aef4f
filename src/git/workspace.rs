//! The change a worker made, computed by the bot: the files of a job's directory, read without
//! trusting anything the worker wrote, become a tree and a commit in the mirror.
//!
//! The worker's `.git` (and any nested one) is ignored entirely: not its index, not its objects,
//! not its config or hooks. Symlinks are recorded as symlinks (their target's bytes) and never
//! followed; files are opened without following a symlink; fifos, sockets and devices are
//! skipped. Names are bytes, as git stores them. Caches and dependency directories a worker's
//! tools leave behind are excluded unless the base tracks them. No git CLI or hook ever runs in
//! the directory. The worker's processes must be gone when this runs (the sandbox ends them
//! all): a live one could swap a directory for a symlink between its listing and its reading.

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use git2::{FileMode, ObjectType, Oid, Repository, Signature};

use super::GitError;
use super::mirror::Mirror;

/// Entries (files, symlinks, directories) a workspace may hold: far more than the largest
/// source trees (the Linux kernel has ~90 000 files), few enough to bound the walk.
pub const MAX_WORKSPACE_ENTRIES: usize = 500_000;

/// Bytes of file contents a workspace may hold: what the bot is willing to read and store per
/// job. A worker that leaves more has produced something other than a source change.
pub const MAX_WORKSPACE_BYTES: u64 = 2 << 30;

/// The largest file the bot commits: GitHub refuses pushes of larger files.
pub const MAX_FILE_BYTES: u64 = 100 << 20;

/// Directory levels below the workspace's top; git has no limit, but no source tree comes
/// close, and it bounds the recursion.
pub const MAX_WORKSPACE_DEPTH: usize = 128;

/// Directories tools write into a working tree: bytecode and test caches, virtualenvs, package
/// installs. Excluded unless the base tracks the path.
const CACHE_DIRS: &[&[u8]] = &[
    b"__pycache__",
    b".pytest_cache",
    b".mypy_cache",
    b".ruff_cache",
    b".hypothesis",
    b".tox",
    b".nox",
    b".venv",
    b"node_modules",
    // The prepared environment's own caches (`environment::plan::ENV_DIR`).
    b".forgeward-env",
];

/// File suffixes of the same kind: Python bytecode.
const CACHE_FILE_SUFFIXES: &[&[u8]] = &[b".pyc", b".pyo"];

/// `.git` in any case: git refuses the name in a tree in every spelling.
pub(super) fn is_dot_git(name: &[u8]) -> bool {
    name.eq_ignore_ascii_case(b".git")
}

impl Mirror {
    /// Commits what `dir` holds, as a child of `base`, into the mirror (on no branch: see
    /// [`Mirror::pin`]). `None` when the files are exactly `base`'s.
    ///
    /// Refuses a workspace over [`MAX_WORKSPACE_ENTRIES`], [`MAX_WORKSPACE_BYTES`],
    /// [`MAX_WORKSPACE_DEPTH`] or with a file over [`MAX_FILE_BYTES`].
    pub fn commit_workspace(
        &self,
        base: Oid,
        dir: &Path,
        message: &str,
        author: &Signature<'_>,
        committer: &Signature<'_>,
    ) -> Result<Option<Oid>, GitError> {
        let repo = self.repo().git2();
        let base_commit = repo
            .find_commit(base)
            .map_err(|e| GitError::git(format!("reading {base}"), e))?;
        let base_tree = base_commit
            .tree()
            .map_err(|e| GitError::git(format!("reading {base}"), e))?;
        let mut walk = Walk {
            repo,
            entries: 0,
            bytes: 0,
        };
        let tree = match walk.dir(dir, Some(&base_tree), &mut Vec::new(), 0, false)? {
            Some(oid) => oid,
            None => empty_tree(repo)?,
        };
        if tree == base_tree.id() {
            return Ok(None);
        }
        let tree = repo
            .find_tree(tree)
            .map_err(|e| GitError::git("reading the new tree", e))?;
        repo.commit(None, author, committer, message, &tree, &[&base_commit])
            .map(Some)
            .map_err(|e| GitError::git("creating the commit", e))
    }
}

fn empty_tree(repo: &Repository) -> Result<Oid, GitError> {
    repo.treebuilder(None)
        .and_then(|b| b.write())
        .map_err(|e| GitError::git("writing an empty tree", e))
}

struct Walk<'r> {
    repo: &'r Repository,
    entries: usize,
    bytes: u64,
}

impl Walk<'_> {
    /// The tree of the directory `path` (`None` when it holds nothing git records); `base` is
    /// the same directory's tree at the base, if it was one there. Inside a cache directory the
    /// base tracks (`in_cache`), only what the base tracks is kept.
    fn dir(
        &mut self,
        path: &Path,
        base: Option<&git2::Tree<'_>>,
        rel: &mut Vec<u8>,
        depth: usize,
        in_cache: bool,
    ) -> Result<Option<Oid>, GitError> {
        if depth > MAX_WORKSPACE_DEPTH {
            return Err(GitError::WorkspaceTooLarge(format!(
                "directories nested more than {MAX_WORKSPACE_DEPTH} deep"
            )));
        }
        let io = |rel: &[u8], e: std::io::Error| GitError::io(display(rel), &e);
        let mut names: Vec<(Vec<u8>, std::fs::FileType)> = Vec::new();
        for entry in std::fs::read_dir(path).map_err(|e| io(rel, e))? {
            let entry = entry.map_err(|e| io(rel, e))?;
            // From the directory entry (lstat when the kernel does not say): never followed.
            let kind = entry.file_type().map_err(|e| io(rel, e))?;
            names.push((entry.file_name().as_bytes().to_vec(), kind));
        }
        let has_cargo_toml = names
            .iter()
            .any(|(n, k)| n.as_slice() == b"Cargo.toml" && k.is_file());
        let has_pyvenv_cfg = names
            .iter()
            .any(|(n, k)| n.as_slice() == b"pyvenv.cfg" && k.is_file());
        if depth > 0 && has_pyvenv_cfg && base.is_none() {
            // A virtualenv, whatever its name (`venv`, `env`, `.venv`).
            return Ok(None);
        }
        let mut builder = self
            .repo
            .treebuilder(None)
            .map_err(|e| GitError::git("building a tree", e))?;
        for (name, kind) in names {
            if is_dot_git(&name) {
                continue;
            }
            self.entries += 1;
            if self.entries > MAX_WORKSPACE_ENTRIES {
                return Err(GitError::WorkspaceTooLarge(format!(
                    "more than {MAX_WORKSPACE_ENTRIES} files and directories"
                )));
            }
            let tracked = base.and_then(|t| t.get_name_bytes(&name));
            let start = rel.len();
            if !rel.is_empty() {
                rel.push(b'/');
            }
            rel.extend_from_slice(&name);
            let child = path.join(OsStr::from_bytes(&name));
            let recorded = match &tracked {
                // The bot does not fetch submodules, so the worker cannot have changed one.
                Some(t) if t.filemode() == i32::from(FileMode::Commit) => {
                    Some((t.id(), FileMode::Commit))
                }
                None if in_cache || is_cache(&name, kind, has_cargo_toml) => None,
                _ => {
                    let in_cache = in_cache || is_cache(&name, kind, has_cargo_toml);
                    self.entry(&child, kind, tracked.as_ref(), rel, depth, in_cache)?
                }
            };
            if let Some((oid, mode)) = recorded {
                builder
                    .insert(name.as_slice(), oid, i32::from(mode))
                    .map_err(|e| GitError::git(format!("recording '{}'", display(rel)), e))?;
            }
            rel.truncate(start);
        }
        // A submodule's directory the worker removed is still the same submodule.
        if let Some(base) = base {
            for entry in base.iter() {
                if entry.filemode() == i32::from(FileMode::Commit)
                    && builder
                        .get(entry.name_bytes())
                        .map_err(|e| GitError::git("building a tree", e))?
                        .is_none()
                {
                    builder
                        .insert(entry.name_bytes(), entry.id(), entry.filemode())
                        .map_err(|e| GitError::git("building a tree", e))?;
                }
            }
        }
        if builder.is_empty() {
            return Ok(None);
        }
        builder
            .write()
            .map(Some)
            .map_err(|e| GitError::git(format!("writing the tree of '{}'", display(rel)), e))
    }

    /// What one entry of a directory records: a blob or a tree and its mode, or nothing.
    fn entry(
        &mut self,
        path: &Path,
        kind: std::fs::FileType,
        tracked: Option<&git2::TreeEntry<'_>>,
        rel: &mut Vec<u8>,
        depth: usize,
        in_cache: bool,
    ) -> Result<Option<(Oid, FileMode)>, GitError> {
        let tracked_id = tracked.map(|t| t.id());
        if kind.is_dir() {
            let base = match tracked {
                Some(t) if t.kind() == Some(ObjectType::Tree) => Some(
                    self.repo
                        .find_tree(t.id())
                        .map_err(|e| GitError::git(display(rel), e))?,
                ),
                _ => None,
            };
            let tree = self.dir(path, base.as_ref(), rel, depth + 1, in_cache)?;
            Ok(tree.map(|oid| (oid, FileMode::Tree)))
        } else if kind.is_symlink() {
            let target = std::fs::read_link(path).map_err(|e| GitError::io(display(rel), &e))?;
            let oid = self.blob(target.as_os_str().as_bytes(), tracked_id, rel)?;
            Ok(Some((oid, FileMode::Link)))
        } else if kind.is_file() {
            let (content, executable) = self.read_file(path, rel)?;
            let oid = self.blob(&content, tracked_id, rel)?;
            let mode = if executable {
                FileMode::BlobExecutable
            } else {
                FileMode::Blob
            };
            Ok(Some((oid, mode)))
        } else {
            // A fifo, socket or device: nothing git records.
            Ok(None)
        }
    }

    /// Stores `content` as a blob unless the base already has it at this path.
    fn blob(&self, content: &[u8], tracked: Option<Oid>, rel: &[u8]) -> Result<Oid, GitError> {
        let oid = Oid::hash_object(ObjectType::Blob, content)
            .map_err(|e| GitError::git(display(rel), e))?;
        if tracked == Some(oid) {
            return Ok(oid);
        }
        self.repo
            .blob(content)
            .map_err(|e| GitError::git(format!("storing '{}'", display(rel)), e))
    }

    /// A regular file's contents and whether its owner may execute it. Opened without following
    /// a symlink and without blocking (should the entry have been swapped for a fifo).
    fn read_file(&mut self, path: &Path, rel: &[u8]) -> Result<(Vec<u8>, bool), GitError> {
        let io = |e: std::io::Error| GitError::io(display(rel), &e);
        let Some((file, meta)) = crate::files::open_regular(path).map_err(io)? else {
            return Err(GitError::Io {
                context: display(rel),
                message: "changed while it was read".to_owned(),
            });
        };
        if meta.len() > MAX_FILE_BYTES {
            return Err(GitError::WorkspaceTooLarge(format!(
                "'{}' is larger than {} MiB",
                display(rel),
                MAX_FILE_BYTES >> 20
            )));
        }
        self.bytes += meta.len();
        if self.bytes > MAX_WORKSPACE_BYTES {
            return Err(GitError::WorkspaceTooLarge(format!(
                "more than {} GiB of files",
                MAX_WORKSPACE_BYTES >> 30
            )));
        }
        let mut content = Vec::with_capacity(meta.len() as usize);
        // Bounded by what fstat said, should the file grow meanwhile.
        file.take(meta.len())
            .read_to_end(&mut content)
            .map_err(io)?;
        Ok((content, meta.permissions().mode() & 0o100 != 0))
    }
}

/// A cache or dependency directory, or a bytecode file, by its name.
fn is_cache(name: &[u8], kind: std::fs::FileType, has_cargo_toml: bool) -> bool {
    if CACHE_DIRS.contains(&name) {
        return true;
    }
    if name == b"target" && has_cargo_toml {
        return true;
    }
    if name.ends_with(b".egg-info") && kind.is_dir() {
        return true;
    }
    !kind.is_dir() && CACHE_FILE_SUFFIXES.iter().any(|s| name.ends_with(s))
}

fn display(path: &[u8]) -> String {
    String::from_utf8_lossy(path).into_owned()
}

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;
