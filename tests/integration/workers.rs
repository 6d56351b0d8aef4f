//! Two `forgeward worker` processes on one PostgreSQL store: labelled issues queued through a
//! `forgeward serve --no-worker`, run by both workers through real bubblewrap sandboxes against
//! the fake forge and a local bare remote.
//!
//! What a user would notice, and what is checked: no job ever runs in two places at once; a
//! worker killed with SIGKILL mid-job leaves nothing of its sandbox running, and the other worker
//! finishes that job once its lease has run out (one pull request, one status comment, the branch
//! made by the surviving run); SIGTERM lets a worker finish the job it is running and exit 0.
//!
//! The witness (`witness`): the scripted worker, inside its sandbox, reports to the test for as
//! long as it runs, so the test sees every run of every job, killed ones included, on the same
//! clock as the store's leases. `harness` has the processes, /proc and the database.

pub(crate) mod harness;
mod witness;

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use forgeward::forge::api::Permission;
use forgeward::store::{Job, JobState, Store};
use tempfile::TempDir;

use crate::fake_forge::{FakeForge, GITHUB_TOKEN, RepoHandle};
use crate::util::{FORGEWARD, eventually};
use crate::world::{REPO, SECRET, labeled_delivery, remote, sign};
use harness::{Database, Process, alive, comm, descendants};
use witness::{Run, Witness};

/// Issues labelled at the start: more than the two workers' four slots, so that both claim
/// concurrently and some jobs wait for a slot.
const ISSUES: u64 = 6;
/// The issue labelled last, for the SIGTERM part.
const LAST_ISSUE: u64 = ISSUES + 1;
/// Short, so that a killed worker's job comes back quickly; long enough that heartbeats (every
/// third of it) keep a live worker's lease on a busy machine.
const LEASE: &str = "4s";

/// The worker: reports to the witness, works for a while, leaves a file naming its run.
const SCRIPT: &str = r#"set -eu
exec 3<>"/dev/tcp/127.0.0.1/$WITNESS_PORT"
attempt=$(sed -n 's/.*"attempt": *\([0-9][0-9]*\).*/\1/p' /job/job.json)
echo "start $FORGEWARD_JOB_ID $attempt" >&3
sleep 3
echo "job $FORGEWARD_JOB_ID attempt $attempt" > run.txt
echo "Recorded the run." > /job-out/summary.md
echo "end" >&3
"#;

async fn deliver(url: &str, repo: &RepoHandle, number: u64) {
    let body = labeled_delivery(repo, number);
    let response = reqwest::Client::new()
        .post(format!("{url}/webhooks/github"))
        .header("X-GitHub-Event", "issues")
        .header("X-GitHub-Delivery", format!("workers-{number}"))
        .header("X-Hub-Signature-256", sign(&body))
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .expect("delivering the webhook");
    assert_eq!(response.status().as_u16(), 202, "issue {number} not queued");
}

/// The environment every `forgeward` process here shares: the store and the forge.
fn forgeward(subcommand: &[&str], data: &Path, store: &str, forge: &FakeForge) -> Command {
    let mut cmd = Command::new(FORGEWARD);
    cmd.args(subcommand)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("FORGEWARD_SERVER_DATA_DIR", data)
        .env("FORGEWARD_STORE_URL", store)
        .env("FORGEWARD_GITHUB_TOKEN", GITHUB_TOKEN)
        .env("FORGEWARD_GITHUB_API_URL", forge.url())
        .env("FORGEWARD_GITHUB_WEB_URL", "https://github.example")
        .env("FORGEWARD_GITHUB_REDELIVERY_INTERVAL", "0s")
        .env("RUST_LOG", "info");
    cmd
}

/// A `forgeward worker` named `name`, its sandboxes reporting to `witness_port`.
fn worker(
    name: &'static str,
    data: &Path,
    store: &str,
    forge: &FakeForge,
    remotes: &Path,
    witness_port: u16,
) -> Process {
    let mut cmd = forgeward(&["worker"], data, store, forge);
    cmd.env(
        "FORGEWARD_GITHUB_GIT_URL",
        format!("file://{}", remotes.display()),
    )
    .env("FORGEWARD_JOBS_LEASE", LEASE)
    .env("FORGEWARD_JOBS_CONCURRENCY", "2")
    .env(
        "FORGEWARD_WORKER_COMMAND",
        format!("[\"/bin/bash\", \"-c\", '''{SCRIPT}''']"),
    )
    .env("FORGEWARD_WORKER_NAME", name)
    .env("FORGEWARD_WORKER_ENV", "[\"WITNESS_PORT\"]")
    .env("WITNESS_PORT", witness_port.to_string())
    .env("FORGEWARD_SANDBOX_BACKEND", "bwrap")
    // The script reaches the witness on the host's loopback.
    .env("FORGEWARD_SANDBOX_NETWORK", "full")
    .env("FORGEWARD_SANDBOX_TIMEOUT", "60s")
    .env("FORGEWARD_SANDBOX_MEMORY", "2G")
    .env("FORGEWARD_SANDBOX_DISK", "512M");
    Process::spawn(name, cmd)
}

