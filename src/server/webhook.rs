//! `POST /webhooks/github`, `POST /webhooks/gitlab` and `POST /webhooks/forgejo` (Forgejo and
//! Gitea): verify, parse, record, acknowledge.
//!
//! Verification comes first and failures store nothing. An event the bot does not act on is
//! acknowledged with a 200 and counted, never refused: GitLab disables a hook whose deliveries
//! fail. A delivery that starts a job is acknowledged only once it and its job are durable.

use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::extract::State;
use axum::http::header::{CONNECTION, RETRY_AFTER};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::{AppState, MAX_BODY};
use crate::forge::webhook::{Parsed, WebhookError};
use crate::forge::{Event, Forge, forgejo, github, gitlab};
use crate::store::{JobId, NewDelivery, Recorded, StoreError};
use crate::trigger::{labels_once, wants_job};

/// Headers kept with a stored delivery: enough to trace it back, never a signature or token.
const GITHUB_HEADERS: &[&str] = &[
    "x-github-event",
    "x-github-delivery",
    "x-github-hook-id",
    "x-github-hook-installation-target-id",
    "x-github-hook-installation-target-type",
    "user-agent",
];
const GITLAB_HEADERS: &[&str] = &[
    "x-gitlab-event",
    "x-gitlab-event-uuid",
    "x-gitlab-webhook-uuid",
    "x-gitlab-instance",
    "idempotency-key",
    "user-agent",
];
/// Forgejo sends its own `X-Forgejo-*` headers and Gitea's `X-Gitea-*` alike; Gitea only the
/// latter.
const FORGEJO_HEADERS: &[&str] = &[
    "x-forgejo-event",
    "x-forgejo-event-type",
    "x-forgejo-delivery",
    "x-gitea-event",
    "x-gitea-event-type",
    "x-gitea-delivery",
    "x-gitea-hook-installation-target-type",
    "user-agent",
];

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn kept_headers(headers: &HeaderMap, names: &[&str]) -> serde_json::Value {
    let map: serde_json::Map<String, serde_json::Value> = names
        .iter()
        .filter_map(|n| Some(((*n).to_owned(), json!(header(headers, n)?))))
        .collect();
    serde_json::Value::Object(map)
}

/// The first of `names` that is present and not blank.
fn first_of<'a>(headers: &'a HeaderMap, names: &[&str]) -> Option<&'a str> {
    names
        .iter()
        .find_map(|name| header(headers, name).filter(|v| !v.trim().is_empty()))
}

/// Signed, but sent as a form (`payload=…`), which GitHub, Forgejo and Gitea can all be set to
/// send. Said plainly, since "malformed payload" would leave the operator guessing.
fn refuse_form(headers: &HeaderMap, hint: &'static str) -> Result<(), WebhookError> {
    match header(headers, "content-type")
        .filter(|t| t.starts_with("application/x-www-form-urlencoded"))
    {
        Some(content_type) => Err(WebhookError::WrongContentType {
            content_type: content_type.to_owned(),
            hint,
        }),
        None => Ok(()),
    }
}

fn required<'a>(headers: &'a HeaderMap, name: &'static str) -> Result<&'a str, WebhookError> {
    header(headers, name)
        .filter(|v| !v.trim().is_empty())
        .ok_or(WebhookError::BadHeader {
            header: name,
            reason: "missing".to_owned(),
        })
}

/// One delivery, once its forge-specific parts are read.
struct Incoming<'a> {
    event_name: String,
    delivery_id: String,
    headers: serde_json::Value,
    body: &'a [u8],
    parsed: Parsed,
}

pub async fn github(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    receive(&state, Forge::GitHub, body, |body| {
        github::webhook::verify(
            &state.secrets.github_webhook,
            header(&headers, "x-hub-signature-256"),
            body,
        )?;
        // GitHub's default for a new webhook.
        refuse_form(
            &headers,
            "set the webhook's content type to application/json in its settings",
        )?;
        let event_name = required(&headers, "x-github-event")?.to_owned();
        let delivery_id = required(&headers, "x-github-delivery")?.to_owned();
        let parsed = github::webhook::parse(&event_name, body)?;
        Ok(Incoming {
            event_name,
            delivery_id,
            headers: kept_headers(&headers, GITHUB_HEADERS),
            body,
            parsed,
        })
    })
    .await
}

