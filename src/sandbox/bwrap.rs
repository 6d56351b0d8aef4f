//! The bubblewrap backend: the worker runs the host's own toolchain, read-only, in fresh
//! namespaces (mount, pid, ipc, uts, cgroup, and network unless the operator opts in), with the
//! checkout at `/workspace`, the task at `/job`, `/job-out`, and small tmpfs `/tmp` and `$HOME`.
//! It owns building bubblewrap's command line and supervising the run; the host-side mechanics
//! (user ids, ownership, disk use, reaping) are in `bwrap_host`.
//!
//! **Who the worker is.** `RLIMIT_NPROC` is what bounds a fork bomb here (bubblewrap has no
//! cgroups, and a writable cgroup v2 tree is not something a root bot on an arbitrary machine
//! can count on), but the kernel does not enforce it for root — nor for a user namespace whose
//! ids map to root. So when the bot is root, each run gets a **dedicated host user id** from an
//! unused range (`bwrap_host::SANDBOX_UID_BASE`): bubblewrap sets up the namespaces as root
//! (no user namespace, which also works where unprivileged ones are disabled), and `setpriv`
//! (util-linux, on every Debian) then drops to that id, sets its groups to the kept
//! environments' alone ([`super::ENVIRONMENT_GID`]), clears capabilities and the bounding
//! set, and sets `no_new_privs` before the worker starts. The mounted directories are
//! handed to that id for the run and given back after it, so nothing is left owned by it (a
//! prepared environment lent as an overlay inside the workspace is not: see `chown_tree`). When
//! the bot is not root, bubblewrap makes a user namespace as the bot's own user, and the process
//! limit counts the bot's own processes too. This needs neither cgroups (v1 or v2, delegated
//! or not) nor unprivileged user namespaces, only root and util-linux, so it holds on a fresh
//! Debian 12 CI machine as on a server. The worker may still make user namespaces of its own
//! (only a user namespace bubblewrap itself made could forbid that); they give it no way out
//! of its mounts and no more processes, which are counted by host user id.
//!
//! If the bot itself dies, bubblewrap dies with it (`--die-with-parent`) and so does the worker;
//! the mounted directories then stay with the dedicated id until the checkout is removed.
//!
//! **Ending it all.** bubblewrap's child is the init of a new pid namespace and dies with it
//! (`--die-with-parent`); killing bubblewrap therefore kills every process the worker started,
//! double-forked daemons included. When the worker has its own user id, every process of that id
//! is killed again afterwards, and the run returns only when none is left.
//!
//! **Disk.** `/tmp` and `$HOME` are tmpfs mounts sized to [`Limits::disk_bytes`]; the workspace
//! has no such bound, so a watcher measures the workspace and both mounts together and kills
//! the run with [`Exit::DiskFull`] past the limit (a prepared environment lent as an overlay
//! inside the workspace is measured by its upper layers beside it, not walked file by file). `RLIMIT_FSIZE` bounds each file between two
//! measurements.
//!
//! **Other limits** are rlimits every process inherits: address space ([`Limits::memory_bytes`],
//! per process — with the process count bounded, so is the total), file size, CPU time (per
//! process; the wall-clock timeout bounds the whole), no core dumps.
//!
//! **Environment.** bubblewrap starts with an empty environment holding only the allowed
//! variables: they are never on its command line, where any host user could read them in `ps`.

use std::ffi::{OsStr, OsString};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

#[path = "bwrap_host.rs"]
mod bwrap_host;

use super::egress::{self, GatewayMount};
use super::log::{MAX_PIPE_LINE_BYTES, pump_lines};
use super::{
    ENVIRONMENT_GID, Exit, Limits, LogSink, Protection, RESERVED_ENV, Sandbox, SandboxError,
    SandboxSpec, Stream,
};
use bwrap_host::{Rlimits, Shared};

const NAME: &str = "bwrap";

/// The file descriptor bubblewrap reads the protected files' mounts from (`--args`).
const PROTECTION_FD: i32 = 3;

