//! Lending a kept environment to a workspace: each sandbox of a job (the worker's, each
//! verification run's) gets its own view of the kept directories at their paths
//! (`<workspace>/.venv`, `<workspace>/node_modules`, …), which it may write as it likes, and
//! which is taken back when its run ends. Nothing it writes reaches the kept environment or
//! the next sandbox.
//!
//! - **Overlays**, when this process can mount one (root, or `CAP_SYS_ADMIN`; decided once by
//!   trying, [`Lending::for_this_process`]): the kept directory is the read-only lower layer,
//!   an empty upper layer and the kernel's work directory are made beside the workspace
//!   ([`crate::sandbox::lent_layers`]: `<workspace>.lent/`), and the merged view is mounted
//!   where the environment belongs, volatile (the upper layer is never synced: it is thrown
//!   away). Lending and taking back cost a mount and an unmount, whatever the environment's
//!   size: nothing in it is walked or handed to the worker, who may add, replace and remove
//!   files there because the kept directories are writable by the sandboxes' group
//!   ([`crate::sandbox::ENVIRONMENT_GID`], see `kept`). A write lands in the upper layer (the
//!   kernel copies a file up before changing it), a delete leaves a whiteout there, and the
//!   upper layer is thrown away with the loan.
//! - **Hard links** otherwise, when the bot is root (every backend then runs the worker as
//!   another user): directories made anew, files linked to the kept ones, which the worker may
//!   replace (unlink, write anew) but never write into.
//! - **Copies** otherwise (the worker would be the files' owner, and could write through a
//!   link), reflinked where the file system can.
//!
//! A [`Loan`] unmounts what it mounted before it removes anything, when taken back or dropped
//! on any way out (an error, a cancelled job); a removal never walks through a live mount
//! (`git::remove_tree` refuses), and what a crashed bot left mounted is unmounted at its next
//! start before its job directories are cleared (what a crashed `forgeward run` or `forgeward
//! verify` left in its temporary directory, at the next start of either: `jobs::leftovers`).

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::kept::Kept;
use crate::mounts::{self, Overlay};

/// How [`lend`] gives a workspace its view of a kept environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lending {
    /// The kept directories as the lower layers of overlays, a fresh upper layer each.
    Overlay,
    /// Files hard-linked to the kept ones (which the worker, another user, cannot write).
    Link,
    /// Files copied (reflinked where the filesystem can).
    Copy,
}

/// Mounts an overlay: the kernel's ([`mounts::mount_overlay`]), or a test's stand-in.
pub type Mounter = dyn Fn(&Overlay) -> io::Result<()> + Sync;

impl Lending {
    /// Overlays when this process can mount one, else [`Lending::fallback`]. Tried once, by
    /// mounting a small overlay in `probe_in` (where kept environments live, beside the jobs),
    /// and remembered for the process's life.
    pub fn for_this_process(probe_in: &Path) -> Lending {
        static DECIDED: OnceLock<Lending> = OnceLock::new();
        *DECIDED.get_or_init(|| Lending::decide(probe_in, &mounts::mount_overlay))
    }

    /// Overlays when `mount` mounts one in `probe_in`, else [`Lending::fallback`].
    pub fn decide(probe_in: &Path, mount: &Mounter) -> Lending {
        match probe(probe_in, mount) {
            Ok(()) => Lending::Overlay,
            Err(e) => {
                let fallback = Lending::fallback();
                tracing::info!(error = %e, lending = fallback.describe(), "no overlays: environments are lent as {}", fallback.describe());
                fallback
            }
        }
    }

    /// Without overlays: links when the bot is root (every backend then runs the worker as
    /// another user), copies otherwise (the worker would be the files' owner, and could write
    /// through a link).
    pub fn fallback() -> Lending {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            Lending::Link
        } else {
            Lending::Copy
        }
    }

    /// How it lends, for people: `overlays`, `hard links`, `copies`.
    pub fn describe(self) -> &'static str {
        match self {
            Lending::Overlay => "overlays",
            Lending::Link => "hard links",
            Lending::Copy => "copies",
        }
    }
}

