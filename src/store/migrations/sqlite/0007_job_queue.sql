-- Which of a runner's queues a job waits in: 'work' (a worker job: the trigger label, a command
-- in a comment) or 'check' (a pull request's own check, which may run its tests). A runner
-- claims from each up to its own concurrency, so a burst of pull-request checks never keeps a
-- worker job waiting. Jobs recorded before this column are worker jobs' turn.
-- Keep this file and ../postgres/0007_job_queue.sql saying the same thing.
ALTER TABLE jobs ADD COLUMN queue TEXT NOT NULL DEFAULT 'work' CHECK (queue IN ('work', 'check'));