/// The worker's user name, home and id inside the sandbox when bubblewrap makes a user
/// namespace (a non-root bot): a conventional first user id, so tools that refuse root run.
const WORKER_NAME: &str = "worker";
const WORKER_HOME: &str = "/home/worker";
const NAMESPACE_UID: u32 = 1000;

/// `PATH` inside: the host's usual directories, read-only.
const WORKER_PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";

/// What every command is started through: under the address-space limit V8 cannot reserve the
/// guard regions of its trap-based WebAssembly bounds checks, so any Node.js program that
/// instantiates WebAssembly (npm's and fetch's HTTP parser, bundlers, test runners) fails with
/// "Cannot allocate Wasm memory". The `node` first on `PATH`, when it knows
/// `--disable-wasm-trap-handler` (Node 20.15 and 22.2 on), gets it through `NODE_OPTIONS`;
/// one that does not is left as it is, since an option it does not know would stop it. The
/// command is then `exec`ed: no process is left between the sandbox and it.
const WASM_PROLOGUE: [&str; 4] = [
    "/bin/sh",
    "-c",
    "if command -v node >/dev/null 2>&1 \
     && node --disable-wasm-trap-handler -e 0 >/dev/null 2>&1; then \
     NODE_OPTIONS=\"--disable-wasm-trap-handler${NODE_OPTIONS:+ $NODE_OPTIONS}\"; \
     export NODE_OPTIONS; fi; exec \"$@\"",
    "forgeward-sandbox",
];

/// The parts of the host's `/etc` a toolchain needs: the dynamic linker's cache, the
/// alternatives many `/usr/bin` commands are links into, CA certificates, the time zone.
/// Accounts are made up for the sandbox; nothing else of the host's configuration is shown.
const ETC_READ_ONLY: [&str; 9] = [
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/localtime",
    "/etc/nsswitch.conf",
    "/etc/mime.types",
];

/// What name resolution needs, shown only when the worker has the network.
const ETC_NETWORK: [&str; 3] = ["/etc/resolv.conf", "/etc/hosts", "/etc/gai.conf"];

/// Top-level toolchain directories: bound read-only when they are directories, recreated as the
/// same symlink when they are links into `/usr` (a merged-`/usr` system).
const ROOT_DIRS: [&str; 7] = [
    "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
];

/// How long after the worker's end its pipes may still deliver lines before they are dropped.
/// Everything it started is dead by then; this only bounds a read that never ends.
const DRAIN: Duration = Duration::from_secs(2);

/// The shortest pause between two measurements of the disk the worker used: what a worker can
/// write between two of them is what it may overshoot the limit by. A walk that took
/// longer is followed by a pause ten times its length, so measuring never takes more than a
/// tenth of a core.
const DISK_POLL: Duration = Duration::from_millis(20);

/// Kill passes over a dedicated user id's processes before the run is declared torn down: each
/// pass waits 20 ms, so a stubborn leftover costs at most two seconds.
const REAP_PASSES: u32 = 100;

/// The bubblewrap backend. See the module documentation for how it isolates a worker.
#[derive(Clone, Debug)]
pub struct Bwrap {
    program: PathBuf,
    setpriv: PathBuf,
}

impl Default for Bwrap {
    fn default() -> Bwrap {
        Bwrap::new()
    }
}

impl Bwrap {
    /// The backend using `bwrap` and `setpriv` from `PATH`.
    pub fn new() -> Bwrap {
        Bwrap {
            program: PathBuf::from("bwrap"),
            setpriv: PathBuf::from("/usr/bin/setpriv"),
        }
    }

    /// The backend using this bubblewrap binary.
    pub fn with_program(program: impl Into<PathBuf>) -> Bwrap {
        Bwrap {
            program: program.into(),
            ..Bwrap::new()
        }
    }

    fn error(message: impl Into<String>) -> SandboxError {
        SandboxError {
            backend: NAME,
            message: message.into(),
        }
    }
}

/// Who the worker runs as on the host.
#[derive(Clone, Copy, Debug)]
enum Identity {
    /// A dedicated host user id (the bot is root).
    Dedicated(u32),
    /// The bot's own user, in a user namespace.
    Namespace,
}

