//! What the queue holds: a job, its state, and how a run of it ended.

use std::fmt;
use std::time::Duration;

use crate::forge::event::{Event, Forge};

/// A job's id: ids are never reused, and a lower id was queued earlier.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct JobId(pub i64);

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Where a job is in its life. `queued` and `running` are open; the others are final.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// Waiting for a runner (new, retrying after a backoff, or given back).
    Queued,
    /// Held by a runner's lease.
    Running,
    /// Done: the detector found nothing, or the worker asked a question instead of making the
    /// change ([`Job::question`] holds it).
    Succeeded,
    /// Done, with review flags for a human to look at.
    Flagged,
    /// Failed in a way another attempt would not fix.
    Failed,
    /// Stopped on purpose (a newer trigger, or a maintainer).
    Cancelled,
    /// Failed on every attempt it was allowed, or lost its lease on the last one.
    Dead,
}

impl JobState {
    /// Every state, in the order of a job's life.
    pub const ALL: [JobState; 7] = [
        JobState::Queued,
        JobState::Running,
        JobState::Succeeded,
        JobState::Flagged,
        JobState::Failed,
        JobState::Cancelled,
        JobState::Dead,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Succeeded => "succeeded",
            JobState::Flagged => "flagged",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
            JobState::Dead => "dead",
        }
    }

    /// Whether the job will not run again.
    pub fn is_final(self) -> bool {
        !matches!(self, JobState::Queued | JobState::Running)
    }
}

impl fmt::Display for JobState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for JobState {
    type Err = String;

    fn from_str(s: &str) -> Result<JobState, String> {
        JobState::ALL
            .into_iter()
            .find(|state| state.as_str() == s)
            .ok_or_else(|| format!("unknown job state '{s}'"))
    }
}

/// Which of a runner's queues a job waits in; each has its own concurrency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Queue {
    /// Worker jobs: the trigger label, a command in a comment (`/forgeward check` included: a
    /// person asked, and it waits its turn with theirs).
    Work,
    /// A pull request's own check, made by the forge's event: it may run the repository's
    /// tests, and a burst of pushes must not keep worker jobs waiting.
    Check,
}

impl Queue {
    pub const ALL: [Queue; 2] = [Queue::Work, Queue::Check];

    /// The queue a job made from `event` waits in.
    pub fn of(event: &crate::forge::Event) -> Queue {
        match event {
            crate::forge::Event::PullRequest { .. } => Queue::Check,
            _ => Queue::Work,
        }
    }

    /// As the store keeps it.
    pub fn as_str(self) -> &'static str {
        match self {
            Queue::Work => "work",
            Queue::Check => "check",
        }
    }
}

/// A job as the store has it.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub id: JobId,
    pub state: JobState,
    /// What the job is doing, for people: "queued", "cloning", "running the worker", …
    pub phase: String,
    /// [`Event::target`]: jobs of one target run one at a time, in the order they were queued.
    pub target: Option<String>,
    pub event: Event,
    pub delivery_id: String,
    pub forge: Forge,
    /// Runs started, counting the one in progress.
    pub attempts: u32,
    pub max_attempts: u32,
    pub lease_owner: Option<String>,
    pub lease_expires_at_ms: Option<i64>,
    /// A queued job is not claimed before this time (the backoff after a failed attempt).
    pub next_run_at_ms: i64,
    pub last_error: Option<String>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    /// The question the worker asked instead of making the change (`/job-out/question.md`),
    /// kept so that the next `/forgeward run` on the target can hand it back with the answer.
    pub question: Option<String>,
}

/// How a run of a job ended, as its handler reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    Flagged,
    /// `retry`: queue it again after a backoff, unless its attempts are used up (then it is
    /// `dead`). Without `retry` it is `failed` at once.
    Failed {
        error: String,
        retry: bool,
    },
    Cancelled,
    /// The worker stopped to ask a question (the task or the tests look wrong to it): the job is
    /// done, `succeeded`, with the question kept on it.
    Question {
        question: String,
    },
}

/// The first wait before a failed job runs again, unless the runner is configured otherwise.
/// Long enough for a forge's hiccup to pass, short enough that a maintainer sees progress.
pub const DEFAULT_BACKOFF_BASE: Duration = Duration::from_secs(10);

/// The longest wait between attempts: a job is never parked for longer than a coffee break.
pub const MAX_BACKOFF: Duration = Duration::from_secs(10 * 60);

/// The wait after the `attempt`-th attempt (1-based) failed: `base`, doubling, capped at
/// [`MAX_BACKOFF`].
pub fn backoff_delay(base: Duration, attempt: u32) -> Duration {
    let doublings = attempt.saturating_sub(1).min(31);
    base.saturating_mul(1u32 << doublings).min(MAX_BACKOFF)
}

/// The clock the store and the queue use: milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
        })
}

/// A duration in whole milliseconds, saturating (leases and backoffs are far below the limit).
pub(crate) fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}
