//! One worker job's phases, driven once for every kind of job: the bot's (a forge's issue or
//! pull request) and `forgeward run`'s (a repository on this machine or a URL).
//!
//! The driver knows the order of things — cloning, preparing the sandbox, the worker, the bot's
//! own check, verification — and nothing of who watches. An [`Observer`] is told each phase as
//! it begins and each result as it comes (the status comment on a forge, the terminal, the
//! record the job page reads; [`Both`] tells two), and is asked, while the worker or the tests run, whether the job should stop.
//! Publishing the result is the caller's: where it goes differs (a pull request, a local branch).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::config::PipelineConfig;
use super::environment::{Environment, EnvironmentError, Preparing};
use super::error::JobError;
pub use super::run::Target;
use super::run::{self, Checked, JobFile, Prepared, WorkerRun};
use super::verify::{self, Verification};
use crate::forge::api::PullRequest;
use crate::sandbox::{Exit, JobLog, Sandbox};
use crate::store::{JobId, Store};

/// How often a running worker's or suite's job asks its observer whether to stop: a person who
/// asks sees the worker stop within seconds.
pub const STOP_POLL: Duration = Duration::from_secs(2);

/// The phases of a worker job, in the order they come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Cloning,
    PreparingEnvironment,
    PreparingSandbox,
    Working,
    Checking,
    Verifying,
    Publishing,
}

impl Phase {
    /// As the status comment, the store and the terminal name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Cloning => "cloning",
            Phase::PreparingEnvironment => "preparing environment",
            Phase::PreparingSandbox => "preparing sandbox",
            Phase::Working => "working",
            Phase::Checking => "checking",
            Phase::Verifying => "verifying",
            Phase::Publishing => "publishing",
        }
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// When each phase of a job began, for the time each took: a phase lasts until the next one
/// begins, the last one until now.
#[derive(Clone, Debug, Default)]
pub struct PhaseClock {
    entered: Vec<(Phase, std::time::Instant)>,
}

impl PhaseClock {
    pub fn enter(&mut self, phase: Phase) {
        self.entered.push((phase, std::time::Instant::now()));
    }

    /// Each phase entered, in order, with the time it took (so far, for the last one).
    pub fn times(&self) -> Vec<(&'static str, Duration)> {
        let now = std::time::Instant::now();
        self.entered
            .iter()
            .enumerate()
            .map(|(i, (phase, began))| {
                let ended = self.entered.get(i + 1).map_or(now, |(_, next)| *next);
                (phase.as_str(), ended.saturating_duration_since(*began))
            })
            .collect()
    }
}

/// Why a job should stop before its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Someone allowed to asked (`/forgeward cancel`).
    By(String),
    /// The job is no longer this runner's: its lease ran out.
    LeaseLost,
}

/// Whoever watches a job: told what happens, asked whether to stop.
#[async_trait]
pub trait Observer: Send {
    /// How often [`Observer::progress`] is called while the worker or the tests run.
    fn interval(&self) -> Duration;

    /// A phase begins. An error ends the job (its lease was lost, its status cannot be shown).
    async fn enter(&mut self, phase: Phase) -> Result<(), JobError>;

    /// What the job works on is known (cloning has not begun).
    async fn targeted(&mut self, _target: &Target) {}

    /// The checkout is ready.
    async fn prepared(&mut self, _prepared: &Prepared) {}

    /// The environment is ready for the job's sandboxes, or could not be prepared (the job then
    /// ends with that error).
    async fn environment(&mut self, _result: Result<&Environment, &EnvironmentError>) {}

    /// Every [`Observer::interval`] while the worker runs (with its log so far) or the tests run.
    async fn progress(&mut self, _phase: Phase, _log: Option<&Arc<JobLog>>) {}

    /// Whether to stop now; asked every [`STOP_POLL`] while the worker or the tests run.
    async fn stop(&mut self) -> Option<Stop> {
        None
    }

    /// The worker ended (not yet judged).
    async fn worker_done(&mut self, _worker: &WorkerRun) {}

