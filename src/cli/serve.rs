//! `forgeward serve`: the webhook receiver and its store, the job runners (unless
//! `--no-worker`) and, for a GitHub App, the sweep that has GitHub redeliver the deliveries the
//! bot missed. `forgeward worker`: the job runners alone, for machines that only run jobs.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use forgeward::config::server::{Secrets, Settings};
use forgeward::forge::github::app::{AppClient, GithubApp};
use forgeward::forge::github::deliveries::run_sweeps;
use forgeward::jobs::pipeline::Pipeline;
use forgeward::jobs::{RunnerConfig, run_workers, setup};
use forgeward::links::{JobLinks, LinkKey};
use forgeward::metrics::Metrics;
use forgeward::server::{self, AppState};
use forgeward::store::Store;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// Logs go to stderr, at `info` unless `RUST_LOG` says otherwise (`debug`,
/// `forgeward=debug,hyper=warn`: a level, and levels per target). A `RUST_LOG` that does not
/// read so is said on stderr, and `info` is used.
///
/// The filter is `Targets`, not `EnvFilter`: `EnvFilter`'s field matchers turn on the regex
/// engine's full DFAs for every pattern in the process, which made the detector's first
/// compile of its rule patterns several times slower.
fn init_logging() {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;

    let filter = match std::env::var("RUST_LOG") {
        Ok(text) if !text.trim().is_empty() => text.parse::<Targets>().unwrap_or_else(|e| {
            eprintln!("RUST_LOG={text:?} is not a log filter ({e}); logging at info");
            Targets::new().with_default(LevelFilter::INFO)
        }),
        _ => Targets::new().with_default(LevelFilter::INFO),
    };
    let _ = tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .with(filter)
        .try_init();
}

/// Resolves on SIGTERM or SIGINT.
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        // Without signal handlers the process still ends on a signal, just not gracefully.
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    tracing::info!("shutting down: finishing requests in flight");
}

pub fn serve(config: Option<&Path>, with_worker: bool) -> anyhow::Result<ExitCode> {
    init_logging();
    let (settings, secrets) = Settings::load(config, std::env::vars())?;
    runtime()?.block_on(async {
        let store = open_store(&settings).await?;
        for missing in settings.missing(&secrets) {
            tracing::warn!("not configured yet: {missing}");
        }
        let github_app = github_app(&settings)?;
        let listener = TcpListener::bind(&settings.server.listen)
            .await
            .with_context(|| format!("listening on {}", settings.server.listen))?;
        let addr = listener
            .local_addr()
            .context("reading the listening address")?;
        tracing::info!("listening on http://{addr}");
        let metrics = Arc::new(Metrics::default());
        let job_links = job_links(&settings, true)?;
        // One signal stops everything: the runners and the sweeps see it as soon as the server
        // does, and also when the server ends on an error (the sender is dropped).
        let (stop, stopped) = watch::channel(false);
        let runners = if with_worker && !settings.worker.command.is_empty() {
            let pipeline = pipeline(&settings, &secrets, Some(job_links.clone())).await?;
            Some(tokio::spawn(run_workers(
                store.clone(),
                pipeline,
                runner_config(&settings, metrics.clone()),
                wait_for_stop(stopped.clone()),
            )))
        } else {
            None
        };
        let server = &settings.server;
        let limits = server::ConnLimits {
            head_timeout: server.head_timeout.0,
            body_timeout: server.body_timeout.0,
            idle_timeout: server.idle_timeout.0,
            max_connections: server::connection_cap_for(server.max_connections),
        };
        let state = Arc::new(AppState {
            store,
            secrets,
            trigger: settings.trigger.clone(),
            max_attempts: settings.jobs.max_attempts,
            metrics,
            limits,
            pages: server::pages::Pages::new(
                job_links,
                settings.server.data_dir.clone(),
                server::pages::WebUrls {
                    github: settings.github.web_url.clone(),
                    gitlab: settings.gitlab.url.clone(),
                    forgejo: settings.forgejo.url.clone(),
                },
            ),
        });
        let sweeps = github_app.map(|client| {
            tokio::spawn(run_sweeps(
                client,
                state.store.clone(),
                settings.github.redelivery_interval.0,
                wait_for_stop(stopped.clone()),
            ))
        });
        let served = server::serve(listener, state, async move {
            shutdown_signal().await;
            let _ = stop.send(true);
        })
        .await;
        if let Some(sweeps) = sweeps {
            // The sweep task only logs; a panic in it would already have been reported.
            let _ = sweeps.await;
        }
        if let Some(runners) = runners {
            runners.await.context("the job runners")??;
        }
        served.context("serving HTTP")?;
        tracing::info!("stopped");
        Ok(ExitCode::SUCCESS)
    })
}

