//! Prepared environments kept between jobs, under one root (the bot's
//! `data_dir/environments`, `forgeward run`'s cache): one directory per key, holding the
//! directories the setup left in the workspace (`files/.venv`, `files/node_modules`,
//! `files/.forgeward-env`, …) and `environment.json`, what was prepared.
//!
//! A kept environment is never handed to a sandbox itself: [`lend`] gives each workspace its
//! own copy of the directories, whose files are hard links to the kept ones when the worker runs
//! as another user than the bot (the bot is root: bubblewrap's dedicated ids, Docker's worker),
//! so a worker can replace a file (unlink, write anew) but never write into the kept one; and
//! real copies otherwise (reflinked where the filesystem can). A directory is made complete
//! under a temporary name and renamed into place, so a half-made one is never found; pruning
//! removes what no job used for [`EnvironmentSection::keep_for`] and the least recently used
//! past `max_size`.
//!
//! [`EnvironmentSection::keep_for`]: crate::config::pipeline::EnvironmentSection

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::Step;

/// The file in each kept directory that says what it holds.
const META: &str = "environment.json";

/// What a kept environment holds, as `environment.json` says.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Meta {
    pub key: String,
    /// Seconds since the epoch when the setup finished.
    pub created: u64,
    /// The job whose setup made it (none for a local run).
    pub job: Option<u64>,
    pub steps: Vec<Step>,
    /// How long the setup took, in milliseconds.
    pub duration_ms: u64,
    /// The directories kept, relative to the workspace.
    pub kept: Vec<String>,
    /// Files and bytes in them.
    pub files: u64,
    pub bytes: u64,
}

/// A kept environment, found or just made.
#[derive(Clone, Debug)]
pub struct Kept {
    pub dir: PathBuf,
    pub meta: Meta,
}

impl Kept {
    /// Where the kept directories live.
    pub fn files(&self) -> PathBuf {
        self.dir.join("files")
    }
}

/// The kept environments under `root`.
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
}

impl Store {
    pub fn at(root: impl Into<PathBuf>) -> Store {
        Store { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The environment kept under `key`, marked as used now; `None` when there is none (or
    /// its record cannot be read: then it is not trusted, and made again).
    pub fn find(&self, key: &str) -> Option<Kept> {
        let dir = self.root.join(key);
        let text = std::fs::read(dir.join(META)).ok()?;
        let meta: Meta = serde_json::from_slice(&text).ok()?;
        if meta.key != key {
            return None;
        }
        // The directory's time is its last use, for pruning.
        let _ = filetime_now(&dir);
        Some(Kept { dir, meta })
    }

    /// A fresh directory to make an environment in (its workspace inside), under a name no
    /// other process uses.
    pub fn building(&self, key: &str) -> io::Result<PathBuf> {
        std::fs::create_dir_all(&self.root)?;
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = self
            .root
            .join(format!(".building-{key}-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir)?;
        Ok(dir)
    }

    /// Keeps what the setup left in `workspace`: each of `kept` (relative paths of directories)
    /// moved under `building/files`, the record written, and `building` renamed to `key`.
    /// Another process that kept the same key first wins; this one's copy is removed and the
    /// other's returned.
    pub fn keep(&self, building: &Path, workspace: &Path, mut meta: Meta) -> io::Result<Kept> {
        let files = building.join("files");
        std::fs::create_dir_all(&files)?;
        let (mut count, mut bytes) = (0, 0);
        for rel in &meta.kept {
            let to = files.join(rel);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::rename(workspace.join(rel), &to)?;
            let (n, b) = usage(&to);
            count += n;
            bytes += b;
        }
        meta.files = count;
        meta.bytes = bytes;
        let json = serde_json::to_vec_pretty(&meta).map_err(io::Error::other)?;
        std::fs::write(building.join(META), json)?;
        let dir = self.root.join(&meta.key);
        if let Err(err) = std::fs::rename(building, &dir) {
            if let Some(kept) = self.find(&meta.key) {
                let _ = crate::git::remove_tree(building);
                return Ok(kept);
            }
            return Err(err);
        }
        Ok(Kept { dir, meta })
    }

    /// Removes the environments no job used for `keep_for`, then the least recently used until
    /// the rest take at most `max_bytes`; and any half-made one older than a day. Returns how
    /// many were removed.
    pub fn prune(&self, keep_for: Duration, max_bytes: u64, except: &str) -> usize {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return 0;
        };
        let now = SystemTime::now();
        let mut kept: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        let mut removed = 0;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let used = entry
                .metadata()
                .and_then(|m| m.modified())
                .unwrap_or(UNIX_EPOCH);
            let age = now.duration_since(used).unwrap_or_default();
            if name.starts_with(".building-") {
                if age > Duration::from_secs(24 * 3600) && crate::git::remove_tree(&path).is_ok() {
                    removed += 1;
                }
                continue;
            }
            if name == except {
                continue;
            }
            if age > keep_for {
                if crate::git::remove_tree(&path).is_ok() {
                    removed += 1;
                }
                continue;
            }
            let bytes = std::fs::read(path.join(META))
                .ok()
                .and_then(|t| serde_json::from_slice::<Meta>(&t).ok())
                .map_or(0, |m| m.bytes);
            kept.push((used, bytes, path));
        }
        let mut total: u64 = kept.iter().map(|(_, b, _)| b).sum();
        kept.sort();
        for (_, bytes, path) in kept {
            if total <= max_bytes {
                break;
            }
            if crate::git::remove_tree(&path).is_ok() {
                total = total.saturating_sub(bytes);
                removed += 1;
            }
        }
        removed
    }
}

/// Marks a directory as used now (its modification time).
fn filetime_now(dir: &Path) -> io::Result<()> {
    let file = std::fs::File::open(dir)?;
    file.set_modified(SystemTime::now())
}

/// Files and bytes under `root` (symlinks not followed).
fn usage(root: &Path) -> (u64, u64) {
    let (mut files, mut bytes) = (0, 0);
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                dirs.push(entry.path());
            } else {
                files += 1;
                bytes += meta.blocks() * 512;
            }
        }
    }
    (files, bytes)
}

