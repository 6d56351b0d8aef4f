//! Sending one request to the GitHub API, and what to do when GitHub says "not now".
//!
//! [`Api`] sends a request through octocrab's HTTP stack with the caller's `Authorization`, and
//! retries what is worth retrying: a rate-limited answer after the wait GitHub asks for
//! (`retry-after`, else `x-ratelimit-remaining: 0` until `x-ratelimit-reset`, else at least a
//! minute for a secondary rate limit, doubled each time), and 5xx answers and network errors with
//! exponential backoff. Any other 4xx is final. What comes back is the answer's status, headers
//! and body, or a [`ForgeErrorKind`]; the caller names the call and the repository.
//!
//! A `POST` that met a 5xx or a dropped connection is sent again like any other request: GitHub
//! has no idempotency keys, a 502 usually means nothing was written, and a lost status update or
//! review is worse than the rare duplicate. Redirects on the API's own host are followed (GitHub
//! answers 301 for a `GET` on a renamed repository, 307 for other methods), at most
//! [`MAX_REDIRECTS`] of them.
//!
//! This module knows nothing of the endpoints; it must not log or return the `Authorization`
//! header, and it never follows a URL to another host.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::header::{ACCEPT, AUTHORIZATION, USER_AGENT};
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use octocrab::Octocrab;

use super::app::{AppError, api_client, error_chain};
use crate::forge::api::ForgeErrorKind;
pub use crate::forge::http::encode;
use crate::forge::http::{backoff, header_u64, message_line};

/// What the client accepts. GitHub documents `application/vnd.github+json`; `application/json`
/// after it is the same JSON under its generic name, which tools that read GitHub's OpenAPI
/// description (where every response is `application/json`) can match.
const ACCEPT_JSON: &str = "application/vnd.github+json, application/json";

/// GitHub refuses requests without a `User-Agent`, and asks that it name the application.
const AGENT: &str = concat!("forgeward/", env!("CARGO_PKG_VERSION"));

/// The longest forge message kept in an error: enough for GitHub's one-sentence messages and a
/// few validation errors, short enough for a log line.
const MAX_MESSAGE_LEN: usize = 300;

/// Redirects followed for one request: a renamed repository takes one; more is a loop.
const MAX_REDIRECTS: u32 = 3;

/// Waits for `duration`. Production sleeps on the tokio timer; tests record the waits and
/// return at once, so a retry test takes no time and can assert what was waited.
pub type Sleeper = Arc<dyn Fn(Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// The tokio timer, for production.
pub fn tokio_sleeper() -> Sleeper {
    Arc::new(|duration| Box::pin(tokio::time::sleep(duration)))
}

/// How often and how long the client tries again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries, the first included, for a 5xx answer or a network error.
    pub attempts: u32,
    /// The wait before the first retry of a 5xx or network error; doubled for each next one.
    pub backoff: Duration,
    /// Waits for a rate limit before giving up with [`ForgeErrorKind::RateLimited`].
    pub rate_limit_waits: u32,
    /// The least wait for a secondary rate limit that did not say how long; doubled each time.
    pub secondary_wait: Duration,
    /// A rate limit that asks for a longer wait than this is not waited for here: the call
    /// fails with [`ForgeErrorKind::RateLimited`], and the job is tried again from the store.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    /// Four tries a second, two and four seconds apart: GitHub's 502s and 503s are nearly always
    /// over within a few seconds, and a longer outage is better met by retrying the whole job
    /// later than by holding a runner. Three rate-limit waits, the secondary one starting at the
    /// minute GitHub's documentation asks for. No wait longer than a quarter of an hour: the
    /// primary limit resets hourly, and a job should rather be rescheduled than sleep for it.
    fn default() -> RetryPolicy {
        RetryPolicy {
            attempts: 4,
            backoff: Duration::from_secs(1),
            rate_limit_waits: 3,
            secondary_wait: Duration::from_secs(60),
            max_wait: Duration::from_secs(15 * 60),
        }
    }
}

/// A policy and the clock it sleeps on.
#[derive(Clone)]
pub struct Retry {
    pub policy: RetryPolicy,
    pub sleep: Sleeper,
}

impl Default for Retry {
    fn default() -> Retry {
        Retry {
            policy: RetryPolicy::default(),
            sleep: tokio_sleeper(),
        }
    }
}

