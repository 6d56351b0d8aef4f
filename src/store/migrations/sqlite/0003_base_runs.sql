-- The base's own test results (independent verification), kept once per base commit and way of
-- running them: the next job on the same base runs only the worker's two suites. `key` is a
-- SHA-256 over the forge, the repository, the base commit, the runner's command and report, and
-- the sandbox; `results` the per-test outcomes as JSON. Rows older than 30 days are pruned as
-- new ones are written.
-- Keep this file and ../postgres/0003_base_runs.sql saying the same thing.
CREATE TABLE base_runs (
    key TEXT PRIMARY KEY,
    results TEXT NOT NULL,
    duration_ms INTEGER NOT NULL,
    created_at_ms INTEGER NOT NULL
);
CREATE INDEX base_runs_by_age ON base_runs (created_at_ms);
