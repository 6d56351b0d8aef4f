//! The kernel's mounts, as far as the bot makes and removes its own: an overlay mounted over a
//! directory (a prepared environment lent to a sandbox), the mounts found under a directory
//! (`/proc/self/mountinfo`), and unmounting them.
//!
//! This module knows nothing of environments, jobs or git; it is below everything that removes
//! a directory, so that no removal ever walks through a live mount: a `rm -rf` through an
//! overlay's merged directory would work through its layers, and a removal that crossed into
//! any other mount would delete what is not the bot's to delete.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// The directories of one overlay: `lower` read-only beneath, `upper` taking every write,
/// `work` the kernel's scratch space (empty, on `upper`'s file system), seen merged at `merged`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overlay {
    pub lower: PathBuf,
    pub upper: PathBuf,
    pub work: PathBuf,
    pub merged: PathBuf,
}

/// Mounts `overlay` (no set-user-ID programs, no devices), volatile: its upper layer is
/// thrown away when it is unmounted, so the overlay never syncs it, and unmounting it does not
/// flush every other write waiting on the upper layer's file system (which, on a busy host,
/// took up to a second an unmount). The directories must exist; a path holding a character
/// the mount's options cannot carry (`,` `:` `\` or a newline) is refused before the kernel
/// is asked.
pub fn mount_overlay(overlay: &Overlay) -> io::Result<()> {
    let option = |name: &str, path: &Path| -> io::Result<String> {
        let bytes = path.as_os_str().as_bytes();
        match std::str::from_utf8(bytes) {
            Ok(text) if !text.contains([',', ':', '\\', '\n']) => Ok(format!("{name}={text}")),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} cannot be an overlay's {name}: its name is not UTF-8 or has `,` `:` `\\` or a newline",
                    path.display()
                ),
            )),
        }
    };
    let data = [
        option("lowerdir", &overlay.lower)?,
        option("upperdir", &overlay.upper)?,
        option("workdir", &overlay.work)?,
        "volatile".to_owned(),
    ]
    .join(",");
    let data = c_string(data.into_bytes())?;
    let target = c_path(&overlay.merged)?;
    let overlay_name = c"overlay";
    // SAFETY: every pointer is a NUL-terminated string alive for the call's length.
    let result = unsafe {
        libc::mount(
            overlay_name.as_ptr(),
            target.as_ptr(),
            overlay_name.as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            data.as_ptr().cast(),
        )
    };
    if result == 0 {
        Ok(())
    } else {
        let err = io::Error::last_os_error();
        Err(io::Error::new(
            err.kind(),
            format!(
                "mounting an overlay of {} at {}: {err}",
                overlay.lower.display(),
                overlay.merged.display()
            ),
        ))
    }
}

/// Unmounts the mount at `path` (never following a symlink there). A mount still busy is
/// detached instead: it is gone from every path at once, and the kernel frees it when its last
/// user lets go. Nothing mounted there is not an error.
pub fn unmount(path: &Path) -> io::Result<()> {
    let target = c_path(path)?;
    // SAFETY: `target` is a NUL-terminated path alive for the call's length.
    if unsafe { libc::umount2(target.as_ptr(), libc::UMOUNT_NOFOLLOW) } == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        // Not a mount point (any more), or not there at all.
        Some(libc::EINVAL) | Some(libc::ENOENT) => Ok(()),
        Some(libc::EBUSY) => {
            // SAFETY: as above.
            let detached =
                unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH | libc::UMOUNT_NOFOLLOW) };
            if detached == 0 {
                Ok(())
            } else {
                Err(unmount_error(path, io::Error::last_os_error()))
            }
        }
        _ => Err(unmount_error(path, err)),
    }
}

fn unmount_error(path: &Path, err: io::Error) -> io::Error {
    io::Error::new(err.kind(), format!("unmounting {}: {err}", path.display()))
}

/// One line of `/proc/self/mountinfo`: where it is mounted, its type and its options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    pub point: PathBuf,
    pub fstype: String,
    /// The file system's own options (an overlay's `lowerdir=…,upperdir=…`), unescaped.
    pub options: String,
}

impl Mount {
    /// An overlay's lower directories (empty for any other mount).
    pub fn lower_dirs(&self) -> Vec<PathBuf> {
        if self.fstype != "overlay" {
            return Vec::new();
        }
        self.options
            .split(',')
            .filter_map(|o| o.strip_prefix("lowerdir="))
            .flat_map(|dirs| dirs.split(':'))
            .map(PathBuf::from)
            .collect()
    }
}

