//! The missed-delivery sweep: deliveries GitHub failed to hand over, asked for again.
//!
//! GitHub never redelivers a webhook on its own: a delivery that timed out or met a 5xx while
//! the bot was down or its store was unavailable is simply lost, though GitHub keeps it for
//! [`RETENTION`] and redelivers it on request. So, at start and every few minutes, the bot lists
//! the App's recent deliveries (`GET /app/hook/deliveries`, newest first, paged by cursor) and
//! asks GitHub to redeliver (`POST /app/hook/deliveries/{id}/attempts`) each one that
//!
//! - failed: no attempt with its `guid` (the `X-GitHub-Delivery` the store keys on; the same on
//!   the original and on every redelivery) got a 2xx, and
//! - is not in the store: a delivery GitHub gave up on after the bot had stored it needs nothing.
//!
//! The oldest are asked for first (they leave GitHub's retention first, and jobs keep their
//! order), at most `max` a sweep, so that a flood of failures becomes a steady trickle rather
//! than a storm against the bot's own endpoint. A GitHub error ends the sweep; [`run_sweeps`]
//! logs it and tries again at the next one, later if GitHub asks it to wait.
//!
//! GitHub's JSON stays in this file: the rest of the bot sees a [`SweepReport`].

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use http::StatusCode;
use serde::Deserialize;

use super::app::{AppClient, AppError};
use super::http::next_link;
use crate::forge::http::{Answer, Limit, error_message, rate_limit};
use crate::text::one_line;

/// How long GitHub keeps a delivery that can be redelivered: 3 days. The first sweep looks that
/// far back; older deliveries cannot be had again.
pub const RETENTION: Duration = Duration::from_secs(3 * 24 * 60 * 60);

/// Redeliveries asked for in one sweep, at most: 100 every 5 minutes (1,200 an hour) drains the
/// backlog of a long outage well within [`RETENTION`], as a trickle the bot's own endpoint takes
/// in its stride.
pub const MAX_REDELIVERIES_PER_SWEEP: usize = 100;

/// How far before the previous sweep a later sweep still looks: more than a delivery attempt
/// lasts (GitHub waits 10 s) plus any difference between GitHub's clock and the bot's.
pub const SWEEP_OVERLAP: Duration = Duration::from_secs(10 * 60);

/// Deliveries asked for per page: the most the endpoint allows.
const PER_PAGE: usize = 100;

/// Pages listed in one sweep, at most (10,000 deliveries): a bound on the requests a sweep
/// makes, reached only on the first sweep of a very busy App.
const MAX_PAGES: usize = 100;

/// The longest wait GitHub's rate limit headers are believed for: primary limits reset within
/// an hour, and a sweep that waits longer misses more than it saves.
const MAX_RATE_LIMIT_WAIT: Duration = Duration::from_secs(60 * 60);

/// What one sweep found and did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SweepReport {
    /// Delivery attempts listed within the window (originals and redeliveries).
    pub listed: usize,
    /// Pages requested.
    pub pages: usize,
    /// Deliveries (distinct guids) none of whose attempts got a 2xx.
    pub failed: usize,
    /// Of those, the ones the store already has: nothing to do.
    pub already_stored: usize,
    /// Redeliveries GitHub accepted.
    pub redelivered: usize,
    /// Redeliveries GitHub refused for that delivery alone (gone, or not redeliverable).
    pub refused: usize,
    /// Failed deliveries left for the next sweep by the limit on redeliveries.
    pub deferred: usize,
    /// The listing stopped at its page limit before the end of the window.
    pub truncated: bool,
    /// Every delivery before this instant was dealt with: the next sweep need look back only
    /// this far (less [`SWEEP_OVERLAP`]).
    pub settled_before: DateTime<Utc>,
}

impl fmt::Display for SweepReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} listed ({} page{}{}); {} failed: {} already stored, {} redelivered, \
             {} refused by GitHub, {} left for the next sweep",
            self.listed,
            if self.listed == 1 {
                "delivery"
            } else {
                "deliveries"
            },
            self.pages,
            if self.pages == 1 { "" } else { "s" },
            if self.truncated {
                ", stopped at the page limit"
            } else {
                ""
            },
            self.failed,
            self.already_stored,
            self.redelivered,
            self.refused,
            self.deferred,
        )
    }
}

/// Why a sweep stopped. `Display` is one line, without the App's JWT or key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SweepError {
    /// The JWT could not be made or the request not sent.
    #[error("{what}: {source}")]
    Request { what: String, source: AppError },
    /// GitHub answered with an error.
    #[error("{what}: GitHub answered {status}: {message}")]
    Status {
        what: String,
        status: StatusCode,
        message: String,
        /// How long GitHub asked the bot to wait (rate limits), if it said.
        retry_after: Option<Duration>,
    },
    /// GitHub's answer is not what its documentation describes.
    #[error("{what}: unexpected answer: {message}")]
    Unexpected { what: String, message: String },
    #[error("checking the store: {0}")]
    Store(String),
}

