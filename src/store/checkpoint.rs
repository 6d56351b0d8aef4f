//! SQLite's WAL checkpoints, off the writer's path.
//!
//! A checkpoint copies the WAL back into the database file and fsyncs that file. Left to itself,
//! SQLite runs one inside the commit that grows the WAL past 1,000 pages, so every few hundred
//! deliveries a whole batch of callers waits tens of milliseconds for the copying: that, not the
//! commits, set the p99 latency. Instead the writer signals this task after each commit, and the
//! task checkpoints on a connection of its own, PASSIVE (it blocks neither the writer nor the
//! readers), again as soon as it is done while writes keep coming. The automatic checkpoint
//! stays where it is, but finds almost everything already copied: it costs about one batch.

use sqlx::SqlitePool;
use tokio::sync::mpsc;

/// Runs until the writer (the sender of `commits`) is gone, then checkpoints one last time.
pub(crate) async fn run(pool: SqlitePool, mut commits: mpsc::Receiver<()>) {
    while commits.recv().await.is_some() {
        checkpoint(&pool).await;
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
