//! `sandbox.network = "allowlist"` end to end, through `forgeward run` on bubblewrap and on
//! Docker: the worker's only way out is the egress gateway, which lets through what the list
//! names, puts the real secret into the one header of requests to its host (over TLS, from a
//! CA made for the job), and refuses and logs everything else. The upstreams are the test's
//! own, on loopback: a plain HTTP one and an HTTPS one with a CA of its own, which the gateway
//! is told to trust (`sandbox.upstream_ca_file`).
//!
//! The worker (`egress/probe.py`) tries every way out it can think of, and dumps everything it
//! can read into the branch; the test then looks for the real secret there, in what the
//! upstreams received, and in everything `forgeward run` printed.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::util::{FORGEWARD, TestRepo, default_path, test_tls_server};

/// The name the upstreams are reached by: the host's loopback, through `/etc/hosts`
/// (`tests/setup/egress.sh`).
fn upstream_host() -> String {
    std::env::var("FORGEWARD_TEST_EGRESS_HOST").unwrap_or_else(|_| {
        panic!("FORGEWARD_TEST_EGRESS_HOST is not set: run `eval \"$(bash tests/setup/egress.sh)\"` (tests/run does)")
    })
}

/// The secret the bot holds; the worker must only ever see its placeholder.
const REAL_KEY: &str = "sk-real-model-key-6f1d9a0c2b7e44d1";

/// Request heads an upstream received, in order.
type Seen = Arc<Mutex<Vec<String>>>;

struct Upstreams {
    tls_port: u16,
    plain_port: u16,
    /// A service on the host's loopback that no allow entry names.
    other_port: u16,
    ca_pem: String,
    tls_seen: Seen,
    plain_seen: Seen,
    other_seen: Seen,
}

/// Reads one request head, answers `body` and closes.
async fn answer<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(
    mut stream: S,
    seen: &Seen,
    body: &str,
) {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    seen.lock()
        .expect("lock")
        .push(String::from_utf8_lossy(&head).into_owned());
    let response = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

async fn plain_upstream(body: &'static str) -> (u16, Seen) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binding");
    let port = listener.local_addr().expect("address").port();
    let seen = Seen::default();
    let record = seen.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let record = record.clone();
            tokio::spawn(async move { answer(stream, &record, body).await });
        }
    });
    (port, seen)
}

async fn upstreams() -> Upstreams {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (server, ca_pem) = test_tls_server(&upstream_host(), "egress test upstream CA");
    let acceptor = tokio_rustls::TlsAcceptor::from(server);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binding");
    let tls_port = listener.local_addr().expect("address").port();
    let tls_seen = Seen::default();
    let record = tls_seen.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (acceptor, record) = (acceptor.clone(), record.clone());
            tokio::spawn(async move {
                if let Ok(tls) = acceptor.accept(stream).await {
                    answer(tls, &record, "model ok").await;
                }
            });
        }
    });
    let (plain_port, plain_seen) = plain_upstream("plain ok").await;
    let (other_port, other_seen) = plain_upstream("the host's own service").await;
    Upstreams {
        tls_port,
        plain_port,
        other_port,
        ca_pem,
        tls_seen,
        plain_seen,
        other_seen,
    }
}

fn project(upstreams: &Upstreams) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("probe.py", include_str!("egress/probe.py"))
        .write(
            "probe.json",
            format!(
                r#"{{"host": "{}", "tls_port": {}, "plain_port": {}, "other_port": {}}}"#,
                upstream_host(),
                upstreams.tls_port,
                upstreams.plain_port,
                upstreams.other_port
            ),
        )
        // A Python checkout: the Docker backend builds its image with python3.
        .write("requirements.txt", "")
        .write("calc.py", "def add(a, b):\n    return a + b\n");
    repo.commit("probe");
    repo
}

fn config(dir: &Path, upstreams: &Upstreams) -> std::path::PathBuf {
    let ca = dir.join("upstream-ca.pem");
    std::fs::write(&ca, &upstreams.ca_pem).expect("writing the CA");
    let (tls, plain, other) = (
        upstreams.tls_port,
        upstreams.plain_port,
        upstreams.other_port,
    );
    let host = upstream_host();
    // The upstreams are on the host's loopback, which only an address entry opens; the other
    // service is listed by name alone.
    let text = format!(
        r#"
[sandbox]
network = "allowlist"
allow = ["{host}:{tls}", "{host}:{plain}", "127.0.0.1:{tls}", "127.0.0.1:{plain}", "{host}:{other}"]
upstream_ca_file = "{ca}"

# The project has no tests to run: verification would only say so.
[verify]
enabled = false

[[worker.secrets]]
env = "MODEL_KEY"
hosts = ["{host}"]
header = "x-api-key"
"#,
        ca = ca.display()
    );
    let path = dir.join("forgeward.toml");
    std::fs::write(&path, text).expect("writing the configuration");
    path
}

struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