/// Ownership of the mounted directories, handed to a dedicated user for the run and given back
/// afterwards, whatever happens in between.
struct Handover {
    dirs: Vec<(PathBuf, u32, u32)>,
}

impl Handover {
    fn give(dirs: &[&Path], uid: u32) -> Result<Handover, SandboxError> {
        let mut handover = Handover { dirs: Vec::new() };
        for dir in dirs {
            let (owner, group) = bwrap_host::owner(dir)
                .map_err(|e| Bwrap::error(format!("reading {}: {e}", dir.display())))?;
            handover.dirs.push((dir.to_path_buf(), owner, group));
            bwrap_host::chown_tree(dir, uid, uid, Shared::Skip).map_err(|e| {
                Bwrap::error(format!("handing {} to the sandbox: {e}", dir.display()))
            })?;
        }
        Ok(handover)
    }

    fn give_back(&mut self) -> Result<(), SandboxError> {
        let mut result = Ok(());
        for (dir, owner, group) in self.dirs.drain(..) {
            if let Err(e) = bwrap_host::chown_tree(&dir, owner, group, Shared::Include) {
                result = Err(Bwrap::error(format!(
                    "taking {} back from the sandbox: {e}",
                    dir.display()
                )));
            }
        }
        result
    }
}

impl Drop for Handover {
    fn drop(&mut self) {
        let _ = self.give_back();
    }
}

/// Why the supervision loop stopped the worker, if it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    TimedOut,
    Cancelled,
    DiskFull,
}

/// A sink that passes lines on and remembers the first line on stderr: bubblewrap reports a
/// failed setup there, before any output of the worker.
struct Recording<'a> {
    inner: &'a dyn LogSink,
    first_stderr: Mutex<Option<String>>,
}

impl LogSink for Recording<'_> {
    fn line(&self, stream: Stream, line: &str) {
        if stream == Stream::Stderr
            && let Ok(mut first) = self.first_stderr.lock()
            && first.is_none()
        {
            *first = Some(line.to_owned());
        }
        self.inner.line(stream, line);
    }
}

