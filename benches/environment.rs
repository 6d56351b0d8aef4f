//! `cargo bench --bench environment`: what a prepared environment costs.
//!
//! 1. **A job with a kept environment against one with none**, on bubblewrap: a kept
//!    environment of `FORGEWARD_BENCH_ENV_MB` MB (default 300: a virtual environment of a few
//!    large shared objects and many small modules, and a `node_modules` of many small files,
//!    about 24 000 files in all) is lent to each of a job's four sandboxes — the worker's and
//!    verification's three runs — and taken back after each, as the job does; the same four
//!    sandboxes (`true`) without it are the baseline. Lent as the bot would lend it here
//!    (overlays where it can mount them), and by hard links beside it. Target: at most 1 s
//!    more per job. An overlay costs a mount and an unmount (volatile: no sync of the host's
//!    file system) and nothing in the environment is walked: measured on a loaded 2-core
//!    machine, 349 ms by overlays against 116 ms with none (233 ms over), 7613 ms by hard
//!    links; before the kept environments were given to the sandboxes' group, every lending
//!    handed each of their directories to the worker (a listing of the 24 000 entries and a
//!    copy-up of each directory, twice a run) and every unmount synced the disk: 1592 against
//!    123.
//! 2. **The first setup against the same install run on the host**: `forgeward env` on a
//!    Python project requiring `FORGEWARD_BENCH_WHEELS` packages (default 40) from an index
//!    served on loopback — the setup in the sandbox, through the egress gateway, then kept —
//!    against `python3 -m venv` and `pip install -r requirements.txt` from the same index on the
//!    host. Target: within 1.2× of it.
//!
//! Reports medians of `FORGEWARD_BENCH_RUNS` (default 5); it never fails on timings.

#[path = "common/mod.rs"]
mod common;

use common::{env_or, median};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use forgeward::environment::kept::{Meta, Store};
use forgeward::environment::lend::{self, Lending};
use forgeward::sandbox::{Bwrap, Sandbox};
use tokio_util::sync::CancellationToken;

const JOB_TARGET: Duration = Duration::from_secs(1);
const SETUP_TARGET: f64 = 1.2;

/// Sandboxes a job runs with its environment: the worker's and verification's three.
const SANDBOXES: usize = 4;

fn main() {
    let runs: usize = env_or("FORGEWARD_BENCH_RUNS", 5);
    let tmp = tempfile::tempdir().expect("a temporary directory");
    kept_environment(tmp.path(), runs);
    first_setup(tmp.path(), runs);
}

fn kept_environment(tmp: &Path, runs: usize) {
    let megabytes: usize = env_or("FORGEWARD_BENCH_ENV_MB", 300);
    let store = Store::at(tmp.join("environments"));
    let building = store.building("bench").expect("a building directory");
    let setup_workspace = building.join("workspace");
    let (files, bytes) = generate_environment(&setup_workspace, megabytes);
    let meta = Meta {
        key: "bench".to_owned(),
        created: 0,
        job: None,
        steps: Vec::new(),
        duration_ms: 0,
        kept: vec![".venv".to_owned(), "node_modules".to_owned()],
        files: 0,
        bytes: 0,
    };
    let kept = store
        .keep(&building, &setup_workspace, meta)
        .expect("keeping the environment");
    assert_eq!(kept.meta.files, files);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let sandbox = Bwrap::new();
    runtime
        .block_on(sandbox.check())
        .unwrap_or_else(|e| panic!("bubblewrap cannot run here: {e}"));
    let bot = Lending::for_this_process(store.root());
    let job = |dir: &Path, how: Option<Lending>| -> Duration {
        let workspace = dir.join("workspace");
        for d in [&workspace, &dir.join("job"), &dir.join("out")] {
            std::fs::create_dir_all(d).expect("a directory");
        }
        std::fs::write(workspace.join("calc.py"), "x = 1\n").expect("a file");
        // SAFETY: sync(2) takes nothing and cannot fail.
        unsafe { libc::sync() };
        let started = Instant::now();
        for _ in 0..SANDBOXES {
            let loan = how.map(|how| {
                let loan = lend::lend(&kept, &workspace, how).expect("lending");
                assert_eq!(loan.how(), Some(how), "lent as asked");
                loan
            });
            let spec = common::sandbox_spec(dir, 2 << 30);
            let exit = runtime
                .block_on(sandbox.run(&spec, &Quiet, CancellationToken::new()))
                .expect("the sandbox");
            assert_eq!(exit, forgeward::sandbox::Exit::Code(0));
            if let Some(loan) = loan {
                loan.take_back().expect("taking it back");
            }
        }
        let took = started.elapsed();
        let _ = std::fs::remove_dir_all(dir);
        took
    };
    let mut ways = vec![Lending::Link];
    if bot != Lending::Link {
        ways.push(bot);
    }
    let (mut bare, mut lent) = (Vec::new(), vec![Vec::new(); ways.len()]);
    for i in 0..runs {
        bare.push(job(&tmp.join(format!("bare-{i}")), None));
        for (w, how) in ways.iter().enumerate() {
            lent[w].push(job(&tmp.join(format!("lent-{how:?}-{i}")), Some(*how)));
        }
    }
    let bare = median(bare);
    println!(
        "a job's {SANDBOXES} sandboxes with a kept environment ({files} files, {} MB) \
         (medians of {runs}; the bot here lends by {}):",
        bytes / 1_000_000,
        bot.describe()
    );
    println!("  without an environment (baseline)  {:8.1} ms", ms(bare));
    for (how, times) in ways.iter().zip(lent) {
        let lent = median(times);
        let overhead = lent.saturating_sub(bare);
        println!("  lent by {:<26} {:8.1} ms", how.describe(), ms(lent));
        println!(
            "    per lending (lend, run, take back) {:8.1} ms over the baseline",
            ms(overhead) / SANDBOXES as f64
        );
        println!(
            "    target overhead <= {} ms per job: {:.1} ms   {}",
            JOB_TARGET.as_millis(),
            ms(overhead),
            if overhead <= JOB_TARGET {
                "met"
            } else {
                "MISSED"
            }
        );
    }
}

