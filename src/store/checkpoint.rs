//! SQLite's WAL checkpoints, off the writer's path.
//!
//! A checkpoint copies the WAL back into the database file and fsyncs that file. Left to itself,
//! SQLite runs one inside the commit that grows the WAL past 1,000 pages, so every few hundred
//! deliveries a whole batch of callers waits tens of milliseconds for the copying: that, not the
//! commits, set the p99 latency. Instead the writer signals this task after each commit, and the
//! task checkpoints on a connection of its own, PASSIVE (it blocks neither the writer nor the
//! readers), at most every [`PAUSE`] while writes keep coming. Under a sustained flood part of the
//! copying comes back into the commits (below): the pause trades some p99 for throughput.
//!
//! The pause is a trade: checkpointing again the moment the last one ended copies the pages
//! every commit touches (the indexes, the jobs' rows) once per commit, and keeps the disk busy
//! beside the writer's fsyncs. With the pause, a sustained flood grows the WAL past SQLite's
//! 1,000 pages between two of the task's checkpoints, and the writer's own automatic checkpoint
//! does part of the copying. Measured with `cargo bench --bench serve` at 16 connections:
//! 9,057 acknowledgements a second (p99 4.2 ms) with no pause, 10,832 (p99 6.6 ms) with 50 ms;
//! at 64 connections about the same either way.

use std::time::Duration;

use sqlx::SqlitePool;
use tokio::sync::mpsc;

/// The least time from one checkpoint to the next.
const PAUSE: Duration = Duration::from_millis(50);

/// Runs until the writer (the sender of `commits`) is gone, then checkpoints one last time.
pub(crate) async fn run(pool: SqlitePool, mut commits: mpsc::Receiver<()>) {
    while commits.recv().await.is_some() {
        checkpoint(&pool).await;
        tokio::time::sleep(PAUSE).await;
    }
    checkpoint(&pool).await;
    pool.close().await;
}

async fn checkpoint(pool: &SqlitePool) {
    let done = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
        .execute(pool)
        .await;
    if let Err(err) = done {
        tracing::warn!(error = %err, "WAL checkpoint failed");
    }
}
