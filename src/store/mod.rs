//! The durable store: webhook deliveries as received, and the job queue they feed.
//!
//! A delivery and the job it produces are written in one transaction before the forge gets its
//! 2xx, and a redelivery (same forge, same delivery id) is acknowledged without creating anything.
//! Jobs are claimed with a lease that the runner renews while it works; a lease that runs out puts
//! the job back in the queue (or makes it `dead` on its last attempt). Jobs of one target (an issue
//! or pull request) run one at a time, first in first out.
//!
//! Two backends, one set of statements: SQLite (a file, WAL, the default) and PostgreSQL (many
//! `serve`/`worker` processes). Their migrations are embedded and applied by [`Store::open`].
//! Every write goes through one group-commit writer per process (`writer`): it batches
//! whatever is waiting into one transaction and one fsync, and answers each caller only after
//! the commit, so an `Ok` always means durable. On SQLite the writer is a thread of its own with
//! its own connection (rusqlite): a batch's statements run in place, where sqlx would hand each
//! one (and each row it returns) to its worker thread and back; reads, migrations and the
//! checkpoints stay on sqlx. A second task keeps WAL checkpoints out of the commits
//! (`checkpoint`).
//!
//! `inspect` looks at a store without opening it this way (no file created, nothing migrated),
//! for `forgeward doctor`.
//!
//! The store knows nothing of what a job does (that is `jobs`) nor of HTTP (that is `server`).

mod body;
mod checkpoint;
mod conn;
pub mod inspect;
mod job;
mod queries;
mod record;
mod runs;
mod writer;

#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use sqlx::migrate::Migrator;
use sqlx::pool::PoolConnection;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{PgPool, Postgres, Sqlite, SqlitePool};
use tokio::sync::{Notify, mpsc, oneshot};

pub use job::{
    DEFAULT_BACKOFF_BASE, Job, JobId, JobState, MAX_BACKOFF, Outcome, Queue, backoff_delay, now_ms,
};

pub use runs::{JobFilter, Listed, MAX_LISTED, MAX_RUN_FLAGS, PhaseEntry, Run, RunEvent, RunFlag};

use crate::forge::event::{Event, Forge};
use conn::Conn;
use job::millis;
use record::{DeliveryRow, NewJob};
#[cfg(test)]
use writer::WritePool;
use writer::{Answer, Op, Request, WriteConn, Writer};

static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("src/store/migrations/sqlite");
static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("src/store/migrations/postgres");

/// How long a SQLite connection waits for another process's write lock before giving up: longer
/// than any batch takes, shorter than a forge's webhook timeout (10 s on GitHub).
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a delivery waits for its commit before it is refused as busy: well within a
/// forge's own timeout (GitHub gives up after 10 s).
pub const RECORD_WAIT: Duration = Duration::from_secs(5);

/// Writes that may wait for the writer unless the configuration says otherwise.
pub const DEFAULT_QUEUE: usize = writer::QUEUE_CAPACITY;

/// How long [`Store::ready`] says not ready after a write was refused as busy.
const SHED_NOT_READY: Duration = Duration::from_secs(2);

/// SQLite readers (WAL lets them read while the writer writes): the dashboard, /metrics and
/// /readyz need few.
const SQLITE_READERS: u32 = 4;

/// PostgreSQL connections per process: one for the writer, the rest for reads.
const POSTGRES_CONNECTIONS: u32 = 8;

/// How long a caller waits for a PostgreSQL connection before the request fails.
const POSTGRES_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// A delivery as the forge sent it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewDelivery {
    pub forge: Forge,
    /// The forge's delivery id (`X-GitHub-Delivery`, GitLab's `Idempotency-Key` or
    /// `X-Gitlab-Event-UUID`, `X-Forgejo-Delivery`).
    pub id: String,
    /// The forge's event name (`X-GitHub-Event`, `X-Gitlab-Event`, `X-Forgejo-Event`).
    pub event: String,
    /// The headers that matter, as a JSON object.
    pub headers: serde_json::Value,
    pub body: Vec<u8>,
    pub received_at_ms: i64,
}

