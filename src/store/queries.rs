//! The store's statements and the queue's rules, written once for both backends.
//!
//! Every write here runs inside a transaction the group-commit writer opened; every function
//! takes the connection and "now" from its caller, so a batch reads one consistent clock per
//! operation and the tests can reason about times.

use super::StoreError;
use super::conn::{Arg, Conn, Dialect, JobRow, Value};
use super::job::{Job, JobId, JobState, Outcome, backoff_delay, millis};
use crate::forge::event::Forge;

/// The `jobs` columns [`JobRow`] decodes, in a form `concat!` accepts.
macro_rules! job_columns {
    () => {
        "id, forge, delivery_id, state, phase, target, event, attempts, max_attempts, lease_owner, \
         lease_expires_at_ms, next_run_at_ms, last_error, created_at_ms, updated_at_ms, question"
    };
}
pub(crate) use job_columns;

/// Expired leases go back to the queue at once (the runner died, not necessarily the job), or
/// to `dead` when that was the last attempt allowed.
const REAP_EXPIRED: &str = "UPDATE jobs SET \
     state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'queued' END, \
     phase = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'queued' END, \
     last_error = 'the lease of ' || lease_owner || ' expired', \
     lease_owner = NULL, lease_expires_at_ms = NULL, next_run_at_ms = $1, updated_at_ms = $1 \
     WHERE state = 'running' AND lease_expires_at_ms < $1";

/// The oldest queued job of a queue that is due and whose target has neither a running job nor an older
/// queued one (first in, first out per target; an older job waiting out its backoff keeps its
/// place). The unique index `jobs_one_running_per_target` enforces the same thing underneath.
macro_rules! claim_sql {
    ($lock:literal) => {
        concat!(
            "UPDATE jobs SET state = 'running', phase = 'claimed', attempts = attempts + 1, \
             lease_owner = $1, lease_expires_at_ms = $2, updated_at_ms = $3 \
             WHERE id = (SELECT j.id FROM jobs j \
               WHERE j.state = 'queued' AND j.next_run_at_ms <= $3 AND j.queue = $4 \
               AND NOT EXISTS (SELECT 1 FROM jobs o \
                 WHERE o.target = j.target AND o.state IN ('queued', 'running') \
                 AND (o.state = 'running' OR o.id < j.id)) \
               ORDER BY j.id LIMIT 1",
            $lock,
            ") RETURNING ",
            job_columns!()
        )
    };
}

/// SQLite has one writer at a time: the claim needs no row locks.
const CLAIM_SQLITE: &str = claim_sql!("");
/// PostgreSQL runners in other processes claim concurrently: a row another claim holds is
/// skipped rather than waited for.
const CLAIM_POSTGRES: &str = claim_sql!(" FOR UPDATE OF j SKIP LOCKED");

const HEARTBEAT: &str = "UPDATE jobs SET lease_expires_at_ms = $3 \
     WHERE id = $1 AND state = 'running' AND lease_owner = $2";

const SET_PHASE: &str = "UPDATE jobs SET phase = $3, updated_at_ms = $4 \
     WHERE id = $1 AND state = 'running' AND lease_owner = $2";

const HELD_ATTEMPTS: &str = "SELECT attempts, max_attempts FROM jobs \
     WHERE id = $1 AND state = 'running' AND lease_owner = $2";

const FINISH: &str = "UPDATE jobs SET state = $3, phase = $3, \
     last_error = COALESCE($4, last_error), \
     lease_owner = NULL, lease_expires_at_ms = NULL, \
     next_run_at_ms = COALESCE($5, next_run_at_ms), updated_at_ms = $6, \
     question = $7 \
     WHERE id = $1 AND state = 'running' AND lease_owner = $2";

const RELEASE: &str = "UPDATE jobs SET state = 'queued', phase = 'queued', \
     attempts = attempts - 1, \
     lease_owner = NULL, lease_expires_at_ms = NULL, updated_at_ms = $3 \
     WHERE id = $1 AND state = 'running' AND lease_owner = $2";

