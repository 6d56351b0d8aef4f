//! The host side of the bubblewrap sandbox: the dedicated user id a worker runs as, handing the
//! mounted directories to that user and back, measuring how much disk a worker used, finding and
//! killing what it left running, and the rlimits set on the way in.
//!
//! Everything here runs as the bot, outside the sandbox, on paths the worker may have filled
//! with anything: nothing follows a symlink, and nothing here fails the job over a file the
//! worker made unreadable (such a file is skipped).

use std::collections::HashSet;
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use super::Limits;

/// The first of the host user ids workers run as when the bot is root. systemd reserves
/// 0x70000000–0x7FFFFFFE for no one (container ranges end below it, DynamicUser and subuid
/// ranges sit far lower), so no real account or container owns an id here.
pub const SANDBOX_UID_BASE: u32 = 0x7A5E_0000;

/// How many ids the range holds: far more than workers ever run at once on one host, so that
/// several bot processes picking ids independently rarely meet.
pub const SANDBOX_UID_COUNT: u32 = 0x1_0000;

/// Ids handed out by this process, so that two runs in it never share one.
static NEXT_SLOT: AtomicU32 = AtomicU32::new(0);

/// True when the bot runs as root, and so can run each worker as a dedicated user.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A user id from the sandbox range that no process on the host runs as right now. Each run gets
/// its own, so that `RLIMIT_NPROC` (counted per user id) bounds this worker's processes alone.
pub fn allocate_uid() -> u32 {
    // Spread by process id, so bot processes on one host start at different places.
    let start = std::process::id().wrapping_mul(2_654_435_761);
    let mut uid = SANDBOX_UID_BASE;
    for _ in 0..64 {
        let slot = start.wrapping_add(NEXT_SLOT.fetch_add(1, Ordering::Relaxed));
        uid = SANDBOX_UID_BASE + slot % SANDBOX_UID_COUNT;
        if processes_of(uid).is_empty() {
            break;
        }
    }
    uid
}

/// A private directory of the bot's (mode 0700) in the system's temporary directory, removed
/// when dropped: the probe's mounts and the sandbox's made-up accounts.
pub struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    /// A new directory under the temporary directory, `0700`, its name random: a process
    /// killed before it removed its own (a `SIGKILL`, a power cut) leaves one behind, and a
    /// later process that happens to get the same pid must not trip over it.
    pub fn new(purpose: &str) -> io::Result<Scratch> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::Builder::new()
            .prefix(&format!("forgeward-bwrap-{purpose}-"))
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()?;
        Ok(Scratch { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// The ids of the processes whose real user id is `uid`.
pub fn processes_of(uid: u32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            // The owner of /proc/<pid> is the process's effective uid; its status has the real
            // one, which is what the worker cannot change (it has no capabilities).
            let status = std::fs::read_to_string(entry.path().join("status")).ok()?;
            let real = status
                .lines()
                .find_map(|l| l.strip_prefix("Uid:"))?
                .split_whitespace()
                .next()?
                .parse::<u32>()
                .ok()?;
            (real == uid).then_some(pid)
        })
        .collect()
}

/// Kills every process running as `uid` until none is left (a fork racing the scan is caught by
/// the next pass). Returns false if some were still there after `passes` passes.
pub async fn kill_all_of(uid: u32, passes: u32) -> bool {
    for _ in 0..passes {
        let pids = processes_of(uid);
        if pids.is_empty() {
            return true;
        }
        for pid in pids {
            // SAFETY: kill with a valid signal has no memory effects; a vanished pid is ESRCH.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    processes_of(uid).is_empty()
}

/// Waits until process `pid` is gone (or `tries` × 10 ms have passed).
pub async fn wait_gone(pid: u32, tries: u32) -> bool {
    let path = PathBuf::from(format!("/proc/{pid}"));
    for _ in 0..tries {
        if !path.exists() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    !path.exists()
}

/// The first child of `pid` (bubblewrap's child is the sandbox's init), when the kernel says.
pub fn first_child(pid: u32) -> Option<u32> {
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).ok()?;
    children.split_whitespace().next()?.parse().ok()
}

/// Owner and group of a path, not following a symlink.
pub fn owner(path: &Path) -> io::Result<(u32, u32)> {
    let meta = std::fs::symlink_metadata(path)?;
    Ok((meta.uid(), meta.gid()))
}

/// Which entries [`chown_tree`] changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shared {
    /// Leave files with more than one link alone: handing the sandbox a file hard-linked from
    /// elsewhere (a checkout sharing objects with the bot's mirror) would let the worker write
    /// through the link into the bot's own copy.
    Skip,
    /// Change them too (taking everything back: the worker cannot link across mounts, nor to
    /// a file it does not own).
    Include,
}

/// Gives every entry under `root` (itself included) to `uid:gid`, never following a symlink.
/// The kernel clears set-user-ID and set-group-ID bits on every file it changes, so a worker's
/// `chmod u+s` never becomes a program of the bot's user.
///
/// A directory on another file system than `root` (a prepared environment lent as an
/// overlay) is neither changed nor walked: the kept environment's directories are writable
/// by the sandboxes' group ([`crate::sandbox::ENVIRONMENT_GID`]), which the worker is a member
/// of, so handing over its tens of thousands of entries would only cost a listing of each
/// (twice a run) and a copy-up of every directory into the overlay's upper layer.
pub fn chown_tree(root: &Path, uid: u32, gid: u32, shared: Shared) -> io::Result<()> {
    std::os::unix::fs::lchown(root, Some(uid), Some(gid))?;
    let root_dev = std::fs::symlink_metadata(root)?.dev();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            if meta.dev() != root_dev {
                continue;
            }
            if shared == Shared::Skip && !meta.is_dir() && meta.nlink() > 1 {
                continue;
            }
            std::os::unix::fs::lchown(&path, Some(uid), Some(gid))?;
            if meta.is_dir() {
                dirs.push(path);
            }
        }
    }
    Ok(())
}

