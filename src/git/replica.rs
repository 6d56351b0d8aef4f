//! A plain copy of one commit's files (no `.git`) that untrusted code runs over, then moved to
//! another commit: the repository's tests, run three times by the bot on three commits that
//! differ in a few files.
//!
//! Writing a thousand files costs far more than the suite of a small repository, and the three
//! commits share nearly all of them. A [`Replica`] writes each file once, remembers what it wrote
//! (the blob and the file's `lstat`: inode, ctime, mtime, size, mode), and on every
//! [`Replica::switch`] first undoes what the last run did: a file whose `lstat` is not what the
//! replica left is written again from its blob, anything the tree does not have is removed, a
//! directory's permissions are put back. The ctime settles it: no unprivileged process can set
//! it, and every write, `chmod`, rename or new hard link moves it, so a file the run touched in
//! any way is never taken for one it did not; a file whose ctime alone moved (a sandbox hands
//! the files to its own user and back) is kept when its contents still hash to its blob. The
//! run's processes must be gone when a switch runs (the sandbox ends them all), and what was
//! mounted in the directory for the run (a lent environment) unmounted: a switch refuses to
//! walk a directory with a mount in it.
//!
//! Names from the tree are checked as the job's checkout checks them; nothing is written
//! through an existing entry (a file is removed, then created new) and no symlink is followed.

use std::ffi::OsStr;
use std::fs::DirBuilder;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid, Repository};
use rustc_hash::FxHashMap as HashMap;

use super::entries::{bad_tree, display, enter, remove_tree, write_blob};
use super::{GitError, MAX_WORKSPACE_DEPTH};

/// What a replica (or the checkout it was made from) wrote, by path.
pub(super) type Files = HashMap<Vec<u8>, Written>;

/// The `lstat` of a file as the replica left it, and what it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Written {
    id: Oid,
    /// The tree entry's mode (file, executable, symlink).
    filemode: i32,
    dev: u64,
    ino: u64,
    mode: u32,
    size: u64,
    ctime: (i64, i64),
    mtime: (i64, i64),
}

impl Written {
    pub(super) fn new(id: Oid, filemode: i32, meta: &std::fs::Metadata) -> Written {
        Written {
            id,
            filemode,
            dev: meta.dev(),
            ino: meta.ino(),
            mode: meta.mode(),
            size: meta.size(),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            mtime: (meta.mtime(), meta.mtime_nsec()),
        }
    }
}

/// What one [`Replica::switch`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Switched {
    /// Files (and symlinks) written: new or changed in the commit, or touched by the last run.
    pub written: usize,
    /// Entries removed: gone from the commit, or left by the last run.
    pub removed: usize,
}

/// A directory holding one commit's files; dropping it removes the directory.
#[derive(Debug)]
pub struct Replica {
    dir: PathBuf,
    commit: Option<Oid>,
    written: Files,
}

impl Replica {
    /// An empty replica at `dir`, which is created (and must not exist yet).
    pub fn create(dir: &Path) -> Result<Replica, GitError> {
        DirBuilder::new()
            .mode(0o755)
            .create(dir)
            .map_err(|e| GitError::io(format!("creating {}", dir.display()), &e))?;
        Ok(Replica {
            dir: dir.to_path_buf(),
            commit: None,
            written: HashMap::default(),
        })
    }

    /// A replica of the files at `dir`, of which `written` were written as recorded; anything
    /// may have happened to them since. It holds no commit until its first switch.
    pub(super) fn adopt(dir: PathBuf, written: Files) -> Replica {
        Replica {
            dir,
            commit: None,
            written,
        }
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The commit the files are of, once switched to one.
    pub fn commit(&self) -> Option<Oid> {
        self.commit
    }

    /// Makes the directory hold exactly `commit`'s files, whatever ran in it since the last
    /// switch. On failure the replica holds no commit, and the next switch rewrites what it
    /// cannot vouch for. Refuses while anything is mounted in the directory.
    pub fn switch(&mut self, repo: &Repository, commit: Oid) -> Result<Switched, GitError> {
        let tree = repo
            .find_commit(commit)
            .and_then(|c| c.tree())
            .map_err(|e| GitError::git(format!("reading {commit}"), e))?;
        self.commit = None;
        // A lent environment still mounted in it: the walk would descend into the overlay and
        // remove what the tree does not have through it.
        crate::mounts::none_under(&self.dir)
            .map_err(|e| GitError::io(self.dir.display().to_string(), &e))?;
        let mut sync = Sync {
            repo,
            old: std::mem::take(&mut self.written),
            new: HashMap::default(),
            done: Switched::default(),
            newest: None,
        };
        set_dir_mode(&self.dir).map_err(|e| GitError::io(self.dir.display().to_string(), &e))?;
        let result = sync.dir(&tree, &self.dir, &mut Vec::new(), 0);
        self.written = sync.new;
        result?;
        if let Some(newest) = sync.newest {
            self.settle(newest);
        }
        self.commit = Some(commit);
        Ok(sync.done)
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        if let Err(e) = remove_tree(&self.dir) {
            tracing::warn!(dir = %self.dir.display(), error = %e, "could not remove a replica");
        }
    }
}

struct Sync<'r> {
    repo: &'r Repository,
    /// What the replica wrote before this switch, by path.
    old: Files,
    /// What it holds after, by path.
    new: Files,
    done: Switched,
    /// The newest ctime of what this switch wrote.
    newest: Option<(i64, i64)>,
}

