//! The HTTP layer the forges' clients share: one request sent, retried and judged the same way
//! whichever forge it goes to.
//!
//! A client hands [`Api::send`] a method, a path under the API's base URL, its credentials and a
//! JSON body; a [`Wire`] (octocrab's hyper stack for GitHub, reqwest for GitLab and Forgejo)
//! carries one try.
//! What comes back is judged here:
//! - a 2xx is the answer;
//! - a rate limit (a 429, or a 403 that says so: `retry-after`, an exhausted
//!   `x-ratelimit-remaining`/`ratelimit-remaining`, or a message naming a rate limit) is waited
//!   out for as long as the forge asks (`retry-after`, else until the reset header), or, when it
//!   does not say, for the policy's least wait, doubled each time; a wait longer than the
//!   policy's longest is returned as [`ForgeErrorKind::RateLimited`], so the job is tried again
//!   from the store instead of holding a runner;
//! - a 5xx or a network error is tried again with exponential backoff;
//! - a redirect is followed on the API's own host only (GitHub answers 301 for a `GET` on a
//!   renamed repository, 307 for other methods), at most [`MAX_REDIRECTS`] of them: credentials
//!   never go to another host;
//! - anything else is final, as the [`ForgeErrorKind`] it stands for, with the forge's own
//!   message on one short line.
//!
//! A write that met a 5xx or a dropped connection is sent again like any other request: the
//! forges have no idempotency keys, a 502 usually means nothing was written, and the bot's
//! writes are made safe to repeat by their callers (the status comment is found again by its
//! marker, a pull request by its branch).
//!
//! This layer knows nothing of the endpoints. It must not log or return the credentials: they
//! travel in an [`Auth`], marked sensitive, and errors carry the forge's message at most.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::header::{HeaderName, LOCATION, RETRY_AFTER};
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use serde::de::DeserializeOwned;

use crate::forge::RepoName;
use crate::forge::api::ForgeErrorKind;

/// Redirects followed for one request: a renamed repository takes one; more is a loop.
pub const MAX_REDIRECTS: u32 = 3;

/// The longest forge message kept in an error: enough for a one-sentence message and a few
/// validation errors, short enough for a log line.
pub const MAX_MESSAGE_LEN: usize = 300;

/// `text` percent-encoded for one path segment or a query value: everything but RFC 3986's
/// unreserved characters, so `group/sub/project` becomes `group%2Fsub%2Fproject` (as GitLab
/// wants ids and file paths) and a branch name cannot add a path segment.
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// `owner/name`, each part percent-encoded: a repository in a GitHub or Forgejo API path.
pub fn repo_path(repo: &RepoName) -> String {
    repo.0.split('/').map(encode).collect::<Vec<_>>().join("/")
}

/// `path` with `query` appended, each key and value encoded.
pub fn with_query(path: &str, query: &[(&str, String)]) -> String {
    let mut out = path.to_owned();
    for (i, (key, value)) in query.iter().enumerate() {
        out.push(if i == 0 && !path.contains('?') {
            '?'
        } else {
            '&'
        });
        out.push_str(&encode(key));
        out.push('=');
        out.push_str(&encode(value));
    }
    out
}

/// An error and its sources, on one line: a client's "error sending request" says little
/// without the "Connection refused" under it.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    crate::text::one_line(&text)
}

/// A forge's error text on one line (its lines joined), cut to `max` characters; "no message"
/// when there is none.
pub fn message_line(text: &str, max: usize) -> String {
    let text = crate::text::one_line(text);
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None if text.is_empty() => "no message".to_owned(),
        None => text,
    }
}

/// A forge's error body as one short line. The forges answer JSON: GitHub a `message` with
/// validation `errors` (strings, or objects with a `message` or a `field` and `code`), GitLab a
/// `message` that is text or an object of fields and their complaints, or an OAuth `error` with
/// its `error_description`, Forgejo a `message` (a 404's with `errors` as strings). Anything
/// else is read as text.
pub fn error_message(body: &[u8]) -> String {
    use serde_json::Value;
    let text = match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(error)) => {
            let mut parts: Vec<String> = Vec::new();
            for key in ["message", "error", "error_description"] {
                match error.get(key) {
                    Some(Value::String(s)) => parts.push(s.clone()),
                    Some(Value::Null) | None => {}
                    Some(other) => parts.push(other.to_string()),
                }
            }
            for e in error
                .get("errors")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                match e {
                    Value::String(s) => parts.push(s.clone()),
                    Value::Object(o) => {
                        if let Some(m) = o.get("message").and_then(Value::as_str) {
                            parts.push(m.to_owned());
                        } else if let (Some(field), Some(code)) = (
                            o.get("field").and_then(Value::as_str),
                            o.get("code").and_then(Value::as_str),
                        ) {
                            parts.push(format!("{field}: {code}"));
                        }
                    }
                    _ => {}
                }
            }
            parts.join("; ")
        }
        _ => String::from_utf8_lossy(body).into_owned(),
    };
    message_line(&text, MAX_MESSAGE_LEN)
}

