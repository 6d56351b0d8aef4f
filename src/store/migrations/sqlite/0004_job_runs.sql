-- What the job page shows of each run of a job, written as the run goes (through the writer,
-- by the runner holding the job's lease): when it began and ended, what it worked on, the
-- phases it went through, and the flags the bot's check gave its change. A retried job has one
-- run per attempt. The log itself stays a file, data_dir/logs/<job>-<attempt>.log.
-- Keep this file and ../postgres/0004_job_runs.sql saying the same thing.

-- The repository a job is about (`owner/name`, GitLab's `group/project`), for the job list's
-- filter: NULL for a job about none (an installation). Older jobs take it from their target
-- (`forge:owner/name#number`).
ALTER TABLE jobs ADD COLUMN repo TEXT;
UPDATE jobs SET repo = substr(target, instr(target, ':') + 1, instr(target, '#') - instr(target, ':') - 1)
    WHERE target IS NOT NULL AND instr(target, ':') > 0 AND instr(target, '#') > instr(target, ':');
CREATE INDEX jobs_by_repo ON jobs (repo, id);

CREATE TABLE job_runs (
    job_id INTEGER NOT NULL REFERENCES jobs (id),
    attempt INTEGER NOT NULL,
    started_at_ms INTEGER NOT NULL,
    -- When the run's outcome was recorded; NULL while it runs, or when its lease ran out.
    ended_at_ms INTEGER,
    -- The issue's or pull request's title, as the forge gave it when the run began.
    title TEXT,
    branch TEXT,
    -- The commit the worker started from, then the bot's commit of its change: the flags'
    -- links point into it.
    base_sha TEXT,
    commit_sha TEXT,
    pull_request_number INTEGER,
    pull_request_url TEXT,
    PRIMARY KEY (job_id, attempt)
);

-- Each phase as it began; a phase lasts until the next one begins, the last one until the run
-- ended.
CREATE TABLE job_phases (
    job_id INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    phase TEXT NOT NULL,
    started_at_ms INTEGER NOT NULL,
    PRIMARY KEY (job_id, attempt, seq),
    FOREIGN KEY (job_id, attempt) REFERENCES job_runs (job_id, attempt)
);

-- The review flags of the run's change, in the detector's order. `path` as the detector shows
-- it (invalid UTF-8 as U+FFFD); `line` NULL for a flag on a whole file.
CREATE TABLE job_flags (
    job_id INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    rule TEXT NOT NULL,
    severity TEXT NOT NULL,
    path TEXT NOT NULL,
    line INTEGER,
    message TEXT NOT NULL,
    snippet TEXT,
    PRIMARY KEY (job_id, attempt, seq),
    FOREIGN KEY (job_id, attempt) REFERENCES job_runs (job_id, attempt)
);
