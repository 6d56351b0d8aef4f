//! `cargo bench --bench verify`: what verification costs beyond the runner's own time, per run,
//! on a generated repository of `FORGEWARD_BENCH_FILES` files (default 1 000: 900 source files,
//! 100 test files, 1 KiB each) in the bubblewrap sandbox. One verification is what the job does:
//! the commit with the base's tests put back, then three runs over one replica of the files —
//! the base (the worker's checkout taken as the replica, what the worker changed in it undone),
//! the change and the change with the base's tests (the replica moved, undoing what the last
//! run wrote) — each a fresh sandbox running the suite and its report read back. The "runner"
//! here writes a JUnit report of the 100 tests and a cache file into the workspace, and exits,
//! so nearly all of the time is the bot's; its own time is measured apart (the same command on
//! the host). Each verification starts after a `sync`, so that the disk's writeback of the
//! checkout's files is not counted. Reports medians of `FORGEWARD_BENCH_RUNS` verifications
//! (default 7) against the target of 150 ms per run; it never fails on timings.

#[path = "common/mod.rs"]
mod common;

use common::{env_or, median};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use forgeward::config::repo::ResultsFormat;
use forgeward::sandbox::{Bwrap, Sandbox};
use forgeward::verify::runner::Runner;
use forgeward::verify::suite;
use tokio_util::sync::CancellationToken;

const TARGET_MS: f64 = 150.0;

/// Writes a JUnit report of 100 passing tests, and a cache file as runners do: the runner's own
/// work is this and no more.
const RUNNER: &str = "{ echo '<testsuites><testsuite>'; i=0; while [ $i -lt 100 ]; do echo \"<testcase classname=\\\"tests.t$i\\\" name=\\\"test_$i\\\"/>\"; i=$((i+1)); done; echo '</testsuite></testsuites>'; } > /job-out/verify/junit.xml; echo cache > WORKSPACE/.runner-cache";