/// A 2xx body as `T`, naming the JSON path that did not fit. Only a missing field is named
/// further: serde's other messages quote the value they met, and a forge's answer is not for
/// the log.
pub fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, ForgeErrorKind> {
    let mut de = serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(&mut de).map_err(decode_error)
}

/// [`decode`] for JSON already parsed.
pub fn decode_value<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, ForgeErrorKind> {
    serde_path_to_error::deserialize(value).map_err(decode_error)
}

fn decode_error(e: serde_path_to_error::Error<serde_json::Error>) -> ForgeErrorKind {
    let path = e.path().to_string();
    let inner = e.inner();
    let what = match inner.classify() {
        serde_json::error::Category::Data => {
            let message = inner.to_string();
            if message.starts_with("missing field") {
                message
            } else {
                "a value of the wrong type".to_owned()
            }
        }
        serde_json::error::Category::Eof => "the answer ends early".to_owned(),
        _ => "not JSON".to_owned(),
    };
    ForgeErrorKind::Decode(format!("at {path}: {what}"))
}

/// The `rel="next"` URL of a `Link` header (RFC 8288), as GitHub and Forgejo paginate:
/// `<https://api.github.com/app/hook/deliveries?per_page=100&cursor=v1_123>; rel="next"`.
pub fn next_link(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(http::header::LINK)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .find_map(|link| {
            let (target, params) = link.trim().split_once(';')?;
            let url = target.trim().strip_prefix('<')?.strip_suffix('>')?;
            let next = params.split(';').any(|param| {
                param.trim().strip_prefix("rel=").is_some_and(|rel| {
                    rel.trim_matches('"')
                        .split_whitespace()
                        .any(|r| r == "next")
                })
            });
            next.then(|| url.to_owned())
        })
}

/// An integer header, when it is there and readable.
fn header_u64(headers: &HeaderMap, name: &str) -> Option<u64> {
    headers.get(name)?.to_str().ok()?.trim().parse().ok()
}

/// `Retry-After` in seconds, when the answer has a readable one.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    header_u64(headers, RETRY_AFTER.as_str()).map(Duration::from_secs)
}

/// `base` doubled `times` times, without overflowing.
fn backoff(base: Duration, times: u32) -> Duration {
    base.saturating_mul(2u32.saturating_pow(times.min(16)))
}

/// What a rate-limited answer asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Wait this long: `retry-after`, or until the limit resets.
    For(Duration),
    /// Limited, but the forge did not say for how long (GitHub's secondary limits).
    Unsaid,
}

/// Whether an answer is a rate limit, and what it asks for; `None` when it is not one (a 403
/// for a missing permission is not).
///
/// GitHub names its headers `x-ratelimit-remaining`/`x-ratelimit-reset`, GitLab
/// `ratelimit-remaining`/`ratelimit-reset`; both reset headers are Unix times. A reset is
/// waited for one second past: the forge's clock and ours may disagree by a little.
pub fn rate_limit(
    status: StatusCode,
    headers: &HeaderMap,
    message: &str,
    now: SystemTime,
) -> Option<Limit> {
    let code = status.as_u16();
    if code != 403 && code != 429 {
        return None;
    }
    if let Some(wait) = retry_after(headers) {
        return Some(Limit::For(wait));
    }
    let either = |a: &str, b: &str| header_u64(headers, a).or_else(|| header_u64(headers, b));
    let exhausted = either("x-ratelimit-remaining", "ratelimit-remaining") == Some(0);
    if (exhausted || code == 429)
        && let Some(reset) = either("x-ratelimit-reset", "ratelimit-reset")
    {
        let now = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        return Some(Limit::For(Duration::from_secs(
            reset.saturating_sub(now).saturating_add(1),
        )));
    }
    (exhausted || code == 429 || message.to_ascii_lowercase().contains("rate limit"))
        .then_some(Limit::Unsaid)
}