/// What [`Store::record`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// The delivery is stored, with the job it produced if any.
    New { job: Option<JobId> },
    /// The forge sent this delivery before: nothing new was stored.
    Duplicate,
}

/// Why the store could not do what it was asked. `Display` is one line and never shows a password.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error("unsupported store URL '{url}': {reason}")]
    Url { url: String, reason: &'static str },
    #[error("cannot create {}, the SQLite database's directory: {error}", path.display())]
    CreateDir {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("cannot open the store at {url}: {message}")]
    Open { url: String, message: String },
    #[error("cannot migrate the store at {url}: {message}")]
    Migrate { url: String, message: String },
    #[error("the store is not migrated: version {applied} applied, {expected} expected")]
    NotMigrated { applied: i64, expected: i64 },
    #[error("store: {}", one_line(&.0.to_string()))]
    Database(Arc<sqlx::Error>),
    #[error("the store's writer has stopped")]
    WriterStopped,
    /// Too many writes are waiting for the writer, or the commit did not come within
    /// [`RECORD_WAIT`]: the caller should ask its client to come back.
    #[error("the store is busy: its writer cannot keep up")]
    Busy,
    /// A write was refused as [`StoreError::Busy`] a moment ago ([`Store::ready`]).
    #[error("shedding load: the store's writer could not keep up a moment ago")]
    Shedding,
    #[error("job {job} is no longer held by {owner}")]
    LeaseLost { job: JobId, owner: String },
    #[error("{what} in the store is unreadable: {reason}")]
    Corrupt { what: String, reason: String },
    #[error("cannot store the event as JSON: {0}")]
    Encode(String),
    /// A bug: the writer answered an operation with another's result.
    #[error("internal error in the store: {0}")]
    Internal(&'static str),
}

impl StoreError {
    pub(crate) fn database(err: sqlx::Error) -> StoreError {
        StoreError::Database(Arc::new(err))
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(err: sqlx::Error) -> StoreError {
        StoreError::database(err)
    }
}

/// The store: cheap to clone, every clone shares one writer and one set of connections.
///
/// A handle also carries the backoff base that [`Store::complete`] uses; see
/// [`Store::with_backoff_base`].
#[derive(Clone)]
pub struct Store {
    shared: Arc<Shared>,
    backoff_base: Duration,
}

struct Shared {
    /// The URL, password redacted.
    url: String,
    reads: ReadPool,
    /// For tests that write around the store (sqlx, beside the writer).
    #[cfg(test)]
    writes: WritePool,
    writer: mpsc::Sender<Request>,
    wake: Arc<Notify>,
    /// The newest embedded migration: what `ready` expects applied.
    migration: i64,
    /// When a write was last refused as busy: `ready` says not ready for a moment after.
    shed_at: std::sync::Mutex<Option<Instant>>,
}

enum ReadPool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

enum ReadConn {
    Sqlite(PoolConnection<Sqlite>),
    Postgres(PoolConnection<Postgres>),
}

impl ReadConn {
    fn conn(&mut self) -> &mut dyn Conn {
        match self {
            ReadConn::Sqlite(conn) => &mut **conn,
            ReadConn::Postgres(conn) => &mut **conn,
        }
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("url", &self.shared.url)
            .field("backoff_base", &self.backoff_base)
            .finish_non_exhaustive()
    }
}

/// The missed-delivery sweep asks whether GitHub's delivery was kept.
#[async_trait::async_trait]
impl crate::forge::github::deliveries::Received for Store {
    async fn received(&self, guid: &str) -> Result<bool, String> {
        self.delivery_exists(Forge::GitHub, guid)
            .await
            .map_err(|e| e.to_string())
    }
}

impl Store {
    /// Opens (creating the SQLite file and its directory if needed) and migrates. `url`:
    /// "sqlite://path/to/forgeward.db" (relative to the working directory; `sqlite:///abs/path`
    /// for an absolute one) or "postgres://…".
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        Store::open_with_queue(url, writer::QUEUE_CAPACITY).await
    }

    /// [`Store::open`], with room for `queue` writes waiting for the writer: a delivery that
    /// finds it full is refused at once ([`StoreError::Busy`]) rather than waiting.
    pub async fn open_with_queue(url: &str, queue: usize) -> Result<Store, StoreError> {
        let shown = redact_url(url);
        let (opened, checkpoints) = if url.starts_with("sqlite:") {
            let (opened, checkpoints) = open_sqlite(url, &shown).await?;
            (opened, Some(checkpoints))
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            (open_postgres(url, &shown).await?, None)
        } else {
            return Err(StoreError::Url {
                url: shown,
                reason: "expected sqlite://… or postgres://…",
            });
        };
        let Opened {
            reads,
            #[cfg(test)]
            writes,
            writer,
            migration,
        } = opened;
        let committed = checkpoints.map(|pool| {
            let (committed, commits) = mpsc::channel(1);
            tokio::spawn(checkpoint::run(pool, commits));
            committed
        });
        let wake = Arc::new(Notify::new());
        let (sender, receiver) = mpsc::channel(queue.max(1));
        let writer = Writer {
            conn: writer,
            committed,
            wake: wake.clone(),
        };
        match writer.conn {
            // SQLite's statements run in place on a thread of the writer's own.
            WriteConn::Sqlite(_) => {
                let cannot_start = |err: std::io::Error| StoreError::Open {
                    url: shown.clone(),
                    message: format!("cannot start the writer's thread: {err}"),
                };
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .map_err(cannot_start)?;
                std::thread::Builder::new()
                    .name("forgeward-sqlite-writer".to_owned())
                    .spawn(move || runtime.block_on(writer.run(receiver)))
                    .map_err(cannot_start)?;
            }
            WriteConn::Postgres(_) => {
                tokio::spawn(writer.run(receiver));
            }
        }
        tracing::info!(url = %shown, "store opened");
        Ok(Store {
            shared: Arc::new(Shared {
                url: shown,
                reads,
                #[cfg(test)]
                writes,
                writer: sender,
                wake,
                migration,
                shed_at: std::sync::Mutex::new(None),
            }),
            backoff_base: DEFAULT_BACKOFF_BASE,
        })
    }

    /// The URL the store was opened with, any password replaced by `***`.
    pub fn url(&self) -> &str {
        &self.shared.url
    }

    /// This handle with another backoff base for [`Store::complete`] (the runner's setting;
    /// tests use milliseconds).
    pub fn with_backoff_base(&self, base: Duration) -> Store {
        Store {
            shared: self.shared.clone(),
            backoff_base: base,
        }
    }

    /// For /readyz: the store answers, its writer runs and has not refused a write as busy in
    /// the last moments, and the migrations are applied.
    pub async fn ready(&self) -> Result<(), StoreError> {
        if self.shared.writer.is_closed() {
            return Err(StoreError::WriterStopped);
        }
        let shed_at = *self
            .shared
            .shed_at
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if shed_at.is_some_and(|at| at.elapsed() < SHED_NOT_READY) {
            return Err(StoreError::Shedding);
        }
        let mut conn = self.reader().await?;
        let applied = queries::latest_migration(conn.conn()).await?;
        if applied < self.shared.migration {
            return Err(StoreError::NotMigrated {
                applied,
                expected: self.shared.migration,
            });
        }
        Ok(())
    }

    /// The delivery and, when `job` is Some, the job for that event — in one transaction
    /// (through the group-commit writer). Which events make a job is not the store's to say
    /// ([`crate::trigger::wants_job`] decides). `max_attempts` for the new job (at least 1).
    pub async fn record(
        &self,
        delivery: NewDelivery,
        job: Option<&Event>,
        max_attempts: u32,
    ) -> Result<Recorded, StoreError> {
        let job = match job {
            Some(event) => Some(NewJob {
                target: event.target(),
                repo: event.repo().map(|repo| repo.name.0.clone()),
                event: serde_json::to_string(event)
                    .map_err(|err| StoreError::Encode(err.to_string()))?,
                queue: Queue::of(event),
                max_attempts: i64::from(max_attempts.max(1)),
            }),
            _ => None,
        };
        let headers = serde_json::to_string(&delivery.headers)
            .map_err(|err| StoreError::Encode(err.to_string()))?;
        let (body, body_encoding) = body::encode(delivery.body);
        let row = DeliveryRow {
            forge: delivery.forge,
            id: delivery.id,
            event: delivery.event,
            headers,
            body,
            body_encoding,
            received_at_ms: delivery.received_at_ms,
            job,
        };
        match self.write_or_shed(Op::Record(row)).await? {
            Answer::Recorded(recorded) => Ok(recorded),
            _ => Err(StoreError::Internal("record")),
        }
    }

    pub async fn delivery_exists(&self, forge: Forge, id: &str) -> Result<bool, StoreError> {
        let mut conn = self.reader().await?;
        Ok(queries::delivery_exists(conn.conn(), forge, id).await?)
    }

    /// The body of a recorded delivery, as the forge sent it; `None` when there is no such
    /// delivery.
    pub async fn delivery_body(
        &self,
        forge: Forge,
        id: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let mut conn = self.reader().await?;
        let Some((encoding, kept)) = queries::delivery_body(conn.conn(), forge, id).await? else {
            return Ok(None);
        };
        body::decode(&encoding, kept, body::MOST).map(Some)
    }

    /// Counts of jobs by state, every state listed (zeros too); the `queued` count is the queue
    /// depth. For /metrics.
    pub async fn job_counts(&self) -> Result<Vec<(JobState, i64)>, StoreError> {
        let mut conn = self.reader().await?;
        queries::job_counts(conn.conn()).await
    }

    pub async fn job(&self, id: JobId) -> Result<Option<Job>, StoreError> {
        let mut conn = self.reader().await?;
        queries::job(conn.conn(), id).await
    }

    /// Every job, oldest first: for tests and a later dashboard.
    pub async fn jobs(&self) -> Result<Vec<Job>, StoreError> {
        let mut conn = self.reader().await?;
        queries::jobs(conn.conn()).await
    }

    /// The jobs of one target ([`Event::target`]), oldest first: what a running job looks at to
    /// see whether someone asked to cancel it.
    pub async fn jobs_for_target(&self, target: &str) -> Result<Vec<Job>, StoreError> {
        let mut conn = self.reader().await?;
        queries::jobs_for_target(conn.conn(), target).await
    }

    /// Records what the run `owner` holds of job `id` just did. False: the lease was lost, and
    /// nothing was written.
    pub async fn record_run(
        &self,
        id: JobId,
        owner: &str,
        event: RunEvent,
    ) -> Result<bool, StoreError> {
        let op = Op::Run {
            id,
            owner: owner.to_owned(),
            event,
        };
        match self.write(op).await? {
            Answer::Held(held) => Ok(held),
            _ => Err(StoreError::Internal("run")),
        }
    }

    /// Every run of job `id`, oldest first, with its phases and flags.
    pub async fn runs(&self, id: JobId) -> Result<Vec<Run>, StoreError> {
        let mut conn = self.reader().await?;
        runs::runs(conn.conn(), id).await
    }

    /// The jobs `filter` picks, newest first.
    pub async fn list_jobs(&self, filter: &JobFilter) -> Result<Vec<Listed>, StoreError> {
        let mut conn = self.reader().await?;
        runs::list(conn.conn(), filter).await
    }

    /// Every repository jobs were made for, with how many, by forge and name.
    pub async fn job_repos(&self) -> Result<Vec<(Forge, String, i64)>, StoreError> {
        let mut conn = self.reader().await?;
        runs::repos(conn.conn()).await
    }

    /// Returns expired leases to the queue, then gives `owner` the next claimable job, held for
    /// `lease`; the claim counts as an attempt.
    pub async fn claim(
        &self,
        owner: &str,
        lease: Duration,
        queue: Queue,
    ) -> Result<Option<Job>, StoreError> {
        let op = Op::Claim {
            owner: owner.to_owned(),
            lease_ms: millis(lease),
            queue,
        };
        match self.write(op).await? {
            Answer::Claimed(row) => row.map(|row| queries::job_from_row(*row)).transpose(),
            _ => Err(StoreError::Internal("claim")),
        }
    }

    /// Extends `owner`'s lease on a running job to `lease` from now. False: the lease was lost.
    pub async fn heartbeat(
        &self,
        id: JobId,
        owner: &str,
        lease: Duration,
    ) -> Result<bool, StoreError> {
        let op = Op::Heartbeat {
            id,
            owner: owner.to_owned(),
            lease_ms: millis(lease),
        };
        self.held(op).await
    }

    /// Records what a running job is doing. False: the lease was lost.
    pub async fn set_phase(&self, id: JobId, owner: &str, phase: &str) -> Result<bool, StoreError> {
        let op = Op::SetPhase {
            id,
            owner: owner.to_owned(),
            phase: phase.to_owned(),
        };
        self.held(op).await
    }

    /// Ends `owner`'s run of a job with `outcome`. `Failed { retry: true }` queues it again after
    /// [`backoff_delay`] unless its attempts are used up (then it is `dead`). Fails with
    /// [`StoreError::LeaseLost`] (changing nothing) when `owner` no longer holds the job.
    pub async fn complete(
        &self,
        id: JobId,
        owner: &str,
        outcome: Outcome,
    ) -> Result<(), StoreError> {
        let op = Op::Complete {
            id,
            owner: owner.to_owned(),
            outcome,
            backoff_base: self.backoff_base,
        };
        self.held_or_lost(op, id, owner).await
    }

    /// Gives back a job `owner` claimed but did not start (on shutdown): queued again, the attempt
    /// not counted.
    pub async fn release(&self, id: JobId, owner: &str) -> Result<(), StoreError> {
        let op = Op::Release {
            id,
            owner: owner.to_owned(),
        };
        self.held_or_lost(op, id, owner).await
    }

    /// Keeps the base's test results (`results`, JSON) under `key` for the next job on the
    /// same base; results older than 30 days are pruned.
    pub async fn put_base_run(
        &self,
        key: &str,
        results: String,
        duration: Duration,
    ) -> Result<(), StoreError> {
        let op = Op::PutBaseRun {
            key: key.to_owned(),
            results,
            duration_ms: millis(duration),
        };
        match self.write(op).await? {
            Answer::Done => Ok(()),
            _ => Err(StoreError::Internal("base run")),
        }
    }

    /// The base's test results kept under `key` (JSON) and how long that run took.
    pub async fn base_run(&self, key: &str) -> Result<Option<(String, Duration)>, StoreError> {
        let mut conn = self.reader().await?;
        let row = queries::base_run(conn.conn(), key).await?;
        Ok(row.map(|(results, ms)| (results, Duration::from_millis(ms.max(0) as u64))))
    }

    /// Resolves when a job may have become claimable in this process (a new job, or one
    /// finished). Runners wait on it between polls; it may wake them for nothing.
    pub(crate) fn work_added(&self) -> tokio::sync::futures::Notified<'_> {
        self.shared.wake.notified()
    }

    async fn held(&self, op: Op) -> Result<bool, StoreError> {
        match self.write(op).await? {
            Answer::Held(held) => Ok(held),
            _ => Err(StoreError::Internal("lease")),
        }
    }

    async fn held_or_lost(&self, op: Op, id: JobId, owner: &str) -> Result<(), StoreError> {
        if self.held(op).await? {
            Ok(())
        } else {
            Err(StoreError::LeaseLost {
                job: id,
                owner: owner.to_owned(),
            })
        }
    }

    /// Hands an operation to the group-commit writer and waits until it is committed.
    async fn write(&self, op: Op) -> Result<Answer, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.shared
            .writer
            .send(Request { op, reply })
            .await
            .map_err(|_| StoreError::WriterStopped)?;
        answer.await.map_err(|_| StoreError::WriterStopped)?
    }

    /// A write for a caller that must answer quickly (a delivery): refused with
    /// [`StoreError::Busy`] when the writer's queue is full or the commit takes longer than
    /// [`RECORD_WAIT`]. A write refused for time may still commit; a redelivery is then a
    /// duplicate, so nothing acknowledged is ever lost and nothing is recorded twice.
    async fn write_or_shed(&self, op: Op) -> Result<Answer, StoreError> {
        let written = self.try_write(op).await;
        if matches!(written, Err(StoreError::Busy)) {
            *self
                .shared
                .shed_at
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
        }
        written
    }

    /// One write through the writer, or why it was refused.
    async fn try_write(&self, op: Op) -> Result<Answer, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.shared
            .writer
            .try_send(Request { op, reply })
            .map_err(|e| match e {
                mpsc::error::TrySendError::Full(_) => StoreError::Busy,
                mpsc::error::TrySendError::Closed(_) => StoreError::WriterStopped,
            })?;
        match tokio::time::timeout(RECORD_WAIT, answer).await {
            Ok(answer) => answer.map_err(|_| StoreError::WriterStopped)?,
            Err(_) => Err(StoreError::Busy),
        }
    }

    async fn reader(&self) -> Result<ReadConn, StoreError> {
        Ok(match &self.shared.reads {
            ReadPool::Sqlite(pool) => ReadConn::Sqlite(pool.acquire().await?),
            ReadPool::Postgres(pool) => ReadConn::Postgres(pool.acquire().await?),
        })
    }
}

