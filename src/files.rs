//! Opening a file that something untrusted wrote (a worker, a test runner): only a regular
//! file, never through a symlink, never blocking on a FIFO swapped in for it.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// `path` opened for reading with its metadata, when it is a regular file; `Ok(None)` when it
/// is something else (a directory, a FIFO, a device). A symlink fails to open (`ELOOP`).
pub(crate) fn open_regular(path: &Path) -> io::Result<Option<(File, Metadata)>> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    Ok(meta.is_file().then_some((file, meta)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_regular_file_is_opened() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let file = dir.path().join("f");
        std::fs::write(&file, "x").expect("write");
        let link = dir.path().join("l");
        std::os::unix::fs::symlink(&file, &link).expect("symlink");
        assert!(open_regular(&file).expect("opens").is_some());
        assert!(open_regular(&link).is_err(), "a symlink is not followed");
        assert!(open_regular(dir.path()).expect("opens").is_none());
        let fifo = dir.path().join("p");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("a path");
        // SAFETY: `name` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        assert!(
            open_regular(&fifo)
                .expect("opens without blocking")
                .is_none()
        );
    }
}
