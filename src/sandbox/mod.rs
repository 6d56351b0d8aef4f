//! Where the worker runs: a sandbox with the checkout at `/workspace` (read-write), the task at
//! `/job` (read-only), `/job-out` for what the worker leaves for the bot, no network unless the
//! operator opts in, no forge credential, a cleared environment, and limits on memory,
//! processes, file size, disk and time that end the whole process tree.
//!
//! One trait, [`Sandbox`], two real backends: `bwrap` (bubblewrap, the default where it works)
//! and `docker` (the Docker Engine). Both pass the same conformance suite in the tests.
//! A sandbox never receives a forge token: the only variables inside are the ones in
//! [`SandboxSpec::env`], which the pipeline builds from the operator's allow-list.
//!
//! What the worker prints is handed line by line to a [`LogSink`]; capping and redaction are the
//! job log's business, not the backend's.

pub mod docker;
mod docker_cli;
pub mod egress;
pub mod images;

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

pub mod bwrap;
pub mod log;

pub use bwrap::Bwrap;
pub use docker::Docker;
pub use egress::GatewayMount;
pub use images::Images;
pub use log::{JobLog, Redactor};

/// What to run, where, and within which limits.
#[derive(Clone, Debug)]
pub struct SandboxSpec {
    /// Host directory mounted read-write at `/workspace` (the checkout); the working directory.
    pub workspace: PathBuf,
    /// Host directory mounted read-only at `/job` (`task.md`, `job.json`).
    pub job_dir: PathBuf,
    /// Host directory mounted read-write at `/job-out` (`summary.md`).
    pub out_dir: PathBuf,
    /// The program and its arguments, as seen inside the sandbox.
    pub command: Vec<String>,
    /// The image to run, by ID (`sha256:…`): the Docker backend only; bubblewrap runs the host's
    /// read-only toolchain.
    pub image: Option<String>,
    /// Exactly the variables the worker sees besides `HOME`, `PATH`, `LANG`, `TMPDIR` which the
    /// backend sets itself. Never a forge token.
    pub env: Vec<(String, String)>,
    pub limits: Limits,
    /// What the worker may reach of the network (the operator's choice; default nothing).
    pub network: Network,
    /// Files of the workspace (relative paths) the worker may read but not change: the tests
    /// the base had, when the repository protects them. See [`Protection`].
    pub read_only: Vec<PathBuf>,
    /// Directories inside the sandbox put before the backend's `PATH` (the prepared
    /// environment's `/workspace/.venv/bin`).
    pub path: Vec<String>,
}

/// The group every kept environment's files belong to, its directories writable by the group
/// and its files by no one but their owner ([`crate::environment::kept`]), and every worker
/// of a root bot (a dedicated user on bubblewrap, the image's `worker` on Docker) is a member
/// of: in an environment lent as an overlay the worker may then add, replace and remove files
/// anywhere without anything being handed to it file by file (the overlay takes every write
/// in its upper layer, so the kept files never change). Just above the range of the
/// dedicated users' ids, in the range systemd leaves to no one (see
/// `bwrap_host::SANDBOX_UID_BASE`), so no real group is this one.
pub const ENVIRONMENT_GID: u32 = 0x7A5F_0000;

/// Where the overlays lent to `workspace` keep their upper and work directories:
/// `<workspace>.lent`, beside it. A backend's disk watcher measures what a worker writes in a
/// lent environment there, and never walks the overlays mounted inside the workspace (whose
/// lower layers, tens of thousands of files, are the kept environment's and never grow).
pub fn lent_layers(workspace: &Path) -> PathBuf {
    let mut name = workspace.file_name().unwrap_or_default().to_os_string();
    name.push(".lent");
    workspace.with_file_name(name)
}

/// The variables every backend sets itself (besides the image's or the host's `PATH` on
/// Docker): an allowed variable of one of these names is never passed through.
pub const RESERVED_ENV: [&str; 4] = ["HOME", "PATH", "LANG", "TMPDIR"];

/// What the worker may reach of the network.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Network {
    /// Nothing: a network namespace with only its own loopback.
    #[default]
    None,
    /// The host's network (`sandbox.network = "full"`).
    Full,
    /// Only the egress gateway, through its directory ([`egress`]); otherwise as `None`.
    Gateway(GatewayMount),
}

impl Network {
    /// Whether the worker shares the host's network.
    pub fn is_full(&self) -> bool {
        matches!(self, Network::Full)
    }

    /// The gateway's directory, when the worker goes out through one.
    pub fn gateway(&self) -> Option<&GatewayMount> {
        match self {
            Network::Gateway(mount) => Some(mount),
            _ => None,
        }
    }
}

/// The mounts that keep a workspace's protected files as they are.
///
/// Each file is bound read-only onto itself, so a write or a `chmod` fails with `EROFS`; a
/// mount point cannot be removed, renamed or renamed over (`EBUSY`), which stops `rm` and
/// re-create, `mv` over it and a symlink swap; a hard link to it from the rest of the
/// workspace crosses mounts (`EXDEV`). Each directory above a protected file is bound onto
/// itself as well (writable): a new file may go next to a protected one, but the directory
/// cannot be renamed away and replaced by a copy with edited tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Protection {
    /// Directories above protected files, relative to the workspace, parents first.
    pub dirs: Vec<PathBuf>,
    /// The protected files, relative to the workspace.
    pub files: Vec<PathBuf>,
}