    /// The worker's change, committed by the bot and checked.
    async fn checked(&mut self, _checked: &Checked) {}

    /// The bot's own runs of the tests, done.
    async fn verified(&mut self, _verification: &Verification) {}

    /// The caller published the change as this pull (merge) request (publishing is the
    /// caller's, so it is the caller who tells).
    async fn published(&mut self, _pull_request: &PullRequest) {}
}

/// Two observers as one: each is told everything, the first one first; the job stops when
/// either says so, and a phase that the first cannot enter is not shown to the second.
/// Progress comes at the shorter of their intervals.
pub struct Both<A, B>(pub A, pub B);

#[async_trait]
impl<A: Observer, B: Observer> Observer for Both<A, B> {
    fn interval(&self) -> Duration {
        self.0.interval().min(self.1.interval())
    }

    async fn enter(&mut self, phase: Phase) -> Result<(), JobError> {
        self.0.enter(phase).await?;
        self.1.enter(phase).await
    }

    async fn targeted(&mut self, target: &Target) {
        self.0.targeted(target).await;
        self.1.targeted(target).await;
    }

    async fn prepared(&mut self, prepared: &Prepared) {
        self.0.prepared(prepared).await;
        self.1.prepared(prepared).await;
    }

    async fn environment(&mut self, result: Result<&Environment, &EnvironmentError>) {
        self.0.environment(result).await;
        self.1.environment(result).await;
    }

    async fn progress(&mut self, phase: Phase, log: Option<&Arc<JobLog>>) {
        self.0.progress(phase, log).await;
        self.1.progress(phase, log).await;
    }

    async fn stop(&mut self) -> Option<Stop> {
        match self.0.stop().await {
            Some(stop) => Some(stop),
            None => self.1.stop().await,
        }
    }

    async fn worker_done(&mut self, worker: &WorkerRun) {
        self.0.worker_done(worker).await;
        self.1.worker_done(worker).await;
    }

    async fn checked(&mut self, checked: &Checked) {
        self.0.checked(checked).await;
        self.1.checked(checked).await;
    }

    async fn verified(&mut self, verification: &Verification) {
        self.0.verified(verification).await;
        self.1.verified(verification).await;
    }

    async fn published(&mut self, pull_request: &PullRequest) {
        self.0.published(pull_request).await;
        self.1.published(pull_request).await;
    }
}

/// How the driven phases ended.
pub enum Driven {
    /// Stopped while the worker or the tests ran; nothing is to be published.
    Stopped {
        phase: Phase,
        /// Who asked, when someone did.
        by: Option<String>,
    },
    /// The worker changed nothing.
    Unchanged { worker: WorkerRun },
    /// The worker's change, committed, checked, and verified when the worker finished.
    Changed(Box<Changed>),
}

/// A change ready to publish.
pub struct Changed {
    pub target: Target,
    pub prepared: Prepared,
    pub worker: WorkerRun,
    pub checked: Checked,
    pub verification: Option<Verification>,
}

/// The job's identity and what it runs with.
pub struct Drive<'a> {
    pub config: &'a PipelineConfig,
    pub sandbox: Arc<dyn Sandbox>,
    /// Where the base's test results are kept between jobs (the bot's store).
    pub store: Option<&'a Store>,
    pub job: JobId,
    pub attempt: u32,
}

