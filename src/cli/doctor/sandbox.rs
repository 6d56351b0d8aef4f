//! The sandbox check: the backend the settings choose (bubblewrap or Docker, through the real
//! [`Sandbox`] implementations, with the configured limits) runs a trivial worker, and that
//! worker has no network: it lists the network interfaces its namespace has
//! (`/proc/net/dev`) and tries to connect to a port the doctor listens on at 127.0.0.1 on the
//! host. With `sandbox.network = "none"` only `lo` may be there and the connection must fail
//! (inside, 127.0.0.1 is the sandbox's own loopback); the doctor's listener must see nothing.
//!
//! The worker runs in a temporary directory of its own, removed after. Docker containers carry
//! the owner `forgeward-doctor`, so a starting `serve` never reaps the doctor's container and
//! the doctor never touches the bot's; without `worker.image` the sandbox base image is built
//! first when it is not there yet, as the bot's first job would build it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use forgeward::config::server::{Backend, Network, Settings};
use forgeward::jobs::setup::limits;
use forgeward::sandbox::{
    Bwrap, Docker, Exit, Images, LogSink, Sandbox, SandboxError, SandboxSpec, Stream,
};
use tokio_util::sync::CancellationToken;

use super::{Context, Line, Pending};

/// How long the trivial worker may run: it prints a few lines; a sandbox that takes longer to
/// start than this is broken.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long preparing may take: on Docker without `worker.image`, building the sandbox base
/// image once (a minute or two on a fresh machine).
const PREPARE_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// What the probe's lines start with, so its own output is told from anything else printed.
const TAG: &str = "forgeward-doctor:";

/// Owns the Docker containers the doctor starts.
const DOCKER_OWNER: &str = "forgeward-doctor";

pub(super) fn check(cx: &mut Context) -> Pending<'_> {
    Box::pin(async move {
        let settings = match cx.settings_or_skip("sandbox") {
            Ok(settings) => settings,
            Err(skipped) => return skipped,
        };
        match probe(settings).await {
            Ok(lines) => lines,
            Err(line) => vec![*line],
        }
    })
}

/// The worker's lines.
#[derive(Default)]
struct Collected(Mutex<Vec<String>>);

impl LogSink for Collected {
    fn line(&self, _stream: Stream, line: &str) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(line.to_owned());
    }
}