/// What the sweep needs of the bot's store, and no more: whether a GitHub delivery (by its
/// `X-GitHub-Delivery` id) was received and kept.
#[async_trait::async_trait]
pub trait Received: Send + Sync {
    async fn received(&self, guid: &str) -> Result<bool, String>;
}

impl SweepError {
    /// How long GitHub asked for no more requests, when it did.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            SweepError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// One delivery attempt, as `GET /app/hook/deliveries` lists it: only the fields the sweep uses.
#[derive(Debug, Deserialize)]
struct HookDelivery {
    id: u64,
    guid: String,
    delivered_at: DateTime<Utc>,
    /// The HTTP status the bot answered with; 0 when it never answered (a timeout, a refused
    /// connection).
    status_code: i64,
    event: String,
}

impl HookDelivery {
    fn succeeded(&self) -> bool {
        (200..300).contains(&self.status_code)
    }
}

/// Every attempt of one delivery (one guid) within the window.
struct Attempts<'a> {
    /// The newest attempt: the one asked to be redelivered.
    newest: &'a HookDelivery,
    /// When the oldest attempt was made: failures are redelivered oldest first.
    first_at: DateTime<Utc>,
    succeeded: bool,
}

/// Lists the App's deliveries of the last `window` and asks GitHub to redeliver, oldest first
/// and at most `max` of them, each that failed and is not in `store`.
pub async fn sweep(
    client: &AppClient,
    store: &dyn Received,
    window: Duration,
    max: usize,
) -> Result<SweepReport, SweepError> {
    let started = Utc::now();
    let since = TimeDelta::from_std(window)
        .ok()
        .and_then(|w| started.checked_sub_signed(w))
        .unwrap_or(DateTime::<Utc>::MIN_UTC);
    let listing = list(client, since).await?;
    let mut report = SweepReport {
        listed: listing.deliveries.len(),
        pages: listing.pages,
        failed: 0,
        already_stored: 0,
        redelivered: 0,
        refused: 0,
        deferred: 0,
        truncated: listing.truncated,
        settled_before: started,
    };

    let mut failed: Vec<Attempts<'_>> = by_guid(&listing.deliveries)
        .into_values()
        .filter(|a| !a.succeeded)
        .collect();
    failed.sort_by(|a, b| (a.first_at, &a.newest.guid).cmp(&(b.first_at, &b.newest.guid)));
    report.failed = failed.len();

    let mut asked = 0;
    for attempts in failed {
        let delivery = attempts.newest;
        if store
            .received(&delivery.guid)
            .await
            .map_err(SweepError::Store)?
        {
            report.already_stored += 1;
            continue;
        }
        if asked >= max {
            report.deferred += 1;
            report.settled_before = report.settled_before.min(delivery.delivered_at);
            continue;
        }
        asked += 1;
        if redeliver(client, delivery).await? {
            report.redelivered += 1;
        } else {
            report.refused += 1;
        }
    }
    Ok(report)
}

/// Sweeps now and then every `every` until `shutdown` resolves, logging a line for each sweep.
/// A failed sweep is logged and tried again at the next one (after the wait GitHub asked for,
/// if longer); nothing here panics or stops on GitHub's account.
///
/// The first sweep looks back over all of [`RETENTION`]; later ones only to where the previous
/// successful sweep left everything settled, less [`SWEEP_OVERLAP`].
pub async fn run_sweeps(
    client: AppClient,
    store: impl Received,
    every: Duration,
    shutdown: impl Future<Output = ()>,
) {
    tokio::pin!(shutdown);
    let mut settled_before: Option<DateTime<Utc>> = None;
    tracing::info!(
        app_id = client.app().id(),
        every = ?every,
        "missed-delivery sweeps started"
    );
    loop {
        let window = settled_before.map_or(RETENTION, |settled| {
            let since = (Utc::now() - settled).to_std().unwrap_or(Duration::ZERO);
            (since + SWEEP_OVERLAP).min(RETENTION)
        });
        let outcome = tokio::select! {
            () = &mut shutdown => break,
            outcome = sweep(&client, &store, window, MAX_REDELIVERIES_PER_SWEEP) => outcome,
        };
        let wait = match outcome {
            Ok(report) => {
                if report.truncated {
                    tracing::warn!(
                        "missed-delivery sweep: the listing stopped after {MAX_PAGES} pages; \
                         older deliveries were not examined"
                    );
                }
                tracing::info!("missed-delivery sweep: {report}");
                settled_before = Some(report.settled_before);
                every
            }
            Err(error) => {
                let wait = error.retry_after().map_or(every, |asked| asked.max(every));
                tracing::warn!("missed-delivery sweep failed, next in {wait:?}: {error}");
                wait
            }
        };
        tokio::select! {
            () = &mut shutdown => break,
            () = tokio::time::sleep(wait) => {}
        }
    }
    tracing::info!("missed-delivery sweeps stopped");
}