pub async fn gitlab(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    receive(&state, Forge::GitLab, body, |body| {
        gitlab::webhook::verify(
            &state.secrets.gitlab_webhook,
            header(&headers, "x-gitlab-token"),
        )?;
        let event_name = required(&headers, "x-gitlab-event")?.to_owned();
        // GitLab sends the same Idempotency-Key on every retry of a delivery; older versions
        // only the hook's UUID per delivery.
        let delivery_id = header(&headers, "idempotency-key")
            .or_else(|| header(&headers, "x-gitlab-event-uuid"))
            .or_else(|| header(&headers, "x-gitlab-webhook-uuid"))
            .filter(|v| !v.trim().is_empty())
            .ok_or(WebhookError::BadHeader {
                header: "Idempotency-Key",
                reason: "missing, and no X-Gitlab-Event-UUID either".to_owned(),
            })?
            .to_owned();
        let parsed = gitlab::webhook::parse(&event_name, body)?;
        Ok(Incoming {
            event_name,
            delivery_id,
            headers: kept_headers(&headers, GITLAB_HEADERS),
            body,
            parsed,
        })
    })
    .await
}

pub async fn forgejo(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    receive(&state, Forge::Forgejo, body, |body| {
        // Forgejo sends every header under its own name and Gitea's; Gitea only under its own.
        forgejo::webhook::verify(
            &state.secrets.forgejo_webhook,
            first_of(&headers, &["x-forgejo-signature", "x-gitea-signature"]),
            body,
        )?;
        refuse_form(
            &headers,
            "set the webhook's POST content type to application/json in its settings",
        )?;
        let event_name = first_of(&headers, &["x-forgejo-event", "x-gitea-event"])
            .ok_or(WebhookError::BadHeader {
                header: forgejo::webhook::EVENT_HEADER,
                reason: "missing, and no X-Gitea-Event either".to_owned(),
            })?
            .to_owned();
        let delivery_id = first_of(&headers, &["x-forgejo-delivery", "x-gitea-delivery"])
            .ok_or(WebhookError::BadHeader {
                header: forgejo::webhook::DELIVERY_HEADER,
                reason: "missing, and no X-Gitea-Delivery either".to_owned(),
            })?
            .to_owned();
        let parsed = forgejo::webhook::parse(&event_name, body)?;
        Ok(Incoming {
            event_name,
            delivery_id,
            headers: kept_headers(&headers, FORGEJO_HEADERS),
            body,
            parsed,
        })
    })
    .await
}

/// What every receiver does around its forge's own checks: read the body within the body
/// deadline (refusing one too large or too slow), then verify and parse it with `read`, then
/// record and answer.
async fn receive(
    state: &AppState,
    forge: Forge,
    body: Body,
    read: impl for<'b> FnOnce(&'b [u8]) -> Result<Incoming<'b>, WebhookError>,
) -> Response {
    let started = Instant::now();
    let deadline = state.limits.body_timeout;
    // A body announced larger than any forge sends is refused at once. What the client still
    // sends is read and dropped for as long as the body deadline allows, so that it reads the
    // answer instead of a reset; then the connection goes.
    if axum::body::HttpBody::size_hint(&body).lower() > MAX_BODY as u64 {
        tokio::spawn(async move {
            let _ = tokio::time::timeout(deadline, discard(body, 2 * MAX_BODY)).await;
        });
        return too_large(state, forge);
    }
    let body = match tokio::time::timeout(deadline, axum::body::to_bytes(body, MAX_BODY)).await {
        Ok(Ok(b)) => b,
        Ok(Err(err)) => return unreadable(state, forge, &err),
        Err(_) => {
            state.metrics.inc(
                "forgeward_connections_timed_out_total",
                &[("phase", "body")],
            );
            let mut response = reject(
                state,
                forge,
                StatusCode::REQUEST_TIMEOUT,
                "body_timeout",
                &format!("the body did not arrive within {} s", deadline.as_secs()),
            );
            // The rest of a body that slow is not worth reading: the connection goes.
            response
                .headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
            return response;
        }
    };
    accept(state, forge, read(&body), started).await
}

