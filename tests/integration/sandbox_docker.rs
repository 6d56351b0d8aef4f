//! The Docker sandbox against a real daemon: images built from the local base
//! (`FORGEWARD_TEST_DOCKER_BASE`, made by `tests/setup/docker.sh`), workers that behave and
//! workers that do not, and containers that must be gone afterwards whatever happened.
//!
//! A test fails with one line when no daemon answers or the base image is missing; none skips.

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use forgeward::sandbox::docker::{Docker, LABEL};
use forgeward::sandbox::images::{ImageError, Images};
use forgeward::sandbox::{Exit, Limits, LogSink, Sandbox, SandboxSpec, Stream};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// The base the sandbox images build FROM when the environment names none.
const DEFAULT_BASE: &str = "forgeward/debian-base:bookworm";

/// One line and a panic when the daemon or the base image is missing: these tests need both.
fn images() -> &'static Images {
    static IMAGES: OnceLock<Images> = OnceLock::new();
    IMAGES.get_or_init(|| {
        let info = Command::new("docker")
            .args(["info", "--format", "{{.ServerVersion}}"])
            .output();
        match info {
            Ok(out) if out.status.success() => {}
            Ok(out) => panic!(
                "Docker daemon unreachable ({}); run tests/setup/docker.sh",
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .last()
                    .unwrap_or("no message")
            ),
            Err(e) => panic!("docker CLI not runnable ({e}); run tests/setup/docker.sh"),
        }
        let base =
            std::env::var("FORGEWARD_TEST_DOCKER_BASE").unwrap_or_else(|_| DEFAULT_BASE.into());
        let found = Command::new("docker")
            .args(["image", "inspect", &base])
            .output();
        assert!(
            found.is_ok_and(|o| o.status.success()),
            "base image {base} missing; run tests/setup/docker.sh"
        );
        Images::new(base)
    })
}

async fn sandbox_image() -> String {
    images()
        .sandbox_image()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A backend whose containers only this test labels, so tests running at once never see each
/// other's.
fn backend(test: &str) -> Docker {
    Docker::new(&format!("test-{test}-{}", std::process::id()))
}

/// The containers carrying this backend's label, running or not.
fn labelled(docker: &Docker) -> Vec<String> {
    let out = Command::new("docker")
        .args(["ps", "-a", "-q", "--filter"])
        .arg(format!("label={LABEL}={}", docker.owner()))
        .output()
        .expect("docker ps");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(String::from)
        .collect()
}

#[derive(Default)]
struct Log(Mutex<Vec<(Stream, String)>>);

impl LogSink for Log {
    fn line(&self, stream: Stream, line: &str) {
        self.0.lock().unwrap().push((stream, line.to_string()));
    }
}

impl Log {
    fn stdout(&self) -> Vec<String> {
        self.lines(Stream::Stdout)
    }

    fn lines(&self, which: Stream) -> Vec<String> {
        let lines = self.0.lock().unwrap();
        lines
            .iter()
            .filter(|(s, _)| *s == which)
            .map(|(_, l)| l.clone())
            .collect()
    }
}

/// A job's three directories: a checkout, the task, and the output.
struct Job {
    _dir: TempDir,
    workspace: PathBuf,
    job: PathBuf,
    out: PathBuf,
}

impl Job {
    fn new() -> Job {
        let dir = tempfile::tempdir().unwrap();
        let (workspace, job, out) = (
            dir.path().join("workspace"),
            dir.path().join("job"),
            dir.path().join("out"),
        );
        for d in [&workspace, &job, &out] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(job.join("task.md"), "Fix the greeting.\n").unwrap();
        std::fs::write(workspace.join("greeting.txt"), "helo\n").unwrap();
        Job {
            _dir: dir,
            workspace,
            job,
            out,
        }
    }

    fn spec(&self, image: &str, script: &str) -> SandboxSpec {
        SandboxSpec {
            workspace: self.workspace.clone(),
            job_dir: self.job.clone(),
            out_dir: self.out.clone(),
            command: vec!["bash".into(), "-c".into(), script.into()],
            image: Some(image.to_string()),
            env: vec![("FORGEWARD_JOB_ID".into(), "42".into())],
            limits: Limits {
                timeout: Duration::from_secs(120),
                memory_bytes: 512 << 20,
                pids: 256,
                file_size_bytes: 256 << 20,
                disk_bytes: 256 << 20,
                cpu: Duration::from_secs(120),
            },
            network: forgeward::sandbox::Network::None,
            read_only: Vec::new(),
            path: Vec::new(),
        }
    }
}

async fn run(docker: &Docker, spec: &SandboxSpec) -> (Exit, Log) {
    let log = Log::default();
    let exit = docker
        .run(spec, &log, CancellationToken::new())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    (exit, log)
}

fn this_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").unwrap().uid()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_honest_worker_edits_the_workspace_and_leaves_files_the_bot_owns() {
    use std::os::unix::fs::MetadataExt;
    let image = sandbox_image().await;
    let docker = backend("honest");
    let job = Job::new();
    let script = r#"
        set -e
        cat /job/task.md
        echo "uid=$(id -u) job=$FORGEWARD_JOB_ID home=$HOME pwd=$PWD"
        sed -i 's/helo/hello/' greeting.txt
        mkdir -p src && echo 'print("hi")' > src/new.py
        echo "Fixed the typo." > /job-out/summary.md
        cp /bin/true src/setuid && chmod 6755 src/setuid
        git --version >/dev/null
        touch "$HOME/.cache" /tmp/scratch
        echo done >&2
    "#;
    let (exit, log) = run(&docker, &job.spec(&image, script)).await;

    assert_eq!(exit, Exit::Code(0), "{:?}", log.0.lock().unwrap());
    let stdout = log.stdout();
    assert_eq!(stdout[0], "Fix the greeting.");
    let uid = if this_uid() == 0 { 10001 } else { this_uid() };
    assert_eq!(
        stdout[1],
        format!("uid={uid} job=42 home=/home/worker pwd=/workspace")
    );
    assert_eq!(log.lines(Stream::Stderr), ["done"]);
    assert_eq!(
        std::fs::read_to_string(job.workspace.join("greeting.txt")).unwrap(),
        "hello\n"
    );
    assert_eq!(
        std::fs::read_to_string(job.out.join("summary.md")).unwrap(),
        "Fixed the typo.\n"
    );
    for path in [
        job.workspace.join("src/new.py"),
        job.workspace.join("src"),
        job.out.join("summary.md"),
    ] {
        assert_eq!(
            std::fs::metadata(&path).unwrap().uid(),
            this_uid(),
            "{}",
            path.display()
        );
    }
    // A set-user-ID program the worker left is not one of the bot's.
    let mode = std::fs::metadata(job.workspace.join("src/setuid"))
        .unwrap()
        .mode();
    assert_eq!(mode & 0o7777, 0o755);
    assert!(labelled(&docker).is_empty(), "container left behind");
}

