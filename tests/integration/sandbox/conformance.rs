//! The sandbox conformance suite, written once for every backend: each behaviour is an async
//! function taking the backend and the image to run, and [`sandbox_conformance!`] turns the
//! whole list into one `#[tokio::test]` per behaviour for a backend:
//!
//! ```ignore
//! sandbox_conformance!(bwrap, forgeward::sandbox::Bwrap::new(), None);
//! sandbox_conformance!(docker, make_docker(), Some(base_image_id().await));
//! ```
//!
//! Both expressions are evaluated inside each test's async body, so they may `.await`. The
//! environment a worker sees must be exactly the allowed variables plus `HOME`, `PATH`, `LANG`,
//! `TMPDIR` (and what bash exports itself): a backend adding anything (Docker's `HOSTNAME`)
//! fails `environment_is_only_the_allowed_variables`.
//!
//! Worker scripts use only bash and coreutils, which every sandbox image has. Each behaviour
//! first checks the backend can run at all and fails with the backend's one-line reason when it
//! cannot: a missing sandbox is a failure, never a skip.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

use forgeward::sandbox::{Exit, JobLog, Redactor, Sandbox, Stream};
use tokio_util::sync::CancellationToken;

use super::harness::{
    Captured, DATA_SECRET, Job, MODEL_KEY, Setup, dir_size, fs_available, host_process_count,
    host_processes_with, run,
};

/// One `#[tokio::test]` per behaviour below, in a module named after the backend.
macro_rules! sandbox_conformance {
    ($name:ident, $backend:expr, $image:expr) => {
        $crate::sandbox::conformance::sandbox_conformance!($name, $backend, $image, false);
    };
    ($name:ident, $backend:expr, $image:expr, $gateway:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            $crate::sandbox::conformance::sandbox_conformance!(
                @tests $backend, $crate::sandbox::harness::Setup { image: $image, gateway: $gateway };
                honest_path,
                environment_is_only_the_allowed_variables,
                network_is_unreachable,
                reads_outside_the_mounts_fail,
                writes_outside_the_workspace_fail,
                protected_files_cannot_be_changed,
                protected_paths_stay_inside_the_workspace,
                fork_bomb_is_bounded,
                memory_is_bounded,
                disk_filling_is_bounded,
                timeout_kills_the_whole_tree,
                cancellation_kills_the_whole_tree,
                secrets_printed_are_redacted_in_the_job_log,
            );
        }
    };
    (@tests $backend:expr, $setup:expr; $($behaviour:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $behaviour() {
                let backend = $backend;
                $crate::sandbox::conformance::$behaviour(&backend, $setup).await;
            }
        )*
    };
}
pub(crate) use sandbox_conformance;

/// A fake forge token in the test process's own environment, which no worker may see.
const HOST_TOKEN: &str = "ghp_HostTokenTheWorkerMustNeverSee0123456";

/// The variables a worker sees: the backend's four, the allowed ones, and what bash itself
/// exports to the commands it runs.
const EXPECTED_ENV: [&str; 11] = [
    "_",
    "FORGEWARD_JOB_ID",
    "FORGEWARD_TASK_FILE",
    "HOME",
    "LANG",
    "MODEL_API_KEY",
    "OLDPWD",
    "PATH",
    "PWD",
    "SHLVL",
    "TMPDIR",
];

/// What the worker sees besides with the gateway on and no secret to inject: the proxy
/// variables the usual clients read, pointing at the forwarder, and the loopback kept off it.
const GATEWAY_ENV: [&str; 11] = [
    "ALL_PROXY",
    "CARGO_HTTP_PROXY",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NODE_USE_ENV_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "npm_config_https_proxy",
    "npm_config_proxy",
];

/// Puts fake forge tokens into this process's environment, once, before any sandbox starts.
fn plant_host_tokens() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: set once, before the first sandbox of this suite starts; std serializes its own
        // environment access, and no test reads these names except through a sandbox.
        unsafe {
            std::env::set_var("FORGEWARD_GITHUB_TOKEN", HOST_TOKEN);
            std::env::set_var("GITHUB_TOKEN", HOST_TOKEN);
        }
    });
}

/// Fails the test, with the backend's reason, when the backend cannot run here.
async fn ready(backend: &dyn Sandbox) {
    plant_host_tokens();
    if let Err(e) = backend.check().await {
        panic!(
            "the {} sandbox cannot run on this machine: {e} (tests/setup/{}.sh sets it up)",
            backend.name(),
            backend.name()
        );
    }
}

