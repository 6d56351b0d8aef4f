//! GitHub's wire: one request through octocrab's HTTP stack, with GitHub's media type and the
//! `User-Agent` it asks for. Retries, rate limits, redirects and error text are the shared
//! layer's ([`crate::forge::http`]), and so is reading its `Link` pages ([`next_link`]); this
//! module knows how GitHub wants to be asked.

use std::time::Duration;

use http::Uri;
use http::header::{ACCEPT, USER_AGENT};
use octocrab::Octocrab;

pub use crate::forge::http::{Answer, Api, Auth, Retry, RetryPolicy, encode, next_link, repo_path};
use crate::forge::http::{Sending, Try, Wire, error_chain};

/// What the client accepts. GitHub documents `application/vnd.github+json`; `application/json`
/// after it is the same JSON under its generic name, which tools that read GitHub's OpenAPI
/// description (where every response is `application/json`) can match.
pub const ACCEPT_JSON: &str = "application/vnd.github+json, application/json";

/// GitHub refuses requests without a `User-Agent`, and asks that it name the application.
const AGENT: &str = concat!("forgeward/", env!("CARGO_PKG_VERSION"));

/// Connecting to the API takes longer than this only when something is wrong.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a request may wait for the API's next bytes: GitHub answers these requests in well
/// under a second; a stalled one is given up and tried again on the next run.
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The GitHub API client could not be set up for a URL.
#[derive(Debug, thiserror::Error)]
#[error("cannot set up the GitHub API client for {url}: {reason}")]
pub struct ClientError {
    pub url: String,
    pub reason: String,
}

/// Octocrab as a bare transport: no authentication of its own (each request carries its own
/// `Authorization`), no retries, no redirects followed.
pub struct OctocrabWire {
    crab: Octocrab,
}

impl OctocrabWire {
    /// The wire to the API at `api_url`, and the URL parsed; must be called inside a tokio
    /// runtime (the connection pool runs on it).
    pub fn new(api_url: &str) -> Result<(OctocrabWire, Uri), ClientError> {
        let (crab, base) = api_client(api_url)?;
        Ok((OctocrabWire { crab }, base))
    }
}

impl Wire for OctocrabWire {
    fn send<'a>(&'a self, request: Try<'a>) -> Sending<'a> {
        Box::pin(async move {
            let mut builder = http::Request::builder()
                .method(request.method.clone())
                .uri(request.path)
                .header(ACCEPT, ACCEPT_JSON)
                .header(USER_AGENT, AGENT);
            if let Some(auth) = request.auth {
                builder = builder.header(auth.name(), auth.value().clone());
            }
            let request = self
                .crab
                .build_request(builder, request.body)
                .map_err(|e| error_chain(&e))?;
            let response = self
                .crab
                .execute(request)
                .await
                .map_err(|e| error_chain(&e))?;
            let status = response.status();
            let headers = response.headers().clone();
            let body = self
                .crab
                .body_to_string(response)
                .await
                .map_err(|e| error_chain(&e))?;
            Ok(Answer {
                status,
                headers,
                body: body.into_bytes(),
            })
        })
    }
}

/// The GitHub API at `api_url`, retrying as `retry` says; must be called inside a tokio runtime.
pub fn api(api_url: &str, retry: Retry) -> Result<Api, ClientError> {
    let (wire, base) = OctocrabWire::new(api_url)?;
    Ok(Api::new(base, wire, retry))
}

/// The GraphQL endpoint of the REST API at `api_url`.
pub fn graphql_url(api_url: &str) -> String {
    let api = api_url.trim_end_matches('/');
    match api.strip_suffix("/api/v3") {
        Some(host) => format!("{host}/api"),
        None => api.to_owned(),
    }
}

/// The GraphQL API beside the REST API at `api_url` (its requests go to `/graphql` on it).
pub fn graphql_api(api_url: &str, retry: Retry) -> Result<Api, ClientError> {
    api(&graphql_url(api_url), retry)
}

/// Octocrab as a bare transport for the API at `api_url`, with no authentication of its own (each
/// request carries its own `Authorization`), and the parsed base URL. Must be called inside a
/// tokio runtime: the client's connection pool runs on it.
fn api_client(api_url: &str) -> Result<(Octocrab, Uri), ClientError> {
    let failed = |reason: String| ClientError {
        url: api_url.to_owned(),
        reason,
    };
    let base: Uri = api_url
        .parse()
        .map_err(|e: http::uri::InvalidUri| failed(e.to_string()))?;
    if base.scheme().is_none() || base.authority().is_none() {
        return Err(failed("expected an absolute http(s) URL".to_owned()));
    }
    let crab = Octocrab::builder()
        .base_uri(base.clone())
        .map_err(|e| failed(error_chain(&e)))?
        .set_connect_timeout(Some(CONNECT_TIMEOUT))
        .set_read_timeout(Some(READ_TIMEOUT))
        .build()
        .map_err(|e| failed(error_chain(&e)))?;
    Ok((crab, base))
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
