//! What the conformance suite's behaviours share: a job's directories on the host (beside a
//! bot data directory and a mirror the worker must not reach), a sink capturing the worker's
//! lines, a run that cannot hang the suite, and looks at the host (processes, free space).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use forgeward::sandbox::{
    Exit, GatewayMount, Limits, LogSink, Network, Sandbox, SandboxSpec, Stream,
};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// A secret the operator allows the worker (a model API key): visible inside, redacted in logs.
pub const MODEL_KEY: &str = "model-key-value-0123456789";

/// What a secret file in the bot's data directory holds.
pub const DATA_SECRET: &str = "bot-data-secret-8d1f";

/// How a behaviour runs: in which image (Docker), and whether the worker's way out is the
/// egress gateway (a sandbox with the gateway on must keep every other promise).
#[derive(Clone, Debug, Default)]
pub struct Setup {
    pub image: Option<String>,
    pub gateway: bool,
}

impl From<Option<String>> for Setup {
    fn from(image: Option<String>) -> Setup {
        Setup {
            image,
            gateway: false,
        }
    }
}

/// A job's directories on the host, beside a bot data directory and a mirror the worker must
/// not reach.
pub struct Job {
    /// The egress gateway's directory, once a spec asked for one.
    gateway: OnceLock<GatewayMount>,
    _tmp: TempDir,
    pub workspace: PathBuf,
    pub job: PathBuf,
    pub out: PathBuf,
    pub data: PathBuf,
    pub mirror: PathBuf,
}

impl Job {
    pub fn new() -> Job {
        let tmp = tempfile::Builder::new()
            .prefix("forgeward-sandbox-")
            .tempdir()
            .expect("creating a temporary directory");
        let dir = tmp.path().to_path_buf();
        let make = |name: &str| {
            let path = dir.join(name);
            std::fs::create_dir_all(&path).expect("creating a directory");
            path
        };
        let job = Job {
            workspace: make("workspace"),
            job: make("job"),
            out: make("out"),
            data: make("data"),
            mirror: make("data/mirrors/acme/widget.git"),
            gateway: OnceLock::new(),
            _tmp: tmp,
        };
        std::fs::write(job.workspace.join("README.md"), "# widget\n").expect("writing");
        std::fs::write(
            job.job.join("task.md"),
            "# Fix the parser\nIt fails on tabs.\n",
        )
        .expect("writing task.md");
        std::fs::write(
            job.job.join("job.json"),
            r#"{"repo":"acme/widget","number":7}"#,
        )
        .expect("writing job.json");
        std::fs::write(job.data.join("secret.txt"), DATA_SECRET).expect("writing a secret");
        std::fs::write(job.mirror.join("config"), DATA_SECRET).expect("writing a mirror");
        job
    }

    /// Where the egress gateway's directory is (or would be) on the host.
    pub fn egress_dir(&self) -> PathBuf {
        self.job.with_file_name("egress")
    }

    /// The egress gateway's directory for this job, its socket served by `serve` (on a thread
    /// of its own) the first time it is asked for.
    pub fn gateway_with(
        &self,
        serve: impl FnOnce(std::os::unix::net::UnixListener) + Send + 'static,
    ) -> GatewayMount {
        self.gateway
            .get_or_init(|| {
                let mount = GatewayMount::create(&self.egress_dir(), None)
                    .expect("creating the gateway's directory");
                let listener = mount.bind().expect("binding the gateway's socket");
                std::thread::spawn(move || serve(listener));
                mount
            })
            .clone()
    }

    /// A spec running `bash -c script` in `image`, with no network.
    pub fn spec(&self, script: &str, image: Option<String>) -> SandboxSpec {
        self.spec_in(script, Setup::from(image))
    }

    /// A spec running `bash -c script`, with roomy limits a test tightens where it probes one.
    pub fn spec_in(&self, script: &str, setup: Setup) -> SandboxSpec {
        let network = if setup.gateway {
            Network::Gateway(self.gateway_with(empty_allow_list))
        } else {
            Network::None
        };
        let image = setup.image;
        SandboxSpec {
            workspace: self.workspace.clone(),
            job_dir: self.job.clone(),
            out_dir: self.out.clone(),
            command: vec!["bash".into(), "-c".into(), script.into()],
            image,
            env: vec![
                ("FORGEWARD_TASK_FILE".into(), "/job/task.md".into()),
                ("FORGEWARD_JOB_ID".into(), "job-7".into()),
                ("MODEL_API_KEY".into(), MODEL_KEY.into()),
            ],
            limits: Limits {
                timeout: Duration::from_secs(30),
                memory_bytes: 1 << 30,
                pids: 128,
                file_size_bytes: 8 << 20,
                disk_bytes: 32 << 20,
                cpu: Duration::from_secs(30),
            },
            network,
            read_only: Vec::new(),
            path: Vec::new(),
        }
    }
}

/// The real egress gateway with an empty allow list (every request refused), on a thread of
/// its own for as long as the test runs.
pub fn empty_allow_list(listener: std::os::unix::net::UnixListener) {
    use forgeward::egress::{Discard, Gateway, GatewayConfig, JobCa, Policy};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime for the gateway");
    runtime.block_on(async move {
        let ca = std::sync::Arc::new(JobCa::generate().expect("the job's CA"));
        let config = GatewayConfig::new(
            std::sync::Arc::new(Policy::new(Vec::new())),
            Vec::new(),
            ca,
            std::sync::Arc::new(Discard),
        );
        let _gateway = Gateway::start_std(listener, config).expect("the gateway");
        std::future::pending::<()>().await;
    });
}

/// Every line a worker printed, in arrival order.
#[derive(Default)]
pub struct Captured(Mutex<Vec<(Stream, String)>>);

impl LogSink for Captured {
    fn line(&self, stream: Stream, line: &str) {
        self.0.lock().expect("lock").push((stream, line.to_owned()));
    }
}

impl Captured {
    pub fn stream(&self, which: Stream) -> Vec<String> {
        let lines = self.0.lock().expect("lock");
        lines
            .iter()
            .filter(|(s, _)| *s == which)
            .map(|(_, l)| l.clone())
            .collect()
    }

    pub fn text(&self) -> String {
        let lines = self.0.lock().expect("lock");
        lines.iter().map(|(_, l)| format!("{l}\n")).collect()
    }
}

/// Runs the worker, failing the test if the sandbox errs or the run does not return well past
/// its timeout. Returns how it ended and how long it took.
pub async fn run(
    backend: &dyn Sandbox,
    spec: &SandboxSpec,
    log: &dyn LogSink,
    cancel: CancellationToken,
) -> (Exit, Duration) {
    let started = Instant::now();
    let limit = spec.limits.timeout + Duration::from_secs(30);
    let exit = tokio::time::timeout(limit, backend.run(spec, log, cancel))
        .await
        .unwrap_or_else(|_| panic!("the run did not return within {limit:?}"))
        .unwrap_or_else(|e| panic!("the sandbox failed: {e}"));
    (exit, started.elapsed())
}

/// Processes running on the host whose command line contains `needle`.
pub fn host_processes_with(needle: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(needle))
        .collect()
}

pub fn host_process_count() -> usize {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
                .count()
        })
        .unwrap_or(0)
}

/// Free bytes on the filesystem holding `path`, from `df` (no libc in this test).
pub fn fs_available(path: &Path) -> u64 {
    let out = std::process::Command::new("df")
        .args(["-B1", "--output=avail"])
        .arg(path)
        .output()
        .expect("running df");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("df printed {:?}", String::from_utf8_lossy(&out.stdout)))
}

pub fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}
