//! The "preparing environment" phase: the repository's environment (its setup's steps and the
//! toolchains it declares, `environment::plan`) made ready before the worker, in the job's own
//! sandbox backend, or taken from an earlier job that made the same one.
//!
//! In order:
//! 1. **Toolchains.** When the repository declares versions, one run in the sandbox (no
//!    network) prints what it has; a version that does not satisfy the declaration stops the
//!    job here, naming both, before any worker could be tempted to work around it.
//! 2. **Kept?** The plan's key (the steps, the files that decide them, the toolchains, the
//!    backend and its image, the setup's variables) names a kept environment: when there is
//!    one, no setup runs.
//! 3. **Setup.** Otherwise each step runs in the sandbox over a copy of the base's checkout,
//!    with the network only through the egress gateway and `[environment] allow` (no secret,
//!    the variables of `[environment] env`), all within `[environment] timeout`; its output goes
//!    to the job's environment log. A step that fails ends the job with its last lines. What
//!    the steps left that is an environment (`environment::plan::is_kept`) is kept; the rest
//!    of what they wrote is passed over, and the log says so.
//! 4. Every later sandbox of the job — the worker's, each verification run's — gets its own
//!    view, an overlay or a copy ([`Environment::lend`]), taken back when its run ends
//!    ([`Environment::take_back`]), and the environment's variables ([`Environment::apply`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio_util::sync::CancellationToken;

use super::egress::{Allowlist, JobEgress};
use super::error::{JobError, blocking};
use crate::config::pipeline::EnvironmentSection;
use crate::environment::Step;
use crate::environment::kept::{self, Kept, Meta};
use crate::environment::lend::{self, Lending, Loan};
use crate::environment::plan::{self, Plan};
use crate::environment::toolchain::{self, Tool, Version, Wanted};
use crate::sandbox::{Exit, JobLog, Limits, LogSink, Network, Sandbox, SandboxSpec, Stream};

/// Lines of a failed step's output its error quotes.
const TAIL_LINES: usize = 12;

/// Lines of the toolchain probe's output read (one per tool is all it prints).
const PROBE_LINES: usize = 64;

/// How long the toolchain probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// How the bot prepares environments (`[environment]` of `forgeward.toml`, read once).
#[derive(Clone)]
pub struct EnvironmentPolicy {
    pub settings: EnvironmentSection,
    /// `[environment] env`'s variables with their values in the bot's environment.
    pub setup_env: Vec<(String, String)>,
    /// The setup's way out: `[environment] allow` through a gateway per setup.
    allow: Option<Arc<Allowlist>>,
}

impl EnvironmentPolicy {
    /// The policy of `settings`, the variables' values read from `env`.
    pub fn new(settings: &EnvironmentSection, env: impl Fn(&str) -> Option<String>) -> Self {
        let setup_env = settings
            .env
            .iter()
            .filter_map(|entry| match entry.split_once('=') {
                Some((name, value)) => Some((name.to_owned(), value.to_owned())),
                None => env(entry).map(|value| (entry.clone(), value)),
            })
            .collect();
        let allow = (!settings.allow.is_empty()).then(|| {
            Arc::new(Allowlist {
                policy: Arc::new(crate::egress::Policy::new(settings.allow.clone())),
                secrets: Vec::new(),
                extra_roots: Vec::new(),
                roots_pem: String::new(),
            })
        });
        EnvironmentPolicy {
            settings: settings.clone(),
            setup_env,
            allow,
        }
    }
}

impl Default for EnvironmentPolicy {
    fn default() -> Self {
        EnvironmentPolicy::new(&EnvironmentSection::default(), |_| None)
    }
}

/// A job's environment, ready to lend.
#[derive(Clone, Debug, Default)]
pub struct Environment {
    /// The kept environment (none when there is nothing to set up).
    pub kept: Option<Kept>,
    /// The setup ran in this job (else it was kept from an earlier one).
    pub fresh: bool,
    /// What the steps were, for people (`python (pyproject.toml), node (package-lock.json)`).
    pub steps: String,
    /// How this job's sandboxes get their copies.
    pub lending: Option<Lending>,
    /// How long the phase took in this job.
    pub took: Duration,
    /// Why the setup the repository's files call for was not run, when it was not: it needs
    /// a package registry and the setup may reach none. The job goes on with the bare
    /// checkout, and says so.
    pub not_prepared: Option<String>,
    /// Projects the derived setup passed over, and why.
    pub notes: Vec<String>,
}