/// The pools of an opened, migrated store, and the writer's connection.
struct Opened {
    reads: ReadPool,
    #[cfg(test)]
    writes: WritePool,
    writer: WriteConn,
    /// The newest migration embedded (and so applied).
    migration: i64,
}

/// Opens a SQLite store; with it, the pool its checkpointer uses.
async fn open_sqlite(url: &str, shown: &str) -> Result<(Opened, SqlitePool), StoreError> {
    if url.contains(":memory:") || url.contains("mode=memory") {
        return Err(StoreError::Url {
            url: shown.to_owned(),
            reason: "an in-memory database does not survive a restart; name a file",
        });
    }
    if url.contains("vfs=") {
        return Err(StoreError::Url {
            url: shown.to_owned(),
            reason: "a vfs is not supported: the writer's connection and the others must lock the file alike",
        });
    }
    let open_error = |err: sqlx::Error| StoreError::Open {
        url: shown.to_owned(),
        message: redact(&err.to_string(), url),
    };
    let options = SqliteConnectOptions::from_str(url).map_err(open_error)?;
    if let Some(dir) = options.get_filename().parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir).map_err(|error| StoreError::CreateDir {
            path: dir.to_owned(),
            error,
        })?;
    }
    let write_options = options
        .clone()
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        // In WAL mode, synchronous=NORMAL syncs only at checkpoints: a power loss can undo
        // transactions that had committed — deliveries the forge was already told we have, which
        // it will not send again. FULL syncs the WAL at every commit, so an acknowledged delivery
        // survives; group commit pays that fsync once per batch, not once per delivery.
        .synchronous(SqliteSynchronous::Full)
        .busy_timeout(SQLITE_BUSY_TIMEOUT);
    // The checkpointer's own connection (see `checkpoint`), opened on its first checkpoint.
    let checkpoints = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_lazy_with(write_options.clone());
    // The migrations' connection; the writer then has one of its own, which stays open (closing
    // the last connection would checkpoint and drop the WAL each time).
    let writes = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(write_options)
        .await
        .map_err(open_error)?;
    SQLITE_MIGRATIONS
        .run(&writes)
        .await
        .map_err(|err| StoreError::Migrate {
            url: shown.to_owned(),
            message: redact(&err.to_string(), url),
        })?;
    let writer = open_sqlite_writer(options.get_filename()).map_err(|err| StoreError::Open {
        url: shown.to_owned(),
        message: redact(&err.to_string(), url),
    })?;
    // Readers never write: they cannot take the write lock away from the writer.
    let reads = SqlitePoolOptions::new()
        .max_connections(SQLITE_READERS)
        .connect_with(options.read_only(true).busy_timeout(SQLITE_BUSY_TIMEOUT))
        .await
        .map_err(open_error)?;
    let opened = Opened {
        reads: ReadPool::Sqlite(reads),
        #[cfg(test)]
        writes: WritePool::Sqlite(writes),
        writer: WriteConn::Sqlite(Box::new(writer)),
        migration: newest(&SQLITE_MIGRATIONS),
    };
    Ok((opened, checkpoints))
}