/// The error a final refusal stands for: a non-2xx answer that is neither a rate limit nor a
/// 5xx (those are retried, and end as `RateLimited` or `Server`).
pub fn error_kind(status: StatusCode, message: String) -> ForgeErrorKind {
    let code = status.as_u16();
    match code {
        401 => ForgeErrorKind::Unauthorized,
        403 => ForgeErrorKind::Forbidden(message),
        404 | 410 => ForgeErrorKind::NotFound,
        409 => ForgeErrorKind::Conflict(message),
        422 if message.to_ascii_lowercase().contains("already exist") => {
            ForgeErrorKind::Conflict(message)
        }
        400 | 422 => ForgeErrorKind::Invalid(message),
        _ => ForgeErrorKind::Invalid(format!("HTTP {code}: {message}")),
    }
}

/// Waits for `duration`. Production sleeps on the tokio timer; tests record the waits and
/// return at once, so a retry test takes no time and can assert what was waited.
pub type Sleeper = Arc<dyn Fn(Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// The tokio timer, for production.
fn tokio_sleeper() -> Sleeper {
    Arc::new(|duration| Box::pin(tokio::time::sleep(duration)))
}

/// How often and how long a client tries again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries, the first included, for a 5xx answer or a network error.
    pub attempts: u32,
    /// The wait before the first retry of a 5xx or network error; doubled for each next one.
    pub backoff: Duration,
    /// Waits for a rate limit before giving up with [`ForgeErrorKind::RateLimited`].
    pub rate_limit_waits: u32,
    /// The least wait for a rate limit that did not say how long; doubled each time.
    pub unsaid_wait: Duration,
    /// A rate limit that asks for a longer wait than this is not waited for here: the call
    /// fails with [`ForgeErrorKind::RateLimited`], and the job is tried again from the store.
    pub max_wait: Duration,
}

impl RetryPolicy {
    /// GitHub: four tries a second, two and four seconds apart (its 502s and 503s are nearly
    /// always over within a few seconds, and a longer outage is better met by retrying the
    /// whole job later than by holding a runner); three rate-limit waits, a secondary limit
    /// that says nothing starting at the minute GitHub's documentation asks for; no wait
    /// longer than a quarter of an hour (the primary limit resets hourly, and a job should
    /// rather be rescheduled than sleep for it).
    pub fn github() -> RetryPolicy {
        RetryPolicy {
            attempts: 4,
            backoff: Duration::from_secs(1),
            rate_limit_waits: 3,
            unsaid_wait: Duration::from_secs(60),
            max_wait: Duration::from_secs(15 * 60),
        }
    }

    /// GitLab: the same four tries (7 s in all, which rides out a load balancer's restart or a
    /// deploy of gitlab.com); a 429 that says nothing backs off like a 5xx; gitlab.com's limits
    /// reset every minute, so a wait up to a minute is sat out and a longer one returned.
    pub fn gitlab() -> RetryPolicy {
        RetryPolicy {
            attempts: 4,
            backoff: Duration::from_secs(1),
            rate_limit_waits: 3,
            unsaid_wait: Duration::from_secs(1),
            max_wait: Duration::from_secs(60),
        }
    }

    /// Forgejo and Gitea: the same four tries. Forgejo limits no API calls itself; a 429 comes
    /// from the proxy in front of an instance (Codeberg's), which need not say how long, so a
    /// limit that says nothing is waited out for 10 s, then 20 and 40 (over a minute in all,
    /// the window such proxies count in); a wait over a minute is returned, and the job is
    /// tried again from the store.
    pub fn forgejo() -> RetryPolicy {
        RetryPolicy {
            attempts: 4,
            backoff: Duration::from_secs(1),
            rate_limit_waits: 3,
            unsaid_wait: Duration::from_secs(10),
            max_wait: Duration::from_secs(60),
        }
    }

    /// One try, no waits: for tests against a mock that answers at once, where a 5xx is a
    /// finding, not a hiccup.
    pub fn once() -> RetryPolicy {
        RetryPolicy {
            attempts: 1,
            rate_limit_waits: 0,
            ..RetryPolicy::github()
        }
    }
}