impl Bwrap {
    /// bubblewrap's arguments for this run (everything but the environment).
    ///
    /// With files to protect, the mounts that protect them are read from the file descriptor
    /// [`PROTECTION_FD`] (`--args`): there may be thousands, more than a command line holds.
    fn arguments(
        &self,
        spec: &SandboxSpec,
        identity: Identity,
        accounts: &Path,
        protected: bool,
    ) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        let mut push = |items: &[&dyn AsRef<std::ffi::OsStr>]| {
            args.extend(items.iter().map(|s| s.as_ref().to_os_string()));
        };
        match identity {
            // Root: every namespace but the user namespace (see the module documentation).
            Identity::Dedicated(_) => {
                push(&[&"--unshare-ipc", &"--unshare-pid", &"--unshare-uts"]);
                push(&[&"--unshare-cgroup-try"]);
                if !spec.network.is_full() {
                    push(&[&"--unshare-net"]);
                }
            }
            Identity::Namespace => {
                push(&[&"--unshare-all", &"--unshare-user", &"--disable-userns"]);
                let uid = NAMESPACE_UID.to_string();
                push(&[&"--uid", &uid, &"--gid", &uid]);
                if spec.network.is_full() {
                    push(&[&"--share-net"]);
                }
            }
        }
        push(&[&"--new-session", &"--die-with-parent"]);
        push(&[&"--hostname", &"sandbox"]);
        push(&[&"--ro-bind", &"/usr", &"/usr"]);
        for dir in ROOT_DIRS {
            match std::fs::read_link(dir) {
                Ok(target) => push(&[&"--symlink", &target, &dir]),
                Err(_) if Path::new(dir).is_dir() => push(&[&"--ro-bind", &dir, &dir]),
                Err(_) => {}
            }
        }
        // bubblewrap would make `/etc` for the binds below with mode 0700, root's alone: the
        // worker could read neither its own account nor the CA bundle nor `openssl.cnf`.
        push(&[&"--perms", &"0755", &"--dir", &"/etc"]);
        let etc = ETC_READ_ONLY
            .iter()
            .chain(ETC_NETWORK.iter().filter(|_| spec.network.is_full()));
        for path in etc {
            push(&[&"--ro-bind-try", path, path]);
        }
        if !spec.network.is_full() {
            // Loopback works without the network; test runners (Vite, Vitest) look it up.
            push(&[&"--ro-bind", &accounts.join("hosts"), &"/etc/hosts"]);
        }
        push(&[&"--ro-bind", &accounts.join("passwd"), &"/etc/passwd"]);
        push(&[&"--ro-bind", &accounts.join("group"), &"/etc/group"]);
        push(&[&"--proc", &"/proc", &"--dev", &"/dev"]);
        let size = spec.limits.disk_bytes.max(1).to_string();
        for dir in ["/tmp", WORKER_HOME] {
            push(&[&"--perms", &"1777", &"--size", &size, &"--tmpfs", &dir]);
        }
        push(&[&"--bind", &spec.workspace, &"/workspace"]);
        if protected {
            push(&[&"--args", &PROTECTION_FD.to_string()]);
        }
        push(&[&"--ro-bind", &spec.job_dir, &"/job"]);
        push(&[&"--bind", &spec.out_dir, &"/job-out"]);
        if let Some(gateway) = spec.network.gateway() {
            // As with `/etc`: a parent bubblewrap makes itself would be root's alone.
            push(&[&"--perms", &"0755", &"--dir", &"/run"]);
            push(&[&"--ro-bind", &gateway.dir, &egress::INSIDE]);
        }
        push(&[&"--remount-ro", &"/", &"--chdir", &"/workspace"]);
        match identity {
            Identity::Dedicated(uid) => {
                // setpriv needs these three to change ids and empty the bounding set; it drops
                // them (and every other) before the worker starts.
                push(&[&"--cap-drop", &"ALL"]);
                for cap in ["CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP"] {
                    push(&[&"--cap-add", &cap]);
                }
                let (reuid, regid) = (format!("--reuid={uid}"), format!("--regid={uid}"));
                // No group but its own and the kept environments' (see ENVIRONMENT_GID).
                let groups = format!("--groups={ENVIRONMENT_GID}");
                push(&[&"--", &self.setpriv, &reuid, &regid, &groups]);
                push(&[
                    &"--no-new-privs",
                    &"--bounding-set=-all",
                    &"--inh-caps=-all",
                ]);
                push(&[&"--"]);
            }
            Identity::Namespace => push(&[&"--cap-drop", &"ALL", &"--"]),
        }
        let command = WASM_PROLOGUE
            .iter()
            .map(OsString::from)
            .chain(spec.command.iter().map(OsString::from));
        match spec.network.gateway() {
            Some(gateway) => args.extend(gateway.command(command)),
            None => args.extend(command),
        }
        args
    }

    /// bubblewrap's arguments that mount `protection` over the workspace, NUL-separated as
    /// `--args` reads them: the directories bound onto themselves, parents first, then each
    /// file read-only.
    fn protection_arguments(spec: &SandboxSpec, protection: &Protection) -> Vec<u8> {
        use std::os::unix::ffi::OsStrExt;
        let mut out = Vec::new();
        let mut push = |option: &str, path: &Path| {
            let inside = Path::new("/workspace").join(path);
            for arg in [
                OsStr::new(option),
                spec.workspace.join(path).as_os_str(),
                inside.as_os_str(),
            ] {
                out.extend_from_slice(arg.as_bytes());
                out.push(0);
            }
        };
        for dir in &protection.dirs {
            push("--bind", dir);
        }
        for file in &protection.files {
            push("--ro-bind", file);
        }
        out
    }

    /// The environment bubblewrap (and so the worker) starts with.
    fn environment(spec: &SandboxSpec) -> Vec<(String, String)> {
        let gateway = spec.network.gateway();
        let mut env: Vec<(String, String)> = spec
            .env
            .iter()
            .filter(|(name, _)| !RESERVED_ENV.contains(&name.as_str()))
            .filter(|(name, _)| gateway.is_none() || !egress::is_gateway_variable(name))
            .cloned()
            .collect();
        env.extend(gateway.map(GatewayMount::environment).unwrap_or_default());
        env.push(("HOME".into(), WORKER_HOME.into()));
        let path = spec
            .path
            .iter()
            .map(String::as_str)
            .chain([WORKER_PATH])
            .collect::<Vec<_>>()
            .join(":");
        env.push(("PATH".into(), path));
        env.push(("LANG".into(), "C.UTF-8".into()));
        env.push(("TMPDIR".into(), "/tmp".into()));
        env
    }

    /// `/etc/passwd` and `/etc/group` for the sandbox (root, the worker and `nobody`), and an
    /// `/etc/hosts` that names loopback.
    fn write_accounts(dir: &Path, identity: Identity) -> Result<(), SandboxError> {
        let uid = match identity {
            Identity::Dedicated(uid) => uid,
            Identity::Namespace => NAMESPACE_UID,
        };
        let passwd = format!(
            "root:x:0:0:root:/root:/bin/sh\n\
             {WORKER_NAME}:x:{uid}:{uid}:{WORKER_NAME}:{WORKER_HOME}:/bin/bash\n\
             nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
        );
        let group = format!(
            "root:x:0:\n{WORKER_NAME}:x:{uid}:\nenvironment:x:{ENVIRONMENT_GID}:{WORKER_NAME}\nnogroup:x:65534:\n"
        );
        std::fs::write(dir.join("passwd"), passwd)
            .and_then(|()| std::fs::write(dir.join("group"), group))
            .and_then(|()| {
                std::fs::write(dir.join("hosts"), "127.0.0.1 localhost\n::1 localhost\n")
            })
            .map_err(|e| Bwrap::error(format!("writing the sandbox's accounts: {e}")))
    }

    fn validate(spec: &SandboxSpec) -> Result<(), SandboxError> {
        if spec.command.is_empty() {
            return Err(Bwrap::error("no worker command"));
        }
        for (label, dir) in [
            ("workspace", &spec.workspace),
            ("job directory", &spec.job_dir),
            ("output directory", &spec.out_dir),
        ] {
            if !dir.is_dir() {
                return Err(Bwrap::error(format!(
                    "the {label} {} is not a directory",
                    dir.display()
                )));
            }
        }
        if let Some((name, _)) = spec
            .env
            .iter()
            .find(|(n, _)| n.is_empty() || n.contains(['=', '\0']))
        {
            return Err(Bwrap::error(format!(
                "invalid environment variable name {name:?}"
            )));
        }
        Ok(())
    }

    /// Measures the disk the worker used until it passes `limit`; never returns otherwise.
    async fn watch_disk(workspace: PathBuf, baseline: u64, limit: u64, bwrap_pid: Option<u32>) {
        let mut pause = DISK_POLL;
        loop {
            tokio::time::sleep(pause).await;
            let workspace = workspace.clone();
            let started = Instant::now();
            let used = tokio::task::spawn_blocking(move || {
                let mut used = bwrap_host::disk_usage(&workspace);
                let init = bwrap_pid.and_then(bwrap_host::first_child);
                if let Some(root) = init.and_then(|pid| bwrap_host::sandbox_root(pid, &workspace)) {
                    for dir in ["tmp", WORKER_HOME.trim_start_matches('/')] {
                        used += bwrap_host::tmpfs_used(&root.join(dir));
                    }
                }
                used
            })
            .await
            .unwrap_or(0);
            // A full tmpfs stops at exactly its size, which is the limit: reaching it is full.
            if used.saturating_sub(baseline) >= limit {
                return;
            }
            pause = DISK_POLL.max(started.elapsed() * 10);
        }
    }
}