/// Mounts an overlay of a one-file lower layer in a fresh directory under `dir`, reads the file
/// through it, unmounts it and removes the directory.
fn probe(dir: &Path, mount: &Mounter) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = tempfile::Builder::new()
        .prefix(".overlay-probe-")
        .tempdir_in(dir)?;
    let at = |name: &str| probe.path().join(name);
    let overlay = Overlay {
        lower: at("lower"),
        upper: at("upper"),
        work: at("work"),
        merged: at("merged"),
    };
    for d in [
        &overlay.lower,
        &overlay.upper,
        &overlay.work,
        &overlay.merged,
    ] {
        std::fs::create_dir(d)?;
    }
    std::fs::write(overlay.lower.join("probe"), b"lower")?;
    mount(&overlay)?;
    let seen = std::fs::read(overlay.merged.join("probe"));
    if let Err(e) = mounts::unmount(&overlay.merged) {
        // Left as it is: removing it would work through the live overlay.
        let _ = probe.keep();
        return Err(e);
    }
    match seen {
        Ok(bytes) if bytes == b"lower" => Ok(()),
        Ok(_) => Err(io::Error::other(
            "the overlay showed other bytes than its lower layer's",
        )),
        Err(e) => Err(e),
    }
}

/// What [`lend`] made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lent {
    /// Overlays mounted.
    pub overlays: u64,
    /// Files and directories linked or copied.
    pub files: u64,
    pub dirs: u64,
}

/// A workspace's view of a kept environment, until taken back ([`Loan::take_back`]) or dropped:
/// either way, every overlay it mounted is unmounted first, then the mount points, the lent
/// copies and the layers are removed.
#[must_use = "a loan is taken back when dropped"]
#[derive(Debug, Default)]
pub struct Loan {
    /// How it was lent: [`Lending::Overlay`] only when every directory is an overlay.
    how: Option<Lending>,
    lent: Lent,
    /// Mount points, in the order mounted.
    mounted: Vec<PathBuf>,
    /// What the loan made in the workspace (mount points, lent copies), in the order made.
    made: Vec<PathBuf>,
    /// The upper and work directories (`<workspace>.lent`).
    layers: Option<PathBuf>,
}

impl Loan {
    /// A loan of nothing.
    pub fn none() -> Loan {
        Loan::default()
    }

    /// How the environment was lent (`None`: nothing was).
    pub fn how(&self) -> Option<Lending> {
        self.how
    }

    pub fn lent(&self) -> Lent {
        self.lent
    }

    /// Where the overlays are mounted.
    pub fn mounted(&self) -> &[PathBuf] {
        &self.mounted
    }

    /// Takes the environment back: unmounts every overlay, then removes what the loan made.
    pub fn take_back(mut self) -> io::Result<()> {
        self.end()
    }

    fn end(&mut self) -> io::Result<()> {
        let mut unmounted = Ok(());
        for point in self.mounted.drain(..).rev() {
            if let Err(e) = mounts::unmount(&point) {
                unmounted = Err(e);
            }
        }
        // A mount that could not be unmounted keeps everything where it is: removing a layer
        // under a live overlay would work through it. The bot's next start unmounts it.
        unmounted?;
        let mut result = Ok(());
        for path in self.made.drain(..).rev() {
            if let Err(e) = crate::git::remove_tree(&path) {
                result = Err(e);
            }
        }
        if let Some(layers) = self.layers.take()
            && let Err(e) = crate::git::remove_tree(&layers)
        {
            result = Err(e);
        }
        result
    }
}

impl Drop for Loan {
    fn drop(&mut self) {
        if let Err(e) = self.end() {
            tracing::warn!(error = %e, "taking a lent environment back");
        }
    }
}

/// Gives `workspace` its own view of `kept`'s directories, at their paths, lent `how`. A path
/// the workspace already has (the base tracks a `node_modules`) is left as it is.
pub fn lend(kept: &Kept, workspace: &Path, how: Lending) -> io::Result<Loan> {
    lend_with(kept, workspace, how, &mounts::mount_overlay)
}

