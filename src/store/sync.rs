//! The SQLite writer's commits made durable on a thread of their own.
//!
//! In WAL mode a commit under `synchronous=FULL` is two steps: the transaction's frames written
//! to the WAL, then an fsync of it. Under a flood of deliveries the writer spends about half its
//! time waiting in that fsync, and nothing else moves meanwhile: the next batch, already waiting,
//! is not begun until the disk answers.
//!
//! So the writer commits under `synchronous=NORMAL` (the frames written, not synced) and hands
//! what it would answer to this thread ([`WalSync::then`]), which fsyncs the WAL and only then
//! answers. While the disk works the writer runs the next batch; one fsync covers every batch
//! committed before it began. An `Ok` still means "on disk": no caller hears of a write before a
//! sync that began after its commit.
//!
//! NORMAL leaves out nothing else. SQLite still syncs the WAL's header (and its directory) when it
//! starts the file over, syncs the WAL before a checkpoint copies frames out of it, and syncs the
//! database file before the WAL may start over: the files are never left inconsistent, whatever
//! this thread has or has not done. What NORMAL drops is the commit's own sync, done here.
//!
//! One thing does change: other connections see a commit a moment (one fsync) before it is on
//! disk. Nothing that answers a caller reads it in that moment — the writer answers only through
//! here — and a reader's later decision is made again after a power loss.
//!
//! A failed fsync is final. Linux may have dropped the pages it could not write, so a later
//! successful fsync proves nothing about them, and the transaction is visible although perhaps
//! not on disk: a redelivery would be answered "already recorded". So every caller from then on
//! gets the error, and the writer stops ([`WalSync::failed`]), which `/readyz` reports; a restart,
//! once the disk is looked at, recovers what the WAL holds.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

/// What to do once the commits so far are on disk, or with the error that stopped them.
pub(crate) type Then = Box<dyn FnOnce(Result<(), Arc<io::Error>>) + Send>;

/// The handle of the thread that syncs the WAL.
pub(crate) struct WalSync {
    waiting: mpsc::Sender<Then>,
    failed: Arc<AtomicBool>,
}

impl WalSync {
    /// Starts the thread that syncs `wal`, the WAL of the database the writer commits to.
    pub(crate) fn start(wal: PathBuf) -> io::Result<WalSync> {
        let (waiting, queue) = mpsc::channel::<Then>();
        let failed = Arc::new(AtomicBool::new(false));
        let mut file = WalFile {
            path: wal,
            open: None,
        };
        let failed_flag = failed.clone();
        std::thread::Builder::new()
            .name("forgeward-sqlite-sync".to_owned())
            .spawn(move || {
                let mut failure: Option<Arc<io::Error>> = None;
                // Everything handed over while the last fsync ran is covered by the next one.
                while let Ok(first) = queue.recv() {
                    let batch: Vec<Then> = std::iter::once(first).chain(queue.try_iter()).collect();
                    let synced = match &failure {
                        Some(err) => Err(err.clone()),
                        None => file.sync().map_err(Arc::new),
                    };
                    if let (Err(err), None) = (&synced, &failure) {
                        tracing::error!(
                            wal = %file.path.display(),
                            error = %err,
                            "the store's disk failed to sync the WAL: no write is acknowledged from now on; restart forgeward once the disk is checked"
                        );
                        failure = Some(err.clone());
                        failed_flag.store(true, Ordering::SeqCst);
                    }
                    for then in batch {
                        then(synced.clone());
                    }
                }
            })?;
        Ok(WalSync { waiting, failed })
    }

    /// Runs `then` on the sync thread once everything committed until now is on disk. `then` is
    /// dropped unrun only if that thread is gone (it ends with the writer).
    pub(crate) fn then(&self, then: Then) {
        let _ = self.waiting.send(then);
    }

    /// Whether a sync has failed: the writer must take no more writes.
    pub(crate) fn failed(&self) -> bool {
        self.failed.load(Ordering::SeqCst)
    }
}

/// The WAL file, opened to be synced.
struct WalFile {
    path: PathBuf,
    /// The open file, and the (device, inode) it was opened at.
    open: Option<(std::fs::File, (u64, u64))>,
}

impl WalFile {
    /// fdatasync of the WAL. The file stays the same while the writer's connection is open
    /// (SQLite removes it only when the last connection closes, after copying it into the
    /// database and syncing that); if it was replaced anyway, the one at the path is the one the
    /// commits went to.
    fn sync(&mut self) -> io::Result<()> {
        let meta = std::fs::metadata(&self.path)?;
        let id = (meta.dev(), meta.ino());
        let file = match &self.open {
            Some((file, opened)) if *opened == id => file,
            _ => {
                let file = std::fs::File::open(&self.path)?;
                &self.open.insert((file, id)).0
            }
        };
        file.sync_data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a `Then` was called with, sent back to the test.
    fn reporter(tx: &mpsc::Sender<Result<(), String>>) -> Then {
        let tx = tx.clone();
        Box::new(move |r| {
            let _ = tx.send(r.map_err(|e| e.to_string()));
        })
    }

    #[test]
    fn a_commit_is_answered_after_its_sync_and_in_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let wal = dir.path().join("db-wal");
        std::fs::write(&wal, b"frames").expect("write");
        let sync = WalSync::start(wal).expect("start");
        let (tx, rx) = mpsc::channel();
        for i in 0..50 {
            let tx = tx.clone();
            sync.then(Box::new(move |r| {
                let _ = tx.send((i, r.is_ok()));
            }));
        }
        let answered: Vec<(i32, bool)> = (0..50).map(|_| rx.recv().expect("answer")).collect();
        assert_eq!(answered, (0..50).map(|i| (i, true)).collect::<Vec<_>>());
        assert!(!sync.failed());
    }

    #[test]
    fn a_failed_sync_fails_every_write_after_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        // No WAL where the writer's commits should be: nothing can be promised.
        let sync = WalSync::start(dir.path().join("missing-wal")).expect("start");
        let (tx, rx) = mpsc::channel();
        sync.then(reporter(&tx));
        let first = rx.recv().expect("answer");
        assert!(first.is_err(), "{first:?}");
        assert!(sync.failed());
        // Even once the file is there, the writes after a failure are not acknowledged.
        std::fs::write(dir.path().join("missing-wal"), b"frames").expect("write");
        sync.then(reporter(&tx));
        assert_eq!(rx.recv().expect("answer"), first);
    }

    #[test]
    fn a_wal_made_again_at_the_path_is_the_one_synced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let wal = dir.path().join("db-wal");
        std::fs::write(&wal, b"one").expect("write");
        let mut file = WalFile {
            path: wal.clone(),
            open: None,
        };
        file.sync().expect("first sync");
        let first = file.open.as_ref().map(|(_, id)| *id);
        std::fs::remove_file(&wal).expect("remove");
        std::fs::write(&wal, b"two").expect("write");
        file.sync().expect("second sync");
        let second = file.open.as_ref().map(|(_, id)| *id);
        let meta = std::fs::metadata(&wal).expect("stat");
        assert_eq!(second, Some((meta.dev(), meta.ino())));
        assert_ne!(first, second);
    }
}
