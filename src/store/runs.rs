//! What each run of a job did, for the job page: when it began and ended, what it worked on,
//! its phases as they began, the flags of its change, the pull request it published. Written by
//! the runner holding the job's lease (through the writer, like every write), read by the pages.
//! And the list of jobs, newest first, filtered by repository and state.
//!
//! A run is one attempt: the attempt is the job's own count when the runner writes, never the
//! caller's word, so a runner that lost its lease writes nothing.

use super::StoreError;
use super::conn::{Arg, Conn, Value};
use super::job::{Job, JobId, JobState};
use super::queries::{self, job_columns};
use crate::forge::event::Forge;

/// The most flags kept for one run: a change with more is a rewrite, and the page lists this
/// many and says how many there were.
pub const MAX_RUN_FLAGS: usize = 1000;

/// The most jobs one page of the list shows.
pub const MAX_LISTED: u32 = 200;

/// Something a run did, as its runner tells the store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunEvent {
    /// A phase began now ("cloning", "working", …).
    Phase(String),
    /// What the run works on: the or pull request's title, and the branch it pushes.
    Target { title: String, branch: String },
    /// The commit the worker starts from.
    Base(String),
    /// The bot's commit of the worker's change and the detector's flags on it.
    Checked {
        commit: String,
        flags: Vec<RunFlag>,
        /// How many flags there were, when more than [`MAX_RUN_FLAGS`] are given.
        total: usize,
    },
    /// The pull (merge) request the run opened or updated.
    Published { number: u64, url: String },
    /// Verification could not judge the change, for this reason.
    Unjudged(String),
}

/// A review flag as the page shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFlag {
    pub rule: String,
    pub severity: String,
    /// As the detector shows it (invalid UTF-8 as U+FFFD).
    pub path: String,
    pub line: Option<u32>,
    pub message: String,
    pub snippet: Option<String>,
}

/// A phase as it began.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseEntry {
    pub phase: String,
    pub started_at_ms: i64,
}

/// One run of a job.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Run {
    pub attempt: u32,
    pub started_at_ms: i64,
    /// When its outcome was recorded; `None` while it runs, or when its lease ran out.
    pub ended_at_ms: Option<i64>,
    pub title: Option<String>,
    pub branch: Option<String>,
    pub base_sha: Option<String>,
    pub commit_sha: Option<String>,
    /// Number and web address.
    pub pull_request: Option<(u64, String)>,
    pub phases: Vec<PhaseEntry>,
    pub flags: Vec<RunFlag>,
    /// Why verification could not judge the change, when it could not.
    pub unjudged: Option<String>,
}

/// Which jobs the list shows: newest first, at most `limit`, older than `before` when set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobFilter {
    /// `owner/name` exactly (GitLab's `group/project`).
    pub repo: Option<String>,
    pub forge: Option<Forge>,
    pub state: Option<JobState>,
    pub before: Option<JobId>,
    pub limit: u32,
}

/// A job in the list, with the title its newest run was given (none before it ran).
#[derive(Clone, Debug, PartialEq)]
pub struct Listed {
    pub job: Job,
    pub title: Option<String>,
}

const HELD_ATTEMPT: &str =
    "SELECT attempts FROM jobs WHERE id = $1 AND state = 'running' AND lease_owner = $2";

const RUN_START: &str = "INSERT INTO job_runs (job_id, attempt, started_at_ms) \
     VALUES ($1, $2, $3) ON CONFLICT (job_id, attempt) DO NOTHING";

const RUN_PHASE: &str = "INSERT INTO job_phases (job_id, attempt, seq, phase, started_at_ms) \
     SELECT $1, $2, COALESCE(MAX(seq), 0) + 1, $3, $4 FROM job_phases \
     WHERE job_id = $1 AND attempt = $2";

const RUN_TARGET: &str =
    "UPDATE job_runs SET title = $3, branch = $4 WHERE job_id = $1 AND attempt = $2";

const RUN_BASE: &str = "UPDATE job_runs SET base_sha = $3 WHERE job_id = $1 AND attempt = $2";

const RUN_COMMIT: &str = "UPDATE job_runs SET commit_sha = $3 WHERE job_id = $1 AND attempt = $2";

const RUN_FLAGS_CLEAR: &str = "DELETE FROM job_flags WHERE job_id = $1 AND attempt = $2";

const RUN_FLAG: &str = "INSERT INTO job_flags \
     (job_id, attempt, seq, rule, severity, path, line, message, snippet) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";

const RUN_PUBLISHED: &str = "UPDATE job_runs SET pull_request_number = $3, pull_request_url = $4 \
     WHERE job_id = $1 AND attempt = $2";