pub async fn honest_path(backend: &dyn Sandbox, setup: Setup) {
    ready(backend).await;
    let job = Job::new();
    let script = r#"
        echo "out 1"
        echo "err 1" >&2
        echo "out 2"
        sleep 0.2
        echo "err 2" >&2
        echo "pwd $(pwd)"
        echo "uid $(id -u)"
        head -n 1 "$FORGEWARD_TASK_FILE"
        grep -c acme /job/job.json
        cat README.md
        echo "the worker was here" > /workspace/result.txt
        mkdir -p /workspace/src && echo "fn main() {}" > /workspace/src/main.rs
        echo "Fixed the parser." > /job-out/summary.md
        echo "out 3"
        exit 3
    "#;
    let log = Captured::default();
    let (exit, _) = run(
        backend,
        &job.spec_in(script, setup),
        &log,
        CancellationToken::new(),
    )
    .await;
    assert_eq!(
        exit,
        Exit::Code(3),
        "the exit code propagates:\n{}",
        log.text()
    );
    assert_eq!(
        log.stream(Stream::Stdout),
        [
            "out 1",
            "out 2",
            "pwd /workspace",
            &format!("uid {}", uid_line(&log)),
            "# Fix the parser",
            "1",
            "# widget",
            "out 3"
        ],
        "stdout arrives whole and in order"
    );
    assert_eq!(log.stream(Stream::Stderr), ["err 1", "err 2"]);
    assert_ne!(uid_line(&log), "0", "the worker must not be root");
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
    assert_eq!(
        read(&job.workspace.join("result.txt")),
        "the worker was here\n"
    );
    assert_eq!(read(&job.workspace.join("src/main.rs")), "fn main() {}\n");
    assert_eq!(read(&job.out.join("summary.md")), "Fixed the parser.\n");
}

/// The uid the worker printed (`uid N`).
fn uid_line(log: &Captured) -> String {
    log.stream(Stream::Stdout)
        .iter()
        .find_map(|l| l.strip_prefix("uid ").map(str::to_owned))
        .unwrap_or_default()
}

pub async fn environment_is_only_the_allowed_variables(backend: &dyn Sandbox, setup: Setup) {
    ready(backend).await;
    let job = Job::new();
    let gateway = setup.gateway;
    let script = r#"cd /tmp && cd /workspace && env | cut -d= -f1 | sort; echo "key $MODEL_API_KEY"; echo "node-options ${NODE_OPTIONS-}"; cat /proc/self/environ | tr '\0' '\n' | grep -c TOKEN || true"#;
    let log = Captured::default();
    let (exit, _) = run(
        backend,
        &job.spec_in(script, setup),
        &log,
        CancellationToken::new(),
    )
    .await;
    assert_eq!(exit, Exit::Code(0), "{}", log.text());
    let stdout = log.stream(Stream::Stdout);
    // A backend under an address-space limit gives Node.js the one option that lets it use
    // WebAssembly there (bubblewrap, when the host's node knows it), and nothing else.
    let node_options = stdout
        .iter()
        .find_map(|l| l.strip_prefix("node-options "))
        .unwrap_or_default();
    assert!(
        ["", "--disable-wasm-trap-handler"].contains(&node_options),
        "NODE_OPTIONS={node_options:?}"
    );
    let names: BTreeSet<&str> = stdout
        .iter()
        .take_while(|l| !l.starts_with("key "))
        .map(String::as_str)
        .filter(|name| *name != "NODE_OPTIONS")
        .collect();
    let expected: BTreeSet<&str> = EXPECTED_ENV
        .into_iter()
        .chain(GATEWAY_ENV.into_iter().filter(|_| gateway))
        .collect();
    assert_eq!(
        names, expected,
        "the worker sees exactly the allowed variables"
    );
    assert!(stdout.contains(&format!("key {MODEL_KEY}")), "{stdout:?}");
    assert_eq!(
        stdout.last().map(String::as_str),
        Some("0"),
        "no *TOKEN* variable"
    );
    assert!(!log.text().contains(HOST_TOKEN), "the host's token leaked");
    assert_eq!(std::env::var("GITHUB_TOKEN").as_deref(), Ok(HOST_TOKEN));
}