impl fmt::Debug for Retry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Retry")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// A successful (2xx) answer, its body read.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

/// The GitHub API at one base URL.
pub struct Api {
    crab: Octocrab,
    base: Uri,
    retry: Retry,
}

impl fmt::Debug for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Api")
            .field("base", &self.base)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

/// What one try came to.
enum Outcome {
    Done(Answer),
    /// Worth another try after this wait (if the budget allows).
    Transient {
        wait: Duration,
        kind: ForgeErrorKind,
    },
    RateLimited {
        wait: Duration,
        secondary: bool,
    },
    /// Moved: the same request again at this URL.
    Redirect(String),
    Final(ForgeErrorKind),
}

impl Api {
    /// The API at `api_url`; must be called inside a tokio runtime.
    pub fn new(api_url: &str, retry: Retry) -> Result<Api, AppError> {
        let (crab, base) = api_client(api_url)?;
        Ok(Api { crab, base, retry })
    }

    /// Sends `method path` (path and query, relative to the API's URL) with `auth` as its
    /// `Authorization` and `body` as JSON, retrying as the policy allows.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        auth: &HeaderValue,
        body: Option<&serde_json::Value>,
    ) -> Result<Answer, ForgeErrorKind> {
        let policy = self.retry.policy;
        let mut failures = 0u32;
        let mut rate_limited = 0u32;
        let mut redirects = 0u32;
        let mut path = path.to_owned();
        loop {
            let outcome = self.try_once(&method, &path, auth, body).await;
            match outcome {
                Outcome::Done(answer) => return Ok(answer),
                Outcome::Redirect(location) => {
                    redirects += 1;
                    match self.api_path(&location) {
                        Some(next) if redirects <= MAX_REDIRECTS => path = next,
                        _ => {
                            return Err(ForgeErrorKind::Invalid(format!(
                                "redirected to {location}, which is not followed"
                            )));
                        }
                    }
                }
                Outcome::Final(kind) => return Err(kind),
                Outcome::Transient { wait, kind } => {
                    failures += 1;
                    if failures >= policy.attempts {
                        return Err(kind);
                    }
                    (self.retry.sleep)(wait.max(backoff(policy.backoff, failures - 1))).await;
                }
                Outcome::RateLimited { wait, secondary } => {
                    let wait = if secondary {
                        wait.max(backoff(policy.secondary_wait, rate_limited))
                    } else {
                        wait
                    };
                    rate_limited += 1;
                    if rate_limited > policy.rate_limit_waits || wait > policy.max_wait {
                        return Err(ForgeErrorKind::RateLimited { retry_after: wait });
                    }
                    (self.retry.sleep)(wait).await;
                }
            }
        }
    }

    async fn try_once(
        &self,
        method: &Method,
        path: &str,
        auth: &HeaderValue,
        body: Option<&serde_json::Value>,
    ) -> Outcome {
        let mut auth = auth.clone();
        auth.set_sensitive(true);
        let builder = http::Request::builder()
            .method(method.clone())
            .uri(path)
            .header(AUTHORIZATION, auth)
            .header(ACCEPT, ACCEPT_JSON)
            .header(USER_AGENT, AGENT);
        let request = match self.crab.build_request(builder, body) {
            Ok(request) => request,
            Err(e) => return Outcome::Final(ForgeErrorKind::Invalid(error_chain(&e))),
        };
        let response = match self.crab.execute(request).await {
            Ok(response) => response,
            Err(e) => {
                return Outcome::Transient {
                    wait: Duration::ZERO,
                    kind: ForgeErrorKind::Network(error_chain(&e)),
                };
            }
        };
        let status = response.status();
        let headers = response.headers().clone();
        let body = match self.crab.body_to_string(response).await {
            Ok(body) => body,
            Err(e) => {
                return Outcome::Transient {
                    wait: Duration::ZERO,
                    kind: ForgeErrorKind::Network(error_chain(&e)),
                };
            }
        };
        let moved = match status.as_u16() {
            301..=303 => *method == Method::GET,
            307 | 308 => true,
            _ => false,
        };
        if moved && let Some(location) = headers.get(http::header::LOCATION) {
            return match location.to_str() {
                Ok(location) => Outcome::Redirect(location.to_owned()),
                Err(_) => Outcome::Final(ForgeErrorKind::Decode(
                    "a redirect to a location that is not text".to_owned(),
                )),
            };
        }
        classify(status, headers, body, SystemTime::now())
    }

    /// The path and query of `url` when it is on this API's host (a `Link` header's next page);
    /// None for another host, which must never see the bot's credentials.
    pub fn api_path(&self, url: &str) -> Option<String> {
        let uri: Uri = url.parse().ok()?;
        if uri
            .authority()
            .is_some_and(|a| Some(a) != self.base.authority())
        {
            return None;
        }
        uri.path_and_query().map(|pq| pq.as_str().to_owned())
    }
}