/// Every mount of this process's mount namespace.
pub fn all() -> io::Result<Vec<Mount>> {
    let text = std::fs::read("/proc/self/mountinfo")?;
    Ok(parse(&text))
}

/// `/proc/self/mountinfo`'s lines: `id parent major:minor root point options [tags] - type
/// source super-options`, each path with `\ooo` octal escapes.
fn parse(text: &[u8]) -> Vec<Mount> {
    let mut mounts = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
        let Some(dash) = fields.iter().position(|f| *f == b"-") else {
            continue;
        };
        let (Some(point), Some(fstype)) = (fields.get(4), fields.get(dash + 1)) else {
            continue;
        };
        let options = fields.get(dash + 3).copied().unwrap_or_default();
        mounts.push(Mount {
            point: PathBuf::from(std::ffi::OsString::from_vec(unescape(point))),
            fstype: String::from_utf8_lossy(&unescape(fstype)).into_owned(),
            options: String::from_utf8_lossy(&unescape(options)).into_owned(),
        });
    }
    mounts
}

/// `\040` → a space, and so on: how the kernel writes the characters a field cannot hold.
fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let octal = field
            .get(i + 1..i + 4)
            .filter(|d| field[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                out.push((d[0] - b'0') << 6 | (d[1] - b'0') << 3 | (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(field[i]);
                i += 1;
            }
        }
    }
    out
}

/// The mount points at or below `dir`, deepest first (the order to unmount them in). A `dir`
/// that does not exist has none.
pub fn under(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let Ok(dir) = std::fs::canonicalize(dir) else {
        return Ok(Vec::new());
    };
    let mut points: Vec<PathBuf> = all()?
        .into_iter()
        .map(|m| m.point)
        .filter(|p| p.starts_with(&dir))
        .collect();
    points.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    points.dedup();
    Ok(points)
}

/// Unmounts everything mounted at or below `dir`, deepest first (what a bot that crashed
/// mid-run left); returns how many were unmounted.
pub fn unmount_under(dir: &Path) -> io::Result<usize> {
    let points = under(dir)?;
    for point in &points {
        unmount(point)?;
    }
    Ok(points.len())
}

/// An error when anything is mounted at or below `dir`: called before removing it.
pub fn none_under(dir: &Path) -> io::Result<()> {
    match under(dir)?.first() {
        None => Ok(()),
        Some(point) => Err(io::Error::new(
            io::ErrorKind::ResourceBusy,
            format!(
                "{} is mounted inside {}: it must be unmounted before the directory is removed",
                point.display(),
                dir.display()
            ),
        )),
    }
}

fn c_path(path: &Path) -> io::Result<CString> {
    c_string(path.as_os_str().as_bytes().to_vec())
}

fn c_string(bytes: Vec<u8>) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in a path"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_are_read_with_their_escapes() {
        let text = b"22 1 0:21 / /proc rw,nosuid - proc proc rw\n\
            90 29 0:52 / /data/jobs/1/work\\040space/.venv rw,nosuid,nodev,relatime shared:5 - overlay overlay rw,lowerdir=/data/environments/k/files/.venv,upperdir=/data/u,workdir=/data/w\n";
        let mounts = parse(text);
        assert_eq!(mounts.len(), 2);
        assert_eq!(mounts[1].point, Path::new("/data/jobs/1/work space/.venv"));
        assert_eq!(mounts[1].fstype, "overlay");
        assert_eq!(
            mounts[1].lower_dirs(),
            vec![PathBuf::from("/data/environments/k/files/.venv")]
        );
        assert!(mounts[0].lower_dirs().is_empty());
    }

    #[test]
    fn an_overlay_path_the_options_cannot_carry_is_refused_before_the_kernel() {
        let overlay = Overlay {
            lower: PathBuf::from("/a,b"),
            upper: PathBuf::from("/u"),
            work: PathBuf::from("/w"),
            merged: PathBuf::from("/m"),
        };
        let err = mount_overlay(&overlay).expect_err("refused");
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
    }

    #[test]
    fn nothing_is_mounted_under_a_fresh_directory() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        assert!(under(dir.path()).expect("mountinfo").is_empty());
        none_under(dir.path()).expect("nothing mounted");
        assert!(
            under(&dir.path().join("missing"))
                .expect("mountinfo")
                .is_empty()
        );
        unmount(dir.path()).expect("not a mount point: nothing to do");
    }
}