/// A policy and the clock it sleeps on.
#[derive(Clone)]
pub struct Retry {
    pub policy: RetryPolicy,
    pub sleep: Sleeper,
}

impl Retry {
    /// `policy` on the tokio timer.
    pub fn new(policy: RetryPolicy) -> Retry {
        Retry {
            policy,
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

/// The credentials one request carries: a header and its value, marked sensitive so that no
/// HTTP layer logs it. `Debug` shows the header's name only.
#[derive(Clone)]
pub struct Auth {
    name: HeaderName,
    value: HeaderValue,
}

impl Auth {
    /// `Authorization: Bearer <token>`; None when the token cannot be a header value.
    pub fn bearer(token: &str) -> Option<Auth> {
        Auth::header(http::header::AUTHORIZATION, &format!("Bearer {token}"))
    }

    /// `name: value`; None when the value cannot be a header value.
    pub fn header(name: HeaderName, value: &str) -> Option<Auth> {
        let mut value = HeaderValue::from_str(value).ok()?;
        value.set_sensitive(true);
        Some(Auth { name, value })
    }

    pub fn name(&self) -> &HeaderName {
        &self.name
    }

    pub fn value(&self) -> &HeaderValue {
        &self.value
    }
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Auth({}: ***)", self.name)
    }
}

/// One try, as a [`Wire`] is asked to send it.
pub struct Try<'a> {
    pub method: &'a Method,
    /// Path and query, relative to the API's base URL.
    pub path: &'a str,
    /// `None` for the few calls that carry no credentials (GitHub's App manifest conversion,
    /// whose one-time code is the credential).
    pub auth: Option<&'a Auth>,
    pub body: Option<&'a serde_json::Value>,
}

/// What one try came back with, whatever its status.
#[derive(Clone, Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

/// A boxed future of one try.
pub type Sending<'a> = Pin<Box<dyn Future<Output = Result<Answer, String>> + Send + 'a>>;

/// How a client's HTTP stack sends one request: exactly one, following no redirect and
/// retrying nothing. The error is a network error's text, one line, without the credentials.
pub trait Wire: Send + Sync {
    fn send<'a>(&'a self, request: Try<'a>) -> Sending<'a>;
}

/// A forge's API at one base URL: a wire and how to retry.
pub struct Api {
    wire: Box<dyn Wire>,
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

/// What one try means for the call.
enum Outcome {
    Done(Answer),
    /// Worth another try after the backoff (if the budget allows).
    Transient(ForgeErrorKind),
    RateLimited(Limit),
    /// Moved: the same request again at this path.
    Redirect(String),
    /// A non-2xx answer that is not tried again.
    Refused(Answer),
    Final(ForgeErrorKind),
}

impl Api {
    /// The API at `base` (an absolute URL: `https://api.github.com`,
    /// `https://gitlab.example/api/v4`), sent over `wire`.
    pub fn new(base: Uri, wire: impl Wire + 'static, retry: Retry) -> Api {
        Api {
            wire: Box::new(wire),
            base,
            retry,
        }
    }

    /// Sends `method path` with `auth` and `body` as JSON, retrying and following redirects as
    /// the module says; a 2xx answer, or what the call came to.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        auth: &Auth,
        body: Option<&serde_json::Value>,
    ) -> Result<Answer, ForgeErrorKind> {
        let answer = self.send_any(method, path, auth, body).await?;
        if answer.status.is_success() {
            Ok(answer)
        } else {
            Err(error_kind(answer.status, error_message(&answer.body)))
        }
    }

