//! A job's checkout: one commit of the mirror written out as files, with a fresh standalone
//! `.git` beside them so the worker can run `git status` and `git diff`.
//!
//! The `.git` is a new repository holding only that commit and its tree (shallow: the commit's
//! parents are not there), on branch [`CHECKOUT_BRANCH`], with an index matching the files. It
//! has no remote, no credentials, no hooks and no configuration pointing anywhere else: nothing
//! in it leads back to the mirror. The tree comes from the forge, so every name is checked before
//! it becomes a path, and nothing is ever written through an existing entry: directories are
//! created, never reused, and files are created new. Submodules are empty directories.

use std::ffi::OsStr;
use std::fs::DirBuilder;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use git2::{FileMode, IndexEntry, IndexTime, ObjectType, Oid, Repository, RepositoryInitOptions};

use super::entries::{bad_tree, display, enter, remove_tree, write_blob};
use super::mirror::Mirror;
use super::pack::{PackStream, count_objects};
use super::replica::{Files, Replica, Written};
use super::{GitError, MAX_WORKSPACE_DEPTH};

/// The branch the checkout's `.git` is on.
pub const CHECKOUT_BRANCH: &str = "main";

/// A checkout on disk; dropping it removes the directory (unless it became a [`Replica`]).
#[derive(Debug)]
pub struct Checkout {
    dir: PathBuf,
    /// What was written, by path, for the replica the files may become.
    files: Option<Files>,
}

impl Checkout {
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The checkout's directory as a [`Replica`], which owns it from then on: the files the
    /// checkout wrote are known, so the replica's first switch writes only what changed since
    /// (what the worker wrote, and what the next commit has). `None` once taken.
    pub fn take_replica(&mut self) -> Option<Replica> {
        let files = self.files.take()?;
        Some(Replica::adopt(self.dir.clone(), files))
    }
}

impl Drop for Checkout {
    fn drop(&mut self) {
        if self.files.is_none() {
            // A replica has the directory now.
            return;
        }
        if let Err(e) = remove_tree(&self.dir) {
            tracing::warn!(dir = %self.dir.display(), error = %e, "could not remove a checkout");
        }
    }
}

impl Mirror {
    /// Writes `commit`'s files into `dest` (created; it must not exist or be empty) and a
    /// standalone `.git` for them. The directory is removed when the returned [`Checkout`] is
    /// dropped, and on failure.
    pub fn checkout(&self, commit: Oid, dest: &Path) -> Result<Checkout, GitError> {
        let what = || format!("checking out {commit}");
        match std::fs::create_dir(dest) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let empty = std::fs::read_dir(dest)
                    .map_err(|e| GitError::io(what(), &e))?
                    .next()
                    .is_none();
                if !empty {
                    return Err(GitError::Io {
                        context: what(),
                        message: format!("{} is not empty", dest.display()),
                    });
                }
            }
            Err(e) => return Err(GitError::io(what(), &e)),
        }
        let mut checkout = Checkout {
            dir: dest.to_path_buf(),
            files: Some(Files::default()),
        };
        let mirror = self.repo().git2();
        let tree = mirror
            .find_commit(commit)
            .and_then(|c| c.tree())
            .map_err(|e| GitError::git(what(), e))?;
        let mut opts = RepositoryInitOptions::new();
        opts.no_reinit(true)
            .external_template(false)
            .initial_head(CHECKOUT_BRANCH);
        let local = Repository::init_opts(dest, &opts).map_err(|e| GitError::git(what(), e))?;
        // libgit2's built-in template leaves a sample in `hooks/`: the worker gets none at all.
        remove_tree(&local.path().join("hooks")).map_err(|e| GitError::io(what(), &e))?;
        let git = |e| GitError::git(what(), e);
        // The objects are copied as the files are written: each blob is read once.
        let mirror_odb = mirror.odb().map_err(git)?;
        let local_odb = local.odb().map_err(git)?;
        let count = count_objects(mirror, &tree).map_err(git)?;
        let mut pack =
            PackStream::new(&local.path().join("objects").join("pack"), count).map_err(git)?;
        for oid in [commit, tree.id()] {
            let object = mirror_odb.read(oid).map_err(git)?;
            pack.add(oid, object.kind(), object.data()).map_err(git)?;
        }
        let mut writer = TreeWriter {
            mirror,
            mirror_odb: &mirror_odb,
            pack,
            index: Vec::new(),
            files: Files::default(),
        };
        writer.write(&tree, dest, &mut Vec::new(), 0)?;
        let TreeWriter {
            pack,
            index: entries,
            files,
            ..
        } = writer;
        checkout.files = Some(files);
        pack.finish().map_err(git)?;
        local_odb.refresh().map_err(git)?;
        point_at(&local, commit, &entries).map_err(|e| GitError::Io {
            context: what(),
            message: e,
        })?;
        Ok(checkout)
    }
}