pub async fn network_is_unreachable(backend: &dyn Sandbox, setup: Setup) {
    ready(backend).await;
    let listener = std::net::TcpListener::bind("0.0.0.0:0").expect("binding a listener");
    listener.set_nonblocking(true).expect("non-blocking");
    let port = listener.local_addr().expect("an address").port();
    // The host's address on its outward interface, when it has one (no packet is sent).
    let outward = std::net::UdpSocket::bind("0.0.0.0:0")
        .and_then(|s| s.connect("192.0.2.1:9").and(s.local_addr()))
        .map(|a| a.ip())
        .ok()
        .filter(|ip| !ip.is_loopback() && !ip.is_unspecified());
    let mut addresses = vec!["127.0.0.1".to_owned()];
    addresses.extend(outward.map(|ip| ip.to_string()));
    let job = Job::new();
    let script = format!(
        r#"
        for addr in {addrs}; do
            if timeout 5 bash -c "exec 3<>/dev/tcp/$addr/{port}" 2>/dev/null; then
                echo "CONNECTED $addr"
            else
                echo "unreachable $addr"
            fi
        done
        tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sed 's/^/interface /'
        "#,
        addrs = addresses.join(" "),
    );
    let log = Captured::default();
    let (exit, _) = run(
        backend,
        &job.spec_in(&script, setup),
        &log,
        CancellationToken::new(),
    )
    .await;
    assert_eq!(exit, Exit::Code(0), "{}", log.text());
    let stdout = log.stream(Stream::Stdout);
    for addr in &addresses {
        assert!(
            stdout.contains(&format!("unreachable {addr}")),
            "{stdout:?}"
        );
    }
    let interfaces: Vec<&String> = stdout
        .iter()
        .filter(|l| l.starts_with("interface "))
        .collect();
    assert_eq!(interfaces, ["interface lo"], "only a loopback of its own");
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the host's listener was reached"
    );
}

pub async fn reads_outside_the_mounts_fail(backend: &dyn Sandbox, setup: Setup) {
    ready(backend).await;
    let job = Job::new();
    let script = format!(
        r#"
        for f in "{data}/secret.txt" "{mirror}/config" /etc/shadow /root/.bashrc /root/.cargo/env; do
            if cat "$f" 2>/dev/null; then echo "READ $f"; else echo "denied $f"; fi
        done
        ls -A /root 2>/dev/null | sed 's/^/in root: /'
        ls -A "{data}" 2>/dev/null | sed 's/^/in data: /'
        echo finished
        "#,
        data = job.data.display(),
        mirror = job.mirror.display(),
    );
    let log = Captured::default();
    let (exit, _) = run(
        backend,
        &job.spec_in(&script, setup),
        &log,
        CancellationToken::new(),
    )
    .await;
    assert_eq!(exit, Exit::Code(0), "{}", log.text());
    let text = log.text();
    assert!(text.contains("finished"), "{text}");
    assert!(
        !text.contains("READ "),
        "a file outside the mounts was read:\n{text}"
    );
    assert!(
        !text.contains(DATA_SECRET),
        "the bot's data leaked:\n{text}"
    );
    assert!(
        !text.contains("in root: "),
        "the host's /root is visible:\n{text}"
    );
    assert!(
        !text.contains("in data: "),
        "the bot's data dir is visible:\n{text}"
    );
}

pub async fn writes_outside_the_workspace_fail(backend: &dyn Sandbox, setup: Setup) {
    ready(backend).await;
    let job = Job::new();
    let probe = format!("forgeward-probe-{}", std::process::id());
    let script = format!(
        r#"
        for f in /usr/{p} /usr/bin/{p} /etc/{p} /job/{p} /job/task.md /{p} /bin/{p} /workspace/../{p}; do
            if (echo x >> "$f") 2>/dev/null; then echo "WROTE $f"; else echo "denied $f"; fi
        done
        echo inside > /workspace/inside.txt && echo finished
        "#,
        p = probe
    );
    let log = Captured::default();
    let (exit, _) = run(
        backend,
        &job.spec_in(&script, setup),
        &log,
        CancellationToken::new(),
    )
    .await;
    assert_eq!(exit, Exit::Code(0), "{}", log.text());
    let text = log.text();
    assert!(text.contains("finished"), "{text}");
    assert!(
        !text.contains("WROTE "),
        "a write outside /workspace succeeded:\n{text}"
    );
    for dir in ["/usr", "/usr/bin", "/etc", "/", "/bin"] {
        assert!(
            !Path::new(dir).join(&probe).exists(),
            "{dir}/{probe} on the host"
        );
    }
    let task = std::fs::read_to_string(job.job.join("task.md")).expect("reading task.md");
    assert_eq!(
        task, "# Fix the parser\nIt fails on tabs.\n",
        "/job changed"
    );
    assert_eq!(std::fs::read_dir(&job.job).expect("listing").count(), 2);
    assert!(job.workspace.join("inside.txt").exists());
}