const DELIVERY_EXISTS: &str =
    "SELECT COUNT(*) FROM deliveries WHERE forge = $1 AND delivery_id = $2";

const DELIVERY_BODY: &str =
    "SELECT body_encoding, body FROM deliveries WHERE forge = $1 AND delivery_id = $2";

const JOB_BY_ID: &str = concat!("SELECT ", job_columns!(), " FROM jobs WHERE id = $1");

const ALL_JOBS: &str = concat!("SELECT ", job_columns!(), " FROM jobs ORDER BY id");

const JOBS_FOR_TARGET: &str = concat!(
    "SELECT ",
    job_columns!(),
    " FROM jobs WHERE target = $1 ORDER BY id"
);

const JOB_COUNTS: &str = "SELECT state, COUNT(*) FROM jobs GROUP BY state";

const LATEST_MIGRATION: &str =
    "SELECT COALESCE(MAX(version), 0) FROM _sqlx_migrations WHERE success";

/// Returns expired leases to the queue, then takes the next job for `owner`.
pub(crate) async fn claim(
    conn: &mut dyn Conn,
    owner: &str,
    lease_ms: i64,
    queue: super::job::Queue,
    now: i64,
) -> sqlx::Result<Option<JobRow>> {
    conn.execute(REAP_EXPIRED, &[Arg::Int(now)]).await?;
    let sql = match conn.dialect() {
        Dialect::Sqlite => CLAIM_SQLITE,
        Dialect::Postgres => CLAIM_POSTGRES,
    };
    let args = [
        Arg::Text(owner),
        Arg::Int(now.saturating_add(lease_ms)),
        Arg::Int(now),
        Arg::Text(queue.as_str()),
    ];
    Ok(conn.fetch_jobs(sql, &args).await?.into_iter().next())
}

/// Whether `owner` still held the job (and now holds it `lease_ms` longer).
pub(crate) async fn heartbeat(
    conn: &mut dyn Conn,
    id: JobId,
    owner: &str,
    lease_ms: i64,
    now: i64,
) -> sqlx::Result<bool> {
    let args = [
        Arg::Int(id.0),
        Arg::Text(owner),
        Arg::Int(now.saturating_add(lease_ms)),
    ];
    Ok(conn.execute(HEARTBEAT, &args).await? == 1)
}

pub(crate) async fn set_phase(
    conn: &mut dyn Conn,
    id: JobId,
    owner: &str,
    phase: &str,
    now: i64,
) -> sqlx::Result<bool> {
    let args = [
        Arg::Int(id.0),
        Arg::Text(owner),
        Arg::Text(phase),
        Arg::Int(now),
    ];
    Ok(conn.execute(SET_PHASE, &args).await? == 1)
}

/// Ends `owner`'s run of a job; false when the lease was lost (nothing changes then).
pub(crate) async fn complete(
    conn: &mut dyn Conn,
    id: JobId,
    owner: &str,
    outcome: &Outcome,
    backoff_base: std::time::Duration,
    now: i64,
) -> sqlx::Result<bool> {
    let held = conn
        .fetch_ints(HELD_ATTEMPTS, &[Arg::Int(id.0), Arg::Text(owner)])
        .await?;
    let Some([attempts, max_attempts]) = held.first().map(Vec::as_slice) else {
        return Ok(false);
    };
    let (state, error, next_run_at_ms) = match outcome {
        // The job did what it could: the question is its result, kept below.
        Outcome::Succeeded | Outcome::Question { .. } => (JobState::Succeeded, None, None),
        Outcome::Flagged => (JobState::Flagged, None, None),
        Outcome::Cancelled => (JobState::Cancelled, None, None),
        Outcome::Failed {
            error,
            retry: false,
        } => (JobState::Failed, Some(error.as_str()), None),
        Outcome::Failed { error, retry: true } if attempts >= max_attempts => {
            (JobState::Dead, Some(error.as_str()), None)
        }
        Outcome::Failed { error, retry: true } => {
            let attempt = u32::try_from(*attempts).unwrap_or(u32::MAX);
            let wait = millis(backoff_delay(backoff_base, attempt));
            (
                JobState::Queued,
                Some(error.as_str()),
                Some(now.saturating_add(wait)),
            )
        }
    };
    let args = [
        Arg::Int(id.0),
        Arg::Text(owner),
        Arg::Text(state.as_str()),
        Arg::OptText(error),
        Arg::OptInt(next_run_at_ms),
        Arg::Int(now),
        Arg::OptText(match outcome {
            Outcome::Question { question } => Some(question.as_str()),
            _ => None,
        }),
    ];
    if conn.execute(FINISH, &args).await? != 1 {
        return Ok(false);
    }
    end_run(conn, id, *attempts, now).await?;
    Ok(true)
}

