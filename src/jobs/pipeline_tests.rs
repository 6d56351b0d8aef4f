//! The pipeline's own logic, in process: a forge double that records each call, a sandbox whose
//! worker writes files, a real SQLite store and runner, a bare repository on disk. Who may
//! trigger a job, what a forge's hiccup or refusal does to it, and in which order a change is
//! published — each in well under a second.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::config::server::{Secrets, Settings};
use crate::forge::api::{CheckConclusion, Issue, Permission};
use crate::forge::{Actor, ForgeErrorKind, Repo, RepoName};
use crate::jobs::testing::{FakeSandbox, ForgeDouble, bare_repository};
use crate::jobs::{RunnerConfig, run_workers};
use crate::store::testing::{Backend, TestDb, enqueue};
use crate::store::{JobId, JobState, Store};

const REPO: &str = "acme/calc";
const MAINTAINER: &str = "maintainer";

/// The base: a function and its test.
const BASE: &[(&str, &str)] = &[
    ("calc.py", "def add(a, b):\n    return a - b\n"),
    (
        "tests/test_calc.py",
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
    ),
];

/// A worker that cannot fix `add` and skips its test instead.
fn saboteur() -> FakeSandbox {
    FakeSandbox {
        files: vec![(
            "tests/test_calc.py",
            "import pytest\nfrom calc import add\n\n\n@pytest.mark.skip(reason=\"flaky\")\ndef test_add():\n    assert add(2, 2) == 4\n",
        )],
        hang: false,
    }
}

/// A worker that fixes `add`.
fn honest() -> FakeSandbox {
    FakeSandbox {
        files: vec![("calc.py", "def add(a, b):\n    return a + b\n")],
        hang: false,
    }
}

struct Bench {
    _dir: tempfile::TempDir,
    _db: TestDb,
    store: Store,
    forge: Arc<ForgeDouble>,
    pipeline: Arc<Pipeline>,
}

async fn bench(sandbox: FakeSandbox) -> Bench {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let remote = bare_repository(dir.path(), BASE);
    let forge = Arc::new(ForgeDouble::new(Forge::GitHub, remote));
    {
        let mut state = forge.state();
        state
            .permissions
            .insert(MAINTAINER.to_owned(), Permission::Write);
        state
            .permissions
            .insert("reader".to_owned(), Permission::Read);
        state.issues.insert(
            1,
            Issue {
                number: Number(1),
                title: "add is wrong".to_owned(),
                body: "add(2, 2) is 0".to_owned(),
                web_url: format!("https://forge.example/{REPO}/issues/1"),
            },
        );
    }
    let mut config = crate::jobs::setup::local_pipeline_config(
        &Settings::default(),
        &Secrets::default(),
        dir.path().join("data"),
    )
    .expect("the default settings make a pipeline");
    config.worker.command = vec!["fake".to_owned()];
    // The suites' runs are the verification's own tests; here the sandbox is a double.
    config.verify.enabled = false;
    let forges = Forges {
        github: Some(forge.clone()),
        github_web_url: "https://forge.example".to_owned(),
        ..Forges::default()
    };
    let pipeline = Arc::new(Pipeline::new(forges, Arc::new(sandbox), config));
    let db = TestDb::new(Backend::Sqlite).await;
    let store = db.open().await;
    Bench {
        _dir: dir,
        _db: db,
        store,
        forge,
        pipeline,
    }
}

fn repo() -> Repo {
    Repo {
        forge: Forge::GitHub,
        name: RepoName(REPO.to_owned()),
        id: 1,
    }
}

fn actor(login: &str) -> Actor {
    Actor {
        login: login.to_owned(),
        id: 7,
    }
}

fn labeled(by: &str) -> Event {
    Event::IssueLabeled {
        repo: repo(),
        number: Number(1),
        labels: vec!["forgeward".to_owned()],
        actor: actor(by),
        title: "add is wrong".to_owned(),
        body: String::new(),
    }
}

fn comment(by: &str, body: &str) -> Event {
    Event::Comment {
        repo: repo(),
        number: Number(1),
        thread: Thread::Issue,
        comment_id: 55,
        author: actor(by),
        body: body.to_owned(),
    }
}