/// Makes `commit` the checkout's `HEAD` (on [`CHECKOUT_BRANCH`], as a shallow root), with an
/// index of the files written.
fn point_at(local: &Repository, commit: Oid, entries: &[IndexEntry]) -> Result<(), String> {
    // The commit's parents are not copied: git reads a commit listed in `shallow` as a root.
    std::fs::write(
        local.path().join("shallow"),
        format!("{commit}\n").as_bytes(),
    )
    .map_err(|e| e.to_string())?;
    let branch = format!("refs/heads/{CHECKOUT_BRANCH}");
    local
        .reference(&branch, commit, true, "checkout")
        .map_err(|e| e.message().to_owned())?;
    let mut index = local.index().map_err(|e| e.message().to_owned())?;
    for entry in entries {
        index.add(entry).map_err(|e| e.message().to_owned())?;
    }
    index.write().map_err(|e| e.message().to_owned())
}

/// Writes a tree's entries as files, copying their objects into the checkout's pack and
/// collecting the index entries of what it wrote.
struct TreeWriter<'r> {
    mirror: &'r Repository,
    mirror_odb: &'r git2::Odb<'r>,
    pack: PackStream,
    index: Vec<IndexEntry>,
    files: Files,
}

impl TreeWriter<'_> {
    fn write(
        &mut self,
        tree: &git2::Tree<'_>,
        dir: &Path,
        prefix: &mut Vec<u8>,
        depth: usize,
    ) -> Result<(), GitError> {
        if depth > MAX_WORKSPACE_DEPTH {
            return Err(bad_tree(prefix, "directories nested too deeply"));
        }
        for entry in tree.iter() {
            let name = entry.name_bytes();
            let start = enter(prefix, name)?;
            let path = dir.join(OsStr::from_bytes(name));
            let io = |e: std::io::Error| GitError::io(display(prefix), &e);
            let mode = entry.filemode();
            match entry.kind() {
                Some(ObjectType::Tree) => {
                    DirBuilder::new().mode(0o755).create(&path).map_err(io)?;
                    let git = |e| GitError::git(display(prefix), e);
                    let sub = self.mirror.find_tree(entry.id()).map_err(git)?;
                    let raw = self.mirror_odb.read(entry.id()).map_err(git)?;
                    self.pack
                        .add(entry.id(), ObjectType::Tree, raw.data())
                        .map_err(git)?;
                    self.write(&sub, &path, prefix, depth + 1)?;
                }
                Some(ObjectType::Blob) => {
                    let blob = self
                        .mirror
                        .find_blob(entry.id())
                        .map_err(|e| GitError::git(display(prefix), e))?;
                    self.pack
                        .add(entry.id(), ObjectType::Blob, blob.content())
                        .map_err(|e| GitError::git(display(prefix), e))?;
                    write_blob(&path, mode, blob.content()).map_err(io)?;
                    let index_mode = [FileMode::Link, FileMode::BlobExecutable]
                        .into_iter()
                        .map(u32::from)
                        .find(|m| *m as i32 == mode)
                        .unwrap_or(u32::from(FileMode::Blob));
                    let meta = std::fs::symlink_metadata(&path).map_err(io)?;
                    self.index
                        .push(index_entry(prefix, entry.id(), index_mode, &meta));
                    self.files
                        .insert(prefix.clone(), Written::new(entry.id(), mode, &meta));
                }
                Some(ObjectType::Commit) => {
                    // A submodule: an empty directory, as git leaves one not initialised.
                    DirBuilder::new().mode(0o755).create(&path).map_err(io)?;
                    let meta = std::fs::symlink_metadata(&path).map_err(io)?;
                    let mut e = index_entry(prefix, entry.id(), u32::from(FileMode::Commit), &meta);
                    // git compares nothing of a gitlink's stat data.
                    e.file_size = 0;
                    self.index.push(e);
                }
                _ => return Err(bad_tree(prefix, "an entry of an unknown kind")),
            }
            prefix.truncate(start);
        }
        Ok(())
    }
}