impl Drive<'_> {
    /// Runs the phases up to publishing. `target` is awaited once cloning has begun (a forge's
    /// job asks the forge what the issue or pull request is).
    pub async fn run(
        &self,
        target: impl Future<Output = Result<Target, JobError>> + Send,
        observer: &mut dyn Observer,
    ) -> Result<Driven, JobError> {
        let config = self.config;
        observer.enter(Phase::Cloning).await?;
        let target = target.await?;
        observer.targeted(&target).await;
        let mut prepared = run::prepare(config, &target, self.job, self.attempt).await?;
        observer.prepared(&prepared).await;

        if let Some(stopped) = self.ready_environment(&mut prepared, observer).await? {
            return Ok(stopped);
        }
        let loan = prepared.environment.lend(&prepared.dir.workspace()).await?;

        observer.enter(Phase::PreparingSandbox).await?;
        let job_file = JobFile {
            forge: target.forge,
            repo: target.repo.to_string(),
            number: target.number,
            branch: target.branch.clone(),
            attempt: self.attempt,
            job: self.job.0,
        };
        let mut spec = run::sandbox_spec(
            config,
            &prepared,
            &target.task,
            &job_file,
            self.sandbox.as_ref(),
        )
        .await?;
        spec.loan = loan;

        observer.enter(Phase::Working).await?;
        let template = spec.sandbox.clone();
        let (worker, by) = self.work(spec, observer).await?;
        observer.worker_done(&worker).await;
        if worker.exit == Exit::Cancelled {
            return Ok(Driven::Stopped {
                phase: Phase::Working,
                by,
            });
        }

        observer.enter(Phase::Checking).await?;
        let message = run::commit_message(
            &target.task,
            &config.worker.display_name(),
            &target.actor,
            target.forge,
            &target.url,
        );
        let Some(mut checked) = run::check(config, &prepared, message).await? else {
            return Ok(Driven::Unchanged { worker });
        };
        // The repository's own tests, run by the bot, on a change the worker finished.
        let mut verification = None;
        if worker.question.is_none() && worker.exit.success() {
            observer.enter(Phase::Verifying).await?;
            match self
                .verify(&mut prepared, &mut checked, &template, observer)
                .await?
            {
                Ok(done) => {
                    observer.verified(&done).await;
                    verification = Some(done);
                }
                Err(stop) => {
                    return match stop {
                        Stop::By(who) => Ok(Driven::Stopped {
                            phase: Phase::Verifying,
                            by: Some(who),
                        }),
                        Stop::LeaseLost => Err(JobError::transient("the job's lease was lost")),
                    };
                }
            }
        }
        observer.checked(&checked).await;
        Ok(Driven::Changed(Box::new(Changed {
            target,
            prepared,
            worker,
            checked,
            verification,
        })))
    }

    /// The "preparing environment" phase: the environment kept or set up, for the job's
    /// sandboxes to be lent (a repository with nothing to install and no toolchain declared has
    /// no phase to show). `Some`: the job was stopped while it ran.
    async fn ready_environment(
        &self,
        prepared: &mut Prepared,
        observer: &mut dyn Observer,
    ) -> Result<Option<Driven>, JobError> {
        let plan = &prepared.plan;
        let wanted = !plan.is_empty() || !plan.wanted.is_empty();
        let environment = if self.config.environment.settings.enabled && wanted {
            observer.enter(Phase::PreparingEnvironment).await?;
            self.environment(prepared, observer).await?
        } else {
            Ok(super::environment::Environment::default())
        };
        match environment {
            Ok(environment) => {
                observer.environment(Ok(&environment)).await;
                prepared.environment = environment;
                Ok(None)
            }
            Err(Ok(failed)) => {
                observer.environment(Err(&failed)).await;
                Err(failed.into())
            }
            Err(Err(stop)) => match stop {
                Stop::By(who) => Ok(Some(Driven::Stopped {
                    phase: Phase::PreparingEnvironment,
                    by: Some(who),
                })),
                Stop::LeaseLost => Err(JobError::transient("the job's lease was lost")),
            },
        }
    }

    /// Verifies a change made elsewhere — a pull request's head, `checked` — as a worker's is:
    /// the environment prepared from the base and lent, then the three runs of the tests in
    /// the sandbox, with no network and none of the worker's variables. Its findings join
    /// `checked`'s report. `None`: stopped while it ran.
    pub async fn verify_change(
        &self,
        prepared: &mut Prepared,
        checked: &mut Checked,
        observer: &mut dyn Observer,
    ) -> Result<Option<Verification>, JobError> {
        if self.ready_environment(prepared, observer).await?.is_some() {
            return Ok(None);
        }
        observer.enter(Phase::PreparingSandbox).await?;
        let mut template = crate::sandbox::SandboxSpec {
            workspace: prepared.dir.workspace(),
            job_dir: prepared.dir.task_dir(),
            out_dir: prepared.dir.out_dir(),
            command: Vec::new(),
            image: self.config.worker.image.clone(),
            env: Vec::new(),
            limits: self.config.limits.clone(),
            network: crate::sandbox::Network::None,
            read_only: Vec::new(),
            path: Vec::new(),
        };
        prepared.environment.apply(&mut template);
        self.sandbox.prepare(&mut template).await?;
        observer.enter(Phase::Verifying).await?;
        match self.verify(prepared, checked, &template, observer).await? {
            Ok(done) => {
                observer.verified(&done).await;
                Ok(Some(done))
            }
            Err(Stop::By(_)) => Ok(None),
            Err(Stop::LeaseLost) => Err(JobError::transient("the job's lease was lost")),
        }
    }

    /// Runs the worker to its end, stopping it when the observer says so; who asked, if anyone.
    async fn work(
        &self,
        spec: run::WorkerSpec,
        observer: &mut dyn Observer,
    ) -> Result<(WorkerRun, Option<String>), JobError> {
        let live_log = run::log_path(&self.config.data_dir, self.job, self.attempt);
        let mut running =
            run::start_worker(self.config, self.sandbox.clone(), spec, Some(&live_log))?;
        let (log, cancel) = (running.log().clone(), running.canceller());
        // One future for the whole run: once the sandbox's task has ended, this future reads
        // what the worker left, and must not be dropped and made again halfway through.
        let (done, stop) = watch(
            Phase::Working,
            running.finished(),
            Some(&log),
            &cancel,
            observer,
        )
        .await;
        let by = match stop {
            Some(Stop::By(who)) => Some(who),
            _ => None,
        };
        Ok((done?, by))
    }

    /// Prepares the job's environment (kept from an earlier job, or set up now), stopping when
    /// the observer says so; the setup's output goes to the job's environment log.
    async fn environment(
        &self,
        prepared: &Prepared,
        observer: &mut dyn Observer,
    ) -> Result<Result<Environment, Result<EnvironmentError, Stop>>, JobError> {
        let cancel = tokio_util::sync::CancellationToken::new();
        let path = run::environment_log_path(&self.config.data_dir, self.job, self.attempt);
        let log = Arc::new(self.phase_log(&path));
        let at = Preparing {
            sandbox: self.sandbox.as_ref(),
            policy: &self.config.environment,
            limits: &self.config.limits,
            image: self.config.worker.image.clone(),
            store: crate::environment::kept::Store::at(&self.config.environments),
            job: self.store.and_then(|_| u64::try_from(self.job.0).ok()),
            log: log.clone(),
            cancel: cancel.clone(),
        };
        let workspace = prepared.dir.workspace();
        let preparing = super::environment::prepare(&at, &prepared.plan, &workspace);
        let (done, stop) = watch(
            Phase::PreparingEnvironment,
            preparing,
            Some(&log),
            &cancel,
            observer,
        )
        .await;
        finish_log(log).await;
        Ok(match (done, stop) {
            (_, Some(stop)) => Err(Err(stop)),
            (Ok(environment), None) => Ok(environment),
            (Err(failed), None) => Err(Ok(failed)),
        })
    }

    /// A phase's log, redacted, written to `path` as it comes (or kept in memory when the file
    /// cannot be made).
    fn phase_log(&self, path: &std::path::Path) -> JobLog {
        let redactor = crate::sandbox::Redactor::new(&self.config.secrets);
        JobLog::with_file(redactor.clone(), path).unwrap_or_else(|err| {
            tracing::warn!(path = %path.display(), error = %err, "a phase's log cannot be created");
            JobLog::new(redactor)
        })
    }

    /// Runs verification, stopping it when the observer says so.
    async fn verify(
        &self,
        prepared: &mut Prepared,
        checked: &mut Checked,
        template: &crate::sandbox::SandboxSpec,
        observer: &mut dyn Observer,
    ) -> Result<Result<Verification, Stop>, JobError> {
        let cancel = tokio_util::sync::CancellationToken::new();
        // The runners' output, kept beside the worker's log and followed while it runs.
        let path = run::verify_log_path(&self.config.data_dir, self.job, self.attempt);
        let log = Arc::new(self.phase_log(&path));
        let place = crate::verify::suite::Place {
            sandbox: self.sandbox.as_ref(),
            template,
            log: Some(log.as_ref()),
        };
        let verifying = verify::verify(
            self.config,
            prepared,
            checked.commit,
            &place,
            self.store,
            &mut checked.report,
            cancel.clone(),
        );
        let (done, stop) = watch(Phase::Verifying, verifying, Some(&log), &cancel, observer).await;
        finish_log(log).await;
        let done = done?;
        Ok(match stop {
            Some(stop) => Err(stop),
            None => Ok(done),
        })
    }
}

