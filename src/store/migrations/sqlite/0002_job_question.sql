-- The question a worker asked instead of making the change (`/job-out/question.md`, capped),
-- kept with the job's outcome so that the next `/forgeward run` on the same target can hand it
-- back to the worker with the answer. NULL: the worker asked nothing.
-- Keep this file and ../postgres/0002_job_question.sql saying the same thing.
ALTER TABLE jobs ADD COLUMN question TEXT;
