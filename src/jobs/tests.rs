//! The runner against a real store, the same suite on SQLite and on PostgreSQL.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::*;
use crate::store::testing::{enqueue, labeled, on_both_backends, pull_request};
use crate::store::{JobState, now_ms};

on_both_backends!(
    runs_each_job_once_with_bounded_concurrency,
    heartbeats_keep_a_long_job,
    failing_jobs_are_retried_until_dead,
    a_panicking_handler_is_retried,
    shutdown_lets_running_handlers_finish,
    a_lost_lease_cancels_the_run_and_drops_its_outcome,
    job_and_phase_durations_are_observed,
    pull_request_checks_have_slots_of_their_own,
);
on_both_backends!(two_stores: two_runners_never_run_a_job_or_target_twice_at_once);

/// Generous: nothing in these tests should come near it unless the runner is broken.
const DEADLINE: Duration = Duration::from_secs(60);

fn config(owner: &str, concurrency: usize) -> RunnerConfig {
    RunnerConfig {
        owner: owner.to_owned(),
        concurrency,
        checks: 1,
        lease: Duration::from_secs(30),
        poll: Duration::from_millis(20),
        backoff_base: Duration::from_millis(10),
        metrics: None,
    }
}

/// Resolves once every job in the store is final (and at least `count` exist).
async fn all_final(store: Store, count: usize) {
    loop {
        let jobs = store.jobs().await.expect("jobs");
        if jobs.len() >= count && jobs.iter().all(|job| job.state.is_final()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn run_until<H: JobHandler>(
    store: &Store,
    handler: &Arc<H>,
    config: RunnerConfig,
    shutdown: impl Future<Output = ()> + Send,
) {
    let run = run_workers(store.clone(), handler.clone(), config, shutdown);
    match tokio::time::timeout(DEADLINE, run).await {
        Ok(result) => result.expect("run_workers"),
        Err(_) => panic!("run_workers did not return within {DEADLINE:?}"),
    }
}

/// Counts runs per job and the most handlers seen at once.
#[derive(Default)]
struct Counting {
    runs: Mutex<HashMap<JobId, u32>>,
    now: AtomicUsize,
    most: AtomicUsize,
    work: Duration,
}

impl JobHandler for Counting {
    async fn run(&self, job: &Job, ctx: &JobContext) -> Outcome {
        let at_once = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(at_once, Ordering::SeqCst);
        *self.runs.lock().unwrap().entry(job.id).or_default() += 1;
        ctx.phase("working").await;
        tokio::time::sleep(self.work).await;
        self.now.fetch_sub(1, Ordering::SeqCst);
        if ctx.cancelled() {
            Outcome::Cancelled
        } else {
            Outcome::Succeeded
        }
    }
}

async fn runs_each_job_once_with_bounded_concurrency(store: Store) {
    const JOBS: u64 = 24;
    for n in 0..JOBS {
        enqueue(&store, &format!("d-{n}"), &labeled("acme/a", n), 3).await;
    }
    let handler = Arc::new(Counting {
        work: Duration::from_millis(20),
        ..Counting::default()
    });
    run_until(
        &store,
        &handler,
        config("r", 4),
        all_final(store.clone(), JOBS as usize),
    )
    .await;

    let runs = handler.runs.lock().unwrap().clone();
    assert_eq!(runs.len(), JOBS as usize);
    assert!(runs.values().all(|&n| n == 1), "{runs:?}");
    let most = handler.most.load(Ordering::SeqCst);
    assert!(
        (2..=4).contains(&most),
        "at most 4 at once, and more than one: {most}"
    );
    for job in store.jobs().await.unwrap() {
        assert_eq!(
            (job.state, job.attempts, job.phase.as_str()),
            (JobState::Succeeded, 1, "succeeded")
        );
    }
}

/// Worker jobs fill their one slot; a pull request's check queued after them still runs at
/// once, in its own, and a second check waits for the first rather than taking a worker's.
async fn pull_request_checks_have_slots_of_their_own(store: Store) {
    for n in 0..2 {
        enqueue(&store, &format!("w-{n}"), &labeled("acme/a", n), 3).await;
    }
    let first = enqueue(&store, "c-1", &pull_request("acme/a", 10), 3).await;
    let second = enqueue(&store, "c-2", &pull_request("acme/a", 11), 3).await;
    let handler = Arc::new(Counting {
        work: Duration::from_millis(300),
        ..Counting::default()
    });
    run_until(
        &store,
        &handler,
        config("r", 1),
        all_final(store.clone(), 4),
    )
    .await;
    // One worker job and one check at once: never two worker jobs, never two checks.
    assert_eq!(handler.most.load(Ordering::SeqCst), 2, "one of each queue");
    let jobs = store.jobs().await.unwrap();
    let at = |id: JobId| {
        let job = jobs.iter().find(|j| j.id == id).expect("the job");
        assert_eq!(job.state, JobState::Succeeded, "{job:?}");
        job.updated_at_ms
    };
    // The checks ran one after the other, never two at once beside a worker job.
    assert!(at(first) <= at(second), "{jobs:?}");
}

async fn heartbeats_keep_a_long_job(store: Store) {
    let id = enqueue(&store, "d", &labeled("acme/a", 1), 3).await;
    let handler = Arc::new(Counting {
        work: Duration::from_millis(1000),
        ..Counting::default()
    });
    let config = RunnerConfig {
        lease: Duration::from_millis(450),
        ..config("r", 2)
    };
    run_until(&store, &handler, config, all_final(store.clone(), 1)).await;
    let job = store.job(id).await.unwrap().expect("the job");
    assert_eq!(
        (job.state, job.attempts),
        (JobState::Succeeded, 1),
        "{job:?}"
    );
    assert_eq!(handler.runs.lock().unwrap().get(&id), Some(&1));
}

/// Fails every run, asking for a retry.
#[derive(Default)]
struct Failing {
    runs: AtomicUsize,
}

impl JobHandler for Failing {
    async fn run(&self, _job: &Job, _ctx: &JobContext) -> Outcome {
        let n = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        Outcome::Failed {
            error: format!("attempt {n} failed"),
            retry: true,
        }
    }
}

async fn failing_jobs_are_retried_until_dead(store: Store) {
    let id = enqueue(&store, "d", &labeled("acme/a", 1), 3).await;
    let handler = Arc::new(Failing::default());
    let started = Instant::now();
    run_until(
        &store,
        &handler,
        config("r", 2),
        all_final(store.clone(), 1),
    )
    .await;
    assert_eq!(handler.runs.load(Ordering::SeqCst), 3);
    // Backoffs of 10 ms then 20 ms came between the attempts.
    assert!(started.elapsed() >= Duration::from_millis(30));
    let job = store.job(id).await.unwrap().expect("the job");
    assert_eq!((job.state, job.attempts), (JobState::Dead, 3));
    assert_eq!(job.last_error.as_deref(), Some("attempt 3 failed"));
}

/// Panics on its first run, succeeds after.
#[derive(Default)]
struct PanicsOnce {
    runs: AtomicUsize,
}

impl JobHandler for PanicsOnce {
    async fn run(&self, _job: &Job, _ctx: &JobContext) -> Outcome {
        if self.runs.fetch_add(1, Ordering::SeqCst) == 0 {
            panic!("the handler's bug (expected by this test)");
        }
        Outcome::Succeeded
    }
}

async fn a_panicking_handler_is_retried(store: Store) {
    let id = enqueue(&store, "d", &labeled("acme/a", 1), 3).await;
    let handler = Arc::new(PanicsOnce::default());
    run_until(
        &store,
        &handler,
        config("r", 1),
        all_final(store.clone(), 1),
    )
    .await;
    let job = store.job(id).await.unwrap().expect("the job");
    assert_eq!(
        (job.state, job.attempts),
        (JobState::Succeeded, 2),
        "{job:?}"
    );
    assert_eq!(
        job.last_error.as_deref(),
        Some("the job's handler panicked")
    );
}

/// Tells the test it started, then works for a while.
struct Slow {
    started: tokio::sync::Notify,
    work: Duration,
}

impl JobHandler for Slow {
    async fn run(&self, _job: &Job, _ctx: &JobContext) -> Outcome {
        self.started.notify_one();
        tokio::time::sleep(self.work).await;
        Outcome::Flagged
    }
}

async fn shutdown_lets_running_handlers_finish(store: Store) {
    let first = enqueue(&store, "d-1", &labeled("acme/a", 1), 3).await;
    let second = enqueue(&store, "d-2", &labeled("acme/b", 1), 3).await;
    let handler = Arc::new(Slow {
        started: tokio::sync::Notify::new(),
        work: Duration::from_millis(300),
    });
    let started = Instant::now();
    let shutdown = {
        let handler = handler.clone();
        async move { handler.started.notified().await }
    };
    run_until(&store, &handler, config("r", 1), shutdown).await;
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "returned before the handler finished"
    );
    let first = store.job(first).await.unwrap().expect("first job");
    assert_eq!(first.state, JobState::Flagged);
    let second = store.job(second).await.unwrap().expect("second job");
    assert_eq!(
        (second.state, second.attempts),
        (JobState::Queued, 0),
        "not started, not counted"
    );
}

/// Has its lease taken away mid-run, and reports success anyway.
struct Robbed {
    store: Store,
    saw_cancelled: AtomicBool,
}

impl JobHandler for Robbed {
    async fn run(&self, job: &Job, ctx: &JobContext) -> Outcome {
        ctx.phase("working").await;
        assert!(!ctx.cancelled());
        let steal = format!(
            "UPDATE jobs SET lease_owner = 'thief', lease_expires_at_ms = {} WHERE id = {}",
            now_ms() + 60_000,
            job.id
        );
        self.store
            .execute_sql(&steal)
            .await
            .expect("steal the lease");
        ctx.phase("pushing").await;
        self.saw_cancelled.store(ctx.cancelled(), Ordering::SeqCst);
        Outcome::Succeeded
    }
}

async fn a_lost_lease_cancels_the_run_and_drops_its_outcome(store: Store) {
    let id = enqueue(&store, "d", &labeled("acme/a", 1), 3).await;
    let handler = Arc::new(Robbed {
        store: store.clone(),
        saw_cancelled: AtomicBool::new(false),
    });
    let shutdown = {
        let store = store.clone();
        async move {
            while store.job(id).await.expect("job").map(|job| job.phase)
                != Some("working".to_owned())
            {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    };
    run_until(&store, &handler, config("r", 1), shutdown).await;
    assert!(handler.saw_cancelled.load(Ordering::SeqCst));
    let job = store.job(id).await.unwrap().expect("the job");
    assert_eq!(
        job.state,
        JobState::Running,
        "the thief's run is not ended by ours"
    );
    assert_eq!(
        (job.lease_owner.as_deref(), job.phase.as_str()),
        (Some("thief"), "working")
    );
}

/// Records every job and target in flight, and any overlap.
#[derive(Default)]
struct Exclusive {
    jobs: Mutex<HashSet<JobId>>,
    targets: Mutex<HashSet<String>>,
    runs: Mutex<HashMap<JobId, Vec<String>>>,
    overlaps: Mutex<Vec<String>>,
}

impl JobHandler for Exclusive {
    async fn run(&self, job: &Job, ctx: &JobContext) -> Outcome {
        let target = job.target.clone().unwrap_or_default();
        if !self.jobs.lock().unwrap().insert(job.id) {
            self.overlaps
                .lock()
                .unwrap()
                .push(format!("job {}", job.id));
        }
        if !self.targets.lock().unwrap().insert(target.clone()) {
            self.overlaps
                .lock()
                .unwrap()
                .push(format!("target {target}"));
        }
        let owner = job.lease_owner.clone().unwrap_or_default();
        self.runs
            .lock()
            .unwrap()
            .entry(job.id)
            .or_default()
            .push(owner);
        ctx.phase("working").await;
        tokio::time::sleep(Duration::from_millis(5 + (job.id.0 as u64 % 4) * 5)).await;
        self.targets.lock().unwrap().remove(&target);
        self.jobs.lock().unwrap().remove(&job.id);
        Outcome::Succeeded
    }
}

async fn two_runners_never_run_a_job_or_target_twice_at_once(store: Store, other: Store) {
    const JOBS: u64 = 40;
    for n in 0..JOBS {
        enqueue(&store, &format!("d-{n}"), &labeled("acme/a", n % 8), 3).await;
    }
    let handler = Arc::new(Exclusive::default());
    let first = run_until(
        &store,
        &handler,
        config("runner-1", 3),
        all_final(store.clone(), JOBS as usize),
    );
    let second = run_until(
        &other,
        &handler,
        config("runner-2", 3),
        all_final(other.clone(), JOBS as usize),
    );
    tokio::join!(first, second);

    assert_eq!(*handler.overlaps.lock().unwrap(), Vec::<String>::new());
    let runs = handler.runs.lock().unwrap().clone();
    assert_eq!(runs.len(), JOBS as usize);
    assert!(runs.values().all(|owners| owners.len() == 1), "{runs:?}");
    let owners: HashSet<&String> = runs.values().flatten().collect();
    assert_eq!(owners.len(), 2, "both runners took work: {owners:?}");
    let jobs = store.jobs().await.unwrap();
    assert!(
        jobs.iter()
            .all(|job| job.state == JobState::Succeeded && job.attempts == 1)
    );
    // Jobs of one target ran in the order they were queued.
    let mut by_target: HashMap<String, Vec<&Job>> = HashMap::new();
    for job in &jobs {
        by_target
            .entry(job.target.clone().unwrap_or_default())
            .or_default()
            .push(job);
    }
    for (target, jobs) in by_target {
        let ends: Vec<i64> = jobs.iter().map(|job| job.updated_at_ms).collect();
        assert!(ends.windows(2).all(|w| w[0] <= w[1]), "{target}: {ends:?}");
    }
}

async fn job_and_phase_durations_are_observed(store: Store) {
    enqueue(&store, "d-1", &labeled("acme/a", 1), 3).await;
    enqueue(&store, "d-2", &labeled("acme/b", 2), 3).await;
    let handler = Arc::new(Counting::default());
    let metrics = Arc::new(Metrics::default());
    let config = RunnerConfig {
        metrics: Some(metrics.clone()),
        ..config("r", 2)
    };
    run_until(&store, &handler, config, all_final(store.clone(), 2)).await;
    let text = metrics.render(&[]);
    for line in [
        "forgeward_job_duration_seconds_count{outcome=\"succeeded\"} 2",
        // The phase the store gives a claimed job, then the one its handler reported.
        "forgeward_job_phase_duration_seconds_count{phase=\"claimed\"} 2",
        "forgeward_job_phase_duration_seconds_count{phase=\"working\"} 2",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing `{line}` in:\n{text}"
        );
    }
}