impl Sync<'_> {
    /// Makes `dir` (a real directory) hold exactly `tree`.
    fn dir(
        &mut self,
        tree: &git2::Tree<'_>,
        dir: &Path,
        prefix: &mut Vec<u8>,
        depth: usize,
    ) -> Result<(), GitError> {
        if depth > MAX_WORKSPACE_DEPTH {
            return Err(bad_tree(prefix, "directories nested too deeply"));
        }
        let io = |prefix: &[u8], e: std::io::Error| GitError::io(display(prefix), &e);
        // What is there now, never followed: the run may have left anything.
        let mut present: HashMap<Vec<u8>, std::fs::FileType> = HashMap::default();
        for entry in std::fs::read_dir(dir).map_err(|e| io(prefix, e))? {
            let entry = entry.map_err(|e| io(prefix, e))?;
            let kind = entry.file_type().map_err(|e| io(prefix, e))?;
            present.insert(entry.file_name().as_bytes().to_vec(), kind);
        }
        for entry in tree.iter() {
            let name = entry.name_bytes();
            let start = enter(prefix, name)?;
            let path = dir.join(OsStr::from_bytes(name));
            let there = present.remove(name);
            match entry.kind() {
                Some(ObjectType::Tree) | Some(ObjectType::Commit) => {
                    self.ensure_dir(&path, there, prefix)?;
                    if entry.kind() == Some(ObjectType::Tree) {
                        let sub = self
                            .repo
                            .find_tree(entry.id())
                            .map_err(|e| GitError::git(display(prefix), e))?;
                        self.dir(&sub, &path, prefix, depth + 1)?;
                    } else {
                        // A submodule: an empty directory, as the job's checkout leaves it.
                        self.empty(&path, prefix)?;
                    }
                }
                Some(ObjectType::Blob) => {
                    let filemode = entry.filemode();
                    let kept = match (there, self.old.get(prefix.as_slice())) {
                        (Some(kind), Some(was))
                            if !kind.is_dir()
                                && was.id == entry.id()
                                && was.filemode == filemode =>
                        {
                            unchanged(&path, was)
                        }
                        _ => None,
                    };
                    let written = if let Some(kept) = kept {
                        // Its ctime may be recent (a hand-over's chown): the next run must not
                        // be able to change it without moving the ctime past this one.
                        self.newest = self.newest.max(Some(kept.ctime));
                        kept
                    } else {
                        if let Some(kind) = there {
                            remove(&path, kind).map_err(|e| io(prefix, e))?;
                        }
                        let blob = self
                            .repo
                            .find_blob(entry.id())
                            .map_err(|e| GitError::git(display(prefix), e))?;
                        write_blob(&path, filemode, blob.content()).map_err(|e| io(prefix, e))?;
                        self.done.written += 1;
                        let meta = std::fs::symlink_metadata(&path).map_err(|e| io(prefix, e))?;
                        let written = Written::new(entry.id(), filemode, &meta);
                        self.newest = self.newest.max(Some(written.ctime));
                        written
                    };
                    self.new.insert(prefix.clone(), written);
                }
                _ => return Err(bad_tree(prefix, "an entry of an unknown kind")),
            }
            prefix.truncate(start);
        }
        for (name, kind) in present {
            remove(&dir.join(OsStr::from_bytes(&name)), kind).map_err(|e| io(prefix, e))?;
            self.done.removed += 1;
        }
        Ok(())
    }

    /// Makes `path` a real directory of mode 0755, whatever is there.
    fn ensure_dir(
        &mut self,
        path: &Path,
        there: Option<std::fs::FileType>,
        prefix: &[u8],
    ) -> Result<(), GitError> {
        let io = |e: std::io::Error| GitError::io(display(prefix), &e);
        match there {
            Some(kind) if kind.is_dir() => set_dir_mode(path).map_err(io),
            other => {
                if let Some(kind) = other {
                    remove(path, kind).map_err(io)?;
                    self.done.removed += 1;
                }
                DirBuilder::new().mode(0o755).create(path).map_err(io)
            }
        }
    }

    /// Removes everything in the directory `path`.
    fn empty(&mut self, path: &Path, prefix: &[u8]) -> Result<(), GitError> {
        let io = |e: std::io::Error| GitError::io(display(prefix), &e);
        for entry in std::fs::read_dir(path).map_err(io)? {
            let entry = entry.map_err(io)?;
            remove(&entry.path(), entry.file_type().map_err(io)?).map_err(io)?;
            self.done.removed += 1;
        }
        Ok(())
    }
}