impl Bench {
    /// Runs `event`'s job (up to `attempts` tries) until it is final; its last state.
    async fn run(&self, event: &Event, attempts: u32) -> crate::store::Job {
        let id = enqueue(&self.store, "delivery-1", event, attempts).await;
        let config = RunnerConfig {
            owner: "test".to_owned(),
            concurrency: 1,
            checks: 1,
            lease: Duration::from_secs(30),
            poll: Duration::from_millis(10),
            backoff_base: Duration::from_millis(1),
            metrics: None,
        };
        let store = self.store.clone();
        let done = async move {
            loop {
                match store.job(id).await {
                    Ok(Some(job)) if job.state.is_final() => return,
                    _ => tokio::time::sleep(Duration::from_millis(10)).await,
                }
            }
        };
        let run = run_workers(self.store.clone(), self.pipeline.clone(), config, done);
        tokio::time::timeout(Duration::from_secs(60), run)
            .await
            .expect("the job ends within a minute")
            .expect("the runner");
        self.job(id).await
    }

    async fn job(&self, id: JobId) -> crate::store::Job {
        self.store
            .job(id)
            .await
            .expect("the store")
            .expect("the job")
    }

    /// The status comment on issue 1: the one comment carrying the job's marker.
    fn status_comment(&self) -> String {
        let state = self.forge.state();
        let comments = state
            .comments
            .get(&(Thread::Issue, 1))
            .cloned()
            .unwrap_or_default();
        let marked: Vec<_> = comments
            .iter()
            .filter(|c| crate::report::parse_status_marker(&c.body).is_some())
            .collect();
        assert_eq!(marked.len(), 1, "one status comment: {comments:?}");
        marked[0].body.clone()
    }
}

/// Where `name` first comes in `calls`.
fn position(calls: &[String], name: &str) -> usize {
    calls
        .iter()
        .position(|c| c == name)
        .unwrap_or_else(|| panic!("no {name} in {calls:?}"))
}

#[tokio::test]
async fn a_flagged_change_is_pushed_then_proposed_then_marked_then_reviewed() {
    let bench = bench(saboteur()).await;
    let job = bench.run(&labeled(MAINTAINER), 3).await;
    assert_eq!(job.state, JobState::Flagged, "{:?}", job.last_error);
    let calls = bench.forge.call_names();
    assert_eq!(calls.first().map(String::as_str), Some("permission"));
    // The branch is on the forge before its check begins and the pull request is asked for
    // (the double refuses one for a branch it lacks); the check ends, failing, before the flags
    // are posted, so the pull request never looks mergeable while they are, and the label last.
    let order = [
        "git_credentials",
        "start_check",
        "create_pull_request",
        "finish_check",
        "review_flags",
        "post_review",
        "add_labels",
    ];
    let at: Vec<usize> = order.iter().map(|name| position(&calls, name)).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{calls:?}");
    let state = bench.forge.state();
    let pr = &state.pulls[0];
    assert_eq!(pr.head_branch, "forgeward/issue-1");
    assert_eq!(
        Some(pr.head_sha.0.clone()),
        bench.forge.branch_tip("forgeward/issue-1")
    );
    let (on, review) = &state.reviews[0];
    assert_eq!(*on, pr.number.0);
    assert!(
        review
            .flags
            .iter()
            .any(|f| f.path == "tests/test_calc.py" && f.line == Some(5)),
        "the skip marker is flagged on its line: {review:?}"
    );
    let checks = state.finished_checks();
    assert_eq!(checks.len(), 1, "{:?}", state.checks);
    let (sha, check) = &checks[0];
    assert_eq!(
        (sha, check.conclusion),
        (&pr.head_sha, CheckConclusion::Flagged)
    );
    assert!(
        check.flags.iter().any(|f| f.path == "tests/test_calc.py"
            && f.line == Some(5)
            && f.rule == "skip-marker"),
        "{check:?}"
    );
    // The check's summary is the status comment's story, without its marker.
    assert!(
        check.summary.starts_with("### ⚠️ forgeward: flagged"),
        "{}",
        check.summary
    );
    assert!(
        !check.summary.contains("<!-- forgeward:status"),
        "{}",
        check.summary
    );
    assert!(state.labels[&pr.number.0].contains("forgeward:flagged"));
    drop(state);
    assert!(
        bench.status_comment().contains("flag"),
        "{}",
        bench.status_comment()
    );
}

#[tokio::test]
async fn an_honest_change_is_proposed_with_a_passing_status_and_no_review() {
    let bench = bench(honest()).await;
    let job = bench.run(&labeled(MAINTAINER), 3).await;
    assert_eq!(job.state, JobState::Succeeded, "{:?}", job.last_error);
    let calls = bench.forge.call_names();
    assert!(!calls.iter().any(|c| c == "post_review"), "{calls:?}");
    let state = bench.forge.state();
    let checks = state.finished_checks();
    assert_eq!(
        checks[0].1.conclusion,
        CheckConclusion::Passed,
        "{checks:?}"
    );
    assert!(checks[0].1.flags.is_empty());
    assert!(
        !state
            .labels
            .values()
            .any(|labels| labels.contains("forgeward:flagged"))
    );
}

