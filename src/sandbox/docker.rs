//! The Docker Engine backend: each worker runs in a fresh container, started by image ID, through
//! the `docker` CLI (no daemon API client compiled in; the CLI is what operators already have,
//! and every call here is one short process next to a run that lasts minutes).
//!
//! The container gets no network (`--network none` unless the operator opts in), a read-only
//! root with tmpfs `/tmp` and `$HOME`, no capabilities, `no-new-privileges`, cgroup limits on
//! memory (swap included) and processes, rlimits on file size and CPU time, and only the
//! variables in [`SandboxSpec::env`] plus `HOME`, `LANG` and `TMPDIR` (`PATH` is the image's,
//! which knows where its toolchain lives). Values never appear on a command line: the CLI reads
//! them from its own environment, which is cleared of everything else.
//!
//! Every container carries the label `forgeward.sandbox=<owner>` and is removed on every path:
//! after the run, on timeout, on cancellation, when the run's future is dropped, and — for a
//! bot that crashed mid-run — by [`Docker::reap_leftovers`] at the next start.
//!
//! Ownership: a bot running as root runs the worker as uid 10001 (the image's `worker`), hands
//! `/workspace` and `/job-out` to that uid before the run and takes them back after, without
//! following a symlink; any other bot runs the worker under its own uid and gid, so the files
//! are the bot's throughout. A prepared environment lent as an overlay inside the workspace is
//! neither handed over nor walked: the worker changes it as a member of the kept environments'
//! group ([`ENVIRONMENT_GID`]). Disk: `/tmp` and `$HOME` are tmpfs of [`Limits::disk_bytes`]
//! each (counted in the memory limit as well); the growth of `/workspace` and `/job-out` (a
//! lent overlay's by its upper layers beside the workspace) is measured by a watcher that
//! kills the container past [`Limits::disk_bytes`] ([`Exit::DiskFull`]); a single file is
//! bounded by `--ulimit fsize` between two measurements.
//!
//! This module must not build images (see [`super::images`]) or run anything by a mutable tag.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio_util::sync::CancellationToken;

use super::docker_cli::{CLI_ENV, cli, command, error, output};
use super::egress::{self, GatewayMount};
use super::{
    ENVIRONMENT_GID, Exit, LogSink, Protection, Sandbox, SandboxError, SandboxSpec, Stream,
    lent_layers,
};

/// The label every sandbox container carries; its value is the owner given to [`Docker::new`].
pub const LABEL: &str = "forgeward.sandbox";

/// The uid and gid a root bot runs workers as: the `worker` user of `docker/sandbox/Dockerfile`.
pub const WORKER_UID: u32 = 10001;

/// `$HOME` inside the container: the image's `worker` home, a tmpfs at run time.
const HOME: &str = "/home/worker";

/// The shortest pause between two measurements of the workspace: a worker writing as fast as
/// the disk allows overshoots the limit by what it writes in this time. The watcher waits twice
/// as long as the last measurement took when that is longer, so a huge checkout does not cost a
/// core.
const DISK_POLL: Duration = Duration::from_millis(20);

/// A line longer than this is handed to the log in pieces: a worker printing megabytes without
/// a newline must not grow the bot's memory.
const MAX_LINE: usize = 64 * 1024;

/// The Docker backend.
pub struct Docker {
    program: PathBuf,
    owner: String,
    seq: AtomicU64,
    /// Where images come from when a spec names none, or names one by tag.
    images: Option<super::images::Images>,
}

impl Docker {
    /// A backend whose containers carry the label `forgeward.sandbox=<owner>`: the bot's
    /// identity on a daemon it may share, so it reaps its own leftovers and nobody else's.
    /// Characters other than ASCII letters, digits, `-`, `_` and `.` are replaced with `_`.
    pub fn new(owner: &str) -> Docker {
        let owner: String = owner
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        Docker {
            program: PathBuf::from("docker"),
            owner: if owner.is_empty() {
                "forgeward".into()
            } else {
                owner
            },
            seq: AtomicU64::new(0),
            images: None,
        }
    }

