//! The runner: claims jobs from the [`Store`], keeps their leases alive while a [`JobHandler`]
//! works, and records how each run ended.
//!
//! What a job *does* (clone, sandbox, detect, publish) is the handler's business; this module owns
//! only the life around it: at most `concurrency` jobs at once per runner, a heartbeat at a third
//! of the lease, the outcome written back (retries and backoff are the store's rules), and a clean
//! shutdown. A handler whose lease was lost is told through [`JobContext::cancelled`], and its
//! outcome is dropped: another runner owns the job by then.

pub mod config;
pub mod driver;
pub mod egress;
pub mod environment;
pub mod error;
mod journal;
pub mod leftovers;
pub mod local;
pub mod mirrors;
pub mod pipeline;
mod publish;
mod review;
pub mod run;
pub mod setup;
mod status;
#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;
pub mod verify;
mod work;

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::task::JoinSet;
use tracing::Instrument as _;

use crate::metrics::Metrics;
use crate::store::{Job, JobId, Outcome, Queue, Store, StoreError};

/// Does a job's work.
pub trait JobHandler: Send + Sync + 'static {
    /// Does the job's work. Phases are reported through `ctx`.
    fn run(&self, job: &Job, ctx: &JobContext) -> impl Future<Output = Outcome> + Send;
}

/// What a running handler can tell the store, and learn from it.
pub struct JobContext {
    store: Store,
    job: JobId,
    /// The job's [`crate::forge::Event::target`], if it has one.
    target: Option<String>,
    owner: String,
    lost: AtomicBool,
    metrics: Option<Arc<Metrics>>,
    /// The phase the job is in and when it began, for the phase-duration histogram.
    current: Mutex<(String, Instant)>,
}

impl JobContext {
    /// Records what the job is doing now ("cloning", "running the worker", …). Best effort: a
    /// store error is logged, not returned.
    pub async fn phase(&self, name: &str) {
        self.end_phase(Some(name));
        match self.store.set_phase(self.job, &self.owner, name).await {
            Ok(true) => {}
            Ok(false) => self.lose_lease(),
            Err(err) => {
                tracing::warn!(error = %err, phase = name, "could not record the job's phase")
            }
        }
    }

    /// Records what this run did, for the job's page. Best effort, as [`JobContext::phase`].
    pub async fn record(&self, event: crate::store::RunEvent) {
        match self.store.record_run(self.job, &self.owner, event).await {
            Ok(true) => {}
            Ok(false) => self.lose_lease(),
            Err(err) => tracing::warn!(error = %err, "could not record the run for its page"),
        }
    }

    /// The jobs queued for this job's target after it, oldest first: a `/forgeward cancel` waits
    /// there while the job it means runs.
    pub async fn queued_behind(&self) -> Result<Vec<Job>, StoreError> {
        let Some(target) = &self.target else {
            return Ok(Vec::new());
        };
        let jobs = self.store.jobs_for_target(target).await?;
        Ok(jobs
            .into_iter()
            .filter(|j| j.id > self.job && j.state == crate::store::JobState::Queued)
            .collect())
    }

    /// The job of this job's target that ran just before it, if any.
    pub async fn previous(&self) -> Result<Option<Job>, StoreError> {
        let Some(target) = &self.target else {
            return Ok(None);
        };
        let jobs = self.store.jobs_for_target(target).await?;
        Ok(jobs.into_iter().rfind(|j| j.id < self.job))
    }