/// 413, and the connection closed once the body is behind it.
fn too_large(state: &AppState, forge: Forge) -> Response {
    let mut response = reject(
        state,
        forge,
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_large",
        &format!("the body is larger than {MAX_BODY} bytes"),
    );
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

/// Reads `body` and drops it, up to `most` bytes.
async fn discard(mut body: Body, most: usize) {
    use http_body_util::BodyExt as _;
    let mut read = 0;
    while let Some(Ok(frame)) = body.frame().await {
        read += frame.data_ref().map_or(0, |d| d.len());
        if read > most {
            return;
        }
    }
}

/// A body that could not be read whole: over [`MAX_BODY`] (413), or broken off (400).
fn unreadable(state: &AppState, forge: Forge, err: &axum::Error) -> Response {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(err);
    let mut over_limit = false;
    while let Some(e) = source {
        over_limit |= e.is::<http_body_util::LengthLimitError>();
        source = e.source();
    }
    if over_limit {
        too_large(state, forge)
    } else {
        reject(
            state,
            forge,
            StatusCode::BAD_REQUEST,
            "unreadable_body",
            &format!("the body could not be read: {err}"),
        )
    }
}

fn reject(
    state: &AppState,
    forge: Forge,
    status: StatusCode,
    label: &str,
    reason: &str,
) -> Response {
    state.metrics.inc(
        "forgeward_webhook_rejections_total",
        &[("forge", forge.as_str()), ("reason", label)],
    );
    state.metrics.inc(
        "forgeward_webhook_deliveries_total",
        &[
            ("forge", forge.as_str()),
            ("event", "unknown"),
            ("outcome", "rejected"),
        ],
    );
    tracing::info!(%forge, status = status.as_u16(), reason, "webhook refused");
    (status, axum::Json(json!({ "error": reason }))).into_response()
}

async fn accept(
    state: &AppState,
    forge: Forge,
    incoming: Result<Incoming<'_>, WebhookError>,
    started: Instant,
) -> Response {
    let incoming = match incoming {
        Ok(i) => i,
        Err(e) => {
            let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST);
            return reject(state, forge, status, e.reason_label(), &e.to_string());
        }
    };
    let count = |outcome: &str| {
        state.metrics.inc(
            "forgeward_webhook_deliveries_total",
            &[
                ("forge", forge.as_str()),
                ("event", &incoming.event_name),
                ("outcome", outcome),
            ],
        );
    };
    let event = match &incoming.parsed {
        Parsed::Event(e) if wants_job(e, &state.trigger) => e,
        Parsed::Event(e) => {
            count("ignored");
            return (StatusCode::OK, axum::Json(json!({ "ignored": e.kind() }))).into_response();
        }
        Parsed::Ignored(what) => {
            count("ignored");
            return (StatusCode::OK, axum::Json(json!({ "ignored": what }))).into_response();
        }
    };
    if labels_once(event) {
        match earlier_label_job(state, forge, event, &incoming.delivery_id).await {
            Ok(None) => {}
            Ok(Some(job)) => {
                count("ignored");
                let reply = json!({ "ignored": event.kind(), "earlier_job": job.0 });
                return (StatusCode::OK, axum::Json(reply)).into_response();
            }
            Err(e) => {
                tracing::error!(%forge, delivery = %incoming.delivery_id, error = %e, "reading a target's jobs");
                // Not acknowledged: the forge sends it again.
                return reject(
                    state,
                    forge,
                    StatusCode::SERVICE_UNAVAILABLE,
                    "store_error",
                    "the store is unavailable",
                );
            }
        }
    }
    let delivery = NewDelivery {
        forge,
        id: incoming.delivery_id.clone(),
        event: incoming.event_name.clone(),
        headers: incoming.headers,
        body: incoming.body.to_vec(),
        received_at_ms: now_ms(),
    };
    let recorded = state
        .store
        .record(delivery, Some(event), state.max_attempts)
        .await;
    state.metrics.observe(
        "forgeward_webhook_ack_seconds",
        &[],
        started.elapsed().as_secs_f64(),
    );
    match recorded {
        Ok(Recorded::New { job }) => {
            count("accepted");
            let job = job.map(|j| j.0);
            tracing::info!(%forge, delivery = %incoming.delivery_id, ?job, event = event.kind(), "delivery recorded");
            (StatusCode::ACCEPTED, axum::Json(json!({ "job": job }))).into_response()
        }
        Ok(Recorded::Duplicate) => {
            count("duplicate");
            (StatusCode::OK, axum::Json(json!({ "duplicate": true }))).into_response()
        }
        Err(StoreError::Busy) => {
            // Not acknowledged, quickly: the forge sends it again, and until then /readyz says
            // the bot is not ready (the store remembers that it shed).
            state.metrics.inc("forgeward_requests_shed_total", &[]);
            let mut response = reject(
                state,
                forge,
                StatusCode::SERVICE_UNAVAILABLE,
                "busy",
                "the store is busy: try again shortly",
            );
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from_static("1"));
            response
        }
        Err(e) => {
            tracing::error!(%forge, delivery = %incoming.delivery_id, error = %e, "recording a delivery");
            // Not acknowledged: the forge (or the missed-delivery sweep) sends it again.
            reject(
                state,
                forge,
                StatusCode::SERVICE_UNAVAILABLE,
                "store_error",
                "the store is unavailable",
            )
        }
    }
}

/// An earlier job of `event`'s target that a label started, for a label event that may start
/// only one ([`labels_once`]). The job this very delivery made (the forge sending it again) does
/// not count: recording it again answers it as the duplicate it is.
async fn earlier_label_job(
    state: &AppState,
    forge: Forge,
    event: &Event,
    delivery_id: &str,
) -> Result<Option<JobId>, StoreError> {
    let Some(target) = event.target() else {
        return Ok(None);
    };
    let jobs = state.store.jobs_for_target(&target).await?;
    Ok(jobs
        .iter()
        .find(|job| {
            matches!(job.event, Event::IssueLabeled { .. })
                && !(job.forge == forge && job.delivery_id == delivery_id)
        })
        .map(|job| job.id))
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
