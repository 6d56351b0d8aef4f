//! `forgeward serve`: the webhook receiver and its store and, for a GitHub App, the sweep that
//! has GitHub redeliver the deliveries the bot missed.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use forgeward::config::server::Settings;
use forgeward::forge::github::app::{AppClient, GithubApp};
use forgeward::forge::github::deliveries::run_sweeps;
use forgeward::metrics::Metrics;
use forgeward::server::{self, AppState};
use forgeward::store::Store;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// Logs go to stderr, at `info` unless `RUST_LOG` says otherwise.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
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

pub fn serve(config: Option<&Path>) -> anyhow::Result<ExitCode> {
    init_logging();
    let (settings, secrets) = Settings::load(config, std::env::vars())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        if settings.store.url.is_none() {
            std::fs::create_dir_all(&settings.server.data_dir).with_context(|| {
                format!(
                    "creating the data directory {}",
                    settings.server.data_dir.display()
                )
            })?;
        }
        let store = Store::open(&settings.store_url()).await?;
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
        let state = Arc::new(AppState {
            store,
            secrets,
            trigger: settings.trigger.clone(),
            max_attempts: settings.jobs.max_attempts,
            metrics: Arc::new(Metrics::default()),
        });
        // One signal stops both: the sweeps see it as soon as the server does, and also when the
        // server ends on an error (the sender is dropped).
        let (stop, stopped) = watch::channel(false);
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
        served.context("serving HTTP")?;
        tracing::info!("stopped");
        Ok(ExitCode::SUCCESS)
    })
}

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