async fn probe(settings: &Settings) -> Result<Vec<Line>, Box<Line>> {
    let backend = settings.sandbox.backend;
    let name = backend.as_str();
    let subject = format!("sandbox ({name})");
    let sandbox: Box<dyn Sandbox> = match backend {
        Backend::Bwrap => Box::new(Bwrap::new()),
        Backend::Docker => Box::new(
            Docker::new(DOCKER_OWNER).with_images(Images::new(&settings.sandbox.docker_base)),
        ),
    };
    let unusable = |e: SandboxError| {
        Box::new(Line::fail(
            &subject,
            format!("cannot run a worker: {e}"),
            match backend {
                Backend::Bwrap => {
                    "install bubblewrap and util-linux (apt-get install bubblewrap), and let this \
                     user create namespaces (as root, or with unprivileged user namespaces \
                     allowed); or set sandbox.backend = \"docker\""
                }
                Backend::Docker => {
                    "start the Docker daemon and let this user reach it (the docker group, or \
                     DOCKER_HOST); with worker.image, pull it first; or set sandbox.backend = \
                     \"bwrap\""
                }
            },
        ))
    };
    sandbox.check().await.map_err(unusable)?;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| Box::new(host_error(&subject, format!("listening on 127.0.0.1: {e}"))))?;
    let port = listener
        .local_addr()
        .map_err(|e| Box::new(host_error(&subject, e.to_string())))?
        .port();
    let reached = Arc::new(AtomicUsize::new(0));
    let counter = reached.clone();
    let accepting = tokio::spawn(async move {
        while listener.accept().await.is_ok() {
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });

    let dir = tempfile::Builder::new()
        .prefix("forgeward-doctor-")
        .tempdir()
        .map_err(|e| Box::new(host_error(&subject, format!("a temporary directory: {e}"))))?;
    let (workspace, job, out) = (
        dir.path().join("workspace"),
        dir.path().join("job"),
        dir.path().join("out"),
    );
    for d in [&workspace, &job, &out] {
        std::fs::create_dir(d)
            .map_err(|e| Box::new(host_error(&subject, format!("{}: {e}", d.display()))))?;
    }
    std::fs::write(job.join("probe.sh"), script(port))
        .map_err(|e| Box::new(host_error(&subject, format!("the probe script: {e}"))))?;
    let mut sandbox_limits = limits(&settings.sandbox);
    sandbox_limits.timeout = sandbox_limits.timeout.min(PROBE_TIMEOUT);
    let network = settings.sandbox.network == Network::Full;
    // With the allow list, the worker goes out as a job's would: through the forwarder to a
    // gateway of the configured list (no secret put in; the probe asks for a host no list
    // names, and must be refused).
    let gateway = match settings.sandbox.network {
        Network::Allowlist => Some(
            start_gateway(settings, &dir.path().join("egress"))
                .map_err(|e| Box::new(host_error(&subject, format!("the egress gateway: {e}"))))?,
        ),
        _ => None,
    };
    let mut spec = SandboxSpec {
        workspace,
        job_dir: job,
        out_dir: out,
        command: vec!["/bin/sh".to_owned(), "/job/probe.sh".to_owned()],
        image: settings.worker.image.clone(),
        env: Vec::new(),
        limits: sandbox_limits,
        network: match (&gateway, network) {
            (Some((mount, _)), _) => forgeward::sandbox::Network::Gateway(mount.clone()),
            (None, true) => forgeward::sandbox::Network::Full,
            (None, false) => forgeward::sandbox::Network::None,
        },
        read_only: Vec::new(),
        path: Vec::new(),
    };
    match tokio::time::timeout(PREPARE_TIMEOUT, sandbox.prepare(&mut spec)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(unusable(e)),
        Err(_) => {
            return Err(Box::new(Line::fail(
                &subject,
                format!(
                    "preparing the image took over {} minutes",
                    PREPARE_TIMEOUT.as_secs() / 60
                ),
                "build or pull the image by hand to see why (docker/README.md), or set \
                 worker.image to one that exists",
            )));
        }
    }

    let log = Collected::default();
    let started = Instant::now();
    let ran = sandbox.run(&spec, &log, CancellationToken::new()).await;
    let took = started.elapsed();
    // Whatever reached the port did so while the worker ran; give a connection in flight a
    // moment to be counted.
    tokio::time::sleep(Duration::from_millis(50)).await;
    accepting.abort();
    let gateway_lines = match gateway {
        Some((_, running)) => Some(running.shutdown().await),
        None => None,
    };
    let exit = ran.map_err(unusable)?;
    let lines = log.0.into_inner().unwrap_or_else(PoisonError::into_inner);
    let said: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix(TAG))
        .map(str::trim)
        .collect();
    if exit != Exit::Code(0) || !said.contains(&"running") {
        let tail: Vec<&str> = lines
            .iter()
            .rev()
            .take(3)
            .rev()
            .map(String::as_str)
            .collect();
        return Err(Box::new(Line::fail(
            &subject,
            format!(
                "the trivial worker {exit}{}",
                if tail.is_empty() {
                    String::new()
                } else {
                    format!(": {}", tail.join(" | "))
                }
            ),
            "run `forgeward run` on a small repository to see the sandbox's own error, and check \
             the [sandbox] limits (memory, pids) leave room for a shell",
        )));
    }
    let started_line = Line::pass(
        &subject,
        format!(
            "started a trivial worker and saw it end in {}",
            if took < Duration::from_secs(1) {
                format!("{} ms", took.as_millis())
            } else {
                format!("{:.1} s", took.as_secs_f64())
            }
        ),
    );
    let mut lines = vec![
        started_line,
        network_line(&said, reached.load(Ordering::SeqCst), port, network),
    ];
    if let Some(totals) = gateway_lines {
        lines.push(gateway_line(&said, &totals));
    }
    Ok(lines)
}

/// Starts a gateway of the configured allow list, no secret in it, in `dir`.
fn start_gateway(
    settings: &Settings,
    dir: &std::path::Path,
) -> anyhow::Result<(forgeward::sandbox::GatewayMount, forgeward::egress::Gateway)> {
    use forgeward::egress::{Discard, Gateway, GatewayConfig, JobCa, Policy};
    let mount = forgeward::sandbox::GatewayMount::create(dir, None)?;
    let config = GatewayConfig::new(
        Arc::new(Policy::new(settings.sandbox.allow.clone())),
        Vec::new(),
        Arc::new(JobCa::generate()?),
        Arc::new(Discard),
    );
    let gateway = Gateway::start_std(mount.bind()?, config)?;
    Ok((mount, gateway))
}

