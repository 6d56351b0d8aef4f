//! The job pages, for people: `GET /jobs` (recent jobs, newest first, filtered by repository
//! and state, paged), `GET /jobs/{id}` (one job: what it works on and where on its forge, its
//! phases with their times, its review flags linked to their lines, its log, its verdict) and
//! `GET /jobs/{id}/log` (the log as it grows, with the phases and the verdict, as Server-Sent
//! Events).
//!
//! Not public: every request carries a signed token in `t` ([`crate::links`]). A job's page and
//! stream take that job's token, the list takes the list's (`forgeward link jobs`), and the
//! list hands out job tokens that expire with it. A missing, forged or foreign token is `403`;
//! an authentic one past its time says it expired.
//!
//! Server-rendered HTML with one small inline script, no other origin, and a strict
//! Content-Security-Policy; everything from a forge, a worker or the store is escaped
//! ([`html`]). Responses are never cached and never send a referrer, so the token in the
//! address stays in the address bar; the request log names the path only, never the query.
//! Pages only read: they never change a job.

mod html;
mod job;
mod list;
mod stream;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::AppState;
use crate::forge::event::Forge;
use crate::links::{JobLinks, LinkError, Scope};

/// Log streams open at once; more are told to come back (`503`, `Retry-After`). Each polls its
/// job's file and rows about once a second: the bot's work, and the forges' deliveries, come
/// first.
pub const MAX_STREAMS: usize = 64;

/// Where people read each forge's repositories: the base of the pages' links.
#[derive(Clone, Debug, Default)]
pub struct WebUrls {
    pub github: String,
    pub gitlab: String,
    pub forgejo: String,
}

impl WebUrls {
    fn of(&self, forge: Forge) -> &str {
        let url = match forge {
            Forge::GitHub => &self.github,
            Forge::GitLab => &self.gitlab,
            Forge::Forgejo => &self.forgejo,
        };
        url.trim_end_matches('/')
    }
}

/// What the pages need besides the store.
pub struct Pages {
    pub links: Arc<JobLinks>,
    /// Where the jobs' logs are (`logs/<job>-<attempt>.log`).
    pub data_dir: PathBuf,
    pub web_urls: WebUrls,
    streams: Arc<Semaphore>,
    /// Ends the log streams when the server shuts down.
    shutdown: CancellationToken,
}

impl Pages {
    pub fn new(links: Arc<JobLinks>, data_dir: PathBuf, web_urls: WebUrls) -> Pages {
        Pages {
            links,
            data_dir,
            web_urls,
            streams: Arc::new(Semaphore::new(MAX_STREAMS)),
            shutdown: CancellationToken::new(),
        }
    }

    /// Ends every log stream (the server is shutting down).
    pub fn shut_down(&self) {
        self.shutdown.cancel();
    }
}

pub(super) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/jobs", get(list::page))
        .route("/jobs/{id}", get(job::page))
        .route("/jobs/{id}/log", get(stream::events))
        // Browsers ask for it on every page: nothing, rather than a 404 in their console.
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
        .layer(middleware::from_fn(guard))
}

/// Every page response gets the headers that keep it and its token to itself, and a line in
/// the log: method, path (never the query, where the token is), status, time taken.
async fn guard(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    let set = [
        (
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_str(&html::CSP).ok(),
        ),
        (
            header::REFERRER_POLICY,
            Some(HeaderValue::from_static("no-referrer")),
        ),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            Some(HeaderValue::from_static("nosniff")),
        ),
        (
            header::X_FRAME_OPTIONS,
            Some(HeaderValue::from_static("DENY")),
        ),
        (
            header::CACHE_CONTROL,
            Some(HeaderValue::from_static("no-store")),
        ),
    ];
    for (name, value) in set {
        if let Some(value) = value {
            headers.insert(name, value);
        }
    }
    tracing::info!(
        %method,
        path = %path.chars().take(200).collect::<String>(),
        status = response.status().as_u16(),
        ms = started.elapsed().as_millis() as u64,
        "page request"
    );
    response
}

/// The token in `query` checked for `scope`: its expiry, or why it does not open the page
/// ([`forbidden`] says it).
fn authorize(
    pages: &Pages,
    scope: Scope,
    query: &HashMap<String, String>,
) -> Result<i64, LinkError> {
    let verified = match query.get("t") {
        None => Err(LinkError::Missing),
        Some(token) => pages
            .links
            .key
            .verify(scope, token, crate::links::now_secs()),
    };
    verified.inspect_err(|why| tracing::info!(%scope, reason = %why, "page refused"))
}

/// The `403` page for a link that does not open the page.
fn forbidden(why: &LinkError) -> Response {
    refusal(StatusCode::FORBIDDEN, "Not allowed", &why.to_string())
}

/// A page that says why nothing is shown.
fn refusal(status: StatusCode, title: &str, why: &str) -> Response {
    let body = format!(
        "<main>\n<h1>{}</h1>\n<p>{}</p>\n</main>\n",
        html::escape(title),
        html::escape(why)
    );
    html_response(status, html::page(title, &body, false))
}

fn html_response(status: StatusCode, html: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        html,
    )
        .into_response()
}

/// A store error, as a page: said in one line, logged.
fn unavailable(err: &crate::store::StoreError) -> Response {
    tracing::warn!(error = %err, "a page could not read the store");
    refusal(
        StatusCode::SERVICE_UNAVAILABLE,
        "Not available",
        "The bot cannot read its store right now; try again in a moment.",
    )
}

/// A job id from the path: digits only.
fn job_id(raw: &str) -> Option<crate::store::JobId> {
    if raw.is_empty() || raw.len() > 18 || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    raw.parse().ok().map(crate::store::JobId)
}

/// `value` percent-encoded for a query string: everything but RFC 3986's unreserved
/// characters.
fn query_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_ids_are_digits() {
        assert_eq!(job_id("42"), Some(crate::store::JobId(42)));
        for bad in ["", "-1", "4 2", "42.log", "9999999999999999999", "0x1"] {
            assert_eq!(job_id(bad), None, "{bad}");
        }
    }

    #[test]
    fn query_values_are_encoded() {
        assert_eq!(
            query_value("github:acme/widgets"),
            "github%3Aacme%2Fwidgets"
        );
        assert_eq!(query_value("a&b=c d"), "a%26b%3Dc%20d");
        assert_eq!(query_value("ok-._~"), "ok-._~");
    }
}
