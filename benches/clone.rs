//! `cargo bench --bench clone`: the first clone, side by side with git, on a generated
//! repository of `FORGEWARD_BENCH_COMMITS` commits (default 10 000) over `FORGEWARD_BENCH_FILES`
//! files (default 5 000): mirror creation from a local path and over HTTP (`git http-backend` on
//! loopback), against `git clone --mirror` of the same source; a job's checkout against
//! `git worktree add` of the same commit; and a second `forgeward run` on the same repository
//! (its overhead: everything but the worker). Medians of `FORGEWARD_BENCH_RUNS` runs (default 5).
//! Never fails on timings.
//!
//! Everything is written under `TMPDIR` (and `forgeward run`'s job directory too). On an ext4
//! without a journal, creating a file scans past every inode deleted in the last minute
//! (`recently_deleted`), which a benchmark that makes and removes thousands of files pays more
//! than any checkout; `TMPDIR=/dev/shm` measures git and forgeward without it.

#[path = "common/mod.rs"]
mod common;
#[path = "../tests/integration/git_http.rs"]
#[allow(dead_code)]
mod git_http;
#[path = "../tests/integration/util.rs"]
mod util;

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{env_or, median};
use forgeward::forge::api::GitCredentials;
use forgeward::forge::event::{Forge, RepoName};
use forgeward::git::Mirror;

const FORGEWARD: &str = env!("CARGO_BIN_EXE_forgeward");

fn main() {
    // As the binary sets libgit2 up (no re-hashing of objects as they are read).
    // SAFETY: the benchmark has one thread yet.
    unsafe { forgeward::git::init() };
    let commits: usize = env_or("FORGEWARD_BENCH_COMMITS", 10_000);
    let files: usize = env_or("FORGEWARD_BENCH_FILES", 5_000);
    let runs: usize = env_or("FORGEWARD_BENCH_RUNS", 5);
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let root = tmp.path().join("served");
    let source = root.join("source.git");
    let started = Instant::now();
    generate(&source, commits, files);
    println!(
        "generated {commits} commits over {files} files in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // From a local path.
    let git_local = time(runs, |i| {
        let dest = tmp.path().join(format!("git-local-{i}.git"));
        git(&["clone", "-q", "--mirror", path(&source), path(&dest)]);
    });
    let git_no_local = time(runs, |i| {
        let dest = tmp.path().join(format!("git-nolocal-{i}.git"));
        git(&[
            "clone",
            "-q",
            "--mirror",
            "--no-local",
            path(&source),
            path(&dest),
        ]);
    });
    let borrowed = time(runs, |i| {
        let mirror = mirror(tmp.path(), &format!("borrowed-{i}"));
        mirror.borrow(&source).expect("borrowing");
    });
    let fetched_local = time(runs.min(3), |i| {
        let mirror = mirror(tmp.path(), &format!("fetched-local-{i}"));
        mirror.fetch(path(&source), None, &[]).expect("fetching");
    });
    println!("mirror creation from a local path (median of {runs}):");
    println!("  git clone --mirror             {}", ms(git_local));
    println!("  git clone --mirror --no-local  {}", ms(git_no_local));
    println!(
        "  forgeward (borrowed objects)   {}  ({:.2}× git clone --mirror)",
        ms(borrowed),
        ratio(borrowed, git_local)
    );
    println!(
        "  forgeward fetch over the local transport  {}  ({:.2}× --no-local)",
        ms(fetched_local),
        ratio(fetched_local, git_no_local)
    );

    // Over HTTP, through git http-backend on loopback.
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).expect("a HOME for the backend");
    let server = git_http::GitHttp::start(&root, &home);
    let url = format!("http://127.0.0.1:{}/source.git", server.port);
    let auth = format!("http.extraHeader=Authorization: {}", git_http::GOOD_AUTH);
    let git_http = time(runs.min(3), |i| {
        let dest = tmp.path().join(format!("git-http-{i}.git"));
        git(&["-c", &auth, "clone", "-q", "--mirror", &url, path(&dest)]);
    });
    let credentials = GitCredentials {
        username: "x-access-token".to_owned(),
        password: "s3cret-t0ken".to_owned(),
    };
    let fetched_http = time(runs.min(3), |i| {
        let mirror = mirror(tmp.path(), &format!("fetched-http-{i}"));
        mirror
            .fetch(&url, Some(&credentials), &[])
            .expect("fetching over HTTP");
    });
    println!("mirror creation over HTTP (median of {}):", runs.min(3));
    println!("  git clone --mirror  {}", ms(git_http));
    println!(
        "  forgeward fetch     {}  ({:.2}× git)",
        ms(fetched_http),
        ratio(fetched_http, git_http)
    );

    // A job's checkout of the tip, against git's worktree of the same commit.
    let base = {
        let mirror = mirror(tmp.path(), "checkout");
        mirror.borrow(&source).expect("borrowing");
        mirror
    };
    let tip = base.repo().resolve("refs/heads/main").expect("main");
    let worktrees = tmp.path().join("git-local-0.git");
    // Taken in turns, so that both meet the file system in the same state: after many
    // deletions, ext4's search for a free inode costs whichever creates files next.
    let (git_worktree, checkouts) = time_pair(
        runs,
        |i| {
            let dest = tmp.path().join(format!("worktree-{i}"));
            git(&[
                "-C",
                path(&worktrees),
                "worktree",
                "add",
                "-q",
                "--detach",
                path(&dest),
                &tip.to_string(),
            ]);
        },
        |i| {
            let dest = tmp.path().join(format!("checkout-{i}"));
            let checkout = base.checkout(tip, &dest).expect("checking out");
            std::mem::forget(checkout);
        },
    );
    println!("checkout of the tip ({files} files, median of {runs}):");
    println!("  git worktree add  {}", ms(git_worktree));
    println!(
        "  forgeward         {}  ({:.2}× git)",
        ms(checkouts),
        ratio(checkouts, git_worktree)
    );

    // `forgeward run` on a working copy of the same history, twice: the second takes the kept
    // mirror. Its overhead is its whole time but the worker's.
    let work = tmp.path().join("work");
    git(&["clone", "-q", path(&source), path(&work)]);
    let run_home = tmp.path().join("run-home");
    std::fs::create_dir_all(&run_home).expect("a HOME for forgeward run");
    let mut overheads = Vec::new();
    for i in 0..=runs {
        let (total, worker) = forgeward_run(&work, &run_home, &format!("bench-{i}"));
        if i == 0 {
            println!(
                "forgeward run, first on this repository: {} ({} of it the worker's)",
                ms(total),
                ms(worker)
            );
        } else {
            overheads.push(total.saturating_sub(worker));
        }
    }
    let overhead = median(overheads);
    println!(
        "forgeward run, again on the same repository: overhead {} (median of {runs}; target ≤ 300 ms plus the checkout, {})",
        ms(overhead),
        ms(checkouts)
    );
}

