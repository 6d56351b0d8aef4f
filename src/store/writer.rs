//! Group commit: one writer owns the store's writes (on SQLite a thread with its own connection,
//! on PostgreSQL a task).
//!
//! A durable acknowledgement costs an fsync, and a disk does only so many of those a second. So
//! callers do not write: they send their operation down a channel and wait on a oneshot. The
//! writer takes everything that is waiting (up to [`MAX_BATCH`]), runs it in ONE transaction,
//! commits — one fsync for the lot — and only then answers each caller. An `Ok` therefore still
//! means "on disk", while the fsync is shared by every request that arrived during the previous
//! one. Under light load a batch is a single operation and nothing waits for company.
//!
//! If a statement fails, the batch's transaction is rolled back and each operation is retried in
//! a transaction of its own, so one bad operation cannot fail its neighbours. If the commit
//! itself fails, every caller in the batch gets the error (and the forge will redeliver).

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use sqlx::PgPool;
use tokio::sync::{Notify, mpsc, oneshot};

use super::conn::{Conn, JobRow, sqlite_error};
use super::job::{JobId, Outcome, now_ms};
use super::queries;
use super::record::{self, DeliveryRow};
use super::{Recorded, StoreError};

/// The most operations one transaction carries: enough to absorb a burst of thousands of
/// deliveries a second in a few commits, small enough that the first caller in a batch does not
/// wait long for the last.
pub(crate) const MAX_BATCH: usize = 256;

/// How many operations may wait for the writer before callers wait to hand theirs in
/// (back-pressure instead of unbounded memory).
pub(crate) const QUEUE_CAPACITY: usize = 8 * MAX_BATCH;

/// A write the store's callers ask for.
#[derive(Debug)]
pub(crate) enum Op {
    Record(DeliveryRow),
    Claim {
        owner: String,
        lease_ms: i64,
        queue: super::job::Queue,
    },
    Heartbeat {
        id: JobId,
        owner: String,
        lease_ms: i64,
    },
    SetPhase {
        id: JobId,
        owner: String,
        phase: String,
    },
    Complete {
        id: JobId,
        owner: String,
        outcome: Outcome,
        backoff_base: Duration,
    },
    Release {
        id: JobId,
        owner: String,
    },
    /// What a run of a job did, for its page.
    Run {
        id: JobId,
        owner: String,
        event: super::runs::RunEvent,
    },
    /// A base's test results, kept for the next job on the same base.
    PutBaseRun {
        key: String,
        results: String,
        duration_ms: i64,
    },
}

/// What an [`Op`] produced, once committed.
#[derive(Debug)]
pub(crate) enum Answer {
    Recorded(Recorded),
    Claimed(Option<Box<JobRow>>),
    /// Heartbeat, phase, complete, release, a run's record: whether the caller still held the
    /// lease.
    Held(bool),
    /// Written, with nothing to say.
    Done,
}

pub(crate) struct Request {
    pub op: Op,
    pub reply: oneshot::Sender<Result<Answer, StoreError>>,
}

/// A pool that writes around the writer, for tests.
#[cfg(test)]
#[derive(Clone)]
pub(crate) enum WritePool {
    Sqlite(sqlx::SqlitePool),
    Postgres(PgPool),
}

/// The connection the writer writes with.
pub(crate) enum WriteConn {
    /// SQLite: one connection of the writer's own, used on the writer's thread (a batch's
    /// statements run in place, with no hand-off per statement).
    Sqlite(Box<rusqlite::Connection>),
    Postgres(PgPool),
}

pub(crate) struct Writer {
    pub conn: WriteConn,
    /// Told after each commit, when a task checkpoints the WAL (SQLite).
    pub committed: Option<mpsc::Sender<()>>,
    /// Woken after a commit that made a job claimable, so runners in this process do not wait
    /// for their next poll.
    pub wake: Arc<Notify>,
}

/// Why a transaction did not commit.
enum Failure {
    /// No connection or no transaction: retrying each operation alone would fail the same way.
    Begin(sqlx::Error),
    /// A statement failed and the transaction was rolled back: nothing was written.
    Statement(sqlx::Error),
    /// The commit failed.
    Commit(sqlx::Error),
}

impl Writer {
    /// Runs until every sender (every `Store` handle) is gone and the queue is drained.
    pub(crate) async fn run(mut self, mut requests: mpsc::Receiver<Request>) {
        let mut batch = Vec::with_capacity(MAX_BATCH);
        while requests.recv_many(&mut batch, MAX_BATCH).await > 0 {
            let (ops, replies): (Vec<Op>, Vec<_>) =
                batch.drain(..).map(|r| (r.op, r.reply)).unzip();
            self.write(ops, replies).await;
        }
    }

    async fn write(
        &mut self,
        ops: Vec<Op>,
        replies: Vec<oneshot::Sender<Result<Answer, StoreError>>>,
    ) {
        match self.transact(&ops).await {
            Ok(answers) => self.answer(&ops, answers, replies),
            Err(Failure::Statement(err)) if ops.len() > 1 => {
                let batch = ops.len();
                tracing::warn!(error = %err, batch, "a batched write failed; retrying each alone");
                for (op, reply) in ops.into_iter().zip(replies) {
                    let ops = [op];
                    match self.transact(&ops).await {
                        Ok(answers) => self.answer(&ops, answers, vec![reply]),
                        Err(
                            Failure::Begin(err) | Failure::Statement(err) | Failure::Commit(err),
                        ) => {
                            let _ = reply.send(Err(StoreError::database(err)));
                        }
                    }
                }
            }
            Err(Failure::Begin(err) | Failure::Statement(err) | Failure::Commit(err)) => {
                let err = Arc::new(err);
                for reply in replies {
                    let _ = reply.send(Err(StoreError::Database(err.clone())));
                }
            }
        }
    }