/// The writer's own connection to the (migrated) SQLite file at `path`, set as the sqlx
/// connections are: WAL, every commit synced (FULL), foreign keys enforced, the same busy
/// timeout.
fn open_sqlite_writer(path: &std::path::Path) -> rusqlite::Result<rusqlite::Connection> {
    use rusqlite::OpenFlags;
    let conn = rusqlite::Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(SQLITE_BUSY_TIMEOUT)?;
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;",
    )?;
    // Every statement shape the writer runs (the multi-row inserts come in a few sizes).
    conn.set_prepared_statement_cache_capacity(64);
    Ok(conn)
}

async fn open_postgres(url: &str, shown: &str) -> Result<Opened, StoreError> {
    let open_error = |err: sqlx::Error| StoreError::Open {
        url: shown.to_owned(),
        message: redact(&err.to_string(), url),
    };
    let options = PgConnectOptions::from_str(url).map_err(open_error)?;
    let pool = PgPoolOptions::new()
        .max_connections(POSTGRES_CONNECTIONS)
        .acquire_timeout(POSTGRES_ACQUIRE_TIMEOUT)
        .connect_with(options)
        .await
        .map_err(open_error)?;
    // sqlx takes an advisory lock: processes starting together migrate once.
    POSTGRES_MIGRATIONS
        .run(&pool)
        .await
        .map_err(|err| StoreError::Migrate {
            url: shown.to_owned(),
            message: redact(&err.to_string(), url),
        })?;
    Ok(Opened {
        reads: ReadPool::Postgres(pool.clone()),
        #[cfg(test)]
        writes: WritePool::Postgres(pool.clone()),
        writer: WriteConn::Postgres(pool),
        migration: newest(&POSTGRES_MIGRATIONS),
    })
}