    /// Whether the lease on the job was lost: another runner may be running it, and nothing this
    /// run does will be recorded. A handler should stop before any outside effect (a push, a
    /// comment) once this is true.
    pub fn cancelled(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// Closes the phase the job was in (observing its duration) and opens `next`, if any.
    fn end_phase(&self, next: Option<&str>) {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(metrics) = &self.metrics {
            metrics.observe(
                "forgeward_job_phase_duration_seconds",
                &[("phase", &current.0)],
                current.1.elapsed().as_secs_f64(),
            );
        }
        if let Some(next) = next {
            *current = (next.to_owned(), Instant::now());
        }
    }

    fn lose_lease(&self) {
        if !self.lost.swap(true, Ordering::AcqRel) {
            tracing::warn!("the job's lease was lost");
        }
    }
}

/// How a runner process runs jobs.
#[derive(Clone, Debug)]
pub struct RunnerConfig {
    /// Names this runner in leases: unique across runners sharing a store (e.g. hostname:pid:n).
    pub owner: String,
    /// Worker jobs run at once (at least 1).
    pub concurrency: usize,
    /// Pull-request checks run at once besides them (at least 1): each queue has its own
    /// slots, so neither keeps the other waiting.
    pub checks: usize,
    /// How long a claim holds a job without a heartbeat; heartbeats come every third of it.
    pub lease: Duration,
    /// How often to look for work when there was none (a new job in this process wakes the
    /// runner sooner).
    pub poll: Duration,
    /// The first wait before a failed job's next attempt; it doubles after each failure.
    pub backoff_base: Duration,
    /// Where job and phase durations are observed, if anywhere.
    pub metrics: Option<Arc<Metrics>>,
}

/// Runs until `shutdown` resolves: claims jobs (up to `concurrency` worker jobs and `checks`
/// pull-request checks at once, each from its own [`Queue`]), heartbeats each at
/// lease/3 while its handler runs, completes it with the handler's Outcome. On shutdown: stops
/// claiming, lets running handlers finish (a job claimed as shutdown came is given back), returns.
///
/// Store errors while claiming are logged and retried at the next poll; the error is returned
/// only when the store's writer has stopped, after the running handlers finished.
pub async fn run_workers<H: JobHandler>(
    store: Store,
    handler: Arc<H>,
    config: RunnerConfig,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), StoreError> {
    let store = store.with_backoff_base(config.backoff_base);
    let limits = [
        (Queue::Work, config.concurrency.max(1)),
        (Queue::Check, config.checks.max(1)),
    ];
    let mut running = Running::default();
    let mut stopping = false;
    let mut fatal = None;
    tokio::pin!(shutdown);
    tracing::info!(
        owner = %config.owner,
        concurrency = limits[0].1,
        checks = limits[1].1,
        "runner started"
    );

    while !stopping {
        // Registered before the claim, so that work added meanwhile wakes the wait below.
        let work = store.work_added();
        let mut claimed_one = false;
        for (queue, limit) in limits {
            if stopping || running.count(queue) >= limit {
                continue;
            }
            match store.claim(&config.owner, config.lease, queue).await {
                Ok(Some(job)) => {
                    claimed_one = true;
                    if is_ready(&mut shutdown).await {
                        stopping = true;
                        give_back(&store, &config.owner, job.id).await;
                    } else {
                        running.spawn(&store, &handler, &config, job, queue);
                    }
                }
                Ok(None) => {}
                Err(StoreError::WriterStopped) => {
                    fatal = Some(StoreError::WriterStopped);
                    stopping = true;
                }
                Err(err) => tracing::warn!(error = %err, "could not claim a job"),
            }
        }
        let has_room = limits.iter().any(|(q, limit)| running.count(*q) < *limit);
        if stopping || (claimed_one && has_room) {
            continue;
        }
        // Full, or nothing to claim: wait for a slot, new work, the next poll, or shutdown.
        tokio::select! {
            () = &mut shutdown => stopping = true,
            Some(done) = running.tasks.join_next_with_id() => {
                running.finished(&store, &config.owner, done).await;
            }
            () = tokio::time::sleep(config.poll), if has_room => {}
            () = work, if has_room => {}
        }
    }

    tracing::info!(owner = %config.owner, running = running.len(), "runner stopping");
    while let Some(done) = running.tasks.join_next_with_id().await {
        running.finished(&store, &config.owner, done).await;
    }
    fatal.map_or(Ok(()), Err)
}

/// Whether `shutdown` has already resolved, without waiting for it.
async fn is_ready<F: Future<Output = ()>>(shutdown: &mut std::pin::Pin<&mut F>) -> bool {
    tokio::select! {
        biased;
        () = shutdown.as_mut() => true,
        () = std::future::ready(()) => false,
    }
}

async fn give_back(store: &Store, owner: &str, job: JobId) {
    match store.release(job, owner).await {
        Ok(()) => tracing::info!(%job, "job given back on shutdown"),
        Err(err) => tracing::warn!(%job, error = %err, "could not give a job back on shutdown"),
    }
}

/// The handlers running now, by task, with the queue each job came from.
#[derive(Default)]
struct Running {
    tasks: JoinSet<()>,
    jobs: HashMap<tokio::task::Id, (JobId, Queue)>,
}

impl Running {
    fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Jobs of `queue` running now.
    fn count(&self, queue: Queue) -> usize {
        self.jobs.values().filter(|(_, q)| *q == queue).count()
    }