    /// Uses this `docker` executable instead of the one on `PATH`.
    pub fn with_program(mut self, program: impl Into<PathBuf>) -> Docker {
        self.program = program.into();
        self
    }

    /// Builds (lazily) and resolves the images workers run in, in [`Sandbox::prepare`].
    pub fn with_images(mut self, images: super::images::Images) -> Docker {
        self.images = Some(images);
        self
    }

    /// The label value this backend's containers carry.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// Removes every container (running or not) labelled with this backend's owner: what a bot
    /// that crashed mid-run left behind. Called when the bot starts, before it runs any job.
    /// Returns how many were removed.
    pub async fn reap_leftovers(&self) -> Result<usize, SandboxError> {
        let filter = format!("label={LABEL}={}", self.owner);
        let out = cli(&self.program, ["ps", "-a", "-q", "--filter", &filter]).await?;
        let ids: Vec<&str> = out.split_whitespace().collect();
        if ids.is_empty() {
            return Ok(0);
        }
        let mut args = vec!["rm", "-f", "-v"];
        args.extend(ids.iter().copied());
        cli(&self.program, args).await?;
        Ok(ids.len())
    }

    fn container_name(&self) -> String {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        format!(
            "forgeward-{}-{}-{}-{:x}",
            self.owner,
            std::process::id(),
            self.seq.fetch_add(1, Ordering::Relaxed),
            nanos & 0xffff_ffff
        )
    }
}

#[async_trait]
impl Sandbox for Docker {
    fn name(&self) -> &'static str {
        "docker"
    }

    async fn check(&self) -> Result<(), SandboxError> {
        match cli(
            &self.program,
            ["version", "--format", "{{.Server.Version}}"],
        )
        .await
        {
            Ok(_) => Ok(()),
            Err(e) => {
                let reason = e.message.strip_prefix("version: ").unwrap_or(&e.message);
                Err(error(format!("daemon unreachable: {reason}")))
            }
        }
    }

    /// A configured image is run by the ID its reference has now, never by a tag that could
    /// move; without one, the checkout's language image is built (once) and run.
    async fn prepare(&self, spec: &mut SandboxSpec) -> Result<(), SandboxError> {
        let Some(images) = &self.images else {
            return Ok(());
        };
        let id = match &spec.image {
            Some(reference) => images.resolve(reference).await,
            None => images.image_for(&spec.workspace).await,
        };
        spec.image = Some(id.map_err(|e| SandboxError {
            backend: "docker",
            message: e.to_string(),
        })?);
        Ok(())
    }

    async fn run(
        &self,
        spec: &SandboxSpec,
        log: &dyn LogSink,
        cancel: CancellationToken,
    ) -> Result<Exit, SandboxError> {
        let image = spec
            .image
            .as_deref()
            .ok_or_else(|| error("no image given: the Docker backend runs an image by ID"))?;
        validate_image_id(image)?;
        if spec.command.is_empty() {
            return Err(error("no command given"));
        }
        let mounts = Mounts::new(spec)?;
        let owner = Ownership::of_this_process()?;
        let user = owner.container_user();
        if owner.hands_over()
            && let Err(e) = owner.hand(&mounts, WORKER_UID, WORKER_UID).await
        {
            // Whatever was handed over already goes back before the job fails.
            let _ = owner.hand(&mounts, owner.uid, owner.gid).await;
            return Err(e);
        }

        let name = self.container_name();
        let mut guard = RemoveOnDrop {
            program: self.program.clone(),
            name: Some(name.clone()),
        };
        let result = self
            .run_container(spec, log, cancel, &mounts, &name, user, image)
            .await;
        let removed = remove(&self.program, &name).await;
        guard.name = None;
        let taken_back = if owner.hands_over() {
            owner.hand(&mounts, owner.uid, owner.gid).await
        } else {
            Ok(())
        };
        let exit = result?;
        removed?;
        taken_back?;
        Ok(exit)
    }
}