impl Protection {
    /// The protection for `spec`: its `read_only` paths that are regular files in real
    /// directories of the workspace (a symlink is not followed and has nothing to protect in
    /// place; a path that is gone is passed over). A path that leaves the workspace is an error.
    pub fn of(spec: &SandboxSpec, backend: &'static str) -> Result<Protection, SandboxError> {
        use std::collections::BTreeSet;
        use std::path::Component;
        let mut dirs: BTreeSet<(usize, PathBuf)> = BTreeSet::new();
        let mut files = Vec::new();
        'paths: for path in &spec.read_only {
            if path.as_os_str().is_empty()
                || !path.components().all(|c| matches!(c, Component::Normal(_)))
            {
                return Err(SandboxError {
                    backend,
                    message: format!(
                        "the protected path {} is not inside the workspace",
                        path.display()
                    ),
                });
            }
            let mut above = Vec::new();
            let mut dir = path.parent();
            while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
                let real_dir = std::fs::symlink_metadata(spec.workspace.join(d))
                    .is_ok_and(|m| m.file_type().is_dir());
                if !real_dir {
                    continue 'paths;
                }
                above.push(d.to_path_buf());
                dir = d.parent();
            }
            let regular = std::fs::symlink_metadata(spec.workspace.join(path))
                .is_ok_and(|m| m.file_type().is_file());
            if !regular {
                continue;
            }
            dirs.extend(above.into_iter().map(|d| (d.components().count(), d)));
            files.push(path.clone());
        }
        files.sort();
        files.dedup();
        Ok(Protection {
            dirs: dirs.into_iter().map(|(_, d)| d).collect(),
            files,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// The bounds a worker runs within. Reaching one ends the worker, never the bot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time; past it the whole process tree is killed.
    pub timeout: Duration,
    /// Memory (Docker: the cgroup limit; bubblewrap: the address-space rlimit).
    pub memory_bytes: u64,
    /// Processes (and threads) at once.
    pub pids: u32,
    /// The largest file the worker may write.
    pub file_size_bytes: u64,
    /// What `/workspace`, `/tmp` and `$HOME` may grow by in all.
    pub disk_bytes: u64,
    /// CPU time.
    pub cpu: Duration,
}

/// How the worker ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this code (0 = done).
    Code(i32),
    /// It was killed by this signal (a limit the kernel enforced, e.g. SIGXFSZ, SIGKILL on OOM).
    Signal(i32),
    /// It outlived [`Limits::timeout`] and was killed.
    TimedOut,
    /// The job was cancelled while it ran, and it was killed.
    Cancelled,
    /// It wrote more than [`Limits::disk_bytes`] and was killed.
    DiskFull,
}

impl Exit {
    pub fn success(self) -> bool {
        self == Exit::Code(0)
    }
}

/// How the worker ended, for people: "exited with code 1", "ran out of time", …
impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(code) => write!(f, "exited with code {code}"),
            Exit::Signal(signal) => write!(f, "was killed by {}", signal_name(*signal)),
            Exit::TimedOut => f.write_str("ran out of time"),
            Exit::Cancelled => f.write_str("was cancelled"),
            Exit::DiskFull => f.write_str("wrote more than its disk limit"),
        }
    }
}

/// A signal's name, with the limit it means when it is one (Linux's numbers).
pub fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGKILL => "SIGKILL".to_owned(),
        libc::SIGTERM => "SIGTERM".to_owned(),
        libc::SIGSEGV => "SIGSEGV".to_owned(),
        libc::SIGABRT => "SIGABRT".to_owned(),
        libc::SIGXCPU => "SIGXCPU (CPU time limit)".to_owned(),
        libc::SIGXFSZ => "SIGXFSZ (file size limit)".to_owned(),
        other => format!("signal {other}"),
    }
}

/// Which of the worker's streams a line came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Receives the worker's output, one line at a time (without the newline; invalid UTF-8
/// replaced), as it is printed.
pub trait LogSink: Send + Sync {
    fn line(&self, stream: Stream, line: &str);
}

/// Why a sandbox could not run the worker at all (as opposed to the worker failing in it).
#[derive(Debug, thiserror::Error)]
#[error("{backend}: {message}")]
pub struct SandboxError {
    pub backend: &'static str,
    pub message: String,
}

/// A place to run a worker.
#[async_trait]
pub trait Sandbox: Send + Sync {
    /// `bwrap` or `docker`.
    fn name(&self) -> &'static str;

    /// Checks the backend can run at all on this machine (bwrap installed and allowed to make
    /// namespaces; the Docker daemon reachable), with a one-line reason when it cannot.
    async fn check(&self) -> Result<(), SandboxError>;

    /// Gets ready to run `spec`, before the worker's time starts: the Docker backend resolves
    /// the image to run to its ID, building the checkout's language image when none is
    /// configured. Nothing to do for bubblewrap.
    async fn prepare(&self, _spec: &mut SandboxSpec) -> Result<(), SandboxError> {
        Ok(())
    }

    /// Runs the worker to its end, streaming its output to `log`. Returns how it ended; an
    /// `Err` only when the sandbox itself could not be set up or torn down. When `cancel` fires,
    /// the whole process tree is killed and [`Exit::Cancelled`] returned. Nothing the worker
    /// started outlives this call.
    async fn run(
        &self,
        spec: &SandboxSpec,
        log: &dyn LogSink,
        cancel: CancellationToken,
    ) -> Result<Exit, SandboxError>;
}