/// `forgeward worker`: claims and runs jobs until SIGTERM/SIGINT, then lets the running ones
/// finish and gives back any it claimed but did not start.
pub fn worker(config: Option<&Path>) -> anyhow::Result<ExitCode> {
    init_logging();
    let (settings, secrets) = Settings::load(config, std::env::vars())?;
    runtime()?.block_on(async {
        let store = open_store(&settings).await?;
        // A runner links its status comments to the pages with the key the `serve` processes
        // sign with: `server.job_link_key_file`, or the one in a data directory it shares with
        // them. It never makes a key of its own, which no page would accept.
        let links = match job_links(&settings, false) {
            Ok(links) => Some(links),
            Err(err) if settings.server.public_url.is_some() => {
                tracing::warn!("status comments carry no link to the job pages: {err:#}");
                None
            }
            Err(_) => None,
        };
        let pipeline = pipeline(&settings, &secrets, links).await?;
        let config = runner_config(&settings, Arc::new(Metrics::default()));
        run_workers(store, pipeline, config, shutdown_signal()).await?;
        tracing::info!("stopped");
        Ok(ExitCode::SUCCESS)
    })
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// The store the settings name; the data directory is made first for the default SQLite file.
async fn open_store(settings: &Settings) -> anyhow::Result<Store> {
    if settings.store.url.is_none() {
        create_data_dir(settings)?;
    }
    Ok(Store::open_with_queue(&settings.store_url(), settings.store.queue).await?)
}

fn create_data_dir(settings: &Settings) -> anyhow::Result<()> {
    let dir = &settings.server.data_dir;
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the data directory {}", dir.display()))
}

/// The pipeline jobs run through: the forges the bot has credentials for, and a sandbox that
/// works on this machine (checked now, so a broken set-up fails at start, not at the first job).
async fn pipeline(
    settings: &Settings,
    secrets: &Secrets,
    links: Option<Arc<JobLinks>>,
) -> anyhow::Result<Arc<Pipeline>> {
    let forges = setup::forges(settings, secrets)?;
    create_data_dir(settings)?;
    forgeward::jobs::run::clear_leftover_job_dirs(&settings.server.data_dir)
        .context("removing the job directories of an earlier run")?;
    let sandbox =
        forgeward::jobs::setup::sandbox(&settings.sandbox, &sandbox_owner(settings)).await?;
    let mut config = setup::pipeline_config(settings, secrets)?;
    config.job_links = links.filter(|l| l.public_url.is_some());
    Ok(Arc::new(Pipeline::new(forges, sandbox, config)))
}

/// How the job pages' links are signed and where they point: the key (`server.job_link_key_file`,
/// which must exist, else the one in the data directory, made there when `create`), the TTL,
/// and `server.public_url`, checked.
fn job_links(settings: &Settings, create: bool) -> anyhow::Result<Arc<JobLinks>> {
    let server = &settings.server;
    let public_url = server
        .public_url
        .as_deref()
        .filter(|url| !url.trim().is_empty())
        .map(forgeward::links::check_public_url)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let key = match &server.job_link_key_file {
        Some(path) => LinkKey::load(path)?,
        None if !create => LinkKey::load(&forgeward::links::key_path(None, &server.data_dir))?,
        None => {
            let path = forgeward::links::key_path(None, &server.data_dir);
            let (key, created) = LinkKey::load_or_create(&path)?;
            if created {
                tracing::info!(path = %path.display(), "created the job link key");
            }
            key
        }
    };
    if public_url.is_none() && create {
        tracing::info!(
            "server.public_url is not set: status comments carry no link to the job pages \
             (`forgeward link job N` prints one)"
        );
    }
    Ok(Arc::new(JobLinks {
        key,
        ttl: server.job_link_ttl.0,
        public_url,
    }))
}

/// Names this bot's containers on a Docker daemon: a bot restarted with the same data
/// directory removes what its crashed run left; another bot on the same daemon is left alone.
fn sandbox_owner(settings: &Settings) -> String {
    use sha2::Digest as _;
    let dir = std::fs::canonicalize(&settings.server.data_dir)
        .unwrap_or_else(|_| settings.server.data_dir.clone());
    let digest = sha2::Sha256::digest(dir.as_os_str().as_encoded_bytes());
    format!("forgeward-{}", &hex::encode(digest)[..12])
}

/// Names this process's runner in leases: unique across machines and restarts.
fn runner_config(settings: &Settings, metrics: Arc<Metrics>) -> RunnerConfig {
    let host = std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "host".to_owned());
    RunnerConfig {
        owner: format!(
            "{host}:{}:{}",
            std::process::id(),
            forgeward::store::now_ms()
        ),
        concurrency: settings.jobs.concurrency,
        checks: settings.review.concurrency,
        lease: settings.jobs.lease.0,
        poll: RUNNER_POLL,
        backoff_base: forgeward::store::DEFAULT_BACKOFF_BASE,
        metrics: Some(metrics),
    }
}

/// How often an idle runner looks for work queued by another process (jobs queued by this
/// process wake it at once).
const RUNNER_POLL: std::time::Duration = std::time::Duration::from_secs(1);

/// The GitHub App client the missed-delivery sweep uses, when an App is configured and the sweep
/// is not turned off. A key that cannot be read is an error: the operator asked for the App.
fn github_app(settings: &Settings) -> anyhow::Result<Option<AppClient>> {
    let github = &settings.github;
    let Some(key_file) = github
        .private_key_file
        .as_deref()
        .filter(|_| github.app_id != 0)
    else {
        return Ok(None); // Settings::missing has said what is not configured.
    };
    let app = GithubApp::load(github.app_id, key_file)?;
    if github.redelivery_interval.0.is_zero() {
        tracing::info!("missed-delivery sweeps are off (github.redelivery_interval = 0)");
        return Ok(None);
    }
    Ok(Some(AppClient::new(&github.api_url, app)?))
}

/// Resolves once `stop` says so, or once its sender is gone.
async fn wait_for_stop(mut stop: watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopped| *stopped).await;
}