/// The deliveries listed back to `since`.
struct Listing {
    deliveries: Vec<HookDelivery>,
    pages: usize,
    truncated: bool,
}

const LIST_WHAT: &str = "listing the GitHub App's webhook deliveries";

/// Pages through the listing, newest first, until a delivery older than `since`, the last page
/// or [`MAX_PAGES`].
async fn list(client: &AppClient, since: DateTime<Utc>) -> Result<Listing, SweepError> {
    let mut path = format!("/app/hook/deliveries?per_page={PER_PAGE}");
    let mut listing = Listing {
        deliveries: Vec::new(),
        pages: 0,
        truncated: false,
    };
    loop {
        let response = client
            .get(&path)
            .await
            .map_err(|source| SweepError::Request {
                what: LIST_WHAT.to_owned(),
                source,
            })?;
        let response = successful(response, LIST_WHAT)?;
        listing.pages += 1;
        let page: Vec<HookDelivery> =
            parse(&response.body).map_err(|message| SweepError::Unexpected {
                what: LIST_WHAT.to_owned(),
                message,
            })?;
        // Newest first: once one delivery is older than the window, the rest of the listing is.
        let reached_since = page.iter().any(|d| d.delivered_at < since);
        listing
            .deliveries
            .extend(page.into_iter().filter(|d| d.delivered_at >= since));
        let Some(next) = next_link(&response.headers) else {
            break;
        };
        if reached_since {
            break;
        }
        if listing.pages >= MAX_PAGES {
            listing.truncated = true;
            break;
        }
        path = client
            .api_path(&next)
            .ok_or_else(|| SweepError::Unexpected {
                what: LIST_WHAT.to_owned(),
                message: format!("the next page is not on the API's host: {next}"),
            })?;
    }
    Ok(listing)
}

/// Asks GitHub to send `delivery` again. False: GitHub refused for this delivery alone (it is
/// gone, or cannot be redelivered); an error for anything that would fail every request.
async fn redeliver(client: &AppClient, delivery: &HookDelivery) -> Result<bool, SweepError> {
    let what = || {
        format!(
            "asking GitHub to redeliver delivery {} ({} {})",
            delivery.id, delivery.event, delivery.guid
        )
    };
    let path = format!("/app/hook/deliveries/{}/attempts", delivery.id);
    let response = client
        .post(&path)
        .await
        .map_err(|source| SweepError::Request {
            what: what(),
            source,
        })?;
    let status = response.status;
    if status.is_success() {
        tracing::debug!(guid = %delivery.guid, event = %delivery.event, "redelivery requested");
        return Ok(true);
    }
    let for_this_delivery_alone = status.is_client_error()
        && !matches!(
            status,
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN | StatusCode::TOO_MANY_REQUESTS
        );
    let error = status_error(response, what());
    if for_this_delivery_alone {
        tracing::warn!("{error}");
        return Ok(false);
    }
    Err(error)
}

/// The response when it is a success, else the error it is.
fn successful(response: Answer, what: &str) -> Result<Answer, SweepError> {
    if response.status.is_success() {
        Ok(response)
    } else {
        Err(status_error(response, what.to_owned()))
    }
}

fn status_error(response: Answer, what: String) -> SweepError {
    let message = error_message(&response.body);
    let retry_after = match rate_limit(
        response.status,
        &response.headers,
        &message,
        std::time::SystemTime::now(),
    ) {
        Some(Limit::For(wait)) => Some(wait.min(MAX_RATE_LIMIT_WAIT)),
        Some(Limit::Unsaid) | None => None,
    };
    SweepError::Status {
        what,
        status: response.status,
        message,
        retry_after,
    }
}

/// The attempts of each delivery, by guid.
fn by_guid(deliveries: &[HookDelivery]) -> BTreeMap<&str, Attempts<'_>> {
    let mut groups: BTreeMap<&str, Attempts<'_>> = BTreeMap::new();
    for delivery in deliveries {
        let attempts = groups.entry(&delivery.guid).or_insert(Attempts {
            newest: delivery,
            first_at: delivery.delivered_at,
            succeeded: false,
        });
        if (delivery.delivered_at, delivery.id) > (attempts.newest.delivered_at, attempts.newest.id)
        {
            attempts.newest = delivery;
        }
        attempts.first_at = attempts.first_at.min(delivery.delivered_at);
        attempts.succeeded |= delivery.succeeded();
    }
    groups
}

/// A page of the listing, or the JSON path that is not what GitHub documents.
fn parse(body: &[u8]) -> Result<Vec<HookDelivery>, String> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        let path = e.path().to_string();
        format!("at {path}: {}", one_line(&e.into_inner().to_string()))
    })
}

#[cfg(test)]
#[path = "deliveries_tests.rs"]
mod tests;