impl Environment {
    /// Gives `workspace` its own view of the environment (nothing when there is none), until
    /// the loan is taken back or dropped.
    pub async fn lend(&self, workspace: &Path) -> Result<Loan, JobError> {
        let (Some(kept), Some(how)) = (self.kept.clone(), self.lending) else {
            return Ok(Loan::none());
        };
        let workspace = workspace.to_path_buf();
        blocking(move || {
            lend::lend(&kept, &workspace, how).map_err(|e| {
                JobError::transient(format!(
                    "lending the environment to {}: {e}",
                    workspace.display()
                ))
            })
        })
        .await
    }

    /// Takes back what [`Environment::lend`] lent, once the sandbox's run has ended: its
    /// overlays unmounted, then its layers or copies removed.
    pub async fn take_back(loan: Loan) -> Result<(), JobError> {
        blocking(move || {
            loan.take_back()
                .map_err(|e| JobError::transient(format!("taking the lent environment back: {e}")))
        })
        .await
    }

    /// Gives `spec` the environment's variables and `PATH`.
    pub fn apply(&self, spec: &mut SandboxSpec) {
        let Some(kept) = &self.kept else { return };
        let has_venv = kept.meta.kept.iter().any(|k| k == ".venv");
        for (name, value) in plan::variables(has_venv) {
            if !spec.env.iter().any(|(n, _)| *n == name) {
                spec.env.push((name, value));
            }
        }
        spec.path = plan::path_prefix(&kept.meta.kept);
    }

    /// Whether there was nothing to prepare, nothing passed over and nothing to say.
    pub fn is_nothing(&self) -> bool {
        self.kept.is_none() && self.not_prepared.is_none() && self.notes.is_empty()
    }

    /// The environment in a few words, for the status comment and the terminal.
    pub fn describe(&self) -> String {
        let mut line = self.summary();
        for note in &self.notes {
            line.push_str("; ");
            line.push_str(note);
        }
        line
    }

    fn summary(&self) -> String {
        if let Some(why) = &self.not_prepared {
            return format!("not prepared: {why}");
        }
        let Some(kept) = &self.kept else {
            return "nothing to set up".to_owned();
        };
        let size = format!(
            "{} files, {}",
            kept.meta.files,
            human_bytes(kept.meta.bytes)
        );
        let setup_took = Duration::from_millis(kept.meta.duration_ms);
        let line = if self.fresh {
            format!(
                "prepared: {} · {size} · {}",
                self.steps,
                crate::report::human_duration(setup_took)
            )
        } else {
            let from = match kept.meta.job {
                Some(job) => format!("kept from job {job}"),
                None => "kept from an earlier run".to_owned(),
            };
            format!("{from}: {} · {size}", self.steps)
        };
        match self.lending {
            Some(how) => format!("{line} · lent as {}", how.describe()),
            None => line,
        }
    }
}

/// Bytes for people: `180 MB`.
fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "kB", "MB", "GB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.0} {}", UNITS[unit])
    }
}

/// Why the environment could not be prepared: a one-line reason and the output's last lines.
#[derive(Debug)]
pub struct EnvironmentError {
    pub message: String,
    pub tail: Vec<String>,
    /// Worth another try (the sandbox or the disk failed, not the repository's setup).
    pub retry: bool,
}

impl From<EnvironmentError> for JobError {
    fn from(e: EnvironmentError) -> JobError {
        JobError {
            message: format!("the environment could not be prepared: {}", e.message),
            retry: e.retry,
        }
    }
}

impl From<JobError> for EnvironmentError {
    fn from(e: JobError) -> EnvironmentError {
        EnvironmentError {
            message: e.message,
            tail: Vec::new(),
            retry: e.retry,
        }
    }
}