fn index_entry(path: &[u8], id: Oid, mode: u32, meta: &std::fs::Metadata) -> IndexEntry {
    // The index keeps 32 bits of each stat field, as git does.
    let time = |secs: i64, nanos: i64| IndexTime::new(secs as i32, nanos as u32);
    IndexEntry {
        ctime: time(meta.ctime(), meta.ctime_nsec()),
        mtime: time(meta.mtime(), meta.mtime_nsec()),
        dev: meta.dev() as u32,
        ino: meta.ino() as u32,
        mode,
        uid: meta.uid(),
        gid: meta.gid(),
        file_size: meta.size() as u32,
        id,
        // The low 12 bits hold the path's length, capped.
        flags: path.len().min(0xfff) as u16,
        flags_extended: 0,
        path: path.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use git2::Signature;

    use super::*;
    use crate::forge::event::{Forge, RepoName};

    /// A commit in `mirror` whose tree has one entry named `name` (written raw, as a forge
    /// could send it: libgit2 refuses to build such a tree itself).
    fn commit_with_entry(mirror: &Mirror, name: &[u8], mode: &str) -> Oid {
        let repo = mirror.repo().git2();
        let blob = repo.blob(b"#!/bin/sh\necho pwned\n").unwrap();
        let mut raw = Vec::new();
        raw.extend_from_slice(mode.as_bytes());
        raw.push(b' ');
        raw.extend_from_slice(name);
        raw.push(0);
        raw.extend_from_slice(blob.as_bytes());
        let leaf = repo.odb().unwrap().write(ObjectType::Tree, &raw).unwrap();
        let mut top = Vec::new();
        top.extend_from_slice(b"40000 sub\0");
        top.extend_from_slice(leaf.as_bytes());
        let tree = repo.odb().unwrap().write(ObjectType::Tree, &top).unwrap();
        let tree = repo.find_tree(tree).unwrap();
        let sig = Signature::now("t", "t@invalid").unwrap();
        repo.commit(None, &sig, &sig, "evil", &tree, &[]).unwrap()
    }

    #[test]
    fn a_tree_with_a_name_git_refuses_is_not_checked_out() {
        let tmp = tempfile::tempdir().unwrap();
        let mirror = Mirror::open_or_create(
            &tmp.path().join("m"),
            Forge::GitHub,
            &RepoName("o/r".to_owned()),
        )
        .unwrap();
        for (name, mode) in [
            (&b".."[..], "100755"),
            (b".GIT", "40000"),
            (b".git", "100644"),
            (b"a/b", "100644"),
        ] {
            let commit = if mode == "40000" {
                // A directory `.GIT` holding a hook.
                let repo = mirror.repo().git2();
                let hook = commit_with_entry(&mirror, b"post-checkout", "100755");
                let hooks = repo.find_commit(hook).unwrap().tree().unwrap();
                let sub = hooks.get_name("sub").unwrap().id();
                let mut raw = b"40000 ".to_vec();
                raw.extend_from_slice(name);
                raw.push(0);
                raw.extend_from_slice(sub.as_bytes());
                let tree = repo.odb().unwrap().write(ObjectType::Tree, &raw).unwrap();
                let tree = repo.find_tree(tree).unwrap();
                let sig = Signature::now("t", "t@invalid").unwrap();
                repo.commit(None, &sig, &sig, "evil", &tree, &[]).unwrap()
            } else {
                commit_with_entry(&mirror, name, mode)
            };
            let dest = tmp.path().join("ws");
            let err = mirror.checkout(commit, &dest).unwrap_err();
            assert!(err.to_string().contains("refuses"), "{name:?}: {err}");
            assert!(
                !dest.exists(),
                "{name:?}: a failed checkout was left behind"
            );
            assert!(!tmp.path().join("pwned").exists());
        }
    }
}