/// [`lend`], with overlays mounted by `mount`. An overlay that cannot be mounted is not an
/// error: that directory and the rest are lent by [`Lending::fallback`] instead, and the loan
/// says so.
pub fn lend_with(kept: &Kept, workspace: &Path, how: Lending, mount: &Mounter) -> io::Result<Loan> {
    let mut loan = Loan::default();
    loan.how = Some(how);
    let mut how = how;
    let from_root = kept.files();
    for (i, rel) in kept.meta.kept.iter().enumerate() {
        let (from, to) = (from_root.join(rel), workspace.join(rel));
        if std::fs::symlink_metadata(&to).is_ok() {
            continue;
        }
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        if how == Lending::Overlay {
            let layers = match &loan.layers {
                Some(layers) => layers.clone(),
                None => {
                    let layers = crate::sandbox::lent_layers(workspace);
                    crate::git::remove_tree(&layers)?;
                    std::fs::create_dir(&layers)?;
                    loan.layers = Some(layers.clone());
                    layers
                }
            };
            match mount_one(&from, &to, &layers.join(i.to_string()), mount) {
                Ok(()) => {
                    loan.made.push(to.clone());
                    loan.mounted.push(to);
                    loan.lent.overlays += 1;
                    continue;
                }
                Err(e) => {
                    how = Lending::fallback();
                    loan.how = Some(how);
                    tracing::warn!(error = %e, "an overlay could not be mounted: the environment is lent as {}", how.describe());
                }
            }
        }
        // Recorded before it is made, so a copy broken off is removed with the loan.
        loan.made.push(to.clone());
        copy_tree(&from, &to, how, &mut loan.lent)?;
    }
    Ok(loan)
}

/// Mounts an overlay of `lower` at `merged` (made here, empty), its layers fresh under
/// `layers`. On failure nothing it made is left.
fn mount_one(lower: &Path, merged: &Path, layers: &Path, mount: &Mounter) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let overlay = Overlay {
        lower: lower.to_path_buf(),
        upper: layers.join("upper"),
        work: layers.join("work"),
        merged: merged.to_path_buf(),
    };
    let meta = std::fs::symlink_metadata(lower)?;
    let made = (|| {
        std::fs::create_dir(layers)?;
        std::fs::create_dir(&overlay.upper)?;
        std::fs::create_dir(&overlay.work)?;
        // The merged directory itself shows the upper layer's owner and mode: the lower's.
        std::os::unix::fs::lchown(&overlay.upper, Some(meta.uid()), Some(meta.gid()))?;
        let mode = std::fs::Permissions::from_mode(meta.mode() & 0o7777);
        std::fs::set_permissions(&overlay.upper, mode)?;
        std::fs::create_dir(merged)?;
        mount(&overlay)
    })();
    if made.is_err() {
        let _ = std::fs::remove_dir(merged);
        let _ = crate::git::remove_tree(layers);
    }
    made
}

/// A copy of the directory `from` at `to` (which must not exist), reflinked where the
/// filesystem can: the setup's own copy of a checkout.
pub fn copy_dir(from: &Path, to: &Path) -> io::Result<()> {
    copy_tree(from, to, Lending::Copy, &mut Lent::default())
}

