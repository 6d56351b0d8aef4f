-- Webhook deliveries as the forge sent them, and the jobs they produced.
-- Times are milliseconds since the epoch, computed by the application (the same on both backends).
-- Keep this file and ../sqlite/0001_deliveries_and_jobs.sql saying the same thing.
-- JSON is kept as TEXT, as on SQLite: the application writes and reads it whole.

CREATE TABLE deliveries (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    forge TEXT NOT NULL,
    delivery_id TEXT NOT NULL,
    -- The forge's event name (X-GitHub-Event, X-Gitlab-Event).
    event TEXT NOT NULL,
    -- The headers that matter, as a JSON object.
    headers TEXT NOT NULL,
    body BYTEA NOT NULL,
    received_at_ms BIGINT NOT NULL,
    -- A redelivery is recognised by its id, per forge.
    UNIQUE (forge, delivery_id)
);

-- Identity columns: job ids are never reused, so they order jobs first-in first-out and can be
-- quoted in status comments.
CREATE TABLE jobs (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    forge TEXT NOT NULL,
    delivery_id TEXT NOT NULL,
    state TEXT NOT NULL
        CHECK (state IN ('queued', 'running', 'succeeded', 'flagged', 'failed', 'cancelled', 'dead')),
    phase TEXT NOT NULL,
    -- Event::target(): jobs of one target run one at a time. NULL: no such constraint.
    target TEXT,
    -- The domain Event as JSON.
    event TEXT NOT NULL,
    attempts BIGINT NOT NULL,
    max_attempts BIGINT NOT NULL,
    lease_owner TEXT,
    lease_expires_at_ms BIGINT,
    next_run_at_ms BIGINT NOT NULL,
    last_error TEXT,
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL,
    FOREIGN KEY (forge, delivery_id) REFERENCES deliveries (forge, delivery_id),
    -- A running job is held by exactly one lease; no other job holds one.
    CHECK ((state = 'running') = (lease_owner IS NOT NULL AND lease_expires_at_ms IS NOT NULL))
);

-- One running job per target, whatever a claim query gets wrong.
CREATE UNIQUE INDEX jobs_one_running_per_target ON jobs (target) WHERE state = 'running';
-- The queue in claim order (state = 'queued', by id), the running jobs and their leases, and
-- counts by state for /metrics.
CREATE INDEX jobs_by_state ON jobs (state, id);
-- "Is an earlier job of this target queued, or one running?"
CREATE INDEX jobs_open_by_target ON jobs (target, id) WHERE state IN ('queued', 'running');