/// The entry at `path` as it is now, if it still holds what the replica wrote there (`was`):
/// its `lstat` unchanged, or only its ctime moved (a sandbox that hands the files to another
/// user and back changes every ctime) with the same inode, size, mode and single link, and
/// contents that hash to the same blob.
fn unchanged(path: &Path, was: &Written) -> Option<Written> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let now = Written::new(was.id, was.filemode, &meta);
    if now == *was {
        return Some(now);
    }
    if (now.dev, now.ino, now.size, now.mode) != (was.dev, was.ino, was.size, was.mode)
        || meta.nlink() != 1
    {
        return None;
    }
    let content = if meta.file_type().is_symlink() {
        std::fs::read_link(path).ok()?.into_os_string().into_vec()
    } else {
        use std::io::Read;
        let (file, _) = crate::files::open_regular(path).ok()??;
        let mut content = Vec::with_capacity(was.size as usize);
        file.take(was.size + 1).read_to_end(&mut content).ok()?;
        content
    };
    let id = Oid::hash_object(ObjectType::Blob, &content).ok()?;
    (id == was.id).then_some(now)
}

impl Replica {
    /// Returns once a file written now, on the replica's own file system, gets a ctime past
    /// `newest`: a change made after that cannot carry the ctime of a file as the replica left
    /// it, whatever the file system's timestamp granularity (a few milliseconds of the kernel's
    /// coarse clock, or whole seconds). The probe is a sibling of the directory, never in it.
    /// Gives up after two seconds; the next switch then hashes what it cannot tell apart.
    fn settle(&mut self, newest: (i64, i64)) {
        let mut name = self.dir.file_name().unwrap_or_default().to_os_string();
        name.push(".clock");
        let probe = self.dir.with_file_name(name);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        loop {
            let stamped = std::fs::write(&probe, b"")
                .and_then(|()| std::fs::symlink_metadata(&probe))
                .map(|m| (m.ctime(), m.ctime_nsec()));
            match stamped {
                Ok(ctime) if ctime > newest => break,
                Ok(_) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                _ => {
                    // Not settled: nothing the replica wrote may be kept on its stat alone.
                    for written in self.written.values_mut() {
                        written.ctime = (i64::MIN, 0);
                    }
                    break;
                }
            }
        }
        let _ = std::fs::remove_file(&probe);
    }
}