/// Ends a phase's log file (its last lines written), off the runtime.
async fn finish_log(log: Arc<JobLog>) {
    let _ = super::error::blocking(move || {
        log.finish_file();
        Ok(())
    })
    .await;
}

/// Drives `work` to its end while `phase` runs: the observer is shown its progress each
/// interval (a phase shown within the status comment's throttle is shown again until it
/// sticks) and asked every [`STOP_POLL`] whether to stop; a stop cancels `cancel`, which ends
/// the work early, and is returned beside the work's output. Once asked to stop, the observer
/// is asked no more.
async fn watch<T>(
    phase: Phase,
    work: impl Future<Output = T>,
    log: Option<&Arc<JobLog>>,
    cancel: &tokio_util::sync::CancellationToken,
    observer: &mut dyn Observer,
) -> (T, Option<Stop>) {
    tokio::pin!(work);
    let mut tick = tokio::time::interval(observer.interval());
    tick.tick().await;
    let mut poll = tokio::time::interval(STOP_POLL);
    let mut stopped = None;
    loop {
        tokio::select! {
            done = &mut work => return (done, stopped),
            _ = tick.tick() => observer.progress(phase, log).await,
            _ = poll.tick(), if stopped.is_none() => {
                if let Some(stop) = observer.stop().await {
                    tracing::info!(?stop, %phase, "stopping");
                    stopped = Some(stop);
                    cancel.cancel();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::config::server::{Secrets, Settings};
    use crate::forge::{Actor, Forge, RepoName};
    use crate::jobs::run::Task;
    use crate::jobs::testing::{FakeSandbox, bare_repository};

    /// Records what the driver told it; asks to stop once `stop_after` polls have passed.
    #[derive(Default)]
    struct Recorder {
        seen: Mutex<Vec<String>>,
        stop_after: Option<usize>,
        polls: usize,
    }

    impl Recorder {
        fn saw(&self, what: impl Into<String>) {
            self.seen.lock().expect("lock").push(what.into());
        }
    }

    #[async_trait]
    impl Observer for Recorder {
        fn interval(&self) -> Duration {
            Duration::from_millis(5)
        }

        async fn enter(&mut self, phase: Phase) -> Result<(), JobError> {
            self.saw(phase.as_str());
            Ok(())
        }

        async fn targeted(&mut self, target: &Target) {
            self.saw(format!("target {}", target.branch));
        }

        async fn prepared(&mut self, _prepared: &Prepared) {
            self.saw("prepared");
        }

        async fn stop(&mut self) -> Option<Stop> {
            self.polls += 1;
            let stop = self.stop_after.is_some_and(|n| self.polls > n);
            stop.then(|| Stop::By("alice".to_owned()))
        }

        async fn worker_done(&mut self, worker: &WorkerRun) {
            self.saw(format!(
                "worker {} ({} line)",
                worker.exit,
                worker.log.total_lines()
            ));
        }

        async fn checked(&mut self, checked: &Checked) {
            self.saw(format!("checked {} file", checked.report.files));
        }

        async fn verified(&mut self, verification: &Verification) {
            self.saw(format!("verified {}", verification.view().is_some()));
        }
    }

    /// A repository to clone, a configuration whose data lives in `dir`, and the target.
    fn setup(dir: &std::path::Path) -> (PipelineConfig, Target) {
        let source = bare_repository(dir, &[("calc.py", "x = 1\n")]);
        let mut config = crate::jobs::setup::local_pipeline_config(
            &Settings::default(),
            &Secrets::default(),
            dir.join("data"),
        )
        .expect("the default settings make a pipeline");
        config.worker.command = vec!["fake".to_owned()];
        let target = Target {
            forge: Forge::GitHub,
            repo: RepoName("local/source".to_owned()),
            url: source.display().to_string(),
            local: false,
            credentials: None,
            base_ref: "main".to_owned(),
            branch: "forgeward/issue-1".to_owned(),
            task: Task {
                title: "Fix it".to_owned(),
                body: String::new(),
                instructions: String::new(),
                earlier_question: None,
            },
            number: 1,
            actor: Actor {
                login: "alice".to_owned(),
                id: 1,
            },
        };
        (config, target)
    }

    async fn drive(
        config: &PipelineConfig,
        target: Target,
        sandbox: FakeSandbox,
        observer: &mut Recorder,
    ) -> Result<Driven, JobError> {
        Drive {
            config,
            sandbox: Arc::new(sandbox),
            store: None,
            job: JobId(1),
            attempt: 1,
        }
        .run(std::future::ready(Ok(target)), observer)
        .await
    }

    #[tokio::test]
    async fn the_phases_come_in_order_and_each_result_is_told() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (config, target) = setup(dir.path());
        let sandbox = FakeSandbox {
            files: vec![("calc.py", "x = 2\n")],
            hang: false,
        };
        let mut observer = Recorder::default();
        let driven = drive(&config, target, sandbox, &mut observer)
            .await
            .expect("driven");
        let Driven::Changed(change) = driven else {
            panic!("expected a change");
        };
        assert_eq!(change.checked.report.files, 1);
        assert_eq!(
            observer.seen.into_inner().expect("lock"),
            [
                "cloning",
                "target forgeward/issue-1",
                "prepared",
                "preparing sandbox",
                "working",
                "worker exited with code 0 (1 line)",
                "checking",
                "verifying",
                "verified true",
                "checked 1 file",
            ]
        );
    }

    #[tokio::test]
    async fn a_worker_that_changes_nothing_is_unchanged_and_not_verified() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (config, target) = setup(dir.path());
        let sandbox = FakeSandbox {
            files: Vec::new(),
            hang: false,
        };
        let mut observer = Recorder::default();
        let driven = drive(&config, target, sandbox, &mut observer)
            .await
            .expect("driven");
        assert!(matches!(driven, Driven::Unchanged { .. }));
        let seen = observer.seen.into_inner().expect("lock");
        assert_eq!(seen.last().map(String::as_str), Some("checking"));
    }

    #[tokio::test]
    async fn a_stop_while_working_ends_the_worker_and_says_who_asked() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (config, target) = setup(dir.path());
        let sandbox = FakeSandbox {
            files: Vec::new(),
            hang: true,
        };
        let mut observer = Recorder {
            stop_after: Some(1),
            ..Recorder::default()
        };
        let started = std::time::Instant::now();
        let driven = drive(&config, target, sandbox, &mut observer)
            .await
            .expect("driven");
        let Driven::Stopped { phase, by } = driven else {
            panic!("expected a stop");
        };
        assert_eq!((phase, by.as_deref()), (Phase::Working, Some("alice")));
        // The first poll is at once, the second after STOP_POLL.
        assert!(started.elapsed() < STOP_POLL * 3, "{:?}", started.elapsed());
        let seen = observer.seen.into_inner().expect("lock");
        assert!(
            seen.iter().any(|s| s.starts_with("worker ")),
            "the worker's end is told: {seen:?}"
        );
        assert!(!seen.iter().any(|s| s == "checking"), "{seen:?}");
    }
}