impl Docker {
    #[allow(clippy::too_many_arguments)] // One call site; a struct would only rename them.
    async fn run_container(
        &self,
        spec: &SandboxSpec,
        log: &dyn LogSink,
        cancel: CancellationToken,
        mounts: &Mounts,
        name: &str,
        user: (u32, u32),
        image: &str,
    ) -> Result<Exit, SandboxError> {
        let args = create_args(spec, mounts, &self.owner, name, user, image)?;
        let mut create = command(&self.program);
        create.args(&args);
        for (key, value) in &spec.env {
            create.env(key, value);
        }
        output(create, "create").await?;

        let baseline = disk_usage(mounts).await;
        let started = Instant::now();
        let mut start = command(&self.program);
        start
            .args(["start", "--attach", name])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = start.spawn().map_err(|e| error(format!("start: {e}")))?;
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();

        let finished = async {
            tokio::join!(
                pump(stdout, Stream::Stdout, log),
                pump(stderr, Stream::Stderr, log)
            );
            child.wait().await
        };
        let ended = tokio::select! {
            status = finished => Ended::Exited(status),
            () = tokio::time::sleep(spec.limits.timeout) => Ended::By(Exit::TimedOut),
            () = cancel.cancelled() => Ended::By(Exit::Cancelled),
            () = watch_disk(mounts, baseline, spec.limits.disk_bytes) => Ended::By(Exit::DiskFull),
        };
        match ended {
            Ended::Exited(status) => {
                status.map_err(|e| error(format!("start: {e}")))?;
                let state = cli(
                    &self.program,
                    [
                        "inspect",
                        "--format",
                        "{{.State.Running}} {{.State.ExitCode}} {{.State.OOMKilled}} {{.State.Error}}",
                        name,
                    ],
                )
                .await?;
                let exit = parse_state(&state)?;
                tracing::debug!(container = name, ?exit, elapsed = ?started.elapsed(), "worker ended");
                Ok(exit)
            }
            Ended::By(exit) => {
                // The attached client is killed when dropped; the container is killed here so
                // nothing keeps running between now and its removal.
                let _ = cli(&self.program, ["kill", name]).await;
                tracing::debug!(container = name, ?exit, elapsed = ?started.elapsed(), "worker stopped");
                Ok(exit)
            }
        }
    }
}

enum Ended {
    Exited(std::io::Result<std::process::ExitStatus>),
    By(Exit),
}

/// The host directories bound into the container, absolute and free of characters the
/// `--mount` syntax would read as separators.
struct Mounts {
    workspace: PathBuf,
    job: PathBuf,
    out: PathBuf,
    /// What keeps the protected files as they are: each directory above one bound onto itself,
    /// then each file read-only, as `(source, target, read-only)`.
    protection: Vec<(PathBuf, String, bool)>,
}

impl Mounts {
    fn new(spec: &SandboxSpec) -> Result<Mounts, SandboxError> {
        let one = |path: &Path, what: &str| -> Result<PathBuf, SandboxError> {
            let path = std::fs::canonicalize(path)
                .map_err(|e| error(format!("{what} {}: {e}", path.display())))?;
            if !path.is_dir() {
                return Err(error(format!(
                    "{what} {} is not a directory",
                    path.display()
                )));
            }
            let text = path
                .to_str()
                .ok_or_else(|| error(format!("{what} {} is not valid UTF-8", path.display())))?;
            if text.contains([',', '"', '\n']) {
                return Err(error(format!(
                    "{what} {text} has a comma, quote or newline, which docker --mount cannot take"
                )));
            }
            Ok(path)
        };
        let workspace = one(&spec.workspace, "workspace")?;
        let protection = Protection::of(spec, "docker")?;
        let mut protected = Vec::new();
        let items = protection
            .dirs
            .iter()
            .map(|d| (d, false))
            .chain(protection.files.iter().map(|f| (f, true)));
        for (path, readonly) in items {
            let text = path.to_str().ok_or_else(|| {
                error(format!(
                    "the protected path {} is not valid UTF-8, which docker --mount cannot take",
                    path.display()
                ))
            })?;
            if text.contains([',', '"', '\n']) {
                return Err(error(format!(
                    "the protected path {text} has a comma, quote or newline, which docker --mount cannot take"
                )));
            }
            protected.push((workspace.join(path), format!("/workspace/{text}"), readonly));
        }
        Ok(Mounts {
            workspace,
            job: one(&spec.job_dir, "job directory")?,
            out: one(&spec.out_dir, "output directory")?,
            protection: protected,
        })
    }