const RUN_UNJUDGED: &str = "UPDATE job_runs SET unjudged = $3 WHERE job_id = $1 AND attempt = $2";

const RUNS: &str = "SELECT attempt, started_at_ms, ended_at_ms, title, branch, base_sha, \
     commit_sha, pull_request_number, pull_request_url, unjudged FROM job_runs \
     WHERE job_id = $1 ORDER BY attempt";

const PHASES: &str = "SELECT attempt, phase, started_at_ms FROM job_phases WHERE job_id = $1 \
     ORDER BY attempt, seq";

const FLAGS: &str = "SELECT attempt, rule, severity, path, line, message, snippet FROM job_flags \
     WHERE job_id = $1 ORDER BY attempt, seq";

/// Titles of the runs of jobs `$1..=$2`, newest attempt last.
const TITLES: &str = "SELECT title, job_id FROM job_runs \
     WHERE job_id >= $1 AND job_id <= $2 AND title IS NOT NULL ORDER BY job_id, attempt";

const REPOS: &str = "SELECT forge || ' ' || repo, COUNT(*) FROM jobs WHERE repo IS NOT NULL \
     GROUP BY forge, repo ORDER BY forge, repo";

/// Writes `event` for the run `owner` holds of job `id`; false (and nothing written) when it
/// no longer holds the job.
pub(crate) async fn record(
    conn: &mut dyn Conn,
    id: JobId,
    owner: &str,
    event: &RunEvent,
    now: i64,
) -> sqlx::Result<bool> {
    let held = conn
        .fetch_ints(HELD_ATTEMPT, &[Arg::Int(id.0), Arg::Text(owner)])
        .await?;
    let Some(&attempt) = held.first().and_then(|row| row.first()) else {
        return Ok(false);
    };
    let (job, run) = (Arg::Int(id.0), Arg::Int(attempt));
    conn.execute(RUN_START, &[job, run, Arg::Int(now)]).await?;
    match event {
        RunEvent::Phase(phase) => {
            conn.execute(RUN_PHASE, &[job, run, Arg::Text(phase), Arg::Int(now)])
                .await?;
        }
        RunEvent::Target { title, branch } => {
            conn.execute(RUN_TARGET, &[job, run, Arg::Text(title), Arg::Text(branch)])
                .await?;
        }
        RunEvent::Base(sha) => {
            conn.execute(RUN_BASE, &[job, run, Arg::Text(sha)]).await?;
        }
        RunEvent::Checked { commit, flags, .. } => {
            conn.execute(RUN_COMMIT, &[job, run, Arg::Text(commit)])
                .await?;
            conn.execute(RUN_FLAGS_CLEAR, &[job, run]).await?;
            for (seq, flag) in flags.iter().take(MAX_RUN_FLAGS).enumerate() {
                let args = [
                    job,
                    run,
                    Arg::Int(seq as i64 + 1),
                    Arg::Text(&flag.rule),
                    Arg::Text(&flag.severity),
                    Arg::Text(&flag.path),
                    Arg::OptInt(flag.line.map(i64::from)),
                    Arg::Text(&flag.message),
                    Arg::OptText(flag.snippet.as_deref()),
                ];
                conn.execute(RUN_FLAG, &args).await?;
            }
        }
        RunEvent::Published { number, url } => {
            let number = i64::try_from(*number).unwrap_or(i64::MAX);
            let args = [job, run, Arg::Int(number), Arg::Text(url)];
            conn.execute(RUN_PUBLISHED, &args).await?;
        }
        RunEvent::Unjudged(why) => {
            conn.execute(RUN_UNJUDGED, &[job, run, Arg::Text(why)])
                .await?;
        }
    }
    Ok(true)
}