/// `[job] tests = "read-only"`: each way a worker could change a protected test fails inside
/// the sandbox, while production files and new tests go through.
pub async fn protected_files_cannot_be_changed(backend: &dyn Sandbox, setup: Setup) {
    use std::os::unix::fs::PermissionsExt;
    ready(backend).await;
    let job = Job::new();
    let files = [
        (
            "tests/test_calc.py",
            "def test_add():\n    assert add(2, 3) == 5\n",
        ),
        (
            "tests/unit/test_deep.py",
            "def test_deep():\n    assert deep() == 1\n",
        ),
        ("src/calc.py", "def add(a, b):\n    return a - b\n"),
    ];
    for (path, text) in files {
        let path = job.workspace.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&path, text).expect("writing");
    }
    let mode_before = std::fs::metadata(job.workspace.join("tests/test_calc.py"))
        .expect("stat")
        .permissions()
        .mode();
    let script = r#"
        attempt() { local what="$1"; shift; if ( "$@" ) 2>/dev/null; then echo "CHANGED $what"; else echo "refused $what"; fi; }
        attempt rm-rf rm -rf tests
        attempt append sh -c 'echo "assert True" >> tests/test_calc.py'
        attempt truncate sh -c ': > tests/test_calc.py'
        attempt rm rm -f tests/test_calc.py
        attempt mv-over sh -c 'printf "def test_add(): pass
" > tests/new.py && mv -f tests/new.py tests/test_calc.py'
        attempt sed-i sed -i s/5/-1/ tests/test_calc.py
        attempt chmod chmod 0777 tests/test_calc.py
        attempt symlink-swap sh -c 'ln -s /workspace/src/calc.py tests/link && mv -f tests/link tests/test_calc.py'
        attempt ln-sf ln -sf /workspace/src/calc.py tests/test_calc.py
        attempt hard-link sh -c 'ln tests/test_calc.py hard && echo "assert True" >> hard'
        attempt dir-rename sh -c 'mv tests tests_old && mkdir -p tests/unit && printf "def test_add(): pass
" > tests/test_calc.py'
        attempt subdir-rename mv tests/unit tests/unit_old
        attempt deep-append sh -c 'echo "assert True" >> tests/unit/test_deep.py'
        printf 'def add(a, b):
    return a + b
' > src/calc.py && echo "production edited"
        printf 'def test_sub():
    assert 1 == 1
' > tests/test_new.py && echo "new test written"
        printf 'def test_more():
    assert 2 == 2
' > tests/unit/test_more.py && echo "nested test written"
    "#;
    let mut spec = job.spec_in(script, setup);
    spec.read_only = vec![
        "tests/test_calc.py".into(),
        "tests/unit/test_deep.py".into(),
    ];
    let log = Captured::default();
    let (exit, _) = run(backend, &spec, &log, CancellationToken::new()).await;
    let text = log.text();
    assert_eq!(exit, Exit::Code(0), "{text}");
    for what in [
        "rm-rf",
        "append",
        "truncate",
        "rm",
        "mv-over",
        "sed-i",
        "chmod",
        "symlink-swap",
        "ln-sf",
        "hard-link",
        "dir-rename",
        "subdir-rename",
        "deep-append",
    ] {
        assert!(
            text.contains(&format!("refused {what}\n")),
            "`{what}` was not refused:\n{text}"
        );
    }
    for done in [
        "production edited",
        "new test written",
        "nested test written",
    ] {
        assert!(text.contains(done), "{done}:\n{text}");
    }
    let read = |p: &str| std::fs::read_to_string(job.workspace.join(p)).unwrap_or_default();
    assert_eq!(read("tests/test_calc.py"), files[0].1);
    assert_eq!(read("tests/unit/test_deep.py"), files[1].1);
    assert_eq!(read("src/calc.py"), "def add(a, b):\n    return a + b\n");
    assert!(read("tests/test_new.py").contains("test_sub"));
    assert!(read("tests/unit/test_more.py").contains("test_more"));
    let meta = std::fs::symlink_metadata(job.workspace.join("tests/test_calc.py")).expect("stat");
    assert!(meta.file_type().is_file(), "no longer a regular file");
    assert_eq!(meta.permissions().mode(), mode_before, "its mode changed");
    assert!(!job.workspace.join("tests_old").exists());
}