    fn writable(&self) -> [&Path; 2] {
        [&self.workspace, &self.out]
    }
}

/// The `docker create` arguments for one run. Values of `spec.env` are not among them: each is
/// passed as `--env NAME`, which the CLI fills from its own environment.
fn create_args(
    spec: &SandboxSpec,
    mounts: &Mounts,
    owner: &str,
    name: &str,
    user: (u32, u32),
    image: &str,
) -> Result<Vec<OsString>, SandboxError> {
    let limits = &spec.limits;
    // exec: test runners (go test, pytest's compiled helpers) run programs they write there.
    // $HOME belongs to the worker's uid: the engine does not apply a `mode` to a tmpfs over a
    // directory the image has, but it does apply `uid` and `gid`.
    let size = limits.disk_bytes.max(1 << 20);
    let tmp = format!("/tmp:rw,exec,nosuid,nodev,size={size},mode=1777");
    let home = format!(
        "{HOME}:rw,exec,nosuid,nodev,size={size},uid={},gid={},mode=0700",
        user.0, user.1
    );
    let bind = |source: &Path, target: &str, readonly: bool| {
        let mut s = OsString::from("type=bind,source=");
        s.push(source);
        s.push(format!(",target={target}"));
        if readonly {
            s.push(",readonly");
        }
        s
    };
    let cpu_seconds = limits.cpu.as_secs().max(1);
    let mut args: Vec<OsString> = [
        "create".to_string(),
        format!("--name={name}"),
        format!("--label={LABEL}={owner}"),
        "--init".into(),
        "--read-only".into(),
        format!(
            "--network={}",
            if spec.network.is_full() {
                "bridge"
            } else {
                "none"
            }
        ),
        format!("--tmpfs={tmp}"),
        format!("--tmpfs={home}"),
        format!("--memory={}", limits.memory_bytes),
        // Equal to --memory: no swap on top of the limit.
        format!("--memory-swap={}", limits.memory_bytes),
        format!("--pids-limit={}", limits.pids),
        format!("--ulimit=fsize={0}:{0}", limits.file_size_bytes),
        format!("--ulimit=cpu={cpu_seconds}:{cpu_seconds}"),
        "--ulimit=core=0:0".into(),
        "--cap-drop=ALL".into(),
        "--security-opt=no-new-privileges".into(),
        format!("--user={}:{}", user.0, user.1),
        // The kept environments' group: a lent overlay is the worker's to change without
        // anything in it handed over (see ENVIRONMENT_GID).
        format!("--group-add={ENVIRONMENT_GID}"),
        "--workdir=/workspace".into(),
        // Output goes to the attached client only: nothing accumulates in the daemon's logs.
        "--log-driver=none".into(),
        format!("--env=HOME={HOME}"),
        "--env=LANG=C.UTF-8".into(),
        "--env=TMPDIR=/tmp".into(),
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    let gateway = spec.network.gateway();
    for (key, _) in &spec.env {
        validate_env_name(key)?;
        if gateway.is_some() && egress::is_gateway_variable(key) {
            continue;
        }
        args.push(format!("--env={key}").into());
    }
    // Addresses and paths, no secret: on the command line as they are.
    for (key, value) in gateway.map(GatewayMount::environment).unwrap_or_default() {
        args.push(format!("--env={key}={value}").into());
    }
    args.push("--mount".into());
    args.push(bind(&mounts.workspace, "/workspace", false));
    // The engine mounts parents before children, whatever their order here.
    for (source, target, readonly) in &mounts.protection {
        args.push("--mount".into());
        args.push(bind(source, target, *readonly));
    }
    args.push("--mount".into());
    args.push(bind(&mounts.job, "/job", true));
    args.push("--mount".into());
    args.push(bind(&mounts.out, "/job-out", false));
    if let Some(gateway) = gateway {
        args.push("--mount".into());
        args.push(bind(&gateway.dir, egress::INSIDE, true));
    }
    args.push(image.into());
    // The engine always sets HOSTNAME (the container's id); the worker sees only the variables
    // it was allowed, so the command runs without it.
    // `PATH` is the image's, which only the image knows: the environment's directories go
    // before it from inside.
    let prefix: Vec<OsString> = if spec.path.is_empty() {
        Vec::new()
    } else {
        let dirs = spec.path.join(":");
        [
            "/bin/sh",
            "-c",
            &format!("PATH='{dirs}':\"$PATH\" exec \"$@\""),
            "sh",
        ]
        .into_iter()
        .map(OsString::from)
        .collect()
    };
    let command = ["/usr/bin/env", "-u", "HOSTNAME", "--"]
        .into_iter()
        .map(OsString::from)
        .chain(prefix)
        .chain(spec.command.iter().map(OsString::from));
    match gateway {
        Some(gateway) => args.extend(gateway.command(command)),
        None => args.extend(command),
    }
    Ok(args)
}

/// Names the worker may receive: portable identifiers, none the backend sets itself, none that
/// would steer the Docker CLI (their values are passed through its environment).
fn validate_env_name(name: &str) -> Result<(), SandboxError> {
    let portable = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !portable {
        return Err(error(format!("invalid environment variable name {name:?}")));
    }
    if super::RESERVED_ENV.contains(&name) || CLI_ENV.contains(&name) {
        return Err(error(format!(
            "environment variable {name} is set by the sandbox and cannot be passed through"
        )));
    }
    if name.starts_with("DOCKER_") {
        return Err(error(format!(
            "environment variable {name} would configure the docker CLI and cannot be passed through"
        )));
    }
    Ok(())
}

/// Only an immutable image ID may be run: a tag can be moved between the build and the run.
fn validate_image_id(image: &str) -> Result<(), SandboxError> {
    let ok = image
        .strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit()));
    if ok {
        Ok(())
    } else {
        Err(error(format!(
            "image {image:?} is not an image ID (sha256:…); images are run by ID, never by tag"
        )))
    }
}