pub(crate) async fn runs(conn: &mut dyn Conn, id: JobId) -> Result<Vec<Run>, StoreError> {
    let corrupt = |reason: &str| StoreError::Corrupt {
        what: format!("job {id}'s runs"),
        reason: reason.to_owned(),
    };
    let attempt = |v: &Value| {
        v.int()
            .and_then(|a| u32::try_from(a).ok())
            .ok_or_else(|| corrupt("an attempt is not a count"))
    };
    let text = |v: &Value| v.text().map(str::to_owned);
    let mut runs = Vec::new();
    for row in conn.fetch_values(RUNS, &[Arg::Int(id.0)]).await? {
        let [
            a,
            started,
            ended,
            title,
            branch,
            base,
            commit,
            number,
            url,
            unjudged,
        ] = row.as_slice()
        else {
            return Err(corrupt("a run has other columns"));
        };
        runs.push(Run {
            attempt: attempt(a)?,
            started_at_ms: started.int().ok_or_else(|| corrupt("no start"))?,
            ended_at_ms: ended.int(),
            title: text(title),
            branch: text(branch),
            base_sha: text(base),
            commit_sha: text(commit),
            pull_request: number
                .int()
                .and_then(|n| u64::try_from(n).ok())
                .zip(text(url)),
            phases: Vec::new(),
            flags: Vec::new(),
            unjudged: text(unjudged),
        });
    }
    for row in conn.fetch_values(PHASES, &[Arg::Int(id.0)]).await? {
        let [a, phase, started] = row.as_slice() else {
            return Err(corrupt("a phase has other columns"));
        };
        let a = attempt(a)?;
        let Some(run) = runs.iter_mut().find(|r| r.attempt == a) else {
            continue;
        };
        run.phases.push(PhaseEntry {
            phase: text(phase).unwrap_or_default(),
            started_at_ms: started
                .int()
                .ok_or_else(|| corrupt("a phase has no start"))?,
        });
    }
    for row in conn.fetch_values(FLAGS, &[Arg::Int(id.0)]).await? {
        let [a, rule, severity, path, line, message, snippet] = row.as_slice() else {
            return Err(corrupt("a flag has other columns"));
        };
        let a = attempt(a)?;
        let Some(run) = runs.iter_mut().find(|r| r.attempt == a) else {
            continue;
        };
        run.flags.push(RunFlag {
            rule: text(rule).unwrap_or_default(),
            severity: text(severity).unwrap_or_default(),
            path: text(path).unwrap_or_default(),
            line: line.int().and_then(|l| u32::try_from(l).ok()),
            message: text(message).unwrap_or_default(),
            snippet: text(snippet),
        });
    }
    Ok(runs)
}

/// The statement for `filter`, with its arguments.
fn list_sql(filter: &JobFilter) -> (String, Vec<Arg<'_>>) {
    let mut sql = String::from(concat!("SELECT ", job_columns!(), " FROM jobs WHERE 1 = 1"));
    let mut args = Vec::new();
    let mut next = |sql: &mut String, condition: &str, arg| {
        args.push(arg);
        sql.push_str(&format!(" AND {condition} ${}", args.len()));
    };
    if let Some(repo) = &filter.repo {
        next(&mut sql, "repo =", Arg::Text(repo));
    }
    if let Some(forge) = filter.forge {
        next(&mut sql, "forge =", Arg::Text(forge.as_str()));
    }
    if let Some(state) = filter.state {
        next(&mut sql, "state =", Arg::Text(state.as_str()));
    }
    if let Some(before) = filter.before {
        next(&mut sql, "id <", Arg::Int(before.0));
    }
    let limit = i64::from(filter.limit.clamp(1, MAX_LISTED));
    args.push(Arg::Int(limit));
    sql.push_str(&format!(" ORDER BY id DESC LIMIT ${}", args.len()));
    (sql, args)
}

pub(crate) async fn list(
    conn: &mut dyn Conn,
    filter: &JobFilter,
) -> Result<Vec<Listed>, StoreError> {
    let (sql, args) = list_sql(filter);
    let jobs: Vec<Job> = conn
        .fetch_jobs(&sql, &args)
        .await?
        .into_iter()
        .map(queries::job_from_row)
        .collect::<Result<_, _>>()?;
    let (Some(newest), Some(oldest)) = (jobs.first(), jobs.last()) else {
        return Ok(Vec::new());
    };
    let titles = conn
        .fetch_keyed(TITLES, &[Arg::Int(oldest.id.0), Arg::Int(newest.id.0)])
        .await?;
    Ok(jobs
        .into_iter()
        .map(|job| Listed {
            // Ordered by attempt: the newest run's title is the last one.
            title: titles
                .iter()
                .rfind(|(_, id)| *id == job.id.0)
                .map(|(title, _)| title.clone()),
            job,
        })
        .collect())
}

pub(crate) async fn repos(conn: &mut dyn Conn) -> Result<Vec<(Forge, String, i64)>, StoreError> {
    let rows = conn.fetch_keyed(REPOS, &[]).await?;
    rows.into_iter()
        .map(|(key, count)| {
            let (forge, repo) = key.split_once(' ').unwrap_or((&key, ""));
            let forge = forge.parse().map_err(|reason| StoreError::Corrupt {
                what: "jobs.forge".to_owned(),
                reason,
            })?;
            Ok((forge, repo.to_owned(), count))
        })
        .collect()
}

#[cfg(test)]
#[path = "runs_tests.rs"]
mod tests;
