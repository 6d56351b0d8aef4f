//! `cargo bench --bench pipeline`: from the webhook's 2xx to the worker process running, with a
//! warm mirror, for each sandbox backend.
//!
//! `forgeward serve` runs as a process against the fake forge and a local bare remote (the same
//! world as the end-to-end tests). For each run a signed `issues` `labeled` delivery is sent;
//! the moment its `202` arrives is taken on the host's clock. The worker's first act is to write
//! that clock (`date +%s%N`) into the workspace; the bot commits and pushes it, and the bench
//! reads it from the pushed branch. The first run of each backend warms the mirror (and builds
//! the Docker image) and is not counted. It prints the median, minimum and maximum of the rest
//! next to the target; it never fails on it.
//!
//! Environment knobs (all optional):
//! - `FORGEWARD_BENCH_RUNS`: measured runs per backend (default 9).
//! - `FORGEWARD_BENCH_BACKENDS`: `bwrap`, `docker` or both (default both; Docker needs
//!   `FORGEWARD_TEST_DOCKER_BASE`, printed by `tests/setup/docker.sh`).

#[allow(unused_imports)] // The tests use more of it than the bench.
#[path = "../tests/integration/fake_forge/mod.rs"]
mod fake_forge;
#[path = "../tests/integration/util.rs"]
mod util;
#[path = "../tests/integration/world.rs"]
mod world;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use world::{World, labeled_delivery};

/// The target for bubblewrap: the worker is running this soon after the forge got its 2xx.
const TARGET_MS: f64 = 300.0;

/// Writes the host's clock before anything else, then ends.
const WORKER: &str = "date +%s%N > started\n";

const FILES: &[(&str, &str)] = &[("README.md", "# widgets\n")];

fn main() {
    let runs: usize = std::env::var("FORGEWARD_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(9);
    let backends =
        std::env::var("FORGEWARD_BENCH_BACKENDS").unwrap_or_else(|_| "bwrap,docker".into());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    println!("from the webhook's 2xx to the worker running (warm mirror), {runs} runs each");
    println!("| sandbox | median | min | max | target |");
    println!("|---|---|---|---|---|");
    for backend in backends.split(',').map(str::trim).filter(|b| !b.is_empty()) {
        if backend == "docker" && std::env::var("FORGEWARD_TEST_DOCKER_BASE").is_err() {
            println!(
                "| docker | not measured: FORGEWARD_TEST_DOCKER_BASE is not set (tests/setup/docker.sh) | | | |"
            );
            continue;
        }
        let mut samples = runtime.block_on(measure(backend, runs));
        samples.sort_by(f64::total_cmp);
        let median = samples[samples.len() / 2];
        let verdict = if backend == "bwrap" {
            if median <= TARGET_MS {
                "≤ 300 ms: met"
            } else {
                "≤ 300 ms: missed"
            }
        } else {
            "(reported beside bwrap)"
        };
        println!(
            "| {backend} | {median:.0} ms | {:.0} ms | {:.0} ms | {verdict} |",
            samples[0],
            samples[samples.len() - 1]
        );
    }
}

/// Milliseconds from each 2xx to the worker's first instruction, warm-up run excluded.
async fn measure(backend: &str, runs: usize) -> Vec<f64> {
    let issues: Vec<(u64, String)> = (1..=runs as u64 + 1)
        .map(|n| (n, format!("issue {n}")))
        .collect();
    let seeded: Vec<(u64, &str, &str)> = issues
        .iter()
        .map(|(n, title)| (*n, title.as_str(), "do the thing"))
        .collect();
    let mut world = World::start(WORKER, backend, FILES, &seeded).await;
    let mut samples = Vec::new();
    for (n, _) in &issues {
        let body = labeled_delivery(&world.repo, *n);
        let acked = world
            .bot
            .deliver(body, &format!("bench-{backend}-{n}"))
            .await;
        let verdict = world.verdict(*n).await;
        assert!(
            verdict.contains('✅'),
            "run {n} did not succeed:\n{verdict}\n{}",
            world.bot.drain()
        );
        // Consume what the job wrote, as the fake forge requires of its users.
        let branch = format!("forgeward/issue-{n}");
        let _ = world.forge.pull_request_for_branch(&world.repo, &branch);
        let started = world.file_on_remote(&branch, "started");
        let started_ns: u128 = started.trim().parse().expect("the worker wrote its clock");
        let acked_ns = acked
            .duration_since(UNIX_EPOCH)
            .unwrap_or(Duration::ZERO)
            .as_nanos();
        let ms = (started_ns.saturating_sub(acked_ns)) as f64 / 1e6;
        if *n > 1 {
            samples.push(ms);
        }
        consume_the_rest(&world, *n, &branch);
    }
    let _ = SystemTime::now();
    samples
}

/// Reads what a successful job leaves on its pull request, so the fake forge sees every write
/// consumed.
fn consume_the_rest(world: &World, _issue: u64, branch: &str) {
    if let Some(pr) = world.forge.pull_request_for_branch(&world.repo, branch) {
        let _ = world.forge.review_flags(&world.repo, pr.number);
        let _ = world.forge.labels(&world.repo, pr.number);
        if let Some(sha) = world.remote_branch(branch) {
            let _ = world.forge.commit_statuses(&world.repo, &sha);
        }
    }
}
