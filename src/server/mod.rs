//! The HTTP side of the bot: webhook receivers, health, readiness and metrics.
//!
//! A request handler only verifies, parses and records: the delivery and its job are durable
//! before the 2xx, and the work itself runs later in `jobs`, never inline in a request.

mod conn;
mod webhook;

pub use conn::{ConnLimits, connection_cap, descriptors_for, raise_descriptor_limit};

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tokio::net::TcpListener;

use crate::config::server::{Secrets, TriggerSection};
use crate::metrics::Metrics;
use crate::store::{JobState, Store};

/// GitHub caps a delivery's payload at 25 MB; anything larger is not from a forge.
pub const MAX_BODY: usize = 25 * 1024 * 1024;

/// What every request handler shares.
pub struct AppState {
    pub store: Store,
    pub secrets: Secrets,
    pub trigger: TriggerSection,
    /// Attempts a job recorded now gets.
    pub max_attempts: u32,
    pub metrics: Arc<Metrics>,
    pub limits: ConnLimits,
    /// When a delivery was last shed (ms since the process started, 0: never): `/readyz` says
    /// not ready for a moment after.
    pub shed_at: std::sync::atomic::AtomicU64,
    pub started: std::time::Instant,
}

impl AppState {
    /// Notes that a delivery was answered 503 because the store could not keep up.
    pub(crate) fn shed(&self) {
        let now = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.shed_at
            .store(now.max(1), std::sync::atomic::Ordering::Relaxed);
        self.metrics.inc("forgeward_requests_shed_total", &[]);
    }

    /// Whether a delivery was shed within [`SHED_NOT_READY`].
    fn shedding(&self) -> bool {
        let at = self.shed_at.load(std::sync::atomic::Ordering::Relaxed);
        let now = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        at != 0 && now.saturating_sub(at) < SHED_NOT_READY.as_millis() as u64
    }
}

/// How long `/readyz` says not ready after a delivery was shed.
const SHED_NOT_READY: std::time::Duration = std::time::Duration::from_secs(2);

pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/webhooks/github", post(webhook::github))
        .route("/webhooks/gitlab", post(webhook::gitlab))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(state)
}

/// Serves until `shutdown` resolves, then stops accepting and finishes the requests in flight;
/// every connection under the cap and deadlines of `state.limits` ([`conn`]).
pub async fn serve(
    listener: TcpListener,
    state: Arc<AppState>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (limits, metrics) = (state.limits, state.metrics.clone());
    conn::serve(listener, router(state), limits, metrics, shutdown).await
}

async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    if state.shedding() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "shedding load: the store's writer cannot keep up\n",
        )
            .into_response();
    }
    match state.store.ready().await {
        Ok(()) => (StatusCode::OK, "ready\n").into_response(),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("store not ready: {e}\n"),
        )
            .into_response(),
    }
}

async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    let mut gauges = Vec::new();
    match state.store.job_counts().await {
        Ok(counts) => {
            let mut depth = 0;
            for (job_state, n) in counts {
                if job_state == JobState::Queued {
                    depth = n;
                }
                gauges.push((
                    "forgeward_jobs",
                    vec![("state", job_state.as_str().to_owned())],
                    n as f64,
                ));
            }
            gauges.push(("forgeward_queue_depth", vec![], depth as f64));
        }
        Err(e) => tracing::warn!(error = %e, "reading job counts for /metrics"),
    }
    (
        [("content-type", "text/plain; version=0.0.4")],
        state.metrics.render(&gauges),
    )
        .into_response()
}
