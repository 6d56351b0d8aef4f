//! `cargo bench --bench review`: what verifying an agent's pull request costs beyond the time
//! of the repository's own tests, with the environment kept.
//!
//! `forgeward serve` runs as a process against the fake forge and a local bare remote (the world
//! of the end-to-end tests), in bubblewrap. The repository is a Python project of
//! `FORGEWARD_BENCH_TESTS` tests (default 100), each taking 10 ms, so the suite itself takes
//! about a second. An agent's pull request (its branch named as Copilot's are) is opened and
//! checked once, which prepares and keeps the environment and the base's run; that check is not
//! counted. Then each measured push to the pull request (an honest change of the code) is
//! delivered as a `synchronize`, and the time from the delivery's 2xx to the `forgeward` status
//! on its head is taken: the check fetches, runs the detector and verifies — two runs of the
//! suite in the sandbox (the change, and the change with the base's tests put back; the base's
//! run is the kept one). Beside it, the suite's own time is measured on the host: the same
//! `python3 -m pytest` in a checkout of the head, twice. The overhead is the check's median less
//! the two runs' median. Reports medians of `FORGEWARD_BENCH_RUNS` pushes (default 5); it never
//! fails on timings.

#[allow(unused_imports)] // The tests use more of it than the bench.
#[path = "../tests/integration/fake_forge/mod.rs"]
mod fake_forge;
#[path = "../tests/integration/util.rs"]
mod util;
#[path = "../tests/integration/world.rs"]
mod world;

use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use world::{World, pull_request_delivery};

const BRANCH: &str = "copilot/speed-up";

/// The host's `PATH` for the suite's own time: the system's directories, which the sandbox
/// binds.
const SYSTEM_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

fn calc(version: usize) -> String {
    format!("VERSION = {version}\n\n\ndef add(a, b):\n    return a + b\n")
}

fn tests(n: usize) -> String {
    let mut out = String::from("import time\n\nfrom calc import add\n\n");
    for i in 0..n {
        out.push_str(&format!(
            "\ndef test_add_{i}():\n    time.sleep(0.01)\n    assert add({i}, 1) == {}\n",
            i + 1
        ));
    }
    out
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let runs = env_or("FORGEWARD_BENCH_RUNS", 5).max(1);
    let count = env_or("FORGEWARD_BENCH_TESTS", 100);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let (checks, suites) = runtime.block_on(measure(runs, count));
    let (check, suite) = (median(checks), median(suites));
    println!(
        "an agent's pull request, verified with a kept environment ({count} tests, {runs} pushes, medians)"
    );
    println!("| check (2xx to status) | the suite's two runs on the host | overhead |");
    println!("|---|---|---|");
    println!(
        "| {} ms | {} ms | {} ms ({:.2}×) |",
        check.as_millis(),
        suite.as_millis(),
        check.saturating_sub(suite).as_millis(),
        check.as_secs_f64() / suite.as_secs_f64().max(1e-9)
    );
}

/// The checks' times, 2xx to status, and the suite's own time for two runs on the host.
async fn measure(runs: usize, count: usize) -> (Vec<Duration>, Vec<Duration>) {
    let suite = tests(count);
    let files = [
        ("calc.py", calc(0)),
        ("tests/test_calc.py", suite.clone()),
        ("requirements.txt", "pytest\n".to_owned()),
    ];
    let files: Vec<(&str, &str)> = files.iter().map(|(p, c)| (*p, c.as_str())).collect();
    let mut world = World::start("true", "bwrap", &files, &[]).await;
    let main = world.remote_branch("main").expect("main");
    let mut head = world.push_pull_request(8, "main", BRANCH, &[("calc.py", &calc(1))]);
    world
        .repo
        .branch("main", &main)
        .branch(BRANCH, &head)
        .pull(8, BRANCH, "main")
        .pull_author(8, "copilot-swe-agent[bot]");
    let body = pull_request_delivery(&world.repo, "opened", 8, BRANCH, &head, &main);
    world
        .bot
        .deliver_event("pull_request", body, "bench-review-0")
        .await;
    status(&mut world, &head, 1).await;

    let mut checks = Vec::new();
    for run in 1..=runs {
        let next = world.push_pull_request(8, &head, BRANCH, &[("calc.py", &calc(run + 1))]);
        world.repo.push(8, &next);
        let body = pull_request_delivery(&world.repo, "synchronize", 8, BRANCH, &next, &main);
        let acked = world
            .bot
            .deliver_event("pull_request", body, &format!("bench-review-{run}"))
            .await;
        status(&mut world, &next, run + 1).await;
        let done = SystemTime::now();
        checks.push(done.duration_since(acked).unwrap_or(Duration::ZERO));
        head = next;
    }
    let _ = world.forge.review_flags(&world.repo, 8);
    let _ = world.forge.labels(&world.repo, 8);

    // The suite on the host, in a checkout of the last head, as often as a check runs it.
    let checkout = tempfile::tempdir().expect("a temporary directory");
    let cloned = Command::new("git")
        .args(["clone", "-q", "--branch", BRANCH])
        .arg(&world.bare)
        .arg(checkout.path())
        .status()
        .expect("git clone");
    assert!(cloned.success(), "cloning the remote failed");
    let mut suites = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        for _ in 0..2 {
            let ran = Command::new("python3")
                .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
                .current_dir(checkout.path())
                // The system's Python, as the sandbox has it, not one of the user's.
                .env("PATH", SYSTEM_PATH)
                .output()
                .expect("python3 -m pytest");
            assert!(
                ran.status.success(),
                "the suite failed on the host: {}{}",
                String::from_utf8_lossy(&ran.stdout),
                String::from_utf8_lossy(&ran.stderr)
            );
        }
        suites.push(started.elapsed());
    }
    (checks, suites)
}

/// Waits for a passing `forgeward` status on `sha`, `jobs` jobs finished.
async fn status(world: &mut World, sha: &str, jobs: usize) {
    let what = format!("no final status on {sha}");
    let state = util::eventually(&what, Duration::from_secs(300), async || {
        let finished = world.bot.drain().matches("job finished").count();
        if let Some(status) = world.forge.commit_status(&world.repo, sha)
            && status.state != "pending"
            && finished >= jobs
        {
            return Ok(status);
        }
        Err(world.bot.drain().to_owned())
    })
    .await;
    assert!(
        state.state == "success" && state.description.contains("pass on the change"),
        "the check did not verify and pass: {state:?}"
    );
}
