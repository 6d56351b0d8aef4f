//! `cargo bench --bench mirror`: a job's checkout and the commit built from its files, on a
//! generated repository of `FORGEWARD_BENCH_FILES` files (default 10 000, in 100 directories,
//! 1 KiB to 8 KiB each, one in ten executable, a few symlinks). Reports the median of
//! `FORGEWARD_BENCH_RUNS` runs (default 7) of: the checkout (files and its `.git`), the commit of
//! an unchanged workspace, and the commit of a workspace with 20 files changed and 5 added. It
//! never fails on timings.

#[path = "common/mod.rs"]
mod common;

use common::{env_or, median};
use std::path::Path;
use std::time::Instant;

use git2::Signature;

fn main() {
    let files: usize = env_or("FORGEWARD_BENCH_FILES", 10_000);
    let runs: usize = env_or("FORGEWARD_BENCH_RUNS", 7);
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let source = tmp.path().join("source");
    generate(&source, files);
    let (mirror, url) = common::mirror(tmp.path(), "repo", &source);
    let started = Instant::now();
    mirror.fetch(&url, None, &[]).expect("fetching");
    println!("first fetch of {files} files: {:?}", started.elapsed());
    let base = mirror.repo().resolve("refs/heads/main").expect("main");
    let bot = Signature::now("forgeward", "bot@forgeward.invalid").expect("a signature");

    let mut checkout = Vec::new();
    let mut unchanged = Vec::new();
    let mut changed = Vec::new();
    for run in 0..runs {
        let dest = tmp.path().join(format!("ws-{run}"));
        let t = Instant::now();
        let ws = mirror.checkout(base, &dest).expect("checking out");
        checkout.push(t.elapsed());

        let t = Instant::now();
        let none = mirror
            .commit_workspace(base, ws.path(), "bench", &bot, &bot)
            .expect("committing");
        unchanged.push(t.elapsed());
        assert!(none.is_none(), "an unchanged workspace made a commit");

        for i in 0..20 {
            let path = ws.path().join(format!("d{}/f{}.txt", i % 100, i));
            std::fs::write(&path, format!("changed {run} {i}\n")).expect("changing a file");
        }
        for i in 0..5 {
            std::fs::write(ws.path().join(format!("new-{i}.txt")), "new\n").expect("adding");
        }
        let t = Instant::now();
        let some = mirror
            .commit_workspace(base, ws.path(), "bench", &bot, &bot)
            .expect("committing");
        changed.push(t.elapsed());
        assert!(some.is_some(), "a changed workspace made no commit");
    }
    println!(
        "checkout ({files} files + .git):      median {:?}",
        median(checkout)
    );
    println!(
        "commit_workspace, unchanged:        median {:?}",
        median(unchanged)
    );
    println!(
        "commit_workspace, 25 files changed: median {:?}",
        median(changed)
    );
}

/// A repository of `files` files committed on `main` with the git CLI.
fn generate(dir: &Path, files: usize) {
    std::fs::create_dir_all(dir).expect("creating the source");
    let mut seed: u64 = 0x5eed;
    for i in 0..files {
        let sub = dir.join(format!("d{}", i % 100));
        std::fs::create_dir_all(&sub).expect("a directory");
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let size = 1024 + (seed >> 33) as usize % 7168;
        let line = format!("line of file {i} with some text to fill it {seed:x}\n");
        let content: String = line.repeat(size / line.len() + 1);
        let path = sub.join(format!("f{i}.txt"));
        std::fs::write(&path, content).expect("a file");
        if i % 10 == 0 {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }
    for i in 0..5 {
        std::os::unix::fs::symlink(format!("d{i}/f{i}.txt"), dir.join(format!("link-{i}")))
            .expect("a symlink");
    }
    let git = |args: &[&str]| common::git(dir, args);
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "base"]);
}