/// How [`lend`] gives a workspace its copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lending {
    /// Files hard-linked to the kept ones (which the worker, another user, cannot write).
    Link,
    /// Files copied (reflinked where the filesystem can).
    Copy,
}

impl Lending {
    /// Links when the bot is root (every backend then runs the worker as another user), copies
    /// otherwise (the worker would be the files' owner, and could write through a link).
    pub fn for_this_process() -> Lending {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            Lending::Link
        } else {
            Lending::Copy
        }
    }
}

/// What [`lend`] made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lent {
    pub files: u64,
    pub dirs: u64,
}

/// Gives `workspace` its own copy of `kept`'s directories, at their paths. A path the workspace
/// already has (the base tracks a `node_modules`) is left as it is.
pub fn lend(kept: &Kept, workspace: &Path, how: Lending) -> io::Result<Lent> {
    let mut lent = Lent::default();
    let from_root = kept.files();
    for rel in &kept.meta.kept {
        let (from, to) = (from_root.join(rel), workspace.join(rel));
        if std::fs::symlink_metadata(&to).is_ok() {
            continue;
        }
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        copy_tree(&from, &to, how, &mut lent)?;
    }
    Ok(lent)
}

/// A copy of the directory `from` at `to` (which must not exist), reflinked where the
/// filesystem can: the setup's own copy of a checkout.
pub fn copy_dir(from: &Path, to: &Path) -> io::Result<()> {
    copy_tree(from, to, Lending::Copy, &mut Lent::default())
}

/// Copies the directory `from` to `to` (which must not exist): directories made anew with
/// their modes, symlinks recreated (never followed), files linked or copied.
fn copy_tree(from: &Path, to: &Path, how: Lending, lent: &mut Lent) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut stack = vec![(from.to_path_buf(), to.to_path_buf())];
    while let Some((src, dst)) = stack.pop() {
        let meta = std::fs::symlink_metadata(&src)?;
        std::fs::create_dir(&dst)?;
        // Writable by its owner (the worker, once handed over), whatever the tool made it.
        std::fs::set_permissions(
            &dst,
            std::fs::Permissions::from_mode((meta.mode() & 0o7777) | 0o700),
        )?;
        lent.dirs += 1;
        for entry in std::fs::read_dir(&src)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let (s, d) = (entry.path(), dst.join(entry.file_name()));
            if kind.is_dir() {
                stack.push((s, d));
            } else if kind.is_symlink() {
                std::os::unix::fs::symlink(std::fs::read_link(&s)?, &d)?;
                lent.files += 1;
            } else if kind.is_file() {
                match how {
                    Lending::Link => std::fs::hard_link(&s, &d)?,
                    Lending::Copy => copy_file(&s, &d)?,
                }
                lent.files += 1;
            }
        }
    }
    Ok(())
}

