//! Prepared environments kept between jobs, under one root (the bot's
//! `data_dir/environments`, `forgeward run`'s cache): one directory per key, holding the
//! directories the setup left in the workspace (`files/.venv`, `files/node_modules`,
//! `files/.forgeward-env`, …) and `environment.json`, what was prepared.
//!
//! A kept environment is never handed to a sandbox itself: `environment::lend` gives each
//! workspace its own view of the directories (an overlay over them, else hard links or
//! copies). Kept by a root bot, its files belong to the sandboxes' group
//! ([`crate::sandbox::ENVIRONMENT_GID`]), every directory writable by the group and no file
//! writable but by its owner: a worker, always a member, may add, replace and remove files in
//! an overlay of it without anything being handed over, never write into a kept file through
//! a hard link, and what it writes lands in the overlay's upper layer. A directory is made
//! complete under a temporary name and renamed into place, so a
//! half-made one is never found; pruning removes what no job used for
//! [`EnvironmentSection::keep_for`] and the least recently used past `max_size`, but never one
//! an overlay has as its lower layer now.
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
            let (n, b) = share(&to)?;
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
        // An environment lent as an overlay is in use whatever its age: removing a layer
        // under a live overlay would take files from a running sandbox.
        let lent: Vec<PathBuf> = crate::mounts::all()
            .unwrap_or_default()
            .iter()
            .flat_map(crate::mounts::Mount::lower_dirs)
            .collect();
        let in_use = |path: &Path| {
            std::fs::canonicalize(path).is_ok_and(|dir| lent.iter().any(|l| l.starts_with(&dir)))
        };
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
            if name == except || in_use(&path) {
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

/// Files and bytes under the kept directory `root` (symlinks not followed); when the bot is
/// root, each entry given to the sandboxes' group on the way ([`shared_mode`]), once, when
/// it is kept, so that no lending ever walks it.
fn share(root: &Path) -> io::Result<(u64, u64)> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let as_root = unsafe { libc::geteuid() } == 0;
    let give = |path: &Path, meta: &std::fs::Metadata| -> io::Result<()> {
        if !as_root {
            return Ok(());
        }
        std::os::unix::fs::lchown(path, None, Some(crate::sandbox::ENVIRONMENT_GID))?;
        if !meta.is_symlink() {
            use std::os::unix::fs::PermissionsExt;
            let mode = shared_mode(meta.is_dir(), meta.mode());
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
        }
        Ok(())
    };
    give(root, &std::fs::symlink_metadata(root)?)?;
    let (mut files, mut bytes) = (0, 0);
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            give(&entry.path(), &meta)?;
            if meta.is_dir() {
                dirs.push(entry.path());
            } else {
                files += 1;
                bytes += meta.blocks() * 512;
            }
        }
    }
    Ok((files, bytes))
}

/// A kept entry's mode: a directory's writable by its group (the sandboxes'), a file's by no
/// one but its owner (the bot), neither set-user-ID nor set-group-ID.
fn shared_mode(dir: bool, mode: u32) -> u32 {
    if dir {
        (mode | 0o070) & 0o1777
    } else {
        mode & 0o1755
    }
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

    /// Kept by root (as these tests run), every entry is the sandboxes' group's, each
    /// directory writable by it, no file writable but by its owner nor set-user-ID: a worker
    /// may add and remove files in its view, never write into a kept file (through a hard
    /// link, where overlays cannot be mounted).
    #[test]
    fn a_kept_environment_is_the_sandboxes_group_s_its_files_writable_by_their_owner_alone() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = Store::at(dir.path().join("envs"));
        let building = store.building("k").expect("building");
        let ws = building.join("workspace");
        std::fs::create_dir_all(ws.join(".venv/bin")).expect("mkdir");
        let set_mode = |path: &Path, mode: u32| {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
        };
        for (name, mode) in [("tool", 0o6777), ("data", 0o664)] {
            let path = ws.join(".venv/bin").join(name);
            std::fs::write(&path, "x").expect("write");
            set_mode(&path, mode);
        }
        set_mode(&ws.join(".venv/bin"), 0o700);
        std::os::unix::fs::symlink("tool", ws.join(".venv/bin/link")).expect("symlink");
        let kept = store
            .keep(&building, &ws, meta("k", &[".venv"]))
            .expect("kept");
        assert_eq!(kept.meta.files, 3);
        let bin = kept.files().join(".venv/bin");
        let entry = |name: &str| std::fs::symlink_metadata(bin.join(name)).expect("lstat");
        let venv = std::fs::symlink_metadata(kept.files().join(".venv")).expect("lstat");
        let bin_meta = std::fs::symlink_metadata(&bin).expect("lstat");
        for meta in [
            &venv,
            &bin_meta,
            &entry("tool"),
            &entry("data"),
            &entry("link"),
        ] {
            assert_eq!(meta.gid(), crate::sandbox::ENVIRONMENT_GID);
        }
        assert_eq!(bin_meta.mode() & 0o7777, 0o770);
        assert_eq!(entry("tool").mode() & 0o7777, 0o755);
        assert_eq!(entry("data").mode() & 0o7777, 0o644);
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