#[async_trait]
impl Sandbox for Bwrap {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn check(&self) -> Result<(), SandboxError> {
        let dir = bwrap_host::Scratch::new("check")
            .map_err(|e| Bwrap::error(format!("creating a probe directory: {e}")))?;
        let mut dirs = Vec::new();
        for name in ["workspace", "job", "out"] {
            let path = dir.path().join(name);
            std::fs::create_dir(&path)
                .map_err(|e| Bwrap::error(format!("creating a probe directory: {e}")))?;
            dirs.push(path);
        }
        let spec = SandboxSpec {
            workspace: dirs[0].clone(),
            job_dir: dirs[1].clone(),
            out_dir: dirs[2].clone(),
            command: vec!["true".into()],
            image: None,
            env: Vec::new(),
            limits: Limits {
                timeout: Duration::from_secs(20),
                memory_bytes: 1 << 30,
                pids: 64,
                file_size_bytes: 1 << 20,
                disk_bytes: 1 << 20,
                cpu: Duration::from_secs(10),
            },
            network: super::Network::None,
            read_only: Vec::new(),
            path: Vec::new(),
        };
        let lines = Recording {
            inner: &Discard,
            first_stderr: Mutex::new(None),
        };
        match self.run(&spec, &lines, CancellationToken::new()).await? {
            Exit::Code(0) => Ok(()),
            other => {
                let why = lines.first_stderr.lock().ok().and_then(|l| l.clone());
                Err(Bwrap::error(format!(
                    "a probe sandbox running `true` ended with {other:?}{}",
                    why.map(|l| format!(": {l}")).unwrap_or_default()
                )))
            }
        }
    }