#[tokio::test(flavor = "multi_thread")]
async fn exit_codes_and_signals_are_reported_as_they_happened() {
    let image = sandbox_image().await;
    let docker = backend("exits");
    let job = Job::new();
    let (exit, _) = run(&docker, &job.spec(&image, "exit 3")).await;
    assert_eq!(exit, Exit::Code(3));
    let (exit, _) = run(&docker, &job.spec(&image, "kill -SEGV $$")).await;
    assert_eq!(exit, Exit::Signal(11));
    // A file past the size limit: the kernel's SIGXFSZ, not a full disk.
    let mut spec = job.spec(&image, "exec head -c 2097152 /dev/zero > big");
    spec.limits.file_size_bytes = 1 << 20;
    let (exit, _) = run(&docker, &spec).await;
    assert_eq!(exit, Exit::Signal(25));
    // Past the memory limit: the kernel's OOM kill.
    let mut spec = job.spec(
        &image,
        r#"a=$(head -c 300000000 /dev/zero | tr "\0" a); echo ${#a}"#,
    );
    spec.limits.memory_bytes = 64 << 20;
    let (exit, log) = run(&docker, &spec).await;
    assert_eq!(exit, Exit::Signal(9));
    assert!(log.stdout().is_empty());
    let (exit, log) = run(&docker, &job.spec(&image, "no-such-command")).await;
    assert_eq!(exit, Exit::Code(127));
    assert!(log.lines(Stream::Stderr)[0].contains("no-such-command: command not found"));
    assert!(labelled(&docker).is_empty(), "container left behind");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_worker_has_no_network_not_even_the_hosts_loopback() {
    let image = sandbox_image().await;
    let docker = backend("network");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let job = Job::new();
    let script =
        format!("ls /sys/class/net; if exec 3<>/dev/tcp/127.0.0.1/{port}; then echo connected; fi");
    let (exit, log) = run(&docker, &job.spec(&image, &script)).await;
    assert_eq!(log.stdout(), ["lo"], "{exit:?}");
    assert!(
        log.lines(Stream::Stderr)
            .iter()
            .any(|l| l.contains("Connection refused"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_worker_sees_only_the_variables_it_is_given() {
    // SAFETY: the only writer of this variable; std serialises its own environment reads and
    // process spawns against this write, and nothing else in this test binary reads it.
    unsafe {
        std::env::set_var(
            "FORGEWARD_TEST_FAKE_FORGE_TOKEN",
            "ghs_fakeforgetoken0123456789",
        )
    };
    let image = sandbox_image().await;
    let docker = backend("env");
    let job = Job::new();
    let (exit, log) = run(&docker, &job.spec(&image, "env | cut -d= -f1 | sort; env")).await;
    assert_eq!(exit, Exit::Code(0));
    let out = log.stdout().join("\n");
    assert!(!out.contains("ghs_fake"), "{out}");
    assert!(
        !out.contains("CARGO"),
        "the test process's variables leaked: {out}"
    );
    let names: Vec<String> = log
        .stdout()
        .into_iter()
        .take_while(|l| !l.contains('='))
        .collect();
    // The image's own PATH, the backend's HOME, LANG, TMPDIR, and the one variable given
    // (not HOSTNAME, which the engine sets and the backend takes away).
    assert_eq!(
        names,
        [
            "FORGEWARD_JOB_ID",
            "HOME",
            "LANG",
            "PATH",
            "PWD",
            "SHLVL",
            "TMPDIR",
            "_"
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_past_its_timeout_is_killed_and_removed() {
    let image = sandbox_image().await;
    let docker = backend("timeout");
    let job = Job::new();
    let mut spec = job.spec(&image, "echo started; sleep 600");
    spec.limits.timeout = Duration::from_secs(3);
    let began = Instant::now();
    let (exit, log) = run(&docker, &spec).await;
    assert_eq!(exit, Exit::TimedOut);
    assert!(
        began.elapsed() < Duration::from_secs(30),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(log.stdout(), ["started"]);
    assert!(labelled(&docker).is_empty(), "container left behind");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_job_kills_its_worker_and_removes_the_container() {
    let image = sandbox_image().await;
    let docker = backend("cancel");
    let job = Job::new();
    let spec = job.spec(&image, "sleep 600");
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        trigger.cancel();
    });
    let began = Instant::now();
    let exit = docker.run(&spec, &Log::default(), cancel).await.unwrap();
    assert_eq!(exit, Exit::Cancelled);
    assert!(
        began.elapsed() < Duration::from_secs(30),
        "{:?}",
        began.elapsed()
    );
    assert!(labelled(&docker).is_empty(), "container left behind");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_filling_the_disk_is_stopped() {
    let image = sandbox_image().await;
    let docker = backend("disk");
    let job = Job::new();
    let script = "for i in $(seq 100); do head -c 5242880 /dev/zero > f$i; sleep 0.2; done";
    let mut spec = job.spec(&image, script);
    spec.limits.disk_bytes = 20 << 20;
    let (exit, _) = run(&docker, &spec).await;
    assert_eq!(exit, Exit::DiskFull);
    let written = std::fs::read_dir(&job.workspace).unwrap().count();
    assert!(written < 40, "{written} files written before the stop");
    assert!(labelled(&docker).is_empty(), "container left behind");
}

#[tokio::test(flavor = "multi_thread")]
async fn containers_left_by_a_crashed_bot_are_reaped() {
    let image = sandbox_image().await;
    let docker = backend("reap");
    // What a bot killed mid-run leaves: a labelled container still running.
    let started = Command::new("docker")
        .args(["run", "-d", "--network", "none", "--label"])
        .arg(format!("{LABEL}={}", docker.owner()))
        .args([&image, "sleep", "600"])
        .output()
        .unwrap();
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    let other = backend("reap-other");
    assert_eq!(
        other.reap_leftovers().await.unwrap(),
        0,
        "another owner's container reaped"
    );
    assert_eq!(labelled(&docker).len(), 1);
    assert_eq!(docker.reap_leftovers().await.unwrap(), 1);
    assert!(labelled(&docker).is_empty(), "container left behind");
}

#[tokio::test(flavor = "multi_thread")]
async fn check_names_why_docker_cannot_be_used() {
    assert!(backend("check").check().await.is_ok());
    let err = backend("check")
        .with_program("/nonexistent/docker")
        .check()
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with("docker: daemon unreachable: ") && !message.contains('\n'),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_python_checkout_runs_in_an_image_with_its_toolchain() {
    let job = Job::new();
    std::fs::write(job.workspace.join("requirements.txt"), "six==1.16.0\n").unwrap();
    let image = images()
        .image_for(&job.workspace)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(image.starts_with("sha256:"), "{image}");
    // The same recipe is the same image: built once, whatever the requirements say.
    std::fs::write(job.workspace.join("requirements.txt"), "six==1.17.0\n").unwrap();
    assert_eq!(images().image_for(&job.workspace).await.unwrap(), image);
    assert_ne!(image, sandbox_image().await);

    let docker = backend("python");
    // The toolchain and the runner are there; the requirements are the environment's to
    // install, not the image's.
    let script = "python3 -m venv --system-site-packages /tmp/v && /tmp/v/bin/python -c \
                  'import pytest; print(\"pytest\")'; python3 -c 'import six' 2>/dev/null || echo 'no six'";
    let (exit, log) = run(&docker, &job.spec(&image, script)).await;
    assert_eq!(exit, Exit::Code(0), "{:?}", log.0.lock().unwrap());
    assert_eq!(log.stdout(), ["pytest", "no six"]);
    assert!(!job.workspace.join("__pycache__").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_image_build_names_the_image_and_its_last_lines() {
    // A base with no package manager: the sandbox layer's first step fails.
    let empty = "forgeward/test-empty-base:1";
    let made = Command::new("bash")
        .args([
            "-c",
            &format!("tar -c --files-from /dev/null | docker import - {empty} >/dev/null"),
        ])
        .status()
        .unwrap();
    assert!(made.success(), "docker import of an empty base");
    let job = Job::new();
    let err = Images::new(empty)
        .image_for(&job.workspace)
        .await
        .unwrap_err();
    let ImageError::Build { image, log_tail } = &err else {
        panic!("{err}")
    };
    assert!(image.starts_with("forgeward/sandbox:"), "{image}");
    assert!(log_tail.contains("apt-get"), "{log_tail}");
    assert!(!err.to_string().contains('\n'), "{err}");
    let tag_exists = Command::new("docker")
        .args(["image", "inspect", image])
        .output()
        .unwrap();
    assert!(!tag_exists.status.success(), "a failed build left a tag");
}

/// Builds the checkout's image and runs `script` in it; returns its stdout.
async fn run_in_language_image(test: &str, files: &[(&str, &str)], script: &str) -> Vec<String> {
    let job = Job::new();
    for (name, content) in files {
        let path = job.workspace.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    let image = images()
        .image_for(&job.workspace)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (exit, log) = run(&backend(test), &job.spec(&image, script)).await;
    assert_eq!(exit, Exit::Code(0), "{:?}", log.0.lock().unwrap());
    log.stdout()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_checkout_of_two_ecosystems_gets_both_toolchains() {
    let files = [
        ("package.json", r#"{"name": "x", "version": "1.0.0"}"#),
        ("index.js", "console.log(6 * 7);\n"),
        ("go.mod", "module example.com/x\n\ngo 1.19\n"),
        (
            "main.go",
            "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hi\") }\n",
        ),
        (
            "main_test.go",
            "package main\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n",
        ),
    ];
    let script = "node index.js && go run . && go test ./... | cut -d' ' -f1";
    let out = run_in_language_image("node-go", &files, script).await;
    assert_eq!(out, ["42", "hi", "ok"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rust_checkout_builds_offline() {
    let manifest = "[package]\nname = \"x\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    let files = [
        ("Cargo.toml", manifest),
        ("src/main.rs", "fn main() { println!(\"{}\", 6 * 7); }\n"),
    ];
    let out = run_in_language_image("rust", &files, "cargo run --quiet").await;
    assert_eq!(out, ["42"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fork_bomb_is_bounded_by_the_process_limit() {
    let image = sandbox_image().await;
    let docker = backend("forkbomb");
    let job = Job::new();
    // Hold as many processes as it can (xargs stops at the first fork that fails, where bash
    // would retry for long), count them, then bomb until the timeout.
    let script = "seq 100 | xargs -P 100 -I{} sleep 30 2>/dev/null & sleep 3; \
                  ls -d /proc/[0-9]* | wc -l > /job-out/count; bomb() { bomb | bomb & }; bomb";
    let mut spec = job.spec(&image, script);
    spec.limits.pids = 32;
    spec.limits.timeout = Duration::from_secs(15);
    let began = Instant::now();
    let (exit, _) = run(&docker, &spec).await;
    assert_eq!(exit, Exit::TimedOut);
    assert!(
        began.elapsed() < Duration::from_secs(60),
        "{:?}",
        began.elapsed()
    );
    let count: u32 = std::fs::read_to_string(job.out.join("count"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(count <= 32, "{count} processes at once");
    assert!(labelled(&docker).is_empty(), "container left behind");
}