/// A virtual environment and a `node_modules` of about `megabytes` MB under `workspace`:
/// a fifth of the bytes in a few large files (shared objects), the rest in ~24 000 small ones.
fn generate_environment(workspace: &Path, megabytes: usize) -> (u64, u64) {
    let total = megabytes * 1_000_000;
    let large = total / 5;
    let small_files = 24_000;
    let small = (total - large) / small_files;
    let (mut files, mut bytes) = (0u64, 0u64);
    let mut write = |path: &Path, size: usize| {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a directory");
        std::fs::write(path, vec![b'x'; size]).expect("a file");
        files += 1;
        bytes += size as u64;
    };
    let site = workspace.join(".venv/lib/python3.11/site-packages");
    for i in 0..8 {
        write(&site.join(format!("native{i}/_core.so")), large / 8);
    }
    for i in 0..small_files {
        let path = if i % 2 == 0 {
            site.join(format!("pkg{}/mod{}.py", i / 200, i % 200))
        } else {
            workspace.join(format!("node_modules/pkg{}/lib/f{}.js", i / 200, i % 200))
        };
        write(&path, small);
    }
    (files, bytes)
}

fn first_setup(tmp: &Path, runs: usize) {
    let wheels: usize = env_or("FORGEWARD_BENCH_WHEELS", 40);
    let index = tmp.join("index");
    build_wheels(&index, wheels);
    let mut server = Command::new("python3")
        .args(["-m", "http.server", "--bind", "127.0.0.1", "0"])
        .current_dir(&index)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 -m http.server");
    let port = {
        use std::io::BufRead as _;
        let mut line = String::new();
        let out = server.stdout.take().expect("its output");
        std::io::BufReader::new(out)
            .read_line(&mut line)
            .expect("its first line");
        // "Serving HTTP on 127.0.0.1 port 12345 (http://127.0.0.1:12345/) ..."
        line.split_whitespace()
            .skip_while(|w| *w != "port")
            .nth(1)
            .and_then(|p| p.parse::<u16>().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"))
    };
    // A name, not the loopback address: inside the sandbox, 127.0.0.1 is its own, and pip
    // would not send it through the gateway.
    let host = std::env::var("FORGEWARD_TEST_EGRESS_HOST").unwrap_or_else(|_| {
        panic!(
            "FORGEWARD_TEST_EGRESS_HOST is not set: run `eval \"$(bash tests/setup/egress.sh)\"`"
        )
    });
    let url = format!("http://{host}:{port}/simple/");
    let requirements: String = (0..wheels).map(|i| format!("fwbench{i}==1.0\n")).collect();

    let (mut direct, mut setup) = (Vec::new(), Vec::new());
    for i in 0..runs {
        let dir = tmp.join(format!("direct-{i}"));
        std::fs::create_dir_all(&dir).expect("a directory");
        std::fs::write(dir.join("requirements.txt"), &requirements).expect("requirements");
        let t = Instant::now();
        let status = Command::new("sh")
            .args([
                "-c",
                "python3 -m venv --system-site-packages .venv \
                 && .venv/bin/python -m pip install -q -r requirements.txt",
            ])
            .current_dir(&dir)
            .env("PIP_INDEX_URL", &url)
            .env("PIP_TRUSTED_HOST", &host)
            .env("PIP_NO_CACHE_DIR", "1")
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
            .status()
            .expect("sh");
        direct.push(t.elapsed());
        assert!(status.success(), "the install on the host");

        let repo = tmp.join(format!("repo-{i}"));
        std::fs::create_dir_all(&repo).expect("a directory");
        // Each run a different project, so that nothing is kept from the last.
        std::fs::write(
            repo.join("requirements.txt"),
            format!("{requirements}# run {i}\n"),
        )
        .expect("requirements");
        std::fs::write(repo.join("calc.py"), "x = 1\n").expect("a file");
        for args in [
            &["init", "-q", "-b", "main"][..],
            &["add", "."],
            &["commit", "-q", "-m", "base"],
        ] {
            common::git(&repo, args);
        }
        let config = tmp.join(format!("forgeward-{i}.toml"));
        std::fs::write(
            &config,
            format!(
                "[environment]\nallow = [\"{host}:{port}\", \"127.0.0.1:{port}\"]\nenv = [\"PIP_INDEX_URL={url}\", \"PIP_TRUSTED_HOST={host}\"]\n"
            ),
        )
        .expect("a configuration");
        let t = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_forgeward"))
            .args(["env", "--sandbox", "bwrap", "--config"])
            .arg(&config)
            .current_dir(&repo)
            .env("XDG_CACHE_HOME", tmp.join("cache"))
            .output()
            .expect("forgeward env");
        setup.push(t.elapsed());
        assert!(
            out.status.success(),
            "forgeward env: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = server.kill();
    let _ = server.wait();
    let (direct, setup) = (median(direct), median(setup));
    let ratio = setup.as_secs_f64() / direct.as_secs_f64();
    println!("the first setup of a project of {wheels} packages (medians of {runs}):");
    println!(
        "  venv and pip install on the host (baseline) {:8.1} ms",
        ms(direct)
    );
    println!(
        "  forgeward env (sandbox, gateway, kept)      {:8.1} ms",
        ms(setup)
    );
    println!(
        "  target <= {SETUP_TARGET}x the baseline: {ratio:.2}x   {}",
        if ratio <= SETUP_TARGET {
            "met"
        } else {
            "MISSED"
        }
    );
}

/// `count` pure-Python wheels `fwbench<i>` 1.0 in a simple index under `index/simple`.
fn build_wheels(index: &Path, count: usize) {
    let script = r##"
import sys, zipfile, hashlib, base64, os
root, count = sys.argv[1], int(sys.argv[2])
for i in range(count):
    name = f"fwbench{i}"
    d = os.path.join(root, "simple", name)
    os.makedirs(d, exist_ok=True)
    files = {
        f"{name}/__init__.py": "VALUE = %d\n" % i + "# padding\n" * 200,
        f"{name}-1.0.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
        f"{name}-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    with zipfile.ZipFile(os.path.join(d, f"{name}-1.0-py3-none-any.whl"), "w") as z:
        for path, text in files.items():
            data = text.encode()
            z.writestr(path, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{path},sha256={digest},{len(data)}")
        record.append(f"{name}-1.0.dist-info/RECORD,,")
        z.writestr(f"{name}-1.0.dist-info/RECORD", "\n".join(record) + "\n")
"##;
    let status = Command::new("python3")
        .args(["-c", script])
        .arg(index)
        .arg(count.to_string())
        .status()
        .expect("python3");
    assert!(status.success(), "building the wheels");
}

/// The sandbox's output, not kept.
struct Quiet;

impl forgeward::sandbox::LogSink for Quiet {
    fn line(&self, _: forgeward::sandbox::Stream, _: &str) {}
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