/// A protected path that would leave the workspace is refused before anything runs.
pub async fn protected_paths_stay_inside_the_workspace(backend: &dyn Sandbox, setup: Setup) {
    ready(backend).await;
    let job = Job::new();
    let mut spec = job.spec_in("echo ran", setup);
    spec.read_only = vec!["../data/secret.txt".into()];
    let log = Captured::default();
    let err = backend
        .run(&spec, &log, CancellationToken::new())
        .await
        .expect_err("a path outside the workspace must be refused");
    assert!(
        err.to_string()
            .contains("the protected path ../data/secret.txt is not inside the workspace"),
        "{err}"
    );
    assert!(!log.text().contains("ran"), "{}", log.text());
}

pub async fn fork_bomb_is_bounded(backend: &dyn Sandbox, setup: Setup) {
    ready(backend).await;
    let job = Job::new();
    let mut spec = job.spec_in("b() { b | b & }; b; sleep 5; echo survived", setup);
    spec.limits.pids = 64;
    spec.limits.timeout = Duration::from_secs(8);
    // Watch the host's process count while the bomb goes off: unbounded, it reaches thousands
    // within a second.
    let baseline = host_process_count();
    let stop = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicUsize::new(0));
    let sampler = {
        let (stop, peak) = (stop.clone(), peak.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                peak.fetch_max(host_process_count(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    let log = JobLog::new(Redactor::default());
    let (exit, took) = run(backend, &spec, &log, CancellationToken::new()).await;
    stop.store(true, Ordering::Relaxed);
    sampler.join().expect("the sampler");
    assert!(
        took < spec.limits.timeout + Duration::from_secs(5),
        "took {took:?}"
    );
    // The run ends either way (the worker's own shell exits, or the timeout); what shows the
    // bound held is the kernel refusing forks.
    assert!(
        matches!(exit, Exit::Code(_) | Exit::TimedOut | Exit::Signal(_)),
        "{exit:?}"
    );
    assert!(
        log.text().contains("Resource temporarily unavailable"),
        "no fork was refused:\n{}",
        log.tail(20).join("\n")
    );
    // Other work on the machine moves the count too; the slack is far below a bomb's reach.
    let slack = 150;
    let peak = peak.load(Ordering::Relaxed);
    assert!(
        peak <= baseline + spec.limits.pids as usize + slack,
        "{peak} processes at the peak, {baseline} before"
    );
    let after = host_process_count();
    assert!(
        after <= baseline + slack,
        "{after} processes after, {baseline} before"
    );
    let echo = tokio::process::Command::new("true").status().await;
    assert!(
        echo.is_ok_and(|s| s.success()),
        "the host cannot fork any more"
    );
}

pub async fn memory_is_bounded(backend: &dyn Sandbox, setup: Setup) {
    ready(backend).await;
    let job = Job::new();
    // `tail` holds a line without a newline whole: 512 MiB of zeros, against a 256 MiB limit.
    let script = r#"head -c 512M /dev/zero | tail -n 1 | wc -c | sed 's/^/kept /'; echo "status ${PIPESTATUS[1]}""#;
    let mut spec = job.spec_in(script, setup);
    spec.limits.memory_bytes = 256 << 20;
    let log = Captured::default();
    let (exit, took) = run(backend, &spec, &log, CancellationToken::new()).await;
    assert_ne!(exit, Exit::TimedOut, "{}", log.text());
    assert!(took < Duration::from_secs(25), "took {took:?}");
    let stdout = log.stream(Stream::Stdout);
    assert!(!stdout.contains(&"kept 536870912".to_owned()), "{stdout:?}");
    assert!(!stdout.contains(&"status 0".to_owned()), "{stdout:?}");
}

pub async fn disk_filling_is_bounded(backend: &dyn Sandbox, setup: Setup) {
    ready(backend).await;
    let job = Job::new();
    let script = r#"
        head -c 16M /dev/zero > /workspace/big; echo "big $?"
        head -c 16M /dev/zero > /tmp/big; echo "tmp big $?"
        i=0
        while head -c 2M /dev/zero > /workspace/fill$i; do i=$((i+1)); done
        echo "stopped at $i"
        exit 1
    "#;
    let mut spec = job.spec_in(script, setup);
    spec.limits.file_size_bytes = 4 << 20;
    spec.limits.disk_bytes = 24 << 20;
    let free = || fs_available(&job.workspace);
    let before = free();
    let log = Captured::default();
    let (exit, took) = run(backend, &spec, &log, CancellationToken::new()).await;
    let after = free();
    let stdout = log.stream(Stream::Stdout);
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert!(
        matches!(exit, Exit::DiskFull | Exit::Signal(_)) || matches!(exit, Exit::Code(c) if c != 0),
        "{exit:?}:\n{}",
        log.text()
    );
    // A file past the size limit is cut off by SIGXFSZ (exit 153) or refused.
    let big = std::fs::metadata(job.workspace.join("big"))
        .map(|m| m.len())
        .unwrap_or(0);
    assert!(
        big <= spec.limits.file_size_bytes,
        "a {big}-byte file was written"
    );
    assert!(
        stdout.iter().any(|l| l.starts_with("big ") && l != "big 0"),
        "{stdout:?}"
    );
    // What the worker can write between two measurements is what it may overshoot by.
    let used = dir_size(&job.workspace);
    let overshoot = 64 << 20;
    assert!(
        used <= spec.limits.disk_bytes + overshoot,
        "the workspace grew to {used} bytes"
    );
    // Other work on the machine moves free space too; the slack is far below an unbounded fill.
    let shrunk = before.saturating_sub(after);
    assert!(
        shrunk <= spec.limits.disk_bytes + (256 << 20),
        "the host lost {shrunk} bytes of free space"
    );
}

/// A worker that leaves a double-forked daemon (to write `marker` after `delay` seconds) and a
/// plain background child, then waits forever. `tag` marks its processes' command lines.
fn lingering_script(delay: u32, tag: &str) -> String {
    format!(
        r#"
        (setsid bash -c 'sleep {delay}; echo alive > /workspace/late-marker' >/dev/null 2>&1 &)
        sleep {tag} &
        echo started
        sleep {tag}
        "#
    )
}

/// Asserts nothing of a lingering worker survives: no process with its tag, and no marker
/// written once the daemon's delay has passed.
async fn assert_nothing_survives(job: &Job, started: Instant, delay: u32, tag: &str) {
    assert_eq!(
        host_processes_with(tag),
        Vec::<String>::new(),
        "processes survived"
    );
    let deadline = started + Duration::from_secs(u64::from(delay) + 1);
    tokio::time::sleep_until(deadline.into()).await;
    assert!(
        !job.workspace.join("late-marker").exists(),
        "the double-forked daemon outlived the run"
    );
}

pub async fn timeout_kills_the_whole_tree(backend: &dyn Sandbox, setup: Setup) {
    ready(backend).await;
    let job = Job::new();
    let tag = "1000.0417";
    let delay = 5;
    let mut spec = job.spec_in(&lingering_script(delay, tag), setup);
    spec.limits.timeout = Duration::from_secs(2);
    let log = Captured::default();
    let started = Instant::now();
    let (exit, took) = run(backend, &spec, &log, CancellationToken::new()).await;
    assert_eq!(exit, Exit::TimedOut, "{}", log.text());
    assert!(
        took < spec.limits.timeout + Duration::from_secs(5),
        "took {took:?}"
    );
    assert_eq!(log.stream(Stream::Stdout), ["started"]);
    assert_nothing_survives(&job, started, delay, tag).await;
}

pub async fn cancellation_kills_the_whole_tree(backend: &dyn Sandbox, setup: Setup) {
    ready(backend).await;
    let job = Job::new();
    let tag = "1000.0815";
    let delay = 4;
    let spec = job.spec_in(&lingering_script(delay, tag), setup);
    let cancel = CancellationToken::new();
    let trigger = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            cancel.cancel();
        })
    };
    let log = Captured::default();
    let started = Instant::now();
    let (exit, took) = run(backend, &spec, &log, cancel).await;
    trigger.await.expect("the cancelling task");
    assert_eq!(exit, Exit::Cancelled, "{}", log.text());
    assert!(took < Duration::from_secs(6), "took {took:?}");
    assert_nothing_survives(&job, started, delay, tag).await;
}