/// The bytes `root` takes on disk: allocated blocks of every entry under it, a hard-linked file
/// once, symlinks not followed. Cost grows with the number of files, so callers poll it at an
/// interval proportional to how long it takes.
///
/// A file system mounted inside `root` (a prepared environment lent as an overlay) is not
/// walked: what the worker writes there lands in the overlays' upper layers beside it
/// ([`crate::sandbox::lent_layers`]), which are measured instead.
pub fn disk_usage(root: &Path) -> u64 {
    usage_on_one_fs(root) + usage_on_one_fs(&crate::sandbox::lent_layers(root))
}

fn usage_on_one_fs(root: &Path) -> u64 {
    let Ok(root_meta) = std::fs::symlink_metadata(root) else {
        return 0;
    };
    let mut total = root_meta.blocks() * 512;
    let mut seen: HashSet<(u64, u64)> = HashSet::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                if meta.dev() == root_meta.dev() {
                    total += meta.blocks() * 512;
                    dirs.push(entry.path());
                }
            } else if meta.nlink() < 2 || seen.insert((meta.dev(), meta.ino())) {
                total += meta.blocks() * 512;
            }
        }
    }
    total
}

/// The sandbox's root directory as the host sees it, through `/proc/<init>/root`, once the
/// sandbox is built: until its root is switched, `/proc/<init>/root` is the host's own, and what
/// it has at `/tmp` is the host's `/tmp`. Built means `/workspace` there is the workspace.
pub fn sandbox_root(init: u32, workspace: &Path) -> Option<PathBuf> {
    let root = PathBuf::from(format!("/proc/{init}/root"));
    let inside = std::fs::metadata(root.join("workspace")).ok()?;
    let outside = std::fs::metadata(workspace).ok()?;
    (inside.dev() == outside.dev() && inside.ino() == outside.ino()).then_some(root)
}

/// Bytes used on the tmpfs mounted at `path`; 0 when it cannot be read or is not a tmpfs (a
/// sandbox still being built).
pub fn tmpfs_used(path: &Path) -> u64 {
    let Ok(c_path) = CString::new(path.as_os_str().as_bytes()) else {
        return 0;
    };
    // SAFETY: statfs writes only into the zeroed struct we own; the path is NUL-terminated.
    unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        if libc::statfs(c_path.as_ptr(), &mut st) != 0 || st.f_type != libc::TMPFS_MAGIC {
            return 0;
        }
        (st.f_blocks.saturating_sub(st.f_bfree) as u64).saturating_mul(st.f_bsize as u64)
    }
}

/// Seconds of CPU past [`Limits::cpu`] before the kernel's SIGKILL follows its SIGXCPU: time for
/// a worker that handles SIGXCPU to say so in its log.
const CPU_GRACE_SECS: u64 = 5;

/// The rlimits bubblewrap starts with and every process of the worker inherits.
#[derive(Clone, Copy, Debug)]
pub struct Rlimits {
    address_space: u64,
    processes: u64,
    file_size: u64,
    cpu_secs: u64,
}

impl Rlimits {
    pub fn from_limits(limits: &Limits) -> Rlimits {
        Rlimits {
            address_space: limits.memory_bytes,
            processes: u64::from(limits.pids),
            file_size: limits.file_size_bytes,
            cpu_secs: limits.cpu.as_secs().max(1),
        }
    }