/// Where and with what a job's environment is prepared.
pub struct Preparing<'a> {
    pub sandbox: &'a dyn Sandbox,
    pub policy: &'a EnvironmentPolicy,
    /// The sandbox's limits; the setup's time is `[environment] timeout` instead.
    pub limits: &'a Limits,
    /// The image the job's sandboxes run (Docker), when one is set.
    pub image: Option<String>,
    /// Where kept environments live.
    pub store: kept::Store,
    /// The job, named in what it keeps.
    pub job: Option<u64>,
    /// The phase's output.
    pub log: Arc<JobLog>,
    pub cancel: CancellationToken,
}

/// Prepares `plan`'s environment for a job whose base is checked out at `base_checkout`:
/// toolchains checked, then the kept environment found or made.
pub async fn prepare(
    at: &Preparing<'_>,
    plan: &Plan,
    base_checkout: &Path,
) -> Result<Environment, EnvironmentError> {
    let started = Instant::now();
    if !at.policy.settings.enabled {
        return Ok(Environment::default());
    }
    let installs = check_toolchains(at, plan, base_checkout).await?;
    // The plan as it is, unless a toolchain must be installed first.
    let installing;
    let plan = if installs.is_empty() {
        plan
    } else {
        installing = plan.with_installs(installs);
        &installing
    };
    for note in &plan.notes {
        at.log.line(Stream::Stderr, note);
    }
    let mut environment = Environment {
        steps: crate::environment::derive::describe(&plan.steps),
        lending: Some(Lending::for_this_process(at.store.root())),
        notes: plan.notes.clone(),
        ..Environment::default()
    };
    if plan.is_empty() {
        environment.took = started.elapsed();
        return Ok(environment);
    }
    // The image the job runs, by ID, is part of what the environment is for.
    let mut probe = spec_for(at, base_checkout, vec!["true".to_owned()])?;
    at.sandbox
        .prepare(&mut probe.spec)
        .await
        .map_err(|e| failure(format!("{e}"), Vec::new(), true))?;
    let image = probe.spec.image.clone();
    let key = plan.key(at.sandbox.name(), image.as_deref(), &at.policy.setup_env);
    let store = at.store.clone();
    let found = {
        let (store, key) = (store.clone(), key.clone());
        blocking(move || Ok(store.find(&key))).await?
    };
    if let Some(kept) = found {
        at.log.line(
            Stream::Stderr,
            &format!(
                "── environment {key}: kept from {} ──",
                kept.meta
                    .job
                    .map_or("an earlier run".to_owned(), |j| format!("job {j}"))
            ),
        );
        environment.kept = Some(kept);
        environment.took = started.elapsed();
        return Ok(environment);
    }
    // A derived setup installs from package registries; with none reachable it could only
    // fail. The repository's own commands may not need one (`make deps` from a vendored copy),
    // so they run whatever the network.
    if at.policy.allow.is_none() && !plan.configured {
        let why = format!(
            "{} needs a package registry, and [environment] allow lists none",
            environment.steps
        );
        at.log.line(
            Stream::Stderr,
            &format!("── environment: not prepared: {why} ──"),
        );
        environment.not_prepared = Some(why);
        environment.took = started.elapsed();
        return Ok(environment);
    }
    let kept = set_up(at, plan, base_checkout, &key, image).await?;
    environment.kept = Some(kept);
    environment.fresh = true;
    environment.took = started.elapsed();
    let settings = at.policy.settings.clone();
    let _ = blocking(move || {
        let removed = store.prune(settings.keep_for.0, settings.max_size.0, &key);
        if removed > 0 {
            tracing::info!(removed, "kept environments pruned");
        }
        Ok(())
    })
    .await;
    Ok(environment)
}

fn failure(message: String, tail: Vec<String>, retry: bool) -> EnvironmentError {
    EnvironmentError {
        message,
        tail,
        retry,
    }
}

/// A sandbox spec over `workspace`, with empty job and output directories beside it.
struct Spec {
    spec: SandboxSpec,
    /// Removed when done.
    scratch: tempfile::TempDir,
}