fn main() {
    let files: usize = env_or("FORGEWARD_BENCH_FILES", 1_000);
    let runs: usize = env_or("FORGEWARD_BENCH_RUNS", 7);
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let source = tmp.path().join("source");
    generate(&source, files);
    let (mirror, url) = common::mirror(tmp.path(), "verify", &source);
    mirror.fetch(&url, None, &[]).expect("fetching");
    let base = mirror.repo().resolve("refs/heads/main").expect("main");
    let head = mirror.repo().resolve("refs/heads/change").expect("change");
    let runner = Runner {
        name: "bench".to_owned(),
        command: vec![
            "sh".to_owned(),
            "-c".to_owned(),
            RUNNER.replace("WORKSPACE", "/workspace"),
        ],
        format: ResultsFormat::Junit,
        path: Some("/job-out/verify/junit.xml".to_owned()),
        reason: None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let sandbox = Bwrap::new();
    runtime
        .block_on(sandbox.check())
        .unwrap_or_else(|e| panic!("bubblewrap cannot run here: {e}"));

    let (mut restore, mut first, mut switch, mut run, mut total) =
        (vec![], vec![], vec![], vec![], vec![]);
    for i in 0..runs {
        let dir = tmp.path().join(format!("verify-{i}"));
        std::fs::create_dir_all(&dir).expect("a directory");
        // The worker's checkout, and what the worker did in it: not verification's cost.
        let mut checkout = mirror
            .checkout(base, &dir.join("workspace"))
            .expect("a checkout");
        std::fs::write(checkout.path().join("src/d1/m1.py"), "value_1 = 2\n").expect("a change");
        std::fs::write(checkout.path().join("notes.txt"), "left over\n").expect("a change");
        // The files written so far settle first: this machine's writeback of them is not
        // verification's cost.
        // SAFETY: sync(2) takes nothing and cannot fail.
        unsafe { libc::sync() };
        let started = Instant::now();
        let restored = mirror
            .repo()
            .with_base_tests(base, head, |p| p.display().starts_with("tests/"))
            .expect("the restored commit");
        restore.push(started.elapsed());
        let mut replica = checkout.take_replica().expect("the checkout's files");
        for (n, commit) in [base, head, restored].into_iter().enumerate() {
            let t = Instant::now();
            let did = replica
                .switch(mirror.repo().git2(), commit)
                .expect("the replica");
            if n > 0 {
                assert!(
                    did.written <= 2,
                    "the replica rewrote files it did not need to: {did:?}"
                );
            }
            if n == 0 {
                first.push(t.elapsed());
            } else {
                switch.push(t.elapsed());
            }
            let template = common::sandbox_spec(&dir, 1 << 30);
            let t = Instant::now();
            let done = runtime.block_on(suite::run(
                &suite::Place {
                    sandbox: &sandbox,
                    template: &template,
                    log: None,
                },
                &runner,
                replica.path(),
                &dir.join(format!("scratch-{n}")),
                Duration::from_secs(60),
                CancellationToken::new(),
            ));
            run.push(t.elapsed());
            let results = done.results.expect("the run's results");
            assert_eq!(results.collected(), 100, "the report was read whole");
        }
        total.push(started.elapsed());
        drop(checkout);
    }
    // The runner's own time: the same command on the host.
    let mut own = Vec::new();
    for _ in 0..runs {
        let out = tmp.path().join("own/job-out/verify");
        std::fs::create_dir_all(&out).expect("a directory");
        let script = RUNNER
            .replace("/job-out/verify", &out.display().to_string())
            .replace("WORKSPACE", &tmp.path().join("own").display().to_string());
        let t = Instant::now();
        let status = Command::new("sh")
            .args(["-c", &script])
            .status()
            .expect("sh");
        own.push(t.elapsed());
        assert!(status.success());
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let (total, own) = (median(total), median(own));
    println!(
        "verification of a {files}-file repository (medians of {runs} verifications of 3 runs):"
    );
    println!(
        "  the commit with the base's tests     {:7.1} ms  once",
        ms(median(restore))
    );
    println!(
        "  the worker's checkout as the replica {:7.1} ms  once (the worker's changes undone)",
        ms(median(first))
    );
    println!(
        "  the replica moved, the run undone    {:7.1} ms  per run after the first",
        ms(median(switch))
    );
    println!(
        "  sandbox, runner and report           {:7.1} ms  per run",
        ms(median(run))
    );
    println!(
        "  one verification                     {:7.1} ms  (3 runs)",
        ms(total)
    );
    println!(
        "  the runner's own time (host)         {:7.1} ms  per run",
        ms(own)
    );
    let overhead = (ms(total) - 3.0 * ms(own)) / 3.0;
    let verdict = if overhead <= TARGET_MS {
        "met"
    } else {
        "MISSED"
    };
    println!("  target overhead <= {TARGET_MS} ms per run: {overhead:.1} ms   {verdict}");
}

/// A repository of `files` files on `main` (a tenth of them tests under `tests/`), and a
/// branch `change` that edits a source file and a test, as a worker would.
fn generate(dir: &Path, files: usize) {
    for i in 0..files {
        let path = if i % 10 == 0 {
            dir.join(format!("tests/t{}/test_{i}.py", i % 7))
        } else {
            dir.join(format!("src/d{}/m{i}.py", i % 50))
        };
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a directory");
        let line = format!("value_{i} = {i}  # a line of code to fill the file\n");
        std::fs::write(&path, line.repeat(1024 / line.len() + 1)).expect("a file");
    }
    let git = |args: &[&str]| common::git(dir, args);
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "base"]);
    git(&["checkout", "-q", "-b", "change"]);
    std::fs::write(dir.join("src/d1/m1.py"), "value_1 = 2\n").expect("a change");
    std::fs::write(dir.join("tests/t0/test_0.py"), "assert True\n").expect("a change");
    git(&["commit", "-q", "-am", "change"]);
    git(&["checkout", "-q", "main"]);
}
