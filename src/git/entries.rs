//! A tree's entries on disk, for a checkout and its replica: each name checked before it
//! becomes a path component, each blob written as a new file or symlink, and a written tree
//! removed whatever a worker did to its permissions.

use std::ffi::OsStr;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use git2::FileMode;

use super::GitError;
use super::workspace::is_dot_git;

/// Removes `dir` and everything in it without following a symlink, first giving back the
/// permissions a worker may have taken from its own directories. Refuses, removing nothing,
/// while anything is mounted inside it (a prepared environment lent as an overlay): a removal
/// must never walk through a live mount.
pub fn remove_tree(dir: &Path) -> std::io::Result<()> {
    crate::mounts::none_under(dir)?;
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) => {
            restore_permissions(dir);
            std::fs::remove_dir_all(dir)
        }
    }
}

fn restore_permissions(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return;
    };
    if !meta.is_dir() {
        return;
    }
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                restore_permissions(&entry.path());
            }
        }
    }
}

/// Writes a blob as the new entry `path` (which must not exist): a symlink to its bytes for a
/// tree entry of mode `filemode` 120000, else a file, executable for 100755.
pub(super) fn write_blob(path: &Path, filemode: i32, content: &[u8]) -> std::io::Result<()> {
    if filemode == i32::from(FileMode::Link) {
        return std::os::unix::fs::symlink(OsStr::from_bytes(content), path);
    }
    let exec = filemode == i32::from(FileMode::BlobExecutable);
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(if exec { 0o755 } else { 0o644 })
        .open(path)?
        .write_all(content)
}

/// Appends a tree entry's `name` to the path `prefix` (as git spells paths), refusing a name
/// that is not safe as one component; returns where `prefix` ended, to truncate back to.
pub(super) fn enter(prefix: &mut Vec<u8>, name: &[u8]) -> Result<usize, GitError> {
    let start = prefix.len();
    if !prefix.is_empty() {
        prefix.push(b'/');
    }
    prefix.extend_from_slice(name);
    if !is_safe_name(name) {
        return Err(bad_tree(prefix, "a name git itself refuses to check out"));
    }
    Ok(start)
}

/// A name that is safe as one path component of a checkout: git's own rules (no `.`, `..`,
/// `.git` in any case, no `/`), which libgit2 does not apply to trees it reads from a pack.
fn is_safe_name(name: &[u8]) -> bool {
    !name.is_empty() && name != b"." && name != b".." && !name.contains(&b'/') && !is_dot_git(name)
}

pub(super) fn display(path: &[u8]) -> String {
    String::from_utf8_lossy(path).into_owned()
}

pub(super) fn bad_tree(path: &[u8], why: &str) -> GitError {
    GitError::Git {
        context: format!("checking out '{}'", display(path).escape_debug()),
        message: why.to_owned(),
    }
}