/// Puts a directory's mode back to 0755 (a run may have taken its own permissions away).
fn set_dir_mode(path: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    if meta.mode() & 0o7777 != 0o755 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

/// Removes one entry of the kind `kind` (from its directory listing: a symlink is removed, not
/// followed).
fn remove(path: &Path, kind: std::fs::FileType) -> std::io::Result<()> {
    if kind.is_dir() {
        remove_tree(path)
    } else {
        std::fs::remove_file(path)
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;
    use crate::git::testing::commit;

    fn files(dir: &Path) -> Vec<(String, String)> {
        let mut out = Vec::new();
        fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let entry = entry.unwrap();
                let path = entry.path();
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                let kind = entry.file_type().unwrap();
                if kind.is_symlink() {
                    let to = std::fs::read_link(&path).unwrap();
                    out.push((rel, format!("-> {}", to.display())));
                } else if kind.is_dir() {
                    out.push((format!("{rel}/"), String::new()));
                    walk(root, &path, out);
                } else {
                    out.push((rel, std::fs::read_to_string(&path).unwrap()));
                }
            }
        }
        walk(dir, dir, &mut out);
        out.sort();
        out
    }

    fn expected(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = pairs
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn a_switch_writes_only_what_changed_and_undoes_what_a_run_did() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(tmp.path().join("r.git")).unwrap();
        let base = commit(
            &repo,
            &[
                ("src/calc.py", "def add(a, b):\n    return a + b\n"),
                ("tests/test_calc.py", "assert add(1, 2) == 3\n"),
                ("README", "calc\n"),
            ],
            None,
        );
        let head = commit(
            &repo,
            &[
                ("src/calc.py", "def add(a, b):\n    return 3\n"),
                ("tests/test_calc.py", "assert add(1, 2) == add(1, 2)\n"),
                ("src/new.py", "x = 1\n"),
            ],
            Some(base),
        );
        let mut replica = Replica::create(&tmp.path().join("ws")).unwrap();
        let first = replica.switch(&repo, base).unwrap();
        assert_eq!(first.written, 3);
        let ws = replica.path().to_path_buf();
        // A run edits a test in place keeping its size and times, adds a conftest, replaces the
        // README with a symlink, locks a directory and leaves a cache.
        let test = ws.join("tests/test_calc.py");
        let before = std::fs::symlink_metadata(&test).unwrap();
        std::fs::write(
            &test,
            "assert True or add(1, 2)\n"
                .get(..before.len() as usize)
                .unwrap(),
        )
        .unwrap();
        let times = std::fs::FileTimes::new()
            .set_modified(before.modified().unwrap())
            .set_accessed(before.accessed().unwrap());
        std::fs::File::options()
            .write(true)
            .open(&test)
            .unwrap()
            .set_times(times)
            .unwrap();
        assert_eq!(
            std::fs::symlink_metadata(&test).unwrap().len(),
            before.len()
        );
        std::fs::write(ws.join("tests/conftest.py"), "import sys\n").unwrap();
        std::fs::remove_file(ws.join("README")).unwrap();
        symlink("/etc/passwd", ws.join("README")).unwrap();
        std::fs::create_dir_all(ws.join("__pycache__/deep")).unwrap();
        std::fs::set_permissions(ws.join("src"), std::fs::Permissions::from_mode(0o500)).unwrap();

        let again = replica.switch(&repo, base).unwrap();
        assert_eq!(
            files(&ws),
            expected(&[
                ("README", "calc\n"),
                ("src/", ""),
                ("src/calc.py", "def add(a, b):\n    return a + b\n"),
                ("tests/", ""),
                ("tests/test_calc.py", "assert add(1, 2) == 3\n"),
            ])
        );
        assert_eq!(
            again,
            Switched {
                written: 2,
                removed: 2
            }
        );
        let mode = std::fs::symlink_metadata(ws.join("src")).unwrap().mode();
        assert_eq!(mode & 0o777, 0o755);

        let moved = replica.switch(&repo, head).unwrap();
        assert_eq!(
            moved,
            Switched {
                written: 3,
                removed: 1
            }
        );
        assert_eq!(
            files(&ws),
            expected(&[
                ("src/", ""),
                ("src/calc.py", "def add(a, b):\n    return 3\n"),
                ("src/new.py", "x = 1\n"),
                ("tests/", ""),
                ("tests/test_calc.py", "assert add(1, 2) == add(1, 2)\n"),
            ])
        );
        assert_eq!(replica.commit(), Some(head));
        // Nothing touched: nothing written.
        assert_eq!(replica.switch(&repo, head).unwrap(), Switched::default());
        drop(replica);
        assert!(!ws.exists(), "a replica removes its directory");
    }

    #[test]
    fn a_directory_swapped_for_a_symlink_is_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(tmp.path().join("r.git")).unwrap();
        let base = commit(&repo, &[("tests/test_a.py", "assert 1\n")], None);
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep"), "mine\n").unwrap();
        let mut replica = Replica::create(&tmp.path().join("ws")).unwrap();
        replica.switch(&repo, base).unwrap();
        let tests = replica.path().join("tests");
        std::fs::remove_dir_all(&tests).unwrap();
        symlink(&outside, &tests).unwrap();
        replica.switch(&repo, base).unwrap();
        assert!(std::fs::symlink_metadata(&tests).unwrap().is_dir());
        assert_eq!(
            std::fs::read_to_string(outside.join("keep")).unwrap(),
            "mine\n"
        );
        assert!(!outside.join("test_a.py").exists());
    }
}
