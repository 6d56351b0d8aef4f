-- Why a run's verification could not judge the change (no runner, a suite that collected no
-- test, a runner missing in the sandbox); NULL when it judged, or did not verify. A job whose
-- tests could not be judged ends `succeeded` without flags, and is never shown as ready for
-- review: the page and the status comment say the tests could not be run, and why.
-- Keep this file and ../postgres/0006_run_unjudged.sql saying the same thing.
ALTER TABLE job_runs ADD COLUMN unjudged TEXT;
