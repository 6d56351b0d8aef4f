//! `forgeward serve`: the webhook receiver and its store.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use forgeward::config::server::Settings;
use forgeward::metrics::Metrics;
use forgeward::server::{self, AppState};
use forgeward::store::Store;
use tokio::net::TcpListener;

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
        server::serve(listener, state, shutdown_signal())
            .await
            .context("serving HTTP")?;
        tracing::info!("stopped");
        Ok(ExitCode::SUCCESS)
    })
}