fn spec_for(
    at: &Preparing<'_>,
    workspace: &Path,
    command: Vec<String>,
) -> Result<Spec, EnvironmentError> {
    let parent = workspace.parent().unwrap_or(workspace);
    let scratch = tempfile::Builder::new()
        .prefix(".environment-")
        .tempdir_in(parent)
        .map_err(|e| {
            failure(
                format!("creating a scratch directory: {e}"),
                Vec::new(),
                true,
            )
        })?;
    let (job_dir, out_dir) = (scratch.path().join("job"), scratch.path().join("out"));
    for dir in [&job_dir, &out_dir] {
        std::fs::create_dir_all(dir)
            .map_err(|e| failure(format!("creating {}: {e}", dir.display()), Vec::new(), true))?;
    }
    Ok(Spec {
        spec: SandboxSpec {
            workspace: workspace.to_path_buf(),
            job_dir,
            out_dir,
            command,
            image: at.image.clone(),
            env: Vec::new(),
            limits: at.limits.clone(),
            network: Network::None,
            read_only: Vec::new(),
            path: Vec::new(),
        },
        scratch,
    })
}

/// The lines the toolchain probe printed (a bounded few: its output is untrusted).
#[derive(Default)]
struct Collected(std::sync::Mutex<Vec<String>>);

impl LogSink for Collected {
    fn line(&self, _stream: Stream, line: &str) {
        if let Ok(mut lines) = self.0.lock()
            && lines.len() < PROBE_LINES
        {
            lines.push(crate::text::shortened(line, 300));
        }
    }
}

/// What the sandbox has of each tool the plan declares, asked by one run over `workspace`
/// with `path` before its `PATH` (no network).
async fn probe(
    at: &Preparing<'_>,
    plan: &Plan,
    workspace: &Path,
    path: Vec<String>,
) -> Result<BTreeMap<Tool, Option<Version>>, EnvironmentError> {
    let tools: Vec<Tool> = plan.wanted.iter().map(|w| w.tool).collect();
    let command = vec![
        "/bin/sh".to_owned(),
        "-c".to_owned(),
        toolchain::probe_command(&tools),
    ];
    let mut probe = spec_for(at, workspace, command)?;
    probe.spec.limits.timeout = PROBE_TIMEOUT;
    probe.spec.path = path;
    at.sandbox
        .prepare(&mut probe.spec)
        .await
        .map_err(|e| failure(e.to_string(), Vec::new(), true))?;
    let lines = Collected::default();
    let exit = at
        .sandbox
        .run(&probe.spec, &lines, at.cancel.clone())
        .await
        .map_err(|e| failure(e.to_string(), Vec::new(), true))?;
    drop(probe);
    let output = lines.0.into_inner().unwrap_or_default();
    if !exit.success() {
        return Err(failure(format!("the toolchain probe {exit}"), output, true));
    }
    Ok(toolchain::read_probe(&output))
}

/// A declared toolchain the sandbox falls short of.
struct Short<'a> {
    wanted: &'a Wanted,
    /// What the sandbox has instead: `go 1.19.8`, `no go`.
    has: String,
}

impl Short<'_> {
    /// The job's error: what was wanted and what there is, and why nothing was installed.
    fn error(&self, why: Option<&str>) -> EnvironmentError {
        let wanted = self.wanted;
        let mut message = format!(
            "the repository wants {} {} ({}); the sandbox has {}",
            wanted.tool, wanted.requirement, wanted.source, self.has
        );
        if let Some(why) = why {
            message.push_str(" (");
            message.push_str(why);
            message.push(')');
        }
        failure(message, Vec::new(), false)
    }
}

/// The toolchains `plan` declares, against what the sandbox has (`found`): each one it falls
/// short of, the others logged as satisfied or unreadable.
fn shortfalls<'a>(
    at: &Preparing<'_>,
    plan: &'a Plan,
    found: &BTreeMap<Tool, Option<Version>>,
) -> Vec<Short<'a>> {
    let mut short = Vec::new();
    for wanted in &plan.wanted {
        let Some(version) = found.get(&wanted.tool).cloned().flatten() else {
            short.push(Short {
                wanted,
                has: format!("no {}", wanted.tool),
            });
            continue;
        };
        match toolchain::satisfied(wanted, &version) {
            Ok(true) => at.log.line(
                Stream::Stderr,
                &format!(
                    "toolchain: {} {version} satisfies {} ({})",
                    wanted.tool, wanted.requirement, wanted.source
                ),
            ),
            Ok(false) => short.push(Short {
                wanted,
                has: format!("{} {version}", wanted.tool),
            }),
            Err(why) => at.log.line(
                Stream::Stderr,
                &format!(
                    "toolchain: {} requirement {:?} ({}) could not be read ({why}); not checked",
                    wanted.tool, wanted.requirement, wanted.source
                ),
            ),
        }
    }
    short
}