/// Reads `{{.State.Running}} {{.State.ExitCode}} {{.State.OOMKilled}} {{.State.Error}}`.
/// With `--init`, a worker killed by signal N exits 128+N (as a shell reports it), which is read
/// back as the signal; the kernel's OOM kill is SIGKILL. A container still running means the
/// attached client lost it (the daemon restarted, say): an error, and the removal kills it.
fn parse_state(state: &str) -> Result<Exit, SandboxError> {
    let unexpected = || error(format!("unexpected container state {:?}", state.trim()));
    let mut parts = state.trim().splitn(4, ' ');
    let running = parts.next().ok_or_else(unexpected)?;
    let code: i32 = parts
        .next()
        .and_then(|c| c.parse().ok())
        .ok_or_else(unexpected)?;
    let oom = parts.next() == Some("true");
    let daemon_error = parts.next().unwrap_or("").trim();
    if running == "true" {
        return Err(error("lost the worker's output while it was still running"));
    }
    if running != "false" {
        return Err(unexpected());
    }
    if !daemon_error.is_empty() {
        return Err(error(format!("the container did not run: {daemon_error}")));
    }
    // The engine flags an OOM kill of any process in the container; it is how the worker ended
    // only when the worker failed.
    Ok(if oom && code != 0 {
        Exit::Signal(9)
    } else if (129..=128 + 64).contains(&code) {
        Exit::Signal(code - 128)
    } else {
        Exit::Code(code)
    })
}

