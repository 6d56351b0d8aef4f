//! The HTTP side of the bot: webhook receivers, health, readiness, metrics, and the job pages
//! ([`pages`]).
//!
//! A request handler only verifies, parses and records: the delivery and its job are durable
//! before the 2xx, and the work itself runs later in `jobs`, never inline in a request.

mod conn;
pub mod pages;
mod webhook;

pub use conn::{ConnLimits, connection_cap_for, raise_descriptor_limit};

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
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
    pub pages: pages::Pages,
}

pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/webhooks/github", post(webhook::github))
        .route("/webhooks/gitlab", post(webhook::gitlab))
        .route("/webhooks/forgejo", post(webhook::forgejo))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .merge(pages::routes())
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
    let pages = state.clone();
    let shutdown = async move {
        shutdown.await;
        // The log streams end now, rather than holding the drain for their whole time.
        pages.pages.shut_down();
    };
    conn::serve(listener, router(state), limits, metrics, shutdown).await
}

async fn readyz(State(state): State<Arc<AppState>>) -> Response {
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