    /// [`send`](Api::send) with no credentials at all, for a call whose path holds its own
    /// (GitHub's `POST /app-manifests/{code}/conversions`).
    pub async fn send_anonymous(
        &self,
        method: Method,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<Answer, ForgeErrorKind> {
        let answer = self.send_with(method, path, None, body).await?;
        if answer.status.is_success() {
            Ok(answer)
        } else {
            Err(error_kind(answer.status, error_message(&answer.body)))
        }
    }

    /// [`send`](Api::send), but a final refusal (a 4xx that is not a rate limit) is returned as
    /// the answer it is, for a caller that reads the forge's message: GitLab says "already been
    /// taken" for an award that is there. Rate limits, 5xx and network errors are still retried
    /// and, when they last, errors.
    pub async fn send_any(
        &self,
        method: Method,
        path: &str,
        auth: &Auth,
        body: Option<&serde_json::Value>,
    ) -> Result<Answer, ForgeErrorKind> {
        self.send_with(method, path, Some(auth), body).await
    }

    async fn send_with(
        &self,
        method: Method,
        path: &str,
        auth: Option<&Auth>,
        body: Option<&serde_json::Value>,
    ) -> Result<Answer, ForgeErrorKind> {
        let policy = self.retry.policy;
        let mut failures = 0u32;
        let mut rate_limited = 0u32;
        let mut redirects = 0u32;
        let mut path = path.to_owned();
        loop {
            let tried = self
                .wire
                .send(Try {
                    method: &method,
                    path: &path,
                    auth,
                    body,
                })
                .await;
            match self.judge(&method, tried, SystemTime::now()) {
                Outcome::Done(answer) | Outcome::Refused(answer) => return Ok(answer),
                Outcome::Final(kind) => return Err(kind),
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
                Outcome::Transient(kind) => {
                    failures += 1;
                    if failures >= policy.attempts {
                        return Err(kind);
                    }
                    let wait = backoff(policy.backoff, failures - 1);
                    tracing::debug!(%method, path, error = %kind, ?wait, "retrying a forge call");
                    (self.retry.sleep)(wait).await;
                }
                Outcome::RateLimited(limit) => {
                    let wait = match limit {
                        Limit::For(wait) => wait,
                        Limit::Unsaid => backoff(policy.unsaid_wait, rate_limited),
                    };
                    rate_limited += 1;
                    if rate_limited > policy.rate_limit_waits || wait > policy.max_wait {
                        return Err(ForgeErrorKind::RateLimited { retry_after: wait });
                    }
                    tracing::debug!(%method, path, ?wait, "waiting out a forge's rate limit");
                    (self.retry.sleep)(wait).await;
                }
            }
        }
    }

    /// One try of `method path`, its answer returned whatever its status (nothing retried,
    /// no redirect followed): for a caller that judges statuses itself. The error is the
    /// network error's text.
    pub async fn send_once(
        &self,
        method: &Method,
        path: &str,
        auth: &Auth,
        body: Option<&serde_json::Value>,
    ) -> Result<Answer, String> {
        self.wire
            .send(Try {
                method,
                path,
                auth: Some(auth),
                body,
            })
            .await
    }

    fn judge(&self, method: &Method, tried: Result<Answer, String>, now: SystemTime) -> Outcome {
        let answer = match tried {
            Ok(answer) => answer,
            Err(network) => return Outcome::Transient(ForgeErrorKind::Network(network)),
        };
        let status = answer.status;
        if status.is_success() {
            return Outcome::Done(answer);
        }
        let moved = match status.as_u16() {
            301..=303 => *method == Method::GET,
            307 | 308 => true,
            _ => false,
        };
        if moved && let Some(location) = answer.headers.get(LOCATION) {
            return match location.to_str() {
                Ok(location) => Outcome::Redirect(location.to_owned()),
                Err(_) => Outcome::Final(ForgeErrorKind::Decode(
                    "a redirect to a location that is not text".to_owned(),
                )),
            };
        }
        let message = error_message(&answer.body);
        if let Some(limit) = rate_limit(status, &answer.headers, &message, now) {
            return Outcome::RateLimited(limit);
        }
        if status.is_server_error() {
            return Outcome::Transient(ForgeErrorKind::Server(status.as_u16()));
        }
        Outcome::Refused(answer)
    }

    /// The path and query of `url`, relative to the API's base, when it is on the API's host
    /// and under its path (a `Link` header's next page, a redirect); None otherwise: another
    /// host must never see the credentials.
    pub fn api_path(&self, url: &str) -> Option<String> {
        let uri: Uri = url.parse().ok()?;
        let Some(authority) = uri.authority() else {
            // A relative reference: already a path on this host.
            return uri.path_and_query().map(|pq| pq.as_str().to_owned());
        };
        if Some(authority) != self.base.authority() || uri.scheme() != self.base.scheme() {
            return None;
        }
        let path_and_query = uri.path_and_query()?.as_str();
        let prefix = self.base.path().trim_end_matches('/');
        let relative = path_and_query.strip_prefix(prefix)?;
        (relative.starts_with('/') || relative.starts_with('?') || relative.is_empty())
            .then(|| relative.to_owned())
    }
}

mod reqwest_wire;

pub use reqwest_wire::ReqwestWire;

#[cfg(test)]
mod tests;