    fn spawn<H: JobHandler>(
        &mut self,
        store: &Store,
        handler: &Arc<H>,
        config: &RunnerConfig,
        job: Job,
        queue: Queue,
    ) {
        let id = job.id;
        let span = tracing::info_span!("job", %id, kind = job.event.kind(), attempt = job.attempts);
        let task = run_one(store.clone(), handler.clone(), config.clone(), job);
        let handle = self.tasks.spawn(task.instrument(span));
        self.jobs.insert(handle.id(), (id, queue));
    }

    /// A handler's task ended. One that panicked leaves its job running: it is failed (to be
    /// retried) here rather than waiting for its lease to run out.
    async fn finished(
        &mut self,
        store: &Store,
        owner: &str,
        done: Result<(tokio::task::Id, ()), tokio::task::JoinError>,
    ) {
        let (task, panic) = match done {
            Ok((task, ())) => (task, None),
            Err(err) => (err.id(), Some(err)),
        };
        let job = self.jobs.remove(&task).map(|(job, _)| job);
        if let (Some(job), Some(panic)) = (job, panic) {
            tracing::error!(%job, error = %panic, "the job's handler panicked");
            let outcome = Outcome::Failed {
                error: "the job's handler panicked".to_owned(),
                retry: true,
            };
            if let Err(err) = store.complete(job, owner, outcome).await {
                tracing::warn!(%job, error = %err, "could not record the handler's panic");
            }
        }
    }
}

/// How many times completing a job is tried before it is left to its lease running out.
const COMPLETE_TRIES: u32 = 3;

async fn run_one<H: JobHandler>(store: Store, handler: Arc<H>, config: RunnerConfig, job: Job) {
    let (owner, lease) = (config.owner.clone(), config.lease);
    let started = Instant::now();
    let ctx = JobContext {
        store: store.clone(),
        job: job.id,
        target: job.target.clone(),
        owner: owner.clone(),
        lost: AtomicBool::new(false),
        metrics: config.metrics.clone(),
        current: Mutex::new((job.phase.clone(), started)),
    };
    tracing::info!(
        subject = job.target.as_deref().unwrap_or("-"),
        "job started"
    );
    let outcome = tokio::select! {
        outcome = handler.run(&job, &ctx) => outcome,
        never = keep_lease(&ctx, lease) => match never {},
    };
    ctx.end_phase(None);
    if let Some(metrics) = &config.metrics {
        let label = match &outcome {
            Outcome::Succeeded => "succeeded",
            Outcome::Flagged => "flagged",
            Outcome::Failed { .. } => "failed",
            Outcome::Cancelled => "cancelled",
            Outcome::Question { .. } => "question",
        };
        metrics.observe(
            "forgeward_job_duration_seconds",
            &[("outcome", label)],
            started.elapsed().as_secs_f64(),
        );
    }
    if ctx.cancelled() {
        tracing::warn!(?outcome, "the run's outcome is dropped: its lease was lost");
        return;
    }
    for attempt in 1..=COMPLETE_TRIES {
        match store.complete(job.id, &owner, outcome.clone()).await {
            Ok(()) => {
                tracing::info!(?outcome, "job finished");
                return;
            }
            Err(err @ StoreError::LeaseLost { .. }) => {
                tracing::warn!(error = %err, ?outcome, "the run's outcome is dropped");
                return;
            }
            Err(err) if attempt < COMPLETE_TRIES => {
                tracing::warn!(error = %err, "could not record the outcome; trying again");
                tokio::time::sleep(lease / 10).await;
            }
            Err(err) => tracing::error!(
                error = %err, ?outcome,
                "could not record the outcome; the job runs again when its lease runs out"
            ),
        }
    }
}

/// Renews the lease every third of it, for as long as the handler runs; stops renewing (and
/// marks the context cancelled) once the lease is lost. Never returns.
async fn keep_lease(ctx: &JobContext, lease: Duration) -> Infallible {
    let every = (lease / 3).max(Duration::from_millis(1));
    loop {
        tokio::time::sleep(every).await;
        match ctx.store.heartbeat(ctx.job, &ctx.owner, lease).await {
            Ok(true) => {}
            Ok(false) => {
                ctx.lose_lease();
                return std::future::pending().await;
            }
            // The lease may still be ours: try again at the next beat.
            Err(err) => tracing::warn!(error = %err, "heartbeat failed"),
        }
    }
}