/// A copy of one file: a reflink where the filesystem makes one, else its bytes.
fn copy_file(from: &Path, to: &Path) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let src = std::fs::File::open(from)?;
    let mode = src.metadata()?.mode();
    let dst = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)?;
    // FICLONE: _IOW(0x94, 9, int).
    const FICLONE: libc::c_ulong = 0x4004_9409;
    // SAFETY: both descriptors are open for the call's length; the ioctl reads only them.
    let cloned = unsafe { libc::ioctl(dst.as_raw_fd(), FICLONE as _, src.as_raw_fd()) } == 0;
    if !cloned {
        let (mut src, mut dst) = (&src, &dst);
        io::copy(&mut src, &mut dst)?;
    }
    use std::os::unix::fs::PermissionsExt;
    dst.set_permissions(std::fs::Permissions::from_mode(mode & 0o777))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(key: &str, kept: &[&str]) -> Meta {
        Meta {
            key: key.to_owned(),
            created: 0,
            job: Some(7),
            steps: Vec::new(),
            duration_ms: 0,
            kept: kept.iter().map(|s| (*s).to_owned()).collect(),
            files: 0,
            bytes: 0,
        }
    }

    #[test]
    fn a_kept_environment_is_found_by_its_key_and_lent_as_links_or_copies() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = Store::at(dir.path().join("envs"));
        let building = store.building("k1").expect("building");
        let ws = building.join("workspace");
        std::fs::create_dir_all(ws.join(".venv/bin")).expect("mkdir");
        std::fs::write(ws.join(".venv/bin/tool"), "#!/bin/sh\n").expect("write");
        std::os::unix::fs::symlink("/usr/bin/python3", ws.join(".venv/bin/python"))
            .expect("symlink");
        std::fs::create_dir_all(ws.join("web/node_modules/left-pad")).expect("mkdir");
        std::fs::write(ws.join("web/node_modules/left-pad/index.js"), "x").expect("write");
        let kept = store
            .keep(&building, &ws, meta("k1", &[".venv", "web/node_modules"]))
            .expect("kept");
        assert_eq!(kept.meta.files, 3);
        assert!(store.find("k1").is_some());
        assert!(store.find("k2").is_none());

        for how in [Lending::Link, Lending::Copy] {
            let target = dir.path().join(format!("job-{how:?}"));
            std::fs::create_dir_all(&target).expect("mkdir");
            let lent = lend(&kept, &target, how).expect("lent");
            assert_eq!(lent.files, 3);
            let tool = target.join(".venv/bin/tool");
            assert_eq!(std::fs::read_to_string(&tool).expect("read"), "#!/bin/sh\n");
            assert_eq!(
                std::fs::read_link(target.join(".venv/bin/python")).expect("link"),
                Path::new("/usr/bin/python3")
            );
            let nlink = std::fs::metadata(&tool).expect("meta").nlink();
            assert_eq!(nlink > 1, how == Lending::Link, "{how:?}");
            // Replacing a lent file leaves the kept one as it was.
            std::fs::remove_file(&tool).expect("rm");
            std::fs::write(&tool, "changed").expect("write");
        }
        assert_eq!(
            std::fs::read_to_string(kept.files().join(".venv/bin/tool")).expect("read"),
            "#!/bin/sh\n"
        );
    }

    #[test]
    fn a_workspace_path_that_exists_is_not_lent_over() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = Store::at(dir.path().join("envs"));
        let building = store.building("k").expect("building");
        let ws = building.join("workspace");
        std::fs::create_dir_all(ws.join("node_modules/a")).expect("mkdir");
        let kept = store
            .keep(&building, &ws, meta("k", &["node_modules"]))
            .expect("kept");
        let target = dir.path().join("job");
        std::fs::create_dir_all(target.join("node_modules")).expect("mkdir");
        let lent = lend(&kept, &target, Lending::Link).expect("lent");
        assert_eq!(lent, Lent::default());
        assert!(!target.join("node_modules/a").exists());
    }

    #[test]
    fn pruning_removes_the_old_and_the_least_recently_used_past_the_size() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = Store::at(dir.path().join("envs"));
        for key in ["a", "b", "c"] {
            let building = store.building(key).expect("building");
            let ws = building.join("workspace");
            std::fs::create_dir_all(ws.join(".venv")).expect("mkdir");
            std::fs::write(ws.join(".venv/blob"), vec![7u8; 64 * 1024]).expect("write");
            store
                .keep(&building, &ws, meta(key, &[".venv"]))
                .expect("kept");
            std::thread::sleep(Duration::from_millis(20));
        }
        // `a` used last: `b` is the least recently used.
        assert!(store.find("a").is_some());
        let one = store.find("c").expect("c").meta.bytes;
        let removed = store.prune(Duration::from_secs(3600), one * 2, "none");
        assert_eq!(removed, 1);
        assert!(store.find("b").is_none());
        assert!(store.find("a").is_some() && store.find("c").is_some());
        // Nothing is younger than zero: all go but the one in use.
        let removed = store.prune(Duration::ZERO, u64::MAX, "c");
        assert_eq!(removed, 1);
        assert!(store.find("c").is_some());
    }
}