fn newest(migrator: &Migrator) -> i64 {
    migrator.iter().map(|m| m.version).max().unwrap_or(0)
}

/// `url` with the password of its user part, and of a `password=` parameter, replaced by `***`.
pub(crate) fn redact_url(url: &str) -> String {
    let mut shown = url.to_owned();
    if let Some((scheme, rest)) = url.split_once("://") {
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(authority_end);
        if let Some((userinfo, host)) = authority.rsplit_once('@')
            && let Some((user, _password)) = userinfo.split_once(':')
        {
            shown = format!("{scheme}://{user}:***@{host}{tail}");
        }
    }
    if let Some((base, query)) = shown.split_once('?') {
        let query: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
                _ => pair.to_owned(),
            })
            .collect();
        shown = format!("{base}?{}", query.join("&"));
    }
    shown
}

/// `text` on one line, with every password that `url` carries (as written, and percent-decoded)
/// replaced by `***`.
pub(crate) fn redact(text: &str, url: &str) -> String {
    let mut text = one_line(text);
    for secret in secrets(url) {
        for form in [secret.to_owned(), percent_decode(secret)] {
            if !form.is_empty() {
                text = text.replace(&form, "***");
            }
        }
    }
    text
}

fn secrets(url: &str) -> Vec<&str> {
    let mut found = Vec::new();
    if let Some((_, rest)) = url.split_once("://") {
        let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
        if let Some((userinfo, _)) = authority.rsplit_once('@')
            && let Some((_, password)) = userinfo.split_once(':')
        {
            found.push(password);
        }
    }
    if let Some((_, query)) = url.split_once('?') {
        for pair in query.split('&') {
            if let Some((key, value)) = pair.split_once('=')
                && key.eq_ignore_ascii_case("password")
            {
                found.push(value);
            }
        }
    }
    found
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