/// The declared toolchains, checked in the bare sandbox: none to install when the sandbox
/// satisfies them all; else a step installing each missing one, where its installer can and
/// the setup may reach a registry. One that cannot be installed stops the
/// job here, naming what was wanted and what there is, before any worker could be tempted to
/// work around it.
async fn check_toolchains(
    at: &Preparing<'_>,
    plan: &Plan,
    workspace: &Path,
) -> Result<Vec<(Tool, Step)>, EnvironmentError> {
    if plan.wanted.is_empty() {
        return Ok(Vec::new());
    }
    let found = probe(at, plan, workspace, Vec::new()).await?;
    let mut installs = Vec::new();
    for short in shortfalls(at, plan, &found) {
        let command =
            toolchain::install_command(short.wanted).map_err(|why| short.error(Some(&why)))?;
        if at.policy.allow.is_none() {
            return Err(short.error(Some(&format!(
                "installing {} needs a package registry, and [environment] allow lists none",
                short.wanted.tool
            ))));
        }
        let step = Step {
            ecosystem: short.wanted.tool.ecosystem(),
            dir: String::new(),
            command,
            why: format!(
                "{} from {}; the sandbox has {}",
                short.wanted.requirement, short.wanted.source, short.has
            ),
        };
        installs.push((short.wanted.tool, step));
    }
    Ok(installs)
}

/// After a setup that installed toolchains: each declared one, asked again with the
/// environment's programs first, must now be satisfied.
async fn check_installed(
    at: &Preparing<'_>,
    plan: &Plan,
    workspace: &Path,
) -> Result<(), EnvironmentError> {
    let found = probe(at, plan, workspace, setup_path()).await?;
    if let Some(short) = shortfalls(at, plan, &found).first() {
        return Err(short.error(Some("after installing it")));
    }
    for tool in &plan.installs {
        if let Some(Some(version)) = found.get(tool) {
            at.log.line(
                Stream::Stderr,
                &format!("── toolchain: {tool} {version} installed ──"),
            );
        }
    }
    Ok(())
}

/// The `PATH` before the setup's steps' own: installed toolchains, the virtual environment,
/// the root package's programs.
fn setup_path() -> Vec<String> {
    plan::path_prefix(&[
        plan::ENV_DIR.to_owned(),
        ".venv".to_owned(),
        "node_modules".to_owned(),
    ])
}