/// What GitHub's answer means for the call.
fn classify(status: StatusCode, headers: HeaderMap, body: String, now: SystemTime) -> Outcome {
    if status.is_success() {
        return Outcome::Done(Answer {
            status,
            headers,
            body,
        });
    }
    let code = status.as_u16();
    let message = error_message(&body);
    if code == 403 || code == 429 {
        if let Some(wait) = header_u64(&headers, "retry-after") {
            return Outcome::RateLimited {
                wait: Duration::from_secs(wait),
                secondary: false,
            };
        }
        if header_u64(&headers, "x-ratelimit-remaining") == Some(0)
            && let Some(reset) = header_u64(&headers, "x-ratelimit-reset")
        {
            let now = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
            // One second past the reset: GitHub's clock and ours may disagree by a little.
            let wait = reset.saturating_sub(now).saturating_add(1);
            return Outcome::RateLimited {
                wait: Duration::from_secs(wait),
                secondary: false,
            };
        }
        if code == 429 || message.to_ascii_lowercase().contains("rate limit") {
            return Outcome::RateLimited {
                wait: Duration::ZERO,
                secondary: true,
            };
        }
    }
    let kind = match code {
        401 => ForgeErrorKind::Unauthorized,
        403 => ForgeErrorKind::Forbidden(message),
        404 | 410 => ForgeErrorKind::NotFound,
        409 => ForgeErrorKind::Conflict(message),
        422 if message.to_ascii_lowercase().contains("already exist") => {
            ForgeErrorKind::Conflict(message)
        }
        500..=599 => {
            return Outcome::Transient {
                wait: Duration::ZERO,
                kind: ForgeErrorKind::Server(code),
            };
        }
        400 | 422 => ForgeErrorKind::Invalid(message),
        _ => ForgeErrorKind::Invalid(format!("HTTP {code}: {message}")),
    };
    Outcome::Final(kind)
}

/// GitHub's error message, with the messages of its validation `errors`, on one short line;
/// the start of the body when it is not GitHub's error JSON.
fn error_message(body: &str) -> String {
    #[derive(serde::Deserialize)]
    struct GithubError {
        #[serde(default)]
        message: Option<String>,
        #[serde(default)]
        errors: Vec<serde_json::Value>,
    }
    let text = match serde_json::from_str::<GithubError>(body) {
        Ok(error) => {
            let mut parts: Vec<String> = error.message.into_iter().collect();
            for e in &error.errors {
                match e {
                    serde_json::Value::String(s) => parts.push(s.clone()),
                    serde_json::Value::Object(o) => {
                        if let Some(m) = o.get("message").and_then(|m| m.as_str()) {
                            parts.push(m.to_owned());
                        } else if let (Some(field), Some(code)) = (
                            o.get("field").and_then(|f| f.as_str()),
                            o.get("code").and_then(|c| c.as_str()),
                        ) {
                            parts.push(format!("{field}: {code}"));
                        }
                    }
                    _ => {}
                }
            }
            parts.join("; ")
        }
        Err(_) => body.to_owned(),
    };
    message_line(&text, MAX_MESSAGE_LEN)
}

/// The `rel="next"` URL of a `Link` header, as GitHub paginates.
pub fn next_link(headers: &HeaderMap) -> Option<String> {
    let link = headers.get(http::header::LINK)?.to_str().ok()?;
    link.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        let is_next = params.split(';').any(|p| {
            let p = p.trim();
            p == "rel=\"next\"" || p == "rel=next"
        });
        let url = url.trim().strip_prefix('<')?.strip_suffix('>')?;
        is_next.then(|| url.to_owned())
    })
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