/// Copies the directory `from` to `to` (which must not exist): directories made anew with
/// their modes, symlinks recreated (never followed), files linked or copied.
fn copy_tree(from: &Path, to: &Path, how: Lending, lent: &mut Lent) -> io::Result<()> {
    let link = how == Lending::Link;
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
                if link {
                    std::fs::hard_link(&s, &d)?;
                } else {
                    copy_file(&s, &d)?;
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
    use crate::environment::kept::{Meta, Store};

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

    /// A kept environment of a `.venv` (a script, a symlink, a module) and a nested
    /// `web/node_modules`.
    fn kept(dir: &Path) -> Kept {
        let store = Store::at(dir.join("envs"));
        let building = store.building("k1").expect("building");
        let ws = building.join("workspace");
        std::fs::create_dir_all(ws.join(".venv/bin")).expect("mkdir");
        std::fs::write(ws.join(".venv/bin/tool"), "#!/bin/sh\n").expect("write");
        std::os::unix::fs::symlink("/usr/bin/python3", ws.join(".venv/bin/python"))
            .expect("symlink");
        std::fs::create_dir_all(ws.join(".venv/lib/fwdep")).expect("mkdir");
        std::fs::write(ws.join(".venv/lib/fwdep/__init__.py"), "x = 2\n").expect("write");
        std::fs::create_dir_all(ws.join("web/node_modules/left-pad")).expect("mkdir");
        std::fs::write(ws.join("web/node_modules/left-pad/index.js"), "x").expect("write");
        let kept = store
            .keep(&building, &ws, meta("k1", &[".venv", "web/node_modules"]))
            .expect("kept");
        assert_eq!(kept.meta.files, 4);
        assert!(store.find("k1").is_some());
        assert!(store.find("k2").is_none());
        kept
    }

    /// Every entry under `root`: its path, kind, mode, owner, times and bytes.
    fn snapshot(root: &Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut dirs = vec![root.to_path_buf()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("a directory") {
                let path = entry.expect("an entry").path();
                let m = std::fs::symlink_metadata(&path).expect("lstat");
                let bytes = if m.is_file() {
                    std::fs::read(&path).expect("read")
                } else if m.is_symlink() {
                    std::fs::read_link(&path)
                        .expect("readlink")
                        .into_os_string()
                        .into_encoded_bytes()
                } else {
                    dirs.push(path.clone());
                    Vec::new()
                };
                out.push(format!(
                    "{} {:o} {}:{} {} {} {:?}",
                    path.strip_prefix(root).expect("below").display(),
                    m.mode(),
                    m.uid(),
                    m.gid(),
                    m.mtime_nsec(),
                    m.ctime_nsec(),
                    bytes
                ));
            }
        }
        out.sort();
        out
    }

    fn mounted_under(dir: &Path) -> Vec<PathBuf> {
        mounts::under(dir).expect("mountinfo")
    }

    #[test]
    fn a_kept_environment_is_lent_as_links_or_copies_and_taken_back() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let kept = kept(dir.path());
        for how in [Lending::Link, Lending::Copy] {
            let target = dir.path().join(format!("job-{how:?}"));
            std::fs::create_dir_all(&target).expect("mkdir");
            let loan = lend(&kept, &target, how).expect("lent");
            assert_eq!(loan.how(), Some(how));
            assert_eq!(loan.lent().files, 4);
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
            loan.take_back().expect("taken back");
            assert!(!target.join(".venv").exists() && !target.join("web/node_modules").exists());
            assert!(target.join("web").is_dir());
        }
        assert_eq!(
            std::fs::read_to_string(kept.files().join(".venv/bin/tool")).expect("read"),
            "#!/bin/sh\n"
        );
    }

    #[test]
    fn a_workspace_path_that_exists_is_not_lent_over() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let kept = kept(dir.path());
        let target = dir.path().join("job");
        std::fs::create_dir_all(target.join("web/node_modules")).expect("mkdir");
        for how in [Lending::Overlay, Lending::Link] {
            let loan = lend(&kept, &target, how).expect("lent");
            assert!(!target.join("web/node_modules/left-pad").exists());
            assert!(target.join(".venv/bin/tool").exists());
            loan.take_back().expect("taken back");
            assert!(target.join("web/node_modules").is_dir(), "left as it was");
        }
    }

    /// Under an overlay, a write, a delete and a chmod in the lent directory land in its
    /// upper layer: the kept directory is byte for byte, mode for mode as it was, and the
    /// next loan sees it so.
    #[test]
    fn under_an_overlay_writes_deletes_and_chmods_leave_the_kept_directory_as_it_was() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("a temporary directory");
        let kept = kept(dir.path());
        assert_eq!(
            Lending::decide(&dir.path().join("envs"), &mounts::mount_overlay),
            Lending::Overlay,
            "this test runs as root, where the bot mounts overlays"
        );
        let before = snapshot(&kept.files());
        let target = dir.path().join("job");
        std::fs::create_dir_all(target.join("web")).expect("mkdir");
        let loan = lend(&kept, &target, Lending::Overlay).expect("lent");
        assert_eq!(loan.how(), Some(Lending::Overlay));
        assert_eq!(loan.lent().overlays, 2);
        assert_eq!(loan.lent().files, 0, "nothing linked or copied");
        assert_eq!(mounted_under(&target).len(), 2);

        let module = target.join(".venv/lib/fwdep/__init__.py");
        std::fs::write(&module, "x = 3\n").expect("a write in place");
        std::fs::remove_file(target.join(".venv/bin/tool")).expect("a delete");
        std::fs::set_permissions(&module, std::fs::Permissions::from_mode(0o600)).expect("a chmod");
        std::fs::write(target.join("web/node_modules/.vite"), "cache").expect("a new file");
        std::fs::remove_dir_all(target.join("web/node_modules/left-pad")).expect("a removal");
        assert_eq!(std::fs::read_to_string(&module).expect("read"), "x = 3\n");
        assert_eq!(
            snapshot(&kept.files()),
            before,
            "the kept directory while lent"
        );

        loan.take_back().expect("taken back");
        assert!(mounted_under(&target).is_empty());
        assert!(!target.join(".venv").exists() && !target.join("web/node_modules").exists());
        assert!(
            !target.with_file_name("job.lent").exists(),
            "the layers are gone"
        );
        assert_eq!(snapshot(&kept.files()), before, "the kept directory after");

        // The next loan gets a fresh upper layer: what the last one wrote is not there.
        let again = lend(&kept, &target, Lending::Overlay).expect("lent again");
        assert_eq!(std::fs::read_to_string(&module).expect("read"), "x = 2\n");
        assert!(target.join(".venv/bin/tool").exists());
        assert!(!target.join("web/node_modules/.vite").exists());
        drop(again);
        assert!(mounted_under(&target).is_empty(), "a dropped loan unmounts");
    }

    #[test]
    fn a_live_overlay_is_never_removed_through() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let kept = kept(dir.path());
        let target = dir.path().join("job");
        std::fs::create_dir_all(&target).expect("mkdir");
        let loan = lend(&kept, &target, Lending::Overlay).expect("lent");
        let err = crate::git::remove_tree(&target).expect_err("refused while mounted");
        assert!(err.to_string().contains("must be unmounted"), "{err}");
        assert!(target.join(".venv/bin/tool").exists(), "nothing removed");
        drop(loan);
        crate::git::remove_tree(&target).expect("removed once unmounted");
        assert!(kept.files().join(".venv/bin/tool").exists());
    }

    /// When the kernel refuses the mount, the probe says so and a loan asked for overlays
    /// lends by the fallback instead, and says which.
    #[test]
    fn a_refused_mount_falls_back_to_links_or_copies() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let kept = kept(dir.path());
        let refuse =
            |_: &Overlay| -> io::Result<()> { Err(io::Error::from_raw_os_error(libc::EPERM)) };
        let decided = Lending::decide(&dir.path().join("envs"), &refuse);
        assert_eq!(decided, Lending::fallback());
        let target = dir.path().join("job");
        std::fs::create_dir_all(&target).expect("mkdir");
        let loan = lend_with(&kept, &target, Lending::Overlay, &refuse).expect("lent");
        assert_eq!(loan.how(), Some(Lending::fallback()));
        assert_eq!(loan.lent().overlays, 0);
        assert_eq!(loan.lent().files, 4);
        assert!(mounted_under(&target).is_empty());
        assert_eq!(
            std::fs::read_to_string(target.join(".venv/lib/fwdep/__init__.py")).expect("read"),
            "x = 2\n"
        );
        loan.take_back().expect("taken back");
        assert!(!target.join(".venv").exists());
    }
}