/// Writes a bare repository of `commits` commits on `main` through `git fast-import`: the first
/// adds `files` files of about 1 KiB in 50 directories, each later one changes two of them.
fn generate(dir: &Path, commits: usize, files: usize) {
    git(&["init", "-q", "--bare", "-b", "main", path(dir)]);
    let mut child = Command::new("git")
        .args(["-C", path(dir), "fast-import", "--quiet"])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::piped())
        .spawn()
        .expect("git fast-import");
    let mut stream = std::io::BufWriter::new(child.stdin.take().expect("its stdin"));
    let file = |n: usize| format!("d{:02}/f{n:05}.txt", n % 50);
    let content = |n: usize, version: usize| {
        let mut text = format!("file {n} version {version}\n");
        while text.len() < 1000 {
            text.push_str(&format!("line {} of file {n}\n", text.len()));
        }
        text
    };
    for c in 0..commits {
        let message = format!("commit {c}");
        write!(
            stream,
            "commit refs/heads/main\ncommitter bench <bench@invalid> {} +0000\ndata {}\n{message}\n",
            1_700_000_000 + c,
            message.len()
        )
        .expect("writing the stream");
        let changed: Vec<usize> = if c == 0 {
            (0..files).collect()
        } else {
            vec![(c * 7) % files, (c * 13 + 1) % files]
        };
        for n in changed {
            let text = content(n, c);
            write!(
                stream,
                "M 100644 inline {}\ndata {}\n{text}\n",
                file(n),
                text.len()
            )
            .expect("writing the stream");
        }
    }
    drop(stream);
    let status = child.wait().expect("git fast-import");
    assert!(status.success(), "git fast-import failed");
    git(&["-C", path(dir), "repack", "-q", "-a", "-d"]);
}

/// One `forgeward run` with a worker that adds a line; its wall time and the worker's.
fn forgeward_run(repo: &Path, home: &Path, branch: &str) -> (Duration, Duration) {
    let started = Instant::now();
    let out = Command::new(FORGEWARD)
        .args([
            "run",
            "--repo",
            path(repo),
            "--task",
            "Add a line",
            "--worker",
            "echo more >> d00/f00000.txt",
            "--sandbox",
            "bwrap",
            "--branch",
            branch,
        ])
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("HOME", home)
        .env("FORGEWARD_VERIFY_ENABLED", "false")
        .env("TMPDIR", std::env::temp_dir())
        .output()
        .expect("forgeward run");
    let total = started.elapsed();
    assert!(
        out.status.code() == Some(0),
        "forgeward run: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let phases = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("phases:"))
        .unwrap_or("");
    (total, working(phases))
}

/// The `working` phase's time in a `phases:` line (`… · working 0.3 s · …`).
fn working(phases: &str) -> Duration {
    phases
        .split('·')
        .find_map(|part| {
            let part = part.trim().trim_start_matches("phases:").trim();
            let secs = part.strip_prefix("working ")?.strip_suffix(" s")?;
            secs.parse::<f64>().ok()
        })
        .map_or(Duration::ZERO, Duration::from_secs_f64)
}

fn mirror(tmp: &Path, name: &str) -> Mirror {
    Mirror::open_or_create(
        &tmp.join("mirrors"),
        Forge::GitHub,
        &RepoName(format!("bench/{name}")),
    )
    .expect("a mirror")
}

fn time(runs: usize, mut f: impl FnMut(usize)) -> Duration {
    let mut times = Vec::new();
    for i in 0..runs {
        let started = Instant::now();
        f(i);
        times.push(started.elapsed());
    }
    median(times)
}

/// [`time`] for two things measured in turns, `a` then `b` in each round: their medians.
fn time_pair(
    runs: usize,
    mut a: impl FnMut(usize),
    mut b: impl FnMut(usize),
) -> (Duration, Duration) {
    let (mut first, mut second) = (Vec::new(), Vec::new());
    for i in 0..runs {
        let started = Instant::now();
        a(i);
        first.push(started.elapsed());
        let started = Instant::now();
        b(i);
        second.push(started.elapsed());
    }
    (median(first), median(second))
}

fn git(args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .expect("running git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-9)
}