/// A run's end, written with its job's.
const RUN_END: &str = "UPDATE job_runs SET ended_at_ms = $3 WHERE job_id = $1 AND attempt = $2";

/// Marks the run `attempt` of job `id` ended (its outcome is being recorded).
async fn end_run(conn: &mut dyn Conn, id: JobId, attempt: i64, now: i64) -> sqlx::Result<()> {
    let args = [Arg::Int(id.0), Arg::Int(attempt), Arg::Int(now)];
    conn.execute(RUN_END, &args).await?;
    Ok(())
}

/// Gives a job back to the queue without counting the attempt; false when the lease was lost.
pub(crate) async fn release(
    conn: &mut dyn Conn,
    id: JobId,
    owner: &str,
    now: i64,
) -> sqlx::Result<bool> {
    let args = [Arg::Int(id.0), Arg::Text(owner), Arg::Int(now)];
    Ok(conn.execute(RELEASE, &args).await? == 1)
}

pub(crate) async fn delivery_exists(
    conn: &mut dyn Conn,
    forge: Forge,
    id: &str,
) -> sqlx::Result<bool> {
    let rows = conn
        .fetch_ints(DELIVERY_EXISTS, &[Arg::Text(forge.as_str()), Arg::Text(id)])
        .await?;
    Ok(single_int(&rows)? > 0)
}

/// A delivery's body as kept, and its `body_encoding`.
pub(crate) async fn delivery_body(
    conn: &mut dyn Conn,
    forge: Forge,
    id: &str,
) -> Result<Option<(String, Vec<u8>)>, StoreError> {
    let rows = conn
        .fetch_values(DELIVERY_BODY, &[Arg::Text(forge.as_str()), Arg::Text(id)])
        .await?;
    let Some([encoding, body]) = rows
        .into_iter()
        .next()
        .and_then(|r| <[Value; 2]>::try_from(r).ok())
    else {
        return Ok(None);
    };
    let corrupt = |reason: &str| StoreError::Corrupt {
        what: format!("the body of delivery {id}"),
        reason: reason.to_owned(),
    };
    let encoding = encoding
        .text()
        .ok_or_else(|| corrupt("no encoding"))?
        .to_owned();
    let body = body.into_bytes().ok_or_else(|| corrupt("not bytes"))?;
    Ok(Some((encoding, body)))
}

pub(crate) async fn job(conn: &mut dyn Conn, id: JobId) -> Result<Option<Job>, StoreError> {
    let rows = conn.fetch_jobs(JOB_BY_ID, &[Arg::Int(id.0)]).await?;
    rows.into_iter().next().map(job_from_row).transpose()
}

pub(crate) async fn jobs(conn: &mut dyn Conn) -> Result<Vec<Job>, StoreError> {
    let rows = conn.fetch_jobs(ALL_JOBS, &[]).await?;
    rows.into_iter().map(job_from_row).collect()
}

pub(crate) async fn jobs_for_target(
    conn: &mut dyn Conn,
    target: &str,
) -> Result<Vec<Job>, StoreError> {
    let rows = conn
        .fetch_jobs(JOBS_FOR_TARGET, &[Arg::Text(target)])
        .await?;
    rows.into_iter().map(job_from_row).collect()
}