    /// Applies the limits to the calling process. Meant for `pre_exec`: only async-signal-safe
    /// calls, no allocation.
    pub fn apply(&self) -> io::Result<()> {
        let set = |resource, soft: u64, hard: u64| -> io::Result<()> {
            let lim = libc::rlimit {
                rlim_cur: soft as libc::rlim_t,
                rlim_max: hard as libc::rlim_t,
            };
            // SAFETY: setrlimit reads the struct we pass and nothing else.
            if unsafe { libc::setrlimit(resource, &lim) } != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        };
        set(libc::RLIMIT_AS, self.address_space, self.address_space)?;
        set(libc::RLIMIT_NPROC, self.processes, self.processes)?;
        set(libc::RLIMIT_FSIZE, self.file_size, self.file_size)?;
        set(
            libc::RLIMIT_CPU,
            self.cpu_secs,
            self.cpu_secs + CPU_GRACE_SECS,
        )?;
        // A core dump would land in /workspace, past the disk bound, holding the worker's memory
        // (and whatever secrets it had).
        set(libc::RLIMIT_CORE, 0, 0)?;
        Ok(())
    }
}

/// In a child between fork and exec: makes `fd` available as `target` across the exec
/// (without close-on-exec), whatever `target` was.
pub(super) fn inherit_as(fd: i32, target: i32) -> std::io::Result<()> {
    // SAFETY: dup2 and fcntl on descriptors; both are async-signal-safe.
    let ok = unsafe {
        if fd == target {
            libc::fcntl(target, libc::F_SETFD, 0) != -1
        } else {
            libc::dup2(fd, target) != -1
        }
    };
    if ok {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The protected files' mounts, made by the bot (root) in a mount namespace of its own between
/// fork and exec of bubblewrap: each directory above a protected file bound onto itself, then
/// each file bound onto itself and made read-only. The namespace dies with bubblewrap, so
/// nothing is left mounted on the host, whatever happens to the bot.
pub(super) struct Premount {
    dirs: Vec<CString>,
    files: Vec<CString>,
}

impl Premount {
    pub fn new(workspace: &Path, protection: &super::Protection) -> std::io::Result<Premount> {
        let c = |p: &Path| {
            CString::new(workspace.join(p).as_os_str().as_bytes())
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
        };
        Ok(Premount {
            dirs: protection
                .dirs
                .iter()
                .map(|d| c(d))
                .collect::<Result<_, _>>()?,
            files: protection
                .files
                .iter()
                .map(|f| c(f))
                .collect::<Result<_, _>>()?,
        })
    }

    /// In the child, before exec: a private mount namespace, then the mounts.
    pub fn apply(&self) -> std::io::Result<()> {
        let check = |r: libc::c_int| {
            if r == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        };
        let none = c"none".as_ptr();
        let (no_type, no_data) = (std::ptr::null(), std::ptr::null());
        // SAFETY: system calls on NUL-terminated strings that outlive the calls.
        unsafe {
            check(libc::unshare(libc::CLONE_NEWNS))?;
            // Nothing mounted here propagates back to the host.
            check(libc::mount(
                none,
                c"/".as_ptr(),
                no_type,
                libc::MS_REC | libc::MS_PRIVATE,
                no_data,
            ))?;
            for dir in &self.dirs {
                check(libc::mount(
                    dir.as_ptr(),
                    dir.as_ptr(),
                    no_type,
                    libc::MS_BIND,
                    no_data,
                ))?;
            }
            for file in &self.files {
                check(libc::mount(
                    file.as_ptr(),
                    file.as_ptr(),
                    no_type,
                    libc::MS_BIND,
                    no_data,
                ))?;
                check(libc::mount(
                    none,
                    file.as_ptr(),
                    no_type,
                    libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY,
                    no_data,
                ))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_scratch_directory_is_its_own_private_one_and_goes_when_dropped() {
        use std::os::unix::fs::PermissionsExt;
        let (a, b) = (
            Scratch::new("test").expect("a"),
            Scratch::new("test").expect("b"),
        );
        assert_ne!(a.path(), b.path());
        for scratch in [&a, &b] {
            let mode = std::fs::metadata(scratch.path())
                .expect("made")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o700, "{}", scratch.path().display());
            let name = scratch
                .path()
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("");
            assert!(name.starts_with("forgeward-bwrap-test-"), "{name}");
        }
        let gone = a.path().to_path_buf();
        std::fs::write(gone.join("passwd"), "x").expect("a file in it");
        drop(a);
        assert!(!gone.exists());
    }
}