    async fn run(
        &self,
        spec: &SandboxSpec,
        log: &dyn LogSink,
        cancel: CancellationToken,
    ) -> Result<Exit, SandboxError> {
        Bwrap::validate(spec)?;
        let protection = Protection::of(spec, NAME)?;
        let identity = if bwrap_host::is_root() {
            Identity::Dedicated(bwrap_host::allocate_uid())
        } else {
            Identity::Namespace
        };
        let accounts = bwrap_host::Scratch::new("run")
            .map_err(|e| Bwrap::error(format!("creating a scratch directory: {e}")))?;
        Bwrap::write_accounts(accounts.path(), identity)?;
        // Root mounts the protection itself, in a mount namespace of bubblewrap's own made just
        // before it starts (two system calls a file); bubblewrap's recursive bind of the
        // workspace carries those mounts in. Without root, bubblewrap mounts each file, reading
        // its mount table again for each one: fine for hundreds, seconds for thousands.
        let premounted = match identity {
            Identity::Dedicated(_) if !protection.is_empty() => Some(
                bwrap_host::Premount::new(&spec.workspace, &protection).map_err(|e| {
                    Bwrap::error(format!("preparing the protected files' mounts: {e}"))
                })?,
            ),
            _ => None,
        };
        let protection_file = if protection.is_empty() || premounted.is_some() {
            None
        } else {
            let path = accounts.path().join("protection.args");
            std::fs::write(&path, Bwrap::protection_arguments(spec, &protection))
                .and_then(|()| std::fs::File::open(&path))
                .map(Some)
                .map_err(|e| Bwrap::error(format!("writing the protected files' mounts: {e}")))?
        };
        let mut handover = match identity {
            Identity::Dedicated(uid) => Some(Handover::give(
                &[&spec.workspace, &spec.job_dir, &spec.out_dir],
                uid,
            )?),
            Identity::Namespace => None,
        };

        let baseline = {
            let workspace = spec.workspace.clone();
            tokio::task::spawn_blocking(move || bwrap_host::disk_usage(&workspace))
                .await
                .unwrap_or(0)
        };
        let rlimits = Rlimits::from_limits(&spec.limits);
        let mut command = Command::new(&self.program);
        command
            .args(self.arguments(spec, identity, accounts.path(), protection_file.is_some()))
            .env_clear()
            .envs(Bwrap::environment(spec))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let protection_fd = protection_file.as_ref().map(|f| f.as_raw_fd());
        // SAFETY: the closure only makes system calls (setrlimit, dup2, fcntl, unshare, mount:
        // async-signal-safe) on values prepared before the fork; it allocates nothing.
        unsafe {
            command.pre_exec(move || {
                if let Some(fd) = protection_fd {
                    bwrap_host::inherit_as(fd, PROTECTION_FD)?;
                }
                if let Some(premount) = &premounted {
                    premount.apply()?;
                }
                rlimits.apply()
            });
        }
        let mut child = command.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Bwrap::error(format!(
                "{} not found; install the bubblewrap package",
                self.program.display()
            )),
            _ => Bwrap::error(format!("starting {}: {e}", self.program.display())),
        })?;
        let bwrap_pid = child.id();
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(Bwrap::error("the worker's output pipes are missing"));
        };

        let sink = Recording {
            inner: log,
            first_stderr: Mutex::new(None),
        };
        let ended = CancellationToken::new();
        let pumps = async {
            let both = async {
                tokio::join!(
                    pump_lines(stdout, Stream::Stdout, &sink, MAX_PIPE_LINE_BYTES),
                    pump_lines(stderr, Stream::Stderr, &sink, MAX_PIPE_LINE_BYTES),
                )
            };
            tokio::select! {
                _ = both => {}
                () = async { ended.cancelled().await; tokio::time::sleep(DRAIN).await } => {}
            }
        };
        let supervise = async {
            let stop = tokio::select! {
                status = child.wait() => Ok(status),
                () = tokio::time::sleep(spec.limits.timeout) => Err(Stop::TimedOut),
                () = cancel.cancelled() => Err(Stop::Cancelled),
                () = Bwrap::watch_disk(
                    spec.workspace.clone(), baseline, spec.limits.disk_bytes, bwrap_pid,
                ) => Err(Stop::DiskFull),
            };
            let status = match stop {
                Ok(status) => status.map(Ok),
                Err(stop) => {
                    // SIGKILL to bubblewrap: its child, the pid namespace's init, follows it
                    // (`--die-with-parent`), and the kernel kills the rest of the namespace.
                    let _ = child.start_kill();
                    child.wait().await.map(|_| Err(stop))
                }
            };
            let reaped = match identity {
                Identity::Dedicated(uid) => bwrap_host::kill_all_of(uid, REAP_PASSES).await,
                Identity::Namespace => match bwrap_pid.and_then(bwrap_host::first_child) {
                    Some(init) => bwrap_host::wait_gone(init, 200).await,
                    None => true,
                },
            };
            ended.cancel();
            (status, reaped)
        };
        let ((status, reaped), ()) = tokio::join!(supervise, pumps);

        if let Some(handover) = handover.as_mut() {
            handover.give_back()?;
        }
        if !reaped {
            return Err(Bwrap::error("processes of the worker survived its end"));
        }
        let status = status.map_err(|e| Bwrap::error(format!("waiting for the worker: {e}")))?;
        let exit = match status {
            Err(Stop::TimedOut) => Exit::TimedOut,
            Err(Stop::Cancelled) => Exit::Cancelled,
            Err(Stop::DiskFull) => Exit::DiskFull,
            Ok(status) => exit_of(status),
        };
        // bubblewrap exits 1 with a `bwrap: …` line when it could not build the sandbox, before
        // the worker printed anything.
        let first = sink.first_stderr.lock().ok().and_then(|l| l.clone());
        if exit == Exit::Code(1)
            && let Some(line) = first.filter(|l| l.starts_with("bwrap: "))
        {
            return Err(Bwrap::error(format!(
                "setting up the sandbox failed: {line}"
            )));
        }
        Ok(exit)
    }
}

/// How the worker ended, from bubblewrap's status: bubblewrap reports a worker killed by signal
/// N as exit code 128 + N, as shells do; a worker that exits with such a code itself is reported
/// as killed, which is the same failure to the pipeline.
fn exit_of(status: std::process::ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) if (129..=128 + 64).contains(&code) => Exit::Signal(code - 128),
        (Some(code), _) => Exit::Code(code),
        (None, Some(signal)) => Exit::Signal(signal),
        (None, None) => Exit::Code(-1),
    }
}

/// A sink for the probe run's output.
struct Discard;

impl LogSink for Discard {
    fn line(&self, _stream: Stream, _line: &str) {}
}