pub async fn secrets_printed_are_redacted_in_the_job_log(backend: &dyn Sandbox, setup: Setup) {
    ready(backend).await;
    let job = Job::new();
    let script = r#"
        echo "using key $MODEL_API_KEY"
        echo "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwx'" >&2
        echo "pushing with ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
        echo "commit 3f786850e387550fdab836ed7e6dc881de23001b"
    "#;
    let log = JobLog::new(Redactor::new([MODEL_KEY]));
    let (exit, _) = run(
        backend,
        &job.spec_in(script, setup),
        &log,
        CancellationToken::new(),
    )
    .await;
    assert_eq!(exit, Exit::Code(0), "{}", log.text());
    let text = log.text();
    assert!(!text.contains(MODEL_KEY), "{text}");
    assert!(!text.contains("abcdefghijklmnopqrstuvwx"), "{text}");
    assert!(!text.contains("ghp_AbCd"), "{text}");
    assert!(text.contains("using key ***\n"), "{text}");
    assert!(text.contains("pushing with ***\n"), "{text}");
    assert!(
        text.contains("commit 3f786850e387550fdab836ed7e6dc881de23001b\n"),
        "{text}"
    );
    let commit = "commit 3f786850e387550fdab836ed7e6dc881de23001b".to_owned();
    assert!(log.tail(4).contains(&commit), "{:?}", log.tail(4));
}