/// Hands the worker its lines as they come, in pieces of at most [`MAX_LINE`] bytes.
async fn pump(stream: Option<impl AsyncRead + Unpin>, which: Stream, log: &dyn LogSink) {
    let Some(stream) = stream else { return };
    let mut reader = BufReader::new(stream);
    let mut line: Vec<u8> = Vec::new();
    // A read error ends the stream like its end does: the worker's exit is what counts.
    while let Ok(chunk) = reader.fill_buf().await {
        if chunk.is_empty() {
            break;
        }
        let room = MAX_LINE - line.len();
        let window = &chunk[..chunk.len().min(room)];
        match window.iter().position(|&b| b == b'\n') {
            Some(at) => {
                line.extend_from_slice(&window[..at]);
                reader.consume(at + 1);
                emit(log, which, &mut line);
            }
            None => {
                line.extend_from_slice(window);
                let taken = window.len();
                reader.consume(taken);
                if line.len() >= MAX_LINE {
                    emit(log, which, &mut line);
                }
            }
        }
    }
    if !line.is_empty() {
        emit(log, which, &mut line);
    }
}

fn emit(log: &dyn LogSink, which: Stream, line: &mut Vec<u8>) {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    log.line(which, &String::from_utf8_lossy(line));
    line.clear();
}

/// Resolves when the writable mounts have grown by more than `limit` bytes since `baseline`.
async fn watch_disk(mounts: &Mounts, baseline: u64, limit: u64) {
    loop {
        let began = Instant::now();
        let used = disk_usage(mounts).await;
        if used.saturating_sub(baseline) > limit {
            return;
        }
        tokio::time::sleep(DISK_POLL.max(began.elapsed() * 2)).await;
    }
}

/// The bytes allocated under the writable mounts, never following a symlink. A prepared
/// environment lent as an overlay inside the workspace is measured by its upper layers beside
/// it ([`lent_layers`]), where everything the worker writes there lands, and not walked.
async fn disk_usage(mounts: &Mounts) -> u64 {
    let mut roots: Vec<PathBuf> = mounts.writable().iter().map(|p| p.to_path_buf()).collect();
    roots.push(lent_layers(&mounts.workspace));
    tokio::task::spawn_blocking(move || roots.iter().map(|r| tree_usage(r)).sum())
        .await
        .unwrap_or(0)
}

/// The bytes allocated under `root`, on its own file system: a directory mounted inside it is
/// not walked.
fn tree_usage(root: &Path) -> u64 {
    let Ok(root_dev) = root.symlink_metadata().map(|m| m.dev()) else {
        return 0;
    };
    let mut total = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.path().symlink_metadata() else {
                continue;
            };
            if meta.dev() != root_dev {
                continue;
            }
            total += meta.blocks() * 512;
            if meta.is_dir() {
                stack.push(entry.path());
            }
        }
    }
    total
}

/// Whose files the mounts are, and who the worker runs as.
struct Ownership {
    uid: u32,
    gid: u32,
}

impl Ownership {
    fn of_this_process() -> Result<Ownership, SandboxError> {
        // /proc/self belongs to the process's effective uid and gid; no libc call needed.
        let meta = std::fs::metadata("/proc/self")
            .map_err(|e| error(format!("reading this process's uid: {e}")))?;
        Ok(Ownership {
            uid: meta.uid(),
            gid: meta.gid(),
        })
    }