fn issue_of(job: &Job) -> u64 {
    let target = job.target.as_deref().expect("a target");
    let (_, number) = target.rsplit_once('#').expect("an issue target");
    number.parse().expect("an issue number")
}

async fn jobs(store: &Store) -> Vec<Job> {
    store.jobs().await.expect("reading the jobs")
}

/// The processes' logs, each under its name.
fn logs_of(processes: &[&Process]) -> String {
    let logs: Vec<String> = processes
        .iter()
        .map(|p| format!("--- {}:\n{}", p.name, p.log()))
        .collect();
    logs.join("\n")
}

/// Waits until every job is final.
async fn all_final(
    store: &Store,
    witness: &Witness,
    within: Duration,
    logs: &[&Process],
) -> Vec<Job> {
    eventually("jobs not done", within, async || {
        witness.no_overlap();
        let jobs = jobs(store).await;
        if jobs.iter().all(|j| j.state.is_final()) {
            return Ok(jobs);
        }
        Err(format!("{jobs:#?}\n{}", logs_of(logs)))
    })
    .await
}

/// A run of `runner`'s that is going on now, waiting for one.
async fn running_on(witness: &Witness, runner: &str, within: Duration, logs: &[&Process]) -> Run {
    let what = format!("{runner} ran no job");
    eventually(&what, within, async || {
        witness.no_overlap();
        if let Some(run) = witness
            .runs()
            .into_iter()
            .find(|r| r.runner == runner && r.ended_ms.is_none())
        {
            return Ok(run);
        }
        Err(logs_of(logs))
    })
    .await
}

/// The branch's tip on the remote: its commit message and `run.txt`.
fn pushed(bare: &Path, branch: &str) -> (String, String, String) {
    let repo = git2::Repository::open_bare(bare).expect("the remote");
    let commit = repo
        .revparse_single(&format!("refs/heads/{branch}"))
        .and_then(|o| o.peel_to_commit())
        .unwrap_or_else(|_| panic!("{branch} was not pushed"));
    let entry = commit
        .tree()
        .and_then(|t| t.get_path(Path::new("run.txt")))
        .expect("run.txt on the branch");
    let blob = repo.find_blob(entry.id()).expect("a blob");
    (
        commit.id().to_string(),
        commit.message().unwrap_or("").to_owned(),
        String::from_utf8_lossy(blob.content()).into_owned(),
    )
}