    fn answer(
        &self,
        ops: &[Op],
        answers: Vec<Answer>,
        replies: Vec<oneshot::Sender<Result<Answer, StoreError>>>,
    ) {
        if let Some(committed) = &self.committed {
            // Full: a checkpoint is already due.
            let _ = committed.try_send(());
        }
        if ops
            .iter()
            .zip(&answers)
            .any(|(op, answer)| makes_work_claimable(op, answer))
        {
            self.wake.notify_waiters();
        }
        for (reply, answer) in replies.into_iter().zip(answers) {
            // A caller that went away (its request was cancelled) still had its write made.
            let _ = reply.send(Ok(answer));
        }
    }

    async fn transact(&mut self, ops: &[Op]) -> Result<Vec<Answer>, Failure> {
        match &mut self.conn {
            WriteConn::Sqlite(conn) => {
                let conn: &mut rusqlite::Connection = conn;
                if !conn.is_autocommit() {
                    // A transaction a failed ROLLBACK left open would refuse every BEGIN after.
                    if let Err(err) = conn.execute_batch("ROLLBACK") {
                        tracing::error!(error = %err, "the SQLite writer cannot end a transaction");
                    }
                }
                // IMMEDIATE takes the write lock up front: another process writing the same file
                // makes us wait (busy_timeout) instead of failing half-way through the batch.
                conn.execute_batch("BEGIN IMMEDIATE")
                    .map_err(|e| Failure::Begin(sqlite_error(e)))?;
                let done = match at_once(apply_all(conn, ops)) {
                    Ok(answers) => conn
                        .execute_batch("COMMIT")
                        .map(|()| answers)
                        .map_err(|e| Failure::Commit(sqlite_error(e))),
                    Err(e) => Err(Failure::Statement(e)),
                };
                if done.is_err() {
                    // Nothing of the batch stays; a failed COMMIT leaves the transaction open.
                    let _ = conn.execute_batch("ROLLBACK");
                }
                done
            }
            WriteConn::Postgres(pool) => {
                let mut tx = pool.begin().await.map_err(Failure::Begin)?;
                let answers = apply_all(&mut *tx, ops).await.map_err(Failure::Statement)?;
                tx.commit().await.map_err(Failure::Commit)?;
                Ok(answers)
            }
        }
    }
}

/// The output of a future that is ready when first polled (the SQLite writer's statements,
/// which run in place); an error if it is not.
fn at_once<T>(future: impl Future<Output = sqlx::Result<T>>) -> sqlx::Result<T> {
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => Err(sqlx::Error::Protocol(
            "a statement of the SQLite writer waited".to_owned(),
        )),
    }
}

/// Runs the batch's operations in order; consecutive deliveries are recorded together.
async fn apply_all(conn: &mut dyn Conn, ops: &[Op]) -> sqlx::Result<Vec<Answer>> {
    let mut answers = Vec::with_capacity(ops.len());
    let mut rest = ops;
    while let Some(op) = rest.first() {
        let deliveries: Vec<&DeliveryRow> = rest
            .iter()
            .map_while(|op| match op {
                Op::Record(delivery) => Some(delivery),
                _ => None,
            })
            .collect();
        if deliveries.is_empty() {
            answers.push(apply(conn, op).await?);
            rest = &rest[1..];
        } else {
            let recorded = record::record_all(conn, &deliveries, now_ms()).await?;
            answers.extend(recorded.into_iter().map(Answer::Recorded));
            rest = &rest[deliveries.len()..];
        }
    }
    Ok(answers)
}

async fn apply(conn: &mut dyn Conn, op: &Op) -> sqlx::Result<Answer> {
    let now = now_ms();
    Ok(match op {
        Op::Record(delivery) => {
            let recorded = record::record_all(conn, &[delivery], now).await?;
            Answer::Recorded(
                recorded
                    .into_iter()
                    .next()
                    .ok_or(sqlx::Error::RowNotFound)?,
            )
        }
        Op::Claim {
            owner,
            lease_ms,
            queue,
        } => Answer::Claimed(
            queries::claim(conn, owner, *lease_ms, *queue, now)
                .await?
                .map(Box::new),
        ),
        Op::Heartbeat {
            id,
            owner,
            lease_ms,
        } => Answer::Held(queries::heartbeat(conn, *id, owner, *lease_ms, now).await?),
        Op::SetPhase { id, owner, phase } => {
            Answer::Held(queries::set_phase(conn, *id, owner, phase, now).await?)
        }
        Op::Complete {
            id,
            owner,
            outcome,
            backoff_base,
        } => Answer::Held(queries::complete(conn, *id, owner, outcome, *backoff_base, now).await?),
        Op::Release { id, owner } => Answer::Held(queries::release(conn, *id, owner, now).await?),
        Op::Run { id, owner, event } => {
            Answer::Held(super::runs::record(conn, *id, owner, event, now).await?)
        }
        Op::PutBaseRun {
            key,
            results,
            duration_ms,
        } => {
            queries::put_base_run(conn, key, results, *duration_ms, now).await?;
            Answer::Done
        }
    })
}

/// Whether a runner waiting for work should look again: a new job, or a job finished or given
/// back (which may unblock the next job of its target).
fn makes_work_claimable(op: &Op, answer: &Answer) -> bool {
    match (op, answer) {
        (_, Answer::Recorded(Recorded::New { job })) => job.is_some(),
        (Op::Complete { .. } | Op::Release { .. }, Answer::Held(held)) => *held,
        _ => false,
    }
}