#[tokio::test]
async fn someone_without_write_access_gets_a_reply_and_no_job() {
    let bench = bench(saboteur()).await;
    let job = bench.run(&comment("reader", "/forgeward run"), 3).await;
    assert_eq!(job.state, JobState::Cancelled);
    assert_eq!(
        bench.forge.calls(),
        ["permission reader", "create_comment 1"]
    );
    let state = bench.forge.state();
    let reply = &state.comments[&(Thread::Issue, 1)][0].body;
    assert!(
        reply.starts_with("@reader only people with write access"),
        "{reply}"
    );
}

#[tokio::test]
async fn a_labelled_issue_from_someone_without_write_access_is_not_answered() {
    let bench = bench(saboteur()).await;
    let job = bench.run(&labeled("reader"), 3).await;
    assert_eq!(job.state, JobState::Cancelled);
    assert_eq!(bench.forge.calls(), ["permission reader"]);
}

#[tokio::test]
async fn the_eyes_are_a_courtesy_a_refused_reaction_does_not_stop_the_job() {
    let bench = bench(honest()).await;
    bench.forge.fail(
        "react_eyes",
        [ForgeErrorKind::Forbidden("reactions are off".to_owned())],
    );
    let job = bench.run(&comment(MAINTAINER, "/forgeward run"), 3).await;
    assert_eq!(job.state, JobState::Succeeded, "{:?}", job.last_error);
    let calls = bench.forge.call_names();
    assert_eq!(&calls[..2], ["permission", "react_eyes"]);
    assert!(
        calls.iter().any(|c| c == "create_pull_request"),
        "{calls:?}"
    );
}

#[tokio::test]
async fn a_check_begun_ends_as_an_error_when_its_job_stops_for_good_and_stays_open_for_a_retry() {
    use crate::jobs::testing::Check;
    // Refused for good: the check of the pushed commit ends, saying why.
    let refused = bench(saboteur()).await;
    refused.forge.fail(
        "create_pull_request",
        [ForgeErrorKind::Forbidden(
            "pull requests are off".to_owned(),
        )],
    );
    let job = refused.run(&labeled(MAINTAINER), 3).await;
    assert_eq!(job.state, JobState::Failed, "{:?}", job.last_error);
    let tip = refused
        .forge
        .branch_tip("forgeward/issue-1")
        .expect("pushed");
    let checks: Vec<(String, Check)> = refused
        .forge
        .state()
        .checks
        .iter()
        .map(|(sha, c)| (sha.0.clone(), c.clone()))
        .collect();
    assert_eq!(checks.len(), 2, "{checks:?}");
    assert!(matches!(&checks[0], (sha, Check::Started(_)) if *sha == tip));
    let (sha, Check::Finished(result)) = &checks[1] else {
        panic!("{checks:?}")
    };
    assert_eq!((sha, result.conclusion), (&tip, CheckConclusion::Error));
    assert!(
        result
            .title
            .starts_with("forgeward could not check the change: ")
            && result.title.contains("pull requests are off"),
        "{}",
        result.title
    );

    // A hiccup the job is tried again for: the first try leaves its check open, the second
    // takes it up and ends it once, with the result.
    let retried = bench(saboteur()).await;
    retried
        .forge
        .fail("create_pull_request", [ForgeErrorKind::Server(502)]);
    let job = retried.run(&labeled(MAINTAINER), 3).await;
    assert_eq!(job.state, JobState::Flagged, "{:?}", job.last_error);
    let state = retried.forge.state();
    let ends: Vec<CheckConclusion> = state
        .finished_checks()
        .into_iter()
        .map(|(_, r)| r.conclusion)
        .collect();
    assert_eq!(ends, [CheckConclusion::Flagged], "{:?}", state.checks);
}

#[tokio::test]
async fn a_check_the_forge_would_not_begin_still_ends_with_the_result() {
    let bench = bench(saboteur()).await;
    bench.forge.fail(
        "start_check",
        [ForgeErrorKind::Invalid(
            "No commit found for SHA".to_owned(),
        )],
    );
    let job = bench.run(&labeled(MAINTAINER), 3).await;
    assert_eq!(job.state, JobState::Flagged, "{:?}", job.last_error);
    assert_eq!(job.attempts, 1);
    let ends: Vec<CheckConclusion> = bench
        .forge
        .state()
        .finished_checks()
        .into_iter()
        .map(|(_, r)| r.conclusion)
        .collect();
    assert_eq!(ends, [CheckConclusion::Flagged]);
}