/// What a finished job left on the forge and the remote: one status comment saying ready for
/// review, one pull request from its branch, a green commit status, and the commit of the run
/// the witness saw finish last.
fn check_published(forge: &FakeForge, repo: &RepoHandle, bare: &Path, job: &Job, last: &Run) {
    let issue = issue_of(job);
    let comments = forge.comments(repo, issue);
    assert_eq!(comments.len(), 1, "issue {issue}: {comments:#?}");
    let status = forge
        .status_comment(repo, issue)
        .unwrap_or_else(|| panic!("issue {issue} has no status comment: {comments:#?}"));
    assert!(
        status.body.contains("✅"),
        "issue {issue}:\n{}",
        status.body
    );

    let branch = format!("forgeward/issue-{issue}");
    let (head, message, run) = pushed(bare, &branch);
    assert_eq!(
        run.trim(),
        format!("job {} attempt {}", job.id, job.attempts),
        "issue {issue}: the pushed run"
    );
    assert!(
        message.contains(&format!("the worker {}", last.runner)),
        "issue {issue}: made by {}, says: {message}",
        last.runner
    );
    let pr = forge
        .pull_request_for_branch(repo, &branch)
        .unwrap_or_else(|| panic!("no pull request from {branch}"));
    assert_eq!(pr.head_sha, head, "issue {issue}");
    assert!(
        status.body.contains(&format!("#{}", pr.number)),
        "{}",
        status.body
    );
    let commit_status = forge
        .commit_status(repo, &head)
        .unwrap_or_else(|| panic!("issue {issue}: no commit status"));
    assert_eq!(commit_status.state, "success", "{commit_status:?}");
    assert!(forge.review_flags(repo, pr.number).is_empty());
    assert!(forge.labels(repo, pr.number).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn two_workers_share_the_queue_and_a_killed_ones_job_is_finished_by_the_other() {
    let db = Database::create().await;
    let forge = FakeForge::start().await;
    let dirs: Vec<TempDir> = (0..4)
        .map(|_| tempfile::tempdir().expect("tempdir"))
        .collect();
    let (remotes, serve_data, data_a, data_b) = (
        dirs[0].path(),
        dirs[1].path(),
        dirs[2].path(),
        dirs[3].path(),
    );
    // No tests to run: verification is off, so a finished job is ready for review.
    let bare = remote(
        remotes,
        &[
            ("README.md", "# widgets\n"),
            (".forgeward.toml", "[verify]\nenabled = false\n"),
        ],
    );
    let mut repo = forge
        .github_repo(REPO)
        .default_branch("main")
        .git_dir(&bare)
        .collaborator("alice", Permission::Write);
    for n in 1..=LAST_ISSUE {
        repo = repo.issue(n, &format!("Record run {n}"), "Leave run.txt behind.");
    }

    // The receiver, queueing into PostgreSQL and running nothing.
    let mut serve = forgeward(&["serve", "--no-worker"], serve_data, &db.url, &forge);
    serve
        .env("FORGEWARD_SERVER_LISTEN", "127.0.0.1:0")
        .env("FORGEWARD_GITHUB_WEBHOOK_SECRET", SECRET);
    let mut serve = Process::spawn("serve", serve);
    let line = serve
        .line("listening on http://", Duration::from_secs(60))
        .await;
    let url = line[line.find("http://").expect("a URL")..]
        .trim()
        .to_owned();
    for n in 1..=ISSUES {
        deliver(&url, &repo, n).await;
    }
    let store = Store::open(&db.url).await.expect("opening the store");
    let queued = jobs(&store).await;
    assert_eq!(queued.len() as u64, ISSUES);
    assert!(queued.iter().all(|j| j.state == JobState::Queued));

    let witness = Witness::default();
    let port_a = witness.listen("runner-a").await;
    let port_b = witness.listen("runner-b").await;
    let mut a = worker("runner-a", data_a, &db.url, &forge, remotes, port_a);
    let mut b = worker("runner-b", data_b, &db.url, &forge, remotes, port_b);
    let logs = |a: &Process, b: &Process| format!("--- a:\n{}\n--- b:\n{}", a.log(), b.log());

    // Kill runner-a while its worker is in the middle of a job.
    let victim = running_on(&witness, "runner-a", Duration::from_secs(60), &[&a, &b]).await;
    // Its processes now: bubblewrap, and under it the worker, asleep.
    let what = "runner-a's sandbox is not among its processes";
    let tree = eventually(what, Duration::from_secs(5), async || {
        let tree = descendants(a.pid() as i32);
        let names: HashSet<String> = tree.iter().filter_map(|&(pid, _)| comm(pid)).collect();
        if names.contains("bwrap") && names.contains("sleep") {
            return Ok(tree);
        }
        Err(format!("{names:?}"))
    })
    .await;
    a.signal(libc::SIGKILL);
    a.exit(Duration::from_secs(10)).await;
    let owner = format!(":{}:", a.pid());
    // Its leases as it left them, once a claim it sent as it died would have been committed.
    // Heartbeats come every third of the lease, so they expire 2/3 of a lease after the kill
    // at the earliest: runner-b cannot have taken them back yet.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let held: BTreeMap<i64, i64> = jobs(&store)
        .await
        .iter()
        .filter(|j| {
            j.state == JobState::Running
                && j.lease_owner.as_deref().is_some_and(|o| o.contains(&owner))
        })
        .map(|j| (j.id.0, j.lease_expires_at_ms.expect("a lease")))
        .collect();
    assert!(
        held.contains_key(&victim.job),
        "job {} ran on runner-a, the store says {held:?}; {}",
        victim.job,
        logs(&a, &b)
    );

    // Nothing of its sandboxes is left: bubblewrap died with it, and the worker with bubblewrap.
    let what = "runner-a's processes outlived it";
    eventually(what, Duration::from_secs(10), async || {
        let left = alive(&tree);
        let open = witness
            .runs()
            .into_iter()
            .any(|r| r.runner == "runner-a" && r.ended_ms.is_none());
        if left.is_empty() && !open {
            return Ok(());
        }
        Err(format!("{left:?}, its worker still reporting: {open}"))
    })
    .await;

    let done = all_final(&store, &witness, Duration::from_secs(90), &[&b, &serve]).await;
    witness.no_overlap();
    let runs = witness.runs();
    assert_eq!(done.len() as u64, ISSUES);
    for job in &done {
        let of_job: Vec<&Run> = runs.iter().filter(|r| r.job == job.id.0).collect();
        assert_eq!(
            job.state,
            JobState::Succeeded,
            "job {}: {job:#?}\n{}",
            job.id,
            logs(&a, &b)
        );
        let last = of_job
            .iter()
            .max_by_key(|r| r.started_ms)
            .unwrap_or_else(|| panic!("job {} never ran: {runs:#?}", job.id));
        assert!(last.finished, "job {}: {of_job:#?}", job.id);
        assert_eq!(last.attempt, job.attempts, "job {}: {of_job:#?}", job.id);
        if let Some(&expired_at) = held.get(&job.id.0) {
            // Held by runner-a when it died: run once more, by runner-b, after the lease ran out.
            assert_eq!(job.attempts, 2, "job {}: {of_job:#?}", job.id);
            let error = job.last_error.as_deref().unwrap_or("");
            assert!(
                error.contains("the lease of") && error.contains(&owner),
                "job {}: {error}",
                job.id
            );
            assert_eq!(last.runner, "runner-b", "job {}: {of_job:#?}", job.id);
            assert!(
                last.started_ms > expired_at,
                "job {} restarted at {} before its lease expired at {expired_at}",
                job.id,
                last.started_ms
            );
        } else {
            assert_eq!(
                job.attempts,
                1,
                "job {}: {job:#?} {of_job:#?}\nheld by runner-a: {held:?}\n{}",
                job.id,
                logs(&a, &b)
            );
        }
        // The worker started once per attempt, except on an attempt killed before its sandbox.
        assert!(
            of_job.len() as u32 <= job.attempts,
            "job {}: {of_job:#?}",
            job.id
        );
        check_published(&forge, &repo, &bare, job, last);
    }
    let killed: Vec<&Run> = runs
        .iter()
        .filter(|r| r.runner == "runner-a" && !r.finished)
        .collect();
    assert!(
        killed.iter().any(|r| r.job == victim.job),
        "the killed run: {runs:#?}"
    );
    assert!(
        runs.iter()
            .any(|r| r.runner == "runner-b" && r.attempt == 1),
        "both runners took jobs from the queue: {runs:#?}"
    );

    // SIGTERM: runner-b finishes the job it is running, then exits 0.
    deliver(&url, &repo, LAST_ISSUE).await;
    let last = running_on(&witness, "runner-b", Duration::from_secs(60), &[&b]).await;
    let tree = descendants(b.pid() as i32);
    b.signal(libc::SIGTERM);
    let status = b.exit(Duration::from_secs(60)).await;
    assert_eq!(status.code(), Some(0), "{}", b.log());
    let job = store
        .job(forgeward::store::JobId(last.job))
        .await
        .expect("reading the job")
        .expect("the job");
    assert_eq!(issue_of(&job), LAST_ISSUE);
    assert_eq!(job.state, JobState::Succeeded, "{job:#?}\n{}", b.log());
    assert_eq!(job.attempts, 1);
    let run = witness
        .runs()
        .into_iter()
        .find(|r| r.job == last.job)
        .expect("the run");
    assert!(run.finished, "{run:?}");
    check_published(&forge, &repo, &bare, &job, &run);
    assert!(alive(&tree).is_empty(), "{tree:?}");
    let open: Vec<Job> = jobs(&store)
        .await
        .into_iter()
        .filter(|j| !j.state.is_final())
        .collect();
    assert!(open.is_empty(), "left behind: {open:#?}");
    witness.no_overlap();

    serve.signal(libc::SIGTERM);
    assert_eq!(serve.exit(Duration::from_secs(30)).await.code(), Some(0));
    let distinct: HashSet<i64> = witness.runs().iter().map(|r| r.job).collect();
    assert_eq!(distinct.len() as u64, LAST_ISSUE);
}