/// Whether the worker reached the gateway through the forwarder, and was refused a host no
/// allow list names.
fn gateway_line(said: &[&str], totals: &forgeward::egress::Totals) -> Line {
    const SUBJECT: &str = "egress gateway";
    let answer = said
        .iter()
        .find_map(|l| l.strip_prefix("gateway "))
        .unwrap_or("");
    if answer.starts_with("HTTP/1.1 403") && totals.refused > 0 {
        return Line::pass(
            SUBJECT,
            "the worker reaches the gateway through the forwarder at 127.0.0.1:3128, and a host \
             the allow list does not name is refused",
        );
    }
    Line::fail(
        SUBJECT,
        if answer.is_empty() {
            "the worker could not reach the gateway through the forwarder at 127.0.0.1:3128"
                .to_owned()
        } else {
            format!("the gateway answered the probe with {answer:?}, not 403")
        },
        "run `forgeward run` with this configuration and a worker that runs \
         `curl -v https://pypi.example.com` to see where it stops",
    )
}

/// Whether what the worker saw is a worker without network.
fn network_line(said: &[&str], reached: usize, port: u16, full: bool) -> Line {
    const SUBJECT: &str = "sandbox network";
    let interfaces: Vec<&str> = said
        .iter()
        .filter_map(|l| l.strip_prefix("interface "))
        .collect();
    let connected = said.contains(&"connected") || reached > 0;
    let listed = if interfaces.is_empty() {
        "none".to_owned()
    } else {
        interfaces.join(", ")
    };
    if full {
        return Line::neutral(
            SUBJECT,
            format!(
                "sandbox.network = \"full\": the worker has the host's network, as configured \
                 (interfaces: {listed})"
            ),
        );
    }
    let only_loopback = interfaces.iter().all(|i| *i == "lo");
    let tried = if said.contains(&"refused") {
        format!("and cannot reach 127.0.0.1:{port} on the host")
    } else {
        "(no bash in it to try a connection)".to_owned()
    };
    if interfaces.is_empty() && !said.contains(&"refused") {
        return Line::fail(
            SUBJECT,
            "the worker could read neither its interfaces (/proc/net/dev) nor try a connection",
            "the sandbox lacks /proc or a shell: check the image (worker.image) or the host's \
             /bin/sh",
        );
    }
    if only_loopback && !connected {
        let sees = if interfaces.is_empty() {
            "no network interface"
        } else {
            "no network interface but lo"
        };
        return Line::pass(SUBJECT, format!("the worker sees {sees} {tried}"));
    }
    Line::fail(
        SUBJECT,
        format!(
            "the worker has network although sandbox.network is \"none\": interfaces {listed}{}",
            if connected {
                format!("; it reached 127.0.0.1:{port} on the host")
            } else {
                String::new()
            }
        ),
        "do not run workers here until the sandbox isolates them: check that the kernel lets \
         the backend make a network namespace (bubblewrap's --unshare-net) or that Docker honours \
         --network=none",
    )
}

/// A line about the doctor's own machine, not the sandbox.
fn host_error(subject: &str, message: String) -> Line {
    Line::fail(
        subject,
        format!("cannot set up the probe: {message}"),
        "check the temporary directory ($TMPDIR) is writable and loopback works",
    )
}

/// The trivial worker: POSIX sh, which every sandbox has. It lists the network interfaces of
/// its namespace, then tries the doctor's port with bash's `/dev/tcp` where bash is there.
fn script(port: u16) -> String {
    format!(
        r#"echo "{TAG} running"
if [ -r /proc/net/dev ]; then
    while read -r line; do
        case "$line" in
            *:*) echo "{TAG} interface ${{line%%:*}}" ;;
        esac
    done < /proc/net/dev
fi
if command -v bash >/dev/null 2>&1; then
    if bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' 2>/dev/null; then
        echo "{TAG} connected"
    else
        echo "{TAG} refused"
    fi
    if [ -n "${{HTTPS_PROXY:-}}" ]; then
        bash -c 'exec 3<>/dev/tcp/127.0.0.1/3128 || exit 0
            printf "CONNECT doctor.invalid:443 HTTP/1.1\r\nHost: doctor.invalid:443\r\n\r\n" >&3
            IFS= read -r answer <&3 && echo "{TAG} gateway ${{answer%$(printf "\r")}}"' 2>/dev/null
    fi
fi
exit 0
"#
    )
}