/// Every state with its count, zero included, in [`JobState::ALL`] order.
pub(crate) async fn job_counts(conn: &mut dyn Conn) -> Result<Vec<(JobState, i64)>, StoreError> {
    let rows = conn.fetch_keyed(JOB_COUNTS, &[]).await?;
    let mut counts: Vec<(JobState, i64)> = JobState::ALL.iter().map(|&s| (s, 0)).collect();
    for (state, count) in rows {
        let state: JobState = state.parse().map_err(|reason| StoreError::Corrupt {
            what: "jobs.state".to_owned(),
            reason,
        })?;
        if let Some(entry) = counts.iter_mut().find(|(s, _)| *s == state) {
            entry.1 = count;
        }
    }
    Ok(counts)
}

/// The version of the newest migration applied successfully (0: none).
pub(crate) async fn latest_migration(conn: &mut dyn Conn) -> sqlx::Result<i64> {
    single_int(&conn.fetch_ints(LATEST_MIGRATION, &[]).await?)
}

fn single_int(rows: &[Vec<i64>]) -> sqlx::Result<i64> {
    rows.first()
        .and_then(|row| row.first())
        .copied()
        .ok_or(sqlx::Error::RowNotFound)
}

/// Checks a stored row into a [`Job`].
pub(crate) fn job_from_row(row: JobRow) -> Result<Job, StoreError> {
    let corrupt = |reason: String| StoreError::Corrupt {
        what: format!("job {}", row.id),
        reason,
    };
    let count = |value: i64, name: &str| {
        u32::try_from(value).map_err(|_| corrupt(format!("{name} is {value}")))
    };
    Ok(Job {
        id: JobId(row.id),
        state: row.state.parse().map_err(corrupt)?,
        forge: row.forge.parse().map_err(corrupt)?,
        event: serde_json::from_str(&row.event)
            .map_err(|err| corrupt(format!("its event does not parse: {err}")))?,
        attempts: count(row.attempts, "attempts")?,
        max_attempts: count(row.max_attempts, "max_attempts")?,
        phase: row.phase,
        target: row.target,
        delivery_id: row.delivery_id,
        lease_owner: row.lease_owner,
        lease_expires_at_ms: row.lease_expires_at_ms,
        next_run_at_ms: row.next_run_at_ms,
        last_error: row.last_error,
        created_at_ms: row.created_at_ms,
        updated_at_ms: row.updated_at_ms,
        question: row.question,
    })
}

/// How long a base's test results are kept: long enough for every job on one base, short
/// enough that a table of them stays small.
pub(crate) const BASE_RUN_KEPT_MS: i64 = 30 * 24 * 3600 * 1000;

const PUT_BASE_RUN: &str = "INSERT INTO base_runs (key, results, duration_ms, created_at_ms) \
     VALUES ($1, $2, $3, $4) ON CONFLICT (key) DO UPDATE SET results = excluded.results, \
     duration_ms = excluded.duration_ms, created_at_ms = excluded.created_at_ms";

const PRUNE_BASE_RUNS: &str = "DELETE FROM base_runs WHERE created_at_ms < $1";

const BASE_RUN: &str = "SELECT results, duration_ms FROM base_runs WHERE key = $1";

/// Keeps a base's test results under `key`, replacing what was there, and prunes the old ones.
pub(crate) async fn put_base_run(
    conn: &mut dyn Conn,
    key: &str,
    results: &str,
    duration_ms: i64,
    now: i64,
) -> sqlx::Result<()> {
    let args = [
        Arg::Text(key),
        Arg::Text(results),
        Arg::Int(duration_ms),
        Arg::Int(now),
    ];
    conn.execute(PUT_BASE_RUN, &args).await?;
    conn.execute(PRUNE_BASE_RUNS, &[Arg::Int(now - BASE_RUN_KEPT_MS)])
        .await?;
    Ok(())
}

/// The results kept under `key` and how long that run took, if any.
pub(crate) async fn base_run(
    conn: &mut dyn Conn,
    key: &str,
) -> sqlx::Result<Option<(String, i64)>> {
    Ok(conn
        .fetch_keyed(BASE_RUN, &[Arg::Text(key)])
        .await?
        .into_iter()
        .next())
}