/// Runs the setup over a copy of the base's checkout and keeps what it made.
async fn set_up(
    at: &Preparing<'_>,
    plan: &Plan,
    base_checkout: &Path,
    key: &str,
    image: Option<String>,
) -> Result<Kept, EnvironmentError> {
    let started = Instant::now();
    let store = at.store.clone();
    let (source, k) = (base_checkout.to_path_buf(), key.to_owned());
    let (building, workspace) = blocking(move || {
        let building = store.building(&k).map_err(|e| {
            JobError::transient(format!("creating the environment's directory: {e}"))
        })?;
        let workspace = building.join("workspace");
        copy_checkout(&source, &workspace)
            .map_err(|e| JobError::transient(format!("copying the checkout for the setup: {e}")))?;
        Ok((building, workspace))
    })
    .await?;
    // Removed on every way out but the one that keeps it.
    let mut cleanup = RemoveOnDrop(Some(building.clone()));
    let deadline = started + at.policy.settings.timeout.0;
    let steps = plan.steps.len();
    for (i, step) in plan.steps.iter().enumerate() {
        at.log.line(
            Stream::Stderr,
            &format!(
                "── setup {}/{steps}: {} ({}) ──",
                i + 1,
                step.command,
                step.why
            ),
        );
        let cd = if step.dir.is_empty() {
            "/workspace".to_owned()
        } else {
            format!("/workspace/{}", quote(&step.dir))
        };
        let command = vec![
            "/bin/sh".to_owned(),
            "-c".to_owned(),
            format!("cd {cd} && {}", step.command),
        ];
        let mut spec = spec_for(at, &workspace, command)?;
        spec.spec.image = image.clone();
        spec.spec.limits.timeout = deadline.saturating_duration_since(Instant::now());
        spec.spec.env = at.policy.setup_env.clone();
        for (name, value) in plan::variables(true) {
            if !spec.spec.env.iter().any(|(n, _)| *n == name) {
                spec.spec.env.push((name, value));
            }
        }
        spec.spec.path = setup_path();
        let gateway = match &at.policy.allow {
            Some(list) => {
                let (list, dir) = (list.clone(), spec.scratch.path().join("egress"));
                let prepared = blocking(move || JobEgress::prepare(&list, &dir)).await?;
                spec.spec.network = Network::Gateway(prepared.mount);
                Some(prepared.gateway.start(at.log.clone())?)
            }
            None => None,
        };
        let ran = at
            .sandbox
            .run(&spec.spec, at.log.as_ref(), at.cancel.clone())
            .await;
        if let Some(gateway) = gateway {
            gateway.finish().await;
        }
        let exit = ran.map_err(|e| failure(e.to_string(), at.log.tail(TAIL_LINES), true))?;
        if !exit.success() {
            // The phase's log: the step's last lines and the gateway's refusals among them.
            let tail = at.log.tail(TAIL_LINES);
            let why = match exit {
                Exit::TimedOut => format!(
                    "ran out of the setup's {}",
                    crate::report::human_duration(at.policy.settings.timeout.0)
                ),
                other => other.to_string(),
            };
            return Err(failure(
                format!("setup step {}/{steps} `{}` {why}", i + 1, step.command),
                tail,
                matches!(exit, Exit::Cancelled),
            ));
        }
    }
    if !plan.installs.is_empty() {
        check_installed(at, plan, &workspace).await?;
    }
    let took = started.elapsed();
    let (store, meta) = (
        at.store.clone(),
        Meta {
            key: key.to_owned(),
            created: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            job: at.job,
            steps: plan.steps.clone(),
            duration_ms: took.as_millis() as u64,
            kept: Vec::new(),
            files: 0,
            bytes: 0,
        },
    );
    let kept = blocking(move || {
        let meta = Meta {
            kept: environment_dirs(&workspace),
            ..meta
        };
        store
            .keep(&building, &workspace, meta)
            .map_err(|e| JobError::transient(format!("keeping the environment: {e}")))
    })
    .await?;
    cleanup.0 = None;
    at.log.line(
        Stream::Stderr,
        &format!(
            "── environment {key}: {} files, {} kept ──",
            kept.meta.files,
            human_bytes(kept.meta.bytes)
        ),
    );
    Ok(kept)
}

/// Removes a directory when dropped, unless it was taken.
struct RemoveOnDrop(Option<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(dir) = self.0.take() {
            let _ = crate::git::remove_tree(&dir);
        }
    }
}

/// Single-quoted for `sh`.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A copy of a checkout, `.git` included (a setup may ask git for a version).
fn copy_checkout(from: &Path, to: &Path) -> std::io::Result<()> {
    lend::copy_dir(from, to)
}

/// What the setup left in `workspace` that is an environment: the directories to keep
/// (relative paths, at any depth; a kept one is not entered, nor is `.git`).
fn environment_dirs(workspace: &Path) -> Vec<String> {
    use std::os::unix::ffi::OsStrExt;
    let mut kept = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(workspace.join(&rel)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if !kind.is_dir() || name.as_bytes().eq_ignore_ascii_case(b".git") {
                continue;
            }
            let path = rel.join(&name);
            if plan::is_kept(name.as_bytes()) {
                kept.push(path.to_string_lossy().into_owned());
            } else {
                stack.push(path);
            }
        }
    }
    kept.sort();
    kept
}