    /// A root bot never runs a worker as root: it hands the mounts to [`WORKER_UID`] instead.
    fn hands_over(&self) -> bool {
        self.uid == 0
    }

    fn container_user(&self) -> (u32, u32) {
        if self.hands_over() {
            (WORKER_UID, WORKER_UID)
        } else {
            (self.uid, self.gid)
        }
    }

    /// Gives every entry under the writable mounts to `uid:gid`, symlinks themselves included
    /// and never what they point to.
    async fn hand(&self, mounts: &Mounts, uid: u32, gid: u32) -> Result<(), SandboxError> {
        let roots: Vec<PathBuf> = mounts.writable().iter().map(|p| p.to_path_buf()).collect();
        // Taking the mounts back takes every file, shared ones included (a worker may have
        // linked its own files to each other).
        let shared = uid == self.uid;
        tokio::task::spawn_blocking(move || {
            roots
                .iter()
                .try_for_each(|root| chown_tree(root, uid, gid, shared))
        })
        .await
        .map_err(|e| error(format!("changing ownership: {e}")))?
    }
}

/// Gives `root` and everything under it to `uid:gid` without following a symlink. A regular
/// file also loses any set-user-ID or set-group-ID bit: the kernel clears them on `chown`, and
/// this clears them again in case it did not, since a worker's set-user-ID program must not
/// become the bot's (root's, here). Without `shared`, a file with more than one link is left
/// alone. A directory on another file system than `root` (a prepared environment lent as an
/// overlay) is neither changed nor walked, as in the bubblewrap backend: the worker changes
/// it as a member of the kept environments' group ([`ENVIRONMENT_GID`]).
fn chown_tree(root: &Path, uid: u32, gid: u32, shared: bool) -> Result<(), SandboxError> {
    use std::os::unix::fs::PermissionsExt;
    let fail = |path: &Path, e: std::io::Error| {
        error(format!("changing the owner of {}: {e}", path.display()))
    };
    let root_dev = root.symlink_metadata().map_err(|e| fail(root, e))?.dev();
    // Whether `path` is a directory to walk.
    let one = |path: &Path| -> Result<bool, SandboxError> {
        let meta = path.symlink_metadata().map_err(|e| fail(path, e))?;
        if meta.dev() != root_dev {
            return Ok(false);
        }
        // A file hard-linked from elsewhere (a prepared environment lent to the workspace)
        // stays the bot's: handing it over would let the worker write into the original.
        if !shared && meta.is_file() && meta.nlink() > 1 {
            return Ok(false);
        }
        std::os::unix::fs::lchown(path, Some(uid), Some(gid)).map_err(|e| fail(path, e))?;
        let meta = path.symlink_metadata().map_err(|e| fail(path, e))?;
        let mode = meta.permissions().mode();
        if meta.is_file() && mode & 0o6000 != 0 {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & 0o1777))
                .map_err(|e| fail(path, e))?;
        }
        Ok(meta.is_dir())
    };
    one(root)?;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).map_err(|e| fail(&dir, e))? {
            let path = entry.map_err(|e| fail(&dir, e))?.path();
            if one(&path)? {
                stack.push(path);
            }
        }
    }
    Ok(())
}

/// Removes the container if the run's future is dropped before it could (the caller gave up on
/// the job, or the bot is shutting down).
struct RemoveOnDrop {
    program: PathBuf,
    name: Option<String>,
}

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let Some(name) = self.name.take() else { return };
        let program = self.program.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = remove(&program, &name).await;
            });
        } else {
            let _ = std::process::Command::new(&program)
                .args(["rm", "-f", "-v", &name])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// `docker rm -f`; a container that is already gone is not an error.
async fn remove(program: &Path, name: &str) -> Result<(), SandboxError> {
    match cli(program, ["rm", "-f", "-v", name]).await {
        Ok(_) => Ok(()),
        Err(e) if e.message.contains("No such container") => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests;