#[tokio::test]
async fn a_forge_hiccup_retries_the_job_which_makes_one_pull_request_and_one_status_comment() {
    let bench = bench(saboteur()).await;
    bench
        .forge
        .fail("create_pull_request", [ForgeErrorKind::Server(502)]);
    let job = bench.run(&labeled(MAINTAINER), 3).await;
    assert_eq!(job.state, JobState::Flagged, "{:?}", job.last_error);
    assert_eq!(job.attempts, 2);
    let calls = bench.forge.call_names();
    assert_eq!(
        calls.iter().filter(|c| *c == "create_pull_request").count(),
        2,
        "{calls:?}"
    );
    assert_eq!(bench.forge.state().pulls.len(), 1);
    // The second attempt found the first one's status comment by its marker.
    assert_eq!(
        calls.iter().filter(|c| *c == "create_comment").count(),
        1,
        "{calls:?}"
    );
    bench.status_comment();
}

#[tokio::test]
async fn refused_credentials_fail_the_job_at_once_and_the_status_comment_says_why() {
    let bench = bench(saboteur()).await;
    bench
        .forge
        .fail("git_credentials", [ForgeErrorKind::Unauthorized]);
    let job = bench.run(&labeled(MAINTAINER), 3).await;
    assert_eq!(job.state, JobState::Failed);
    assert_eq!(job.attempts, 1, "a refusal is not retried");
    let calls = bench.forge.call_names();
    assert!(
        !calls.iter().any(|c| c == "create_pull_request"),
        "{calls:?}"
    );
    assert!(bench.forge.branch_tip("forgeward/issue-1").is_none());
    let status = bench.status_comment();
    assert!(status.contains("unauthorized"), "{status}");
    assert!(!status.contains("double-token"), "{status}");
}

#[tokio::test]
async fn a_rate_limit_that_outlasts_the_client_retries_the_job_later() {
    let bench = bench(honest()).await;
    bench.forge.fail(
        "issue",
        [ForgeErrorKind::RateLimited {
            retry_after: Duration::from_secs(900),
        }],
    );
    let job = bench.run(&labeled(MAINTAINER), 3).await;
    assert_eq!(job.state, JobState::Succeeded, "{:?}", job.last_error);
    assert_eq!(job.attempts, 2);
}

#[tokio::test]
async fn a_cancel_with_nothing_running_says_so() {
    let bench = bench(saboteur()).await;
    let job = bench
        .run(&comment(MAINTAINER, "/forgeward cancel"), 3)
        .await;
    assert_eq!(job.state, JobState::Succeeded);
    let calls = bench.forge.calls();
    assert_eq!(
        calls,
        ["permission maintainer", "react_eyes 55", "create_comment 1"]
    );
    let state = bench.forge.state();
    assert_eq!(
        state.comments[&(Thread::Issue, 1)][0].body,
        "forgeward: there is no job running here to cancel."
    );
}

#[tokio::test]
async fn a_worker_jobs_run_is_recorded_for_its_page() {
    let bench = bench(saboteur()).await;
    let job = bench.run(&labeled(MAINTAINER), 3).await;
    assert_eq!(job.state, JobState::Flagged, "{:?}", job.last_error);
    let runs = bench.store.runs(job.id).await.expect("the runs");
    assert_eq!(runs.len(), 1, "{runs:?}");
    let run = &runs[0];
    let phases: Vec<&str> = run.phases.iter().map(|p| p.phase.as_str()).collect();
    assert_eq!(
        phases,
        [
            "cloning",
            "preparing sandbox",
            "working",
            "checking",
            "verifying",
            "publishing"
        ],
        "each phase as the driver entered it, then the caller's publishing"
    );
    assert!(
        run.ended_at_ms
            .is_some_and(|end| end >= run.phases[5].started_at_ms)
    );
    assert_eq!(run.branch.as_deref(), Some("forgeward/issue-1"));
    assert!(run.title.is_some(), "{run:?}");
    let state = bench.forge.state();
    let pr = &state.pulls[0];
    assert_eq!(run.commit_sha.as_deref(), Some(pr.head_sha.0.as_str()));
    assert_eq!(
        run.pull_request.as_ref().map(|(n, _)| *n),
        Some(pr.number.0)
    );
    assert!(
        run.flags.iter().any(|f| f.rule == "skip-marker"
            && f.path == "tests/test_calc.py"
            && f.line == Some(5)),
        "{:?}",
        run.flags
    );
}