async fn run(repo: &TestRepo, config: &Path, backend: &str) -> Ran {
    let mut cmd = Command::new(FORGEWARD);
    cmd.args(["run", "--repo"])
        .arg(repo.root())
        .args([
            "--task",
            "Probe the network",
            "--worker",
            "python3 probe.py",
        ])
        .args(["--sandbox", backend, "--branch", "probed", "--no-cache"])
        .arg("--config")
        .arg(config)
        .env_clear()
        .env("PATH", default_path())
        .env("HOME", repo.path(".home"))
        .env("MODEL_KEY", REAL_KEY)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    if let Ok(base) = std::env::var("FORGEWARD_TEST_DOCKER_BASE") {
        cmd.env("FORGEWARD_SANDBOX_DOCKER_BASE", base);
    }
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("the run's thread")
        .expect("running forgeward");
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The worker's result for probe `name` (what follows `PROBE name`).
fn probe<'a>(ran: &'a Ran, name: &str) -> &'a str {
    let needle = format!("PROBE {name}");
    ran.stderr
        .lines()
        .find_map(|l| {
            let (_, rest) = l.split_once(&needle)?;
            (rest.is_empty() || rest.starts_with(' ')).then(|| rest.trim_start())
        })
        .unwrap_or_else(|| panic!("no result for {name}:\n{}", ran.stderr))
}

async fn the_gateway_is_the_only_way_out(backend: &str) {
    let upstreams = upstreams().await;
    let repo = project(&upstreams);
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path(), &upstreams);
    let ran = run(&repo, &config, backend).await;
    let all = format!("{}\n{}", ran.stdout, ran.stderr);
    assert!(matches!(ran.code, 0 | 1), "{all}");
    probe(&ran, "done");

    // Through the gateway: the secret's host, over TLS, with the real value put in.
    assert!(
        probe(&ran, "secret-host").starts_with("200 model ok"),
        "{all}"
    );
    assert!(
        probe(&ran, "secret-host-again").starts_with("200 model ok"),
        "{all}"
    );
    let tls_seen = upstreams.tls_seen.lock().expect("lock").clone();
    assert_eq!(tls_seen.len(), 2, "{tls_seen:?}");
    for head in &tls_seen {
        let key = head
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(": ")?;
                name.eq_ignore_ascii_case("x-api-key").then_some(value)
            })
            .unwrap_or_else(|| panic!("no key in {head:?}"));
        assert_eq!(key, REAL_KEY, "the upstream gets the real value");
    }
    assert!(
        probe(&ran, "plain-allowed").starts_with("200 plain ok"),
        "{all}"
    );

    // Refused, each with its reason.
    for name in [
        "placeholder-to-plain",
        "unlisted",
        "placeholder-to-unlisted",
        "literal-ip",
        "metadata",
        "loopback-by-name",
        "host-loopback",
    ] {
        assert!(probe(&ran, name).starts_with("403"), "{name}: {all}");
    }
    assert!(probe(&ran, "unlisted-tls").starts_with("failed"), "{all}");
    let plain_seen = upstreams.plain_seen.lock().expect("lock").clone();
    assert_eq!(plain_seen.len(), 1, "only /plain arrives: {plain_seen:?}");
    assert!(
        plain_seen[0].starts_with("GET /plain HTTP/1.1"),
        "{plain_seen:?}"
    );
    assert!(upstreams.other_seen.lock().expect("lock").is_empty());

    // Around the gateway: nothing.
    for name in ["direct-plain", "direct-tls", "dns"] {
        assert!(probe(&ran, name).starts_with("failed"), "{name}: {all}");
    }

    // The real value is nowhere the worker could read, nor in anything printed.
    let dump = repo.git(&["show", "probed:dump.txt"]);
    assert!(dump.contains("fwph_"), "the dump holds the placeholder");
    assert!(
        dump.contains("BEGIN CERTIFICATE"),
        "the dump read the gateway's directory"
    );
    assert!(
        !dump.contains(REAL_KEY),
        "the worker could read the real secret"
    );
    assert!(
        !all.contains(REAL_KEY),
        "the real secret was printed:\n{all}"
    );

    // The job log shows each attempt.
    let egress: Vec<&str> = ran
        .stderr
        .lines()
        .filter(|l| l.contains("egress: "))
        .collect();
    let logged = |what: &str, verdict: &str| {
        egress
            .iter()
            .any(|l| l.contains(what) && l.contains(verdict))
    };
    let host = upstream_host();
    for (port, verdict) in [
        (upstreams.tls_port, "allowed"),
        (upstreams.plain_port, "allowed"),
        (upstreams.other_port, "refused"),
    ] {
        assert!(logged(&format!("{host}:{port}"), verdict), "{egress:#?}");
    }
    for refused in [
        "unlisted.example:80",
        "203.0.113.7:80",
        "169.254.169.254:80",
        &format!("127.0.0.1:{}", upstreams.other_port),
        "unlisted.example:443",
    ] {
        assert!(logged(refused, "refused"), "{refused}: {egress:#?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn bwrap_the_gateway_is_the_only_way_out_and_keeps_the_secret() {
    the_gateway_is_the_only_way_out("bwrap").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn docker_the_gateway_is_the_only_way_out_and_keeps_the_secret() {
    assert!(
        std::env::var("FORGEWARD_TEST_DOCKER_BASE").is_ok(),
        "FORGEWARD_TEST_DOCKER_BASE is not set: run `eval \"$(bash tests/setup/docker.sh)\"` (tests/run does)"
    );
    the_gateway_is_the_only_way_out("docker").await;
}