/// With the gateway on, the worker's only way out is the forwarder in front of its command:
/// the proxy variables point at it, a request through it arrives at the gateway's socket as
/// sent, the gateway's directory cannot be written, the exit code still comes through, and
/// nothing else is reachable (`network_is_unreachable` runs with the gateway on as well).
pub async fn the_gateway_is_the_only_way_out(backend: &dyn Sandbox, setup: Setup) {
    ready(backend).await;
    let job = Job::new();
    let (seen_tx, seen_rx) = std::sync::mpsc::channel::<String>();
    job.gateway_with(move |listener| {
        use std::io::{Read, Write};
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let _ = seen_tx.send(String::from_utf8_lossy(&head).into_owned());
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\npong\n",
            );
        }
    });
    let script = r#"
        echo "proxy $HTTPS_PROXY $http_proxy"
        exec 3<>/dev/tcp/127.0.0.1/3128
        printf 'GET http://example.test/ping HTTP/1.1\r\nHost: example.test\r\nConnection: close\r\n\r\n' >&3
        tr -d '\r' <&3
        exec 3<&-
        if touch /run/forgeward/planted 2>/dev/null; then echo "WROTE the gateway directory"; fi
        if getent hosts example.test >/dev/null 2>&1; then echo "RESOLVED a name"; fi
        tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sed 's/^/interface /'
        exit 5
    "#;
    let log = Captured::default();
    let setup = Setup {
        gateway: true,
        ..setup
    };
    let (exit, _) = run(
        backend,
        &job.spec_in(script, setup),
        &log,
        CancellationToken::new(),
    )
    .await;
    assert_eq!(
        exit,
        Exit::Code(5),
        "the worker's exit code:\n{}",
        log.text()
    );
    let stdout = log.stream(Stream::Stdout);
    assert!(
        stdout.contains(&"proxy http://127.0.0.1:3128 http://127.0.0.1:3128".to_owned()),
        "{stdout:?}"
    );
    assert!(stdout.contains(&"HTTP/1.1 200 OK".to_owned()), "{stdout:?}");
    assert!(stdout.contains(&"pong".to_owned()), "{stdout:?}");
    let seen = seen_rx
        .recv_timeout(Duration::from_secs(5))
        .expect("the request reached the gateway");
    assert!(
        seen.starts_with("GET http://example.test/ping HTTP/1.1\r\n"),
        "{seen:?}"
    );
    assert!(!log.text().contains("WROTE"), "{}", log.text());
    assert!(!log.text().contains("RESOLVED"), "{}", log.text());
    let interfaces: Vec<&String> = stdout
        .iter()
        .filter(|l| l.starts_with("interface "))
        .collect();
    assert_eq!(interfaces, ["interface lo"], "only a loopback of its own");
    assert!(!job.egress_dir().join("planted").exists());
}
